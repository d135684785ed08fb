import { HandlerError, TaskCancelledError } from "./errors.js";
import type { RecordAttemptContext, TaskRecord } from "./task-record.js";
import type { TaskResult } from "./types.js";

/** The error an attempt failed with; a bare abort becomes the abort's reason (e.g. the timeout). */
export function normalizeError(error: unknown, context: RecordAttemptContext): unknown {
  if (context.abortReason !== undefined && (error as { name?: unknown } | null)?.name === "AbortError") {
    return context.abortReason;
  }
  if (error instanceof Error || (typeof error === "object" && error !== null)) return error;
  return new HandlerError(error);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Why `record` is cancelled when `dependency` did not succeed. The message names the
 * task that started the cascade, and says which dependency passed it on.
 */
export function dependencyCancelled(dependency: TaskRecord, tasks: ReadonlyMap<string, TaskRecord>): TaskCancelledError {
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
