import { PassThrough, Writable } from "node:stream";
import { Chalk } from "chalk";
import { describe, expect, it } from "vitest";
import { BufferedWriter, jsonRecordHead, whenStreamDrained } from "../../src/cli/output.js";
import { OpenColours } from "../../src/cli/render/control-bytes.js";
import { createColors } from "../../src/cli/render/colors.js";
import { JsonRenderer } from "../../src/cli/render/json.js";
import { PlainRenderer } from "../../src/cli/render/plain.js";
import { LineSplitter, Tail } from "../../src/handlers/line-splitter.js";
import { lineBlock } from "../helpers/line-blocks.js";
import { bestOfAlternating } from "../helpers/timing.js";

/** A stream that keeps every byte written to it. */
function sink(): { stream: PassThrough; bytes: () => Buffer } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  return { stream, bytes: () => Buffer.concat(chunks) };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `texts` as one block of lines, as a LineSplitter hands it on. */
const block = (texts: string[]): [Buffer, number, Int32Array] => lineBlock(texts.map((text) => `${text}\n`).join(""));

describe("BufferedWriter", () => {
  it("keeps the bytes it writes whole when its beforeWrite writes to it too: that text comes after them, at the next flush", async () => {
    // The board's clear asks the terminal's size, and a terminal found without a width writes a note: into the buffer
    // being written, over its first lines, where a loud task's output filled the batch between two ticks.
    const out = sink();
    let noted = false;
    const writer: BufferedWriter = new BufferedWriter(out.stream, {
      eachTick: false,
      beforeWrite: () => {
        if (noted) return;
        noted = true;
        writer.write("note: the terminal reports no width\n");
      },
    });
    writer.write("first line of the task\nsecond line\n");
    writer.flush();
    writer.flush();
    await settle();
    expect(out.bytes().toString("latin1")).toBe("first line of the task\nsecond line\nnote: the terminal reports no width\n");
  });

  it("keeps text and prefixed lines in the order they were written, across flushes", async () => {
    const out = sink();
    const writer = new BufferedWriter(out.stream);
    const lines = (prefix: string, ...texts: string[]): void => writer.writePrefixedLines(Buffer.from(prefix), ...block(texts));
    writer.write("a ");
    lines("> ", "b", "c");
    writer.write("d ");
    writer.write("e ");
    lines("é ", "f");
    writer.write("x".repeat(270_000)); // over the batch size: written at once
    writer.write(" g");
    lines("", " h");
    lines("| ", "y".repeat(600_000)); // larger than the buffer
    writer.write("€ end");
    writer.write("z".repeat(600_000)); // text larger than the buffer
    await settle();
    expect(out.bytes().toString()).toBe(`a > b\n> c\nd e é f\n${"x".repeat(270_000)} g h\n| ${"y".repeat(600_000)}\n€ end${"z".repeat(600_000)}`);
  });

  it("puts a prefix of any length before every line of a block", async () => {
    const texts = ["one", "", "three ü", "x".repeat(4096)];
    for (let length = 0; length <= 13; length++) {
      const prefix = "abcdéfghijklm".slice(0, length);
      const out = sink();
      const writer = new BufferedWriter(out.stream);
      writer.writePrefixedLines(Buffer.from(prefix), ...block(texts));
      await settle();
      expect(out.bytes().toString()).toBe(texts.map((text) => `${prefix}${text}\n`).join(""));
    }
  });

  it("puts the prefix again after each carriage return that rewrites a line, so a viewer that honours `\\r` shows whose line it is", async () => {
    // A progress bar's states, a `\r\n` line end, a `\r\r` (the first rewrites nothing), a line that starts with one, lines with none between.
    const texts = ["before", "10%\r20%\r30%", "crlf\r", "x\r\ry", "\rdone", "plain", "a\rb\r", "after"];
    const out = sink();
    const writer = new BufferedWriter(out.stream);
    writer.writePrefixedLines(Buffer.from("t | "), ...block(texts));
    await settle();
    // Before, "t | 10%\r20%\r30%": a CI log page showed "30%", and not whose it was.
    expect(out.bytes().toString()).toBe(
      "t | before\nt | 10%\rt | 20%\rt | 30%\nt | crlf\r\nt | x\r\rt | y\nt | \rt | done\nt | plain\nt | a\rt | b\r\nt | after\n",
    );
  });

  it("puts the prefix again after an erase of the line that follows a carriage return, which would erase it", async () => {
    const texts = ["10%\r\x1b[2K20%", "a\r\x1b[K\x1b[1mb", "c\r\x1b[2J", "d\r\x1b[", "e\r\x1b[2K"];
    const out = sink();
    const writer = new BufferedWriter(out.stream);
    writer.writePrefixedLines(Buffer.from("t | "), ...block(texts));
    await settle();
    // Before, "t | 10%\rt | \x1b[2K20%": a `cat` on a terminal showed "    20%", the prefix erased. Not past another sequence, nor one cut short.
    expect(out.bytes().toString()).toBe("t | 10%\r\x1b[2Kt | 20%\nt | a\r\x1b[Kt | \x1b[1mb\nt | c\rt | \x1b[2J\nt | d\rt | \x1b[\nt | e\r\x1b[2Kt | \n");
  });
});

