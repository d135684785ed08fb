import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { describeError } from "../../src/cli/render/describe.js";
import { TaskCancelledError, TaskNotFoundError } from "../../src/engine/index.js";
import type { AttemptContext } from "../../src/engine/types.js";
import { deferred, eventsOf, flush, makeQueue, trail, untilAborted, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
});

describe("cancel", () => {
  it("BLOCKED -> CANCELLED, and its dependents with it", async () => {
    const { queue, log } = makeQueue({ start: false });
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "c", type: "echo", dependsOn: ["b"] });
    expect(queue.cancel("b")).toBe(true);
    expect(queue.get("b")).toMatchObject({ status: "CANCELLED", cancelReason: "cancel", attempts: 0 });
    expect(queue.get("c")).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "b" });
    queue.start();
    await queue.wait("a");
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
    expect(eventsOf(log, "cancelled")[0]).toMatchObject({ id: "b", reason: "cancel" });
  });

  it("SCHEDULED -> CANCELLED, and the delay timer goes with it", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 1_000 });
    expect(vi.getTimerCount()).toBe(1);
    expect(queue.cancel("a")).toBe(true);
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "cancel" });
    expect(vi.getTimerCount()).toBe(0);
    expect(queue.stats().byStatus.SCHEDULED).toBe(0);
  });

  it("SCHEDULED -> CANCELLED during a retry backoff has the failed attempt's error as its cause, as a shutdown's cancel has it", async () => {
    const failure = new Error("x");
    const { queue } = makeQueue({ handlers: { fail: () => Promise.reject(failure) }, backoff: () => 1_000 });
    queue.submit({ id: "a", type: "fail", maxAttempts: 3 });
    queue.submit({ id: "delayed", type: "echo", runAt: Date.now() + 1_000 });
    await flush();
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    queue.cancel("a");
    queue.cancel("delayed");
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "cancel", error: { message: 'task "a" was cancelled: not retried (attempt 1 failed: x)' } });
    expect((queue.get("a")?.error as Error).cause).toBe(failure);
    // One that never started has no cause.
    expect((queue.get("delayed")?.error as Error).cause).toBeUndefined();
  });

  it("a cancel of a task waiting to retry quotes the failed attempt it carries as cause: its kill is told as that attempt's, not as the cancel's", async () => {
    // The attempt timed out and took taskq's SIGKILL after the grace; the cancel later killed nothing.
    const failure = Object.assign(new Error("timed out after 1s"), { killGraceMs: 5_000 });
    const { queue } = makeQueue({ handlers: { fail: () => Promise.reject(failure) }, backoff: () => 1_000 });
    queue.submit({ id: "a", type: "fail", maxAttempts: 3 });
    await flush();
    queue.cancel("a");
    const described = describeError(queue.get("a")?.error);
    expect(described).toBe('task "a" was cancelled: not retried (attempt 1 failed: timed out after 1s)');
    expect(described).not.toContain("SIGKILL");
  });

  it("READY -> CANCELLED past its retry backoff, waiting for a slot, has the failed attempt's error as its cause, as a shutdown's cancel has it", async () => {
    const failure = new Error("x");
    const busy = deferred<void>();
    const { queue } = makeQueue({ concurrency: 1, handlers: { fail: () => Promise.reject(failure), busy: () => busy.promise }, backoff: () => 1_000 });
    queue.submit({ id: "a", type: "fail", maxAttempts: 3 });
    await flush();
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    queue.submit({ id: "busy", type: "busy" });
    await flush();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.get("a")?.status).toBe("READY");
    queue.cancel("a");
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", cancelReason: "cancel", attempts: 1, error: { message: 'task "a" was cancelled: not retried (attempt 1 failed: x)' } });
    expect((queue.get("a")?.error as Error).cause).toBe(failure);
    busy.resolve();
  });

  it("SCHEDULED -> CANCELLED during a retry backoff keeps the attempt count", async () => {
    const { queue, log } = makeQueue({ handlers: { fail: () => Promise.reject(new Error("x")) }, backoff: () => 1_000 });
    queue.submit({ id: "a", type: "fail", maxAttempts: 3 });
    await flush();
    expect(queue.get("a")?.status).toBe("SCHEDULED");
    queue.cancel("a");
    expect(queue.get("a")).toMatchObject({ status: "CANCELLED", attempts: 1 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(eventsOf(log, "started")).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("READY -> CANCELLED removes it from the ready heap; the next task runs instead", async () => {
    const gate = deferred();
    const { queue, log } = makeQueue({ concurrency: 1, handlers: { gated: () => gate.promise } });
    queue.submit({ id: "busy", type: "gated" });
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo" });
    expect(queue.get("a")?.status).toBe("READY");
    expect(queue.cancel("a")).toBe(true);
    expect(queue.stats().byStatus.READY).toBe(1);
    gate.resolve();
    await flush();
    expect(trail(log, "a")).toEqual(["submitted", "cancelled"]);
    expect(queue.get("b")?.status).toBe("SUCCEEDED");
  });

  it("RUNNING -> CANCELLED aborts the signal with a CANCELLED reason and never retries", async () => {
    let seen: AttemptContext | undefined;
    const { queue, log } = makeQueue({
      handlers: {
        watch: (_: unknown, context: AttemptContext) => {
          seen = context;
          return untilAborted(context);
        },
      },
    });
    queue.submit({ id: "a", type: "watch", maxAttempts: 5 });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    expect(queue.cancel("a")).toBe(true);
    // Ends only once the handler settles.
    expect(queue.get("a")?.status).toBe("RUNNING");
    expect(seen?.signal.aborted).toBe(true);
    expect(seen?.signal.reason).toBeInstanceOf(TaskCancelledError);
    expect(seen?.signal.reason).toMatchObject({ code: "CANCELLED", reason: "cancel" });
    const result = await queue.wait("a");
    expect(result).toMatchObject({ status: "CANCELLED", cancelReason: "cancel", attempts: 1 });
    expect(result.error).toBe(seen?.signal.reason);
    expect(eventsOf(log, "retrying")).toEqual([]);
    expect(queue.get("b")).toMatchObject({ status: "CANCELLED", dependency: "a" });
  });

  it("a second cancel of a running task that ignores its signal returns false and changes nothing: true is the call that cancelled it", async () => {
    const gate = deferred<string>();
    let seen: AttemptContext | undefined;
    const { queue, log } = makeQueue({
      handlers: {
        stubborn: (_: unknown, context: AttemptContext) => {
          seen = context;
          return gate.promise;
        },
      },
    });
    queue.submit({ id: "a", type: "stubborn" });
    await flush();
    expect(queue.cancel("a")).toBe(true);
    expect(queue.get("a")?.status).toBe("RUNNING");
    const reason: unknown = seen?.signal.reason;
    expect(queue.cancel("a")).toBe(false);
    expect(queue.cancel("a")).toBe(false);
    expect(queue.get("a")?.status).toBe("RUNNING");
    gate.resolve("done anyway");
    const result = await queue.wait("a");
    expect(result).toMatchObject({ status: "CANCELLED", cancelReason: "cancel" });
    // The task's error is the one its signal carried, not one a later call made.
    expect(result.error).toBe(reason);
    expect(eventsOf(log, "cancelled")).toEqual([{ id: "a", attempts: 1, reason: "cancel", error: reason }]);
    expect(queue.cancel("a")).toBe(false);
  });

  it("a cancelled running task ends CANCELLED even if its handler then succeeds", async () => {
    const gate = deferred<string>();
    const { queue } = makeQueue({ handlers: { gated: () => gate.promise } });
    queue.submit({ id: "a", type: "gated" });
    queue.cancel("a");
    gate.resolve("done anyway");
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "CANCELLED", cancelReason: "cancel" });
  });

  it("a cancel after the attempt timed out still ends CANCELLED with the cancel as error", async () => {
    const gate = deferred();
    const { queue } = makeQueue({ handlers: { stubborn: () => gate.promise } });
    queue.submit({ id: "a", type: "stubborn", timeoutMs: 100 });
    await vi.advanceTimersByTimeAsync(100);
    queue.cancel("a");
    gate.reject(new Error("late"));
    const result = await queue.wait("a");
    expect(result).toMatchObject({ status: "CANCELLED", cancelReason: "cancel" });
    expect(result.error).toMatchObject({ code: "CANCELLED" });
  });

  it("a cancel from a started listener: that task's handler never runs, its attempt counted, and no timer is left; the next task starts", async () => {
    const ran: string[] = [];
    const { queue, log } = makeQueue({ concurrency: 1, start: false, handlers: { track: (_p, context) => void ran.push(context.taskId) } });
    queue.on("started", (e) => {
      if (e.id === "a") expect(queue.cancel("a")).toBe(true);
    });
    queue.submit({ id: "a", type: "track", timeoutMs: 60_000 });
    queue.submit({ id: "b", type: "track" });
    queue.start();
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "CANCELLED", cancelReason: "cancel", attempts: 1 });
    await expect(queue.wait("b")).resolves.toMatchObject({ status: "SUCCEEDED" });
    expect(ran).toEqual(["b"]);
    expect(trail(log, "a")).toEqual(["submitted", "started", "cancelled"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a retry's attempt cancelled from its started listener ends as a task cancelled waiting for that retry: the failed attempt quoted and its cause", async () => {
    const failure = new Error("x");
    const ran: number[] = [];
    const { queue, log } = makeQueue({ handlers: { fail: (_p, context) => (ran.push(context.attempt), Promise.reject(failure)) }, backoff: () => 1_000 });
    queue.on("started", (e) => {
      if (e.attempt === 2) expect(queue.cancel("r")).toBe(true);
    });
    queue.submit({ id: "r", type: "fail", maxAttempts: 3 });
    await flush();
    await vi.advanceTimersByTimeAsync(1_000);
    const result = await queue.wait("r");
    expect(result).toMatchObject({ status: "CANCELLED", cancelReason: "cancel", attempts: 2, error: { message: 'task "r" was cancelled: not retried (attempt 1 failed: x)' } });
    expect((result.error as Error).cause).toBe(failure);
    expect(ran).toEqual([1]);
    expect(eventsOf(log, "cancelled")[0]?.error).toBe(result.error);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a retry's attempt cancelled from its started listener that also stops the queue at once keeps the failed attempt too", async () => {
    const failure = new Error("x");
    const { queue } = makeQueue({ handlers: { fail: () => Promise.reject(failure) }, backoff: () => 1_000 });
    queue.on("started", (e) => {
      if (e.attempt === 2) {
        expect(queue.cancel("r")).toBe(true);
        void queue.shutdown({ deadline: 0 });
      }
    });
    queue.submit({ id: "r", type: "fail", maxAttempts: 3 });
    await flush();
    await vi.advanceTimersByTimeAsync(1_000);
    const result = await queue.wait("r");
    expect(result).toMatchObject({ status: "CANCELLED", attempts: 2, error: { message: 'task "r" was cancelled: not retried (attempt 1 failed: x)' } });
    expect((result.error as Error).cause).toBe(failure);
  });

  it("terminal -> false", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo" });
    await queue.wait("a");
    expect(queue.cancel("a")).toBe(false);
    queue.submit({ id: "b", type: "echo", runAt: Date.now() + 10 });
    queue.cancel("b");
    expect(queue.cancel("b")).toBe(false);
    expect(queue.get("a")?.status).toBe("SUCCEEDED");
  });

  it("unknown -> TaskNotFoundError", () => {
    const { queue } = makeQueue();
    expect(() => queue.cancel("ghost")).toThrow(TaskNotFoundError);
    expect(() => queue.cancel("ghost")).toThrow(expect.objectContaining({ code: "TASK_NOT_FOUND" }));
  });

  it("settles waiters of a cancelled queued task", async () => {
    const { queue } = makeQueue({ start: false });
    queue.submit({ id: "a", type: "echo" });
    const waiting = queue.wait("a");
    queue.cancel("a");
    await expect(waiting).resolves.toMatchObject({ status: "CANCELLED" });
  });
});

