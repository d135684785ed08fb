import { stripVTControlCharacters } from "node:util";
import xterm from "@xterm/headless";
import fc from "fast-check";
import { Chalk } from "chalk";
import { afterEach, describe, expect, it } from "vitest";
import { createColors } from "../../src/cli/render/colors.js";
import { clockWithDate } from "../../src/cli/render/describe.js";
import { formatDuration } from "../../src/handlers/format-duration.js";
import { eachLineText, expandTabsInBlock, hasControlBytes, rewrittenState, terminalSafe } from "../../src/cli/render/control-bytes.js";
import { DISPLAY_LIMIT, LineSplitter } from "../../src/handlers/line-splitter.js";
import stringWidth from "string-width";
import textWidth from "../../src/cli/render/text-width.js";
import { bestOfAlternating } from "../helpers/timing.js";
import { fitWidth, terminalRows } from "../../src/cli/render/tty.js";

const chalk = new Chalk({ level: 1 });

describe("the live board's lines", () => {
  it("are cut to the terminal's width, colour codes taking no column, so none wraps", () => {
    const line = `  ${chalk.yellow("- deploy-frontend-to-region-07: dependency \"build-and-package-the-web-frontend\" failed")}`;
    const fitted = fitWidth(line, 40);
    expect(stripVTControlCharacters(fitted)).toBe(`  - deploy-frontend-to-region-07: depen…`);
    expect([...stripVTControlCharacters(fitted)]).toHaveLength(40);
    expect(fitted.endsWith("…\x1b[0m")).toBe(true); // the colour does not run on
    expect(fitWidth("no colour here, and too long", 10)).toBe("no colour…");
    // What fits is left as it is.
    expect(fitWidth(chalk.green("✓ build"), 7)).toBe(chalk.green("✓ build"));
  });

  it("count wide characters (CJK, emoji) as the two columns a terminal gives them, and never end past the width", () => {
    const cwd = "✗ wide: no folder /tmp/漢字漢字漢字漢字🎉🎉🎉🎉 here";
    expect(fitWidth(cwd, 24)).toBe("✗ wide: no folder /tmp/…");
    expect(fitWidth(cwd, 26)).toBe("✗ wide: no folder /tmp/漢…");
    // A wide character that would end past the width is left out whole: one column less, not one more.
    expect(fitWidth(cwd, 27)).toBe("✗ wide: no folder /tmp/漢…");
    expect(fitWidth(chalk.red(cwd), 30)).toBe("\x1b[31m✗ wide: no folder /tmp/漢字漢…\x1b[0m");
    for (let width = 1; width < 50; width++) expect(stringWidth(fitWidth(`  ${chalk.red(cwd)}`, width))).toBeLessThanOrEqual(width);
    // Emoji made of several code points (a flag, a family, a skin tone) are one character: never cut inside.
    expect(fitWidth("ok 🇫🇷👨‍👩‍👧👍🏽 end", 9)).toBe("ok 🇫🇷👨‍👩‍👧…");
    expect(fitWidth("ok 🇫🇷👨‍👩‍👧👍🏽 end", 10)).toBe("ok 🇫🇷👨‍👩‍👧👍🏽…");
    expect(fitWidth("漢字", 4)).toBe("漢字");
    expect(fitWidth("anything", 0)).toBe("");
    expect(fitWidth("漢字", 1)).toBe("…");
  });

  it("count the board's own symbols and spinner as string-width does, one column each, and ask it about any other character", async () => {
    const { default: ora } = await import("ora");
    const board = ["▶", "✓", "✗", "↻", "⏲", "…", "·", ...ora().spinner.frames];
    for (const symbol of board) expect(textWidth(symbol), symbol).toBe(stringWidth(symbol));
    const row = "⠋ 3/8 done · 1 not ok … ▶ build  attempt 1/3  2.1s ✓ lint ✗ test ↻ retry ⏲ at 10:00";
    expect(textWidth(row)).toBe(stringWidth(row));
    // A mark joining a symbol, a variation selector making it an emoji, wide and zero-width characters: string-width's count.
    for (const text of ["▶\u0301 a", "▶\ufe0f a", "✓\ufe0f", "漢字 ▶", "🎉 ✓", "a\u200bb", "\x1b[31m▶ red\x1b[0m"]) expect(textWidth(text), text).toBe(stringWidth(text));
  });

  it("count the rows a line takes once a terminal wraps it, a wide character that does not fit going to the next row", () => {
    expect(terminalRows("", 50)).toBe(1);
    expect(terminalRows("x".repeat(50), 50)).toBe(1);
    expect(terminalRows("x".repeat(51), 50)).toBe(2);
    expect(terminalRows(chalk.cyan("x".repeat(50)), 50)).toBe(1);
    // 9 columns then a wide character: it does not fit in a row of 10, so it starts the next.
    expect(terminalRows(`${"x".repeat(9)}漢`, 10)).toBe(2);
    expect(terminalRows("漢".repeat(5), 10)).toBe(1);
    expect(terminalRows("漢".repeat(5), 3)).toBe(5);
  });

  it("say when a time is not today, and count long waits in days and hours, not minutes", () => {
    const inAYear = Date.now() + 366 * 24 * 3_600_000;
    expect(clockWithDate(inAYear)).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    expect(clockWithDate(Date.now())).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
    expect(formatDuration(1_621_760 * 60_000 + 57_200)).toBe("1126d5h");
    expect(formatDuration(2 * 3_600_000 + 5 * 60_000 + 7_000)).toBe("2h5m");
    expect(formatDuration(3_600_000)).toBe("1h");
    expect(formatDuration(42_500)).toBe("42.5s");
  });

  it("count a time past a minute in minutes and seconds to the tenth, as under a minute: a running task's row said 1m100ms to 1m900ms, then 1m1s and 1m1.1s", () => {
    expect(formatDuration(60_000)).toBe("1m");
    expect(formatDuration(60_100)).toBe("1m0.1s");
    expect(formatDuration(60_949)).toBe("1m0.9s");
    expect(formatDuration(61_000)).toBe("1m1s");
    expect(formatDuration(61_100)).toBe("1m1.1s");
    expect(formatDuration(119_949)).toBe("1m59.9s");
    expect(formatDuration(119_950)).toBe("2m");
    expect(formatDuration(125_300)).toBe("2m5.3s");
    expect(formatDuration(3_599_949)).toBe("59m59.9s");
    expect(formatDuration(3_599_999)).toBe("1h");
    for (let ms = 60_000; ms < 3_600_000; ms += 100) expect(formatDuration(ms)).toMatch(/^\d+m(\d+(\.\d)?s)?$/);
  });
});

