import type pg from "pg";
import { TaskqError } from "../../errors.js";
import { formatDuration } from "../../handlers/format-duration.js";

/**
 * How long the store waits for PostgreSQL. Without limits, a server that accepts the
 * connection and never answers (a wrong port, a stalled machine) would leave every
 * command waiting for ever, and a worker running a task whose lease it cannot renew.
 */

/** Opening a connection, unless the connection string sets `connect_timeout`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** One statement. Every statement of the store is short, but for those below. */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/**
 * Statements that may rightly take long: a migration building an index over every task
 * (and the commands waiting for it to finish), a prune deleting a long history.
 */
export const LONG_QUERY_TIMEOUT_MS = 10 * 60_000;

/**
 * How much longer than the store waits for an answer the server lets the statement run. The driver's
 * limit only stops waiting: without the server's own (`statement_timeout`), a statement given up on
 * would run on, for hours where it is slow, holding the rows it locked (a worker that retries it, and
 * the sweeps of other workers, would wait for them). A little longer, so the store's message comes first.
 */
export const SERVER_TIMEOUT_MARGIN_MS = 2_000;

/** The `statement_timeout` a session gets for statements the store waits `queryMs` for (0: none). */
export function serverTimeoutMs(queryMs: number): number {
  return queryMs > 0 ? queryMs + SERVER_TIMEOUT_MARGIN_MS : 0;
}

/** The first statement of a transaction whose statements the store waits LONG_QUERY_TIMEOUT_MS for: the server's limit to match. */
export const LONG_STATEMENT_TIMEOUT_SQL = `SET LOCAL statement_timeout = ${serverTimeoutMs(LONG_QUERY_TIMEOUT_MS)}`;

/** The time limits a store was opened with; 0 is none. */
export interface Timeouts {
  connectMs: number;
  queryMs: number;
}

/**
 * The connection string's `connect_timeout` in milliseconds, read as libpq reads it:
 * seconds, at least 2; 0 or less waits for ever. Undefined when it does not set one.
 */
export function connectTimeoutOf(connectionString: string): number | undefined {
  let value: string | null;
  try {
    value = new URL(connectionString).searchParams.get("connect_timeout");
  } catch {
    return undefined; // not a URL: a key=value string, which pg does not read either
  }
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (!Number.isInteger(seconds)) {
    throw new TaskqError("STORE_BAD_URL", `connect_timeout=${value} in the connection string is not a whole number of seconds (at least 2, or 0 for no limit)`);
  }
  return seconds <= 0 ? 0 : Math.max(seconds, 2) * 1000;
}

/** A statement that may go unanswered for `timeoutMs` (pg reads `query_timeout` on a query too; its types do not say so). */
export function timedQuery(query: pg.QueryConfig, timeoutMs: number): pg.QueryConfig {
  const timed: pg.QueryConfig & { query_timeout: number } = { ...query, query_timeout: timeoutMs };
  return timed;
}

/** The driver's messages for a connection that was not made in time (pg's own). */
const CONNECT_TIMEOUT = /^(Connection terminated due to connection timeout|timeout expired)$/;

/**
 * pg-pool's, for a caller that waited in its queue for a connection: every one of the pool's was in use (none is made
 * for it beyond the pool's size), not a database that gave none. A worker's records each waiting on a lock another
 * session holds fill its pool so; "no connection to the database" sent the reader to look at the wrong thing.
 */
export const POOL_FULL = "timeout exceeded when trying to connect";
/** The driver's message for a statement that its query_timeout ended. */
export const QUERY_READ_TIMEOUT = "Query read timeout";

/**
 * What to tell the user of a time limit reached, instead of the driver's words;
 * undefined for any other error. `queryMs` is the limit of the statement that failed.
 */
export function describeTimeout(error: unknown, timeouts: Timeouts): string | undefined {
  const message = error instanceof Error ? error.message : undefined;
  if (message === undefined) return undefined;
  if (CONNECT_TIMEOUT.test(message)) return `no connection to the database within ${formatDuration(timeouts.connectMs)}`;
  if (message === POOL_FULL) {
    return (
      `no connection free within ${formatDuration(timeouts.connectMs)}: every connection of this process's pool was in use ` +
      `(by statements waiting on a lock another session holds or on a slow database, or by connections still being made)`
    );
  }
  if (message === QUERY_READ_TIMEOUT) return `the database did not answer within ${formatDuration(timeouts.queryMs)}`;
  return undefined;
}

