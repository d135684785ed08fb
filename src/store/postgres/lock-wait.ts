import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { TaskqError } from "../../errors.js";
import type { SchemaNames } from "./names.js";
import { formatDuration } from "../../handlers/format-duration.js";
import { timedQuery } from "./timeouts.js";
import { retryPauseMs } from "./transient.js";

/**
 * How long a statement of a user's command (cancel, redrive, submit, prune) waits for a lock another session
 * holds before its transaction is undone and tried again. Such a transaction may hold running tasks' rows as it
 * waits for another (cancel locks a run's rows one by one, submit shares a resubmitted run's): their workers'
 * lease renewals wait on them meanwhile. The shortest lease (`--lease 1s`) is renewed every third of it and must
 * be answered within the two thirds left, 667 ms; a wait cut at 200 ms leaves a renewal most of that. Waited for
 * the whole query limit (30 s), a lock held by a long transaction (an open psql session) cost every running task
 * of the run its lease, and a cancel that did nothing ended a running task.
 */
export const LOCK_WAIT_MS = 200;

/** Tries in all before a command says which lock it could not get: about 5 s with the pauses between. */
const LOCK_TRIES = 8;

/** Whether try `attempt` of retryLockWaits's is one whose lock wait, cut short, is told (see watchLockWaits): the last, or one past it. */
export function toldIfLocked(attempt: number): boolean {
  return attempt >= LOCK_TRIES;
}

/**
 * How long tries go on while the lock is another taskq session's (its application_name, `taskq worker ...`,
 * `taskq cancel ...`): the query limit, which such a command waited before its lock waits were cut short.
 */
const TASKQ_HOLDER_WAIT_MS = 30_000;

/** How long the look-up of who holds the lock may take: it only words the error. */
const HOLDER_LOOKUP_MS = 2_000;

/** SQLSTATE lock_not_available: a lock not had within `lock_timeout` (or with NOWAIT). */
const LOCK_NOT_AVAILABLE = "55P03";

/** The first statement of a user's command's transaction: its lock waits are cut at LOCK_WAIT_MS. */
export const LOCK_TIMEOUT_SQL = `SET LOCAL lock_timeout = ${LOCK_WAIT_MS}`;

/** True for a statement undone because a lock was not had in time (55P03), whose transaction committed nothing. */
export function isLockNotAvailable(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;
}

/**
 * Runs `work` (a whole transaction, or several, that each set lock_timeout), and again while a lock wait cuts
 * it short, LOCK_TRIES times in all with a growing pause between, withRetry's with jitter (each try undone whole: between two, the rows
 * it held are free for the renewals that waited on them); past those, while a taskq session holds the lock (up to
 * TASKQ_HOLDER_WAIT_MS), and once more where the lock's row is held by no session when looked up. The last such error is thrown as STORE_LOCKED, in
 * words that name the row and the session holding it where the database says so (see lockedError).
 */
export async function retryLockWaits<T>(pool: pg.Pool, names: SchemaNames, operation: string, undone: string, work: (attempt: number) => Promise<T>, random: () => number = Math.random): Promise<T> {
  const started = performance.now();
  let triedFreed = false;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (error) {
      if (!isLockNotAvailable(error)) throw error;
      if (attempt >= LOCK_TRIES) {
        const holder = blockerOf(error) ?? (await findLockHolder(pool, names, error).catch(() => undefined));
        // Another taskq command or worker (a cancel of a large run, a failure's cascade to thousands of dependents)
        // ends its transaction by itself: waited for up to the query limit, as before the waits were cut short,
        // rather than failing a cancel that a moment later finds the run ended.
        const taskqHolder = holder?.applicationName?.startsWith("taskq ") === true;
        // The row found with no session holding it: its holder's transaction most likely ended between the try and
        // the look-up, so it is tried once more rather than refused as locked by a session that no longer holds it.
        // (A row several sessions share names none either: refused after that one more try, as before.)
        const freed = holder !== undefined && holder.pid === undefined && !triedFreed;
        if (freed) triedFreed = true;
        else if (!taskqHolder || performance.now() - started >= TASKQ_HOLDER_WAIT_MS) {
          throw lockedError(operation, undone, holder, attempt, performance.now() - started, error);
        }
      }
      // withRetry's pause, of which half at least: two commands that meet do not try again in step.
      const pause = retryPauseMs(attempt);
      await sleep(pause / 2 + (random() * pause) / 2);
    }
  }
}

