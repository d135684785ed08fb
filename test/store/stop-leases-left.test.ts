import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { DATABASE_URL, dropSchema, sql, task, uniqueSchema, until, workflow } from "./helpers.js";

// What a stopping worker says of the leases it is left with, and of the records it gives up, in its events: the store's
// database is there, the worker's store refuses what each test needs refused.
describe("a stopping worker's words on the leases and records it is left with", () => {
  const schema = uniqueSchema();
  /** Sets up and ends the runs, with every method of its own. */
  let observer: PostgresStore;
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    observer = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    // Unset when beforeAll failed (no database): that failure shows alone, nothing was made to drop.
    if (observer === undefined) return;
    await observer.close();
    await dropSchema(schema);
  });

  /** A store of the worker's own, closed after the test, with the run it submits ended (its lease left in the database). */
  async function workerStore(): Promise<{ store: PostgresStore; runId: () => Promise<string> }> {
    const store = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
    const runs: string[] = [];
    cleanups.push(async () => {
      for (const run of runs) {
        await sql(observer, "UPDATE $schema.tasks SET lease_expires_at = now() WHERE run_id = $1", [run]);
        await observer.cancelRun(run);
      }
      await store.close();
    });
    const runId = async (): Promise<string> => {
      const run = await observer.submitRun(workflow([task("only")]));
      runs.push(run);
      return run;
    };
    return { store, runId };
  }

  it("says a lease the stop waited out for its record has run out, though the stop's timer fired a moment before the lease's end", async () => {
    const events: WorkerEvent[] = [];
    const { store, runId } = await workerStore();
    // No renewal goes through (the lease's end stays where the lease put it), nor a try to record the failure: a connection
    // dropped each time, tried again after the stop has given it up.
    store.renew = () => Promise.reject(new Error("Connection terminated unexpectedly"));
    store.complete = () => Promise.reject(new Error("Connection terminated unexpectedly"));
    const now = performance.now.bind(performance);
    cleanups.push(async () => void (performance.now = now));
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      leaseMs: 6_000,
      pollMs: 200,
      handler: () => Promise.reject(new Error("exit 1")),
      onEvent: (event) => {
        events.push(event);
        // The stop's wait for the record until the lease's end begins as this is said: its timer fires 1.5 ms before that end
        // by performance.now(), as a driver's timer may (it counts whole milliseconds), here by that clock put back as much.
        // Before: "It runs out within 1s", of a lease the stop had waited out (JSON withinMs 1 or 2).
        if (event.type === "recording") setImmediate(() => (performance.now = () => now() - 1.5));
      },
    });
    cleanups.push(() => worker.stop({ deadlineMs: 0 }));
    await runId();
    await worker.start();
    await until(() => events.some((event) => event.type === "db-error" && event.operation === "complete"), 10_000);
    await worker.stop({ deadlineMs: 10_000 });
    expect(events.find((event) => event.type === "recording")).toBeDefined();
    const left = events.find((event) => event.type === "leases-left");
    expect(left).toMatchObject({ withinMs: 0 });
    expect(left).not.toHaveProperty("mayHoldMs");
  }, 30_000);
});
