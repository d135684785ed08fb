import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { fifoPool } from "../../src/handlers/fifo-pool.js";
import { activeProcessGroups, LogWriteError } from "../../src/handlers/index.js";
import { eventually, findLeftovers } from "../helpers/processes.js";
import { createHarness, fixture, rejection, type Harness } from "./harness.js";

let harness: Harness;

afterEach(async () => {
  expect(await findLeftovers(harness.runId)).toEqual([]);
  await harness.cleanup();
});

describe("shell handler: output", () => {
  it("logs binary output byte for byte", async () => {
    harness = await createHarness();
    const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, index) => index)), randomBytes(1024 * 1024)]);
    const input = path.join(harness.dir, "input.bin");
    await writeFile(input, bytes);
    await harness.run(`cat '${input}'`);
    expect((await readFile(harness.logPath())).equals(bytes)).toBe(true);
  });

  it("splits \\r\\n lines and flushes a last line without newline", async () => {
    harness = await createHarness();
    await harness.run("printf 'a\\r\\nb\\r\\n\\nc'");
    expect(harness.lines.map((line) => line.text)).toEqual(["a", "b", "", "c"]);
    expect(await readFile(harness.logPath(), "utf8")).toBe("a\r\nb\r\n\nc");
  });

  it("to a sink that shows output as written, every line as bytes, none decoded; the tail as text", async () => {
    const blocks: Buffer[] = [];
    const texts: string[] = [];
    harness = await createHarness({
      sink: { asWritten: true, line: (_taskId, _stream, text) => texts.push(text), lines: (_taskId, _stream, bytes) => blocks.push(Buffer.from(bytes)) },
    });
    // 0xE9 alone is not UTF-8; "\r\n" kept; the last line gains a "\n".
    const result = await harness.run(String.raw`printf 'caf\351 lf\ncaf\351 crlf\r\ncaf\351 eof'`);
    expect(Buffer.concat(blocks)).toEqual(Buffer.from("caf\xe9 lf\ncaf\xe9 crlf\r\ncaf\xe9 eof\n", "latin1"));
    expect(texts).toEqual([]);
    expect(result.tail).toEqual(["caf\ufffd lf", "caf\ufffd crlf", "caf\ufffd eof"]);
  });

  it("cuts a 50 MB line for display but logs all of it", async () => {
    harness = await createHarness();
    const size = 50 * 1024 * 1024;
    const result = await harness.run(`head -c ${size} /dev/zero | tr '\\0' a`);
    expect(harness.lines).toEqual([{ stream: "stdout", text: `${"a".repeat(4096)}… (${size} bytes)` }]);
    expect(result.tail).toHaveLength(1);
    expect((await stat(harness.logPath())).size).toBe(size);
  });

  it("a task's last output that waited for a slow display is the attempt's, even when taskq is held up as the display catches up", async () => {
    // The display is behind from the first line on (`taskq run | less`, a slow CI log): the
    // task's pipe is paused, and its last lines are still in it when the task exits.
    let release = (): void => {};
    let behind: Promise<void> | undefined = new Promise((resolve) => (release = resolve));
    const lines: string[] = [];
    const notes: string[] = [];
    harness = await createHarness({
      sink: { line: (_taskId, _stream, text) => lines.push(text), whenDrained: () => behind, note: (text) => notes.push(text) },
    });
    const ledger = path.join(harness.dir, "ledger");
    // Runs past the time taskq reads a short task's output in one go (10 ms) before its last lines.
    const attempt = harness.run(`echo first; sleep 0.1; ${fixture("print-lines")} 200 x-`, { env: { TASKQ_LEDGER: ledger } });
    // Its processes are gone (the ledger's "end", then no group left): the drain waits for the display.
    expect(await eventually(async () => (await readFile(ledger, "utf8").catch(() => "")).includes("end "))).toBe(true);
    expect(await eventually(() => activeProcessGroups() === 0)).toBe(true);
    // The display catches up, and taskq is held up (a loaded machine) past the drain's idle time
    // before it next reads the pipe: from the check phase, timers run before that read.
    await nextTurn();
    behind = undefined;
    release();
    for (const until = performance.now() + 400; performance.now() < until; );
    await attempt;
    const expected = ["first", ...Array.from({ length: 200 }, (_, index) => `x-${index + 1}`)];
    expect(await readFile(harness.logPath(), "utf8")).toBe(expected.map((line) => `${line}\n`).join(""));
    expect(lines).toEqual(expected);
    expect(notes).toEqual([]);
  });

  it("streams 300 MB with bounded memory", async () => {
    harness = await createHarness();
    const size = 300 * 1024 * 1024;
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    try {
      await harness.run(`${fixture("print-bytes")} ${size}`);
    } finally {
      clearInterval(sampler);
    }
    expect((await stat(harness.logPath())).size).toBe(size);
    expect(peak - baseline).toBeLessThan(100 * 1024 * 1024);
  }, 120_000);
});

