import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { activeProcessGroups, killAllProcessGroups, TaskFailedError } from "../../src/handlers/index.js";
import { eventually, findLeftovers, isAlive } from "../helpers/processes.js";
import { abortWith, createHarness, fixture, rejection, type Harness } from "./harness.js";

let harness: Harness;

afterEach(async () => {
  expect(await findLeftovers(harness.runId)).toEqual([]);
  expect(activeProcessGroups()).toBe(0);
  await harness.cleanup();
});

/** Out of its group, an escaped process is not taskq's to kill: a test that makes one cleans it up, pass or fail. */
async function killEscaped(runId: string): Promise<void> {
  for (const pid of await findLeftovers(runId)) process.kill(pid, "SIGKILL");
  expect(await eventually(async () => (await findLeftovers(runId)).length === 0)).toBe(true);
}

/** Starts `command`, aborts it once `readyLine` is printed (or after a moment), returns the failure. */
async function abortedFailure(
  command: string,
  code: "TIMEOUT" | "CANCELLED" | "SHUTDOWN",
  options: { readyLine?: string; timeoutMs?: number } = {},
): Promise<{ error: TaskFailedError; settledAfterAbortMs: number }> {
  const controller = new AbortController();
  const attempt = rejection(harness.run(command, { signal: controller.signal, timeoutMs: options.timeoutMs }));
  if (options.readyLine === undefined) await delay(200);
  else await harness.waitForLine(options.readyLine);
  const abortedAt = performance.now();
  abortWith(controller, code);
  const error = await attempt;
  expect(error).toBeInstanceOf(TaskFailedError);
  return { error: error as TaskFailedError, settledAfterAbortMs: performance.now() - abortedAt };
}

describe("shell handler: timeout and cancel", () => {
  it("times out `sleep 1000`: the whole group gets SIGTERM", async () => {
    harness = await createHarness();
    const { error } = await abortedFailure("sleep 1000", "TIMEOUT", { timeoutMs: 300_000 });
    expect(error.message).toBe("timed out after 5m");
    expect(error.result).toMatchObject({ timedOut: true, cancelled: false, exitCode: null, signal: "SIGTERM" });
    expect(error.permanent).toBe(false);
  });

  it("times out `sleep 1000 & sleep 1000`: both sleeps are gone", async () => {
    harness = await createHarness();
    const { error } = await abortedFailure("sleep 1000 & sleep 1000", "TIMEOUT", { timeoutMs: 1500 });
    expect(error.message).toBe("timed out after 1.5s");
    expect(error.result.timedOut).toBe(true);
  });

  it("cancels: result.cancelled, message 'cancelled', never retried", async () => {
    harness = await createHarness();
    const { error } = await abortedFailure(fixture("forever"), "CANCELLED", { readyLine: "ready" });
    expect(error.message).toBe("cancelled");
    expect(error.result).toMatchObject({ cancelled: true, timedOut: false });
    expect(error.permanent).toBe(true);
  });

  it("treats a shutdown abort as a cancel", async () => {
    harness = await createHarness();
    const { error } = await abortedFailure(fixture("forever"), "SHUTDOWN", { readyLine: "ready" });
    expect(error.result).toMatchObject({ cancelled: true, timedOut: false });
  });

  it("SIGKILLs a task that ignores SIGTERM, after the grace period", async () => {
    harness = await createHarness({ killGraceMs: 400 });
    // exec: the fixture replaces the shell, so its own death is what the result reports.
    const { error, settledAfterAbortMs } = await abortedFailure(`exec ${fixture("ignore-sigterm")}`, "CANCELLED", { readyLine: "ready" });
    expect(error.result.signal).toBe("SIGKILL");
    expect(error.result.cancelled).toBe(true);
    expect(settledAfterAbortMs).toBeGreaterThanOrEqual(350);
  });

  it("SIGKILLs the rest of the group when only the shell dies on SIGTERM", async () => {
    harness = await createHarness({ killGraceMs: 300 });
    const { error, settledAfterAbortMs } = await abortedFailure(fixture("ignore-sigterm"), "CANCELLED", { readyLine: "ready" });
    expect(error.result).toMatchObject({ signal: "SIGTERM", cancelled: true });
    expect(settledAfterAbortMs).toBeGreaterThanOrEqual(250);
  });

  it("kills a grandchild that ignores SIGTERM", async () => {
    harness = await createHarness({ killGraceMs: 300 });
    const ledger = path.join(harness.dir, "ledger");
    const controller = new AbortController();
    const attempt = rejection(harness.run(fixture("spawn-grandchild"), { signal: controller.signal, env: { TASKQ_LEDGER: ledger } }));
    await harness.waitForLine("ready");
    const grandchild = Number((await readFile(ledger, "utf8")).match(/^grandchild task 1 (\d+)$/m)?.[1]);
    expect(await isAlive(grandchild)).toBe(true);
    abortWith(controller, "CANCELLED");
    const error = (await attempt) as TaskFailedError;
    expect(error.result.cancelled).toBe(true);
    expect(await isAlive(grandchild)).toBe(false);
  });

  it("ignores an abort that comes after the attempt ended", async () => {
    harness = await createHarness();
    const controller = new AbortController();
    const result = await harness.run("echo done", { signal: controller.signal });
    abortWith(controller, "CANCELLED");
    expect(result).toMatchObject({ exitCode: 0, cancelled: false });
  });
});

