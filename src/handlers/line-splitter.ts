/** Lines longer than this many bytes are cut for display (the log keeps them whole). */
export const DISPLAY_LIMIT = 4096;
/**
 * The longest line a splitter made `wholeLines` hands on whole (see LineSplitter): 1 MiB. Past it, a line is cut as
 * without `wholeLines` (of one that "\r" rewrote, only a state that long, its "\r"s aside: see #appendWhole and #append),
 * so a task's open line holds at most this much memory.
 */
const WHOLE_LINE_LIMIT = 1024 * 1024;
/**
 * How long plain output holds a line not ended yet before it shows it as far as it goes (see LineSplitter's
 * `showOpenAfterMs`). A second: a watcher of a CI log sees `waiting for db...` within it, not when its newline comes 30 s
 * later, and a progress bar's latest state once a second; a line a program writes in pieces within a second (a compiler's
 * `Compiling x ... ok`, a shell's several printf) shows whole, as does every line of a flood, whose pieces come microseconds apart.
 */
export const SHOW_OPEN_LINE_AFTER_MS = 1000;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const RETURN = Buffer.from([CARRIAGE_RETURN]);
const ESCAPE = 0x1b;
/** Ends every colour and attribute an escape sequence set (SGR 0). */
const SGR_RESET = "\x1b[0m";
/** How an OSC 8 hyperlink ends (an OSC 8 with no URI): a reset (SGR 0) does not end it. */
const HYPERLINK_END = "\x1b]8;;\x1b\\";
const EMPTY_ENDS = new Int32Array(0);
/** How taskq marks a line it cut for length, after what is kept of it: CUT_MARK, the line's length, CUT_MARK_END (`… (5005 bytes)`). */
const CUT_MARK = "… (";
const CUT_MARK_END = " bytes)";
/**
 * How a line cut for length that may hold a hyperlink goes on after what is kept of it, up to its length (see #emitCut):
 * taskq's ending, not the task's, which followed the link past the cut (see OpenColours).
 */
export const CUT_LINK_ENDING = `${HYPERLINK_END}${SGR_RESET}${CUT_MARK}`;
/**
 * Room past DISPLAY_LIMIT in the open line's buffer: as written (see LineSplitter), a line is
 * handed on from there with its ending added, a "\r\n", or `… (N bytes)` and a "\n" (after a cut, a hyperlink's end and a
 * reset before it: 40 bytes at most).
 */
const ENDING_ROOM = 64;
/**
 * The most bytes kept of what a terminal shows of a line's rewritten beginning (see LineSplitter's `lineState`): past
 * that (a line of thousands of columns, each in colours of its own), only its part from its last "\r" is kept.
 */
const STATE_LIMIT = 2 * DISPLAY_LIMIT;
/**
 * Line ends (see BlockHandler) are valid only during a block handler's call, so one array
 * serves every splitter, lent for the length of a push() and grown as needed: a task that
 * prints made an Int32Array of its own (~10 µs, between its exit and the next task's start).
 * A push() from inside a handler (none does so today) finds it lent and grows one of its own.
 */
let sharedEnds: Int32Array = EMPTY_ENDS;
let sharedEndsLent = false;

/**
 * Splitters whose open line may be shown before it ends (see LineSplitter's `showOpenAfterMs`), and the one timer that
 * looks at them: armed for the earliest due among them while any holds an open line, never per chunk, and unreferenced.
 */
const holding = new Set<LineSplitter>();
let holdingTimer: NodeJS.Timeout | undefined;

/**
 * Receives a run of complete lines as raw bytes: `bytes` holds `count` lines, each
 * ending in "\n", none longer than DISPLAY_LIMIT and none ending in "\r\n" (those come
 * one by one as text); a splitter made `asWritten` passes every line here, as written
 * (see LineSplitter), and, made `wholeLines` too, lines of up to WHOLE_LINE_LIMIT.
 * `ends[i]` is where line i ends in `bytes` (just past its "\n"): the splitter found every
 * newline already, so a consumer need not search for them again. Both are valid only
 * during the call.
 */
export type BlockHandler = (bytes: Buffer, count: number, ends: Int32Array) => void;

/**
 * Splits a byte stream into display lines. Memory stays bounded whatever the input:
 * of a line still open, only its first DISPLAY_LIMIT bytes are kept (WHOLE_LINE_LIMIT with `wholeLines`), plus its length; of
 * one longer than that which a carriage return rewrote (a progress bar), its last state
 * from its "\r" on, after what `lineState` gives of what came before it (a terminal's view of it: what that last state
 * does not cover shows through, and a colour set before it holds; see rewrittenState), or alone without `lineState`.
 *
 * With a block handler, the common case (short lines that end in "\n") is passed on as
 * byte ranges of the chunk, one call per chunk, instead of a string per line: a task
 * printing 300 MB of short lines would otherwise cost three million strings.
 *
 * `asWritten` (with a block handler; for output shown as the task wrote it, into a file or
 * a pipe) hands every line to the block handler, none decoded, so bytes that are not UTF-8
 * go on as they came: a line ending in "\r\n" keeps its "\r"; one longer than DISPLAY_LIMIT
 * is cut as its text would be (on a character's boundary, then `… (N bytes)`); the last
 * gains a "\n" when the output did not end with one. A line no block can take (cut, begun
 * in an earlier chunk, or the last) comes in a block of its own.
 *
 * `showOpenAfterMs` (for plain output a person may watch as it comes: a CI log) shows a line held open that long, as far as
 * it goes (`waiting for db...`, whose newline comes 30 s later), as a line of its own, then holds what comes of it from
 * there on as a new line: a progress bar that rewrites itself with "\r" shows its latest state once a period, not every
 * state. A line written in pieces within the period is shown whole.
 *
 * `wholeLines` (under GitHub Actions: its runner reads the output by whole lines, and masks a secret's value only whole)
 * keeps every line whole, up to WHOLE_LINE_LIMIT: one over DISPLAY_LIMIT is not cut (`::add-mask::` and a long secret, or
 * `token` and that secret: cut, what was kept of the value was shown), and an open line is not shown before it ends
 * (`token: sec`, then `ret` a second later: the runner masked neither piece), but for the states of it a "\r" ended,
 * which the runner reads as lines (see #showStates). Past WHOLE_LINE_LIMIT, a line goes on as without `wholeLines`, but
 * one that "\r" rewrote, whose states before its last go on (see #appendWhole): only a state longer is cut, and the line
 * goes on whole from the "\r" that begins the next (see #append). As written, a line over DISPLAY_LIMIT goes to the block
 * handler in a block of its own; else (JSON records, whose `text` the runner reads as part of their line) to `onLine`, as
 * its text: there, a line that "\r" rewrote is what it is without `wholeLines`, its last state once past DISPLAY_LIMIT (a
 * record escapes its "\r", so the runner reads it as one line, and the states before its last mask nothing: see
 * #dropStates), but that state kept whole up to WHOLE_LINE_LIMIT. Not with `lineState` (a terminal's view, which no runner
 * reads).
 */
export class LineSplitter {
  readonly #onLine: (text: string) => void;
  readonly #onBlock: BlockHandler | undefined;
  /** Every line goes to #onBlock, as bytes (see above). */
  readonly #asWritten: boolean;
  /** First bytes of the open line (DISPLAY_LIMIT + ENDING_ROOM; up to WHOLE_LINE_LIMIT + ENDING_ROOM with wholeLines), allocated on first need. */
  #prefix: Buffer | undefined;
  #prefixBytes = 0;
  /** Length of the open line so far: from its last "\r" on, once that is all it shows (see #append). */
  #lineBytes = 0;
  /** Its whole length so far. */
  #totalBytes = 0;
  #lastByte = -1;
  /** Line ends of the block being gathered (see BlockHandler): sharedEnds while a push() runs. */
  #ends: Int32Array = EMPTY_ENDS;
  /** The end of a line handed on alone (asWritten): a splitter's own, as flush() borrows no #ends. */
  #oneEnd: Int32Array | undefined;

