import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DISPLAY_LIMIT, LineSplitter, TAIL_LINE_LIMIT, Tail, tailLineInWords } from "../../src/handlers/line-splitter.js";
import { formatDuration } from "../../src/handlers/index.js";
import { parseDuration } from "../../src/loaders/duration.js";
import { lineBlock, lineEnds } from "../helpers/line-blocks.js";

function split(...chunks: (string | Buffer)[]): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((text) => lines.push(text));
  for (const chunk of chunks) splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  splitter.flush();
  return lines;
}

describe("LineSplitter", () => {
  it("joins partial lines across chunks", () => {
    expect(split("ab", "c\nde", "f\n\ng")).toEqual(["abc", "def", "", "g"]);
  });

  it("strips \\r before \\n, also across a chunk boundary", () => {
    expect(split("a\r\n", "b\r", "\nc\r")).toEqual(["a", "b", "c"]);
  });

  it("keeps a line of exactly the limit whole, \\r\\n or not", () => {
    const line = "x".repeat(DISPLAY_LIMIT);
    expect(split(`${line}\r\n`, line.slice(1), "x\n")).toEqual([line, line]);
  });

  it("cuts a longer line and says how long it was", () => {
    const long = "y".repeat(DISPLAY_LIMIT + 10);
    const expected = `${"y".repeat(DISPLAY_LIMIT)}… (${DISPLAY_LIMIT + 10} bytes)`;
    expect(split(`${long}\n`)).toEqual([expected]);
    expect(split(long.slice(0, 100), long.slice(100), "\n")).toEqual([expected]);
  });

  it("never splits a UTF-8 character when cutting", () => {
    const line = `${"a".repeat(DISPLAY_LIMIT - 1)}é${"b".repeat(10)}`;
    expect(split(`${line}\n`)).toEqual([`${"a".repeat(DISPLAY_LIMIT - 1)}… (${DISPLAY_LIMIT + 11} bytes)`]);
  });

  it("shows a progress bar that \\r rewrote past the limit by its last state, however it is chunked", () => {
    const states = Array.from({ length: 1000 }, (_, i) => `\rdownloading ${i + 1}/1000`).join("");
    const input = `${states}\nfinished\n`;
    expect(split(input)).toEqual(["\rdownloading 1000/1000", "finished"]);
    for (const size of [1, 2, 7, 13, 64, 4096]) {
      const chunks: string[] = [];
      for (let at = 0; at < input.length; at += size) chunks.push(input.slice(at, at + size));
      expect(split(...chunks)).toEqual(["\rdownloading 1000/1000", "finished"]);
    }
    // The last state cut as any long line is; a "\r" that ends a chunk, then "\n", is a line end, not a rewrite.
    const long = "z".repeat(DISPLAY_LIMIT + 3);
    expect(split(`${"a".repeat(DISPLAY_LIMIT)}\r${long}\n`)).toEqual([`\r${"z".repeat(DISPLAY_LIMIT - 1)}… (${DISPLAY_LIMIT + 4} bytes)`]);
    expect(split(`${"b".repeat(DISPLAY_LIMIT + 1)}\r`, "\nnext\n")).toEqual([`${"b".repeat(DISPLAY_LIMIT)}… (${DISPLAY_LIMIT + 1} bytes)`, "next"]);
    expect(split(`${"b".repeat(DISPLAY_LIMIT + 1)}\r`, "done\n")).toEqual(["\rdone"]);
    // Under the limit, the line goes as written, every state in it.
    expect(split("10%\r20%\r30%\n")).toEqual(["10%\r20%\r30%"]);
  });

  it("takes a \\r with nothing after it in a line past the limit for no rewrite: \"…\\r\\r\\n\" shows the line, not an empty one, however it is chunked", () => {
    // A "\r\n" written in text mode ends a line in "\r\r\n"; the last "\r" was taken for the last state's start.
    const input = `${"x".repeat(DISPLAY_LIMIT + 904)}\r\r\nnext\n${"b".repeat(DISPLAY_LIMIT)}\rdone\r\r\n`;
    const expected = [`${"x".repeat(DISPLAY_LIMIT)}… (${DISPLAY_LIMIT + 905} bytes)`, "next", "\rdone\r"];
    for (const size of [1, 2, 3, 7, 64, 4096, input.length]) {
      const chunks: string[] = [];
      for (let at = 0; at < input.length; at += size) chunks.push(input.slice(at, at + size));
      expect(split(...chunks), `chunks of ${size}`).toEqual(expected);
      expect(splitAsWritten(...chunks).map(asText), `as written, chunks of ${size}`).toEqual(expected);
    }
  });

  it("gives the same display text for a long rewritten line whatever the chunking (property)", () => {
    const piece = fc.oneof(fc.constantFrom("\r", "\r\n", "\n"), fc.string({ minLength: 0, maxLength: 3000, unit: fc.constantFrom("a", "é", "-") }));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 8 }), (pieces, sizes) => {
        const input = Buffer.from(pieces.join(""));
        const whole = split(input);
        const chunks: Buffer[] = [];
        for (let at = 0, i = 0; at < input.length; at += sizes[i++ % sizes.length]!) chunks.push(input.subarray(at, at + sizes[i % sizes.length]!));
        expect(split(...chunks)).toEqual(whole);
        expect(splitWithBlocks(...chunks).lines.map((line) => line.replace(/^\[block\] /, ""))).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it("decodes a character split across chunks", () => {
    const bytes = Buffer.from("héllo\n");
    expect(split(bytes.subarray(0, 2), bytes.subarray(2))).toEqual(["héllo"]);
  });
});

/** Splits with a block handler; every block is decoded into its lines, tagged, to check what took which path. */
function splitWithBlocks(...chunks: (string | Buffer)[]): { lines: string[]; blocks: number } {
  const lines: string[] = [];
  let blocks = 0;
  const splitter = new LineSplitter(
    (text) => lines.push(text),
    (bytes, count, ends) => {
      blocks++;
      const text = bytes.toString("utf8");
      expect(text.endsWith("\n")).toBe(true);
      const decoded = text.slice(0, -1).split("\n");
      expect(decoded).toHaveLength(count);
      expect([...ends.subarray(0, count)]).toEqual(lineEnds(bytes));
      lines.push(...decoded.map((line) => `[block] ${line}`));
    },
  );
  for (const chunk of chunks) splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  splitter.flush();
  return { lines, blocks };
}

describe("LineSplitter with a block handler", () => {
  it("passes runs of short complete lines as one block per chunk, in order with the rest", () => {
    const long = "z".repeat(DISPLAY_LIMIT + 1);
    const { lines, blocks } = splitWithBlocks("open", " line\na\nb\n", `${long}\nc\r\nd\n\ne`, "\n");
    expect(lines).toEqual([
      "open line", // started in an earlier chunk: always text
      "[block] a",
      "[block] b",
      `${"z".repeat(DISPLAY_LIMIT)}… (${DISPLAY_LIMIT + 1} bytes)`, // too long for a block
      "c", // \r\n: text, without the \r
      "[block] d",
      "[block] ",
      "e", // completed by the next chunk
    ]);
    expect(blocks).toBe(2);
  });

  it("gives the same lines as the text path for any chunking", () => {
    const input = Buffer.from(["x", "", "héllo wörld", "a\rb", "y\r", "q".repeat(DISPLAY_LIMIT), "w".repeat(DISPLAY_LIMIT + 5), "last"].join("\n"));
    const plain = split(input);
    for (const size of [1, 3, 7, 64, 4096, input.length]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < input.length; at += size) chunks.push(input.subarray(at, at + size));
      expect(splitWithBlocks(...chunks).lines.map((line) => line.replace(/^\[block\] /, ""))).toEqual(plain);
    }
  });

  it("splitters share one line-end array, and one pushed from inside another's handler gets its own", () => {
    const outer: string[] = [];
    const inner: string[] = [];
    const decode = (into: string[]) => (bytes: Buffer, count: number, ends: Int32Array) => {
      for (let line = 0; line < count; line++) into.push(bytes.toString("utf8", line === 0 ? 0 : ends[line - 1], (ends[line] as number) - 1));
    };
    const innerSplitter = new LineSplitter((text) => inner.push(text), decode(inner));
    const innerLines = Array.from({ length: 600 }, (_, index) => `inner ${index}`); // grows past the first 256 ends
    let pushed = false;
    const outerSplitter = new LineSplitter(
      (text) => outer.push(text),
      (bytes, count, ends) => {
        if (!pushed) innerSplitter.push(Buffer.from(`${innerLines.join("\n")}\n`)); // before the outer block is read
        pushed = true;
        decode(outer)(bytes, count, ends);
      },
    );
    outerSplitter.push(Buffer.from("a\nbb\nccc\n"));
    outerSplitter.push(Buffer.from("dddd\n"));
    expect(inner).toEqual(innerLines);
    expect(outer).toEqual(["a", "bb", "ccc", "dddd"]);
  });

  it("gives where every line of a block ends, however many lines a chunk holds", () => {
    const lines = Array.from({ length: 5000 }, (_, index) => "n".repeat(index % 7));
    const { lines: out, blocks } = splitWithBlocks(`${lines.join("\n")}\n`);
    expect(blocks).toBe(1);
    expect(out).toEqual(lines.map((line) => `[block] ${line}`));
  });
});

