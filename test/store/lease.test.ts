import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import type { LeasedTask } from "../../src/store/postgres/types.js";
import { leaseAll, openTestStore, sql, task, until, workflow } from "./helpers.js";

describe("lease", () => {
  let store: PostgresStore;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => ({ store, close } = await openTestStore()));
  afterAll(async () => close?.());
  beforeEach(async () => {
    await sql(store, "DELETE FROM $schema.runs");
  });

  it("hands out tasks by priority, then submission order, respecting not-before", async () => {
    await store.submitRun(
      workflow([
        task("low1", { priority: "low" }),
        task("n1"),
        task("crit", { priority: "critical" }),
        task("later", { priority: "critical", runAt: Date.now() + 60_000 }),
        task("n2"),
        task("high", { priority: "high" }),
      ]),
    );
    const first = await store.lease("w1", 2, 30_000);
    expect(first.map((t) => t.key)).toEqual(["crit", "high"]);
    const rest = await leaseAll(store);
    expect(rest.map((t) => t.key)).toEqual(["n1", "n2", "low1"]);
    expect(rest[0]!.attempt).toBe(1);
    expect(rest[0]!.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
    const delay = await store.nextRunnableDelay();
    expect(delay).toBeGreaterThan(50_000);
  });

  it("never gives the same task to two concurrent leasers", async () => {
    const tasks = Array.from({ length: 200 }, (_, i) => task(`t${i}`));
    await store.submitRun(workflow(tasks));
    const leasers = Array.from({ length: 8 }, (_, i) => i);
    const seen: string[] = [];
    await Promise.all(
      leasers.map(async (i) => {
        for (;;) {
          const got = await store.lease(`w${i}`, 7, 30_000);
          if (got.length === 0) return;
          seen.push(...got.map((t) => t.key));
        }
      }),
    );
    expect(seen).toHaveLength(200);
    expect(new Set(seen).size).toBe(200);
  });

  /** Runs `work` while another session holds a row lock on the task `key`; fails if `work` waits on it (5 s). */
  async function whileLocked<T>(key: string, work: () => Promise<T>): Promise<T> {
    const client = await store.pool.connect();
    try {
      await client.query("BEGIN");
      expect((await client.query(`SELECT id FROM "${store.schema}".tasks WHERE key = $1 FOR UPDATE`, [key])).rowCount).toBe(1);
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`waited on the lock of ${key}`)), 5_000)));
      try {
        return await Promise.race([work(), waited]);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  }

  it("passes over a task another session has locked (a leaser mid-transaction), at once, instead of waiting for it", async () => {
    await store.submitRun(workflow([task("first", { priority: "high" }), task("second")]));
    const leased = await whileLocked("first", () => store.lease("w1", 10, 30_000));
    expect(leased.map((t) => t.key)).toEqual(["second"]);
  });

  it("a sweep passes over an expired lease another session has locked, and recovers the others at once", async () => {
    await store.submitRun(workflow([task("held", { retries: 1 }), task("free", { retries: 1 })]));
    expect(await store.lease("gone-4121-a3f9c2", 10, 100)).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await whileLocked("held", () => store.sweepOrphans())).toBe(1);
    const states = await sql<{ key: string; state: string }>(store, "SELECT key, state FROM $schema.tasks ORDER BY key");
    expect(states).toEqual([{ key: "free", state: "queued" }, { key: "held", state: "running" }]);
  });

  it("renews only with the current token, and ignores a stale completion", async () => {
    await store.submitRun(workflow([task("solo", { retries: 1 })]), { runId: "guard" });
    const [first] = await store.lease("w1", 1, 100);
    expect(await store.heartbeat(first!.taskId, first!.leaseToken, 100)).toBe("renewed");
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.sweepOrphans()).toBe(1);
    expect(await store.heartbeat(first!.taskId, first!.leaseToken, 100)).toBe("lost");
    const [second] = await store.lease("w2", 1, 30_000);
    expect(second!.attempt).toBe(2);
    expect(await store.complete(first!.leaseToken, { kind: "success" })).toBe(false);
    const status = await store.runStatus("guard");
    expect(status.tasks[0]!.state).toBe("running");
    expect(status.tasks[0]!.workerId).toBe("w2");
    expect(await store.complete(second!.leaseToken, { kind: "success" })).toMatchObject({ state: "succeeded" });
    expect((await store.runStatus("guard")).state).toBe("succeeded");
  });

  it("with a run id, leases and waits for that run's tasks only; without, every run's", async () => {
    // The other run's tasks come first in lease order: higher priority, submitted earlier.
    await store.submitRun(workflow([task("theirs", { priority: "critical" }), task("their-later", { priority: "critical", runAt: Date.now() + 5_000 })]), {
      runId: "other",
    });
    await store.submitRun(workflow([task("mine"), task("mine-later", { runAt: Date.now() + 60_000 })]), { runId: "own" });
    expect((await store.lease("w1", 10, 30_000, { runId: "own" })).map((t) => `${t.runId}/${t.key}`)).toEqual(["own/mine"]);
    // The batched path too, and its idle delay is to this run's next task, not the other's sooner one.
    const idle = await store.completeAndLease([], "w1", 10, 30_000, { runId: "own" });
    expect(idle.leased).toEqual([]);
    expect(idle.nextDelayMs).toBeGreaterThan(50_000);
    expect((await store.completeAndLease([], "w2", 10, 30_000)).leased.map((t) => `${t.runId}/${t.key}`)).toEqual(["other/theirs"]);
  });

  it("reports a cancel request on heartbeat and releases without counting the attempt", async () => {
    await store.submitRun(workflow([task("r1"), task("r2")]), { runId: "rel" });
    const [a, b] = await leaseAll(store);
    await store.cancelRun("rel", "r1");
    expect(await store.heartbeat(a!.taskId, a!.leaseToken, 30_000)).toBe("cancel-requested");
    expect(await store.release(a!.leaseToken)).toBe(true);
    expect(await store.release(b!.leaseToken)).toBe(true);
    const status = await store.runStatus("rel");
    expect(status.tasks.map((row) => [row.key, row.state, row.attempts])).toEqual([
      ["r1", "cancelled", 1],
      ["r2", "queued", 0],
    ]);
  });

  it("a lease given back keeps the error of the attempt that failed before it: a cancel says why that attempt failed", async () => {
    await store.submitRun(workflow([task("flaky", { retries: 3, backoff: { baseMs: 1, maxMs: 1 } }), task("fresh")]), { runId: "rel-failed" });
    const [first, fresh] = await leaseAll(store);
    expect(await store.complete(first!.leaseToken, { kind: "failure", error: "exited with code 7", exitCode: 7 })).toMatchObject({ state: "queued" });
    // Attempt 2, once its backoff has passed.
    let second: LeasedTask | undefined;
    await until(async () => ([second] = await leaseAll(store)).length > 0);
    expect(second).toMatchObject({ key: "flaky", attempt: 2 });
    // Its worker stops gracefully during attempt 2, and gives its lease back; the other task's first attempt too.
    expect(await store.release(second!.leaseToken)).toBe(true);
    expect(await store.release(fresh!.leaseToken)).toBe(true);
    const status = await store.runStatus("rel-failed");
    expect(status.tasks.map((row) => [row.key, row.state, row.attempts, row.lastError])).toEqual([
      ["flaky", "queued", 1, "exited with code 7"],
      ["fresh", "queued", 0, "released by a stopping worker"],
    ]);
    // Before, "not retried (attempt 1 failed: released by a stopping worker)": not why attempt 1 failed.
    const cancel = await store.cancelRun("rel-failed");
    expect(cancel.notRetried).toEqual([{ key: "flaky", attempt: 1, error: "exited with code 7" }]);
    expect((await store.runStatus("rel-failed")).tasks.map((row) => [row.key, row.cancelReason])).toEqual([
      ["flaky", "cancelled by request: not retried (attempt 1 failed: exited with code 7)"],
      ["fresh", "cancelled by request"],
    ]);
  });

  it("a task waiting for its retry names the worker whose attempt failed last, where its log is: the failure's, or the swept lease's", async () => {
    await store.submitRun(workflow([task("flaky", { retries: 3, backoff: { baseMs: 1, maxMs: 1 } })]), { runId: "failed-worker" });
    const flaky = async () => (await store.runStatus("failed-worker")).tasks[0]!;
    const [first] = await leaseAll(store, 30_000, "w1");
    expect(await store.complete(first!.leaseToken, { kind: "failure", error: "exited with code 7", exitCode: 7 })).toMatchObject({ state: "queued" });
    expect(await flaky()).toMatchObject({ state: "queued", attempts: 1, workerId: null, failedWorkerId: "w1" });
    // Attempt 2 runs on w2: its worker is w2's, and the failed worker no longer says where the latest attempt's log is.
    await until(async () => (await leaseAll(store, 30_000, "w2")).length > 0);
    const running = await flaky();
    expect(running).toMatchObject({ state: "running", attempts: 2, workerId: "w2" });
    expect(running.failedWorkerId).toBeUndefined();
    // w2 is gone: its lease runs out and the sweep queues the task again, naming w2.
    await sql(store, "UPDATE $schema.tasks SET lease_expires_at = now() - interval '1 second' WHERE run_id = 'failed-worker'");
    expect(await store.sweepOrphans()).toBe(1);
    expect(await flaky()).toMatchObject({ state: "queued", attempts: 2, workerId: null, failedWorkerId: "w2", lastError: "lease expired (worker w2, attempt 2)" });
  });
});
