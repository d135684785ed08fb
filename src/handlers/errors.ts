import { constants } from "node:os";
import { formatMs, TaskCancelledError } from "../engine/errors.js";
import { TaskqError } from "../errors.js";
import type { AttemptResult, ShellTask } from "./types.js";

/** Exit codes a retry cannot fix, as the shell sets them. */
const PERMANENT_EXIT_CODES = new Map([
  [126, "the shell's code for not executable"],
  [127, "the shell's code for command not found"],
]);

/**
 * Whether and how taskq SIGKILLed an attempt's processes, as its shell ended: `byTaskq`, it sent the
 * group SIGKILL (a failure then gives no hint of the out-of-memory killer); `graceMs`, the kill grace
 * the SIGKILL came after (something ignored SIGTERM); `othersKilled`, where the task's own process
 * (its shell, or the command that shell became) stopped on the SIGTERM, how many processes it started
 * the SIGKILL found after the grace (they, not it, ignored SIGTERM); `atOnce`, taskq SIGKILLed them
 * with no grace, by the reap's end (a second Ctrl-C, a lost lease). `endedFirst`, with a kill grace of 0, where
 * the task's own process ended (its SIGTERM trap exited, or the SIGTERM killed it) before the SIGKILL that came right
 * after its SIGTERM: how it ended, which that SIGKILL did not change.
 */
export interface TaskqKill {
  byTaskq?: boolean;
  graceMs?: number | undefined;
  othersKilled?: number | undefined;
  atOnce?: boolean;
  endedFirst?: ShellEnd | undefined;
}

/** How a task's own process ended: its exit code, or the signal that ended it. */
export interface ShellEnd {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A shutdown signal came while an attempt got ready (its log opened): its command was never spawned. The
 * queue had started the task; a summary tells it from one the shutdown cut short while it ran. Its words
 * are not those of a task the queue never started ("shutdown: not started"): its `started` line or
 * record is out already, and its attempt counted.
 */
export class NotSpawnedError extends TaskCancelledError {
  constructor() {
    super("shutdown", NOT_SPAWNED);
  }
}

/**
 * A durable worker's task that the orphan guard froze because the worker was stopped (SIGSTOP) as the task's lease was
 * about to run out, and that was killed as the lease ran out (by the guard, or by the worker woken too late, see
 * guardLease): the abort reason the shell handler gives its end, with the code of a lost lease.
 */
export class LeaseLapsedError extends TaskqError {
  constructor() {
    super("LEASE_LOST", LEASE_LAPSED);
  }
}

/** Why a worker's task frozen by the orphan guard was killed (see LeaseLapsedError), in its log, its line and its dead letter. */
export const LEASE_LAPSED =
  "its lease was about to run out while the worker was stopped (SIGSTOP), so taskq's orphan guard froze the task (SIGSTOP), and it was killed as the lease ran out, never running beside another worker's attempt";

/** The words of a task whose command a shutdown signal kept from spawning, its attempt begun: a local run's and `run --store`'s. */
export const NOT_SPAWNED = "shutdown: stopped before its command started";

/** An attempt that did not succeed; `result` says how it ended. */
export class TaskFailedError extends TaskqError {
  readonly result: AttemptResult;
  /** True when retrying cannot help; the engine does not retry it. */
  readonly permanent: boolean;
  /**
   * The kill grace, where stopping the attempt came to taskq's SIGKILL after it (something ignored SIGTERM):
   * a stopped attempt's cancel, worded by the queue, says so from here, as a timeout's words say it.
   */
  declare readonly killGraceMs?: number;
  /** With killGraceMs, where the task's own process stopped on the SIGTERM: how many it started were SIGKILLed after the grace (see TaskqKill). */
  declare readonly killedOthers?: number;
  /** With a killGraceMs of 0, how the task's own process ended where that came before the SIGKILL (see TaskqKill's endedFirst). */
  declare readonly killEndedFirst?: ShellEnd;
  /** Set where taskq's SIGKILL ended the attempt with no grace (a second Ctrl-C): its cancel says so from here too. */
  declare readonly killedAtOnce?: true;
  /**
   * Set where the command ended on its own, neither stopped nor timed out: a hard stop (a second Ctrl-C, --fail-fast) whose
   * abort came after it had exited records it as the failure it was, with its exit code (see the engine's endedBeforeStop).
   */
  declare readonly endedBeforeStop?: true;