/** Splits with `asWritten`: every line comes as bytes, in a block; the lines, each ending in "\n", as they came. */
function splitAsWritten(...chunks: (string | Buffer)[]): Buffer[] {
  const lines: Buffer[] = [];
  const splitter = new LineSplitter(
    (text) => expect.unreachable(`a line as text: ${text}`),
    (bytes, count, ends) => {
      expect([...ends.subarray(0, count)]).toEqual(lineEnds(bytes));
      for (let line = 0, start = 0; line < count; start = ends[line++] as number) lines.push(Buffer.from(bytes.subarray(start, ends[line])));
    },
    { asWritten: true },
  );
  for (const chunk of chunks) splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  splitter.flush();
  return lines;
}

/** The text a line from splitAsWritten stands for: decoded, without its "\n" or a "\r" before it (as the text path gives it). */
const asText = (line: Buffer): string => line.toString("utf8", 0, line.length - (line.at(-2) === 0x0d ? 2 : 1));

describe("LineSplitter as written", () => {
  it("passes bytes that are not UTF-8 as they came, whatever ends the line, however it is chunked", () => {
    // 0xE9 alone: "é" in Latin-1, not UTF-8. A line of a block, one ending in "\r\n", one begun in an earlier chunk, the last without a newline.
    const input = Buffer.from("caf\xe9 lf\ncaf\xe9 crlf\r\ncaf\xe9 open\r\ncaf\xe9 eof", "latin1");
    const expected = ["caf\xe9 lf\n", "caf\xe9 crlf\r\n", "caf\xe9 open\r\n", "caf\xe9 eof\n"].map((line) => Buffer.from(line, "latin1"));
    for (const size of [1, 2, 5, 11, input.length]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < input.length; at += size) chunks.push(input.subarray(at, at + size));
      expect(splitAsWritten(...chunks)).toEqual(expected);
    }
    // A "\r" that ends the output is kept too, and a "\n" added.
    expect(splitAsWritten("50%\r100%\r")).toEqual([Buffer.from("50%\r100%\r\n")]);
  });

  it("keeps a line of exactly the limit whole with its \\r\\n, also across chunks", () => {
    const line = "x".repeat(DISPLAY_LIMIT);
    expect(splitAsWritten(`${line}\r\n`, line.slice(1), "x\r", "\n")).toEqual([Buffer.from(`${line}\r\n`), Buffer.from(`${line}\r\n`)]);
  });

  it("cuts a longer line on a UTF-8 character's boundary, keeping the bytes before the cut as written", () => {
    // A byte that is not UTF-8 early in the line stays; "é" across the limit is left out whole, as the text path leaves it.
    const head = Buffer.concat([Buffer.from([0xff]), Buffer.from("a".repeat(DISPLAY_LIMIT - 2))]);
    const line = Buffer.concat([head, Buffer.from(`é${"b".repeat(10)}`)]);
    const expected = Buffer.concat([head, Buffer.from(`… (${line.length} bytes)\n`)]);
    expect(splitAsWritten(Buffer.concat([line, Buffer.from("\r\n")]))).toEqual([expected]);
    expect(splitAsWritten(line.subarray(0, 100), line.subarray(100), "\n")).toEqual([expected]);
    expect(splitAsWritten(line)).toEqual([expected]);
    // Rewritten by "\r" past the limit: from its last "\r" on, as the text path shows it.
    expect(splitAsWritten(`${"a".repeat(DISPLAY_LIMIT)}\rdone\r\n`)).toEqual([Buffer.from("\rdone\r\n")]);
  });

  it("shows a line that \\r rewrote past the limit from its last \\r on when that \\r came in an earlier chunk, as the line in one chunk", () => {
    // The first state and the "\r" in one read, the last state going past the limit in the next: before, the line showed from
    // its first byte, both states, cut for length ("aaa…\rbbb…ccc… (4501 bytes)"), where in one read it showed "\rbbb…ccc".
    const first = "a".repeat(3000);
    const last = `${"b".repeat(500)}${"c".repeat(1000)}`;
    const chunks = [`${first}\r${last.slice(0, 500)}`, `${last.slice(500)}\n`];
    expect(split(`${first}\r${last}\n`)).toEqual([`\r${last}`]);
    expect(split(...chunks)).toEqual([`\r${last}`]);
    expect(splitAsWritten(...chunks)).toEqual([Buffer.from(`\r${last}\n`)]);
    // The output's last line, without a newline; a "\r" with nothing after it yet (then a read of "\r\r" alone) is no rewrite till more follows.
    expect(splitAsWritten(chunks[0]!, last.slice(500))).toEqual([Buffer.from(`\r${last}\n`)]);
    const crs = [`${first}\r${last.slice(0, 500)}\r`, "\r\r", `${last.slice(500)}\n`];
    expect(splitAsWritten(...crs)).toEqual([Buffer.from(`\r${last.slice(500)}\n`)]);
    expect(splitAsWritten(...crs)).toEqual(splitAsWritten(crs.join("")));
    expect(split(`${first}\r${last.slice(0, 500)}\r`, "\r\r", "\n")).toEqual(split(`${first}\r${last.slice(0, 500)}\r\r\r\n`));
  });

  it("stands for the text path's lines, and for short lines gives the input's bytes back, for any bytes and chunking (property)", () => {
    const piece = fc.oneof(
      fc.constantFrom("\r", "\r\n", "\n").map((text) => Buffer.from(text)),
      fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ minLength: 0, maxLength: 3000, unit: fc.constantFrom("a", "é", "-") }).map((text) => Buffer.from(text)),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 8 }), (pieces, sizes) => {
        const input = Buffer.concat(pieces);
        const chunks: Buffer[] = [];
        for (let at = 0, i = 0; at < input.length; at += sizes[i++ % sizes.length]!) chunks.push(input.subarray(at, at + sizes[i % sizes.length]!));
        const lines = splitAsWritten(...chunks);
        expect(lines).toEqual(splitAsWritten(input));
        expect(lines.map(asText)).toEqual(split(input));
        // No line past the limit (without its "\r\n"): none cut or shown from its last "\r" on.
        const short = input.toString("latin1").split("\n").every((line) => line.replace(/\r$/, "").length <= DISPLAY_LIMIT);
        if (short) expect(Buffer.concat(lines)).toEqual(input.length === 0 || input.at(-1) === 0x0a ? input : Buffer.concat([input, Buffer.from("\n")]));
      }),
      { numRuns: 300 },
    );
  });
});