describe("task output above the board", () => {
  it("keeps a progress line's last state, drops cursor moves and screen clears, and ends colours with the line", () => {
    expect(terminalSafe("progress 33%\rprogress 66%\rprogress 99%")).toBe("progress 99%");
    expect(terminalSafe("\x1b[2J\x1b[Hcleared")).toBe("cleared");
    expect(terminalSafe("\x1b]0;a title\x07text")).toBe("text");
    expect(terminalSafe("\x1b[41;37mred, never reset")).toBe("\x1b[41;37mred, never reset\x1b[0m");
    // Colours with colon parameters (24-bit, curly underline) are colours too.
    expect(terminalSafe("\x1b[38:2::255:0:0mCOLON\x1b[0m \x1b[4:3mcurly")).toBe("\x1b[38:2::255:0:0mCOLON\x1b[0m \x1b[4:3mcurly\x1b[0m");
    expect(terminalSafe("plain")).toBe("plain");
  });

  it("ends the colours of a line cut for length before taskq's `… (N bytes)`, which is not the task's text, a rewritten line's too", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((text) => lines.push(text));
    splitter.push(Buffer.from(`\x1b[33m${"z".repeat(5000)}\n\x1b[32m10%\r\x1b[33m${"w".repeat(5000)}\n\x1b[33mok\x1b[0m${"x".repeat(5000)}\n`));
    const kept = (character: string): string => character.repeat(DISPLAY_LIMIT - "\x1b[33m".length);
    // In yellow: a reset, then the mark (the mark was yellow, the reset after it).
    expect(terminalSafe(lines[0] as string)).toBe(`\x1b[33m${kept("z")}\x1b[0m… (5005 bytes)`);
    // From its last "\r" on (with no state of what came before it kept), cut past that: the mark where the line ends.
    expect(terminalSafe(lines[1] as string)).toBe(`\x1b[33m${kept("w").slice(1)}\x1b[0m… (5006 bytes)`);
    // Its colours ended before the cut: no reset at all.
    expect(terminalSafe(lines[2] as string)).toBe(lines[2]);
  });

  it("takes a task's own short line that ends as a cut one does (`… (12 bytes)`) for its text: its colour to its end, a rewrite of it as a terminal shows it", () => {
    expect(terminalSafe("\x1b[31mred… (12 bytes)")).toBe("\x1b[31mred… (12 bytes)\x1b[0m");
    expect(terminalSafe("50%\r… (12 bytes)")).toBe("… (12 bytes)");
    // Taskq's own, from a line of the summary cut past its 1,000 characters: the mark after the reset.
    expect(terminalSafe(`\x1b[31m${"r".repeat(995)}… (1001 bytes)`)).toBe(`\x1b[31m${"r".repeat(995)}\x1b[0m… (1001 bytes)`);
  });

  it("keeps a line whose carriage returns have nothing after them as a terminal shows it: \"abc\\r\\r\\n\" is abc, not an empty line", () => {
    // A "\r\n" written in text mode ends a line in "\r\r\n": the splitter drops the last "\r" alone.
    expect(terminalSafe("abc\r")).toBe("abc");
    expect(terminalSafe("10%\r100%\r\r")).toBe("100%");
    expect(terminalSafe("\r\r")).toBe("");
    expect(terminalSafe("\rlast")).toBe("last");
  });

  it("drops every control character but tab and backspace: SO/SI (the character set), BEL, NUL, DEL, C1 controls", () => {
    expect(terminalSafe("a\x0eb\x0fc")).toBe("abc");
    expect(terminalSafe("ring\x07 \x00nul \x0bvt \x0cff \x7fdel \x1a\x1c\x1f.")).toBe("ring nul vt ff del .");
    expect(terminalSafe("next\u0085line \u0084index \u008ehop")).toBe("nextline index hop");
    expect(terminalSafe("héllo ✓ 日本 \u00a0")).toBe("héllo ✓ 日本 \u00a0");
  });

  it("lays tabs out as spaces to stops of 8 columns from the line's start, as the task's columns are, not from the prefix's end", () => {
    // Behind "ab | " a terminal put the stops 3 columns into the text: "a\t1" and "abcde\t2" had their second column 8 apart.
    expect(terminalSafe("a\t1")).toBe("a       1");
    expect(terminalSafe("abcde\t2")).toBe("abcde   2");
    expect(terminalSafe("\tx\t\ty")).toBe(`${" ".repeat(8)}x${" ".repeat(15)}y`);
    expect(terminalSafe("abcdefgh\tz")).toBe(`abcdefgh${" ".repeat(8)}z`);
    // Colour codes take no column; what a carriage return rewrote, none either.
    expect(terminalSafe("\x1b[31mred\x1b[0m\tx")).toBe("\x1b[31mred\x1b[0m     x");
    // A tab moves the cursor, writing nothing: what a carriage return went back over shows through, as on a terminal.
    expect(terminalSafe("old text\rab\tx")).toBe("abd textx");
    // Wide characters: two columns each where the board measures them (string-width), by default nearly as it does (see codePoints).
    expect(terminalSafe("日本\tx", textWidth)).toBe("日本    x");
    expect(terminalSafe("héllo\tx")).toBe("héllo   x");
    expect(terminalSafe("🎉\tx", textWidth)).toBe("🎉      x");
  });

  it("works backspaces out as a terminal does, each moving back a column over which the next character is written, as a spinner's \"|\\b/\\b\" means, never into the prefix", () => {
    expect(terminalSafe("spin |\b/\b-\b\\\bdone")).toBe("spin done");
    expect(terminalSafe("50%\b\b\b75%")).toBe("75%");
    // Overstrike (man pages): bold and underlined letters show as the letters.
    expect(terminalSafe("b\bbo\bo _\bu_\bn")).toBe("bo un");
    // No further back than the line's start: the prefix ("task | ") stays whole.
    expect(terminalSafe("ok\b\b\b\b\b\bXX")).toBe("XX");
    // A colour code is not a character: kept, the character before it taken.
    expect(terminalSafe("a\x1b[32m|\x1b[0m\b/")).toBe("a/");
    // A whole character, not half of a surrogate pair: a wide one, whose second column "y" overwrites, shows as a space, as on
    // a terminal; a tab's spaces one at a time, and stops counted after the erase.
    expect(terminalSafe("x🎉\by")).toBe("x y");
    expect(terminalSafe("日本\b\b\bX", textWidth)).toBe(" X本");
    expect(terminalSafe("ab\bc\td")).toBe("ac      d");
    expect(terminalSafe("a\t\bb")).toBe("a      b");
  });

  it("shows what a line written over with backspaces ends as: a backspace erases nothing, and what it moved back over stays where nothing overwrites it", () => {
    // A count that backs up to its start after each update (printf '%3d%%\b\b\b\b'), then a newline: its last value. Taking a
    // character back for each backspace left an empty line.
    expect(terminalSafe(`${Array.from({ length: 100 }, (_, i) => `${String(i + 1).padStart(3)}%\b\b\b\b`).join("")}`)).toBe("100%");
    expect(terminalSafe("done\b")).toBe("done");
    expect(terminalSafe("42%\b\b\b\r")).toBe("42%");
    // Shorter text over longer: the rest of the longer stays, as on the terminal.
    expect(terminalSafe("100%\b\b\b\b5%")).toBe("5%0%");
    // Colours written over and over at one column do not pile up: a long line of them takes no longer than its length says.
    const spinner = "\x1b[36m|\b".repeat(50_000);
    const started = performance.now();
    const shown = terminalSafe(`${spinner}ok`);
    expect(shown.endsWith("\x1b[36mok\x1b[0m")).toBe(true);
    expect(shown.replaceAll("\x1b[36m", "")).toBe("ok\x1b[0m");
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("shows a line carriage returns rewrote as a terminal does: what the last state does not cover stays, each column in the colours it was written in", async () => {
    expect(terminalSafe("abcdef\rXY")).toBe("XYcdef");
    expect(terminalSafe("\x1b[32mok\rOK")).toBe("\x1b[32mOK\x1b[0m");
    expect(terminalSafe("downloading 10%\r\x1b[Kdone")).toBe("done");
    // The same row on a terminal (xterm.js) from the task's bytes and from what the board writes: each column's character and colours.
    const lines = [
      "\x1b[32mok\rOK",
      "abcdef\rXY",
      "a\x1b[32mbcd\rX",
      "\x1b[31mred\x1b[0m\b\b\bXY",
      "abc\b\b\x1b[31mX\x1b[0m",
      "\x1b[1;34mbold blue\x1b[22m blue\r\x1b[41mX\x1b[0m",
      "\x1b[38;5;208morange\x1b[39m \x1b[4munder\r\x1b[7mI\x1b[27m!",
      "\x1b[38;2;10;20;30mdeep\x1b[0m \x1b[38:5:99mcolon\x1b[m\rZ",
      "\x1b[33m|\b/\b-\b\\\b\x1b[0mdone",
      "\x1b[31mred\tx\b\by",
      "downloading file\r\x1b[Kdone",
      "abcdef\r\x1b[3Gx\x1b[2Dy\x1b[Cz",
      "1234567890\r\x1b[4C\x1b[1K",
      "12345678\x1b[4D\x1b[2K\x1b[35mx",
      "日本語\rX",
      "\x1b[36m日本\x1b[0m\b\b\bab",
      "10%\r\x1b[1m\x1b[32m20%\x1b[0m\r3",
      // An erase through half of a wide character blanks the other half as an erase does, not in the colours set to write with.
      "名\x1b[D\x1b[7m\x1b[K",
      "名\r\x1b[4m\x1b[1K",
      "日本語\r\x1b[2C\x1b[7m\x1b[1K",
      // A 256-colour or 24-bit code cut short is colour 0 (or 0 for each missing) to xterm.js; no colour space, no colour: the
      // background set after it stays a background colour.
      "\x1b[38;5mab\x1b[41mc\rX",
      "\x1b[38;2mab\x1b[41mc\rX",
      "\x1b[38;2;1;2mab\x1b[41mc\rX",
      "\x1b[48;5mab\x1b[31mcd\rX",
      "\x1b[38;5m\x1b[41mab\rX",
      "\x1b[31m\x1b[38mab\x1b[41mc\rX",
      "\x1b[31m\x1b[38;41mab\rX",
      "\x1b[38;9;1;2;3;4;1mab\rX",
      "\x1b[38;0;1;2;3;4;5;1mab\rX",
    ];
    for (const line of lines) expect([line, await shownOn(terminalSafe(line))]).toEqual([line, await shownOn(line)]);
  });

  it("keeps a mark written at a rewritten line's first column in that column, as xterm.js does, not on the task's prefix; and the rarer attributes a colour code sets", async () => {
    // "e" then, over it, an accent alone: a column of its own (over a space), what it was written over gone.
    for (const [line, marks] of [["ab\r\u0301x", 1], ["\u0301x\rY", 0], ["e\r\u0301", 1], ["\x1b[32m\u0301ok\r!", 0]] as const) {
      const shown = await shownOn(terminalSafe(line, textWidth));
      // xterm.js's cell of a mark alone is of no width, which shownOn leaves out: so is ours, a space and the mark.
      expect([line, shown.filter((cell) => !/^ \p{M}/u.test(cell))]).toEqual([line, await shownOn(line)]);
      expect(shown.filter((cell) => /^ \p{M}/u.test(cell))).toHaveLength(marks);
      expect(terminalSafe(line, textWidth).startsWith("\u0301")).toBe(false);
    }
    // Superscript, framed, a font, Fraktur: kept over a rewrite, as on a line none rewrote, each ended by its own reset.
    expect(terminalSafe("\x1b[73m2\rx")).toBe("\x1b[73mx\x1b[0m");
    expect(terminalSafe("\x1b[73m2\x1b[75m\rx")).toBe("x");
    expect(terminalSafe("\x1b[51;12;20mframed\x1b[54m!\rF")).toBe("\x1b[12;20mF\x1b[0m\x1b[12;20;51mramed\x1b[0m\x1b[12;20m!\x1b[0m");
    expect(terminalSafe("!\r\x1b[3;20mx\x1b[23my\x1b[64;26mz\x1b[65;50m.")).toBe("\x1b[3;20mx\x1b[0my\x1b[26;64mz\x1b[0m.");
  });

  it("erases in the background colour set, to the row's end, as terminals do (background colour erase)", async () => {
    // A bar on a red background whose last state is shorter; a status line cleared in blue, then written on.
    expect(await shownOn(terminalSafe("\x1b[41m[#####     ] 50%\r\x1b[Kdone"))).toHaveLength(40);
    const lines = [
      "\x1b[41m[#####     ] 50%\r\x1b[Kdone",
      "\x1b[44m\x1b[2K\x1b[37mstatus: ok\x1b[0m",
      "abcdef\x1b[3G\x1b[41;32;7m\x1b[K",
      "abcdef\x1b[3G\x1b[42m\x1b[1K",
      "ab\x1b[48;5;208m\x1b[5C\x1b[K\x1b[0m\x1b[3Cx",
      "ab\x1b[45m\x1b[K\x1b[0m\tx",
      "名前\x1b[3D\x1b[41m\x1b[K",
      "\x1b[41m\x1b[K\x1b[49m\x1b[2Kplain",
    ];
    for (const line of lines) expect([line, await shownOn(terminalSafe(line))]).toEqual([line, await shownOn(line)]);
  });

  it("shows a line carriage returns rewrote past 4,096 bytes as a terminal does, however it comes in chunks: what its last state does not cover, and a colour set before it", async () => {
    const states = (count: number, text: (index: number) => string): string => Array.from({ length: count }, (_, index) => `\r${text(index)}`).join("");
    const lines = [
      // The last state shorter than those before it; the colour set once, at the start.
      `\x1b[32mfetching the packages${states(600, (index) => `fetched ${index + 1}/600`)}\rdone`,
      `\x1b[1;33m${states(2000, (index) => `${"#".repeat(index % 30)}${index}`)}\r\x1b[4mok\x1b[24m`,
      // Columns each in colours of their own, then rewritten: the kept columns show through in them.
      `\x1b[36m${"=".repeat(30)}${`${"\x1b[35m\x1b[36m".repeat(6)}.`.repeat(9)}\rX${states(500, (index) => `\x1b[${index % 8}m${index}`)}`,
      // Characters of two and three bytes, which a chunk may end inside: never shown as two U+FFFD, a column too many.
      `${"\r⠋⠋⠋ é é é".repeat(1000)}\rX`,
      // Moves and erases, wide characters, a colour set between the states.
      `${states(500, (index) => `日本 ${index}\x1b[3G\x1b[${31 + (index % 7)}m!`)}\r\x1b[C\x1b[K`,
    ];
    for (const line of lines) {
      expect(Buffer.byteLength(line)).toBeGreaterThan(DISPLAY_LIMIT);
      const expected = await shownOn(line);
      // Chunks of bytes, not characters: a chunk may end inside one (a pipe's read does).
      const bytes = Buffer.from(`${line}\n`);
      for (const size of [bytes.length, 4096, 997, 64, 7, 1]) {
        const chunks: Buffer[] = [];
        for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
        const shown = splitShown(chunks);
        expect([size, shown.length]).toEqual([size, 1]);
        expect([size, await shownOn(shown[0] as string)]).toEqual([size, expected]);
      }
    }
  });

  // 10 s at load 18 on two cores, a third of the default limit: given 120 s.
  it("keeps of a rewritten line's beginning what a terminal shows, whatever it holds: the rest of the line shows the same after it", () => {
    const piece = fc.constantFrom("\r", "\r", "\r", "ab", "abcdef", "12345678", " ", "日本", "\u{1f44d}\u{1f3fb}", "e\u0301", "\b", "\t", "\x1b[31m", "\x1b[0m", "\x1b[44m", "\x1b[K", "\x1b[1K", "\x1b[2K", "\x1b[3G", "\x1b[2C", "\x1b[D", "\x1b[7m", "\x07", "\r⠋ \u{1f44d}\u{1f3fb} step ", "\r\x1b[1m⠋ \u{1f44d}\u{1f3fb} step ", "9", "10", "\x1b[22m", "\r[###   ] ", "\r[#### ] ", "名");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.array(piece, { maxLength: 8 }), (before, after) => {
        const head = before.join("");
        const rest = `\rZ${after.join("")}`;
        for (const columns of [textWidth, undefined]) {
          expect(terminalSafe(`${rewrittenState(head, columns)}${rest}`, columns)).toBe(terminalSafe(`${head}${rest}`, columns));
        }
      }),
      { numRuns: 6000 },
    );
  }, 120_000);

  // 15 s at load 18 on two cores, half the default limit: given 120 s.
  it("keeps of a progress line in colours and text outside ASCII what a terminal shows, the same as worked out column by column", () => {
    // States of printable text and colour codes (a coloured bar, a pip bar, a spinner with an emoji), after any beginning.
    const text = fc.constantFrom("ab", "#####", "     ", " 50%", "日本", "名", "━━━", "⠋", "\u{1f44d}\u{1f3fb}", "e\u0301", "1\ufe0f\u20e3", "\u0600x", "🇫🇷", "\u1100\u1161", "x", "");
    const code = fc.constantFrom("\x1b[32m", "\x1b[0m", "\x1b[m", "\x1b[41m", "\x1b[1;33m", "\x1b[39m", "\x1b[49m", "\x1b[38;5;208m", "\x1b[7m", "\x1b[0;35m", "\x1b[90m", "\x1b[1m", "\x1b[2m", "\x1b[22m", "\x1b[1m\x1b[32m", "\x1b[39m\x1b[22m");
    const state = fc.array(fc.oneof(text, text, code), { maxLength: 6 }).map((parts) => `\r${parts.join("")}`);
    const head = fc.constantFrom("", "abc", "日本語テキスト", "\x1b[44mxy\x1b[K", "ab\x1b[3G\x1b[31m", "\x1b[1;32m名前", "x\x1b]0;title\x07y");
    // What follows, written from the cursor kept and in the colours kept (each rewrites, so the line goes through rewrite).
    const rest = fc.constantFrom("Z\x1b[K", "\x1b[K", "\x1b[31mQ\x1b[K", "\rZ", "\r\x1b[2CY", "\b\bW", "\x1b[1G");
    fc.assert(
      fc.property(head, fc.array(state, { minLength: 1, maxLength: 12 }), rest, (before, states, after) => {
        const line = `${before}${states.join("")}`;
        for (const columns of [textWidth, undefined]) {
          expect(terminalSafe(`${rewrittenState(line, columns)}${after}`, columns)).toBe(terminalSafe(`${line}${after}`, columns));
        }
      }),
      { numRuns: 6000 },
    );
  }, 120_000);

  it("works out the beginning of a progress line in colours or in text outside ASCII in a few times what one of plain ASCII takes", () => {
    const states = (count: number, state: (index: number) => string): string => Array.from({ length: count }, (_, index) => `\r${state(index)}`).join("");
    const plain = states(1500, (index) => `[${"#".repeat(index % 30).padEnd(30)}] ${index % 1000}/1000`);
    // A bar in colour reset at each state's end; a pip bar of "━" in two colours.
    const coloured = states(1500, (index) => `\x1b[32m[${"#".repeat(index % 30).padEnd(30)}] ${index % 100}%\x1b[0m`);
    const pip = states(1500, (index) => `\x1b[31m${"━".repeat(index % 40)}\x1b[0m\x1b[90m${"━".repeat(40 - (index % 40))}\x1b[0m ${index % 1000}/1000`);
    for (const text of [coloured, pip]) expect(terminalSafe(`${rewrittenState(text, textWidth)}\rX`, textWidth)).toBe(terminalSafe(`${text}\rX`, textWidth));
    // Side by side, the best of fifteen runs each, alternating: 2-3x for the colours; 30x when each state was worked out column
    // by column. (The pip bar, 9x here, was only about twice that before: too close to time apart on a loaded machine.)
    // Best of 15 rounds: at load ~8, five rounds once gave 16.8x for the colours (a loaded stretch in each of their rounds).
    const [colouredMs, plainMs] = bestOfAlternating(40, () => rewrittenState(coloured, textWidth), () => rewrittenState(plain, textWidth), 15);
    expect(colouredMs).toBeLessThan(12 * plainMs);
    // A spinner with an emoji, its colour changing at each state, as long as the plain bar: 6-8x; 50x when each state was
    // worked out.
    const spinner = states(3000, (index) => `\x1b[3${index % 8}m⠋ \u{1f44d}\u{1f3fb} step ${index}`);
    expect(spinner.length).toBeGreaterThan(plain.length);
    expect(terminalSafe(`${rewrittenState(spinner, textWidth)}\rX`, textWidth)).toBe(terminalSafe(`${spinner}\rX`, textWidth));
    const [spinnerMs, plainSpinnerMs] = bestOfAlternating(40, () => rewrittenState(spinner, textWidth), () => rewrittenState(plain, textWidth), 15);
    expect(spinnerMs).toBeLessThan(25 * plainSpinnerMs);
  });

  it("works out the beginning of a progress line in bold or dim as well as a colour about as fast as one in a colour alone", () => {
    const states = (count: number, state: (index: number) => string): string => Array.from({ length: count }, (_, index) => `\r${state(index)}`).join("");
    // A count in chalk's green, and in its bold green and dim red: "\x1b[1m\x1b[32m42%\x1b[39m\x1b[22m".
    const green = states(1500, (index) => chalk.green(`${index % 100}%`));
    const bold = states(1500, (index) => chalk.bold.green(`${index % 100}%`));
    const dim = states(1500, (index) => chalk.dim.red(`${index % 100}%`));
    expect(rewrittenState(bold, textWidth)).toBe("\x1b[1;32m99%\x1b[0m");
    expect(rewrittenState(dim, textWidth)).toBe("\x1b[2;31m99%\x1b[0m");
    for (const text of [bold, dim]) expect(terminalSafe(`${rewrittenState(text, textWidth)}\rX`, textWidth)).toBe(terminalSafe(`${text}\rX`, textWidth));
    // Side by side, the best of five runs each, alternating: about 1.7x (twice the codes to look at); 6-8x when each hidden
    // state's bold or dim codes were kept and worked out.
    for (const text of [bold, dim]) {
      const [styledMs, greenMs] = bestOfAlternating(20, () => rewrittenState(text, textWidth), () => rewrittenState(green, textWidth));
      expect(styledMs).toBeLessThan(3.5 * greenMs);
    }
  });

  it("works out the beginning of a progress line that never ends without going through each state the next one writes over whole", () => {
    // 64 KB of a bar's states as the splitter hands on at once, plain and in text outside ASCII (each state the same colour).
    const bar = Array.from({ length: 1500 }, (_, index) => `\r[${"#".repeat(index % 30).padEnd(30)}] ${index}`).join("");
    const emoji = Array.from({ length: 1500 }, (_, index) => `\r\x1b[32m⠋ \u{1f44d}\u{1f3fb} step ${index}\x1b[0m!`).join("");
    // The same states, each moved a column on: none written over whole, all worked out.
    const coloured = Array.from({ length: 1500 }, (_, index) => `\r\x1b[C[${"#".repeat(index % 30).padEnd(30)}] ${index}`).join("");
    expect(terminalSafe(`${rewrittenState(bar, textWidth)}\r`, textWidth)).toBe(terminalSafe(bar, textWidth));
    expect(terminalSafe(`${rewrittenState(emoji, textWidth)}\rX`, textWidth)).toBe(terminalSafe(`${emoji}\rX`, textWidth));
    // Side by side, the best of five runs each, alternating: about a quarter of the time; as long when each state was worked out.
    const [barMs, colouredMs] = bestOfAlternating(10, () => rewrittenState(bar, textWidth), () => rewrittenState(coloured, textWidth));
    expect(barMs).toBeLessThan(colouredMs / 3);
  });

  it("shows the states a read brings after a stretch of over 4,096 bytes without a carriage return over that stretch's first 4,096 bytes", () => {
    // A long status without a "\r", then a bar's states, the pipe's next read bringing several at once.
    const stretch = `\x1b[33m${"=".repeat(5000)}`;
    const states = "\r\x1b[32mABCDEFGHIJ\r\x1b[0mxy";
    // What the splitter keeps of the stretch, its first 4,096 bytes, then the states: "xy", then "CDEFGHIJ" in green, then the stretch.
    const expected = terminalSafe(`${stretch.slice(0, DISPLAY_LIMIT)}${states}`, textWidth);
    expect(stripVTControlCharacters(expected).slice(0, 12)).toBe("xyCDEFGHIJ==");
    for (const chunks of [[stretch, `${states}\n`], [`${stretch}\r`, `${states.slice(1)}\n`], [stretch, `${states}\r`, "\n"]]) {
      expect([chunks, splitShown(chunks.map((chunk) => Buffer.from(chunk)))]).toEqual([chunks, [expected]]);
    }
  });

  it("works out the beginning of a progress line of plain ASCII in about the time it takes to split it at its carriage returns", () => {
    // A bar whose count grows shorter now and then ("999/1000", then "0/1000"), and the same after the state kept of its first part.
    const bar = Array.from({ length: 1500 }, (_, index) => `\r[${"#".repeat(index % 30).padEnd(30)}] ${index % 1000}/1000`).join("");
    const after = `${rewrittenState(bar.slice(0, 20_000), textWidth)}${bar.slice(20_000)}`;
    for (const text of [bar, after]) {
      expect(terminalSafe(`${rewrittenState(text, textWidth)}\rX`, textWidth)).toBe(terminalSafe(`${text}\rX`, textWidth));
      // Side by side, the best of five runs each, alternating: about 4x; some 30x when each state was looked at.
      const [stateMs, splitMs] = bestOfAlternating(10, () => rewrittenState(text, textWidth), () => text.split("\r"));
      expect(stateMs).toBeLessThan(12 * splitMs);
    }
  });

  it("keeps what it holds of a line that carriage returns rewrite and that never ends bounded, whatever it writes", () => {
    let held = 0;
    const splitter = new LineSplitter(() => undefined, undefined, { lineState: (text) => ((held = Math.max(held, text.length)), rewrittenState(text, textWidth)) });
    // A bar in colours that change at each column, written over and over for 8 MB, with no newline.
    const bar = Array.from({ length: 200 }, (_, index) => `\x1b[38;5;${index}m█`).join("");
    for (let round = 0; round < 400; round++) splitter.push(Buffer.from(`\r${bar} ${round}`.repeat(10)));
    expect(held).toBeLessThan(4 * bar.length * 10);
  });

  it("works out a long progress line in text outside ASCII without taking its characters' clusters apart one by one", () => {
    // CJK text rewritten 300 times by carriage returns, then an emoji with its skin tone over its first two columns.
    const line = `${"日本語テキスト█\r".repeat(300)}\u{1f44d}\u{1f3fb}`;
    expect(terminalSafe(line, textWidth)).toBe("\u{1f44d}\u{1f3fb}本語テキスト█");
    // Timed side by side with an ASCII line as long, rewritten as often, which never had its clusters taken apart: the best of
    // five runs each, the two alternating, about 3x here, 12-20x when each character was taken apart.
    const ascii = `${"nihongo-text-ab\r".repeat(300)}ok`;
    const [lineMs, asciiMs] = bestOfAlternating(50, () => terminalSafe(line, textWidth), () => terminalSafe(ascii, textWidth));
    expect(lineMs).toBeLessThan(6 * asciiMs);
  });

  it("works out a line with a long run of carriage returns before its text in the time of a line as long without", () => {
    // As long as a line reaches terminalSafe (the splitter keeps 4096 bytes of one): a run of returns, then text.
    const returns = `a${"\r".repeat(4092)}ok`;
    expect(terminalSafe(returns)).toBe("ok");
    const mixed = `${"ab\r".repeat(1364)}ok`;
    expect(terminalSafe(mixed)).toBe("ok");
    // Side by side, the best of five runs each, alternating: about as long; some 100x when the run was tried from each of its returns.
    const [returnsMs, mixedMs] = bestOfAlternating(20, () => terminalSafe(returns), () => terminalSafe(mixed));
    expect(returnsMs).toBeLessThan(5 * mixedMs);
  });

  it("counts a tab's stop after an emoji sequence (a family, joined by zero-width joiners) as the board measures it, whatever else is on the line", () => {
    const family = "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}";
    expect(textWidth(family)).toBe(2);
    const before = (shown: string): number => textWidth(shown.slice(0, shown.indexOf("x")));
    // Tabs alone, with a backspace too, and by the count the plain lines use: the x at the stop at 8 columns each time.
    expect(before(terminalSafe(`${family}\tx`, textWidth))).toBe(8);
    expect(before(terminalSafe(`${family}!\b\tx`, textWidth))).toBe(8);
    expect(before(terminalSafe(`${family}\tx`))).toBe(8);
    expect(before(terminalSafe(`${family}!\b\tx`))).toBe(8);
    // A skin tone with its emoji: one character of two columns, backspaced over as one.
    expect(terminalSafe("\u{1f44d}\u{1f3fb}!\tx", textWidth)).toBe(terminalSafe("\u{1f44d}\u{1f3fb}?\b!\tx", textWidth));
  });

  it("counts a character U+FE0F makes an emoji (✔️, ❤️, 1️⃣) as the board does, in the plain lines' tab stops too", () => {
    const texts = ["✔\ufe0f", "❤\ufe0f", "©\ufe0f", "1\ufe0f\u20e3", "#\ufe0f\u20e3", "1\ufe0f", "a\ufe0f", "\u{1f170}\ufe0f", "\u{1f44d}\ufe0f", "漢\ufe0f", "❤\ufe0f\u200d\u{1f525}", "⚠\ufe0f done", "✔\ufe0e", "é\ufe0f"];
    for (const text of texts) {
      expect([text, terminalSafe(`${text}\tx`)]).toEqual([text, terminalSafe(`${text}\tx`, textWidth)]);
      expect([text, terminalSafe(`${text}!\b\tx`)]).toEqual([text, terminalSafe(`${text}!\b\tx`, textWidth)]);
    }
    // As many as the tab's stop leaves: "✔️" is two columns, then six spaces.
    expect(terminalSafe("✔\ufe0f\tok")).toBe(`✔\ufe0f${" ".repeat(6)}ok`);
  });

  it("lays out the tabs of a block of ASCII lines as bytes, as terminalSafe lays out each line, in a fraction of its time; any other block goes line by line", () => {
    const block = (lines: string[]): [Buffer, number, Int32Array] => {
      const bytes = Buffer.from(lines.map((line) => `${line}\n`).join(""));
      const ends: number[] = [];
      for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) ends.push(at + 1);
      return [bytes, ends.length, Int32Array.from(ends)];
    };
    const byLine = (bytes: Buffer, count: number, ends: Int32Array): string => {
      let shown = "";
      eachLineText(bytes, count, ends, (text) => (shown += `${terminalSafe(text)}\n`));
      return shown;
    };
    const byBlock = (bytes: Buffer, count: number, _ends: Int32Array): string | undefined => {
      const tabbed = expandTabsInBlock(bytes, count);
      if (tabbed === undefined) return undefined;
      let start = 0;
      let shown = "";
      for (let line = 0; line < count; line++) {
        const end = tabbed.ends[line] as number;
        shown += tabbed.bytes.toString("latin1", start, end);
        start = end;
      }
      return shown.length === tabbed.bytes.length ? shown : undefined;
    };
    const table = Array.from({ length: 2_000 }, (_, i) => ["\t".repeat(i % 3), String(i), "x".repeat(i % 13), `${i * 7}`, "", "end"].join("\t"));
    for (const lines of [["a\t1", "abcde\t2", "", "\t", "abcdefgh\tz", "no tab"], table]) expect(byBlock(...block(lines))).toBe(byLine(...block(lines)));
    for (const lines of [["a\tb", "c\rd"], ["a\tb", "\x1b[31mred"], ["日本\tx"], ["héllo\tx"], ["a\tb\x7f"]]) expect(byBlock(...block(lines))).toBeUndefined();
    // 100,000 lines of tab-separated values: the best of two runs each, the bytes' way under half the lines' way.
    const many = block(Array.from({ length: 100_000 }, (_, i) => `${i}\tname-${i % 977}\t${(i * 0.37).toFixed(3)}\t${i % 3 ? "ok" : "failed"}\t${"x".repeat(i % 11)}`));
    const best = (work: () => void): number => Math.min(...[0, 1].map(() => { const started = performance.now(); work(); return performance.now() - started; }));
    const lines = best(() => byLine(...many));
    const bytes = best(() => expandTabsInBlock(many[0], many[1]));
    expect(bytes).toBeLessThan(lines / 2);
  });

  it("drops the bidirectional embeddings, overrides and isolates, which reverse or move the rest of the line where a terminal orders text both ways", () => {
    expect(terminalSafe("a-\u202edesrever \u2066iso\u2069 \u202a\u202b\u202c\u202d\u2067\u2068.")).toBe("a-desrever iso .");
    // The marks that are not embeddings (LRM, RLM, ALM) stay: they move nothing past their neighbours.
    expect(terminalSafe("\u200e\u200f\u061c")).toBe("\u200e\u200f\u061c");
  });

  it("drops control strings with their text (DCS, APC, PM, SOS, OSC), ended by ST or BEL or cut short by the line's end", () => {
    expect(terminalSafe("\x1bPq#0;2;0;0;0#0~~@@\x1b\\after")).toBe("after");
    expect(terminalSafe("before\x1bP1$r never ended")).toBe("before");
    expect(terminalSafe("\x1b_Gf=100;AAAA\x1b\\x \x1b^private\x1b\\y \x1bXsos\x1b\\z")).toBe("x y z");
    expect(terminalSafe("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x07 \x1b]0;title")).toBe("link ");
    // Their one-byte (C1) forms, which a terminal may take as the same.
    expect(terminalSafe("\u00902;q\u009cA \u009d0;t\u0007B \u009f_\u009cC \u009e.\u009cD \u0098.\u009cE")).toBe("A B C D E");
  });

  it("drops every escape sequence but colours: private modes, charsets, C1 CSI, a lone ESC", () => {
    expect(terminalSafe("\x1b[?1049h\x1b[?25lfull\x1b[3;5r\x1b[2 q")).toBe("full");
    expect(terminalSafe("\x1b(0lqk\x1b(B \x1b)0\x1b#8\x1b7\x1b8\x1bc\x1bN.")).toBe("lqk .");
    expect(terminalSafe("\u009b2J\u009b31mtext")).toBe("text");
    expect(terminalSafe("cut\x1b[1;3")).toBe("cut");
    expect(terminalSafe("end\x1b")).toBe("end");
    expect(terminalSafe("\x1b[1;31mred\x1b[0m \x1b[38;5;208morange\x0e")).toBe("\x1b[1;31mred\x1b[0m \x1b[38;5;208morange\x1b[0m");
  });

  it("sends a block of lines line by line through terminalSafe when a byte would be changed, and only then, wherever the byte falls", () => {
    // Each text at every offset in a block, after up to 11 plain bytes: the check reads four bytes at a time.
    const blocks = (text: string): Buffer[] => {
      const bytes = Buffer.from(text);
      const spread: Buffer[] = [];
      for (let offset = 0; offset < 4; offset++) {
        for (let before = 0; before < 12; before++) {
          const block = Buffer.alloc(offset + before + bytes.length + 5, "x".charCodeAt(0)).subarray(offset);
          bytes.copy(block, before);
          spread.push(block.subarray(0, before + bytes.length + (before % 5)));
        }
      }
      return spread;
    };
    // Box drawing, quotes, dots, ellipses, braille: E2 80 and E2 81 like the bidirectional controls, but none of them.
    const e2 = "┌─┐ “q” ‘q’ • … ‰ ⁄ ⁠ ⁥ ⁪ ⠋\n";
    for (const text of ["héllo ✓ 日本\n", "\u00a0nbsp ¿\n", "\n\n\n\n\n", e2, "\u200e\u200f\u2029\u202f\n"]) for (const block of blocks(text)) expect(hasControlBytes(block)).toBe(false);
    // A tab too: its stops are counted from the line's start (see terminalSafe).
    for (const text of ["plain\ttext\n", "a\x1b[2Jb\n", "bar\r50%\n", "so\x0e\n", "bs\b\n", "nul\x00\n", "del\x7f\n", "c1\u009b2J\n", "\u0085\n", "\x1f", "rlo\u202e\n", "lre\u202a\n", "lri\u2066\n", "pdi\u2069\n", `${e2}\u202d\n`]) {
      for (const block of blocks(text)) expect(hasControlBytes(block)).toBe(true);
    }
    // Bytes that are not UTF-8 (a lone 0x9B is the 8-bit CSI to a terminal not in UTF-8; half a
    // character): the text path shows them as U+FFFD, where they went to the terminal as they were.
    for (const bytes of [Buffer.from("raw \x9b2J\n", "latin1"), Buffer.from("ff \xff\xfe\n", "latin1"), Buffer.from("cut \xe6\xbc\n", "latin1")]) {
      expect(hasControlBytes(bytes)).toBe(true);
      expect(hasControlBytes(Buffer.concat([Buffer.from("x".repeat(13)), bytes]))).toBe(true);
    }
    // A block shorter than a word of four bytes, wherever it starts: a lone 0x9B before "J" erased a terminal's screen below the cursor.
    for (const text of ["\x9bJ\n", "\xa9\n", "x\xa9\n", "\xff"]) {
      const bytes = Buffer.from(text, "latin1");
      for (let offset = 0; offset < 4; offset++) expect(hasControlBytes(Buffer.concat([Buffer.alloc(offset), bytes]).subarray(offset))).toBe(true);
    }
  });
});

describe("colours", () => {
  const saved = { NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("are off on a terminal under FORCE_COLOR=0, as Node reads it", async () => {
    delete process.env.NO_COLOR;
    process.env.FORCE_COLOR = "0";
    expect((await createColors({ color: true, isTTY: true })).level).toBe(0);
    delete process.env.FORCE_COLOR;
    expect((await createColors({ color: true, isTTY: true })).level).toBeGreaterThan(0);
  });
});

/** The lines a LineSplitter makes of `chunks` with the board's lineState, each through terminalSafe as the board shows it. */
function splitShown(chunks: Buffer[]): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((text) => lines.push(terminalSafe(text, textWidth)), undefined, { lineState: (text) => rewrittenState(text, textWidth) });
  for (const chunk of chunks) splitter.push(chunk);
  splitter.flush();
  return lines;
}

/** Row 0 of a terminal 40 columns wide after `text` is written on it: each column's character and colours, the blank ones at its end left out. */
async function shownOn(text: string): Promise<string[]> {
  const terminal = new xterm.Terminal({ cols: 40, rows: 2, allowProposedApi: true });
  await new Promise<void>((resolve) => terminal.write(text, resolve));
  const row = terminal.buffer.active.getLine(0);
  const cells: string[] = [];
  for (let x = 0; x < 40; x++) {
    const cell = row?.getCell(x);
    if (cell === undefined || cell.getWidth() === 0) continue;
    const looks = [cell.getFgColorMode(), cell.getFgColor(), cell.getBgColorMode(), cell.getBgColor(), cell.isBold(), cell.isDim(), cell.isItalic(), cell.isUnderline(), cell.isInverse()];
    cells.push(`${cell.getChars() || " "} ${looks.join(",")}`);
  }
  terminal.dispose();
  while (cells.at(-1) === "  0,-1,0,-1,false,false,false,false,false") cells.pop();
  return cells;
}
