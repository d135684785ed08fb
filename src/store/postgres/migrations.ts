import type pg from "pg";
import { TaskqError } from "../../errors.js";
import { bigintDurationsSql } from "./bigint-durations.js";
import { leaseByIdSql, leaseByIdsSql } from "./lease-by-id.js";
import { leasedFreedQuietSql } from "./leased-freed-quiet.js";
import { leasedRetryOnSql } from "./leased-retry-on.js";
import { liveTailSql } from "./live-tail.js";
import { earlierRedriveSql } from "./earlier-redrive.js";
import { failedWorkerSql } from "./failed-worker.js";
import { completeAndLeaseSql, completeSuccessFunction, recordedEndSql, runFilterSql } from "./batch-functions.js";
import { schemaNames, type SchemaNames } from "./names.js";
import { settleIdleSql } from "./settle-idle.js";
import { shortLeaseDelaySql } from "./short-lease-delay.js";
import { shutdownCancelSql } from "./shutdown-cancel.js";
import { tailAttemptSql, tailWorkerSql } from "./tail-attempt.js";
import { taskEndStatementsSql } from "./task-end-statements.js";
import { successClearsErrorSql } from "./success-clears-error.js";
import { taskEndsSql } from "./task-ends.js";
import { LONG_QUERY_TIMEOUT_MS, LONG_STATEMENT_TIMEOUT_SQL, timedQuery } from "./timeouts.js";
import { inTransaction } from "./transaction.js";
import { LOCK_TIMEOUT_SQL, retryLockWaits, toldIfLocked, watchLockWaits } from "./lock-wait.js";
import { uniqueLookupsSql } from "./unique-lookups.js";
import { runIdCaseSql } from "./run-id-case.js";

interface Migration {
  version: number;
  name: string;
  sql: (names: SchemaNames) => string;
}