describe("Tail", () => {
  it("keeps the last lines, oldest first", () => {
    const tail = new Tail(2);
    for (const line of ["a", "b", "c"]) tail.push(line);
    expect(tail.lines()).toEqual(["b", "c"]);
    const none = new Tail(0);
    none.push("a");
    expect(none.lines()).toEqual([]);
  });

  it("takes the last lines of a block, after the lines before it", () => {
    const tail = new Tail(3);
    tail.push("before");
    tail.pushBlock(...lineBlock("one\n"));
    expect(tail.lines()).toEqual(["before", "one"]);
    tail.pushBlock(...lineBlock("\nx\ny\nz\n"));
    expect(tail.lines()).toEqual(["x", "y", "z"]);
    // Blank lines at the end wait for a line that is not blank (see the next test).
    tail.pushBlock(...lineBlock("\n\n"));
    expect(tail.lines()).toEqual(["x", "y", "z"]);
    tail.pushBlock(...lineBlock("w\n"));
    expect(tail.lines()).toEqual(["", "", "w"]);
  });

  it("leaves out blank lines at the end, however many, so they do not push out the lines before them", () => {
    // Spaces, tabs, a carriage return, and colour codes alone show nothing.
    const blanks = ["", "   ", "\t", "\r", "\x1b[0m", " \x1b[1;31m\x1b[m "];
    const one = new Tail(3);
    for (const line of ["a", "ERROR b", "", "c", ...blanks, ...blanks]) one.push(line);
    expect(one.lines()).toEqual(["ERROR b", "", "c"]);
    // The same from blocks: one that fills the tail before its blank lines, and one of blank lines alone.
    const block = new Tail(3);
    block.pushBlock(...lineBlock(`a\nb\nc\nd\n${blanks.join("\n")}\n`));
    expect(block.lines()).toEqual(["b", "c", "d"]);
    block.pushBlock(...lineBlock(`${blanks.join("\n")}\n`));
    expect(block.lines()).toEqual(["b", "c", "d"]);
    block.push("e");
    expect(block.lines()).toEqual(["\x1b[0m", " \x1b[1;31m\x1b[m ", "e"]);
    // A line that shows something is not blank: a colour code then text, a non-breaking space.
    const shown = new Tail(2);
    for (const line of ["\x1b[31mred", "\u00a0", ""]) shown.push(line);
    expect(shown.lines()).toEqual(["\x1b[31mred", "\u00a0"]);
  });

  it("takes a line of escape sequences that show nothing for blank, as a colour code alone: a cursor shown again, a line erased", () => {
    // A program's last words on its way out (ora's, a test runner's: "\x1b[?25h", with no newline), `tput sgr0`
    // ("\x1b(B\x1b[m"), an erase, a window title: each showed as an empty line and kept the blank lines before it.
    const escapes = ["\x1b[?25h", "\x1b(B\x1b[m", " \x1b[K", "\x1b[2K\x1b[1G", "\x1b]0;done\x07", "\x1b]0;done\x1b\\"];
    for (const escape of escapes) {
      const text = new Tail(3);
      for (const line of ["Error: expected 1", "", "", "", escape]) text.push(line);
      expect(text.lines(), JSON.stringify(escape)).toEqual(["Error: expected 1"]);
      const block = new Tail(3);
      block.pushBlock(...lineBlock(`a\nb\nError: expected 1\n\n\n\n${escape}\n`));
      expect(block.lines(), JSON.stringify(escape)).toEqual(["a", "b", "Error: expected 1"]);
    }
    // A hyperlink's text shows, and so does what follows an escape.
    const shown = new Tail(3);
    for (const line of ["a", "\x1b]8;;https://example.com\x1b\\docs\x1b]8;;\x1b\\", "\x1b[?25hdone", ""]) shown.push(line);
    expect(shown.lines()).toEqual(["a", "\x1b]8;;https://example.com\x1b\\docs\x1b]8;;\x1b\\", "\x1b[?25hdone"]);
  });

  it("takes a line that carriage returns rewrote to blank for blank, as its last state is all the summary shows of it", () => {
    // A progress line cleared on the way out ("50%\r\x1b[K", "50%\r   "): the tail shows it from its last "\r" on, an
    // empty line, which kept the blank lines before it and pushed out the error.
    for (const cleared of ["progress 50%\r\x1b[K", "progress 50%\r    ", "progress 50%\r\x1b[2K\r"]) {
      const text = new Tail(3);
      for (const line of ["Error: expected 1", "", "", "", cleared]) text.push(line);
      expect(text.lines(), JSON.stringify(cleared)).toEqual(["Error: expected 1"]);
      const block = new Tail(3);
      block.pushBlock(...lineBlock(`a\nb\nError: expected 1\n\n\n\n${cleared}\n`));
      expect(block.lines(), JSON.stringify(cleared)).toEqual(["a", "b", "Error: expected 1"]);
    }
    // A last state that shows something, or a "\r" that rewrites nothing (at the end: a "\r\n" in text mode), is not blank.
    const shown = new Tail(3);
    for (const line of ["a", "50%\r100%", "done\r\r", ""]) shown.push(line);
    expect(shown.lines()).toEqual(["a", "\r100%", "done\r\r"]);
  });

  it("keeps lines in order whether they come as text or in blocks that fill it", () => {
    const tail = new Tail(3);
    tail.pushBlock(...lineBlock("a\nb\nc\n"));
    tail.pushBlock(...lineBlock("d\nü\nf\ng\n"));
    tail.push("h");
    expect(tail.lines()).toEqual(["f", "g", "h"]);
    tail.pushBlock(...lineBlock("i\nj\nk\nl\n"));
    expect(tail.lines()).toEqual(["j", "k", "l"]);
    expect(tail.lines()).toEqual(["j", "k", "l"]);
    tail.pushBlock(...lineBlock("m\n"));
    expect(tail.lines()).toEqual(["k", "l", "m"]);
    for (const line of ["n", "o", "p"]) tail.push(line);
    expect(tail.lines()).toEqual(["n", "o", "p"]);
    const none = new Tail(0);
    none.pushBlock(...lineBlock("a\nb\n"));
    expect(none.lines()).toEqual([]);
  });

  it("takes a line of an as-written block that ends in \\r\\n as the text path gives it, without the \\r", () => {
    const small = new Tail(3);
    small.pushBlock(...lineBlock("a\r\nb\r\r\n"));
    expect(small.lines()).toEqual(["a", "b\r"]);
    const filled = new Tail(2);
    filled.pushBlock(...lineBlock("a\r\nb\r\nc\r\n"));
    expect(filled.lines()).toEqual(["b", "c"]);
  });
});

