import type pg from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { LOCK_TIMEOUT_SQL } from "./lock-wait.js";
import { causes, failedConnecting, isTransientError } from "./transient.js";

/** Runs of a piece of work that lost a race before its error is given up on. */
const CONFLICT_ATTEMPTS = 5;

export const ignoreClientError = (): void => {
  // The failing query rejects with the same error; this listener only keeps a
  // checked-out client's 'error' event from crashing the process.
};

/**
 * A deadlock (40P01) or a serialization failure (40001): the database undid the
 * statement or transaction because of another one, and running it again is the cure.
 */
export function isConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "40P01" || code === "40001";
}

/**
 * Runs `work`, and again (a few times in all) while it fails with an error
 * `retryable` accepts, after a short random pause so that the two sides of a
 * deadlock do not meet again in step. Each run must be whole: a statement, or a
 * transaction from BEGIN to COMMIT.
 */
export async function retryConflicts<T>(work: () => Promise<T>, retryable: (error: unknown) => boolean = isConflict): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= CONFLICT_ATTEMPTS || !retryable(error)) throw error;
      await sleep(Math.random() * 10 * attempt);
    }
  }
}

/**
 * Runs `work` inside BEGIN/COMMIT on one pooled client. A client whose
 * connection broke is destroyed rather than returned to the pool. Deadlocks
 * and serialization failures are retried a few times; other errors propagate.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  return retryConflicts(() => transactionOnce(pool, work, options));
}

export interface TransactionOptions {
  /** A user's command's transaction: a lock waited for longer than LOCK_WAIT_MS undoes it, with a 55P03 error (see lock-wait.ts). */
  shortLockWaits?: boolean;
  /** Once aborted, nothing is sent: a connection made after it is given back unused, and the abort's reason thrown. */
  signal?: AbortSignal;
}

/**
 * Errors of transactions that failed once their COMMIT had been sent: a connection lost then
 * leaves unknown whether the database committed, so running the work again may do it twice.
 * (Before its COMMIT, a transaction whose connection is lost is undone by the database.)
 */
const afterCommitSent = new WeakSet<object>();

/** Whether `error` (or the error it wraps) ended a transaction after its COMMIT was sent. */
export function failedAfterCommitSent(error: unknown): boolean {
  for (const at of causes(error)) {
    if (afterCommitSent.has(at)) return true;
  }
  return false;
}

/**
 * A stop (`signal` aborted) that came while `client`'s connection was being made: the client is given back unused and the
 * stop thrown as one that sent nothing (see stoppedBeforeSending).
 */
function stoppedWhileConnecting(client: pg.PoolClient, signal: AbortSignal | undefined): void {
  if (signal?.aborted !== true) return;
  client.release();
  stoppedBeforeSending(signal);
}

/**
 * Throws the stop of `signal`, if it came, marked as a try that sent nothing (failedConnecting, which isNeverConnected
 * reads), so that a submit stopped before its next try, or before a try sent its statement, says nothing was submitted.
 */
export function stoppedBeforeSending(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw failedConnecting(signal.reason);
}

/**
 * Runs one statement on a client of its own, connected first, not by pool.query: a connection that fails as it is made
 * sent nothing, which its error says (failedConnecting). Stopped (`signal` aborted) while it connected, it sends nothing
 * (see stoppedWhileConnecting). As pool.query does, a client whose statement failed is destroyed, not kept for the next.
 */
export async function queryOnOwnClient<R extends pg.QueryResultRow>(pool: pg.Pool, query: pg.QueryConfig, signal?: AbortSignal): Promise<pg.QueryResult<R>> {
  const client = await ownClient(pool, signal);
  let broken: Error | undefined;
  try {
    return await client.query<R>(query);
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.off("error", ignoreClientError);
    client.release(broken);
  }
}

/**
 * A client of the pool's, connected: a connection that fails as it is made sent nothing, which its error says
 * (failedConnecting, see isNeverConnected); one stopped (`signal`) while it connected is given back, and the stop thrown
 * (see stoppedWhileConnecting). Its connection's errors are the statements' to tell (see ignoreClientError): the caller
 * takes that listener off as it releases the client.
 */
async function ownClient(pool: pg.Pool, signal: AbortSignal | undefined): Promise<pg.PoolClient> {
  const client = await pool.connect().catch((error: unknown) => {
    throw failedConnecting(error);
  });
  stoppedWhileConnecting(client, signal);
  client.on("error", ignoreClientError);
  return client;
}

/** One BEGIN/COMMIT of `work`, not retried: for a caller that retries a larger whole. */
export async function transactionOnce<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const client = await ownClient(pool, options.signal);
  let broken: Error | undefined;
  let committing = false;
  try {
    await client.query("BEGIN");
    if (options.shortLockWaits === true) await client.query(LOCK_TIMEOUT_SQL);
    const result = await work(client);
    committing = true;
    await client.query("COMMIT");
    return result;
  } catch (error) {
    // A conflict at COMMIT is the server's answer that it undid the transaction; anything else there leaves it unknown.
    if (committing && !isConflict(error) && typeof error === "object" && error !== null) afterCommitSent.add(error);
    // A deadlock leaves the connection usable; anything else transient may not. Such a
    // connection is destroyed, which ends the transaction too: a ROLLBACK sent on one that
    // stopped answering (a query timeout) would only wait as long again.
    if (isTransientError(error) && !isConflict(error)) broken = error as Error;
    else {
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError as Error;
      });
    }
    throw error;
  } finally {
    client.off("error", ignoreClientError);
    client.release(broken);
  }
}
