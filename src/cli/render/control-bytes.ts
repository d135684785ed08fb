import { isUtf8 } from "node:buffer";
import type { BufferedWriter } from "../output.js";
import { CUT_LINK_ENDING, cutMarkStart, DISPLAY_LIMIT } from "../../handlers/line-splitter.js";
import { eachCluster } from "./clusters.js";
import { commandsInParts, eachCommandLine, REFUSED_STOP_TOKENS } from "./workflow-commands.js";

/**
 * Whether a block of lines (each ending in "\n") holds a byte the live board must not pass
 * as it is (see terminalSafe): a C0 control but newline (a tab too: its stops are counted from
 * the line's start, not from the prefix's), DEL, a C1 control (C2 80
 * to C2 9F in UTF-8), a bidirectional override or isolate (E2 80 AA to E2 80 AE, E2 81 A6 to
 * E2 81 A9), or bytes that are not UTF-8, which the text path shows as U+FFFD (a
 * lone 0x9B is the 8-bit CSI to a terminal not in UTF-8: "\x9b2J" cleared its screen). Runs on
 * every block a task prints on a terminal, so the common case, none, is checked four bytes at
 * a time (~2 bytes/ns; a byte at a time was ~0.8), the rare C2, E2 80 and E2 81 leads by a native search.
 */
export function hasControlBytes(bytes: Buffer): boolean {
  const length = bytes.length;
  for (let at = bytes.indexOf(0xc2); at !== -1 && at + 1 < length; at = bytes.indexOf(0xc2, at + 1)) {
    const next = bytes[at + 1] as number;
    if (next >= 0x80 && next < 0xa0) return true;
  }
  // By two bytes, not by E2 alone: box drawing and braille are E2 too, and some output is full of them.
  for (let at = bytes.indexOf(BIDI_LEAD_1); at !== -1 && at + 2 < length; at = bytes.indexOf(BIDI_LEAD_1, at + 2)) {
    const last = bytes[at + 2] as number;
    if (last >= 0xaa && last <= 0xae) return true;
  }
  for (let at = bytes.indexOf(BIDI_LEAD_2); at !== -1 && at + 2 < length; at = bytes.indexOf(BIDI_LEAD_2, at + 2)) {
    const last = bytes[at + 2] as number;
    if (last >= 0xa6 && last <= 0xa9) return true;
  }
  // Up to the first 4-byte boundary one by one, then a word at a time, then what is left.
  const head = Math.min(length, (4 - (bytes.byteOffset & 3)) & 3);
  const words = (length - head) >>> 2;
  if (hasControlIn(bytes, 0, head) || hasControlIn(bytes, head + words * 4, length)) return true;
  // A block too short for a word (`\x9bJ\n`, a line of three bytes) is not UTF-8 either where it is not: it went to the terminal as it was.
  if (words === 0) return !isUtf8(bytes);
  const view = new Uint32Array(bytes.buffer, bytes.byteOffset + head, words);
  for (let index = 0; index < words; index++) {
    const word = view[index] as number;
    const del = word ^ 0x7f7f7f7f;
    // Some byte below 0x20 (a newline, mostly), or one that is 0x7F: a yes or no that is exact; the bytes then say which.
    if (((word - 0x20202020) & ~word & 0x80808080) !== 0 || ((del - 0x01010101) & ~del & 0x80808080) !== 0) {
      const start = head + index * 4;
      if (hasControlIn(bytes, start, start + 4)) return true;
    }
  }
  return !isUtf8(bytes);
}

/** The first two bytes in UTF-8 of U+202A to U+202E (LRE, RLE, PDF, LRO, RLO), then of U+2066 to U+2069 (LRI, RLI, FSI, PDI). */
const BIDI_LEAD_1 = Buffer.from([0xe2, 0x80]);
const BIDI_LEAD_2 = Buffer.from([0xe2, 0x81]);

/** Whether bytes[from, to) hold a C0 control but newline, or DEL. */
function hasControlIn(bytes: Buffer, from: number, to: number): boolean {
  for (let index = from; index < to; index++) {
    const byte = bytes[index] as number;
    if (byte < 0x20 ? byte !== 0x0a : byte === 0x7f) return true;
  }
  return false;
}

/**
 * A character terminalSafe changes: a C0 control (a tab becomes spaces), DEL, a C1 control (U+0080 to U+009F,
 * which a terminal may obey too), a bidirectional override or isolate (U+202A to U+202E, U+2066
 * to U+2069: a terminal that orders text both ways, VTE, shows what follows reversed or moved).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
/** One of those but a tab: a line without one (a table, tab-separated values) needs its tabs laid out, nothing more. */
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_BUT_TAB = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

/**
 * What terminalSafe removes, each whole, but what it works out itself, captured to be kept: colours (SGR) and the
 * moves within the line that a progress line makes (erase in line, ESC [ K; the cursor to a column, forward, back:
 * ESC [ G, C, D); a CSI sequence (ESC [ or its C1 form, parameters, intermediates, a final byte; or cut short by
 * the line's end); a control string, OSC, DCS, SOS, PM or APC (ESC ] P X ^ _ or their C1
 * forms), to its end (BEL or ST) or the line's, its text included (a title, a sixel image);
 * any other escape sequence (ESC ( B, ESC 7...); a control character but tab, backspace and carriage return
 * (SO and SI switch the character set, BEL rings); a bidirectional override or isolate.
 */
