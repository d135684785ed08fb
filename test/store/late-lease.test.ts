import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { TaskHandler, WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { DATABASE_URL, openTestStore, sql, task, until, waitForRun, workflow } from "./helpers.js";

// The round trip that leases a task may answer only once the lease has run out on the worker's clock: the
// worker stalled between the commit and its reply (SIGSTOP, a paused VM), or the statement waited on a lock
// for longer than the lease. Another worker may have swept the task and run it meanwhile.
describe("a lease whose round trip took longer than the lease", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * A worker on a store of its own, and a run of one task `id`, due in 2 s: the round trip that leases it
   * waits on a lock held for `holdMs` from when it starts waiting. Resolves once the run has ended.
   */
  async function leaseHeldBack(options: { id: string; leaseMs: number; holdMs: number; handler: TaskHandler }) {
    const { store, schema, close } = await openTestStore();
    cleanups.push(close);
    const events: WorkerEvent[] = [];
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      leaseMs: options.leaseMs,
      pollMs: 200,
      // No periodic sweep while the test runs (but the first, at start): a lease that ran out is this worker's to give back.
      sweepMs: 600_000,
      onEvent: (event) => events.push(event),
      handler: options.handler,
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
    const runId = await store.submitRun(workflow([task(options.id, { delayMs: 2_000 })]));
    await locker.query("BEGIN");
    // The lease's UPDATE records the task's change of state in task_end_changes (an INSERT): it waits for this lock.
    await locker.query(`LOCK TABLE "${schema}".task_end_changes IN SHARE ROW EXCLUSIVE MODE`);
    // This worker's lease: another test's worker, on the same server, may be waiting on a lock of its own schema.
    const waiting = async () =>
      (await sql<{ n: number }>(store, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%complete_and_lease%' AND strpos(query, $1) > 0", [`"${schema}".`]))[0]!.n > 0;
    await until(waiting, 20_000);
    await new Promise((resolve) => setTimeout(resolve, options.holdMs));
    await locker.query("COMMIT");
    const status = await waitForRun(store, runId, 30_000);
    return { store, events, status };
  }

  it("starts nothing: the task is given back uncounted, said so, and the next lease runs it as attempt 1", { timeout: 60_000 }, async () => {
    const attempts: number[] = [];
    // Held past the lease's second: the lease commits, and its reply comes too late.
    const { store, events, status } = await leaseHeldBack({
      id: "late",
      leaseMs: 1_000,
      holdMs: 1_500,
      handler: async (leased) => {
        attempts.push(leased.attempt);
      },
    });
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
    // 2.2 of the lease's 3 s gone before the reply: under the 1 s a first renewal used to wait for. The task
    // runs past what was left of the lease (and past a heartbeat's interval).
    const { events, status } = await leaseHeldBack({
      id: "slow-lease",
      leaseMs: 3_000,
      holdMs: 2_200,
      handler: () => new Promise((resolve) => setTimeout(resolve, 1_500)),
    });
    expect(events.filter((event) => event.type === "lease-lost" || event.type === "late-lease")).toEqual([]);
    expect(status.state).toBe("succeeded");
    expect(events.filter((event) => event.type === "started")).toHaveLength(1);
  });
});
