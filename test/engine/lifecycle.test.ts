import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PermanentError } from "../../src/errors.js";
import { HandlerError, Queue, TaskNotFoundError, UnknownDependencyError, UnknownHandlerError } from "../../src/engine/index.js";
import type { AttemptContext } from "../../src/engine/types.js";
import { countListeners, deferred, eventsOf, flush, makeQueue, trail, untilAborted, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
});

describe("lifecycle: entry states", () => {
  it("[*] -> READY: a task with nothing to wait for is READY until dispatched", () => {
    const { queue, log } = makeQueue({ start: false });
    queue.submit({ id: "a", type: "echo" });
    expect(queue.get("a")?.status).toBe("READY");
    expect(eventsOf(log, "submitted")[0]).toMatchObject({ id: "a", type: "echo", priority: "normal", status: "READY", dependsOn: [] });
  });

  it("[*] -> SCHEDULED: runAt in the future", () => {
    const { queue, log } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 500 });
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    expect(eventsOf(log, "submitted")[0]).toMatchObject({ status: "SCHEDULED", runAt: Date.now() + 500 });
  });

  it("[*] -> SCHEDULED accepts a Date", () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: new Date(Date.now() + 500) });
    expect(queue.get("a")?.status).toBe("SCHEDULED");
  });

  it("[*] -> READY when runAt is already past", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() - 1 });
    expect(queue.get("a")?.status).toBe("RUNNING");
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it("[*] -> BLOCKED: has unfinished dependencies", () => {
    const { queue, log } = makeQueue({ start: false });
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    expect(queue.get("b")?.status).toBe("BLOCKED");
    expect(eventsOf(log, "submitted")[1]).toMatchObject({ id: "b", status: "BLOCKED", dependsOn: ["a"] });
  });
});

