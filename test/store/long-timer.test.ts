import { afterEach, describe, expect, it, vi } from "vitest";
import { Deadline, LongTimer } from "../../src/store/postgres/long-timer.js";
import { GraceTimer, timerNow } from "../../src/engine/long-timer.js";

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

describe("a grace shortened after a stall (GraceTimer)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Holds the process up to `to` on the fake clock: its time moves on, and no timer runs until the next advance. */
  function stallUntil(to: number): void {
    (setTimeout as unknown as { clock: { now: number } }).clock.now = to;
  }

  it("a shorter grace given as the process is continued, past its shorter end, keeps the time given back, not ending at once", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"], now: 0 });
    const endedAt: number[] = [];
    const grace = new GraceTimer(() => endedAt.push(timerNow()), 10_000);
    await vi.advanceTimersByTimeAsync(1_000);
    // Stopped from 1,000 to 10,300: its timer, due at 10,000, is 300 ms late; the shorter grace comes before it runs.
    stallUntil(10_300);
    grace.shorten(5_000);
    expect(endedAt).toEqual([]);
    await vi.advanceTimersByTimeAsync(299);
    expect(endedAt).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(endedAt).toEqual([10_600]);
    grace.clear();
  });

  it("shortened after its timer gave the time back, it keeps it too; shortened with no stall, it ends when the shorter grace does", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"], now: 0 });
    const endedAt: number[] = [];
    const grace = new GraceTimer(() => endedAt.push(timerNow()), 10_000);
    stallUntil(10_300);
    await vi.advanceTimersByTimeAsync(0);
    grace.shorten(5_000);
    await vi.advanceTimersByTimeAsync(299);
    expect(endedAt).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(endedAt).toEqual([10_600]);

    const unstalled = new GraceTimer(() => endedAt.push(timerNow()), 10_000);
    await vi.advanceTimersByTimeAsync(6_000);
    unstalled.shorten(5_000);
    expect(endedAt).toEqual([10_600, 16_600]);
  });
});
