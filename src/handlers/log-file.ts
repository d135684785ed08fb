import { EventEmitter } from "node:events";
import { closeSync, constants, fstatSync, open, openSync, readSync, writeSync, writev, writevSync } from "node:fs";
import path from "node:path";
import { BufferPool } from "../buffer-pool.js";
import { TaskqError } from "../errors.js";
import { monotonicMs } from "../monotonic.js";

/**
 * Bytes of output buffered before the task's pipes are paused: bounds memory per running
 * task. 1 MiB keeps the disk as busy as 8 MiB did (300 MB flood: same wall time), with a
 * peak RSS of ~70 instead of ~120 MB.
 */
const LOG_HIGH_WATER_MARK = 1024 * 1024;
/**
 * Bytes gathered before a write is started at once; less waits up to LOG_BATCH_MS for
 * more. A loud task's 64 KiB reads go to the file in fewer, larger writes: each write
 * handed to the thread pool costs the main thread a lock and a wake-up.
 */
const LOG_BATCH_BYTES = 256 * 1024;
const LOG_BATCH_MS = 2;
/**
 * A batch up to this size still waiting when the log is finished (the task has ended) is
 * written on this thread, by one writev: a round trip through the thread pool took ~150 µs
 * between the end of a task that printed a line and the start of the next one (1,000
 * `echo` tasks at -j 2), and, where no task writes more, the pool is never started.
 */
const SYNC_FINISH_BYTES = 64 * 1024;
/**
 * A loud log (one that has filled a batch: a task printing fast) writes every batch on this
 * thread, by one writev, while such writes are quick: a handoff to the thread pool per batch,
 * with the pool thread's wake-up and the completion's, costs more than the write into the page
 * cache (taskq and its tasks took 13-25% less CPU for a 300 MB and eight 20 MB floods).
 * Once the log's average write on this thread is over SYNC_WRITE_SLOW_MS (each write weighing
 * 1/8: a page-cache write of a batch takes ~0.05 ms, one on a slow, remote or `sync` disk
 * milliseconds), its later batches go through the pool: the main thread, which reads every task's
 * output and keeps the display and the timers, then waits on such a disk for a few writes only.
 * One write held up a few ms alone (taskq waiting for a CPU on a busy machine) does not tip it;
 * a disk slow one write in three does (three slow writes in a row, the first rule, never came there,
 * and another task's output reached the display up to 2x later). Other logs write as before.
 */
const SYNC_WRITE_SLOW_MS = 1;
const SYNC_WRITE_WEIGHT = 1 / 8;
/**
 * writeCopy copies a stream's reads into slabs of this size (one batch), and a slab is used
 * again once its bytes are written. A 300 MB flood read into a new 64 KiB buffer per read
 * had V8 collect the garbage for their memory and the kernel fault in fresh pages for each:
 * 1.2-1.3x the time of reusing them (eight tasks at once: 1.06-1.08x), and ~30 MB more RSS.
 */
const SLAB_BYTES = LOG_BATCH_BYTES;
/** Below this, a chunk lent to a log with no slab yet is copied on its own (see writeCopy). */
const SMALL_COPY_BYTES = 16 * 1024;
/**
 * Written slabs kept for any log's writeCopy: 16 (4 MiB), let go after 1 s unused. Loud
 * tasks at once hold several each (one filling, some waiting for the one write thread) and
 * give them back in bursts: with 4 kept, eight 20 MB floods faulted in ~5,500 more pages
 * (~14,500 against ~9,000) and took ~7% more of taskq's CPU (perf stat, 3 runs each).
 */
const slabs = new BufferPool(SLAB_BYTES, 16, 1000);

/** A task id that would put its log file outside the run's log folder. */
export class InvalidTaskIdError extends TaskqError {
  readonly permanent = true as const;

  constructor(taskId: string, logDir: string) {
    super("INVALID_TASK_ID", `task id ${JSON.stringify(taskId)} cannot name a log file in ${logDir}`);
  }
}

/** `<logDir>/<taskId>.log`, refusing any id that would escape logDir. */
export function resolveLogPath(logDir: string, taskId: string): string {
  return logPathsIn(logDir)(taskId);
}

