import { accessSync, constants, statSync } from "node:fs";
import { resolve } from "node:path";
import type { DataPath, SourceLocator } from "./locator.js";
import { formatMs } from "../engine/errors.js";
import { MAX_DURATION_MS } from "./limits.js";
import { SHARED_NAMED, sharedBy, type ProblemList } from "./problem-list.js";
import { quote } from "./report-issues.js";
import { backslashBeforeFold, joinedCommands, keptLineInFold } from "./folded-run.js";
import { actionsExpressionEnvNote, actionsExpressionNote, bashismIn, bashismNote, commandNameNoBreakSpace, cutByCommentNote, pipefailNote, pipefailSet, selfReferenceNote, shebangNote, unclosedQuoteNote } from "./shell-traps.js";
import { shellRefusing } from "./host-shell.js";
import { PRIORITIES, type TaskDefaults, type TaskFile } from "./schema.js";

/** A task ready for the engine: defaults applied, durations in ms, paths absolute. */
export interface WorkflowTask {
  id: string;
  type: string;
  run: string;
  priority: (typeof PRIORITIES)[number];
  retries: number;
  retryOn?: number[];
  backoff: { baseMs: number; maxMs: number };
  timeoutMs?: number;
  /** Epoch ms before which the task does not start, from `runAt`. */
  runAt?: number;
  /**
   * From `delay`: how long after the run starts the task may start. Counted from the
   * moment the run starts (tasks submitted), not from when the file was read: reading
   * a large file must not eat into the delays. Never set together with runAt.
   */
  delayMs?: number;
  /** Workflow env merged with task env (the task wins); a null-prototype object. */
  env: Record<string, string>;
  /** Absolute working directory. */
  cwd: string;
  dependsOn: string[];
}

/** A validated workflow: tasks in topological order, plus notes worth showing the user. */
export interface Workflow {
  file: string;
  /** Where a task's relative `cwd` starts, and a task without one runs: the file's folder (the current one for a pipe). */
  folder: string;
  name?: string;
  concurrency?: number;
  /** `failFast: true` (or false): whether `taskq run` stops at the first task that fails for good, where no flag says. */
  failFast?: boolean;
  tasks: WorkflowTask[];
  notes: string[];
  /** The notes about some of the file's tasks, not about it as a whole: a run of some tasks says those of them alone (see select-tasks.ts). */
  taskNotes?: TaskNote[];
}

/** A note of a workflow's `notes` about some of its tasks (a runAt past, a `cwd` not there): which, to say it of some of them. */
export interface TaskNote {
  /** Its place in `notes`. */
  index: number;
  /** The tasks it is about, in the file's order. */
  tasks: string[];
  /** Where it is written, `ci.yaml:4:12`. */
  at: string;
  /** Whose it is where that is not its tasks': `defaults`, whose value they take. */
  owner?: string;
  text: string;
}

/** Default backoff when neither the task nor `defaults` sets it. */
export const DEFAULT_BACKOFF = { baseMs: 1000, maxMs: 30_000 } as const;

interface BuildContext {
  file: string;
  now: number;
  /** Where a relative `cwd` starts. */
  folder: string;
  env: Record<string, string>;
  defaults: TaskDefaults;
  locator: SourceLocator;
  problems: ProblemList;
  /** The notes, by the offset each is at: one per place written and wording (see addNote). */
  notes: Map<number, PlacedNote[]>;
  /**
   * What every task without an `env` or `cwd` of its own shares: one env object and one cwd
   * string for all of them, made by the first. Read-only from here on (the shell handler
   * copies env into each spawn's own). A 10k-task run kept 10,000 of each: 1.6 MB of empty
   * dictionaries and 0.2 MB of one path, every one of them copied by every fork.
   */
  shared?: { env: Record<string, string>; cwd: string };
  /**
   * Set to look at each `cwd` written in the file (see noteMissingCwd): what is wrong with
   * each folder looked at, by absolute path (undefined: a folder), so each is looked at once.
   */
  cwdProblems?: Map<string, CwdProblem | undefined>;
  /** Set to ask this machine's /bin/sh whether it takes a `set -o pipefail` or a bash-only construct a run has (see notePipefail, noteBashism). */
  checkShell?: boolean;
}

