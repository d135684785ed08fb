import { messageOf, shown, TaskqError } from "../errors.js";

/** submit() after shutdown began. */
export class QueueClosedError extends TaskqError {
  constructor() {
    super("QUEUE_CLOSED", "the queue is shutting down and accepts no new tasks");
  }
}

export class UnknownHandlerError extends TaskqError {
  /** `types`, the queue's, are named, so a misspelt type ("ecoh") shows what was meant. */
  /** `inherited`: the type names a method the handlers object inherits (a class's), which is not one of them. */
  constructor(type: string, types?: readonly string[], inherited = false) {
    const known = types === undefined ? "" : types.length === 0 ? ": the queue has no handlers" : `: the types are ${types.join(", ")}`;
    const hint = inherited ? ` (${JSON.stringify(type)} is inherited, not an own property of handlers: pass it as one, bound)` : "";
    super("UNKNOWN_HANDLER", `no handler for task type "${type}"${known}${hint}`);
  }
}

export class UnknownDependencyError extends TaskqError {
  /**
   * `name`: how the task is named (see taskName), for a spec without an id by its type. `forgotAny`: the queue has
   * forgotten a task (Queue.forget), so `dependency` may be one of them; it keeps no ids it forgot, to tell which.
   */
  constructor(id: string, dependency: string, name = `task "${id}"`, forgotAny = false) {
    const what = forgotAny ? "which was not submitted or was forgotten" : "which was not submitted";
    super(
      "UNKNOWN_DEPENDENCY",
      dependency === id && name === `task "${id}"` ? `${name} depends on itself: a task may depend only on tasks already submitted` : `${name} depends on "${dependency}", ${what}`,
    );
  }
}

export class TaskNotFoundError extends TaskqError {
  /** An id that is not a string (from JavaScript) is said to be none, not quoted as the string id of a task that may exist. */
  constructor(id: unknown) {
    super("TASK_NOT_FOUND", typeof id === "string" ? `no task with id "${id}"` : `no task with id ${notAnId(id)}`);
  }
}

function notAnId(id: unknown): string {
  const scalar = typeof id === "number" || typeof id === "bigint" || typeof id === "boolean";
  return scalar ? `${messageOf(id)} (a ${typeof id}): task ids are strings (${JSON.stringify(String(id))})` : `${messageOf(id)}: task ids are strings`;
}

/** signal.reason when an attempt exceeds its timeout. */
export class AttemptTimeoutError extends TaskqError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super("TIMEOUT", `timed out after ${formatMs(timeoutMs)}`);
    this.timeoutMs = timeoutMs;
  }
}

/** signal.reason, and the task's error, when a task is cancelled. */
export class TaskCancelledError extends TaskqError {
  readonly reason: "cancel" | "dependency" | "shutdown";
  readonly dependency: string | undefined;
  /**
   * `cause`: what the attempt it cut short ended with, where one was running and ended (see Queue's hard stop); or, of a
   * task waiting to retry, its failed attempt's error, which the message then quotes ("not retried (attempt 1 failed: ...)").
   */
  constructor(reason: "cancel" | "dependency" | "shutdown", message: string, dependency?: string, options: { cause?: unknown } = {}) {
    super(reason === "shutdown" ? "SHUTDOWN" : "CANCELLED", message, options);
    this.reason = reason;
    this.dependency = dependency;
  }
}

/**
 * Makes an error without capturing its stack: for the errors the queue makes by the thousand (each task
 * a shutdown or a cascade cancels), whose stack would point only into the queue. Capturing it was most
 * of the cost of such a cancel: a shutdown with 100k tasks queued returned 1.6 s after its deadline.
 */
export function withoutStack<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Whether a handler's rejection says that a shutdown stopped its attempt (a shell that died of
 * the signal that stopped the CLI). Never throws: `instanceof` does for a revoked Proxy.
 */
export function isShutdownStop(error: unknown): error is TaskCancelledError {
  try {
    return error instanceof TaskCancelledError && error.reason === "shutdown";
  } catch {
    return false;
  }
}

/**
 * Whether a handler's rejection says that its attempt ended on its own before a hard stop's abort reached it
 * (`endedBeforeStop: true`: a shell that had exited with code 3 as the stop came): a failure, not the stop's to
 * cancel. Never throws: a handler may reject with a Proxy or an object whose getter throws, which is not marked.
 */
export function endedBeforeStop(error: unknown): boolean {
  try {
    return typeof error === "object" && error !== null && (error as { endedBeforeStop?: unknown }).endedBeforeStop === true;
  } catch {
    return false;
  }
}

/** The handler threw something that is not an Error. */
export class HandlerError extends TaskqError {
  constructor(thrown: unknown) {
    super("HANDLER_THREW", `handler threw a non-error value: ${messageOf(thrown)}`, { cause: thrown });
  }
}

/**
 * A duration the user set (--shutdown-timeout, --kill-grace), as formatMs says it, with none as "0s", the
 * way the flags' defaults and the README write durations: "0ms" read as a time measured, not one set.
 */
export function formatSetMs(ms: number): string {
  return ms === 0 ? "0s" : formatMs(ms);
}

/**
 * A duration exactly, as a workflow file or a flag writes it, for the durations a user wrote (a
 * timeout, a delay, a backoff's bounds, the kill grace, --lease): 90 -> "90ms", 1500 -> "1.5s",
 * 512000 -> "8m32s", 5400000 -> "1h30m", 60500 -> "1m0.5s", 3630000 -> "1h30s", 2160000000 -> "25d".
 * Past a minute always in minutes (past an hour in hours, past a day in days), whether or not the
 * seconds are whole, and a rest under a second in seconds ("1m0.5s", not "1m500ms"), so the text
 * can be written back as it reads. Whole ms from a second on; under one to the microsecond
 * ("0.3ms" for 0.1 + 0.2, not "0.30000000000000004ms"). A time taskq measures is said rounded
 * instead, by formatDuration.
 */
export function formatMs(ms: number): string {
  // From JavaScript: undefined read "undefinedms", and "1500" (a string) "1500ms", as if it were 1500 ms.
  if (typeof ms !== "number") throw new TaskqError("INVALID_OPTION", `formatMs takes a number of ms, got ${shown(ms)}`);
  // NaN and Infinity as they are, as formatDuration says them: each unit's rest of them is itself, which recursed until the stack ran out.
  if (!Number.isFinite(ms)) return `${ms}ms`;
  // Less than 0 (a time gone by, a caller's difference of two times) as more than 0, signed: -90000 read "-90000ms" where 90000 reads "1m30s".
  if (ms < 0) {
    const text = formatMs(-ms);
    return text === "0ms" ? text : `-${text}`;
  }
  // To the microsecond under a second; 999.9996 carries into "1s".
  const micro = Math.round(ms * 1000) / 1000;
  if (micro < 1000) return `${micro}ms`;
  // Whole ms first: 3_599_999.5 would be 59 minutes and a rest that shows as "60s".
  ms = Math.round(ms);
  if (ms < 60_000) return seconds(ms);
  const [size, unit] = ms < 3_600_000 ? [60_000, "m"] : ms < 86_400_000 ? [3_600_000, "h"] : [86_400_000, "d"];
  const whole = Math.floor(ms / size);
  const rest = ms - whole * size;
  return `${whole}${unit}${rest === 0 ? "" : rest < 1000 ? seconds(rest) : formatMs(rest)}`;
}

/** Whole `ms` under a minute in seconds, to the ms: "1.5s", "0.5s". */
function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}
