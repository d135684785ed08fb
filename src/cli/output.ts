import { isUtf8 } from "node:buffer";
import { BufferPool } from "../buffer-pool.js";
import { isReset, LINK_START, type OpenColours } from "./render/control-bytes.js";
import { toJson } from "./to-json.js";

export { toJson };

/**
 * Output is batched up to this many bytes, or one tick. Each write to stdout costs the
 * stream's machinery ~10-30 µs besides the syscall (a file or /dev/null: a synchronous
 * write, then a callback on the next tick): eight 20 MB floods at 256 KiB took ~8% less of
 * taskq's CPU than at 64 KiB (paired medians of 15 alternating runs, 0.908 and 0.917).
 */
const BATCH_BYTES = 262_144;
/**
 * Written buffers kept for the next batches: a pipe taking a loud task's output holds up
 * to ~1 MiB (CONGESTED_BYTES) in writes not yet done. Of the ~4,600 64 KiB batches of a
 * 300 MB flood piped into `cat`, 444 needed a new buffer with 8 kept, ~290 with 16, and
 * 1,729 before spares were kept; at 256 KiB, ~5 batches fill CONGESTED_BYTES.
 */
const SPARE_BUFFERS = 16;
/** Bytes the stream may hold unwritten before the writer reports itself congested. */
const CONGESTED_BYTES = 1024 * 1024;

/**
 * Batches writes to a stream: many small writes become one per tick (or per
 * 256 KiB), which matters when tasks print hundreds of thousands of lines.
 * Text and bytes go into one byte buffer, in the order they were written. Writing
 * to our own stdout or stderr, a buffer is used again once the stream has written its
 * bytes, so a loud task does not leave a trail of garbage buffers behind it.
 */
export class BufferedWriter {
  #buffer: Buffer = Buffer.allocUnsafe(BATCH_BYTES * 2);
  /** Buffers whose writes completed (see flush), let go after 1 s without one. */
  readonly #spares = new BufferPool(BATCH_BYTES * 2, SPARE_BUFFERS, 1000);
  #used = 0;
  #scheduled = false;
  #broken = false;
  /**
   * The bytes last written left colours or an OSC 8 hyperlink set that a task set (see writeColouredLines): what is written
   * next starts with these bytes, which end them (a reset, and the link's end where one is open).
   */
  #closing: Buffer | undefined;
  readonly #reusable: boolean;
  readonly #eachTick: boolean;
  readonly #beforeWrite: (() => void) | undefined;
  readonly #afterWrite: (() => void) | undefined;

  /**
   * `eachTick: false`: bytes wait for flush() (or 256 KiB) instead of going out at the end
   * of the tick. `beforeWrite` runs before each write to the stream (the live board clears
   * itself off the terminal then), `afterWrite` after it.
   */
  constructor(
    readonly stream: DrainableStream,
    options: { eachTick?: boolean; beforeWrite?: () => void; afterWrite?: () => void } = {},
  ) {
    // Other streams (a PassThrough in a test, a pipe into something) may keep the bytes they are given.
    this.#reusable = stream === process.stdout || stream === process.stderr;
    this.#eachTick = options.eachTick ?? true;
    this.#beforeWrite = options.beforeWrite;
    this.#afterWrite = options.afterWrite;
    stream.on("error", () => {
      this.#broken = true; // EPIPE (the reader went away), ENOSPC...: keep running, stop writing.
    });
  }

