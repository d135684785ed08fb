import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import type { Workflow, WorkflowTask } from "../../src/store/postgres/types.js";

export const DATABASE_URL = process.env.TASKQ_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** DATABASE_URL as another role (the test database trusts local connections). */
export function urlAs(role: string): string {
  const url = new URL(DATABASE_URL);
  url.username = role;
  url.password = "";
  return url.toString();
}

/** A schema name of its own for one test file. */
export function uniqueSchema(): string {
  return `taskq_test_${randomBytes(4).toString("hex")}`;
}

/** A pool that ignores errors of idle clients (tests terminate backends on purpose); on DATABASE_URL's database, or `url`'s. */
export function createPool(max = 10, url = DATABASE_URL): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("error", () => undefined);
  return pool;
}

export async function dropSchema(schema: string, url = DATABASE_URL): Promise<void> {
  const pool = createPool(1, url);
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}

/** A store on a fresh schema, migrated, in DATABASE_URL's database or `url`'s; `close` drops the schema. */
export async function openTestStore(options: { random?: () => number; url?: string } = {}): Promise<{
  store: PostgresStore;
  schema: string;
  close: () => Promise<void>;
}> {
  const { url = DATABASE_URL, ...storeOptions } = options;
  const schema = uniqueSchema();
  const store = await PostgresStore.open({ connectionString: url, schema, ...storeOptions });
  return {
    store,
    schema,
    close: async () => {
      await store.close();
      await dropSchema(schema, url);
    },
  };
}

/**
 * A database of its own on DATABASE_URL's server, made from template0 (which no one connects to,
 * so two made at once do not fail), and its URL; `drop` drops it, whoever is still connected.
 * For tests that count the rows a statement reads: a transaction open in another database (a test
 * file beside this one) does not keep VACUUM from removing this one's deleted rows, nor scans from
 * reading their index entries, as one in the same database does.
 */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `taskq_test_${randomBytes(4).toString("hex")}`;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}" TEMPLATE template0`);
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** A workflow task with defaults: no retries, no dependencies. */
export function task(id: string, overrides: Partial<WorkflowTask> = {}): WorkflowTask {
  return {
    id,
    type: "shell",
    run: `echo ${id}`,
    priority: "normal",
    retries: 0,
    backoff: { baseMs: 10, maxMs: 100 },
    env: {},
    cwd: ".",
    dependsOn: [],
    ...overrides,
  };
}

export function workflow(tasks: WorkflowTask[], name = "test"): Workflow {
  return { file: `${name}.yaml`, folder: process.cwd(), name, tasks, notes: [] };
}

/** Leases everything runnable now (single worker), sorted as leased. */
export async function leaseAll(store: PostgresStore, leaseMs = 30_000, workerId = "w1") {
  return store.lease(workerId, 1000, leaseMs);
}

/** Direct SQL on the test schema, for setting up and checking rows. */
export async function sql<T extends pg.QueryResultRow>(store: PostgresStore, text: string, values: unknown[] = []): Promise<T[]> {
  const result = await store.pool.query<T>(text.replaceAll("$schema", `"${store.schema}"`), values);
  return result.rows;
}

/** Polls until the run is no longer running; returns its final status. */
export async function waitForRun(store: PostgresStore, runId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await store.runStatus(runId);
    if (status.state !== "running") return status;
    if (Date.now() > deadline) throw new Error(`run ${runId} still running: ${JSON.stringify(status.counts)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Resolves when `predicate` holds, polling every 10 ms. */
export async function until(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * What `counter` (a pg_stat_get_xact_* function) says the open transaction on `client` did to `table` and
 * its indexes. On a connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier
 * ones on its connection did.
 */
export async function transactionCount(client: pg.Client, counter: "pg_stat_get_xact_numscans" | "pg_stat_get_xact_tuples_returned", table: string): Promise<number> {
  const result = await client.query<{ n: string }>(
    `SELECT sum(${counter}(oid)) AS n FROM pg_class
      WHERE oid = $1::regclass OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = $1::regclass)`,
    [table],
  );
  return Number(result.rows[0]!.n);
}

/**
 * For a describe block: a store on a schema of its own, opened before its tests and dropped after them, its runs
 * deleted before each test. `store` is read once the block's tests run.
 */
export function useStoreSchema(): { readonly store: PostgresStore; readonly schema: string } {
  const schema = uniqueSchema();
  let opened: PostgresStore | undefined;
  beforeAll(async () => {
    opened = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
  });
  afterAll(async () => {
    // Unset when beforeAll failed (no database): that failure shows alone, nothing was made to drop.
    if (opened === undefined) return;
    await opened.close();
    await dropSchema(schema);
  });
  beforeEach(async () => {
    await sql(opened!, "DELETE FROM $schema.runs");
  });
  return {
    schema,
    get store(): PostgresStore {
      if (opened === undefined) throw new Error("the store is opened before the block's tests");
      return opened;
    },
  };
}
