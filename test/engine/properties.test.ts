import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PermanentError } from "../../src/errors.js";
import { Queue, QueueClosedError, isTerminal, type Priority, type TaskResult } from "../../src/engine/index.js";
import type { AttemptContext } from "../../src/engine/types.js";
import { PRIORITY_RANK } from "../../src/engine/task-record.js";
import { useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
});

type Outcome =
  | { kind: "succeed" }
  | { kind: "flaky"; failures: number }
  | { kind: "permanent" }
  | { kind: "throw"; nonError: boolean }
  | { kind: "hang" };

interface TaskPlan {
  deps: number[];
  priority: Priority;
  maxAttempts: number;
  outcome: Outcome;
  /** How long each attempt takes before it settles (ms). */
  duration: number;
  runAtDelay: number;
  timeoutMs: number;
}

interface Plan {
  tasks: TaskPlan[];
  concurrency: number;
  startFirst: boolean;
  backoffMs: number;
  cancels: { at: number; task: number }[];
  shutdown: { at: number; drain: boolean; deadline: number; graceMs: number };
}

const outcomeArb: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "succeed" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("flaky" as const), failures: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "permanent" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("throw" as const), nonError: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "hang" as const }) },
);

const taskArb: fc.Arbitrary<TaskPlan> = fc.record({
  deps: fc.array(fc.nat(), { maxLength: 3 }),
  priority: fc.constantFrom<Priority>("low", "normal", "high", "critical"),
  maxAttempts: fc.integer({ min: 1, max: 4 }),
  outcome: outcomeArb,
  duration: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 80 })),
  runAtDelay: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 500 }) }),
  timeoutMs: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 5, max: 200 }) }),
});

const planArb: fc.Arbitrary<Plan> = fc
  .record({
    tasks: fc.array(taskArb, { minLength: 1, maxLength: 200, size: "max" }),
    concurrency: fc.integer({ min: 1, max: 8 }),
    startFirst: fc.boolean(),
    backoffMs: fc.integer({ min: 0, max: 100 }),
    cancels: fc.array(fc.record({ at: fc.integer({ min: 0, max: 1_500 }), task: fc.nat() }), { maxLength: 10 }),
    shutdown: fc.record({
      at: fc.integer({ min: 0, max: 2_000 }),
      drain: fc.boolean(),
      deadline: fc.integer({ min: 0, max: 2_000 }),
      graceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 })),
    }),
  })
  .map((plan) => ({
    ...plan,
    // Dependencies are drawn from earlier tasks only: a DAG by construction.
    tasks: plan.tasks.map((task, index) => ({ ...task, deps: index === 0 ? [] : [...new Set(task.deps.map((d) => d % index))] })),
    cancels: plan.cancels.map((c) => ({ at: c.at, task: c.task % plan.tasks.length })),
  }));

