import { randomUUID } from "node:crypto";
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { mkdtemp, open, readFile, rm, stat } from "node:fs/promises";
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

async function setUp(concurrency = 1, options: { slowLogOpenMs?: number } = {}) {
  runId = `test-${randomUUID()}`;
  dir = await mkdtemp(path.join(tmpdir(), "taskq-clock-"));
  const logDir = path.join(dir, "logs");
  const handler = createShellHandler({ runId, logDir, killGraceMs: 300, sink: { line: () => undefined }, ...options });
  const queue = new Queue({ concurrency, handlers: { shell: handler } });
  const task = (id: string, run: string, timeoutMs: number) => queue.submit({ id, type: "shell", payload: { id, run, env: {}, cwd: dir, timeoutMs } satisfies ShellTask, timeoutMs, maxAttempts: 1 });
  return { queue, task, log: (id: string) => readFile(path.join(logDir, `${id}.log`), "utf8") };
}

/**
 * Holds every thread of libuv's pool, as a slow or hung disk holds a log's open there: each thread waits in the
 * open of a FIFO with no writer, until the returned function opens their writers. The pool's size is libuv's,
 * four unless UV_THREADPOOL_SIZE says otherwise (read as this process started); a stat that does not get through
 * in 300 ms shows them all held (held, it never would: no machine's slowness makes this pass).
 */
async function holdThreadPool(): Promise<() => void> {
  const size = Math.min(1024, Math.max(1, Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? "", 10) || 4));
  const fifos: string[] = [];
  const held: Array<Promise<unknown>> = [];
  for (let i = 0; i < size; i++) {
    const fifo = path.join(dir, `hold-${i}`);
    execFileSync("mkfifo", [fifo]);
    fifos.push(fifo);
    held.push(open(fifo, "r").then((handle) => handle.close()));
  }
  const through = await Promise.race([stat(dir).then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300))]);
  const release = (): void => {
    // Each reader waiting in its open: a writer's open meets it, and both go on.
    for (const fifo of fifos) closeSync(openSync(fifo, "w"));
    void Promise.all(held);
  };
  if (through) release();
  expect(through).toBe(false);
  return release;
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
    // The task ahead named: its start line may be long out (a retry's attempt behind a task whose turn came after it).
    const message = 'timed out after 1s before its command started (taskq was still starting task "first" ahead of it)';
    expect(result).toMatchObject({ status: "FAILED", error: { message } });
    expect(await log("b")).toBe(`--- taskq: attempt 1 ${message} ---\n`);
    expect(existsSync(path.join(dir, "ran"))).toBe(false);
    // (The first may have run out before its spawn too, should its pipes have needed the thread pool: it ends either way.)
    await queue.wait("first");
    await queue.shutdown();
  });

  it("one behind several names the first three ahead of it and counts the rest", async () => {
    const { queue, task, log } = await setUp(6);
    queue.start();
    for (let i = 0; i < 5; i++) task(`t${i}`, "true", 1_000);
    task("b", "echo ran > ran", 1_000);
    busy(1_500);
    const result = await queue.wait("b");
    const message = 'timed out after 1s before its command started (taskq was still starting the 5 tasks "t0", "t1", "t2" and 2 more ahead of it)';
    expect(result).toMatchObject({ status: "FAILED", error: { message } });
    expect(await log("b")).toBe(`--- taskq: attempt 1 ${message} ---\n`);
    for (let i = 0; i < 5; i++) await queue.wait(`t${i}`);
    await queue.shutdown();
  });

  /**
   * Submits task "b" (timeout 1s) in a turn's check phase and holds the thread 1.5 s: its start waits for the next turn's,
   * after the timers' phase has ended its attempt. No task was waiting to start ahead of it. Checks its words: `why`.
   */
  async function heldLoneTask(queue: Awaited<ReturnType<typeof setUp>>["queue"], task: Awaited<ReturnType<typeof setUp>>["task"], log: Awaited<ReturnType<typeof setUp>>["log"], why: string): Promise<void> {
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        task("b", "echo ran > ran", 1_000);
        busy(1_500);
        resolve();
      }),
    );
    const result = await queue.wait("b");
    const message = `timed out after 1s before its command started (${why})`;
    expect(result).toMatchObject({ status: "FAILED", error: { message } });
    expect(await log("b")).toBe(`--- taskq: attempt 1 ${message} ---\n`);
    expect(existsSync(path.join(dir, "ran"))).toBe(false);
    await queue.shutdown();
  }

  it("a lone task that ran out before its command could start says taskq was setting up the run, not that tasks were ahead of it", async () => {
    const { queue, task, log } = await setUp(2);
    queue.start();
    // As the run's own setting up holds a run's first task.
    await heldLoneTask(queue, task, log, "taskq was still setting up the run");
  });

  it("a lone task held so once other commands ran says taskq was busy with other work, not that tasks were ahead of it", async () => {
    const { queue, task, log } = await setUp(2);
    queue.start();
    task("before", "true", 10_000);
    await expect(queue.wait("before")).resolves.toMatchObject({ status: "SUCCEEDED" });
    await heldLoneTask(queue, task, log, "taskq was busy with other work");
  });

  it("one whose log took most of its timeout to open says so, not that other tasks held it up", async () => {
    // Logs opened in the thread pool once five are timed on this thread (as where a disk is slow: see SLOW_OPEN_MS).
    const { queue, task, log } = await setUp(1, { slowLogOpenMs: 0 });
    queue.start();
    for (let i = 0; i < 5; i++) {
      task(`timed${i}`, "true", 10_000);
      await expect(queue.wait(`timed${i}`)).resolves.toMatchObject({ status: "SUCCEEDED" });
    }
    // The pool held as a hung disk holds it: the log's open waits there for 1.5 s of a 1 s timeout (said as 1.2 s or more: it began a turn or so after the submit), alone to run.
    const release = await holdThreadPool();
    task("b", "echo ran > ran", 1_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    release();
    const result = await queue.wait("b");
    expect(result).toMatchObject({ status: "FAILED", error: { message: expect.stringMatching(/^timed out after 1s before its command started \(opening its log file took (1\.[2-9]|[2-9](\.\d)?)s\)$/) } });
    const message = (result.error as { message: string }).message;
    expect(message).not.toContain("ahead of it");
    expect(await log("b")).toBe(`--- taskq: attempt 1 ${message} ---\n`);
    expect(existsSync(path.join(dir, "ran"))).toBe(false);
    await queue.shutdown();
  });
});
