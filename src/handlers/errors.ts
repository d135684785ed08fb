import { constants } from "node:os";
import { TaskqError } from "../errors.js";
import { formatDuration } from "./format-duration.js";
import type { AttemptResult, ShellTask } from "./types.js";

/** Exit codes a retry cannot fix, as the shell sets them. */
const PERMANENT_EXIT_CODES = new Map([
  [126, "the shell's code for not executable"],
  [127, "the shell's code for command not found"],
]);

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

  constructor(message: string, result: AttemptResult, options: { permanent: boolean; cause?: unknown; killGraceMs?: number | undefined }) {
    super("TASK_FAILED", message, { cause: options.cause });
    this.result = result;
    this.permanent = options.permanent;
    if (options.killGraceMs !== undefined) this.killGraceMs = options.killGraceMs;
  }

  /** Words the failure and decides whether it is permanent, from the result (and whether taskq sent a SIGKILL: see describeFailure). */
  static fromResult(task: ShellTask, result: AttemptResult, cause?: unknown, killedByTaskq = false, killGraceMs?: number): TaskFailedError {
    return new TaskFailedError(describeFailure(task, result, killedByTaskq, killGraceMs), result, {
      permanent: isPermanentFailure(task, result),
      cause,
      killGraceMs,
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
 * A SIGKILL taskq did not send (`killedByTaskq` false) says who likely did: on CI, the out-of-memory killer.
 * `killGraceMs` is set when stopping the attempt took taskq's SIGKILL after that kill grace (something
 * ignored SIGTERM): a timeout says so, as the time it took past its limit is otherwise unexplained.
 */
export function describeFailure(task: ShellTask, result: AttemptResult, killedByTaskq = false, killGraceMs?: number): string {
  if (result.timedOut) {
    const timedOut = task.timeoutMs === undefined ? "timed out" : `timed out after ${formatDuration(task.timeoutMs)}`;
    return killGraceMs === undefined ? timedOut : `${timedOut}; ${killedAfterGraceWords(killGraceMs)}`;
  }
  if (result.cancelled) return "cancelled";
  const how = result.signal !== null ? `killed by ${result.signal}` : `exited with code ${String(result.exitCode)}`;
  // Why no retry follows, where retries may be set: the task's attempts left unused would puzzle.
  const why = whyNotRetried(task, result);
  const notes = [killedByTaskq ? undefined : sigkillHint(result), why].filter((note) => note !== undefined);
  return notes.length === 0 ? how : `${how} (${notes.join("; ")})`;
}

/** What a stop that came to taskq's SIGKILL after the kill grace adds to how the attempt ended. */
export function killedAfterGraceWords(killGraceMs: number): string {
  return `killed with SIGKILL after the kill grace (${formatDuration(killGraceMs)}): it ignored SIGTERM`;
}

/** 137 and SIGKILL give no reason by themselves: most often, the out-of-memory killer's. */
function sigkillHint(result: AttemptResult): string | undefined {
  if (result.signal === "SIGKILL") return "not by taskq: perhaps the out-of-memory killer";
  if (result.signal === null && result.exitCode === 137) return "128 + SIGKILL: killed, not by taskq: perhaps the out-of-memory killer";
  return undefined;
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
