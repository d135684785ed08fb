import { isPermanent, messageOf, shown } from "../errors.js";
import type { Backoff } from "./backoff.js";
import { HandlerError, TaskCancelledError, withoutStack } from "./errors.js";
import type { QueueEventMap, QueueEvents } from "./events.js";
import type { RecordAttemptContext, TaskRecord } from "./task-record.js";
import type { TaskResult } from "./types.js";

/** The error an attempt failed with; a bare abort becomes the abort's reason (e.g. the timeout). */
export function normalizeError(error: unknown, context: RecordAttemptContext): unknown {
  if (context.abortReason !== undefined && nameOf(error) === "AbortError") return context.abortReason;
  // Any object is kept as thrown, an Error or not: no `instanceof`, which reads the prototype
  // and throws for a revoked Proxy or one whose getPrototypeOf trap throws.
  if (typeof error === "object" && error !== null) return error;
  return new HandlerError(error);
}

/** An error's `name`; undefined when reading it throws (a getter or a Proxy of a handler's). */
function nameOf(error: unknown): unknown {
  try {
    return (error as { name?: unknown } | null)?.name;
  } catch {
    return undefined;
  }
}

/** What follows a failed attempt. */
export type AfterFailure = { next: "fail" } | { next: "cancel"; error: TaskCancelledError } | { next: "retry"; delayMs: number };

/**
 * Fail (attempts used up, a permanent error, or a backoff policy that throws or returns no
 * usable delay: not a finite number of ms, 0 or more), cancel
 * (shutting down without drain: no retry may start), or retry after the backoff's delay.
 */
export function afterFailure(record: TaskRecord, attempt: number, error: unknown, draining: boolean, backoff: Backoff, stopWords = "shutdown"): AfterFailure {
  if (record.attempts >= record.maxAttempts || isPermanent(error)) return { next: "fail" };
  if (!draining) {
    // Worded as for a task already waiting for its retry when the shutdown came (`stopWords`: "shutdown", or a stop's own,
    // see QueueShutdown.notRetriedWords), and as `run --store` words both.
    // Its cause the attempt's failure, as for an attempt the shutdown cut short: what it wrote last is where it was (its tail).
    return { next: "cancel", error: new TaskCancelledError("shutdown", `${stopWords}: not retried (attempt ${attempt} failed: ${messageOf(error)})`, undefined, { cause: error }) };
  }
  try {
    const raw: unknown = (record.backoff ?? backoff)(attempt);
    // A delay that is not a number (a string would be appended to the clock, a bigint would
    // throw), Infinity (the retry would never come, and a drain would wait for it forever),
    // or NaN, -Infinity or a negative number (the arithmetic of a policy gone wrong: taken as
    // 0, it retried at once, in silence, as fast as the handler fails). The policy is broken,
    // as when it throws.
    if (typeof raw !== "number" || !Number.isFinite(raw) || raw < 0) {
      warnBackoff(record.id, `returned ${shown(raw)} for retry ${attempt}, not a finite number of ms, 0 or more`);
      return { next: "fail" };
    }
    // -0 is 0: the delayed heap and the retrying event need no sign.
    return { next: "retry", delayMs: raw > 0 ? raw : 0 };
  } catch (thrown) {
    // A broken backoff policy must not crash the queue: the task fails with its own error.
    warnBackoff(record.id, `threw for retry ${attempt} (${messageOf(thrown)})`);
    return { next: "fail" };
  }
}

/**
 * Says why a task with attempts left failed without retrying: its result carries the attempt's
 * own error, which does not tell that the backoff broke (a list of delays run out, say).
 */
function warnBackoff(id: string, what: string): void {
  process.emitWarning(`taskq: task ${JSON.stringify(id)}: its backoff ${what}: the task fails without retrying`, "TaskqBackoffWarning");
}

/** The event for a task that has just reached its terminal status. */
export function emitTerminal(events: QueueEvents, record: TaskRecord): void {
  const { id, attempts } = record;
  if (record.status === "SUCCEEDED") {
    if (events.has("succeeded")) events.emit("succeeded", { id, attempts, value: record.value });
  } else if (record.status === "FAILED") {
    if (events.has("failed")) events.emit("failed", { id, attempts, error: record.error });
  } else if (events.has("cancelled")) {
    const event: QueueEventMap["cancelled"] = { id, attempts, reason: record.cancelReason ?? "cancel", error: record.error };
    if (record.dependency !== undefined) event.dependency = record.dependency;
    events.emit("cancelled", event);
  }
}

/**
 * Why `record` is cancelled when `dependency` did not succeed. The message names the
 * task that started the cascade, and says which dependency passed it on.
 */
