import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { PermanentError } from "../../src/errors.js";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import type { LeasedTask } from "../../src/store/postgres/types.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { AttemptContext, WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { openTestStore, sql, task, until, waitForRun, workflow } from "./helpers.js";

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });

describe("PostgresWorker", () => {
  let store: PostgresStore;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
  let close: (() => Promise<void>) | undefined;
  const workers: PostgresWorker[] = [];
  beforeAll(async () => ({ store, close } = await openTestStore()));
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop({ deadlineMs: 1_000 })));
  });
  afterAll(async () => close?.());

  function startWorker(
    handler: (task: LeasedTask, context: AttemptContext) => Promise<unknown>,
    options: { leaseMs?: number; concurrency?: number; events?: WorkerEvent[]; abortGraceMs?: number } = {},
  ) {
    const worker = new PostgresWorker({
      store,
      ...(options.abortGraceMs === undefined ? {} : { abortGraceMs: options.abortGraceMs }),
      concurrency: options.concurrency ?? 4,
      handler,
      leaseMs: options.leaseMs ?? 5_000,
      onEvent: (event) => options.events?.push(event),
    });
    workers.push(worker);
    return worker;
  }

  it("runs a small DAG with a JS handler: order, retries, permanent failure, cascade", async () => {
    const order: string[] = [];
    const worker = startWorker(async (leased, context) => {
      order.push(`${leased.key}#${context.attempt}`);
      await sleep(5);
      if (leased.key === "flaky" && context.attempt === 1) throw Object.assign(new Error("first try fails"), { result: { exitCode: 1, tail: ["x"] } });
      if (leased.key === "bad") throw new PermanentError("cannot work");
      return undefined;
    });
    await worker.start();
    const runId = await store.submitRun(
      workflow([
        task("build"),
        task("flaky", { retries: 2, backoff: { baseMs: 50, maxMs: 50 }, dependsOn: ["build"] }),
        task("lint", { dependsOn: ["build"] }),
        task("ship", { dependsOn: ["flaky", "lint"] }),
        task("bad", { retries: 3 }),
        task("after-bad", { dependsOn: ["bad"] }),
      ]),
    );
    const status = await waitForRun(store, runId);
    expect(status.state).toBe("failed");
    const states = Object.fromEntries(status.tasks.map((row) => [row.key, [row.state, row.attempts]]));
    expect(states).toEqual({
      build: ["succeeded", 1],
      flaky: ["succeeded", 2],
      lint: ["succeeded", 1],
      ship: ["succeeded", 1],
      bad: ["failed", 1],
      "after-bad": ["cancelled", 0],
    });
    expect(order.indexOf("ship#1")).toBeGreaterThan(order.indexOf("flaky#2"));
    expect(order.indexOf("flaky#1")).toBeGreaterThan(order.indexOf("build#1"));
    const text = await worker.metricsText();
    for (const name of [
      "taskq_tasks",
      "taskq_attempts_total",
      "taskq_retries_total",
      "taskq_completions_total",
      "taskq_queue_wait_seconds",
      "taskq_run_seconds",
      "taskq_lease_renewals_total",
      "taskq_orphans_recovered_total",
    ]) {
      expect(text).toContain(name);
    }
    expect(text).toMatch(/taskq_completions_total\{outcome="retried"\} 1/);
    expect(text).toMatch(/taskq_tasks\{state="succeeded"\} \d+/);
  });

  it("aborts an attempt on timeout and on a cancel request, with the reason code", async () => {
    const reasons: Record<string, string> = {};
    const worker = startWorker(
      async (leased, context) => {
        try {
          await sleep(30_000, context.signal);
        } catch (error) {
          reasons[leased.key] = (error as { code: string }).code;
          throw error;
        }
      },
      // A lease long beside a loaded machine's pauses (a renewal every second): one of 600 ms ran out before a renewal
      // under load, and the task waiting for its cancel was killed as its lease lost instead.
      { leaseMs: 3_000 },
    );
    await worker.start();
    const runId = await store.submitRun(workflow([task("slow", { timeoutMs: 100 }), task("hang")]));
    await until(async () => (await store.runStatus(runId)).counts.running === 1 && reasons.slow !== undefined);
    await store.cancelRun(runId, "hang");
    const status = await waitForRun(store, runId);
    expect(reasons).toEqual({ slow: "TIMEOUT", hang: "CANCELLED" });
    const slow = status.tasks.find((row) => row.key === "slow")!;
    expect(slow).toMatchObject({ state: "failed", timedOut: true, lastError: "timed out after 100ms" });
    expect(status.tasks.find((row) => row.key === "hang")!.state).toBe("cancelled");
  });

  it("startClock starts a task's timeout again: a handler's wait before its work does not count against it", async () => {
    // Each waits 1.5 s before its work (as a spawn waits its turn), then works 1 s, in a 2 s timeout; one calls startClock after its wait.
    const reasons: Record<string, string> = {};
    const worker = startWorker(async (leased, context) => {
      try {
        await sleep(1_500, context.signal);
        if (leased.key === "restarted") context.startClock();
        await sleep(1_000, context.signal);
      } catch (error) {
        reasons[leased.key] = (error as { code: string }).code;
        throw error;
      }
    }, { concurrency: 2 });
    await worker.start();
    const runId = await store.submitRun(workflow([task("restarted", { timeoutMs: 2_000, retries: 0 }), task("counted", { timeoutMs: 2_000, retries: 0 })]));
    const status = await waitForRun(store, runId);
    expect(reasons).toEqual({ counted: "TIMEOUT" });
    expect(status.tasks.find((row) => row.key === "restarted")).toMatchObject({ state: "succeeded" });
    expect(status.tasks.find((row) => row.key === "counted")).toMatchObject({ state: "failed", timedOut: true, lastError: "timed out after 2s" });
  });

  it("stops gracefully: running attempts past the deadline are aborted and their leases released", async () => {
    let reason = "";
    let started = false;
    const worker = startWorker(async (_leased, context) => {
      started = true;
      await sleep(30_000, context.signal).catch((error: unknown) => {
        reason = (error as { code: string }).code;
        throw error;
      });
    });
    await worker.start();
    const runId = await store.submitRun(workflow([task("long", { retries: 0 })]));
    // Running in the database as soon as it is leased; the handler starts a moment later.
    await until(() => started);
    await worker.stop({ deadlineMs: 100 });
    expect(reason).toBe("SHUTDOWN");
    const status = await store.runStatus(runId);
    expect(status.tasks[0]).toMatchObject({ state: "queued", attempts: 0 });
    await store.cancelRun(runId);
  });

  it("returns from stop even when a handler ignores its signal, releasing the lease", async () => {
    let finish: (() => void) | undefined;
    const worker = startWorker(() => new Promise<void>((resolve) => (finish = resolve)), { abortGraceMs: 500 });
    await worker.start();
    const runId = await store.submitRun(workflow([task("stubborn")]));
    // Its handler running: a task is running in the database as soon as it is leased, a moment before.
    await until(() => finish !== undefined);
    const started = Date.now();
    await worker.stop({ deadlineMs: 50 });
    // After its 500 ms grace (a loaded machine's margin besides), not the 7 s default's.
    expect(Date.now() - started).toBeLessThan(4_000);
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", attempts: 0 });
    finish!();
    await store.cancelRun(runId);
  });

  it("a second stop that aborts the handlers with a shorter grace gives a stuck handler's lease back after that grace, not the abort grace", async () => {
    let finish: (() => void) | undefined;
    const worker = startWorker(() => new Promise<void>((resolve) => (finish = resolve)), { abortGraceMs: 60_000 });
    await worker.start();
    const runId = await store.submitRun(workflow([task("stubborn")]));
    await until(() => finish !== undefined);
    const started = Date.now();
    const stopped = worker.stop({ deadlineMs: 100 });
    await sleep(500);
    // As a second Ctrl-C does: the tasks are SIGKILLed, so their handlers are waited for only a moment.
    worker.abortRunning(500);
    await worker.stop({ deadlineMs: 0 });
    await stopped;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", attempts: 0 });
    finish!();
    await store.cancelRun(runId);
  });

  it("waits for an aborted handler for its abort grace before giving its lease back, and tells the release once when the handler ends as it is given back", async () => {
    const events: WorkerEvent[] = [];
    let finish = (): void => undefined;
    let abortedAt = 0;
    const handlerEnded = new Promise<number>((resolve) => {
      finish = () => resolve(Date.now());
    });
    // The handler's end comes with the worker's own release of its lease (the first release asked for), whose reply is
    // slow: slower than the worker waits for it at first (2 s), so the handler's end comes well before the news.
    const release = store.releaseAs.bind(store);
    let releases = 0;
    store.releaseAs = async (token: string) => {
      releases++;
      if (releases > 1) return release(token);
      finish();
      const released = await release(token);
      await sleep(2_500);
      return released;
    };
    onTestFinished(() => void delete (store as Partial<PostgresStore>).releaseAs);
    let started = false;
    const worker = startWorker(
      async (_leased, context) => {
        started = true;
        context.signal.addEventListener("abort", () => (abortedAt = Date.now()));
        await handlerEnded;
        throw new Error("ended after its abort");
      },
      { abortGraceMs: 1_500, events },
    );
    await worker.start();
    const runId = await store.submitRun(workflow([task("stubborn")]));
    // Its handler running: stopped a moment before (the task running in the database, as it is once leased), the
    // worker gives the lease back without starting it.
    await until(() => started);
    await worker.stop({ deadlineMs: 50 });
    // Given back no sooner than the abort grace after the abort: until then the task may still run.
    expect(abortedAt).toBeGreaterThan(0);
    expect((await handlerEnded) - abortedAt).toBeGreaterThanOrEqual(1_400);
    expect(events.filter((event) => event.type === "released")).toHaveLength(1);
    expect(releases).toBe(1);
    expect(events.at(-1)).toEqual({ type: "stopped", reason: "requested" });
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", attempts: 0 });
    await store.cancelRun(runId);
  });

  it("sweeps when it starts: a task whose lease ran out before any worker was up runs at once, not half a lease later", async () => {
    const runId = await store.submitRun(workflow([task("left", { retries: 1 })]));
    // A worker (a whole fleet) that died with a 50 ms lease, long run out when a worker with a 1 min lease starts.
    expect(await store.lease("gone", 1, 50)).toHaveLength(1);
    await sleep(100);
    const events: WorkerEvent[] = [];
    const worker = startWorker(async () => "done", { leaseMs: 60_000, events });
    await worker.start();
    const status = await waitForRun(store, runId, 5_000);
    expect(status.tasks[0]).toMatchObject({ state: "succeeded", attempts: 2 });
    expect(events.find((event) => event.type === "orphans-recovered")).toMatchObject({ count: 1, tasks: [{ runId, key: "left", workerId: "gone", state: "queued" }] });
  });

  it("sweeps again at once while a sweep finds as many expired leases as it takes at a time: a fleet's orphans do not wait a half lease per hundred", async () => {
    const runId = await store.submitRun(workflow(Array.from({ length: 250 }, (_, i) => task(`t${i}`, { retries: 1 }))));
    expect(await store.lease("gone", 250, 50)).toHaveLength(250);
    await sleep(100);
    const events: WorkerEvent[] = [];
    // A half lease of 5 min against a bound of 1 min: a loaded machine's sweeps of a hundred rows each, and the 250
    // attempts between, took longer than the 10 s a half lease of 30 s left, and the run was not done when looked at.
    const worker = startWorker(async () => "done", { leaseMs: 600_000, concurrency: 50, events });
    await worker.start();
    const status = await waitForRun(store, runId, 60_000);
    expect(status.counts.succeeded).toBe(250);
    const swept = events.flatMap((event) => (event.type === "orphans-recovered" ? [event.count] : []));
    expect(swept).toEqual([100, 100, 50]);
  }, 90_000);

  it("aborts with LEASE_LOST and stops leasing when its lease is taken over", async () => {
    const events: WorkerEvent[] = [];
    let reason = "";
    const worker = startWorker(
      async (_leased, context) => {
        await sleep(30_000, context.signal).catch((error: unknown) => {
          reason = (error as { code: string }).code;
          throw error;
        });
      },
      // Renewed every second: a lease of 300 ms could run out of itself under load, before the takeover was met.
      { leaseMs: 3_000, events },
    );
    await worker.start();
    const runId = await store.submitRun(workflow([task("stolen", { retries: 3 })]));
    await until(async () => (await store.runStatus(runId)).counts.running === 1);
    await sql(store, "UPDATE $schema.tasks SET lease_token = gen_random_uuid() WHERE run_id = $1", [runId]);
    await until(() => reason !== "");
    expect(reason).toBe("LEASE_LOST");
    await until(() => events.some((event) => event.type === "stopping"));
    expect(events.find((event) => event.type === "stopping")).toEqual({ type: "stopping", reason: "lease-lost" });
    await until(() => events.some((event) => event.type === "finished"));
    expect(events.find((event) => event.type === "finished")).toMatchObject({ result: false });
    // Its owner stops it (the CLI does, on "stopping"): "stopped" comes then, last.
    expect(events.some((event) => event.type === "stopped")).toBe(false);
    await worker.stop();
    expect(events.at(-1)).toEqual({ type: "stopped", reason: "lease-lost" });
    await store.cancelRun(runId);
  });
});
