import { statSync } from "node:fs";
import { UsageError } from "../../errors.js";
import { fitToOuterGrace, shortenedNote } from "../outer-grace.js";
import { durationFlag, concurrencyFlag, leaseFlag, logDirFlag, noteTerminalInput, runIdFlag, stdinGivenTwice, typedFlagName, workflowFileArgument } from "../flags.js";
import type { OutputMode } from "../render/index.js";
import type { TaskSelection } from "../task-selection.js";


export interface RunFlags {
  concurrency?: unknown;
  shutdownTimeout?: unknown;
  killGrace?: unknown;
  output?: unknown;
  logDir?: unknown;
  color?: unknown;
  dryRun?: unknown;
  store?: unknown;
  storeSchema?: unknown;
  runId?: unknown;
  lease?: unknown;
  failFast?: unknown;
  /** Which of --shutdown-timeout and --kill-grace were given on the command line (not their defaults). */
  stopTimesGiven?: { shutdownTimeout: boolean; killGrace: boolean };
}

/**
 * `taskq run FILE [TASK...]`: validates, then runs locally (or durably with --store). Given task ids,
 * runs those and what they depend on, nothing else (see select-tasks.ts). Returns the exit code.
 */
export async function runCommand(file: string, flags: RunFlags, taskIds: readonly string[] = [], afterFlags?: ReadonlyMap<string, string>, severalFiles?: () => void): Promise<number> {
  workflowFileArgument(file);
  // `run - -`: not a task `-` of standard input's file (no id is `-`), which is read once, before anything runs. (`run f.yaml - -` reads no standard input: f.yaml has no task `-`.)
  if (file === "-") stdinGivenTwice([file, ...taskIds]);
  const given = {
    shutdownTimeoutMs: durationFlag("--shutdown-timeout", flags.shutdownTimeout ?? "10s"),
    killGraceMs: durationFlag("--kill-grace", flags.killGrace ?? "5s"),
  };
  // Run by a task of another taskq: its stop fits in the grace that one gives (see outer-grace.ts).
  const { shutdownTimeoutMs, killGraceMs, outerGraceMs } = fitToOuterGrace(given);
  const logRoot = logDirFlag(flags.logDir);
  const store = typeof flags.store === "string" ? flags.store : process.env.TASKQ_STORE;
  const local = store === undefined || store === "";
  const runId = runIdFlag(flags.runId);
  // A local run's id is made from the time (its log folder must be new): a given one would be ignored.
  if (local && runId !== undefined) throw new UsageError("--run-id needs a store (--store or TASKQ_STORE): a local run's id is made from the time");
  // A local run holds no lease: its tasks are this process's alone.
  if (local && flags.lease !== undefined) throw new UsageError("--lease needs a store (--store or TASKQ_STORE): a local run's tasks are leased to no one");
  // Nor keeps anything in PostgreSQL: a schema given for it would be ignored.
  if (local && typeof flags.storeSchema === "string") throw new UsageError("--store-schema needs a store (--store or TASKQ_STORE): a local run keeps nothing in PostgreSQL");
  // A durable run is its file's tasks, all of them: a resubmit of its id adds what the file has that the run does
  // not, so a run stored with some would take the rest from the next submit of the whole file.
  const refuseSelection = (): never => {
    throw new UsageError(`selecting tasks (${taskIds.join(", ")}) is for a local run, and a store is given (${typeof flags.store === "string" ? "--store" : "TASKQ_STORE"}): a durable run runs every task of its file; run without a store, or give a file with those tasks`);
  };
  // Words that all end in .yaml (`taskq run workflows/*.yaml`, or `x.yaml`, a task of the file) are told apart once the file is read.
  if (!local && taskIds.length > 0 && severalFiles === undefined) refuseSelection();
  // A durable run's tasks run in workers, on this machine or others, which this process does not stop at a failure.
  if (!local && flags.failFast === true) throw durableFailFastError(`a store is given (${typeof flags.store === "string" ? "--store" : "TASKQ_STORE"})`, "run without a store");
  const leaseMs = flags.lease === undefined ? undefined : leaseFlag(flags.lease);
  // A -j given is checked before the file is read, as the other flags are: `-j 0` is said first, not after the file's problems.
  const requestedConcurrency = flags.concurrency === undefined ? undefined : concurrencyFlag(flags.concurrency, undefined, typedFlagName("-j", "--concurrency"));
  if (!local) {
    // The store's URL and schema, checked as the run checks them before it connects: a --dry-run
    // is refused what the run would be refused (a mysql:// URL, a schema name it cannot have).
    const { storeSchema, storeUrl } = await import("../store-flags.js");
    storeUrl(flags);
    storeSchema(flags);
  }
  // Start loading the local runner while the file is read and parsed: module reads overlap the parse.
  const runner = flags.dryRun === true || !local ? undefined : import("../run-local.js");
  void runner?.catch(() => {}); // awaited below; an invalid file must not leave an unhandled rejection
  // mkfifo for the first tasks' pipes runs while the file is parsed, not before the first task.
  void runner?.then((module) => module.prepareTaskPipes()).catch(() => {});
  // Before the file is loaded: the young generation would otherwise grow to 16 MiB by the first spawn.
  const smallHeap = local && flags.dryRun !== true && isLargeRun(file) ? await import("../small-heap.js") : undefined;
  smallHeap?.keepHeapSmall();
  const { loadWorkflowForRun } = await import("../load-isolated.js");
  noteTerminalInput(file);
  let workflow = await loadWorkflowForRun(file, smallHeap ? { onThreadStarted: smallHeap.keepHeapSmall } : {}).catch((error: unknown) => {
    // The first of a glob's files, not there or invalid: the glob is said, as where it is valid (no task can be told from it).
    severalFiles?.();
    throw error;
  });
  let selection: TaskSelection | undefined;
  if (taskIds.length > 0) {
    // Words that all end in .yaml, none a task of the file (`x.yaml:` is one): several workflow files.
    if (severalFiles !== undefined && !workflow.tasks.some((task) => taskIds.includes(task.id))) severalFiles();
    // One is a task of the file: a selection, which a durable run cannot be.
    if (!local) refuseSelection();
    // After the whole file is checked: an invalid file is said as ever, whatever is selected from it.
    const { selectTasks } = await import("../select-tasks.js");
    ({ workflow, selection } = selectTasks(workflow, taskIds, afterFlags));
  }
  const concurrency = requestedConcurrency ?? concurrencyFlag(undefined, workflow.concurrency);
  // --fail-fast or --no-fail-fast, as given, else the file's `failFast`; a durable run's is neither (refused above, or noted:
  // --no-fail-fast says the user knows, and leaves the note out).
  const failFast = local && (typeof flags.failFast === "boolean" ? flags.failFast : workflow.failFast === true);
  const failFastNoted = !local && flags.failFast === undefined && workflow.failFast === true;
  // A plan has no run id to name, unless one is given: a run's note names its id (see runDurable).
  if (failFastNoted && flags.dryRun === true) workflow.notes.push(fileFailFastNote(runId));
  const shortened = shortenedNote(given, { shutdownTimeoutMs, killGraceMs, ...(outerGraceMs === undefined ? {} : { outerGraceMs }) }, flags.stopTimesGiven ?? { shutdownTimeout: false, killGrace: false });
  if (shortened !== undefined && flags.dryRun !== true) workflow.notes.push(shortened);
  if (flags.dryRun === true) {
    const { printPlan } = await import("../plan.js");
    const { fitConcurrencyToOpenFiles } = await import("../../handlers/open-file-limit.js");
    // The concurrency the run would use: lowered, as run-local.ts (a worker for --store) does,
    // where the open-file limit is too low for it; too low for one task, the same error.
    const fitted = fitConcurrencyToOpenFiles(concurrency, flags.output !== "json", undefined, local ? { others: 0 } : {});
    printPlan(workflow, { concurrency: fitted.concurrency, requested: concurrency, ...(fitted.note === undefined ? {} : { note: fitted.note }), ...(selection === undefined ? {} : { selection }), ...(failFast ? { failFast } : {}) }, flags.output === "json");
    return 0;
  }
  const common = {
    concurrency,
    shutdownTimeoutMs,
    killGraceMs,
    ...(outerGraceMs === undefined ? {} : { outerGraceMs }),
    output: (flags.output ?? "auto") as OutputMode,
    logRoot,
    color: flags.color !== false,
  };
  if (!local) {
    const { runDurable } = await import("../run-durable.js");
    return runDurable(workflow, {
      ...common,
      // As given: the store's URL is read from TASKQ_STORE, and named so in errors, when the flag is not.
      store: flags.store,
      storeSchema: flags.storeSchema,
      json: common.output === "json",
      ...(runId === undefined ? {} : { runId }),
      ...(leaseMs === undefined ? {} : { leaseMs }),
      ...(failFastNoted ? { failFastNoted } : {}),
    });
  }
  const { runLocal } = await (runner ?? import("../run-local.js"));
  return runLocal(workflow, { ...common, ...(selection === undefined ? {} : { selection }), ...(failFast ? { failFast } : {}) });
}

