import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { backoffDelay } from "../../src/store/postgres/backoff.js";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import { leaseAll, openTestStore, sql, task, workflow } from "./helpers.js";

describe("task lifecycle", () => {
  let store: PostgresStore;
  let close: () => Promise<void>;
  // Jitter pinned to the top of the range, so the backoff is exact.
  beforeAll(async () => ({ store, close } = await openTestStore({ random: () => 0.999999 })));
  afterAll(async () => close());
  beforeEach(async () => {
    await sql(store, "DELETE FROM $schema.runs");
  });

  it("computes backoff as base * 2^(n-1), capped, with full jitter", () => {
    const policy = { baseMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, policy, () => 0.999999))).toEqual([100, 200, 400, 800, 1_000]);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
    expect(backoffDelay(2000, policy, () => 0.5)).toBe(500);
  });

  it("retries a failure after the backoff, then dead-letters it once attempts are exhausted", async () => {
    await store.submitRun(workflow([task("flaky", { retries: 1, backoff: { baseMs: 300, maxMs: 1_000 } })]), { runId: "retry" });
    const [first] = await leaseAll(store);
    const before = performance.now();
    const result = await store.complete(first!.leaseToken, { kind: "failure", error: "exit 3", exitCode: 3, tail: ["oops"] });
    expect(result).toMatchObject({ state: "queued", retryDelayMs: 300 });
    expect(await leaseAll(store)).toEqual([]);
    const delay = await store.nextRunnableDelay();
    // The backoff less the time these calls took (a loaded machine may take long).
    expect(delay).toBeGreaterThanOrEqual(300 - Math.ceil(performance.now() - before));
    expect(delay).toBeLessThanOrEqual(300);
    await new Promise((resolve) => setTimeout(resolve, 350));
    const [second] = await leaseAll(store);
    expect(second!.attempt).toBe(2);
    expect(await store.complete(second!.leaseToken, { kind: "failure", error: "exit 3", exitCode: 3 })).toMatchObject({ state: "failed" });
    const [dead] = await store.deadLetters("retry");
    expect(dead).toMatchObject({ key: "flaky", attempts: 2, maxAttempts: 2, lastError: "exit 3", exitCode: 3 });
  });

  it("does not retry a permanent failure, nor an exit code outside retryOn", async () => {
    await store.submitRun(workflow([task("perm", { retries: 5 }), task("picky", { retries: 5, retryOn: [75] })]), { runId: "perm" });
    const [perm, picky] = await leaseAll(store);
    expect(await store.complete(perm!.leaseToken, { kind: "failure", error: "not found", exitCode: 127, permanent: true })).toMatchObject({
      state: "failed",
    });
    expect(await store.complete(picky!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 })).toMatchObject({ state: "failed" });
    expect((await store.deadLetters("perm")).map((row) => row.attempts)).toEqual([1, 1]);
  });

  it("unblocks dependents on success and cascade-cancels them transitively on failure", async () => {
    await store.submitRun(
      workflow([task("a"), task("b", { dependsOn: ["a"] }), task("c", { dependsOn: ["b"] }), task("d", { dependsOn: ["c"] }), task("e")]),
      { runId: "dag" },
    );
    const [a, e] = await leaseAll(store);
    expect(await store.complete(a!.leaseToken, { kind: "success" })).toMatchObject({ state: "succeeded", unblocked: ["b"] });
    const [b] = await leaseAll(store);
    expect(b!.key).toBe("b");
    const failed = await store.complete(b!.leaseToken, { kind: "failure", error: "broken", exitCode: 2 });
    expect(failed).toMatchObject({ state: "failed" });
    expect(failed && [...failed.cascaded].sort()).toEqual(["c", "d"]);
    const status = await store.runStatus("dag");
    expect(status.counts).toMatchObject({ succeeded: 1, failed: 1, cancelled: 2, running: 1 });
    expect(status.tasks.find((row) => row.key === "d")!.cancelReason).toBe('dependency "b" failed');
    expect(status.state).toBe("running");
    await store.complete(e!.leaseToken, { kind: "success" });
    expect((await store.runStatus("dag")).state).toBe("failed");
    const [dead] = await store.deadLetters("dag");
    expect(dead!.cancelledDependents).toEqual(["c", "d"]);
  });

  it("sweeps an expired lease back to the queue with the attempt counted, and fails it when exhausted", async () => {
    await store.submitRun(workflow([task("orphan", { retries: 1 }), task("after", { dependsOn: ["orphan"] })]), { runId: "sweep" });
    const [first] = await store.lease("dead-worker", 5, 100);
    expect(await store.sweepOrphans()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.sweepOrphans()).toBe(1);
    let status = await store.runStatus("sweep");
    expect(status.tasks[0]).toMatchObject({ state: "queued", attempts: 1 });
    expect(status.tasks[0]!.lastError).toContain("lease expired");
    const [second] = await store.lease("dead-worker", 5, 100);
    expect(second!.attempt).toBe(2);
    expect(second!.leaseToken).not.toBe(first!.leaseToken);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.sweepOrphans()).toBe(1);
    status = await store.runStatus("sweep");
    expect(status.tasks.map((row) => [row.key, row.state])).toEqual([
      ["orphan", "failed"],
      ["after", "cancelled"],
    ]);
    expect(status.state).toBe("failed");
  });

  it("settles a run whose last tasks ended at the same moment, at the next sweep", async () => {
    await store.submitRun(workflow([task("only")]), { runId: "settle" });
    const [only] = await leaseAll(store);
    await store.complete(only!.leaseToken, { kind: "success" });
    // As if two last completions had each seen the other still running.
    await sql(store, "UPDATE $schema.runs SET state = 'running', finished_at = NULL WHERE id = 'settle'");
    await store.sweepOrphans();
    const [run] = await sql<{ state: string }>(store, "SELECT state FROM $schema.runs WHERE id = 'settle'");
    expect(run!.state).toBe("succeeded");
  });

  it("cancels queued tasks at once and running ones at their next heartbeat", async () => {
    await store.submitRun(workflow([task("run1"), task("wait1", { dependsOn: ["run1"] }), task("q1", { priority: "low" })]), { runId: "cx" });
    const [running] = await store.lease("w1", 1, 30_000);
    const result = await store.cancelRun("cx");
    expect(result.cancelRequested).toEqual(["run1"]);
    expect([...result.cancelled].sort()).toEqual(["q1", "wait1"]);
    expect(await store.heartbeat(running!.taskId, running!.leaseToken, 30_000)).toBe("cancel-requested");
    // Even a failure report from the aborted attempt ends the task cancelled, never retried.
    expect(await store.complete(running!.leaseToken, { kind: "failure", error: "killed", signal: "SIGTERM" })).toMatchObject({
      state: "cancelled",
    });
    const status = await store.runStatus("cx");
    expect(status.state).toBe("cancelled");
    expect(status.counts.cancelled).toBe(3);
    await expect(store.cancelRun("cx", "run1")).rejects.toMatchObject({ code: "STORE_TASK_FINISHED" });
    await expect(store.cancelRun("cx", "nope")).rejects.toMatchObject({ code: "STORE_NOT_FOUND" });
  });

  it("redrives a failed task and re-blocks the dependents it cancelled", async () => {
    await store.submitRun(
      workflow([
        task("x"),
        task("other"),
        task("y", { dependsOn: ["x"] }),
        task("z", { dependsOn: ["y"] }),
        task("w", { dependsOn: ["y", "other"] }),
      ]),
      { runId: "rd" },
    );
    const [x, other] = await leaseAll(store);
    await store.complete(x!.leaseToken, { kind: "failure", error: "x broke", exitCode: 1 });
    await store.complete(other!.leaseToken, { kind: "success" });
    expect((await store.runStatus("rd")).state).toBe("failed");
    await expect(store.redrive("rd", "y")).rejects.toMatchObject({ code: "STORE_NOT_REDRIVABLE" });
    const redriven = await store.redrive("rd", "x");
    expect([...redriven.reblocked].sort()).toEqual(["w", "y", "z"]);
    const waiting = await sql<{ key: string; waiting_on: number; state: string }>(
      store,
      "SELECT key, waiting_on, state FROM $schema.tasks WHERE run_id = 'rd' ORDER BY seq",
    );
    expect(waiting.map((row) => [row.key, row.state, row.waiting_on])).toEqual([
      ["x", "queued", 0],
      ["other", "succeeded", 0],
      ["y", "blocked", 1],
      ["z", "blocked", 1],
      ["w", "blocked", 1],
    ]);
    expect((await store.runStatus("rd")).state).toBe("running");
    for (let round = 0; round < 3; round++) {
      for (const leased of await leaseAll(store)) {
        expect(leased.attempt).toBe(1);
        await store.complete(leased.leaseToken, { kind: "success" });
      }
    }
    const status = await store.runStatus("rd");
    expect(status.counts.succeeded).toBe(5);
    expect(status.state).toBe("succeeded");
  });
});
