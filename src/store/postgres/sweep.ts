import type pg from "pg";
import { finalizeTask } from "./finalize.js";
import { notifyWorkers } from "./graph.js";
import type { SchemaNames } from "./names.js";

interface ExpiredRow {
  id: string;
  run_id: string;
  key: string;
  attempts: number;
  max_attempts: number;
  cancel_requested: boolean;
  worker_id: string | null;
}

/**
 * Recovers running tasks whose lease expired (their worker died or stalled):
 * requeued at once with the attempt already counted, failed when attempts are
 * exhausted, cancelled when a cancel was pending. SKIP LOCKED lets several
 * workers sweep at once without waiting on each other. Returns the count; the
 * caller settles the runs' states after commit.
 */
export async function sweepExpiredLeases(
  client: pg.ClientBase,
  names: SchemaNames,
  limit = 100,
): Promise<number> {
  const expired = await client.query<ExpiredRow>(
    `SELECT id, run_id, key, attempts, max_attempts, cancel_requested, worker_id
       FROM ${names.tasks}
      WHERE state = 'running' AND lease_expires_at < now()
      ORDER BY lease_expires_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  const requeued = new Set<string>();
  for (const row of expired.rows) {
    const reason = `lease expired (worker ${row.worker_id ?? "unknown"}, attempt ${row.attempts})`;
    // How the swept attempt ended is unknown: none of the previous attempt's exit code, signal or output is its.
    const attempt = { lastError: reason, exitCode: null, signal: null, timedOut: false, tail: [] };
    if (row.cancel_requested) {
      await finalizeTask(client, names, row, "cancelled", { attempt, cancelReason: "cancelled by request" });
    } else if (row.attempts >= row.max_attempts) {
      await finalizeTask(client, names, row, "failed", { attempt });
    } else {
      await client.query(
        `UPDATE ${names.tasks}
            SET state = 'queued', not_before = now(), queued_at = now(), lease_token = NULL, lease_expires_at = NULL,
                worker_id = NULL, last_error = $2, exit_code = NULL, signal = NULL, timed_out = false, tail = '{}'
          WHERE id = $1`,
        [row.id, reason],
      );
      requeued.add(row.run_id);
    }
  }
  for (const runId of requeued) await notifyWorkers(client, names, runId);
  return expired.rows.length;
}