describe("shell handler: log write errors", () => {
  it("fails with LOG_WRITE, starting nothing, when the log folder cannot be created", async () => {
    const probe = await createHarness();
    const notADirectory = path.join(probe.dir, "file");
    await writeFile(notADirectory, "");
    // A path under a regular file: ENOTDIR even for root, whom chmod does not stop.
    harness = await createHarness({ logDir: path.join(notADirectory, "sub") });
    const ledger = path.join(probe.dir, "ledger");
    const error = await rejection(harness.run(fixture("exit"), { env: { TASKQ_LEDGER: ledger } }));
    expect(error).toBeInstanceOf(LogWriteError);
    expect((error as LogWriteError).code).toBe("LOG_WRITE");
    expect((error as LogWriteError).message).toMatch(/^cannot write log file .*task\.log: .*ENOTDIR/);
    await expect(readFile(ledger, "utf8")).rejects.toThrow(/ENOENT/);
    await probe.cleanup();
  });

  it("with logs opened in the thread pool (a slow disk): the same logs, a removed folder made again, and a log that cannot be opened starts nothing", async () => {
    harness = await createHarness({ slowLogOpenMs: 0 }); // the first five logs on this thread (timed), the rest in the pool
    for (let i = 0; i < 5; i++) await harness.run("true", { id: `timed${i}` });
    await harness.run("echo one", { id: "one" });
    await harness.run("echo two", { id: "two" });
    expect(await readFile(harness.logPath("two"), "utf8")).toBe("two\n");
    await rm(harness.logDir, { recursive: true });
    await harness.run("echo three", { id: "three" });
    expect(await readFile(harness.logPath("three"), "utf8")).toBe("three\n");
    await mkdir(harness.logPath("four")); // a folder where the log should be: EISDIR, even for root
    const ledger = path.join(harness.dir, "ledger");
    // Pipes are opened ahead from a batch of FIFOs that mkfifo makes in the background: on a
    // busy machine the batch may not be there yet. Wait for two, so the task takes those.
    expect(await eventually(() => (fifoPool().openAhead(), fifoPool().openedAhead >= 2))).toBe(true);
    const fds = (await readdir("/proc/self/fd")).length;
    const error = await rejection(harness.run(fixture("exit"), { id: "four", env: { TASKQ_LEDGER: ledger } }));
    expect(error).toBeInstanceOf(LogWriteError);
    expect((error as LogWriteError).message).toMatch(/^cannot write log file .*four\.log: .*EISDIR/);
    await expect(readFile(ledger, "utf8")).rejects.toThrow(/ENOENT/);
    // Its two pipes came from those the FIFO pool opened ahead (four fds), and are closed.
    expect((await readdir("/proc/self/fd")).length).toBe(fds - 4);
  });

  it("fails with LOG_WRITE and kills the group when a write fails mid-run", async () => {
    harness = await createHarness();
    await mkdir(harness.logDir, { recursive: true });
    await symlink("/dev/full", harness.logPath()); // every write: ENOSPC
    const error = await rejection(harness.run(fixture("forever")));
    expect(error).toBeInstanceOf(LogWriteError);
    expect((error as LogWriteError).message).toMatch(/ENOSPC/);
    expect((error as LogWriteError).result).toMatchObject({ exitCode: null, signal: "SIGTERM" });
  });
});
