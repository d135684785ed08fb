import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SummaryCollector } from "../../src/cli/summary.js";
import { Queue } from "../../src/engine/index.js";
import { createShellHandler, type ShellTask } from "../../src/handlers/index.js";

describe("SummaryCollector: the cancelled tasks of a run stopped by a signal", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("a task the queue started whose command the signal kept from spawning is listed as not started, not as cut short while it ran", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "taskq-summary-"));
    const logDir = path.join(dir, "logs");
    // As the CLI's signal handler sets it: from the signal on, no command spawns.
    let stopping = false;
    const shell = createShellHandler({ runId: "run", logDir, killGraceMs: 300, sink: { line: () => undefined }, shutdownSignals: { stopping: () => stopping, received: async () => false } });
    const queue = new Queue({ concurrency: 1, handlers: { shell: async (task: ShellTask, context) => void (await shell(task, context)) } });
    const summary = new SummaryCollector(queue, { runId: "run", logDir });
    // The signal comes as the queue starts the task, before its handler gets to spawn.
    queue.on("started", () => {
      stopping = true;
      void queue.shutdown({ drain: false });
    });
    queue.submit({ id: "a", type: "shell", payload: { id: "a", run: "echo ran > ran", env: {}, cwd: dir } });
    queue.start();
    expect((await queue.wait("a")).status).toBe("CANCELLED");
    const built = summary.build(queue, { runId: "run", file: "f.yaml", logDir, startedAt: Date.now(), interrupted: "SIGINT", exitCode: 130 });
    expect(built.cancelled).toEqual([{ id: "a", reason: "shutdown", message: "shutdown: not started" }]);
    expect(existsSync(path.join(dir, "ran"))).toBe(false);
  });
  it("a task whose attempt timed out and was SIGKILLed in the time to finish, not retried, says how once, with that attempt's last lines", { timeout: 30_000 }, async () => {
    dir = await mkdtemp(path.join(tmpdir(), "taskq-summary-"));
    const logDir = path.join(dir, "logs");
    const shell = createShellHandler({ runId: "run", logDir, killGraceMs: 300, sink: { line: () => undefined } });
    const queue = new Queue({ concurrency: 1, handlers: { shell: async (task: ShellTask, context) => void (await shell(task, context)) } });
    const summary = new SummaryCollector(queue, { runId: "run", logDir });
    // The signal comes as it starts: the time to finish is long, and its own timeout ends it first, by SIGKILL.
    queue.on("started", () => void queue.shutdown({ drain: false, deadline: 20_000 }));
    queue.submit({ id: "stubborn", type: "shell", maxAttempts: 2, timeoutMs: 300, payload: { id: "stubborn", run: "trap '' TERM; echo started; sleep 30", env: {}, cwd: dir } });
    queue.start();
    const r = await queue.wait("stubborn");
    expect(r.status).toBe("CANCELLED");
    const built = summary.build(queue, { runId: "run", file: "f.yaml", logDir, startedAt: Date.now(), interrupted: "SIGTERM", exitCode: 143 });
    const kill = "killed with SIGKILL after the kill grace (300ms): it did not stop on SIGTERM";
    expect(built.cancelled).toEqual([
      {
        id: "stubborn",
        reason: "shutdown",
        message: `shutdown: not retried (attempt 1 failed: timed out; ${kill})`,
        // Its own timeout ended the attempt, not the shutdown: not cut short (no `running`), its lines attempt 1's.
        logPath: path.join(logDir, "stubborn.log"),
        logFile: "run/stubborn.log",
        tail: ["started"],
        tailAttempt: 1,
      },
    ]);
  });
});
