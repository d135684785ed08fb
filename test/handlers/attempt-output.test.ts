import { closeSync, writeSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { AttemptOutput } from "../../src/handlers/attempt-output.js";
import { FifoPool, type PipeEnds } from "../../src/handlers/fifo-pool.js";
import { openLogFile } from "../../src/handlers/log-file.js";
import { eventually } from "../helpers/processes.js";

const cleanups: Array<() => Promise<void> | void> = [];

/** One pool for the file: each pool adds a listener for the process's exit. */
let pool: { root: string; fifos: FifoPool } | undefined;

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  pool?.fifos.dispose();
  if (pool !== undefined) await rm(pool.root, { recursive: true, force: true });
});

/** A real FIFO (non-blocking read end, as tasks get) and an AttemptOutput logging to a file. */
async function setup(options: { lateLog?: boolean } = {}): Promise<{ ends: PipeEnds; output: AttemptOutput; lines: string[]; logFile: string }> {
  const root = await mkdtemp(path.join(tmpdir(), "taskq-output-test-"));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  if (pool === undefined) {
    const poolRoot = await mkdtemp(path.join(tmpdir(), "taskq-output-test-fifos-"));
    pool = { root: poolRoot, fifos: new FifoPool(poolRoot) };
  }
  const pipes = await pool.fifos.take(1);
  if (pipes === undefined) throw new Error("this machine gives no FIFOs");
  const [ends] = pipes;
  const logFile = path.join(root, "task.log");
  const lines: string[] = [];
  const output = new AttemptOutput({
    log: openLogFile(logFile, 1),
    onLine: (_stream, text) => lines.push(text),
    onLogError: () => {},
    // As the shell handler does: what comes after the drain stopped is appended behind a header.
    ...(options.lateLog === true ? { lateLog: { path: logFile, attempt: 1 } } : {}),
  });
  return { ends, output, lines, logFile };
}

/** Holds up this thread, as a loaded machine or other tasks' work in the same turn would. */
function holdUp(ms: number): void {
  for (const until = performance.now() + ms; performance.now() < until; );
}

describe("AttemptOutput.readNow", () => {
  it("reads a pipe whose writers are gone to its end, into the log and the lines", async () => {
    const { ends, output, lines, logFile } = await setup();
    writeSync(ends.write, "one\ntwo\nthree, no newline");
    closeSync(ends.write);
    expect(output.readNow(ends.read, "output")).toBe(true);
    closeSync(ends.read);
    await output.close();
    expect(lines).toEqual(["one", "two", "three, no newline"]);
    expect(await readFile(logFile, "utf8")).toBe("one\ntwo\nthree, no newline");
  });

  it("reads a pipe filled close to its 64 KiB: every line, every byte", async () => {
    const { ends, output, lines, logFile } = await setup();
    const text = Array.from({ length: 6000 }, (_, i) => `line ${i}`).join("\n") + "\n"; // ~53 KB, under a pipe's 64 KiB
    writeSync(ends.write, text);
    closeSync(ends.write);
    expect(output.readNow(ends.read, "output")).toBe(true);
    closeSync(ends.read);
    await output.close();
    expect(lines).toHaveLength(6000);
    expect(lines.at(-1)).toBe("line 5999");
    expect(await readFile(logFile, "utf8")).toBe(text);
  });

  it("answers false while a writer still holds the pipe; a stream then reads the rest, the open line continued", async () => {
    const { ends, output, lines, logFile } = await setup();
    writeSync(ends.write, "first\nsec");
    expect(output.readNow(ends.read, "output")).toBe(false);
    expect(lines).toEqual(["first"]);
    output.attachPipe(ends.read, "output");
    writeSync(ends.write, "ond\nthird\n");
    closeSync(ends.write);
    await output.drain(5000, 20_000);
    await output.close();
    expect(lines).toEqual(["first", "second", "third"]);
    expect(await readFile(logFile, "utf8")).toBe("first\nsecond\nthird\n");
  });

  it("reads one task's pipe, then another's, before either log is written: each log keeps its own bytes", async () => {
    const first = await setup();
    const second = await setup();
    writeSync(first.ends.write, "first task's output\n");
    writeSync(second.ends.write, "SECOND TASK'S OUTPUT\n");
    for (const { ends, output } of [first, second]) {
      closeSync(ends.write);
      expect(output.readNow(ends.read, "output")).toBe(true);
      closeSync(ends.read);
    }
    await first.output.close();
    await second.output.close();
    expect(await readFile(first.logFile, "utf8")).toBe("first task's output\n");
    expect(await readFile(second.logFile, "utf8")).toBe("SECOND TASK'S OUTPUT\n");
  });

  it("an empty pipe whose writers are gone is at its end at once", async () => {
    const { ends, output, lines } = await setup();
    closeSync(ends.write);
    expect(output.readNow(ends.read, "output")).toBe(true);
    closeSync(ends.read);
    await output.close();
    expect(lines).toEqual([]);
  });
});

