import { isPermanent, messageOf } from "../errors.js";
import type { Backoff } from "./backoff.js";
import { HandlerError, TaskCancelledError } from "./errors.js";
import type { QueueEventMap, QueueEvents } from "./events.js";
import type { RecordAttemptContext, TaskRecord } from "./task-record.js";
import type { TaskResult } from "./types.js";

/** The error an attempt failed with; a bare abort becomes the abort's reason (e.g. the timeout). */
export function normalizeError(error: unknown, context: RecordAttemptContext): unknown {
  if (context.abortReason !== undefined && nameOf(error) === "AbortError") return context.abortReason;
  if (error instanceof Error || (typeof error === "object" && error !== null)) return error;
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
 * usable delay), cancel
 * (shutting down without drain: no retry may start), or retry after the backoff's delay.
 */
export function afterFailure(record: TaskRecord, attempt: number, error: unknown, draining: boolean, backoff: Backoff): AfterFailure {
  if (record.attempts >= record.maxAttempts || isPermanent(error)) return { next: "fail" };
  if (!draining) {
    return { next: "cancel", error: new TaskCancelledError("shutdown", `retry not started: shutting down (last error: ${messageOf(error)})`) };
  }
  try {
    const raw: unknown = (record.backoff ?? backoff)(attempt);
    // A delay that is not a number (a string would be appended to the clock, a bigint would
    // throw) or is Infinity: the retry would never come, and a drain would wait for it
    // forever. The policy is broken, as when it throws.
    if (typeof raw !== "number" || raw === Infinity) return { next: "fail" };
    // NaN would poison the delayed heap's order; treat it, and negatives, as "now".
    return { next: "retry", delayMs: raw > 0 ? raw : 0 };
  } catch {
    // A broken backoff policy must not crash the queue: the task fails with its own error.
    return { next: "fail" };
  }
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
  const verb = tasks.get(cause)?.status === "FAILED" ? "failed" : "was cancelled";
  const via = cause === dependency.id ? "" : ` (via "${dependency.id}")`;
  return new TaskCancelledError("dependency", `dependency "${cause}" ${verb}${via}`, cause);
}

/** Resolves with the record's result once settleWaiters runs for it; rejects if `signal` aborts first. */
export function waitForRecord(record: TaskRecord, signal: AbortSignal | undefined): Promise<TaskResult> {
  return new Promise<TaskResult>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      record.waiters = record.waiters?.filter((w) => w !== waiter);
      reject(signal!.reason as Error);
    };
    const waiter = {
      resolve: (result: TaskResult) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(result);
      },
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    (record.waiters ??= []).push(waiter);
  });
}

/** Resolves everyone waiting on a record that has just reached its terminal status. */
export function settleWaiters(record: TaskRecord): void {
  const waiters = record.waiters;
  if (waiters === undefined) return;
  record.waiters = undefined;
  const result = record.result();
  for (const waiter of waiters) waiter.resolve(result);
}
