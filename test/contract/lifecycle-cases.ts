import { describe, expect, it } from "vitest";
import { PermanentError } from "../../src/errors.js";
import type { ContractAdapter, ContractHandler, Harness } from "./adapter.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Rejects with the signal's reason once it aborts: a handler that honours its signal. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
  });
}

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(5);
  }
}

/**
 * The lifecycle cases shared by every backend: same tasks, same handlers,
 * same expected results. A case that only one backend can honour belongs in
 * that backend's own tests, not here.
 */
export function describeLifecycleContract(adapter: ContractAdapter): void {
  async function withHarness(concurrency: number, handler: ContractHandler, body: (harness: Harness) => Promise<void>): Promise<void> {
    const harness = await adapter.create({ concurrency, handler });
    try {
      await body(harness);
    } finally {
      await harness.close();
    }
  }

  describe(`lifecycle contract: ${adapter.name}`, () => {
    it("runs ready tasks by priority, then in submission order (concurrency 1)", async () => {
      const order: string[] = [];
      await withHarness(1, async (id) => void order.push(id), async (harness) => {
        await harness.submit([
          { id: "low-1", priority: "low" },
          { id: "normal-1" },
          { id: "high-1", priority: "high" },
          { id: "normal-2", priority: "normal" },
          { id: "critical-1", priority: "critical" },
          { id: "high-2", priority: "high" },
          { id: "low-2", priority: "low" },
        ]);
        await harness.start();
        await harness.settle();
      });
      expect(order).toEqual(["critical-1", "high-1", "high-2", "normal-1", "normal-2", "low-1", "low-2"]);
    });

    it("retries a failed attempt, then succeeds", async () => {
      const attempts: number[] = [];
      await withHarness(2, async (_, { attempt }) => {
        attempts.push(attempt);
        if (attempt < 3) throw new Error(`attempt ${attempt} fails`);
      }, async (harness) => {
        await harness.submit([{ id: "flaky", maxAttempts: 3 }]);
        await harness.start();
        expect(await harness.settle()).toEqual({ flaky: { status: "succeeded", attempts: 3 } });
        expect(await harness.deadLetters()).toEqual([]);
      });
      expect(attempts).toEqual([1, 2, 3]);
    });

    it("ends FAILED, as a dead letter, once its attempts are exhausted", async () => {
      let calls = 0;
      await withHarness(2, async () => {
        calls++;
        throw new Error("always fails");
      }, async (harness) => {
        await harness.submit([{ id: "doomed", maxAttempts: 2 }]);
        await harness.start();
        expect(await harness.settle()).toEqual({ doomed: { status: "failed", attempts: 2 } });
        expect(await harness.deadLetters()).toEqual(["doomed"]);
      });
      expect(calls).toBe(2);
    });

    it("never retries a permanent failure", async () => {
      let calls = 0;
      await withHarness(2, async () => {
        calls++;
        throw new PermanentError("retrying cannot fix this");
      }, async (harness) => {
        await harness.submit([{ id: "broken", maxAttempts: 3 }]);
        await harness.start();
        expect(await harness.settle()).toEqual({ broken: { status: "failed", attempts: 1 } });
        expect(await harness.deadLetters()).toEqual(["broken"]);
      });
      expect(calls).toBe(1);
    });

    it("runs a dependency chain in order, each task after the previous one ended", async () => {
      const log: string[] = [];
      await withHarness(4, async (id) => {
        log.push(`start ${id}`);
        await sleep(20);
        log.push(`end ${id}`);
      }, async (harness) => {
        await harness.submit([{ id: "a" }, { id: "b", dependsOn: ["a"] }, { id: "c", dependsOn: ["b"] }]);
        await harness.start();
        const results = await harness.settle();
        expect(Object.values(results).map((result) => result.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
      });
      expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    });

    it("cancels the dependents of a failed task, transitively, naming the task that started the cascade and the one it came through", async () => {
      const ran: string[] = [];
      await withHarness(2, async (id) => {
        ran.push(id);
        if (id === "root") throw new PermanentError("root breaks");
        await sleep(20);
      }, async (harness) => {
        await harness.submit([
          { id: "root" },
          { id: "other" },
          { id: "mid", dependsOn: ["root"] },
          { id: "leaf", dependsOn: ["mid"] },
          { id: "join", dependsOn: ["leaf", "other"] },
        ]);
        await harness.start();
        expect(await harness.settle()).toEqual({
          root: { status: "failed", attempts: 1 },
          other: { status: "succeeded", attempts: 1 },
          mid: { status: "cancelled", attempts: 0, cancelledBy: "root", reason: 'dependency "root" failed' },
          leaf: { status: "cancelled", attempts: 0, cancelledBy: "root", reason: 'dependency "root" failed (via "mid")' },
          join: { status: "cancelled", attempts: 0, cancelledBy: "root", reason: 'dependency "root" failed (via "leaf")' },
        });
        expect(await harness.deadLetters()).toEqual(["root"]);
      });
      expect(ran.sort()).toEqual(["other", "root"]);
    });

    it("a task two branches of a cascade reach names the one that came to it first, each task passing it on to its dependents in turn, the last first", async () => {
      await withHarness(1, async (id) => {
        if (id === "root") throw new PermanentError("root breaks");
      }, async (harness) => {
        // root passes the cascade to a and b; b's goes on first, through c, and reaches y before a's.
        await harness.submit([
          { id: "root" },
          { id: "a", dependsOn: ["root"] },
          { id: "b", dependsOn: ["root"] },
          { id: "c", dependsOn: ["b"] },
          { id: "y", dependsOn: ["a", "c"] },
          { id: "z", dependsOn: ["y", "a"] },
        ]);
        await harness.start();
        expect(await harness.settle()).toEqual({
          root: { status: "failed", attempts: 1 },
          a: { status: "cancelled", attempts: 0, cancelledBy: "root", reason: 'dependency "root" failed' },
          b: { status: "cancelled", attempts: 0, cancelledBy: "root", reason: 'dependency "root" failed' },
          c: { status: "cancelled", attempts: 0, cancelledBy: "root", reason: 'dependency "root" failed (via "b")' },
          y: { status: "cancelled", attempts: 0, cancelledBy: "root", reason: 'dependency "root" failed (via "c")' },
          z: { status: "cancelled", attempts: 0, cancelledBy: "root", reason: 'dependency "root" failed (via "y")' },
        });
      });
    });

    it("cancels a queued task without running it; its dependents are cancelled because of it", async () => {
      const ran: string[] = [];
      let openGate = (): void => undefined;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      await withHarness(1, async (id) => {
        ran.push(id);
        if (id === "gate") await gate;
      }, async (harness) => {
        await harness.submit([{ id: "gate", priority: "high" }, { id: "queued" }, { id: "after", dependsOn: ["queued"] }]);
        await harness.start();
        await waitFor(() => ran.includes("gate"));
        await harness.cancel("queued");
        openGate();
        expect(await harness.settle()).toEqual({
          gate: { status: "succeeded", attempts: 1 },
          queued: { status: "cancelled", attempts: 0 },
          after: { status: "cancelled", attempts: 0, cancelledBy: "queued", reason: 'dependency "queued" was cancelled' },
        });
        expect(await harness.deadLetters()).toEqual([]);
      });
      expect(ran).toEqual(["gate"]);
    });

    it("is idempotent on task id: submitting again, before or after the run, runs nothing twice", async () => {
      const ran: string[] = [];
      await withHarness(2, async (id) => void ran.push(id), async (harness) => {
        const tasks = [{ id: "a" }, { id: "b", dependsOn: ["a"] }];
        await harness.submit(tasks);
        await harness.submit(tasks);
        await harness.start();
        const expected = { a: { status: "succeeded", attempts: 1 }, b: { status: "succeeded", attempts: 1 } };
        expect(await harness.settle()).toEqual(expected);
        // With a task after them: had the submission queued a or b again, they would run before it.
        await harness.submit([...tasks, { id: "probe", priority: "low" }]);
        expect(await harness.settle()).toEqual({ ...expected, probe: { status: "succeeded", attempts: 1 } });
      });
      expect(ran).toEqual(["a", "b", "probe"]);
    });

    it("does not start a delayed task before its runAt", async () => {
      const startedAt = new Map<string, number>();
      const submittedAt = Date.now();
      await withHarness(2, async (id) => void startedAt.set(id, Date.now()), async (harness) => {
        await harness.submit([{ id: "later", delayMs: 300 }, { id: "now" }]);
        await harness.start();
        await harness.settle();
      });
      const later = startedAt.get("later") ?? 0;
      // A few ms of slack: the store converts runAt through the database clock's microseconds.
      expect(later - submittedAt).toBeGreaterThanOrEqual(295);
      expect(later - submittedAt).toBeLessThan(5_000);
      expect(startedAt.get("now")).toBeLessThan(later);
    });

    it("aborts an attempt at its timeout (reason TIMEOUT) and retries it", async () => {
      const reasons: unknown[] = [];
      let firstStarted = 0;
      let firstAborted = 0;
      await withHarness(2, async (_, { attempt, signal }) => {
        if (attempt > 1) return;
        firstStarted = Date.now();
        try {
          await untilAborted(signal);
        } finally {
          firstAborted = Date.now();
          reasons.push((signal.reason as { code?: unknown } | undefined)?.code);
        }
      }, async (harness) => {
        await harness.submit([{ id: "slow", maxAttempts: 2, timeoutMs: 150 }]);
        await harness.start();
        expect(await harness.settle()).toEqual({ slow: { status: "succeeded", attempts: 2 } });
      });
      expect(reasons).toEqual(["TIMEOUT"]);
      expect(firstAborted - firstStarted).toBeGreaterThanOrEqual(145);
    });
  });
}
