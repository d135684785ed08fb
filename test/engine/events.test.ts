import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { QueueEvents } from "../../src/engine/index.js";
import type { AttemptContext } from "../../src/engine/types.js";
import { eventsOf, flush, makeQueue, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("events", () => {
  it("reports every transition of a task, in order, with its data", async () => {
    const error = new Error("first");
    const { queue, log } = makeQueue({
      backoff: () => 40,
      handlers: { flaky: (_: unknown, c: AttemptContext) => (c.attempt === 1 ? Promise.reject(error) : "done") },
    });
    const t0 = Date.now();
    queue.submit({ id: "a", type: "flaky", priority: "high", maxAttempts: 2 });
    await vi.advanceTimersByTimeAsync(40);
    await queue.shutdown();
    expect(log).toEqual([
      ["submitted", { id: "a", type: "flaky", priority: "high", status: "READY", dependsOn: [] }],
      ["started", { id: "a", attempt: 1, maxAttempts: 2 }],
      ["retrying", { id: "a", attempt: 1, maxAttempts: 2, delayMs: 40, runAt: t0 + 40, error }],
      ["ready", { id: "a", from: "SCHEDULED" }],
      ["started", { id: "a", attempt: 2, maxAttempts: 2 }],
      ["succeeded", { id: "a", attempts: 2, value: "done" }],
      ["drained", { hardStopped: false }],
    ]);
  });

  it("a listener that throws is reported as listener-error and the queue carries on", async () => {
    const { queue, log } = makeQueue();
    const boom = new Error("listener broke");
    const others: string[] = [];
    queue.on("started", () => {
      throw boom;
    });
    queue.on("started", (e) => others.push(e.id));
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo" });
    await flush();
    expect(eventsOf(log, "listener-error")).toEqual([
      { event: "started", error: boom },
      { event: "started", error: boom },
    ]);
    expect(others).toEqual(["a", "b"]);
    expect(queue.stats().byStatus.SUCCEEDED).toBe(2);
  });

  it("an async listener that rejects is reported as listener-error too, not left an unhandled rejection that ends the process", async () => {
    const { queue, log } = makeQueue({ handlers: { fail: () => Promise.reject(new Error("task broke")) } });
    const boom = new Error("notify broke");
    queue.on("failed", async () => {
      await Promise.resolve();
      throw boom;
    });
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    queue.submit({ id: "b", type: "echo" });
    await queue.shutdown();
    await flush();
    expect(eventsOf(log, "listener-error")).toEqual([{ event: "failed", error: boom }]);
    expect(queue.stats().byStatus).toMatchObject({ FAILED: 1, SUCCEEDED: 1 });
  });

  it("with no listener-error listener, an async listener's rejection is a process warning", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const events = new QueueEvents();
    events.on("drained", () => Promise.reject(new Error("late")));
    events.emit("drained", { hardStopped: false });
    await flush();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toBe('taskq: a "drained" listener threw: late');
  });

  it("a throwing listener on a terminal event does not stop dependents", async () => {
    const { queue } = makeQueue();
    queue.on("succeeded", () => {
      throw new Error("nope");
    });
    queue.on("listener-error", () => undefined);
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    await expect(queue.wait("b")).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it("with no listener-error listener, or one that throws, falls back to a process warning", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const events = new QueueEvents();
    events.on("drained", () => {
      throw new Error("first");
    });
    events.emit("drained", { hardStopped: false });
    expect(warn).toHaveBeenCalledTimes(1);
    events.on("listener-error", () => {
      throw new Error("second");
    });
    events.emit("drained", { hardStopped: false });
    expect(warn).toHaveBeenCalledTimes(2);
    expect(String(warn.mock.calls[1]?.[0])).toContain("listener-error");
  });

  it("unsubscribes, even from inside an emit", () => {
    const events = new QueueEvents();
    const seen: string[] = [];
    const offA = events.on("ready", () => {
      seen.push("a");
      offA();
    });
    events.on("ready", () => seen.push("b"));
    events.emit("ready", { id: "x", from: "BLOCKED" });
    events.emit("ready", { id: "x", from: "BLOCKED" });
    expect(seen).toEqual(["a", "b", "b"]);
    expect(events.has("ready")).toBe(true);
    events.removeAll();
    expect(events.has("ready")).toBe(false);
  });

  it("a function subscribed twice is unsubscribed once per call, and a second call does nothing", async () => {
    const { queue } = makeQueue({ start: false });
    const seen: string[] = [];
    const listener = (e: { id: string }): void => void seen.push(e.id);
    const off1 = queue.on("succeeded", listener);
    queue.on("succeeded", listener);
    off1();
    off1();
    queue.submit({ id: "a", type: "echo" });
    await queue.shutdown();
    expect(seen).toEqual(["a"]);
  });

  it("a listener may call back into the queue: cancel from started, submit from succeeded", async () => {
    const { queue } = makeQueue({ handlers: { watch: (_: unknown, c: AttemptContext) => (c.signal.aborted ? Promise.reject(c.signal.reason as Error) : "ran") } });
    queue.on("started", (e) => {
      if (e.id === "victim") queue.cancel("victim");
    });
    queue.on("succeeded", (e) => {
      if (e.id === "first") queue.submit({ id: "second", type: "echo" });
    });
    queue.submit({ id: "victim", type: "watch" });
    queue.submit({ id: "first", type: "echo" });
    await flush();
    expect(queue.get("victim")).toMatchObject({ status: "CANCELLED", cancelReason: "cancel" });
    expect(queue.get("second")?.status).toBe("SUCCEEDED");
  });

  it("a submitted listener that dispatches (start(), a submit of its own) does not start the task before the other listeners are told of it", async () => {
    const { queue } = makeQueue({ start: false });
    const log: string[] = [];
    // Started lazily, at the first task: before, the second listener got `started` first, and a status already stale.
    queue.on("submitted", () => queue.start());
    queue.on("submitted", (e) => log.push(`submitted:${e.id}(${e.status})`));
    queue.on("started", (e) => log.push(`started:${e.id}`));
    queue.on("submitted", (e) => {
      if (e.id === "a") queue.submit({ id: "b", type: "echo" });
    });
    queue.submit({ id: "a", type: "echo" });
    await flush();
    expect(log).toEqual(["submitted:a(READY)", "submitted:b(READY)", "started:a", "started:b"]);
    expect(queue.get("b")?.status).toBe("SUCCEEDED");
  });

  it("reports cancelled with its reason and the dependency", async () => {
    const { queue, log } = makeQueue({ start: false });
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    queue.cancel("a");
    expect(eventsOf(log, "cancelled").map(({ id, reason, dependency }) => ({ id, reason, dependency }))).toEqual([
      { id: "a", reason: "cancel", dependency: undefined },
      { id: "b", reason: "dependency", dependency: "a" },
    ]);
  });
});