  constructor(message: string, result: AttemptResult, options: { permanent: boolean; cause?: unknown; killGraceMs?: number | undefined; killedOthers?: number | undefined; killEndedFirst?: ShellEnd | undefined; killedAtOnce?: boolean }) {
    super("TASK_FAILED", message, { cause: options.cause });
    this.result = result;
    this.permanent = options.permanent;
    if (options.killGraceMs !== undefined) this.killGraceMs = options.killGraceMs;
    if (options.killGraceMs !== undefined && options.killedOthers !== undefined && options.killedOthers > 0) this.killedOthers = options.killedOthers;
    if (options.killGraceMs !== undefined && options.killEndedFirst !== undefined) this.killEndedFirst = options.killEndedFirst;
    if (options.killedAtOnce === true) this.killedAtOnce = true;
    if (!result.cancelled && !result.timedOut) this.endedBeforeStop = true;
  }

  /** Words the failure and decides whether it is permanent, from the result (and how taskq SIGKILLed it, if it did: see describeFailure). */
  static fromResult(task: ShellTask, result: AttemptResult, cause?: unknown, kill: TaskqKill = {}): TaskFailedError {
    return new TaskFailedError(describeFailure(task, result, kill), result, {
      permanent: isPermanentFailure(task, result),
      cause,
      killGraceMs: kill.graceMs,
      killedOthers: kill.othersKilled,
      killEndedFirst: kill.endedFirst,
      killedAtOnce: kill.graceMs === undefined && kill.atOnce === true,
    });
  }
}

/** The log file could not be created or written (folder unwritable, disk full). */
export class LogWriteError extends TaskqError {
  /** How the attempt ended, when the command had started. */
  readonly result: AttemptResult | undefined;
  /** True when retrying must not happen (the command ran to its end); the engine does not retry it. */
  readonly permanent: boolean;

  /** `detail` says what became of the command, when it had started. */
  constructor(logPath: string, cause: unknown, result?: AttemptResult, options: { detail?: string; permanent?: boolean } = {}) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super("LOG_WRITE", `cannot write log file ${logPath}: ${reason}${options.detail === undefined ? "" : ` (${options.detail})`}`, { cause });
    this.result = result;
    this.permanent = options.permanent ?? false;
  }
}

/**
 * How an attempt that did not succeed ended, in words: "timed out after 1s", "exited with code 3".
 * A SIGKILL taskq did not send (`kill.byTaskq` false) says who likely did: on CI, the out-of-memory killer.
 * A timeout stopped by taskq's SIGKILL says how it came (see sigkillWords): the time it took past its
 * limit is otherwise unexplained.
 */
export function describeFailure(task: ShellTask, result: AttemptResult, kill: TaskqKill = {}): string {
  if (result.timedOut) {
    // The timeout as set, exactly (formatMs): formatDuration rounds what taskq measures ("1h1m" for a timeout of 1h30s).
    const timedOut = task.timeoutMs === undefined ? "timed out" : `timed out after ${formatMs(task.timeoutMs)}`;
    return withSigkillWords(timedOut, kill);
  }
  if (result.cancelled) return "cancelled";
  const how = result.signal !== null ? `killed by ${result.signal}` : `exited with code ${String(result.exitCode)}`;
  // Why no retry follows, where retries may be set: the task's attempts left unused would puzzle.
  const why = whyNotRetried(task, result);
  const notes = [kill.byTaskq === true ? undefined : sigkillHint(result), shellSignalHint(result), why].filter((note) => note !== undefined);
  return notes.length === 0 ? how : `${how} (${notes.join("; ")})`;
}