/**
 * resolveLogPath for one folder, resolved once: a task's log path is then one check and
 * one concatenation (path.resolve for each task allocated ~2 kB and cost a few µs).
 */
export function logPathsIn(logDir: string): (taskId: string) => string {
  const folder = path.resolve(logDir);
  const prefix = folder.endsWith(path.sep) ? folder : `${folder}${path.sep}`;
  return (taskId) => {
    // With no separator, `<id>.log` is one name in the folder (never "." or "..": it ends in ".log").
    if (taskId === "" || taskId.includes(path.sep)) throw new InvalidTaskIdError(taskId, logDir);
    return `${prefix}${taskId}.log`;
  };
}

/**
 * One attempt's log file: bytes appended in the order written, one `writev` in flight at a
 * time (through libuv's thread pool), with backpressure past LOG_HIGH_WATER_MARK. The part
 * of fs.WriteStream that a log needs: loading fs.WriteStream costs ~3 ms of `taskq run`'s
 * start (it pulls in node:fs/promises and readline), and each one ~25 µs to build.
 * Events: 'drain' (below the high-water mark again after write() returned false) and
 * 'error' (the first write failure; later writes are dropped and report it).
 */
export class LogFile extends EventEmitter {
  readonly writableHighWaterMark = LOG_HIGH_WATER_MARK;
  readonly fd: number;
  #queue: Buffer[] = [];
  #callbacks: Array<((error?: Error | null) => void) | undefined> = [];
  /** Bytes accepted and not yet written, including those being written. */
  #pending = 0;
  #writing = false;
  #needDrain = false;
  #error: NodeJS.ErrnoException | undefined;
  #idle: Array<() => void> = [];
  #closed = false;
  /** Set while a small batch waits for more bytes (see LOG_BATCH_BYTES). */
  #batchTimer: NodeJS.Timeout | undefined;
  /** The slab writeCopy fills: bytes [0, #slabQueued) are in #queue, [#slabQueued, #slabUsed) not yet. */
  #slab: Buffer | undefined;
  #slabUsed = 0;
  #slabQueued = 0;
  /** Slabs filled and queued: free again once the batch that takes them is written. */
  #fullSlabs: Buffer[] = [];
  /** The bytes accepted so far end with a newline, or there are none (see writeLine). */
  #atLineStart = true;
  /** A batch has filled: batches are written on this thread (see SYNC_WRITE_SLOW_MS). */
  #loud = false;
  /** The average time of this log's writes on this thread, in ms (see SYNC_WRITE_SLOW_MS); over it, batches go through the pool. */
  #syncWriteMs = 0;

  constructor(fd: number) {
    super();
    this.fd = fd;
  }

  get writableLength(): number {
    return this.#pending;
  }

  /** The first write failure, if any. */
  get errored(): NodeJS.ErrnoException | undefined {
    return this.#error;
  }

  /** Queues `chunk`; false once the queue is past the high-water mark (wait for 'drain'). */
  write(chunk: Buffer | string, callback?: (error?: Error | null) => void): boolean {
    if (this.#error !== undefined || this.#closed) {
      const error = this.#error ?? new Error("write after the log was closed");
      if (callback !== undefined) process.nextTick(callback, error);
      return false;
    }
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    if (bytes.length === 0) {
      if (callback !== undefined) process.nextTick(callback, null);
      return this.#pending < LOG_HIGH_WATER_MARK;
    }
    this.#queueSlab();
    this.#queue.push(bytes);
    this.#atLineStart = bytes[bytes.length - 1] === NEWLINE;
    return this.#accepted(bytes.length, callback);
  }