/**
 * Lines JSON writes as they are and lines it escapes, as raw bytes: quotes, backslashes,
 * control characters, UTF-8 of every length, and bytes that are not UTF-8 at all.
 */
const JSON_LINES: Buffer[] = [
  "plain text",
  "",
  'say "hi"',
  "back\\slash",
  "tab\there",
  "carriage\rreturn",
  "bell\u0007 and del \u007f",
  "héllo wörld ✓ 🎉",
  "x".repeat(4096),
].map((text) => Buffer.from(text));
JSON_LINES.push(Buffer.from([0x62, 0x61, 0x64, 0xff, 0x21]), Buffer.from([0xe2, 0x9c]), Buffer.from([0xed, 0xa0, 0x80]));

/** Raw lines as one block, as a LineSplitter hands it on. */
function rawBlock(lines: Buffer[]): [Buffer, number, Int32Array] {
  const bytes = Buffer.concat(lines.flatMap((line) => [line, Buffer.from("\n")]));
  let end = 0;
  return [bytes, lines.length, Int32Array.from(lines, (line) => (end += line.length + 1))];
}

describe("BufferedWriter.writeJsonLines", () => {
  it("writes each line of a block as the record JSON.stringify makes of it, mixed with other writes", async () => {
    const record = { ts: "2026-12-01T00:00:00.000Z", event: "output", id: 'build "all"', stream: "stdout" };
    const head = jsonRecordHead(record);
    const out = sink();
    const writer = new BufferedWriter(out.stream);
    writer.write("before\n");
    writer.writeJsonLines(head, ...rawBlock(JSON_LINES));
    const many = Array.from({ length: 3000 }, (_, i) => JSON_LINES[i % JSON_LINES.length]!); // larger than the buffer
    writer.writeJsonLines(head, ...rawBlock(many));
    writer.write("after\n");
    await settle();
    const records = [...JSON_LINES, ...many].map((line) => `${JSON.stringify({ ...record, text: line.toString("utf8") })}\n`);
    // Compared byte for byte: a bad byte copied as it is would read back as U+FFFD too.
    expect(out.bytes().toString("latin1")).toBe(Buffer.from(`before\n${records.join("")}after\n`).toString("latin1"));
  });

  it("copies the lines JSON keeps as they are, and escapes the others", async () => {
    const out = sink();
    const writer = new BufferedWriter(out.stream);
    writer.writeJsonLines(jsonRecordHead({}), ...rawBlock(JSON_LINES));
    await settle();
    const written = out.bytes().toString().split("\n").slice(0, -1);
    expect(written.map((line) => (JSON.parse(line) as { text: string }).text)).toEqual(JSON_LINES.map((line) => line.toString("utf8")));
    expect(written[7]).toBe('{"text":"héllo wörld ✓ 🎉"}');
    expect(written[2]).toBe('{"text":"say \\"hi\\""}');
    expect(written[9]).toBe('{"text":"bad\uFFFD!"}');
  });

  // U+2028 and U+2029 were written raw: Python's splitlines() cut such a record in two.
  it("agrees with JSON.stringify on every byte, wherever it falls in a line, but for C1 controls, U+2028 and U+2029, escaped too", async () => {
    // Bytes around every boundary JSON cares about, and pieces of UTF-8 (whole, cut, or bad); C2 then 80, 9B, 9C or 9F is a C1 control.
    const alphabet = [0x00, 0x09, 0x0d, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x61, 0x7e, 0x7f, 0x80, 0xa8, 0xbf, 0xc2, 0x9b, 0xc3, 0xa9, 0xe2, 0x9c, 0x93, 0xed, 0xa0, 0xf0, 0x9f, 0x8e, 0x89, 0xff];
    let seed = 7;
    const random = (n: number): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) >>> 8) % n;
    const lines: Buffer[] = [];
    for (let i = 0; i < 4000; i++) {
      // Mostly plain text, so that each special byte lands at every offset of a 4-byte word.
      const length = random(23);
      const line = Buffer.alloc(length, 0x61);
      for (let k = random(3); k > 0 && length > 0; k--) line[random(length)] = alphabet[random(alphabet.length)]!;
      lines.push(line);
    }
    lines.push(Buffer.from("é".repeat(40)), Buffer.from("ok ✓ done 🎉!"), Buffer.from("csi \u009b2J\u009bH, nel \u0085, \u0080 and \u009f, not \u00a0"));
    lines.push(Buffer.from("ls \u2028 ps \u2029, not \u2027 \u202a"), Buffer.from("\u2029"), Buffer.from([0xe2, 0x80, 0xa8, 0x20, 0xe2, 0x80]));
    const head = jsonRecordHead({ id: "t" });
    const out = sink();
    const writer = new BufferedWriter(out.stream);
    writer.writeJsonLines(head, ...rawBlock(lines));
    await settle();
    const c1 = /[\u0080-\u009f\u2028\u2029]/g;
    const escaped = (text: string): string => text.replace(c1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    const expected = lines.map((line) => `${escaped(JSON.stringify({ id: "t", text: line.toString("utf8") }))}\n`).join("");
    expect(out.bytes().toString("latin1")).toBe(Buffer.from(expected).toString("latin1"));
    // No C1 control is written as itself (UTF-8 C2 80 to C2 9F), nor U+2028 or U+2029, and each record reads back as the line.
    expect(out.bytes().toString("utf8")).not.toMatch(c1);
    expect(out.bytes().toString("utf8").split("\n").slice(0, -1).map((record) => (JSON.parse(record) as { text: string }).text)).toEqual(lines.map((line) => line.toString("utf8")));
  });
});