// eslint-disable-next-line no-control-regex -- as above
const CONTROLS = /(\x1b\[[0-9;:]*m|\x1b\[[0-9]*[CDGK])|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?|[\x00-\x07\x0a-\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- as above
const HAS_ESCAPE = /\x1b/;
/** What makes terminalSafe write a line into columns as a terminal does (see rewrite): a backspace, a carriage return, a move or erase. */
// eslint-disable-next-line no-control-regex -- as above
const REWRITES = /[\b\r]|\x1b\[[0-9]*[CDGK]/;
/** The line split into text (even indexes) and what rewrite works out (odd ones): a tab, a backspace, a carriage return, a colour, a move. */
// eslint-disable-next-line no-control-regex -- as above
const REWRITE_SPLIT = /([\b\t\r]|\x1b\[[0-9;:]*[mCDGK])/;
// eslint-disable-next-line no-control-regex -- as above
const COLOUR = /\x1b\[[0-9;:]*m/g;
// eslint-disable-next-line no-control-regex -- any ASCII: a character is a column
const ASCII = /^[\x00-\x7f]*$/;
/** How far right a move (ESC [ C, ESC [ G) may take the cursor: "\x1b[999999999C" filled a line with a billion spaces. */
const MOST_COLUMNS = 1024;

/**
 * A task's line as it goes above the board, so that it stays on its own line behind its
 * prefix and changes nothing else on the terminal: of a line that carriage returns, backspaces, erases
 * (ESC [ K) or moves to a column rewrote (a progress bar, a spinner's "|\b/\b-\b"), what a terminal would end up
 * showing, each character with the colours it was written in (see rewrite), never into the prefix; tabs as the
 * spaces to the next stop of 8 columns counted from
 * the line's start, as the task laid its columns out (the terminal counts them from the prefix's,
 * and "a\t1" and "abcde\t2" behind "ab | " came out 8 columns apart); no other control
 * character, no escape sequence but colours, no bidirectional override or isolate (they would
 * reverse or move the rest of the line); and colours reset at its end, so one task's red does
 * not run into the next lines and the summary. A line without a control character (most) costs
 * one regular-expression test. `columns` measures text that is not ASCII for the tab stops
 * (string-width's count on the board; by default codePoints, close to it, which keeps
 * string-width and its segmenter off the start-up of a run that prints plain lines).
 */
export function terminalSafe(text: string, columns: (text: string) => number = codePoints): string {
  if (!CONTROL.test(text)) return text;
  if (!CONTROL_BUT_TAB.test(text)) return expandTabs(text, columns);
  // A line cut for length: taskq's mark after what is kept of it, `… (N bytes)`, outside the task's colours, as into a
  // pipe (see LineSplitter's #emitCut). Written as the line's last characters, it took them: `zzz… (5005 bytes)\e[0m`.
  const cut = cutMarkStart(text);
  if (cut !== -1) return `${terminalSafe(text.slice(0, cut), columns)}${text.slice(cut)}`;
  const line = withoutTrailingReturns(text).replace(CONTROLS, "$1");
  if (REWRITES.test(line)) return rewrite(line, columns);
  const shown = line.includes("\t") ? expandTabs(line, columns) : line;
  return HAS_ESCAPE.test(shown) && leavesColour(shown) ? `${shown}\x1b[0m` : shown;
}

/**
 * Whether `line` (no escape sequence left but colours) leaves a colour or attribute set at its end: a reset after it would
 * end one. None where its last colour code is a reset (most coloured lines), nor where what it set it ended (taskq's own
 * `\e[36mstart\e[39m`): a reset after those was one too many.
 */
function leavesColour(line: string): boolean {
  const last = line.lastIndexOf("\x1b[");
  if (line.startsWith("\x1b[m", last) || line.startsWith("\x1b[0m", last)) return false;
  const pen = new Pen();
  for (const code of line.matchAll(COLOUR)) pen.apply(code[0].slice(2, -1));
  return pen.code !== "";
}

/**
 * `text` without the carriage returns at its end: they rewrite nothing ("abc\r\r\n", a "\r\n" written in text mode, shows
 * "abc"). Counted back from the end, not by /\r+$/, which tries again from each "\r" of a run not at the end: a line of
 * 4,000 of them before its text took 20 ms, a thousand times one of text.
 */
function withoutTrailingReturns(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x0d) end--;
  return end === text.length ? text : text.slice(0, end);
}


/**
 * `line` (no control character left but tabs, backspaces and carriage returns, no escape sequence but colours and the
 * moves CONTROLS keeps) written into a row of columns as a terminal does: a backspace moves back a column and a
 * carriage return to the first, erasing nothing, and what is written next overwrites what was there ("abcdef\rXY"
 * shows "XYcdef"; a count that ends each update with backspaces back to its start, "42%\b\b\b43%\b\b\b", its last
 * value); ESC [ K erases to the line's end (1 K to the cursor, 2 K all of it). Each column keeps the colours it was
 * written in, as the terminal's do, whatever the cursor did after: "\x1b[32mok\rOK" shows a green "OK". Characters as
 * a terminal places them (an emoji with its joiners and skin tone, a letter with its accents), measured by `columns`.
 */
function rewrite(line: string, columns: (text: string) => number, keepState = false): string {
  /** A column each: its character; "" for the columns after the first of a wide one. */
  const cells: string[] = [];
  /** The colours each column was written in, as the code that sets them ("": none). */
  const pens: string[] = [];
  const pen = new Pen();
  let cursor = 0;
  /**
   * The colours the columns past the last have, as an erase left them: a terminal erases with the background colour set
   * (xterm.js, VTE, xterm: "background colour erase"), to the row's end, so "\x1b[41m\x1b[K" paints the rest of the row red.
   */
  let fill = "";
  /** The columns of each character outside ASCII, measured once: most lines repeat a few (a spinner's, a bar's). */
  const widths = new Map<string, number>();
  /** Columns up to `at` exist, the new ones blank. */
  const reach = (at: number): void => {
    while (cells.length < at) {
      cells.push(" ");
      pens.push(fill);
    }
  };
  /**
   * The wide character column `at` is part of, if it is not its first, made spaces: something overwrites part of it,
   * and on a terminal the rest shows as blank, in the colours of what overwrites it (as xterm.js does); of an erase
   * (`code` ""), in none: "\x1b[7m\x1b[K" over half of one left an inverse space the terminal does not show.
   */
  const split = (at: number, code = pen.code): void => {
    if (cells[at] !== "") return;
    let first = at;
    while (first > 0 && cells[first] === "") first--;
    for (let index = first; index === first || cells[index] === ""; index++) [cells[index], pens[index]] = [" ", code];
  };
  const write = (written: string): void => {
    let character = written;
    let width = character.length === 1 && character.charCodeAt(0) < 0x80 ? 1 : widths.get(character);
    if (width === undefined) widths.set(character, (width = columns(character)));
    if (width === 0) {
      // A mark with nothing before it on its piece of the line (an accent after a colour code): with the character before the cursor.
      let at = cursor - 1;
      while (at > 0 && cells[at] === "") at--;
      if (at >= 0) {
        if (at < cells.length) cells[at] = `${cells[at] as string}${character}`;
        return;
      }
      // At the line's first column (after a "\r"), nothing to join: a column of its own, as xterm.js gives it, over a space
      // (alone, it joined the space that ends the task's prefix, and what it was written over stayed).
      character = ` ${character}`;
      width = 1;
    }
    reach(cursor);
    split(cursor);
    split(cursor + width);
    cells[cursor] = character;
    pens[cursor] = pen.code;
    for (let index = 1; index < width; index++) {
      cells[cursor + index] = "";
      pens[cursor + index] = pen.code;
    }
    cursor += width;
  };
  const parts = line.split(REWRITE_SPLIT);
  for (let part = 0; part < parts.length; part++) {
    const piece = parts[part] as string;
    if (part % 2 === 0) {
      if (piece === "") continue;
      eachCluster(piece, write);
      continue;
    }
    const unit = piece.charCodeAt(0);
    if (unit === 0x08) {
      if (cursor > 0) cursor--;
    } else if (unit === 0x0d) {
      cursor = 0;
    } else if (unit === 0x09) {
      cursor += 8 - (cursor % 8);
      reach(cursor);
    } else {
      const final = piece[piece.length - 1];
      if (final === "m") {
        pen.apply(piece.slice(2, -1));
        continue;
      }
      const count = Number.parseInt(piece.slice(2, -1), 10);
      if (final === "K") {
        // An erased column has the background colour set, and nothing else of the pen (xterm.js: an inverse erase shows nothing).
        const erased = pen.background === "" ? "" : `\x1b[${pen.background}m`;
        if (Number.isNaN(count) || count === 0) {
          split(cursor, erased);
          if (erased !== "" || fill !== "") reach(cursor);
          if (cursor < cells.length) cells.length = pens.length = cursor;
          fill = erased;
        } else if (count === 1) {
          split(cursor + 1, erased);
          reach(cursor + 1);
          cells.fill(" ", 0, cursor + 1);
          pens.fill(erased, 0, cursor + 1);
        } else if (count === 2) {
          cells.length = pens.length = 0;
          fill = erased;
        }
      } else {
        const by = Number.isNaN(count) || count === 0 ? 1 : count;
        cursor = Math.min(MOST_COLUMNS, final === "G" ? by - 1 : final === "C" ? cursor + by : Math.max(0, cursor - by));
      }
    }
  }
  let shown = "";
  let current = "";
  for (let index = 0; index < cells.length; index++) {
    const code = pens[index] as string;
    if (code !== current) {
      shown += current === "" ? code : `\x1b[0m${code}`;
      current = code;
    }
    shown += cells[index] as string;
  }
  // Erased to the row's end in a background colour: the same erase, in it, where the line ends.
  if (fill !== "") shown += `${current === "" ? "" : "\x1b[0m"}${(current = fill)}\x1b[K`;
  if (current !== "") shown += "\x1b[0m";
  // The state to go on from (see rewrittenState): the cursor where it is, the pen as it is.
  if (keepState) shown += `${cursor === cells.length ? "" : `\x1b[${cursor + 1}G`}${pen.code}`;
  return shown;
}

/**
 * What a terminal shows of `text` (a line's beginning, up to a carriage return) as text that ends in the same state: the
 * characters in their colours, then the cursor moved back to where it is and the colours to write with set again, so that
 * `terminalSafe(rewrittenState(text) + rest)` is `terminalSafe(text + rest)`. The line splitter keeps this of a line that
 * carriage returns rewrite past its bound (a progress bar that never writes a newline), not only its part from its last
 * "\r": what that part does not cover shows through, and a colour set before it stays set. Usually far shorter than
 * `text`: a column each, whatever was written over it.
 */
export function rewrittenState(text: string, columns: (text: string) => number = codePoints): string {
  if (!CONTROL.test(text)) return text;
  if (PLAIN_STATES.test(text)) return plainState(text);
  const kept = withoutHiddenStates(text, columns);
  if (kept !== undefined) return rewrite(kept, columns, true);
  return rewrite(withoutCoveredStates(text).replace(CONTROLS, "$1"), columns, true);
}

/**
 * Printable ASCII and carriage returns only (a bar without colours, a column a character), maybe after a state
 * plainState gave, with its move back to its cursor.
 */
// eslint-disable-next-line no-control-regex -- as above
const PLAIN_STATES = /^(?:[\x20-\x7e]*\x1b\[[1-9][0-9]{0,2}G)?[\x20-\x7e\r]*$/;

/**
 * rewrittenState of `text` (see PLAIN_STATES) without a look at each state: a column shows the last state that reaches it,
 * so, from the last state back, only one longer than those after it shows, its columns past theirs. A bar that never
 * writes a newline, through withoutCoveredStates and rewrite, took taskq three times the CPU it took without them.
 */
function plainState(text: string): string {
  // A state given before, and the column its cursor was at: the first state here is written from there over it.
  const move = text.indexOf("\x1b");
  const before = move === -1 ? "" : text.slice(0, move);
  const from = move === -1 ? 0 : text.indexOf("G", move) + 1;
  const column = move === -1 ? 0 : Number(text.slice(move + 2, from - 1)) - 1;
  let shown = "";
  let reach = 0;
  let cursor = -1;
  for (let end = text.length; ; ) {
    const start = end === from ? from : Math.max(from, text.lastIndexOf("\r", end - 1) + 1);
    const written = text.slice(start, end);
    // The first state, from the cursor's column over the one before (a move alone makes no column); any other, from the first column.
    const over = start === from && move !== -1;
    const state = over ? (written === "" ? before : `${before.slice(0, column).padEnd(column)}${written}${before.slice(column + written.length)}`) : written;
    if (cursor === -1) cursor = (start === from ? column : 0) + written.length;
    if (state.length > reach) {
      shown += state.slice(reach);
      reach = state.length;
    }
    if (start === from) return cursor === reach ? shown : `${shown}\x1b[${cursor + 1}G`;
    end = start - 1;
  }
}

/** A control string's start, which runs over carriage returns to its end (see CONTROLS): a beginning with one goes the long way. */
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_STRING = /\x1b[\]PX^_]|[\x90\x98\x9d-\x9f]/;
/** Past a progress line's beginning, a control character but a carriage return and an escape (each must start a colour code), or a bidirectional control. */
// eslint-disable-next-line no-control-regex -- as above
const NOT_STATES = /[\x00-\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- any character outside ASCII
const OUTSIDE_ASCII = /[^\x00-\x7f]/g;

/**
 * `text` (a beginning, then states of printable characters and colour codes, as a coloured bar, a pip bar of "━" or a
 * spinner's "⠋ 👍🏻 step N" writes them) as rewrite works it out to the same columns, cursor and colours, with only the
 * states that show: undefined for any other text. Worked out from the last state back by the columns each takes: a column
 * shows the last state that reaches it, so only a state wider than all after it shows, and, of those as wide as the next
 * such one, the first (its end may blank the half of a wide character left past it, in its colours). The others give
 * their colour codes only, from the last that resets the colours on. Going through each state column by column made a
 * coloured bar's 20 MB/s, against some 500 MB/s of one without colours.
 */
function withoutHiddenStates(text: string, columns: (text: string) => number): string | undefined {
  const first = text.indexOf("\r");
  if (first === -1) return undefined;
  const head = text.slice(0, first);
  if (CONTROL_STRING.test(head)) return undefined;
  const length = text.length;
  const clusterWidths = new Map<string, number>();
  /**
   * The most columns a character takes, here or in the beginning: past 2 (a cluster `columns` counts 3 or more, as
   * codePoints does Hangul jamo, "\u1100\u1161"), the half of one a state's end blanks may reach past the next state's end.
   */
  let widestCharacter = 2;
  const measure = (cluster: string): number => {
    let columnsOf = cluster.length === 1 && cluster.charCodeAt(0) < 0x80 ? 1 : clusterWidths.get(cluster);
    if (columnsOf === undefined) {
      clusterWidths.set(cluster, (columnsOf = columns(cluster)));
      if (columnsOf > widestCharacter) widestCharacter = columnsOf;
    }
    return columnsOf;
  };
  /** The columns of pieces measured, written from the line's first column and from any other (a mark there takes one). */
  const pieceWidths = [new Map<string, number>(), new Map<string, number>()] as const;
  /** The columns rewrite's cursor moves over text[from, to) (printable, no colour code), from `cursor`. */
  const pieceWidth = (from: number, to: number, cursor: number): number => {
    let last = to - 1;
    while (last >= from && text.charCodeAt(last) < 0x80) last--;
    if (last < from) return to - from;
    // A printable ASCII character never joins the one before it unless that is a prepended sign, which is not ASCII: what
    // follows the first one after the last character outside ASCII is a column each.
    const keyEnd = Math.min(to, last + 2);
    const piece = text.slice(from, keyEnd);
    const measured = pieceWidths[cursor === 0 ? 0 : 1];
    let width = measured.get(piece);
    if (width === undefined) {
      let at = cursor;
      const add = (cluster: string): void => {
        const columnsOf = measure(cluster);
        // A mark at the line's first column takes one of its own (see rewrite); anywhere else, it joins the character before.
        at += columnsOf === 0 ? (at === 0 ? 1 : 0) : columnsOf;
      };
      eachCluster(piece, add);
      measured.set(piece, (width = at - cursor));
    }
    return width + to - keyEnd;
  };
  // Printable characters, colour codes and carriage returns only after the beginning: anything else goes the long way (an
  // escape that starts no colour code is found where each state's codes are).
  NOT_STATES.lastIndex = first;
  if (NOT_STATES.test(text)) return undefined;
  const starts: number[] = [];
  const widths: number[] = [];
  /** Where the next character outside ASCII is (length: none): text before it is a column a character. */
  let outside = -1;
  for (let start = first + 1; ; ) {
    let end = text.indexOf("\r", start);
    if (end === -1) end = length;
    let cursor = 0;
    let piece = start;
    for (let escape = text.indexOf("\x1b", start); ; escape = text.indexOf("\x1b", piece)) {
      const to = escape === -1 || escape > end ? end : escape;
      if (to > piece) {
        if (outside < piece) {
          OUTSIDE_ASCII.lastIndex = piece;
          outside = OUTSIDE_ASCII.test(text) ? OUTSIDE_ASCII.lastIndex - 1 : length;
        }
        cursor += outside < to ? pieceWidth(piece, to, cursor) : to - piece;
      }
      if (to === end) break;
      if (text.charCodeAt(escape + 1) !== 0x5b) return undefined;
      let final = escape + 2;
      for (let unit = text.charCodeAt(final); unit >= 0x30 && unit <= 0x3b; unit = text.charCodeAt(++final));
      if (text.charCodeAt(final) !== 0x6d) return undefined;
      piece = final + 1;
    }
    starts.push(start);
    widths.push(cursor);
    if (end === length) break;
    start = end + 1;
  }
  const kept = head.replace(CONTROLS, "$1");
  if (!ASCII.test(kept)) {
    const parts = kept.split(REWRITE_SPLIT);
    for (let part = 0; part < parts.length; part += 2) eachCluster(parts[part] as string, measure);
  }
  const count = starts.length;
  const shows = new Uint8Array(count);
  /** How far short of the widest state after it a state may end and still blank a column past that one's end. */
  const reach = widestCharacter - 2;
  let widest = -1;
  let shown = -1;
  let firstAsWide = -1;
  for (let state = count - 1; state >= 0; state--) {
    const width = widths[state] as number;
    if (width > widest) {
      widest = width;
      shows[(shown = firstAsWide = state)] = 1;
    } else if (reach > 0 && width >= widest - reach) {
      shows[state] = 1;
    } else if (width === widest) {
      if (firstAsWide !== shown) shows[firstAsWide] = 0;
      shows[(firstAsWide = state)] = 1;
    }
  }
  let shownStates = kept;
  for (let state = 0, hidden = 0; state < count; state++) {
    if (shows[state] === 0) continue;
    const start = starts[state] as number;
    const end = state + 1 < count ? (starts[state + 1] as number) - 1 : length;
    if (hidden < state) shownStates += hiddenCodes(text, starts[hidden] as number, start - 1);
    shownStates += `\r${text.slice(start, end)}`;
    hidden = state + 1;
  }
  return shownStates;
}

/**
 * What a code's parameters, text[from, to), set alone, as bits: FOREGROUND (30 to 37, 39, 90 to 97), BACKGROUND (40 to
 * 47, 49, 100 to 107), BOLD (1), DIM (2), both BOLD and DIM (22, which ends both); 0 for any other code. By their units: a
 * spinner brings one a state, chalk's bold or dim with a colour two more.
 */
function colourKind(text: string, from: number, to: number): number {
  const first = text.charCodeAt(from);
  if (to - from === 1) return first === 0x31 ? BOLD : first === 0x32 ? DIM : 0;
  const second = text.charCodeAt(from + 1);
  if (to - from === 2) {
    if (first === 0x32 && second === 0x32) return BOLD | DIM;
    if (second === 0x39 ? first === 0x33 || first === 0x34 : second >= 0x30 && second <= 0x37) {
      return first === 0x33 || first === 0x39 ? FOREGROUND : first === 0x34 ? BACKGROUND : 0;
    }
    return 0;
  }
  const third = text.charCodeAt(from + 2);
  return to - from === 3 && first === 0x31 && second === 0x30 && third >= 0x30 && third <= 0x37 ? BACKGROUND : 0;
}

/** What a colour code sets (see colourKind). */
const FOREGROUND = 1;
const BACKGROUND = 2;
const BOLD = 4;
const DIM = 8;

/**
 * The colour codes of text[from, to) (states that do not show, see withoutHiddenStates) that set the colours the next
 * state starts in, found from the last back: to the last that resets the colours first, without a code that sets one
 * colour, bold or dim alone when later ones set all it sets. A bar that resets its colours at each state's end gives one
 * code; one in chalk's bold and a colour, the two that end them.
 */
function hiddenCodes(text: string, from: number, to: number): string {
  let codes = "";
  /** What the codes kept so far set (see colourKind). */
  let set = 0;
  // Found forward, looked at back: a lastIndexOf for each took a sixth longer.
  const escapes: number[] = [];
  for (let escape = text.indexOf("\x1b", from); escape !== -1 && escape < to; escape = text.indexOf("\x1b", escape + 3)) escapes.push(escape);
  for (let index = escapes.length - 1; index >= 0; index--) {
    const escape = escapes[index] as number;
    const final = text.indexOf("m", escape);
    let first = escape + 2;
    while (text.charCodeAt(first) === 0x30) first++;
    const next = text.charCodeAt(first);
    // A first parameter of 0 or none resets the colours: what came before it is gone.
    if (next === 0x3b || next === 0x3a || next === 0x6d) return `${text.slice(escape, final + 1)}${codes}`;
    const kind = colourKind(text, escape + 2, final);
    if (kind !== 0) {
      if ((kind & ~set) === 0) continue;
      set |= kind;
    }
    codes = `${text.slice(escape, final + 1)}${codes}`;
  }
  return codes;
}

/** A colour code at a state's end. */
// eslint-disable-next-line no-control-regex -- as above
const COLOUR_LAST = /\x1b\[[0-9;:]*m$/;

/**
 * `text` with the text of each state (what comes between two carriage returns) that the next one writes over whole left
 * out, its colour codes kept: both only characters and colour codes, the same codes (a wide character the state cuts at
 * its end leaves a blank in the colours it was written in), none after its last character, and the next one's characters
 * the same but for ASCII ones in place of ASCII ones, maybe more after them ("⠋ 👍🏻 step 9" then "⠋ 👍🏻 step 10"), so
 * the same columns and more. A progress line that never writes a newline brings tens of thousands of states a second, and working out
 * each column by column doubled the CPU taskq took for it.
 */
function withoutCoveredStates(text: string): string {
  let start = text.indexOf("\r");
  if (start === -1) return text;
  let kept = "";
  let from = 0;
  /** The state before: where its "\r" is, where it ends, its characters (undefined: it does more than take columns). */
  let previous = -1;
  let previousEnd = -1;
  let previousShown: string | undefined;
  let previousCodes = "";
  for (;;) {
    const end = text.indexOf("\r", start + 1);
    const stop = end === -1 ? text.length : end;
    const state = text.slice(start + 1, stop);
    const coloured = state.includes("\x1b");
    const characters = coloured ? state.replace(COLOUR, "") : state;
    // Undefined where the state does more than take columns and set colours, or ends with a colour code.
    const shown = CONTROL.test(characters) || (coloured && COLOUR_LAST.test(state)) ? undefined : characters;
    const codes = coloured ? (state.match(COLOUR) ?? []).join("") : "";
    if (previousShown !== undefined && shown !== undefined && codes === previousCodes && covers(shown, previousShown)) {
      kept += `${text.slice(from, previous + 1)}${codes}`;
      from = previousEnd;
    }
    if (end === -1) break;
    previous = start;
    previousEnd = stop;
    previousShown = shown;
    previousCodes = codes;
    start = end;
  }
  return from === 0 ? text : `${kept}${text.slice(from)}`;
}

/** Whether `next`, written from the line's first column, writes over every column `before` did (see withoutCoveredStates). */
function covers(next: string, before: string): boolean {
  if (next.length < before.length) return false;
  if (next.startsWith(before)) return true;
  for (let index = 0; index < before.length; index++) {
    const a = before.charCodeAt(index);
    const b = next.charCodeAt(index);
    if (a !== b && (a >= 0x80 || b >= 0x80)) return false;
  }
  return true;
}

/**
 * The colours and attributes a terminal draws characters in, as colour codes (SGR) set them: each code's parameters
 * set some of them and leave the rest, so the pen after many codes is the one code `code` (a spinner in colour
 * written over and over at one column is one code, not a pile). The rarer attributes (a font, Fraktur, framed or
 * encircled, superscript or subscript, ideogram lines, proportional spacing) are kept too, as the terminals that draw
 * them (mintty, some VTE) show them on a line no carriage return rewrote; parameters no terminal knows are left out.
 */
class Pen {
  bold = false;
  dim = false;
  italic = false;
  /** "4", "4:3" (curly), "21" (double): "" for none. */
  underline = "";
  blink = "";
  inverse = false;
  hidden = false;
  strike = false;
  overline = false;
  /** The rarer attributes, each as its parameter ("" for none): an alternative font (11 to 19), framed or encircled (51, 52), an ideogram line (60 to 64), superscript or subscript (73, 74). */
  font = "";
  frame = "";
  ideogram = "";
  script = "";
  fraktur = false;
  proportional = false;
  /** A colour as its parameters say it ("31", "38;5;208", "38:2::255:0:0"): "" for the default. */
  foreground = "";
  background = "";
  underlineColour = "";
  /** The code that sets this pen after a reset ("" for none). */
  code = "";

  apply(parameters: string): void {
    const list = parameters.split(";");
    for (let index = 0; index < list.length; index++) {
      const parameter = list[index] as string;
      const colon = parameter.indexOf(":");
      const number = Number(colon === -1 ? parameter : parameter.slice(0, colon));
      if (number === 38 || number === 48 || number === 58) {
        // "38:5:208" whole; "38;5;208" and "38;2;r;g;b" take the parameters after them.
        let colour = parameter;
        if (colon === -1) {
          const space = index + 1 < list.length ? Number(list[index + 1]) : Number.NaN;
          if (space !== 5 && space !== 2) {
            // No colour space, or one xterm.js does not know ("38", "38;7"): it takes as many parameters as it would
            // and sets no colour. Kept as a colour, "38" took the next code's numbers: "38;41" sets no background.
            index += space === 0 ? 6 : 5;
            continue;
          }
          const more = space === 5 ? 2 : 4;
          const parts = list.slice(index, index + 1 + more);
          // Cut short ("38;5", "48;2;1;2"): 0 for each missing, as xterm.js takes it. Kept short, it took the next code's
          // numbers as its own: "38;5" then "41" was "38;5;41", colour 41 and no background.
          while (parts.length <= more) parts.push("0");
          colour = parts.join(";");
          index += more;
        }
        if (number === 38) this.foreground = colour;
        else if (number === 48) this.background = colour;
        else this.underlineColour = colour;
      } else if (number === 0) this.#reset();
      else if (number === 1) this.bold = true;
      else if (number === 2) this.dim = true;
      else if (number === 22) this.bold = this.dim = false;
      else if (number === 3) this.italic = true;
      else if (number === 23) this.italic = this.fraktur = false;
      else if (number >= 10 && number <= 19) this.font = number === 10 ? "" : parameter;
      else if (number === 20) this.fraktur = true;
      else if (number === 26 || number === 50) this.proportional = number === 26;
      else if (number === 51 || number === 52) this.frame = parameter;
      else if (number === 54) this.frame = "";
      else if (number >= 60 && number <= 65) this.ideogram = number === 65 ? "" : parameter;
      else if (number === 73 || number === 74) this.script = parameter;
      else if (number === 75) this.script = "";
      else if (number === 4 || number === 21) this.underline = parameter === "4:0" ? "" : parameter;
      else if (number === 24) this.underline = "";
      else if (number === 5 || number === 6) this.blink = parameter;
      else if (number === 25) this.blink = "";
      else if (number === 7 || number === 27) this.inverse = number === 7;
      else if (number === 8 || number === 28) this.hidden = number === 8;
      else if (number === 9 || number === 29) this.strike = number === 9;
      else if (number === 53 || number === 55) this.overline = number === 53;
      else if ((number >= 30 && number <= 37) || (number >= 90 && number <= 97)) this.foreground = parameter;
      else if (number === 39) this.foreground = "";
      else if ((number >= 40 && number <= 47) || (number >= 100 && number <= 107)) this.background = parameter;
      else if (number === 49) this.background = "";
      else if (number === 59) this.underlineColour = "";
    }
    const set = [
      this.bold ? "1" : "",
      this.dim ? "2" : "",
      this.italic ? "3" : "",
      this.underline,
      this.blink,
      this.inverse ? "7" : "",
      this.hidden ? "8" : "",
      this.strike ? "9" : "",
      this.overline ? "53" : "",
      this.font,
      this.fraktur ? "20" : "",
      this.proportional ? "26" : "",
      this.frame,
      this.ideogram,
      this.script,
      this.foreground,
      this.background,
      this.underlineColour,
    ].filter((part) => part !== "");
    this.code = set.length === 0 ? "" : `\x1b[${set.join(";")}m`;
  }

  #reset(): void {
    this.bold = this.dim = this.italic = this.inverse = this.hidden = this.strike = this.overline = false;
    this.fraktur = this.proportional = false;
    this.underline = this.blink = this.foreground = this.background = this.underlineColour = this.font = this.frame = this.ideogram = this.script = "";
  }
}

/** `line` (no control character but tabs, no escape sequence but colours) with each tab as the spaces to its stop: piece by piece, an ASCII line's measured by length. */
function expandTabs(line: string, columns: (text: string) => number): string {
  const ascii = !HAS_ESCAPE.test(line) && ASCII.test(line);
  let shown = "";
  let column = 0;
  let from = 0;
  for (let tab = line.indexOf("\t"); tab !== -1; tab = line.indexOf("\t", from)) {
    const piece = line.slice(from, tab);
    column += ascii ? piece.length : widthOf(piece, columns);
    const spaces = 8 - (column % 8);
    shown += `${piece}${TAB_SPACES[spaces]}`;
    column += spaces;
    from = tab + 1;
  }
  return `${shown}${line.slice(from)}`;
}

/** The spaces a tab becomes, by their count (1 to 8). */
const TAB_SPACES = Array.from({ length: 9 }, (_, count) => " ".repeat(count));

/** The columns of `text` (colour codes and printable characters), colour codes taking none: an ASCII text's by its length, any other's by `columns`. */
export function widthOf(text: string, columns: (text: string) => number): number {
  const shown = HAS_ESCAPE.test(text) ? text.replace(COLOUR, "") : text;
  return ASCII.test(shown) ? shown.length : columns(shown);
}

/**
 * The columns of `text` without string-width (see terminalSafe): a column per code point, two for an East Asian
 * wide one (CJK, kana, hangul, fullwidth forms) or an emoji shown as one (✅, 😀), none for a mark that joins the
 * one before (an accent, a variation selector, a zero-width joiner and the emoji it joins, a skin tone). A column each for those too put a tab after
 * "名前" or "✅" 2 or 1 columns past one after "name", in the plain lines and a summary's last lines.
 */
function codePoints(text: string): number {
  let count = 0;
  let afterJoiner = false;
  /** The code point before, and whether it was counted as one column: an emoji's base that U+FE0F may make two. */
  let previous = 0;
  let narrow = false;
  for (let index = 0; index < text.length; index++) {
    let point = text.charCodeAt(index);
    if (point >= 0xd800 && point < 0xdc00 && index + 1 < text.length) {
      const low = text.charCodeAt(index + 1);
      if (low >= 0xdc00 && low < 0xe000) {
        point = (point - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        index++;
      }
    }
    // An emoji after a zero-width joiner is part of the one before it (👨‍👩‍👧, a family, is one of two columns), as string-width counts it.
    if (afterJoiner && PICTOGRAPHIC.test(String.fromCodePoint(point))) continue;
    afterJoiner = point === 0x200d;
    // U+FE0F (variation selector 16) makes the emoji before it one shown as an emoji, two columns, as string-width counts
    // it (✔️, ❤️, ©️; a digit only as a keycap, 1️⃣): the board and the plain lines lay out tabs after it alike.
    if (narrow && ((point === 0xfe0f && !KEYCAP_BASE.test(String.fromCodePoint(previous))) || (point === 0x20e3 && previous === 0xfe0f))) {
      count++;
      narrow = false;
      previous = point;
      continue;
    }
    const columns = point < 0x300 ? 1 : pointColumns(point);
    count += columns;
    if (columns !== 0 || point !== 0xfe0f) narrow = columns === 1 && (point < 0x300 ? LATIN_EMOJI.has(point) : EMOJI_BASE.test(String.fromCodePoint(point)));
    previous = point;
  }
  return count;
}

/** The code points below U+0300 that U+FE0F shows as an emoji: "#", "*", the digits, ©, ®. */
const LATIN_EMOJI = new Set([0x23, 0x2a, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0xa9, 0xae]);
/** A character that U+FE0F shows as an emoji (see codePoints). */
const EMOJI_BASE = /^\p{Emoji}$/u;
/** A digit, "#" or "*": an emoji only as a keycap, with U+FE0F and U+20E3. */
const KEYCAP_BASE = /^[0-9#*]$/;

/** A character an emoji sequence joins after a zero-width joiner. */
const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;

/** A mark that joins the one before: combining (U+0300 to U+036F and other scripts' \p{M}), zero-width, a variation selector. */
const JOINING = /^[\p{M}\u200b-\u200f\u2060\ufeff]$/u;
/** An emoji shown as one, two columns wide. */
const EMOJI = /^\p{Emoji_Presentation}$/u;

/** The columns of one code point from U+0300 on (see codePoints). */
function pointColumns(point: number): number {
  if (
    (point >= 0x1100 && point <= 0x115f) ||
    (point >= 0x2e80 && point <= 0x303e) ||
    (point >= 0x3041 && point <= 0x33ff) ||
    (point >= 0x3400 && point <= 0x4dbf) ||
    (point >= 0x4e00 && point <= 0x9fff) ||
    (point >= 0xa000 && point <= 0xa4cf) ||
    (point >= 0xac00 && point <= 0xd7a3) ||
    (point >= 0xf900 && point <= 0xfaff) ||
    (point >= 0xfe30 && point <= 0xfe4f) ||
    (point >= 0xff00 && point <= 0xff60) ||
    (point >= 0xffe0 && point <= 0xffe6) ||
    (point >= 0x20000 && point <= 0x3fffd)
  ) {
    return 2;
  }
  // A skin tone joins the emoji before it; a flag is two regional indicators, a column each.
  if (point >= 0x1f3fb && point <= 0x1f3ff) return 0;
  if (point >= 0x1f1e6 && point <= 0x1f1ff) return 1;
  const character = String.fromCodePoint(point);
  if (JOINING.test(character)) return 0;
  return point >= 0x231a && EMOJI.test(character) ? 2 : 1;
}

/** Where expandTabsInBlock puts a block, grown as needed: its callers copy what it gives before the next call. */
let tabbed = Buffer.alloc(0);
let tabbedEnds = new Int32Array(0);

/**
 * A block of lines (as a LineSplitter block gives them) with each tab as the spaces to its stop, as terminalSafe lays
 * it out, when tabs are all it holds that terminalSafe changes and all its bytes are ASCII: undefined for any other
 * block, which goes line by line through terminalSafe. A table or tab-separated values, printed by the hundred
 * thousand lines, then cost a string for each line and two for each tab, and taskq about 1.6 times the CPU of the same
 * lines with spaces. The bytes and ends are valid until the next call.
 */
export function expandTabsInBlock(bytes: Buffer, count: number): { bytes: Buffer; ends: Int32Array } | undefined {
  const length = bytes.length;
  let tabs = 0;
  for (let index = 0; index < length; index++) {
    const byte = bytes[index] as number;
    if (byte === 0x09) tabs++;
    else if (byte < 0x20 ? byte !== 0x0a : byte >= 0x7f) return undefined;
  }
  if (tabbed.length < length + tabs * 7) tabbed = Buffer.allocUnsafe(Math.max(length + tabs * 7, tabbed.length * 2, 1 << 16));
  if (tabbedEnds.length < count) tabbedEnds = new Int32Array(Math.max(count, tabbedEnds.length * 2, 256));
  // A byte at a time: a native call (indexOf, copy, fill) for each tab cost more than the copy.
  const out = tabbed;
  let at = 0;
  let lineStart = 0;
  let line = 0;
  for (let index = 0; index < length; index++) {
    const byte = bytes[index] as number;
    if (byte === 0x09) {
      const stop = at + 8 - ((at - lineStart) & 7);
      while (at < stop) out[at++] = 0x20;
    } else {
      out[at++] = byte;
      if (byte === 0x0a) {
        tabbedEnds[line++] = at;
        lineStart = at;
      }
    }
  }
  return { bytes: out.subarray(0, at), ends: tabbedEnds };
}

/** Calls `line` with each of a block's `count` lines as text, without its "\n" (`ends` as a LineSplitter block gives them). */
export function eachLineText(bytes: Buffer, count: number, ends: Int32Array, line: (text: string) => void): void {
  for (let index = 0, start = 0; index < count; start = ends[index++] as number) line(bytes.toString("utf8", start, (ends[index] as number) - 1));
}

/**
 * The colours and attributes (SGR) a task's output has set and not reset, followed as its lines go by, as a terminal
 * or a CI log page that draws colours keeps them from line to line: plain lines into a file or a pipe go as the task
 * wrote them, and taskq writes a reset before its prefix where they are set, then `code` again after it (see
 * BufferedWriter.writeColouredLines). Else the task's red took in the next `task |` prefix, and the run's own lines.
 */
export class OpenColours {
  readonly #pen = new Pen();
  /**
   * The OSC 8 hyperlink the task's output has started and not ended (`ESC ] 8 ; params ; URI ST`), as it wrote it: a
   * terminal makes every character written after it part of the link, line after line, and a reset does not end it.
   */
  #link: Buffer | undefined;
  /**
   * What sets them again after a reset ("" for none), as bytes: the link as the task started it, then the colour code
   * (none where colours are not kept: see keeps).
   */
  code: Buffer = NO_CODE;
  /** What ends them: a reset, and the link's end where one is open (ESC ] 8 ; ; ST). */
  closing: Buffer = FULL_RESET;

  /**
   * `keeps` false (the user asked for no colour: NO_COLOR, --no-color): taskq sets no colour of its own, not even the
   * task's again after its prefix. The task's bytes still go as it wrote them, and a colour it leaves set at a line's end
   * or at a `\r` still gets a reset before the next prefix, so it colours no text of taskq's: its colour ends with its line,
   * as on a terminal (see terminalSafe) and in the summary's last lines.
   */
  constructor(readonly keeps = true) {}

  /** Whether the task's bytes so far leave colours or a hyperlink set. */
  get open(): boolean {
    return this.#pen.code !== "" || this.#link !== undefined;
  }

  /** Whether the task's bytes so far leave colours set (a hyperlink aside). */
  get coloured(): boolean {
    return this.#pen.code !== "";
  }

  /** Forgets the colours set, where they are not kept: a reset comes before the task's next prefix, and nothing sets them again. */
  close(): void {
    if (this.keeps || this.#pen.code === "") return;
    this.#pen.apply("0");
  }

  /** `prefix` after a reset and before `code`, made once for each prefix and code in turn. */
  framed(prefix: Buffer): Buffer {
    if (this.#framed === undefined || this.#framedPrefix !== prefix || this.#framedCode !== this.code) {
      this.#framed = Buffer.concat([this.closing, prefix, this.code]);
      this.#framedPrefix = prefix;
      this.#framedCode = this.code;
    }
    return this.#framed;
  }

  #framed: Buffer | undefined;
  #framedPrefix: Buffer | undefined;
  #framedCode: Buffer | undefined;

  /**
   * Follows the colour codes (ESC [, digits, ";" and ":", m) in `bytes`, as terminalSafe takes them. Any other escape
   * sequence changes no colour: one whose parameters start with "<", "=", ">" or "?" and end in "m" too (xterm's key
   * modifier mode, ESC [ > 4 ; 2 m, which vim writes), whose numbers were taken as SGR (2, dim).
   */
  scan(bytes: Buffer): void {
    const before = this.#pen.code;
    const linkBefore = this.#link;
    const to = bytes.length;
    // A line cut for length ends the link it may hold after what is kept of it: taskq's ending, not the task's, whose link goes on.
    const cut = cutMarkStart(bytes, CUT_LINK_ENDING, DISPLAY_LIMIT);
    for (let at = bytes.indexOf(LINK_START); at !== -1 && at !== cut; at = bytes.indexOf(LINK_START, at + 4)) this.#followLink(bytes, at);
    // Most coloured lines end their colours with a reset (`\e[0m`, `\e[m`) as their last escape: whatever came before.
    const last = bytes.lastIndexOf(0x1b);
    if (last !== -1 && isReset(bytes, last)) {
      if (before !== "") this.#pen.apply("0");
    } else {
      for (let at = bytes.indexOf(0x1b); at !== -1 && at + 2 < to; at = bytes.indexOf(0x1b, at + 1)) {
        if (bytes[at + 1] !== 0x5b) continue;
        let end = at + 2;
        while (end < to && (bytes[end] as number) >= 0x30 && (bytes[end] as number) <= 0x3b) end++;
        if (end < to && bytes[end] === 0x6d) this.#pen.apply(bytes.toString("latin1", at + 2, end));
      }
    }
    if (this.#link === linkBefore && (this.#pen.code === before || !this.keeps)) return;
    const colour = this.keeps && this.#pen.code !== "" ? codeBytes(this.#pen.code) : NO_CODE;
    this.code = this.#link === undefined ? colour : Buffer.concat([this.#link, colour]);
    this.closing = this.#link === undefined ? FULL_RESET : RESET_AND_LINK_END;
  }

  /**
   * The OSC 8 sequence at `at` (ESC ] 8 ; params ; URI, then BEL or ESC \\): with a URI, the link it starts; without, the
   * end of the one open. One cut short (no end in `bytes`) changes nothing.
   */
  #followLink(bytes: Buffer, at: number): void {
    const uri = bytes.indexOf(0x3b, at + 4);
    if (uri === -1) return;
    let end = uri + 1;
    while (end < bytes.length && bytes[end] !== 0x07 && bytes[end] !== 0x1b) end++;
    if (end >= bytes.length || (bytes[end] === 0x1b && bytes[end + 1] !== 0x5c)) return;
    this.#link = end === uri + 1 ? undefined : Buffer.from(bytes.subarray(at, bytes[end] === 0x07 ? end + 1 : end + 2));
  }
}

// eslint-disable-next-line no-control-regex -- a reset of every colour (ESC [ m, ESC [ 0 m) at the start
const STARTS_WITH_RESET = /^\x1b\[0?m/;

/**
 * Each task's colours (SGR) its lines leave set, by its key, for plain lines on a terminal, which terminalSafe resets at
 * each line's end: set again at the start of the task's next line, they show as the task wrote them, as the colours of a
 * line into a pipe are set again after the prefix (see OpenColours), a colour over two lines or over a line shown before
 * it ends and its rest. `keeps` false (NO_COLOR, --no-color): none kept, each line's colours end with it.
 */
export class TerminalColours {
  readonly #byKey = new Map<string, string>();

  constructor(readonly keeps = true) {}

  /** Whether `key`'s lines so far leave colours set: its next block goes line by line, through safe. */
  has(key: string): boolean {
    return this.#byKey.size !== 0 && this.#byKey.has(key);
  }

  /** terminalSafe of `key`'s line `text`, in the colours its lines before left set; those it leaves set kept. */
  safe(key: string, text: string, columns?: (text: string) => number): string {
    const before = this.#byKey.get(key);
    if (before === undefined && (!this.keeps || !HAS_ESCAPE.test(text))) return terminalSafe(text, columns);
    // Not before a reset: set again to no end.
    const line = before === undefined || STARTS_WITH_RESET.test(text) ? text : `${before}${text}`;
    const pen = new Pen();
    for (const code of line.matchAll(COLOUR)) pen.apply(code[0].slice(2, -1));
    if (pen.code === "") this.#byKey.delete(key);
    else this.#byKey.set(key, pen.code);
    return text === "" ? "" : terminalSafe(line, columns);
  }

  /** Forgets `key`'s colours: a new process starts with a terminal's as its own, and an ended one's end with it. */
  forget(key: string): void {
    this.#byKey.delete(key);
  }
}

/**
 * Each task's OpenColours, by its key, for plain lines into a file or a pipe (a local run's, a worker's): a block of a task
 * with none set and no escape goes as by writePrefixedLines, the rest through writeColouredLines.
 */
export class TaskColours {
  readonly #byKey = new Map<string, OpenColours>();
  /** With bareCommands: each task's own `::stop-commands::` token, until its `::TOKEN::` (see write). */
  readonly #stopped = new Map<string, string>();
  /**
   * With bareCommands: the task whose `::group::` the runner read last, no `::endgroup::` read since (the runner's groups
   * do not nest: one group is open at most, whoever opened it). See endGroupOf.
   */
  #groupOpenedBy: string | undefined;

  /**
   * `keeps` false: no task's colour is set again after its prefix (see OpenColours). `bareCommands` (GitHub Actions'
   * runner reads the output, decided once): a line that is a workflow command goes without the prefix (see
   * workflow-commands.ts).
   */
  constructor(
    readonly keeps = true,
    readonly bareCommands = false,
  ) {}

  write(out: BufferedWriter, key: string, prefix: Buffer, bytes: Buffer, count: number, ends: Int32Array): void {
    if (this.bareCommands) {
      eachCommandLine(
        bytes,
        count,
        ends,
        (run, runCount, runEnds) => this.#write(out, key, prefix, run, runCount, runEnds),
        (line) => {
          // A task's own `::stop-commands::TOKEN` goes behind its prefix, where the runner reads no command: bare, it
          // stopped the runner reading every task's commands, another's `::add-mask::` too, until `::TOKEN::`. Its lines
          // up to that token go behind the prefix as well, as the runner would have read them: as text.
          // Each part of the line the runner reads as one (its start, and after each "\r", where its log splits a line),
          // in order: a stop after a "\r" (`x\r::stop-commands::tok`) is one too, and so is a resume there
          // (`done\r::tok::`). A token the runner refuses (a command's name, `pause-logging`) stops nothing.
          let stopped = this.#stopped.get(key);
          let prefixed = stopped !== undefined;
          /** The last `::group::` (true) or `::endgroup::` (false) of the line, read where no stop holds. */
          let grouped: boolean | undefined;
          for (const command of commandsInParts(line)) {
            if (stopped !== undefined) {
              if (command.name === stopped) stopped = undefined;
            } else if (command.name === "stop-commands" && !REFUSED_STOP_TOKENS.has(command.data.toLowerCase())) {
              stopped = command.data.toLowerCase();
              prefixed = true;
            } else if (command.name === "group" || command.name === "endgroup") {
              grouped = command.name === "group";
            }
          }
          if (stopped === undefined) this.#stopped.delete(key);
          else this.#stopped.set(key, stopped);
          if (prefixed) return this.#write(out, key, prefix, line, 1, Int32Array.of(line.length));
          // Goes bare: the runner reads it.
          if (grouped === true) this.#groupOpenedBy = key;
          else if (grouped === false) this.#groupOpenedBy = undefined;
          let colours = this.#byKey.get(key);
          if (colours === undefined && line.indexOf(0x1b) !== -1) this.#byKey.set(key, (colours = new OpenColours(this.keeps)));
          out.writeBareLine(line, colours);
        },
      );
      return;
    }
    this.#write(out, key, prefix, bytes, count, ends);
  }

  #write(out: BufferedWriter, key: string, prefix: Buffer, bytes: Buffer, count: number, ends: Int32Array): void {
    let colours = this.#byKey.get(key);
    if (colours === undefined) {
      if (bytes.indexOf(0x1b) === -1) {
        out.writePrefixedLines(prefix, bytes, count, ends);
        return;
      }
      this.#byKey.set(key, (colours = new OpenColours(this.keeps)));
    }
    out.writeColouredLines(prefix, bytes, count, ends, colours);
  }

  /**
   * Forgets `key`'s colours: a new process starts with a terminal's as its own, and an ended one's end with it. And its
   * `::stop-commands::`: a retry's attempt is a new process, which never wrote it (kept, the first attempt's open stop
   * sent the next attempt's `::add-mask::` behind the prefix, its value never masked), and an ended task's is dropped,
   * which a worker's map of them otherwise kept for as long as it ran.
   */
  forget(key: string): void {
    this.#byKey.delete(key);
    this.#stopped.delete(key);
  }

  /**
   * Ends the runner's group that `key`'s task opened (`::group::`) and did not end, as its attempt ends: a script under
   * `set -e` that fails between its `::group::` and its `::endgroup::`, or one its timeout or a stop cuts short there,
   * left it open, and the runner folded the rest of the step's log into it, other tasks' lines and taskq's summary of
   * what failed included, out of sight. Without `key`, whichever is open (before the summary: a process a task left
   * running may have opened one). The line goes bare, as the task's own would, nothing of taskq's before it.
   */
  endGroupOf(out: BufferedWriter, key?: string): void {
    if (this.#groupOpenedBy === undefined || (key !== undefined && this.#groupOpenedBy !== key)) return;
    this.#groupOpenedBy = undefined;
    out.writeBareLine(END_GROUP, undefined);
  }
}

/** The runner's command that ends a group (see TaskColours.endGroupOf). */
const END_GROUP = Buffer.from("::endgroup::\n");

/** Whether bytes at `at` are a reset of every colour (ESC [ m, ESC [ 0 m). */
export function isReset(bytes: Buffer, at: number): boolean {
  return bytes[at + 1] === 0x5b && (bytes[at + 2] === 0x6d || (bytes[at + 2] === 0x30 && bytes[at + 3] === 0x6d));
}

const NO_CODE = Buffer.alloc(0);
const FULL_RESET = Buffer.from("\x1b[0m");
/** How an OSC 8 hyperlink's start or end begins (see OpenColours; BufferedWriter.writeColouredLines looks for it too). */
export const LINK_START = Buffer.from("\x1b]8;");
/** A reset, then the end of an OSC 8 hyperlink. */
const RESET_AND_LINK_END = Buffer.from("\x1b[0m\x1b]8;;\x1b\\");

/** The bytes of each colour code seen, made once: a task uses a few, over and over. */
const codes = new Map<string, Buffer>();
function codeBytes(code: string): Buffer {
  let bytes = codes.get(code);
  if (bytes === undefined) {
    if (codes.size >= 256) codes.clear();
    codes.set(code, (bytes = Buffer.from(code, "latin1")));
  }
  return bytes;
}