/** `words`, with how taskq's SIGKILL ended the attempt where it did: "aborted by shutdown; killed with SIGKILL at once, not after the kill grace". */
export function withSigkillWords(words: string, kill: TaskqKill): string {
  const how = sigkillWords(kill);
  return how === undefined ? words : `${words}; ${how}`;
}

/** How taskq's SIGKILL ended the attempt, in words; undefined where it did not. */
export function sigkillWords(kill: TaskqKill): string | undefined {
  if (kill.graceMs !== undefined) return killedAfterGraceWords(kill.graceMs, kill.othersKilled, kill.endedFirst);
  return kill.atOnce === true ? KILLED_AT_ONCE_WORDS : undefined;
}

/**
 * How taskq's SIGKILL ended the attempt a handler's error tells of (a TaskFailedError's killGraceMs,
 * killedOthers, killEndedFirst and killedAtOnce); none where it tells nothing, or reading it throws (a Proxy of a handler's).
 */
export function killOf(error: unknown): TaskqKill {
  try {
    const failure = error as { killGraceMs?: unknown; killedOthers?: unknown; killEndedFirst?: ShellEnd; killedAtOnce?: unknown } | null | undefined;
    const graceMs = failure?.killGraceMs;
    if (typeof graceMs !== "number") return { atOnce: failure?.killedAtOnce === true };
    const othersKilled = failure?.killedOthers;
    // With no grace, how the task's own process ended where the SIGTERM ended it before the SIGKILL, as the handler found it (see endedFirstOf).
    const endedFirst = graceMs <= 0 ? failure?.killEndedFirst : undefined;
    return { graceMs, ...(typeof othersKilled === "number" ? { othersKilled } : {}), ...(endedFirst === undefined ? {} : { endedFirst }) };
  } catch {
    return {};
  }
}

/**
 * What a stop that came to taskq's SIGKILL after the kill grace adds to how the attempt ended. Where the
 * task's shell (or the command it became) stopped on the SIGTERM and `othersKilled` processes it started
 * did not (a background job, a child that ignores SIGTERM), those are counted: "it did not stop" sent the
 * user to a script whose own handling of SIGTERM worked. (dash, Debian's sh, does not exec a `-c` command's
 * last one: a command that ignores SIGTERM is such a process, beside the shell that ran it.)
 */
export function killedAfterGraceWords(killGraceMs: number, othersKilled = 0, endedFirst?: ShellEnd): string {
  if (killGraceMs <= 0) {
    // With no grace (--kill-grace 0) the SIGKILL came with the SIGTERM: whether it would have ended, nothing tells...
    if (endedFirst === undefined) return "killed with SIGKILL right after its SIGTERM (the kill grace is 0)";
    // ...unless it ended before that SIGKILL reached it (a SIGTERM trap that exits, a shell the SIGTERM kills): said as it
    // ended, as its exit code and signal say it (JSON: `exitCode` 0 beside "killed with SIGKILL" was a contradiction).
    const how = endedFirst.signal === null ? `its shell exited with code ${String(endedFirst.exitCode)} on its SIGTERM` : `its shell was killed by ${endedFirst.signal}`;
    if (othersKilled <= 0) return `${how}, before the SIGKILL sent right after it (the kill grace is 0)`;
    return `${how}; the SIGKILL sent right after its SIGTERM (the kill grace is 0) killed ${othersKilled === 1 ? "1 process" : `${othersKilled} processes`} it started`;
  }
  const who = othersKilled <= 0 ? "it did not stop on SIGTERM" : `${othersKilled === 1 ? "1 process" : `${othersKilled} processes`} it started did not stop on SIGTERM (its shell did)`;
  return `killed with SIGKILL after the kill grace (${formatMs(killGraceMs)}): ${who}`;
}

/**
 * With a kill grace of 0, how the task's own process ended where the SIGKILL did not end it: an exit code, or another
 * signal (the SIGTERM). Undefined where the SIGKILL ended it, or its end is not known.
 */
