import type { StreamName } from "../../handlers/index.js";
import type { ChalkInstance } from "chalk";
import type { Ora } from "ora";
import type { Queue } from "../../engine/index.js";
import { BufferedWriter, whenStreamDrained } from "../output.js";
import { eachLineText, expandTabsInBlock, hasControlBytes, OpenColours, rewrittenState, terminalSafe, widthOf } from "./control-bytes.js";
import { formatDuration } from "../../handlers/format-duration.js";
import { clock, clockWithDate, describeError } from "./describe.js";
import { oneLine } from "../one-line.js";
import { formatSummary } from "./summary-text.js";
import { TaskPrefixes } from "./task-prefixes.js";
import { inBackground } from "./foreground.js";
import { TerminalEcho } from "./terminal-echo.js";
import textWidth from "./text-width.js";
import { selectionWords } from "../task-selection.js";
import type { Renderer, RunInfo, RunSummary, Stopping } from "./types.js";

type Row =
  | { state: "running"; attempt: number; since: number }
  | { state: "retrying"; attempt: number; at: number }
  | { state: "scheduled"; at: number }
  | { state: "done"; symbol: string; detail: string; colour: (text: string) => string; until: number };

/** What begins and ends a synchronized update (DEC mode 2026): a terminal that knows it paints what comes between at once, as ora's frames are drawn. */
const SYNCHRONIZED_OUTPUT_ENABLE = "\x1b[?2026h";
const SYNCHRONIZED_OUTPUT_DISABLE = "\x1b[?2026l";

/** How long a finished task stays on the board. */
const LINGER_MS = 3000;

/**
 * The live board for terminals: one line per task that is running, retrying
 * (with countdown), scheduled (with its time) or just finished, then totals.
 * Task output scrolls above the board.
 */
export class TtyRenderer implements Renderer {
  readonly #c: ChalkInstance;
  readonly #spinner: Ora;
  readonly #stream: NodeJS.WriteStream;
  readonly #rows = new Map<string, Row>();
  /** The end of each running task's output not yet a whole line, its last OPEN_LINE_BYTES (see openLine). */
  readonly #open = new Map<string, Buffer>();
  #info: RunInfo | undefined;
  #done = 0;
  #failed = 0;
  /** The shutdown under way, told on the totals line: a note about it may have scrolled away. */
  #stopping: Stopping | undefined;
  /**
   * Lines for above the board, written as the board is redrawn or once 256 KiB wait (a loud
   * task must not pile up output between two redraws); the board clears itself first.
   */
  readonly #pending: BufferedWriter;
  readonly #prefixes: TaskPrefixes;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Set while the run goes on as a background job (`bg`): lines only, no board (see resume). */
  #background: ReturnType<typeof setInterval> | undefined;
  #finished = false;
  /** Off while the board is up: a key typed (Enter) would move the cursor off it (see TerminalEcho). */
  readonly #echo = new TerminalEcho();
  /** The frame ora last drew, while it is on the screen: undefined once cleared (see the constructor). */
  #frame: string | undefined;
  /** The spinner's glyph, turned once per tick of the board's timer (ora's own timer is off: see createRenderer). */
  #glyph = 0;
  /** Frames drawn so far: a tick whose lines' write drew the board draws it no second time. */
  #draws = 0;
  /**
   * Set while the terminal reports no width (`stty cols 0`, a pty some terminals size 0x0 a moment):
   * ora counts the rows of a frame by the width, and with 0 it cleared none, so frames piled up.
   * Task output goes on as lines, as on a terminal that started so; the board comes back with a width.
   */
  #sizeless = false;
  /**
   * How much of a stop's totals line was left out to fit, at the width it was drawn at: 0, nothing; 1, the stop's
   * long words; 2, the count of those not ok too. Never less again at that width: the countdown's width changes as
   * it runs ("2s", "1.9s", "937ms"), and at the width where the line just fits, the count not ok came and went.
   */
  #squeezed = { width: 0, level: 0 };
  /** The width at which the totals line had no room for the selection's words: left out at it from then on (see #board). */
  #selectionCut = 0;

