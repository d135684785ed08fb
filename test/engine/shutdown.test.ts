import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Queue, QueueClosedError, TaskCancelledError } from "../../src/engine/index.js";
import type { AttemptContext } from "../../src/engine/types.js";
import { countListeners, deferred, drainsLongSyncRun, eventsOf, expectOneTerminalEventEach, flush, makeQueue, untilAborted, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
});

const flakyOnce = (_: unknown, context: AttemptContext): unknown => (context.attempt === 1 ? Promise.reject(new Error("first")) : "ok");

describe("shutdown", () => {
  it("submit throws QueueClosedError once shutdown begins, even for a known id", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo" });
    const done = queue.shutdown();
    expect(() => queue.submit({ type: "echo" })).toThrow(QueueClosedError);
    expect(() => queue.submit({ id: "a", type: "echo" })).toThrow(expect.objectContaining({ code: "QUEUE_CLOSED" }));
    await expect(done).resolves.toEqual({ hardStopped: false });
  });

  it("drain: true runs everything already submitted, delayed tasks and retries included", async () => {
    const { queue, log } = makeQueue({ handlers: { flaky: flakyOnce }, backoff: () => 500 });
    queue.submit({ id: "now", type: "echo" });
    queue.submit({ id: "later", type: "echo", runAt: Date.now() + 1_000 });
    queue.submit({ id: "retry", type: "flaky" });
    queue.submit({ id: "after", type: "echo", dependsOn: ["later"] });
    let resolved = false;
    const done = queue.shutdown({ drain: true }).then((r) => {
      resolved = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(resolved).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(queue.stats().byStatus.SUCCEEDED).toBe(4);
    expect(eventsOf(log, "drained")).toEqual([{ hardStopped: false }]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("starts a queue that was never started, and drains it", async () => {
    const { queue } = makeQueue({ start: false });
    queue.submit({ id: "a", type: "echo" });
    await expect(queue.shutdown()).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
  });

  it("resolves at once for an empty queue", async () => {
    const { queue } = makeQueue();
    await expect(queue.shutdown()).resolves.toEqual({ hardStopped: false });
  });

  it.each([
    ["a deadline already passed", { deadline: 0 }],
    ["an aborted signal", { signal: AbortSignal.abort() }],
  ])("with %s, a queue whose tasks have all ended was not hard-stopped: nothing was cut short", async (_name, options) => {
    const { queue, log } = makeQueue();
    queue.submit({ id: "a", type: "echo" });
    await queue.wait("a");
    await expect(queue.shutdown(options)).resolves.toEqual({ hardStopped: false });
    expect(eventsOf(log, "drained")).toEqual([{ hardStopped: false }]);
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
    const { queue: empty } = makeQueue({ start: false });
    await expect(empty.shutdown(options)).resolves.toEqual({ hardStopped: false });
  });

  it("drain: false cancels what has not started and lets running attempts end", async () => {
    const gate = deferred<string>();
    const { queue } = makeQueue({ concurrency: 1, handlers: { gated: () => gate.promise } });
    queue.submit({ id: "running", type: "gated" });
    queue.submit({ id: "ready", type: "echo" });
    queue.submit({ id: "scheduled", type: "echo", runAt: Date.now() + 100 });
    queue.submit({ id: "blocked", type: "echo", dependsOn: ["running"] });
    const done = queue.shutdown({ drain: false });
    for (const id of ["ready", "scheduled", "blocked"]) {
      expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
      expect(queue.get(id)?.error).toMatchObject({ code: "SHUTDOWN" });
    }
    expect(queue.get("running")?.status).toBe("RUNNING");
    gate.resolve("finished");
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(queue.get("running")).toMatchObject({ status: "SUCCEEDED", value: "finished" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a deadline in ms counts from the call, not from after drain: false has cancelled what had not started (100k tasks take a few hundred ms)", async () => {
    const gate = deferred<string>();
    const { queue } = makeQueue({ concurrency: 1, handlers: { gated: () => gate.promise } });
    queue.submit({ id: "running", type: "gated" });
    queue.submit({ id: "ready", type: "echo" });
    // The cancelling takes 400 ms, on this clock: as a long list of tasks not started takes it.
    queue.on("cancelled", () => vi.advanceTimersByTime(400));
    let resolved = false;
    const done = queue.shutdown({ drain: false, deadline: 1_000 }).then((result) => {
      resolved = true;
      return result;
    });
    // 1,000 ms from the call: 600 ms after the cancelling ended.
    await vi.advanceTimersByTimeAsync(599);
    expect(resolved).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(resolved).toBe(true);
    await expect(done).resolves.toEqual({ hardStopped: true });
    gate.resolve("late");
  });

  it("shutdown({ signal }) called again with the same signal watches it once: no MaxListenersExceededWarning, and the grace is not cut short by its own second listener", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    try {
      const { queue } = makeQueue({ handlers: { stubborn: () => new Promise<never>(() => undefined) } });
      queue.submit({ id: "a", type: "stubborn" });
      await flush();
      const controller = new AbortController();
      const listeners = countListeners(controller.signal);
      const calls = Array.from({ length: 12 }, () => queue.shutdown({ signal: controller.signal, abortGraceMs: 500 }));
      expect(listeners.live).toBe(1);
      let resolved = false;
      void calls[0]!.then(() => (resolved = true));
      controller.abort(new Error("stop"));
      await vi.advanceTimersByTimeAsync(499);
      expect(resolved).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(resolved).toBe(true);
      await expect(Promise.all(calls)).resolves.toEqual(Array.from({ length: 12 }, () => ({ hardStopped: true })));
      expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
      expect(listeners.live).toBe(0);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it.each([
    ["its deadline", (queue: Queue) => queue.shutdown({ deadline: 0, abortGraceMs: 500 })],
    ["its signal", (queue: Queue) => queue.shutdown({ signal: AbortSignal.abort(), abortGraceMs: 500 })],
  ])("a hard stop at %s stops the running attempts then, not after cancelling the many tasks not started, and their grace counts from then", async (_name, stop) => {
    const abortedAt = new Map<string, number>();
    const whenAborted = (id: string, context: AttemptContext): void => context.signal.addEventListener("abort", () => abortedAt.set(id, Date.now()), { once: true });
    const { queue } = makeQueue({
      concurrency: 2,
      handlers: {
        polite: (_: unknown, context: AttemptContext) => (whenAborted("polite", context), untilAborted(context)),
        stubborn: (_: unknown, context: AttemptContext) => (whenAborted("stubborn", context), new Promise<never>(() => undefined)),
      },
    });
    queue.submit({ id: "polite", type: "polite" });
    queue.submit({ id: "stubborn", type: "stubborn" });
    for (let i = 0; i < 100; i++) queue.submit({ id: `queued-${i}`, type: "echo" });
    await flush();
    // Each cancel takes 10 ms on this clock: the 100 take 1 s, as 100k tasks not started take a while.
    queue.on("cancelled", (e) => {
      if (e.id.startsWith("queued-")) vi.advanceTimersByTime(10);
    });
    const stoppedAt = Date.now();
    let resolvedAt: number | undefined;
    const done = stop(queue).then((result) => {
      resolvedAt = Date.now();
      return result;
    });
    // Both learnt of the stop as it came, before the second of cancelling.
    expect(Object.fromEntries(abortedAt)).toEqual({ polite: stoppedAt, stubborn: stoppedAt });
    expect(queue.stats().byStatus.CANCELLED).toBe(100);
    // The stubborn one's 500 ms of grace were over by the end of the cancelling: the stop ends then, not 500 ms later.
    await flush();
    expect(resolvedAt).toBe(stoppedAt + 1_000);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("stubborn")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each([
    ["rejects", (reject: (error: unknown) => void, _resolve: (value: unknown) => void, reason: unknown) => reject(reason)],
    ["resolves", (_reject: (error: unknown) => void, resolve: (value: unknown) => void) => resolve("done anyway")],
  ])(
    "a hard stop ends the tasks not started as 'not started', before the running one, also when its handler's thenable %s at once as its signal aborts",
    async (_name, settle) => {
      // A thenable may call back as soon as it is told (the abort's listener, inside the stop): the running task
      // then ended before the tasks not started were cancelled, and its dependent was cancelled as its dependency's,
      // or queued as ready after its success, not as the shutdown's, as with a promise.
      const handlers = {
        promise: (_: unknown, context: AttemptContext) => untilAborted(context),
        thenable: (_: unknown, context: AttemptContext) => ({
          then(resolve: (value: unknown) => void, reject: (error: unknown) => void) {
            context.signal.addEventListener("abort", () => settle(reject, resolve, context.signal.reason), { once: true });
          },
        }),
      };
      const outcomes = [];
      for (const type of ["promise", "thenable"] as const) {
        const { queue, log } = makeQueue({ concurrency: 1, handlers });
        queue.submit({ id: "running", type });
        queue.submit({ id: "dependent", type: "echo", dependsOn: ["running"] });
        queue.submit({ id: "queued", type: "echo" });
        await flush();
        await expect(queue.shutdown({ deadline: 0 })).resolves.toEqual({ hardStopped: true });
        const ended = log.filter(([name]) => ["ready", "succeeded", "cancelled"].includes(name));
        outcomes.push(ended.map(([name, e]) => [name, (e as { id: string }).id, (e as { error?: Error }).error?.message]));
      }
      const words = "shutdown: not started before the deadline";
      const expected = [
        ["cancelled", "dependent", words],
        ["cancelled", "queued", words],
        ["cancelled", "running", "aborted by shutdown"],
      ];
      expect(outcomes).toEqual([expected, expected]);
    },
  );

  it("drain: false starts no retry: a failing running attempt ends CANCELLED", async () => {
    const gate = deferred();
    const { queue, log } = makeQueue({ handlers: { gated: () => gate.promise } });
    queue.submit({ id: "a", type: "gated", maxAttempts: 3 });
    const done = queue.shutdown({ drain: false });
    gate.reject(new Error("boom"));
    await done;
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown", attempts: 1 });
    expect((queue.get("a")?.error as Error).message).toContain("boom");
    expect(eventsOf(log, "retrying")).toEqual([]);
  });

  // A shell the CLI's own Ctrl-C reached as it started (still in the CLI's process group) died of that signal: stopped, not failed.
  it("a handler that rejects with a shutdown TaskCancelledError while the queue shuts down ends its task CANCELLED by the shutdown, with that error", async () => {
    const gate = deferred();
    const { queue, log } = makeQueue({ handlers: { gated: () => gate.promise } });
    queue.submit({ id: "a", type: "gated" });
    queue.submit({ id: "after", type: "echo", dependsOn: ["a"] });
    const done = queue.shutdown({ drain: false });
    const stopped = new TaskCancelledError("shutdown", "stopped by SIGINT, the signal that stopped taskq");
    gate.reject(stopped);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown", attempts: 1, error: stopped });
    expect(eventsOf(log, "failed")).toEqual([]);
    expect(eventsOf(log, "cancelled").map((e) => [e.id, e.reason])).toEqual([
      ["after", "shutdown"],
      ["a", "shutdown"],
    ]);
  });

  it("a handler that rejects with a shutdown TaskCancelledError while no shutdown is under way fails its task as any error would", async () => {
    const { queue } = makeQueue({ handlers: { stops: () => Promise.reject(new TaskCancelledError("shutdown", "not ours")) } });
    queue.submit({ id: "a", type: "stops", maxAttempts: 1 });
    await flush();
    expect(queue.get("a")).toMatchObject({ status: "FAILED", attempts: 1 });
  });

  it("drain: false cancels a task waiting out a retry backoff", async () => {
    const { queue } = makeQueue({ handlers: { flaky: flakyOnce }, backoff: () => 1_000 });
    queue.submit({ id: "a", type: "flaky" });
    await flush();
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    await queue.shutdown({ drain: false });
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown", attempts: 1 });
    // Its failed attempt is not lost from the message: the task did start.
    expect((queue.get("a")?.error as Error).message).toBe("shutdown: not retried (attempt 1 failed: first)");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("drain: false: an attempt that fails once the shutdown began is not retried, in the words of one that was waiting for its retry", async () => {
    const { queue } = makeQueue({ handlers: { late: () => new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), 100)) } });
    queue.submit({ id: "a", type: "late", maxAttempts: 3 });
    await flush();
    const done = queue.shutdown({ drain: false });
    await vi.advanceTimersByTimeAsync(100);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown", attempts: 1 });
    // As `run --store` says it of the same task, and a local run of one whose failure came before the signal.
    expect((queue.get("a")?.error as Error).message).toBe("shutdown: not retried (attempt 1 failed: timed out)");
  });

  it("drain: false: a task waiting out a retry backoff has its failed attempt's error as its cancel's cause, as one whose attempt fails after the shutdown began", async () => {
    const failure = new Error("first");
    const { queue } = makeQueue({
      handlers: { fails: () => Promise.reject(failure), late: () => new Promise((_, reject) => setTimeout(() => reject(failure), 100)) },
      backoff: () => 1_000,
    });
    queue.submit({ id: "waiting", type: "fails" });
    queue.submit({ id: "running", type: "late" });
    await flush();
    expect(queue.get("waiting")?.status).toBe("SCHEDULED");
    const done = queue.shutdown({ drain: false });
    await vi.advanceTimersByTimeAsync(100);
    await expect(done).resolves.toEqual({ hardStopped: false });
    for (const id of ["waiting", "running"]) {
      expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown", error: { message: "shutdown: not retried (attempt 1 failed: first)" } });
      expect((queue.get(id)?.error as Error).cause).toBe(failure);
    }
  });

  it("when the deadline passes, aborts running attempts with a SHUTDOWN reason and cancels the rest", async () => {
    const signals: AbortSignal[] = [];
    const { queue, log } = makeQueue({
      concurrency: 1,
      handlers: {
        slow: (_: unknown, context: AttemptContext) => {
          signals.push(context.signal);
          return untilAborted(context);
        },
      },
    });
    queue.submit({ id: "a", type: "slow", timeoutMs: 60_000 });
    queue.submit({ id: "b", type: "echo" });
    queue.submit({ id: "c", type: "echo", runAt: Date.now() + 5_000 });
    queue.submit({ id: "d", type: "echo", dependsOn: ["a"] });
    const done = queue.shutdown({ drain: true, deadline: 1_000 });
    await vi.advanceTimersByTimeAsync(999);
    expect(signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(signals[0]?.reason).toBeInstanceOf(TaskCancelledError);
    expect(signals[0]?.reason).toMatchObject({ code: "SHUTDOWN", reason: "shutdown" });
    for (const id of ["a", "b", "c", "d"]) expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(eventsOf(log, "drained")).toEqual([{ hardStopped: true }]);
    expect(eventsOf(log, "started")).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the errors of tasks cancelled in bulk (by the deadline, or in cascade) carry no stack into the queue; a cancel(id)'s keeps its caller's", async () => {
    // Capturing a stack for each was most of the cost: a shutdown with 100k tasks queued returned 1.6 s after its deadline.
    const { queue, log } = makeQueue({ concurrency: 1, handlers: { slow: (_: unknown, context: AttemptContext) => untilAborted(context) } });
    queue.submit({ id: "running", type: "slow" });
    queue.submit({ id: "queued", type: "echo" });
    queue.submit({ id: "root", type: "echo", runAt: Date.now() + 5_000 });
    queue.submit({ id: "dependent", type: "echo", dependsOn: ["root"] });
    queue.submit({ id: "asked", type: "echo", runAt: Date.now() + 5_000 });
    queue.cancel("root");
    queue.cancel("asked");
    const done = queue.shutdown({ deadline: 1_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(done).resolves.toEqual({ hardStopped: true });
    const stackOf = (id: string): string => (queue.get(id)?.error as Error).stack ?? "";
    expect(queue.get("queued")?.error).toMatchObject({ message: "shutdown: not started before the deadline" });
    expect(queue.get("dependent")?.error).toMatchObject({ message: 'dependency "root" was cancelled' });
    for (const id of ["queued", "dependent"]) expect(stackOf(id)).toBe(`TaskCancelledError: ${(queue.get(id)?.error as Error).message}`);
    expect(stackOf("asked")).toMatch(/\n\s+at .*shutdown\.test\.ts/);
    expectOneTerminalEventEach(queue, log);
  });

  it("an attempt the deadline stopped that ends in the grace with an error of its own: the task's SHUTDOWN error has it as its cause", async () => {
    const stopped = Object.assign(new Error("stopped at step 2"), { result: { tail: ["step 1", "step 2"] } });
    const { queue } = makeQueue({
      handlers: {
        // One ends with an error that says where it was; one rejects with the signal's own reason.
        ownError: async (_: unknown, context: AttemptContext) => {
          await untilAborted(context).catch(() => undefined);
          throw stopped;
        },
        reason: (_: unknown, context: AttemptContext) => untilAborted(context),
      },
    });
    queue.submit({ id: "own", type: "ownError" });
    queue.submit({ id: "plain", type: "reason" });
    const done = queue.shutdown({ deadline: 100, abortGraceMs: 1_000 });
    await vi.advanceTimersByTimeAsync(100);
    await expect(done).resolves.toEqual({ hardStopped: true });
    const own = queue.get("own")!.error as TaskCancelledError;
    expect(own).toBeInstanceOf(TaskCancelledError);
    expect(own).toMatchObject({ code: "SHUTDOWN", reason: "shutdown", message: "aborted by shutdown" });
    expect(own.cause).toBe(stopped);
    const plain = queue.get("plain")!.error as TaskCancelledError;
    expect(plain).toMatchObject({ code: "SHUTDOWN", message: "aborted by shutdown" });
    expect(plain.cause).toBeUndefined();
  });

  it("returns at the deadline even when a handler ignores its signal", async () => {
    const never = new Promise<never>(() => undefined);
    const { queue } = makeQueue({ handlers: { stubborn: () => never } });
    queue.submit({ id: "a", type: "stubborn" });
    const done = queue.shutdown({ deadline: new Date(Date.now() + 200) });
    await vi.advanceTimersByTimeAsync(200);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(queue.stats().running).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a task cancelled before the deadline, whose handler ignores its signal, ends with the cancel's reason, not the shutdown's", async () => {
    const never = new Promise<never>(() => undefined);
    const { queue } = makeQueue({ handlers: { stubborn: () => never } });
    queue.submit({ id: "cancelled", type: "stubborn" });
    queue.submit({ id: "running", type: "stubborn" });
    await flush();
    expect(queue.cancel("cancelled")).toBe(true);
    const done = queue.shutdown({ deadline: 200 });
    await vi.advanceTimersByTimeAsync(200);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("cancelled")).toMatchObject({ status: "CANCELLED", cancelReason: "cancel" });
    expect(queue.get("cancelled")?.error).toMatchObject({ code: "CANCELLED", message: 'task "cancelled" was cancelled' });
    expect(queue.get("running")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
  });

  it("cancel(id) of a task a hard stop is already stopping returns false and leaves the shutdown's reason, whether its handler settles in the grace or never", async () => {
    const never = new Promise<never>(() => undefined);
    const late = deferred<string>();
    let signalOf: AbortSignal | undefined;
    const { queue, log } = makeQueue({
      handlers: {
        stubborn: () => never,
        settlesLate: (_: unknown, context: AttemptContext) => {
          signalOf = context.signal;
          // Ends later than asked, as its signal says: the shutdown's doing.
          return late.promise.then(() => Promise.reject(context.signal.reason as Error));
        },
      },
    });
    queue.submit({ id: "a", type: "stubborn" });
    queue.submit({ id: "b", type: "settlesLate" });
    await flush();
    const done = queue.shutdown({ deadline: 0, abortGraceMs: 5_000 });
    await flush();
    expect(queue.get("a")?.status).toBe("RUNNING");
    expect(signalOf?.reason).toMatchObject({ code: "SHUTDOWN" });
    // In the grace: both are being stopped by the shutdown already.
    expect(queue.cancel("a")).toBe(false);
    expect(queue.cancel("b")).toBe(false);
    late.resolve("done anyway");
    await flush();
    expect(queue.get("b")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    await vi.advanceTimersByTimeAsync(5_000);
    await expect(done).resolves.toEqual({ hardStopped: true });
    for (const id of ["a", "b"]) {
      expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
      expect(queue.get(id)?.error).toBe(signalOf?.reason);
    }
    expect(eventsOf(log, "cancelled").map((e) => (e as { reason: string }).reason)).toEqual(["shutdown", "shutdown"]);
  });

  it("an attempt that timed out before the deadline, still stopping when it passes, ends with its timeout, not the shutdown", async () => {
    // A shell whose timeout kill waits out its kill grace: the attempt settles with the timeout later.
    const slowToStop = (_: unknown, context: AttemptContext): Promise<never> =>
      new Promise<never>((_resolve, reject) => {
        context.signal.addEventListener("abort", () => setTimeout(() => reject(context.signal.reason as Error), 1_000), { once: true });
      });
    const { queue } = makeQueue({ handlers: { slowToStop } });
    queue.submit({ id: "last", type: "slowToStop", timeoutMs: 100, maxAttempts: 1 });
    queue.submit({ id: "retryable", type: "slowToStop", timeoutMs: 100, maxAttempts: 3 });
    await vi.advanceTimersByTimeAsync(100);
    const done = queue.shutdown({ drain: false, deadline: 200, abortGraceMs: 5_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("last")).toMatchObject({ status: "FAILED" });
    expect(queue.get("last")?.error).toMatchObject({ code: "TIMEOUT", message: "timed out after 100ms" });
    expect(queue.get("retryable")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(queue.get("retryable")?.error).toMatchObject({ message: "shutdown: not retried (attempt 1 failed: timed out after 100ms)" });
  });

  it("an attempt that timed out before a hard stop, whose handler never settles, ends with its timeout once the grace is over", async () => {
    const never = new Promise<never>(() => undefined);
    const { queue } = makeQueue({ handlers: { stubborn: () => never } });
    queue.submit({ id: "a", type: "stubborn", timeoutMs: 100, maxAttempts: 1 });
    await vi.advanceTimersByTimeAsync(100);
    const done = queue.shutdown({ deadline: 100, abortGraceMs: 500 });
    await vi.advanceTimersByTimeAsync(600);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("a")).toMatchObject({ status: "FAILED" });
    expect(queue.get("a")?.error).toMatchObject({ code: "TIMEOUT" });
  });

  it("abortGraceMs lets aborted handlers settle before finalizing, then gives up on the stubborn", async () => {
    const never = new Promise<never>(() => undefined);
    const { queue } = makeQueue({ handlers: { stubborn: () => never } });
    queue.submit({ id: "polite", type: "hang" });
    queue.submit({ id: "stubborn", type: "stubborn" });
    const done = queue.shutdown({ deadline: 100, abortGraceMs: 500 });
    await vi.advanceTimersByTimeAsync(100);
    expect(queue.get("polite")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(queue.get("polite")?.error).toMatchObject({ code: "SHUTDOWN" });
    expect(queue.get("stubborn")?.status).toBe("RUNNING");
    await vi.advanceTimersByTimeAsync(500);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("stubborn")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(vi.getTimerCount()).toBe(0);
  });

  describe("after the event loop was held up past the give-up (taskq stopped by SIGSTOP or Ctrl-Z, a paused VM)", () => {
    /** Holds the event loop up for `ms`: every timer due meanwhile fires at its end, once, as when the process is continued. */
    const stall = (ms: number): void => (setTimeout as unknown as { clock: { jump(ms: number): void } }).clock.jump(ms);

    it("a handler whose own timer came due in the stall settles as it does: it is not given up on with it", async () => {
      // Aborted, it ends on a timer of its own (a kill grace that came due in the stall), then needs a moment more (a poll for its process to go).
      const ending = (): Promise<string> => new Promise((resolve) => setTimeout(() => setTimeout(() => resolve("ended"), 25), 1_000));
      const { queue } = makeQueue({ handlers: { ending } });
      queue.submit({ id: "a", type: "ending" });
      const done = queue.shutdown({ deadline: 100, abortGraceMs: 3_000 });
      await vi.advanceTimersByTimeAsync(200);
      expect(queue.get("a")?.status).toBe("RUNNING");
      stall(5_000);
      await flush();
      expect(queue.get("a")?.status).toBe("RUNNING");
      await vi.advanceTimersByTimeAsync(25);
      await expect(done).resolves.toEqual({ hardStopped: true });
      expect(queue.get("a")).toMatchObject({ status: "SUCCEEDED", value: "ended" });
      expect(vi.getTimerCount()).toBe(0);
    });

    it("a shorter abortGraceMs given after the stall keeps what was given back: it ends that much after the stall, not at once, and a handler whose timer came due in it settles as it does", async () => {
      const ending = (): Promise<string> => new Promise((resolve) => setTimeout(() => setTimeout(() => resolve("ended"), 25), 1_000));
      const never = new Promise<never>(() => undefined);
      const { queue } = makeQueue({ handlers: { ending, stubborn: () => never } });
      queue.submit({ id: "a", type: "ending" });
      queue.submit({ id: "b", type: "stubborn" });
      const done = queue.shutdown({ deadline: 100, abortGraceMs: 3_000 });
      await vi.advanceTimersByTimeAsync(200);
      // The give-up was due at 3,100: continued at 5,200, it gives back 2,100 ms, to 7,300; 1 s of grace in all gives back at
      // most 1 s after the stall, and ends it at 6,200 (2 s sooner), where 1,100 (the shorter grace's end had it no stall) is past.
      stall(5_000);
      await flush();
      void queue.shutdown({ abortGraceMs: 1_000 });
      await flush();
      expect(queue.get("a")?.status).toBe("RUNNING");
      await vi.advanceTimersByTimeAsync(25);
      expect(queue.get("a")).toMatchObject({ status: "SUCCEEDED", value: "ended" });
      await vi.advanceTimersByTimeAsync(974);
      expect(queue.get("b")?.status).toBe("RUNNING");
      await vi.advanceTimersByTimeAsync(1);
      await expect(done).resolves.toEqual({ hardStopped: true });
      expect(queue.get("b")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
      expect(vi.getTimerCount()).toBe(0);
    });

    it("a shorter abortGraceMs given after the stall but before the grace's timer has had its turn gives back the stall first", async () => {
      const never = new Promise<never>(() => undefined);
      const { queue } = makeQueue({ handlers: { stubborn: () => never } });
      queue.submit({ id: "a", type: "stubborn" });
      await flush();
      // Due with the grace's timer and made before it, so it runs first once the process is continued, as an I/O callback does.
      setTimeout(() => void queue.shutdown({ abortGraceMs: 400 }), 1_000);
      const done = queue.shutdown({ deadline: 0, abortGraceMs: 1_000 });
      // The give-up was due at 1,000: continued at 5,000, 1,000 ms is given back, to 6,000; 400 ms of grace in all ends it at 5,400.
      stall(5_000);
      await flush();
      await vi.advanceTimersByTimeAsync(399);
      expect(queue.get("a")?.status).toBe("RUNNING");
      await vi.advanceTimersByTimeAsync(1);
      await expect(done).resolves.toEqual({ hardStopped: true });
      expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
      expect(vi.getTimerCount()).toBe(0);
    });

    it("one that never settles is given up on once the stall's length (at most abortGraceMs) more has passed", async () => {
      const never = new Promise<never>(() => undefined);
      const { queue } = makeQueue({ handlers: { stubborn: () => never } });
      queue.submit({ id: "a", type: "stubborn" });
      const done = queue.shutdown({ deadline: 100, abortGraceMs: 500 });
      await vi.advanceTimersByTimeAsync(200);
      // The give-up was due at 600: it comes 1,600 ms late, and waits 500 more.
      stall(2_000);
      await vi.advanceTimersByTimeAsync(499);
      expect(queue.get("a")?.status).toBe("RUNNING");
      await vi.advanceTimersByTimeAsync(1);
      await expect(done).resolves.toEqual({ hardStopped: true });
      expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
      expect(vi.getTimerCount()).toBe(0);
    });

    it("a stall shorter than abortGraceMs is given back in full, and a second stall no more than what is left of abortGraceMs", async () => {
      const never = new Promise<never>(() => undefined);
      const { queue } = makeQueue({ handlers: { stubborn: () => never } });
      queue.submit({ id: "a", type: "stubborn" });
      const done = queue.shutdown({ deadline: 0, abortGraceMs: 1_000 });
      // Due at 1,000; continued at 1,300: waits 300 more, to 1,600.
      await vi.advanceTimersByTimeAsync(500);
      stall(800);
      await vi.advanceTimersByTimeAsync(299);
      expect(queue.get("a")?.status).toBe("RUNNING");
      // Held up again, 2 s, to 3,599: of abortGraceMs, 700 ms is left to give back; it gives up 700 ms later.
      stall(2_000);
      await vi.advanceTimersByTimeAsync(699);
      expect(queue.get("a")?.status).toBe("RUNNING");
      await vi.advanceTimersByTimeAsync(1);
      await expect(done).resolves.toEqual({ hardStopped: true });
      expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  it("under fake timers that fake setTimeout but not performance, abortGraceMs ends on fake time, however long the test took", async () => {
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const never = new Promise<never>(() => undefined);
    const { queue } = makeQueue({ handlers: { stubborn: () => never } });
    queue.submit({ id: "a", type: "stubborn" });
    const done = queue.shutdown({ deadline: 0, abortGraceMs: 50 });
    // Real time goes on, well past the grace and the 100 ms that a timer late by would take the process for held up.
    for (const until = performance.now() + 300; performance.now() < until; );
    await vi.advanceTimersByTimeAsync(50);
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    await expect(done).resolves.toEqual({ hardStopped: true });
  });

  it("an abortGraceMs past setTimeout's 24.8 days is waited in full, not cut to 1 ms", async () => {
    const never = new Promise<never>(() => undefined);
    const { queue } = makeQueue({ handlers: { stubborn: () => never } });
    queue.submit({ id: "stubborn", type: "stubborn" });
    const graceMs = 25 * 24 * 3_600_000;
    const done = queue.shutdown({ deadline: 100, abortGraceMs: graceMs });
    await vi.advanceTimersByTimeAsync(100 + 2 ** 31);
    expect(queue.get("stubborn")?.status).toBe("RUNNING");
    await vi.advanceTimersByTimeAsync(graceMs - 2 ** 31);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("stubborn")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
  });

  it.each([
    ["the shutdown signal aborting", (_: unknown, controller: AbortController) => controller.abort()],
    ["shutdown({ deadline: 0 }) called again", (queue: { shutdown(o: object): unknown }) => void queue.shutdown({ deadline: 0 })],
  ])("during abortGraceMs, %s ends the wait for a handler that ignores its signal at once", async (_, stopAgain) => {
    const never = new Promise<never>(() => undefined);
    const { queue } = makeQueue({ handlers: { stubborn: () => never } });
    queue.submit({ id: "polite", type: "hang" });
    queue.submit({ id: "stubborn", type: "stubborn" });
    const controller = new AbortController();
    const listeners = countListeners(controller.signal);
    let settled = false;
    const done = queue.shutdown({ deadline: 100, signal: controller.signal, abortGraceMs: 60_000 });
    void done.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.get("polite")?.status).toBe("CANCELLED");
    expect(queue.get("stubborn")?.status).toBe("RUNNING");
    stopAgain(queue, controller);
    await flush();
    expect(settled).toBe(true);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("stubborn")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(vi.getTimerCount()).toBe(0);
    expect(listeners.live).toBe(0);
  });

  describe("called again: options left out keep the earlier calls', and those given count where they tighten", () => {
    const never = new Promise<never>(() => undefined);
    /** When (ms of fake time from the first call) the stubborn handler was given up on: the shutdown resolved. */
    async function givenUpAfter(calls: (queue: Queue) => Promise<unknown>): Promise<number> {
      const { queue } = makeQueue({ handlers: { stubborn: () => never } });
      queue.submit({ id: "stubborn", type: "stubborn" });
      await flush();
      const start = Date.now();
      let endedAt: number | undefined;
      void calls(queue).then(() => (endedAt = Date.now()));
      for (let i = 0; i < 200 && endedAt === undefined; i++) await vi.advanceTimersByTimeAsync(100);
      expect(queue.get("stubborn")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
      expect(vi.getTimerCount()).toBe(0);
      return endedAt! - start;
    }

    it.each([
      ["a later deadline: 0 keeps the first call's abortGraceMs", (queue: Queue) => (void queue.shutdown({ abortGraceMs: 5_000 }), queue.shutdown({ deadline: 0 })), 5_000],
      [
        "a later, earlier deadline keeps the first call's abortGraceMs",
        (queue: Queue) => (void queue.shutdown({ deadline: 1_000, abortGraceMs: 5_000 }), queue.shutdown({ deadline: 100 })),
        5_100,
      ],
      ["a later signal keeps the first call's abortGraceMs", (queue: Queue) => (void queue.shutdown({ abortGraceMs: 3_000 }), queue.shutdown({ signal: AbortSignal.abort() })), 3_000],
      ["a later, shorter abortGraceMs counts", (queue: Queue) => (void queue.shutdown({ deadline: 100, abortGraceMs: 5_000 }), queue.shutdown({ abortGraceMs: 1_000 })), 1_100],
      ["a later, longer abortGraceMs does not", (queue: Queue) => (void queue.shutdown({ abortGraceMs: 1_000 }), queue.shutdown({ deadline: 0, abortGraceMs: 5_000 })), 1_000],
      ["the first abortGraceMs given counts, given in the stopping call itself", (queue: Queue) => (void queue.shutdown(), queue.shutdown({ deadline: 0, abortGraceMs: 2_000 })), 2_000],
      [
        "an abortGraceMs given after a call that gave none counts for a later call that stops and gives none",
        (queue: Queue) => (void queue.shutdown(), void queue.shutdown({ abortGraceMs: 2_000 }), queue.shutdown({ deadline: 0 })),
        2_000,
      ],
    ])("%s", async (_, calls, ms) => {
      expect(await givenUpAfter(calls)).toBe(ms);
    });

    it("a shorter abortGraceMs given during the grace ends it that long after the stop, or at once where that has passed", async () => {
      const during = async (queue: Queue, atMs: number, graceMs: number): Promise<unknown> => {
        const done = queue.shutdown({ deadline: 0, abortGraceMs: 10_000 });
        await vi.advanceTimersByTimeAsync(atMs);
        void queue.shutdown({ abortGraceMs: graceMs });
        return done;
      };
      expect(await givenUpAfter((queue) => during(queue, 1_000, 3_000))).toBe(3_000);
      expect(await givenUpAfter((queue) => during(queue, 4_000, 2_000))).toBe(4_000);
    });
  });

  it("the deadline passing during the abortGraceMs of a signal's stop does not cut it short", async () => {
    const never = new Promise<never>(() => undefined);
    const { queue } = makeQueue({ handlers: { stubborn: () => never } });
    queue.submit({ id: "stubborn", type: "stubborn" });
    const controller = new AbortController();
    const done = queue.shutdown({ deadline: 1_000, signal: controller.signal, abortGraceMs: 5_000 });
    controller.abort();
    await vi.advanceTimersByTimeAsync(4_999);
    expect(queue.get("stubborn")?.status).toBe("RUNNING");
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("stubborn")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
  });

  it("the drain deadline timer is cleared when draining finishes first", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 10 });
    const done = queue.shutdown({ deadline: 60_000 });
    await vi.advanceTimersByTimeAsync(10);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a shutdown signal hard-stops when aborted, and its listener is removed", async () => {
    const { queue } = makeQueue();
    const controller = new AbortController();
    const listeners = countListeners(controller.signal);
    queue.submit({ id: "a", type: "hang" });
    const done = queue.shutdown({ signal: controller.signal });
    expect(listeners.live).toBe(1);
    controller.abort();
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(listeners.live).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a shutdown signal's own reason is the cause of the error its running tasks end with; a deadline's stop has none", async () => {
    const { queue } = makeQueue();
    const controller = new AbortController();
    queue.submit({ id: "a", type: "hang" });
    const done = queue.shutdown({ signal: controller.signal, deadline: 10_000 });
    const why = new Error("the CI job was cancelled");
    controller.abort(why);
    await expect(done).resolves.toEqual({ hardStopped: true });
    const error = queue.get("a")!.error as TaskCancelledError;
    expect(error).toMatchObject({ code: "SHUTDOWN", reason: "shutdown", message: "aborted by shutdown" });
    expect(error.cause).toBe(why);
    // Already aborted when given: the same.
    const other = makeQueue().queue;
    other.submit({ id: "b", type: "hang" });
    await expect(other.shutdown({ signal: AbortSignal.abort("pipeline timeout") })).resolves.toEqual({ hardStopped: true });
    expect((other.get("b")!.error as TaskCancelledError).cause).toBe("pipeline timeout");
    // The deadline passing first, with a signal that never aborts: no cause.
    const third = makeQueue().queue;
    third.submit({ id: "c", type: "hang" });
    const stopped = third.shutdown({ signal: new AbortController().signal, deadline: 1_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(stopped).resolves.toEqual({ hardStopped: true });
    expect((third.get("c")!.error as TaskCancelledError).cause).toBeUndefined();
  });

  it("tasks a shutdown signal stopped before they started have its reason as their cause, as its running tasks do, whether it aborted before or during the drain", async () => {
    // Already aborted when given, the queue never started: the task not started has the reason, as the running ones would.
    const quit = new Error("quit");
    const idle = makeQueue({ start: false }).queue;
    idle.submit({ id: "a", type: "echo" });
    const aborted = new AbortController();
    aborted.abort(quit);
    await expect(idle.shutdown({ signal: aborted.signal })).resolves.toEqual({ hardStopped: true });
    expect(idle.get("a")?.error).toMatchObject({ code: "SHUTDOWN", message: "shutdown: not started before the shutdown signal aborted" });
    expect((idle.get("a")?.error as Error).cause).toBe(quit);
    // Aborted during the drain: one running (concurrency 1), one waiting for the slot, one waiting for its runAt.
    const why = new Error("the CI job was cancelled");
    const { queue } = makeQueue({ concurrency: 1 });
    queue.submit({ id: "running", type: "hang" });
    queue.submit({ id: "ready", type: "echo" });
    queue.submit({ id: "later", type: "echo", runAt: Date.now() + 5_000 });
    await flush();
    const controller = new AbortController();
    const done = queue.shutdown({ signal: controller.signal });
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort(why);
    await expect(done).resolves.toEqual({ hardStopped: true });
    for (const id of ["running", "ready", "later"]) expect((queue.get(id)?.error as Error).cause).toBe(why);
    expect(queue.get("ready")?.error).toBe(queue.get("later")?.error);
    // A deadline's stop has no cause, for either.
    const third = makeQueue({ concurrency: 1 }).queue;
    third.submit({ id: "running", type: "hang" });
    third.submit({ id: "ready", type: "echo" });
    const stopped = third.shutdown({ signal: new AbortController().signal, deadline: 1_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(stopped).resolves.toEqual({ hardStopped: true });
    expect(third.get("ready")?.error).toMatchObject({ message: "shutdown: not started before the deadline" });
    for (const id of ["running", "ready"]) expect((third.get(id)?.error as Error).cause).toBeUndefined();
  });

  it("tasks a shutdown signal stopped before they started say the signal stopped them, not a deadline there never was", async () => {
    const { queue } = makeQueue();
    const controller = new AbortController();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 5_000 });
    queue.submit({ id: "b", type: "echo", runAt: Date.now() + 5_000 });
    const done = queue.shutdown({ signal: controller.signal, deadline: 10_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort();
    await expect(done).resolves.toEqual({ hardStopped: true });
    expect((queue.get("a")?.error as Error).message).toBe("shutdown: not started before the shutdown signal aborted");
    // Already aborted when given: the same.
    const other = makeQueue().queue;
    other.submit({ id: "c", type: "echo", runAt: Date.now() + 5_000 });
    await expect(other.shutdown({ signal: AbortSignal.abort(), deadline: 10_000 })).resolves.toEqual({ hardStopped: true });
    expect((other.get("c")?.error as Error).message).toBe("shutdown: not started before the shutdown signal aborted");
    // A deadline that passes still says so.
    const third = makeQueue().queue;
    third.submit({ id: "d", type: "echo", runAt: Date.now() + 5_000 });
    const stopped = third.shutdown({ signal: new AbortController().signal, deadline: 1_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(stopped).resolves.toEqual({ hardStopped: true });
    expect((third.get("d")?.error as Error).message).toBe("shutdown: not started before the deadline");
  });

  it("a shutdown signal that never aborts leaves no listener once drained", async () => {
    const { queue } = makeQueue();
    const controller = new AbortController();
    const listeners = countListeners(controller.signal);
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 10 });
    const done = queue.shutdown({ signal: controller.signal, deadline: 1_000 });
    await vi.advanceTimersByTimeAsync(10);
    await expect(done).resolves.toEqual({ hardStopped: false });
    expect(listeners.live).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("an already-aborted signal stops at once", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    await expect(queue.shutdown({ signal: AbortSignal.abort() })).resolves.toEqual({ hardStopped: true });
    expect(queue.get("a")?.status).toBe("CANCELLED");
  });

  it.each([0, 5_000])("a hard stop from a started listener (abortGraceMs %i): that task's handler never runs and no timer is left", async (abortGraceMs) => {
    const ran: string[] = [];
    const { queue, log } = makeQueue({ concurrency: 1, start: false, handlers: { track: (_p, context) => void ran.push(context.taskId) } });
    queue.on("started", (e) => {
      if (e.id === "a") void queue.shutdown({ deadline: 0, abortGraceMs });
    });
    queue.submit({ id: "a", type: "track", timeoutMs: 60_000 });
    queue.submit({ id: "b", type: "track" });
    queue.start();
    await expect(queue.shutdown()).resolves.toEqual({ hardStopped: true });
    await flush();
    expect(ran).toEqual([]);
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown", attempts: 1 });
    expect(queue.get("b")).toMatchObject({ status: "CANCELLED", attempts: 0 });
    expect(eventsOf(log, "drained")).toEqual([{ hardStopped: true }]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a second call returns the same promise and can escalate to drain: false", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 10_000 });
    const first = queue.shutdown();
    const second = queue.shutdown({ drain: false });
    expect(second).toBe(first);
    await expect(first).resolves.toEqual({ hardStopped: false });
    expect(queue.get("a")?.status).toBe("CANCELLED");
  });

  it("a call after the queue drained returns at once and leaves no timer or listener", async () => {
    const { queue } = makeQueue();
    await queue.shutdown();
    const controller = new AbortController();
    const listeners = countListeners(controller.signal);
    await expect(queue.shutdown({ deadline: 5_000, signal: controller.signal })).resolves.toEqual({ hardStopped: false });
    expect(vi.getTimerCount()).toBe(0);
    expect(listeners.live).toBe(0);
  });

  it("settles every waiter, whatever ended the task", async () => {
    const { queue } = makeQueue({ concurrency: 1 });
    queue.submit({ id: "a", type: "hang" });
    queue.submit({ id: "b", type: "echo" });
    const waits = [queue.wait("a"), queue.wait("b")];
    const done = queue.shutdown({ deadline: 0 });
    await vi.advanceTimersByTimeAsync(0);
    await done;
    expect((await Promise.all(waits)).map((r) => r.status)).toEqual(["CANCELLED", "CANCELLED"]);
  });
});

describe("shutdown with handlers that settle without I/O", () => {
  beforeEach(() => {
    vi.useRealTimers();
  });

  // Each settling started the next attempt in the same chain of microtasks: no timer ran until the queue was
  // empty, so a deadline of 10 ms returned after every one of 300,000 tasks had run, hardStopped false.
  it("returns at its deadline, the rest cancelled, and a timer beside it runs meanwhile", { timeout: 60_000 }, async () => {
    const queue = new Queue({ handlers: { quick: async (n: number) => n, sync: (n: number) => n } });
    for (let i = 0; i < 300_000; i++) queue.submit({ type: i % 2 === 0 ? "quick" : "sync", payload: i });
    let timerRanWith = -1;
    setTimeout(() => (timerRanWith = queue.stats().byStatus.SUCCEEDED), 5);
    queue.start();
    const result = await queue.shutdown({ deadline: 10 });
    expect(result).toEqual({ hardStopped: true });
    const counts = queue.stats().byStatus;
    expect(counts.CANCELLED).toBeGreaterThan(0);
    expect(counts.SUCCEEDED + counts.CANCELLED).toBe(300_000);
    expect(timerRanWith).toBeGreaterThanOrEqual(0);
    expect(timerRanWith).toBeLessThan(300_000);
  });

  it("an abort of its signal, and a cancel from a timer, are taken while such handlers run", { timeout: 60_000 }, async () => {
    const queue = new Queue({ handlers: { quick: async (n: number) => n } });
    for (let i = 0; i < 300_000; i++) queue.submit({ id: `t${i}`, type: "quick", payload: i });
    const last = queue.wait("t299999").catch((error: unknown) => error);
    setTimeout(() => queue.cancel("t299999"), 5);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    queue.start();
    expect(await queue.shutdown({ signal: controller.signal })).toEqual({ hardStopped: true });
    expect(await last).toMatchObject({ id: "t299999", status: "CANCELLED", cancelReason: "cancel" });
    expect(queue.stats().byStatus.CANCELLED).toBeGreaterThan(1);
  });

  // The queue's turns were timed on Date: a wall clock moved either way read as 10 ms without a turn, and the
  // turn it then waited for was a faked setImmediate that a test awaiting only wait() or shutdown() never ran.
  for (const [moved, ms] of [["back", -1000], ["forward", 1000], ["forward a day", 86_400_000]] as const) {
    it(`under fake timers, a wall clock moved ${moved} after the queue was made does not stall it`, async () => {
      const realImmediate = setImmediate;
      vi.useFakeTimers();
      const queue = new Queue({ handlers: { sync: () => 1 } });
      queue.start();
      vi.setSystemTime(Date.now() + ms);
      for (let i = 0; i < 100; i++) queue.submit({ type: "sync" });
      let result: unknown;
      void queue.shutdown().then((r) => (result = r));
      for (let turn = 0; turn < 5 && result === undefined; turn++) await new Promise((resolve) => realImmediate(resolve));
      expect(queue.stats().byStatus.SUCCEEDED).toBe(100);
      expect(result).toEqual({ hardStopped: false });
    });
  }

  // A clock frozen by a test (Date alone faked, or the wall clock set with vi.setSystemTime and no fake timers, or
  // performance alone) never showed 10 ms: the queue never let the event loop turn, the deadline came after every task.
  for (const [faked, fake] of [
    ["Date alone", () => vi.useFakeTimers({ toFake: ["Date"] })],
    ["the wall clock, set without fake timers", () => vi.setSystemTime(new Date(2020, 0, 1))],
    ["performance alone", () => vi.useFakeTimers({ toFake: ["performance"] })],
  ] as const) {
    it(`under a clock frozen (${faked}), returns at its deadline, and a timer beside it runs meanwhile`, { timeout: 60_000 }, async () => {
      fake();
      const queue = new Queue({ handlers: { quick: async (n: number) => n } });
      for (let i = 0; i < 300_000; i++) queue.submit({ type: "quick", payload: i });
      let timerRanWith = -1;
      setTimeout(() => (timerRanWith = queue.stats().byStatus.SUCCEEDED), 5);
      queue.start();
      expect(await queue.shutdown({ deadline: 10 })).toEqual({ hardStopped: true });
      expect(queue.stats().byStatus.CANCELLED).toBeGreaterThan(0);
      expect(timerRanWith).toBeGreaterThanOrEqual(0);
      expect(timerRanWith).toBeLessThan(300_000);
    });
  }

  // Its turn then waited for a faked setImmediate that nothing ran: the real clock went on, and no test advanced fake time.
  for (const [faked, toFake] of [
    ["setImmediate alone", ["setImmediate", "clearImmediate"]],
    ["setImmediate and setTimeout", ["setImmediate", "clearImmediate", "setTimeout", "clearTimeout"]],
    ["setImmediate and Date, moved on by setSystemTime", ["setImmediate", "clearImmediate", "Date"]],
  ] as const) {
    it(`under fake timers that fake ${faked}, a long run of such handlers does not stall`, { timeout: 60_000 }, async () => {
      const realTimeout = setTimeout;
      vi.useFakeTimers({ toFake: [...toFake] });
      // The wall clock moved on during the run (with Date faked, what takes it past 10 ms).
      const queue = new Queue({ handlers: { sync: (n: number) => (n === 2000 ? vi.setSystemTime(Date.now() + 1000) : 1) } });
      queue.start();
      await drainsLongSyncRun(queue, realTimeout);
    });
  }

  it("under fake timers that fake setImmediate and Date but not performance, a long run of such handlers does not stall", { timeout: 60_000 }, async () => {
    // Drained on the event loop's own turns, as many as its 10 ms slices take on a loaded machine: waited for by a real
    // timer, not a count of turns (five turns were too few where the queue, on the real setImmediate, yields every 10 ms).
    const realTimeout = setTimeout;
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "Date"] });
    const queue = new Queue({ handlers: { sync: () => 1 } });
    queue.start();
    await drainsLongSyncRun(queue, realTimeout);
  });
});


describe("a shutdown begun by a `failed` listener (fail-fast)", () => {
  const failing = (): Promise<never> => Promise.reject(new Error("boom"));

  it("cancels the failed task's dependents because of it, and starts nothing more", async () => {
    const { queue, log } = makeQueue({ concurrency: 1, handlers: { failing } });
    queue.on("failed", () => void queue.shutdown({ drain: false }));
    queue.submit({ id: "a", type: "failing", maxAttempts: 1 });
    queue.submit({ id: "child", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "grandchild", type: "echo", dependsOn: ["child"] });
    queue.submit({ id: "other", type: "echo" });
    await queue.shutdown();
    expect(queue.get("child")).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "a" });
    expect(queue.get("grandchild")).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "a" });
    expect(queue.get("other")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expect(eventsOf(log, "started").map((e) => e.id)).toEqual(["a"]);
    expectOneTerminalEventEach(queue, log);
  });

  it("begun by the `cancelled` listener of a task the cascade cancelled, finishes the cascade: its dependents and its siblings' are cancelled because of the failure", async () => {
    const { queue, log } = makeQueue({ concurrency: 1, handlers: { failing } });
    queue.on("cancelled", (e) => {
      if (e.id === "child") void queue.shutdown({ drain: false });
    });
    queue.submit({ id: "a", type: "failing", maxAttempts: 1 });
    queue.submit({ id: "child", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "grandchild", type: "echo", dependsOn: ["child"] });
    queue.submit({ id: "sibling", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "nephew", type: "echo", dependsOn: ["sibling"] });
    queue.submit({ id: "other", type: "echo", priority: "low" });
    await queue.shutdown();
    for (const id of ["child", "grandchild", "sibling", "nephew"]) {
      expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "a" });
    }
    expect((queue.get("grandchild")?.error as Error).message).toBe('dependency "a" failed (via "child")');
    expect(queue.get("other")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expectOneTerminalEventEach(queue, log);
  });

  it("begun in a cascade that a listener of another began, finishes both: each's tasks are cancelled because of its own dependency", async () => {
    const hang = (_payload: unknown, context: AttemptContext): Promise<never> =>
      new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason as Error), { once: true }));
    const { queue, log } = makeQueue({ concurrency: 2, handlers: { failing, hang } });
    let stopped: Promise<unknown> | undefined;
    queue.on("cancelled", (e) => {
      // d1's cancel (a's cascade) begins y's, and z's, in that one, begins the shutdown.
      if (e.id === "d1") queue.cancel("y");
      if (e.id === "z") stopped = queue.shutdown({ drain: false, deadline: 0 });
    });
    queue.submit({ id: "r", type: "hang" });
    queue.submit({ id: "y", type: "echo", dependsOn: ["r"] });
    queue.submit({ id: "z", type: "echo", dependsOn: ["y"] });
    queue.submit({ id: "z2", type: "echo", dependsOn: ["z"] });
    queue.submit({ id: "a", type: "failing", maxAttempts: 1 });
    queue.submit({ id: "d1", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "d1c", type: "echo", dependsOn: ["d1"] });
    queue.submit({ id: "d2", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "d2c", type: "echo", dependsOn: ["d2"] });
    await vi.waitFor(() => expect(stopped).toBeDefined());
    await stopped;
    for (const id of ["d1", "d1c", "d2", "d2c"]) expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "a" });
    expect(queue.get("z2")).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "y" });
    expectOneTerminalEventEach(queue, log);
  });

  it.each([
    ["the cancelled task's own `cancelled` listener", "x"],
    ["the `cancelled` listener of a task its cancel cascaded to", "xChild"],
  ])("begun by %s, where a `failed` listener cancelled it: the failed task's dependents are cancelled because of the failure too", async (_, stopsAt) => {
    const { queue, log } = makeQueue({ concurrency: 1, handlers: { failing } });
    queue.on("failed", (e) => {
      if (e.id === "a") queue.cancel("x");
    });
    queue.on("cancelled", (e) => {
      if (e.id === stopsAt) void queue.shutdown({ drain: false });
    });
    queue.submit({ id: "a", type: "failing", maxAttempts: 1 });
    queue.submit({ id: "child", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "grandchild", type: "echo", dependsOn: ["child"] });
    queue.submit({ id: "x", type: "echo", priority: "low" });
    queue.submit({ id: "xChild", type: "echo", dependsOn: ["x"] });
    queue.submit({ id: "xGrandchild", type: "echo", dependsOn: ["xChild"] });
    queue.submit({ id: "other", type: "echo", priority: "low" });
    await queue.shutdown();
    expect(queue.get("a")?.status).toBe("FAILED");
    for (const id of ["child", "grandchild"]) expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "a" });
    expect(queue.get("x")).toMatchObject({ status: "CANCELLED", cancelReason: "cancel" });
    for (const id of ["xChild", "xGrandchild"]) expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "x" });
    expect(queue.get("other")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown" });
    expectOneTerminalEventEach(queue, log);
  });

  it.each([
    ["its `submitted` listener", "late"],
    ["the `cancelled` listener of a task its `submitted` listener cancelled", "x"],
  ])("begun by %s, a task submitted after its dependency failed is cancelled because of it, not as not started", async (_, stopsAt) => {
    const { queue, log } = makeQueue({ concurrency: 1, handlers: { failing } });
    queue.submit({ id: "a", type: "failing", maxAttempts: 1 });
    await queue.wait("a");
    queue.submit({ id: "x", type: "echo", runAt: Date.now() + 60_000 });
    queue.on("submitted", (e) => {
      if (e.id !== "late") return;
      if (stopsAt === "late") void queue.shutdown({ drain: false });
      else queue.cancel("x");
    });
    queue.on("cancelled", (e) => {
      if (e.id === stopsAt && stopsAt === "x") void queue.shutdown({ drain: false });
    });
    queue.submit({ id: "late", type: "echo", dependsOn: ["a"] });
    await queue.shutdown();
    expect(queue.get("late")).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "a" });
    expect((queue.get("late")?.error as Error).message).toBe('dependency "a" failed');
    expect(queue.get("x")).toMatchObject({ status: "CANCELLED", cancelReason: stopsAt === "x" ? "cancel" : "shutdown" });
    expectOneTerminalEventEach(queue, log);
  });

  it("says a signal's own TaskCancelledError, in its words, for the running attempt, the tasks not started and one waiting to retry", async () => {
    const { queue, log } = makeQueue({ concurrency: 3, handlers: { failing, flaky: flakyOnce }, backoff: () => 60_000 });
    queue.on("failed", (e) => {
      const stop = new AbortController();
      stop.abort(new TaskCancelledError("shutdown", `fail-fast: task "${e.id}" failed`));
      void queue.shutdown({ signal: stop.signal });
    });
    queue.submit({ id: "retrying", type: "flaky", maxAttempts: 2 });
    queue.submit({ id: "running", type: "hang" });
    await flush();
    expect(queue.get("retrying")?.status).toBe("SCHEDULED");
    queue.submit({ id: "waiting", type: "echo", runAt: Date.now() + 60_000 });
    queue.submit({ id: "b", type: "failing", maxAttempts: 1 });
    await queue.shutdown();
    expect(queue.get("b")?.status).toBe("FAILED");
    expect((queue.get("running")?.error as Error).message).toBe('fail-fast: task "b" failed');
    expect((queue.get("waiting")?.error as Error).message).toBe('not started: fail-fast: task "b" failed');
    expect((queue.get("retrying")?.error as Error).message).toBe('fail-fast: task "b" failed: not retried (attempt 1 failed: first)');
    expectOneTerminalEventEach(queue, log);
  });

  it("records an attempt that failed on its own before the stop's abort reached it (endedBeforeStop) as failed, or not retried; one the abort stopped as cancelled", async () => {
    // Each settles in the stop's grace, once its signal aborted: as a shell that had exited with code 3 as the stop came, whose output was still read.
    const ended = (_: unknown, context: AttemptContext): Promise<never> =>
      untilAborted(context).catch(() => Promise.reject(Object.assign(new Error("exited with code 3"), { endedBeforeStop: true })));
    const stopped = (_: unknown, context: AttemptContext): Promise<never> => untilAborted(context).catch(() => Promise.reject(new Error("killed by SIGTERM")));
    const { queue, log } = makeQueue({ concurrency: 4, handlers: { failing, ended, stopped } });
    queue.on("failed", (e) => {
      if (e.id !== "b") return;
      const stop = new AbortController();
      stop.abort(new TaskCancelledError("shutdown", `fail-fast: task "${e.id}" failed`));
      void queue.shutdown({ signal: stop.signal, abortGraceMs: 60_000 });
    });
    queue.submit({ id: "a", type: "ended", maxAttempts: 1 });
    queue.submit({ id: "again", type: "ended", maxAttempts: 2 });
    queue.submit({ id: "stopped", type: "stopped", maxAttempts: 1 });
    queue.submit({ id: "b", type: "failing", maxAttempts: 1 });
    await queue.shutdown();
    expect(queue.get("a")).toMatchObject({ status: "FAILED", error: expect.objectContaining({ message: "exited with code 3" }) });
    expect(queue.get("again")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown", error: expect.objectContaining({ message: 'fail-fast: task "b" failed: not retried (attempt 1 failed: exited with code 3)' }) });
    expect(queue.get("stopped")).toMatchObject({ status: "CANCELLED", cancelReason: "shutdown", error: expect.objectContaining({ message: 'fail-fast: task "b" failed' }) });
    expectOneTerminalEventEach(queue, log);
  });
});
