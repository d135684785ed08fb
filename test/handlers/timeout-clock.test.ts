import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Queue } from "../../src/engine/index.js";
import { createShellHandler, type ShellTask } from "../../src/handlers/index.js";
import { findLeftovers } from "../helpers/processes.js";

/**
 * The real engine with the real shell handler, and a main thread kept busy between the dispatch
 * of an attempt and its spawn, as a run of hundreds of tasks started at once keeps it (each
 * spawn is a fork on that thread: at -j 400, the last waits a second or more for its turn).
 */
let dir: string;
let runId: string;

afterEach(async () => {
  expect(await findLeftovers(runId)).toEqual([]);
  await rm(dir, { recursive: true, force: true });
});

async function setUp(concurrency = 1) {
  runId = `test-${randomUUID()}`;
  dir = await mkdtemp(path.join(tmpdir(), "taskq-clock-"));
  const logDir = path.join(dir, "logs");
  const handler = createShellHandler({ runId, logDir, killGraceMs: 300, sink: { line: () => undefined } });
  const queue = new Queue({ concurrency, handlers: { shell: handler } });
  const task = (id: string, run: string, timeoutMs: number) => queue.submit({ id, type: "shell", payload: { id, run, env: {}, cwd: dir, timeoutMs } satisfies ShellTask, timeoutMs, maxAttempts: 1 });
  return { queue, task, log: (id: string) => readFile(path.join(logDir, `${id}.log`), "utf8") };
}

/** Holds this thread for `ms`, as other tasks' spawns do: no timer, no I/O runs meanwhile. */
function busy(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe("a task's timeout and its turn to start", () => {
  it("counts from the command's spawn: the wait for its turn to start does not count against it", async () => {
    const { queue, task } = await setUp();
    queue.start();
    // Dispatched now, its spawn waits for the next turn of the event loop: held 2.5 s of a 3 s timeout.
    task("a", "sleep 1; echo done > done", 3_000);
    busy(2_500);
    // Counted from the dispatch, the timeout would end it 500 ms into its 1 s sleep; from the spawn, it has 3 s.
    await expect(queue.wait("a")).resolves.toMatchObject({ status: "SUCCEEDED" });
    expect(existsSync(path.join(dir, "done"))).toBe(true);
    await queue.shutdown();
  });

  it("one that ran out before the command could start says so, and the command never runs", async () => {
    const { queue, task, log } = await setUp(2);
    queue.start();
    // Two dispatched at once: the first spawns in the next turn, and its clock starts again; the second's
    // turn comes one turn later, after the timers' phase has ended its attempt (held past its timeout).
    task("first", "true", 1_000);
    task("b", "echo ran > ran", 1_000);
    busy(1_500);
    const result = await queue.wait("b");
    const message = "timed out after 1s before its command started (taskq was still starting the tasks ahead of it)";
    expect(result).toMatchObject({ status: "FAILED", error: { message } });
    expect(await log("b")).toBe(`--- taskq: attempt 1 ${message} ---\n`);
    expect(existsSync(path.join(dir, "ran"))).toBe(false);
    // (The first may have run out before its spawn too, should its pipes have needed the thread pool: it ends either way.)
    await queue.wait("first");
    await queue.shutdown();
  });
});
