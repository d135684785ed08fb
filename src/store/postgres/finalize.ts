import type pg from "pg";
import { cancelDependents } from "./graph.js";
import type { SchemaNames } from "./names.js";
import { setTailSql } from "./tail-attempt.js";

/** Success ends in the `complete_success` SQL function (one round trip); every other end comes here. */
export type UnsuccessfulState = "failed" | "cancelled";

/** How the last attempt ended; absent when the task ends without one (cancelled while queued, swept). */
export interface AttemptRecord {
  lastError?: string | null;
  exitCode?: number | null;
  signal?: string | null;
  timedOut?: boolean;
  tail?: string[];
}

/** What is recorded on a task as it ends. */
export interface FinalDetails {
  attempt?: AttemptRecord;
  /** Replaces last_error even without an attempt record (e.g. "lease expired"). */
  lastError?: string;
  cancelReason?: string | null;
  /** The lease token of the attempt whose completion this is: kept as the task's recorded end (migration 5). */
  endedToken?: string;
  /** A cancel's: 'shutdown' for one a stopped run made (migration 14), and whether the task's attempt was running. */
  cancelKind?: "shutdown" | null;
  cancelledRunning?: boolean;
}

/**
 * The terminal transition to failed or cancelled: records the end state,
 * clears the lease and cancels the dependents transitively. Runs in the
 * caller's transaction, on a row the caller has locked and checked is not
 * terminal yet; the caller refreshes the run's state after committing.
 */
export async function finalizeTask(
  client: pg.ClientBase,
  names: SchemaNames,
  task: { id: string; run_id: string; key: string },
  state: UnsuccessfulState,
  details: FinalDetails = {},
): Promise<{ cascaded: string[] }> {
  await client.query(
    `UPDATE ${names.tasks}
        SET state = $2, finished_at = now(), lease_token = NULL, lease_expires_at = NULL, waiting_on = 0,
            last_error = COALESCE($3, last_error), cancel_reason = $4,
            exit_code = CASE WHEN $5 THEN $6 ELSE exit_code END,
            signal = CASE WHEN $5 THEN $7 ELSE signal END,
            timed_out = CASE WHEN $5 THEN $8 ELSE timed_out END,
            ${setTailSql("$9::text[]", "$5")},
            ended_token = COALESCE($10, ended_token), ended_as = CASE WHEN $10::uuid IS NULL THEN ended_as ELSE $2 END,
            cancel_kind = $11, cancelled_running = $12
      WHERE id = $1`,
    [
      task.id,
      state,
      details.attempt?.lastError ?? details.lastError ?? null,
      details.cancelReason ?? null,
      details.attempt !== undefined,
      details.attempt?.exitCode ?? null,
      details.attempt?.signal ?? null,
      details.attempt?.timedOut ?? false,
      details.attempt?.tail ?? [],
      details.endedToken ?? null,
      details.cancelKind ?? null,
      details.cancelledRunning === true,
    ],
  );
  const cascaded = await cancelDependents(client, names, task.run_id, task.key, state);
  return { cascaded };
}