/** Builds one engine-ready task; `dependsOn` is already deduplicated and checked. */
export function buildTask(id: string, task: TaskFile, dependsOn: string[], context: BuildContext): WorkflowTask {
  const { defaults } = context;
  const own = (key: keyof TaskDefaults) => task[key] !== undefined;
  const shared = (context.shared ??= {
    env: Object.assign(Object.create(null) as Record<string, string>, context.env, defaults.env),
    cwd: resolve(context.folder, defaults.cwd ?? "."),
  });
  const env = task.env === undefined ? shared.env : Object.assign(Object.create(null) as Record<string, string>, context.env, defaults.env, task.env);
  const built: WorkflowTask = {
    id,
    type: task.type ?? defaults.type ?? "shell",
    run: task.run,
    priority: task.priority ?? defaults.priority ?? "normal",
    retries: task.retries ?? defaults.retries ?? 0,
    backoff: backoffOf(id, task, context),
    env,
    cwd: task.cwd === undefined ? shared.cwd : resolve(context.folder, task.cwd),
    dependsOn,
  };
  noteRunTraps(id, task.run, context);
  if (task.env !== undefined) noteEnvVariables(task.env, ["tasks", id, "env"], { task: id }, context);
  noteUnexpandedCwd(id, task, built.cwd, context);
  // A task that depends on others may well use a folder one of them makes (a build's output): no note for it.
  if (context.cwdProblems !== undefined && dependsOn.length === 0) noteMissingCwd(id, task, built.cwd, context);
  // A task's own `retryOn: any` and `timeout: none` (null here) undo those of `defaults`.
  const retryOn = own("retryOn") ? task.retryOn : defaults.retryOn;
  if (retryOn !== undefined && retryOn !== null) {
    built.retryOn = [...new Set(retryOn)];
    const path = own("retryOn") ? ["tasks", id, "retryOn"] : ["defaults", "retryOn"];
    if (retryOn.includes(126) || retryOn.includes(127)) noteNeverRetried(id, retryOn, path, context);
    // `retryOn: [3, 3]`, as a repeated dependency: likely a slip for another code, noted where it is repeated.
    retryOn.forEach((code, index) => {
      if (retryOn.indexOf(code) < index) noteAt(id, [...path, index], `retryOn lists ${code} more than once; it counts once`, context);
    });
  }
  if (task.retries === undefined && defaults.retries === undefined) noteNothingToRetry(id, task, context);
  const timeoutMs = own("timeout") ? task.timeout : defaults.timeout;
  if (timeoutMs !== undefined && timeoutMs !== null) built.timeoutMs = timeoutMs;
  // A task's own runAt or delay replaces either one from defaults.
  const schedule = own("runAt") || own("delay") ? { from: ["tasks", id], runAt: task.runAt, delay: task.delay } : { from: ["defaults"], runAt: defaults.runAt, delay: defaults.delay };
  if (schedule.delay !== undefined) built.delayMs = schedule.delay;
  if (schedule.runAt !== undefined) {
    built.runAt = Date.parse(schedule.runAt);
    if (built.runAt < context.now) notePast(id, schedule.runAt, [...schedule.from, "runAt"], dependsOn.length > 0, context);
    else if (built.runAt - context.now > MAX_DURATION_MS) refuseFarRunAt(schedule.runAt, built.runAt - context.now, [...schedule.from, "runAt"], context);
  }
  return built;
}