  constructor(spinner: Ora, stream: NodeJS.WriteStream, colors: ChalkInstance) {
    this.#spinner = spinner;
    this.#stream = stream;
    this.#c = colors;
    this.#prefixes = new TaskPrefixes(colors);
    // The board's clear, the lines and the board drawn again below them are one synchronized update (as ora's frame alone
    // was): a terminal that painted between the clear and the frame showed the board wiped, at each tick with output.
    // Begun and ended by the stream's own write: through ora's hook on it, a write clears the board and draws it again.
    const write = stream.write.bind(stream);
    let synchronizing: number | undefined;
    this.#pending = new BufferedWriter(stream, {
      eachTick: false,
      beforeWrite: () => {
        if (spinner.isSpinning && this.#frame !== undefined) {
          write(SYNCHRONIZED_OUTPUT_ENABLE);
          synchronizing = this.#draws;
        }
        spinner.clear();
      },
      afterWrite: () => {
        // A frame drawn after the lines ended the update (ora's render ends its own); none drawn (the stream full, its
        // render put off till it drains), it is ended here: a terminal holds what comes while one is open.
        if (synchronizing !== undefined && this.#draws === synchronizing) write(SYNCHRONIZED_OUTPUT_DISABLE);
        synchronizing = undefined;
      },
    });
    // Ora clears the rows its last frame took at the width of then. A terminal made narrower
    // since has rewrapped that frame, and its SIGWINCH may not be handled yet (a timer drawing
    // first): so ask the terminal's size before each clear (one ioctl), and #onResize comes first.
    const clear = spinner.clear.bind(spinner);
    spinner.clear = () => {
      refreshSize(stream);
      const cleared = clear();
      this.#frame = undefined;
      return cleared;
    };
    // The frame as ora's would be (its glyph, a space, the board), but with the glyph of this tick:
    // ora turns it by the time since its last turn, and its timer is off. No space when the first
    // line is empty (a screen of one or two columns): "⠋ " filled a row of one column, where a
    // terminal at least two wide (xterm.js) put it on one row and ora counted two, so each clear
    // took a row of task output too. Kept for #onResize, which needs what is on the screen: ora's
    // text may be newer (a render's clear is where a resize is noticed) or never drawn (a render put off).
    // The board is made here, as ora draws it, not ahead: ora draws again after each write of the
    // lines above the board (the last ones at the end, or 256 KiB between two ticks), and a text set
    // at the last tick drew the board as it was then (a task's line printed under a board that still
    // showed the task before it running).
    const glyphs = spinner.spinner.frames;
    spinner.frame = () => {
      if (this.#sizeless) return "";
      this.#draws++;
      const text = (spinner.text = this.#board());
      const glyph = colors.cyan(glyphs[this.#glyph % glyphs.length] ?? "");
      return (this.#frame = text === "" || text.startsWith("\n") ? `${glyph}${text}` : `${glyph} ${text}`);
    };
  }

  /**
   * A terminal that reflows (VTE, iTerm2, kitty, xterm.js...) rewraps the board's lines when it
   * gets narrower: the frame now takes more rows than ora clears, and every row it misses would
   * stay in the scrollback. So clear those rows at the new width, and draw the board to fit it.
   */
  readonly #onResize = (): void => {
    if (this.#timer === undefined || !this.#spinner.isSpinning) return;
    if (!(this.#stream.columns > 0)) {
      this.#loseSize();
      return;
    }
    const columns = this.#stream.columns;
    // The frame on the screen (its spinner, a space, the board), each line one row at the width of then.
    const drawn = this.#frame?.split("\n") ?? [];
    let extra = -drawn.length;
    for (const line of drawn) extra += terminalRows(line, columns);
    // Through ora's hook on the stream: it clears the rows it counts (from the cursor up), these
    // bytes clear the rest above them (exactly those: higher up is task output), and the "\r" (a
    // line's end to ora) makes it draw the board again at once.
    this.#stream.write(`${"\x1b[1A\x1b[2K".repeat(Math.max(0, extra))}\r`);
  };

  attach(queue: Queue, info: RunInfo): void {
    this.#info = info;
    queue.on("submitted", (e) => {
      if (e.status === "SCHEDULED" && e.runAt !== undefined) this.#rows.set(e.id, { state: "scheduled", at: e.runAt });
    });
    queue.on("scheduled", (e) => this.#rows.set(e.id, { state: "scheduled", at: e.runAt }));
    queue.on("started", (e) => {
      this.#open.delete(e.id);
      this.#rows.set(e.id, { state: "running", attempt: e.attempt, since: Date.now() });
    });
    queue.on("retrying", (e) => {
      this.#rows.set(e.id, { state: "retrying", attempt: e.attempt, at: e.runAt });
      this.#print(this.#c.yellow(`↻ ${e.id} attempt ${e.attempt}/${e.maxAttempts} failed: ${oneLine(describeError(e.error))}`));
    });
    queue.on("succeeded", (e) => this.#finishRow(e.id, true, "✓", "", this.#c.green));
    queue.on("failed", (e) => {
      // An error may quote the workflow (a cwd's folder): through oneLine, as validate quotes it.
      this.#finishRow(e.id, false, "✗", `: ${oneLine(describeError(e.error))}`, this.#c.red);
      this.#print(this.#c.red(`✗ ${e.id} failed: ${oneLine(describeError(e.error))}`));
    });
    queue.on("cancelled", (e) => this.#finishRow(e.id, false, "-", `: ${oneLine(describeError(e.error))}`, this.#c.yellow));
    this.#stream.on("resize", this.#onResize);
    // The board, echo off before its first frame (a key echoed below it would already move the cursor off it); or, started
    // as a background job (`taskq run x --output tty &`: auto mode prints plain lines there), task output as lines until the
    // job is in the foreground, as once continued with `bg`: the board was drawn over the shell's prompt.
    this.resume();
  }

  line(taskId: string, _stream: StreamName, text: string): void {
    this.#pending.write(`${this.#prefixes.text(taskId)}${terminalSafe(text, textWidth)}\n`);
  }

  /**
   * The same output as `line` gives for each line, built as bytes: no string per line. A
   * block with a control byte (an escape, a carriage return...) goes line by line, through terminalSafe; one whose only
   * such bytes are tabs, in ASCII text, has them laid out as bytes too (see expandTabsInBlock).
   */
  lines(taskId: string, stream: StreamName, bytes: Buffer, count: number, ends: Int32Array): void {
    if (!hasControlBytes(bytes)) {
      this.#pending.writePrefixedLines(this.#prefixes.bytes(taskId), bytes, count, ends);
      return;
    }
    const tabbed = expandTabsInBlock(bytes, count);
    if (tabbed !== undefined) {
      this.#pending.writePrefixedLines(this.#prefixes.bytes(taskId), tabbed.bytes, count, tabbed.ends);
      return;
    }
    eachLineText(bytes, count, ends, (text) => this.line(taskId, stream, text));
  }

  whenDrained(): Promise<void> | undefined {
    return whenStreamDrained(this.#stream);
  }

  lineState(text: string): string {
    return rewrittenState(text, textWidth);
  }

  /**
   * A line a running task has not ended yet shows at the end of its row, as its latest state: a progress bar that
   * rewrites itself with carriage returns (`\r42%`) and writes no newline showed nothing until it ended.
   */
  openLine(taskId: string, _stream: StreamName, bytes: Buffer, fresh: boolean): void {
    const before = fresh ? undefined : this.#open.get(taskId);
    if (bytes.length === 0) {
      if (fresh) this.#open.delete(taskId);
      return;
    }
    const joined = before === undefined ? bytes : Buffer.concat([before, bytes]);
    // A copy: the bytes are the reader's, read into again.
    this.#open.set(taskId, Buffer.from(joined.subarray(Math.max(0, joined.length - OPEN_LINE_BYTES))));
  }

  note(text: string): void {
    this.#print(this.#c.magenta(`note: ${oneLine(text)}`));
  }

  stopping(state: Stopping): void {
    this.#stopping = state;
  }

  suspend(): void {
    refreshSize(this.#stream); // while the board is still known to be up
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#leaveBackground();
    this.#flushLines();
    // Off the terminal, with the cursor shown and echo as it was: the shell's prompt comes next.
    this.#spinner.stop();
    this.#echo.restore();
  }

  resume(): void {
    // Not after the summary: a SIGCONT then (the leftovers' grace) must not draw the board again.
    if (this.#timer !== undefined || this.#finished) return;
    if (inBackground()) {
      // Continued as a background job (Ctrl-Z, then `bg`): a board would be drawn over the shell's
      // prompt and what the user types. Task output goes on, as lines; the board comes back once the
      // job is in the foreground again (`fg` sends a running job no signal: looked for at each flush).
      this.#background ??= setInterval(() => {
        this.#flushLines();
        if (inBackground()) return;
        this.#leaveBackground();
        this.resume();
      }, 100);
      return;
    }
    this.#leaveBackground();
    this.#echo.off();
    // The terminal may have been resized while taskq was stopped: the SIGWINCH went to the shell,
    // the foreground job then, and `fg` sends none. The board is fitted to the size of now.
    this.#showBoard();
    this.#timer = setInterval(() => this.#refresh(), 100);
  }

  async finish(summary: RunSummary): Promise<void> {
    this.#finished = true;
    refreshSize(this.#stream); // while the board is still known to be up
    this.#stream.off("resize", this.#onResize);
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#leaveBackground();
    this.#flushLines();
    this.#spinner.stop();
    this.#echo.restore();
    process.stdout.write(formatSummary(summary, this.#c, process.stdout.isTTY === true));
  }

  /** A finished task's row, "✓ id", "✗ id: why" or "- id: why", all of it in `colour`. */
  #finishRow(id: string, ok: boolean, symbol: string, detail: string, colour: (text: string) => string): void {
    this.#open.delete(id);
    this.#done++;
    if (!ok) this.#failed++;
    // Last in the board's order of rows: those shown of the finished are the latest to end (see #board).
    this.#rows.delete(id);
    this.#rows.set(id, { state: "done", symbol, detail, colour, until: Date.now() + LINGER_MS });
  }

  /** Through terminalSafe: an error or note may quote a task's output or the workflow file. */
  #print(text: string): void {
    this.#pending.write(`${this.#c.dim(clock())} ${terminalSafe(text)}\n`);
  }

  #leaveBackground(): void {
    if (this.#background !== undefined) clearInterval(this.#background);
    this.#background = undefined;
  }

  #flushLines(): void {
    this.#pending.flush();
  }

  /** The board on the screen, at the terminal's size of now; lines alone while it reports no width. */
  #showBoard(): void {
    refreshSize(this.#stream);
    if (this.#stream.columns > 0) {
      this.#sizeless = false;
      this.#spinner.start();
    } else {
      this.#loseSize();
    }
  }

  /** The board off the screen (cleared by the rows ora counted, at the last width known) while the terminal reports no width. */
  #loseSize(): void {
    if (this.#sizeless) return;
    this.#sizeless = true;
    // Maybe inside a render (its clear asks the size): that render's frame is then empty (see the constructor).
    this.#spinner.stop();
    this.note("the terminal reports no width (0 columns): task output goes on as lines, and the board comes back once it has one");
  }

  /** One frame per tick: the lines waiting, then the board below them, its spinner turned once. */
  #refresh(): void {
    refreshSize(this.#stream);
    if (this.#sizeless && !(this.#stream.columns > 0)) {
      this.#flushLines();
      return;
    }
    if (this.#sizeless) this.#showBoard();
    this.#glyph++;
    // Their write, through ora's hook on the stream, clears the board and draws it again below them.
    const draws = this.#draws;
    this.#flushLines();
    if (this.#draws === draws) this.#spinner.render();
  }

  #board(): string {
    const now = Date.now();
    const c = this.#c;
    // Running tasks first, then those waiting (a retry's backoff, a runAt), then those that just
    // ended (they linger a moment): with more rows than the screen has, the "… N more" are waiting
    // or finished ones, not running ones hidden behind them (30 tasks delayed from the start
    // came first in the map, and hid every task running meanwhile).
    const height = this.#stream.rows || 24;
    // The board stays under the screen's height: a taller one gets ora's "content truncated" line,
    // and its top scrolls off where no redraw reaches it. Below the totals, room for height - 3
    // task rows ("… N more" one of them), and an empty row the cursor waits on: a terminal leaves
    // the cursor's row unwrapped or not as it likes on a resize (xterm.js does not rewrap it), so
    // that row holds nothing and takes one row in either. A third of the screen is left to the task output above the board
    // (but for the one task row of a screen of four or five rows): with 50 tasks running, the board took all rows but
    // one, the output flashed through that one; and a terminal made shorter pushes its top rows into the scrollback,
    // where no redraw reaches: board rows there (24 rows made 12 left 11 of them) where task output would have been.
    const room = Math.max(0, Math.min(1, height - 3), height - 3 - Math.floor(height / 3));
    // Only the rows that can be shown are kept and written out, the others counted: 50,000 tasks
    // delayed from the start made each frame write 50,000 rows, and taskq spent most of a CPU
    // drawing a board that shows twenty.
    const groups: [string, Row][][] = [[], [], []];
    let rowCount = 0;
    for (const [id, row] of this.#rows) {
      if (row.state === "done" && row.until < now) {
        this.#rows.delete(id);
        continue;
      }
      rowCount++;
      const group = groups[row.state === "done" ? 2 : row.state === "running" ? 0 : 1]!;
      // Of the finished, the latest to end (they come last): a task that just failed, not those that ended
      // seconds ago, while "… N more" counted it out of sight.
      if (row.state === "done") {
        group.push([id, row]);
        if (group.length > room) group.shift();
      } else if (group.length < room) group.push([id, row]);
    }
    // With room for one row, that row is a task's (the first running), the rest counted on the totals line as with none:
    // "… N more" in it showed no task at all while two ran.
    const moreOnTotals = room <= 1;
    const showCount = rowCount > room ? (moreOnTotals ? room : room - 1) : rowCount;
    const [running, waiting, finished] = groups as [[string, Row][], [string, Row][], [string, Row][]];
    const ahead = [...running, ...waiting].slice(0, showCount);
    const shown = [...ahead, ...finished.slice(finished.length - (showCount - ahead.length))].map(([id, row]) => this.#rowText(id, row, now));
    const more = rowCount - shown.length;
    const total = this.#info?.taskCount ?? 0;
    const failed = this.#failed > 0 ? c.red(` · ${this.#failed} not ok`) : "";
    // One terminal row each, under the width: a line that wraps makes the board taller than ora
    // clears, and every redraw left a copy of it in the scrollback. The first line follows ora's
    // frame and a space.
    const width = (this.#stream.columns || 80) - 1;
    const done = c.bold(`${this.#done}/${total} done`);
    const end = more > 0 && moreOnTotals ? c.dim(` … ${more} more`) : "";
    let totals = `${done}${failed}${this.#stoppingText(now)}${end}`;
    const fits = (text: string): boolean => textWidth(text.replace(COLOUR, "")) <= width - 2;
    // `taskq run ci.yaml test`: the run is some of the file's tasks, said as plain's first line says it ("0/3 done · 3 of 6 tasks
    // (test and what it depends on)"). Not while a stop's words need the line; where it has no room, left out, and never
    // again at that width: the counts' width changes as they go ("9/10", "10/10"), and the words came and went at each.
    const selection = this.#info?.selection;
    if (selection !== undefined && this.#stopping === undefined && this.#selectionCut !== width) {
      const said = `${done}${failed}${c.dim(` · ${selectionWords(total, selection)}`)}${end}`;
      if (fits(said)) totals = said;
      else this.#selectionCut = width;
    }
    // Too narrow for the stop's words: the short ones, so that the countdown shows (at 40 columns it was cut to "stopping (SIGI…");
    // still too narrow, the count of those not ok left out (the summary gives it): a Ctrl-C cancels the tasks still queued
    // at once, and their count cut the countdown again ("11/12 done · 11 not ok · SIGINT: 1.9…"); still too narrow, the
    // stop alone: at 24 columns the count done cut it to "11/12 done · SIGINT:…", no time left shown while it ran out.
    if (this.#stopping !== undefined) {
      if (this.#squeezed.width !== width) this.#squeezed = { width, level: 0 };
      let level = this.#squeezed.level;
      if (level === 0 && !fits(totals)) level = 1;
      const short = level > 0 ? this.#stoppingText(now, true) : "";
      if (level === 1) totals = `${done}${failed}${short}${end}`;
      if (level === 1 && !fits(totals)) level = 2;
      if (level === 2) totals = `${done}${short}${end}`;
      if (level === 2 && !fits(totals)) level = 3;
      if (level === 3) totals = `${this.#c.yellow(this.#stopWords(now))}${end}`;
      this.#squeezed.level = level;
    }
    const board = [fitWidth(totals, width - 2), ...shown.map((row) => fitRow(row, width))];
    if (more > 0 && !moreOnTotals) board.push(fitWidth(`  ${c.dim(`… ${more} more`)}`, width));
    // On a screen of one or two rows, no room for the empty row: the totals only.
    if (height > 2) board.push("");
    return board.join("\n");
  }

  /**
   * " · stopping (SIGINT): 8.2s left to finish", then what is done to the tasks (" · stopping (fail-fast: build failed): stopping
   * the running tasks" for a --fail-fast stop, "cancelling the waiting tasks" for one with none running to stop); `short`, for a
   * narrow terminal: " · SIGINT: 8.2s left" ("fail-fast: stopping", "fail-fast: cancelling").
   */
  #stoppingText(now: number, short = false): string {
    const state = this.#stopping;
    if (state === undefined) return "";
    const left = state.until === undefined ? 0 : state.until - now;
    const stopping = state.phase === "stopping" || left <= 0;
    if (short) return this.#c.yellow(` · ${this.#stopWords(now)}`);
    const what = state.phase === "killing" ? "killing every task" : state.waitingOnly === true ? "cancelling the waiting tasks" : stopping ? "stopping the running tasks" : `${formatDuration(left)} left to finish`;
    return this.#c.yellow(` · stopping (${state.signal ?? `fail-fast: ${state.failedFast ?? ""} failed`}): ${what}`);
  }

  /** The stop in the fewest words, "SIGINT: 8.2s left" (see #stoppingText). */
  #stopWords(now: number): string {
    const state = this.#stopping;
    if (state === undefined) return "";
    const left = state.until === undefined ? 0 : state.until - now;
    const what = state.phase === "killing" ? "killing" : state.waitingOnly === true ? "cancelling" : state.phase === "stopping" || left <= 0 ? "stopping" : `${formatDuration(left)} left`;
    return `${state.signal ?? "fail-fast"}: ${what}`;
  }

  #rowText(id: string, row: Row, now: number): RowText {
    const max = this.#info?.maxAttempts.get(id) ?? 1;
    switch (row.state) {
      case "running": {
        const time = formatDuration(now - row.since);
        const open = this.#open.get(id);
        const latest = open === undefined ? "" : latestState(open);
        return { symbol: c(this.#c.cyan, "▶"), id, tail: `  attempt ${row.attempt}/${max}  ${time}`, time, ...(latest === "" ? {} : { latest }) };
      }
      case "retrying": {
        const time = row.at > now ? `in ${formatDuration(row.at - now)}` : "due";
        return { symbol: c(this.#c.yellow, "↻"), id, tail: `  retry ${row.attempt + 1}/${max} ${time}`, time };
      }
      case "scheduled": {
        const time = row.at > now ? `in ${formatDuration(row.at - now)}` : "due";
        return { symbol: c(this.#c.cyan, "⏲"), id, tail: `  at ${clockWithDate(row.at)} (${time})`, time };
      }
      case "done":
        return { symbol: row.symbol, id, tail: row.detail, time: "", colour: row.colour };
    }
  }
}

/** A task's row on the board: its symbol and id, then what follows the id, which ends in a time that changes as it runs. */
interface RowText {
  /** Of one column, in its colours. */
  symbol: string;
  /** Cut in its middle where the row does not fit. */
  id: string;
  tail: string;
  time: string;
  /** A finished task's row, coloured whole (see fitEndedRow). */
  colour?: (text: string) => string;
  /** A running task's line not ended yet, as a terminal would show it (see latestState): after the time, where it fits. */
  latest?: string;
}

/** The most bytes kept of a task's line not ended yet: its latest state is at its end. */
const OPEN_LINE_BYTES = 1024;

/**
 * What a terminal shows of a line not ended yet (`bytes`, its end), its latest state: from its last carriage return that
 * something follows, in the colours set before it (see coloursBefore), cleaned as task output above the board is (see
 * terminalSafe). "" for nothing to show.
 */
function latestState(bytes: Buffer): string {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0x0d) end--;
  const start = bytes.lastIndexOf(0x0d, end - 1) + 1;
  const text = coloursBefore(bytes, start) + bytes.toString("utf8", start, end).replace(LEADING_BROKEN, "");
  const shown = terminalSafe(text, textWidth);
  return shown.replace(COLOUR, "").trim() === "" ? "" : shown;
}

/**
 * The colour code (SGR) that bytes[0, at) leave set, "" for none: a carriage return moves the cursor and keeps the colours,
 * so `\e[31mdownloading\r50%` shows its 50% in red, which the row showed in none.
 */
function coloursBefore(bytes: Buffer, at: number): string {
  const escape = bytes.indexOf(0x1b);
  if (escape === -1 || escape >= at) return "";
  const colours = new OpenColours();
  colours.scan(bytes.subarray(escape, at));
  return colours.code.toString("latin1");
}

/** A character cut at the start of the bytes kept (see OPEN_LINE_BYTES), as toString decodes it. */
const LEADING_BROKEN = /^\uFFFD+/;

/** The fewest columns of a task's id cut in its middle on a row: three of it and its "…", its start and its end ("re…1"). */
const ID_ROOM = 4;

/** The columns kept for a row's time, at its widest ("in 59m59.9s"): a row is cut the same way whatever its time's digits are. */
const TIME_ROOM = 11;

/**
 * A row cut to `width` (see fitWidth) where it does not fit: its task id, not what follows it, so that
 * the time stays whole (at 40 columns, "▶ build-the-frontend  attempt 1/1  1…" nine frames in ten,
 * "… 1s" the tenth). Whether and where it is cut is reckoned with its time at its widest: a row at the
 * edge is not cut and whole by turns as the time's digits change. Too narrow for the rest of the row
 * and a few columns of the id, the row is cut at its end, as any line.
 */
function fitRow(row: RowText, width: number): string {
  const fitted = fitRowBare(row, width);
  if (row.latest === undefined) return fitted;
  // Its line not ended yet, after the time as at its widest (see TIME_ROOM), where a few columns of it fit.
  const room = width - widthOf(fitted, textWidth) - Math.max(0, TIME_ROOM - row.time.length) - 2;
  return room < LATEST_ROOM ? fitted : `${fitted}  ${fitWidth(row.latest, room)}`;
}

/** The fewest columns a running task's line not ended yet is shown in (see fitRow). */
const LATEST_ROOM = 4;

/** A row without its line not ended yet (see fitRow). */
function fitRowBare({ symbol, id, tail, time, colour }: RowText, width: number): string {
  if (colour !== undefined) return fitEndedRow(symbol, id, tail, colour, width);
  const line = `  ${symbol} ${id}${tail}`;
  const slack = Math.max(0, TIME_ROOM - time.length);
  const tailWidth = widthOf(tail, textWidth) + slack;
  if (widthOf(line, textWidth) + slack <= width) return line;
  // The indent, the symbol and a space, the fewest columns of the id (see ID_ROOM).
  // The id's end kept too: tasks whose ids differ only there ("deploy-region-eu-west-1", "...-2") were rows alike.
  if (width - tailWidth < ID_ROOM + 4) {
    // Too narrow for the rest of the row: the id alone, still cut in its middle where it has the four columns it has
    // beside the rest ("re…1"; cut at its end from five columns down, the rows of "region-1" and "region-2" were alike).
    return width >= ID_ROOM + 4 ? `  ${symbol} ${fitMiddle(id, width - 4)}` : fitWidth(line, width);
  }
  return `  ${symbol} ${fitMiddle(id, width - tailWidth - 4)}${tail}`;
}

/**
 * A finished task's row ("✓ id", "✗ id: why") cut to `width`, as a running one is, in its id's middle: where the id fits
 * whole, only the why is cut, at its end; where it does not, the id is cut in its middle, its end kept, and the why
 * left out. Cut at its end, "✓ deploy-the-web-frontend-to-region-eu-west-1" and "...-2" were rows alike.
 */
function fitEndedRow(symbol: string, id: string, tail: string, colour: (text: string) => string, width: number): string {
  const head = `${symbol} ${id}`;
  const line = `${head}${tail}`;
  if (widthOf(line, textWidth) + 2 <= width) return `  ${colour(line)}`;
  // The indent, the symbol and a space, the id whole and, of the why, a column and its "…".
  if (widthOf(head, textWidth) + (tail === "" ? 2 : 4) <= width) return `  ${colour(fitWidth(line, width - 2))}`;
  if (width < ID_ROOM + 4) return fitWidth(`  ${colour(line)}`, width);
  return `  ${colour(`${symbol} ${fitMiddle(id, width - 4)}`)}`;
}

/** `text` (no colour codes) cut to `width` columns in its middle, "…" there: its start and its end shown. */
function fitMiddle(text: string, width: number): string {
  if (widthOf(text, textWidth) <= width) return text;
  const characters = [...cells(text)];
  const room = width - 1;
  let front = "";
  let shown = 0;
  let first = 0;
  for (; first < characters.length; first++) {
    const [character, columns] = characters[first] as [string, number];
    if (shown + columns > Math.ceil(room / 2)) break;
    front += character;
    shown += columns;
  }
  let back = "";
  for (let last = characters.length - 1; last >= first; last--) {
    const [character, columns] = characters[last] as [string, number];
    if (shown + columns > room) break;
    back = `${character}${back}`;
    shown += columns;
  }
  return `${front}…${back}`;
}

/**
 * Reads the terminal's size now, as Node does on SIGWINCH (a private method of its TTY streams,
 * there since Node 0.x): if it changed, the stream's columns and rows follow and it emits 'resize'.
 */
function refreshSize(stream: NodeJS.WriteStream): void {
  (stream as { _refreshSize?: () => void })._refreshSize?.();
}

function c(color: (text: string) => string, text: string): string {
  return color(text);
}

// eslint-disable-next-line no-control-regex -- any ASCII, where a character is a column (control bytes are gone by then)
const ASCII = /^[\x00-\x7f]*$/;

// eslint-disable-next-line no-control-regex -- an escape, the start of a colour code
const HAS_ESCAPE = /\x1b/;

/** A colour code (SGR). */
// eslint-disable-next-line no-control-regex -- as above
const COLOUR = /\x1b\[[0-9;:]*m/g;

/** Text and colour codes apart, the codes at odd indexes. */
// eslint-disable-next-line no-control-regex -- as above
const COLOUR_SPLIT = /(\x1b\[[0-9;:]*m)/;

let graphemes: Intl.Segmenter | undefined;

/** The characters as a terminal places them (an emoji with its modifiers, a letter with its accents), with their widths. */
function* cells(text: string): Generator<[string, number]> {
  graphemes ??= new Intl.Segmenter();
  for (const { segment } of graphemes.segment(text)) yield [segment, segment.charCodeAt(0) < 0x80 && segment.length === 1 ? 1 : textWidth(segment)];
}

/**
 * `line` cut to `width` columns as a terminal shows it (colour codes take none, East Asian wide
 * characters and emoji two), ending in "…" when cut, then a colour reset if it has colours.
 * The board is drawn ten times a second: ASCII lines, most of them, are measured by length.
 */
export function fitWidth(line: string, width: number): string {
  if (width <= 0) return "";
  const ascii = ASCII.test(line);
  if (ascii && line.length <= width) return line; // colour codes only add length
  const coloured = HAS_ESCAPE.test(line);
  const text = coloured ? line.replace(COLOUR, "") : line;
  if ((ascii ? text.length : textWidth(text)) <= width) return line;
  let shown = 0;
  let cut = "";
  fill: for (const [index, part] of (coloured ? line.split(COLOUR_SPLIT) : [line]).entries()) {
    if (index % 2 === 1) {
      cut += part;
      continue;
    }
    if (ascii) {
      const taken = part.slice(0, width - 1 - shown);
      cut += taken;
      shown += taken.length;
      if (shown === width - 1) break;
      continue;
    }
    for (const [character, columns] of cells(part)) {
      // A wide character that would end past the width is left out whole, as a terminal would wrap it.
      if (shown + columns > width - 1) break fill;
      cut += character;
      shown += columns;
    }
  }
  return coloured ? `${cut}…\x1b[0m` : `${cut}…`;
}

/**
 * The rows `line` takes on a terminal `columns` wide: each row full up to its last column, and a
 * wide character that does not fit at a row's end going to the next row, as terminals wrap and reflow.
 */
export function terminalRows(line: string, columns: number): number {
  const text = HAS_ESCAPE.test(line) ? line.replace(COLOUR, "") : line;
  if (ASCII.test(text)) return Math.max(1, Math.ceil(text.length / columns));
  let rows = 1;
  let column = 0;
  for (const [, width] of cells(text)) {
    if (column > 0 && column + width > columns) {
      rows++;
      column = 0;
    }
    column += width;
  }
  return rows;
}
