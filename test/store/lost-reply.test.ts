import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { startFreezableProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL, sql, task, until, useStoreSchema, waitForRun, workflow } from "./helpers.js";

describe("a reply lost after its commit", () => {
  const own = useStoreSchema();
  const { schema } = own;

  it("releaseStrays gives back a worker's leases but those it keeps, the attempt not counted; recordedEnd tells a recorded end", async () => {
    const { store } = own;
    await store.submitRun(
      workflow([task("kept"), task("stray"), task("asked"), task("done"), task("retry", { retries: 1 }), task("theirs")]),
      { runId: "strays" },
    );
    const [kept, stray, asked, done, retry] = await store.lease("w1", 5, 30_000);
    await store.lease("w2", 1, 30_000);
    await store.cancelRun("strays", "asked");
    expect(await store.complete(done!.leaseToken, { kind: "success" })).toMatchObject({ state: "succeeded" });
    expect(await store.complete(retry!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 })).toMatchObject({ state: "queued" });

    // The same completions again, as after a lost reply: the tokens own nothing, and the ends they recorded are known.
    expect(await store.complete(done!.leaseToken, { kind: "success" })).toBe(false);
    expect(await store.complete(retry!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 })).toBe(false);
    expect(await store.recordedEnd(done!.taskId, done!.leaseToken)).toEqual({ runId: "strays", state: "succeeded", cascaded: [], unblocked: [] });
    expect(await store.recordedEnd(retry!.taskId, retry!.leaseToken)).toMatchObject({ state: "queued" });
    // A token that ended nothing, or another task's: not recorded.
    expect(await store.recordedEnd(kept!.taskId, kept!.leaseToken)).toBe(false);
    expect(await store.recordedEnd(kept!.taskId, done!.leaseToken)).toBe(false);

    const released = await store.releaseStrays("w1", [kept!.leaseToken]);
    expect(released.map((row) => row.key).sort()).toEqual(["asked", "stray"]);
    const rows = await sql<{ key: string; state: string; attempts: number; worker_id: string | null; last_error: string | null }>(
      store,
      "SELECT key, state, attempts, worker_id, last_error FROM $schema.tasks WHERE run_id = 'strays' ORDER BY seq",
    );
    expect(rows.map((row) => [row.key, row.state, row.attempts, row.worker_id])).toEqual([
      ["kept", "running", 1, "w1"],
      ["stray", "queued", 0, null],
      // Its cancel pending, it never started either: its attempt not counted (before, 1).
      ["asked", "cancelled", 0, "w1"],
      ["done", "succeeded", 1, "w1"],
      ["retry", "queued", 1, null],
      ["theirs", "running", 1, "w2"],
    ]);
    expect(rows[1]!.last_error).toMatch(/reply the worker never received/);
    expect(stray!.key).toBe("stray");
    expect(asked!.key).toBe("asked");
  });

  it("a worker loses no task and uses up no attempt: what the lost round trip leased is given back, what it recorded is not stale", async () => {
    const { store } = own;
    // The worker's store reaches the database through a proxy that cuts a connection once the
    // database has committed a round trip and answered: the real driver's error on a lost reply.
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    const lossy = await PostgresStore.open({ connectionString: proxy.url(DATABASE_URL), schema });
    const events: WorkerEvent[] = [];
    const ran = new Map<string, number>();
    const worker = new PostgresWorker({
      store: lossy,
      concurrency: 2,
      leaseMs: 1_500,
      pollMs: 200,
      onEvent: (event) => events.push(event),
      handler: async (leased) => {
        ran.set(leased.key, (ran.get(leased.key) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 100));
      },
    });
    await worker.start();
    try {
      // No retries: an attempt used up by a lease that never started would make a dead letter.
      const runId = await store.submitRun(workflow(Array.from({ length: 30 }, (_, i) => task(`k${i}`))));
      await until(() => events.some((event) => event.type === "finished"));
      // Three round trips that record successes (their p_done names tokens) and lease the next tasks commit; their replies are lost.
      for (let cut = 0; cut < 3; cut++) await proxy.cutAfterReply('"token":');
      const status = await waitForRun(store, runId, 15_000);
      expect(status.tasks.filter((row) => row.state !== "succeeded" || row.attempts !== 1)).toEqual([]);
      expect(status.state).toBe("succeeded");
      // The worker reports a task's end once the database has answered; the run may be seen done a moment before.
      await until(() => events.filter((event) => event.type === "finished").length === 30);
      // Each task ran once; what the lost round trips leased was given back, and ran later.
      expect([...ran.values()].every((count) => count === 1)).toBe(true);
      expect(ran.size).toBe(30);
      expect(events.filter((event) => event.type === "stray-released").length).toBeGreaterThanOrEqual(3);
      // The successes the lost round trips recorded are reported as such, not as lost leases.
      const finished = events.flatMap((event) => (event.type === "finished" ? [event.result === false ? "stale" : event.result.state] : []));
      expect(finished).toEqual(Array(30).fill("succeeded"));
      expect(events.some((event) => event.type === "stopped")).toBe(false);
    } finally {
      await worker.stop({ deadlineMs: 1_000 });
      await lossy.close();
      await proxy.close();
    }
  });
});
