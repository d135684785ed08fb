import type { Server } from "node:http";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricsPort } from "../../src/store/postgres/metrics-server.js";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import type { TaskState } from "../../src/store/postgres/types.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import { schemaNames } from "../../src/store/postgres/names.js";
import { DATABASE_URL, openTestStore, sql, task, transactionCount, waitForRun, workflow } from "./helpers.js";

type Counts = Record<TaskState, number>;

const STATES: TaskState[] = ["blocked", "queued", "running", "succeeded", "failed", "cancelled"];

/** The tasks by state as a count of the whole table says. */
async function countedByTable(store: PostgresStore): Promise<Counts> {
  const rows = await sql<{ state: TaskState; count: number }>(store, "SELECT state, count(*)::int AS count FROM $schema.tasks GROUP BY state");
  return Object.fromEntries(STATES.map((state) => [state, rows.find((row) => row.state === state)?.count ?? 0])) as Counts;
}

/** The taskq_tasks values of a scrape. */
function scraped(text: string): Counts {
  return Object.fromEntries(STATES.map((state) => [state, Number(new RegExp(`^taskq_tasks\\{state="${state}"\\} (\\d+)$`, "m").exec(text)?.[1])])) as Counts;
}

/** The counts count_tasks() gives (as a scrape reads them), and how many rows of the tasks table and its indexes it read for them. */
async function countedByTotals(store: PostgresStore): Promise<{ counts: Counts; tasksRead: number }> {
  // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ state: TaskState; count: number }>(`SELECT state, count::int AS count FROM "${store.schema}".count_tasks()`);
    const counts = Object.fromEntries(STATES.map((state) => [state, rows.find((row) => row.state === state)?.count ?? 0])) as Counts;
    return { counts, tasksRead: await transactionCount(client, "pg_stat_get_xact_tuples_returned", schemaNames(store.schema).tasks) };
  } finally {
    await client.end();
  }
}

describe("taskq_tasks on a large store", () => {
  let store: PostgresStore;
  let close: (() => Promise<void>) | undefined;
  let server: Server;
  let worker: PostgresWorker;
  beforeAll(async () => {
    ({ store, close } = await openTestStore());
    worker = new PostgresWorker({ store, concurrency: 1, handler: async () => undefined });
    server = await worker.serveMetrics(0);
  });
  afterAll(async () => {
    if (server !== undefined) await new Promise((resolve) => server.close(resolve));
    await close?.();
  });

  it("scrapes the exact counts of 200,000 tasks without reading one of them, with changes not yet folded in and once folded", async () => {
    const states = ["succeeded", "succeeded", "succeeded", "failed", "cancelled", "queued", "blocked", "running"];
    await sql(store, "INSERT INTO $schema.runs (id, name, file, state) VALUES ('big', 'big', 'big.yaml', 'running')");
    await sql(
      store,
      `INSERT INTO $schema.tasks (run_id, key, type, run, state)
       SELECT 'big', 't' || i, 'shell', 'true', ($1::text[])[1 + i % $2] FROM generate_series(1, 200000) i`,
      [states, states.length],
    );
    await store.sweepOrphans();
    // Changes after the last fold: a count reads them too.
    await sql(store, "UPDATE $schema.tasks SET state = 'succeeded' WHERE run_id = 'big' AND state = 'queued' AND key LIKE 't1%'");
    await sql(store, "DELETE FROM $schema.tasks WHERE run_id = 'big' AND state = 'failed' AND key LIKE 't2%'");
    const expected = await countedByTable(store);
    expect(Object.values(expected).reduce((a, b) => a + b)).toBeGreaterThan(190_000);

    const text = await (await fetch(`http://127.0.0.1:${metricsPort(server)}/metrics`)).text();
    expect(scraped(text)).toEqual(expected);
    expect(text).toContain("taskq_store_up 1");
    expect(await countedByTotals(store)).toEqual({ counts: expected, tasksRead: 0 });

    // Once folded: the same counts, read from a few small rows rather than every task.
    await store.sweepOrphans();
    expect(await sql(store, "SELECT count(*)::int AS n FROM $schema.task_end_changes")).toEqual([{ n: 0 }]);
    expect(await store.countByState()).toEqual(expected);
    // Read from the totals, not from a single task: a count of the table would read all 200,000.
    expect(await countedByTotals(store)).toEqual({ counts: expected, tasksRead: 0 });
  }, 120_000);
});

