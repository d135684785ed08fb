import { TaskqError, UsageError } from "../errors.js";
import type { PostgresStore } from "../store/postgres/index.js";
import { schemaNames } from "../store/postgres/names.js";
import { redactConnectionString } from "../store/postgres/redact.js";
import { connectTimeoutOf } from "../store/postgres/timeouts.js";
import { sslModeProblem } from "../store/postgres/ssl-mode.js";
import { openUnlessStopped } from "./opening-stopped.js";

export interface StoreFlags {
  store?: unknown;
  storeSchema?: unknown;
}

/**
 * The connection string from --store or TASKQ_STORE; a usage error when neither is set,
 * ending in `hint` when given (what the command does without a store).
 */
export function storeUrl(flags: StoreFlags, hint?: string): string {
  // An empty flag (an unset variable: --store "$DB") is not "use TASKQ_STORE": the flag wins, and
  // it names no store. (`run --store ''` runs locally, and never gets here.)
  if (flags.store === "") {
    throw new UsageError(`--store is empty: pass --store postgres://user@host/db, or leave it out to use TASKQ_STORE${hint === undefined ? "" : ` (${hint})`}`);
  }
  const fromFlag = urlSource(flags) === "--store";
  const url = fromFlag ? (flags.store as string) : process.env.TASKQ_STORE;
  if (url === undefined || url === "") {
    throw new UsageError(`no store: pass --store postgres://user@host/db or set TASKQ_STORE${hint === undefined ? "" : ` (${hint})`}`);
  }
  // The driver would read another scheme's URL (mysql://...) as PostgreSQL's and connect wherever it points.
  if (!POSTGRES_URL.test(url)) {
    // Whitespace before the scheme (a value pasted with it) does not show in the URL as printed, which URL trims.
    const [, space, scheme] = /^(\s+)(postgres(?:ql)?:\/\/)/i.exec(url) ?? [];
    const why = space === undefined ? "it must start with postgres:// or postgresql://" : `it starts with whitespace (${JSON.stringify(space)}) before its ${scheme!}; remove it`;
    throw new UsageError(`the store ${redactConnectionString(url)} is not a PostgreSQL URL: ${why}`);
  }
  // A typo in the URL is the user's to fix, as a wrong scheme is: not an unreachable store (exit 1).
  // Checked here, not only when the driver reads it, so that `run --dry-run` is refused it too.
  if (!driverReadsUrl(url)) throw new UsageError(`${fromFlag ? "--store" : "TASKQ_STORE"}: ${redactConnectionString(url)} is not a valid URL`);
  try {
    connectTimeoutOf(url);
  } catch (error) {
    throw new UsageError(`${fromFlag ? "--store" : "TASKQ_STORE"}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const sslProblem = sslModeProblem(url);
  if (sslProblem !== undefined) throw new UsageError(`${fromFlag ? "--store" : "TASKQ_STORE"}: ${sslProblem}`);
  return url;
}

/**
 * Whether the driver (pg-connection-string) can read `url`: it encodes spaces and stray `%`,
 * then reads it with URL, or again with a placeholder host where none is given
 * (`postgres://u@/db`). A port out of range or an unclosed `[` (`postgres://u@[::1:5432/db`)
 * it cannot read.
 */
function driverReadsUrl(url: string): boolean {
  try {
    const encoded = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(url) ? encodeURI(url).replace(/%25(\d\d)/g, "%$1") : url;
    return URL.canParse(encoded, "postgres://base") || URL.canParse(encoded.replace("@/", "@___DUMMY___/"), "postgres://base");
  } catch {
    return false; // encodeURI's URIError: a lone surrogate, which the driver cannot read either
  }
}

/** Where the connection string comes from: the flag (given), else the variable. */
function urlSource(flags: StoreFlags): "--store" | "TASKQ_STORE" {
  return typeof flags.store === "string" ? "--store" : "TASKQ_STORE";
}

/** The schemes the store accepts, as libpq does. */
const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/**
 * The schema from --store-schema or TASKQ_STORE_SCHEMA (empty counts as unset, as for
 * TASKQ_STORE), else `taskq`; a name the store would refuse is a usage error.
 */
export function storeSchema(flags: StoreFlags): string {
  const source = schemaSource(flags);
  const schema = source === "--store-schema" ? (flags.storeSchema as string) : source === "TASKQ_STORE_SCHEMA" ? process.env.TASKQ_STORE_SCHEMA! : "taskq";
  try {
    schemaNames(schema);
  } catch (error) {
    throw new UsageError(`${source}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return schema;
}

/** `schema "x" (the default)`, `schema "x" (given by TASKQ_STORE_SCHEMA)`: the schema a command looked in, and where its name came from. */
export function schemaWords(flags: StoreFlags, schema: string): string {
  const source = schemaSource(flags);
  return `schema ${JSON.stringify(schema)} (${source === undefined ? "the default" : `given by ${source}`})`;
}

/** Where the schema's name comes from: the flag, the variable (set and not empty), or neither (the default). */
function schemaSource(flags: StoreFlags): "--store-schema" | "TASKQ_STORE_SCHEMA" | undefined {
  if (typeof flags.storeSchema === "string") return "--store-schema";
  const env = process.env.TASKQ_STORE_SCHEMA;
  return env === undefined || env === "" ? undefined : "TASKQ_STORE_SCHEMA";
}

/**
 * How long the commands that read or change a run once (submit, status, cancel, dead-letters, redrive,
 * prune, and `run --store` for its submit, its run's state, summary and cancel) go on trying through connections refused
 * or dropped once the store is open: a database restarting, a failover, a backend terminated. A
 * `cancel` that died of it would leave a CI job unsure whether the run was cancelled, and a `run
 * --store` whose run succeeded would exit 1 for want of its summary. As long as connecting may take, by default.
 */
export const RETRY_DROPPED_MS = 10_000;

export interface StoreOpenOptions {
  create?: boolean;
  retryDroppedMs?: number;
  /** What `pg_stat_activity` names the command's connections (`taskq status <run>`), unless the user names them (see PostgresStoreOptions). */
  applicationName?: string;
  /**
   * For a command a signal stops while it opens the store (submit, run --store, worker: see openUnlessStopped), what it
   * has then not done, in its words: "nothing was submitted", "nothing was leased".
   */
  undoneIfStopped?: string;
  /** A command that runs tasks (worker, run --store): the worker's modules (prom-client) are loaded first, so that one missing is said before the store is opened, or made. */
  runsTasks?: boolean;
  /**
   * The command says itself that a newer taskq migrated the store (newerStoreNote), where its other notes go: with
   * `--output json`, a `note` record among its records. Otherwise it is said here, on stderr.
   */
  saysNewer?: boolean;
}

/**
 * Opens the PostgreSQL store (applying migrations); the password never appears in errors.
 * `create: false` for the commands that read or change what was submitted (status, cancel,
 * dead-letters, redrive, prune): a schema without a store is an error that names it, not a
 * new empty store.
 */
export function openStore(flags: StoreFlags, options: StoreOpenOptions = {}): Promise<PostgresStore> {
  const undone = options.undoneIfStopped;
  return undone === undefined ? openStoreNow(flags, options) : openUnlessStopped(() => openStoreNow(flags, options), undone);
}

async function openStoreNow(flags: StoreFlags, options: StoreOpenOptions): Promise<PostgresStore> {
  const url = storeUrl(flags);
  const schema = storeSchema(flags);
  // Not through store/postgres/index.js, which loads the worker and its metrics (prom-client), but for a command
  // that runs tasks: status, cancel... need neither.
  const load = options.runsTasks === true ? import("../store/postgres/index.js") : import("../store/postgres/store.js");
  const { PostgresStore } = await load.catch((error: unknown) => {
    // An install without the durable mode's packages (pruned, or copied without node_modules).
    const missing = /Cannot find (?:module|package) '(pg|prom-client)'/.exec(error instanceof Error ? error.message : "")?.[1];
    if (missing === undefined) throw error;
    throw new TaskqError("STORE_UNAVAILABLE", `the durable mode needs the package ${missing}, which is not installed where taskq is: run npm install in taskq's folder (or npm install ${missing})`, { cause: error });
  });
  try {
    const store = await PostgresStore.open({
      connectionString: url,
      schema,
      poolSize: 8,
      create: options.create ?? true,
      retryDroppedMs: options.retryDroppedMs ?? 0,
      ...(options.applicationName === undefined ? {} : { applicationName: options.applicationName }),
    });
    if (store.newer !== undefined && options.saysNewer !== true) process.stderr.write(`taskq: ${newerStoreWarning(store.description, schema, store.newer)}\n`);
    return store;
  } catch (error) {
    if (error instanceof TaskqError && error.code === "STORE_NOT_FOUND") {
      const message = error.message.replace(/schema "[^"]*"/, schemaWords(flags, schema));
      throw new TaskqError("STORE_NOT_FOUND", `${redactConnectionString(url)}: ${message}; submit, worker and run --store make one`, { cause: error });
    }
    // A URL the driver cannot read (postgres://u@[::1:5432/db) is the user's to fix, as a wrong scheme is.
    const cause: unknown = error instanceof TaskqError ? error.cause : error;
    if ((cause as { code?: unknown } | undefined)?.code === "ERR_INVALID_URL") {
      throw new UsageError(`${urlSource(flags)}: ${redactConnectionString(url)} is not a valid URL`, { cause: error });
    }
    const reason = error instanceof Error ? error.message.replaceAll(url, redactConnectionString(url)) : String(error);
    throw new TaskqError("STORE_UNAVAILABLE", `cannot open the store ${redactConnectionString(url)}: ${noPasswordGiven(cause, url, flags) ?? reason}`, { exitCode: 1 });
  }
}

/**
 * The line every command opening a store that a newer taskq migrated writes on stderr (a rolling upgrade: workers of
 * this version go on with it, as they must, but its operator is told this machine's taskq is the older one).
 */
function newerStoreWarning(description: string, schema: string, newer: { migration: number; known: number }): string {
  return `the store ${description} (schema "${schema}") was migrated by a newer taskq (migration ${newer.migration}; this taskq knows up to ${newer.known}): upgrade taskq on this machine`;
}

/**
 * That warning as a JSON `note` record's fields (for a command whose `--output json` notes are records: submit, worker,
 * run --store): `code` STORE_NEWER, the message, and the store's newest migration and this taskq's, for a script to
 * read without parsing the words. Undefined where the store is not ahead of this taskq.
 */
export function newerStoreNote(store: Pick<PostgresStore, "description" | "schema" | "newer">): { code: "STORE_NEWER"; message: string; migration: number; knownMigration: number } | undefined {
  const { newer } = store;
  if (newer === undefined) return undefined;
  return { code: "STORE_NEWER", message: newerStoreWarning(store.description, store.schema, newer), migration: newer.migration, knownMigration: newer.known };
}

/**
 * What a command that found no store in its schema and made one says (`what`: what it did then, "this worker made an empty
 * one; ..."): runs submitted to that schema meet only the workers given it, and runs elsewhere none of its, so a mistyped
 * TASKQ_STORE_SCHEMA is seen at once, with the schema meant where the database holds a store named almost so, and `undo`
 * after it there (how to take back what was done). Undefined where the store was there.
 */
export function madeStoreNote(store: Pick<PostgresStore, "schema" | "made" | "madeBeside">, what: string, undo = ""): string | undefined {
  if (!store.made) return undefined;
  const meant = store.madeBeside === undefined ? "" : ` (schema ${JSON.stringify(store.madeBeside)} holds one: did you mean it?${undo})`;
  return `schema ${JSON.stringify(store.schema)} had no taskq store: ${what}${meant}`;
}

/**
 * A server that asks for a password when none was given (in the URL or PGPASSWORD) is refused in
 * words that do not say so: the driver's "SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must
 * be a string" (SCRAM, PostgreSQL's default since 14), the server's "empty password returned by
 * client" or "password authentication failed for user ..." (28P01). Said plainly, with where a
 * password goes; undefined for any other error, or when a password was given.
 */
function noPasswordGiven(cause: unknown, url: string, flags: StoreFlags): string | undefined {
  if ((process.env.PGPASSWORD ?? "") !== "") return undefined;
  try {
    const parsed = new URL(url);
    if (parsed.password !== "" || (parsed.searchParams.get("password") ?? "") !== "") return undefined;
  } catch {
    return undefined;
  }
  const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
  const scram = typeof message === "string" && message.includes("client password must be a string");
  if (!scram && code !== "28P01") return undefined;
  return `connect failed: the server asks for a password, and none was given: put it in the URL of ${urlSource(flags)} (postgres://USER:PASSWORD@HOST/DB) or in PGPASSWORD`;
}
