import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import { leaseAll, openTestStore, sql, task, until, workflow } from "./helpers.js";

const success = { kind: "success" } as const;

describe("completeAndLease", () => {
  let store: PostgresStore;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => ({ store, close } = await openTestStore()));
  afterAll(async () => close?.());
  beforeEach(async () => {
    await sql(store, "DELETE FROM $schema.runs");
  });

  it("records a batch and leases, in one call, the dependents it unblocked", async () => {
    await store.submitRun(
      workflow([task("a"), task("b"), task("z", { runAt: Date.now() + 60_000 }), task("c", { dependsOn: ["a", "b"], retryOn: [2, 75] }), task("d", { dependsOn: ["a", "z"] })]),
      { runId: "batch" },
    );
    const [a, b] = await store.lease("w1", 2, 30_000);
    const ended = [a!, b!].map((leased) => ({ token: leased.leaseToken, outcome: success }));
    const result = await store.completeAndLease(ended, "w1", 4, 30_000);
    // c waited on both tasks of the batch; d still waits on z.
    expect(result.completed).toEqual([
      { runId: "batch", state: "succeeded", cascaded: [], unblocked: [] },
      { runId: "batch", state: "succeeded", cascaded: [], unblocked: ["c"] },
    ]);
    // With its retryOn, which the worker's handler applies as a local run's does.
    expect(result.leased.map((leased) => [leased.key, leased.attempt, leased.retryOn])).toEqual([["c", 1, [2, 75]]]);
    const rows = await sql<{ key: string; state: string; waiting_on: number }>(
      store,
      "SELECT key, state, waiting_on FROM $schema.tasks WHERE run_id = 'batch' ORDER BY key",
    );
    expect(rows.map((row) => [row.key, row.state, row.waiting_on])).toEqual([
      ["a", "succeeded", 0],
      ["b", "succeeded", 0],
      ["c", "running", 0],
      ["d", "blocked", 1],
      ["z", "queued", 0],
    ]);
  });

  it("wakes the other workers for a dependent it freed only when it did not lease it itself", async () => {
    const listener = await store.pool.connect();
    let notified = 0;
    listener.on("notification", () => notified++);
    await listener.query(`LISTEN "taskq_${store.schema}"`);
    /** Notifications that come within a second of `work`. */
    const notifiedBy = async (work: () => Promise<unknown>): Promise<number> => {
      const before = notified;
      await work();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return notified - before;
    };
    try {
      await store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] }), task("c", { dependsOn: ["b"] })]), { runId: "chain" });
      // The submit's own wake-up, which a loaded machine delivered late enough to be counted as the first call's.
      await until(() => notified === 1, 10_000);
      const [a] = await store.lease("w1", 1, 30_000);
      // b freed, and leased by the same call: no other worker has work.
      let b: Awaited<ReturnType<PostgresStore["completeAndLease"]>>["leased"][number] | undefined;
      expect(await notifiedBy(async () => ([b] = (await store.completeAndLease([{ token: a!.leaseToken, outcome: success }], "w1", 1, 30_000)).leased))).toBe(0);
      expect(b?.key).toBe("b");
      // c freed, with no slot to lease it: the others are woken for it.
      expect(await notifiedBy(() => store.completeAndLease([{ token: b!.leaseToken, outcome: success }], "w1", 0, 30_000))).toBe(1);
      expect((await sql<{ state: string }>(store, "SELECT state FROM $schema.tasks WHERE run_id = 'chain' AND key = 'c'"))[0]!.state).toBe("queued");
    } finally {
      listener.release(true);
    }
  });

  it("gives false for a stale token, the delay to the nearest queued task when idle, and settles the run", async () => {
    await store.submitRun(workflow([task("solo", { retries: 1 })]), { runId: "stale" });
    const [first] = await store.lease("w1", 1, 30_000);
    await sql(store, "UPDATE $schema.tasks SET lease_token = gen_random_uuid() WHERE run_id = 'stale'");
    const stale = await store.completeAndLease([{ token: first!.leaseToken, outcome: success }], "w1", 1, 30_000);
    expect(stale).toEqual({ completed: [false], leased: [], nextDelayMs: null });

    await store.submitRun(workflow([task("now"), task("later", { runAt: Date.now() + 60_000 })]), { runId: "idle" });
    const [now] = await store.lease("w1", 1, 30_000);
    const idle = await store.completeAndLease([{ token: now!.leaseToken, outcome: { kind: "success", exitCode: 0, tail: ["done"] } }], "w1", 2, 30_000);
    expect(idle.completed).toEqual([{ runId: "idle", state: "succeeded", cascaded: [], unblocked: [] }]);
    expect(idle.leased).toEqual([]);
    expect(idle.nextDelayMs).toBeGreaterThan(50_000);
    const [row] = await sql<{ tail: string[] }>(store, "SELECT tail FROM $schema.tasks WHERE run_id = 'idle' AND key = 'now'");
    expect(row!.tail).toEqual(["done"]);

    await store.submitRun(workflow([task("last")]), { runId: "settle" });
    const [last] = (await leaseAll(store)).filter((leased) => leased.runId === "settle");
    const settled = await store.completeAndLease([{ token: last!.leaseToken, outcome: success }], "w1", 0, 30_000);
    expect(settled).toEqual({ completed: [{ runId: "settle", state: "succeeded", cascaded: [], unblocked: [] }], leased: [], nextDelayMs: null });
    expect((await store.runStatus("settle")).state).toBe("succeeded");
  });

  it("a run's last task settles the run by its success, a dependent of it cancelled (as complete_success does)", async () => {
    // Each run's dependent is cancelled by the failure of its other dependency.
    for (const runId of ["batched", "alone"]) {
      await store.submitRun(workflow([task("fails"), task("last"), task("after", { dependsOn: ["fails", "last"] })]), { runId });
    }
    const leased = await leaseAll(store);
    const token = (runId: string, key: string) => leased.find((row) => row.runId === runId && row.key === key)!.leaseToken;
    for (const runId of ["batched", "alone"]) await store.complete(token(runId, "fails"), { kind: "failure", error: "exit 1", exitCode: 1 });
    // Read without runStatus, which would settle a run itself.
    const states = async () => sql<{ id: string; state: string }>(store, "SELECT id, state FROM $schema.runs ORDER BY id");
    expect(await states()).toEqual([
      { id: "alone", state: "running" },
      { id: "batched", state: "running" },
    ]);
    const batched = await store.completeAndLease([{ token: token("batched", "last"), outcome: success }], "w1", 0, 30_000);
    expect(batched.completed).toEqual([{ runId: "batched", state: "succeeded", cascaded: [], unblocked: [] }]);
    // A success recorded on its own (a stopping worker's).
    expect(await store.complete(token("alone", "last"), success)).toEqual({ runId: "alone", state: "succeeded", cascaded: [], unblocked: [] });
    expect(await states()).toEqual([
      { id: "alone", state: "failed" },
      { id: "batched", state: "failed" },
    ]);
  });
});