describe("Tail lines", () => {
  it("cuts a line over TAIL_LINE_LIMIT characters and says how long it was, also one already cut for display", () => {
    const tail = new Tail(3);
    const long = "é".repeat(1500); // 3,000 bytes: under the display limit, over the tail's
    tail.push(long);
    tail.push(`${"x".repeat(DISPLAY_LIMIT)}… (9000 bytes)`); // as the splitter cuts a 9,000-byte line
    tail.push("short");
    expect(tail.lines()).toEqual([`${"é".repeat(TAIL_LINE_LIMIT)}… (3000 bytes)`, `${"x".repeat(TAIL_LINE_LIMIT)}… (9000 bytes)`, "short"]);
    // The same from a block.
    const block = new Tail(2);
    block.pushBlock(...lineBlock(`a\n${"y".repeat(2000)}\nb\n`));
    expect(block.lines()).toEqual([`${"y".repeat(TAIL_LINE_LIMIT)}… (2000 bytes)`, "b"]);
  });

  it("keeps a line that carriage returns rewrote, short or long, from its last \\r on: a progress bar's last state, not every state or its first cut short", () => {
    // 100 states of 14 characters, then the last: 1,412 bytes, under the display's limit, over the tail's.
    const bar = `${Array.from({ length: 100 }, (_, i) => `progress ${String(i).padStart(3, "0")}%`).join("\r")}\rfinished all`;
    const tail = new Tail(2);
    tail.push(bar);
    tail.push(`${"z".repeat(2000)}\r${"w".repeat(1500)}`); // its last state alone still over the limit
    expect(tail.lines()).toEqual(["\rfinished all", `\r${"w".repeat(TAIL_LINE_LIMIT - 1)}… (3501 bytes)`]);
    const block = new Tail(1);
    block.pushBlock(...lineBlock(`${bar}\n`));
    expect(block.lines()).toEqual(["\rfinished all"]);
    // A "\r" with nothing after it rewrites nothing: the last state is the one before it.
    const ending = new Tail(1);
    ending.push(`${bar}\r`);
    expect(ending.lines()).toEqual(["\rfinished all\r"]);
    // A short one too: its last state, as a terminal showed it, not every state in a CI log.
    const short = new Tail(3);
    short.push("dl 10%\rdl 50%\rdl 100%");
    short.push("done\r");
    short.push("plain");
    expect(short.lines()).toEqual(["\rdl 100%", "done\r", "plain"]);
  });

  // Its memory is bounded (a line kept whole held whole, 20 lines of 1 MB held 20 MB of each running task's): see
  // reliability-output.test.ts, which measures taskq's peak RSS.
  it("shows a line kept whole under GitHub Actions (up to 1 MiB) cut as it shows its text", () => {
    const line = `token ${"x".repeat(1024 * 1024 - 6)}`;
    const tail = new Tail(20);
    for (let i = 0; i < 20; i++) tail.pushBlock(...lineBlock(`${line}\n`));
    expect(tail.lines()).toEqual(Array.from({ length: 20 }, () => `token ${"x".repeat(TAIL_LINE_LIMIT - 6)}… (${1024 * 1024} bytes)`));
    // A tail of one line, which a block fills: held as bytes, it held the line whole.
    const one = new Tail(1);
    one.pushBlock(...lineBlock(`${line}\r\n`));
    expect(one.lines()).toEqual([`token ${"x".repeat(TAIL_LINE_LIMIT - 6)}… (${1024 * 1024} bytes)`]);
    // Each as the line's text shows: a progress bar's last state, characters of two and four bytes, an escape sequence at
    // the cut, a "\r" ending it, a blank line followed by one that is not, or none.
    const long = "y".repeat(DISPLAY_LIMIT * 2);
    const shapes = [
      `${long}\r${"é".repeat(5000)}`,
      `${long}\r${"🎉".repeat(3000)}\r\r`,
      `a\r${"z".repeat(TAIL_LINE_LIMIT - 3)}\x1b[31m${long}`,
      " ".repeat(DISPLAY_LIMIT * 3),
      `${long}\r\x1b[2K`,
      "ok",
    ];
    const text = new Tail(shapes.length);
    const blocks = new Tail(shapes.length);
    for (const shape of shapes) {
      text.push(shape.endsWith("\r") ? shape.slice(0, -1) : shape); // as the text path gives a "\r\n" line
      blocks.pushBlock(...lineBlock(`${shape}\n`));
    }
    expect(blocks.lines()).toEqual(text.lines());
    expect(blocks.lines()).toHaveLength(shapes.length);
    // The task's own `… (N bytes)` at the end of so long a line, which is none taskq cut: its whole length said.
    const own = new Tail(1);
    own.pushBlock(...lineBlock(`${long}… (123456 bytes)\n`));
    expect(own.lines()).toEqual([`${"y".repeat(TAIL_LINE_LIMIT)}… (${Buffer.byteLength(`${long}… (123456 bytes)`)} bytes)`]);
    // As text too (a line kept whole for JSON output), longer than a line cut for display can be, with a terminal's view of
    // its rewritten beginning before it: cut as it comes, its whole length said.
    const longer = `${"y".repeat(DISPLAY_LIMIT * 4)}… (123456 bytes)`;
    const ownText = new Tail(1);
    ownText.push(longer);
    expect(ownText.lines()).toEqual([`${"y".repeat(TAIL_LINE_LIMIT)}… (${Buffer.byteLength(longer)} bytes)`]);
    const blank = new Tail(2);
    blank.pushBlock(...lineBlock(`a\n${" ".repeat(DISPLAY_LIMIT * 3)}\n`));
    expect(blank.lines()).toEqual(["a"]);
  });

  it("never cuts a character made of two UTF-16 units in half", () => {
    const tail = new Tail(1);
    tail.push(`${"a".repeat(TAIL_LINE_LIMIT - 1)}${"🎉".repeat(10)}`);
    expect(tail.lines()).toEqual([`${"a".repeat(TAIL_LINE_LIMIT - 1)}… (${TAIL_LINE_LIMIT - 1 + 40} bytes)`]);
  });
});