describe("lifecycle: transitions", () => {
  it("BLOCKED -> READY once every dependency SUCCEEDED", async () => {
    const gate = deferred();
    const { queue, log } = makeQueue({ concurrency: 1, handlers: { gate: () => gate.promise } });
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "g", type: "gate" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a", "g"] });
    await flush();
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
    expect(queue.get("b")?.status).toBe("BLOCKED");
    gate.resolve();
    await flush();
    expect(eventsOf(log, "ready")).toContainEqual({ id: "b", from: "BLOCKED" });
    expect(queue.get("b")?.status).toBe("SUCCEEDED");
    expect(trail(log, "b")).toEqual(["submitted", "ready", "started", "succeeded"]);
  });

  it("BLOCKED -> SCHEDULED when dependencies succeed before runAt", async () => {
    const { queue, log } = makeQueue();
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"], runAt: Date.now() + 1_000 });
    await flush();
    expect(queue.get("b")?.status).toBe("SCHEDULED");
    // Said, with its time: renderers show it as waiting.
    expect(eventsOf(log, "scheduled")).toEqual([{ id: "b", runAt: Date.now() + 1_000 }]);
    await vi.advanceTimersByTimeAsync(999);
    expect(queue.get("b")?.status).toBe("SCHEDULED");
    await vi.advanceTimersByTimeAsync(1);
    expect(queue.get("b")?.status).toBe("SUCCEEDED");
    expect(eventsOf(log, "ready")).toContainEqual({ id: "b", from: "SCHEDULED" });
  });

  it("SCHEDULED -> READY when runAt is reached, not before", async () => {
    const { queue, log } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 250 });
    await vi.advanceTimersByTimeAsync(249);
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    await vi.advanceTimersByTimeAsync(1);
    expect(trail(log, "a")).toEqual(["submitted", "ready", "started", "succeeded"]);
    expect(eventsOf(log, "ready")[0]).toEqual({ id: "a", from: "SCHEDULED" });
  });

  it("tasks due at the same runAt start by priority, then in submission order, whatever fraction of a millisecond apart they were submitted", async () => {
    const started: string[] = [];
    const { queue } = makeQueue({ concurrency: 1, handlers: { note: (_: unknown, context: AttemptContext) => void started.push(context.taskId) } });
    const runAt = Date.now() + 100;
    await vi.advanceTimersByTimeAsync(0.6);
    queue.submit({ id: "first", type: "note", runAt });
    // Into the next millisecond of the wall clock, half a millisecond later.
    await vi.advanceTimersByTimeAsync(0.5);
    queue.submit({ id: "second", type: "note", runAt });
    await vi.advanceTimersByTimeAsync(0.3);
    queue.submit({ id: "urgent", type: "note", runAt, priority: "critical" });
    await vi.advanceTimersByTimeAsync(98);
    expect(started).toEqual([]);
    await vi.advanceTimersByTimeAsync(2);
    expect(started).toEqual(["urgent", "first", "second"]);
  });

  it("a pause between the queue's two clock readings (a garbage collection) does not put a task behind a later one of the same runAt", async () => {
    const started: string[] = [];
    const { queue } = makeQueue({ concurrency: 1, handlers: { note: (_: unknown, context: AttemptContext) => void started.push(context.taskId) } });
    const runAt = Date.now() + 100;
    // The wall clock read 3 ms before the monotonic one: the task's delay is measured 3 ms too long.
    const now = Date.now();
    const spy = vi.spyOn(Date, "now").mockReturnValue(now - 3);
    queue.submit({ id: "first", type: "note", runAt });
    spy.mockRestore();
    queue.submit({ id: "second", type: "note", runAt });
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual(["first", "second"]);
  });

  it("a wall clock stepped back or forward between two submits brings no task on with an earlier one: each comes due on the monotonic clock", async () => {
    for (const step of [-3_600_000, 3_600_000]) {
      const started: string[] = [];
      const { queue } = makeQueue({ concurrency: 2, handlers: { note: (_: unknown, context: AttemptContext) => void started.push(context.taskId) } });
      // Stepped back, B's runAt reads earlier than A's; forward, A's reads later than B's.
      const [first, second] = step < 0 ? [["A", 100], ["B", 900]] as const : [["B", 900], ["A", 100]] as const;
      queue.submit({ id: first[0], type: "note", runAt: Date.now() + first[1] });
      vi.setSystemTime(Date.now() + step);
      queue.submit({ id: second[0], type: "note", runAt: Date.now() + second[1] });
      await vi.advanceTimersByTimeAsync(100);
      // Before, B came with A, 800 ms early: a task whose runAt was no later came within a second of one due.
      expect(started).toEqual(["A"]);
      await vi.advanceTimersByTimeAsync(799);
      expect(started).toEqual(["A"]);
      await vi.advanceTimersByTimeAsync(1);
      expect(started).toEqual(["A", "B"]);
      await queue.shutdown();
    }
  });

  it("READY -> RUNNING: the handler gets payload, attempt, taskId and a live signal", async () => {
    const seen: { payload: unknown; attempt: number; taskId: string; aborted: boolean }[] = [];
    const { queue, log } = makeQueue({
      handlers: {
        look: (payload: unknown, context: AttemptContext) => {
          seen.push({ payload, attempt: context.attempt, taskId: context.taskId, aborted: context.signal.aborted });
        },
      },
    });
    queue.submit({ id: "a", type: "look", payload: { n: 1 } });
    expect(queue.get("a")?.status).toBe("RUNNING");
    expect(eventsOf(log, "started")).toEqual([{ id: "a", attempt: 1, maxAttempts: 3 }]);
    await queue.wait("a");
    expect(seen).toEqual([{ payload: { n: 1 }, attempt: 1, taskId: "a", aborted: false }]);
  });

  it("RUNNING -> SUCCEEDED with the handler's value, sync or async", async () => {
    const { queue, log } = makeQueue({ handlers: { later: async (n: number) => n * 2 } });
    queue.submit({ id: "sync", type: "echo", payload: "v" });
    queue.submit({ id: "async", type: "later", payload: 21 });
    await expect(queue.wait("sync")).resolves.toEqual({ id: "sync", type: "echo", status: "SUCCEEDED", attempts: 1, value: "v" });
    await expect(queue.wait("async")).resolves.toMatchObject({ status: "SUCCEEDED", value: 42 });
    expect(eventsOf(log, "succeeded")).toEqual([
      { id: "sync", attempts: 1, value: "v" },
      { id: "async", attempts: 1, value: 42 },
    ]);
  });

  it("RUNNING -> FAILED when attempts are exhausted", async () => {
    const boom = new Error("boom");
    const { queue, log } = makeQueue({ handlers: { fail: () => Promise.reject(boom) } });
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "FAILED", attempts: 1, error: boom });
    expect(eventsOf(log, "failed")).toEqual([{ id: "a", attempts: 1, error: boom }]);
    expect(eventsOf(log, "retrying")).toEqual([]);
  });

  it("RUNNING -> FAILED at once on a PermanentError", async () => {
    const { queue } = makeQueue({
      handlers: {
        fail: () => {
          throw new PermanentError("bad input");
        },
      },
    });
    queue.submit({ id: "a", type: "fail", maxAttempts: 5 });
    const result = await queue.wait("a");
    expect(result).toMatchObject({ status: "FAILED", attempts: 1 });
    expect(result.error).toBeInstanceOf(PermanentError);
  });

  it("RUNNING -> FAILED at once on any error marked permanent", async () => {
    const { queue } = makeQueue({ handlers: { fail: () => Promise.reject(Object.assign(new Error("no"), { permanent: true })) } });
    queue.submit({ id: "a", type: "fail", maxAttempts: 5 });
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "FAILED", attempts: 1 });
  });
});

