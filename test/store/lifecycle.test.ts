import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MAX_DURATION_MS } from "../../src/loaders/limits.js";
import { backoffDelay } from "../../src/store/postgres/backoff.js";
import { cancelDependents, settleRuns } from "../../src/store/postgres/graph.js";
import { renewLease } from "../../src/store/postgres/lease.js";
import { schemaNames } from "../../src/store/postgres/names.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import type { Outcome } from "../../src/store/postgres/types.js";
import { createPool, createTestDatabase, DATABASE_URL, leaseAll, openTestStore, sql, task, transactionCount, workflow } from "./helpers.js";

describe("task lifecycle", () => {
  let store: PostgresStore;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
  let close: (() => Promise<void>) | undefined;
  /**
   * The file's own database: several tests count the rows a statement reads, which a transaction left open in the
   * same database by a test file beside this one raises (deleted rows' index entries read until a VACUUM can remove them).
   */
  let databaseUrl = DATABASE_URL;
  let dropDatabase: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ url: databaseUrl, drop: dropDatabase } = await createTestDatabase());
    // Jitter pinned to the top of the range, so the backoff is exact.
    ({ store, close } = await openTestStore({ random: () => 0.999999, url: databaseUrl }));
  });
  afterAll(async () => {
    await close?.();
    await dropDatabase?.();
  });
  beforeEach(async () => {
    await sql(store, "DELETE FROM $schema.runs");
  });

  it("computes backoff as base * 2^(n-1), capped, with full jitter", () => {
    const policy = { baseMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, policy, () => 0.999999))).toEqual([100, 200, 400, 800, 1_000]);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
    expect(backoffDelay(2000, policy, () => 0.5)).toBe(500);
  });

  it("runState tells a run's state alone: running while a task is left, then how it ended; no run is STORE_NOT_FOUND", async () => {
    await store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] })]), { runId: "state" });
    expect(await store.runState("state")).toBe("running");
    const [a] = await leaseAll(store);
    await store.complete(a!.leaseToken, { kind: "success" });
    expect(await store.runState("state")).toBe("running");
    const [b] = await leaseAll(store);
    await store.complete(b!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 });
    expect(await store.runState("state")).toBe("failed");
    await expect(store.runState("nope")).rejects.toMatchObject({ code: "STORE_NOT_FOUND", message: 'no run "nope"' });
  });

  it("runStatus reads a run and its tasks as of one moment: a resubmit that reopens an ended run as it is read is seen whole or not at all", async () => {
    await store.submitRun(workflow([task("a")]), { runId: "reopened" });
    const [a] = await leaseAll(store);
    await store.complete(a!.leaseToken, { kind: "success" });
    expect(await store.runState("reopened")).toBe("succeeded");
    // Once the statement that reads the run's row has been answered, and before anything else is asked on that
    // connection, the run is submitted again with a new task (which makes it run again), and that is committed.
    let reopened = false;
    const reopen = async (): Promise<void> => {
      reopened = true;
      await store.submit(workflow([task("a"), task("b")]), { runId: "reopened" });
    };
    const pool = createPool(10, databaseUrl);
    const patched = new WeakSet<object>();
    pool.on("acquire", (client) => {
      if (patched.has(client)) return;
      patched.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string }).text ?? "";
        if (reopened || !text.includes("AS read_at")) return query(...args);
        const callback = typeof args.at(-1) === "function" ? (args.pop() as (error: unknown, result: unknown) => void) : undefined;
        const answered = (query(...args) as Promise<unknown>).then(async (result) => {
          await reopen();
          return result;
        });
        if (callback === undefined) return answered;
        answered.then((result) => callback(undefined, result), (error: unknown) => callback(error, undefined));
        return undefined;
      };
    });
    const watched = new PostgresStore({ pool, schema: store.schema });
    try {
      const status = await watched.runStatus("reopened");
      expect(reopened).toBe(true);
      const read = `${status.state}: ${status.tasks.map((t) => `${t.key} ${t.state}`).join(", ")}`;
      // Before the resubmit, or after it: never the run as it was with the task the resubmit added.
      expect(["succeeded: a succeeded", "running: a succeeded, b queued"]).toContain(read);
      expect(await store.runState("reopened")).toBe("running");
    } finally {
      await watched.close();
      await pool.end();
    }
  });

  it("runStatus read as a run's last task ends never says the run is running with nothing left to run: its state goes with its tasks", async () => {
    const seen: string[] = [];
    for (let i = 0; i < 60; i++) {
      const runId = `ending-${i}`;
      await store.submitRun(workflow([task("last")]), { runId });
      const [last] = await leaseAll(store);
      // A success settles its run in its own commit; a failure just after it.
      const outcome: Outcome = i % 2 === 0 ? { kind: "success" } : { kind: "failure", error: "exit 1", exitCode: 1 };
      const ending = store.complete(last!.leaseToken, outcome);
      const status = await store.runStatus(runId);
      await ending;
      const unfinished = status.counts.blocked + status.counts.queued + status.counts.running;
      seen.push(`${status.state} with ${unfinished} unfinished`);
    }
    expect(seen.filter((read) => read === "running with 0 unfinished")).toEqual([]);
    // Both were read: the run still running, and ended.
    expect(seen).toContain("running with 1 unfinished");
    expect(seen.some((read) => /^(succeeded|failed) with 0 unfinished$/.test(read))).toBe(true);
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

  it("does not retry a permanent failure; leaves retryOn to the handler, to which the lease hands it", async () => {
    await store.submitRun(workflow([task("perm", { retries: 5 }), task("picky", { retries: 5, retryOn: [75] })]), { runId: "perm" });
    const [perm, picky] = await leaseAll(store);
    expect([perm!.retryOn, picky!.retryOn]).toEqual([[], [75]]);
    expect(await store.complete(perm!.leaseToken, { kind: "failure", error: "not found", exitCode: 127, permanent: true })).toMatchObject({
      state: "failed",
    });
    // The handler knows what the codes cannot tell: a timed-out attempt (here its shell exited 143 on
    // SIGTERM) is retried whatever retryOn lists. The store does not judge the code again.
    const timedOut = { kind: "failure", error: "timed out after 1s", exitCode: 143, timedOut: true } as const;
    expect(await store.complete(picky!.leaseToken, timedOut)).toMatchObject({ state: "queued" });
    await sql(store, "UPDATE $schema.tasks SET not_before = now() WHERE key = 'picky'");
    const [again] = await leaseAll(store);
    // Made permanent by the handler, which says why: it is the error the dead letter shows.
    const unlisted = { kind: "failure", error: "killed by SIGKILL (137 is not in retryOn: not retried)", signal: "SIGKILL", permanent: true } as const;
    expect(await store.complete(again!.leaseToken, unlisted)).toMatchObject({ state: "failed" });
    expect((await store.deadLetters("perm")).map((row) => [row.key, row.attempts, row.lastError])).toEqual([
      ["perm", 1, "not found"],
      ["picky", 2, "killed by SIGKILL (137 is not in retryOn: not retried)"],
    ]);
  });

  it("a dead letter whose last attempt left no lines keeps the latest earlier attempt's, and says which, as a local run's summary does", async () => {
    await store.submitRun(workflow([task("quiet", { retries: 3, backoff: { baseMs: 1, maxMs: 1 } })]), { runId: "quiet-tail" });
    /** One attempt, leased once its backoff (at most 1 ms) is over, ending failed with `tail`. */
    const attempt = async (tail: string[]): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [leased] = await leaseAll(store);
      await store.complete(leased!.leaseToken, { kind: "failure", error: `exited with code ${leased!.attempt}`, exitCode: leased!.attempt, tail });
    };
    await attempt(["one", "two"]);
    await attempt([]);
    await attempt(["three"]);
    await attempt([]);
    const [dead] = await store.deadLetters("quiet-tail");
    expect(dead).toMatchObject({ attempts: 4, lastError: "exited with code 4", exitCode: 4, tail: ["three"], tailAttempt: 3 });
    expect((await store.runStatus("quiet-tail")).tasks[0]).toMatchObject({ tail: ["three"], tailAttempt: 3 });

    // Redriven, its attempts start over, and so do its lines: a last attempt with lines shows its own.
    await store.redrive("quiet-tail", "quiet");
    for (const tail of [[], [], [], ["last"]]) await attempt(tail);
    const [again] = await store.deadLetters("quiet-tail");
    expect(again).toMatchObject({ attempts: 4, tail: ["last"] });
    expect(again).not.toHaveProperty("tailAttempt");
  });

  it("kept lines of an earlier attempt name the worker that wrote them (its log has them), or none where the store does not know it", async () => {
    /** One attempt of the run's one task, leased by `worker` once its backoff (at most 1 ms) is over, ending failed with `tail`. */
    const attempt = async (runId: string, worker: string, tail: string[]): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [leased] = await store.lease(worker, 5, 10_000, { runId });
      await store.complete(leased!.leaseToken, { kind: "failure", error: "exited with code 1", exitCode: 1, tail });
    };
    // Attempt 1 on A wrote them, attempt 2 on B none: A's log has them, not B's (the last attempt's).
    await store.submitRun(workflow([task("t", { retries: 1, backoff: { baseMs: 1, maxMs: 1 } })]), { runId: "tail-worker" });
    await attempt("tail-worker", "worker-a", ["from a"]);
    await attempt("tail-worker", "worker-b", []);
    const [dead] = await store.deadLetters("tail-worker");
    expect(dead).toMatchObject({ workerId: "worker-b", tail: ["from a"], tailAttempt: 1, tailWorkerId: "worker-a" });
    // A third attempt, on C, none either: the worker of the attempt that failed last is B, and the store kept A's with the lines
    // (before, it did not know it: status said "the store did not record" it, of a run whose every attempt ran on one worker too).
    await store.submitRun(workflow([task("t", { retries: 2, backoff: { baseMs: 1, maxMs: 1 } })]), { runId: "tail-worker-3" });
    await attempt("tail-worker-3", "worker-a", ["from a"]);
    await attempt("tail-worker-3", "worker-b", []);
    expect((await store.runStatus("tail-worker-3")).tasks[0]).toMatchObject({ state: "queued", tail: ["from a"], tailAttempt: 1, tailWorkerId: "worker-a" });
    await attempt("tail-worker-3", "worker-c", []);
    const [known] = await store.deadLetters("tail-worker-3");
    expect(known).toMatchObject({ workerId: "worker-c", tail: ["from a"], tailAttempt: 1, tailWorkerId: "worker-a" });
    // Lines stored before migration 21 (or by a worker of an earlier version), which set neither column: their worker is not known.
    await sql(store, "UPDATE $schema.tasks SET tail_worker_id = NULL, tail_worker_attempt = NULL WHERE run_id = 'tail-worker-3'");
    const [unknown] = await store.deadLetters("tail-worker-3");
    expect(unknown).toMatchObject({ workerId: "worker-c", tail: ["from a"], tailAttempt: 1, tailWorkerId: null });
    // A redrive forgets it with the lines.
    await store.redrive("tail-worker-3", "t");
    expect(await sql(store, "SELECT tail_worker_id, tail_worker_attempt FROM $schema.tasks WHERE run_id = 'tail-worker-3'")).toEqual([{ tail_worker_id: null, tail_worker_attempt: null }]);
  });

  it("a redrive by a taskq of an earlier version does not leave the workers of the attempts before it named for those after it", async () => {
    /** One attempt of the run's one task, leased by `worker` once its backoff (at most 1 ms) is over, ending failed with `tail`. */
    const attempt = async (runId: string, worker: string, tail: string[]): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [leased] = await store.lease(worker, 5, 10_000, { runId });
      await store.complete(leased!.leaseToken, { kind: "failure", error: "exited with code 1", exitCode: 1, tail });
    };
    /** As a worker of a version before migration 21 stores an attempt's lines: without its worker (tail_worker_id). */
    const attemptOfEarlierVersion = async (runId: string, worker: string, tail: string[]): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [leased] = await store.lease(worker, 5, 10_000, { runId });
      // Its setTailSql, word for word: lines are kept with their attempt; none keep an earlier attempt's.
      await sql(
        store,
        `UPDATE $schema.tasks
            SET tail = CASE WHEN (true) AND NOT (cardinality($2::text[]) = 0 AND tail_attempt IS NOT NULL) THEN $2::text[] ELSE tail END,
                tail_attempt = CASE WHEN (true) AND cardinality($2::text[]) > 0 THEN attempts ELSE tail_attempt END
          WHERE lease_token = $1`,
        [leased!.leaseToken, tail],
      );
      await store.complete(leased!.leaseToken, { kind: "failure", error: "exited with code 1", exitCode: 1, tail: [] });
    };
    // The statement of a redrive by the version before migration 21 (which knew failed_worker_id, migration 20), word for word.
    const redriveOfVersion20 = (runId: string) =>
      sql(
        store,
        `UPDATE $schema.tasks
            SET state = 'queued', attempts = 0, not_before = now(), queued_at = now(), finished_at = NULL,
                last_error = NULL, exit_code = NULL, signal = NULL, timed_out = false, tail = '{}', tail_attempt = NULL, worker_id = NULL,
                failed_worker_id = NULL, failed_attempt = NULL, cancel_requested = false
          WHERE run_id = $1`,
        [runId],
      );
    // Attempt 1 on A (a worker of this version) wrote lines, attempt 2 none; redriven by the earlier version, its attempt 1 on B
    // (of that version) writes lines, attempt 2 none: B's log has them, A's has those of the attempt 1 before the redrive.
    await store.submitRun(workflow([task("t", { retries: 1, backoff: { baseMs: 1, maxMs: 1 } })]), { runId: "redriven-earlier" });
    await attempt("redriven-earlier", "worker-a", ["from a"]);
    await attempt("redriven-earlier", "worker-a", []);
    expect((await store.deadLetters("redriven-earlier"))[0]).toMatchObject({ tail: ["from a"], tailAttempt: 1, tailWorkerId: "worker-a" });
    await redriveOfVersion20("redriven-earlier");
    await attemptOfEarlierVersion("redriven-earlier", "worker-b", ["from b"]);
    await attemptOfEarlierVersion("redriven-earlier", "worker-b", []);
    const [dead] = await store.deadLetters("redriven-earlier");
    expect(dead).toMatchObject({ workerId: "worker-b", tail: ["from b"], tailAttempt: 1 });
    expect(dead!.tailWorkerId).not.toBe("worker-a");
    expect(dead!.tailWorkerId).toBe("worker-b"); // the worker of the attempt that failed last (failed_worker_id), whose lines they are

    // A version before migration 20 did not know failed_worker_id either: its redrive left it, and its worker did not set it.
    // Attempt 1 on A failed and waits for its retry; redriven, its attempt 1 on B (its lease ran out, swept by that version)
    // waits for its retry too, and is cancelled then: B's log has that attempt, not A's.
    await store.submitRun(workflow([task("t", { retries: 1, backoff: { baseMs: 60_000, maxMs: 60_000 } })]), { runId: "redriven-19" });
    await attempt("redriven-19", "worker-a", ["from a"]);
    expect((await store.runStatus("redriven-19")).tasks[0]).toMatchObject({ state: "queued", attempts: 1, failedWorkerId: "worker-a" });
    await sql(
      store,
      `UPDATE $schema.tasks
          SET state = 'queued', attempts = 0, not_before = now(), queued_at = now(), finished_at = NULL,
              last_error = NULL, exit_code = NULL, signal = NULL, timed_out = false, tail = '{}', tail_attempt = NULL, worker_id = NULL,
              cancel_requested = false
        WHERE run_id = 'redriven-19'`,
    );
    const [leased] = await store.lease("worker-b", 5, 10_000, { runId: "redriven-19" });
    expect(leased).toMatchObject({ key: "t", attempt: 1 });
    // That version's sweep of the lost lease: queued again for its retry, naming no worker.
    await sql(store, "UPDATE $schema.tasks SET state = 'queued', worker_id = NULL, lease_token = NULL, lease_expires_at = NULL, not_before = now() + interval '1 hour' WHERE run_id = 'redriven-19'");
    await store.cancelRun("redriven-19");
    const [cancelled] = (await store.runStatus("redriven-19")).tasks;
    expect(cancelled).toMatchObject({ state: "cancelled", attempts: 1 });
    expect(cancelled).not.toHaveProperty("failedWorkerId");
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
    // Each names the task at the cascade's root and, as a local run does, the one the cascade came through.
    expect(status.tasks.filter((row) => row.state === "cancelled").map((row) => [row.key, row.cancelReason])).toEqual([
      ["c", 'dependency "b" failed'],
      ["d", 'dependency "b" failed (via "c")'],
    ]);
    expect(status.state).toBe("running");
    await store.complete(e!.leaseToken, { kind: "success" });
    expect((await store.runStatus("dag")).state).toBe("failed");
    const [dead] = await store.deadLetters("dag");
    expect(dead!.cancelledDependents).toEqual(["c", "d"]);
  });

  it("a failure at the head of a chain of thousands cancels every dependent, naming it, and lists them in submission order", async () => {
    const chain = Array.from({ length: 3000 }, (_, i) => task(`c${i}`, i === 0 ? {} : { dependsOn: [`c${i - 1}`] }));
    const others = [
      task("other"),
      task("side", { dependsOn: ["c5", "other"] }),
      task("fan", { dependsOn: ["c2999", "side"] }),
      task("after-fan", { dependsOn: ["fan"] }),
      task("free"),
    ];
    await store.submitRun(workflow([...chain, ...others]), { runId: "long-chain" });
    const leased = await leaseAll(store);
    expect(leased.map((row) => row.key)).toEqual(["c0", "other", "free"]);
    const failed = await store.complete(leased[0]!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 });
    const dependents = [...chain.slice(1).map((t) => t.id), "side", "fan", "after-fan"];
    expect(failed).toMatchObject({ state: "failed", cascaded: dependents });
    const rows = await sql<{ key: string; state: string; cancel_reason: string | null; cancelled_by: string | null; waiting_on: number; ended: boolean }>(
      store,
      "SELECT key, state, cancel_reason, cancelled_by, waiting_on, finished_at IS NOT NULL AS ended FROM $schema.tasks WHERE run_id = 'long-chain' ORDER BY seq",
    );
    const cancelled = { state: "cancelled", cancelled_by: "c0", waiting_on: 0, ended: true };
    // Each names the task the cascade came through, as the engine walks it: fan depends on c2999 and side, and side's cascade, from c5, reached it first.
    const via = (key: string): string => ({ side: "c5", fan: "side", "after-fan": "fan" })[key] ?? `c${Number(key.slice(1)) - 1}`;
    const reason = (key: string): string => `dependency "c0" failed${via(key) === "c0" ? "" : ` (via "${via(key)}")`}`;
    expect(rows.filter((row) => row.state === "cancelled")).toEqual(dependents.map((key) => ({ key, ...cancelled, cancel_reason: reason(key) })));
    expect(rows.filter((row) => row.state !== "cancelled").map((row) => [row.key, row.state])).toEqual([
      ["c0", "failed"],
      ["other", "running"],
      ["free", "running"],
    ]);
    expect((await store.deadLetters("long-chain"))[0]!.cancelledDependents).toHaveLength(dependents.length);
  });

  it("cascades down a chain of thousands in a few scans of the dependencies, not one a level (statistics taken before the run)", async () => {
    // Statistics from before the run was submitted, as on a server without autovacuum.
    await sql(store, 'ANALYZE $schema.tasks, $schema.task_deps');
    const chain = Array.from({ length: 3000 }, (_, i) => task(`c${i}`, i === 0 ? {} : { dependsOn: [`c${i - 1}`] }));
    await store.submitRun(workflow(chain), { runId: "scans" });
    const names = schemaNames(store.schema);
    // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query("BEGIN");
      const cancelled = await cancelDependents(client, names, "scans", "c0", "failed");
      expect(cancelled).toHaveLength(2999);
      // The scans this transaction made of the dependency table and its indexes.
      expect(await transactionCount(client, "pg_stat_get_xact_numscans", names.deps)).toBeLessThanOrEqual(20);
    } finally {
      await client.end();
    }
  });

  it("a cascade in a run of thousands reads the rows it cancels, not every task of the run (statistics taken before the run is submitted)", async () => {
    // A store of its own, whatever the tests before left in this file's.
    const own = await openTestStore({ url: databaseUrl });
    const client = new pg.Client({ connectionString: databaseUrl });
    try {
      // Statistics from before the run was submitted, with a small run in the store, as on a server without autovacuum.
      await own.store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] })]), { runId: "small" });
      await sql(own.store, "ANALYZE $schema.tasks, $schema.task_deps");
      const chain = Array.from({ length: 3000 }, (_, i) => task(`c${i}`, i === 0 ? {} : { dependsOn: [`c${i - 1}`] }));
      const failing = [task("x"), task("y", { dependsOn: ["x"] }), task("z", { dependsOn: ["y", "c0"] })];
      await own.store.submitRun(workflow([...chain, ...failing]), { runId: "cascade-reads" });
      const names = schemaNames(own.store.schema);
      // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
      await client.connect();
      await client.query("BEGIN");
      expect(await cancelDependents(client, names, "cascade-reads", "x", "failed")).toEqual(["y", "z"]);
      // Once more with the plans PostgreSQL keeps for statements it runs often, which know none of the values.
      await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
      expect(await cancelDependents(client, names, "cascade-reads", "c2998", "failed")).toEqual(["c2999"]);
      // The rows of the tasks and dependencies tables and their indexes this transaction read.
      expect(await transactionCount(client, "pg_stat_get_xact_tuples_returned", names.tasks)).toBeLessThanOrEqual(100);
      expect(await transactionCount(client, "pg_stat_get_xact_tuples_returned", names.deps)).toBeLessThanOrEqual(100);
    } finally {
      await client.end();
      await own.close();
    }
  });

  it("a success in a run of thousands reads a few rows, not every active task (statistics taken before the run is submitted)", async () => {
    // Statistics from before the run was submitted, with a small run in the store, as on a server without autovacuum.
    // The VACUUM removes the rows the tests before this one left (deleted by beforeEach): a transaction open elsewhere
    // on the server keeps a scan from skipping their index entries, which it would count.
    await store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] })]), { runId: "small" });
    await sql(store, "VACUUM ANALYZE $schema.tasks, $schema.task_deps");
    const chain = Array.from({ length: 3000 }, (_, i) => task(`c${i}`, i === 0 ? {} : { dependsOn: [`c${i - 1}`] }));
    await store.submitRun(workflow(chain), { runId: "reads" });
    const c0 = (await leaseAll(store)).find((row) => row.key === "c0");
    const names = schemaNames(store.schema);
    // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query("BEGIN");
      // The worker's round trip: c0's success unblocks c1, which it leases; then one that finds nothing to lease.
      const first = await client.query<{ kind: string; key: string | null; unblocked: string[] | null }>(
        `SELECT kind, key, unblocked FROM ${names.quoted}.complete_and_lease_v7($1::jsonb, 'w1', 1, 30000)`,
        [JSON.stringify([{ token: c0!.leaseToken, exit_code: 0 }])],
      );
      expect(first.rows).toEqual([
        { kind: "ended", key: null, unblocked: ["c1"] },
        { kind: "leased", key: "c1", unblocked: null },
      ]);
      const idle = await client.query<{ kind: string; delay_ms: number | null }>(
        `SELECT kind, delay_ms FROM ${names.quoted}.complete_and_lease_v7('[]', 'w1', 1, 30000)`,
      );
      expect(idle.rows).toEqual([{ kind: "idle", delay_ms: null }]);
      // A success recorded on its own (the end of a stopping worker's task).
      const [c1] = (await client.query<{ lease_token: string }>(`SELECT lease_token FROM ${names.tasks} WHERE run_id = 'reads' AND key = 'c1'`)).rows;
      const second = await client.query(`SELECT run_id, unblocked FROM ${names.quoted}.complete_success($1, 0, '{}')`, [c1!.lease_token]);
      expect(second.rows).toEqual([{ run_id: "reads", unblocked: ["c2"] }]);
      // The rows of the tasks table and its indexes this transaction read (the lookup of c1's token above included).
      expect(await transactionCount(client, "pg_stat_get_xact_tuples_returned", names.tasks)).toBeLessThanOrEqual(100);
    } finally {
      await client.end();
    }
  });

  it("a chain's successes, hundreds of tasks in, do not look for the run's active tasks: their dependents are", async () => {
    // A store of its own, whatever the tests before left in this file's.
    const own = await openTestStore({ url: databaseUrl });
    const client = new pg.Client({ connectionString: databaseUrl });
    try {
      const chain = Array.from({ length: 1000 }, (_, i) => task(`c${i}`, i === 0 ? {} : { dependsOn: [`c${i - 1}`] }));
      await own.store.submitRun(workflow(chain), { runId: "deep" });
      // As a worker runs a chain: each round trip records a success and leases the dependent it freed. Every
      // version a task leaves behind stays in the indexes until a vacuum.
      let [leased] = await leaseAll(own.store);
      for (let i = 0; i < 400; i++) [leased] = (await own.store.completeAndLease([{ token: leased!.leaseToken, outcome: { kind: "success" } }], "w1", 1, 30_000)).leased;
      const names = schemaNames(own.store.schema);
      // Those versions removed before the count (the database is this file's: no transaction elsewhere keeps them): a
      // transaction open elsewhere on the server, a test file beside this one, keeps a scan from skipping their entries in
      // the index of queued tasks, and each lease below would count them all. The 600 tasks still active stay in theirs.
      await sql(own.store, "VACUUM $schema.tasks");
      // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
      await client.connect();
      await client.query("BEGIN");
      let token = leased!.leaseToken;
      for (let i = 0; i < 10; i++) {
        const round = await client.query<{ kind: string; key: string | null; lease_token: string }>(
          `SELECT kind, key, lease_token FROM ${names.quoted}.complete_and_lease_v7($1::jsonb, 'w1', 1, 30000)`,
          [JSON.stringify([{ token, exit_code: 0 }])],
        );
        const next = round.rows.find((row) => row.kind === "leased");
        expect(next?.key).toBe(`c${401 + i}`);
        token = next!.lease_token;
      }
      // A success recorded on its own (the end of a stopping worker's task).
      const alone = await client.query(`SELECT run_id, unblocked FROM ${names.quoted}.complete_success($1, 0, '{}')`, [token]);
      expect(alone.rows).toEqual([{ run_id: "deep", unblocked: ["c411"] }]);
      // None of the index of active tasks, where each looked at every version of the run's tasks left there (some
      // 40 a success in a chain of thousands): a dependent found blocked is active, the run not ended.
      const active = await client.query<{ n: string }>("SELECT pg_stat_get_xact_tuples_returned($1::regclass) AS n", [`${names.quoted}.tasks_active`]);
      expect(Number(active.rows[0]!.n)).toBe(0);
      // Nor many rows in all: some 10 for each success and lease.
      expect(await transactionCount(client, "pg_stat_get_xact_tuples_returned", names.tasks)).toBeLessThanOrEqual(1_000);
    } finally {
      await client.end();
      await own.close();
    }
  });

  it("a lease in a store of thousands reads the rows it leases, not every task (statistics taken when the store was empty)", async () => {
    // A store of its own, small as a pruned one is, whatever the tests before left in this file's.
    const own = await openTestStore({ url: databaseUrl });
    const client = new pg.Client({ connectionString: databaseUrl });
    try {
      // Statistics from the store emptied by a prune, as on a server without autovacuum.
      await own.store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] })]), { runId: "pruned" });
      await sql(own.store, "DELETE FROM $schema.runs");
      await sql(own.store, "ANALYZE $schema.tasks, $schema.task_deps");
      const chain = Array.from({ length: 3000 }, (_, i) => task(`c${i}`, i === 0 ? {} : { dependsOn: [`c${i - 1}`] }));
      await own.store.submitRun(workflow([...chain, task("free")]), { runId: "lease-reads" });
      const names = schemaNames(own.store.schema);
      // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
      await client.connect();
      await client.query("BEGIN");
      // Of every run, and of one run (nothing left to lease).
      const all = await client.query<{ key: string }>(`SELECT key FROM ${names.quoted}.lease_tasks_v7('w1', 5, 30000) ORDER BY seq`);
      expect(all.rows.map((row) => row.key)).toEqual(["c0", "free"]);
      const run = await client.query(`SELECT key FROM ${names.quoted}.lease_tasks_v7('w1', 5, 30000, 'lease-reads')`);
      expect(run.rows).toEqual([]);
      // The rows of the tasks table and its indexes this transaction read.
      expect(await transactionCount(client, "pg_stat_get_xact_tuples_returned", names.tasks)).toBeLessThanOrEqual(100);
    } finally {
      await client.end();
      await own.close();
    }
  });

  it("a lease of several tasks in a store of thousands reads the rows it leases, not every task (statistics taken after a prune left the table mostly empty)", async () => {
    // A store of its own, whatever the tests before left in this file's.
    const own = await openTestStore({ url: databaseUrl });
    const client = new pg.Client({ connectionString: databaseUrl });
    try {
      // Statistics taken after a prune deleted a large run and kept a small one, by a VACUUM run by hand: a few rows
      // in the pages the large one filled, from which PostgreSQL thinks the table, filled again, holds a few rows.
      await own.store.submitRun(workflow(Array.from({ length: 3000 }, (_, i) => task(`old${i}`))), { runId: "pruned" });
      await own.store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] })]), { runId: "kept" });
      await sql(own.store, "DELETE FROM $schema.runs WHERE id = 'pruned'");
      await sql(own.store, "VACUUM ANALYZE $schema.tasks, $schema.task_deps");
      await own.store.submitRun(workflow(Array.from({ length: 3000 }, (_, i) => task(`t${i}`))), { runId: "many" });
      const names = schemaNames(own.store.schema);
      // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
      await client.connect();
      await client.query("BEGIN");
      // Of every run, and of one run: eight tasks each.
      const all = await client.query<{ key: string }>(`SELECT key FROM ${names.quoted}.lease_tasks_v7('w1', 8, 30000)`);
      expect(all.rows).toHaveLength(8);
      const run = await client.query<{ key: string }>(`SELECT key FROM ${names.quoted}.lease_tasks_v7('w1', 8, 30000, 'many')`);
      expect(run.rows).toHaveLength(8);
      // The rows of the tasks table and its indexes this transaction read.
      expect(await transactionCount(client, "pg_stat_get_xact_tuples_returned", names.tasks)).toBeLessThanOrEqual(100);
    } finally {
      await client.end();
      await own.close();
    }
  });

  it("a heartbeat among thousands of running tasks reads its own row, not every running one (statistics taken before any ran)", async () => {
    // A store of its own, whatever the tests before left in this file's.
    const own = await openTestStore({ url: databaseUrl });
    const client = new pg.Client({ connectionString: databaseUrl });
    try {
      await own.store.submitRun(workflow(Array.from({ length: 3000 }, (_, i) => task(`t${i}`))), { runId: "beats" });
      // Statistics of the run as submitted, none of its tasks running yet, as on a server without autovacuum.
      await sql(own.store, "ANALYZE $schema.tasks, $schema.task_deps");
      const leased = await own.store.lease("w1", 2000, 30_000);
      const names = schemaNames(own.store.schema);
      // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
      await client.connect();
      await client.query("BEGIN");
      // Each form of the renewal: without and with the attempt's last lines, and of a lease another worker took over.
      expect(await renewLease(client, names, leased[0]!.taskId, leased[0]!.leaseToken, 30_000)).toEqual({ status: "renewed" });
      expect(await renewLease(client, names, leased[1]!.taskId, leased[1]!.leaseToken, 30_000, undefined, ["step 1"])).toEqual({ status: "renewed" });
      expect(await renewLease(client, names, leased[2]!.taskId, leased[3]!.leaseToken, 30_000)).toEqual({ status: "lost" });
      // The rows of the tasks table and its indexes this transaction read.
      expect(await transactionCount(client, "pg_stat_get_xact_tuples_returned", names.tasks)).toBeLessThanOrEqual(100);
    } finally {
      await client.end();
      await own.close();
    }
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
    // Which task the sweep took, from which worker, and what became of it: the worker's `sweep` line says so.
    expect(await store.recoverOrphans()).toEqual([
      { runId: "sweep", key: "orphan", attempt: 2, maxAttempts: 2, workerId: "dead-worker", state: "failed", error: "lease expired (worker dead-worker, attempt 2)" },
    ]);
    status = await store.runStatus("sweep");
    expect(status.tasks.map((row) => [row.key, row.state])).toEqual([
      ["orphan", "failed"],
      ["after", "cancelled"],
    ]);
    expect(status.state).toBe("failed");
  });

  it("a swept attempt keeps none of the previous attempt's exit code or signal, and its output only as that attempt's", async () => {
    // Attempt 1 fails with an exit code and output; attempt 2's worker dies. One task has an attempt left, one has not.
    await store.submitRun(workflow([task("last", { retries: 1 }), task("more", { retries: 2 })]), { runId: "swept" });
    for (const leased of await leaseAll(store)) {
      const failure: Outcome = { kind: "failure", error: "exited with code 3", exitCode: 3, signal: "SIGTERM", timedOut: true, tail: ["attempt 1 output"] };
      expect(await store.complete(leased.leaseToken, failure)).toMatchObject({ state: "queued" });
    }
    await new Promise((resolve) => setTimeout(resolve, 20)); // the backoff: at most 10 ms
    expect(await store.lease("gone", 5, 100)).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.sweepOrphans()).toBe(2);
    // The lost attempt left no lines: those of attempt 1 are shown as its, as a local run shows an attempt's that left none.
    const unknown = { exitCode: null, signal: null, timedOut: false, tail: ["attempt 1 output"], tailAttempt: 1 };
    const [last, more] = (await store.runStatus("swept")).tasks;
    expect(last).toMatchObject({ state: "failed", attempts: 2, lastError: "lease expired (worker gone, attempt 2)", ...unknown });
    expect(more).toMatchObject({ state: "queued", attempts: 2, lastError: "lease expired (worker gone, attempt 2)", ...unknown });
    expect(await store.deadLetters("swept")).toMatchObject([{ key: "last", lastError: "lease expired (worker gone, attempt 2)", ...unknown }]);
    await store.cancelRun("swept");
  });

  it("a swept attempt keeps the last lines its worker's heartbeats stored; one that stored none shows an earlier attempt's only as that attempt's", async () => {
    await store.submitRun(workflow([task("loud", { retries: 1 }), task("quiet", { retries: 1 })]), { runId: "tails" });
    const [loud, quiet] = await store.lease("gone", 5, 100);
    expect([loud!.key, quiet!.key]).toEqual(["loud", "quiet"]);
    // Attempt 1 of each: `loud` renews with its lines (twice: the later ones win), `quiet` without.
    expect(await store.heartbeat(loud!.taskId, loud!.leaseToken, 100, { tail: ["step 1"] })).toBe("renewed");
    expect(await store.heartbeat(loud!.taskId, loud!.leaseToken, 100, { tail: ["step 1", "step 2 \u0000 half"] })).toBe("renewed");
    expect(await store.heartbeat(quiet!.taskId, quiet!.leaseToken, 100)).toBe("renewed");
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.sweepOrphans()).toBe(2);
    let [loudRow, quietRow] = (await store.runStatus("tails")).tasks;
    expect(loudRow).toMatchObject({ state: "queued", attempts: 1, tail: ["step 1", "step 2 \uFFFD half"] });
    expect(quietRow).toMatchObject({ state: "queued", attempts: 1, tail: [] });
    expect(loudRow).not.toHaveProperty("tailAttempt");
    // Attempt 2 of each dies before any heartbeat: attempt 1's lines are not taken for its, but shown as attempt 1's.
    expect(await store.lease("gone", 5, 100)).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.sweepOrphans()).toBe(2);
    [loudRow, quietRow] = (await store.runStatus("tails")).tasks;
    expect(loudRow).toMatchObject({ state: "failed", attempts: 2, tail: ["step 1", "step 2 \uFFFD half"], tailAttempt: 1 });
    expect(quietRow).toMatchObject({ state: "failed", attempts: 2, tail: [] });
    expect(quietRow).not.toHaveProperty("tailAttempt");
    // A dead letter whose last attempt renewed with lines shows them.
    await store.submitRun(workflow([task("dies")]), { runId: "tail-dead" });
    const [dies] = await store.lease("gone", 5, 100);
    expect(await store.heartbeat(dies!.taskId, dies!.leaseToken, 100, { tail: ["compiling", "linking"] })).toBe("renewed");
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await store.sweepOrphans()).toBe(1);
    expect(await store.deadLetters("tail-dead")).toMatchObject([{ key: "dies", lastError: "lease expired (worker gone, attempt 1)", tail: ["compiling", "linking"] }]);
  });

  it("takes durations up to the workflow format's 30 days, past int's 24.8: a 720h timeout, a 700h backoff, a 600h lease", async () => {
    const hours = (n: number) => n * 3_600_000;
    expect(hours(720)).toBe(MAX_DURATION_MS);
    await store.submitRun(
      workflow([task("long", { timeoutMs: hours(720), retries: 1, backoff: { baseMs: hours(700), maxMs: hours(700) } }), task("after", { dependsOn: ["long"] })]),
      { runId: "long-durations" },
    );
    const [first] = await store.lease("w1", 1, hours(600));
    expect(first).toMatchObject({ key: "long", timeoutMs: hours(720), attempt: 1 });
    const [lease] = await sql<{ hours: number }>(store, "SELECT extract(epoch FROM lease_expires_at - now()) / 3600 AS hours FROM $schema.tasks WHERE key = 'long'");
    expect(Number(lease!.hours)).toBeCloseTo(600, 0);
    expect(await store.heartbeat(first!.taskId, first!.leaseToken, hours(600))).toBe("renewed");
    // Jitter at the top: the retry waits nearly the whole 700h.
    const retried = await store.complete(first!.leaseToken, { kind: "failure", error: "exited with code 1", exitCode: 1 });
    expect(retried).toMatchObject({ state: "queued" });
    expect(retried && retried.retryDelayMs).toBeGreaterThan(hours(699));
    expect((await store.runStatus("long-durations")).scheduled).toBe(1);
    await sql(store, "UPDATE $schema.tasks SET not_before = now() WHERE key = 'long'");
    // The worker's hot path leases it, and records its success.
    const second = await store.completeAndLease([], "w1", 1, hours(600));
    expect(second.leased).toMatchObject([{ key: "long", timeoutMs: hours(720), attempt: 2 }]);
    const done = await store.completeAndLease([{ token: second.leased[0]!.leaseToken, outcome: { kind: "success" } }], "w1", 1, hours(600));
    expect(done.leased).toMatchObject([{ key: "after", timeoutMs: null }]);
    await store.complete(done.leased[0]!.leaseToken, { kind: "success" });
    expect((await store.runStatus("long-durations")).state).toBe("succeeded");
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

  it("a sweep's settling of runs reads a few rows of a run of thousands in progress, not every task of it (statistics taken before the run)", async () => {
    // A store of its own, whatever the tests before left in this file's.
    const own = await openTestStore({ url: databaseUrl });
    const client = new pg.Client({ connectionString: databaseUrl });
    try {
      // A run whose last task failed, left running as if two last completions had each seen the other still running.
      await own.store.submitRun(workflow([task("only")]), { runId: "ended" });
      const [only] = await leaseAll(own.store);
      await own.store.complete(only!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 });
      await sql(own.store, "UPDATE $schema.runs SET state = 'running', finished_at = NULL WHERE id = 'ended'");
      // Statistics from before the large run was submitted, as on a server without autovacuum.
      await sql(own.store, "ANALYZE $schema.tasks, $schema.task_deps, $schema.runs");
      const chain = Array.from({ length: 3000 }, (_, i) => task(`c${i}`, i === 0 ? {} : { dependsOn: [`c${i - 1}`] }));
      await own.store.submitRun(workflow(chain), { runId: "in-progress" });
      // A few of its tasks done, one running.
      for (let i = 0; i < 3; i++) {
        const [leased] = await leaseAll(own.store);
        await own.store.complete(leased!.leaseToken, { kind: "success" });
      }
      await leaseAll(own.store);
      const names = schemaNames(own.store.schema);
      // A connection of its own: PostgreSQL 15 counts in a transaction's figures what earlier ones on its connection did.
      await client.connect();
      await client.query("BEGIN");
      expect(await settleRuns(client, names)).toBe(1);
      const runs = await client.query<{ id: string; state: string }>(`SELECT id, state FROM ${names.runs} ORDER BY id`);
      expect(runs.rows).toEqual([
        { id: "ended", state: "failed" },
        { id: "in-progress", state: "running" },
      ]);
      // The rows of the tasks table and its indexes this transaction read.
      expect(await transactionCount(client, "pg_stat_get_xact_tuples_returned", names.tasks)).toBeLessThanOrEqual(100);
    } finally {
      await client.end();
      await own.close();
    }
  });

  it("cancelling one running task cancels its dependents at once: its attempt succeeding before its worker hears of the cancel frees none of them", async () => {
    await store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] }), task("c", { dependsOn: ["b"] }), task("other")]), { runId: "cr" });
    const [running] = await store.lease("w1", 1, 30_000);
    expect(running!.key).toBe("a");
    expect(await store.cancelRun("cr", "a")).toEqual({ cancelled: ["b", "c"], cancelRequested: ["a"], running: [{ key: "a", workerId: "w1", leaseLeftMs: expect.any(Number) as number }], notRetried: [] });
    // The attempt ends well before any heartbeat: recorded as it ended, and nothing it would have freed runs.
    expect(await store.complete(running!.leaseToken, { kind: "success" })).toMatchObject({ state: "succeeded", unblocked: [] });
    const rows = await sql<{ key: string; state: string; cancel_reason: string | null }>(store, "SELECT key, state, cancel_reason FROM $schema.tasks WHERE run_id = 'cr' ORDER BY seq");
    expect(rows).toEqual([
      { key: "a", state: "succeeded", cancel_reason: null },
      { key: "b", state: "cancelled", cancel_reason: 'its dependency "a" was asked to cancel while it ran' },
      { key: "c", state: "cancelled", cancel_reason: 'its dependency "a" was asked to cancel while it ran (via "b")' },
      { key: "other", state: "queued", cancel_reason: null },
    ]);
  });

  it("a redrive does not free again a dependent of a running task whose cancel was asked for: it stays cancelled, on that task's account", async () => {
    await store.submitRun(workflow([task("f"), task("b"), task("c", { dependsOn: ["f", "b"] })]), { runId: "rc" });
    const leased = await store.lease("w1", 2, 30_000);
    const byKey = new Map(leased.map((t) => [t.key, t]));
    // f fails (c cancelled because of it); then b's cancel is asked for while it runs.
    expect(await store.complete(byKey.get("f")!.leaseToken, { kind: "failure", error: "exit 3", exitCode: 3 })).toMatchObject({ state: "failed", cascaded: ["c"] });
    expect(await store.cancelRun("rc", "b")).toMatchObject({ cancelled: [], cancelRequested: ["b"] });
    // Redriven, f no longer holds c back; b's cancel does.
    expect(await store.redrive("rc", "f")).toEqual({ requeued: "f", reblocked: [] });
    expect(await store.complete(byKey.get("b")!.leaseToken, { kind: "success" })).toMatchObject({ state: "succeeded", unblocked: [] });
    const rows = await sql<{ key: string; state: string; cancel_reason: string | null }>(store, "SELECT key, state, cancel_reason FROM $schema.tasks WHERE run_id = 'rc' ORDER BY seq");
    expect(rows).toEqual([
      { key: "f", state: "queued", cancel_reason: null },
      { key: "b", state: "succeeded", cancel_reason: null },
      { key: "c", state: "cancelled", cancel_reason: 'its dependency "b" was asked to cancel while it ran' },
    ]);
  });

  it("cancels queued tasks at once and running ones at their next heartbeat", async () => {
    await store.submitRun(workflow([task("run1"), task("wait1", { dependsOn: ["run1"] }), task("q1", { priority: "low" })]), { runId: "cx" });
    const [running] = await store.lease("w1", 1, 30_000);
    const result = await store.cancelRun("cx");
    expect(result.cancelRequested).toEqual(["run1"]);
    // Who holds it, and how long its lease has left: what becomes of it should that worker be gone.
    expect(result.running).toEqual([{ key: "run1", workerId: "w1", leaseLeftMs: expect.any(Number) as number }]);
    expect(result.running[0]!.leaseLeftMs).toBeGreaterThan(20_000);
    expect([...result.cancelled].sort()).toEqual(["q1", "wait1"]);
    expect(await store.heartbeat(running!.taskId, running!.leaseToken, 30_000)).toBe("cancel-requested");
    // Whose cancel it is: by request (its worker's abort and the task's log say "cancelled by request").
    expect(await store.renew(running!.taskId, running!.leaseToken, 30_000)).toEqual({ status: "cancel-requested", cancelKind: "request" });
    // Even a failure report from the aborted attempt ends the task cancelled, never retried.
    expect(await store.complete(running!.leaseToken, { kind: "failure", error: "killed", signal: "SIGTERM" })).toMatchObject({
      state: "cancelled",
    });
    const status = await store.runStatus("cx");
    expect(status.state).toBe("cancelled");
    expect(status.counts.cancelled).toBe(3);
    // What has already ended is no error to cancel, for one task as for the run: the result says how it ended.
    expect(await store.cancelRun("cx", "run1")).toEqual({ cancelled: [], cancelRequested: [], running: [], notRetried: [], ended: "cancelled" });
    expect(await store.cancelRun("cx")).toEqual({ cancelled: [], cancelRequested: [], running: [], notRetried: [], ended: "cancelled" });
    await expect(store.cancelRun("cx", "nope")).rejects.toMatchObject({ code: "STORE_NOT_FOUND", message: 'no task "nope" in run "cx"' });
    // A mistyped run id is told as such, not as a missing task.
    await expect(store.cancelRun("no-such-run", "run1")).rejects.toMatchObject({ code: "STORE_NOT_FOUND", message: 'no run "no-such-run"' });
  });

  it("a run's cancel once its tasks have all ended, the run not settled yet (its worker died before), says how it ended", async () => {
    await store.submitRun(workflow([task("a"), task("b")]), { runId: "unsettled" });
    const [a, b] = await leaseAll(store);
    await store.complete(a!.leaseToken, { kind: "success" });
    await store.complete(b!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 });
    // As a worker that died between its attempt's commit and the run's settling leaves it.
    await sql(store, "UPDATE $schema.runs SET state = 'running', finished_at = NULL WHERE id = 'unsettled'");
    expect(await store.cancelRun("unsettled")).toEqual({ cancelled: [], cancelRequested: [], running: [], notRetried: [], ended: "failed" });
    expect(await store.runState("unsettled")).toBe("failed");
  });

  it("a stopped run's cancel ends each task as the shutdown's, in a local run's words: aborted, not started, not retried; a running one's worker records it aborted", async () => {
    await store.submitRun(
      workflow([
        task("given-back"),
        task("elsewhere"),
        task("retrying", { retries: 1, backoff: { baseMs: 60_000, maxMs: 60_000 } }),
        task("after", { dependsOn: ["given-back"] }),
      ]),
      { runId: "stopped" },
    );
    const leased = await store.lease("w1", 3, 30_000);
    const byKey = new Map(leased.map((row) => [row.key, row]));
    // The stopped run's own worker gives its task back; another task fails and waits for its retry; another runs on another worker.
    expect(await store.release(byKey.get("given-back")!.leaseToken)).toBe(true);
    expect(await store.complete(byKey.get("retrying")!.leaseToken, { kind: "failure", error: "exited with code 3", exitCode: 3 })).toMatchObject({ state: "queued" });
    const result = await store.cancelRun("stopped", undefined, { shutdown: { aborted: ["given-back"] } });
    expect(result).toMatchObject({ cancelled: ["given-back", "retrying", "after"], cancelRequested: ["elsewhere"] });
    // The one waiting for its retry, whose reason keeps its failed attempt's error: run --store names it as it stops.
    expect(result.notRetried).toEqual([{ key: "retrying", attempt: 1, error: "exited with code 3" }]);
    // That worker stops its task at its next heartbeat, and records it as the shutdown's.
    const elsewhere = byKey.get("elsewhere")!;
    expect(await store.heartbeat(elsewhere.taskId, elsewhere.leaseToken, 30_000)).toBe("cancel-requested");
    // The stopped run's (its worker's abort and the task's log say "aborted by shutdown", as it is recorded).
    expect(await store.renew(elsewhere.taskId, elsewhere.leaseToken, 30_000)).toEqual({ status: "cancel-requested", cancelKind: "shutdown" });
    expect(await store.complete(elsewhere.leaseToken, { kind: "cancelled", reason: "cancelled by request" })).toMatchObject({ state: "cancelled" });
    const status = await store.runStatus("stopped");
    expect(status.state).toBe("cancelled");
    expect(status.tasks.map(({ key, cancelReason, cancelledBy, cancelKind, cancelledRunning }) => ({ key, cancelReason, cancelledBy, cancelKind, cancelledRunning }))).toEqual([
      { key: "given-back", cancelReason: "aborted by shutdown", cancelledBy: null, cancelKind: "shutdown", cancelledRunning: true },
      { key: "elsewhere", cancelReason: "aborted by shutdown", cancelledBy: null, cancelKind: "shutdown", cancelledRunning: true },
      { key: "retrying", cancelReason: "shutdown: not retried (attempt 1 failed: exited with code 3)", cancelledBy: null, cancelKind: "shutdown", cancelledRunning: undefined },
      { key: "after", cancelReason: "shutdown: not started", cancelledBy: null, cancelKind: "shutdown", cancelledRunning: undefined },
    ]);

    // A cancel by request of a running task: by request still, and cut short while it ran.
    await store.submitRun(workflow([task("busy")]), { runId: "requested" });
    const [busy] = await store.lease("w1", 1, 30_000);
    await store.cancelRun("requested");
    expect(await store.complete(busy!.leaseToken, { kind: "cancelled", reason: "cancelled by request" })).toMatchObject({ state: "cancelled" });
    const [row] = (await store.runStatus("requested")).tasks;
    expect(row).toMatchObject({ cancelReason: "cancelled by request", cancelledRunning: true });
    expect(row).not.toHaveProperty("cancelKind");
  });

  it("cancels a run of thousands of tasks in a few statements, not two for each task (run --store has 3s for it after Ctrl-C)", async () => {
    const many = Array.from({ length: 3000 }, (_, i) => task(`i${i}`));
    const tasks = [task("r"), task("rd", { dependsOn: ["r"] }), task("a"), task("b", { dependsOn: ["a"] }), task("c", { dependsOn: ["b", "rd"] }), ...many];
    await store.submitRun(workflow(tasks), { runId: "big-cancel" });
    const [running] = await store.lease("w1", 1, 30_000);
    expect(running!.key).toBe("r");
    // The same store, through a pool that counts the statements its clients are sent.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    let statements = 0;
    pool.on("connect", (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        statements++;
        return query(...args);
      };
    });
    const counted = await PostgresStore.open({ pool, schema: store.schema });
    try {
      const result = await counted.cancelRun("big-cancel");
      expect(statements).toBeLessThan(30);
      expect(result.cancelRequested).toEqual(["r"]);
      expect(result.running).toMatchObject([{ key: "r", workerId: "w1" }]);
      expect(result.cancelled).toHaveLength(tasks.length - 1);
      expect(new Set(result.cancelled)).toEqual(new Set(tasks.map((t) => t.id).filter((id) => id !== "r")));
    } finally {
      await counted.close();
      await pool.end();
    }
    // Each the run's cancel's own, as a local run's shutdown has it: before, one an earlier task's cancel reached
    // through the graph named it ('dependency "a" was cancelled'), as if a's cancel, not the run's, had ended it.
    const rows = await sql<{ key: string; state: string; cancel_reason: string | null; cancelled_by: string | null; cancel_requested: boolean }>(
      store,
      "SELECT key, state, cancel_reason, cancelled_by, cancel_requested FROM $schema.tasks WHERE run_id = 'big-cancel' AND key IN ('r', 'rd', 'a', 'b', 'c', 'i0', 'i2999') ORDER BY key",
    );
    expect(rows).toEqual([
      { key: "a", state: "cancelled", cancel_reason: "cancelled by request", cancelled_by: null, cancel_requested: false },
      { key: "b", state: "cancelled", cancel_reason: "cancelled by request", cancelled_by: null, cancel_requested: false },
      { key: "c", state: "cancelled", cancel_reason: "cancelled by request", cancelled_by: null, cancel_requested: false },
      { key: "i0", state: "cancelled", cancel_reason: "cancelled by request", cancelled_by: null, cancel_requested: false },
      { key: "i2999", state: "cancelled", cancel_reason: "cancelled by request", cancelled_by: null, cancel_requested: false },
      { key: "r", state: "running", cancel_reason: null, cancelled_by: null, cancel_requested: true },
      { key: "rd", state: "cancelled", cancel_reason: "cancelled by request", cancelled_by: null, cancel_requested: false },
    ]);
  });

  it("a cancel by request of a task waiting for its retry keeps its failed attempt's error in its reason, as a stopped run's cancel does, and says which they were", async () => {
    const retrying = { retries: 5, backoff: { baseMs: 1, maxMs: 1 } };
    /** `runId`'s task r failed twice ("exited with code 7"), now waiting for its third attempt. */
    const failTwice = async (runId: string): Promise<void> => {
      await store.submitRun(workflow([task("r", retrying), task("after", { dependsOn: ["r"] })]), { runId });
      for (let attempt = 1; attempt <= 2; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const [r] = await leaseAll(store);
        expect(r).toMatchObject({ key: "r", attempt });
        expect(await store.complete(r!.leaseToken, { kind: "failure", error: "exited with code 7", exitCode: 7 })).toMatchObject({ state: "queued" });
      }
    };
    const reason = "cancelled by request: not retried (attempt 2 failed: exited with code 7)";
    const reasons = async (runId: string) => (await store.runStatus(runId)).tasks.map((row) => [row.key, row.cancelReason]);

    // The whole run's cancel: before, "cancelled by request" alone, its two failed attempts gone from its words.
    await failTwice("cancel-retrying");
    expect(await store.cancelRun("cancel-retrying")).toMatchObject({ cancelled: ["r", "after"], notRetried: [{ key: "r", attempt: 2, error: "exited with code 7" }] });
    expect(await reasons("cancel-retrying")).toEqual([
      ["r", reason],
      ["after", "cancelled by request"],
    ]);
    // One task's cancel alike.
    await failTwice("cancel-retrying-one");
    expect(await store.cancelRun("cancel-retrying-one", "r")).toMatchObject({ cancelled: ["r", "after"], notRetried: [{ key: "r", attempt: 2, error: "exited with code 7" }] });
    expect(await reasons("cancel-retrying-one")).toEqual([
      ["r", reason],
      ["after", 'dependency "r" was cancelled'],
    ]);
    // One that had not started is cancelled by request, as ever, and not among them.
    await store.submitRun(workflow([task("fresh")]), { runId: "cancel-fresh" });
    expect(await store.cancelRun("cancel-fresh")).toEqual({ cancelled: ["fresh"], cancelRequested: [], running: [], notRetried: [] });
    expect(await reasons("cancel-fresh")).toEqual([["fresh", "cancelled by request"]]);
  });

  it("a run's cancel names no dependency, each task its own; a task's cancel, and a redrive's cancel again of a dependent another dependency holds back, name the task each came through, as a cascade does", async () => {
    await store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] }), task("c", { dependsOn: ["b"] })]), { runId: "via-cancel" });
    await store.cancelRun("via-cancel");
    // Before: b 'dependency "a" was cancelled', c 'dependency "a" was cancelled (via "b")', as if a's cancel had ended them.
    expect((await store.runStatus("via-cancel")).tasks.map((row) => [row.key, row.cancelReason, row.cancelledBy])).toEqual([
      ["a", "cancelled by request", null],
      ["b", "cancelled by request", null],
      ["c", "cancelled by request", null],
    ]);
    await store.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] }), task("c", { dependsOn: ["b"] })]), { runId: "via-cancel-one" });
    await store.cancelRun("via-cancel-one", "a");
    expect((await store.runStatus("via-cancel-one")).tasks.map((row) => [row.key, row.cancelReason, row.cancelledBy])).toEqual([
      ["a", "cancelled by request", null],
      ["b", 'dependency "a" was cancelled', "a"],
      ["c", 'dependency "a" was cancelled (via "b")', "a"],
    ]);

    await store.submitRun(
      workflow([task("f"), task("p"), task("g", { dependsOn: ["f"] }), task("q", { dependsOn: ["p"] }), task("h", { dependsOn: ["g", "q"] })]),
      { runId: "via-redrive" },
    );
    const [f, p] = await leaseAll(store);
    await store.complete(f!.leaseToken, { kind: "failure", error: "f broke", exitCode: 1 });
    await store.complete(p!.leaseToken, { kind: "failure", error: "p broke", exitCode: 1 });
    const reasons = async () => (await store.runStatus("via-redrive")).tasks.filter((row) => row.state === "cancelled").map((row) => [row.key, row.cancelReason]);
    expect(await reasons()).toEqual([
      ["g", 'dependency "f" failed'],
      ["q", 'dependency "p" failed'],
      ["h", 'dependency "f" failed (via "g")'],
    ]);
    // g waits for f again; h is held back by q, which p's failure cancelled.
    expect(await store.redrive("via-redrive", "f")).toEqual({ requeued: "f", reblocked: ["g"] });
    expect(await reasons()).toEqual([
      ["q", 'dependency "p" failed'],
      ["h", 'dependency "p" failed (via "q")'],
    ]);
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
    await expect(store.redrive("rd", "y")).rejects.toMatchObject({
      code: "STORE_NOT_REDRIVABLE",
      message: 'task "y" was cancelled (dependency "x" failed): only failed tasks can be redriven; redrive "x", and it waits for it again',
    });
    await expect(store.redrive("rd", "other")).rejects.toMatchObject({ message: 'task "other" succeeded: only failed tasks can be redriven' });
    await expect(store.redrive("rd", "nope")).rejects.toMatchObject({ code: "STORE_NOT_FOUND", message: 'no task "nope" in run "rd"' });
    await expect(store.redrive("no-such-run", "x")).rejects.toMatchObject({ code: "STORE_NOT_FOUND", message: 'no run "no-such-run"' });
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

  it("a dependent that also depends on another failed task stays cancelled after a redrive, on that task's account", async () => {
    await store.submitRun(workflow([task("x"), task("z"), task("w", { dependsOn: ["x", "z"] })]), { runId: "two-failed" });
    for (const leased of await leaseAll(store)) await store.complete(leased.leaseToken, { kind: "failure", error: "broke", exitCode: 1 });
    expect((await store.runStatus("two-failed")).tasks.find((row) => row.key === "w")).toMatchObject({ state: "cancelled", cancelledBy: "x" });
    expect(await store.redrive("two-failed", "x")).toEqual({ requeued: "x", reblocked: [] });
    const [x] = await leaseAll(store);
    expect(x!.key).toBe("x");
    await store.complete(x!.leaseToken, { kind: "success" });
    const status = await store.runStatus("two-failed");
    expect(status.tasks.map((row) => [row.key, row.state, row.cancelledBy])).toEqual([
      ["x", "succeeded", null],
      ["z", "failed", null],
      ["w", "cancelled", "z"],
    ]);
    expect(status.state).toBe("failed");
    expect((await store.deadLetters("two-failed")).map((row) => [row.key, row.cancelledDependents])).toEqual([["z", ["w"]]]);
  });

  it("a task a resubmit adds behind a cancelled dependency names the failed task at the cascade's root, so redriving that task runs it", async () => {
    const first = [task("a"), task("b", { dependsOn: ["a"] })];
    await store.submitRun(workflow(first), { runId: "grown" });
    const [a] = await leaseAll(store);
    await store.complete(a!.leaseToken, { kind: "failure", error: "a broke", exitCode: 1 });
    await store.submitRun(workflow([...first, task("c", { dependsOn: ["b"] })]), { runId: "grown" });
    expect((await store.runStatus("grown")).tasks.find((row) => row.key === "c")).toMatchObject({
      state: "cancelled",
      cancelledBy: "a",
      cancelReason: 'dependency "a" failed (via "b")',
    });
    expect((await store.deadLetters("grown"))[0]!.cancelledDependents).toEqual(["b", "c"]);
    expect(await store.redrive("grown", "a")).toEqual({ requeued: "a", reblocked: ["b", "c"] });
    for (const key of ["a", "b", "c"]) {
      const [leased] = await leaseAll(store);
      expect(leased!.key).toBe(key);
      await store.complete(leased!.leaseToken, { kind: "success" });
    }
    const status = await store.runStatus("grown");
    expect(status.tasks.map((row) => [row.key, row.state])).toEqual([
      ["a", "succeeded"],
      ["b", "succeeded"],
      ["c", "succeeded"],
    ]);
    expect(status.state).toBe("succeeded");
  });
});