/**
 * The task's backoff, each bound from the task, else `defaults`, else DEFAULT_BACKOFF. A
 * `base` over the default `max` raises the max to it (`base: 1m` alone means a minute, not a
 * 30 s cap), and a `max` under the default `base` lowers the base to it (`max: 100ms` alone
 * caps every delay at 100 ms); a `max` under a `base` written in the file is a problem, here
 * where one is the task's and the other from `defaults` (the schema finds it where both are
 * set together).
 */
function backoffOf(id: string, task: TaskFile, context: BuildContext): WorkflowTask["backoff"] {
  const { defaults } = context;
  const base = task.backoff?.base ?? defaults.backoff?.base;
  const max = task.backoff?.max ?? defaults.backoff?.max;
  const baseMs = base ?? (max === undefined ? DEFAULT_BACKOFF.baseMs : Math.min(max, DEFAULT_BACKOFF.baseMs));
  if (max === undefined) return { baseMs, maxMs: Math.max(baseMs, DEFAULT_BACKOFF.maxMs) };
  // Both from the task, or both from defaults, the schema has checked already; so one is the task's own.
  if (max < baseMs) {
    // With both values, each read as a duration (`max: 90` against `base: 2m`: 1m30s against 2m).
    const message =
      task.backoff?.max !== undefined
        ? `\`backoff.max\` must not be shorter than \`defaults.backoff.base\` (${formatMs(baseMs)}), got ${formatMs(max)}`
        : `\`backoff.base\` must not be longer than \`defaults.backoff.max\` (${formatMs(max)}), got ${formatMs(baseMs)}`;
    const field = task.backoff?.max !== undefined ? "max" : "base";
    context.problems.atOffset(context.locator.offsetOf(["tasks", id, "backoff", field]), `task ${quote(id)}: ${message}`);
  }
  return { baseMs, maxMs: max };
}

/**
 * A `cwd` that is not a folder now, or that this user cannot reach or enter, of a task that depends on no other, gets a
 * note, not an error: no task is sure to make it first, so it will fail to start unless something else makes it in time
 * (one that depends on others is not noted: a build step's output folder is the common case). Where it is written, once:
 * the task's own, or `defaults.cwd`.
 */
function noteMissingCwd(id: string, task: TaskFile, cwd: string, context: BuildContext): void {
  const written = task.cwd ?? context.defaults.cwd;
  // The file's own folder (or, read from a pipe, the current one) is there.
  if (written === undefined || context.cwdProblems === undefined) return;
  let problem = context.cwdProblems.get(cwd);
  if (!context.cwdProblems.has(cwd)) {
    problem = cwdProblem(cwd);
    context.cwdProblems.set(cwd, problem);
  }
  if (problem === undefined) return;
  const missing = problem.kind === "missing";
  const unless = UNLESS[problem.kind];
  const consequence =
    task.cwd !== undefined
      ? `${missing ? "no task it depends on could make it first: " : ""}${problem.kind === "shut" ? "run as this user, the task" : "the task"} fails to start ${unless}`
      : `the tasks that use it and depend on no other task fail to start${problem.kind === "shut" ? " as this user" : ""} ${missing ? "unless something makes that folder before then" : unless}`;
  noteAt(id, task.cwd !== undefined ? ["tasks", id, "cwd"] : ["defaults", "cwd"], `cwd ${JSON.stringify(written)} (${cwd}) ${problem.text} now: ${consequence}`, context);
}

/**
 * What would let a task start in a cwd of each kind of problem: a folder made (missing); one in place of a file where the
 * folder is or on its path (file), or of something else (taken): no folder something is yet to make; its permissions, or a
 * parent's, for this user (shut: a worker that runs it as another user may enter it); the path itself mended (broken: a
 * loop of symbolic links, a name too long).
 */
const UNLESS: Record<CwdProblem["kind"], string> = {
  missing: "unless something else makes that folder before then",
  file: "unless a folder takes the file's place before then",
  taken: "unless a folder takes its place before then",
  shut: "unless its permissions (or a parent folder's) change before then",
  broken: "unless the cwd is mended",
};

