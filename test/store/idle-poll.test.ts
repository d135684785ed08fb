import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import { startFreezableProxy, type FreezableProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL, dropSchema, task, uniqueSchema, until, waitForRun, workflow } from "./helpers.js";

/** The words of every lease round trip a worker sends (its prepared statement's name). */
const LEASE = "taskq_complete_and_lease_";

describe("an idle worker's backstop poll", () => {
  const schema = uniqueSchema();
  let proxy: FreezableProxy;
  let store: PostgresStore;
  beforeAll(async () => {
    const url = new URL(DATABASE_URL);
    proxy = await startFreezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    store = await PostgresStore.open({ connectionString: proxy.url(DATABASE_URL), schema });
  });
  afterAll(async () => {
    await store?.close();
    await proxy?.close();
    await dropSchema(schema);
  });

  it("leases once in 6 s idle while notifications arrive, every 2 s while their connection is down, and at once when it drops", async () => {
    const leases = proxy.countRequests(LEASE);
    const worker = new PostgresWorker({ store, concurrency: 1, handler: async () => undefined });
    await worker.start();
    try {
      await sleep(6_000);
      // The lease at start only: nothing is queued, no notification came, the poll is 30 s away.
      expect(leases()).toBe(1);

      // The listening connection cut, and each new one: the lease connections go on.
      proxy.cutSending('LISTEN "');
      const cutAt = performance.now();
      await until(() => leases() >= 2, 1_500);
      // Looked at once as it dropped: a notification may have been lost.
      expect(performance.now() - cutAt).toBeLessThan(1_500);
      await sleep(6_500);
      const polled = leases() - 2;
      // Every 2 s meanwhile: three in 6.5 s, give or take one on a loaded machine.
      expect(polled).toBeGreaterThanOrEqual(2);
      expect(polled).toBeLessThanOrEqual(4);
      expect(store.notificationsConnected).toBe(false);

      // The connection back: notifications again, and a task submitted starts at once.
      proxy.uncut();
      await until(() => store.notificationsConnected, 10_000);
      const runId = await store.submitRun(workflow([task("woken")]));
      const submittedAt = performance.now();
      expect((await waitForRun(store, runId, 10_000)).state).toBe("succeeded");
      // Woken by its notification: with them connected the poll is 30 s away.
      expect(performance.now() - submittedAt).toBeLessThan(10_000);
    } finally {
      await worker.stop({ deadlineMs: 1_000 });
    }
  }, 40_000);

  it("a worker with slots left free sleeps until its next delayed task is due, not its 30 s poll", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const started = new Map<string, number>();
    const worker = new PostgresWorker({
      store,
      concurrency: 2,
      handler: async (leased) => {
        started.set(leased.key, performance.now());
        if (leased.key === "long") await held;
      },
    });
    await worker.start();
    try {
      const submittedAt = performance.now();
      const runId = await store.submitRun(workflow([task("long"), task("later", { delayMs: 3_000 })]));
      // "long" holds one slot; the lease that took it took fewer than asked and said when "later" is due.
      await until(() => started.has("later"), 15_000);
      const laterAfter = started.get("later")! - submittedAt;
      expect(laterAfter).toBeGreaterThanOrEqual(2_900);
      expect(laterAfter).toBeLessThan(6_000);
      release();
      expect((await waitForRun(store, runId, 10_000)).state).toBe("succeeded");
    } finally {
      release();
      await worker.stop({ deadlineMs: 1_000 });
    }
  }, 30_000);
});