  /**
   * write() for a chunk that is only lent (a read buffer used again for the next read): its
   * bytes are copied into a slab of the log's own, which serves later chunks too.
   */
  writeCopy(chunk: Buffer, callback?: (error?: Error | null) => void): boolean {
    if (this.#error !== undefined || this.#closed || chunk.length === 0) return this.write(chunk, callback); // keeps nothing
    // A task's first small output (most tasks print a few lines) gets a copy of its own size, not a slab.
    if (chunk.length > SLAB_BYTES || (this.#slab === undefined && chunk.length < SMALL_COPY_BYTES)) return this.write(Buffer.from(chunk), callback);
    if (this.#slab === undefined || this.#slabUsed + chunk.length > SLAB_BYTES) this.#nextSlab();
    this.#slabUsed += chunk.copy(this.#slab as Buffer, this.#slabUsed);
    this.#atLineStart = chunk[chunk.length - 1] === NEWLINE;
    return this.#accepted(chunk.length, callback);
  }

  /**
   * Appends `text` as a line of its own: after a newline when the bytes before it do not end
   * with one (a task's last output without its newline), never after a blank line. Like
   * write(), it is dropped once writing has failed.
   */
  writeLine(text: string): void {
    this.write(`${this.#atLineStart ? "" : "\n"}${text}\n`);
  }

  #accepted(bytes: number, callback: ((error?: Error | null) => void) | undefined): boolean {
    this.#callbacks.push(callback);
    this.#pending += bytes;
    if (!this.#writing) this.#flushOrWait();
    if (this.#pending < LOG_HIGH_WATER_MARK) return true;
    this.#needDrain = true;
    return false;
  }

  /** Queues the bytes copied into the slab since it was last queued, before anything written after them. */
  #queueSlab(): void {
    if (this.#slab === undefined || this.#slabQueued === this.#slabUsed) return;
    this.#queue.push(this.#slab.subarray(this.#slabQueued, this.#slabUsed));
    this.#slabQueued = this.#slabUsed;
  }

  #nextSlab(): void {
    if (this.#slab !== undefined) {
      this.#queueSlab();
      this.#fullSlabs.push(this.#slab);
    }
    this.#slab = slabs.take();
    this.#slabUsed = 0;
    this.#slabQueued = 0;
  }

  /** Resolves once every accepted byte is written, or writing failed. */
  finished(): Promise<void> {
    // No more waiting for a fuller batch (none is written while a batch waits).
    if (this.#batchTimer !== undefined) {
      if (this.#pending <= SYNC_FINISH_BYTES) this.#flushSync();
      else this.#flush();
    }
    if (!this.#writing || this.#error !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Closes the file (once); bytes not yet written are dropped: call finished() first. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#batchTimer); // its bytes are dropped, never written to a reused fd
    this.#batchTimer = undefined;
    this.#releaseSlabs();
    try {
      closeSync(this.fd);
    } catch {
      // already closed: nothing left to lose
    }
  }

  /**
   * Every byte accepted is written: the slab goes back to the pool instead of waiting in this
   * log for more (a hundred tasks at once that each printed 64 KiB once held 25 MB so).
   */
  #returnSlab(): void {
    const slab = this.#slab;
    if (slab === undefined || this.#callbacks.length > 0) return;
    this.#slab = undefined;
    slabs.give(slab);
  }

  /** Gives the slabs back to the pool, unless a write in flight may still read them. */
  #releaseSlabs(): void {
    if (this.#slab === undefined) return;
    if (!this.#writing) for (const slab of [...this.#fullSlabs, this.#slab]) slabs.give(slab);
    this.#slab = undefined;
    this.#fullSlabs = [];
  }

  /** Writes now if enough is queued, else once LOG_BATCH_MS have passed. */
  #flushOrWait(): void {
    if (this.#pending >= LOG_BATCH_BYTES) {
      this.#loud = true;
      this.#flush();
    } else this.#batchTimer ??= setTimeout(() => this.#flush(), LOG_BATCH_MS);
  }

  /** Writes what is queued: through the pool, or on this thread for a loud log while its writes are quick (see SYNC_WRITE_SLOW_MS). */
  #flush(): void {
    if (!this.#loud || this.#syncWriteMs > SYNC_WRITE_SLOW_MS) return this.#flushInPool();
    const started = monotonicMs();
    this.#flushSync();
    this.#syncWriteMs += (monotonicMs() - started - this.#syncWriteMs) * SYNC_WRITE_WEIGHT;
  }

  #flushInPool(): void {
    const [buffers, callbacks, written] = this.#takeBatch();
    this.#writing = true;
    this.#writeAll(buffers, (error) => {
      for (const slab of written) slabs.give(slab);
      for (const callback of callbacks) callback?.(error);
      if (error !== undefined) return this.#fail(error);
      this.#writing = false;
      // Someone waits for every byte (finished()): no waiting for a fuller batch then.
      // Anything accepted since (a callback each), queued or still in the slab, is the next batch.
      if (this.#callbacks.length > 0) {
        if (this.#idle.length > 0) this.#flushInPool();
        else this.#flushOrWait();
      } else this.#returnSlab();
      this.#drainIfBelowMark();
      if (!this.#writing) this.#settleIdle();
    });
  }

  /** What #flushInPool does, on this thread: for a small last batch (see SYNC_FINISH_BYTES), and a loud log's batches. */
  #flushSync(): void {
    const [buffers, callbacks, written] = this.#takeBatch();
    let error: Error | undefined;
    try {
      while (buffers.length > 0) this.#wrote(buffers, writevSync(this.fd, buffers));
    } catch (caught) {
      error = caught as Error;
    }
    for (const slab of written) slabs.give(slab);
    for (const callback of callbacks) callback?.(error);
    if (error !== undefined) return this.#fail(error);
    this.#returnSlab();
    this.#drainIfBelowMark();
  }

  /**
   * The queued bytes and their callbacks, for one write, and the slabs free once it is
   * written (every byte of theirs is in it or in an earlier write); no batch waits any more.
   * The slab being filled stays: later bytes go after those in this batch.
   */
  #takeBatch(): [Buffer[], Array<((error?: Error | null) => void) | undefined>, Buffer[]] {
    clearTimeout(this.#batchTimer);
    this.#batchTimer = undefined;
    this.#queueSlab();
    const batch: [Buffer[], Array<((error?: Error | null) => void) | undefined>, Buffer[]] = [this.#queue, this.#callbacks, this.#fullSlabs];
    this.#queue = [];
    this.#callbacks = [];
    this.#fullSlabs = [];
    return batch;
  }

  /** 'drain' once, when a write() was refused and the queue is below the mark again. */
  #drainIfBelowMark(): void {
    if (this.#needDrain && this.#pending < LOG_HIGH_WATER_MARK) {
      this.#needDrain = false;
      this.emit("drain");
    }
  }

  /** writev until every byte of `buffers` is written (a write may take fewer). */
  #writeAll(buffers: Buffer[], done: (error?: Error) => void): void {
    writev(this.fd, buffers, (error, written) => {
      if (error !== null) return done(error);
      try {
        this.#wrote(buffers, written);
      } catch (failure) {
        return done(failure as Error);
      }
      if (buffers.length === 0) return done();
      this.#writeAll(buffers, done);
    });
  }

  /** Takes `written` bytes off the front of `buffers`, which a write took. */
  #wrote(buffers: Buffer[], written: number): void {
    // A file that takes no bytes and reports no error would have us retry forever.
    if (written === 0) throw Object.assign(new Error("the log file took no bytes"), { code: "EIO" });
    this.#pending -= written;
    let rest = written;
    while (buffers.length > 0 && rest >= buffers[0]!.length) rest -= buffers.shift()!.length;
    if (buffers.length > 0) buffers[0] = buffers[0]!.subarray(rest);
  }

  #fail(error: Error): void {
    clearTimeout(this.#batchTimer);
    this.#batchTimer = undefined;
    this.#error = error;
    this.#writing = false;
    for (const callback of this.#callbacks) callback?.(error);
    this.#queue = [];
    this.#callbacks = [];
    this.#pending = 0;
    this.emit("error", error);
    this.#settleIdle();
  }

  #settleIdle(): void {
    const idle = this.#idle;
    this.#idle = [];
    for (const resolve of idle) resolve();
  }
}

/**
 * Opens the log for one attempt. Every attempt appends; each after the first, and any that
 * finds the file written already (a durable task run again on this machine after a redrive or
 * a lease given back, its attempt number repeated), after a marker line, so the log tells
 * every attempt's story. Throws (ENOTDIR, EACCES...) before any command starts.
 *
 * Opened and closed synchronously: where creating a file is cheap, one syscall on this
 * thread costs less than a round trip through libuv's thread pool, and both sit between one
 * task's end and the next one's start (the shell handler switches to openLogFileAsync where
 * it is not). Writes go through the pool, with backpressure, but for a small last batch.
 */
export function openLogFile(file: string, attempt: number): LogFile {
  return startLog(openSync(file, LOG_FLAGS), attempt);
}

/** openLogFile through libuv's thread pool: for a disk where creating a file is slow. */
export function openLogFileAsync(file: string, attempt: number): Promise<LogFile> {
  return new Promise((resolve, reject) => {
    open(file, LOG_FLAGS, (error, fd) => {
      if (error !== null) return reject(error);
      try {
        resolve(startLog(fd, attempt));
      } catch (failed) {
        reject(failed instanceof Error ? failed : new Error(String(failed)));
      }
    });
  });
}

/**
 * Appended to, and read: the marker line of a later attempt starts with a newline only when
 * the file's last byte is not one (see startLog).
 */
const LOG_FLAGS = "a+";
const NEWLINE = 0x0a;

/**
 * A line taskq writes into a log about one attempt, in the log's own words:
 * `--- taskq: attempt 2 ---` before it, `--- taskq: attempt 1 timed out after 1s ---` after
 * one that did not succeed. One line, whatever `outcome` holds (a folder's name, a reason
 * given to a cancel): its control characters and line separators are written as escapes.
 */
export function attemptLine(attempt: number, outcome?: string): string {
  return `--- taskq: attempt ${attempt}${outcome === undefined ? "" : ` ${printable(outcome)}`} ---`;
}

/**
 * Appends `line` (see attemptLine) to the log at `logPath` once its attempt is over, on a line of its
 * own as a marker goes: for an attempt that came to another end after its handler closed the log (a
 * success whose record the database refused). Makes no log: one missing is an error (ENOENT).
 */
export function appendToLogFile(logPath: string, line: string): void {
  const fd = openSync(logPath, constants.O_RDWR | constants.O_APPEND);
  try {
    appendLogLine(fd, line);
  } finally {
    closeSync(fd);
  }
}

function printable(text: string): string {
  return text.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, (character) => {
    if (character === "\n") return "\\n";
    if (character === "\r") return "\\r";
    if (character === "\t") return "\\t";
    const code = character.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\x${code.toString(16).padStart(2, "0")}`;
  });
}

/**
 * The log of an attempt on `fd`. The marker line of an attempt after the first is written
 * here, on this thread, before the command can start: a log that cannot take it (a full disk)
 * throws, and the command is not started (see LogWriteError), where a failed write through
 * the pool stopped a command already running, or not, by a race. (The first attempt's log has
 * no marker: its first write is the command's own output.) The marker goes on a line of its
 * own, behind a newline only where the log does not end with one already: the same log,
 * whether or not the last attempt's output ended with a newline.
 */
function startLog(fd: number, attempt: number): LogFile {
  const last = lastByte(fd);
  if (attempt > 1 || last !== undefined) {
    try {
      writeSync(fd, `${newlineAfter(last)}${attemptLine(attempt)}\n`);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }
  const log = new LogFile(fd);
  // Failures are reported by AttemptOutput's listener; this one only keeps an error on a
  // path that never gets there (command failed to start) from crashing the process.
  log.on("error", () => {});
  return log;
}

/** What goes before a line of taskq's in a log whose last byte is `last`: a newline, unless it ends with one or is empty. */
function newlineAfter(last: number | undefined): string {
  return last === undefined || last === NEWLINE ? "" : "\n";
}

/** A line of taskq's, appended to the log open on `fd` (opened "a+"), on a line of its own and never after a blank one (see startLog). */
export function appendLogLine(fd: number, line: string): number {
  return writeSync(fd, `${newlineAfter(lastByte(fd))}${line}\n`);
}

/**
 * The open file's last byte, undefined when it is empty. One that cannot be read counts as
 * no newline, so a marker never glues to the line before it. startLog may run in a callback,
 * where a throw would crash the process.
 */
function lastByte(fd: number): number | undefined {
  let size: number;
  try {
    size = fstatSync(fd).size;
  } catch {
    return undefined;
  }
  if (size === 0) return undefined;
  const byte = Buffer.alloc(1);
  try {
    return readSync(fd, byte, 0, 1, size - 1) === 1 ? byte[0] : -1;
  } catch {
    return -1;
  }
}

/** Waits for the log's pending writes (or their failure), then closes the file. Idempotent. */
export async function closeLogFile(log: LogFile): Promise<void> {
  await log.finished();
  log.close();
}
