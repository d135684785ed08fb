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

  it("a task the queue started whose command the signal kept from spawning is listed as stopped before its command started, not as cut short while it ran", async () => {
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
    expect(built.cancelled).toEqual([{ id: "a", reason: "shutdown", message: "shutdown: stopped before its command started" }]);
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

  it("a task whose failed attempt printed nothing, its own timeout in the time to finish or waiting for its retry, still gives its log path", { timeout: 30_000 }, async () => {
    dir = await mkdtemp(path.join(tmpdir(), "taskq-summary-"));
    const logDir = path.join(dir, "logs");
    const shell = createShellHandler({ runId: "run", logDir, killGraceMs: 300, sink: { line: () => undefined } });
    const queue = new Queue({ concurrency: 2, handlers: { shell: async (task: ShellTask, context) => void (await shell(task, context)) }, backoff: () => 60_000 });
    const summary = new SummaryCollector(queue, { runId: "run", logDir });
    const silent = (id: string, run: string, timeoutMs?: number) =>
      queue.submit({ id, type: "shell", maxAttempts: 2, ...(timeoutMs === undefined ? {} : { timeoutMs }), payload: { id, run, env: {}, cwd: dir! } });
    silent("timesout", "sleep 30", 1_000);
    silent("waits", "exit 3");
    queue.start();
    // The signal once "waits" waits for its retry (a minute away), while "timesout" runs: its own timeout ends it in the time to finish.
    await new Promise<void>((resolve) => queue.on("retrying", () => resolve()));
    void queue.shutdown({ drain: false, deadline: 20_000 });
    expect((await queue.wait("timesout")).status).toBe("CANCELLED");
    expect((await queue.wait("waits")).status).toBe("CANCELLED");
    const built = summary.build(queue, { runId: "run", file: "f.yaml", logDir, startedAt: Date.now(), interrupted: "SIGINT", exitCode: 130 });
    const byId = Object.fromEntries(built.cancelled.map((line) => [line.id, line]));
    for (const id of ["timesout", "waits"]) {
      expect(byId[id]).toMatchObject({ logPath: path.join(logDir, `${id}.log`), logFile: `run/${id}.log`, tail: [], tailAttempt: 1 });
      expect(byId[id]).not.toHaveProperty("running");
    }
  });

  it("a dead letter whose attempts all printed nothing has no earlier attempt's lines to name (no tailAttempt), as the durable summary says it", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "taskq-summary-"));
    const logDir = path.join(dir, "logs");
    const shell = createShellHandler({ runId: "run", logDir, killGraceMs: 300, sink: { line: () => undefined } });
    const queue = new Queue({ concurrency: 1, handlers: { shell: async (task: ShellTask, context) => void (await shell(task, context)) }, backoff: () => 0 });
    const summary = new SummaryCollector(queue, { runId: "run", logDir });
    queue.submit({ id: "silent", type: "shell", maxAttempts: 2, payload: { id: "silent", run: "exit 4", env: {}, cwd: dir } });
    queue.start();
    expect((await queue.wait("silent")).status).toBe("FAILED");
    const built = summary.build(queue, { runId: "run", file: "f.yaml", logDir, startedAt: Date.now(), exitCode: 1 });
    expect(built.deadLetters).toHaveLength(1);
    expect(built.deadLetters[0]).toMatchObject({ id: "silent", attempts: 2, tail: [] });
    expect(built.deadLetters[0]).not.toHaveProperty("tailAttempt");
  });
});
