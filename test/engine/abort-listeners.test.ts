import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AttemptContext } from "../../src/engine/types.js";
import { eventsOf, flush, makeQueue, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** A handler that ends when its signal aborts, from an abort listener that then throws (or, async, rejects) `thrown`. */
function throwingOnAbort(add: (signal: AbortSignal, listener: () => unknown) => void, thrown: Error) {
  return (_payload: unknown, context: AttemptContext): Promise<never> =>
    new Promise<never>((_, reject) => {
      add(context.signal, () => {
        reject(context.signal.reason as Error);
        throw thrown;
      });
    });
}

/** Node's uncaught-exception reports, which end a process that has no listener for them. */
function uncaughtExceptions(): unknown[] {
  const seen: unknown[] = [];
  const onError = (error: unknown): number => seen.push(error);
  process.on("uncaughtException", onError);
  afterEach(() => {
    process.off("uncaughtException", onError);
  });
  return seen;
}

describe("an abort listener of a handler's that throws", () => {
  const uncaught = uncaughtExceptions();

  it.each([
    ["addEventListener", (signal: AbortSignal, listener: () => unknown) => signal.addEventListener("abort", listener)],
    ["addEventListener with { once: true }", (signal: AbortSignal, listener: () => unknown) => signal.addEventListener("abort", listener, { once: true })],
    ["onabort", (signal: AbortSignal, listener: () => unknown) => (signal.onabort = listener)],
    ["an object's handleEvent", (signal: AbortSignal, listener: () => unknown) => signal.addEventListener("abort", { handleEvent: listener })],
  ])("(%s) is reported as listener-error with its task and attempt, not an uncaught exception that ends the process", async (_how, add) => {
    const boom = new Error("listener broke");
    const { queue, log } = makeQueue({ handlers: { stubborn: throwingOnAbort(add, boom) } });
    queue.submit({ id: "timed", type: "stubborn", timeoutMs: 50, maxAttempts: 1 });
    queue.submit({ id: "cancelled", type: "stubborn" });
    await flush();
    queue.cancel("cancelled");
    await vi.advanceTimersByTimeAsync(50);
    // Node reports a listener's throw on the next tick.
    await vi.advanceTimersByTimeAsync(0);
    await flush();
    expect(uncaught).toEqual([]);
    expect(eventsOf(log, "listener-error")).toEqual([
      { event: "abort", error: boom, id: "cancelled", attempt: 1 },
      { event: "abort", error: boom, id: "timed", attempt: 1 },
    ]);
    expect(queue.get("timed")).toMatchObject({ status: "FAILED", error: expect.objectContaining({ code: "TIMEOUT" }) });
    expect(queue.get("cancelled")?.status).toBe("CANCELLED");
  });

  it("an async one's rejection too, and with no listener-error listener it is a process warning naming the task", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const { Queue } = await import("../../src/engine/index.js");
    const queue = new Queue({
      concurrency: 1,
      handlers: {
        stubborn: (_payload, context) =>
          new Promise<never>((_, reject) => {
            // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the point of the test: an async listener's rejection
            context.signal.addEventListener("abort", async () => {
              reject(context.signal.reason as Error);
              await Promise.resolve();
              throw new Error("async listener broke");
            });
          }),
      },
    });
    queue.start();
    queue.submit({ id: "a", type: "stubborn", timeoutMs: 50, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(50);
    await flush();
    expect(uncaught).toEqual([]);
    expect(warn.mock.calls).toEqual([['taskq: task "a": an "abort" listener on attempt 1\'s signal threw: async listener broke', "TaskqListenerWarning"]]);
    expect(queue.get("a")?.status).toBe("FAILED");
  });

  it("a listener removed is not called, one added twice is called once, with the signal as `this`", async () => {
    const calls: unknown[] = [];
    const { queue } = makeQueue({
      handlers: {
        careful: (_payload, context) =>
          new Promise<never>((_, reject) => {
            const { signal } = context;
            const removed = (): number => calls.push("removed");
            signal.addEventListener("abort", removed);
            signal.removeEventListener("abort", removed);
            function twice(this: unknown): void {
              calls.push(this === signal ? "twice, this: the signal" : "twice, this: something else");
              reject(signal.reason as Error);
            }
            signal.addEventListener("abort", twice);
            signal.addEventListener("abort", twice);
          }),
      },
    });
    queue.submit({ id: "a", type: "careful", timeoutMs: 50, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(50);
    await flush();
    expect(calls).toEqual(["twice, this: the signal"]);
    expect(queue.get("a")?.status).toBe("FAILED");
  });
});

describe("an abort listener object of a handler's", () => {
  const uncaught = uncaughtExceptions();

  it("with no handleEvent (none, or one unset) is passed over as Node passes it over: no listener-error, no warning", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const { queue, log } = makeQueue({
      handlers: {
        plain: (_payload, context) =>
          new Promise<never>((_, reject) => {
            const { signal } = context;
            type AbortListener = Parameters<AbortSignal["addEventListener"]>[1];
            signal.addEventListener("abort", {} as AbortListener);
            const unset: { handleEvent?: () => void } = { handleEvent: () => undefined };
            signal.addEventListener("abort", unset as AbortListener);
            delete unset.handleEvent;
            signal.addEventListener("abort", () => reject(signal.reason as Error));
          }),
      },
    });
    queue.submit({ id: "a", type: "plain", timeoutMs: 50, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(50);
    await vi.advanceTimersByTimeAsync(0);
    await flush();
    expect(uncaught).toEqual([]);
    expect(eventsOf(log, "listener-error")).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
    expect(queue.get("a")).toMatchObject({ status: "FAILED", error: expect.objectContaining({ code: "TIMEOUT" }) });
  });
});

describe("a handler's attempt signal's addEventListener and removeEventListener, called as Node would not take them", () => {
  /** A method of the signal's, called as a handler may call it, with its own `this` and arguments. */
  const callMethod = (signal: AbortSignal, name: "addEventListener" | "removeEventListener", self: unknown, ...args: unknown[]): unknown =>
    Reflect.apply(Reflect.get(signal, name) as (...given: unknown[]) => unknown, self, args);

  it("with no listener throws Node's ERR_MISSING_ARGS, failing the attempt, and called on another target adds to that target", async () => {
    const calls: string[] = [];
    const other = new AbortController();
    const { queue } = makeQueue({
      handlers: {
        missing: (_payload, context) => {
          callMethod(context.signal, "addEventListener", context.signal, "abort");
          return "ran on";
        },
        borrowed: (_payload, context) =>
          new Promise<never>((_, reject) => {
            const onOther = (): number => calls.push("the other signal's listener");
            callMethod(context.signal, "addEventListener", other.signal, "abort", onOther);
            other.abort();
            callMethod(context.signal, "removeEventListener", other.signal, "abort", onOther);
            context.signal.addEventListener("abort", () => reject(context.signal.reason as Error));
          }),
      },
    });
    queue.submit({ id: "missing", type: "missing", maxAttempts: 1 });
    queue.submit({ id: "borrowed", type: "borrowed", timeoutMs: 50, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(50);
    await flush();
    expect(queue.get("missing")).toMatchObject({ status: "FAILED", error: expect.objectContaining({ code: "ERR_MISSING_ARGS" }) });
    expect(calls).toEqual(["the other signal's listener"]);
    expect(queue.get("borrowed")).toMatchObject({ status: "FAILED", error: expect.objectContaining({ code: "TIMEOUT" }) });
  });
});
