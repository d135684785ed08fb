import type { FinalDetails } from "./finalize.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 14: tasks a stopped `run --store` cancelled say so, as a local run's summary says it of the
 * tasks a shutdown ended. `cancel_kind` is 'shutdown' for those (its cancel of what had not ended, and
 * what a worker then records of a running one it was asked to stop), null for a cancel by request or by
 * a dependency (`cancelled_by`). `cancelled_running`: the task's attempt was running when it was
 * cancelled (a running task asked to stop, an attempt the stop gave back), as a local summary's
 * `running: true`.
 */
export function shutdownCancelSql(names: SchemaNames): string {
  return `ALTER TABLE ${names.tasks}
            ADD COLUMN IF NOT EXISTS cancel_kind text CHECK (cancel_kind IN ('shutdown')),
            ADD COLUMN IF NOT EXISTS cancelled_running boolean NOT NULL DEFAULT false;`;
}

/** cancel_reason of a running task's attempt a shutdown stopped (the engine's words for it). */
export const ABORTED_BY_SHUTDOWN = "aborted by shutdown";

/** cancel_reason of a task the shutdown found waiting: not started, or (attempts made) waiting to be retried. */
export function notStartedReason(task: { attempts: number; last_error: string | null }): string {
  const retry = retryWaitedFor(task);
  return `shutdown: ${retry === undefined ? "not started" : notRetriedWords(retry)}`;
}

/**
 * cancel_reason of a task a cancel by request (`taskq cancel`) found waiting: waiting to be retried, its failed
 * attempt's error kept, in the words a stopped run's cancel gives it ("cancelled by request: not retried (attempt 2
 * failed: exited with code 7)"); else "cancelled by request".
 */
export function requestedReason(task: { attempts: number; last_error: string | null }): string {
  const retry = retryWaitedFor(task);
  return retry === undefined ? REQUESTED : `${REQUESTED}: ${notRetriedWords(retry)}`;
}

/** cancel_reason of a task cancelled by request: as it waited to start, or while it ran. */
export const REQUESTED = "cancelled by request";

/**
 * The rule for a waiting task that is waiting for its retry: it has made attempts, and the last one failed (its error kept).
 * That attempt and its error, the retry a cancel takes from it; undefined for a task that was not waiting for one.
 */
export function retryWaitedFor(task: { attempts: number; last_error: string | null }): { attempt: number; error: string } | undefined {
  return task.attempts > 0 && task.last_error !== null ? { attempt: task.attempts, error: task.last_error } : undefined;
}

/** A retry a cancel took, in the words of its reason and of the notes that tell it: "not retried (attempt 2 failed: exited with code 7)". */
export function notRetriedWords({ attempt, error }: { attempt: number; error: string }): string {
  return `not retried (attempt ${attempt} failed: ${error})`;
}

/**
 * How a running task whose cancel was asked for is recorded as it ends: cancelled while running, by
 * request (in `requested`'s words), or, asked by a stopped run, by its shutdown; with how taskq's SIGKILL
 * ended it, where it did (`killed`: "killed with SIGKILL after the kill grace (5s): it did not stop on SIGTERM"),
 * as a local run's cancel says it.
 */
export function runningCancel(row: { cancel_kind: "shutdown" | null }, requested = REQUESTED, killed?: string): FinalDetails {
  return { cancelReason: withKilled(runningCancelReason(row, requested), killed), cancelKind: row.cancel_kind, cancelledRunning: true };
}

/** runningCancel's reason, but for the kill: by request (in `requested`'s words), or, asked by a stopped run, by its shutdown. */
export function runningCancelReason(row: { cancel_kind: "shutdown" | null }, requested = REQUESTED): string {
  return row.cancel_kind === "shutdown" ? ABORTED_BY_SHUTDOWN : requested;
}

/** A cancel's reason, with how taskq's SIGKILL ended the attempt where it did. */
export function withKilled(reason: string, killed: string | undefined): string {
  return killed === undefined ? reason : `${reason}; ${killed}`;
}