/**
 * How long a lease renewal waits for its task's row while another session holds it (the renewals' sessions' lock_timeout).
 * Waited for until the lease ran out, a renewal held one of the worker's few renewal connections all that time: a
 * psql session holding as many running tasks' rows as there are renewal connections (two) kept every other task of the
 * worker, of any run, from its renewal, and each lost its lease. Cut short, the renewal is tried again soon (RENEWAL_LOCKED_RETRY_MS), its connection free meanwhile.
 */
export const RENEWAL_LOCK_WAIT_MS = LOCK_WAIT_MS;

/**
 * The longest a renewal's statement waits for an answer where its task's row is locked: its lock wait, then the look-up
 * of who holds it. One sent longer ago and still not answered waits on a database that does not answer, not on a lock.
 */
export const RENEWAL_LOCKED_ANSWER_MS = RENEWAL_LOCK_WAIT_MS + HOLDER_LOOKUP_MS;

/** The pause before a renewal whose task's row was locked (RENEWAL_LOCK_WAIT_MS) is tried again, unless the heartbeat is due sooner. */
export const RENEWAL_LOCKED_RETRY_MS = LOCK_WAIT_MS;

/**
 * A renewal's lock wait cut short (`error`, 55P03), in words that name the row and, where the database says so, the
 * session holding it (not how long its transaction has been open: the words stay the same from one try to the next,
 * so a worker says them once). STORE_LOCKED.
 */
export async function renewalLockedError(db: pg.Pool | pg.ClientBase, names: SchemaNames, error: unknown): Promise<RenewalLockedError> {
  let sessionIdle = true;
  const holder = await findLockHolder(db, names, error).catch(() => {
    sessionIdle = false;
    return undefined;
  });
  const what = holder?.key === undefined ? "its task's row is locked by another session" : `task ${JSON.stringify(holder.key)} of run ${holder.runId!} is locked by another session`;
  const session = [
    ...(holder?.pid === undefined ? [] : [`pid ${holder.pid}`]),
    ...(holder?.applicationName === undefined ? [] : [`application_name ${JSON.stringify(holder.applicationName)}`]),
    ...(holder?.client === undefined ? [] : [`client ${holder.client}`]),
  ];
  const by = `another session${session.length === 0 ? "" : ` (${session.join(", ")})`}`;
  const held = `${what}${session.length === 0 ? "" : ` (${session.join(", ")})`}`;
  return new RenewalLockedError(held, `heartbeat failed: ${held}: the lease is renewed once that session's transaction ends, and runs out if it does not end in time`, error, { by, sessionIdle });
}

/**
 * A renewal refused its task's row (STORE_LOCKED), with `held`: the row and the session holding it, in words ("task "a" of run r
 * is locked by another session (pid 42, ...)"); and `by`, that session alone ("another session (pid 42, ...)").
 */
export class RenewalLockedError extends TaskqError {
  constructor(
    readonly held: string,
    message: string,
    cause: unknown,
    {
      by = "another session",
      sessionIdle = true,
    }: {
      by?: string;
      /** False where the look-up of the holder failed (timed out): the session it ran on may still be busy with it, and is not to be used again. */
      sessionIdle?: boolean;
    } = {},
  ) {
    super("STORE_LOCKED", message, { cause });
    this.by = by;
    this.sessionIdle = sessionIdle;
  }

  /** The session holding the row, alone ("another session (pid 42, ...)"): whose lock kept other tasks' renewals from a connection (see PostgresStore.renewalRefusedSince). */
  readonly by: string;
  /** False where the look-up of the holder failed (timed out): the session it ran on may still be busy with it, and is not to be used again. */
  readonly sessionIdle: boolean;
}

/** What the database says of a lock a statement waited for in vain; every field may be missing. */
export interface LockHolder {
  /** The row: its run, and its task's key (a run's own row has none). */
  runId?: string;
  key?: string;
  /** The session whose transaction holds it. */
  pid?: number;
  applicationName?: string;
  /** Where that session connects from: its client's address, or "a local socket". */
  client?: string;
  /** How long that session's transaction has been open. */
  transactionMs?: number;
  /** A table locked whole (a migration's lock on it), where no row is named: its name, schema-qualified. */
  table?: string;
}

/** The row (a run's or a task's) and relation a lock wait names in its CONTEXT: "while locking tuple (0,2) in relation "tasks"". */
const TUPLE = /\btuple (\(\d+,\d+\)) in relation "([^"]+)"/;