  /** Text the open line's kept bytes follow: what lineState gave of its beginning, rewritten past the bound ("" for none). */
  #state = "";
  readonly #lineState: ((text: string) => string) | undefined;

  /** How long an open line is held before it is shown as far as it goes (see above); 0: until it ends. */
  readonly #showOpenAfterMs: number;
  /** When the open line began to be held (performance.now()), while this splitter is in `holding`. */
  #openedAt = 0;
  /** Its open line was shown as far as it went, and nothing came since: a newline next ends nothing more. */
  #shownOpen = false;
  /** Lines go whole (see above). */
  readonly #wholeLines: boolean;
  /** With wholeLines: the open line is kept whole, not past WHOLE_LINE_LIMIT yet. */
  #whole: boolean;
  /** With wholeLines, as text: states of the open line before a "\r" were dropped (see #dropStates), so it is past DISPLAY_LIMIT. */
  #dropped = false;
  /** With wholeLines, as text: where the states dropped go first (see the constructor's `onDropped`). */
  readonly #onDropped: ((bytes: Buffer) => void) | undefined;

  constructor(
    onLine: (text: string) => void,
    onBlock?: BlockHandler,
    options: {
      asWritten?: boolean;
      lineState?: (text: string) => string;
      showOpenAfterMs?: number;
      wholeLines?: boolean;
      /**
       * With wholeLines, as text: the states of a line that are dropped (see #dropStates), each ended by its "\r", before
       * they go. Each was a line to GitHub Actions' runner, which would have read a command in it (`::add-mask::s3cret\r`
       * and 5,000 bytes of a progress bar: the value, never masked, was shown in every later record).
       */
      onDropped?: (bytes: Buffer) => void;
    } = {},
  ) {
    this.#onLine = onLine;
    this.#onBlock = onBlock;
    this.#asWritten = onBlock !== undefined && options.asWritten === true;
    this.#lineState = this.#asWritten ? undefined : options.lineState;
    this.#showOpenAfterMs = Math.max(0, options.showOpenAfterMs ?? 0);
    this.#wholeLines = this.#lineState === undefined && options.wholeLines === true;
    this.#whole = this.#wholeLines;
    this.#onDropped = this.#wholeLines && !this.#asWritten ? options.onDropped : undefined;
  }

  push(chunk: Buffer): void {
    if (sharedEndsLent) return this.#split(chunk);
    sharedEndsLent = true;
    this.#ends = sharedEnds;
    try {
      this.#split(chunk);
    } finally {
      sharedEnds = this.#ends; // grown, maybe
      this.#ends = EMPTY_ENDS;
      sharedEndsLent = false;
    }
  }

  #split(chunk: Buffer): void {
    let start = 0;
    if (this.#shownOpen) start = this.#afterShown(chunk);
    let blockStart = -1;
    let blockLines = 0;
    const blocks = this.#onBlock !== undefined;
    // As written, a "\r\n" line is bytes like any other: it stays in the block.
    const asWritten = this.#asWritten;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline === -1) break;
      if (this.#lineBytes !== 0) {
        this.#append(chunk, start, newline);
        this.#emitOpenLine();
      } else if (blocks && newline - start <= DISPLAY_LIMIT && (asWritten || newline === start || chunk[newline - 1] !== CARRIAGE_RETURN)) {
        if (blockStart === -1) blockStart = start;
        if (blockLines === this.#ends.length) this.#growEnds();
        this.#ends[blockLines++] = newline + 1 - blockStart;
      } else {
        if (blockStart !== -1) {
          this.#emitBlock(chunk, blockStart, start, blockLines);
          blockStart = -1;
          blockLines = 0;
        }
        if (this.#wholeLines) this.#emitWholeLine(chunk, start, newline);
        else if (asWritten) this.#emitLongLine(chunk, start, newline);
        else this.#onLine(displayLine(chunk, start, newline, this.#lineState));
      }
      start = newline + 1;
    }
    if (blockStart !== -1) this.#emitBlock(chunk, blockStart, start, blockLines);
    const begun = start !== 0 || this.#lineBytes === 0;
    this.#append(chunk, start, chunk.length);
    // A line begun in this chunk is timed from now; one held on, from when it began: one clock read per chunk at most.
    if (this.#showOpenAfterMs !== 0 && this.#lineBytes !== 0 && (begun || !holding.has(this))) this.#hold();
  }

  /** Emits the last line when the output did not end with a newline. */
  flush(): void {
    holding.delete(this);
    this.#shownOpen = false;
    if (this.#lineBytes > 0) this.#emitOpenLine();
  }

  /**
   * Where `chunk` goes on from after the open line was shown (see showOpenAfterMs): past the line's end where that is all
   * that came of it since (a "\n", or a "\r\n"), which would else show an empty line; 0 where more came. A chunk of "\r"
   * alone (a progress bar's return, its newline to come) is passed over, and the line still counts as shown: held, it
   * would show an empty line a period later, and its newline would end nothing more.
   */
  #afterShown(chunk: Buffer): number {
    if (chunk.length === 0) return 0;
    let returns = 0;
    while (returns < chunk.length && chunk[returns] === CARRIAGE_RETURN) returns++;
    if (returns === chunk.length) return returns;
    this.#shownOpen = false;
    if (chunk[0] === NEWLINE) return 1;
    return chunk[0] === CARRIAGE_RETURN && chunk[1] === NEWLINE ? 2 : 0;
  }

  /** Times the open line, just begun, and has the shared timer look at it (see showOpenAfterMs). */
  #hold(): void {
    this.#openedAt = performance.now();
    holding.add(this);
    if (holdingTimer === undefined) LineSplitter.#armHolding(this.#showOpenAfterMs);
  }

  static #armHolding(delayMs: number): void {
    holdingTimer = setTimeout(LineSplitter.#lookAtHeld, Math.max(1, Math.ceil(delayMs)));
    holdingTimer.unref(); // the run's end, not this timer, decides when taskq exits
  }

  /** The shared timer: shows each open line held its period, lets go of splitters whose line ended, and is armed again for the next due. */
  static #lookAtHeld(): void {
    holdingTimer = undefined;
    const now = performance.now();
    let next = Infinity;
    for (const splitter of holding) {
      if (splitter.#lineBytes === 0) {
        holding.delete(splitter);
        continue;
      }
      const due = splitter.#openedAt + splitter.#showOpenAfterMs;
      if (due > now) next = Math.min(next, due);
      else {
        holding.delete(splitter);
        splitter.#showOpen();
      }
    }
    if (next !== Infinity) LineSplitter.#armHolding(next - now);
  }

