import type pg from "pg";
import type { SchemaNames } from "./names.js";
import { timedQuery } from "./timeouts.js";
import type { LeasedTask, LeaseRenewal } from "./types.js";

/** A row of `lease_tasks_v7` (and the leased rows of `complete_and_lease_v7`). */
export interface LeasedRow {
  id: string;
  run_id: string;
  key: string;
  type: string;
  run: string;
  env: Record<string, string>;
  cwd: string;
  priority: number;
  seq: string;
  attempts: number;
  max_attempts: number;
  /** bigint (migration 6), which pg returns as text. */
  timeout_ms: string | null;
  lease_token: string;
  queue_wait_ms: number;
  retry_on: number[];
}

/**
 * Leases up to `limit` runnable tasks in (priority desc, seq) order: of every
 * run, or of run `runId` only. SKIP LOCKED lets concurrent workers take
 * disjoint rows without waiting on each other; every time comes from the
 * database clock.
 */
export async function leaseTasks(
  pool: pg.Pool,
  names: SchemaNames,
  workerId: string,
  limit: number,
  leaseMs: number,
  runId?: string,
): Promise<LeasedTask[]> {
  if (limit <= 0) return [];
  // Named: prepared once per connection. The functions are migration 7's (with retry_on; see leased-retry-on.ts).
  const result = await pool.query<LeasedRow>(
    runId === undefined
      ? { name: names.statement("lease"), text: `SELECT * FROM ${names.quoted}.lease_tasks_v7($1, $2, $3)`, values: [workerId, limit, leaseMs] }
      : {
          name: names.statement("lease_run"),
          text: `SELECT * FROM ${names.quoted}.lease_tasks_v7($1, $2, $3, $4::text)`,
          values: [workerId, limit, leaseMs, runId],
        },
  );
  return toLeasedTasks(result.rows);
}

/** Leased rows as tasks, in lease order (the UPDATE's RETURNING does not keep it). */
export function toLeasedTasks(rows: LeasedRow[]): LeasedTask[] {
  return rows
    .sort((a, b) => b.priority - a.priority || Number(BigInt(a.seq) - BigInt(b.seq)))
    .map((row) => ({
      taskId: row.id,
      runId: row.run_id,
      key: row.key,
      type: row.type,
      run: row.run,
      env: row.env,
      cwd: row.cwd,
      priority: row.priority,
      attempt: row.attempts,
      maxAttempts: row.max_attempts,
      timeoutMs: row.timeout_ms === null ? null : Number(row.timeout_ms),
      retryOn: row.retry_on,
      leaseToken: row.lease_token,
      queueWaitMs: Math.max(row.queue_wait_ms, 0),
    }));
}

/**
 * Extends a lease if the token still owns a running task. A cancel request is
 * reported as such (the lease is still extended, so the worker can finish
 * killing the attempt and complete it as cancelled).
 *
 * The row is found by its id or its token, through their unique indexes, whatever the statistics
 * say: the state is tested with IS NOT DISTINCT FROM (the same, as state is never null), from which
 * PostgreSQL infers no partial index. With `state = 'running'`, and statistics taken before any task
 * of the run was leased (autovacuum off, or a run a minute old), it read the partial index of running
 * tasks (tasks_lease_expiry) whole, thinking it empty: every running task, for each heartbeat.
 */
export async function renewLease(
  db: pg.Pool | pg.ClientBase,
  names: SchemaNames,
  taskId: string,
  token: string,
  leaseMs: number,
  timeoutMs?: number,
  tail?: string[],
  skipLocked = false,
): Promise<LeaseRenewal> {
  // With the attempt's last lines when they changed since the last renewal (see liveTailSql). Skipping a row that
  // is locked: the renewal of an attempt whose end is being recorded, which must not wait on its own record's lock.
  const query = skipLocked
    ? {
        name: names.statement("heartbeat_skip_locked"),
        text: `UPDATE ${names.tasks} SET lease_expires_at = now() + $3 * interval '1 millisecond'
                WHERE id = (SELECT id FROM ${names.tasks} WHERE id = $1 AND lease_token = $2 AND state IS NOT DISTINCT FROM 'running' FOR UPDATE SKIP LOCKED)
                RETURNING cancel_requested, cancel_kind`,
        values: [taskId, token, leaseMs],
      }
    : tail === undefined
      ? {
          name: names.statement("heartbeat"),
          text: `UPDATE ${names.tasks} SET lease_expires_at = now() + $3 * interval '1 millisecond'
                  WHERE id = $1 AND lease_token = $2 AND state IS NOT DISTINCT FROM 'running'
                  RETURNING cancel_requested, cancel_kind`,
          values: [taskId, token, leaseMs],
        }
      : {
          name: names.statement("heartbeat_tail"),
          text: `UPDATE ${names.tasks} SET lease_expires_at = now() + $3 * interval '1 millisecond', live_tail = $4, live_tail_token = lease_token
                  WHERE id = $1 AND lease_token = $2 AND state IS NOT DISTINCT FROM 'running'
                  RETURNING cancel_requested, cancel_kind`,
          values: [taskId, token, leaseMs, tail],
        };
  const result = await db.query<{ cancel_requested: boolean; cancel_kind: "shutdown" | null }>(timeoutMs === undefined ? query : timedQuery(query, timeoutMs));
  const row = result.rows[0];
  if (row === undefined) return { status: "lost" };
  if (!row.cancel_requested) return { status: "renewed" };
  // Whose cancel it is: a stopped run's is recorded as its shutdown's (see runningCancel), and the attempt is aborted in those words.
  return { status: "cancel-requested", cancelKind: row.cancel_kind === "shutdown" ? "shutdown" : "request" };
}

/**
 * Milliseconds until the earliest queued task becomes runnable (0 if one is
 * already), or null when nothing is queued. Measured on the database clock.
 * Scans the queued rows; workers ask only when they found nothing to lease.
 */
export async function nextRunnableDelay(pool: pg.Pool, names: SchemaNames): Promise<number | null> {
  const result = await pool.query<{ delay_ms: number | null }>(
    `SELECT (extract(epoch FROM min(not_before) - now()) * 1000)::float8 AS delay_ms
       FROM ${names.tasks} WHERE state = 'queued'`,
  );
  const delay = result.rows[0]?.delay_ms ?? null;
  return delay === null ? null : Math.max(Math.ceil(delay), 0);
}

/**
 * Milliseconds until the earliest lease of a running task runs out (0 or less if one has), of any
 * worker, or null when nothing runs. Measured on the database clock. One look at the index of running
 * tasks' expiries: a sweeper asks often, to learn of leases shorter than its own (see the worker's sweep loop).
 */
export async function nextLeaseExpiry(
  query: (config: pg.QueryConfig) => Promise<pg.QueryResult<{ delay_ms: number | null }>>,
  names: SchemaNames,
): Promise<number | null> {
  const result = await query({
    name: names.statement("next_lease_expiry"),
    text: `SELECT (extract(epoch FROM min(lease_expires_at) - now()) * 1000)::float8 AS delay_ms
             FROM ${names.tasks} WHERE state = 'running'`,
  });
  const delay = result.rows[0]?.delay_ms ?? null;
  return delay === null ? null : Math.ceil(delay);
}