/**
 * Who holds the lock `error` (a lock wait cut short) waited for, read after the fact: the row is named in the
 * error's context, and the transaction that locked it is in the row's xmax while it is open (not for a row
 * several sessions share, whose xmax names them all at once: then no session is named; nor for a row changed or
 * deleted since by a transaction that has ended: then nothing is named). Undefined where the context names no row
 * of the store's tables (a lock on a whole table: a migration).
 */
async function findLockHolder(pool: pg.Pool | pg.ClientBase, names: SchemaNames, error: unknown): Promise<LockHolder | undefined> {
  const where = (error as { where?: unknown }).where;
  const found = typeof where === "string" ? TUPLE.exec(where) : null;
  if (found === null) return undefined;
  const [, tid, relation] = found as unknown as [string, string, string];
  const table = relation === "tasks" ? { name: names.tasks, runId: "t.run_id", key: "t.key" } : relation === "runs" ? { name: names.runs, runId: "t.id", key: "NULL::text" } : undefined;
  if (table === undefined) return undefined;
  // The holder's transaction id, which only its session holds (ExclusiveLock), and holds a lock on the table too (an
  // xmax that is a multixact id, of a row shared, may equal some transaction's id).
  const text = `SELECT ${table.runId} AS run_id, ${table.key} AS key, a.pid, a.application_name,
                       ${CLIENT_SQL} AS client,
                       (extract(epoch FROM clock_timestamp() - a.xact_start) * 1000)::float8 AS transaction_ms
                  FROM ${table.name} t
                  LEFT JOIN pg_locks l ON l.locktype = 'transactionid' AND l.transactionid = t.xmax AND l.mode = 'ExclusiveLock' AND l.granted
                       AND EXISTS (SELECT 1 FROM pg_locks r WHERE r.pid = l.pid AND r.relation = '${table.name}'::regclass AND r.granted)
                  LEFT JOIN pg_stat_activity a ON a.pid = l.pid
                 WHERE t.ctid = $1::tid`;
  const result = await pool.query<{ run_id: string; key: string | null; pid: number | null; application_name: string | null; client: string | null; transaction_ms: number | null }>(
    timedQuery({ text, values: [tid] }, HOLDER_LOOKUP_MS),
  );
  const row = result.rows[0];
  // No row there now: the holder changed it (its row's next version is elsewhere) or deleted it, and has let go, its
  // transaction committed since the wait was cut short. Held by no session, as a row its holder let go unchanged.
  if (row === undefined) return {};
  return {
    runId: row.run_id,
    ...(row.key === null ? {} : { key: row.key }),
    ...(row.pid === null ? {} : { pid: row.pid }),
    ...(row.application_name === null || row.application_name === "" ? {} : { applicationName: row.application_name }),
    ...(row.client === null ? {} : { client: row.client }),
    ...(row.transaction_ms === null ? {} : { transactionMs: row.transaction_ms }),
  };
}

/**
 * A session's client, from pg_stat_activity `a`: its address (host name where the server resolves it), "a local socket"
 * for a Unix socket's (no address, port -1); NULL where this role may not see it (another role's session without
 * pg_read_all_stats) or for a background process.
 */
const CLIENT_SQL = `CASE WHEN a.client_addr IS NOT NULL THEN COALESCE(a.client_hostname, host(a.client_addr)) WHEN a.client_port = -1 THEN 'a local socket' END`;

/** How often, while a statement that names no row may wait for a lock (see watchLockWaits), who blocks it is looked up. */
const BLOCKER_LOOKUP_EVERY_MS = LOCK_WAIT_MS / 4;

/** The blocking session watchLockWaits found for a lock wait cut short, kept on its error. */
const BLOCKER = Symbol("lock holder");

function blockerOf(error: unknown): LockHolder | undefined {
  return (error as { [BLOCKER]?: LockHolder } | null)?.[BLOCKER];
}

/**
 * Runs `statement` on the session `pid` while, every BLOCKER_LOOKUP_EVERY_MS, another session of `pool` asks who blocks
 * it (pg_blocking_pids: the sessions holding, or queued ahead for, a lock it waits for), keeping the last found. A lock
 * on a whole table (a migration's ALTER TABLE, CREATE TRIGGER) names no row in the error, and once the wait is cut short
 * the database no longer says whose it was: asked while it waits, it does. Where the statement's wait is cut short
 * (55P03), that session is kept on its error, for retryLockWaits to name. Of several, one that waits for no lock itself,
 * and of those the one whose transaction has been open longest: a session that waits itself behind it (a worker's
 * renewal, holding the table in a lesser mode) ends when it does. Waiting is what decides, before the transaction's age:
 * pg_stat_activity hides when another role's transaction began (without pg_read_all_stats), and a superuser's psql holding
 * a row was ranked after the renewal of this role's worker that waited for it, which was named.
 */
