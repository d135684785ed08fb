import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { exponentialBackoff, exponentialDelay, Queue } from "../../src/engine/index.js";
import type { QueueOptions, ShutdownOptions } from "../../src/engine/options.js";
import type { AttemptContext, Handler, TaskSpec } from "../../src/engine/types.js";
import { eventsOf, flush, makeQueue, untilAborted, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
});

/** A value String() cannot turn into text: an object without a prototype. */
const unprintable = (): unknown => Object.create(null) as unknown;
const flakyForever = (): never => {
  throw new Error("again");
};

describe("values the queue cannot print", () => {
  it("a handler rejecting with an object without a prototype while shutdown({ drain: false }) runs: its task ends CANCELLED, the queue goes on", async () => {
    const { queue } = makeQueue({
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point of the test
      handlers: { bad: () => new Promise((_, reject) => setTimeout(() => reject(unprintable()), 100)) },
    });
    queue.submit({ id: "a", type: "bad", maxAttempts: 3 });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    await flush();
    const done = queue.shutdown({ drain: false });
    await vi.advanceTimersByTimeAsync(100);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")?.status).toBe("CANCELLED");
    expect((queue.get("a")?.error as Error).message).toBe("shutdown: not retried (attempt 1 failed: [object Object])");
    expect(queue.get("b")?.status).toBe("CANCELLED");
  });

  it("a task waiting to retry after such a value is cancelled by shutdown({ drain: false }), its error kept", async () => {
    let calls = 0;
    const { queue } = makeQueue({
      backoff: () => 60_000,
      handlers: {
        bad: () => {
          calls++;
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point of the test
          return Promise.reject(unprintable());
        },
      },
    });
    queue.submit({ id: "a", type: "bad", maxAttempts: 3 });
    await flush();
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    await expect(queue.shutdown({ drain: false })).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")?.status).toBe("CANCELLED");
    expect(String((queue.get("a")?.error as Error).message)).toMatch(/not retried \(attempt 1 failed: \[object Object\]\)/);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls).toBe(1);
  });

  it("synchronous handlers whose succeeded listener throws one, with no listener-error listener: every attempt settles", async () => {
    const queue = new Queue({ concurrency: 3, handlers: { echo: (p: unknown) => p } });
    const onWarning = (): void => {};
    process.on("warning", onWarning);
    try {
      queue.on("succeeded", (event) => {
        if (event.id === "b") throw unprintable();
      });
      for (const id of ["a", "b", "c"]) queue.submit({ id, type: "echo" });
      await flush();
      queue.submit({ id: "d", type: "echo" });
      await expect(queue.shutdown()).resolves.toEqual({ hardStopped: false });
      expect(queue.stats().byStatus).toMatchObject({ SUCCEEDED: 4, RUNNING: 0 });
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("a listener throwing one is reported as listener-error, and the task's dependents still run", async () => {
    const { queue, log } = makeQueue({ start: false });
    queue.on("succeeded", (event) => {
      if (event.id === "a") throw unprintable();
    });
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    await expect(queue.shutdown()).resolves.toEqual({ hardStopped: false });
    expect(queue.get("b")?.status).toBe("SUCCEEDED");
    expect(eventsOf(log, "listener-error").map((e) => e.event)).toEqual(["succeeded"]);
  });

  it("with no listener-error listener, the warning says what was thrown instead of throwing itself", async () => {
    const queue = new Queue({ handlers: { echo: (p: unknown) => p } });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      queue.on("succeeded", () => {
        throw unprintable();
      });
      queue.submit({ id: "a", type: "echo" });
      queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
      await expect(queue.shutdown()).resolves.toEqual({ hardStopped: false });
      expect(queue.get("b")?.status).toBe("SUCCEEDED");
      await vi.runAllTimersAsync(); // process warnings are emitted on a later tick
      await new Promise((resolve) => process.nextTick(resolve));
      expect(warnings).toContain('taskq: a "succeeded" listener threw: [object Object]');
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("values the queue cannot read", () => {
  /** An object every property read of which throws, as a Proxy or a getter of a handler's may. */
  const unreadable = (): unknown =>
    new Proxy(
      {},
      {
        get() {
          throw new Error("no reading");
        },
      },
    );

  /** Objects whose prototype cannot be read, so `instanceof` on them throws. */
  const noPrototype = {
    "a revoked Proxy": (): unknown => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    },
    "a Proxy whose getPrototypeOf trap throws": (): unknown =>
      new Proxy(
        {},
        {
          getPrototypeOf() {
            throw new Error("no prototype");
          },
        },
      ),
  };

  it.each<[string, (payload: unknown, context: AttemptContext) => unknown]>([
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point of the test
    ["rejecting with one", () => Promise.reject(unreadable())],
    ["throwing one", () => {
      throw unreadable();
    }],
    ["rejecting with one after its timeout", (_p: unknown, context: AttemptContext) => untilAborted(context).catch(() => Promise.reject(unreadable() as Error))],
    ...Object.entries(noPrototype).flatMap(([what, make]): Array<[string, () => unknown]> => [
      [`throwing ${what}`, () => {
        throw make();
      }],
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point of the test
      [`rejecting with ${what}`, () => Promise.reject(make())],
    ]),
  ])("a handler %s: the attempt fails and is retried, the queue goes on", async (_name, handler) => {
    const { queue } = makeQueue({ backoff: () => 10, handlers: { bad: handler } });
    queue.submit({ id: "a", type: "bad", maxAttempts: 2, timeoutMs: 50 });
    queue.submit({ id: "b", type: "echo" });
    const done = queue.shutdown();
    await vi.advanceTimersByTimeAsync(200);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 2 });
    expect(queue.get("b")?.status).toBe("SUCCEEDED");
  });

});

describe("the handler's context", () => {
  it("copied by a wrapper ({ ...context }), it still carries the signal that a timeout aborts", async () => {
    const seen: AttemptContext[] = [];
    const inner: Handler = (_payload, context) => {
      seen.push(context);
      return untilAborted(context);
    };
    const wrapped: Handler = (payload, context) => inner(payload, { ...context });
    const { queue } = makeQueue({ handlers: { wrapped } });
    queue.submit({ id: "a", type: "wrapped", timeoutMs: 1_000, maxAttempts: 1 });
    await flush();
    expect(seen[0]).toEqual({ taskId: "a", attempt: 1, signal: expect.any(AbortSignal) });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.get("a")?.status).toBe("FAILED");
    expect((queue.get("a")?.error as { code?: string }).code).toBe("TIMEOUT");
  });

  it("shows none of the queue's own state", async () => {
    const keys: string[] = [];
    const { queue } = makeQueue({ handlers: { look: (_p, context) => void keys.push(...Object.keys(context)) } });
    queue.submit({ id: "a", type: "look" });
    await queue.shutdown();
    expect(keys.sort()).toEqual(["attempt", "signal", "taskId"]);
  });
});

describe("shutdown at once", () => {
  it.each([
    ["an aborted signal", { signal: AbortSignal.abort() }],
    ["a deadline already passed", { deadline: 0 }],
    ["a past Date", { deadline: new Date(0) }],
  ])("with %s, a queue never started starts nothing: every task ends CANCELLED with no attempt", async (_name, options) => {
    const started: string[] = [];
    const { queue } = makeQueue({ start: false, handlers: { track: (_p, context) => void started.push(context.taskId) } });
    queue.submit({ id: "a", type: "track" });
    queue.submit({ id: "b", type: "track", runAt: Date.now() + 1_000 });
    await expect(queue.shutdown(options)).resolves.toEqual({ hardStopped: true });
    expect(started).toEqual([]);
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", attempts: 0 });
    expect(queue.get("b")).toMatchObject({ status: "CANCELLED", attempts: 0 });
  });

  it("a deadline past setTimeout's 24.8-day limit is held for its whole length", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    const day = 24 * 3_600_000;
    let result: unknown;
    void queue.shutdown({ deadline: 30 * day }).then((r) => (result = r));
    await vi.advanceTimersByTimeAsync(29 * day);
    expect(result).toBeUndefined();
    expect(queue.get("a")?.status).toBe("RUNNING");
    await vi.advanceTimersByTimeAsync(day);
    expect(result).toEqual({ hardStopped: true });
    expect(queue.get("a")?.status).toBe("CANCELLED");
  });
});

describe("bad input to the library", () => {
  it("a deadline given as a time in epoch ms (Date.now() + 30_000, as a runAt is) is refused: as ms from now it is 56 years, and the drain would never be cut short", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    const at = 1_764_763_200_000; // the real clock's Date.now() + 30_000 one day in December 2025
    expect(() => queue.shutdown({ deadline: at })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", message: `shutdown deadline is ms from now, and ${at} ms is 56 years: for a time, pass a Date (new Date(${at}))` }),
    );
    await flush();
    expect(queue.get("a")?.status).toBe("RUNNING");
    expect(() => queue.submit({ id: "b", type: "echo" })).not.toThrow();
  });

  it.each([NaN, new Date("garbage")])("shutdown({ deadline: %s }) throws INVALID_OPTION and stops nothing", async (deadline) => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    expect(() => queue.shutdown({ deadline })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    await flush();
    expect(queue.get("a")?.status).toBe("RUNNING");
    expect(() => queue.submit({ id: "b", type: "echo" })).not.toThrow();
  });

  it.each([
    [{ deadLine: 100 }, 'unknown shutdown option "deadLine": the options are drain, deadline, signal, abortGraceMs'],
    // Shown as other options' values are: this read `got x`, and `got 5000` as if 5000 were an object's text.
    ["x", 'shutdown options must be an object, got "x" (a string)'],
    [5_000, "shutdown options must be an object, got 5000: for a deadline, pass shutdown({ deadline: 5000 })"],
    [false, "shutdown options must be an object, got false: for the drain, pass shutdown({ drain: false })"],
    [{ drain: "false" }, 'shutdown drain must be true or false, got "false" (a string)'],
    [{ deadline: 100, abortGraceMs: "5000" }, 'shutdown abortGraceMs must be a number of ms, got "5000" (a string)'],
    // A handler that ignores its signal would be waited for forever: shutdown would never return.
    [{ deadline: 100, abortGraceMs: Infinity }, "shutdown abortGraceMs must be a finite number of ms, got Infinity: a handler that ignores its signal would keep shutdown from ever returning"],
    // Taken as 0 before: a caller's wrong sign passed unseen.
    [{ deadline: 100, abortGraceMs: -5 }, "shutdown abortGraceMs must be 0 or more ms, got -5"],
    [{ deadline: 100, abortGraceMs: NaN }, "shutdown abortGraceMs must be a number of ms, got NaN"],
    [{ signal: { aborted: false } }, 'shutdown signal must be an AbortSignal, got {"aborted":false} (an object)'],
    [{ signal: new AbortController() }, "shutdown signal must be an AbortSignal, got an AbortController: pass its signal (controller.signal)"],
    // The signal itself, not in an object: it has no own keys, so it passed for no options, and the drain waited on.
    [new AbortController().signal, "shutdown options must be an object, got an AbortSignal: pass it as shutdown({ signal })"],
    // A number of ms given as a string: "got 100" would read as the number it was not taken for.
    [{ deadline: "100" }, 'shutdown deadline must be a number of ms or a valid Date, got "100" (a string)'],
    [{ deadline: new Date("garbage") }, "shutdown deadline must be a number of ms or a valid Date, got an invalid Date"],
  ])("shutdown(%j) throws INVALID_OPTION and stops nothing, instead of ignoring the option", async (options, message) => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    queue.submit({ id: "b", type: "echo", runAt: Date.now() + 10 });
    expect(() => queue.shutdown(options as unknown as ShutdownOptions)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message }));
    await flush();
    expect(queue.get("a")?.status).toBe("RUNNING");
    expect(queue.get("b")?.status).toBe("SCHEDULED");
    expect(() => queue.submit({ id: "c", type: "echo" })).not.toThrow();
    await expect(queue.shutdown({ deadline: 0 })).resolves.toEqual({ hardStopped: true });
  });

  it.each([
    [{ dependOn: ["build"] }, 'task "x": unknown field "dependOn": the fields are id, type, payload, priority, maxAttempts, timeoutMs, runAt, dependsOn, backoff'],
    [{ retries: 2 }, 'task "x": unknown field "retries": a task\'s field here is maxAttempts (attempts in all, the first included)'],
    [{ timeout: 5_000 }, 'task "x": unknown field "timeout": a task\'s field here is timeoutMs'],
  ])("a misspelt task field (%j) throws INVALID_TASK instead of being ignored", (fields, message) => {
    const { queue } = makeQueue({ start: false });
    queue.submit({ id: "build", type: "echo" });
    expect(() => queue.submit({ id: "x", type: "echo", ...fields })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message }));
    expect(queue.get("x")).toBeUndefined();
    expect(queue.submit({ type: "echo" })).toBe("task-2");
  });

  it.each([
    ["finished", () => undefined, 'unknown event "finished" (a string): the events are submitted, ready, scheduled, started, retrying, succeeded, failed, cancelled, drained, listener-error'],
    ["failed", "log", 'the listener for "failed" must be a function, got "log" (a string)'],
  ])("on(%j) throws INVALID_OPTION, instead of a listener that never hears anything", (name, listener, message) => {
    const { queue } = makeQueue();
    expect(() => queue.on(name as "failed", listener as () => void)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message }));
  });

  it.each([
    [{ priority: "HIGH" }, 'task "x": unknown priority "HIGH": the priorities are low, normal, high, critical'],
    // The Go design's priorities are numbers (PriorityCritical is 3): not to be shown as the string "3".
    [{ priority: 3 }, 'task "x": priority must be one of low, normal, high, critical, got 3'],
    // A one-name array reads as that name as a property key: it was taken for "high".
    [{ priority: ["high"] }, 'task "x": priority must be one of low, normal, high, critical, got ["high"] (an array)'],
  ])("a priority the queue does not know (%j) is refused naming the priorities", (fields, message) => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "x", type: "echo", ...(fields as object) })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message }));
    expect(queue.get("x")).toBeUndefined();
  });

  it.each([
    [{ timeoutMs: 5n }, 'task "x": timeoutMs must be a non-negative number, got 5n (a bigint)'],
    [{ maxAttempts: 3n }, "got 3n (a bigint)"],
    [{ runAt: 5n }, "got 5n (a bigint)"],
  ])("a bigint where a number is due (%s) is shown as a bigint, not as the number the message asks for", (fields, message) => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "x", type: "echo", ...(fields as object) })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message: expect.stringContaining(message) }));
  });

  it("runAt: Infinity is not a time, nor is a number past what a Date holds (1e300): either would wait for ever", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", runAt: Infinity })).toThrow(/task "a": runAt is not a valid time/);
    expect(queue.get("a")).toBeUndefined();
    // Before, 1e300 was taken: SCHEDULED for ever, and a drain with no deadline never returned.
    for (const runAt of [1e300, 8.64e15 + 1]) expect(() => queue.submit({ id: "a", type: "echo", runAt })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message: `task "a": runAt is not a valid time (epoch ms or a Date), got ${String(runAt)}` }));
    expect(queue.get("a")).toBeUndefined();
    // The last time a Date holds is one.
    queue.submit({ id: "far", type: "echo", runAt: 8.64e15 });
    expect(queue.get("far")?.status).toBe("SCHEDULED");
  });

  it.each([
    ["2026-01-01T00:00:00Z", 'task "a": runAt is not a valid time (epoch ms or a Date), got "2026-01-01T00:00:00Z" (a string)'],
    [new Date("garbage"), 'task "a": runAt is not a valid time (epoch ms or a Date), got an invalid Date'],
    [Number.NaN, 'task "a": runAt is not a valid time (epoch ms or a Date), got NaN'],
  ])("runAt %s is refused saying what was given", (runAt, message) => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", runAt: runAt as number })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message }));
    expect(queue.get("a")).toBeUndefined();
  });

  it.each([
    [5_000, "1970-01-01T00:00:05.000Z"],
    // Seconds since the epoch, as a Unix timestamp is written.
    [1_767_225_600, "1970-01-21T10:53:45.600Z"],
  ])("runAt %s, a delay or seconds meant for a time in ms, is refused rather than run at once", (runAt, shown) => {
    vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
    const { queue } = makeQueue();
    const message = `task "a": runAt is a time in ms since the epoch, and ${runAt} is ${shown}: for a delay, pass Date.now() + ${runAt}; for seconds since the epoch, ${runAt} * 1000`;
    expect(() => queue.submit({ id: "a", type: "echo", runAt })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message }));
    expect(queue.get("a")).toBeUndefined();
    // A time, a Date of any age, and 0 (none, as the Go design's zero time) are taken.
    queue.submit({ id: "b", type: "echo", runAt: Date.now() + 1_000 });
    queue.submit({ id: "c", type: "echo", runAt: new Date(runAt) });
    queue.submit({ id: "d", type: "echo", runAt: 0 });
    expect([queue.get("b")?.status, queue.get("c")?.status, queue.get("d")?.status]).toEqual(["SCHEDULED", "RUNNING", "RUNNING"]);
  });

  it("a negative runAt (a delay of the wrong sign) is refused rather than run at once; a Date before 1970 is taken", () => {
    vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
    const { queue } = makeQueue();
    const message = 'task "a": runAt is a time in ms since the epoch, and -60000 is 1969-12-31T23:59:00.000Z, before 1970: pass a time (Date.now() + a delay in ms) or a Date';
    expect(() => queue.submit({ id: "a", type: "echo", runAt: -60_000 })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message }));
    expect(queue.get("a")).toBeUndefined();
    queue.submit({ id: "b", type: "echo", runAt: new Date(-60_000) });
    expect(queue.get("b")?.status).toBe("RUNNING");
  });

  it("a Date of another realm (a vm context's) is a Date: a runAt, and a shutdown deadline", async () => {
    const { queue } = makeQueue();
    const dateIn = (ms: number): Date => runInNewContext(`new Date(${ms})`) as Date;
    expect(dateIn(0) instanceof Date).toBe(false);
    queue.submit({ id: "a", type: "echo", runAt: dateIn(Date.now() + 1_000) });
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
    queue.submit({ id: "b", type: "hang" });
    const done = queue.shutdown({ deadline: dateIn(Date.now() + 500) });
    await vi.advanceTimersByTimeAsync(500);
    await expect(done).resolves.toEqual({ hardStopped: true });
  });

  it("dependsOn given as a string is an error, not a list of its characters", () => {
    const { queue } = makeQueue();
    queue.submit({ id: "build", type: "echo" });
    expect(() => queue.submit({ id: "x", type: "echo", dependsOn: "build" as unknown as string[] })).toThrow(
      expect.objectContaining({ code: "INVALID_TASK", message: 'task "x": dependsOn must be an array of task ids, got "build" (a string): for one dependency, pass ["build"]' }),
    );
    expect(queue.get("x")).toBeUndefined();
  });

  it.each([
    [new Set(["build"]), 'task "x": dependsOn must be an array of task ids, got a Set: pass [...set]'],
    [{ 0: "build" }, 'task "x": dependsOn must be an array of task ids, got {"0":"build"} (an object)'],
    [5, 'task "x": dependsOn must be an array of task ids, got 5'],
  ])("dependsOn of %s, no array, is an error that shows the value (it said only its typeof)", (dependsOn, message) => {
    const { queue } = makeQueue();
    queue.submit({ id: "build", type: "echo" });
    expect(() => queue.submit({ id: "x", type: "echo", dependsOn: dependsOn as unknown as string[] })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message }));
  });

  // null is an optional field or option not given, everywhere, as in wait(id, null) and
  // wait(id, { signal: null }): a JavaScript caller's `{ runAt: task.runAt ?? null }` means none.
  it("null for each optional task field is the field not given", async () => {
    const { queue } = makeQueue({ backoff: null as unknown as undefined, defaultMaxAttempts: null as unknown as undefined, concurrency: null as unknown as undefined });
    const nulls = { priority: null, maxAttempts: null, timeoutMs: null, runAt: null, dependsOn: null, backoff: null } as unknown as Partial<TaskSpec>;
    queue.submit({ id: "first", type: "echo", ...nulls, payload: null });
    expect(queue.submit({ id: null as unknown as undefined, type: "echo", ...nulls })).toBe("task-2");
    await expect(queue.wait("first")).resolves.toMatchObject({ status: "SUCCEEDED", value: null });
    await expect(queue.wait("task-2")).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it("null for a task's maxAttempts or backoff is the queue's, which a null Queue option leaves the default", async () => {
    const { queue } = makeQueue({ backoff: null as unknown as undefined, defaultMaxAttempts: null as unknown as undefined, handlers: { fail: flakyForever } });
    queue.submit({ id: "a", type: "fail", maxAttempts: null as unknown as undefined, backoff: null as unknown as undefined });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 3 });
  });

  it.each([
    ["shutdown(null)", null],
    ["every shutdown option null", { drain: null, deadline: null, signal: null, abortGraceMs: null }],
  ])("%s is a shutdown without options: it drains", async (_, options) => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 10 });
    const done = queue.shutdown(options as unknown as ShutdownOptions);
    await vi.advanceTimersByTimeAsync(10);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("defaultMaxAttempts that is not an integer is refused when the queue is made (0 or less is the default, see retries)", () => {
    expect(() => new Queue({ handlers: {}, defaultMaxAttempts: 1.5 })).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: "defaultMaxAttempts must be an integer (0 or less, or none, for 3), got 1.5" }));
  });

  it.each([
    [undefined, "Queue options must be an object with handlers by task type, got undefined"],
    [{}, "handlers must be an object of functions by task type ({ email: async (payload, ctx) => ... }), got undefined"],
    [{ handlers: [] }, "handlers must be an object of functions by task type ({ email: async (payload, ctx) => ... }), got an array"],
    [{ handlers: new Map([["h", () => 1]]) }, "handlers must be an object of functions by task type ({ email: async (payload, ctx) => ... }), got a Map: Object.fromEntries(map) is one"],
    [{ handlers: { h: "notfn" } }, 'handler "h" must be a function (payload, ctx) => result, got "notfn" (a string)'],
    [{ concurrensy: 4, handlers: {} }, 'unknown Queue option "concurrensy": the options are concurrency, handlers, backoff, defaultMaxAttempts'],
  ])("new Queue(%j) is refused with INVALID_OPTION, not a TypeError or a queue that ignores it", (options, message) => {
    expect(() => new Queue(options as unknown as QueueOptions)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message }));
  });

  it("handlers given as a class instance's methods are refused when the queue is made, naming them, not taken for no handlers", () => {
    class Handlers {
      echo(text: string): string {
        return text;
      }
      shout(text: string): string {
        return text.toUpperCase();
      }
    }
    expect(() => new Queue({ handlers: new Handlers() as unknown as QueueOptions["handlers"] })).toThrow(
      expect.objectContaining({
        code: "INVALID_OPTION",
        message: 'handlers must be the object\'s own properties, by task type: "echo", "shout" are inherited (a class\'s methods?); pass { echo: instance.echo.bind(instance), ... }',
      }),
    );
  });

  it("a type that names an inherited method of the handlers, beside own ones, says so at submit", () => {
    class Handlers {
      own = (text: string): string => text;
      inherited(text: string): string {
        return text;
      }
    }
    const queue = new Queue({ handlers: new Handlers() as unknown as QueueOptions["handlers"] });
    expect(queue.submit({ type: "own", payload: "x" })).toBe("task-1");
    expect(() => queue.submit({ type: "inherited", payload: "x" })).toThrow(
      expect.objectContaining({
        code: "UNKNOWN_HANDLER",
        message: 'no handler for task type "inherited": the types are own ("inherited" is inherited, not an own property of handlers: pass it as one, bound)',
      }),
    );
  });

  it("a handlers object made with Object.create(null) or a plain literal is taken as it is", () => {
    const bare = Object.assign(Object.create(null) as Record<string, Handler<never, unknown>>, { echo: (text: string) => text });
    expect(new Queue({ handlers: bare }).submit({ type: "echo", payload: "x" })).toBe("task-1");
  });

  it.each([
    [null, "a task must be an object ({ type, payload, ... }), got null"],
    [undefined, "a task must be an object ({ type, payload, ... }), got undefined"],
    ["echo", 'a task must be an object ({ type, payload, ... }), got "echo" (a string)'],
  ])("submit(%j) throws INVALID_TASK, not a TypeError or 'no handler for task type \"undefined\"'", (spec, message) => {
    const { queue } = makeQueue();
    expect(() => queue.submit(spec as unknown as TaskSpec)).toThrow(expect.objectContaining({ code: "INVALID_TASK", message }));
    expect(queue.stats().total).toBe(0);
  });

  it.each([
    [{ id: "a" }, 'task "a": type must be a string naming a handler (echo, hang), got undefined'],
    [{ id: "a", type: 5 }, 'task "a": type must be a string naming a handler (echo, hang), got 5'],
  ])("submit(%j) says the type is missing or not a string, not 'no handler for task type \"undefined\"'", (spec, message) => {
    const { queue } = makeQueue();
    expect(() => queue.submit(spec as unknown as TaskSpec)).toThrow(expect.objectContaining({ code: "INVALID_TASK", message }));
    expect(queue.stats().total).toBe(0);
  });

  it("a refused submit without an id uses up no generated id: the next task is still task-1", () => {
    const { queue } = makeQueue();
    for (let i = 0; i < 3; i++) expect(() => queue.submit({ type: "echo", maxAttempts: 1.5 })).toThrow(expect.objectContaining({ code: "INVALID_TASK" }));
    expect(queue.submit({ type: "echo" })).toBe("task-1");
    expect(queue.submit({ type: "echo" })).toBe("task-2");
  });

  it.each([
    [{ type: "echo", priority: "urgent" }, 'a task of type "echo" (no id given): unknown priority "urgent": the priorities are low, normal, high, critical'],
    [{ type: "echo", maxAttempts: 1.5 }, 'a task of type "echo" (no id given): maxAttempts must be an integer'],
    [{ type: "echo", dependsOn: ["task-1"] }, 'a task of type "echo" (no id given) depends on "task-1", which was not submitted'],
  ])("a refused spec without an id (%j) is named by its type, not by the id the next task is given", (spec, message) => {
    const { queue } = makeQueue();
    // Named "task-1" before: the task submitted next is task-1, which the message then seemed to be about.
    expect(() => queue.submit(spec as unknown as TaskSpec)).toThrow(expect.objectContaining({ message: expect.stringContaining(message) }));
    expect(() => queue.submit(spec as unknown as TaskSpec)).toThrow(expect.objectContaining({ message: expect.not.stringContaining('"task-1":') }));
    expect(queue.submit({ type: "echo" })).toBe("task-1");
  });

  it("a spec with an id is still named by it", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", priority: "urgent" as "high" })).toThrow(expect.objectContaining({ message: expect.stringMatching(/^task "a": unknown priority/) }));
    expect(() => queue.submit({ id: "a", type: "echo", dependsOn: ["a"] })).toThrow(expect.objectContaining({ code: "UNKNOWN_DEPENDENCY", message: 'task "a" depends on itself: a task may depend only on tasks already submitted' }));
  });

  // What JavaScript callers, whom the types do not hold back, pass.
  it("an id that is not a string is refused at submit: it would be a second name for the task (get(\"5\") finding nothing)", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: 5 as unknown as string, type: "echo" })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message: "a task's id must be a string, got 5" }));
    expect(queue.stats().total).toBe(0);
  });

  it("a backoff that is not a function is refused when given, not when the first retry would call it and fail the task", async () => {
    expect(() => new Queue({ handlers: {}, backoff: 5 as unknown as () => number })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", message: "backoff must be a function (attempt) => ms, such as exponentialBackoff(), got 5" }),
    );
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", backoff: "1s" as unknown as () => number })).toThrow(
      expect.objectContaining({ code: "INVALID_TASK", message: 'task "a": backoff must be a function (attempt) => ms, such as exponentialBackoff(), got "1s" (a string)' }),
    );
    expect(queue.get("a")).toBeUndefined();
  });

  it("exponentialBackoff itself, not a backoff it made, is refused when given: the first retry would call it with the attempt for options and fail the task", () => {
    const made = "backoff is exponentialBackoff itself, which makes a backoff: pass exponentialBackoff() or exponentialBackoff({ baseMs, maxMs })";
    expect(() => new Queue({ handlers: {}, backoff: exponentialBackoff as unknown as () => number })).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: made }));
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", backoff: exponentialBackoff as unknown as () => number })).toThrow(expect.objectContaining({ code: "INVALID_TASK", message: `task "a": ${made}` }));
    expect(() => queue.submit({ id: "b", type: "echo", backoff: exponentialDelay as unknown as () => number })).toThrow(
      expect.objectContaining({
        code: "INVALID_TASK",
        message: 'task "b": backoff is exponentialDelay, whose arguments are (attempt, baseMs, maxMs): pass exponentialBackoff({ baseMs, maxMs }), or (attempt) => exponentialDelay(attempt, baseMs, maxMs)',
      }),
    );
    expect(queue.stats().total).toBe(0);
    expect(queue.submit({ id: "c", type: "echo", backoff: exponentialBackoff() })).toBe("c");
  });

  it("a number given as a string says so: timeoutMs \"50\" is not 50", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", timeoutMs: "50" as unknown as number })).toThrow(
      expect.objectContaining({ code: "INVALID_TASK", message: 'task "a": timeoutMs must be a non-negative number, got "50" (a string)' }),
    );
    expect(() => queue.submit({ id: "b", type: "echo", maxAttempts: "3" as unknown as number })).toThrow(/task "b": maxAttempts must be an integer .*, got "3" \(a string\)$/);
    expect(() => new Queue({ handlers: {}, concurrency: "2" as unknown as number })).toThrow(/concurrency must be a positive integer, got "2" \(a string\)$/);
  });

  it("a timeoutMs of Infinity says how to give no time limit, rather than that Infinity is not 'a non-negative number'", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", timeoutMs: Infinity })).toThrow(
      expect.objectContaining({ code: "INVALID_TASK", message: 'task "a": timeoutMs must be a finite number of ms, got Infinity: for no time limit, give 0 or leave it out' }),
    );
    expect(queue.submit({ id: "b", type: "echo", timeoutMs: 0 })).toBe("b");
  });

  it("an array or a plain object given for a value says what it is: `[]` said nothing ('got '), `{ ms: 5000 }` '[object Object]'", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", timeoutMs: [] as unknown as number })).toThrow(
      expect.objectContaining({ code: "INVALID_TASK", message: 'task "a": timeoutMs must be a non-negative number, got [] (an array)' }),
    );
    expect(() => queue.submit({ id: "b", type: "echo", timeoutMs: { ms: 5000 } as unknown as number })).toThrow(
      expect.objectContaining({ message: 'task "b": timeoutMs must be a non-negative number, got {"ms":5000} (an object)' }),
    );
    expect(() => queue.submit({ id: "c", type: "echo", maxAttempts: [3] as unknown as number })).toThrow(/task "c": maxAttempts must be an integer .*, got \[3\] \(an array\)$/);
    expect(() => new Queue({ handlers: {}, concurrency: { max: 2 } as unknown as number })).toThrow(/concurrency must be a positive integer, got \{"max":2\} \(an object\)$/);
    // Its text where it has one of its own: a Date as a date.
    expect(() => queue.submit({ id: "d", type: "echo", timeoutMs: new Date(0) as unknown as number })).toThrow(/got \w{3} \w{3} \d{2} \d{4} \d\d:\d\d:\d\d GMT/);
    expect(queue.stats().total).toBe(0);
  });

  it("a long object given for a value is cut before an emoji the cut falls in, not through it (half of one is a broken character)", () => {
    const { queue } = makeQueue();
    // Its JSON's 77th unit is the emoji's first half: `{"note":"` and 67 x's come before it.
    const note = `${"x".repeat(67)}\u{1F680} and more`;
    expect(() => queue.submit({ id: "a", type: "echo", timeoutMs: { note } as unknown as number })).toThrow(
      expect.objectContaining({ code: "INVALID_TASK", message: `task "a": timeoutMs must be a non-negative number, got {"note":"${"x".repeat(67)}... (an object)` }),
    );
  });
});
