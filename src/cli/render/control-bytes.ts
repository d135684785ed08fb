import { isUtf8 } from "node:buffer";

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
  if (words === 0) return false;
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
 * What terminalSafe removes, each whole, but colours (SGR), captured to be kept: a CSI
 * sequence (ESC [ or its C1 form, parameters, intermediates, a final byte; or cut short by
 * the line's end); a control string, OSC, DCS, SOS, PM or APC (ESC ] P X ^ _ or their C1
 * forms), to its end (BEL or ST) or the line's, its text included (a title, a sixel image);
 * any other escape sequence (ESC ( B, ESC 7...); a control character but tab and backspace
 * (SO and SI switch the character set, BEL rings); a bidirectional override or isolate.
 */
// eslint-disable-next-line no-control-regex -- as above
const CONTROLS = /(\x1b\[[0-9;:]*m)|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?|[\x00-\x07\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- as above
const HAS_ESCAPE = /\x1b/;
/** What terminalSafe works out itself, once the rest is gone: a tab's stop, a backspace's erase. */
const MOVES = /[\b\t]/;
/** A colour code where applyMoves is in a line with backspaces. */
// eslint-disable-next-line no-control-regex -- as above
const COLOUR_AT = /\x1b\[[0-9;:]*m/y;
// eslint-disable-next-line no-control-regex -- as above
const COLOUR = /\x1b\[[0-9;:]*m/g;
// eslint-disable-next-line no-control-regex -- any ASCII: a character is a column
const ASCII = /^[\x00-\x7f]*$/;

/**
 * A task's line as it goes above the board, so that it stays on its own line behind its
 * prefix and changes nothing else on the terminal: of a line that a carriage return rewrote
 * (a progress bar), what a terminal would end up showing, the text after the last one; of one
 * that backspaces rewrote (a spinner's "|\b/\b-\b"), what the terminal would show too, each backspace
 * moving back a column that the next character overwrites, never into the prefix; tabs as the spaces to the next stop of 8 columns counted from
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
  // A carriage return with nothing after it rewrites nothing: "abc\r\r\n" (a "\r\n" written
  // in text mode) shows "abc" on a terminal, where this gave an empty line.
  const returned = lastRewrite(text);
  let line = (returned === -1 ? text : text.slice(returned + 1)).replace(CONTROLS, "$1");
  if (MOVES.test(line)) line = applyMoves(line, columns);
  return HAS_ESCAPE.test(line) ? `${line}\x1b[0m` : line;
}

/**
 * `line` (no control character left but tabs and backspaces, no escape sequence but colours) with its tabs and
 * backspaces worked out as a terminal does (see terminalSafe): a backspace moves back a column, erasing nothing, and
 * what is written next overwrites what was there. A count that ends each update with backspaces back to its start
 * ("42%\b\b\b43%\b\b\b", then a newline) shows its last value, where taking a character back for each left nothing.
 */
function applyMoves(line: string, columns: (text: string) => number): string {
  if (!line.includes("\b")) return expandTabs(line, columns);
  /** A column each: its character, after the colour codes written before it; "" for the second column of a wide one. */
  const cells: string[] = [];
  /** Colour codes not yet followed by a character. */
  let codes = "";
  let cursor = 0;
  /** The columns of each character outside ASCII, measured once: most lines repeat a few (a spinner's, a script's). */
  const widths = new Map<string, number>();
  /** Column `at` made a space, keeping its colour codes (the other half of a wide character that something overwrote). */
  const blank = (at: number): void => {
    cells[at] = `${codesOf(cells[at] as string)} `;
  };
  for (let index = 0; index < line.length; ) {
    const unit = line.charCodeAt(index);
    if (unit === 0x08) {
      if (cursor > 0) cursor--;
      index++;
    } else if (unit === 0x09) {
      const stop = cursor + 8 - (cursor % 8);
      while (cells.length < stop) cells.push(" ");
      cursor = stop;
      index++;
    } else if (unit === 0x1b) {
      // Only colour codes are left (see CONTROLS).
      COLOUR_AT.lastIndex = index;
      const code = COLOUR_AT.exec(line)?.[0] ?? "\x1b";
      codes += code;
      index += code.length;
    } else {
      const size = unit >= 0xd800 && unit < 0xdc00 && index + 1 < line.length ? 2 : 1;
      const character = size === 1 ? (line[index] as string) : line.slice(index, index + 2);
      index += size;
      let width = unit < 0x80 ? 1 : widths.get(character);
      if (width === undefined) widths.set(character, (width = widthOf(character, columns)));
      if (width === 0) {
        // A mark that joins the character before the cursor (an accent): with it.
        let at = cursor - 1;
        if (at >= 0 && cells[at] === "") at--;
        if (at < 0) {
          codes += character;
          continue;
        }
        cells[at] = `${cells[at] as string}${codes}${character}`;
        codes = "";
        continue;
      }
      // Half of a wide character overwritten: its other half shows as a space, as on a terminal.
      if (cells[cursor] === "") blank(cursor - 1);
      const end = cursor + width;
      if (cells[end] === "") blank(end);
      // The colour codes of what is overwritten stay: the colours after it are as they were.
      let kept = cursor < cells.length ? codesOf(cells[cursor] as string) : "";
      if (width === 2 && end - 1 < cells.length) kept += codesOf(cells[end - 1] as string);
      cells[cursor] = `${lastColours(`${kept}${codes}`)}${character}`;
      if (width === 2) cells[cursor + 1] = "";
      codes = "";
      cursor = end;
    }
  }
  return `${cells.join("")}${codes}`;
}

/**
 * `codes` (colour codes) from the last that resets every colour (ESC [ m, ESC [ 0 m) on, where they are many: a
 * spinner in colour written over and over at one column ("\x1b[31m|\x1b[0m\b" 1000 times) piled them up there,
 * each write copying the pile; with no reset, the last 16 of them.
 */
function lastColours(codes: string): string {
  if (codes.length <= 64) return codes;
  const reset = Math.max(codes.lastIndexOf("\x1b[0m"), codes.lastIndexOf("\x1b[m"));
  if (reset > 0) codes = codes.slice(reset);
  // None: the last 16, which set whatever the earlier ones did (a colour, bold) at most as often.
  let from = codes.length;
  for (let count = 0; count < 16 && from > 0; count++) from = codes.lastIndexOf("\x1b", from - 1);
  return from <= 0 ? codes : codes.slice(from);
}

/** The colour codes at the start of a column (see applyMoves). */
function codesOf(cell: string): string {
  if (cell.charCodeAt(0) !== 0x1b) return "";
  return COLOURS_AT_START.exec(cell)?.[0] ?? "";
}

// eslint-disable-next-line no-control-regex -- as above
const COLOURS_AT_START = /^(?:\x1b\[[0-9;:]*m)*/;

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
 * one before (an accent, a variation selector, a zero-width joiner, a skin tone). A column each for those too put a tab after
 * "名前" or "✅" 2 or 1 columns past one after "name", in the plain lines and a summary's last lines.
 */
function codePoints(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    let point = text.charCodeAt(index);
    if (point >= 0xd800 && point < 0xdc00 && index + 1 < text.length) {
      const low = text.charCodeAt(index + 1);
      if (low >= 0xdc00 && low < 0xe000) {
        point = (point - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        index++;
      }
    }
    count += point < 0x300 ? 1 : pointColumns(point);
  }
  return count;
}

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

/** Where the last carriage return followed by more of the line is (-1: none), the last state of a line it rewrote starting after it. */
export function lastRewrite(text: string): number {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x0d) end--;
  return end === 0 ? -1 : text.lastIndexOf("\r", end - 1);
}

/** Calls `line` with each of a block's `count` lines as text, without its "\n" (`ends` as a LineSplitter block gives them). */
export function eachLineText(bytes: Buffer, count: number, ends: Int32Array, line: (text: string) => void): void {
  for (let index = 0, start = 0; index < count; start = ends[index++] as number) line(bytes.toString("utf8", start, (ends[index] as number) - 1));
}