describe("JsonRenderer", () => {
  it("writes a block of lines as the same records as it writes them one by one", async () => {
    const texts = JSON_LINES.map((line) => line.toString("utf8"));
    const one = sink();
    const byLine = new JsonRenderer(one.stream);
    for (const text of texts) byLine.line("build.js", "stderr", text);
    const blocks = sink();
    const byBlock = new JsonRenderer(blocks.stream);
    byBlock.lines("build.js", "stderr", ...rawBlock(JSON_LINES));
    await settle();
    const withoutTime = (bytes: Buffer): string => bytes.toString().replace(/"ts":"[^"]+"/g, '"ts":""');
    expect(withoutTime(blocks.bytes())).toBe(withoutTime(one.bytes()));
    const records = one.bytes().toString().split("\n").slice(0, -1).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map(({ ts: _ts, ...rest }) => rest)).toEqual(texts.map((text) => ({ event: "output", id: "build.js", stream: "stderr", text })));
  });
});

describe("PlainRenderer", () => {
  it.each([
    ["without colours", false],
    ["with colours", true],
  ])("prints a block of lines exactly as it prints them one by one (%s)", async (_name, coloured) => {
    const colors = coloured ? new Chalk({ level: 1 }) : await createColors({ color: false, isTTY: false });
    const lines = ["first", "", "héllo wörld", "tab\there", "x".repeat(4096)];
    const one = sink();
    const byLine = new PlainRenderer(one.stream, colors);
    for (const line of lines) byLine.line("build.js", "stdout", line);
    const blocks = sink();
    const byBlock = new PlainRenderer(blocks.stream, colors);
    byBlock.lines("build.js", "stdout", ...block(lines));
    await settle();
    expect(blocks.bytes().toString()).toBe(one.bytes().toString());
    expect(one.bytes().toString().split("\n")[2]).toMatch(/build\.js \|.* héllo wörld$/);
  });

  it("into a file or a pipe, takes every line as bytes, as written; on a terminal, lines it cleans as text", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const out = sink();
    const renderer = new PlainRenderer(out.stream, colors);
    expect(renderer.asWritten).toBe(true);
    // As an as-written splitter hands them on: a "\r\n" kept, a byte that is not UTF-8.
    const bytes = Buffer.from("caf\xe9\r\nok\n", "latin1");
    renderer.lines("build.js", "output", bytes, 2, Int32Array.from([6, 9]));
    await settle();
    expect(out.bytes()).toEqual(Buffer.from("build.js | caf\xe9\r\nbuild.js | ok\n", "latin1"));
    expect(new PlainRenderer(sink().stream, colors, true).asWritten).toBe(false);
  });

  it("into a file or a pipe, resets a colour a task left set before each prefix and sets it again after, across blocks and tasks", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const out = sink();
    const renderer = new PlainRenderer(out.stream, colors);
    // Lines without an escape before and after the one that sets red; a block with none while red is set; a reset.
    renderer.lines("a", "stdout", ...block(["one", "\x1b[1;31mred", "still\rover", "more"]));
    renderer.lines("a", "stdout", ...block(["next block"]));
    renderer.lines("b", "stdout", ...block(["b's own"]));
    renderer.lines("a", "stdout", ...block(["\x1b[22mnot bold", "\x1b[mdone", "plain"]));
    // Lines that end their colours (a test runner's), then one that leaves red set before a progress bar's `\r`.
    renderer.lines("c", "stdout", ...block(["\x1b[32mok\x1b[0m one", "\x1b[32mok\x1b[m two", "\x1b[31m10%\r20%", "after"]));
    renderer.note("the end");
    await settle();
    const R = "\x1b[0m";
    expect(out.bytes().toString().replace(/\d\d:\d\d:\d\d\.\d{3}/, "T")).toBe(
      [
        "a | one",
        "a | \x1b[1;31mred",
        `${R}a | \x1b[1;31mstill\r${R}a | \x1b[1;31mover`,
        `${R}a | \x1b[1;31mmore`,
        `${R}a | \x1b[1;31mnext block`,
        `${R}b | b's own`,
        "a | \x1b[1;31m\x1b[22mnot bold",
        `${R}a | \x1b[31m\x1b[mdone`,
        "a | plain",
        "c | \x1b[32mok\x1b[0m one",
        "c | \x1b[32mok\x1b[m two",
        `c | \x1b[31m10%\r${R}c | \x1b[31m20%`,
        `${R}c | \x1b[31mafter`,
        `${R}T note    the end`,
        "",
      ].join("\n"),
    );
  });

  it("into a file or a pipe, ends an OSC 8 hyperlink a task left open before each prefix, another task's and taskq's own lines, and starts it again after its prefix", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const out = sink();
    const renderer = new PlainRenderer(out.stream, colors);
    const link = "\x1b]8;id=7;https://example.com\x07";
    renderer.lines("a", "stdout", ...block([`see ${link}the docs`, "still linked"]));
    // Another task with red set, whose lines without an escape go framed: the link `a` left open ends first.
    renderer.lines("b", "stdout", ...block(["\x1b[31mred", "more red"]));
    renderer.lines("a", "stdout", ...block(["\x1b[32mgreen", "\x1b]8;;\x07ended\x1b[0m"]));
    renderer.note("the end");
    await settle();
    const R = "\x1b[0m";
    const E = "\x1b]8;;\x1b\\";
    expect(out.bytes().toString().replace(/\d\d:\d\d:\d\d\.\d{3}/, "T")).toBe(
      [
        `a | see ${link}the docs`,
        `${R}${E}a | ${link}still linked`,
        `${R}${E}b | \x1b[31mred`,
        `${R}b | \x1b[31mmore red`,
        `${R}a | ${link}\x1b[32mgreen`,
        `${R}${E}a | ${link}\x1b[32m\x1b]8;;\x07ended\x1b[0m`,
        "T note    the end",
        "",
      ].join("\n"),
    );
  });

  it("into a file or a pipe, writes the lines of a task that keeps an OSC 8 hyperlink open as it writes them one block a line", async () => {
    // Lines that only change colours, lines that leave one set, a `\r` that rewrites, the link ended and started again, and
    // taskq's own line and another task's between blocks: one block as a whole or a line at a time, the same bytes.
    const colors = await createColors({ color: false, isTTY: false });
    const link = "\x1b]8;;https://example.com/docs\x1b\\";
    const lines = [
      `docs: ${link}here`,
      "\x1b[32mok\x1b[0m one",
      "plain",
      "\x1b[32mok\x1b[m two",
      "\x1b[31mred left set",
      "still red",
      "\x1b[0mreset",
      "\x1b[33m10%\x1b[0m\r\x1b[33m20%\x1b[0m",
      "\x1b[1mbold\x1b[0m",
      "\x1b]8;;\x1b\\ended",
      "\x1b[32mok\x1b[0m outside",
      `${link}again\x1b[0m`,
      "\x1b[36mcyan\x1b[0m",
    ];
    for (const keep of [true, false]) {
      const write = async (perLine: boolean): Promise<string> => {
        const out = sink();
        const renderer = new PlainRenderer(out.stream, colors, false, keep);
        for (const group of [lines.slice(0, 6), lines.slice(6)]) {
          for (const texts of perLine ? group.map((line) => [line]) : [group]) renderer.lines("a", "stdout", ...block(texts));
          renderer.note("between");
          renderer.lines("b", "stdout", ...block(["\x1b[34mb's\x1b[0m"]));
        }
        await settle();
        return out.bytes().toString().replace(/\d\d:\d\d:\d\d\.\d{3}/g, "T");
      };
      const byLine = await write(true);
      expect(byLine).toContain(`\x1b[0m\x1b]8;;\x1b\\a | ${link}\x1b[32mok\x1b[m two\n`);
      expect(await write(false)).toBe(byLine);
    }
  });

  it("into a file or a pipe, writes coloured lines inside an OSC 8 hyperlink a task keeps open in batches, as outside one", () => {
    // Each line after a reset and the link's end, then the link again: longer prefixes, not a write of each line's parts.
    // Line by line, the lines inside the link took 2.6-2.9 times the CPU of those outside it; in batches, 1.1-1.3.
    const stream = new Writable({ write: (_chunk, _encoding, done) => done() });
    const prefix = Buffer.from("flood | ");
    const [bytes, count, ends] = block(Array.from({ length: 1000 }, () => `\x1b[32mok\x1b[0m ${"x".repeat(86)}`));
    const writer = (linked: boolean): (() => void) => {
      const out = new BufferedWriter(stream, { eachTick: false });
      const colours = new OpenColours();
      if (linked) out.writeColouredLines(prefix, ...block(["\x1b]8;;https://example.com/docs\x1b\\docs"]), colours);
      expect(colours.open).toBe(linked);
      return () => {
        out.writeColouredLines(prefix, bytes, count, ends, colours);
        out.flush();
      };
    };
    const [linked, outside] = bestOfAlternating(300, writer(true), writer(false), 7);
    // 2.1: well below the 2.6 of line by line, with room for a loaded machine (1.7 seen once under load 9).
    expect(linked / outside).toBeLessThan(2.1);
  });

  it("on a terminal, puts a tab after wide characters, emoji and accents at the column it puts one after ASCII", async () => {
    // "名前" and "✅" take two columns each: a column per code point put "東京" 2 columns past "city", "ok" 1 past it.
    const colors = await createColors({ color: false, isTTY: false });
    const out = sink();
    const renderer = new PlainRenderer(out.stream, colors, true);
    const lines = ["name\tcity", "名前\t東京", "✅\tok", "👍🏽\tx", "🇺🇸\tx", "e\u0301\tx", "ﾃｽﾄ\tx"];
    renderer.lines("t", "stdout", ...block(lines));
    await settle();
    expect(out.bytes().toString()).toBe(
      ["t | name    city", "t | 名前    東京", "t | ✅      ok", "t | 👍🏽      x", "t | 🇺🇸      x", "t | e\u0301       x", "t | ﾃｽﾄ     x", ""].join("\n"),
    );
  });
});