  /**
   * Shows the open line as far as it goes, as a line of its own (see showOpenAfterMs): as written, its latest state, from
   * its last "\r" that a byte other than "\r" follows (a progress bar's states before it are gone from a terminal too).
   */
  #showOpen(): void {
    // As text (JSON records), a line kept whole comes once it ends: its states are no lines of their own in a record.
    if (this.#whole) return this.#asWritten ? this.#showStates() : undefined;
    // As text (on a terminal) too, where no state of a rewritten line comes before its bytes: a colour's code cut short
    // showed its rest as text (`1mred` of `ESC [ 3`, `1mred`), a character's two bytes each as U+FFFD.
    if ((this.#asWritten || this.#state === "") && this.#lineBytes === this.#prefixBytes && this.#prefix !== undefined) {
      const rewrite = this.#asWritten ? lastRewrite(this.#prefix, 0, this.#prefixBytes) : -1;
      if (rewrite > 0) {
        this.#prefix.copy(this.#prefix, 0, rewrite, this.#prefixBytes);
        this.#prefixBytes -= rewrite;
        this.#lineBytes -= rewrite;
      }
      // An escape sequence or a character its bytes so far cut short (`ESC ] 8 ; ; https://exa` of a hyperlink, its rest to
      // come) is held back, to go with the rest of the line: shown, the "\n" and the prefix taskq writes after it went into
      // it, a hyperlink's text its URI, and taskq could not tell it was started, nor end it before the lines after it.
      const shown = this.#lastByte === CARRIAGE_RETURN ? this.#lineBytes : wholeEnd(this.#prefix, this.#lineBytes);
      // All of it cut short: nothing shown (a sequence shows nothing), the line timed again by the next bytes that come of it.
      if (shown === 0) return;
      if (shown < this.#lineBytes) {
        const held = Buffer.from(this.#prefix.subarray(shown, this.#lineBytes));
        this.#prefixBytes = this.#lineBytes = shown;
        this.#lastByte = this.#prefix[shown - 1] as number;
        this.#emitOpenLine();
        this.#append(held, 0, held.length);
        // Timed again, as a line just begun: the shared timer looking at the held lines goes on to this one.
        this.#openedAt = performance.now();
        holding.add(this);
        return;
      }
    }
    this.#emitOpenLine();
    this.#shownOpen = true;
  }

  /**
   * With wholeLines, the open line held a period: its states that a "\r" ended so far (a progress bar's), each a line of
   * its own to GitHub Actions' runner, which reads a "\r" as a line's end, are shown, as a line; the state after its last
   * "\r" that a byte follows, which may be a value cut short, waits (timed again) as the open line until a byte follows a
   * later "\r", or the line ends: of a bar that ends each state with its "\r" (`printf '%d%%\r'`), each shows a period late. A line with no such "\r" waits
   * whole: shown in pieces, it was two lines to the runner (`::add-mask::sec` or `token: sec`, then `ret`), which masks a
   * value only whole.
   */
  #showStates(): void {
    const buffer = this.#prefix;
    const rewrite = buffer === undefined ? -1 : lastRewrite(buffer, 0, this.#prefixBytes);
    if (rewrite <= 0) return;
    this.#handOnStates(rewrite);
    this.#openedAt = performance.now();
    holding.add(this);
  }

  /**
   * With wholeLines, hands on the open line's kept bytes before `rewrite` (a "\r" that a byte follows: a progress bar's
   * states) as a line, and keeps its bytes from there on, its last state, whole as the open line.
   */
  #handOnStates(rewrite: number): void {
    const buffer = this.#prefix as Buffer;
    // Copied: the line's buffer goes with it.
    const last = Buffer.from(buffer.subarray(rewrite, this.#prefixBytes));
    this.#prefixBytes = this.#lineBytes = this.#totalBytes = rewrite;
    this.#lastByte = buffer[rewrite - 1] as number;
    this.#emitOpenLine();
    this.#append(last, 0, last.length);
  }

  /**
   * With wholeLines, the open line's states before `rewrite` are done with: as written, handed on as a line (the runner reads
   * each "\r" as a line's end; see #handOnStates); as text, dropped (see #dropStates).
   */
  #passStates(rewrite: number): void {
    if (this.#asWritten) this.#handOnStates(rewrite);
    else this.#dropStates(rewrite);
  }

  /**
   * With wholeLines, as text: the open line's kept bytes before `rewrite` (a "\r" that a byte follows) are dropped, as
   * displayLine drops them, and its bytes from there on are kept whole. A record's `text` escapes its "\r", so the runner
   * reads the record as one line: a progress bar's earlier states, handed on, masked nothing and made records of a MiB each.
   */
  #dropStates(rewrite: number): void {
    const buffer = this.#prefix as Buffer;
    this.#onDropped?.(buffer.subarray(0, rewrite));
    buffer.copy(buffer, 0, rewrite, this.#prefixBytes);
    this.#prefixBytes = this.#lineBytes = this.#totalBytes = this.#prefixBytes - rewrite;
    this.#dropped = true;
  }

  #emitBlock(chunk: Buffer, start: number, end: number, count: number): void {
    this.#onBlock?.(chunk.subarray(start, end), count, this.#ends);
  }

  /** Hands on `line` (ending in "\n") as a block of its own. */
  #emitAlone(line: Buffer): void {
    const ends = (this.#oneEnd ??= new Int32Array(1));
    ends[0] = line.length;
    this.#onBlock?.(line, 1, ends);
  }

  /**
   * With wholeLines, a complete line chunk[start, newline] a block did not take: whole up to WHOLE_LINE_LIMIT, as written
   * or as its text ("\r\n" handled; as text, from its last "\r" once past DISPLAY_LIMIT, as displayLine gives it); past
   * it, as #appendWhole keeps it.
   */
  #emitWholeLine(chunk: Buffer, start: number, newline: number): void {
    if (!this.#asWritten) {
      // As text, one that "\r" rewrote is its last state once past DISPLAY_LIMIT (as displayLine gives it, the states before
      // it dropped: see #dropStates).
      const end = chunk[newline - 1] === CARRIAGE_RETURN && newline > start ? newline - 1 : newline;
      const rewrite = end - start > DISPLAY_LIMIT ? lastRewrite(chunk, start, end) : -1;
      const from = rewrite > start ? rewrite : start;
      if (from > start) this.#onDropped?.(chunk.subarray(start, from));
      if (end - from <= WHOLE_LINE_LIMIT) {
        // As bytes where a block can have it: see #emitWholeOpenLine.
        if (end === newline && this.#onBlock !== undefined) return this.#emitAlone(chunk.subarray(from, newline + 1));
        return this.#onLine(chunk.toString("utf8", from, end));
      }
      this.#dropped = from > start;
      start = from;
    } else if (newline - start <= WHOLE_LINE_LIMIT) return this.#emitAlone(chunk.subarray(start, newline + 1));
    // Longer: as the same line in pieces goes (see #appendWhole), a progress bar's states each whole (as text, its last).
    this.#append(chunk, start, newline);
    this.#emitOpenLine();
  }

  /**
   * As written, a complete line chunk[start, newline] too long for a block: whole when its "\r" alone made it so; else as
   * displayLine shows it, from its last "\r" on once past DISPLAY_LIMIT, and cut if that is still too long.
   */
  #emitLongLine(chunk: Buffer, start: number, newline: number): void {
    const end = chunk[newline - 1] === CARRIAGE_RETURN ? newline - 1 : newline;
    if (end - start > DISPLAY_LIMIT) {
      const rewrite = lastRewrite(chunk, start, end);
      if (rewrite > start) start = rewrite;
    }
    if (end - start <= DISPLAY_LIMIT) return this.#emitAlone(chunk.subarray(start, newline + 1));
    chunk.copy(this.#lineBuffer(), 0, start, start + DISPLAY_LIMIT);
    this.#emitCut(end - start);
  }

  /**
   * As written, the open line: its bytes, its "\r" if it ended with one (written again: a line
   * of DISPLAY_LIMIT bytes has it past the prefix), and a "\n", which the output's last line
   * may not have had.
   */
  #emitOpenBytes(length: number): void {
    // A line kept whole (see wholeLines) goes whole.
    if (length > DISPLAY_LIMIT && !this.#whole) return this.#emitCut(length);
    const buffer = this.#lineBuffer();
    let size = length;
    if (this.#lastByte === CARRIAGE_RETURN) buffer[size++] = CARRIAGE_RETURN;
    buffer[size++] = NEWLINE;
    this.#emitAlone(buffer.subarray(0, size));
  }

  /**
   * As written, a line of `length` bytes whose first DISPLAY_LIMIT are in the line buffer,
   * cut as `truncated` cuts its text: on a character's boundary, then `… (N bytes)`. The cut is
   * taskq's, so it splits no escape sequence (a lone ESC would take the "…" into a sequence of
   * its own), and where what is kept holds one, a reset ends it: the colour a line set, whose
   * reset came past the cut, would go on into every line after it in the file or CI log. So does a
   * hyperlink's end where it holds an OSC 8: one whose text the cut split (its end past the cut) made
   * every line after it, taskq's and the summary's, part of the link.
   */
  #emitCut(length: number): void {
    const buffer = this.#lineBuffer();
    const shown = wholeEnd(buffer, DISPLAY_LIMIT);
    const kept = buffer.subarray(0, shown);
    const reset = kept.includes(ESCAPE) ? `${mayHoldLink(kept) ? HYPERLINK_END : ""}${SGR_RESET}` : "";
    this.#emitAlone(buffer.subarray(0, shown + buffer.write(`${reset}${CUT_MARK}${length}${CUT_MARK_END}\n`, shown)));
  }

  /** The open line's buffer; between lines, where an as-written line is put together. */
  #lineBuffer(): Buffer {
    return (this.#prefix ??= Buffer.allocUnsafe(DISPLAY_LIMIT + ENDING_ROOM));
  }

  #growEnds(): void {
    const ends = new Int32Array(Math.max(256, this.#ends.length * 2));
    ends.set(this.#ends);
    this.#ends = ends;
  }

  /** `within`: chunk[start, end) goes on with the state the caller is cutting (see below), not after a "\r" of its. */
  #append(chunk: Buffer, start: number, end: number, within = false): void {
    if (end <= start) return;
    // On from where #appendWhole stopped: the bytes it kept are kept.
    const wasWhole = this.#whole;
    if (wasWhole) start = this.#appendWhole(chunk, start, end);
    if (start === end) return;
    if (this.#wholeLines && !this.#whole) {
      // After a state longer than WHOLE_LINE_LIMIT, cut: the line goes on from the next "\r" that a byte follows as a line
      // of its own, kept whole again (its states were cut, or dropped but for the last, as without wholeLines). That "\r"
      // may end the last chunk (`returned`), but not where it was kept whole just now, before the state #appendWhole found
      // too long, which starts here, nor within the state being cut (`within`).
      const returned = !wasWhole && !within && this.#lastByte === CARRIAGE_RETURN && chunk[start] !== CARRIAGE_RETURN;
      const rewrite = returned ? start : firstRewrite(chunk, start, end);
      if (rewrite !== -1) {
        // As text, the state cut is dropped, as the states before it were (see #dropStates): the line goes on whole.
        if (this.#asWritten) {
          this.#append(chunk, start, rewrite, true);
          this.#emitOpenLine();
        } else {
          if (this.#prefix !== undefined) this.#onDropped?.(this.#prefix.subarray(0, this.#prefixBytes));
          this.#prefixBytes = this.#lineBytes = this.#totalBytes = 0;
          this.#lastByte = -1;
          this.#whole = this.#dropped = true;
        }
        if (returned) this.#append(RETURN, 0, 1);
        return this.#append(chunk, rewrite, end);
      }
    }
    // A line that "\r" rewrites (a progress bar) and that outgrows the display: its last state
    // is kept from its "\r" on, after what lineState gives of the states before it (see
    // #keepState), or alone without lineState. A "\r" counts once a byte other than
    // "\r" follows it: one that ends a chunk may start a "\r\n", and one with nothing after it
    // ("\r\r\n") rewrites nothing.
    if (this.#lineState !== undefined) {
      if (this.#prefixBytes + end - start > DISPLAY_LIMIT) start = this.#keepState(chunk, start, end);
    } else if (this.#totalBytes + end - start > DISPLAY_LIMIT) {
      const rewrite = lastRewrite(chunk, start, end);
      if (rewrite >= start) {
        this.#totalBytes += rewrite - start;
        this.#prefixBytes = 0;
        this.#lineBytes = 0;
        start = rewrite;
      } else if (this.#lastByte === CARRIAGE_RETURN && chunk[start] !== CARRIAGE_RETURN) {
        this.#lineBuffer()[0] = CARRIAGE_RETURN;
        this.#prefixBytes = 1;
        this.#lineBytes = 1;
      } else if (this.#lineBytes === this.#prefixBytes) {
        // Its last such "\r" came in an earlier chunk, and the line is kept whole so far: from there on, as the same line
        // in one chunk shows (before, it showed from its first byte, its earlier state and the last cut for length).
        const buffer = this.#lineBuffer();
        const kept = lastRewrite(buffer, 0, this.#prefixBytes);
        if (kept > 0) {
          buffer.copy(buffer, 0, kept, this.#prefixBytes);
          this.#prefixBytes -= kept;
          this.#lineBytes -= kept;
        }
      }
    }
    this.#totalBytes += end - start;
    this.#lineBytes += end - start;
    this.#lastByte = chunk[end - 1] ?? -1;
    const room = DISPLAY_LIMIT - this.#prefixBytes;
    if (room <= 0) return;
    // Copied, not sliced: a slice would pin the whole chunk in memory.
    this.#prefixBytes += chunk.copy(this.#lineBuffer(), this.#prefixBytes, start, Math.min(end, start + room));
  }

  /**
   * The open line's kept bytes would outgrow the bound (with lineState): what comes before its last "\r" that a byte other
   * than "\r" follows, in this chunk or in the kept bytes, becomes the state (see lineState), and the kept bytes start at
   * that "\r". Returns where in chunk[start, end) the bytes to keep go on from.
   */
  #keepState(chunk: Buffer, start: number, end: number): number {
    const buffer = this.#lineBuffer();
    const rewrite = lastRewrite(chunk, start, end);
    const whole = this.#lineBytes === this.#prefixBytes;
    if (rewrite >= start) {
      // Bytes past the kept ones were dropped (a stretch of over DISPLAY_LIMIT bytes without a "\r"): of those, only the kept ones, to a whole character and sequence;
      // then this chunk's states before its last, from their first "\r" (or a "\r" that ended the last chunk, dropped too): each writes from the first column.
      // Decoded as one: a character may have begun in the kept bytes and end in this chunk.
      const kept = buffer.subarray(0, whole ? this.#prefixBytes : wholeEnd(buffer, this.#prefixBytes));
      const returned = !whole && this.#lastByte === CARRIAGE_RETURN;
      const from = whole || returned ? start : chunk.indexOf(CARRIAGE_RETURN, start);
      this.#setState(`${this.#state}${Buffer.concat(returned ? [kept, RETURN, chunk.subarray(from, rewrite)] : [kept, chunk.subarray(from, rewrite)]).toString("utf8")}`);
      this.#prefixBytes = this.#lineBytes = 0;
      return rewrite;
    }
    if (this.#lastByte === CARRIAGE_RETURN && chunk[start] !== CARRIAGE_RETURN && !whole) {
      // The "\r" that ended the last chunk was past the kept bytes: the state of those, then that "\r".
      this.#setState(`${this.#state}${buffer.toString("utf8", 0, wholeEnd(buffer, this.#prefixBytes))}`);
      buffer[0] = CARRIAGE_RETURN;
      this.#prefixBytes = this.#lineBytes = 1;
      return start;
    }
    const at = this.#lastByte === CARRIAGE_RETURN && chunk[start] !== CARRIAGE_RETURN ? this.#prefixBytes - 1 : lastRewrite(buffer, 0, this.#prefixBytes);
    if (at <= 0) return start;
    this.#setState(`${this.#state}${buffer.toString("utf8", 0, at)}`);
    buffer.copy(buffer, 0, at, this.#prefixBytes);
    this.#prefixBytes -= at;
    this.#lineBytes -= at;
    return start;
  }

  /**
   * With wholeLines, the open line so far kept whole: chunk[start, end) is kept with it, up to WHOLE_LINE_LIMIT (a state
   * after a "\r" and the "\r" that ends it: the line's first "\r" counts with neither). A line that "\r" rewrote (a
   * progress bar, whose states the runner reads as lines) goes on whole past that, its states before its last "\r" that a
   * byte follows handed on as #showStates hands them on (as text, dropped: see #passStates), each at most that long: its
   * states of a second held it all (they are shown once a second), and past the bound its last state was shown cut, a value
   * in it unmasked. Returns where chunk[start, end) goes on from as without wholeLines (end: all of it kept): where one
   * state (a line with no "\r") is longer, of which the first DISPLAY_LIMIT bytes are kept.
   */
  #appendWhole(chunk: Buffer, start: number, end: number): number {
    let buffer = this.#lineBuffer();
    for (;;) {
      const kept = this.#prefixBytes;
      // A line's first "\r" (a state's, after the states before it went on) is not counted: a state of the bound's length
      // after a "\r" goes whole, as one at the line's start does.
      const bound = WHOLE_LINE_LIMIT + ((kept === 0 ? chunk[start] : buffer[0]) === CARRIAGE_RETURN ? 1 : 0);
      // Past the bound by a state's "\r" alone: kept, as the state it ends is whole still.
      if (kept + end - start <= bound || start === end) break;
      // The kept bytes' last "\r" that a byte follows (one that ends them, where this chunk's next byte is no "\r"): the
      // states before it go on.
      const rewrite = buffer[kept - 1] === CARRIAGE_RETURN && chunk[start] !== CARRIAGE_RETURN ? kept - 1 : lastRewrite(buffer, 0, kept);
      if (rewrite > 0) {
        this.#passStates(rewrite);
        buffer = this.#lineBuffer();
        continue;
      }
      // Else as much of this chunk as the bound leaves room for, to its last "\r" there (a state of the bound's length and
      // its "\r" included), for the states before it to go on.
      const room = bound - kept;
      const returned = room >= 0 ? chunk.lastIndexOf(CARRIAGE_RETURN, start + room) : -1;
      if (returned >= start) {
        buffer = this.#keepWhole(chunk, start, returned + 1);
        start = returned + 1;
        continue;
      }
      if (buffer[kept - 1] === CARRIAGE_RETURN && chunk[start] === CARRIAGE_RETURN) {
        // The kept bytes end in "\r" at the bound, and more "\r" come (`\r\r\n`, a "\r\n" after a state's "\r"): whole
        // states, not a state longer than the bound. Where the line ends with them (a "\n" follows: #split and #emitLongLine
        // append a line up to its "\n"), kept with it, as far as the buffer's ending room goes: they rewrite nothing.
        const returns = returnsEnd(chunk, start, end);
        if (returns === end && chunk[end] === NEWLINE && kept + end - start < WHOLE_LINE_LIMIT + ENDING_ROOM) {
          buffer = this.#keepWhole(chunk, start, end);
          start = end;
          continue;
        }
        // Else the states before those "\r" go on, and the line goes on from the first of them.
        let first = kept - 1;
        while (first > 0 && buffer[first - 1] === CARRIAGE_RETURN) first--;
        if (first > 0) {
          this.#passStates(first);
          buffer = this.#lineBuffer();
          continue;
        }
      }
      // A state longer than the bound.
      this.#whole = false;
      this.#prefixBytes = Math.min(this.#prefixBytes, DISPLAY_LIMIT);
      return start;
    }
    this.#keepWhole(chunk, start, end);
    return end;
  }

  /**
   * With wholeLines, chunk[start, end) kept with the open line (at most WHOLE_LINE_LIMIT bytes in all, and a state's "\r"s:
   * see #appendWhole); its buffer.
   */
  #keepWhole(chunk: Buffer, start: number, end: number): Buffer {
    let buffer = this.#lineBuffer();
    const length = this.#prefixBytes + end - start;
    if (end <= start) return buffer;
    if (length + ENDING_ROOM > buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(Math.max(length, buffer.length * 2), WHOLE_LINE_LIMIT) + ENDING_ROOM);
      buffer.copy(grown, 0, 0, this.#prefixBytes);
      this.#prefix = buffer = grown;
    }
    chunk.copy(buffer, this.#prefixBytes, start, end);
    this.#prefixBytes = this.#lineBytes = this.#totalBytes = length;
    this.#lastByte = chunk[end - 1] ?? -1;
    return buffer;
  }

  #setState(text: string): void {
    this.#state = boundedState(this.#lineState as (text: string) => string, text);
  }

  /**
   * As text, a line kept whole (see wholeLines), prefix[from, length), not ended by a "\r": as bytes, a block's line of
   * its own, as a block has the lines up to DISPLAY_LIMIT bytes, which it takes as text takes them (a "\r" before its
   * "\n" aside). As text, JSON's record of a line of 1 MB was its decoding, JSON.stringify's copy, a search of that for
   * a C1 control, its encoding again, and the tail's searches of it for a "\r": 2.5 times plain output's time
   * (`--output json` under GitHub Actions, lines of 1 MB). As bytes, a record copies a line JSON keeps as it is.
   */
  #emitWholeOpenLine(prefix: Buffer, from: number, length: number): void {
    prefix[length] = NEWLINE;
    this.#emitAlone(prefix.subarray(from, length + 1));
  }

  #emitOpenLine(): void {
    const length = this.#lastByte === CARRIAGE_RETURN ? this.#lineBytes - 1 : this.#lineBytes;
    if (this.#asWritten) this.#emitOpenBytes(length);
    else {
      const prefix = this.#prefix ?? Buffer.alloc(0);
      // A line kept whole (see wholeLines) goes whole: one that "\r" rewrote, from its last "\r" once past DISPLAY_LIMIT,
      // as displayLine gives it.
      const rewrite = this.#whole && (this.#dropped || length > DISPLAY_LIMIT) ? lastRewrite(prefix, 0, length) : -1;
      const from = rewrite > 0 ? rewrite : 0;
      if (from > 0) this.#onDropped?.(prefix.subarray(0, from));
      if (this.#whole && length === this.#lineBytes && length < prefix.length && this.#onBlock !== undefined) this.#emitWholeOpenLine(prefix, from, length);
      else this.#onLine(`${this.#state}${length <= DISPLAY_LIMIT || this.#whole ? prefix.toString("utf8", from, length) : truncated(prefix, DISPLAY_LIMIT, length)}`);
    }
    this.#state = "";
    this.#prefixBytes = 0;
    this.#lineBytes = 0;
    this.#totalBytes = 0;
    this.#lastByte = -1;
    this.#whole = this.#wholeLines;
    this.#dropped = false;
    // A whole line's buffer goes with it: a splitter holds DISPLAY_LIMIT bytes between lines.
    if (this.#prefix !== undefined && this.#prefix.length > DISPLAY_LIMIT + ENDING_ROOM) this.#prefix = undefined;
  }
}

/** Where the run of "\r" that chunk[start, end) starts with ends (start: it starts with none). */
function returnsEnd(chunk: Buffer, start: number, end: number): number {
  while (start < end && chunk[start] === CARRIAGE_RETURN) start++;
  return start;
}

/**
 * Where the first "\r" of chunk[start, end) that a byte other than "\r" follows there begins its run of "\r" (-1: none):
 * the start of the first state a "\r" begins.
 */
function firstRewrite(chunk: Buffer, start: number, end: number): number {
  const first = chunk.indexOf(CARRIAGE_RETURN, start);
  if (first === -1 || first >= end) return -1;
  return returnsEnd(chunk, first, end) < end ? first : -1;
}

/**
 * Where the last "\r" of chunk[start, end) that a byte other than "\r" follows there is (-1, or
 * before start: none): the start of the last state of a line carriage returns rewrote.
 */
function lastRewrite(chunk: Buffer, start: number, end: number): number {
  let last = end;
  while (last > start && chunk[last - 1] === CARRIAGE_RETURN) last--;
  return last - start >= 2 ? chunk.lastIndexOf(CARRIAGE_RETURN, last - 2) : -1;
}

/**
 * The display text of chunk[start, newline): "\r\n" handled, long lines cut (one that "\r" rewrote, to its last state,
 * after what `lineState` gives of what came before it, if it is not too long to keep).
 */
function displayLine(chunk: Buffer, start: number, newline: number, lineState?: (text: string) => string): string {
  const end = newline > start && chunk[newline - 1] === CARRIAGE_RETURN ? newline - 1 : newline;
  let state = "";
  if (end - start > DISPLAY_LIMIT) {
    const rewrite = lastRewrite(chunk, start, end);
    if (rewrite > start) {
      if (lineState !== undefined) state = boundedState(lineState, chunk.toString("utf8", start, rewrite));
      start = rewrite;
    }
  }
  const length = end - start;
  if (length <= DISPLAY_LIMIT) return `${state}${chunk.toString("utf8", start, end)}`;
  return `${state}${truncated(chunk.subarray(start, start + DISPLAY_LIMIT), DISPLAY_LIMIT, length)}`;
}

/** What `lineState` gives of `text`, or "" when it is too long to keep (over STATE_LIMIT): the line then shows from its last "\r". */
function boundedState(lineState: (text: string) => string, text: string): string {
  const state = lineState(text);
  return state.length <= STATE_LIMIT && Buffer.byteLength(state) <= STATE_LIMIT ? state : "";
}

/** A line cut for length, on a character's boundary and outside any escape sequence (see wholeEnd), then `… (N bytes)`. */
function truncated(bytes: Buffer, shown: number, length: number): string {
  return `${bytes.toString("utf8", 0, wholeEnd(bytes, shown))}${CUT_MARK}${length}${CUT_MARK_END}`;
}

/**
 * Where `line` (a line's text or bytes, its "\n" or not) ends as a line cut for length does: `ending` (CUT_MARK, or
 * CUT_LINK_ENDING as #emitCut ends what it keeps of one that may hold a hyperlink), the line's length, CUT_MARK_END.
 * Where that ending starts, or -1. Taskq's mark is not the task's text: what is set for the task's text (its colours, a
 * hyperlink) ends before it (see #emitCut, terminalSafe, the summary's last lines), and no link in it is followed. Only
 * a length over `longerThan` is taskq's: it cuts no line shorter (DISPLAY_LIMIT bytes for a line shown, TAIL_LINE_LIMIT
 * characters for one of the summary's last lines). A task's own short line that ends so (`\e]8;;\e\\\e[0m… (12 bytes)`,
 * `\e[31mfoo… (12 bytes)`) is its text: taken for a cut, its link, ended, went on over its next lines, and its colours
 * ended before its last words.
 */
export function cutMarkStart(line: string | Buffer, ending: string = CUT_MARK, longerThan: number = TAIL_LINE_LIMIT): number {
  const code = (at: number): number => (typeof line === "string" ? line.charCodeAt(at) : (line[at] ?? -1));
  let end = line.length;
  if (code(end - 1) === NEWLINE) end--;
  // Most lines: not a ")" at their end.
  if (code(end - 1) !== 0x29) return -1;
  const digitsEnd = end - CUT_MARK_END.length;
  if (digitsEnd <= 0 || line.indexOf(CUT_MARK_END, digitsEnd) !== digitsEnd) return -1;
  let digits = digitsEnd;
  while (digits > 0 && code(digits - 1) >= 0x30 && code(digits - 1) <= 0x39) digits--;
  if (digits === digitsEnd || code(digits) === 0x30) return -1;
  const length = Number(typeof line === "string" ? line.slice(digits, digitsEnd) : line.toString("latin1", digits, digitsEnd));
  const start = digits - (typeof line === "string" ? ending.length : Buffer.byteLength(ending));
  return length > longerThan && start >= 0 && line.indexOf(ending, start) === start ? start : -1;
}

/**
 * The largest end <= `end` that splits neither a UTF-8 character nor an escape sequence (ESC [, its parameters, a final
 * byte), nor a string one (OSC, DCS, APC, PM, SOS: ESC ], P, _, ^ or X, up to its BEL or ESC \), which a terminal would
 * take what follows the cut into, a hyperlink's (OSC 8) or a title's unended text swallowing the lines after it.
 */
function wholeEnd(bytes: Buffer, end: number): number {
  end = utf8Boundary(bytes, end);
  // A cut before a sequence may leave an earlier one open: an OSC whose ST (ESC \) the first cut split. A line of thousands
  // of unended sequences ("ESC [" after "ESC [") would be stepped back over one by one, a flood of such lines 50 times slower
  // than of plain ones: past a few steps, the cut is before the line's first ESC, which splits none.
  for (let cut = openSequence(bytes, end), steps = 0; cut !== end; cut = openSequence(bytes, end), steps++) {
    if (steps === MOST_STEPS_BACK) return Math.min(bytes.indexOf(ESCAPE), cut);
    end = cut;
  }
  return end;
}

/**
 * Whether `bytes` may leave an OSC 8 hyperlink open: one of its last 16 escape sequences starts one, or it has more (an end
 * where none is open does nothing). Looked for from its last ESC back, not by includes("ESC ] 8 ;"), which took 17 µs
 * over a line of thousands of "ESC ]" (a colour's line, a few ESC, costs a few look-ups).
 */
function mayHoldLink(bytes: Buffer): boolean {
  let escape = bytes.length;
  for (let seen = 0; seen < 16; seen++) {
    escape = escape === 0 ? -1 : bytes.lastIndexOf(ESCAPE, escape - 1);
    if (escape === -1) return false;
    if (bytes[escape + 1] === 0x5d && bytes[escape + 2] === 0x38 && bytes[escape + 3] === 0x3b) return true;
  }
  return true;
}

/** How many escape sequences wholeEnd steps back over, one by one, before it cuts before the first. */
const MOST_STEPS_BACK = 16;

/** How far back from a cut openSequence looks for an ESC byte by byte, before it asks lastIndexOf. */
const NEAR_ESCAPE = 32;

/** Where the escape sequence that bytes[0, end) ends inside of starts, or `end` where none does (see wholeEnd). */
function openSequence(bytes: Buffer, end: number): number {
  // wholeEnd calls this once per sequence it steps back over: its near ESC is looked for byte by byte, a native call for
  // each of a line of 2,000 unended "ESC [" or "ESC ]" cost as much as the rest of the line's handling 20 times over (and an
  // indexOf of the BEL to the buffer's end, past `end`, for each "ESC ]", 50 times); a far one by lastIndexOf, which a
  // line without an escape (most) ends at once.
  let escape = end - 1;
  const near = Math.max(end - NEAR_ESCAPE, 0);
  while (escape >= near && bytes[escape] !== ESCAPE) escape--;
  if (escape < near) escape = near === 0 ? -1 : bytes.lastIndexOf(ESCAPE, near - 1);
  if (escape === -1) return end;
  if (escape === end - 1) return escape;
  const kind = bytes[escape + 1] as number;
  if (kind === 0x5d || kind === 0x50 || kind === 0x5f || kind === 0x5e || kind === 0x58) {
    for (let index = escape + 2; index < end; index++) if (bytes[index] === 0x07) return end;
    return escape;
  }
  if (kind !== 0x5b) return end;
  for (let index = escape + 2; index < end; index++) {
    const byte = bytes[index] as number;
    if (byte >= 0x40 && byte <= 0x7e) return end;
    if (byte < 0x20 || byte > 0x3f) return end;
  }
  return escape;
}

/** As wholeEnd, of text: the largest end <= `end` that splits no escape sequence of `text`. */
function wholeTextEnd(text: string, end: number): number {
  for (;;) {
    const escape = end === 0 ? -1 : text.lastIndexOf("\x1b", end - 1);
    if (escape === -1) return end;
    const bytes = Buffer.from(text.slice(escape, end));
    if (openSequence(bytes, bytes.length) === bytes.length) return end;
    end = escape;
  }
}

/** The largest end <= `end` that does not split a UTF-8 character. */
function utf8Boundary(bytes: Buffer, end: number): number {
  for (let index = end - 1; index >= 0 && index >= end - 4; index--) {
    const byte = bytes[index] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return index + size > end ? index : end;
  }
  return end;
}

/**
 * The last `size` lines, oldest first, up to the last line that is not blank: blank lines (spaces, tabs, carriage
 * returns, colour codes and other escape sequences) at the end are left out, so that a test runner's or a build's trailing empty lines do not push
 * the lines that say what went wrong out of a failed task's summary. Blank lines between others are kept.
 */
export class Tail {
  readonly #size: number;
  /** Lines that came after the held ones (see #held), at most `size`: text, or a long line already as lines() gives it (see Cut). */
  readonly #lines: (string | Cut)[] = [];
  /**
   * The last `size` lines of the latest block that filled the tail, as bytes (each ending
   * in "\n"), older than every line in #lines, and decoded only when they are asked for:
   * a loud task's blocks mostly replace one another.
   */
  #held: Buffer | undefined;
  #heldBytes = 0;
  /** Blank lines since the last line that is not (the last `size` of them): kept once a line that is not blank follows. */
  readonly #blanks: (string | Cut)[] = [];
  /** A long line is cut after a whole word (see wordsEnd): under GitHub Actions, whose runner masks a value only whole. */
  readonly #words: boolean;

  constructor(size: number, options: { words?: boolean } = {}) {
    this.#size = Math.max(0, size);
    this.#words = options.words === true;
  }

  push(line: string): void {
    if (line.length <= LONG_TAIL_TEXT) return this.#add(line, isBlankText(line));
    // A line kept whole as text (JSON output under GitHub Actions), cut as it comes, as #pushLine cuts a block's: its
    // length its own, as a line this long is none taskq cut (see LONG_TAIL_TEXT).
    this.#add(new Cut(lastState(line, String(Buffer.byteLength(line)), this.#words)), isBlankText(line));
  }

  #add(line: string | Cut, blank: boolean): void {
    if (this.#size === 0) return;
    if (blank) {
      this.#blanks.push(line);
      if (this.#blanks.length > this.#size) this.#blanks.shift();
      return;
    }
    for (const blank of this.#blanks.splice(0)) this.#keep(blank);
    this.#keep(line);
  }

  #keep(line: string | Cut): void {
    this.#lines.push(line);
    if (this.#lines.length > this.#size) this.#lines.shift();
    if (this.#lines.length === this.#size) this.#heldBytes = 0; // the held lines are out of the tail now
  }

  /**
   * A block's line bytes[start, newline): decoded, or, longer than LONG_TAIL_LINE bytes (a line kept whole under GitHub
   * Actions, up to 1 MiB), cut as lines() would cut its text, of which no more is decoded than that keeps: kept whole till
   * then, 20 such lines held 20 MiB of each running task's memory (40 as UTF-16), where the tail shows 1,000 characters of each.
   */
  #pushLine(bytes: Buffer, start: number, newline: number): void {
    if (newline - start <= LONG_TAIL_LINE) return this.push(blockLineText(bytes, start, newline));
    const end = bytes[newline - 1] === CARRIAGE_RETURN ? newline - 1 : newline;
    this.#add(new Cut(tailLineOfBytes(bytes, start, end, this.#words)), isBlankBytes(bytes, start, end));
  }

  /** The last lines of a block (see BlockHandler), kept as bytes until they are needed. */
  pushBlock(bytes: Buffer, count: number, ends: Int32Array): void {
    if (this.#size === 0) return;
    // The block's last line that is not blank: those after it wait, as blank lines pushed one by one do.
    let last = count - 1;
    while (last >= 0 && isBlankBytes(bytes, last === 0 ? 0 : (ends[last - 1] as number), (ends[last] as number) - 1)) last--;
    const pushLine = (line: number) => this.#pushLine(bytes, line === 0 ? 0 : (ends[line - 1] as number), (ends[line] as number) - 1);
    const start = last + 1 <= this.#size ? 0 : (ends[last - this.#size] as number);
    const length = last === -1 ? 0 : (ends[last] as number) - start;
    // Held as bytes only while they are as many as `size` lines cut for display would be: a long line (see #pushLine) is cut.
    if (last + 1 < this.#size || length > this.#size * LONG_TAIL_LINE) {
      for (let line = Math.max(0, last + 1 - this.#size); line <= last; line++) pushLine(line);
    } else {
      // The block alone fills the tail: what came before it is gone.
      this.#lines.length = 0;
      this.#blanks.length = 0;
      if (this.#held === undefined || this.#held.length < length) this.#held = Buffer.allocUnsafe(Math.max(length, 4096));
      bytes.copy(this.#held, 0, start, start + length);
      this.#heldBytes = length;
    }
    // Its blank lines at the end, the last `size` of them (each decoded, or cut as a long line is: see #pushLine).
    for (let line = Math.max(last + 1, count - this.#size); line < count; line++) pushLine(line);
  }

  /**
   * The lines, each cut to TAIL_LINE_LIMIT characters (see tailLine). Each is a string of its
   * own: a piece of a larger string (split, slice) would keep all of that one alive.
   */
  lines(): string[] {
    const held: string[] = [];
    if (this.#heldBytes > 0 && this.#held !== undefined) {
      for (let start = 0; start < this.#heldBytes; ) {
        const end = this.#held.indexOf(0x0a, start);
        if (end === -1 || end >= this.#heldBytes) break; // cannot be: the held lines each end in "\n"
        held.push(blockLineText(this.#held, start, end));
        start = end + 1;
      }
    }
    return [...held, ...this.#lines].slice(-this.#size).map((line) => (line instanceof Cut ? line.text : tailLine(line, this.#words)));
  }
}

/** A long line a Tail keeps as its lines() give it: cut already (see Tail's #pushLine). */
class Cut {
  constructor(readonly text: string) {}
}

/**
 * A block's line longer than this many bytes is cut as it comes into a Tail (see its #pushLine), not when the tail's lines
 * are asked for: a line cut for display is shorter (DISPLAY_LIMIT bytes and its ending), so only one kept whole is cut so.
 */
const LONG_TAIL_LINE = DISPLAY_LIMIT + ENDING_ROOM;

/**
 * As LONG_TAIL_LINE, of a line of text, in characters (see Tail's push): a line cut for display is shorter, on a terminal
 * with what lineState gave of its rewritten beginning (STATE_LIMIT at most) before it.
 */
const LONG_TAIL_TEXT = STATE_LIMIT + LONG_TAIL_LINE;

/**
 * The text of a block's line bytes[start, newline), as the splitter's text path gives it: an
 * as-written block (see LineSplitter) keeps a "\r" before the "\n", which the text drops.
 */
function blockLineText(bytes: Buffer, start: number, newline: number): string {
  return bytes.toString("utf8", start, newline > start && bytes[newline - 1] === CARRIAGE_RETURN ? newline - 1 : newline);
}

/**
 * A tail line is kept for the whole run (every failed task's is in the summary, and the
 * durable store keeps every task's): cut to this many characters, not DISPLAY_LIMIT bytes,
 * so 3,000 failed tasks that print long lines hold 60 MB, not 250.
 */
export const TAIL_LINE_LIMIT = 1000;

/**
 * `line` cut to TAIL_LINE_LIMIT characters, ending as a display line cut for length does: "… (N
 * bytes)". A line that carriage returns rewrote (a progress bar), short or long, is kept from its
 * last "\r" on: its last state, not every state it went through (a summary piped to a CI log showed
 * "dl 10%^Mdl 50%^Mdl 100%"), nor its first cut short (a bar of 1,400 bytes as "progre… (1412 bytes)").
 */
function tailLine(line: string, words: boolean): string {
  if (line.length <= TAIL_LINE_LIMIT && !line.includes("\r")) return line;
  // A line already cut for display says how long it really was.
  const mark = cutMarkStart(line);
  const bytes = mark === -1 ? String(Buffer.byteLength(line)) : line.slice(mark + CUT_MARK.length, line.length - CUT_MARK_END.length);
  return lastState(line, bytes, words);
}

/** tailState of `line`'s last state, from its last "\r" that something follows (see tailLine); `bytes` its length. */
function lastState(line: string, bytes: string, words: boolean): string {
  // A carriage return with nothing after it rewrites nothing ("…\r\r\n": a "\r\n" written in text mode).
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === CARRIAGE_RETURN) end--;
  const rewrite = end === 0 ? -1 : line.lastIndexOf("\r", end - 1);
  return tailState(rewrite > 0 ? line.slice(rewrite) : line, bytes, words);
}

/**
 * A line's last state as tailLine keeps it: whole up to TAIL_LINE_LIMIT characters, else cut, then `… (bytes bytes)`;
 * with `words`, cut after a whole word (see wordsEnd).
 */
function tailState(last: string, bytes: string, words: boolean): string {
  // Copied out: a slice would keep the whole line alive.
  if (last.length <= TAIL_LINE_LIMIT) return Buffer.from(last).toString();
  let cut = TAIL_LINE_LIMIT;
  const code = last.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--; // never half a surrogate pair
  // Before wholeTextEnd: a window title's sequence may hold a space.
  if (words) cut = wordsEnd(last, cut);
  cut = wholeTextEnd(last, cut);
  return `${Buffer.from(last.slice(0, cut)).toString()}${CUT_MARK}${bytes}${CUT_MARK_END}`;
}

/**
 * tailLine of the text of bytes[start, end), decoding no more of it than that keeps: its last state's first bytes, as
 * many as TAIL_LINE_LIMIT characters and one more take at most (a "\r" is a byte of its own in UTF-8). Its length is its
 * bytes' (as a line cut for display says), not its text's: the same where it is UTF-8.
 */
function tailLineOfBytes(bytes: Buffer, start: number, end: number, words: boolean): string {
  const line = bytes.subarray(start, end);
  // Its whole length: a line this long is none taskq cut (see LONG_TAIL_LINE), and a `… (N bytes)` at its end the task's text.
  const length = String(line.length);
  const rewrite = lastRewrite(line, 0, line.length);
  const from = rewrite > 0 ? rewrite : 0;
  return tailState(line.toString("utf8", from, Math.min(line.length, from + TAIL_DECODED_BYTES)), length, words);
}

/**
 * Where text[0, cut) ends after its last whole word: at the last space or tab at or before `cut` (0 where there is none).
 * Under GitHub Actions, whose runner masks a secret's value only whole, a summary's line of a failed task cut within a
 * value (`Authorization: Bearer <token>` with the token across the 1,000th character) showed its first part, which no
 * mask matched; cut where a space or tab follows, each word shown is shown whole, and a value with no space in it with it.
 */
function wordsEnd(text: string, cut: number): number {
  for (let at = cut; at > 0; at--) {
    const code = text.charCodeAt(at);
    if (code === 0x20 || code === 0x09) return at;
  }
  return 0;
}

/**
 * A task's last line as the store keeps it, shown where GitHub Actions' runner reads it (`dead-letters`, `status`): where it
 * was cut at TAIL_LINE_LIMIT characters, cut after its last whole word too, as a worker under GitHub Actions cuts one (see
 * wordsEnd). A worker elsewhere kept the first part of a value across the cut (`Authorization: Bearer <token>`), which
 * the runner, masking a value only whole, showed. A line cut shorter, after a whole word already, is as it is (one cut so at
 * the limit loses its last word, shown whole in the log).
 */
export function tailLineInWords(line: string): string {
  const mark = cutMarkStart(line);
  if (mark < TAIL_LINE_LIMIT - 1) return line;
  // The character after the kept text is unknown (the mark's `…` stands there): the last word kept may be a part.
  return `${line.slice(0, wholeTextEnd(line, wordsEnd(line, mark)))}${line.slice(mark)}`;
}

/** At most how many bytes make TAIL_LINE_LIMIT characters and one more (four a character), so tailLineOfBytes needs no more. */
const TAIL_DECODED_BYTES = 4 * (TAIL_LINE_LIMIT + 1);

/** A character that is not a space, tab, carriage return, vertical tab or form feed (as isBlankBytes takes them). */
const NOT_BLANK = /[^ \t\r\v\f]/;
/**
 * An escape sequence, which shows nothing of its own: a colour code (SGR) or any other control sequence (ESC [ ... and a
 * final byte: a cursor shown again, `\x1b[?25h`, as a program may print on its way out; an erase, `\x1b[K`), an
 * operating system command ended by BEL or ESC \ (a window title; a hyperlink's text is outside it), or ESC and one
 * character after any intermediates (`tput sgr0` begins with `\x1b(B`).
 */
// eslint-disable-next-line no-control-regex -- escapes are what it matches
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])/g;

/**
 * Whether a line shows nothing: spaces, tabs, carriage returns and escape sequences only (read up to its first other
 * character); or one that carriage returns rewrote, whose last state (from its last "\r" that something follows, all
 * that tailLine keeps of it) is so: a progress line cleared on a program's way out, "50%\r\x1b[K".
 */
function isBlankText(line: string): boolean {
  const first = line.search(NOT_BLANK);
  if (first === -1) return true;
  if (line.charCodeAt(first) === ESCAPE && line.replace(ESCAPE_SEQUENCE, "").search(NOT_BLANK) === -1) return true;
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === CARRIAGE_RETURN) end--;
  const rewrite = end === 0 ? -1 : line.lastIndexOf("\r", end - 1);
  return rewrite > first && isBlankText(line.slice(rewrite, end));
}

/** isBlankText of bytes[start, end) (a block's line, without its "\n"). */
function isBlankBytes(bytes: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index++) {
    const byte = bytes[index] as number;
    if (byte === 0x20 || byte === 0x09 || byte === CARRIAGE_RETURN || byte === 0x0b || byte === 0x0c) continue;
    // An escape sequence, or a "\r" after what shows: read as text (latin1 keeps each byte one character, so no byte is
    // taken for a space it is not part of).
    if (byte === ESCAPE || bytes.subarray(index + 1, end).includes(CARRIAGE_RETURN)) return isBlankText(bytes.toString("latin1", index, end));
    return false;
  }
  return true;
}
