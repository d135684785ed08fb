import { setTimeout as sleep } from "node:timers/promises";
import { shortened } from "../../shorten.js";
import { hidePasswords } from "./redact.js";

/**
 * SQLSTATE classes worth retrying: connection exceptions (08), operator
 * intervention such as pg_terminate_backend (57P01..57P03), deadlocks and
 * serialization failures (40001, 40P01), too many connections (53300). And a database that
 * refuses connections for a while (`ALTER DATABASE ... ALLOW_CONNECTIONS false`, or one being
 * dropped or renamed): 55000 with its own message, a class that otherwise means a wrong request.
 * And one that is read-only for a while (25006): a primary demoted in a failover, which its clients
 * reach until they are sent to the new one; a worker that gave up on an attempt's record there lost
 * how the attempt ended (its sweep then says "lease expired").
 */
const TRANSIENT_STATES = /^(08...|57P0[123]|40001|40P01|53300|25006)$/;

/** True when retrying the same operation, perhaps on a new connection, may succeed. */
export function isTransientError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (code === "STORE_UNAVAILABLE") return true; // the store's own wrapping of the errors below
  const message = (error as { message?: unknown }).message;
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
    return TRANSIENT_STATES.test(code) || (code === "55000" && typeof message === "string" && /is not currently accepting connections/.test(message));
  }
  // Socket-level failures (ECONNREFUSED, ECONNRESET) and pg's own "Connection terminated".
  if (typeof code === "string" && code.startsWith("E")) return true;
  return typeof message === "string" && /connection|terminat|not queryable|timeout/i.test(message);
}

/**
 * True for a session ended under a statement, or as it was being made, on a server that is there: terminated
 * (57P01: pg_terminate_backend, a pooler or an administrator ending sessions; 57P02: the server restarting after a
 * crash), or its socket closed on it (the driver's "Connection terminated unexpectedly", ECONNRESET, EPIPE). A new
 * session may go through at once. Not a connection refused (no server there: ECONNREFUSED), nor a time limit reached.
 */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof message === "string" && /timeout|timed out/i.test(message)) return false;
  if (isTerminatedByServer(error) || code === "ECONNRESET" || code === "EPIPE") return true;
  return code === undefined && typeof message === "string" && /^Connection terminated/.test(message);
}

/** A session the server said it ended: terminated (57P01), or the server restarting after a crash (57P02). */
export function isTerminatedByServer(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === "57P01" || code === "57P02";
}

export interface RetryOptions {
  /** Give up after this long (milliseconds); the last error is rethrown. */
  maxElapsedMs: number;
  signal?: AbortSignal;
  /** Which errors to retry (default: isTransientError's). */
  retryIf?: (error: unknown) => boolean;
  /** Called before each retry, e.g. to report the outage. */
  onRetry?: (error: unknown, attempt: number) => void;
}

/** The pause before try `attempt` + 1 of a statement the database refused for a moment: 50 ms doubled each try, up to a second. */
export function retryPauseMs(attempt: number): number {
  return Math.min(50 * 2 ** (attempt - 1), 1_000);
}

/** Runs `operation`, retrying transient database errors with capped exponential backoff (retryPauseMs). */
export async function withRetry<T>(operation: () => Promise<T>, options: RetryOptions): Promise<T> {
  const started = performance.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const elapsed = performance.now() - started;
      if (!(options.retryIf ?? isTransientError)(error) || elapsed >= options.maxElapsedMs || options.signal?.aborted === true) throw error;
      options.onRetry?.(error, attempt);
      const delay = Math.min(retryPauseMs(attempt), options.maxElapsedMs - elapsed);
      await sleep(Math.max(delay, 0), undefined, { signal: options.signal }).catch(() => undefined);
    }
  }
}

/**
 * True for a statement the database refused: its answer, an error of severity ERROR (a read-only standby's
 * 25006, a statement timeout, a lock it could not get), means the statement was rolled back and committed
 * nothing, on a connection that lives on. Not for a connection lost or ended (FATAL) with the statement on
 * its way, whose commit may have happened, its reply lost. Looked for through the store's wrapping (`cause`).
 */
export function isRefusal(error: unknown): boolean {
  return serverError(error)?.severity === "ERROR";
}

/** How far a walk of an error's causes goes: the store's wrapping is a few errors deep, and a chain that loops back ends here. */
const CAUSE_DEPTH = 5;

