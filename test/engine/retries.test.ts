import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PermanentError } from "../../src/errors.js";
import { Queue, exponentialBackoff } from "../../src/engine/index.js";
import type { AttemptContext } from "../../src/engine/types.js";
import { eventsOf, flush, makeQueue, recordEvents, trail, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
});

/** Fails the first `times` attempts, then returns the attempt number. */
function flaky(times: number) {
  return (_: unknown, context: AttemptContext) => {
    if (context.attempt <= times) return Promise.reject(new Error(`attempt ${context.attempt}`));
    return context.attempt;
  };
}

describe("retries", () => {
  it("RUNNING -> SCHEDULED with attempts left, at now + backoff(attempt)", async () => {
    const delays: number[] = [];
    const { queue, log } = makeQueue({
      handlers: { flaky: flaky(2) },
      backoff: (attempt) => {
        delays.push(attempt);
        return attempt * 100;
      },
    });
    const t0 = Date.now();
    queue.submit({ id: "a", type: "flaky", maxAttempts: 3 });
    await flush();
    expect(queue.get("a")).toMatchObject({ status: "SCHEDULED", attempts: 1 });
    const [first] = eventsOf(log, "retrying");
    expect(first).toMatchObject({ id: "a", attempt: 1, maxAttempts: 3, delayMs: 100, runAt: t0 + 100 });
    expect((first?.error as Error).message).toBe("attempt 1");
    await vi.advanceTimersByTimeAsync(99);
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    await vi.advanceTimersByTimeAsync(1);
    expect(eventsOf(log, "retrying")[1]).toMatchObject({ attempt: 2, delayMs: 200, runAt: t0 + 300 });
    await vi.advanceTimersByTimeAsync(200);
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "SUCCEEDED", attempts: 3, value: 3 });
    expect(delays).toEqual([1, 2]);
    expect(eventsOf(log, "started").map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(trail(log, "a")).toEqual(["submitted", "started", "retrying", "ready", "started", "retrying", "ready", "started", "succeeded"]);
    expect(queue.stats().retries).toBe(2);
  });

  it("a wall clock stepped back (NTP) holds neither a retry nor a delayed task back by the step; a step forward brings neither on", async () => {
    const { queue } = makeQueue({ handlers: { flaky: flaky(1) }, backoff: () => 100 });
    const hour = 3_600_000;
    queue.submit({ id: "retried", type: "flaky", maxAttempts: 2 });
    queue.submit({ id: "delayed", type: "echo", runAt: Date.now() + 200 });
    await flush();
    expect(queue.get("retried")).toMatchObject({ status: "SCHEDULED", attempts: 1 });
    vi.setSystemTime(Date.now() - hour);
    await vi.advanceTimersByTimeAsync(100);
    expect(queue.get("retried")).toMatchObject({ status: "SUCCEEDED", attempts: 2 });
    expect(queue.get("delayed")?.status).toBe("SCHEDULED");
    vi.setSystemTime(Date.now() + 2 * hour);
    await vi.advanceTimersByTimeAsync(99);
    expect(queue.get("delayed")?.status).toBe("SCHEDULED");
    await vi.advanceTimersByTimeAsync(1);
    expect(queue.get("delayed")?.status).toBe("SUCCEEDED");
  });

  it("uses the default exponential backoff with an injected random source, exactly", async () => {
    const queue = new Queue({
      handlers: { flaky: flaky(3) },
      backoff: exponentialBackoff({ baseMs: 100, maxMs: 250, random: () => 0.5 }),
    });
    const log = recordEvents(queue);
    queue.start();
    queue.submit({ id: "a", type: "flaky", maxAttempts: 4 });
    await vi.advanceTimersByTimeAsync(1_000);
    // floor(0.5 * (d + 1)) for d = 100, 200, 250 (capped)
    expect(eventsOf(log, "retrying").map((e) => e.delayMs)).toEqual([50, 100, 125]);
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
  });

  it("a per-task backoff overrides the queue's", async () => {
    const { queue, log } = makeQueue({ handlers: { flaky: flaky(1) }, backoff: () => 999 });
    queue.submit({ id: "a", type: "flaky", backoff: () => 7 });
    await flush();
    expect(eventsOf(log, "retrying")[0]?.delayMs).toBe(7);
    await vi.advanceTimersByTimeAsync(7);
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
  });

  it("a throwing backoff fails the task instead of the queue", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    try {
      const { queue } = makeQueue({ handlers: { flaky: flaky(1) } });
      queue.submit({
        id: "b",
        type: "flaky",
        backoff: () => {
          throw new Error("policy broke");
        },
      });
      queue.submit({ id: "c", type: "echo" });
      await vi.advanceTimersByTimeAsync(0);
      expect(queue.get("b")).toMatchObject({ status: "FAILED", attempts: 1 });
      expect((queue.get("b")?.error as Error).message).toBe("attempt 1");
      expect(queue.get("c")?.status).toBe("SUCCEEDED");
    } finally {
      warn.mockRestore();
    }
  });

  it("a backoff returning 0 retries at once", async () => {
    const { queue, log } = makeQueue({ handlers: { flaky: flaky(1) }, backoff: () => 0 });
    queue.submit({ id: "a", type: "flaky" });
    await vi.advanceTimersByTimeAsync(0);
    expect(eventsOf(log, "retrying")[0]?.delayMs).toBe(0);
    expect(queue.get("a")).toMatchObject({ status: "SUCCEEDED", attempts: 2 });
  });

  it("zero-backoff retries of a handler that fails synchronously keep the ready order, as the Go design's: a task of higher priority submitted meanwhile, and a delayed one come due, run between them; a later one of the same priority waits", async () => {
    const order: string[] = [];
    const record = (_payload: unknown, context: AttemptContext): void => {
      order.push(`${context.taskId}#${context.attempt}`);
    };
    const { queue } = makeQueue({
      concurrency: 1,
      start: false,
      backoff: () => 0,
      handlers: {
        record,
        failing: (payload, context) => {
          record(payload, context);
          // Time passes in the attempt, as in a real one: the delayed task comes due between retries.
          vi.advanceTimersByTime(5);
          throw new Error(`attempt ${context.attempt}`);
        },
      },
    });
    queue.submit({ id: "flaky", type: "failing", maxAttempts: 4 });
    queue.submit({ id: "later", type: "record" });
    queue.submit({ id: "urgent", type: "record", priority: "high" });
    queue.submit({ id: "delayed", type: "record", priority: "high", runAt: Date.now() + 12 });
    queue.on("retrying", (e) => {
      if (e.attempt === 1) queue.submit({ id: "meanwhile", type: "record", priority: "critical" });
    });
    queue.start();
    await vi.advanceTimersByTimeAsync(0);
    await flush();
    expect(order).toEqual(["urgent#1", "flaky#1", "meanwhile#1", "flaky#2", "flaky#3", "delayed#1", "flaky#4", "later#1"]);
  });

  it.each([
    ["NaN", NaN, "NaN"],
    ["-Infinity", -Infinity, "-Infinity"],
    ["a negative number", -50, "-50"],
  ])("a backoff returning %s fails the task with its last error and a TaskqBackoffWarning, instead of retrying at once in silence", async (_name, delay, shownDelay) => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    try {
      const { queue, log } = makeQueue({ handlers: { flaky: flaky(10) } });
      queue.submit({ id: "a", type: "flaky", maxAttempts: 5, backoff: (attempt) => (attempt === 1 ? 100 : delay) });
      const done = queue.shutdown();
      await vi.advanceTimersByTimeAsync(100);
      await expect(done).resolves.toEqual({ hardStopped: false });
      expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 2 });
      expect((queue.get("a")?.error as Error).message).toBe("attempt 2");
      expect(eventsOf(log, "retrying")).toHaveLength(1);
      expect(warn.mock.calls).toEqual([[`taskq: task "a": its backoff returned ${shownDelay} for retry 2, not a finite number of ms, 0 or more: the task fails without retrying`, "TaskqBackoffWarning"]]);
    } finally {
      warn.mockRestore();
    }
  });

  it.each([
    ["a string", "5"],
    ["Infinity", Infinity],
    ["a bigint", 5n],
  ])("a backoff returning %s fails the task with its own error, instead of a retry that never comes or a crash", async (_name, delay) => {
    const { queue } = makeQueue({ handlers: { flaky: flaky(1) }, backoff: () => delay as unknown as number });
    queue.submit({ id: "a", type: "flaky" });
    queue.submit({ id: "b", type: "echo" });
    const done = queue.shutdown();
    await vi.advanceTimersByTimeAsync(0);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 1 });
    expect((queue.get("a")?.error as Error).message).toBe("attempt 1");
    expect(queue.get("b")?.status).toBe("SUCCEEDED");
    expect(queue.stats().retries).toBe(0);
  });

  it.each([
    ["returns undefined (a list of delays run out)", () => [100][1]!, 'taskq: task "a": its backoff returned undefined for retry 2, not a finite number of ms, 0 or more: the task fails without retrying'],
    [
      "throws",
      () => {
        throw new Error("policy broke");
      },
      'taskq: task "a": its backoff threw for retry 2 (policy broke): the task fails without retrying',
    ],
  ])("a backoff that %s says so in a process warning: the task's FAILED with attempts left would not tell why", async (_name, broken, message) => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    try {
      const { queue } = makeQueue({ handlers: { flaky: flaky(10) } });
      queue.submit({ id: "a", type: "flaky", maxAttempts: 5, backoff: (attempt) => (attempt === 1 ? 100 : broken()) });
      await vi.advanceTimersByTimeAsync(100);
      expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 2 });
      expect((queue.get("a")?.error as Error).message).toBe("attempt 2");
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]).toEqual([message, "TaskqBackoffWarning"]);
    } finally {
      warn.mockRestore();
    }
  });

  it("RUNNING -> FAILED after maxAttempts, with the last error, and a dead letter", async () => {
    const { queue, log } = makeQueue({ handlers: { flaky: flaky(10) } });
    queue.submit({ id: "a", type: "flaky", maxAttempts: 3 });
    await vi.advanceTimersByTimeAsync(1_000);
    const result = await queue.wait("a");
    expect(result).toMatchObject({ status: "FAILED", attempts: 3 });
    expect((result.error as Error).message).toBe("attempt 3");
    expect(eventsOf(log, "retrying")).toHaveLength(2);
    expect(queue.deadLetters().map((r) => r.id)).toEqual(["a"]);
  });

  it("never retries a permanent error, even with attempts left", async () => {
    const { queue, log } = makeQueue({ handlers: { perm: () => Promise.reject(new PermanentError("no")) } });
    queue.submit({ id: "a", type: "perm", maxAttempts: 10 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 1 });
    expect(eventsOf(log, "retrying")).toEqual([]);
  });

  it("never retries a permanent error wrapped for context as a cause, as Go's errors.As finds one wrapped with %w; an error that says permanent: false itself is retried", async () => {
    const wrapped = (): Promise<never> => Promise.reject(new Error("sync step failed", { cause: new Error("reading input", { cause: new PermanentError("bad input") }) }));
    const retryable = (): Promise<never> => Promise.reject(Object.assign(new Error("exit 75, worth retrying"), { permanent: false, cause: new PermanentError("log") }));
    const { queue, log } = makeQueue({ handlers: { wrapped, retryable } });
    queue.submit({ id: "a", type: "wrapped", maxAttempts: 10 });
    queue.submit({ id: "b", type: "retryable", maxAttempts: 2 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 1 });
    expect(queue.get("b")).toMatchObject({ status: "FAILED", attempts: 2 });
    expect(eventsOf(log, "retrying").map((e) => e.id)).toEqual(["b"]);
  });

  it("uses defaultMaxAttempts when a spec gives none", async () => {
    const { queue } = makeQueue({ handlers: { flaky: flaky(10) }, defaultMaxAttempts: 2 });
    queue.submit({ id: "a", type: "flaky" });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 2 });
  });

  it("maxAttempts 0 or less takes the queue's default, as the Go design's zero value does", async () => {
    const { queue } = makeQueue({ handlers: { flaky: flaky(10) }, defaultMaxAttempts: 2 });
    queue.submit({ id: "zero", type: "flaky", maxAttempts: 0 });
    queue.submit({ id: "negative", type: "flaky", maxAttempts: -1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.get("zero")).toMatchObject({ status: "FAILED", attempts: 2 });
    expect(queue.get("negative")).toMatchObject({ status: "FAILED", attempts: 2 });
  });

  it("defaultMaxAttempts 0 is the built-in default, 3 attempts", async () => {
    const { queue } = makeQueue({ handlers: { flaky: flaky(10) }, defaultMaxAttempts: 0 });
    queue.submit({ id: "a", type: "flaky" });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 3 });
  });

  it("a retry waits in the delayed heap behind earlier runAt, then by priority when ready", async () => {
    const started: string[] = [];
    const { queue } = makeQueue({ concurrency: 1, handlers: { flaky: flaky(1) }, backoff: () => 100 });
    queue.on("started", (e) => started.push(`${e.id}#${e.attempt}`));
    queue.submit({ id: "r", type: "flaky", priority: "critical" });
    queue.submit({ id: "late", type: "echo", priority: "low", runAt: Date.now() + 100 });
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual(["r#1", "r#2", "late#1"]);
  });
});
