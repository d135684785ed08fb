import { fitToOuterGrace } from "../outer-grace.js";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { CancelResult, ChangedTask, NotRetried, RedriveResult, RunStatus, PostgresStore, RunningTarget, SubmitResult, TaskStatusRow } from "../../store/postgres/index.js";
import { formatDuration } from "../../handlers/format-duration.js";
import { tailLineInWords } from "../../handlers/line-splitter.js";
import { TaskqError, UsageError } from "../../errors.js";
import { DURATION_PATTERN, durationMistake, parseDuration, UNITS_BUT_MS } from "../../loaders/duration.js";
import { generateRunId } from "../../store/postgres/submit.js";
import { notRetriedWords } from "../../store/postgres/shutdown-cancel.js";
import { RunNotFoundError } from "../../store/postgres/store-error.js";
import { isNeverConnected, isRefusal, isTransientError } from "../../store/postgres/transient.js";
import { newWorkerId, workerHostAndPid } from "../../store/postgres/worker-id.js";
import { concurrencyFlag, durationFlag, leaseFlag, logDirFlag, noteTerminalInput, runIdArgument, runIdFlag, taskIdArgument, typedFlagName, wholeNumberFlag, workflowFileArgument } from "../flags.js";
import { escapeControls } from "../../escape-controls.js";
import { oneLine } from "../one-line.js";
import { toJson } from "../output.js";
import { createColors } from "../render/colors.js";
import { terminalSafe } from "../render/control-bytes.js";
import { formatSummary, leaseRanOutWords, quoted, shownIds, summaryTaskLines, tailMaskCommands, unfinishedCount, unfinishedParts, WORKER_GONE, WORKER_WAITS_FOR } from "../render/summary-text.js";
import { underGitHubActions, withoutLegacyCommands, writeCommands } from "../render/workflow-commands.js";
import type { CancelledLine, DeadLetterLine, RunSummary } from "../render/types.js";
import { noteFields } from "../note-fields.js";
import { EarlySignals, holdSignals, onShutdownSignals, secondSignal, signalExitCode } from "../signals.js";
import { sayStdoutLost } from "../stdout-lost.js";
import type { Workflow } from "../../loaders/index.js";
import { durableFailFastError, fileFailFastNote } from "./run.js";
import { madeStoreNote, newerStoreNote, openStore, RETRY_DROPPED_MS, schemaWords, storeUrl, type StoreFlags, type StoreOpenOptions } from "../store-flags.js";

type Flags = StoreFlags & Record<string, unknown>;