describe("handler failures never crash the queue", () => {
  it("a synchronous throw fails the attempt", async () => {
    const error = new Error("sync");
    const { queue } = makeQueue({
      handlers: {
        fail: () => {
          throw error;
        },
      },
    });
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    queue.submit({ id: "b", type: "echo" });
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "FAILED", error });
    await expect(queue.wait("b")).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it("a rejection fails the attempt", async () => {
    const error = new Error("async");
    const { queue } = makeQueue({ handlers: { fail: async () => Promise.reject(error) } });
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "FAILED", error });
  });

  it("throwing a non-Error becomes a HandlerError that keeps the value as cause", async () => {
    const { queue } = makeQueue({
      handlers: {
        fail: () => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error
          throw "a string";
        },
        reject: () => Promise.reject(42), // eslint-disable-line @typescript-eslint/prefer-promise-reject-errors
      },
    });
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    queue.submit({ id: "b", type: "reject", maxAttempts: 1 });
    const a = await queue.wait("a");
    const b = await queue.wait("b");
    expect(a.error).toBeInstanceOf(HandlerError);
    expect(a.error).toMatchObject({ code: "HANDLER_THREW", cause: "a string" });
    expect(b.error).toMatchObject({ code: "HANDLER_THREW", cause: 42 });
  });

  it("a thenable whose then throws fails the attempt", async () => {
    const error = new Error("bad thenable");
    const { queue } = makeQueue({
      handlers: {
        odd: () => ({
          then() {
            throw error;
          },
        }),
      },
    });
    queue.submit({ id: "a", type: "odd", maxAttempts: 1 });
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "FAILED", error });
  });

  it("a thenable that settles twice counts once", async () => {
    const { queue, log } = makeQueue({
      handlers: {
        twice: () => ({
          then(ok: (v: unknown) => void, fail: (e: unknown) => void) {
            ok(1);
            fail(new Error("late"));
            ok(2);
          },
        }),
      },
    });
    queue.submit({ id: "a", type: "twice" });
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "SUCCEEDED", value: 1 });
    expect(trail(log, "a")).toEqual(["submitted", "started", "succeeded"]);
  });

  it("a thenable that calls back at once keeps the dispatch order a promise gets: its zero-delay retry before tasks submitted later", async () => {
    const order = async (fails: (error: Error) => PromiseLike<never>): Promise<string[]> => {
      const { queue, log } = makeQueue({
        concurrency: 1,
        start: false,
        backoff: () => 0,
        handlers: { flaky: (_: unknown, context: AttemptContext) => (context.attempt === 1 ? fails(new Error("first")) : "ok") },
      });
      queue.submit({ id: "a", type: "flaky" });
      queue.submit({ id: "b", type: "echo" });
      queue.submit({ id: "c", type: "echo" });
      queue.start();
      await queue.shutdown();
      return eventsOf(log, "started").map((e) => `${e.id}#${e.attempt}`);
    };
    const promised = await order((error) => Promise.reject(error));
    expect(promised).toEqual(["a#1", "a#2", "b#1", "c#1"]);
    const thenable = await order((error) => ({ then: (_: unknown, fail: (e: unknown) => void) => fail(error) }) as unknown as PromiseLike<never>);
    expect(thenable).toEqual(promised);
  });
});