export async function watchLockWaits<T>(pool: pg.Pool, pid: number, statement: () => Promise<T>): Promise<T> {
  let found: LockHolder | undefined;
  let looking: Promise<void> | undefined;
  const look = () => {
    looking ??= findBlocker(pool, pid)
      .then((holder) => {
        if (holder !== undefined) found = holder;
      }, () => undefined)
      .finally(() => {
        looking = undefined;
      });
  };
  // One at once too: a session for the look-ups is ready, connected, when the wait comes (a new one may take longer than the wait).
  look();
  const timer = setInterval(look, BLOCKER_LOOKUP_EVERY_MS);
  try {
    return await statement();
  } catch (error) {
    if (isLockNotAvailable(error) && error !== null && typeof error === "object") {
      // Not waited for long: a pool of one session (this one's) gives the look-up none until this transaction ends.
      if (looking !== undefined) await Promise.race([looking, sleep(LOCK_WAIT_MS)]);
      if (found !== undefined) Object.defineProperty(error, BLOCKER, { value: found });
    }
    throw error;
  } finally {
    clearInterval(timer);
  }
}

/** The session blocking `pid`'s lock wait, and the table it waits for, where it waits for one. */
async function findBlocker(pool: pg.Pool, pid: number): Promise<LockHolder | undefined> {
  const text = `SELECT a.pid, a.application_name, ${CLIENT_SQL} AS client,
                       (extract(epoch FROM clock_timestamp() - a.xact_start) * 1000)::float8 AS transaction_ms,
                       (SELECT w.relation::regclass::text FROM pg_locks w WHERE w.pid = $1 AND NOT w.granted AND w.locktype = 'relation' LIMIT 1) AS relation
                  FROM unnest(pg_blocking_pids($1)) b(pid)
                  JOIN pg_stat_activity a ON a.pid = b.pid
                 ORDER BY cardinality(pg_blocking_pids(b.pid)) > 0, a.xact_start NULLS LAST, a.pid
                 LIMIT 1`;
  const result = await pool.query<{ pid: number; application_name: string | null; client: string | null; transaction_ms: number | null; relation: string | null }>(
    timedQuery({ text, values: [pid] }, HOLDER_LOOKUP_MS),
  );
  const row = result.rows[0];
  if (row === undefined) return undefined;
  return {
    pid: row.pid,
    ...(row.relation === null ? {} : { table: row.relation }),
    ...(row.application_name === null || row.application_name === "" ? {} : { applicationName: row.application_name }),
    ...(row.client === null ? {} : { client: row.client }),
    ...(row.transaction_ms === null ? {} : { transactionMs: row.transaction_ms }),
  };
}

/**
 * STORE_LOCKED: `operation` gave up on a lock another session holds. Says it was a lock wait (not a database that
 * did not answer), whose, for how long it tried, why it does not wait longer, and that it changed nothing (`undone`).
 */
export function lockedError(operation: string, undone: string, holder: LockHolder | undefined, tries: number, elapsedMs: number, cause: unknown): TaskqError {
  const what =
    holder?.runId !== undefined
      ? `${holder.key === undefined ? `run ${holder.runId}` : `task ${JSON.stringify(holder.key)} of run ${holder.runId}`} is locked by another session`
      : holder?.table !== undefined
        ? `a lock it needs on table ${holder.table} is held by another session`
        : "a lock it needs is held by another session";
  const session = [
    ...(holder?.pid === undefined ? [] : [`pid ${holder.pid}`]),
    ...(holder?.applicationName === undefined ? [] : [`application_name ${JSON.stringify(holder.applicationName)}`]),
    ...(holder?.client === undefined ? [] : [`client ${holder.client}`]),
    ...(holder?.transactionMs === undefined ? [] : [`its transaction open for ${formatDuration(holder.transactionMs)}`]),
  ];
  return new TaskqError(
    "STORE_LOCKED",
    `${operation} failed: ${what}${session.length === 0 ? "" : ` (${session.join(", ")})`}; ` +
      `each of ${tries} tries over ${formatDuration(elapsedMs)} gave up after waiting ${formatDuration(LOCK_WAIT_MS)} for it, so as not to keep ` +
      `running tasks' rows from their workers' lease renewals: ${undone}; try again once that session's transaction has ended`,
    { cause },
  );
}
