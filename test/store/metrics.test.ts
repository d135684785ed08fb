import { readFile } from "node:fs/promises";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricsPort, openMetricsPort } from "../../src/store/postgres/metrics-server.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import { SCRAPE_STORE_MS } from "../../src/store/postgres/worker-metrics.js";
import { SLACK_MS } from "../e2e/reliability-harness.js";
import { startFreezableProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL, openTestStore, sql, task, until, waitForRun, workflow } from "./helpers.js";

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
    expect(text).toContain("taskq_store_up 1");
    expect(text).toContain("# TYPE taskq_queue_wait_seconds histogram");
    expect(text).toContain("# TYPE taskq_orphans_recovered_total counter");
    expect((await fetch(`http://127.0.0.1:${metricsPort(server)}/other`)).status).toBe(404);
    const head = await fetch(`http://127.0.0.1:${metricsPort(server)}/metrics`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await head.text()).toBe("");
    const post = await fetch(`http://127.0.0.1:${metricsPort(server)}/metrics`, { method: "POST" });
    expect({ status: post.status, allow: post.headers.get("allow") }).toEqual({ status: 405, allow: "GET, HEAD" });
  });

  it("a metrics port taken before its worker exists answers 503 (retry) until it is given the worker's metrics", async () => {
    const early = await openMetricsPort(0);
    try {
      const url = `http://127.0.0.1:${metricsPort(early.server)}/metrics`;
      const starting = await fetch(url);
      expect({ status: starting.status, retryAfter: starting.headers.get("retry-after"), text: await starting.text() }).toEqual({ status: 503, retryAfter: "1", text: "the worker is starting\n" });
      early.serve(worker.metrics.registry);
      const served = await fetch(url);
      expect(served.status).toBe(200);
      expect(await served.text()).toContain("taskq_store_up 1");
    } finally {
      await new Promise((resolve) => early.server.close(resolve));
    }
  });

  it("counts an orphaned task's queue wait from its lease's expiry, not from the sweep that queued it again", async () => {
    const runId = await store.submitRun(workflow([task("orphan", { retries: 1 })]));
    // Leased by a worker that died; its lease ran out 20 s ago, and no worker swept it since.
    expect(await store.lease("gone-4121-a3f9c2", 10, 30_000, { runId })).toHaveLength(1);
    await sql(store, "UPDATE $schema.tasks SET lease_expires_at = now() - interval '20 seconds' WHERE run_id = $1", [runId]);
    const sweeper = new PostgresWorker({ store, concurrency: 1, runId, handler: async () => undefined });
    await sweeper.start();
    try {
      expect((await waitForRun(store, runId)).state).toBe("succeeded");
    } finally {
      await sweeper.stop({ deadlineMs: 1_000 });
    }
    const text = await sweeper.metricsText();
    expect(text).toContain("taskq_orphans_recovered_total 1");
    expect(text).toMatch(/^taskq_queue_wait_seconds_count 1$/m);
    const waited = Number(/^taskq_queue_wait_seconds_sum (\S+)$/m.exec(text)?.[1]);
    // Runnable again since its lease ran out (20 s ago), not since the sweep, a moment before its lease.
    expect(waited).toBeGreaterThanOrEqual(19);
    expect(waited).toBeLessThan(60);
  });

  it("counts in taskq_attempts_total an attempt a graceful stop gave back, as its HELP says, its end as released; the task's own count leaves it out", async () => {
    let started = false;
    const stopping = new PostgresWorker({
      store,
      concurrency: 1,
      handler: async (_leased, context) => {
        started = true;
        await new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason as Error), { once: true }));
      },
    });
    await stopping.start();
    const runId = await store.submitRun(workflow([task("long", { retries: 2 })]));
    try {
      await until(() => started);
      expect(await stopping.metricsText()).toMatch(/^taskq_worker_running_tasks 1$/m);
      await stopping.stop({ deadlineMs: 100 });
      const text = await stopping.metricsText();
      expect(text).toContain(
        "# HELP taskq_attempts_total Attempts started by this worker, those a graceful stop gave back included (completions released), which the task's own count of attempts leaves out\n",
      );
      expect(text).toMatch(/^taskq_attempts_total 1$/m);
      expect(text).toMatch(/^taskq_completions_total\{outcome="released"\} 1$/m);
      expect(text).toMatch(/^taskq_worker_running_tasks 0$/m);
      // Given back, queued again: its next attempt is attempt 1 again.
      expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", attempts: 0 });
    } finally {
      await stopping.stop({ deadlineMs: 0 });
      await store.cancelRun(runId);
    }
  });

  it("README's table of metrics names every metric a worker serves, with its type", async () => {
    const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
    const rows = new Map([...readme.matchAll(/^\| `(taskq_\w+)(?:\{[^}]*\})?` \| (\w+) \|/gm)].map((match) => [match[1]!, match[2]!]));
    const served = [...(await worker.metricsText()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match): [string, string] => [match[1]!, match[2]!]);
    expect(served.length).toBeGreaterThan(5);
    expect(served.filter(([name, type]) => rows.get(name) !== type)).toEqual([]);
  });

  it("keeps each worker's metrics in its own registry", async () => {
    const other = new PostgresWorker({ store, concurrency: 1, handler: async () => undefined });
    other.metrics.attempts.inc(3);
    expect(await other.metricsText()).toContain("taskq_attempts_total 3");
    expect(await worker.metricsText()).toContain("taskq_attempts_total 0");
  });

  it("says the store is up when the database answers, even while the count of tasks does not come in time", async () => {
    const locker = await store.pool.connect();
    try {
      // The counts' table held by another transaction: the count waits, a SELECT 1 does not.
      await locker.query(`BEGIN; LOCK TABLE "${store.schema}".task_ends IN ACCESS EXCLUSIVE MODE`);
      const startedAt = performance.now();
      const text = await (await fetch(`http://127.0.0.1:${metricsPort(server)}/metrics`)).text();
      expect(performance.now() - startedAt).toBeLessThan(SCRAPE_STORE_MS + SLACK_MS);
      expect(text).toContain("taskq_store_up 1");
      expect(text).not.toMatch(/^taskq_tasks\{/m);
    } finally {
      await locker.query("ROLLBACK");
      locker.release();
    }
    expect(await (await fetch(`http://127.0.0.1:${metricsPort(server)}/metrics`)).text()).toMatch(/^taskq_tasks\{state="queued"\} \d+$/m);
  }, 20_000);

  it("answers a scrape within a few seconds when the database does not answer: the worker's counters, no taskq_tasks, taskq_store_up 0", async () => {
    const url = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const stalled = await PostgresStore.open({ connectionString: proxy.url(DATABASE_URL), schema: store.schema });
    const frozen = new PostgresWorker({ store: stalled, concurrency: 1, handler: async () => undefined });
    const frozenServer = await frozen.serveMetrics(0);
    try {
      frozen.metrics.attempts.inc(2);
      const before = await (await fetch(`http://127.0.0.1:${metricsPort(frozenServer)}/metrics`)).text();
      expect(before).toMatch(/^taskq_tasks\{state="queued"\} \d+$/m);
      proxy.freeze();
      const startedAt = performance.now();
      const response = await fetch(`http://127.0.0.1:${metricsPort(frozenServer)}/metrics`);
      const text = await response.text();
      // Within Prometheus's default scrape timeout (10s), not the statement limit (30s).
      expect(performance.now() - startedAt).toBeLessThan(SCRAPE_STORE_MS + SLACK_MS);
      expect(response.status).toBe(200);
      expect(text).toContain("taskq_attempts_total 2");
      expect(text).toContain("taskq_store_up 0");
      // No value from before passes for today's.
      expect(text).not.toMatch(/^taskq_tasks\{/m);
    } finally {
      await new Promise((resolve) => frozenServer.close(resolve));
      await proxy.close();
      await stalled.close();
    }
  }, 20_000);
});