describe("submit", () => {
  it("rejects an unknown type", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ type: "nope" })).toThrow(UnknownHandlerError);
    expect(queue.stats().total).toBe(0);
  });

  it("an unknown type names the types the queue has, as a type that is not a string does", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "ecoh" })).toThrow(expect.objectContaining({ code: "UNKNOWN_HANDLER", message: 'no handler for task type "ecoh": the types are echo, hang' }));
    const empty = new Queue({ handlers: {} });
    expect(() => empty.submit({ type: "echo" })).toThrow(expect.objectContaining({ code: "UNKNOWN_HANDLER", message: 'no handler for task type "echo": the queue has no handlers' }));
  });

  it("rejects an unknown dependency, and a task depending on itself", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "b", type: "echo", dependsOn: ["a"] })).toThrow(UnknownDependencyError);
    expect(() => queue.submit({ id: "c", type: "echo", dependsOn: ["c"] })).toThrow(UnknownDependencyError);
    expect(queue.stats().total).toBe(0);
  });

  it("a task depending on itself is told so, not that it was never submitted", () => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "c", type: "echo", dependsOn: ["c"] })).toThrow(
      expect.objectContaining({ code: "UNKNOWN_DEPENDENCY", message: 'task "c" depends on itself: a task may depend only on tasks already submitted' }),
    );
    expect(() => queue.submit({ id: "b", type: "echo", dependsOn: ["a"] })).toThrow(
      expect.objectContaining({ code: "UNKNOWN_DEPENDENCY", message: 'task "b" depends on "a", which was not submitted' }),
    );
  });

  it("a dependency given as a number is refused as not an id, not said to be a task never submitted when the string id was", () => {
    const { queue } = makeQueue({ start: false });
    queue.submit({ id: "5", type: "echo" });
    expect(() => queue.submit({ id: "b", type: "echo", dependsOn: [5 as unknown as string] })).toThrow(
      expect.objectContaining({ code: "INVALID_TASK", message: 'task "b": dependsOn lists 5, which is not a task id: ids are strings ("5")' }),
    );
    expect(() => queue.submit({ id: "c", type: "echo", dependsOn: [null as unknown as string] })).toThrow(
      expect.objectContaining({ code: "INVALID_TASK", message: 'task "c": dependsOn lists null, which is not a task id: ids are strings' }),
    );
    expect(queue.stats().total).toBe(1);
  });

  it("generates an id when none is given, unique per task", () => {
    const { queue } = makeQueue({ start: false });
    const ids = [queue.submit({ type: "echo" }), queue.submit({ type: "echo", id: "" }), queue.submit({ type: "echo" })];
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(queue.get(id)?.status).toBe("READY");
  });

  it("is idempotent on id: a second submit changes nothing", async () => {
    const { queue, log } = makeQueue();
    expect(queue.submit({ id: "a", type: "echo", payload: 1 })).toBe("a");
    expect(queue.submit({ id: "a", type: "hang", payload: 2 })).toBe("a");
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "SUCCEEDED", value: 1 });
    expect(queue.submit({ id: "a", type: "echo", payload: 3 })).toBe("a");
    expect(eventsOf(log, "submitted")).toHaveLength(1);
    expect(eventsOf(log, "started")).toHaveLength(1);
    expect(queue.stats().total).toBe(1);
  });

  it.each([
    ["priority", { priority: "urgent" }],
    ["priority from the prototype", { priority: "toString" }],
    ["maxAttempts 1.5", { maxAttempts: 1.5 }],
    ["maxAttempts NaN", { maxAttempts: Number.NaN }],
    ["timeoutMs < 0", { timeoutMs: -1 }],
    ["runAt NaN", { runAt: new Date("nope") }],
  ])("rejects an invalid %s", (_name, extra) => {
    const { queue } = makeQueue();
    expect(() => queue.submit({ id: "a", type: "echo", ...(extra as object) })).toThrow(expect.objectContaining({ code: "INVALID_TASK" }));
    expect(queue.stats().total).toBe(0);
  });

  it("validates concurrency", () => {
    expect(() => new Queue({ concurrency: 0, handlers: {} })).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("runs 4 attempts at once when concurrency is not given: of 5 slow handlers, 4 start and the 5th waits", async () => {
    const started: string[] = [];
    const slow = (_: unknown, context: AttemptContext) => {
      started.push(context.taskId);
      return new Promise((resolve) => setTimeout(resolve, 1_000));
    };
    const queue = new Queue({ handlers: { slow } });
    for (const id of ["a", "b", "c", "d", "e"]) queue.submit({ id, type: "slow" });
    queue.start();
    await vi.advanceTimersByTimeAsync(500);
    expect(started).toEqual(["a", "b", "c", "d"]);
    expect(queue.stats()).toMatchObject({ running: 4, byStatus: { RUNNING: 4, READY: 1 } });
    expect(queue.get("e")?.status).toBe("READY");
    await vi.advanceTimersByTimeAsync(500);
    expect(started).toEqual(["a", "b", "c", "d", "e"]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.stats().byStatus.SUCCEEDED).toBe(5);
  });
});

