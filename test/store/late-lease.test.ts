import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { DATABASE_URL, openTestStore, sql, task, until, waitForRun, workflow } from "./helpers.js";

// The round trip that leases a task may answer only once the lease has run out on the worker's clock: the
// worker stalled between the commit and its reply (SIGSTOP, a paused VM), or the statement waited on a lock
// for longer than the lease. Another worker may have swept the task and run it meanwhile.
describe("a lease whose round trip took longer than the lease", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("starts nothing: the task is given back uncounted, said so, and the next lease runs it as attempt 1", { timeout: 60_000 }, async () => {
    const { store, schema, close } = await openTestStore();
    cleanups.push(close);
    const events: WorkerEvent[] = [];
    const attempts: number[] = [];
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      leaseMs: 1_000,
      pollMs: 200,
      // No sweep while the test runs (but the first, at start): the lease that ran out is this worker's to give back.
      sweepMs: 600_000,
      onEvent: (event) => events.push(event),
      handler: async (leased) => {
        attempts.push(leased.attempt);
      },
    });
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    cleanups.push(async () => {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
    });
    await worker.start();
    cleanups.push(() => worker.stop());
    // Not due for 2 s: the lock below is taken before the worker leases it.
    const runId = await store.submitRun(workflow([task("late", { delayMs: 2_000 })]));
    await locker.query("BEGIN");
    // The lease's UPDATE records the task's change of state in task_end_changes (an INSERT): it waits for this lock.
    await locker.query(`LOCK TABLE "${schema}".task_end_changes IN SHARE ROW EXCLUSIVE MODE`);
    const waiting = async () => (await sql<{ n: number }>(store, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%complete_and_lease%'"))[0]!.n > 0;
    await until(waiting, 20_000);
    // Held past the lease's second, then let go: the lease commits, and its reply comes too late.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await locker.query("COMMIT");
    const status = await waitForRun(store, runId, 30_000);
    expect(status.state).toBe("succeeded");
    const late = events.find((event) => event.type === "late-lease");
    expect(late).toMatchObject({ type: "late-lease", released: true, leaseMs: 1_000, task: { key: "late", attempt: 1 } });
    expect((late as { roundTripMs: number }).roundTripMs).toBeGreaterThanOrEqual(1_000);
    // Nothing started on the lease that ran out: the one start is the next lease's, after the give-back, as attempt 1.
    const kinds = events.filter((event) => event.type === "late-lease" || event.type === "started").map((event) => event.type);
    expect(kinds).toEqual(["late-lease", "started"]);
    expect(attempts).toEqual([1]);
    const [row] = await sql<{ attempts: number }>(store, `SELECT attempts FROM $schema.tasks WHERE key = 'late'`);
    expect(row!.attempts).toBe(1);
  });

  it("renews at once a lease whose round trip took most of it, so the task runs on past what was left of it", { timeout: 60_000 }, async () => {
    const { store, schema, close } = await openTestStore();
    cleanups.push(close);
    const events: WorkerEvent[] = [];
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      leaseMs: 3_000,
      pollMs: 200,
      sweepMs: 600_000,
      onEvent: (event) => events.push(event),
      // Runs past what the slow round trip left of the lease (and past a heartbeat's interval, 1 s).
      handler: () => new Promise((resolve) => setTimeout(resolve, 1_500)),
    });
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    cleanups.push(async () => {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
    });
    await worker.start();
    cleanups.push(() => worker.stop());
    const runId = await store.submitRun(workflow([task("slow-lease", { delayMs: 2_000 })]));
    await locker.query("BEGIN");
    await locker.query(`LOCK TABLE "${schema}".task_end_changes IN SHARE ROW EXCLUSIVE MODE`);
    const waiting = async () => (await sql<{ n: number }>(store, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%complete_and_lease%'"))[0]!.n > 0;
    await until(waiting, 20_000);
    // 2.2 of the lease's 3 s gone before the reply: under the 1 s a first renewal used to wait for.
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    await locker.query("COMMIT");
    const status = await waitForRun(store, runId, 30_000);
    expect(events.filter((event) => event.type === "lease-lost" || event.type === "late-lease")).toEqual([]);
    expect(status.state).toBe("succeeded");
    expect(events.filter((event) => event.type === "started")).toHaveLength(1);
  });
});
