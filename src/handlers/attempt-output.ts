import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { Socket, type OnReadOpts, type SocketConstructorOpts } from "node:net";
import type { Readable } from "node:stream";
import { LineSplitter, type BlockHandler } from "./line-splitter.js";
import { appendLogLine, closeLogFile, type LogFile } from "./log-file.js";
import type { StreamName } from "./types.js";

export type { StreamName } from "./types.js";

/** Pipes kept open for processes a task left running (see AttemptOutput.#leaveOpen), in all tasks. */
let latePipes = 0;
/** At most this many: each is a descriptor the open-file limit counts (see open-file-limit.ts). */
export const LATE_PIPES_MAX = 8;
/** What one attempt's leftovers may write into its log after it ended. */
const LATE_BYTES_MAX = 16 * 1024 * 1024;

/** The log line before what processes an attempt left running wrote after it ended. */
function lateHeading(attempt: number): string {
  return `--- taskq: written after attempt ${attempt} ended, by processes it left running ---`;
}
const LATE_CAPPED_LINE = `--- taskq: ${LATE_BYTES_MAX / 1024 / 1024} MiB written after the task ended: the rest is not read (its writer waits) ---`;

/** Output that came after the task ended (see AttemptOutput.#leaveOpen). */
interface Late {
  /** Chunks that came while the log was being closed; undefined once it is. */
  held: Buffer[] | undefined;
  sources: Readable[];
  bytes: number;
  /** The log's size after our last write: another size means someone else wrote since. */
  end: number;
  capped?: boolean;
  /** A write to lateLog failed, and onLateLost was told: it is told once. */
  lost?: boolean;
}

/**
 * The output of the attempt running now, by log path: late output of an earlier attempt of
 * the same task (see #appendLate) goes into its log's queue, in order with its own bytes,
 * not around them through a second descriptor.
 */
const runningByLog = new Map<string, AttemptOutput>();

/** readNow reads at most this much before it leaves the rest to a stream (a writer may still be writing). */
const READ_NOW_MAX = 1024 * 1024;
/** readNow's read buffer, shared: the log copies what it reads (LogFile.writeCopy). */
let readBuffer: Buffer | undefined;
/**
 * The one buffer every attached pipe reads into (see attachPipe): a read is handled, its
 * bytes copied where they are kept, before the next read of any pipe.
 */
let pipeBuffer: Buffer | undefined;

export interface AttemptOutputOptions {
  log: LogFile;
  onLine: (stream: StreamName, text: string) => void;
  /** Optional: runs of short complete lines as bytes (see BlockHandler) instead of one onLine each. */
  onLines?: (stream: StreamName, bytes: Buffer, count: number, ends: Int32Array) => void;
  /** With onLines: every line goes there, as the task wrote it (see LineSplitter's `asWritten`). */
  linesAsWritten?: boolean;
  /** What a terminal shows of a long line's rewritten beginning (see OutputSink.lineState). */
  lineState?: (text: string) => string;
  /** How long a line not ended yet is held before it is shown as far as it goes (see OutputSink.showOpenLineAfterMs). */
  showOpenLineAfterMs?: number;
  /** A line comes whole (see OutputSink.wholeLines), as written with linesAsWritten, else as text; not with lineState. */
  wholeLines?: boolean;
  /** With wholeLines, as text: a line's states dropped before it goes on (see OutputSink.droppedStates). */
  onDroppedStates?: (stream: StreamName, bytes: Buffer) => void;
  /** The end of each chunk after its last newline (see OutputSink.openLine). */
  onOpenLine?: (stream: StreamName, bytes: Buffer, fresh: boolean) => void;
  /** Called once, on the first log write failure. */
  onLogError: (error: Error) => void;
  /** Backpressure from the display (see OutputSink.whenDrained). */
  whenDisplayDrained?: () => Promise<void> | undefined;
  /**
   * Where output that comes after drain() stopped waiting goes (appended): a process the task
   * left running outside its group (a `setsid` daemon) keeps writing. Without it, those pipes
   * are closed, and the writer gets SIGPIPE.
   */
  lateLog?: { path: string; attempt: number };
  /** Called once, when drain() first leaves a pipe to lateLog (`kept`), or has to close one (too many kept already). */
  onLate?: (kept: boolean) => void;
  /** Called once, when what came late could not be appended to lateLog (a full disk, the file made a folder): those bytes are dropped. */
  onLateLost?: (error: unknown) => void;
}