/**
 * Why --fail-fast is refused for a durable run, `run --store`'s and `submit`'s alike: its tasks run in workers, on this machine
 * or others, which do not stop at a failure. `given`: what makes the run durable; `instead`: how to run the file with --fail-fast.
 */
export function durableFailFastError(given: string, instead: string): UsageError {
  return new UsageError(`--fail-fast is for a local run, and ${given}: a durable run's tasks run in its workers, which go on with the others when one fails; ${instead}, or stop the run with \`taskq cancel\``);
}

/**
 * What `run --store` of a file with `failFast: true` is told, as `submit` tells it (see durable.ts): the file's `failFast` is a
 * local run's, and the durable run goes on past a failure, as --fail-fast is refused for it. Told, not refused: the same file
 * runs locally with it and durably without, as its `concurrency` does not limit a submitted run. `--no-fail-fast` leaves it
 * out. Said once the run is stored, with the id to cancel it by; a plan's, with none given (`--run-id`), names none.
 */
export function fileFailFastNote(runId: string | undefined): string {
  const cancel = runId === undefined ? "`taskq cancel` and the run's id" : `\`taskq cancel ${runId}\``;
  return `the file's failFast (true) does not stop a durable run: when a task fails, its workers go on with the others (the run fails all the same); stop it with ${cancel}`;
}

/**
 * A workflow file over this size has more than a few dozen tasks: then keeping the heap
 * small while they are forked pays for loading node:v8 (~2 ms, 5% of a one-task run).
 */
const LARGE_RUN_BYTES = 4096;

function isLargeRun(file: string): boolean {
  try {
    return statSync(file).size > LARGE_RUN_BYTES;
  } catch {
    return false; // the loader reports it
  }
}