/** `create: false`: the command only reads or changes what was submitted (see openStore). */
async function withStore<T>(flags: Flags, work: (store: PostgresStore) => Promise<T>, options: StoreOpenOptions = {}): Promise<T> {
  const store = await openStore(flags, options);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * withStore for a command that reads or changes what was submitted: it never makes a store, and rides
 * out a dropped connection (RETRY_DROPPED_MS) but with `retrying: false` (a caller that retries itself).
 */
function withExistingStore<T>(flags: Flags, work: (store: PostgresStore) => Promise<T>, options: { retrying?: boolean; applicationName: string; json?: boolean }): Promise<T> {
  const json = options.json === true;
  // A run not found names the schema looked in: a mistyped TASKQ_STORE_SCHEMA that names another store finds no run there.
  const named = (store: PostgresStore) => {
    // With --output json, a store a newer taskq migrated is a note record, as submit, worker and run --store give it (see stderrNote).
    const newer = json ? newerStoreNote(store) : undefined;
    if (newer !== undefined) stderrNote(newer);
    return work(store).catch(async (error: unknown) => {
      if (!(error instanceof RunNotFoundError)) throw error;
      // A mistyped id names the run meant; only a finer wording, so an error reading the ids leaves it out.
      const meant = await store.closestRunId(error.runId).catch(() => undefined);
      const hint = meant === undefined ? "" : `; did you mean "${meant}"?`;
      throw new TaskqError("STORE_NOT_FOUND", `${error.message} in ${schemaWords(flags, store.schema)}${hint}`, { cause: error, exitCode: error.exitCode });
    });
  };
  return withStore(flags, named, { create: false, retryDroppedMs: options.retrying === false ? 0 : RETRY_DROPPED_MS, applicationName: options.applicationName, saysNewer: json });
}

/**
 * A note of status, dead-letters or prune with --output json: a `note` record (with its `code`), as submit, worker and run
 * --store give theirs, but on stderr: their stdout is the one JSON document, or the stored rows, that a script reads whole.
 */
function stderrNote(fields: { code: string; message: string } & Record<string, unknown>): void {
  process.stderr.write(`${toJson({ ts: new Date().toISOString(), event: "note", ...fields })}\n`);
}

/**
 * A run read before and gone now: `prune` deletes a run once it has ended, and may do so between two reads.
 * STORE_NOT_FOUND as a mistyped id is, in words that do not send the user looking for a typo.
 */
export function runDeletedError(runId: string, flags: StoreFlags, schema: string, when: string): TaskqError {
  const cause = new RunNotFoundError(runId);
  return new TaskqError("STORE_NOT_FOUND", `run "${runId}" was deleted from ${schemaWords(flags, schema)} ${when} (a prune deletes a run once it has ended)`, { cause, exitCode: cause.exitCode });
}

/** `taskq submit FILE`: validates exactly as `run` does, enqueues the whole DAG in one transaction, prints the run id. */
export async function submitCommand(file: string, flags: Flags): Promise<number> {
  workflowFileArgument(file);
  const givenId = runIdFlag(flags.runId);
  // Refused as `run --store --fail-fast` is, in its words, before the file is read: a submitted run does not stop at a failure.
  if (flags.failFast === true) throw durableFailFastError("submit makes a durable run", "run the file with taskq run, without a store");
  // Not through loaders/index.js, which loads yaml at once: see loadWorkflow.
  const { loadWorkflow } = await import("../../loaders/load-workflow.js");
  noteTerminalInput(file);
  const workflow = await loadWorkflow(file);
  // Chosen here, not by the store, so that a second signal can name the run it may leave stored.
  const runId = givenId ?? generateRunId();
  return withStore(flags, async (store) => {
    const { value: [result, state], early } = await storingRun(runId, store, workflow, "its id is printed if it was stored", flags.output === "json");
    const code = early === undefined ? submitted(workflow, result, state, store, flags) : stoppedAfterSubmit(workflow, result, state, store, flags, early);
    return Math.max(submittedIdLost(result.runId), code);
    // A dropped connection is ridden out under the same run id: a CI step run again would submit a second run.
    // Its sessions named by its run, as run --store's: a second signal cancels those of its own only (see cancelStatements).
  }, { retryDroppedMs: RETRY_DROPPED_MS, applicationName: `taskq submit ${runId}`, undoneIfStopped: "nothing was submitted", saysNewer: flags.output === "json" });
}

/**
 * How long a second signal during a submit waits for the database to cancel the submit's statement and answer how it
 * ended: a database that does not answer (a network that stopped, a server gone) does not keep taskq from exiting.
 */
const CANCEL_WAIT_MS = 3_000;

/** How often, while a second signal waits (CANCEL_WAIT_MS), the submit's statements are cancelled again: one sent after. */
const CANCEL_AGAIN_MS = 250;

/** How a submit a second signal cancelled ended: stored (committed first), undone (nothing submitted), or not known. */
type CancelOutcome = "stored" | "undone" | "unknown";

/**
 * Submits `workflow` as run `runId` and reads its state, with SIGINT and SIGTERM held: killed by one, taskq would
 * leave the run stored whole (the database ends a statement it runs, its client gone or not) and queued for any
 * worker, its id unsaid. The first signal waits for it and is returned as `early`, said at once on stderr (for how long it
 * may wait, see submitWaitWords; `then`: what is done once it is answered); a second one does not wait for a database that may not
 * answer: it cancels the submit's statement (CANCEL_WAIT_MS at most, said at once: a silence after a second Ctrl-C looked like a hang) and exits, saying whether the run was stored
 * (committed before the cancel reached it), nothing was, or it may have been (the database did not answer in time).
 * Exited without that cancel, a statement waiting on a lock another session held went on once the lock was let go, and
 * stored the run after the user had stopped taskq twice. A submit that fails after the first signal ends taskq by that
 * signal (INTERRUPTED, 128 + n), its failure said. Unsaid, a submit waiting on a lock another session held (a
 * migration's, a psql session's) left the Ctrl-C unanswered until the database's limit ran out, then said only that
 * the submit had failed, and exited 1.
 */
export async function storingRun(
  runId: string,
  store: PostgresStore,
  workflow: Workflow,
  then: string,
  json: boolean,
): Promise<{ value: readonly [SubmitResult, RunState]; early: NodeJS.Signals | undefined }> {
  let early: NodeJS.Signals | undefined;
  // With --output json, a store a newer taskq migrated is a note record after the run record (submitRecords):
  // where there is none (the submit failed, or a second signal ends taskq), the note comes before the error, not never.
  const newerUnsaid = (): void => {
    const newer = json ? newerStoreNote(store) : undefined;
    if (newer !== undefined) process.stdout.write(`${toJson({ ts: new Date().toISOString(), event: "note", ...newer })}\n`);
  };
  let stored = false;
  let retried = false;
  const stop = new AbortController();
  const submitting = (async () => {
    const result = await store.submit(workflow, { runId, signal: stop.signal, onRetry: () => (retried = true), onStored: () => (stored = true) });
    return [result, await stateAfterSubmit(store, result)] as const;
  })();
  /** Set by a second signal: it ends taskq once the submit is cancelled (stopNow), and the submit's own end waits for it. */
  let stopping: Promise<never> | undefined;
  const exit = (second: string, exitCode: number, outcome: CancelOutcome): never => {
    newerUnsaid();
    const how =
      outcome === "undone"
        ? "stopped; its submit was cancelled: nothing was submitted"
        : outcome === "stored"
          ? `stopping now; run ${runId} was stored whole before its submit could be cancelled: cancel it with \`taskq cancel ${runId}\` if it should not run`
          : `stopping now; run ${runId} may have been stored: see \`taskq status ${runId}\`, and cancel it with \`taskq cancel ${runId}\``;
    const message = `${second} while the run was being submitted: ${how}`;
    // With --output json, stdout ends with an error record, as any failure's (see reportError): with the run's id, for a script to cancel it.
    if (json) process.stdout.write(`${toJson({ ts: new Date().toISOString(), event: "error", code: "INTERRUPTED", exitCode, message, runId })}\n`);
    process.stderr.write(`taskq: ${message}\n`);
    process.exit(exitCode);
  };
  // How the submit ended once cancelled: a failure the database answered (a refusal: the cancel, a lock wait cut short) undid it,
  // and so did a try whose connection failed as it was made and the stop itself where it kept a try from beginning or from
  // sending its statement (each sent nothing: isNeverConnected; the try before it undone by the database); unless a try
  // before it lost its reply (retried) or it had committed first (stored: what failed was the read after).
  const ended: Promise<CancelOutcome> = submitting.then(
    () => "stored",
    (error: unknown) => (stored ? "stored" : (isRefusal(error) || isNeverConnected(error)) && !retried ? "undone" : "unknown"),
  );
  const stopNow = async (second: string, exitCode: number): Promise<never> => {
    stop.abort();
    const deadline = performance.now() + CANCEL_WAIT_MS;
    let outcome: CancelOutcome | undefined = stored ? "stored" : undefined;
    // Said at once: the wait for the database's answer (up to CANCEL_WAIT_MS) was a silence after the second Ctrl-C.
    if (outcome === undefined) {
      process.stderr.write(
        `taskq: ${second} while the run was being submitted: cancelling its submit: stopping once the database has said whether the run was stored (up to ${formatDuration(CANCEL_WAIT_MS)}); press Ctrl-C again (or send a third signal) to stop at once\n`,
      );
    }
    // Again while it runs: a statement sent that the database did not show as running yet when the cancel looked, or a
    // transaction's next statement (a try whose connection is made after the stop sends nothing: see stoppedWhileConnecting).
    for (let left = CANCEL_WAIT_MS; outcome === undefined && left > 0; left = deadline - performance.now()) {
      await store.cancelStatements(left);
      outcome = await Promise.race([ended, sleep(Math.min(CANCEL_AGAIN_MS, Math.max(deadline - performance.now(), 0)), undefined, { ref: false })]);
    }
    return exit(second, exitCode, outcome ?? (stored ? "stored" : "unknown"));
  };
  const remove = onShutdownSignals({
    graceful: (signal) => {
      early = signal;
      process.stderr.write(`taskq: ${signal} received while the run was being submitted: stopping once the database has answered the submit${submitWaitWords(store)}, then ${then}; press Ctrl-C again (or send a second signal) to stop now\n`);
    },
    immediate: (signal, first) => {
      const second = secondSignal(signal, first);
      // A further one while the cancel is waited for stops at once.
      if (stopping !== undefined) exit(second, signalExitCode(first), stored ? "stored" : "unknown");
      stopping = stopNow(second, signalExitCode(first));
    },
  });
  try {
    // Awaited before `early` is read: the signal is one that came while the run was stored.
    const value = await submitting.catch(async (error: unknown) => {
      if (stopping !== undefined) await stopping;
      throw error;
    });
    if (stopping !== undefined) await stopping;
    return { value, early };
  } catch (error) {
    newerUnsaid();
    if (early === undefined) throw error;
    // The signal ends taskq, as it would have once the run was stored: its exit code, not the failure's 1.
    const exitCode = signalExitCode(early);
    throw new TaskqError("INTERRUPTED", `${early} received while the run was being submitted, and its submit failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error, exitCode });
  } finally {
    remove();
  }
}

/**
 * How long a submit may wait for the database, for the line a signal during it gets: its statements' limit each (0: none),
 * and how long it tries again where a connection drops (see RETRY_DROPPED_MS), each try with that limit again: no one
 * total. "(up to 30s)" alone, one statement's limit, was not so where a dropped connection was tried again.
 */
function submitWaitWords(store: PostgresStore): string {
  const statementMs = store.pool.options.query_timeout ?? 0;
  const parts = [
    ...(statementMs > 0 ? [`it waits up to ${formatDuration(statementMs)} for each statement`] : []),
    ...(store.retryDroppedMs > 0 ? [`tries again for up to ${formatDuration(store.retryDroppedMs)} where the connection drops`] : []),
  ];
  return parts.length === 0 ? "" : ` (${parts.join(", and ")})`;
}

/** A submit's output, and the code it exits with: 0, or 1 for a run submitted again that had ended and did not succeed. */
function submitted(workflow: Workflow, result: SubmitResult, state: RunState, store: PostgresStore, flags: Flags): number {
    // A store this submit had to make first beside one named almost so (a mistyped TASKQ_STORE_SCHEMA): its runs wait for a
    // worker given that schema, which none of the other store's is. (A first submit to a database, the usual way a store is made, says nothing;
    // nor one to a schema numbered as the other store's, `ci_1234` beside `ci_1233`.)
    const made =
      store.madeBeside === undefined
        ? undefined
        : madeStoreNote(
            store,
            "this submit made one; its runs are run only by workers given that schema (TASKQ_STORE_SCHEMA or --store-schema, as this submit was)",
            ` then stop this run with \`taskq cancel ${result.runId} --store-schema ${store.schema}\` and submit it there`,
          );
    const unlimited = [...(made === undefined ? [] : [made]), ...localOnlyNotes(workflow, result.runId, flags.failFast !== false)];
    // A run that had ended, and still has (nothing the file added runs): it runs nothing, which is said, and one
    // that did not succeed exits 1, as `status` and `run --store` of it do; one that succeeded exits 0, as ever.
    const ended = state === "running" ? undefined : endedNote(result.runId, state);
    const code = state === "running" || state === "succeeded" ? 0 : 1;
    if (flags.output === "json") {
      // NDJSON on stdout, as `run --store --output json` begins: the run's record, then the notes.
      process.stdout.write(submitRecords(workflow, result, store, unlimited, state).map((record) => `${toJson(record)}\n`).join(""));
      return code;
    }
    // stdout is the run id alone (RUN=$(taskq submit ...)): what else there is to say goes to stderr.
    const notes = [...(result.created ? [] : [resubmitted(result)]), ...unlimited, ...submitNotes(workflow.notes, result, workflow.file), ...(ended !== undefined && code === 0 ? [ended] : [])];
    if (notes.length > 0) process.stderr.write(notes.map((note) => `note: ${oneLine(note)}\n`).join(""));
    if (ended !== undefined && code !== 0) process.stderr.write(`taskq: ${ended}\n`);
    process.stdout.write(`${result.runId}\n`);
    return code;
}

/**
 * A submit a signal came during: its output as ever (the run was stored whole, and its id is the way to
 * it), then what the signal did, and the signal's exit code (128 + n).
 */
function stoppedAfterSubmit(workflow: Workflow, result: SubmitResult, state: RunState, store: PostgresStore, flags: Flags, signal: NodeJS.Signals): number {
  submitted(workflow, result, state, store, flags);
  const message = `${signal} received while the run was being submitted: run ${result.runId} was stored whole; cancel it with \`taskq cancel ${result.runId}\` if it should not run`;
  if (flags.output === "json") process.stdout.write(`${toJson({ ts: new Date().toISOString(), event: "note", message })}\n`);
  else process.stderr.write(`taskq: ${message}\n`);
  return signalExitCode(signal);
}

/**
 * After a submit's stdout could not be written (a full disk): the run is in the store all the
 * same, and its id goes to stderr, so that a retry of the command (a second run) is not the only
 * way back to it. The exit code stays 1, as for any output lost (main.ts).
 */
function submittedIdLost(runId: string): number {
  sayStdoutLost(`run ${runId} was submitted`, "its id");
  return 0;
}

/** A change made in the store whose JSON could not be written to stdout: said on stderr, so that the exit 1 is not read as the change not made. */
function changeLost(done: string): void {
  sayStdoutLost(done, "that");
}

/**
 * A submit told as JSON records (`submit --output json`, and the first lines of `run --store
 * --output json`): `run` (its id, file, store, schema, tasks, and of them those added and kept as stored),
 * then a `note` each, with `file`, `line` and `col` where it names a place in the file.
 */
export function submitRecords(workflow: Workflow, result: SubmitResult, store: Pick<PostgresStore, "description" | "schema" | "newer">, notes: readonly string[], state: RunState): Record<string, unknown>[] {
  const ts = new Date().toISOString();
  const { runId, added, kept } = result;
  // Its schema too, as a worker's record has it: runs in another schema meet no worker of this one.
  const run = { ts, event: "run", runId, file: workflow.file, store: store.description, schema: store.schema, tasks: workflow.tasks.length, added, kept, state };
  const ended = state === "running" ? [] : [endedNote(runId, state)];
  // A store a newer taskq migrated: the note the plain output has on stderr (see saysNewer), with its code and migrations.
  const newer = newerStoreNote(store);
  const newerRecord = newer === undefined ? [] : [{ ts, event: "note", ...newer }];
  return [run, ...newerRecord, ...[...notes, ...submitNotes(workflow.notes, result, workflow.file), ...ended].map((message) => ({ ts, event: "note", ...noteFields(message, workflow.file) }))];
}

/** A run's state: running, or how it ended. */
export type RunState = RunStatus["state"];

/**
 * The run's state once submitted: a new one runs; one submitted again may have ended before (a
 * resubmit adds the tasks that are new, and one of them runnable makes the run run again).
 */
export async function stateAfterSubmit(store: PostgresStore, result: SubmitResult): Promise<RunState> {
  return result.created ? "running" : store.runState(result.runId);
}

/** What a resubmit of a run that has ended is told: nothing of it runs, and how to run it again. */
export function endedNote(runId: string, state: Exclude<RunState, "running">): string {
  const again =
    state === "failed"
      ? `; to run a failed task again: taskq redrive ${runId} TASK (taskq dead-letters ${runId} lists them), or submit the workflow under another --run-id`
      : state === "cancelled"
        ? "; to run the workflow again, submit it under another --run-id"
        : "";
  return `run ${runId} has already ended (${state}): none of its tasks runs again${again}`;
}

/**
 * The file's `concurrency` is a local run's (and `run --store`'s own worker's): the store keeps none, and
 * the workers run as many of the run's tasks at once as their -j allows. A file that sets it, to keep its
 * tasks from running side by side, is told so rather than silently run otherwise; so is one with `failFast: true`, unless
 * `--no-fail-fast` says the user knows (`failFastNoted` false).
 */
function localOnlyNotes(workflow: Workflow, runId: string, failFastNoted: boolean): string[] {
  return [
    ...(workflow.concurrency === undefined ? [] : [`the file's concurrency (${workflow.concurrency}) does not limit a submitted run: each worker runs up to its own -j tasks at once, of this run and others`]),
    // Nor does its `failFast` stop it, as `run --store` tells it (see run.ts).
    ...(workflow.failFast === true && failFastNoted ? [fileFailFastNote(runId)] : []),
  ];
}

/** "run X already submitted: 1 new task, 2 kept": a submit of an existing run id adds only the tasks that are new. */
export function resubmitted({ runId, added, kept }: SubmitResult, where = ""): string {
  return `run ${runId} already submitted${where}: ${added} new task${added === 1 ? "" : "s"}, ${kept} kept`;
}

/** Tasks with another definition named one by one, the rest counted: a file submitted from another checkout differs in every task (cwd). */
const CHANGED_TASKS_NAMED = 10;

/**
 * A submit's notes, as `run` shows them: the workflow's (a runAt in the past), then the tasks the
 * run already had with another definition, which stay as stored (a resubmit is idempotent).
 */
export function submitNotes(workflowNotes: readonly string[], result: SubmitResult, file: string): string[] {
  const moved = result.storedFile === undefined ? [] : [result.unnamed === true ? unnamedNote(result.runId, result.storedFile, file) : movedNote(result.runId, result.storedFile, file)];
  const notes = [...moved, ...workflowNotes, ...result.changed.slice(0, CHANGED_TASKS_NAMED).map((change) => changedNote(result.runId, change))];
  const more = result.changed.length - CHANGED_TASKS_NAMED;
  if (more > 0) notes.push(`run ${result.runId} already has ${more} more task${more === 1 ? "" : "s"} with another definition: the stored ones are kept`);
  return notes;
}

/** A resubmit of the run's file by another path: taken as the same file, by its name (see sameFile in submit.ts). */
function movedNote(runId: string, stored: string, file: string): string {
  return `run ${runId} was submitted from ${stored}; ${file} has the same name and is taken as that file, edited or not`;
}

/** A resubmit where the run's file or the one given was read from standard input or a pipe: taken as the run's file by the tasks it shares with the run. */
function unnamedNote(runId: string, stored: string, file: string): string {
  return `run ${runId} was submitted from ${stored}; ${file} cannot be told from it by name, and is taken as that file, edited or not, as it has some of the run's tasks`;
}

function changedNote(runId: string, { key, differ, taken }: ChangedTask): string {
  const head = `run ${runId} already has task ${JSON.stringify(key)} with another definition (${differ.join(", ")})`;
  if (taken.length === 0) return `${head}: the stored one is kept`;
  // A task still queued takes a new priority, runAt or delay (dedup: see submit.ts); a delay counts from this submit.
  const takes = `it is still queued and takes the new ${words(taken)}${taken.includes("delay") ? ", counted from this submit" : ""}`;
  const kept = differ.filter((field) => !taken.includes(field));
  if (kept.length === 0) return `${head}: ${takes}`;
  return `${head}: the stored ${words(kept)} ${kept.length === 1 ? "is" : "are"} kept; ${takes}`;
}

/** "a", "a and b", "a, b and c". */
function words(fields: readonly string[]): string {
  return fields.length < 2 ? fields.join("") : `${fields.slice(0, -1).join(", ")} and ${fields.at(-1)!}`;
}

/** `taskq worker`: leases and runs tasks of every run until stopped. */
export async function workerCommand(flags: Flags): Promise<number> {
  // Made before the store opens, so that its connections are named after it in pg_stat_activity.
  const workerId = newWorkerId();
  const options = {
    workerId,
    concurrency: concurrencyFlag(flags.concurrency, undefined, typedFlagName("-j", "--concurrency")),
    // A worker run by a task of a taskq fits its stop in the grace that one gives (see outer-grace.ts).
    ...fitToOuterGrace({
      shutdownTimeoutMs: durationFlag("--shutdown-timeout", flags.shutdownTimeout ?? "10s"),
      killGraceMs: durationFlag("--kill-grace", flags.killGrace ?? "5s"),
    }),
    logRoot: logDirFlag(flags.logDir),
    json: flags.output === "json",
    color: flags.color !== false,
    ...(flags.lease === undefined ? {} : { leaseMs: leaseFlag(flags.lease) }),
    ...(typeof flags.metricsHost === "string" ? { metricsHost: hostFlag(flags.metricsHost, flags.metricsPort) } : {}),
  };
  const metricsPort = flags.metricsPort === undefined ? undefined : portFlag(flags.metricsPort);
  const { runWorker } = await import("../worker-run.js");
  const { checkLogRoot } = await import("../log-folders.js");
  checkLogRoot(options.logRoot);
  // As run --store does, before the store opens: a worker that cannot run a task (OPEN_FILE_LIMIT, PROCESS_LIMIT) makes no schema.
  const { fitConcurrencyToOpenFiles } = await import("../../handlers/index.js");
  const fitted = fitConcurrencyToOpenFiles(options.concurrency, !options.json);
  const { smallThreadPool } = await import("../thread-pool.js");
  smallThreadPool();
  // The metrics port taken before the store opens, as the checks above: one in use makes no schema.
  const metrics = metricsPort === undefined ? undefined : await (await import("../metrics-port.js")).takeMetricsPort(metricsPort, options.metricsHost ?? "127.0.0.1");
  // Heard from here until the worker's own listeners are there, handed on to them then (see WorkerRunOptions.earlySignals),
  // as run --store does: the store's opening listens for itself, and goes as it ends; a SIGTERM just after, while the
  // worker was set up (its guard spawned), found no listener and ended taskq by its default action, with no `stopped` line.
  const unheard = new EarlySignals();
  try {
    // Listened for from as the worker stops listening until taskq exits (holdSignals): the store then closes.
    return await withStore(
      flags,
      async (store) => {
        // With --output json, that a newer taskq migrated the store is a note record among the worker's first (see saysNewer).
        const storeNote = options.json ? newerStoreNote(store) : undefined;
        const more = { ...(metrics === undefined ? {} : { metrics }), ...(storeNote === undefined ? {} : { storeNote }) };
        return (await runWorker(store, { ...options, fitted, takeSignals: holdSignals, earlySignals: unheard, ...more })).exitCode;
      },
      { applicationName: `taskq worker ${workerId}`, runsTasks: true, undoneIfStopped: "nothing was leased", saysNewer: options.json },
    );
  } finally {
    // Where the store could not be opened (its opening stopped by the signal, which is said), or the worker did not start.
    unheard.end();
    // Closed by the worker as it stops; here when the store could not be opened.
    metrics?.server.close();
  }
}

/** What `status` says on stderr of a run not finished whose store no worker is connected to (see workersConnected); with --output json, a note record (NO_WORKER). */
function sayNoWorker(schema: string, when: string, json: boolean): void {
  const message = `${noWorkerWords(schema)}${when}: the run's tasks wait until one is (taskq worker)`;
  if (json) stderrNote({ code: "NO_WORKER", message, schema });
  else process.stderr.write(`note: ${message}\n`);
}

function noWorkerWords(schema: string): string {
  return `no worker is connected to this store (schema "${schema}")`;
}

/** `taskq status RUN`: the run's summary, and with --watch, refreshed until it ends. */
export async function statusCommand(runId: string, flags: Flags): Promise<number> {
  runIdArgument(runId);
  return withExistingStore(flags, async (store) => {
    /** The ended run, as the watch's last read found it: the summary is of that read, not of one more. */
    let ended: RunStatus | undefined;
    if (flags.watch === true) {
      const stdout = watchStdout();
      try {
        /** The last read that found the run: a run deleted after it (by a prune) is told as deleted, not as a mistyped id. */
        let last: RunStatus | undefined;
        /** Whether the watch has looked for a worker: once, at its first read of the run running. */
        let lookedForWorker = false;
        for (;;) {
          let status: RunStatus | Error;
          try {
            status = await store.runStatus(runId);
            last = status;
          } catch (error) {
            if (error instanceof RunNotFoundError && last !== undefined) throw runDeletedError(runId, flags, store.schema, `while watched; its last read: ${countsLine(last)}`);
            // A database that is down or restarting for a while is ridden out, as a worker does: a watch
            // that exited 1 would read as "not finished yet". Any other error ends it. (The store wraps
            // what isTransientError takes as STORE_UNAVAILABLE; its other errors' words are not to be read.)
            if (!(error instanceof TaskqError ? error.code === "STORE_UNAVAILABLE" : isTransientError(error))) throw error;
            status = error instanceof Error ? error : new Error(String(error));
          }
          if (!(status instanceof Error) && status.state !== "running") {
            ended = status;
            break;
          }
          // With --output json every line stays a JSON object, so the whole output is NDJSON.
          const ts = new Date().toISOString();
          const json = flags.output === "json";
          if (status instanceof Error) {
            // Worded as a worker's "db" line and record: the store's messages name their operation ("runStatus failed: ").
            const message = status.message.replace(/^runStatus failed: /, "");
            process.stdout.write(json ? `${toJson({ ts, event: "db-error", runId, operation: "status", message, retrying: true })}\n` : `${ts} ${runId}: status failed: ${message}; retrying\n`);
          } else {
            // The counts as the summary record that ends the watch gives them (and the plain line words them): SCHEDULED and READY, not the store's queued.
            process.stdout.write(json ? `${toJson({ ts, event: "progress", runId, counts: summaryCounts(status) })}\n` : `${ts} ${runId}: ${countsLine(status)}\n`);
            // `taskq submit f.yaml && taskq status --watch RUN` with no worker anywhere watched a run that never moved, in silence.
            if (!lookedForWorker) {
              lookedForWorker = true;
              // A database that stops answering just then is the watch's next read's to ride out, not a reason to end it.
              if ((await store.workersConnected(runId).catch(() => undefined)) === false) sayNoWorker(store.schema, " (as the watch started)", json);
            }
          }
          await sleep(1000, undefined, { signal: stdout.gone }).catch(() => undefined);
          // `status --watch | head -1`: no one reads any more; the run is not finished (exit 1).
          if (stdout.gone.aborted) return 1;
        }
      } finally {
        stdout.dispose();
      }
    }
    const read = ended ?? (await store.runStatus(runId));
    const code = await printRunSummary(store, runId, { color: flags.color !== false, json: flags.output === "json" }, read);
    // Said only where it is known: not where a session of an earlier taskq's worker, whose store its name does not say, is connected.
    if (read.state === "running" && (await store.workersConnected(runId)) === false) sayNoWorker(store.schema, "", flags.output === "json");
    return code;
    // The watch says each second that the database does not answer, rather than trying for seconds in silence.
  }, { retrying: flags.watch !== true, applicationName: `taskq status ${runId}`, json: flags.output === "json" });
}

/**
 * Aborts `gone` when stdout can no longer be written (its reader went away: EPIPE). The
 * CLI ignores such errors, since a run goes on without its output; a watch is nothing but
 * its output, and would poll forever.
 */
function watchStdout(): { gone: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onError = (): void => controller.abort();
  process.stdout.on("error", onError);
  if (process.stdout.destroyed) controller.abort();
  return { gone: controller.signal, dispose: () => process.stdout.off("error", onError) };
}

/** `taskq cancel RUN [TASK]`. */
export async function cancelCommand(runId: string, task: string | undefined, flags: Flags): Promise<number> {
  runIdArgument(runId);
  if (task !== undefined) taskIdArgument(task);
  return withExistingStore(flags, async (store) => {
    const result = await store.cancelRun(runId, task);
    // What has already ended is no error (it may have ended a moment before), for one task as for
    // the run: it is said on stderr, and stdout stays the JSON a script reads.
    if (result.ended !== undefined) nothingToCancel(task === undefined ? `run ${runId}` : taskOfRun(task, runId), result.ended);
    process.stdout.write(`${toJson({ cancelled: result.cancelled, cancelRequested: result.cancelRequested })}\n`);
    await cancelNotes(store, runId, [result]);
    return 0;
  }, { applicationName: `taskq cancel ${runId}` });
}

/**
 * `taskq cancel RUN TASK TASK...`: each task as `cancel RUN TASK` cancels it, in one transaction: every id is checked first,
 * and one not in the run (named) cancels nothing. stdout: a JSON object a line for each task, in the order given, with its
 * `task`; stderr: the notes, each naming its task.
 */
export async function cancelTasksCommand(runId: string, tasks: readonly string[], flags: Flags): Promise<number> {
  runIdArgument(runId);
  for (const task of tasks) taskIdArgument(task);
  // Each once (the store leaves out the second of an id given twice), and said once: still a line with its `task`
  // (`cancel RUN b b`), as for several ids, since it is the ids typed, not what is left of them, that say which JSON a
  // script reads. The store is given them as typed, for its error to count them so (`none of the 3 tasks given`).
  return withExistingStore(flags, async (store) => {
    const results = await store.cancelTasks(runId, tasks);
    for (const { key, ended, cancelledWith } of results) {
      if (ended !== undefined) nothingToCancel(taskOfRun(key, runId), ended);
      if (cancelledWith !== undefined) process.stderr.write(`note: ${taskOfRun(key, runId)} was cancelled with ${JSON.stringify(cancelledWith)}, given before it, which it depends on\n`);
    }
    process.stdout.write(
      results
        .map(({ key, cancelled, cancelRequested, ended, cancelledWith }) => `${toJson({ task: key, cancelled, cancelRequested, ...(ended === undefined ? {} : { ended }), ...(cancelledWith === undefined ? {} : { cancelledWith }) })}\n`)
        .join(""),
    );
    await cancelNotes(store, runId, results);
    return 0;
  }, { applicationName: `taskq cancel ${runId}` });
}

/** A task as cancel's notes name it: `task "b" of run build-7`. */
function taskOfRun(key: string, runId: string): string {
  return `task ${JSON.stringify(key)} of run ${runId}`;
}

/** That `what` (a run, a task of it) had already ended: no error, said on stderr, stdout staying the JSON a script reads. */
function nothingToCancel(what: string, ended: string): void {
  process.stderr.write(`note: ${what} has already ended (${ended}): nothing to cancel\n`);
}

/**
 * What a cancel (of a run, a task, several tasks: `results`, one for each) said after its JSON: the notes of the tasks not
 * retried and of those running, that no worker is connected to stop them, and, where its JSON could not be written, the change
 * made on stderr.
 */
async function cancelNotes(store: PostgresStore, runId: string, results: readonly CancelResult[]): Promise<void> {
  const running = results.flatMap((result) => result.running);
  for (const note of [...notRetriedNotes(runId, results.flatMap((result) => result.notRetried)), ...runningNotes(running)]) process.stderr.write(`note: ${note}\n`);
  // Their notes say a worker's sweep cancels a task whose worker is gone: with no worker connected, none will until one starts.
  // Only a finer wording, as status's note: a database that stops answering just then leaves it out.
  // (A failed look is undefined, not false: see workersConnected.)
  if (running.length > 0 && (await store.workersConnected(runId)) === false) process.stderr.write(`note: ${noSweepNote(store.schema, running)}\n`);
  const cancelled = results.flatMap((result) => result.cancelled);
  const cancelRequested = results.flatMap((result) => result.cancelRequested);
  const done = [...(cancelled.length === 0 ? [] : [`cancelled ${cancelled.join(", ")}`]), ...(cancelRequested.length === 0 ? [] : [`asked the workers running ${cancelRequested.join(", ")} to stop`])];
  if (done.length > 0) changeLost(`run ${runId}: ${done.join("; ")}`);
}

/** Tasks a cancel found waiting for their retry that its notes name each, with the error of the attempt that failed last. */
const NOT_RETRIED_SHOWN = 5;

/**
 * The tasks a cancel found waiting for their retry: not retried, each with the error of the attempt that failed last,
 * as their cancel's reason keeps it ("cancelled by request: not retried (attempt 2 failed: exited with code 7)") and as
 * a stopped run's cancel says it of its own ("shutdown: not retried (...)").
 */
export function notRetriedNotes(runId: string, notRetried: readonly NotRetried[]): string[] {
  const notes = notRetried
    .slice(0, NOT_RETRIED_SHOWN)
    .map((task) => `${JSON.stringify(task.key)} was waiting for its retry: ${notRetriedWords({ attempt: task.attempt, error: escapeControls(oneLine(task.error)) })}`);
  const more = notRetried.length - notes.length;
  if (more > 0) notes.push(`${more} more tasks that were waiting for their retry are not retried: \`taskq status ${runId}\` gives each one's error`);
  return notes;
}

/**
 * What becomes of the running tasks a cancel was asked for, which no one may act on soon: their
 * workers stop them at their next heartbeat, but a worker that is gone (SIGKILLed, its machine lost)
 * never will; its task runs on in the database until its lease runs out and a worker's sweep cancels it.
 * One whose lease has run out already is worded as status words it (leaseRanOutWords).
 */
export function runningNotes(running: readonly RunningTarget[]): string[] {
  const seconds = (ms: number): string => formatDuration(Math.max(1000, Math.round(ms / 1000) * 1000));
  const live = running.filter((task) => task.leaseLeftMs > 0);
  const expired = running.filter((task) => task.leaseLeftMs <= 0);
  const notes: string[] = [];
  const sweep = "the next sweep of any running worker cancels it";
  if (live.length === 1) {
    const [task] = live as [RunningTarget];
    notes.push(
      `${JSON.stringify(task.key)} runs on worker ${task.workerId ?? "unknown"}, which stops it at its next heartbeat; if that worker is gone (killed, its machine lost), ` +
        `the task stays running until its lease runs out, in ${seconds(task.leaseLeftMs)}, and then ${sweep}`,
    );
  } else if (live.length > 1) {
    const longest = Math.max(...live.map((task) => task.leaseLeftMs));
    notes.push(
      `${live.length} running tasks (${shownIds(live.map((task) => task.key))}) are stopped by their workers at their next heartbeat; one whose worker is gone (killed, its machine lost) ` +
        `stays running until its lease runs out, within ${seconds(longest)}, and then ${sweep}`,
    );
  }
  // As status says it: a worker that still waits on the database may yet record the attempt; one that does not is gone, stalled or cut off.
  const waiting = expired.filter((task) => task.workerWaitingMs !== undefined);
  const gone = expired.filter((task) => task.workerWaitingMs === undefined);
  for (const group of [waiting, gone]) {
    if (group.length === 1) {
      const [task] = group as [RunningTarget];
      notes.push(`${JSON.stringify(task.key)} on worker ${task.workerId ?? "unknown"}: ${leaseRanOutWords(-task.leaseLeftMs, task.workerWaitingMs, "cancels it")}`);
    }
  }
  if (waiting.length > 1) {
    const longest = Math.max(...waiting.map((task) => task.workerWaitingMs!));
    notes.push(
      `${waiting.length} running tasks (${shownIds(waiting.map((task) => task.key))}): their leases have run out while their workers wait on the database ` +
        `(a statement of theirs, for up to ${seconds(longest)}: ${WORKER_WAITS_FOR}); where one does not, a worker's sweep cancels its task`,
    );
  }
  if (gone.length > 1) {
    notes.push(`${gone.length} running tasks (${shownIds(gone.map((task) => task.key))}) were left by workers ${WORKER_GONE}: their leases have run out, and a worker's sweep cancels them`);
  }
  return notes;
}

/** What `cancel` adds to its notes of the running tasks when no worker of the store is connected (see workersConnected): no sweep comes. */
function noSweepNote(schema: string, running: readonly RunningTarget[]): string {
  const tasks = running.length === 1 ? `${JSON.stringify(running[0]!.key)} stays` : `the ${running.length} running tasks stay`;
  return `${noWorkerWords(schema)}: ${tasks} running until one is (taskq worker) and its sweep cancels ${running.length === 1 ? "it" : "them"}`;
}

/** `taskq dead-letters [RUN]`. */
export async function deadLettersCommand(runId: string | undefined, flags: Flags): Promise<number> {
  if (runId !== undefined) runIdArgument(runId);
  return withExistingStore(flags, async (store) => {
    const dead = await store.deadLetters(runId);
    if (flags.output === "json") {
      // Under GitHub Actions, where its runner reads `##[stop-commands]` or `##[error]` anywhere in a line, a record's too (a
      // task's last lines): each `[` after `##` as `\u005b`, as a run's records write it (see withoutLegacyCommands).
      // Its `tail` as GitHub Actions' runner is to read it (see linesForRunner): the mask commands in it on stderr first.
      const ci = underGitHubActions();
      if (ci) writeCommands(process.stderr, tailMaskCommands(dead.flatMap((row) => row.tail)));
      for (const row of dead) {
        const shown = ci ? { ...row, tail: linesForRunner(row.tail) } : row;
        process.stdout.write(`${ci ? withoutLegacyCommands(toJson(withWorkerFields(shown))) : toJson(withWorkerFields(shown))}\n`);
      }
      return 0;
    }
    if (dead.length === 0) process.stdout.write("no dead letters\n");
    // As status's summary shows them: the error on its one line (what it quotes, a cwd's folder,
    // through oneLine), and on a terminal the task's last lines cleaned as they were shown while it ran.
    const terminal = process.stdout.isTTY === true;
    const safe = terminal ? terminalSafe : (text: string): string => text;
    // Under GitHub Actions, into a file or a pipe, as a run's summary quotes them (see quoted): its runner trims their
    // indent, and read a failed task's `::error` as a second annotation, its `::group::` as a group that folded the
    // dead letters after it away, and its `::add-mask::` or `::stop-commands::` as commands; and a line a worker elsewhere
    // cut within a word, cut after a whole one (see tailLineInWords).
    const commandsRead = !terminal && underGitHubActions();
    // Their mask commands first, all of them: a value one task masked may show in another's lines, quoted before it (see tailMaskCommands).
    if (commandsRead) writeCommands(process.stdout, tailMaskCommands(dead.flatMap((row) => row.tail)));
    for (const row of dead) {
      process.stdout.write(`${row.runId}/${row.key}: ${safe(oneLine(describeRow(row)))} (${row.attempts} attempt${row.attempts === 1 ? "" : "s"})\n`);
      // Where the whole output is, as status says it: on the machine of the worker that ran its last attempt.
      const log = logOnWorker(row.runId, row.key, row.workerId);
      process.stdout.write(`  log: ${escapeControls(log)}\n`);
      // Lines of an earlier attempt say so, as a run's summary says it: the last one left none; and, of one that ran on
      // another worker, which log has them (not the last attempt's).
      if (row.tailAttempt !== undefined) {
        const elsewhere = tailLog(row.runId, row, log).tailLogPath;
        const its = elsewhere === undefined ? "" : `; its log: ${escapeControls(elsewhere)}`;
        process.stdout.write(`  last ${row.tail.length === 1 ? "line" : `${row.tail.length} lines`} of attempt ${row.tailAttempt} (attempt ${row.attempts} left none${its}):\n`);
      }
      for (const line of quoted(row.tail.map((text) => `    ${safe(commandsRead ? tailLineInWords(text) : text)}`), commandsRead)) process.stdout.write(`${line}\n`);
      // As a run's summary and status say it: no one opens the log for lines it has not.
      if (row.tail.length === 0) process.stdout.write("  no output\n");
      if (row.cancelledDependents.length > 0) process.stdout.write(`  cancelled because of it: ${shownIds(row.cancelledDependents)}\n`); // all of them in JSON
    }
    return 0;
  }, { applicationName: `taskq dead-letters${runId === undefined ? "" : ` ${runId}`}`, json: flags.output === "json" });
}

/**
 * A task's last lines in `status --output json` or `dead-letters --output json` under GitHub Actions, whose runner reads
 * the records: a line a worker elsewhere cut within a word, cut after a whole one, as the text shows it (see
 * tailLineInWords). The mask commands they hold go on stderr before the record (see tailMaskCommands), where the runner
 * reads them, as a worker's JSON records have theirs: in a record it reads none, and the value showed.
 */
function linesForRunner(lines: readonly string[]): string[] {
  return lines.map(tailLineInWords);
}

/** A task's log on the machine of the worker that ran its last attempt, in words: `<log-dir>/RUN/test.log (on ci-7-4121-a3f9c2)`. */
function logOnWorker(runId: string, key: string, workerId: string | null): string {
  return `<log-dir>/${runId}/${key}.log (on ${workerId ?? "its worker"})`;
}

/**
 * Where a task's last lines are of an earlier attempt (`tailAttempt`) whose log is not `shown`, the log its lines are in (its
 * attempt ran on another worker; the last attempt's log does not have them): in words, this process's own where its worker
 * wrote them, and that worker (null where the store does not say which).
 */
function tailLog(
  runId: string,
  t: Pick<TaskStatusRow, "key" | "tailAttempt" | "tailWorkerId">,
  shown: string,
  local?: LocalLogs,
): Pick<DeadLetterLine, "tailLogPath" | "tailWorkerId"> {
  if (t.tailAttempt === undefined || t.tailWorkerId === undefined) return {};
  // This process's worker ended that attempt: its log here has them (the store may not know which worker wrote them).
  const here = local !== undefined && (t.tailWorkerId === local.workerId || local.attemptsEndedHere?.get(t.key)?.has(t.tailAttempt) === true);
  const worker = here ? local.workerId : t.tailWorkerId;
  const words =
    here
      ? path.join(local.logDir, `${t.key}.log`)
      : worker === null
        ? `on the worker that ran attempt ${t.tailAttempt}, which the store did not record`
        : logOnWorker(runId, t.key, worker);
  return words === shown ? {} : { tailLogPath: words, tailWorkerId: worker };
}

/** A stored row with its worker's host and pid beside its `workerId`, as status's dead letters have them. */
function withWorkerFields(row: object & { workerId: string | null }): Record<string, unknown> {
  const worker = Object.entries(workerFields(row.workerId));
  return Object.fromEntries(Object.entries(row).flatMap((entry) => (entry[0] === "workerId" ? [entry, ...worker] : [entry])));
}

/** `taskq prune --older-than AGE`: deletes (or, with --dry-run, lists) the runs that ended before then. */
export async function pruneCommand(flags: Flags): Promise<number> {
  const olderThanMs = ageFlag(flags.olderThan);
  const dryRun = flags.dryRun === true;
  if (flags.logs === true) {
    // This machine's log folders have no store: a --store would be silently ignored, and the runs it names left as they were.
    const storeFlag = flags.store !== undefined ? "--store" : flags.storeSchema !== undefined ? "--store-schema" : undefined;
    if (storeFlag !== undefined) throw new UsageError(`${storeFlag} goes without --logs (prune the store's runs); with it, prune deletes this machine's log folders only`);
    return pruneLogs(logDirFlag(flags.logDir), olderThanMs, flags);
  }
  // The database's runs have no log folder here: a --log-dir would be silently ignored.
  if (flags.logDir !== undefined) throw new UsageError("--log-dir goes with --logs (prune this machine's log folders); without it, prune deletes the store's runs");
  storeUrl(flags, "prune --logs prunes this machine's log folders");
  return withExistingStore(flags, async (store) => {
    const { before, runs } = await store.pruneRuns(olderThanMs, { dryRun });
    const what = `${runs.length} run${runs.length === 1 ? "" : "s"} ended before ${before}`;
    if (flags.output === "json") process.stdout.write(`${toJson({ before, [dryRun ? "wouldPrune" : "pruned"]: runs })}\n`);
    else process.stdout.write(runs.length === 0 ? `no run ended before ${before}\n` : `${dryRun ? "would prune" : "pruned"} ${what}:\n${runs.map((id) => `  ${id}\n`).join("")}`);
    if (!dryRun && runs.length > 0) changeLost(`pruned ${what}`);
    return 0;
  }, { applicationName: "taskq prune", json: flags.output === "json" });
}

/** `taskq prune --logs`: this machine's run folders under --log-dir, local runs' and workers' alike. */
async function pruneLogs(logRoot: string, olderThanMs: number, flags: Flags): Promise<number> {
  const { pruneLogFolders } = await import("../log-folders.js");
  const dryRun = flags.dryRun === true;
  const { before, runs, failed, inUse } = pruneLogFolders(logRoot, olderThanMs, { dryRun });
  // A folder that could not be deleted, or not read (another user's, in a root users share), is
  // said on stderr and makes the exit 1; the others were pruned all the same, and are listed.
  // Paths are escaped as everywhere: a newline or an escape in a folder's name is shown, not obeyed.
  for (const { dir, problem, unreadable } of failed) process.stderr.write(`taskq: cannot ${unreadable ? "read" : "delete"} ${escapeControls(dir)}: ${problem}\n`);
  const code = failed.length === 0 ? 0 : 1;
  const what = `${runs.length} run folder${runs.length === 1 ? "" : "s"} last written before ${before}`;
  if (flags.output === "json") {
    const notDeleted = failed.length === 0 ? {} : { failed: failed.map(({ run, problem, unreadable }) => ({ run, error: unreadable ? `cannot read: ${problem}` : problem })) };
    process.stdout.write(`${toJson({ before, logDir: logRoot, [dryRun ? "wouldPrune" : "pruned"]: runs, ...notDeleted, ...(inUse.length === 0 ? {} : { inUse }) })}\n`);
  } else {
    if (runs.length > 0) process.stdout.write(`${dryRun ? "would prune" : "pruned"} ${what}:\n${runs.map((id) => `  ${escapeControls(path.join(logRoot, id))}\n`).join("")}`);
    else if (failed.length === 0 && inUse.length === 0) process.stdout.write(`no run folder in ${escapeControls(logRoot)} last written before ${before}\n`);
    // Old enough, and kept: "no run folder ... last written before" would be untrue, and a folder that stays a mystery.
    if (inUse.length > 0) {
      const kept = `${inUse.length} run folder${inUse.length === 1 ? "" : "s"} last written before ${before}`;
      process.stdout.write(`kept ${kept}, in use (a run or worker holds ${inUse.length === 1 ? "it" : "them"}):\n${inUse.map((id) => `  ${escapeControls(path.join(logRoot, id))}\n`).join("")}`);
    }
  }
  if (!dryRun && runs.length > 0) changeLost(`pruned ${what} in ${escapeControls(logRoot)}`);
  return code;
}

/**
 * An age: whole days (`7d`), or a duration with its units (`12h`, `30m`, `90s`). Not a bare
 * number, which durations elsewhere read as seconds: `--older-than 30` likely means days, and
 * a prune of what is 30 seconds old deletes nearly everything; nor milliseconds, nor an age under
 * a second but `0s`, which says "all that ended" as it means it.
 */
function ageFlag(value: unknown): number {
  const text = typeof value === "string" ? value : "";
  // " 7d" was trimmed without a word where every other duration flag refused it: refused too, with the age meant.
  const meant = text.trim();
  if (meant !== text && meant !== "") {
    const valid = !failsWith(() => ageFlag(meant));
    throw new UsageError(`--older-than: ${JSON.stringify(value)} is not an age like 7d, 12h or 30m (write it without spaces${valid ? `: ${meant}` : ""})`);
  }
  const days = /^(\d+)d$/.exec(text);
  if (days !== null) {
    if (Number(days[1]) <= MAX_AGE_DAYS) return Number(days[1]) * 86_400_000;
    throw new UsageError(`--older-than: ${JSON.stringify(value)} is more than the maximum of ${MAX_AGE_DAYS}d`);
  }
  if (/^\d+$/.test(text)) throw new UsageError(`--older-than: ${JSON.stringify(value)} needs a unit: ${text}d, ${text}h, ${text}m or ${text}s`);
  const written = text !== "" && !/^[\d.]+$/.test(text) && DURATION_PATTERN.test(text);
  // `500ms`: milliseconds are no age, and a prune of what ended that long ago deletes nearly everything.
  if (written && text.endsWith("ms")) throw new UsageError(`--older-than: ${JSON.stringify(value)} is not an age like 7d, 12h or 30m (an age's units are d, h, m and s, not ms)`);
  const ms = written ? parseDuration(text) : undefined;
  // `0.5s`, and `0.0004s` that rounds to no milliseconds: no age, and not the 0s that says "all that ended" in so many words.
  if (ms !== undefined && /[1-9]/.test(text) && ms < 1_000) throw new UsageError(`--older-than: ${JSON.stringify(value)} is under a second: give 1s or more, or 0s for all that ended`);
  if (ms !== undefined) return ms;
  // Written as an age, but past any duration's 30 days: only whole days go further.
  if (written) throw new UsageError(`--older-than: ${JSON.stringify(value)} is more than 30 days: write a longer age in whole days, up to ${MAX_AGE_DAYS}d`);
  const mistake = typeof value === "string" ? durationMistake(value, UNITS_BUT_MS) : undefined;
  throw new UsageError(`--older-than: ${JSON.stringify(value)} is not an age like 7d, 12h or 30m${mistake === undefined ? "" : ` (${mistake})`}`);
}

function failsWith(check: () => unknown): boolean {
  try {
    check();
    return false;
  } catch {
    return true;
  }
}

/** The longest --older-than in whole days (273 years): any other unit stops at a duration's 30 days. */
const MAX_AGE_DAYS = 99_999;

/** `taskq redrive RUN TASK`: a dead letter gets fresh attempts; the dependents it cancelled wait for it again. */
export async function redriveCommand(runId: string, task: string, flags: Flags): Promise<number> {
  runIdArgument(runId);
  taskIdArgument(task);
  return withExistingStore(flags, async (store) => {
    const result = await store.redrive(runId, task);
    process.stdout.write(`${toJson(result)}\n`);
    changeLost(`run ${runId}: ${queuedAgain(result)}`);
    return 0;
  }, { applicationName: `taskq redrive ${runId}` });
}

/**
 * `taskq redrive RUN TASK TASK...`: each task as `redrive RUN TASK` redrives it, in one transaction: every id is checked first,
 * and one not in the run (named), or one that did not fail, redrives nothing. stdout: redrive's JSON object a line for each
 * task, in the order given.
 */
export async function redriveTasksCommand(runId: string, tasks: readonly string[], flags: Flags): Promise<number> {
  runIdArgument(runId);
  for (const task of tasks) taskIdArgument(task);
  // As cancel's: `redrive RUN f f` is several ids given, of one task, and its error says none of the 2 was redriven.
  return withExistingStore(flags, async (store) => {
    const results = await store.redriveTasks(runId, tasks);
    process.stdout.write(results.map((result) => `${toJson(result)}\n`).join(""));
    changeLost(`run ${runId}: ${results.map(queuedAgain).join("; ")}`);
    return 0;
  }, { applicationName: `taskq redrive ${runId}` });
}

/** A redrive's change, as said where its JSON could not be written: `task "test" was queued again (waiting for it again: deploy)`. */
function queuedAgain(result: RedriveResult): string {
  return `task ${JSON.stringify(result.requeued)} was queued again${result.reblocked.length === 0 ? "" : ` (waiting for it again: ${result.reblocked.join(", ")})`}`;
}

/** Where a run's logs are, when the summary is printed by a process that ran some of its tasks (`run --store`). */
export interface LocalLogs {
  /** This process's folder of the run's logs. */
  logDir: string;
  /** This process's worker id: the tasks it ran last have their logs in `logDir`. */
  workerId: string;
  /** The tasks its worker's stop cut short and gave back, each with the last lines its attempt wrote. */
  cutShort?: ReadonlyMap<string, readonly string[]>;
  /**
   * Of the tasks whose attempts its worker ended, every such attempt: their lines are in its log in `logDir`, whatever the
   * store knows of their worker (a task waiting for its retry whose latest attempt ended here has that attempt's log there).
   */
  attemptsEndedHere?: ReadonlyMap<string, ReadonlySet<number>>;
}

/** Prints a durable run's summary with the same text as a local run (of `read`, a status already read, else of one read now); returns the exit code it implies. */
export async function printRunSummary(
  store: PostgresStore,
  runId: string,
  options: { color: boolean; json: boolean; local?: LocalLogs; interrupted?: NodeJS.Signals },
  read?: RunStatus,
): Promise<number> {
  const status = read ?? (await store.runStatus(runId));
  const summary = toSummary(status, options.local);
  if (options.interrupted !== undefined) {
    // The code taskq exits with, as a local run's summary says it, whatever the run's tasks came to.
    summary.interrupted = options.interrupted;
    summary.exitCode = signalExitCode(options.interrupted);
  }
  // A run stored without its file (not by submit) has no "file" rather than a made-up one. A `ts` first, as every record of a local run has.
  const record = { ts: new Date().toISOString(), event: "summary", ...summary, file: status.file ?? undefined, state: status.state };
  // Under GitHub Actions, a `##[` of a task's last lines written so that its runner reads no command in it, as a run's
  // records are (see withoutLegacyCommands); and those lines as its runner is to read them (see linesForRunner).
  if (options.json && underGitHubActions()) {
    writeCommands(process.stderr, tailMaskCommands(summaryTaskLines(summary)));
    const shown = {
      ...record,
      deadLetters: summary.deadLetters.map((x) => ({ ...x, tail: linesForRunner(x.tail) })),
      cancelled: summary.cancelled.map((x) => (x.tail === undefined ? x : { ...x, tail: linesForRunner(x.tail) })),
      running: summary.running?.map((x) => (x.lastLines === undefined ? x : { ...x, lastLines: linesForRunner(x.lastLines) })),
    };
    process.stdout.write(`${withoutLegacyCommands(toJson(shown))}\n`);
  } else if (options.json) process.stdout.write(`${toJson(record)}\n`);
  else {
    const terminal = process.stdout.isTTY === true;
    // Under GitHub Actions, into a file or a pipe, its runner reads workflow commands in the tasks' lines quoted there.
    process.stdout.write(formatSummary(summary, await createColors({ color: options.color, isTTY: terminal }), terminal, { commandsRead: !terminal && underGitHubActions() }));
  }
  return summary.exitCode;
}

function toSummary(status: RunStatus, local: LocalLogs | undefined): RunSummary {
  // In the order they failed, as a local run's summary and `dead-letters` list them (its first 20 are the first 20 to fail); ties in submission order.
  const failed = status.tasks.filter((t) => t.state === "failed").sort((a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0));
  // Of a task waiting for its retry (or cancelled as it waited), the worker whose attempt failed last has its log;
  // of one whose latest attempt ended in this process, this process's log folder.
  const logWorker = (t: TaskStatusRow): string | null => t.failedWorkerId ?? t.workerId;
  const logPath = (t: TaskStatusRow): string => {
    const worker = logWorker(t);
    const here = local !== undefined && (worker === local.workerId || local.attemptsEndedHere?.get(t.key)?.has(t.attempts) === true);
    return here ? path.join(local.logDir, `${t.key}.log`) : logOnWorker(status.runId, t.key, worker);
  };
  // Every time on the database's clock: this machine's may be behind or ahead of it. None before the run's start (a clock set back there).
  const end = Math.max(...status.tasks.map((t) => (t.finishedAt ?? status.readAt).getTime()), status.createdAt.getTime());
  return {
    runId: status.runId,
    file: status.file ?? "",
    logDir: local === undefined ? `(on each worker) <log-dir>/${status.runId}` : localLogDir(status, local),
    wallMs: end - status.createdAt.getTime(),
    counts: summaryCounts(status),
    deadLetters: failed.map((t) => ({
      id: t.key,
      attempts: t.attempts,
      error: describeRow(t),
      exitCode: t.exitCode,
      signal: t.signal,
      timedOut: t.timedOut,
      logPath: logPath(t),
      // For a program: the path under that worker's --log-dir, and the worker (logPath says both in words).
      logFile: `${status.runId}/${t.key}.log`,
      workerId: t.workerId,
      ...workerFields(t.workerId),
      tail: t.tail,
      ...(t.tailAttempt === undefined ? {} : { tailAttempt: t.tailAttempt }),
      ...tailLog(status.runId, t, logPath(t), local),
    })),
    // Those cut short while running first, as a local run's summary lists them (in JSON too); each part in submission order.
    cancelled: [...status.tasks.filter((t) => t.state === "cancelled" && t.cancelledRunning === true), ...status.tasks.filter((t) => t.state === "cancelled" && t.cancelledRunning !== true)]
      .map((t) => ({
        id: t.key,
        reason: t.cancelledBy !== null ? ("dependency" as const) : t.cancelKind === "shutdown" ? ("shutdown" as const) : ("cancel" as const),
        ...(t.cancelledBy !== null ? { dependency: t.cancelledBy } : {}),
        message: t.cancelReason ?? "cancelled",
        ...(t.cancelledRunning === true ? { running: true as const } : {}),
        ...cutShortLines(status.runId, t, local),
        ...waitedLines(status.runId, t, logPath(t), logWorker(t), local),
      })),
    ...(status.state === "running" ? { running: runningLines(status), ...retryingLines(status), ...scheduledLines(status) } : {}),
    exitCode: status.state === "succeeded" ? 0 : 1,
  };
}

/**
 * A task cut short as it ran (by a stopped run, or by a cancel), as a local run's summary gives one: its log and the last
 * lines its attempt wrote. Of one this process's stop cut short, those this process read, and its log here; of any other
 * (cut short on another worker, or read by `status`), those the store kept as its attempt ended (see storeCutShortTail),
 * and the log of the worker that ran it (worker_id, which the cancel leaves as it was).
 */
function cutShortLines(
  runId: string,
  t: TaskStatusRow,
  local: LocalLogs | undefined,
): Pick<CancelledLine, "logPath" | "logFile" | "workerId" | "workerHost" | "workerPid" | "tail" | "tailAttempt" | "tailLogPath" | "tailWorkerId"> {
  if (t.cancelledRunning !== true) return {};
  const tail = local?.cutShort?.get(t.key);
  // This process's worker ran it (its log is here): named, with its host and pid, as a dead letter's worker and one waiting for its retry.
  if (local !== undefined && tail !== undefined) {
    // Its attempt printed nothing: the lines of the latest earlier attempt that wrote some, which the store kept, labelled with
    // that attempt, as status and a local run's summary give them (before, none here, while status gave attempt 1's).
    const logPath = path.join(local.logDir, `${t.key}.log`);
    const lines = tail.length > 0 ? { tail: [...tail] } : { tail: t.tail, ...(t.tailAttempt === undefined ? {} : { tailAttempt: t.tailAttempt }), ...tailLog(runId, t, logPath, local) };
    return { logPath, logFile: `${runId}/${t.key}.log`, workerId: local.workerId, ...workerFields(local.workerId), ...lines };
  }
  const worker = t.workerId;
  if (worker === null) return {};
  const logPath = local !== undefined && worker === local.workerId ? path.join(local.logDir, `${t.key}.log`) : logOnWorker(runId, t.key, worker);
  // Lines of an earlier attempt that ran on another worker: that worker's log has them, not this one's.
  const lines = t.tailAttempt === undefined ? {} : { tailAttempt: t.tailAttempt, ...tailLog(runId, t, logPath, local) };
  return { logPath, logFile: `${runId}/${t.key}.log`, workerId: worker, ...workerFields(worker), tail: t.tail, ...lines };
}

/**
 * A task cancelled as it waited for its retry (by request or by a stopped run: its reason keeps the error of the attempt
 * that failed last), as a local run's summary gives one: its log and the last lines of the latest attempt that wrote
 * some, which the store keeps; and, as a dead letter has them for programs, the worker whose attempt failed last (`workerId`,
 * whose log `logPath` names in words) and its host and pid.
 */
function waitedLines(
  runId: string,
  t: TaskStatusRow,
  logPath: string,
  workerId: string | null,
  local?: LocalLogs,
): Pick<CancelledLine, "logPath" | "logFile" | "workerId" | "workerHost" | "workerPid" | "tail" | "tailAttempt" | "tailLogPath" | "tailWorkerId"> {
  if (t.cancelledRunning === true || t.cancelledBy !== null || t.attempts === 0) return {};
  return { logPath, logFile: `${runId}/${t.key}.log`, workerId, ...workerFields(workerId), tail: t.tail, tailAttempt: t.tailAttempt ?? t.attempts, ...tailLog(runId, t, logPath, local) };
}

/**
 * A worker's host and process id, for a program (the id, `ci-7-4121-a3f9c2`, is read from its end:
 * a host name holds `-` too); null where no worker, or an id taskq did not make.
 */
export function workerFields(workerId: string | null): { workerHost: string | null; workerPid: number | null } {
  const worker = workerId === null ? undefined : workerHostAndPid(workerId);
  return { workerHost: worker?.host ?? null, workerPid: worker?.pid ?? null };
}

/** The tasks running now, longest running first (the likeliest to be stuck). */
function runningLines(status: RunStatus): NonNullable<RunSummary["running"]> {
  return status.tasks
    .filter((t) => t.state === "running")
    .map((t) => ({
      id: t.key,
      attempt: t.attempts,
      maxAttempts: t.maxAttempts,
      workerId: t.workerId,
      ...workerFields(t.workerId),
      runningMs: t.runningMs ?? 0,
      ...(t.cancelRequested === true ? { cancelRequested: true as const } : {}),
      ...(t.runStopped === true ? { runStopped: true as const } : {}),
      ...(t.leaseExpiredMs === undefined ? {} : { leaseExpiredMs: t.leaseExpiredMs }),
      ...(t.workerWaitingMs === undefined ? {} : { workerWaitingMs: t.workerWaitingMs }),
      ...(t.liveTail === undefined ? {} : { lastLines: t.liveTail }),
    }))
    .sort((a, b) => b.runningMs - a.runningMs);
}

/** The tasks waiting for their retry, soonest due first: why a run sits there, which its counts alone did not say. */
function retryingLines(status: RunStatus): { retrying?: NonNullable<RunSummary["retrying"]> } {
  const retrying = status.tasks
    .filter((t) => t.retryInMs !== undefined)
    .map((t) => ({ id: t.key, attempt: t.attempts + 1, maxAttempts: t.maxAttempts, inMs: t.retryInMs!, error: describeRow(t) }))
    .sort((a, b) => a.inMs - b.inMs);
  return retrying.length === 0 ? {} : { retrying };
}

/** The tasks waiting for their `delay` or `runAt`, soonest due first: counted as scheduled, and when each runs. */
function scheduledLines(status: RunStatus): { scheduled?: NonNullable<RunSummary["scheduled"]> } {
  const scheduled = status.tasks
    .filter((t) => t.dueInMs !== undefined && t.dueAt !== undefined)
    .map((t) => ({ id: t.key, inMs: t.dueInMs!, runAt: t.dueAt!.getTime() }))
    .sort((a, b) => a.inMs - b.inMs);
  return scheduled.length === 0 ? {} : { scheduled };
}

/** The store's counts as a summary's: its queued tasks as SCHEDULED (waiting for their not-before) and READY. */
function summaryCounts(status: RunStatus): RunSummary["counts"] {
  return {
    BLOCKED: status.counts.blocked,
    SCHEDULED: status.scheduled,
    READY: status.counts.queued - status.scheduled,
    RUNNING: status.counts.running,
    SUCCEEDED: status.counts.succeeded,
    FAILED: status.counts.failed,
    CANCELLED: status.counts.cancelled,
  };
}

/** This process's folder of the run's logs, saying so when other workers ran some of its tasks. */
function localLogDir(status: RunStatus, local: LocalLogs): string {
  const helped = status.tasks.some((t) => t.workerId !== null && t.workerId !== local.workerId);
  return helped ? `${local.logDir} (here; on the other workers that ran its tasks, their <log-dir>/${status.runId})` : local.logDir;
}

function describeRow(row: Pick<TaskStatusRow, "lastError" | "exitCode" | "state">): string {
  return row.lastError ?? (row.exitCode !== null ? `exited with code ${row.exitCode}` : row.state);
}

/** "2 succeeded, 0 failed, 0 cancelled, 4 unfinished (1 blocked, 2 scheduled, 1 ready)": the words of the summary's line. */
function countsLine(status: RunStatus): string {
  const counts = summaryCounts(status);
  const unfinished = unfinishedCount(counts);
  const done = `${counts.SUCCEEDED} succeeded, ${counts.FAILED} failed, ${counts.CANCELLED} cancelled`;
  return unfinished === 0 ? done : `${done}, ${unfinished} unfinished (${unfinishedParts(counts)})`;
}

function hostFlag(host: string, port: unknown): string {
  if (port === undefined) throw new UsageError("--metrics-host needs --metrics-port");
  if (host.trim() === "") throw new UsageError("--metrics-host: an empty address");
  // `[::1]`, as a URL writes an IPv6 address: the address is what is inside (listen() would look the brackets up as a name).
  const bracketed = /^\[([0-9A-Fa-f:.]*:[0-9A-Fa-f:.%\w]*)\]$/.exec(host);
  return bracketed === null ? host : bracketed[1]!;
}

function portFlag(value: unknown): number {
  // Digits only, as every integer flag: Number("") is 0, and an unset $PORT would silently pick a random port.
  return wholeNumberFlag("--metrics-port", value, { min: 0, max: 65535, expected: "a port number from 0 to 65535", aside: "0 picks a free one" });
}