describe("wait", () => {
  it("resolves at once for a task already ended", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo" });
    await queue.wait("a");
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it("rejects with TaskNotFoundError for an unknown id", async () => {
    const { queue } = makeQueue();
    await expect(queue.wait("ghost")).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it("an id given as a number is said to be one, not quoted as the string id of a task that exists (cancel too)", async () => {
    const { queue } = makeQueue({ start: false });
    queue.submit({ id: "5", type: "echo" });
    const message = 'no task with id 5 (a number): task ids are strings ("5")';
    await expect(queue.wait(5 as unknown as string)).rejects.toThrow(expect.objectContaining({ code: "TASK_NOT_FOUND", message }));
    expect(() => queue.cancel(5 as unknown as string)).toThrow(expect.objectContaining({ code: "TASK_NOT_FOUND", message }));
    expect(queue.get("5")?.status).toBe("READY");
  });

  it("get, given an id that is not a string, says so (as cancel, wait and forget do) rather than returning undefined", () => {
    const { queue } = makeQueue({ start: false });
    queue.submit({ id: "5", type: "echo" });
    const message = 'no task with id 5 (a number): task ids are strings ("5")';
    expect(() => queue.get(5 as unknown as string)).toThrow(expect.objectContaining({ code: "TASK_NOT_FOUND", message }));
    expect(() => queue.forget(5 as unknown as string)).toThrow(expect.objectContaining({ code: "TASK_NOT_FOUND", message }));
    for (const id of [undefined, null, { id: "5" }]) expect(() => queue.get(id as unknown as string)).toThrow(expect.objectContaining({ code: "TASK_NOT_FOUND" }));
    expect(queue.get("5")?.status).toBe("READY");
    expect(queue.get("ghost")).toBeUndefined();
  });

  it("settles every waiter of a task", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 10 });
    const waits = [queue.wait("a"), queue.wait("a"), queue.wait("a")];
    await vi.advanceTimersByTimeAsync(10);
    for (const result of await Promise.all(waits)) expect(result.status).toBe("SUCCEEDED");
  });

  it("rejects with the signal's reason when the signal aborts first, and leaves no listener", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    const controller = new AbortController();
    const added = vi.spyOn(controller.signal, "addEventListener");
    const removed = vi.spyOn(controller.signal, "removeEventListener");
    const waiting = queue.wait("a", { signal: controller.signal });
    const other = queue.wait("a");
    const reason = new Error("gave up");
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(added).toHaveBeenCalledTimes(1);
    expect(added.mock.calls[0]?.[2]).toEqual({ once: true });
    // The task itself goes on; the other waiter still gets the result.
    expect(queue.get("a")?.status).toBe("RUNNING");
    queue.cancel("a");
    await expect(other).resolves.toMatchObject({ status: "CANCELLED" });
    expect(removed).toHaveBeenCalledTimes(0);
  });

  it("removes its abort listener once the task ends", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 5 });
    const controller = new AbortController();
    const added = vi.spyOn(controller.signal, "addEventListener");
    const removed = vi.spyOn(controller.signal, "removeEventListener");
    const waiting = queue.wait("a", { signal: controller.signal });
    await vi.advanceTimersByTimeAsync(5);
    await expect(waiting).resolves.toMatchObject({ status: "SUCCEEDED" });
    expect(added).toHaveBeenCalledTimes(1);
    expect(removed).toHaveBeenCalledTimes(1);
    expect(removed.mock.calls[0]?.[1]).toBe(added.mock.calls[0]?.[1]);
  });

  it("many waits sharing one signal share one abort listener, removed once the last of them ends", async () => {
    const { queue } = makeQueue({ concurrency: 1 });
    const ids = Array.from({ length: 50 }, (_, i) => queue.submit({ id: `t${i}`, type: "echo", runAt: Date.now() + 10 + i }));
    const controller = new AbortController();
    const listeners = countListeners(controller.signal);
    const waits = ids.map((id) => queue.wait(id, { signal: controller.signal }));
    expect(listeners.live).toBe(1);
    await vi.advanceTimersByTimeAsync(10 + 49);
    for (const result of await Promise.all(waits)) expect(result.status).toBe("SUCCEEDED");
    expect(listeners.live).toBe(0);
  });

  it("a null signal is no signal", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 5 });
    const waiting = queue.wait("a", { signal: null as unknown as AbortSignal });
    await vi.advanceTimersByTimeAsync(5);
    await expect(waiting).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it("an abort rejects every wait sharing the signal and leaves the tasks and their other waiters alone", async () => {
    const { queue } = makeQueue({ concurrency: 1 });
    queue.submit({ id: "a", type: "hang" });
    queue.submit({ id: "b", type: "echo", runAt: Date.now() + 10 });
    const controller = new AbortController();
    const listeners = countListeners(controller.signal);
    const aborted = [queue.wait("a", { signal: controller.signal }), queue.wait("a", { signal: controller.signal }), queue.wait("b", { signal: controller.signal })];
    const others = [queue.wait("a"), queue.wait("b", { signal: new AbortController().signal })];
    const reason = new Error("gave up");
    controller.abort(reason);
    for (const wait of aborted) await expect(wait).rejects.toBe(reason);
    expect(listeners.live).toBe(0);
    await expect(queue.wait("b", { signal: controller.signal })).rejects.toBe(reason);
    await vi.advanceTimersByTimeAsync(10);
    queue.cancel("a");
    await expect(others[0]).resolves.toMatchObject({ status: "CANCELLED" });
    await expect(others[1]).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it.each([
    [{ signal: 5 }, "wait's signal must be an AbortSignal, got 5"],
    [{ signal: "stop" }, 'wait\'s signal must be an AbortSignal, got "stop" (a string)'],
    [{ signal: new AbortController() }, "wait's signal must be an AbortSignal, got an AbortController: pass its signal (controller.signal)"],
    [{ sigal: new AbortController().signal }, 'unknown wait option "sigal": the option is signal'],
    ["fast", 'wait options must be an object ({ signal }), got "fast" (a string)'],
    // The signal itself, not in an object: it has no own keys, so it passed for options without a signal.
    [new AbortController().signal, "wait options must be an object ({ signal }), got an AbortSignal: pass it as wait(id, { signal })"],
  ])("wait(id, %j) rejects with INVALID_OPTION, not a TypeError or a wait that no signal can end", async (options, message) => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    await expect(queue.wait("a", options as unknown as { signal?: AbortSignal })).rejects.toThrow(expect.objectContaining({ code: "INVALID_OPTION", message }));
    queue.cancel("a");
  });

  it("wait(id, null) is a wait without options", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 5 });
    const waiting = queue.wait("a", null as unknown as { signal?: AbortSignal });
    await vi.advanceTimersByTimeAsync(5);
    await expect(waiting).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it("rejects at once with an already-aborted signal", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    const reason = new Error("already");
    await expect(queue.wait("a", { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    queue.cancel("a");
  });
});