describe("formatDuration", () => {
  it.each([
    [250, "250ms"],
    [1500, "1.5s"],
    [30_000, "30s"],
    [300_000, "5m"],
    [90_000, "1m30s"],
    [5_400_000, "1h30m"],
    // Rounded up to the next unit, not "60s", "1m60s", "59m60s" or "1h60m" ("the database answers again (it failed for 1m60s)").
    [999.6, "1s"],
    [59_960, "1m"],
    [119_960, "2m"],
    [3_599_960, "1h"],
    [7_170_000, "2h"],
    // Under an hour, its seconds to the tenth, as the live board counts them (it said "1m1s" here, "1m0.5s" there).
    [60_500, "1m0.5s"],
    [119_600, "1m59.6s"],
    [3_599_600, "59m59.6s"],
    // Past an hour to the minute, rounded as every unit is (the board cut them: "1h59m" here, "2h" there).
    [3_630_000, "1h1m"],
    [5_412_300, "1h30m"],
    [7_199_000, "2h"],
    // Past a day in days and hours, as a retry's delay is said: not "600h" (--shutdown-timeout 25d).
    [25 * 86_400_000, "25d"],
    [(18 * 24 + 14) * 3_600_000, "18d14h"],
    [30 * 86_400_000, "30d"],
    // Rounded in the smaller unit and carried: no unit shows 60, nor 24 hours.
    [3_599_960, "1h"],
    [2 * 86_400_000 - 60_000, "2d"],
    [86_400_000 - 20_000, "1d"],
    // One duration, one way: 40 ms short of a day is 1d, never 23h59m (the board's words for it) beside 1d (the summary's).
    [86_399_960, "1d"],
    [86_399_940, "1d"],
  ])("%d ms is %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it("reads back, as a duration, within half its last unit, and no unit shows 60, 24 or 1000", () => {
    for (let ms = 0; ms <= 30 * 86_400_000; ms += ms < 120_000 ? 7 : ms < 7_200_000 ? 9_973 : 999_983) {
      const text = formatDuration(ms);
      const back = parseDuration(text);
      const unit = ms < 999.5 ? 1 : ms < 3_599_950 ? 100 : ms < 86_370_000 ? 60_000 : 3_600_000;
      expect(Math.abs(back! - ms), `${ms} ms read ${text}`).toBeLessThanOrEqual(unit / 2);
      expect(text, `${ms} ms`).not.toMatch(/(?<![\d.])(60(\.\d)?s|60m|24h|1000ms)/);
    }
  });
});

