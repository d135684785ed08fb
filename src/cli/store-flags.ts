import { UsageError } from "../errors.js";
import type { PostgresStore } from "../store/postgres/index.js";
import { schemaNames } from "../store/postgres/names.js";
import { redactConnectionString } from "../store/postgres/redact.js";
import { connectTimeoutOf } from "../store/postgres/timeouts.js";

export interface StoreFlags {
  store?: unknown;
  storeSchema?: unknown;
}

/**
 * The connection string from --store or TASKQ_STORE; a usage error when neither is set,
 * ending in `hint` when given (what the command does without a store).
 */
export function storeUrl(flags: StoreFlags, hint?: string): string {
  const fromFlag = typeof flags.store === "string" && flags.store !== "";
  const url = fromFlag ? (flags.store as string) : process.env.TASKQ_STORE;
  if (url === undefined || url === "") {
    throw new UsageError(`no store: pass --store postgres://user@host/db or set TASKQ_STORE${hint === undefined ? "" : ` (${hint})`}`);
  }
  // The driver would read another scheme's URL (mysql://...) as PostgreSQL's and connect wherever it points.
  if (!POSTGRES_URL.test(url)) {
    throw new UsageError(`the store ${redactConnectionString(url)} is not a PostgreSQL URL: it must start with postgres:// or postgresql://`);
  }
  // A typo in the URL is the user's to fix, as a wrong scheme is: not an unreachable store (exit 1).
  try {
    connectTimeoutOf(url);
  } catch (error) {
    throw new UsageError(`${fromFlag ? "--store" : "TASKQ_STORE"}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return url;
}

/** The schemes the store accepts, as libpq does. */
const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/**
 * The schema from --store-schema or TASKQ_STORE_SCHEMA (empty counts as unset, as for
 * TASKQ_STORE), else `taskq`; a name the store would refuse is a usage error.
 */
export function storeSchema(flags: StoreFlags): string {
  const env = process.env.TASKQ_STORE_SCHEMA;
  const [source, schema] =
    typeof flags.storeSchema === "string" ? ["--store-schema", flags.storeSchema] : ["TASKQ_STORE_SCHEMA", env === undefined || env === "" ? "taskq" : env];
  try {
    schemaNames(schema);
  } catch (error) {
    throw new UsageError(`${source}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return schema;
}

/** Opens the PostgreSQL store (applying migrations); the password never appears in errors. */
export async function openStore(flags: StoreFlags): Promise<PostgresStore> {
  const url = storeUrl(flags);
  const schema = storeSchema(flags);
  const { PostgresStore, redactConnectionString } = await import("../store/postgres/index.js");
  const { TaskqError } = await import("../errors.js");
  try {
    return await PostgresStore.open({ connectionString: url, schema, poolSize: 8 });
  } catch (error) {
    const reason = error instanceof Error ? error.message.replaceAll(url, redactConnectionString(url)) : String(error);
    throw new TaskqError("STORE_UNAVAILABLE", `cannot open the store ${redactConnectionString(url)}: ${reason}`, { exitCode: 1 });
  }
}
