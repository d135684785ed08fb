import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeApplicationName } from "../../src/store/postgres/application-name.js";
import { retryLockWaits } from "../../src/store/postgres/lock-wait.js";
import { schemaNames } from "../../src/store/postgres/names.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { transactionOnce } from "../../src/store/postgres/transaction.js";
import { DATABASE_URL, leaseAll, openTestStore, sql, task, workflow } from "./helpers.js";

// A user's command that meets a row another session keeps locked (a transaction left open in psql) gives up
// within seconds, saying whose lock it was and that it changed nothing, rather than wait the query limit (30 s)
// and blame the database. (Cancel and submit, which hold running tasks' rows meanwhile: see durable-cli.test.ts.)
describe("a lock another session holds", () => {
  let store: PostgresStore;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ store, close } = await openTestStore());
  });
  afterAll(async () => close?.());

  /** Runs `during` while a session named `row-holder` holds task `key`'s row of run `runId` (FOR UPDATE), with that session's pid. */
  async function whileHeld<T>(runId: string, key: string, during: (pid: number) => Promise<T>, applicationName = "row-holder"): Promise<T> {
    const holder = new pg.Client({ connectionString: DATABASE_URL, application_name: applicationName });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${store.schema}".tasks WHERE run_id = $1 AND key = $2 FOR UPDATE`, [runId, key]);
      const { pid } = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!;
      return await during(pid);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
  }

  /** A run whose one task `f` failed, and has ended. */
  async function failedRun(runId: string): Promise<void> {
    await store.submitRun(workflow([task("f"), task("g", { dependsOn: ["f"] })]), { runId });
    const [leased] = await leaseAll(store);
    await store.complete(leased!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 });
    expect((await store.runStatus(runId)).state).toBe("failed");
  }

  const lockedWords = (operation: string, runId: string, pid: number, undone: string): RegExp =>
    new RegExp(
      `^${operation} failed: task "f" of run ${runId} is locked by another session \\(pid ${pid}, application_name "row-holder", client [^,()]+, its transaction open for \\S+\\); ` +
        `each of 8 tries over \\S+ gave up after waiting 200ms for it, .*: ${undone}; try again once that session's transaction has ended$`,
    );

  /**
   * Given up on as the last of its tries' lock waits was cut short by lock_timeout (55P03, at 200 ms each): within seconds, as no
   * try waited the query limit (30 s), whose end is another error (a statement timeout, 57014, or the driver's), not STORE_LOCKED.
   */
  const CUT_SHORT = { cause: { code: "55P03" } };

  it("redrive gives up within seconds as STORE_LOCKED, naming the row and the session, and redrives nothing; then goes through", { timeout: 60_000 }, async () => {
    await failedRun("redrive-held");
    await whileHeld("redrive-held", "f", async (pid) => {
      const error = await store.redrive("redrive-held", "f").catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: "STORE_LOCKED", message: expect.stringMatching(lockedWords("redrive", "redrive-held", pid, "nothing was redriven")) as string });
      expect(error).toMatchObject(CUT_SHORT);
    });
    expect((await store.runStatus("redrive-held")).tasks.map((row) => row.state)).toEqual(["failed", "cancelled"]);
    expect(await store.redrive("redrive-held", "f")).toEqual({ requeued: "f", reblocked: ["g"] });
  });

  it("prune gives up within seconds as STORE_LOCKED, naming the row and the session, and prunes nothing; then goes through", { timeout: 60_000 }, async () => {
    await sql(store, "DELETE FROM $schema.runs");
    await failedRun("prune-held");
    await whileHeld("prune-held", "f", async (pid) => {
      const error = await store.pruneRuns(0).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: "STORE_LOCKED", message: expect.stringMatching(lockedWords("pruneRuns", "prune-held", pid, "nothing was pruned")) as string });
      expect(error).toMatchObject(CUT_SHORT);
    });
    expect((await store.runStatus("prune-held")).state).toBe("failed");
    expect((await store.pruneRuns(0)).runs).toEqual(["prune-held"]);
  });

  it("cancel waits out another taskq session's lock (a worker's cascade to thousands of dependents, another cancel of a large run) past the 8 tries, and cancels once it ends", { timeout: 60_000 }, async () => {
    await store.submitRun(workflow([task("f"), task("g", { dependsOn: ["f"] })]), { runId: "cancel-taskq-held" });
    const started = performance.now();
    const { cancel } = await whileHeld("cancel-taskq-held", "f", async () => {
      const cancel = store.cancelRun("cancel-taskq-held").catch((caught: unknown) => caught);
      // Held for longer than the 8 tries take (about 5 s), as a worker's cascade over 10k dependents holds its task's row.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      return { cancel };
    }, "taskq worker vm-1-abc");
    expect(await cancel).toMatchObject({ cancelled: ["f", "g"] });
    expect(performance.now() - started).toBeGreaterThan(7_000);
    expect((await store.runStatus("cancel-taskq-held")).tasks.map((row) => row.state)).toEqual(["cancelled", "cancelled"]);
  });

  it("a taskq session whose URL names it otherwise (application_name, as PGAPPNAME would) is still taskq's: its lock is waited out, not STORE_LOCKED after 5 s", { timeout: 60_000 }, async () => {
    await store.submitRun(workflow([task("f"), task("g", { dependsOn: ["f"] })]), { runId: "cancel-named-held" });
    // A worker's store on a URL that names its sessions `ci-deploy`: they are named as taskq names them all the same.
    const worker = await PostgresStore.open({ connectionString: `${DATABASE_URL}?application_name=ci-deploy`, schema: store.schema, applicationName: "taskq worker vm-2-def" });
    const holder = await worker.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${store.schema}".tasks WHERE run_id = 'cancel-named-held' AND key = 'f' FOR UPDATE`);
      const started = performance.now();
      const cancel = store.cancelRun("cancel-named-held").catch((caught: unknown) => caught);
      // Held past the 8 tries (about 5 s), as a worker's cascade over 10k dependents holds its task's row.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      await holder.query("ROLLBACK");
      // Before, its name was the URL's: the cancel gave up as STORE_LOCKED, "application_name \"ci-deploy\"".
      expect(await cancel).toMatchObject({ cancelled: ["f", "g"] });
      expect(performance.now() - started).toBeGreaterThan(7_000);
      const { pid } = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!;
      expect(await sql(store, "SELECT application_name AS name FROM pg_stat_activity WHERE pid = $1", [pid])).toEqual([{ name: storeApplicationName("taskq worker vm-2-def", store.schema) }]);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      holder.release();
      await worker.close();
    }
  });
  /**
   * Runs a cancel's retryLockWaits for task `key`'s row of run `runId` while a session named `row-holder` holds it, having run
   * `take` in its transaction, and ends that transaction with `end` just after the 8th try's wait was cut short, before the
   * lock's holder is looked up: the rows the next try locked, and the tries made.
   */
  async function freedAtLastTry(runId: string, key: string, take: string, end: "ROLLBACK" | "COMMIT"): Promise<{ rows: { key: string }[]; tries: number }> {
    await store.submitRun(workflow([task(key)]), { runId });
    const lockRow = (client: pg.ClientBase) => client.query<{ key: string }>(`SELECT key FROM "${store.schema}".tasks WHERE run_id = $1 AND key = $2 FOR UPDATE`, [runId, key]);
    const holder = new pg.Client({ connectionString: DATABASE_URL, application_name: "row-holder" });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(take.replace("$tasks", `"${store.schema}".tasks`), [runId, key]);
      let tries = 0;
      const rows = await retryLockWaits(store.pool, schemaNames(store.schema), "cancelRun", "nothing was cancelled", async () => {
        tries++;
        try {
          return (await transactionOnce(store.pool, lockRow, { shortLockWaits: true })).rows;
        } catch (error) {
          if (tries === 8) await holder.query(end);
          throw error;
        }
      }, () => 0);
      return { rows, tries };
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
  }

  it("a lock its holder lets go of between the last try and the look-up of who holds it is tried once more, not refused as held by no session", { timeout: 60_000 }, async () => {
    // Before, the 8th try's look-up found the row held by no session and gave up: task "f" of run freed-held is locked by another session.
    expect(await freedAtLastTry("freed-held", "f", "SELECT 1 FROM $tasks WHERE run_id = $1 AND key = $2 FOR UPDATE", "ROLLBACK")).toEqual({ rows: [{ key: "f" }], tries: 9 });
  });

  it("a lock its holder lets go of, having changed the row, between the last try and the look-up is tried once more too", { timeout: 60_000 }, async () => {
    // As a session that updates the row (another command's cancel, a worker's record of an attempt) holds it, and commits: the
    // row the wait named is no longer the row's version. Before, the look-up found no row there and gave up: "a lock it needs
    // is held by another session".
    expect(await freedAtLastTry("freed-updated", "u", "UPDATE $tasks SET priority = priority WHERE run_id = $1 AND key = $2", "COMMIT")).toEqual({ rows: [{ key: "u" }], tries: 9 });
  });
  it("renewals refused a row another session holds keep their connection, as the look-ups of the holder do: no new session for each refusal", { timeout: 60_000 }, async () => {
    const named = await PostgresStore.open({ connectionString: DATABASE_URL, schema: store.schema, applicationName: "renewal-keeper" });
    const sessions = async (): Promise<number[]> =>
      (await sql<{ pid: number }>(store, "SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid", [storeApplicationName("renewal-keeper", store.schema)])).map((row) => row.pid);
    try {
      await named.submitRun(workflow([task("f")]), { runId: "renewal-kept" });
      const [leased] = await named.lease("w1", 1, 30_000, { runId: "renewal-kept" });
      expect(leased?.runId).toBe("renewal-kept");
      await whileHeld("renewal-kept", "f", async () => {
        const refused = async () => expect(named.heartbeat(leased!.taskId, leased!.leaseToken, 30_000, { timeoutMs: 20_000 })).rejects.toMatchObject({ code: "STORE_LOCKED" });
        await refused();
        const before = await sessions();
        for (let index = 0; index < 4; index++) await refused();
        // Before, each refusal closed its session and opened another (pool.query drops a connection whose query failed).
        expect(await sessions()).toEqual(before);
      });
      expect(await named.heartbeat(leased!.taskId, leased!.leaseToken, 30_000)).toBe("renewed");
    } finally {
      await named.close();
    }
  });
  it("a renewal that gets its connection only once its lease has run out (the renewals' two connections each waiting on a held row) is not sent: it is told so, its row untouched", { timeout: 60_000 }, async () => {
    await store.submitRun(workflow([task("h1"), task("h2"), task("free")]), { runId: "renewal-late" });
    const leased = await store.lease("w1", 3, 30_000, { runId: "renewal-late" });
    const byKey = new Map(leased.map((t) => [t.key, t]));
    const expiry = async () => (await sql<{ at: string }>(store, "SELECT lease_expires_at::text AS at FROM $schema.tasks WHERE run_id = $1 AND key = 'free'", ["renewal-late"]))[0]!.at;
    const before = await expiry();
    const holder = new pg.Client({ connectionString: DATABASE_URL, application_name: "row-holder" });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${store.schema}".tasks WHERE run_id = $1 AND key IN ('h1', 'h2') FOR UPDATE`, ["renewal-late"]);
      // Asked for first, the held rows' renewals take both of the renewals' connections, each for its lock wait (200 ms at least).
      const held = ["h1", "h2"].map((key) => store.heartbeat(byKey.get(key)!.taskId, byKey.get(key)!.leaseToken, 30_000, { timeoutMs: 20_000 }).catch((caught: unknown) => caught));
      // Its lease runs out 50 ms on, long before either connection is free.
      let sent = false;
      const free = byKey.get("free")!;
      const late = await store.heartbeat(free.taskId, free.leaseToken, 30_000, { timeoutMs: 50, onSent: () => (sent = true) }).catch((caught: unknown) => caught);
      expect(late).toMatchObject({ code: "LEASE_RAN_OUT", message: expect.stringMatching(/^heartbeat not sent: the lease ran out while the renewal waited \d+ms for a connection$/) as string });
      // Before, it was sent once a connection was free: the lease renewed after it had run out on the worker's clock.
      expect(sent).toBe(false);
      expect(await expiry()).toBe(before);
      for (const refused of await Promise.all(held)) expect(refused).toMatchObject({ code: "STORE_LOCKED" });
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    // Its connection was given back as it was, unused: the next renewal goes through.
    expect(await store.heartbeat(byKey.get("free")!.taskId, byKey.get("free")!.leaseToken, 30_000, { timeoutMs: 20_000 })).toBe("renewed");
  });
  it("a renewal whose row is held names the session holding it at once, with every connection of the main pool taken (records waiting on locks)", { timeout: 60_000 }, async () => {
    // A pool of one connection, taken: the look-up of the holder waited for it, up to the connect timeout, and the renewal's retry with it.
    const small = await PostgresStore.open({ connectionString: DATABASE_URL, schema: store.schema, poolSize: 1, connectTimeoutMs: 8_000 });
    try {
      await small.submitRun(workflow([task("f")]), { runId: "renewal-held" });
      const [leased] = await small.lease("w1", 1, 30_000, { runId: "renewal-held" });
      expect(leased?.runId).toBe("renewal-held");
      const taken = await small.pool.connect();
      try {
        await whileHeld("renewal-held", "f", async (pid) => {
          // Whether anything queued for a connection of the main pool while the renewal and its look-up ran.
          let queued = 0;
          const watch = setInterval(() => (queued = Math.max(queued, small.pool.waitingCount)), 5);
          const error = await small.heartbeat(leased!.taskId, leased!.leaseToken, 30_000, { timeoutMs: 20_000 })
            .catch((caught: unknown) => caught)
            .finally(() => clearInterval(watch));
          // The session named: the look-up got a connection, which the main pool had none to give.
          expect(error).toMatchObject({ code: "STORE_LOCKED", message: expect.stringContaining(`task "f" of run renewal-held is locked by another session (pid ${pid}, application_name "row-holder"`) as string });
          // Before, the look-up queued there, up to the connect timeout, the renewal's retry with it.
          expect(queued).toBe(0);
        });
      } finally {
        taken.release();
      }
    } finally {
      await small.close();
    }
  });
});
