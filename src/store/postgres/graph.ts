import type pg from "pg";
import type { SchemaNames } from "./names.js";

/**
 * Dependency-graph updates shared by submit, complete, sweep, cancel and
 * redrive. Each runs inside the caller's transaction. (Unblocking dependents
 * on success lives in the `complete_success` SQL function.)
 */

/** Why a dependent was cancelled, naming the task that did not succeed. */
export function dependencyReason(key: string, state: "failed" | "cancelled"): string {
  return `dependency "${key}" ${state === "failed" ? "failed" : "was cancelled"}`;
}

/**
 * Cancels every blocked or queued transitive dependent of `key`, recording
 * `cause` (default `key`: the task that failed or was cancelled at the root of
 * the cascade, which redrive looks for) and `reason`. Returns the cancelled keys.
 */
export async function cancelDependents(
  client: pg.ClientBase,
  names: SchemaNames,
  runId: string,
  key: string,
  reason: string,
  cause: string = key,
): Promise<string[]> {
  const result = await client.query<{ key: string }>(
    `WITH RECURSIVE dependents(key) AS (
       SELECT task_key FROM ${names.deps} WHERE run_id = $1 AND depends_on_key = $2
       UNION
       SELECT d.task_key FROM ${names.deps} d JOIN dependents p ON d.run_id = $1 AND d.depends_on_key = p.key
     )
     UPDATE ${names.tasks} t
        SET state = 'cancelled', cancel_reason = $3, cancelled_by = $4, finished_at = now(), waiting_on = 0
      WHERE t.run_id = $1 AND t.key IN (SELECT key FROM dependents) AND t.state IN ('blocked', 'queued')
      RETURNING t.key`,
    [runId, key, reason, cause],
  );
  return result.rows.map((row) => row.key);
}

/**
 * Records the run's final state once none of its tasks is active. It runs
 * after the transaction that ended a task has committed, on its own: of two
 * transactions ending a run's last tasks at once, each may see the other's
 * task as still running, but the refresh of whichever committed last sees
 * both. (Idempotent; submit and redrive set a run back to 'running' themselves.)
 */
export async function refreshRunState(db: pg.Pool | pg.ClientBase, names: SchemaNames, runId: string): Promise<void> {
  await db.query(
    `UPDATE ${names.runs} r
        SET state = s.state, finished_at = now()
       FROM (SELECT CASE WHEN bool_or(state = 'failed') THEN 'failed'
                         WHEN bool_or(state = 'cancelled') THEN 'cancelled'
                         ELSE 'succeeded' END AS state
               FROM ${names.tasks} WHERE run_id = $1) s
      WHERE r.id = $1 AND r.state = 'running'
        AND NOT EXISTS (SELECT 1 FROM ${names.tasks} WHERE run_id = $1 AND state IN ('blocked','queued','running'))`,
    [runId],
  );
}

/** Settles every running run that has no active task left (a backstop the sweeper runs). */
export async function settleRuns(db: pg.Pool | pg.ClientBase, names: SchemaNames): Promise<number> {
  const result = await db.query(
    `UPDATE ${names.runs} r
        SET state = s.state, finished_at = now()
       FROM (SELECT t.run_id,
                    CASE WHEN bool_or(t.state = 'failed') THEN 'failed'
                         WHEN bool_or(t.state = 'cancelled') THEN 'cancelled'
                         ELSE 'succeeded' END AS state
               FROM ${names.tasks} t JOIN ${names.runs} rr ON rr.id = t.run_id AND rr.state = 'running'
              GROUP BY t.run_id
             HAVING NOT bool_or(t.state IN ('blocked', 'queued', 'running'))) s
      WHERE r.id = s.run_id AND r.state = 'running'`,
  );
  return result.rowCount ?? 0;
}

/** Wakes idle workers once the transaction commits (NOTIFY is transactional). */
export async function notifyWorkers(client: pg.ClientBase, names: SchemaNames, payload = ""): Promise<void> {
  await client.query("SELECT pg_notify($1, $2)", [names.channel, payload]);
}