describe("shell handler: leftovers after the shell exits", () => {
  it("settles when the shell exits although a background child holds stdout", async () => {
    harness = await createHarness();
    const startedAt = performance.now();
    const result = await harness.run("sleep 1000 & echo started");
    expect(result).toMatchObject({ exitCode: 0, signal: null });
    expect(result.tail).toEqual(["started"]);
    expect(performance.now() - startedAt).toBeLessThan(20_000);
  });

  it("SIGKILLs a background child that ignores SIGTERM and holds stdout", async () => {
    harness = await createHarness({ killGraceMs: 200 });
    const result = await harness.run("trap '' TERM; sleep 1000 & trap - TERM; echo started");
    expect(result).toMatchObject({ exitCode: 0, tail: ["started"] });
  });

  it("keeps the output a background child writes before it is stopped", async () => {
    harness = await createHarness();
    await harness.run("(sleep 0.2; echo late) & echo early; wait");
    expect(harness.lines.map((line) => line.text)).toEqual(["early", "late"]);
  });

  it("keeps what a background job writes while it is being stopped, far beyond a pipe's 64 KiB", async () => {
    // The shell exits at once; its job prints ~170 KB in its TERM trap. Nothing may be lost,
    // and it must not wait for SIGKILL on a full pipe.
    harness = await createHarness({ killGraceMs: 20_000 });
    const startedAt = performance.now();
    // The shell exits once its job has its trap and its sleep (a file says so): a TERM sooner would
    // find no trap, or come before the sleep and leave it for the SIGKILL.
    await harness.run("f=$(mktemp); (trap 'seq 30000; exit 0' TERM; sleep 1000 & echo > $f; wait) & until [ -s $f ]; do sleep 0.01; done; rm -f $f; exit 0");
    expect(performance.now() - startedAt).toBeLessThan(15_000);
    const lines = harness.lines.map((line) => line.text);
    expect(lines).toHaveLength(30_000);
    expect(lines.at(-1)).toBe("30000");
    expect((await readFile(harness.logPath(), "utf8")).split("\n")).toHaveLength(30_001);
  });

  it("reads what a process that left the group wrote, and stops waiting for the pipe it still holds", async () => {
    harness = await createHarness();
    try {
      const startedAt = performance.now();
      const result = await harness.run("setsid sh -c 'echo escaped; exec sleep 1000' & sleep 0.1; echo done");
      expect(performance.now() - startedAt).toBeLessThan(15_000);
      expect(result).toMatchObject({ exitCode: 0, tail: ["escaped", "done"] });
      expect(await readFile(harness.logPath(), "utf8")).toBe("escaped\ndone\n");
    } finally {
      await killEscaped(harness.runId);
    }
  });

  it("stops a job it left in a group of its own whose environment is larger than one read of it (TASKQ_PID past 100 KB)", async () => {
    // coreutils timeout puts itself and its sleep in a group of their own: only their TASKQ_PID, read from /proc, marks them as the task's.
    harness = await createHarness({ killGraceMs: 200 });
    const result = await harness.run(
      'big=$(head -c 100000 /dev/zero | tr "\\0" x); env -i "BIG=$big" "TASKQ_PID=$TASKQ_PID" "TASKQ_RUN_ID=$TASKQ_RUN_ID" timeout 1000 sleep 1000 & echo started',
    );
    expect(result).toMatchObject({ exitCode: 0, tail: ["started"] });
    // The sweep of ended tasks' sessions, a second after the shell exited, finds it and stops it.
    expect(await eventually(async () => (await findLeftovers(harness.runId)).length === 0, 15_000)).toBe(true);
  });

  it("a short task whose escaped child holds the pipe: its output, then the attempt ends", async () => {
    harness = await createHarness();
    try {
      const result = await harness.run("setsid sleep 1000 & echo quick");
      expect(result).toMatchObject({ exitCode: 0, tail: ["quick"] });
    } finally {
      await killEscaped(harness.runId);
    }
  });
});

describe("process group registry", () => {
  it("counts live groups and SIGKILLs them all synchronously", async () => {
    harness = await createHarness();
    const attempt = rejection(harness.run(fixture("forever")));
    await harness.waitForLine("ready");
    expect(activeProcessGroups()).toBe(1);
    killAllProcessGroups("SIGKILL");
    const error = (await attempt) as TaskFailedError;
    expect(error.message).toBe("killed by SIGKILL");
    expect(error.result).toMatchObject({ signal: "SIGKILL", cancelled: false });
  });
});
