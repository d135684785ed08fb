import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createShellHandler } from "../../src/handlers/index.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { DATABASE_URL, dropSchema, sql, task, uniqueSchema, until, workflow } from "./helpers.js";

describe("an attempt whose command the stop kept from spawning", () => {
  const schema = uniqueSchema();
  let store: PostgresStore;
  let dir: string;
  beforeAll(async () => {
    store = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
    dir = await mkdtemp(path.join(tmpdir(), "taskq-not-spawned-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    if (store === undefined) return;
    await store.close();
    await dropSchema(schema);
  });

  it("is given back uncounted and without last lines: what run --store reads as a task never started, not one cut short", async () => {
    const events: WorkerEvent[] = [];
    // As the CLI's signal handler sets it once a shutdown signal came: no command spawns from then on.
    const shell = createShellHandler({
      runId: "run",
      logDir: path.join(dir, "logs"),
      killGraceMs: 300,
      sink: { line: () => undefined },
      shutdownSignals: { stopping: () => true, received: async () => false },
    });
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      pollMs: 200,
      onEvent: (event) => events.push(event),
      handler: async (leased, context) => void (await shell({ id: leased.key, run: `touch '${path.join(dir, "ran")}'`, env: {}, cwd: dir }, context)),
    });
    await worker.start();
    try {
      const runId = await store.submitRun(workflow([task("a")]));
      await until(() => events.some((event) => event.type === "released"));
      const released = events.find((event) => event.type === "released");
      expect(released).toMatchObject({ type: "released", task: { key: "a" } });
      expect(released).not.toHaveProperty("tail");
      // (Queued again, it may be leased again meanwhile, and given back again: stopped, none is counted. A stop
      // with time to finish waits for the lease round trip on its way, whose lease goes back too.)
      await worker.stop({ deadlineMs: 5_000 });
      const row = async () => (await sql<{ state: string; attempts: number }>(store, "SELECT state, attempts FROM $schema.tasks WHERE run_id = $1", [runId]))[0];
      await until(async () => (await row())?.state === "queued");
      expect(await row()).toEqual({ state: "queued", attempts: 0 });
      expect(existsSync(path.join(dir, "ran"))).toBe(false);
    } finally {
      await worker.stop({ deadlineMs: 0 });
    }
  });
});
