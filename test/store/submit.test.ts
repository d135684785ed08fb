import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import { leaseAll, openTestStore, sql, task, workflow } from "./helpers.js";

describe("submitRun", () => {
  let store: PostgresStore;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => ({ store, close } = await openTestStore()));
  afterAll(async () => close?.());

  it("generates a run id and starts tasks with dependencies blocked", async () => {
    const runId = await store.submitRun(workflow([task("a"), task("b"), task("c", { dependsOn: ["a", "b"] })]));
    expect(runId).toMatch(/^r-[0-9a-z]+-[0-9a-f]{8}$/);
    const status = await store.runStatus(runId);
    expect(status.tasks.map((row) => [row.key, row.state])).toEqual([
      ["a", "queued"],
      ["b", "queued"],
      ["c", "blocked"],
    ]);
    expect(status.tasks[2]!.dependsOn).toEqual(["a", "b"]);
    const [row] = await sql<{ waiting_on: number }>(store, "SELECT waiting_on FROM $schema.tasks WHERE run_id = $1 AND key = 'c'", [runId]);
    expect(row!.waiting_on).toBe(2);
    await store.cancelRun(runId);
  });

  it("refuses a run id that is not a plain name (it names each worker's log folder), and stores nothing", async () => {
    for (const runId of ["", "../escape", "a/b", ".hidden", "-flag", "has space", "x".repeat(129)]) {
      await expect(store.submitRun(workflow([task("a")]), { runId })).rejects.toMatchObject({ code: "INVALID_RUN_ID", exitCode: 2 });
    }
    const rows = await sql<{ n: number }>(store, "SELECT count(*)::int AS n FROM $schema.runs WHERE id IN ('', '../escape', 'a/b')");
    expect(rows[0]!.n).toBe(0);
    const longest = "A1._-".repeat(25) + "xyz";
    expect(await store.submitRun(workflow([task("a")]), { runId: longest })).toBe(longest);
    await store.cancelRun(longest);
  });

  it("is idempotent on the run id and updates a queued task's priority (dedup)", async () => {
    const wf = workflow([task("x"), task("y", { dependsOn: ["x"] })]);
    await store.submitRun(wf, { runId: "dedup" });
    await store.submitRun(wf, { runId: "dedup" });
    const later = Date.now() + 60_000;
    await store.submitRun(workflow([task("x", { priority: "critical", runAt: later }), task("y", { dependsOn: ["x"] })]), { runId: "dedup" });
    const rows = await sql<{ key: string; priority: number; not_before: Date }>(
      store,
      "SELECT key, priority, not_before FROM $schema.tasks WHERE run_id = 'dedup' ORDER BY seq",
    );
    expect(rows.map((row) => row.key)).toEqual(["x", "y"]);
    expect(rows[0]!.priority).toBe(3);
    expect(Math.abs(rows[0]!.not_before.getTime() - later)).toBeLessThan(5);
    const deps = await sql(store, "SELECT * FROM $schema.task_deps WHERE run_id = 'dedup'");
    expect(deps).toHaveLength(1);
    await store.cancelRun("dedup");
  });

  it("says what a submit did: tasks added, kept as stored, and those the workflow defines otherwise", async () => {
    const first = await store.submit(workflow([task("p", { priority: "low" }), task("q", { dependsOn: ["p"] })]), { runId: "told" });
    expect(first).toEqual({ runId: "told", added: 2, kept: 0, changed: [], created: true });
    const second = await store.submit(
      workflow([
        task("p", { run: "echo other", priority: "high", env: { A: "1" } }),
        task("q", { dependsOn: ["p"], priority: "high", retries: 3, timeoutMs: 5_000 }),
        task("r"),
      ]),
      { runId: "told" },
    );
    expect(second).toEqual({
      runId: "told",
      added: 1,
      kept: 2,
      changed: [
        // A queued task takes a new priority (dedup); a blocked one, like an ended one, keeps it.
        { key: "p", differ: ["run", "env", "priority"], taken: ["priority"] },
        { key: "q", differ: ["priority", "retries", "timeout"], taken: [] },
      ],
      created: false,
    });
    const rows = await sql<{ key: string; run: string; priority: number; max_attempts: number }>(
      store,
      "SELECT key, run, priority, max_attempts FROM $schema.tasks WHERE run_id = 'told' ORDER BY seq",
    );
    expect(rows).toEqual([
      { key: "p", run: task("p").run, priority: 2, max_attempts: 1 },
      { key: "q", run: task("q").run, priority: 1, max_attempts: 1 },
      { key: "r", run: task("r").run, priority: 1, max_attempts: 1 },
    ]);
    // The same workflow again: nothing differs.
    expect(await store.submit(workflow([task("p", { priority: "high" }), task("q", { dependsOn: ["p"] })]), { runId: "told" })).toEqual({
      runId: "told",
      added: 0,
      kept: 2,
      changed: [],
      created: false,
    });
    await store.cancelRun("told");
  });

  it("names a blocked task whose runAt or delay the workflow now sets otherwise: it keeps the stored one", async () => {
    const at = Date.now() + 3_600_000;
    const blocked = (id: string, overrides: Parameters<typeof task>[1] = {}) => task(id, { dependsOn: ["first"], ...overrides });
    const v1 = [task("first"), blocked("at", { runAt: at }), blocked("after", { delayMs: 60_000 }), blocked("plain"), blocked("same", { runAt: at })];
    await store.submit(workflow(v1), { runId: "when" });
    const notBefore = async () =>
      Object.fromEntries(
        (await sql<{ key: string; ms: number }>(store, "SELECT key, (extract(epoch FROM not_before) * 1000)::float8 AS ms FROM $schema.tasks WHERE run_id = 'when'")).map((row) => [row.key, row.ms]),
      );
    const stored = await notBefore();
    // The same file again, a moment later: nothing differs (a blocked task's delay counts from its own submit).
    expect((await store.submit(workflow(v1), { runId: "when" })).changed).toEqual([]);
    const v2 = [task("first"), blocked("at", { runAt: at + 60_000 }), blocked("after", { delayMs: 120_000 }), blocked("plain", { delayMs: 1_000 }), blocked("same", { runAt: at })];
    expect((await store.submit(workflow(v2), { runId: "when" })).changed).toEqual([
      { key: "at", differ: ["runAt"], taken: [] },
      { key: "after", differ: ["delay"], taken: [] },
      { key: "plain", differ: ["delay"], taken: [] },
    ]);
    // Neither set any more: "at" had one of them, which the store cannot tell apart.
    expect((await store.submit(workflow([task("first"), blocked("at"), blocked("after", { runAt: at }), blocked("plain"), blocked("same", { runAt: at })]), { runId: "when" })).changed).toEqual([
      { key: "at", differ: ["runAt or delay"], taken: [] },
      { key: "after", differ: ["runAt"], taken: [] },
    ]);
    // Kept, as the notes say.
    expect(await notBefore()).toEqual(stored);
    await store.cancelRun("when");
  });

  it("counts a delay from the database's clock when the task is written, also on resubmission", async () => {
    const delayed = workflow([task("d", { delayMs: 60_000 }), task("e", { dependsOn: ["d"], delayMs: 30_000 })]);
    await store.submitRun(delayed, { runId: "delayed" }); // a new run: one statement
    const notBefore = () =>
      sql<{ key: string; wait_ms: number }>(
        store,
        "SELECT key, (extract(epoch FROM not_before - now()) * 1000)::float8 AS wait_ms FROM $schema.tasks WHERE run_id = 'delayed' ORDER BY seq",
      );
    const first = await notBefore();
    expect(first.map((row) => row.key)).toEqual(["d", "e"]);
    expect(first[0]!.wait_ms).toBeGreaterThan(55_000);
    expect(first[0]!.wait_ms).toBeLessThanOrEqual(60_000);
    expect(first[1]!.wait_ms).toBeGreaterThan(25_000);
    expect(first[1]!.wait_ms).toBeLessThanOrEqual(30_000);
    // Resubmitted while still queued: the delay counts again from now (the other path).
    await store.submitRun(workflow([task("d", { delayMs: 120_000 })]), { runId: "delayed" });
    expect((await notBefore())[0]!.wait_ms).toBeGreaterThan(115_000);
    await store.cancelRun("delayed");
  });

  it("a queued task given a new delay by a resubmit keeps it when the same file is submitted again: the step run again moves nothing", async () => {
    await store.submit(workflow([task("d", { delayMs: 60_000 })]), { runId: "redelayed" });
    const notBefore = async () => (await sql<{ ms: number }>(store, "SELECT (extract(epoch FROM not_before) * 1000)::float8 AS ms FROM $schema.tasks WHERE run_id = 'redelayed'"))[0]!.ms;
    const longer = workflow([task("d", { delayMs: 120_000 })]);
    expect((await store.submit(longer, { runId: "redelayed" })).changed).toEqual([{ key: "d", differ: ["delay"], taken: ["delay"] }]);
    const moved = await notBefore();
    // The database's clock moves on between the two submits: a delay counted again would show.
    await sql(store, "SELECT pg_sleep(0.05)");
    expect((await store.submit(longer, { runId: "redelayed" })).changed).toEqual([]);
    expect(await notBefore()).toBe(moved);
    await store.cancelRun("redelayed");
  });

  it("a redriven task keeps the not-before its redrive gave it when the same file is submitted again: its delay or runAt is not taken as changed", async () => {
    const file = workflow([task("late", { delayMs: 10 }), task("dated", { runAt: Date.now() - 60_000 })]);
    await store.submit(file, { runId: "redriven-again" });
    await new Promise((resolve) => setTimeout(resolve, 30));
    for (const leased of await leaseAll(store)) await store.complete(leased.leaseToken, { kind: "failure", error: "boom", exitCode: 1 });
    await store.redrive("redriven-again", "late");
    await store.redrive("redriven-again", "dated");
    const notBefore = async () => (await sql<{ ms: number }>(store, "SELECT (extract(epoch FROM not_before) * 1000)::float8 AS ms FROM $schema.tasks WHERE run_id = 'redriven-again' ORDER BY seq")).map((row) => row.ms);
    const redriven = await notBefore();
    await sql(store, "SELECT pg_sleep(0.05)");
    // The CI step run again: nothing in the file changed, so nothing is said to have, and nothing moves.
    expect((await store.submit(file, { runId: "redriven-again" })).changed).toEqual([]);
    expect(await notBefore()).toEqual(redriven);
    await store.cancelRun("redriven-again");
  });

  it("adds new tasks to an existing run, cancelling those whose dependency already failed", async () => {
    await store.submitRun(workflow([task("f")]), { runId: "grow" });
    const [leased] = await leaseAll(store);
    await store.complete(leased!.leaseToken, { kind: "failure", error: "boom", exitCode: 1 });
    await store.submitRun(workflow([task("f"), task("g", { dependsOn: ["f"] })]), { runId: "grow" });
    const status = await store.runStatus("grow");
    const g = status.tasks.find((row) => row.key === "g")!;
    expect(g.state).toBe("cancelled");
    expect(g.cancelReason).toBe('dependency "f" failed');
    expect(g.cancelledBy).toBe("f");
    expect(status.state).toBe("failed");
    // A later workflow may name only the existing dependency, not repeat it.
    await store.submitRun(workflow([task("h", { dependsOn: ["f"] })]), { runId: "grow" });
    expect((await store.runStatus("grow")).tasks.find((row) => row.key === "h")).toMatchObject({ state: "cancelled", cancelledBy: "f" });
  });

  it("rejects an unknown dependency with a stable code and writes nothing", async () => {
    await expect(store.submitRun(workflow([task("p", { dependsOn: ["nope"] })]), { runId: "bad" })).rejects.toMatchObject({
      code: "STORE_UNKNOWN_DEPENDENCY",
    });
    await expect(store.runStatus("bad")).rejects.toMatchObject({ code: "STORE_NOT_FOUND" });
  });
});