export function dependencyCancelled(dependency: TaskRecord, tasks: { get(id: string): TaskRecord | undefined }): TaskCancelledError {
  const cause = dependency.cancelReason === "dependency" ? dependency.dependency! : dependency.id;
  // The dependency is in hand, forgotten or not (by a listener of its own `failed` event, before its dependents are
  // cancelled). A cause passed on is told as the dependency's own error told it (kept in dependencyEnded, set below): looked up
  // by id, it may have been forgotten since, or be another task submitted with its id. It is looked up only where that
  // error does not say (none the queue makes fails to), and one forgotten then did not succeed.
  const verb = cause === dependency.id ? verbOf(dependency.status) : (toldIn(dependency.error, cause) ?? verbOf(tasks.get(cause)?.status));
  const via = cause === dependency.id ? "" : ` (via "${dependency.id}")`;
  const error = withoutStack(() => new TaskCancelledError("dependency", `dependency "${cause}" ${verb}${via}`, cause));
  // Carried, not parsed back out of the message for each task further down: that made a string and a closure per task.
  dependencyEnded.set(error, verb);
  return error;
}

/** How a cancel says its dependency ended. */
type DependencyEnded = "failed" | "was cancelled" | "did not succeed";

/**
 * How the cascade that cancelled a task (see dependencyCancelled) says the task that started it ended, by the error the queue
 * made: kept off the error, where a property (even one declared optional) made a cascade's error no longer deep-equal one a
 * caller constructs with the same reason, message and dependency (`toEqual`, `util.isDeepStrictEqual`).
 */
const dependencyEnded = new WeakMap<TaskCancelledError, DependencyEnded>();

function verbOf(status: TaskRecord["status"] | undefined): DependencyEnded {
  return status === "FAILED" ? "failed" : status === "CANCELLED" ? "was cancelled" : "did not succeed";
}

/** How a dependency's cancel (see dependencyCancelled) said `cause` ended; undefined for an error that is not one. */
function toldIn(error: unknown, cause: string): DependencyEnded | undefined {
  if (!(error instanceof TaskCancelledError) || error.reason !== "dependency" || error.dependency !== cause) return undefined;
  return dependencyEnded.get(error);
}

/** A wait with a signal: its task, and how it ends. */
interface SignalWait {
  readonly record: TaskRecord;
  resolve(result: TaskResult): void;
  readonly reject: (reason: unknown) => void;
}

/**
 * The waits of each signal and the one abort listener they share. One listener per wait made
 * `Promise.all(ids.map((id) => queue.wait(id, { signal })))` print Node's "possible
 * EventTarget memory leak" warning past 10 tasks, and take half a minute for 100k (Node adds
 * a listener in O(listeners)).
 */
const waitsBySignal = new WeakMap<AbortSignal, { waits: Set<SignalWait>; onAbort: () => void }>();

/** Resolves with the record's result once settleWaiters runs for it; rejects if `signal` aborts first. */
export function waitForRecord(record: TaskRecord, signal: AbortSignal | undefined): Promise<TaskResult> {
  return new Promise<TaskResult>((resolve, reject) => {
    // null too: a JavaScript caller's `{ signal: options.signal ?? null }` means none.
    if (signal === undefined || signal === null) {
      (record.waiters ??= []).push({ resolve });
      return;
    }
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    let shared = waitsBySignal.get(signal);
    if (shared === undefined) {
      const waits = new Set<SignalWait>();
      shared = { waits, onAbort: () => abortWaits(signal, waits) };
      waitsBySignal.set(signal, shared);
      signal.addEventListener("abort", shared.onAbort, { once: true });
    }
    const { waits, onAbort } = shared;
    const wait: SignalWait = {
      record,
      resolve: (result) => {
        waits.delete(wait);
        if (waits.size === 0) {
          waitsBySignal.delete(signal);
          signal.removeEventListener("abort", onAbort);
        }
        resolve(result);
      },
      reject,
    };
    waits.add(wait);
    (record.waiters ??= []).push(wait);
  });
}

/** Rejects every wait of an aborted signal; each task's list of waiters is filtered once, however many of them go. */
function abortWaits(signal: AbortSignal, waits: Set<SignalWait>): void {
  waitsBySignal.delete(signal);
  const records = new Set<TaskRecord>();
  for (const wait of waits) records.add(wait.record);
  for (const record of records) record.waiters = record.waiters?.filter((waiter) => !waits.has(waiter as SignalWait));
  for (const wait of waits) wait.reject(signal.reason);
}

/** Resolves everyone waiting on a record that has just reached its terminal status. */
export function settleWaiters(record: TaskRecord): void {
  const waiters = record.waiters;
  if (waiters === undefined) return;
  record.waiters = undefined;
  const result = record.result();
  for (const waiter of waiters) waiter.resolve(result);
}