describe("no polling", () => {
  it("holds no timer while idle or while only ready work exists", async () => {
    const { queue } = makeQueue({ concurrency: 1 });
    expect(vi.getTimerCount()).toBe(0);
    queue.submit({ id: "quick", type: "echo" });
    await flush();
    expect(queue.get("quick")?.status).toBe("SUCCEEDED");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("arms exactly one timer for the earliest of many delayed tasks", async () => {
    const { queue } = makeQueue();
    const now = Date.now();
    for (const delay of [500, 100, 300, 100, 900]) queue.submit({ type: "echo", runAt: now + delay });
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(queue.stats().byStatus.SUCCEEDED).toBe(2);
    expect(vi.getTimerCount()).toBe(1);
    queue.submit({ id: "soon", type: "echo", runAt: Date.now() + 10 });
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(queue.get("soon")?.status).toBe("SUCCEEDED");
    await vi.advanceTimersByTimeAsync(800);
    expect(queue.stats().byStatus.SUCCEEDED).toBe(6);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("dispatches on state change: a finished attempt starts the next at once", async () => {
    const gate = deferred();
    const { queue } = makeQueue({ concurrency: 1, handlers: { gate: () => gate.promise } });
    queue.submit({ id: "a", type: "gate" });
    queue.submit({ id: "b", type: "echo" });
    expect(queue.get("b")?.status).toBe("READY");
    gate.resolve();
    await flush();
    expect(queue.get("b")?.status).toBe("SUCCEEDED");
  });
});

describe("stats and dead letters", () => {
  it("counts tasks per status, running tasks, retries and dead letters", async () => {
    const { queue } = makeQueue({
      concurrency: 1,
      handlers: { fail: () => Promise.reject(new Error("x")) },
      backoff: () => 50,
    });
    queue.submit({ id: "f", type: "fail", maxAttempts: 2 });
    queue.submit({ id: "h", type: "hang" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["h"] });
    queue.submit({ id: "s", type: "echo", runAt: Date.now() + 10_000 });
    await flush();
    expect(queue.stats()).toEqual({
      total: 4,
      byStatus: { BLOCKED: 1, SCHEDULED: 2, READY: 0, RUNNING: 1, SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 },
      running: 1,
      retries: 1,
      deadLetters: 0,
    });
    queue.cancel("h");
    await flush();
    await vi.advanceTimersByTimeAsync(50);
    expect(queue.stats()).toEqual({
      total: 4,
      byStatus: { BLOCKED: 0, SCHEDULED: 1, READY: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 1, CANCELLED: 2 },
      running: 0,
      retries: 1,
      deadLetters: 1,
    });
  });

  it("lists FAILED tasks only, oldest failure first", async () => {
    const gates = { a: deferred(), b: deferred(), c: deferred() };
    const { queue } = makeQueue({
      concurrency: 4,
      handlers: { gated: (name: "a" | "b" | "c") => gates[name].promise },
    });
    for (const id of ["a", "b", "c"] as const) queue.submit({ id, type: "gated", payload: id, maxAttempts: 1 });
    queue.submit({ id: "ok", type: "echo" });
    gates.c.reject(new Error("c"));
    await flush();
    gates.a.reject(new Error("a"));
    await flush();
    gates.b.resolve();
    await flush();
    expect(queue.deadLetters().map((r) => [r.id, r.status, (r.error as Error).message])).toEqual([
      ["c", "FAILED", "c"],
      ["a", "FAILED", "a"],
    ]);
  });
});

describe("memory", () => {
  /** Collects garbage now: the flag set at run time, as vitest's workers start without --expose-gc. */
  function collectGarbage(): void {
    setFlagsFromString("--expose-gc");
    (runInNewContext("gc") as () => void)();
  }

  it("an ended task keeps neither its payload nor its own backoff: a long-lived queue holds only what get and wait return", async () => {
    vi.useRealTimers();
    const queue = new Queue({ concurrency: 2, handlers: { echo: (payload: unknown) => (payload as { size: number }).size, fail: () => Promise.reject(new Error("no")) } });
    queue.start();
    const refs: WeakRef<object>[] = [];
    const submit = (id: string, type: string): void => {
      const payload = { size: 1_000_000, data: new Uint8Array(1_000_000) };
      const backoff = (): number => payload.size * 0;
      refs.push(new WeakRef(payload), new WeakRef(backoff));
      queue.submit({ id, type, payload, backoff, maxAttempts: 2 });
    };
    submit("done", "echo");
    submit("failed", "fail");
    submit("cancelled", "echo");
    queue.cancel("cancelled");
    await queue.shutdown();
    expect(queue.get("done")).toMatchObject({ status: "SUCCEEDED", value: 1_000_000 });
    expect(queue.get("failed")).toMatchObject({ status: "FAILED", attempts: 2 });
    // A WeakRef read in this turn holds its target to the turn's end.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(refs.map((ref) => ref.deref() === undefined)).toEqual([true, true, true, true, true, true]);
  });
});

describe("forget", () => {
  function collectGarbage(): void {
    setFlagsFromString("--expose-gc");
    (runInNewContext("gc") as () => void)();
  }

  it("a long-lived queue that forgets its ended tasks holds none of them: their values and errors are released", async () => {
    vi.useRealTimers();
    const queue = new Queue({ concurrency: 2, handlers: { make: () => ({ data: new Uint8Array(1_000_000) }), fail: () => Promise.reject(new Error("no")) } });
    queue.start();
    const refs: WeakRef<object>[] = [];
    queue.on("succeeded", ({ value }) => refs.push(new WeakRef(value as object)));
    queue.on("failed", ({ error }) => refs.push(new WeakRef(error as object)));
    for (const [id, type] of [["a", "make"], ["b", "fail"], ["c", "make"]] as const) {
      queue.submit({ id, type, maxAttempts: 1 });
      await queue.wait(id);
      expect(queue.forget(id)).toBe(true);
    }
    expect(queue.stats()).toMatchObject({ total: 0, deadLetters: 0, byStatus: { SUCCEEDED: 0, FAILED: 0 } });
    expect(queue.deadLetters()).toEqual([]);
    await queue.shutdown();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(refs.map((ref) => ref.deref() === undefined)).toEqual([true, true, true]);
  });

  it("a task cancelled and forgotten while it waited on one still running is not held by it", async () => {
    vi.useRealTimers();
    const queue = new Queue({ handlers: { hang: (_: unknown, context: AttemptContext) => untilAborted(context), echo: (payload: unknown) => payload } });
    queue.start();
    queue.submit({ id: "service", type: "hang" });
    const refs: WeakRef<object>[] = [];
    queue.on("cancelled", ({ error }) => refs.push(new WeakRef(error as object)));
    for (let i = 0; i < 1000; i++) {
      const id = queue.submit({ type: "echo", dependsOn: ["service"] });
      expect(queue.cancel(id)).toBe(true);
      expect(queue.forget(id)).toBe(true);
    }
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    // The latest few, listed since the last pruning, are held until the next one.
    expect(refs.filter((ref) => ref.deref() !== undefined).length).toBeLessThan(100);
    expect(queue.get("service")?.status).toBe("RUNNING");
    queue.cancel("service");
    await queue.shutdown();
  });

  it("forgets only an ended task; a forgotten id is unknown to get, wait and dependsOn, and free to submit again", async () => {
    const gate = deferred();
    const { queue } = makeQueue({ handlers: { gated: () => gate.promise, ok: () => "ok", bad: () => Promise.reject(new PermanentError("bad")) } });
    queue.submit({ id: "running", type: "gated" });
    queue.submit({ id: "done", type: "ok" });
    queue.submit({ id: "failed", type: "bad" });
    queue.submit({ id: "after", type: "ok", dependsOn: ["failed"] });
    await flush();
    expect(queue.forget("running")).toBe(false);
    expect(queue.get("running")?.status).toBe("RUNNING");
    expect(() => queue.forget("nope")).toThrow(expect.objectContaining({ code: "TASK_NOT_FOUND" }));
    expect(queue.forget("done")).toBe(true);
    expect(queue.forget("failed")).toBe(true);
    expect(queue.get("done")).toBeUndefined();
    await expect(queue.wait("done")).rejects.toMatchObject({ code: "TASK_NOT_FOUND" });
    expect(() => queue.submit({ type: "ok", dependsOn: ["done"] })).toThrow(expect.objectContaining({ code: "UNKNOWN_DEPENDENCY" }));
    // "after" was cancelled because "failed" failed; a task depending on "after" still says which task started it, and how
    // it ended, as "after"'s error says.
    queue.submit({ id: "later", type: "ok", dependsOn: ["after"] });
    expect((queue.get("later")?.error as Error).message).toBe('dependency "failed" failed (via "after")');
    expect(queue.deadLetters()).toEqual([]);
    expect(queue.stats()).toMatchObject({ total: 3, byStatus: { RUNNING: 1, CANCELLED: 2, SUCCEEDED: 0, FAILED: 0 }, deadLetters: 0 });
    queue.submit({ id: "done", type: "ok" });
    gate.resolve();
    expect(await queue.wait("done")).toMatchObject({ status: "SUCCEEDED", attempts: 1 });
  });
  it("a dependsOn naming a forgotten task is not said to name one never submitted: once the queue has forgotten any, it says either may be", async () => {
    const { queue } = makeQueue({ handlers: { ok: () => "ok" } });
    queue.submit({ id: "a", type: "ok" });
    await queue.wait("a");
    // Nothing forgotten yet: an id the queue does not hold was never submitted.
    expect(() => queue.submit({ type: "ok", dependsOn: ["nope"] })).toThrow(
      expect.objectContaining({ code: "UNKNOWN_DEPENDENCY", message: 'a task of type "ok" (no id given) depends on "nope", which was not submitted' }),
    );
    queue.forget("a");
    expect(() => queue.submit({ type: "ok", dependsOn: ["a"] })).toThrow(
      expect.objectContaining({ code: "UNKNOWN_DEPENDENCY", message: 'a task of type "ok" (no id given) depends on "a", which was not submitted or was forgotten' }),
    );
    expect(() => queue.submit({ id: "b", type: "ok", dependsOn: ["a"] })).toThrow(
      expect.objectContaining({ code: "UNKNOWN_DEPENDENCY", message: 'task "b" depends on "a", which was not submitted or was forgotten' }),
    );
    // A task depending on itself is still told so.
    expect(() => queue.submit({ id: "c", type: "ok", dependsOn: ["c"] })).toThrow(
      expect.objectContaining({ message: 'task "c" depends on itself: a task may depend only on tasks already submitted' }),
    );
    expect(queue.stats().total).toBe(0);
  });
});
