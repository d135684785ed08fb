import { describe, expect, it } from "vitest";
import { schemaNames } from "../../src/store/postgres/names.js";
import { sweepExpiredLeases } from "../../src/store/postgres/sweep.js";
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
    expect(await fixture.store.release(token, { attempt: "started" })).toBe(true);
    const rows = await rowsOf(runId);
    expect(rows.get("a")).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "aborted by shutdown" });
    expect(rows.get("d")).toMatchObject({ state: "cancelled", cancelReason: "shutdown: not started", cancelledBy: null });
  });

  it("its attempt after one that failed cut short, having printed nothing: the lines status gives say they are of the attempt that failed", async () => {
    const { store } = fixture;
    const runId = await store.submitRun(workflow([task("a", { retries: 2, backoff: { baseMs: 1, maxMs: 1 } })]));
    const [first] = await store.lease("w1", 1, 30_000, { runId });
    await store.complete(first!.leaseToken, { kind: "failure", error: "exited with code 1", exitCode: 1, tail: ["attempt 1 failed here"] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [second] = await store.lease("w2", 1, 30_000, { runId });
    expect(second?.key).toBe("a");
    // Given back by its stopping run, not counted: without its own lines, those of attempt 1 are not its own.
    expect(await store.releaseAs(second!.leaseToken, { attempt: "started" }, { tail: [] })).toBe("run-stopped");
    expect((await rowsOf(runId)).get("a")).toMatchObject({ state: "cancelled", attempts: 1, cancelledRunning: true, tail: ["attempt 1 failed here"], tailAttempt: 1 });
    // With lines of its own, those are given, as its own (no attempt named).
    const again = await store.submitRun(workflow([task("a", { retries: 2, backoff: { baseMs: 1, maxMs: 1 } })]));
    const [one] = await store.lease("w1", 1, 30_000, { runId: again });
    await store.complete(one!.leaseToken, { kind: "failure", error: "exited with code 1", exitCode: 1, tail: ["attempt 1 failed here"] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [two] = await store.lease("w2", 1, 30_000, { runId: again });
    expect(await store.releaseAs(two!.leaseToken, { attempt: "started" }, { tail: ["attempt 2 was here"] })).toBe("run-stopped");
    const row = (await rowsOf(again)).get("a")!;
    expect(row).toMatchObject({ state: "cancelled", cancelledRunning: true, tail: ["attempt 2 was here"] });
    expect(row.tailAttempt).toBeUndefined();
  });

  it("marked at the signal, then given back unstarted by its worker's own stop: cancelled as not started, not as cut short as it ran", async () => {
    const { runId, token } = await leasedWithDependent();
    await fixture.store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } });
    // As a `taskq worker` stopping by a signal of its own gives back what it leased and had not started yet.
    expect(await fixture.store.releaseAs(token, undefined, { neverStarted: true })).toBe("run-stopped");
    const row = (await rowsOf(runId)).get("a")!;
    expect(row).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "shutdown: not started" });
    // Not among those cut short as they ran (status would give it a log on that worker, which never ran it).
    expect(row.cancelledRunning).toBeUndefined();
  });

  it("asked to cancel, then given back unstarted by its worker's own stop: not among those cut short as they ran", async () => {
    const { runId, token } = await leasedWithDependent();
    await fixture.store.cancelRun(runId);
    expect(await fixture.store.releaseAs(token, undefined, { neverStarted: true })).toBe("requested");
    const row = (await rowsOf(runId)).get("a")!;
    // Its attempt not counted, as any lease given back unstarted: before, 1, an attempt its command never ran.
    expect(row).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "cancelled by request" });
    // status would give it a log, and last lines, on a worker that never ran it.
    expect(row.cancelledRunning).toBeUndefined();
  });

  it("asked to cancel after a failed attempt, its next given back unstarted: that attempt not counted, and its reason keeps the failed one's error, as a cancel of it waiting for its retry", async () => {
    const { store } = fixture;
    const runId = await store.submitRun(workflow([task("a", { retries: 2, backoff: { baseMs: 1, maxMs: 1 } })]));
    const [first] = await store.lease("w1", 1, 30_000, { runId });
    await store.complete(first!.leaseToken, { kind: "failure", error: "exited with code 7", exitCode: 7, tail: ["trying 1"] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [second] = await store.lease("w2", 1, 30_000, { runId });
    expect(second).toMatchObject({ key: "a", attempt: 2 });
    await store.cancelRun(runId);
    expect(await store.releaseAs(second!.leaseToken, undefined, { neverStarted: true })).toBe("requested");
    const row = (await rowsOf(runId)).get("a")!;
    // Before: attempts 2, and "cancelled by request" alone.
    expect(row).toMatchObject({ state: "cancelled", attempts: 1, cancelReason: "cancelled by request: not retried (attempt 1 failed: exited with code 7)", tail: ["trying 1"] });
    expect(row.cancelledRunning).toBeUndefined();
  });

  it("marked at the signal, then given back by a worker whose command never spawned, with no stop of its own: not cut short as it ran", async () => {
    const { runId, token } = await leasedWithDependent();
    await fixture.store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } });
    expect(await fixture.store.releaseAs(token, undefined, { tail: ["never"], notSpawned: true })).toBe("run-stopped");
    const row = (await rowsOf(runId)).get("a")!;
    expect(row).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "shutdown: stopped before its command started" });
    // status would give it a log, and last lines, of a command that never ran.
    expect(row.cancelledRunning).toBeUndefined();
  });

  it("asked to cancel, then given back by a worker whose command never spawned: not among those cut short as they ran", async () => {
    const { runId, token } = await leasedWithDependent();
    await fixture.store.cancelRun(runId);
    expect(await fixture.store.releaseAs(token, undefined, { tail: ["never"], notSpawned: true })).toBe("requested");
    const row = (await rowsOf(runId)).get("a")!;
    expect(row).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "cancelled by request" });
    expect(row.cancelledRunning).toBeUndefined();
  });

  it("marked at the signal, then failing with retries left on any worker: cancelled, not retried, and its run ends", async () => {
    const { runId, token } = await leasedWithDependent(2);
    // The cancel at the signal: what waits (d), and a marked as running.
    expect(await fixture.store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } })).toMatchObject({ cancelled: ["d"], cancelRequested: [] });
    // status says so of it while it runs.
    expect((await rowsOf(runId)).get("a")).toMatchObject({ state: "running", runStopped: true });
    expect(await fixture.store.complete(token, { kind: "failure", error: "exited with code 1", exitCode: 1 })).toMatchObject({ state: "cancelled" });
    const rows = await rowsOf(runId);
    expect(rows.get("a")).toMatchObject({ state: "cancelled", attempts: 1, cancelReason: "shutdown: not retried (attempt 1 failed: exited with code 1)" });
    expect((await fixture.store.runStatus(runId)).state).toBe("cancelled");
  });

  it("marked at the signal, then given back by another worker's own stop: cancelled, not queued again for a third", async () => {
    const { runId, token } = await leasedWithDependent();
    await fixture.store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } });
    // A plain release, as `taskq worker` stopping by a signal of its own gives its tasks back: told as what became of it.
    expect(await fixture.store.releaseAs(token)).toBe("run-stopped");
    expect((await rowsOf(runId)).get("a")).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "aborted by shutdown" });
    expect(await fixture.store.lease("w2", 5, 30_000, { runId })).toEqual([]);
  });

  it("marked at the signal, its worker gone: once its lease runs out, the sweep cancels it rather than queue it again", async () => {
    const { runId } = await leasedWithDependent(2, 200);
    await fixture.store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    // Told as its run's stop, not as a cancel someone asked for.
    const client = await fixture.store.pool.connect();
    try {
      expect(await sweepExpiredLeases(client, schemaNames(fixture.schema))).toEqual([expect.objectContaining({ key: "a", state: "cancelled", runStopped: true })]);
    } finally {
      client.release();
    }
    expect((await rowsOf(runId)).get("a")).toMatchObject({ state: "cancelled", cancelReason: "aborted by shutdown" });
    expect(await fixture.store.lease("w2", 5, 30_000, { runId })).toEqual([]);
  });

  it("a run given work again while a task its stop marked still runs (its run --store killed before its last cancel): that task is asked to stop, and its end cancels none of the new work", async () => {
    const { store } = fixture;
    // "a" runs on; "f" fails, which cancels "g"; the run is stopped.
    const runId = await store.submitRun(workflow([task("a", { retries: 2, priority: "high" }), task("f"), task("g", { dependsOn: ["f"] })]));
    const leased = await store.lease("w", 2, 30_000, { runId });
    const tokenOf = (key: string): string => leased.find((row) => row.key === key)!.leaseToken;
    await store.complete(tokenOf("f"), { kind: "failure", error: "exited with code 3", exitCode: 3 });
    await store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } });
    // The dead letter redriven: "f" queued, "g" blocked on it again.
    expect(await store.redrive(runId, "f")).toMatchObject({ reblocked: ["g"] });
    expect(await store.complete(tokenOf("a"), { kind: "failure", error: "exited with code 1", exitCode: 1 })).toMatchObject({ state: "cancelled" });
    const rows = await rowsOf(runId);
    expect(rows.get("a")).toMatchObject({ state: "cancelled", cancelReason: "aborted by shutdown" });
    expect(rows.get("f")).toMatchObject({ state: "queued" });
    expect(rows.get("g")).toMatchObject({ state: "blocked" });
    // Tasks added by a submit of the same run are left alone too.
    const [again] = await store.lease("w", 1, 30_000, { runId });
    await store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } });
    await store.submit(workflow([task("a"), task("f"), task("g", { dependsOn: ["f"] }), task("h")]), { runId });
    await store.release(again!.leaseToken);
    expect((await rowsOf(runId)).get("h")).toMatchObject({ state: "queued" });
  });

  it("of a run not stopped: a release queues it again and a failure is retried, as ever", async () => {
    const first = await leasedWithDependent();
    expect(await fixture.store.releaseAs(first.token)).toBe("queued");
    expect((await rowsOf(first.runId)).get("a")).toMatchObject({ state: "queued", attempts: 0 });
    const second = await leasedWithDependent(2);
    expect(await fixture.store.complete(second.token, { kind: "failure", error: "exited with code 1", exitCode: 1 })).toMatchObject({ state: "queued" });
  });
});