  write(text: string): void {
    if (this.#broken) return;
    if (this.#closing !== undefined) this.#resetColours();
    const size = Buffer.byteLength(text);
    const offset = this.#room(size); // first: it may replace the buffer
    this.#used += this.#buffer.write(text, offset, size);
    this.#added();
  }

  /**
   * Writes each of `count` lines (each ending in "\n", as a LineSplitter block holds them,
   * `ends[i]` just past line i's "\n") after `prefix`, as bytes: no string per line.
   */
  writePrefixedLines(prefix: Buffer, bytes: Buffer, count: number, ends: Int32Array): void {
    if (this.#broken) return;
    if (this.#closing !== undefined) this.#resetColours();
    this.#writePrefixed(prefix, bytes, 0, count, ends);
  }

  /**
   * As writePrefixedLines, for output that goes as the task wrote it and may leave colours (SGR) set at a line's end or
   * at a carriage return that rewrites it (`colours`: those of the task so far, followed here). Where they are set, the
   * prefix comes after a reset, in its own colours, and the task's colours are set again after it: the task's text
   * shows as it would on a terminal, and its red no longer takes in the prefix (nor the next task's, nor taskq's own
   * lines). A block without an escape while none are set is written as by writePrefixedLines; one without an escape
   * while some are set, as by it with the reset and the colours in each line's prefix; only a block with an escape goes
   * line by line.
   */
  writeColouredLines(prefix: Buffer, bytes: Buffer, count: number, ends: Int32Array, colours: OpenColours): void {
    if (this.#broken) return;
    // Not kept: whatever colours the task's last line left set, a reset comes before this block's first prefix.
    colours.close();
    let escape = bytes.indexOf(ESCAPE);
    if (escape === -1 && colours.code.length === 0) {
      this.writePrefixedLines(prefix, bytes, count, ends);
      return;
    }
    let cr = bytes.indexOf(CARRIAGE_RETURN);
    /** The next OSC 8 hyperlink's start: a reset does not end a link, so a line with one is followed whatever its last escape. */
    let link = bytes.indexOf(LINK_START);
    let line = 0;
    while (line < count) {
      let upTo = line;
      colours.close();
      if (!colours.open) {
        // Lines that begin with no colour set, as one, with the plain prefix (a test runner's `\e[32m✓\e[0m name`): up to
        // the first that leaves one set, and not one that sets one before a `\r` that rewrites it, where the prefix goes again.
        for (let from = line === 0 ? 0 : (ends[line - 1] as number); upTo < count && !colours.open; upTo++) {
          const end = ends[upTo] as number;
          if (escape !== -1 && escape < from) escape = bytes.indexOf(ESCAPE, from);
          if (escape === -1 || escape >= end) {
            from = end;
            continue;
          }
          if (cr !== -1 && cr < from) cr = bytes.indexOf(CARRIAGE_RETURN, from);
          if (cr !== -1 && cr < end - 2) break;
          // Its last escape a reset (most coloured lines) and no link: no colour left set, whatever came before it.
          if (link !== -1 && link < from) link = bytes.indexOf(LINK_START, from);
          if ((link !== -1 && link < end) || !isReset(bytes, bytes.lastIndexOf(ESCAPE, end - 1))) colours.scan(bytes.subarray(escape, end));
          from = end;
        }
        if (upTo > line) {
          if (this.#closing !== undefined) this.#resetColours();
          this.#writePrefixed(prefix, bytes, line, upTo, ends);
          this.#closing = colours.open ? colours.closing : undefined;
          line = upTo;
          continue;
        }
      } else {
        // The lines that start in the colours set before them, as one, each behind the same framed prefix: those before the
        // next escape's, and lines with an escape that leave what is set as it was (coloured lines ending in a reset inside
        // a link kept open), up to one that changes it, written last. Not a line with a `\r` that rewrites it, whose prefix
        // goes again in the colours set there. (The escape last found may be in a line written already, the one that left
        // these colours set: the next is looked for from this line on.)
        const start = line === 0 ? 0 : (ends[line - 1] as number);
        if (escape !== -1 && escape < start) escape = bytes.indexOf(ESCAPE, start);
        const framed = colours.framed(prefix);
        const closing = colours.closing;
        const code = colours.code;
        for (let from = start; upTo < count; ) {
          const end = ends[upTo] as number;
          if (escape === -1 || escape >= end) {
            upTo++;
            from = end;
            continue;
          }
          // A first line with an escape after what ended another task's colours, or after none: its prefix without a
          // reset before it, as one line goes (see below).
          if (upTo === line && this.#closing !== closing) break;
          if (cr !== -1 && cr < from) cr = bytes.indexOf(CARRIAGE_RETURN, from);
          if (cr !== -1 && cr < end - 2) break;
          colours.close();
          // Its last escape a reset and no link, after no colour set (most coloured lines): nothing set changes.
          if (link !== -1 && link < from) link = bytes.indexOf(LINK_START, from);
          if ((link !== -1 && link < end) || colours.coloured || !isReset(bytes, bytes.lastIndexOf(ESCAPE, end - 1))) {
            colours.scan(bytes.subarray(from, end));
          }
          upTo++;
          from = end;
          escape = bytes.indexOf(ESCAPE, end);
          if (colours.code !== code || colours.closing !== closing || !colours.open) break;
        }
        if (upTo > line) {
          // Each framed prefix ends what the task left set; what another task left set (a link, not a colour alone) first.
          if (this.#closing !== undefined && this.#closing !== closing) this.#resetColours();
          this.#writePrefixed(framed, bytes, line, upTo, ends);
          this.#closing = colours.open ? colours.closing : undefined;
          line = upTo;
          continue;
        }
      }
      // A line with an escape: its prefix (and each after a `\r` that rewrites it) in the colours set where it goes.
      const start = line === 0 ? 0 : (ends[line - 1] as number);
      const end = ends[line] as number;
      let segment = start;
      this.#writeColouredPrefix(prefix, colours);
      if (cr !== -1 && cr < start) cr = bytes.indexOf(CARRIAGE_RETURN, start);
      for (; cr !== -1 && cr < end - 2; cr = bytes.indexOf(CARRIAGE_RETURN, cr + 1)) {
        if (bytes[cr + 1] === CARRIAGE_RETURN) continue;
        const after = afterErase(bytes, cr + 1, end - 1);
        this.#writeTaskBytes(bytes, segment, after, colours);
        this.#writeColouredPrefix(prefix, colours);
        segment = after;
      }
      this.#writeTaskBytes(bytes, segment, end, colours);
      escape = bytes.indexOf(ESCAPE, end);
      line++;
    }
  }

  /**
   * A task's line as it wrote it, at a row's start, and nothing of taskq's before it: no prefix, nor the reset of what the
   * bytes before left set (GitHub's runner reads a workflow command only where a line starts, `\e[0m::error::` is none).
   * That reset comes after it, before what is written next; with it what the line leaves set of `colours` (the task's,
   * where it set any), followed as the task's other lines are.
   */
  writeBareLine(line: Buffer, colours: OpenColours | undefined): void {
    if (this.#broken) return;
    this.#writeBytes(line);
    if (colours === undefined || line.indexOf(ESCAPE) === -1) return;
    colours.close();
    colours.scan(line);
    if (!colours.open) return;
    const before = this.#closing;
    this.#closing = before === undefined || before === colours.closing ? colours.closing : Buffer.concat([colours.closing, before]);
  }

  /** `prefix` in its own colours: after a reset where colours are set, then the task's colours set again. */
  #writeColouredPrefix(prefix: Buffer, colours: OpenColours): void {
    if (this.#closing !== undefined) this.#resetColours();
    colours.close();
    this.#writeBytes(prefix);
    if (colours.code.length === 0) return;
    this.#writeBytes(colours.code);
    this.#closing = colours.closing;
  }

  /** bytes[from, to) of a task's output as it wrote them, its colours followed. */
  #writeTaskBytes(bytes: Buffer, from: number, to: number, colours: OpenColours): void {
    if (from >= to) return;
    const part = bytes.subarray(from, to);
    this.#writeBytes(part);
    colours.scan(part);
    this.#closing = colours.open ? colours.closing : undefined;
  }

  #resetColours(): void {
    const closing = this.#closing as Buffer;
    this.#closing = undefined;
    this.#writeBytes(closing);
  }

  /** writePrefixedLines for lines [first, count) of a block, whatever colours the bytes before left set. */
  #writePrefixed(prefix: Buffer, bytes: Buffer, first: number, count: number, ends: Int32Array): void {
    if (first >= count) return;
    const blockStart = first === 0 ? 0 : (ends[first - 1] as number);
    // A carriage return that starts a new state of a line (a progress bar's `\r`) gets the prefix again after it: a viewer
    // that honours it (a CI log page, `cat` on a terminal) shows the line's last state from the row's start, where the
    // prefix was, so it shows whose line it is. Not a `\r\n`'s, nor one before another `\r`: nothing is rewritten there.
    let cr = bytes.indexOf(CARRIAGE_RETURN, blockStart);
    if (cr === -1 || cr >= (ends[count - 1] as number)) {
      this.#writeFramed(prefix, NEWLINE, bytes, ends, first, count);
      return;
    }
    let from = first;
    let start = blockStart;
    for (let line = first; line < count && cr !== -1; line++) {
      const end = ends[line] as number;
      if (cr < start) cr = bytes.indexOf(CARRIAGE_RETURN, start);
      let segment = start;
      // The line's text is [start, end - 1): a `\r` rewrites where a byte of it other than `\r` follows.
      for (; cr !== -1 && cr < end - 2; cr = bytes.indexOf(CARRIAGE_RETURN, cr + 1)) {
        if (bytes[cr + 1] === CARRIAGE_RETURN) continue;
        if (segment === start) {
          this.#writeFramed(prefix, NEWLINE, bytes, ends, from, line);
          this.#writeBytes(prefix);
        }
        // After an erase of the line that follows the `\r` (`\r\x1b[2K`, a progress bar clearing its last state): else it erases the prefix.
        const after = afterErase(bytes, cr + 1, end - 1);
        this.#writeBytes(bytes.subarray(segment, after));
        this.#writeBytes(prefix);
        segment = after;
      }
      if (segment !== start) {
        this.#writeBytes(bytes.subarray(segment, end));
        from = line + 1;
      }
      start = end;
    }
    this.#writeFramed(prefix, NEWLINE, bytes, ends, from, count);
  }

  /**
   * Writes each line of a block (as for writePrefixedLines) as one JSON record: `head`,
   * which is the record up to its last field's opening quote (see jsonRecordHead), then the
   * line as that string's content, then `"}\n`. A line that JSON writes as it is (printable
   * ASCII without `"` or `\`, or valid UTF-8 besides, without a C1 control, U+2028 or U+2029) is copied as bytes;
   * any other goes through toJson, so every record is what toJson makes of the line.
   */
  writeJsonLines(head: Buffer, bytes: Buffer, count: number, ends: Int32Array): void {
    if (this.#broken) return;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let from = 0;
    let start = 0;
    for (let line = 0; line < count; line++) {
      const end = ends[line] as number;
      if (!isJsonText(bytes, view, start, end - 1)) {
        if (from < line) this.#writeFramed(head, JSON_RECORD_END, bytes, ends, from, line);
        this.#writeBytes(head);
        this.write(`${toJson(bytes.toString("utf8", start, end - 1)).slice(1)}}\n`);
        from = line + 1;
      }
      start = end;
    }
    if (from < count) this.#writeFramed(head, JSON_RECORD_END, bytes, ends, from, count);
  }

  /**
   * Backpressure for a slow reader (a pipe to a log collector): undefined while the stream
   * keeps up, else a promise that resolves once it has written what it holds (or is gone).
   * Task output is paused until then instead of piling up in memory.
   */
  whenDrained(): Promise<void> | undefined {
    return this.#broken ? undefined : whenStreamDrained(this.stream);
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#used === 0) return;
    const buffer = this.#buffer;
    const bytes = buffer.subarray(0, this.#used);
    this.#used = 0;
    if (this.#broken || this.stream.destroyed) return;
    // The next buffer before beforeWrite, which may write here too (the board's clear, finding the terminal without a
    // width, writes a note): that goes out at the next flush, not over these bytes.
    // Other streams may keep the bytes they are given: a new buffer. Our own stdout or stderr: the buffer is the stream's
    // until its write completes, then a spare. A pipe (a CI runner reading taskq) completes writes later: a new 128 KiB
    // buffer per batch made the garbage and fresh pages that a loud task's reads no longer make.
    const spares = this.#spares;
    this.#buffer = this.#reusable ? spares.take() : Buffer.allocUnsafe(BATCH_BYTES * 2);
    this.#beforeWrite?.();
    if (!this.#reusable) this.stream.write(bytes);
    else this.stream.write(bytes, () => spares.give(buffer));
    this.#afterWrite?.();
  }

  /**
   * Writes lines [from, to) of a block, each as `prefix`, the line without its "\n", and
   * `suffix` (at least one byte). The lines are copied once, to the end of their room; then
   * each moves left into its place behind its prefix. copyWithin is a memmove: no Buffer
   * view per line, as a ranged copy() makes (1.8x faster for 100-byte lines). A line's
   * prefix never covers bytes not yet moved: line i moves left by (to - 1 - i) times
   * (prefix + suffix - 1) bytes, at least a prefix. The prefix (a task id and a few bytes of
   * colour, or a JSON record's head) is stored four bytes at a time, then byte by byte:
   * cheaper than a call to set() for so few bytes (a 10-byte prefix: this loop 1.3x faster
   * than byte by byte, a 27-byte one 1.8x).
   */
  #writeFramed(prefix: Buffer, suffix: Buffer, bytes: Buffer, ends: Int32Array, from: number, to: number): void {
    if (from >= to) return;
    const first = from === 0 ? 0 : (ends[from - 1] as number);
    const last = ends[to - 1] as number;
    const prefixLength = prefix.length;
    const suffixLength = suffix.length;
    const growth = prefixLength + suffixLength - 1;
    const size = last - first + (to - from) * growth;
    const at = this.#room(size); // first: it may replace the buffer
    const buffer = this.#buffer;
    const wordBytes = prefixLength & ~3;
    const words = prefixWords(prefix, wordBytes >> 2);
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    const tail = at + (to - from) * growth - first; // where byte b of `bytes` is copied to: tail + b
    buffer.set(first === 0 && last === bytes.length ? bytes : bytes.subarray(first, last), tail + first);
    let start = first;
    for (let line = from; line < to; line++) {
      const end = ends[line] as number;
      const target = at + start - first + (line - from) * growth;
      let index = 0;
      for (let word = 0; index < wordBytes; word++, index += 4) view.setUint32(target + index, words[word]!, true);
      for (; index < prefixLength; index++) buffer[target + index] = prefix[index]!;
      buffer.copyWithin(target + prefixLength, tail + start, tail + end - 1);
      const after = target + prefixLength + end - 1 - start;
      for (let byte = 0; byte < suffixLength; byte++) buffer[after + byte] = suffix[byte]!;
      start = end;
    }
    this.#used += size;
    this.#added();
  }

  #writeBytes(bytes: Buffer): void {
    const at = this.#room(bytes.length);
    this.#buffer.set(bytes, at);
    this.#used += bytes.length;
    this.#added();
  }

  /** Where `size` more bytes go: flushes first if they do not fit, grows the buffer for one large write. */
  #room(size: number): number {
    if (this.#used + size > this.#buffer.length) {
      this.flush();
      if (size > this.#buffer.length) this.#buffer = Buffer.allocUnsafe(size);
    }
    return this.#used;
  }

  #added(): void {
    if (this.#used >= BATCH_BYTES) this.flush();
    else if (!this.#scheduled && this.#eachTick) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }
}

const NEWLINE = Buffer.from("\n");
const CARRIAGE_RETURN = 0x0d;
const ESCAPE = 0x1b;

/**
 * Where the bytes from `at` on go past an erase in line (ESC [ n K: `\x1b[K`, `\x1b[2K`) that starts at `at` and ends before
 * `end`; `at` where none does.
 */
function afterErase(bytes: Buffer, at: number, end: number): number {
  if (bytes[at] !== 0x1b || bytes[at + 1] !== 0x5b) return at;
  for (let index = at + 2; index < end; index++) {
    const byte = bytes[index] as number;
    if (byte === 0x4b) return index + 1;
    if (byte < 0x30 || byte > 0x3f) return at;
  }
  return at;
}
/** What ends a record whose head jsonRecordHead made, after the line's text. */
const JSON_RECORD_END = Buffer.from('"}\n');

/**
 * `record` as JSON.stringify writes it with a last field `text: ""`, cut before that
 * string's closing quote: a line's text as JSON string content, then `"}`, completes it.
 */
export function jsonRecordHead(record: Record<string, unknown>): Buffer {
  return Buffer.from(toJson({ ...record, text: "" }).slice(0, -2));
}

/**
 * Whether JSON.stringify writes bytes[start, end) (as UTF-8 text) unchanged: no byte under
 * 0x20, no `"` or `\`, and, where there are bytes over 0x7f, valid UTF-8 (JSON escapes no
 * other character, and valid UTF-8 decodes to no lone surrogate). `view` is a DataView of
 * `bytes`. Four bytes at a time (3x faster than byte by byte for 100-byte lines): the
 * classic "has a byte under n" tests on a word can raise a false alarm (a byte over 0x7f),
 * never miss, so a word they flag is looked at byte by byte.
 */
function isJsonText(bytes: Buffer, view: DataView, start: number, end: number): boolean {
  let bits = 0; // every byte ORed in: its high bits tell whether any byte is over 0x7f
  let index = start;
  for (; index + 4 <= end; index += 4) {
    const word = view.getUint32(index, true);
    bits |= word;
    const flags = (word - 0x20202020) | ((word ^ 0x22222222) - 0x01010101) | ((word ^ 0x5c5c5c5c) - 0x01010101);
    if ((flags & ~word & 0x80808080) !== 0) {
      for (let byte = index; byte < index + 4; byte++) if (needsEscape(bytes[byte] as number)) return false;
    }
  }
  for (; index < end; index++) {
    const byte = bytes[index] as number;
    bits |= byte;
    if (needsEscape(byte)) return false;
  }
  return (bits & 0x80808080) === 0 || (isUtf8(bytes.subarray(start, end)) && !hasC1(bytes, start, end));
}

/**
 * Whether UTF-8 bytes[start, end) hold a character toJson escapes: a C1 control (C2 80 to C2 9F),
 * U+2028 or U+2029 (E2 80 A8, E2 80 A9).
 */
function hasC1(bytes: Buffer, start: number, end: number): boolean {
  for (let at = bytes.indexOf(0xc2, start); at !== -1 && at + 1 < end; at = bytes.indexOf(0xc2, at + 1)) {
    const next = bytes[at + 1] as number;
    if (next >= 0x80 && next < 0xa0) return true;
  }
  for (let at = bytes.indexOf(0xe2, start); at !== -1 && at + 2 < end; at = bytes.indexOf(0xe2, at + 1)) {
    if (bytes[at + 1] === 0x80 && ((bytes[at + 2] as number) & 0xfe) === 0xa8) return true;
  }
  return false;
}

/** Whether JSON.stringify escapes this byte of UTF-8 text (never one over 0x7f). */
function needsEscape(byte: number): boolean {
  return byte < 0x20 || byte === 0x22 || byte === 0x5c;
}

/** The first `count` little-endian 32-bit words of `prefix`, in a scratch array reused by every call. */
let scratchWords = new Uint32Array(16);
function prefixWords(prefix: Buffer, count: number): Uint32Array {
  if (count > scratchWords.length) scratchWords = new Uint32Array(count);
  for (let word = 0; word < count; word++) scratchWords[word] = prefix.readUInt32LE(word * 4);
  return scratchWords;
}

type DrainableStream = NodeJS.WritableStream & { destroyed?: boolean; writableLength?: number };

/** The promise each congested stream hands out until it drains: one set of listeners, however many tasks wait. */
const draining = new WeakMap<DrainableStream, Promise<void>>();

/**
 * Undefined while `stream` holds less than CONGESTED_BYTES unwritten; else a promise that
 * resolves when it has written them all (its 'drain'), or closes or fails.
 */
export function whenStreamDrained(stream: DrainableStream): Promise<void> | undefined {
  const pending = draining.get(stream);
  if (pending !== undefined) return pending;
  if (stream.destroyed === true || (stream.writableLength ?? 0) < CONGESTED_BYTES) return undefined;
  const drained = new Promise<void>((resolve) => {
    const done = (): void => {
      stream.off("drain", done).off("close", done).off("error", done);
      draining.delete(stream);
      resolve();
    };
    stream.on("drain", done).on("close", done).on("error", done);
  });
  draining.set(stream, drained);
  return drained;
}