/** Why a task could not start in its cwd now (see cwdProblem): its words, and their kind. */
interface CwdProblem {
  text: string;
  kind: "missing" | "file" | "taken" | "shut" | "broken";
}

/**
 * A `cwd` that starts with `~` or names a variable (`$HOME/app`, `${DIR}`) is a path as written,
 * relative to the file's folder: no shell expands it, as none expands env values. Said for
 * every task, whatever it depends on (no task would make a folder named `~`), where it is written.
 */
function noteUnexpandedCwd(id: string, task: TaskFile, folder: string, context: BuildContext): void {
  const written = task.cwd ?? context.defaults.cwd;
  if (written === undefined || !(written.startsWith("~") || /\$(?:[A-Za-z_]|\{)/.test(written))) return;
  const command = `cd ${written.startsWith("~") ? written : JSON.stringify(written)} && ...`;
  const text = `cwd ${JSON.stringify(written)} is taken as written, not expanded as a shell would expand ~ and $VARIABLES: it names the folder ${folder}; write the folder's path, or change to it in the run (run: ${command})`;
  noteAt(id, task.cwd !== undefined ? ["tasks", id, "cwd"] : ["defaults", "cwd"], text, context);
}

/**
 * What keeps `folder` from being a task's working directory now, if anything: for a loop of links, a name too long and a
 * folder above shut, in the words the task's failure would give (see the shell handler's explainSpawnError), "by this
 * user" added where permissions are why; a folder inside a file, which the failure tells as not there, as that.
 */
function cwdProblem(folder: string): CwdProblem | undefined {
  try {
    const info = statSync(folder);
    if (!info.isDirectory()) return info.isFile() ? { text: "is a file, not a folder", kind: "file" } : { text: "is not a folder", kind: "taken" };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { text: "does not exist", kind: "missing" };
    if (code === "ENOTDIR") return { text: "is inside a file, not a folder", kind: "file" };
    if (code === "EACCES") return { text: "cannot be reached by this user: permission denied on a folder above it (EACCES)", kind: "shut" };
    if (code === "ELOOP") return { text: "cannot be reached: its symbolic links form a loop (ELOOP)", kind: "broken" };
    if (code === "ENAMETOOLONG") return { text: "is too long a path (ENAMETOOLONG)", kind: "broken" };
    return { text: `cannot be looked at (${code ?? String(error)})`, kind: "broken" };
  }
  // A folder this user may not search (mode 700 of another user's) is there, and a task's start fails in it all the same.
  try {
    accessSync(folder, constants.X_OK);
  } catch (error) {
    return { text: `cannot be entered by this user: permission denied (${(error as NodeJS.ErrnoException).code ?? String(error)})`, kind: "shut" };
  }
  return undefined;
}

/**
 * A past runAt waits for nothing: the task starts at once, or, when it depends on others, once
 * they are done (not "now": a deploy after its tests would seem to skip them).
 */
function notePast(id: string, runAt: string, path: string[], hasDependencies: boolean, context: BuildContext): void {
  const when =
    path[0] === "defaults" ? "the tasks that take it run now, or once their dependencies are done" : hasDependencies ? "the task runs once its dependencies are done" : "the task runs now";
  noteAt(id, path, `runAt ${runAt} is in the past; ${when}`, context);
}

/**
 * A runAt more than 30 days ahead (delay's limit too) is almost always a slip, a wrong year
 * most often, and a local run would sit waiting for it: refused where it is written, with how
 * far ahead it is.
 */
function refuseFarRunAt(runAt: string, aheadMs: number, path: string[], context: BuildContext): void {
  const field = path[0] === "defaults" ? "`defaults.runAt`" : `task ${quote(path[1]!)}: \`runAt\``;
  const message = `${field} ${runAt} is ${daysAhead(aheadMs)} from now, past the limit of ${MAX_DURATION_MS / DAY_MS} days ahead (delay has the same limit): check the date, the year most of all`;
  context.problems.atOffset(context.locator.offsetOf(path), message);
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/**
 * `45 days 6 hours`, `over 30 days` (30 days and under half an hour), `396 days` (past 100 days, to the
 * day): to the nearest hour, carried, as every duration taskq measures is rounded (formatDuration). A
 * runAt written 31 days ahead and checked seconds later is 31 days ahead, not "30 days 23 hours".
 */
function daysAhead(ms: number): string {
  if (ms >= 99.5 * DAY_MS) return `${Math.round(ms / DAY_MS).toLocaleString("en-US")} days`;
  const allHours = Math.round(ms / HOUR_MS);
  // Rounded down to the limit itself, which is taken: "over" it.
  if (allHours * HOUR_MS <= MAX_DURATION_MS) return `over ${MAX_DURATION_MS / DAY_MS} days`;
  const days = Math.floor(allHours / 24);
  const hours = allHours - days * 24;
  return hours === 0 ? `${days} days` : `${days} days ${hours} hour${hours === 1 ? "" : "s"}`;
}

/**
 * What the shell would make of a `run` other than what its line in the file seems to say (see
 * shell-traps.ts and folded-run.ts), said at it; a backslash YAML's folding turns into an escaped
 * space is a problem: the command is wrong.
 */
function noteRunTraps(id: string, run: string, context: BuildContext): void {
  const folded = context.locator.foldedSourceOf(["tasks", id, "run"]);
  if (folded !== undefined) {
    const backslash = backslashBeforeFold(folded);
    if (backslash !== undefined) context.problems.atOffset(backslash.offset, `task ${quote(id)}: ${backslash.message}`);
    const joined = backslash === undefined ? (joinedCommands(folded) ?? keptLineInFold(folded)) : undefined;
    if (joined !== undefined) noteAt(id, ["tasks", id, "run"], joined.note, context, joined.offset);
  }
  const cut = cutByCommentNote(run);
  // Only a run whose quotes are left open needs the position (every run of a large file has none).
  const cutByComment = cut !== undefined && context.locator.endsAtComment(["tasks", id, "run"]);
  if (cutByComment) noteAt(id, ["tasks", id, "run"], cut, context);
  // A quote left open in the command as written, not by a comment that cut it.
  const open = cutByComment ? undefined : unclosedQuoteNote(run);
  if (open !== undefined) noteAt(id, ["tasks", id, "run"], open, context);
  const shebang = shebangNote(run);
  if (shebang !== undefined) noteAt(id, ["tasks", id, "run"], shebang, context);
  else if (context.checkShell === true && !notePipefail(id, run, context)) noteBashism(id, run, context);
  const expression = actionsExpressionNote(run);
  if (expression !== undefined) noteAt(id, ["tasks", id, "run"], expression, context);
  if (run.includes("\u00a0")) noteNoBreakSpace(id, run, context);
}

/**
 * `set -euo pipefail` in a run, where this machine's /bin/sh refuses it (dash): the task would exit 2 at
 * that line once it starts, though the file validated. Said at the run (a `#!/bin/bash` first line
 * has its own note, which says why).
 */
function notePipefail(id: string, run: string, context: BuildContext): boolean {
  const set = pipefailSet(run);
  if (set === undefined) return false;
  const shell = shellRefusing("pipefail");
  if (shell !== undefined) noteAt(id, ["tasks", id, "run"], pipefailNote(set, run.includes("\n"), shell), context);
  return shell !== undefined;
}

/**
 * bash's `[[ ... ]]`, `source`, `function name {`, an array or a here-string (`<<<`) in a run, where this machine's /bin/sh refuses it
 * (dash): the first one, with its line and what to write instead. /bin/sh is asked (once) only for a run that has
 * one; none after a pipefail note, which says already that the run is bash's.
 */
function noteBashism(id: string, run: string, context: BuildContext): void {
  const found = bashismIn(run);
  if (found === undefined) return;
  const shell = shellRefusing(found.kind);
  if (shell !== undefined) noteAt(id, ["tasks", id, "run"], bashismNote(found, run.includes("\n"), shell), context);
}

/**
 * `run: make\u00a0&&\u00a0make test`, `run: npm\u00a0test` (pasted from a web page or a chat):
 * the shell reads a no-break space as part of a word, so it looks for a command named `make\u00a0`
 * or `npm\u00a0test` and fails with 127. A note, at the first one in a command's name (see
 * commandNameNoBreakSpace: one in an argument, `echo 5\u00a0€`, or in quotes, is meant, or gives no
 * 127), where the value is written as a plain one on one line (else at the value), naming the
 * text before it.
 */
function noteNoBreakSpace(id: string, run: string, context: BuildContext): void {
  const path = ["tasks", id, "run"];
  const index = commandNameNoBreakSpace(run);
  if (index === undefined) return;
  const source = context.locator.plainSourceOf(path);
  const offset = context.locator.offsetOf(path) + (source !== undefined && source.slice(0, index + 1) === run.slice(0, index + 1) ? index : 0);
  const before = run.slice(Math.max(0, run.lastIndexOf("\n", index) + 1, index - 20), index);
  const line = run.includes("\n") ? ` (its line ${run.slice(0, index).split("\n").length})` : "";
  const where = `${before.trim() === "" ? "" : ` after ${quote(before)}`}${line}`;
  noteAt(id, path, `run holds a no-break space (U+00A0)${where}, in a command's name: the shell reads it as part of the name, not as a space between words, and finds no such command (exit 127); replace it with a space`, context, offset);
}

/** `retryOn: [127]`: 126 and 127 (not executable, not found) are never retried, listed or not; say so rather than ignore it. */
function noteNeverRetried(id: string, retryOn: number[], path: string[], context: BuildContext): void {
  const listed = [126, 127].filter((code) => retryOn.includes(code)).join(" and ");
  noteAt(id, path, `retryOn lists ${listed}: exit codes 126 and 127 (not executable, not found) are never retried`, context);
}

/**
 * `retryOn: [75]` or a `backoff` on a task with no `retries`, its own or in `defaults`: it makes one attempt, so they
 * would do nothing without a word (as GitLab CI's `retry: when:` needs its `max`): say so, and what to add.
 */
function noteNothingToRetry(id: string, task: TaskFile, context: BuildContext): void {
  for (const key of ["retryOn", "backoff"] as const) {
    // `retryOn: any` undoes a list of defaults': nothing to add for it.
    if (task[key] === undefined || task[key] === null) continue;
    noteAt(id, ["tasks", id, key], `${key} does nothing without retries (which default to 0): the task makes one attempt, never retried; add retries: N for up to N more attempts`, context);
  }
}

/**
 * `defaults: { retryOn: [75] }` or a `backoff` there, where neither `defaults` nor any task that takes it sets `retries`:
 * every task that takes it makes one attempt, so it does nothing, as a task's own would (see noteNothingToRetry). Said
 * once, where it is written, of the tasks that take it (a task's own `retryOn`, `any` too, replaces defaults'; its own
 * `backoff` with both bounds, defaults' whole); nothing where one of them sets `retries`: the value is then one for tasks
 * that retry (`retryOn` as a filter of theirs), which others take with no effect, as meant; nor where no task takes it.
 *
 * Decided from the tasks as written, before any is built, its place asked for once: on the fast reader's path asking throws
 * for positions (see buildFromSimple), which must come before the tasks are built, not after building them all, to be built
 * again. Returns what adds the notes, to be called once every task is built: they follow those building adds at the same
 * place (`retryOn lists 127`), as they did.
 */
export function noteDefaultsNothingToRetry(tasks: ReadonlyArray<{ id: string; task: TaskFile }>, context: BuildContext): () => void {
  const { defaults } = context;
  if (defaults.retries !== undefined) return () => {};
  const adds: Array<() => void> = [];
  const takes = {
    retryOn: (task: TaskFile) => task.retryOn === undefined,
    // A bound of defaults' that the task does not set itself (a task's own `backoff: { max: 5s }` takes no `max: 1m` of defaults).
    backoff: (task: TaskFile) => (task.backoff?.base === undefined && defaults.backoff?.base !== undefined) || (task.backoff?.max === undefined && defaults.backoff?.max !== undefined),
  };
  for (const key of ["retryOn", "backoff"] as const) {
    // `retryOn: any` in defaults, every failure: told of no task, as a task's own is not.
    if (defaults[key] === undefined || defaults[key] === null) continue;
    const takers = tasks.filter(({ task }) => takes[key](task));
    if (takers.length === 0 || takers.some(({ task }) => task.retries !== undefined)) continue;
    const path = ["defaults", key];
    const offset = context.locator.offsetOf(path);
    const text = `${key} does nothing without retries (which default to 0): the tasks that take it make one attempt each, never retried; add retries: N to defaults for up to N more attempts`;
    adds.push(() => {
      for (const { id } of takers) noteAt(id, path, text, context, offset);
    });
  }
  return () => {
    for (const add of adds) add();
  };
}

/** The variables taskq gives each task over every `env` (see shell-handler.ts): what a workflow sets them to, no task sees. */
const TASKQ_VARIABLES = new Map([
  ["TASKQ_RUN_ID", "the run's id"],
  ["TASKQ_TASK_ID", "the task's id"],
  ["TASKQ_ATTEMPT", "the attempt's number"],
  ["TASKQ_PID", "taskq's pid"],
  ["TASKQ_KILL_GRACE_MS", "its kill grace in milliseconds"],
]);

/**
 * `env: { TASKQ_ATTEMPT: "1" }`: taskq sets those variables over the file's, so the value would
 * be ignored without a word (as a retryOn that lists 127 would be): say so where it is written;
 * and a value that names its own variable (see shell-traps.ts). `owner` is what the note is
 * about (`env`, `defaults`, or a task by its id).
 */
export function noteEnvVariables(env: Record<string, string>, path: DataPath, owner: string | { task: string }, context: BuildContext): void {
  for (const name of Object.keys(env)) {
    const value = TASKQ_VARIABLES.get(name);
    const note =
      value !== undefined ? `${name} is set by taskq for each task (to ${value}): the value given here is never seen` : (actionsExpressionEnvNote(name, env[name]!) ?? selfReferenceNote(name, env[name]!));
    if (note === undefined) continue;
    addNote(context, context.locator.offsetOf([...path, name]), owner, note);
  }
}

/** A note at `path` in the file (at `offset` in it, if given), for the task or for `defaults`; one per place written, not one per task sharing it through defaults. */
export function noteAt(id: string, path: DataPath, text: string, context: BuildContext, offset = context.locator.offsetOf(path)): void {
  addNote(context, offset, path[0] === "defaults" ? "defaults" : { task: id }, text, id);
}

/** A note at a place in the file: whose it is (a task's, by its id, or `env`'s, `defaults`'), what it says, and the tasks it is about. */
interface PlacedNote {
  /** `env`, `defaults`; or the task, its id as written, and those sharing the place with it (see addNote). */
  owner: string | { task: string; shared?: Set<string> };
  text: string;
  /**
   * Of a note of `defaults`, the tasks that take the value noted (a runAt past, a `cwd` not there), each once; none for
   * `env`'s and `defaults.env`'s, about every task. A task's note is about its owner's tasks.
   */
  takenBy?: Set<string>;
}

/**
 * Adds a note at `offset`, one per place and wording: a value several tasks share (`env: *e`, `<<: *base`) is
 * noted once, naming the tasks that share it as a problem shared so is (see ProblemList.at):
 * `tasks "a", "b", "c" and 2 more: ...`, not the first task alone. Where the note's words differ between the
 * tasks sharing the place (a shared runAt past, for a task with dependencies and one without), each wording is
 * its own note there, naming the tasks it is for: the first task's words alone were wrong for the others.
 * `about` is the task the note is for, where it is for one.
 */
function addNote(context: BuildContext, offset: number, owner: string | { task: string }, text: string, about?: string): void {
  const atPlace = context.notes.get(offset);
  const placed = atPlace?.find((note) => note.text === text);
  if (placed === undefined) {
    const note: PlacedNote = { owner: typeof owner === "string" ? owner : { task: owner.task }, text };
    if (typeof owner === "string" && about !== undefined) note.takenBy = new Set([about]);
    if (atPlace === undefined) context.notes.set(offset, [note]);
    else atPlace.push(note);
    return;
  }
  // A place noted for `defaults` or `env`: its first note, about each task that took the value too.
  if (typeof placed.owner === "string") {
    if (about !== undefined) (placed.takenBy ??= new Set()).add(about);
    return;
  }
  if (typeof owner === "string" || owner.task === placed.owner.task) return;
  // All of them, the first few in the file's order named when told (see notesOf).
  (placed.owner.shared ??= new Set([placed.owner.task])).add(owner.task);
}

/**
 * The notes as the user reads them, in the file's order: `file:line:col: owner: text`. A note several tasks share
 * names the first few of them in the file's order (`ids`, each task's id in it), as a problem shared so does, not in
 * the order the tasks were built, which is their start order. With them, those about some tasks, to say of some of them.
 */
export function notesOf(context: BuildContext, ids: readonly string[]): { notes: string[]; taskNotes: TaskNote[] } {
  let position: Map<string, number> | undefined;
  const positionOf = (id: string): number => (position ??= new Map(ids.map((each, index) => [each, index]))).get(id)!;
  const inFileOrder = (shared: Set<string>): string[] => (shared.size === 1 ? [...shared] : [...shared].sort((a, b) => positionOf(a) - positionOf(b)));
  // Where one place has notes in other words for other tasks, the one of the task first in the file comes first.
  const firstOf = ({ owner }: PlacedNote): number => (typeof owner === "string" ? -1 : [...(owner.shared ?? [owner.task])].reduce((first, id) => Math.min(first, positionOf(id)), Infinity));
  const notes: string[] = [];
  const taskNotes: TaskNote[] = [];
  const placedInOrder = [...context.notes]
    .sort(([a], [b]) => a - b)
    .flatMap(([offset, placed]) => (placed.length === 1 ? placed : [...placed].sort((a, b) => firstOf(a) - firstOf(b))).map((note) => [offset, note] as const));
  for (const [offset, { owner, text, takenBy }] of placedInOrder) {
    const about = typeof owner === "string" ? takenBy : (owner.shared ?? new Set([owner.task]));
    const note: TaskNote = { index: notes.length, tasks: about === undefined ? [] : inFileOrder(about), at: `${context.file}:${context.problems.lineCol(offset)}`, text };
    if (typeof owner === "string") note.owner = owner;
    notes.push(taskNoteText(note, note.tasks));
    if (note.tasks.length > 0) taskNotes.push(note);
  }
  return { notes, taskNotes };
}

/** A task note as the user reads it, said of `tasks` (some of its own, in the file's order): `ci.yaml:4:12: tasks "a" and "b": ...`. */
export function taskNoteText(note: TaskNote, tasks: readonly string[]): string {
  const whose = note.owner ?? (tasks.length === 1 ? `task ${quote(tasks[0]!)}` : sharedBy(tasks.slice(0, SHARED_NAMED + 1).map(quote), tasks.length));
  return `${note.at}: ${whose}: ${note.text}`;
}

export type { BuildContext };