export function endedFirstOf(end: ShellEnd): ShellEnd | undefined {
  if (end.signal === "SIGKILL" || (end.exitCode === null && end.signal === null)) return undefined;
  return { exitCode: end.exitCode, signal: end.signal };
}

/** What a stop by taskq's SIGKILL with no grace (a second Ctrl-C, a lost lease) adds to how the attempt ended. */
export const KILLED_AT_ONCE_WORDS = "killed with SIGKILL at once, not after the kill grace";

/** 137 and SIGKILL give no reason by themselves: most often, the out-of-memory killer's. */
function sigkillHint(result: AttemptResult): string | undefined {
  if (result.signal === "SIGKILL") return "not by taskq: perhaps the out-of-memory killer";
  if (result.signal === null && result.exitCode === 137) return "128 + SIGKILL: killed, not by taskq: perhaps the out-of-memory killer";
  return undefined;
}

/**
 * Exit codes a shell gives for a child a signal ended, 128 + its number, and what that signal most often
 * means: a crash of the program it ran ("exited with code 139" alone sent users to their own scripts). The
 * words say how a shell reports it, not that a signal came: a script may have run `exit 139` itself.
 * 137 (SIGKILL) has its own words (sigkillHint); a task a signal ended directly says so ("killed by SIGSEGV").
 */
const SHELL_SIGNAL_CODES = new Map<number, string>([
  [128 + 4, "128 + SIGILL: a crash, as a shell reports a child killed by an illegal instruction"],
  [128 + 6, "128 + SIGABRT: a crash, as a shell reports a child that aborted, on a failed assertion say"],
  [128 + 7, "128 + SIGBUS: a crash, as a shell reports a child killed by a bus error"],
  [128 + 8, "128 + SIGFPE: a crash, as a shell reports a child killed by an arithmetic error, a division by zero say"],
  [128 + 11, "128 + SIGSEGV: a crash, as a shell reports a child killed by a segmentation fault"],
  [128 + 1, "128 + SIGHUP, as a shell reports a child killed by that signal: its terminal hung up"],
  [128 + 2, "128 + SIGINT, as a shell reports a child killed by that signal: an interrupt, as Ctrl-C sends"],
  [128 + 13, "128 + SIGPIPE, as a shell reports a child killed by that signal: it wrote to a pipe whose reader had gone"],
  [128 + 15, "128 + SIGTERM, as a shell reports a child killed by that signal: asked to stop, not by taskq"],
]);

/** What an exit code of 128 + a common signal's number most often means (see SHELL_SIGNAL_CODES); none for others. */
function shellSignalHint(result: AttemptResult): string | undefined {
  if (result.signal !== null || result.exitCode === null) return undefined;
  return SHELL_SIGNAL_CODES.get(result.exitCode);
}

function isPermanentFailure(task: ShellTask, result: AttemptResult): boolean {
  // The engine never retries a cancel; a timeout is worth another attempt.
  if (result.cancelled) return true;
  if (result.timedOut) return false;
  return whyNotRetried(task, result) !== undefined;
}

/** Why an attempt that ended by itself (not timed out, not cancelled) is not retried, in words; undefined when it may be. */
function whyNotRetried(task: ShellTask, result: AttemptResult): string | undefined {
  const code = shellExitCode(result);
  const meaning = code === null ? undefined : PERMANENT_EXIT_CODES.get(code);
  if (meaning !== undefined) return `never retried: ${meaning}`;
  if (task.retryOn === undefined) return undefined;
  if (code === null) return "no exit code to match retryOn: not retried";
  return task.retryOn.includes(code) ? undefined : `${code} is not in retryOn: not retried`;
}

/** A signal death counts as 128 + signal number, as `$?` shows it in a shell. */
function shellExitCode(result: AttemptResult): number | null {
  if (result.exitCode !== null) return result.exitCode;
  if (result.signal === null) return null;
  return 128 + (signalNumber(result.signal) ?? 0);
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  return (constants.signals as Record<string, number | undefined>)[signal];
}