/** Waits `ms` unless the signal aborts first; then rejects with its reason and leaves no timer. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function handlerFor(plan: Plan) {
  return (index: number, context: AttemptContext): unknown => {
    const task = plan.tasks[index]!;
    const { outcome } = task;
    if (outcome.kind === "throw") {
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      throw outcome.nonError ? `plain string from ${index}` : new Error(`sync throw from ${index}`);
    }
    if (outcome.kind === "hang") {
      return new Promise((_, reject) => {
        const { signal } = context;
        if (signal.aborted) reject(signal.reason as Error);
        else signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
      });
    }
    const settle = (): unknown => {
      if (outcome.kind === "permanent") throw new PermanentError(`permanent ${index}`);
      if (outcome.kind === "flaky" && context.attempt <= outcome.failures) throw new Error(`attempt ${context.attempt} of ${index}`);
      return index;
    };
    if (task.duration === 0) return settle();
    return sleep(task.duration, context.signal).then(settle);
  };
}

function better(a: { rank: number; seq: number }, b: { rank: number; seq: number }): boolean {
  return a.rank !== b.rank ? a.rank > b.rank : a.seq < b.seq;
}

async function runPlan(plan: Plan): Promise<void> {
  const ids = plan.tasks.map((_, i) => `t${i}`);
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  const queue = new Queue({ concurrency: plan.concurrency, handlers: { work: handlerFor(plan) }, backoff: (n) => plan.backoffMs * n });
  const terminal = new Map<string, string[]>();
  const endedAt = new Map<string, number>();
  const started = new Map<string, number[]>();
  const ready = new Set<string>();
  const failedOrder: string[] = [];
  const violations: string[] = [];
  let retryEvents = 0;
  let drainedEvents = 0;

  queue.on("submitted", (e) => {
    if (e.status === "READY") ready.add(e.id);
  });
  queue.on("ready", (e) => ready.add(e.id));
  /** When each task may start at the earliest: its runAt, then each retry's. */
  const notBefore = new Map<string, number>();
  /** Set once nothing may start any more: shutdown({ drain: false }) was called, or its deadline passed. */
  let stoppedAt: number | undefined;
  queue.on("started", (e) => {
    const index = indexOf.get(e.id)!;
    ready.delete(e.id);
    if (Date.now() < (notBefore.get(e.id) ?? -Infinity)) violations.push(`${e.id} started at ${Date.now()}, before its runAt ${notBefore.get(e.id)}`);
    if (stoppedAt !== undefined && Date.now() > stoppedAt) violations.push(`${e.id} started at ${Date.now()}, after the shutdown stopped starting tasks at ${stoppedAt}`);
    (started.get(e.id) ?? started.set(e.id, []).get(e.id)!).push(e.attempt);
    for (const dep of plan.tasks[index]!.deps) {
      if (queue.get(ids[dep]!)?.status !== "SUCCEEDED") violations.push(`${e.id} started before ${ids[dep]} succeeded`);
    }
    const stats = queue.stats();
    if (stats.running > plan.concurrency) violations.push(`${stats.running} running > ${plan.concurrency}`);
    if (stats.byStatus.RUNNING !== stats.running) violations.push("byStatus.RUNNING != running");
    // The heap hands out the best ready task: none left behind may beat it.
    const me = { rank: PRIORITY_RANK[plan.tasks[index]!.priority], seq: index };
    for (const other of ready) {
      const o = indexOf.get(other)!;
      if (better({ rank: PRIORITY_RANK[plan.tasks[o]!.priority], seq: o }, me)) violations.push(`${e.id} started before better ${other}`);
    }
  });
  queue.on("retrying", (e) => {
    retryEvents++;
    notBefore.set(e.id, e.runAt);
  });
  for (const name of ["succeeded", "failed", "cancelled"] as const) {
    queue.on(name, (e) => {
      ready.delete(e.id);
      endedAt.set(e.id, Date.now());
      (terminal.get(e.id) ?? terminal.set(e.id, []).get(e.id)!).push(name);
      if (name === "failed") failedOrder.push(e.id);
    });
  }
  queue.on("drained", () => drainedEvents++);
  queue.on("listener-error", (e) => violations.push(`listener threw: ${String(e.error)}`));

  if (plan.startFirst) queue.start();
  const now = Date.now();
  const waits = new Map<string, TaskResult>();
  plan.tasks.forEach((task, i) => {
    if (task.runAtDelay > 0) notBefore.set(ids[i]!, now + task.runAtDelay);
    queue.submit({
      id: ids[i],
      type: "work",
      payload: i,
      priority: task.priority,
      maxAttempts: task.maxAttempts,
      timeoutMs: task.timeoutMs,
      runAt: task.runAtDelay > 0 ? now + task.runAtDelay : undefined,
      dependsOn: task.deps.map((d) => ids[d]!),
    });
    void queue.wait(ids[i]!).then((result) => waits.set(ids[i]!, result));
  });
  if (!plan.startFirst) queue.start();

  const actions = [
    ...plan.cancels.map((c) => ({ at: c.at, run: () => void queue.cancel(ids[c.task]!) })),
    { at: plan.shutdown.at, run: () => void shutdown() },
  ].sort((a, b) => a.at - b.at);
  let result: { hardStopped: boolean } | undefined;
  const shutdown = async (): Promise<void> => {
    // drain: false starts nothing from the call on; a drain, nothing once its deadline has passed (a start in that
    // very millisecond may come before the deadline's timer).
    stoppedAt = Date.now() + (plan.shutdown.drain ? plan.shutdown.deadline : -1);
    result = await queue.shutdown({ drain: plan.shutdown.drain, deadline: plan.shutdown.deadline, abortGraceMs: plan.shutdown.graceMs });
  };
  let clock = 0;
  for (const action of actions) {
    await vi.advanceTimersByTimeAsync(action.at - clock);
    clock = action.at;
    action.run();
  }
  for (let step = 0; result === undefined && step < 1_000; step++) await vi.advanceTimersByTimeAsync(25);
  expect(result, "shutdown resolved").toBeDefined();
  expect(() => queue.submit({ type: "work", payload: 0 })).toThrow(QueueClosedError);
  await vi.advanceTimersByTimeAsync(0);

  expect(violations).toEqual([]);
  expect(drainedEvents).toBe(1);
  expect(vi.getTimerCount(), "timers left after shutdown").toBe(0);

  const finals = ids.map((id) => queue.get(id)!);
  const counts = { BLOCKED: 0, SCHEDULED: 0, READY: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 };
  finals.forEach((final, i) => {
    const id = ids[i]!;
    counts[final.status]++;
    // Exactly one terminal status, reported exactly once, and every waiter settled with it.
    expect(isTerminal(final.status), `${id} is ${final.status}`).toBe(true);
    expect(terminal.get(id)).toEqual([final.status.toLowerCase()]);
    expect(waits.get(id)?.status, `waiter of ${id}`).toBe(final.status);
    // Attempts: numbered 1..n, never more than maxAttempts.
    const attempts = started.get(id) ?? [];
    expect(attempts).toEqual(Array.from({ length: attempts.length }, (_, k) => k + 1));
    expect(final.attempts).toBe(attempts.length);
    expect(final.attempts).toBeLessThanOrEqual(plan.tasks[i]!.maxAttempts);
    // A task whose dependency did not succeed is cancelled (so, transitively, every dependent).
    const deps = plan.tasks[i]!.deps.map((d) => finals[d]!);
    const broken = plan.tasks[i]!.deps.filter((d) => finals[d]!.status !== "SUCCEEDED");
    if (broken.length > 0) {
      expect(final.status, `${id} after a failed dependency`).toBe("CANCELLED");
      // ...and at once: no later than the first dependency that did not succeed.
      expect(endedAt.get(id)).toBeLessThanOrEqual(Math.min(...broken.map((d) => endedAt.get(ids[d]!)!)));
    }
    if (final.status === "SUCCEEDED") expect(deps.every((d) => d.status === "SUCCEEDED")).toBe(true);
    const task = plan.tasks[i]!;
    // A task meant to succeed can only fail by running into its timeout.
    if (final.status === "FAILED" && task.outcome.kind === "succeed") expect(task.timeoutMs > 0 && task.timeoutMs <= task.duration).toBe(true);
  });
  // Dead letters are exactly the FAILED tasks, oldest failure first.
  expect(queue.deadLetters().map((r) => r.id)).toEqual(failedOrder);
  expect(new Set(failedOrder)).toEqual(new Set(ids.filter((_, i) => finals[i]!.status === "FAILED")));
  expect(queue.stats()).toEqual({ total: ids.length, byStatus: counts, running: 0, retries: retryEvents, deadLetters: failedOrder.length });
}

describe("properties over random DAGs", () => {
  it("every task ends once, in order, within limits, and shutdown leaves nothing behind", async () => {
    let tasks = 0;
    await fc.assert(
      fc.asyncProperty(planArb, async (plan) => {
        tasks += plan.tasks.length;
        await runPlan(plan);
      }),
      { numRuns: 120 },
    );
    // Guard against a generator that quietly stopped making big graphs.
    expect(tasks / 120).toBeGreaterThan(50);
  }, 60_000);

  it("with concurrency 1 and no delays, tasks start in priority-then-FIFO order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom<Priority>("low", "normal", "high", "critical"), { minLength: 1, maxLength: 200, size: "max" }), async (priorities) => {
        const order: number[] = [];
        const queue = new Queue({ concurrency: 1, handlers: { work: (i: number) => void order.push(i) } });
        priorities.forEach((priority, i) => queue.submit({ type: "work", payload: i, priority }));
        await queue.shutdown();
        const expected = priorities
          .map((p, i) => ({ rank: PRIORITY_RANK[p], i }))
          .sort((a, b) => b.rank - a.rank || a.i - b.i)
          .map((x) => x.i);
        expect(order).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });
});