describe("taskq_tasks while workers run", () => {
  let store: PostgresStore;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ store, close } = await openTestStore());
  });
  afterAll(async () => close?.());

  it("is the same as a count of the table at every moment, as workers lease, end and sweep tasks", async () => {
    // Fan out, fan in, fan out again: tasks unblocked, leased, ended at once by two workers folding every 50 ms.
    const first = Array.from({ length: 60 }, (_, i) => task(`a${i}`));
    const join = task("join", { dependsOn: first.map((each) => each.id) });
    const last = Array.from({ length: 60 }, (_, i) => task(`b${i}`, { dependsOn: ["join"], ...(i % 7 === 0 ? { run: "exit 1" } : {}) }));
    const runId = await store.submitRun(workflow([...first, join, ...last]));
    const handler = async (leased: { run: string }): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (leased.run === "exit 1") throw new Error("exit 1");
    };
    const workers = [0, 1].map(() => new PostgresWorker({ store, concurrency: 4, sweepMs: 50, handler }));
    await Promise.all(workers.map((each) => each.start()));
    let compared = 0;
    try {
      let done = false;
      const finished = waitForRun(store, runId, 60_000).finally(() => (done = true));
      while (!done) {
        // Both reads in one snapshot: what a count of the table says at that moment.
        const client = await store.pool.connect();
        try {
          await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
          const counted = await client.query<{ state: TaskState; count: number }>(`SELECT state, count(*)::int AS count FROM "${store.schema}".tasks GROUP BY state`);
          const read = await client.query<{ state: TaskState; count: number }>(`SELECT state, count::int AS count FROM "${store.schema}".count_tasks() WHERE count <> 0`);
          await client.query("COMMIT");
          const byState = (rows: { state: TaskState; count: number }[]) => Object.fromEntries(rows.map((row) => [row.state, row.count]));
          expect(byState(read.rows)).toEqual(byState(counted.rows));
          compared++;
        } finally {
          client.release();
        }
      }
      expect((await finished).state).toBe("failed");
    } finally {
      await Promise.all(workers.map((each) => each.stop({ deadlineMs: 1_000 })));
    }
    expect(compared).toBeGreaterThan(10);
    expect(await store.countByState()).toEqual(await countedByTable(store));
  }, 90_000);
});

describe("the changes of state a statement makes", () => {
  let store: PostgresStore;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ store, close } = await openTestStore());
  });
  afterAll(async () => close?.());

  /** The changes not yet folded, each pair of states once, with how many tasks moved between them. */
  const pending = () =>
    sql<{ from: string | null; to: string | null; n: number }>(
      store,
      "SELECT old_state AS from, new_state AS to, sum(n)::int AS n FROM $schema.task_end_changes GROUP BY 1, 2 ORDER BY 1 NULLS FIRST, 2 NULLS FIRST",
    );
  const rows = async () => (await sql<{ n: number }>(store, "SELECT count(*)::int AS n FROM $schema.task_end_changes"))[0]!.n;

  it("are one change row for each pair of states, not one for each task: a submit, a lease, a cancel and a prune of 1,000 tasks, with the counts exact", async () => {
    // Every other task waits on the one before it: 500 queued, 500 blocked, in one submit.
    const tasks = Array.from({ length: 1_000 }, (_, i) => task(`t${i}`, i % 2 === 1 ? { dependsOn: [`t${i - 1}`] } : {}));
    const runId = await store.submitRun(workflow(tasks));
    expect(await rows()).toBe(2);
    expect(await pending()).toEqual([
      { from: null, to: "blocked", n: 500 },
      { from: null, to: "queued", n: 500 },
    ]);
    expect(await store.countByState()).toEqual(await countedByTable(store));

    await store.sweepOrphans();
    expect(await rows()).toBe(0);
    expect(await store.lease("w1", 200, 30_000)).toHaveLength(200);
    expect(await pending()).toEqual([{ from: "queued", to: "running", n: 200 }]);
    // An update that changes no task's state (as a heartbeat's) appends nothing.
    await sql(store, "UPDATE $schema.tasks SET lease_expires_at = now() + interval '1 minute' WHERE state = 'running'");
    expect(await rows()).toBe(1);
    expect(await store.countByState()).toEqual(await countedByTable(store));

    await store.sweepOrphans();
    await store.cancelRun(runId);
    // The running tasks end as their heartbeats would have them: cancelled, in one statement.
    await sql(store, "UPDATE $schema.tasks SET state = 'cancelled', finished_at = now() WHERE state = 'running'");
    expect(await pending()).toEqual([
      { from: "blocked", to: "cancelled", n: 500 },
      { from: "queued", to: "cancelled", n: 300 },
      { from: "running", to: "cancelled", n: 200 },
    ]);
    // A row for each pair of states each statement moved tasks between: a few, however many tasks.
    expect(await rows()).toBeLessThanOrEqual(4);
    const counted = await countedByTable(store);
    expect(counted.cancelled).toBe(1_000);
    expect(await store.countByState()).toEqual(counted);

    await store.sweepOrphans();
    expect(await store.runState(runId)).toBe("cancelled");
    expect((await store.pruneRuns(0)).runs).toEqual([runId]);
    expect(await pending()).toEqual([{ from: "cancelled", to: null, n: 1_000 }]);
    expect(await rows()).toBe(1);
    expect(await store.countByState()).toEqual({ blocked: 0, queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 });
  }, 60_000);
});
