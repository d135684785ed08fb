import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { startFreezableProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL, sql, task, until, useStoreSchema, waitForRun, workflow } from "./helpers.js";

describe("a lease that ended before the worker heard of it", () => {
  const own = useStoreSchema();
  const { schema } = own;

  /** A store that reaches the database through a proxy, and the hold on its next renewal. */
  const throughProxy = async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    const slow = await PostgresStore.open({ connectionString: proxy.url(DATABASE_URL), schema });
    return { proxy, slow, hold: proxy.holdNext("taskq_heartbeat") };
  };

  it("finds the lease gone and is not taken for a lease lost: the success stands, and the worker goes on to the next task", async () => {
    const { store } = own;
    // The worker reaches the database through a proxy that holds a renewal back (a slow network, a reconnect)
    // until the attempt's success has committed, on another connection: the renewal then finds no lease.
    const { proxy, slow, hold } = await throughProxy();
    const events: WorkerEvent[] = [];
    const worker = new PostgresWorker({
      store: slow,
      concurrency: 1,
      leaseMs: 1_500,
      pollMs: 200,
      onEvent: (event) => events.push(event),
      // The first task ends once its first renewal is on its way, held; the others at once.
      handler: async (leased) => {
        if (leased.key === "first") await hold.held;
      },
    });
    await worker.start();
    try {
      const first = await store.submitRun(workflow([task("first")]));
      await until(() => events.some((event) => event.type === "finished"));
      hold.release();
      expect((await waitForRun(store, first, 10_000)).state).toBe("succeeded");
      // The renewal's answer (no row: the lease ended with the success) has come back by the time a later task ends.
      const second = await store.submitRun(workflow([task("second")]));
      expect((await waitForRun(store, second, 10_000)).state).toBe("succeeded");
      await until(() => events.filter((event) => event.type === "finished").length === 2);
      expect(events.filter((event) => event.type === "lease-lost" || event.type === "stopped")).toEqual([]);
      const finished = events.flatMap((event) => (event.type === "finished" ? [[event.task.key, event.result === false ? "stale" : event.result.state]] : []));
      expect(finished).toEqual([
        ["first", "succeeded"],
        ["second", "succeeded"],
      ]);
    } finally {
      hold.release();
      await worker.stop({ deadlineMs: 1_000 });
      await slow.close();
      await proxy.close();
    }
  });
  it("a renewal sent while the task ran, that reaches the database after its end's record, does not wait on that record's lock (holding a renewal connection other tasks' leases need)", { timeout: 60_000 }, async () => {
    const { store } = own;
    // The renewal is held on its way (a slow network, a renewal pool busy with others) while the task fails; recording the
    // failure locks the task's row, then waits on its dependent's, which another session holds (as a cascade to many).
    const { proxy, slow, hold } = await throughProxy();
    const events: WorkerEvent[] = [];
    let failed = false;
    const worker = new PostgresWorker({
      store: slow,
      concurrency: 1,
      leaseMs: 6_000,
      pollMs: 200,
      onEvent: (event) => events.push(event),
      // It fails once its first renewal is on its way, held.
      handler: async () => {
        await hold.held;
        failed = true;
        throw new Error("boom");
      },
    });
    const holder = new pg.Client({ connectionString: DATABASE_URL, application_name: "row-holder" });
    await holder.connect();
    try {
      const runId = await store.submitRun(workflow([task("f"), task("d", { dependsOn: ["f"] })]));
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${schema}".tasks WHERE run_id = $1 AND key = 'd' FOR UPDATE`, [runId]);
      await worker.start();
      await until(() => failed, 15_000);
      // The record's moment to lock the row (it is sent at once), then the renewal goes on.
      await new Promise((resolve) => setTimeout(resolve, 500));
      hold.release();
      /** Sessions of the worker's store waiting on a lock, by what they wait in: the renewal's UPDATE, or the record's. */
      const waiting = async () =>
        (
          await store.pool.query<{ renewal: boolean }>(
            "SELECT query LIKE '%lease_expires_at = now()%' AS renewal FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name <> 'row-holder' AND query LIKE $1",
            [`%"${schema}"%`],
          )
        ).rows.map((row) => (row.renewal ? "renewal" : "record"));
      // The record waits on the dependent's row; the renewal, answered, does not wait behind it.
      await until(async () => (await waiting()).includes("record"), 15_000);
      const seen = new Set<string>();
      for (let i = 0; i < 15; i++) {
        for (const what of await waiting()) seen.add(what);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Before, the renewal reached the row after the record had locked it, and waited there as long as its lease had left.
      expect([...seen]).toEqual(["record"]);
      await holder.query("ROLLBACK");
      expect((await waitForRun(store, runId, 15_000)).state).toBe("failed");
      expect(events.filter((event) => event.type === "lease-lost")).toEqual([]);
    } finally {
      hold.release();
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
      await worker.stop({ deadlineMs: 1_000 });
      await slow.close();
      await proxy.close();
    }
  });

  it("a renewal held up for longer than a heartbeat does not hold up the record of the attempt's end: it is recorded, and its dependent runs, while the renewal is still held", { timeout: 60_000 }, async () => {
    const { store } = own;
    // The task ends once its first renewal is on its way, held (a connection that stalled), and the hold is not let go
    // until the test ends. The record waits for that renewal a heartbeat at most: here half a second, of a lease of two
    // minutes, which the renewal (waited for without that bound) would have had to answer in.
    const { proxy, slow, hold } = await throughProxy();
    const events: WorkerEvent[] = [];
    const worker = new PostgresWorker({
      store: slow,
      concurrency: 1,
      leaseMs: 120_000,
      heartbeatMs: 500,
      pollMs: 200,
      onEvent: (event) => events.push(event),
      handler: async (leased) => {
        if (leased.key === "first") await hold.held;
      },
    });
    await worker.start();
    try {
      const runId = await store.submitRun(workflow([task("first"), task("then", { dependsOn: ["first"] })]));
      await hold.held;
      // Well within the renewal's two minutes: before the cap, the record waited out all of them.
      await until(() => events.some((event) => event.type === "finished" && event.task.key === "then"), 30_000);
      expect((await waitForRun(store, runId, 10_000)).state).toBe("succeeded");
      const finished = events.flatMap((event) => (event.type === "finished" ? [[event.task.key, event.result === false ? "stale" : event.result.state]] : []));
      expect(finished).toEqual([
        ["first", "succeeded"],
        ["then", "succeeded"],
      ]);
      // The renewal is still held, unanswered: it neither failed nor lost the lease.
      expect(events.filter((event) => event.type === "lease-lost" || event.type === "db-error")).toEqual([]);
    } finally {
      hold.release();
      await worker.stop({ deadlineMs: 1_000 });
      await slow.close();
      await proxy.close();
    }
  });

  it("a worker that stalled past its lease, whose stale success's round trip leased the same task again, keeps that new attempt: stopped, it is given back, not counted", async () => {
    const { store } = own;
    const events: WorkerEvent[] = [];
    let endFirst: () => void = () => undefined;
    const firstEnds = new Promise<void>((resolve) => (endFirst = resolve));
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      leaseMs: 30_000,
      pollMs: 200,
      onEvent: (event) => events.push(event),
      // Attempt 1 ends when the test says; attempt 2 runs until it is stopped.
      handler: async (_leased, { attempt, signal }) => {
        if (attempt === 1) return firstEnds;
        await new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }));
      },
    });
    await worker.start();
    try {
      const runId = await store.submitRun(workflow([task("t", { retries: 2 })]));
      await until(() => events.some((event) => event.type === "started"));
      // As after a stall past the lease: it ran out, and another worker's sweep queued the task again (attempt 1 counted).
      await sql(store, "UPDATE $schema.tasks SET lease_expires_at = now() - interval '1 second' WHERE run_id = $1", [runId]);
      // This sweep, or the worker's own first one where a loaded machine held that back until now.
      const sweptByWorker = () => events.filter((event) => event.type === "orphans-recovered").length;
      const sweptByTest = await store.sweepOrphans();
      await until(() => sweptByTest + sweptByWorker() >= 1);
      expect(sweptByTest + sweptByWorker()).toBe(1);
      // Its success is stale now; the round trip that says so leases the task again, attempt 2, which starts.
      endFirst();
      await until(() => events.some((event) => event.type === "started" && event.task.attempt === 2));
      await until(() => events.some((event) => event.type === "stopping"));
      await worker.stop({ deadlineMs: 0 });
      // Attempt 2 was stopped and given back, uncounted: queued with attempt 1 used, no lease held.
      const [row] = await sql<{ state: string; attempts: number; lease_token: string | null }>(store, "SELECT state, attempts, lease_token FROM $schema.tasks WHERE run_id = $1", [runId]);
      expect(row).toEqual({ state: "queued", attempts: 1, lease_token: null });
      expect(events.some((event) => event.type === "released" && event.task.attempt === 2)).toBe(true);
    } finally {
      endFirst();
      await worker.stop({ deadlineMs: 0 });
    }
  });
});
