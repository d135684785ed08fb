import { isDeepStrictEqual } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TaskCancelledError } from "../../src/engine/index.js";
import { deferred, eventsOf, flush, makeQueue, trail, useFakeTime } from "./helpers.js";

beforeEach(useFakeTime);
afterEach(() => {
  vi.useRealTimers();
});

const fail = (): Promise<never> => Promise.reject(new Error("dep broke"));

describe("dependencies", () => {
  it("BLOCKED -> CANCELLED when a dependency FAILED; the reason names it", async () => {
    const { queue, log } = makeQueue({ handlers: { fail } });
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    const result = await queue.wait("b");
    expect(result).toMatchObject({ status: "CANCELLED", attempts: 0, cancelReason: "dependency", dependency: "a" });
    expect(result.error).toBeInstanceOf(TaskCancelledError);
    expect(result.error).toMatchObject({ code: "CANCELLED", reason: "dependency", dependency: "a", message: 'dependency "a" failed' });
    expect(eventsOf(log, "cancelled")).toEqual([{ id: "b", attempts: 0, reason: "dependency", dependency: "a", error: result.error }]);
    expect(trail(log, "b")).toEqual(["submitted", "cancelled"]);
  });

  it("BLOCKED -> CANCELLED when a dependency was cancelled", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "hang" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    queue.cancel("a");
    await expect(queue.wait("b")).resolves.toMatchObject({ status: "CANCELLED", dependency: "a" });
    expect((queue.get("b")?.error as Error).message).toBe('dependency "a" was cancelled');
  });

  it("cascades through every transitive dependent, naming the root cause", async () => {
    const gate = deferred();
    const { queue } = makeQueue({ handlers: { gated: () => gate.promise } });
    queue.submit({ id: "root", type: "gated", maxAttempts: 1 });
    queue.submit({ id: "side", type: "echo" });
    queue.submit({ id: "a", type: "echo", dependsOn: ["root"] });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a", "side"] });
    queue.submit({ id: "c", type: "echo", dependsOn: ["b"] });
    queue.submit({ id: "d", type: "echo", dependsOn: ["side"] });
    gate.reject(new Error("root broke"));
    await flush();
    for (const id of ["a", "b", "c"]) {
      expect(queue.get(id)).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "root" });
    }
    expect((queue.get("c")?.error as Error).message).toBe('dependency "root" failed (via "b")');
    expect(queue.get("d")?.status).toBe("SUCCEEDED");
    expect(queue.get("side")?.status).toBe("SUCCEEDED");
  });

  it("a cascade's error deep-equals one constructed with the same reason, message and dependency: it carries nothing more of its own", async () => {
    const { queue } = makeQueue({ handlers: { fail } });
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "c", type: "echo", dependsOn: ["b"] });
    await queue.wait("c");
    expect(queue.get("b")?.error).toEqual(new TaskCancelledError("dependency", 'dependency "a" failed', "a"));
    expect(queue.get("c")?.error).toEqual(new TaskCancelledError("dependency", 'dependency "a" failed (via "b")', "a"));
    expect(isDeepStrictEqual(queue.get("c")?.error, new TaskCancelledError("dependency", 'dependency "a" failed (via "b")', "a"))).toBe(true);
    expect(Object.keys(queue.get("c")?.error as object)).not.toContain("dependencyEnded");
  });

  it("a failure forgotten by its own failed listener is still told as a failure to its dependents, at every depth, and later ones via them", async () => {
    const { queue } = makeQueue({ concurrency: 1, handlers: { fail: () => Promise.reject(new Error("boom")) } });
    queue.on("failed", (e) => queue.forget(e.id));
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    queue.submit({ id: "child", type: "echo", dependsOn: ["a"] });
    queue.submit({ id: "grandchild", type: "echo", dependsOn: ["child"] });
    await queue.wait("grandchild");
    expect(queue.get("a")).toBeUndefined();
    expect((queue.get("child")?.error as Error).message).toBe('dependency "a" failed');
    expect((queue.get("grandchild")?.error as Error).message).toBe('dependency "a" failed (via "child")');
    // A new task of the forgotten id, cancelled: a task cancelled via "child" is still told of the failure that started it.
    queue.submit({ id: "a", type: "echo", runAt: Date.now() + 60_000 });
    queue.cancel("a");
    queue.submit({ id: "late", type: "echo", dependsOn: ["grandchild"] });
    expect((queue.get("late")?.error as Error).message).toBe('dependency "a" failed (via "grandchild")');
  });

  it("cancels at once a task submitted after its dependency already failed", async () => {
    const { queue, log } = makeQueue({ handlers: { fail } });
    queue.submit({ id: "a", type: "fail", maxAttempts: 1 });
    await queue.wait("a");
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    expect(queue.get("b")).toMatchObject({ status: "CANCELLED", cancelReason: "dependency", dependency: "a" });
    expect(trail(log, "b")).toEqual(["submitted", "cancelled"]);
    expect(eventsOf(log, "submitted").at(-1)).toMatchObject({ id: "b", status: "BLOCKED", dependsOn: ["a"] });
  });

  it("cancels at once a task submitted after its dependency was cancelled, naming the root", async () => {
    const { queue } = makeQueue({ start: false });
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    queue.cancel("a");
    queue.submit({ id: "c", type: "echo", dependsOn: ["b"] });
    expect(queue.get("c")).toMatchObject({ status: "CANCELLED", dependency: "a" });
  });

  it("does not wait on a dependency that already SUCCEEDED", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo" });
    await queue.wait("a");
    queue.submit({ id: "b", type: "echo", dependsOn: ["a"] });
    expect(queue.get("b")?.status).toBe("RUNNING");
  });

  it("counts a dependency named twice once", async () => {
    const { queue } = makeQueue();
    queue.submit({ id: "a", type: "echo" });
    queue.submit({ id: "b", type: "echo", dependsOn: ["a", "a"] });
    await expect(queue.wait("b")).resolves.toMatchObject({ status: "SUCCEEDED" });
  });

  it("a BLOCKED task sits outside the ready heap and does not stall lower priorities", async () => {
    const gate = deferred();
    const started: string[] = [];
    const { queue } = makeQueue({ concurrency: 1, start: false, handlers: { gated: () => gate.promise } });
    queue.on("started", (e) => started.push(e.id));
    queue.submit({ id: "dep", type: "gated", priority: "low" });
    queue.submit({ id: "blocked", type: "echo", priority: "critical", dependsOn: ["dep"] });
    queue.submit({ id: "low", type: "echo", priority: "low" });
    queue.start();
    gate.resolve();
    await flush();
    expect(started).toEqual(["dep", "blocked", "low"]);
  });

  it("handles a 50k-long chain without overflowing the stack", async () => {
    const { queue } = makeQueue({ start: false, handlers: { fail } });
    queue.submit({ id: "0", type: "fail", maxAttempts: 1 });
    for (let i = 1; i < 50_000; i++) queue.submit({ id: String(i), type: "echo", dependsOn: [String(i - 1)] });
    queue.start();
    await flush();
    expect(queue.stats().byStatus).toMatchObject({ FAILED: 1, CANCELLED: 49_999 });
  });
});
