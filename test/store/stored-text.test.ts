import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import type { Outcome } from "../../src/store/postgres/types.js";
import { openTestStore, sql, task, workflow } from "./helpers.js";

// A task's output may hold NUL bytes (`printf 'x\0y'`), which PostgreSQL's text refuses:
// every text column written from what a task printed must take them.
const NUL_LINE = "x\0y";
const STORED = "x\uFFFDy";

describe("text from tasks, stored", () => {
  let store: PostgresStore;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => ({ store, close } = await openTestStore()));
  afterAll(async () => close?.());
  beforeEach(async () => {
    await sql(store, "DELETE FROM $schema.runs");
  });

  const leaseOne = async (runId: string) => (await store.lease("w1", 10, 30_000)).find((leased) => leased.runId === runId)!;
  const row = async (runId: string) =>
    (await sql<{ state: string; last_error: string | null; signal: string | null; cancel_reason: string | null; tail: string[]; attempts: number }>(
      store,
      "SELECT state, last_error, signal, cancel_reason, tail, attempts FROM $schema.tasks WHERE run_id = $1",
      [runId],
    ))[0]!;

  it("a failure with NUL in its output, error and signal is retried, then dead-lettered with its last lines", async () => {
    await store.submitRun(workflow([task("nul", { retries: 1 })]), { runId: "fail" });
    const failure: Outcome = { kind: "failure", error: `exited: ${NUL_LINE}`, exitCode: 1, signal: "SIG\0", tail: ["attempt 1", NUL_LINE] };
    expect(await store.complete((await leaseOne("fail")).leaseToken, failure)).toMatchObject({ state: "queued" });
    expect(await row("fail")).toMatchObject({ state: "queued", last_error: `exited: ${STORED}`, signal: "SIG\uFFFD", tail: ["attempt 1", STORED] });
    await sql(store, "UPDATE $schema.tasks SET not_before = now() WHERE run_id = 'fail'");
    expect(await store.complete((await leaseOne("fail")).leaseToken, failure)).toMatchObject({ state: "failed" });
    expect(await row("fail")).toMatchObject({ state: "failed", attempts: 2, last_error: `exited: ${STORED}`, tail: ["attempt 1", STORED] });
    const [dead] = await store.deadLetters("fail");
    expect(dead).toMatchObject({ exitCode: 1, tail: ["attempt 1", STORED] });
  });

  it("a cancelled attempt, a success and a batched success keep their last lines; lone surrogates too", async () => {
    await store.submitRun(workflow([task("c"), task("s"), task("b")]), { runId: "ends" });
    const [c, s, b] = await store.lease("w1", 3, 30_000);
    expect(await store.complete(c!.leaseToken, { kind: "cancelled", reason: `by \0 request`, tail: [NUL_LINE] })).toMatchObject({ state: "cancelled" });
    expect(await store.complete(s!.leaseToken, { kind: "success", tail: [NUL_LINE] })).toMatchObject({ state: "succeeded" });
    // The batched path sends the lines as JSON, where a lone surrogate is refused as well.
    const batched = await store.completeAndLease([{ token: b!.leaseToken, outcome: { kind: "success", tail: [NUL_LINE, "half \uD800"] } }], "w1", 0, 30_000);
    expect(batched.completed).toMatchObject([{ state: "succeeded" }]);
    const rows = await sql<{ key: string; cancel_reason: string | null; tail: string[] }>(
      store,
      "SELECT key, cancel_reason, tail FROM $schema.tasks WHERE run_id = 'ends' ORDER BY key",
    );
    expect(rows).toEqual([
      { key: "b", cancel_reason: null, tail: [STORED, "half \uFFFD"] },
      { key: "c", cancel_reason: "by \uFFFD request", tail: [STORED] },
      { key: "s", cancel_reason: null, tail: [STORED] },
    ]);
  });

  it("a workflow whose name holds a NUL is submitted", async () => {
    await store.submitRun({ ...workflow([task("a")]), name: "nightly\0" }, { runId: "named" });
    expect((await store.runStatus("named")).name).toBe("nightly\uFFFD");
  });
});