describe("whenStreamDrained", () => {
  it("reports a stream that holds 1 MiB or more unwritten, and resolves once it has written it", async () => {
    const held: (() => void)[] = [];
    const slow = new Writable({
      write(_chunk, _encoding, callback) {
        held.push(() => callback()); // a reader that does not keep up
      },
    });
    slow.write(Buffer.alloc(512 * 1024));
    expect(whenStreamDrained(slow)).toBeUndefined();
    slow.write(Buffer.alloc(512 * 1024));
    const drained = whenStreamDrained(slow);
    expect(drained).toBeInstanceOf(Promise);
    let resolved = false;
    void drained!.then(() => (resolved = true));
    held.shift()!();
    await settle();
    expect(resolved).toBe(false); // half of it still unwritten
    held.shift()!();
    await settle();
    expect(resolved).toBe(true);
    expect(whenStreamDrained(slow)).toBeUndefined();
  });

  it("resolves when a congested stream is destroyed instead of draining", async () => {
    const stuck = new Writable({ write() {} });
    stuck.write(Buffer.alloc(2 * 1024 * 1024));
    const drained = whenStreamDrained(stuck)!;
    stuck.destroy();
    await expect(drained).resolves.toBeUndefined();
  });
});


describe("PlainRenderer under GitHub Actions (workflow commands without the prefix)", () => {
  it("into a file or a pipe, writes a block of lines with workflow commands among coloured ones, links and `\\r`s as it writes them one block a line", async () => {
    // Commands first, last, side by side and between lines that leave colours or a link set: the lines around each go as
    // a block of their own, whose bytes must be those of its lines given one at a time.
    const colors = await createColors({ color: false, isTTY: false });
    const link = "\x1b]8;;https://example.com/docs\x1b\\";
    const lines = [
      "::group::first",
      `docs: ${link}here`,
      "::error file=a.ts,line=3::in the link",
      "\x1b[31mred left set",
      "::warning::after red",
      "::notice::\x1b[1mbold",
      "still red and bold",
      "\x1b[0m\x1b]8;;\x1b\\reset and ended",
      "\x1b[33m10%\x1b[0m\r\x1b[33m20%\x1b[0m",
      "std::vector",
      "  ::debug::indented",
      "::endgroup::",
    ];
    for (const keep of [true, false]) {
      const write = async (perLine: boolean): Promise<string> => {
        const out = sink();
        const renderer = new PlainRenderer(out.stream, colors, false, keep, true);
        for (const group of [lines.slice(0, 5), lines.slice(5)]) {
          for (const texts of perLine ? group.map((line) => [line]) : [group]) renderer.lines("a", "stdout", ...block(texts));
          renderer.note("between");
          renderer.lines("b", "stdout", ...block(["\x1b[34mb's\x1b[0m", "::notice::b's"]));
        }
        await settle();
        return out.bytes().toString().replace(/\d\d:\d\d:\d\d\.\d{3}/g, "T");
      };
      const byLine = await write(true);
      // At a line's start, nothing before them: not the reset and link end of what the line before left set.
      expect(byLine).toContain(`\n::error file=a.ts,line=3::in the link\n`);
      expect(byLine).toContain(`\n::warning::after red\n`);
      expect(byLine).toContain(`\n::notice::\x1b[1mbold\n`);
      // What it left set ends before the next line's prefix, and is set again after it.
      expect(byLine).toContain(`\n::notice::\x1b[1mbold\n\x1b[0m\x1b]8;;\x1b\\a | ${link}${keep ? "\x1b[1;31m" : ""}still red and bold\n`);
      expect(byLine).toContain(`\n  ::debug::indented\n::endgroup::\n`);
      expect(byLine).toContain(`a | std::vector\n`);
      expect(await write(false)).toBe(byLine);
    }
  });

  it("writes the lines of a block with none the same bytes as outside GitHub Actions, and costs no more for lines with `::` past their start", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const [bytes, count, ends] = block(Array.from({ length: 1000 }, (_, i) => (i % 7 === 0 ? `\x1b[32mok\x1b[0m std::vector ${"x".repeat(70)}` : `crate::module::function at src/lib.rs:${i} ${"x".repeat(50)}`)));
    const bytesOf = async (bare: boolean): Promise<Buffer> => {
      const out = sink();
      new PlainRenderer(out.stream, colors, false, true, bare).lines("flood", "stdout", bytes, count, ends);
      await settle();
      return out.bytes();
    };
    expect((await bytesOf(true)).equals(await bytesOf(false))).toBe(true);
    const stream = new Writable({ write: (_chunk, _encoding, done) => done() });
    const renderer = (bare: boolean): (() => void) => {
      const plain = new PlainRenderer(stream, colors, false, true, bare);
      return () => plain.lines("flood", "stdout", bytes, count, ends);
    };
    // A search of the block for `::`, then of each line it is in, took 2.0-2.1 times the CPU here (1.5 times taskq's on
    // 100 MB of such lines); a look at each line's first bytes, 1.03-1.05 (0.96-1.15 under load 7-10).
    const [bare, prefixed] = bestOfAlternating(300, renderer(true), renderer(false), 7);
    expect(bare / prefixed).toBeLessThan(1.5);
  });
});