describe("AttemptOutput.attachPipe", () => {
  it("reads pipes of tasks running at once through one shared buffer: each log and each task's lines get exactly that task's output", async () => {
    const tasks = [await setup(), await setup()];
    const commands = ["seq 1 300000", "seq 500000 900000"];
    const exits = tasks.map(({ ends, output }, index) => {
      output.attachPipe(ends.read, "output");
      const child = spawn("sh", ["-c", commands[index] ?? ""], { stdio: ["ignore", ends.write, "ignore"] });
      closeSync(ends.write);
      return new Promise((resolve) => child.once("exit", resolve));
    });
    await Promise.all(exits);
    for (const { output } of tasks) {
      await output.drain(5000, 60_000);
      await output.close();
    }
    const expected = [seq(1, 300000), seq(500000, 900000)];
    // Compared as booleans: a diff of megabytes of text would take vitest minutes.
    for (const [index, { lines, logFile }] of tasks.entries()) {
      expect((await readFile(logFile, "utf8")) === expected[index]).toBe(true);
      expect(lines.join("\n") + "\n" === expected[index]).toBe(true);
    }
  });
});


describe("AttemptOutput.drain", () => {
  // Called in the check phase (after a setImmediate), from which the event loop runs its
  // timers before it next reads the pipes: the timing of a task reaped among other work.
  it("output already in the pipe is the attempt's, even when taskq is held up past the idle time as the drain starts", async () => {
    const { ends, output, lines, logFile } = await setup({ lateLog: true });
    output.attachPipe(ends.read, "output");
    await nextTurn();
    writeSync(ends.write, "one\ntwo\n");
    closeSync(ends.write);
    const drained = output.drain(100, 5000);
    holdUp(300);
    await drained;
    await output.close();
    expect(lines).toEqual(["one", "two"]);
    expect(await readFile(logFile, "utf8")).toBe("one\ntwo\n");
  });

  it("output already in the pipe is the attempt's, even when taskq is held up past the most the drain waits in all", async () => {
    const { ends, output, lines, logFile } = await setup({ lateLog: true });
    output.attachPipe(ends.read, "output");
    await nextTurn();
    writeSync(ends.write, "one\ntwo\n");
    closeSync(ends.write);
    const drained = output.drain(60_000, 100);
    holdUp(300);
    await drained;
    await output.close();
    expect(lines).toEqual(["one", "two"]);
    expect(await readFile(logFile, "utf8")).toBe("one\ntwo\n");
  });

  it("stops at the most it waits in all while a process outside the task keeps writing: the rest goes after the attempt", async () => {
    const { ends, output, logFile } = await setup({ lateLog: true });
    output.attachPipe(ends.read, "output");
    // A daemon that never stops writing (a few lines a millisecond), nor closes the pipe.
    const writer = spawn("sh", ["-c", "while :; do echo tick; done"], { stdio: ["ignore", ends.write, "ignore"] });
    cleanups.push(() => void writer.kill("SIGKILL"));
    closeSync(ends.write);
    const startedAt = performance.now();
    await output.drain(1000, 300);
    expect(performance.now() - startedAt).toBeLessThan(5000);
    await output.close();
    // On a line of its own, never after a blank one: "tick\n" ended the log.
    const header = "tick\n--- taskq: written after attempt 1 ended, by processes it left running ---\n";
    expect(await eventually(async () => (await readFile(logFile, "utf8")).includes(header))).toBe(true);
    writer.kill("SIGKILL");
    expect((await readFile(logFile, "utf8")).startsWith("tick\n")).toBe(true);
  });

  it("close's last line goes after the attempt's output, before what its leftovers write later", async () => {
    const { ends, output, logFile } = await setup({ lateLog: true });
    output.attachPipe(ends.read, "output");
    // The task's own output lacks its newline; a process it left running writes after it ended.
    const writer = spawn("sh", ["-c", "printf early; sleep 0.5; echo late"], { stdio: ["ignore", ends.write, "ignore"] });
    cleanups.push(() => void writer.kill("SIGKILL"));
    closeSync(ends.write);
    await output.drain(100, 5000);
    await output.close("--- taskq: attempt 1 exited with code 1 ---");
    const expected = "early\n--- taskq: attempt 1 exited with code 1 ---\n--- taskq: written after attempt 1 ended, by processes it left running ---\nlate\n";
    expect(await eventually(async () => (await readFile(logFile, "utf8")) === expected)).toBe(true);
  });
});

function seq(from: number, to: number): string {
  let text = "";
  for (let number = from; number <= to; number++) text += `${number}\n`;
  return text;
}
