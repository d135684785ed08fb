import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { DATABASE_URL, task, until, useStoreSchema, waitForRun, workflow } from "./helpers.js";

describe("an attempt's end whose record the database refuses for a moment", () => {
  const own = useStoreSchema();
  const { schema } = own;

  it("is recorded on a later try: a success whose statement was cancelled (pg_cancel_backend) is not lost, nor its attempt used up", async () => {
    const { store } = own;
    const workerStore = await PostgresStore.open({ connectionString: DATABASE_URL, schema, applicationName: "taskq record-refused" });
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    const events: WorkerEvent[] = [];
    let finish: () => void = () => undefined;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    const worker = new PostgresWorker({
      store: workerStore,
      concurrency: 1,
      leaseMs: 10_000,
      pollMs: 200,
      onEvent: (event) => events.push(event),
      handler: async () => {
        await finishing;
      },
    });
    await worker.start();
    try {
      const runId = await store.submitRun(workflow([task("deploy", { retries: 2 })]));
      await until(() => events.some((event) => event.type === "started"));
      // The task's row held by another session: the worker's record of the success waits on it, and is cancelled there.
      await locker.query("BEGIN");
      await locker.query(`SELECT 1 FROM "${schema}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
      finish();
      // Not read on the locker's connection: in its transaction, pg_stat_activity is read once and kept.
      const waiting = async () =>
        (await store.pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'taskq record-refused%' AND wait_event_type = 'Lock'")).rows;
      await until(async () => (await waiting()).length > 0);
      for (const { pid } of await waiting()) await store.pool.query("SELECT pg_cancel_backend($1)", [pid]);
      await until(() => events.some((event) => event.type === "db-error"));
      await locker.query("ROLLBACK");
      const status = await waitForRun(store, runId, 15_000);
      expect(status.state).toBe("succeeded");
      expect(status.tasks.map((row) => [row.key, row.state, row.attempts])).toEqual([["deploy", "succeeded", 1]]);
      // Said as a record being retried, not given up.
      const errors = events.flatMap((event) => (event.type === "db-error" ? [[event.operation, event.retrying, String((event.error as Error).message)]] : []));
      // (The success goes with the next lease in one statement: its error may be told as the lease's.)
      expect(errors[0]).toEqual([expect.stringMatching(/^(complete|lease)$/), true, expect.stringContaining("canceling statement due to user request")]);
      expect(errors.some(([, retrying]) => retrying === false)).toBe(false);
    } finally {
      finish();
      await locker.end();
      await worker.stop({ deadlineMs: 1_000 });
      await workerStore.close();
    }
  });
  it("given up on once its lease's window has passed, is told with the task and how it ended, not as a bare database error", { timeout: 60_000 }, async () => {
    const { store } = own;
    const workerStore = await PostgresStore.open({ connectionString: DATABASE_URL, schema, applicationName: "taskq record-lost" });
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    const events: WorkerEvent[] = [];
    let finish: () => void = () => undefined;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    // A short lease: its record is tried for 2 x 1.5 s + 5 s, then given up.
    const worker = new PostgresWorker({ store: workerStore, concurrency: 1, leaseMs: 1_500, pollMs: 200, sweepMs: 600_000, onEvent: (event) => events.push(event), handler: () => finishing });
    await worker.start();
    let cancelling = true;
    try {
      const runId = await store.submitRun(workflow([task("deploy")]));
      await until(() => events.some((event) => event.type === "started"));
      await locker.query("BEGIN");
      await locker.query(`SELECT 1 FROM "${schema}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
      finish();
      // Every try of the record waits on the row, and is cancelled there, until the worker gives up.
      const canceller = (async () => {
        while (cancelling) {
          // Not on the locker's connection: in its transaction, pg_stat_activity is read once and kept.
          await store.pool.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'taskq record-lost%' AND wait_event_type = 'Lock'");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      await until(() => events.some((event) => event.type === "record-lost"), 30_000);
      cancelling = false;
      await canceller;
      const lost = events.find((event) => event.type === "record-lost");
      expect(lost).toMatchObject({ type: "record-lost", task: { key: "deploy", attempt: 1 }, outcome: { kind: "success" } });
      expect(String((lost as { error: Error }).error.message)).toContain("canceling statement due to user request");
      expect(events.some((event) => event.type === "db-error" && !event.retrying)).toBe(false);
    } finally {
      cancelling = false;
      finish();
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
      await worker.stop({ deadlineMs: 0 });
      await workerStore.close();
    }
  });
});
