import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { attemptLine, closeLogFile, LogFile, openLogFile } from "../../src/handlers/log-file.js";

/**
 * The clock the log times its writes with: real, stopped (every write quick), slow (each reading 10 ms past the last: a slow
 * disk), or third (every third write, whose start and end are two readings, takes 6 ms: a disk slow now and then).
 */
const clock = vi.hoisted((): { mode: "real" | "stopped" | "slow" | "third"; skew: number; reads: number } => ({ mode: "real", skew: 0, reads: 0 }));
vi.mock("../../src/monotonic.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/monotonic.js")>();
  return {
    monotonicMs: (): number => {
      if (clock.mode === "stopped") return 0;
      if (clock.mode === "slow") clock.skew += 10;
      // Only the skew, no real time: a write held up on a loaded machine must not tip the average sooner.
      if (clock.mode === "third") return (clock.skew += ++clock.reads % 6 === 0 ? 6 : 0);
      return real.monotonicMs() + clock.skew;
    },
  };
});

let dir: string | undefined;

afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  clock.mode = "real";
  clock.reads = 0;
});

function scratch(): string {
  dir = mkdtempSync(path.join(tmpdir(), "taskq-log-file-"));
  return dir;
}

describe("LogFile", () => {
  it("writes a loud task's batches as they fill, on this thread while writes are quick: every byte in order, never held", async () => {
    clock.mode = "stopped"; // however loaded the machine, every write is quick
    const file = path.join(scratch(), "quick.log");
    const log = openLogFile(file, 1);
    const chunks = Array.from({ length: 40 }, () => randomBytes(64 * 1024)); // 2.5 MiB, past the 1 MiB mark
    for (const [index, chunk] of chunks.entries()) {
      expect(log.write(chunk)).toBe(true);
      // A full batch (256 KiB: four chunks) is written at once; the file has it before write() returns.
      if (index % 4 === 3) expect(readFileSync(file).length).toBe((index + 1) * 64 * 1024);
    }
    expect(log.writableLength).toBe(0);
    await closeLogFile(log);
    expect(readFileSync(file).equals(Buffer.concat(chunks))).toBe(true);
  });

  it("on a slow disk, writes through the thread pool once its writes average over 1 ms: every byte in order, pushes back past its high-water mark and says when to go on", async () => {
    clock.mode = "slow"; // each write seems to take 10 ms
    const file = path.join(scratch(), "a.log");
    const log = openLogFile(file, 1);
    const chunks = Array.from({ length: 40 }, () => randomBytes(64 * 1024)); // 2.5 MiB, past the 1 MiB mark
    let refused = 0;
    for (const chunk of chunks) if (!log.write(chunk)) refused++;
    expect(refused).toBeGreaterThan(0);
    // One batch of four chunks was written on this thread, found slow; the rest waits for the pool.
    expect(log.writableLength).toBe((40 - 4) * 64 * 1024);
    await new Promise<void>((resolve) => log.once("drain", resolve));
    expect(log.writableLength).toBeLessThan(log.writableHighWaterMark);
    await closeLogFile(log);
    expect(readFileSync(file).equals(Buffer.concat(chunks))).toBe(true);
  });

  it("on a disk slow one write in three, writes through the thread pool too: the main thread does not wait on it for good", async () => {
    clock.mode = "third";
    const file = path.join(scratch(), "third.log");
    const log = openLogFile(file, 1);
    const chunks = Array.from({ length: 40 }, () => randomBytes(64 * 1024));
    for (const chunk of chunks) log.write(chunk);
    // Six batches on this thread (two of them slow) put the average over 1 ms; the other four wait for the pool.
    expect(log.writableLength).toBe((40 - 24) * 64 * 1024);
    await closeLogFile(log);
    expect(readFileSync(file).equals(Buffer.concat(chunks))).toBe(true);
  });

  it("calls each write's callback once its bytes are written", async () => {
    const file = path.join(scratch(), "b.log");
    const log = openLogFile(file, 1);
    const written: number[] = [];
    for (let index = 0; index < 5; index++) log.write(Buffer.from(`${index}\n`), () => written.push(readFileSync(file).length));
    await closeLogFile(log);
    expect(written).toHaveLength(5);
    expect(written.at(-1)).toBe(10);
    expect(readFileSync(file, "utf8")).toBe("0\n1\n2\n3\n4\n");
  });

  it("writes a small write by itself soon, so the log can be followed while the task runs", async () => {
    const file = path.join(scratch(), "s.log");
    const log = openLogFile(file, 1);
    log.write("one line\n");
    // Within two seconds (its batch waits 2 ms: a loaded machine's margin besides), not once the task ends.
    const deadline = Date.now() + 2000;
    while (readFileSync(file, "utf8") === "" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(readFileSync(file, "utf8")).toBe("one line\n");
    log.write("and more\n");
    await closeLogFile(log); // does not wait for a fuller batch
    expect(readFileSync(file, "utf8")).toBe("one line\nand more\n");
  });

  it("writes a small last batch at once when finished (no thread pool round trip), a large one as before", async () => {
    const folder = scratch();
    const small = openLogFile(path.join(folder, "small.log"), 1);
    small.write("last words\n");
    const done = small.finished();
    expect(readFileSync(path.join(folder, "small.log"), "utf8")).toBe("last words\n"); // before finished() resolves
    await done;
    small.close();
    const large = openLogFile(path.join(folder, "large.log"), 1);
    const bytes = randomBytes(100 * 1024); // over 64 KiB, under the 256 KiB that starts a write at once
    large.write(bytes);
    await large.finished(); // through the thread pool: it may be written at any moment from now
    large.close();
    expect(readFileSync(path.join(folder, "large.log")).equals(bytes)).toBe(true);
  });

  // The slabs shared between logs are used again only once no write can still read them: with every write on this thread, and through the pool.
  for (const [where, mode] of [["written on this thread", "stopped"], ["written through the thread pool: a slow disk", "slow"]] as const) {
    it(`copies a lent chunk (the caller reads into the same buffer again): every byte, in order, with write()s between (${where})`, async () => {
      clock.mode = mode;
      const file = path.join(scratch(), "lent.log");
      const log = openLogFile(file, 1);
      const lent = Buffer.alloc(64 * 1024);
      const expected: Buffer[] = [];
      // 2.2 MiB through many slabs, past the high-water mark, while writes are in flight.
      for (let index = 0; index < 36; index++) {
        const size = index % 5 === 4 ? 1000 + index : lent.length;
        randomBytes(size).copy(lent);
        log.writeCopy(lent.subarray(0, size));
        expected.push(Buffer.from(lent.subarray(0, size)));
        if (index % 7 === 3) {
          const own = Buffer.from(`-- write ${index} --\n`);
          log.write(own);
          expected.push(own);
        }
        if (index % 9 === 8) await new Promise((resolve) => setImmediate(resolve));
      }
      await closeLogFile(log);
      expect(readFileSync(file).equals(Buffer.concat(expected))).toBe(true);
    });

    it(`writes the bytes copied while a write was in flight, though nothing comes after them (${where})`, async () => {
      clock.mode = mode;
      const file = path.join(scratch(), "tail.log");
      const log = openLogFile(file, 1);
      const lent = Buffer.alloc(64 * 1024);
      const expected: Buffer[] = [];
      for (const size of [lent.length, lent.length, lent.length, lent.length, 1000]) {
        // The fourth fills a batch and starts its write; the last 1,000 bytes start a slab of their own meanwhile.
        randomBytes(size).copy(lent);
        log.writeCopy(lent.subarray(0, size));
        expected.push(Buffer.from(lent.subarray(0, size)));
      }
      await closeLogFile(log);
      expect(readFileSync(file).equals(Buffer.concat(expected))).toBe(true);
    });

    it(`logs copying lent chunks at once never write each other's bytes (they share written slabs) (${where})`, async () => {
      clock.mode = mode;
      const folder = scratch();
      const logs = [0, 1, 2].map((index) => openLogFile(path.join(folder, `${index}.log`), 1));
      const expected: Buffer[][] = [[], [], []];
      const lent = Buffer.alloc(48 * 1024);
      for (let round = 0; round < 40; round++) {
        for (const [index, log] of logs.entries()) {
          if (round >= 20 + index * 8) continue; // each log ends at its own time: the others keep its slabs
          randomBytes(lent.length).copy(lent);
          log.writeCopy(lent);
          expected[index]?.push(Buffer.from(lent));
        }
        if (round % 3 === 2) await new Promise((resolve) => setImmediate(resolve));
        for (const [index, log] of logs.entries()) if (round === 20 + index * 8) await closeLogFile(log);
      }
      for (const [index] of logs.entries()) expect(readFileSync(path.join(folder, `${index}.log`)).equals(Buffer.concat(expected[index] ?? []))).toBe(true);
    });
  }

  it("a log whose bytes are all written holds no slab: a hundred open logs that each printed 64-96 KiB share one", async () => {
    const folder = scratch();
    const lent = Buffer.alloc(96 * 1024, "x");
    // 64 KiB is written on this thread when finished; 96 KiB through the thread pool.
    const sizeOf = (index: number): number => (index % 2 === 0 ? 64 : 96) * 1024;
    const logs: LogFile[] = [];
    const before = process.memoryUsage().arrayBuffers;
    for (let index = 0; index < 100; index++) {
      const log = openLogFile(path.join(folder, `${index}.log`), 1);
      logs.push(log);
      log.writeCopy(lent.subarray(0, sizeOf(index)));
      await log.finished(); // written, the task still running
    }
    // Held, each of them would be 256 KiB: 25 MiB in all.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(4 * 1024 * 1024);
    for (const log of logs) log.close();
    for (let index = 0; index < 100; index++) expect(readFileSync(path.join(folder, `${index}.log`)).equals(lent.subarray(0, sizeOf(index)))).toBe(true);
  });

  it.skipIf(!existsSync("/dev/full"))("a small last batch that cannot be written (/dev/full) fails the log as an asynchronous write does", async () => {
    const log = new LogFile(openSync("/dev/full", "w"));
    const errors: Error[] = [];
    log.on("error", (error: Error) => errors.push(error));
    const callback = new Promise<Error | null | undefined>((resolve) => log.write("last words\n", resolve));
    await closeLogFile(log);
    expect(((await callback) as NodeJS.ErrnoException | undefined)?.code).toBe("ENOSPC");
    expect(errors.map((error) => (error as NodeJS.ErrnoException).code)).toEqual(["ENOSPC"]);
    expect(log.errored?.code).toBe("ENOSPC");
  });

  it("never writes bytes it dropped at close into a file opened after it", async () => {
    const folder = scratch();
    const log = openLogFile(path.join(folder, "closed.log"), 1);
    log.write("dropped\n");
    log.close();
    const next = openSync(path.join(folder, "next.log"), "w"); // may reuse the closed fd
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readFileSync(path.join(folder, "next.log"), "utf8")).toBe("");
    closeSync(next);
  });

  it("takes an empty write as done, not as a write that never ends", async () => {
    const file = path.join(scratch(), "e.log");
    const log = openLogFile(file, 1);
    const result = await new Promise<Error | null | undefined>((resolve) => log.write(Buffer.alloc(0), resolve));
    expect(result).toBeNull();
    log.write("after\n");
    await closeLogFile(log);
    expect(log.errored).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe("after\n");
  });

  it("appends a later attempt after a marker line, behind a newline only where the log lacks one", async () => {
    const file = path.join(scratch(), "c.log");
    const first = openLogFile(file, 1);
    first.write("one\n");
    await closeLogFile(first);
    const second = openLogFile(file, 2);
    second.write("two, no newline");
    await closeLogFile(second);
    const third = openLogFile(file, 3);
    await closeLogFile(third);
    expect(readFileSync(file, "utf8")).toBe("one\n--- taskq: attempt 2 ---\ntwo, no newline\n--- taskq: attempt 3 ---\n");
    // A log found empty (its folder made again) starts with the marker.
    const empty = path.join(scratch(), "e.log");
    await closeLogFile(openLogFile(empty, 2));
    expect(readFileSync(empty, "utf8")).toBe("--- taskq: attempt 2 ---\n");
  });

  it("writeLine puts a line of its own after what was written, without a blank line before it", async () => {
    const file = path.join(scratch(), "w.log");
    const log = openLogFile(file, 1);
    log.writeLine("first");
    log.write("partial");
    log.writeLine("second");
    log.write(Buffer.from("a chunk\n"));
    log.writeCopy(Buffer.from("lent, no newline"));
    log.writeLine("third");
    await closeLogFile(log);
    expect(readFileSync(file, "utf8")).toBe("first\npartial\nsecond\na chunk\nlent, no newline\nthird\n");
  });

  it("words an attempt's line on one line, its control characters and line separators as escapes", () => {
    expect(attemptLine(2)).toBe("--- taskq: attempt 2 ---");
    expect(attemptLine(1, "timed out after 1s")).toBe("--- taskq: attempt 1 timed out after 1s ---");
    expect(attemptLine(1, "stopped: a\nb\r\tc\u001b[31md\u0000\u009b\u2028e")).toBe("--- taskq: attempt 1 stopped: a\\nb\\r\\tc\\x1b[31md\\x00\\x9b\\u2028e ---");
  });

  it("appends an attempt whose number repeats (a durable task redriven, or given back) after a marker line", async () => {
    const file = path.join(scratch(), "r.log");
    for (const [attempt, text] of [[1, "one"], [2, "two"], [1, "again"]] as const) {
      const log = openLogFile(file, attempt);
      log.write(`${text}\n`);
      await closeLogFile(log);
    }
    expect(readFileSync(file, "utf8")).toBe("one\n--- taskq: attempt 2 ---\ntwo\n--- taskq: attempt 1 ---\nagain\n");
  });

  it.skipIf(!existsSync("/dev/full"))("on a full disk (/dev/full): one 'error', failed callbacks, then no hang", async () => {
    const log = new LogFile(openSync("/dev/full", "w"));
    const errors: Error[] = [];
    log.on("error", (error: Error) => errors.push(error));
    const first = new Promise<Error | null | undefined>((resolve) => log.write("x".repeat(4096), resolve));
    expect(((await first) as NodeJS.ErrnoException | undefined)?.code).toBe("ENOSPC");
    const later = new Promise<Error | null | undefined>((resolve) => log.write("more", resolve));
    expect(((await later) as NodeJS.ErrnoException | undefined)?.code).toBe("ENOSPC");
    // A line taskq adds (how the attempt ended) is dropped as quietly.
    log.writeLine("--- taskq: attempt 1 exited with code 1 ---");
    await closeLogFile(log);
    expect(errors.map((error) => (error as NodeJS.ErrnoException).code)).toEqual(["ENOSPC"]);
    expect(log.errored?.code).toBe("ENOSPC");
  });

  it("closes once, and refuses writes after", async () => {
    const file = path.join(scratch(), "d.log");
    const log = openLogFile(file, 1);
    await closeLogFile(log);
    await closeLogFile(log);
    const refused = await new Promise<Error | null | undefined>((resolve) => expect(log.write("late", resolve)).toBe(false));
    expect(refused).toBeInstanceOf(Error);
    expect(readFileSync(file, "utf8")).toBe("");
  });
});
