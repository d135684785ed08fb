import { afterEach, describe, expect, it, vi } from "vitest";
import type { ShellHandler } from "../../src/handlers/index.js";
import { RunHandlers } from "../../src/cli/run-handlers.js";

describe("RunHandlers: one shell handler per run a worker serves", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("keeps a run's handler while its tasks run and for the linger after; then drops it, and makes a new one for a later task", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const made: string[] = [];
    const handlers = new RunHandlers((runId) => {
      made.push(runId);
      return (async () => ({})) as unknown as ShellHandler;
    }, 1000);
    const first = handlers.hold("a");
    const second = handlers.hold("a");
    expect(second.handler).toBe(first.handler);
    first.release();
    first.release(); // twice is once
    await vi.advanceTimersByTimeAsync(5000);
    expect(handlers.size).toBe(1); // the second task still holds it
    second.release();
    await vi.advanceTimersByTimeAsync(999);
    // The run's next task within the linger finds the same handler.
    const third = handlers.hold("a");
    expect(third.handler).toBe(first.handler);
    third.release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(handlers.size).toBe(0);
    const later = handlers.hold("a");
    expect(later.handler).not.toBe(first.handler);
    expect(made).toEqual(["a", "a"]);
    later.release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(handlers.size).toBe(0);
  });
});
