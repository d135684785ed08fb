import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RenewalLockedError, RENEWAL_LOCKED_RETRY_MS } from "../../src/store/postgres/lock-wait.js";
import { toStoreError } from "../../src/store/postgres/store-error.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { QUERY_READ_TIMEOUT } from "../../src/store/postgres/timeouts.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { AttemptContext, WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { SLACK_MS } from "../e2e/reliability-harness.js";
import { startFreezableProxy, startSilentServer, type FreezableProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL, dropSchema, sql, task, uniqueSchema, until, workflow } from "./helpers.js";

// A database that stops answering (a stalled machine, a network that drops every packet):
// the worker's store reaches it through a proxy that the test freezes.
describe("a database that stops answering", () => {
  const schema = uniqueSchema();
  /** Watches and sets up the runs directly, never through the proxy. */
  let observer: PostgresStore;
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    observer = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    // Unset when beforeAll failed (no database): that failure shows alone, nothing was made to drop.
    if (observer === undefined) return;
    await observer.close();
    await dropSchema(schema);
  });

  /** A store reaching the database through a proxy of its own, and a worker on it. */
  async function stallableWorker(options: { leaseMs: number; events: WorkerEvent[]; handler: (context: AttemptContext) => Promise<void> }) {
    const url = new URL(DATABASE_URL);
    const proxy: FreezableProxy = await startFreezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const store = await PostgresStore.open({ connectionString: proxy.url(DATABASE_URL), schema });
    const worker = new PostgresWorker({
      store,
      concurrency: 1,
      leaseMs: options.leaseMs,
      pollMs: 200,
      onEvent: (event) => options.events.push(event),
      handler: (_task, context) => options.handler(context),
    });
    cleanups.push(async () => {
      await proxy.close();
      await store.close();
    });
    await worker.start();
    return { proxy, worker };
  }

  const untilAborted = (context: AttemptContext) =>
    new Promise<void>((_resolve, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason as Error), { once: true }));

  it("a worker whose heartbeat is not answered aborts its attempt when the lease runs out; the task is swept, and the worker waits for its database", async () => {
    const events: WorkerEvent[] = [];
    let reason = "";
    let abortedAt = 0;
    const { proxy, worker } = await stallableWorker({
      leaseMs: 1_500,
      events,
      handler: (context) =>
        untilAborted(context).catch((error: unknown) => {
          reason = (error as { code: string }).code;
          abortedAt = performance.now();
          throw error;
        }),
    });
    const runId = await observer.submitRun(workflow([task("held", { retries: 1 })]));
    await until(() => events.some((event) => event.type === "started"));
    // Renewed at least once: its lease runs from that renewal (a third of the lease ago at most).
    await until(async () => (await worker.metricsText()).includes("taskq_lease_renewals_total 1"));
    const frozenAt = performance.now();
    proxy.freeze();
    await until(() => reason !== "", 1_500 + 2 * SLACK_MS);
    expect(reason).toBe("LEASE_LOST");
    // Renewed before the freeze, the lease ran out within 1.5 s of it; a busy machine's timer may fire late.
    expect(abortedAt - frozenAt).toBeLessThan(1_500 + SLACK_MS);
    expect(events).toContainEqual(expect.objectContaining({ type: "lease-lost", why: "unreachable" }));
    // The renewal that timed out as the lease ran out is not told as one to retry: none follows.
    expect(events.filter((event) => event.type === "db-error" && event.operation === "heartbeat")).toEqual([]);
    // Its lease runs out in the database too: a sweep gives the task to another worker, the attempt counted.
    await until(async () => (await observer.sweepOrphans()) === 1, 5_000);
    expect((await observer.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", attempts: 1, lastError: expect.stringMatching(/^lease expired/) });
    // The worker recorded nothing (its record waits for the database, which takes it only if no one took
    // the task) and did not stop by itself: a database that stopped answering is not a task taken over.
    expect(events.filter((event) => event.type === "finished" || event.type === "stopped")).toEqual([]);
    // It stops on request all the same, its database still silent: the deadline, and a grace for the record.
    const stopping = performance.now();
    await worker.stop({ deadlineMs: 500 });
    expect(performance.now() - stopping).toBeLessThan(10_000);
    await observer.cancelRun(runId);
  });

  it("a lease that runs out while the database refuses connections is lost as unreachable, not to a row lock an earlier renewal met and that was let go since", async () => {
    const events: WorkerEvent[] = [];
    let reason = "";
    const { proxy } = await stallableWorker({
      leaseMs: 3_000,
      events,
      handler: (context) =>
        untilAborted(context).catch((error: unknown) => {
          reason = (error as Error).message;
          throw error;
        }),
    });
    const runId = await observer.submitRun(workflow([task("held", { retries: 1 })]));
    await until(() => events.some((event) => event.type === "started"));
    // A psql session holds the task's row: a renewal is refused it, and says so.
    const locker = new pg.Client({ connectionString: DATABASE_URL, application_name: "psql" });
    await locker.connect();
    cleanups.push(() => locker.end());
    await locker.query("BEGIN");
    await locker.query(`SELECT 1 FROM "${schema}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
    const lockedRenewal = (event: WorkerEvent) => event.type === "db-error" && event.operation === "heartbeat" && (event.error as { code?: string }).code === "STORE_LOCKED";
    await until(() => events.some(lockedRenewal), 5_000);
    // Then the lock is let go, and the database refuses every connection until the lease has run out.
    proxy.refuse();
    await locker.query("COMMIT");
    await until(() => events.some((event) => event.type === "lease-lost"), 5_000 + SLACK_MS);
    expect(events.filter((event) => event.type === "db-error" && event.operation === "heartbeat" && !lockedRenewal(event)).length).toBeGreaterThan(0);
    expect(events.find((event) => event.type === "lease-lost")).toMatchObject({ why: "unreachable" });
    await until(() => reason !== "");
    expect(reason).not.toContain("waited for a lock");
    proxy.accept();
    await sql(observer, "UPDATE $schema.tasks SET lease_expires_at = now() WHERE run_id = $1", [runId]);
    await observer.cancelRun(runId);
  });

  it("a lease that runs out while the database stops answering is lost as unreachable, not to a row lock an earlier renewal was refused", async () => {
    const events: WorkerEvent[] = [];
    let reason = "";
    // Long enough that the renewal sent once the database froze waits past what a renewal refused its row takes (its
    // lock wait, and the look-up of who holds it): whatever it waited for, it was not that lock.
    const { proxy } = await stallableWorker({
      leaseMs: 6_000,
      events,
      handler: (context) =>
        untilAborted(context).catch((error: unknown) => {
          reason = (error as Error).message;
          throw error;
        }),
    });
    const runId = await observer.submitRun(workflow([task("held", { retries: 1 })]));
    await until(() => events.some((event) => event.type === "started"));
    // A psql session holds the task's row: a renewal is refused it, and says so.
    const locker = new pg.Client({ connectionString: DATABASE_URL, application_name: "psql" });
    await locker.connect();
    cleanups.push(() => locker.end());
    await locker.query("BEGIN");
    await locker.query(`SELECT 1 FROM "${schema}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
    const lockedRenewal = (event: WorkerEvent) => event.type === "db-error" && event.operation === "heartbeat" && (event.error as { code?: string }).code === "STORE_LOCKED";
    await until(() => events.some(lockedRenewal), 5_000);
    // Then the database stops answering (the lock let go, which no renewal reaches), until the lease has run out.
    proxy.freeze();
    await locker.query("COMMIT");
    await until(() => events.some((event) => event.type === "lease-lost"), 6_000 + SLACK_MS);
    // Before: "locked", and the attempt ended "the lease ran out while its renewals waited for a lock: task "held" ...".
    expect(events.find((event) => event.type === "lease-lost")).toMatchObject({ why: "unreachable" });
    await until(() => reason !== "");
    expect(reason).toBe("the lease ran out before a renewal (the worker stalled or the database did not answer)");
    await sql(observer, "UPDATE $schema.tasks SET lease_expires_at = now() WHERE run_id = $1", [runId]);
    await observer.cancelRun(runId);
  });

  /**
   * A worker of one task on a store of its own, leases of 3 s renewed every second, whose first renewal goes through and whose
   * second is `second` (given the lease's end as the first renewal set it, and the real renew); later ones go through. Waits
   * for the lease to be lost, and gives the `lease-lost` event.
   */
  async function leaseLostAfter(second: (leaseEnds: number, renew: PostgresStore["renew"]) => Promise<never>, key: string): Promise<WorkerEvent | undefined> {
    const events: WorkerEvent[] = [];
    const store = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
    cleanups.push(() => store.close());
    const leaseMs = 3_000;
    const renew = store.renew.bind(store);
    let leaseEnds = 0;
    let calls = 0;
    store.renew = async (...args: Parameters<PostgresStore["renew"]>) => {
      calls++;
      if (calls === 1) leaseEnds = performance.now() + leaseMs;
      return calls === 2 ? second(leaseEnds, renew) : renew(...args);
    };
    const worker = new PostgresWorker({ store, concurrency: 1, leaseMs, heartbeatMs: 1_000, pollMs: 200, onEvent: (event) => events.push(event), handler: (_task, context) => untilAborted(context) });
    cleanups.push(() => worker.stop({ deadlineMs: 0 }));
    const runId = await observer.submitRun(workflow([task(key)]));
    await worker.start();
    await until(() => events.some((event) => event.type === "lease-lost"), leaseMs + 2 * SLACK_MS);
    expect(calls).toBeGreaterThanOrEqual(2);
    await sql(observer, "UPDATE $schema.tasks SET lease_expires_at = now() WHERE run_id = $1", [runId]);
    await observer.cancelRun(runId);
    return events.find((event) => event.type === "lease-lost");
  }

  it("a lease that runs out while its task's row is locked is lost to that lock, though the last retry's timer fired a moment past the lease's end: no stall", async () => {
    // The second renewal is refused the row (as a psql session holding it has it refused), its answer coming so that the retry
    // is due 2 ms before the lease runs out; and this process is busy from just before then to 15 ms after (a busy event loop,
    // a GC pause): that retry's timer fires a moment past the lease's end.
    const lost = await leaseLostAfter(async (leaseEnds) => {
      await new Promise((resolve) => setTimeout(resolve, leaseEnds - RENEWAL_LOCKED_RETRY_MS - 2 - performance.now()));
      setTimeout(() => {
        while (performance.now() < leaseEnds + 15);
      }, leaseEnds - 20 - performance.now());
      const held = 'task "held" of run r is locked by another session (pid 42, application_name "psql")';
      throw new RenewalLockedError(held, `heartbeat failed: ${held}`, new Error("lock not available"));
    }, "held");
    expect(lost).toMatchObject({ why: "locked" });
  });

  it("a lease that runs out while its renewal waited behind renewals refused a locked row is lost to that lock, though the renewal's own timeout fired a moment before the lease's end", async () => {
    const locker = new pg.Client({ connectionString: DATABASE_URL, application_name: "psql" });
    await locker.connect();
    cleanups.push(() => locker.end());
    // The other task, leased elsewhere (for an hour: no worker here takes it), whose row the psql session holds for a moment.
    const otherRunId = await observer.submitRun(workflow([task("other")]));
    const [other] = await observer.lease("elsewhere", 1, 3_600_000);
    // The second renewal waits as one does for a connection of the renewals' few, each held by another task's renewal that a
    // psql session's row lock refuses (one such refusal is made here, on the other task's row: the store notes whose lock it
    // was); then its statement's own timeout, what was left of the lease, fires before the lease's end, as a driver's timer may,
    // its millisecond clock behind performance.now() (by up to a millisecond: 5 ms here, so that a loaded machine's lateness of
    // this test's own timer does not hide it). Before: told as a database that did not answer ("the lease ran out before a
    // renewal (the worker stalled or the database did not answer)").
    const lost = await leaseLostAfter(async (leaseEnds, renew) => {
      const sentAt = performance.now();
      await locker.query("BEGIN");
      await locker.query(`SELECT 1 FROM "${schema}".tasks WHERE run_id = $1 FOR UPDATE`, [otherRunId]);
      await expect(renew(other!.taskId, other!.leaseToken, 3_000)).rejects.toBeInstanceOf(RenewalLockedError);
      await locker.query("COMMIT");
      await new Promise((resolve) => setTimeout(resolve, leaseEnds - 5 - performance.now()));
      throw toStoreError("heartbeat", new Error(QUERY_READ_TIMEOUT), { connectMs: 2_000, queryMs: leaseEnds - sentAt });
    }, "queued");
    expect(lost).toMatchObject({ why: "queued" });
    await sql(observer, "UPDATE $schema.tasks SET lease_expires_at = now() WHERE run_id = $1", [otherRunId]);
    await observer.cancelRun(otherRunId);
  });

  it("stop returns while the database does not answer; a second stop brings the deadline forward", async () => {
    const events: WorkerEvent[] = [];
    let aborted = "";
    const { proxy, worker } = await stallableWorker({
      leaseMs: 30_000,
      events,
      handler: (context) =>
        untilAborted(context).catch((error: unknown) => {
          aborted = (error as { code: string }).code;
          throw error;
        }),
    });
    const runId = await observer.submitRun(workflow([task("long")]));
    await until(() => events.some((event) => event.type === "started"));
    proxy.freeze();
    const started = performance.now();
    const first = worker.stop({ deadlineMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(aborted).toBe("");
    // A second Ctrl-C: the running attempt is aborted now, and its release is not waited for long.
    const second = worker.stop({ deadlineMs: 0 });
    expect(second).toBe(first);
    await first;
    expect(aborted).toBe("SHUTDOWN");
    expect(performance.now() - started).toBeLessThan(6_000);
    // Nothing reached the database: the task is still leased there, until its lease runs out.
    await sql(observer, "UPDATE $schema.tasks SET lease_expires_at = now() WHERE run_id = $1", [runId]);
    await observer.cancelRun(runId);
    await observer.sweepOrphans();
    expect((await observer.runStatus(runId)).state).toBe("cancelled");
  });

  it("a statement the store gave up on is stopped by the server too, not left running with the locks it holds", async () => {
    const runId = await observer.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] })]));
    const [leased] = await observer.lease("w1", 1, 30_000, { runId });
    const store = new PostgresStore({ connectionString: DATABASE_URL, schema, queryTimeoutMs: 1_000 });
    cleanups.push(() => store.close());
    // Another session holds the run's rows, so the first statement of the record of a's failure waits for them.
    // (A worker's: a user's command waits a moment only for a lock, see LOCK_WAIT_MS.)
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    cleanups.push(() => locker.end());
    await locker.query("BEGIN");
    await locker.query(`SELECT 1 FROM "${schema}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
    const error = await store.complete(leased!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ message: "complete failed: the database did not answer within 1s" });
    // The server stops it a moment later, while the lock is still held: it no longer waits (nor would it
    // run on, a statement that takes long on its own, taking the server's time and holding rows for hours).
    const waiting = async () =>
      (
        await locker.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'",
          [schema],
        )
      ).rows;
    expect(await waiting()).toHaveLength(1);
    await until(async () => (await waiting()).length === 0, 8_000);
    await locker.query("ROLLBACK");
    expect((await observer.runStatus(runId)).state).toBe("running");
  });

  it("a transaction cut off mid-way by a network that stopped (its client gone, the server never told) does not keep the rows it locked", async () => {
    const runId = await observer.submitRun(workflow([task("a"), task("b", { dependsOn: ["a"] })]));
    const [leased] = await observer.lease("w1", 1, 30_000, { runId });
    const url = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const store = new PostgresStore({ connectionString: proxy.url(DATABASE_URL), schema, queryTimeoutMs: 1_000 });
    cleanups.push(async () => {
      await proxy.close();
      await store.close();
    });
    // The first statement of the record of a's failure waits for another session's lock (a worker's record waits for
    // locks as long as its query limit lets it; a user's command a moment only, see LOCK_WAIT_MS); the network stops
    // then, and the lock is let go: the server runs the statement, locks the rows and waits for the next one, whose
    // client gave up (no reply within 1s) and is gone, which the server does not hear of.
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    cleanups.push(() => locker.end());
    await locker.query("BEGIN");
    await locker.query(`SELECT 1 FROM "${schema}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
    const recorded = store.complete(leased!.leaseToken, { kind: "failure", error: "exit 1", exitCode: 1 }).catch((caught: unknown) => caught);
    await until(async () => (await observer.pool.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'", [schema])).rows.length > 0, 8_000);
    proxy.freeze();
    await locker.query("ROLLBACK");
    expect(await recorded).toMatchObject({ message: "complete failed: the database did not answer within 1s" });
    // The server ends that session once it has been idle in its transaction past the store's limit (and its
    // margin): the rows are free again within seconds, for a cancel (here) as for the workers and their sweeps.
    // A cancel waits a moment only for each try (LOCK_WAIT_MS), for about 5 s in all: it goes through.
    const started = Date.now();
    expect(await observer.cancelRun(runId)).toMatchObject({ cancelled: ["b"], cancelRequested: ["a"] });
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 60_000);

  it("an operation that finds every connection of its pool in use says so, not that the database gave it none", async () => {
    const store = new PostgresStore({ connectionString: DATABASE_URL, schema, poolSize: 1, connectTimeoutMs: 1_000 });
    // As a worker's records each waiting on a lock another session holds take every connection of its pool.
    const held = await store.pool.connect();
    cleanups.push(async () => {
      held.release();
      await store.close();
    });
    const error = await store.runStatus("any").catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: "STORE_UNAVAILABLE",
      message:
        "runStatus failed: no connection free within 1s: every connection of this process's pool was in use " +
        "(by statements waiting on a lock another session holds or on a slow database, or by connections still being made)",
    });
  });

  it("connecting to a server that never answers fails within the connect timeout, connect_timeout when the URL sets it", async () => {
    const silent = await startSilentServer();
    cleanups.push(silent.close);
    const at = (query: string) => `postgres://app:s3cret@127.0.0.1:${silent.port}/qa${query}`;
    expect(new PostgresStore({ connectionString: at("") }).pool.options).toMatchObject({ connectionTimeoutMillis: 10_000, query_timeout: 30_000 });
    // libpq's reading: seconds, at least 2; 0 waits for ever.
    expect(new PostgresStore({ connectionString: at("?connect_timeout=5") }).pool.options.connectionTimeoutMillis).toBe(5_000);
    expect(new PostgresStore({ connectionString: at("?connect_timeout=1") }).pool.options.connectionTimeoutMillis).toBe(2_000);
    expect(new PostgresStore({ connectionString: at("?connect_timeout=0") }).pool.options.connectionTimeoutMillis).toBe(0);
    expect(() => new PostgresStore({ connectionString: at("?connect_timeout=soon") })).toThrow(/connect_timeout=soon in the connection string is not a whole number of seconds/);
    const store = new PostgresStore({ connectionString: at("?connect_timeout=2"), schema });
    const started = performance.now();
    const error = await store.runStatus("any").catch((caught: unknown) => caught);
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(error).toMatchObject({ code: "STORE_UNAVAILABLE", message: "runStatus failed: no connection to the database within 2s" });
    await store.close();
  });
});