describe("JSON output of lines of 1 MB under GitHub Actions", () => {
  it("takes about the time of plain output's: as text, each line's decoding, JSON.stringify, a search for a C1 control and the tail's searches for a \"\\r\" took 5-8 times its CPU", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const discard = (): Writable => new Writable({ write: (_chunk, _encoding, callback) => callback() });
    // Four lines of 1 MB, in the pipe's reads of 64 KiB, each through a splitter keeping lines whole (as under GitHub
    // Actions), into a renderer and the tail of the summary, as a task's output goes (see createShellHandler).
    const input = Buffer.from(`${"x".repeat(1_000_000)}\n`.repeat(4));
    const pipeline = (json: boolean): (() => void) => {
      const tail = new Tail(20);
      const renderer = json ? new JsonRenderer(discard(), true) : new PlainRenderer(discard(), colors, false, true, true);
      const splitter = new LineSplitter(
        (text) => {
          tail.push(text);
          renderer.line("big", "stdout", text);
        },
        (bytes, count, ends) => {
          tail.pushBlock(bytes, count, ends);
          renderer.lines("big", "stdout", bytes, count, ends);
        },
        { asWritten: !json, wholeLines: true },
      );
      return () => {
        for (let at = 0; at < input.length; at += 64 * 1024) splitter.push(input.subarray(at, at + 64 * 1024));
        tail.lines();
      };
    };
    const [json, plain] = bestOfAlternating(4, pipeline(true), pipeline(false), 9);
    // 1.4-2.1 here under load 8 (5.5-8.5 as text), with room for a loaded machine.
    expect(json / plain).toBeLessThan(3.5);
  });
});
