import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { createTestDatabase, task, until, workflow } from "./helpers.js";

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
});
