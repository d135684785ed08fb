import { afterEach, describe, expect, it, vi } from "vitest";
import { Deadline, LongTimer } from "../../src/store/postgres/long-timer.js";

const HOUR = 3_600_000;

describe("timers past setTimeout's limit (2^31-1 ms, 24.8 days)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a stop deadline of 600 h is reached after 600 h, not at once; brought forward, it is reached then", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const deadline = new Deadline();
    let reached = false;
    void deadline.reached.then(() => (reached = true));
    deadline.within(600 * HOUR);
    await vi.advanceTimersByTimeAsync(2 ** 31);
    expect(reached).toBe(false);
    await vi.advanceTimersByTimeAsync(599 * HOUR - 2 ** 31);
    expect(reached).toBe(false);
    // A second signal: now.
    deadline.within(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(reached).toBe(true);
    deadline.dispose();
  });

  it("a 30-day timer fires after 30 days, and not once cleared", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const fired: string[] = [];
    new LongTimer(() => fired.push("kept"), 30 * 24 * HOUR);
    const cleared = new LongTimer(() => fired.push("cleared"), 30 * 24 * HOUR);
    await vi.advanceTimersByTimeAsync(2 ** 31 + 1);
    cleared.clear();
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(30 * 24 * HOUR - 2 ** 31 - 2);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(["kept"]);
  });
});
