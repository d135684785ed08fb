import { afterEach, describe, expect, it, vi } from "vitest";
import { drainsLongSyncRun } from "./helpers.js";

afterEach(() => {
  vi.useRealTimers();
});

// taskq loaded while fake timers were installed (jest's or vitest's fake timers enabled globally, before the
// test files' imports): the setImmediate it found at load was a fake one, which, once the test went back to
// real timers, or faked them anew, no one ran any more.
describe("a queue loaded under fake timers", () => {
  for (const [after, then] of [
    ["back on real timers", () => vi.useRealTimers()],
    ["under fake timers faked anew, setImmediate but not performance", () => vi.useFakeTimers({ toFake: ["setImmediate", "clearImmediate"] })],
  ] as const) {
    it(`does not stall ${after}, a long run of handlers that settle without I/O`, { timeout: 60_000 }, async () => {
      const realTimeout = setTimeout;
      vi.useFakeTimers();
      vi.resetModules();
      const { Queue } = await import("../../src/engine/index.js");
      vi.useRealTimers();
      then();
      const queue = new Queue({ handlers: { sync: () => 1 } });
      queue.start();
      await drainsLongSyncRun(queue, realTimeout);
    });
  }
});

// Where there is no setImmediate (jest's jsdom environment, a bundle for a browser), taskq loaded: it threw
// "setImmediate is not defined" at import once the queue kept the one it found at load.
describe("a queue loaded where there is no setImmediate", () => {
  it("loads, and a long run of handlers that settle without I/O takes its turns on a timer", { timeout: 60_000 }, async () => {
    const realTimeout = setTimeout;
    const saved = globalThis.setImmediate;
    vi.resetModules();
    // @ts-expect-error -- none, as in such an environment
    delete globalThis.setImmediate;
    try {
      const { Queue } = await import("../../src/engine/index.js");
      const queue = new Queue({ handlers: { quick: async (n: number) => n } });
      for (let i = 0; i < 300_000; i++) queue.submit({ type: "quick", payload: i });
      let timerRanWith = -1;
      realTimeout(() => (timerRanWith = queue.stats().byStatus.SUCCEEDED), 5);
      queue.start();
      expect(await queue.shutdown({ deadline: 10 })).toEqual({ hardStopped: true });
      expect(timerRanWith).toBeGreaterThanOrEqual(0);
      expect(timerRanWith).toBeLessThan(300_000);
    } finally {
      globalThis.setImmediate = saved;
    }
  });
});
