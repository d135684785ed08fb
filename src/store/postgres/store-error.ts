import { TaskqError } from "../../errors.js";
import { describeTimeout, type Timeouts } from "./timeouts.js";
import { isTransientError } from "./transient.js";

/**
 * Codes of the errors the store throws:
 * - STORE_UNAVAILABLE: the database could not be reached or dropped the connection; retrying may work.
 * - STORE_QUERY_FAILED: the database refused a statement (a bug, or a schema from another version).
 * - STORE_LOCKED: a command could not get a lock another session held, tried a few times; it changed nothing.
 * - STORE_BAD_SCHEMA, STORE_BAD_URL, STORE_UNKNOWN_DEPENDENCY, STORE_DUPLICATE_TASK, STORE_NOT_FOUND,
 *   STORE_NOT_REDRIVABLE, STORE_OTHER_FILE (a run id submitted again with another workflow file), STORE_RUN_ID_CASE (a new
 *   run id that a stored run's is but for case, which would share its log folders), INVALID_RUN_ID (a
 *   run id no run can have, `../x`; the CLI refuses it as a usage error before it opens the store): the request itself is wrong.
 * - LEASE_RAN_OUT: a lease renewal given a time limit (RenewOptions.timeoutMs, what was left of the lease) got its connection
 *   only once that time was up, and was not sent (RenewalUnsentError); nothing was changed. Never surfaced: the worker's
 *   attempt drops it, as its lease watch, due by then, says why the lease ran out (LeaseLost "queued", naming the session
 *   whose locks the renewals ahead of it waited on), so no line, record or exit of a command carries this code.
 */
export type StoreErrorCode =
  | "STORE_UNAVAILABLE"
  | "STORE_QUERY_FAILED"
  | "STORE_LOCKED"
  | "STORE_BAD_SCHEMA"
  | "STORE_BAD_URL"
  | "STORE_UNKNOWN_DEPENDENCY"
  | "STORE_DUPLICATE_TASK"
  | "STORE_NOT_FOUND"
  | "STORE_NOT_REDRIVABLE"
  | "STORE_OTHER_FILE"
  | "STORE_RUN_ID_CASE"
  | "INVALID_RUN_ID"
  | "LEASE_RAN_OUT";

/** A run id no run in the store has (STORE_NOT_FOUND): a command may say where it looked. */
export class RunNotFoundError extends TaskqError {
  readonly runId: string;
  constructor(runId: string) {
    super("STORE_NOT_FOUND", `no run "${runId}"`);
    this.runId = runId;
  }
}

/**
 * Wraps a driver error in a TaskqError with a stable code; TaskqErrors pass through.
 * A time limit reached (see timeouts.ts) is said in words, with the limit.
 */
export function toStoreError(operation: string, error: unknown, timeouts?: Timeouts, schema?: string): TaskqError {
  if (error instanceof TaskqError) return error;
  const message = (timeouts === undefined ? undefined : describeTimeout(error, timeouts)) ?? (error instanceof Error ? error.message : String(error));
  const code: StoreErrorCode = isTransientError(error) ? "STORE_UNAVAILABLE" : "STORE_QUERY_FAILED";
  return new TaskqError(code, `${operation} failed: ${message}${readOnlyHint(error)}${notWholeHint(error, schema)}`, { cause: error });
}

/** SQLSTATEs of a table, and of a function, not there. */
const UNDEFINED_TABLE = "42P01";
const UNDEFINED_FUNCTION = "42883";

/**
 * A table or function of the store's own schema not there, in a schema whose migrations say it was made: someone
 * dropped it (a cleanup, a restore of part of the database). No migration makes it again, as they are recorded as
 * applied, and the server's words ("relation "taskq.tasks" does not exist") read as if taskq had never made it.
 */
function notWholeHint(error: unknown, schema: string | undefined): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (schema === undefined || (code !== UNDEFINED_TABLE && code !== UNDEFINED_FUNCTION) || typeof message !== "string") return "";
  // Its own objects only: "relation "taskq.tasks"", "function taskq.complete_and_lease_v7(...)".
  if (!message.includes(`"${schema}.`) && !message.includes(` ${schema}.`)) return "";
  return (
    ` (schema "${schema}" no longer holds a whole taskq store: part or all of it was dropped after it was made, and no migration makes that again;` +
    ` restore the schema from a backup, or drop it (DROP SCHEMA "${schema}" CASCADE, its runs lost) for submit, worker or run --store to make a new one)`
  );
}

/** SQLSTATE of "cannot execute UPDATE in a read-only transaction". */
const READ_ONLY_SQL_TRANSACTION = "25006";

/**
 * A database that refuses to write (25006) is ridden out as a failover's demoted primary, read-only until
 * its clients reach the new one; one that goes on refusing is likely a standby the URL names. Its words
 * ("cannot execute UPDATE in a read-only transaction") say neither.
 */
function readOnlyHint(error: unknown): string {
  if ((error as { code?: unknown } | null)?.code !== READ_ONLY_SQL_TRANSACTION) return "";
  return " (the database is read-only: a primary demoted in a failover is, until its clients reach the new one; if it goes on, TASKQ_STORE or --store may name a standby, not the primary)";
}
