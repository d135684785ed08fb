import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricsPort } from "../../src/store/postgres/metrics-server.js";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import { openTestStore, task, workflow } from "./helpers.js";

describe("worker metrics", () => {
  let store: PostgresStore;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
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

  it("serves the exposition text on /metrics, with queue sizes read from the database", async () => {
    await store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] })]));
    const response = await fetch(`http://127.0.0.1:${metricsPort(server)}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    expect(text).toContain('taskq_tasks{state="queued"} 1');
    expect(text).toContain('taskq_tasks{state="blocked"} 1');
    expect(text).toContain("# TYPE taskq_queue_wait_seconds histogram");
    expect(text).toContain("# TYPE taskq_orphans_recovered_total counter");
    expect((await fetch(`http://127.0.0.1:${metricsPort(server)}/other`)).status).toBe(404);
  });

  it("keeps each worker's metrics in its own registry", async () => {
    const other = new PostgresWorker({ store, concurrency: 1, handler: async () => undefined });
    other.metrics.attempts.inc(3);
    expect(await other.metricsText()).toContain("taskq_attempts_total 3");
    expect(await worker.metricsText()).toContain("taskq_attempts_total 0");
  });
});
