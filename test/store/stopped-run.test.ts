import { describe, expect, it } from "vitest";
import { task, useStoreSchema, workflow } from "./helpers.js";

/**
 * A run that `run --store` stopped: its waiting tasks are cancelled at the signal and its running ones marked
 * (cancelRun with waitingOnly). Whoever ends a marked task then cancels it as the shutdown's, and cancels what
 * still waits on the shutdown's own account, not on that task's: a local run's shutdown names no dependency.
 */
describe("a task of a stopped run", () => {
  const fixture = useStoreSchema();

  /** Submits `a` (leased here, for `leaseMs`) and `d`, which depends on it; returns the run and a's lease token. */
  async function leasedWithDependent(retries = 0, leaseMs = 30_000) {
    const { store } = fixture;
    const runId = await store.submitRun(workflow([task("a", { retries }), task("d", { dependsOn: ["a"] })]));
    const [leased] = await store.lease("w", 1, leaseMs, { runId });
    expect(leased?.key).toBe("a");
    return { runId, token: leased!.leaseToken };
  }

  const rowsOf = async (runId: string) => new Map((await fixture.store.runStatus(runId)).tasks.map((row) => [row.key, row]));

  it("given back by its own stopping worker before the cancel at the signal was made: its dependent is the shutdown's, not cancelled by it", async () => {
    const { runId, token } = await leasedWithDependent();
    expect(await fixture.store.release(token, { started: true })).toBe(true);
    const rows = await rowsOf(runId);
    expect(rows.get("a")).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "aborted by shutdown" });
    expect(rows.get("d")).toMatchObject({ state: "cancelled", cancelReason: "shutdown: not started", cancelledBy: null });
  });

  it("marked at the signal, then failing with retries left on any worker: cancelled, not retried, and its run ends", async () => {
    const { runId, token } = await leasedWithDependent(2);
    // The cancel at the signal: what waits (d), and a marked as running.
    expect(await fixture.store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } })).toMatchObject({ cancelled: ["d"], cancelRequested: [] });
    expect(await fixture.store.complete(token, { kind: "failure", error: "exited with code 1", exitCode: 1 })).toMatchObject({ state: "cancelled" });
    const rows = await rowsOf(runId);
    expect(rows.get("a")).toMatchObject({ state: "cancelled", attempts: 1, cancelReason: "shutdown: not retried (attempt 1 failed: exited with code 1)" });
    expect((await fixture.store.runStatus(runId)).state).toBe("cancelled");
  });

  it("marked at the signal, then given back by another worker's own stop: cancelled, not queued again for a third", async () => {
    const { runId, token } = await leasedWithDependent();
    await fixture.store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } });
    // A plain release, as `taskq worker` stopping by a signal of its own gives its tasks back.
    expect(await fixture.store.release(token)).toBe(true);
    expect((await rowsOf(runId)).get("a")).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "aborted by shutdown" });
    expect(await fixture.store.lease("w2", 5, 30_000, { runId })).toEqual([]);
  });

  it("marked at the signal, its worker gone: once its lease runs out, the sweep cancels it rather than queue it again", async () => {
    const { runId } = await leasedWithDependent(2, 200);
    await fixture.store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await fixture.store.sweepOrphans()).toBe(1);
    expect((await rowsOf(runId)).get("a")).toMatchObject({ state: "cancelled", cancelReason: "aborted by shutdown" });
    expect(await fixture.store.lease("w2", 5, 30_000, { runId })).toEqual([]);
  });

  it("of a run not stopped: a release queues it again and a failure is retried, as ever", async () => {
    const first = await leasedWithDependent();
    expect(await fixture.store.release(first.token)).toBe(true);
    expect((await rowsOf(first.runId)).get("a")).toMatchObject({ state: "queued", attempts: 0 });
    const second = await leasedWithDependent(2);
    expect(await fixture.store.complete(second.token, { kind: "failure", error: "exited with code 1", exitCode: 1 })).toMatchObject({ state: "queued" });
  });
});
