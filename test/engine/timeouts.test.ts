import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AttemptTimeoutError, formatMs } from "../../src/engine/index.js";
import type { AttemptContext } from "../../src/engine/types.js";
import { deferred, eventsOf, flush, makeQueue, untilAborted, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
});

describe("per-attempt timeout", () => {
  it("aborts the signal with a TIMEOUT reason when the attempt runs too long", async () => {
    const signals: AbortSignal[] = [];
    const { queue, log } = makeQueue({
      handlers: {
        slow: (_: unknown, context: AttemptContext) => {
          signals.push(context.signal);
          return untilAborted(context);
        },
      },
    });
    queue.submit({ id: "a", type: "slow", timeoutMs: 250, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(249);
    expect(signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toBeInstanceOf(AttemptTimeoutError);
    expect(signals[0]?.reason).toMatchObject({ code: "TIMEOUT", timeoutMs: 250, message: "timed out after 250ms" });
    const result = await queue.wait("a");
    expect(result).toMatchObject({ status: "FAILED", attempts: 1 });
    expect(result.error).toBe(signals[0]?.reason);
    expect(eventsOf(log, "failed")).toHaveLength(1);
  });

  it("startClock starts the timeout again from then: a handler's wait before its work does not count; after the attempt ended it starts nothing", async () => {
    const contexts: AttemptContext[] = [];
    const work = deferred<void>();
    const { queue } = makeQueue({
      handlers: {
        // Waits 800 ms for its turn, then works, in a 1 s timeout.
        queued: async (until: "work" | "aborted", context: AttemptContext) => {
          contexts.push(context);
          await new Promise((resolve) => setTimeout(resolve, 800));
          context.startClock?.();
          return until === "work" ? Promise.race([work.promise, untilAborted(context)]) : untilAborted(context);
        },
      },
    });
    queue.submit({ id: "a", type: "queued", payload: "work", timeoutMs: 1_000, maxAttempts: 1 });
    // 1.7 s after the attempt began: 900 ms of its work, within the timeout counted from startClock.
    await vi.advanceTimersByTimeAsync(1_700);
    expect(contexts[0]!.signal.aborted).toBe(false);
    work.resolve();
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "SUCCEEDED" });
    // Ended: a late call leaves no timer behind, and aborts nothing.
    contexts[0]!.startClock?.();
    expect(vi.getTimerCount()).toBe(0);
    // It still times out 1 s after startClock.
    queue.submit({ id: "b", type: "queued", payload: "aborted", timeoutMs: 1_000, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(1_799);
    expect(contexts[1]!.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(contexts[1]!.signal.reason).toMatchObject({ code: "TIMEOUT", message: "timed out after 1s" });
    await expect(queue.wait("b")).resolves.toMatchObject({ status: "FAILED" });
    // Already timed out before it is called (a wait longer than the timeout): nothing starts again.
    const late = makeQueue({
      handlers: {
        slow: async (_: unknown, context: AttemptContext) => {
          contexts.push(context);
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          context.startClock?.();
          return untilAborted(context);
        },
      },
    }).queue;
    late.submit({ id: "c", type: "slow", timeoutMs: 1_000, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(contexts[2]!.signal.reason).toMatchObject({ code: "TIMEOUT" });
    await vi.advanceTimersByTimeAsync(500);
    await expect(late.wait("c")).resolves.toMatchObject({ status: "FAILED", attempts: 1 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("holds a timeout longer than setTimeout's 24.8-day limit for its whole length", async () => {
    const signals: AbortSignal[] = [];
    const { queue } = makeQueue({
      handlers: {
        slow: (_: unknown, context: AttemptContext) => {
          signals.push(context.signal);
          return untilAborted(context);
        },
      },
    });
    const day = 24 * 60 * 60 * 1000;
    queue.submit({ id: "a", type: "slow", timeoutMs: 30 * day, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(25 * day);
    expect(signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(5 * day - 1);
    expect(signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(signals[0]?.reason).toMatchObject({ code: "TIMEOUT", timeoutMs: 30 * day });
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "FAILED", attempts: 1 });
  });

  it("a timed-out attempt is retried with a fresh signal and a fresh timeout", async () => {
    const signals: AbortSignal[] = [];
    const { queue, log } = makeQueue({
      backoff: () => 10,
      handlers: {
        slowOnce: (_: unknown, context: AttemptContext) => {
          signals.push(context.signal);
          return context.attempt === 1 ? untilAborted(context) : "ok";
        },
      },
    });
    queue.submit({ id: "a", type: "slowOnce", timeoutMs: 100, maxAttempts: 2 });
    await vi.advanceTimersByTimeAsync(110);
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "SUCCEEDED", attempts: 2 });
    expect(eventsOf(log, "retrying")[0]?.error).toBeInstanceOf(AttemptTimeoutError);
    expect(signals[1]).not.toBe(signals[0]);
    expect(signals[1]?.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("maps a bare AbortError from the handler to the timeout reason", async () => {
    const { queue } = makeQueue({
      handlers: {
        fetchy: (_: unknown, context: AttemptContext) =>
          new Promise((_resolve, reject) => {
            context.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")), { once: true });
          }),
      },
    });
    queue.submit({ id: "a", type: "fetchy", timeoutMs: 50, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(50);
    expect((await queue.wait("a")).error).toBeInstanceOf(AttemptTimeoutError);
  });

  it("clears the timeout timer when the attempt ends in time", async () => {
    const gate = deferred();
    const { queue } = makeQueue({ handlers: { gated: () => gate.promise } });
    queue.submit({ id: "a", type: "gated", timeoutMs: 1_000 });
    expect(vi.getTimerCount()).toBe(1);
    gate.resolve();
    await flush();
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a handler that ignores its signal ends when it settles, as a failed attempt", async () => {
    const gate = deferred();
    const { queue } = makeQueue({ handlers: { stubborn: () => gate.promise } });
    queue.submit({ id: "a", type: "stubborn", timeoutMs: 10, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(10);
    expect(queue.get("a")?.status).toBe("RUNNING");
    gate.reject(new Error("finally"));
    await flush();
    expect(queue.get("a")?.status).toBe("FAILED");
  });

  it("a handler that ignores its signal and then returns a value succeeds: what it returns counts", async () => {
    const gate = deferred<string>();
    const { queue } = makeQueue({ handlers: { stubborn: () => gate.promise } });
    queue.submit({ id: "a", type: "stubborn", timeoutMs: 10, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(10);
    expect(queue.get("a")?.status).toBe("RUNNING");
    gate.resolve("late");
    await flush();
    expect(queue.get("a")).toMatchObject({ status: "SUCCEEDED", value: "late" });
  });

  it("a timeout beyond the timer range does not fire early", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang", timeoutMs: 2 ** 32 });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(queue.get("a")?.status).toBe("RUNNING");
    queue.cancel("a");
    await flush();
  });

  it("no timeout when timeoutMs is 0 or absent", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang", timeoutMs: 0 });
    queue.submit({ id: "b", type: "hang" });
    expect(vi.getTimerCount()).toBe(0);
    queue.cancel("a");
    queue.cancel("b");
    await flush();
  });
});

describe("formatMs", () => {
  it.each([
    [90, "90ms"],
    [1_500, "1.5s"],
    [512_000, "8m32s"],
    [5_400_000, "1h30m"],
    // A fraction of a ms just short of a unit rounds up into it, never to 60 of the unit below.
    [59_999.9996, "1m"],
    [119_999.9996, "2m"],
    [3_599_999.5, "1h"],
    [7_199_999.6, "2h"],
    [61_000.4, "1m1s"],
    // A rest under a second in seconds, as the CLI says it and a workflow file writes it: not "1m500ms".
    [60_500, "1m0.5s"],
    [60_001, "1m0.001s"],
    [3_660_500, "1h1m0.5s"],
    [3_600_250, "1h0.25s"],
    [86_400_000 + 999, "1d0.999s"],
    // Past a day in days, as a retry's delay is said: not "600h" (timeout: 25d).
    [25 * 86_400_000, "25d"],
    [(24 + 12) * 3_600_000 + 30 * 60_000, "1d12h30m"],
    [86_399_999.6, "1d"],
    // Under a second to the microsecond: a sum of fractions read "0.30000000000000004ms".
    [0.1 + 0.2, "0.3ms"],
    [2.5, "2.5ms"],
    [0.0004, "0ms"],
    [999.9996, "1s"],
    // Exact, as the user wrote it: a timeout of 1h30s is not "1h1m" (nor "1h").
    [3_630_000, "1h30s"],
  ])("formatMs(%d) is %s: no unit shows 60", (ms, text) => {
    expect(formatMs(ms)).toBe(text);
    expect(new AttemptTimeoutError(ms).message).toBe(`timed out after ${text}`);
  });
});

describe("formatMs of less than 0", () => {
  it.each([
    [-90_000, "-1m30s"],
    [-1_500, "-1.5s"],
    [-250, "-250ms"],
    [-0.0004, "0ms"],
    [-0, "0ms"],
  ])("formatMs(%d) is %s, in the units of its opposite", (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });
});

describe("formatMs of what is no number of ms", () => {
  // Exported: a caller's NaN or Infinity is said as it is, as formatDuration says it, rather than a RangeError (Maximum call stack size exceeded).
  it.each([
    [Number.NaN, "NaNms"],
    [Infinity, "Infinityms"],
    [-Infinity, "-Infinityms"],
  ])("formatMs(%d) is %s", (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });
});

describe("formatMs of what is no number", () => {
  // Exported: from JavaScript, undefined read "undefinedms", and a string "1500ms" as if it were a number of ms.
  it.each([
    [undefined, "undefined"],
    [null, "null"],
    ["1500", '"1500" (a string)'],
    [1500n, "1500n (a bigint)"],
  ])("formatMs(%s) throws INVALID_OPTION naming what it got", (ms, got) => {
    expect(() => (formatMs as (ms: unknown) => string)(ms)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: `formatMs takes a number of ms, got ${got}` }));
  });
});
