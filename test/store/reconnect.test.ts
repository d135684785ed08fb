import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { createPool, DATABASE_URL, dropSchema, task, uniqueSchema, waitForRun, workflow } from "./helpers.js";

describe("PostgresWorker and pg_terminate_backend", () => {
  const schema = uniqueSchema();
  const application = `taskq_kill_${randomBytes(3).toString("hex")}`;
  let store: PostgresStore;
  /** Watches the run from sessions that are not terminated: the worker's store is the subject, not the observer. */
  let observer: PostgresStore;
  const admin = createPool(2);
  beforeAll(async () => {
    store = await PostgresStore.open({ connectionString: `${DATABASE_URL}?application_name=${application}`, schema });
    observer = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
  });
  afterAll(async () => {
    await admin.end();
    // Unset when beforeAll failed (no database): that failure shows alone, nothing was made to drop.
    if (store === undefined) return;
    await store.close();
    await observer?.close();
    await dropSchema(schema);
  });

  async function terminateSessions(): Promise<number> {
    const result = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [application]);
    return result.rowCount ?? 0;
  }

  it("keeps running tasks to completion while its sessions are terminated", async () => {
    const events: WorkerEvent[] = [];
    const ran = new Map<string, number>();
    const worker = new PostgresWorker({
      store,
      concurrency: 4,
      leaseMs: 3_000,
      pollMs: 200,
      onEvent: (event) => events.push(event),
      handler: async (leased) => {
        ran.set(leased.key, (ran.get(leased.key) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
    });
    await worker.start();
    const tasks = Array.from({ length: 60 }, (_, i) => task(`t${i}`, { dependsOn: i >= 4 ? [`t${i - 4}`] : [] }));
    const runId = await store.submitRun(workflow(tasks));
    let killed = 0;
    for (let round = 0; round < 12; round++) {
      await new Promise((resolve) => setTimeout(resolve, 40));
      killed += await terminateSessions();
    }
    const status = await waitForRun(observer, runId, 25_000);
    await worker.stop({ deadlineMs: 1_000 });
    expect(killed).toBeGreaterThan(0);
    expect(status.state).toBe("succeeded");
    expect(status.counts.succeeded).toBe(60);
    expect(events.some((event) => event.type === "stopped" && event.reason === "lease-lost")).toBe(false);
    // A completion whose COMMIT was cut off may leave the task to run again, but never lose it.
    expect(ran.size).toBe(60);
  });
});