describe("LineSplitter's cut, of a line of thousands of escape sequences", () => {
  it("costs about what a plain line's does, piped or as text: it stepped back over each unended sequence, searching to the buffer's end for each", async () => {
    const { bestOfAlternating } = await import("../helpers/timing.js");
    const lines = (unit: string) => Buffer.from(`${unit.repeat(Math.ceil(5000 / unit.length)).slice(0, 5000)}\n`.repeat(400));
    const plain = lines("x");
    const escapes = lines("\x1b]");
    const split = (bytes: Buffer, asWritten: boolean) => () => {
      let count = 0;
      const splitter = new LineSplitter(() => count++, asWritten ? () => count++ : undefined, { asWritten });
      for (let index = 0; index < bytes.length; index += 65536) splitter.push(bytes.subarray(index, index + 65536));
      splitter.flush();
      expect(count).toBe(400);
    };
    for (const asWritten of [true, false]) {
      const [plainMs, escapesMs] = bestOfAlternating(5, split(plain, asWritten), split(escapes, asWritten));
      expect(escapesMs / plainMs, `asWritten ${asWritten}: ${escapesMs.toFixed(2)} ms against ${plainMs.toFixed(2)} ms`).toBeLessThan(5);
    }
  });
});

describe("tailLineInWords", () => {
  /** `line` as Tail keeps it outside GitHub Actions, and with `words` (under it). */
  const kept = (line: string, words: boolean): string => {
    const tail = new Tail(1, { words });
    tail.push(line);
    return tail.lines()[0] as string;
  };

  it("cuts a line kept cut at TAIL_LINE_LIMIT within a word after the last whole one, as Tail under GitHub Actions keeps it; leaves any other as it is", () => {
    const token = `ghs_${"T0k3n".repeat(7)}1`;
    const across = `${"word ".repeat(197)}${token} after`;
    expect(tailLineInWords(kept(across, false))).toBe(kept(across, true));
    // Cut after a whole word already, short, or not cut at all: as it is. A task's own short line that ends like a cut too.
    for (const line of [kept(across, true), "short", "x".repeat(TAIL_LINE_LIMIT), `${"y".repeat(10)}… (12 bytes)`]) expect(tailLineInWords(line)).toBe(line);
    // No space or tab before the cut: its length alone, as Tail keeps it.
    const solid = "0".repeat(1100);
    expect(tailLineInWords(kept(solid, false))).toBe(kept(solid, true));
    // A space inside an escape sequence (a window title's) is no word's end: the cut goes before the sequence.
    const titled = `${"a".repeat(960)}\x1b]0;my title\x07${"c".repeat(100)}`;
    expect(tailLineInWords(kept(titled, false))).toBe(`${"a".repeat(960)}… (${titled.length} bytes)`);
    expect(kept(titled, true)).toBe(`${"a".repeat(960)}… (${titled.length} bytes)`);
  });
});