/** `error` and the errors it wraps (`cause`), outermost first, as far as CAUSE_DEPTH: through the store's wrapping to the driver's error. */
export function* causes(error: unknown): Generator<object> {
  for (let seen = error, depth = 0; typeof seen === "object" && seen !== null && depth < CAUSE_DEPTH; seen = (seen as { cause?: unknown }).cause, depth++) yield seen;
}

/** Errors a connection met as it was made, before any statement was sent on it (see failedConnecting). */
const whileConnecting = new WeakSet<object>();

/**
 * Marks `error` as met while connecting, before the statement it was for was sent (a pool's `connect()` that failed: the
 * server dropped the connection during its start-up, or it timed out), for isNeverConnected; returns it.
 */
export function failedConnecting(error: unknown): unknown {
  if (typeof error === "object" && error !== null) whileConnecting.add(error);
  return error;
}

/**
 * True for a connection that was never made (nothing listening: ECONNREFUSED; a host name not found: ENOTFOUND; or one
 * that failed as it was made, see failedConnecting), looked for through the store's wrapping (`cause`): the statement it
 * was for was never sent, so it did nothing.
 */
export function isNeverConnected(error: unknown): boolean {
  for (const seen of causes(error)) {
    const { code } = seen as { code?: unknown };
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || whileConnecting.has(seen)) return true;
  }
  return false;
}

/** The server's own error (the first with a SQLSTATE) in `error` or the errors it wraps (`cause`), through the store's wrapping. */
function serverError(error: unknown): { code: string; severity?: unknown; message?: unknown } | undefined {
  for (const seen of causes(error)) {
    const { code, severity, message } = seen as { code?: unknown; severity?: unknown; message?: unknown };
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return { code, severity, message };
  }
  return undefined;
}

/**
 * What the server answered, in its own words, where it refused `error` (too many connections, a table not there,
 * a role's or the database's connection limit); undefined where it did not (no connection made, a statement unanswered in
 * time), or answered with no refusal (see below).
 */
export function serverWords(error: unknown): string | undefined {
  const { code, message, severity } = serverError(error) ?? {};
  // A severity is the server's: an error code alone may be the socket's (EPIPE has five letters too). Not a refusal: a
  // session ended (57P01, 57P02), a statement cancelled (57014), a transaction rolled back (class 40: a deadlock).
  if (typeof severity !== "string" || typeof message !== "string" || message === "" || isTerminatedByServer({ code }) || code === "57014" || code?.startsWith("40")) return undefined;
  // On one line: a trigger's RAISE may hold several.
  return shortened(hidePasswords(message).replace(/\s*\n\s*/g, " "), 200);
}

/**
 * A statement the server refused for a moment, not for what it asks: cancelled (57014: pg_cancel_backend, a
 * statement timeout), a lock not had in time (55P03), resources short (class 53: disk full, out of memory).
 * It committed nothing, and the same statement may go through a moment later. Not a refusal of what the
 * statement asks (a constraint, a bad value, a bug), which every try meets again.
 */
export function isMomentaryRefusal(error: unknown): boolean {
  const found = serverError(error);
  return found !== undefined && found.severity === "ERROR" && /^(57014|55P03|53...)$/.test(found.code);
}

/**
 * SQLSTATEs that no retry fixes, of a store the worker cannot use at all: permission denied (42501), its schema
 * (3F000), a table (42P01) or a function (42883) not there. Until an administrator changes the store, each try
 * fails the same way.
 */
const UNUSABLE_STATES = new Set(["42501", "3F000", "42P01", "42883"]);

/**
 * A database that does not exist (3D000, met as a connection is made): dropped or renamed while a worker ran. Not a
 * moment's outage: every new connection meets it, and what the store held (its runs, their leases) is gone with it.
 */
export function isDatabaseGone(error: unknown): boolean {
  return serverError(error)?.code === "3D000";
}

/**
 * True for an error of a store whose schema (3F000) or a table (42P01) is not there (dropped under the worker): then
 * no sweep, a statement on those tables, can count an attempt as lost until they are back. Not a function not there
 * (42883): the tables are, and a sweep reads and writes them alone; nor a right revoked (42501).
 */
export function isStoreMissing(error: unknown): boolean {
  const code = serverError(error)?.code;
  return code === "3F000" || code === "42P01";
}

/** The SQLSTATE of an error (or of its `cause`s) that says the store cannot be used as it is, else undefined. */
export function unusableStoreState(error: unknown): string | undefined {
  const code = serverError(error)?.code;
  return code !== undefined && UNUSABLE_STATES.has(code) ? code : undefined;
}