/** Append-only: never edit a released migration, add the next version instead. */
const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "runs, tasks, task_deps",
    sql: ({ runs, tasks, deps, schema }) => `
      CREATE TABLE ${runs} (
        id text PRIMARY KEY,
        name text,
        file text,
        state text NOT NULL DEFAULT 'running' CHECK (state IN ('running','succeeded','failed','cancelled')),
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      );
      CREATE SEQUENCE ${tasks}_seq;
      CREATE TABLE ${tasks} (
        id bigserial PRIMARY KEY,
        run_id text NOT NULL REFERENCES ${runs}(id) ON DELETE CASCADE,
        key text NOT NULL,
        type text NOT NULL,
        run text NOT NULL,
        env jsonb NOT NULL DEFAULT '{}',
        cwd text NOT NULL DEFAULT '.',
        priority int NOT NULL DEFAULT 1,
        seq bigint NOT NULL DEFAULT nextval('${schema}.tasks_seq'),
        not_before timestamptz NOT NULL DEFAULT now(),
        state text NOT NULL CHECK (state IN ('blocked','queued','running','succeeded','failed','cancelled')),
        attempts int NOT NULL DEFAULT 0,
        max_attempts int NOT NULL DEFAULT 1 CHECK (max_attempts >= 1),
        retry_on int[] NOT NULL DEFAULT '{}',
        backoff_base_ms int NOT NULL DEFAULT 1000,
        backoff_max_ms int NOT NULL DEFAULT 60000,
        timeout_ms int,
        lease_token uuid,
        lease_expires_at timestamptz,
        worker_id text,
        waiting_on int NOT NULL DEFAULT 0,
        last_error text,
        exit_code int,
        signal text,
        timed_out boolean NOT NULL DEFAULT false,
        cancel_reason text,
        cancelled_by text,
        cancel_requested boolean NOT NULL DEFAULT false,
        submitted_at timestamptz NOT NULL DEFAULT now(),
        queued_at timestamptz,
        started_at timestamptz,
        finished_at timestamptz,
        tail text[] NOT NULL DEFAULT '{}',
        UNIQUE (run_id, key)
      );
      -- The fetch path: only queued rows, already in lease order. (No separate not_before index: on a young
      -- table without statistics the planner would pick it and sort every queued row on each lease.)
      CREATE INDEX tasks_fetch ON ${tasks} (priority DESC, seq) WHERE state = 'queued';
      CREATE INDEX tasks_lease_expiry ON ${tasks} (lease_expires_at) WHERE state = 'running';
      CREATE UNIQUE INDEX tasks_lease_token ON ${tasks} (lease_token) WHERE lease_token IS NOT NULL;
      CREATE INDEX tasks_active ON ${tasks} (run_id) WHERE state IN ('blocked','queued','running');
      CREATE INDEX tasks_failed ON ${tasks} (run_id) WHERE state = 'failed';
      CREATE INDEX tasks_cancelled_by ON ${tasks} (run_id, cancelled_by) WHERE cancelled_by IS NOT NULL;
      CREATE TABLE ${deps} (
        run_id text NOT NULL,
        task_key text NOT NULL,
        depends_on_key text NOT NULL,
        PRIMARY KEY (run_id, task_key, depends_on_key),
        FOREIGN KEY (run_id, task_key) REFERENCES ${tasks}(run_id, key) ON DELETE CASCADE,
        FOREIGN KEY (run_id, depends_on_key) REFERENCES ${tasks}(run_id, key) ON DELETE CASCADE
      );
      CREATE INDEX task_deps_dependents ON ${deps} (run_id, depends_on_key);
    `,
  },
  {
    version: 2,
    name: "hot-path functions: lease_tasks, complete_success",
    // The hot path in one round trip. Each statement of a VOLATILE plpgsql function takes a fresh snapshot,
    // so the dependents update sees rows a concurrent submit committed while this waited for the task's lock.
    sql: (names) => `
      -- Sorting is switched off inside: the fetch must walk tasks_fetch in order and stop after p_limit rows,
      -- even on a young table whose missing statistics make "fetch all queued rows, then sort" look cheaper.
      CREATE FUNCTION ${names.quoted}.lease_tasks(p_worker text, p_limit int, p_lease_ms int)
      RETURNS TABLE (id bigint, run_id text, key text, type text, run text, env jsonb, cwd text, priority int,
                     seq bigint, attempts int, max_attempts int, timeout_ms int, lease_token uuid, queue_wait_ms float8)
      LANGUAGE plpgsql VOLATILE SET enable_sort = off SET enable_bitmapscan = off AS $fn$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        WITH picked AS (
          SELECT q.id FROM ${names.tasks} q
           WHERE q.state = 'queued' AND q.not_before <= now()
           ORDER BY q.priority DESC, q.seq
           LIMIT p_limit
           FOR UPDATE SKIP LOCKED)
        UPDATE ${names.tasks} t
           SET state = 'running', attempts = t.attempts + 1, lease_token = gen_random_uuid(),
               lease_expires_at = now() + p_lease_ms * interval '1 millisecond', worker_id = p_worker,
               started_at = now(), cancel_requested = false
          FROM picked WHERE t.id = picked.id
        RETURNING t.id, t.run_id, t.key, t.type, t.run, t.env, t.cwd, t.priority, t.seq, t.attempts, t.max_attempts,
                  t.timeout_ms, t.lease_token,
                  (extract(epoch FROM now() - GREATEST(t.queued_at, t.not_before)) * 1000)::float8;
      END
      $fn$;

      ${completeSuccessFunction(names, false)}
    `,
  },
  {
    version: 3,
    name: "batched hot path: complete_and_lease",
    sql: completeAndLeaseSql,
  },
  {
    version: 4,
    name: "leases of one run: lease_tasks and complete_and_lease with p_run",
    sql: runFilterSql,
  },
  {
    version: 5,
    name: "each task's last recorded end: ended_token, ended_as",
    sql: recordedEndSql,
  },
  {
    version: 6,
    name: "durations as bigint: backoff_base_ms, backoff_max_ms, timeout_ms, p_lease_ms",
    sql: bigintDurationsSql,
  },
  {
    version: 7,
    name: "leased tasks carry retry_on: lease_tasks_v7, complete_and_lease_v7",
    sql: leasedRetryOnSql,
  },
  {
    version: 8,
    name: "a running attempt's last lines, stored by heartbeats: live_tail, live_tail_token",
    sql: liveTailSql,
  },
  {
    version: 9,
    name: "a success finds its task and dependents through unique indexes: complete_success, complete_and_lease*",
    sql: uniqueLookupsSql,
  },
  {
    version: 10,
    name: "a lease updates each task it picked by its id: lease_tasks*",
    sql: leaseByIdSql,
  },
  {
    version: 11,
    name: "a lease updates the tasks it picked in one statement, by their ids: lease_tasks*",
    sql: leaseByIdsSql,
  },
  {
    version: 12,
    name: "a success settles its run only when it found no active dependent: complete_success, complete_and_lease*",
    sql: settleIdleSql,
  },
  {
    version: 13,
    name: "which attempt a task's stored last lines are of: tail_attempt",
    sql: tailAttemptSql,
  },
  {
    version: 14,
    name: "tasks a stopped run cancelled say so: cancel_kind, cancelled_running",
    sql: shutdownCancelSql,
  },
  {
    version: 15,
    name: "counts of tasks by state without a count of the table: task_ends, task_end_changes, count_tasks",
    sql: taskEndsSql,
  },
  {
    version: 16,
    name: "a lease that took fewer tasks than asked says when the next is due: complete_and_lease*",
    sql: shortLeaseDelaySql,
  },
  {
    version: 17,
    name: "a success wakes workers only for a freed task it did not lease itself: complete_and_lease*",
    sql: leasedFreedQuietSql,
  },
  {
    version: 18,
    name: "a statement appends one change of state for each pair of states it moved tasks between, not one for each task: task_end_changes.n",
    sql: taskEndStatementsSql,
  },
  {
    version: 19,
    name: "a success clears the error an earlier attempt left: complete_success, complete_and_lease*",
    sql: successClearsErrorSql,
  },
  {
    version: 20,
    name: "a task waiting for its retry names the worker whose attempt failed last: failed_worker_id, failed_attempt",
    sql: failedWorkerSql,
  },
  {
    version: 21,
    name: "the worker whose attempt wrote a task's stored last lines: tail_worker_id, tail_worker_attempt",
    sql: tailWorkerSql,
  },
  {
    version: 22,
    name: "a redrive by an earlier version forgets the workers of the attempts before it: forget_workers_of_uncounted_attempts",
    sql: earlierRedriveSql,
  },
  {
    version: 23,
    name: "a new run id that an existing run's is but for case is refused: refuse_run_id_case_twin",
    sql: runIdCaseSql,
  },
];