/**
 * Copies a task's stdout and stderr, chunk by chunk as they arrive, into one log file
 * (bytes verbatim) and into display lines. Backpressure from the log, and from a slow
 * reader of the display, pauses the pipes, so a fast writer never makes taskq buffer
 * its output: it waits, as it would writing to a full pipe.
 */
export class AttemptOutput {
  readonly #log: LogFile;
  readonly #onLine: AttemptOutputOptions["onLine"];
  readonly #onLines: AttemptOutputOptions["onLines"];
  readonly #onDroppedStates: AttemptOutputOptions["onDroppedStates"];
  readonly #linesAsWritten: boolean;
  readonly #lineState: AttemptOutputOptions["lineState"];
  readonly #onOpenLine: AttemptOutputOptions["onOpenLine"];
  readonly #showOpenLineAfterMs: number;
  readonly #wholeLines: boolean;
  readonly #sources: Readable[] = [];
  /** One per stream name: a pipe read by readNow and then by a stream keeps its open line. */
  readonly #splitters = new Map<StreamName, LineSplitter>();
  readonly #whenDisplayDrained: AttemptOutputOptions["whenDisplayDrained"];
  /** The log holds more than its high-water mark. */
  #logFull = false;
  /** The display's reader is behind. */
  #displayFull = false;
  /** Whether the pipes are paused now. */
  #pausedFlow = false;
  /** Set once the task was stopped: the display's reader no longer holds its output back. */
  #displayIgnored = false;
  #logError: Error | undefined;
  /** Called on each chunk while drain() waits (its idle timer). */
  #onChunk: (() => void) | undefined;
  /** Set by stopWaiting(): drain() takes one last look at the pipes and waits no longer. */
  #hurried = false;
  /** While drain() waits: ends the wait after one last look (see stopWaiting). */
  #hurryDrain: (() => void) | undefined;
  readonly #lateLog: AttemptOutputOptions["lateLog"];
  readonly #onLate: AttemptOutputOptions["onLate"];
  readonly #onLateLost: AttemptOutputOptions["onLateLost"];
  /** Set once drain() left pipes open: what they bring goes to lateLog, not to the log or the display. */
  #late: Late | undefined;
  /** Set once the task's bytes are written and close() adds its last line: a failure from here on is that line's alone. */
  #lastLineOnly = false;
  /** The attempt of the late output written last into this log (see #takeLate), until this attempt's own bytes go on. */
  #lateFrom: number | undefined;

