import type pg from "pg";
import { cancelWaitingOfStoppedRun } from "./cancel.js";
import { finalizeTask } from "./finalize.js";
import { notifyWorkers } from "./graph.js";
import type { SchemaNames } from "./names.js";
import { SET_FAILED_WORKER_SQL } from "./failed-worker.js";
import { runningCancel } from "./shutdown-cancel.js";
import { setTailSql } from "./tail-attempt.js";

interface ExpiredRow {
  id: string;
  run_id: string;
  key: string;
  attempts: number;
  max_attempts: number;
  cancel_requested: boolean;
  cancel_kind: "shutdown" | null;
  worker_id: string | null;
  /** The attempt's last lines as its heartbeats stored them; null when none did (see liveTailSql). */
  live_tail: string[] | null;
}

/** How many expired leases a sweep takes at a time. */
export const SWEEP_BATCH = 100;

/** A task a sweep took from a worker whose lease on it expired, and what became of it. */
export interface SweptTask {
  runId: string;
  key: string;
  /** The attempt that was lost, and the task's attempts in all. */
  attempt: number;
  maxAttempts: number;
  /** The worker that held the lease (null when unknown). */
  workerId: string | null;
  /** Queued again (an attempt left), failed (none left) or cancelled (a cancel was asked for, or its run was stopped: `runStopped`). */
  state: "queued" | "failed" | "cancelled";
  /** Cancelled because `run --store` stopped its run (marked at the signal), not on a request. */
  runStopped?: true;
  /** The attempt's error as recorded: "lease expired (worker W, attempt N)". */
  error: string;
}

/**
 * Recovers running tasks whose lease expired (their worker died or stalled):
 * requeued at once with the attempt already counted, failed when attempts are
 * exhausted, cancelled when a cancel was pending. The attempt's last lines are
 * those its worker's last heartbeat stored, if any. SKIP LOCKED lets several
 * workers sweep at once without waiting on each other. Returns the tasks swept, in
 * lease expiry order; the caller settles the runs' states after commit.
 */
export async function sweepExpiredLeases(
  client: pg.ClientBase,
  names: SchemaNames,
  limit = SWEEP_BATCH,
): Promise<SweptTask[]> {
  const expired = await client.query<ExpiredRow>(
    `SELECT id, run_id, key, attempts, max_attempts, cancel_requested, cancel_kind, worker_id,
            CASE WHEN live_tail_token = lease_token THEN live_tail END AS live_tail
       FROM ${names.tasks}
      WHERE state = 'running' AND lease_expires_at < now()
      ORDER BY lease_expires_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  const requeued = new Set<string>();
  const swept: SweptTask[] = [];
  for (const row of expired.rows) {
    const reason = `lease expired (worker ${row.worker_id ?? "unknown"}, attempt ${row.attempts})`;
    // How the swept attempt ended is unknown: none of the previous attempt's exit code, signal or output is its.
    // What it printed up to its worker's last heartbeat is.
    const tail = row.live_tail ?? [];
    const attempt = { lastError: reason, exitCode: null, signal: null, timedOut: false, tail };
    // One of a stopped run (marked at its signal): cancelled as its shutdown, not run again.
    const cancelled = row.cancel_requested || row.cancel_kind === "shutdown";
    const state = cancelled ? "cancelled" : row.attempts >= row.max_attempts ? "failed" : "queued";
    const runStopped = row.cancel_kind === "shutdown" && !row.cancel_requested ? { runStopped: true as const } : {};
    swept.push({ runId: row.run_id, key: row.key, attempt: row.attempts, maxAttempts: row.max_attempts, workerId: row.worker_id, state, error: reason, ...runStopped });
    if (cancelled) {
      // Marked by a stop (no cancel asked for since): what waits is the stop's too. One asked to stop is a cancel's alone.
      if (!row.cancel_requested) await cancelWaitingOfStoppedRun(client, names, row.run_id);
      await finalizeTask(client, names, row, "cancelled", { attempt, ...runningCancel(row) });
    } else if (row.attempts >= row.max_attempts) {
      await finalizeTask(client, names, row, "failed", { attempt });
    } else {
      // Runnable again since its lease ran out, not since this sweep: its queue wait (the lease's
      // taskq_queue_wait_seconds) counts from then. That time is past, so it may be leased at once.
      await client.query(
        `UPDATE ${names.tasks}
            SET state = 'queued', not_before = lease_expires_at, queued_at = lease_expires_at, lease_token = NULL, lease_expires_at = NULL,
                ${SET_FAILED_WORKER_SQL}, worker_id = NULL, last_error = $2, exit_code = NULL, signal = NULL, timed_out = false, ${setTailSql("$3::text[]")}
          WHERE id = $1`,
        [row.id, reason, tail],
      );
      requeued.add(row.run_id);
    }
  }
  for (const runId of requeued) await notifyWorkers(client, names, runId);
  return swept;
}
