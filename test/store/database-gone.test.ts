import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { createTestDatabase, DATABASE_URL, task, until, workflow } from "./helpers.js";

describe("PostgresWorker whose database is dropped under it", () => {
  it("names, as it stops, a task it stopped as the database went, also one whose handler ended before the stop was called", { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    const store = await PostgresStore.open({ connectionString: database.url, schema: "gone" });
    const events: WorkerEvent[] = [];
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      leaseMs: 5_000,
      pollMs: 200,
      // Ends at once when aborted: its attempt is over (and its lease could not be given back) before the stop is called.
      handler: (_task, context) => new Promise<void>((_resolve, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason as Error), { once: true })),
      onEvent: (event) => events.push(event),
    });
    try {
      const runId = await store.submitRun(workflow([task("long")]));
      await worker.start();
      await until(() => events.some((event) => event.type === "started"), 15_000);
      await database.drop();
      await until(() => events.some((event) => event.type === "database-gone"), 20_000);
      await until(() => worker.runningTasks.length === 0, 10_000);
      await worker.stop({ deadlineMs: 1_000 });
      const left = events.find((event) => event.type === "leases-left");
      // Before, the task was named nowhere: its attempt had left the running ones by the time the stop looked.
      expect(left).toMatchObject({ databaseGone: true, tasks: [{ runId, key: "long" }] });
    } finally {
      await worker.stop({ deadlineMs: 0 });
      await store.close();
      await database.drop();
    }
  });

  it("a busy worker (every slot running a long task) with a long lease learns its database is gone before any heartbeat or sweep is due, and stops its tasks", { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    const store = await PostgresStore.open({ connectionString: database.url, schema: "busy" });
    // The sweeps that have answered: the first, at the worker's start, is waited for before the drop, as a loaded
    // machine could start it after the drop, where it met the database missing and the test read that as the worker's doing.
    let swept = 0;
    const recoverOrphans = store.recoverOrphans.bind(store);
    store.recoverOrphans = async (...args) => {
      const tasks = await recoverOrphans(...args);
      swept++;
      return tasks;
    };
    const events: WorkerEvent[] = [];
    let abortedFor = "";
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      // Renewed every 200 s, swept every 300 s: neither comes while the test waits.
      leaseMs: 600_000,
      pollMs: 200,
      handler: (_task, context) =>
        new Promise<void>((_resolve, reject) =>
          context.signal.addEventListener("abort", () => {
            abortedFor = (context.signal.reason as Error).message;
            reject(context.signal.reason as Error);
          }, { once: true }),
        ),
      onEvent: (event) => events.push(event),
    });
    try {
      await store.submitRun(workflow([task("long")]));
      await worker.start();
      await until(() => events.some((event) => event.type === "started") && swept > 0, 15_000);
      await database.drop();
      // Before, it learned so only at its next heartbeat (200 s on) or sweep, its task running on meanwhile.
      await until(() => events.some((event) => event.type === "database-gone"), 30_000);
      // Neither a heartbeat nor a sweep met it missing (a sweep under way as it was dropped had its session ended, no more).
      const missingTo = (operation: string) => events.some((event) => event.type === "db-error" && event.operation === operation && String(event.error).includes("does not exist"));
      expect([missingTo("heartbeat"), missingTo("sweep")]).toEqual([false, false]);
      await until(() => abortedFor !== "", 10_000);
      expect(abortedFor).toBe("the store's database no longer exists (dropped or renamed while the worker ran)");
    } finally {
      await worker.stop({ deadlineMs: 0 });
      await store.close();
      await database.drop();
    }
  });

  it("goes on when the database is renamed and renamed back at once: its task runs on, and its success is recorded", { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    const name = new URL(database.url).pathname.slice(1);
    const store = await PostgresStore.open({ connectionString: database.url, schema: "renamed" });
    const events: WorkerEvent[] = [];
    let go = false;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    // Renamed back as the worker first meets the database missing (its look at the leases, every 2 s, says nothing of it;
    // a heartbeat's error is an event): it takes it for gone once it has stayed missing 5 s (GONE_CONFIRM_MS, with a
    // heartbeat longer than that), a margin no test poll eats into. Before, the test renamed it back a second after it saw
    // the heartbeat's error, and a loaded machine's delays took the worker's next look past the margin.
    let back: Promise<unknown> | undefined;
    const renameBack = (error: unknown): void => {
      if (error instanceof Error && error.message.includes("does not exist")) back ??= admin.query(`ALTER DATABASE "${name}_away" RENAME TO "${name}"`);
    };
    const look = store.nextLeaseExpiry.bind(store);
    store.nextLeaseExpiry = () =>
      look().catch((error: unknown) => {
        renameBack(error);
        throw error;
      });
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      leaseMs: 60_000,
      pollMs: 200,
      handler: async () => {
        while (!go) await sleep(50);
      },
      onEvent: (event) => {
        events.push(event);
        if (event.type === "db-error" || event.type === "database-gone") renameBack(event.error);
      },
    });
    try {
      await store.submitRun(workflow([task("job")]));
      await worker.start();
      await until(() => events.some((event) => event.type === "started"), 15_000);
      // ALTER DATABASE ... RENAME needs every session of the database ended; the worker's come back as soon as they can.
      await until(async () => {
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
        return admin.query(`ALTER DATABASE "${name}" RENAME TO "${name}_away"`).then(() => true, () => false);
      }, 15_000);
      await until(() => back !== undefined, 15_000);
      await back;
      go = true;
      await until(() => events.some((event) => event.type === "finished" || event.type === "stopped"), 30_000);
      // Before, the first "does not exist" stopped the worker and its task, and said the run had gone with the database.
      expect(events.filter((event) => event.type === "database-gone" || event.type === "stopped")).toEqual([]);
      expect(events.find((event) => event.type === "finished")).toMatchObject({ result: { state: "succeeded" } });
    } finally {
      await worker.stop({ deadlineMs: 0 });
      await store.close();
      await back?.catch(() => undefined);
      await admin.query(`ALTER DATABASE "${name}_away" RENAME TO "${name}"`).catch(() => undefined);
      await admin.end();
      await database.drop();
    }
  });
});