/** The version of the migration that makes the store: applied by `migrate`, the schema had none. */
export const FIRST_MIGRATION_VERSION = MIGRATIONS[0]!.version;

/** First key of the two-key advisory lock that serializes migrations (the second is the schema). */
const MIGRATION_LOCK_CLASS = 0x7461_736b; // "task"

/**
 * Creates the schema and applies pending migrations in one transaction.
 * Idempotent, and safe when several processes start at once: they queue on a
 * transaction-scoped advisory lock keyed by the schema name.
 * Returns the versions applied by this call.
 *
 * Every command migrates when it opens the store: the usual case, nothing to
 * apply, is one quick read, without the lock. Applying may take long (an index
 * over every task), and so may waiting for another process applying: those
 * statements have the long time limit.
 */
export async function migrate(pool: pg.Pool, schema = "taskq"): Promise<number[]> {
  return (await migrateStore(pool, schema)).applied;
}

/** What `migrateStore` did: the versions it applied, and the newest the store then records. */
export interface Migrated {
  applied: number[];
  /**
   * The newest migration the store records once migrated: above LATEST_MIGRATION where a newer taskq
   * migrated it (a rolling upgrade), which this code goes on using, knowing fewer of them.
   */
  newest: number;
}

/** As `migrate`, and says the newest migration the store records (see Migrated). */
export async function migrateStore(pool: pg.Pool, schema = "taskq"): Promise<Migrated> {
  const names = schemaNames(schema);
  const known = await appliedVersions(pool, names);
  const missing = MIGRATIONS.filter((migration) => !known.has(migration.version));
  if (missing.length === 0) return { applied: [], newest: Math.max(...known) };
  // A migration locks the tasks table (ALTER TABLE, CREATE TRIGGER), which waits for every session using it, and
  // every statement of every worker after it then waits behind it: waited for a transaction left open (in psql,
  // holding a row), the lease renewals of every running task waited as long, and their leases ran out. Its waits
  // for such a lock are cut short as a user's command's are, the whole transaction undone and tried again.
  // A lock on a whole table names no row: on the try whose refusal is told, who holds it is asked while each statement waits.
  const apply = (attempt: number) => inTransaction(pool, async (client) => {
    const run = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      client.query<R>(timedQuery({ text, ...(values === undefined ? {} : { values }) }, LONG_QUERY_TIMEOUT_MS));
    const pid = toldIfLocked(attempt) ? (await run<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid : undefined;
    const query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => (pid === undefined ? run<R>(text, values) : watchLockWaits(pool, pid, () => run<R>(text, values)));
    await query(LONG_STATEMENT_TIMEOUT_SQL);
    // Waited for whole, before the lock waits are cut short: another process applying them (which may take long) holds it.
    await query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [MIGRATION_LOCK_CLASS, schema]);
    await query(LOCK_TIMEOUT_SQL);
    // CREATE SCHEMA IF NOT EXISTS needs the right to create in the database even when the schema is
    // there: a role that owns the schema made for it, without that right, could apply no migration.
    const found = await query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (found.rows.length === 0) await query(`CREATE SCHEMA IF NOT EXISTS ${names.quoted}`);
    await query(
      `CREATE TABLE IF NOT EXISTS ${names.migrations} (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = await query<{ version: number }>(`SELECT version FROM ${names.migrations}`);
    const applied = new Set(done.rows.map((row) => row.version));
    const pending = MIGRATIONS.filter((migration) => !applied.has(migration.version));
    for (const migration of pending) {
      await query(migration.sql(names));
      await query(`INSERT INTO ${names.migrations} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
    }
    return { applied: pending.map((migration) => migration.version), newest: Math.max(LATEST_MIGRATION, ...applied) };
  });
  return retryLockWaits(pool, names, "migrate", `no migration was applied (schema "${schema}" needs ${migrationList(missing)})`, apply).catch(async (error: unknown) => {
    if ((error as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) throw error;
    throw known.size === 0 ? await notAllowedToCreate(pool, error, schema) : notAllowed(error, schema, missing);
  });
}

/** SQLSTATE of "permission denied". */
const INSUFFICIENT_PRIVILEGE = "42501";

/** "migration 22", "migrations 20, 22", "migrations 1 to 22". */
function migrationList(missing: Migration[]): string {
  const versions = missing.map((migration) => migration.version);
  const [first, last] = [versions[0]!, versions.at(-1)!];
  if (versions.length > 2 && last - first === versions.length - 1) return `migrations ${first} to ${last}`;
  return `migration${versions.length === 1 ? "" : "s"} ${versions.join(", ")}`;
}

/** A role that may use the schema but not change it, with a migration pending (a newer taskq): says who can. */
function notAllowed(error: unknown, schema: string, missing: Migration[]): TaskqError {
  const versions = migrationList(missing);
  const reason = error instanceof Error ? error.message : String(error);
  return new TaskqError(
    "STORE_QUERY_FAILED",
    `migrate failed: ${reason} (schema "${schema}" needs ${versions}, which this database role may not apply: run any taskq command once as a role that may, such as the schema's owner)`,
    { cause: error },
  );
}

/**
 * A role that may not make the store in a schema that has none: every other command only uses a store, so
 * it is made by `submit`, `worker` or `run --store` as a role that may, or in a schema made for this role.
 */
async function notAllowedToCreate(pool: pg.Pool, error: unknown, schema: string): Promise<TaskqError> {
  const reason = error instanceof Error ? error.message : String(error);
  const found = await pool
    .query<{ role: string; exists: boolean }>("SELECT current_user AS role, EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS exists", [schema])
    .then(
      (result) => result.rows[0],
      () => undefined,
    );
  const role = found === undefined ? "this role" : `"${found.role.replaceAll('"', '""')}"`;
  // A schema made for the role (or given to it) is all it needs: its owner creates in it, without the database's CREATE.
  const administrator = found?.exists === true ? `give it the schema (ALTER SCHEMA ${schema} OWNER TO ${role})` : `create the schema for it (CREATE SCHEMA ${schema} AUTHORIZATION ${role})`;
  return new TaskqError(
    "STORE_QUERY_FAILED",
    `migrate failed: ${reason} (schema "${schema}" holds no taskq store yet, which this database role may not make: have an administrator ${administrator}, ` +
      `or run taskq submit, worker or run --store once as a role that may)`,
    { cause: error },
  );
}

/**
 * A role the schema's tables are kept from (no USAGE on it): says what an administrator grants, rather
 * than the bare "permission denied", which does not say the role needs more than the schema.
 */
export function notUsable(error: unknown, schema: string, operation: string): TaskqError | undefined {
  if ((error as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) return undefined;
  const reason = error instanceof Error ? error.message : String(error);
  // Functions are PUBLIC's to execute unless a database revoked that: then the role needs them given too.
  const grants = /permission denied for function /.test(reason)
    ? "SELECT, INSERT, UPDATE and DELETE on its tables, USAGE on its sequences and EXECUTE on its functions"
    : "SELECT, INSERT, UPDATE and DELETE on its tables and USAGE on its sequences";
  return new TaskqError(
    "STORE_QUERY_FAILED",
    `${operation} failed: ${reason}: this database role may not use the store in schema "${schema}"; an administrator grants it USAGE on the schema, ` +
      `${grants} (or runs taskq as the schema's owner)`,
    { cause: error },
  );
}

/** The versions applied to the schema; none when it or its migrations table is not there yet. */
async function appliedVersions(pool: pg.Pool, names: SchemaNames): Promise<Set<number>> {
  try {
    const done = await pool.query<{ version: number }>(`SELECT version FROM ${names.migrations}`);
    return new Set(done.rows.map((row) => row.version));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "42P01" || code === "3F000") return new Set(); // undefined table, undefined schema
    throw notUsable(error, names.schema, "migrate") ?? error;
  }
}

/** The latest migration version this code knows. */
export const LATEST_MIGRATION = MIGRATIONS.length;