  constructor(options: AttemptOutputOptions) {
    this.#log = options.log;
    this.#onLine = options.onLine;
    this.#onLines = options.onLines;
    this.#onDroppedStates = options.onDroppedStates;
    this.#linesAsWritten = options.linesAsWritten === true;
    this.#lineState = options.lineState;
    this.#onOpenLine = options.onOpenLine;
    this.#showOpenLineAfterMs = options.showOpenLineAfterMs ?? 0;
    this.#wholeLines = options.wholeLines === true;
    this.#whenDisplayDrained = options.whenDisplayDrained;
    this.#lateLog = options.lateLog;
    this.#onLate = options.onLate;
    this.#onLateLost = options.onLateLost;
    if (options.lateLog !== undefined) runningByLog.set(options.lateLog.path, this);
    this.#log.on("drain", () => this.#setLogFull(false));
    // A persistent listener: a failing disk must never become an unhandled 'error' event.
    this.#log.on("error", (error: Error) => {
      if (this.#logError !== undefined || this.#lastLineOnly) return;
      this.#logError = error;
      this.#setLogFull(false); // keep reading (and discarding) so the task is not stuck on a full pipe
      options.onLogError(error);
    });
  }

  /** The first log write error, if any. */
  get logError(): Error | undefined {
    return this.#logError;
  }

  /** Reads `source` as its data comes, with backpressure, until it ends. */
  attach(source: Readable, stream: StreamName): void {
    const splitter = this.#splitterFor(stream);
    this.#addSource(source);
    source.on("data", (chunk: Buffer) => this.#take(chunk, splitter, false, stream));
  }

  /**
   * attach() for the pipe behind the non-blocking read end `fd` (the stream closes it): each
   * read goes into one buffer that every pipe shares, and the log copies its bytes into
   * memory it uses again (LogFile.writeCopy). A stream's reads are each a new 64 KiB buffer,
   * for the garbage collector and fresh pages: a 300 MB flood took 1.2-1.3x as long that way.
   */
  attachPipe(fd: number, stream: StreamName): void {
    const splitter = this.#splitterFor(stream);
    const buffer = (pipeBuffer ??= Buffer.allocUnsafe(65_536));
    const onread: OnReadOpts = {
      buffer,
      callback: (bytes) => {
        this.#take(buffer.subarray(0, bytes), splitter, true, stream);
        return true; // backpressure pauses the socket (see #updateFlow)
      },
    };
    // Node's Socket takes `onread` from its constructor's options too (the types have it for connect() only).
    const options: SocketConstructorOpts & { onread: OnReadOpts } = { fd, readable: true, writable: false, onread };
    this.#addSource(new Socket(options));
  }

  #addSource(source: Readable): void {
    this.#sources.push(source);
    if (this.#pausedFlow) source.pause();
    source.on("error", () => {}); // a broken pipe just ends this stream's output
  }

  /**
   * Reads what the pipe behind the non-blocking read end `fd` holds, synchronously, for a
   * task that has exited: true once it reached end of file (every writer is gone; the
   * caller closes `fd`), false if a writer still holds the pipe, or more than
   * READ_NOW_MAX bytes came: then `attach` a stream to it for the rest. Cheaper than a
   * stream for a short task: a net.Socket costs ~0.5 ms to make and tear down.
   */
  readNow(fd: number, stream: StreamName): boolean {
    const splitter = this.#splitterFor(stream);
    const buffer = (readBuffer ??= Buffer.allocUnsafe(65_536));
    for (let total = 0; total < READ_NOW_MAX; ) {
      let bytes: number;
      try {
        bytes = readSync(fd, buffer, 0, buffer.length, null);
      } catch (error) {
        // EAGAIN: empty, and a writer is left. Anything else ends the output, as a stream's error would.
        return (error as NodeJS.ErrnoException).code !== "EAGAIN";
      }
      if (bytes === 0) return true;
      total += bytes;
      this.#take(buffer.subarray(0, bytes), splitter, true, stream);
    }
    return false;
  }

  /**
   * Reads what is left in the pipes once the task's processes are gone. A process that
   * escaped the group may still hold a pipe open: stop after `idleMs` without data,
   * or `maxMs` in all, and destroy the pipes rather than wait forever.
   *
   * Neither timer stops the reading by itself: a timer runs before the event loop next
   * looks at the pipes, so one that came due while taskq was held up (a loaded machine,
   * other tasks' work in the same turn, a display that just caught up) found bytes already
   * written, by the task itself before it exited, unread: filed as written after the
   * attempt. When a timer fires, the pipes get one more look (setImmediate runs after the
   * loop's poll, which reads what they hold); only then does the drain stop.
   */
  async drain(idleMs: number, maxMs: number): Promise<void> {
    const open = this.#sources.filter((source) => !isDone(source));
    if (open.length === 0) return;
    const paused = (): boolean => this.#logFull || this.#displayFull;
    await new Promise<void>((resolve) => {
      let idleTimer: NodeJS.Timeout | undefined;
      /** The last look at the pipes before stopping when idle, and when past the deadline (see above). */
      let lastLook: NodeJS.Immediate | undefined;
      let deadlineLook: NodeJS.Immediate | undefined;
      const finish = (): void => {
        clearTimeout(idleTimer);
        clearTimeout(deadline);
        clearImmediate(lastLook);
        clearImmediate(deadlineLook);
        this.#onChunk = undefined;
        this.#hurryDrain = undefined;
        for (const source of open) {
          source.off("end", onEnd).off("close", onEnd);
          if (!isDone(source)) this.#leaveOpen(source);
        }
        resolve();
      };
      const armIdle = (): void => {
        clearTimeout(idleTimer);
        // Data came in the last look: not silent after all.
        clearImmediate(lastLook);
        // While paused on backpressure, silence is ours, not the task's.
        idleTimer = setTimeout(() => {
          if (paused()) armIdle();
          else lastLook = setImmediate(() => (paused() ? armIdle() : finish()));
        }, idleMs);
      };
      const onEnd = (): void => {
        if (open.every(isDone)) finish();
      };
      // Time spent paused on backpressure does not count: the output is waiting for us, and
      // dropping it would lose bytes from the log too. Past it, what the last look reads is
      // still the attempt's, and the drain stops whatever comes.
      const onDeadline = (): void => {
        clearImmediate(deadlineLook);
        if (paused()) deadline = setTimeout(onDeadline, idleMs);
        else deadlineLook = setImmediate(() => (paused() ? (deadline = setTimeout(onDeadline, idleMs)) : finish()));
      };
      // After stopWaiting(): the deadline is now.
      let deadline = setTimeout(onDeadline, this.#hurried ? 0 : maxMs);
      this.#hurryDrain = () => {
        clearTimeout(deadline);
        onDeadline();
      };
      this.#onChunk = armIdle;
      for (const source of open) source.on("end", onEnd).on("close", onEnd);
      armIdle();
    });
  }

  /**
   * For a task that was stopped (timeout, cancel, shutdown), or whose shell had ended by itself
   * when it would have been: what its pipes still hold goes to the log (and the display) without
   * waiting for the display's reader, which may never read again (`taskq run | less`, left
   * open); and drain() waits no more for the pipes to fall silent, nor for its maximum time: it
   * takes one last look, which reads what the task wrote before it ended, and leaves the pipes
   * still open to the late log (a daemon the task started in a session of its own, writing on).
   * Else such a daemon, never silent for long, held the attempt up to drain()'s maximum, 5 s,
   * and a stop that waits for an attempt less long recorded a success as cancelled.
   */
  stopWaiting(): void {
    this.#displayIgnored = true;
    this.#displayFull = false;
    this.#updateFlow();
    this.#hurried = true;
    this.#hurryDrain?.();
  }

  /**
   * Emits the last partial lines and closes the log; resolves once the file is closed.
   * `lastLine` (how an attempt that did not succeed ended) goes last in the log, on a line of
   * its own: after all the task wrote in its attempt, before what comes after it (late output).
   */
  async close(lastLine?: string): Promise<void> {
    for (const splitter of this.#splitters.values()) splitter.flush();
    if (lastLine !== undefined) {
      // The task's bytes first, so a log that can take them but not the line (a disk just full)
      // fails nothing: the attempt ends as it did, its log without the line.
      await this.#log.finished();
      this.#lastLineOnly = true;
      this.#log.writeLine(lastLine);
    }
    await closeLogFile(this.#log);
    // Until closed, an earlier attempt's late output goes into this log's queue (see #appendLate); from here on, after its end.
    if (this.#lateLog !== undefined && runningByLog.get(this.#lateLog.path) === this) runningByLog.delete(this.#lateLog.path);
    const late = this.#late;
    if (late === undefined) return;
    // The log is complete: what came meanwhile, and what comes from now on, goes after it.
    const held = late.held ?? [];
    late.held = undefined;
    for (const chunk of held) this.#appendLate(late, chunk, true);
  }

  /**
   * A pipe a process outside the task's group still holds once the task is over (a `setsid`
   * daemon): read on, into lateLog, so the writer neither dies of SIGPIPE nor blocks, up to
   * LATE_BYTES_MAX; then it is no longer read, and the writer waits on a full pipe. At most
   * LATE_PIPES_MAX are kept across all tasks (each is a descriptor for as long as the daemon
   * lives); past that, the pipe is closed as it always was. Unreferenced: it never keeps
   * taskq from exiting.
   */
  #leaveOpen(source: Readable): void {
    if (this.#lateLog === undefined || latePipes >= LATE_PIPES_MAX) {
      if (this.#lateLog !== undefined && this.#late === undefined) this.#onLate?.(false);
      source.destroy();
      return;
    }
    latePipes++;
    source.once("close", () => latePipes--);
    if (this.#late === undefined) {
      this.#late = { held: [], sources: [], bytes: 0, end: -1 };
      this.#onLate?.(true);
    }
    this.#late.sources.push(source);
    (source as Partial<Socket>).unref?.();
    if (this.#late.bytes < LATE_BYTES_MAX) source.resume();
    else source.pause();
  }

  #writeLate(chunk: Buffer): void {
    const late = this.#late!;
    if (late.held === undefined) this.#appendLate(late, chunk);
    else if (late.bytes < LATE_BYTES_MAX) {
      // The log is still being closed: kept until it is, so the bytes come after it.
      const part = Buffer.from(chunk.subarray(0, LATE_BYTES_MAX - late.bytes));
      late.held.push(part);
      late.bytes += part.length;
      if (late.bytes >= LATE_BYTES_MAX) for (const source of late.sources) source.pause();
    }
  }

  /**
   * Appends to lateLog, opened for each write (late output is rare; a daemon's pipe costs no
   * second descriptor). A header says what follows, again whenever someone else (the task's
   * next attempt) wrote to the file since. A failed write drops the bytes, as the log's own
   * errors do, and says so once (onLateLost): the user was told this output goes on into the log.
   */
  #appendLate(late: Late, chunk: Buffer, counted = false): void {
    let part = chunk;
    if (!counted) {
      if (late.bytes >= LATE_BYTES_MAX) return;
      part = chunk.subarray(0, LATE_BYTES_MAX - late.bytes);
      late.bytes += part.length;
    }
    const running = runningByLog.get(this.#lateLog!.path);
    if (running !== undefined && running !== this) {
      running.#takeLate(this.#lateLog!.attempt, part, late.bytes >= LATE_BYTES_MAX && late.capped !== true);
      if (late.bytes >= LATE_BYTES_MAX && late.capped !== true) {
        late.capped = true;
        for (const source of late.sources) source.pause();
      }
      late.end = -1; // the next write into the file after the attempt running now ends, a header again
      return;
    }
    let fd: number | undefined;
    try {
      fd = openSync(this.#lateLog!.path, "a+");
      let size = fstatSync(fd).size;
      if (size !== late.end) size += appendLogLine(fd, lateHeading(this.#lateLog!.attempt));
      size += writeSync(fd, part);
      if (late.bytes >= LATE_BYTES_MAX && late.capped !== true) {
        late.capped = true;
        size += appendLogLine(fd, LATE_CAPPED_LINE);
        for (const source of late.sources) source.pause();
      }
      late.end = size;
    } catch (error) {
      // No file to append to (a full disk, the folder gone): the bytes are dropped, but not without a word.
      if (late.lost !== true) {
        late.lost = true;
        this.#onLateLost?.(error);
      }
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * Late output of an earlier attempt (`attempt`) of this task, written while this one runs:
   * into this log's queue, after a header line when this attempt wrote last, and this
   * attempt's own next bytes after a line that says it goes on. Copied: `chunk` is lent.
   */
  #takeLate(attempt: number, chunk: Buffer, capped: boolean): void {
    if (this.#logError !== undefined) return;
    if (this.#lateFrom !== attempt) this.#log.writeLine(lateHeading(attempt));
    this.#lateFrom = attempt;
    if (!this.#log.writeCopy(chunk)) this.#setLogFull(true);
    if (capped) this.#log.writeLine(LATE_CAPPED_LINE);
  }

  #splitterFor(stream: StreamName): LineSplitter {
    let splitter = this.#splitters.get(stream);
    if (splitter === undefined) {
      const onLines = this.#onLines;
      const onBlock: BlockHandler | undefined = onLines === undefined ? undefined : (bytes, count, ends) => onLines(stream, bytes, count, ends);
      splitter = new LineSplitter((text) => this.#onLine(stream, text), onBlock, {
        asWritten: this.#linesAsWritten,
        showOpenAfterMs: this.#showOpenLineAfterMs,
        wholeLines: this.#wholeLines,
        ...(this.#onDroppedStates === undefined ? {} : { onDropped: (bytes: Buffer) => this.#onDroppedStates?.(stream, bytes) }),
        ...(this.#lineState === undefined ? {} : { lineState: this.#lineState }),
      });
      this.#splitters.set(stream, splitter);
    }
    return splitter;
  }

  /** One chunk of output: to the log (with backpressure) and to the display. A `lent` chunk is read again into once this returns. */
  #take(chunk: Buffer, splitter: LineSplitter, lent: boolean, stream: StreamName): void {
    if (this.#late !== undefined) {
      this.#writeLate(chunk);
      return;
    }
    if (this.#lateFrom !== undefined && this.#logError === undefined) {
      this.#log.writeLine(`--- taskq: attempt ${this.#lateLog?.attempt ?? ""} goes on ---`);
      this.#lateFrom = undefined;
    }
    if (this.#logError === undefined && !(lent ? this.#log.writeCopy(chunk, this.#afterWrite) : this.#log.write(chunk, this.#afterWrite))) this.#setLogFull(true);
    splitter.push(chunk);
    if (this.#onOpenLine !== undefined) this.#tellOpenLine(chunk, stream);
    this.#onChunk?.();
    if (!this.#displayFull && !this.#displayIgnored) this.#checkDisplay();
  }

  /** Hands on the end of `chunk` after its last newline (see OutputSink.openLine): not where nothing changed. */
  #tellOpenLine(chunk: Buffer, stream: StreamName): void {
    if (chunk.length === 0) return;
    const newline = chunk.lastIndexOf(0x0a);
    this.#onOpenLine?.(stream, chunk.subarray(newline + 1), newline !== -1);
  }

  /**
   * Resumes as soon as the log is below its high-water mark again, not only on 'drain'
   * (empty buffer): reading the pipe then overlaps writing the file instead of alternating.
   */
  readonly #afterWrite = (): void => {
    if (this.#logFull && this.#log.writableLength < this.#log.writableHighWaterMark) this.#setLogFull(false);
  };

  #setLogFull(full: boolean): void {
    this.#logFull = full;
    this.#updateFlow();
  }

  #checkDisplay(): void {
    const drained = this.#whenDisplayDrained?.();
    if (drained === undefined) return;
    this.#displayFull = true;
    this.#updateFlow();
    void drained.then(() => {
      if (this.#displayIgnored) return;
      this.#displayFull = false;
      this.#updateFlow();
    });
  }

  /** Reads from the pipes only while both the log and the display keep up (late ones: see #leaveOpen). */
  #updateFlow(): void {
    if (this.#late !== undefined) return;
    const pause = this.#logFull || this.#displayFull;
    if (pause === this.#pausedFlow) return;
    this.#pausedFlow = pause;
    for (const source of this.#sources) {
      if (isDone(source)) continue;
      if (pause) source.pause();
      else source.resume();
    }
  }
}

function isDone(source: Readable): boolean {
  return source.readableEnded || source.destroyed;
}
