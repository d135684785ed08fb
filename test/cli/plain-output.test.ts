import { PassThrough, Writable } from "node:stream";
import { Chalk } from "chalk";
import { describe, expect, it } from "vitest";
import { BufferedWriter, whenStreamDrained } from "../../src/cli/output.js";
import { createColors } from "../../src/cli/render/colors.js";
import { PlainRenderer } from "../../src/cli/render/plain.js";
import { lineBlock } from "../helpers/line-blocks.js";

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
  it.each([
    ["finding the newlines itself", false],
    ["given where the lines end", true],
  ])("keeps text and prefixed lines in the order they were written, across flushes (%s)", async (_name, withEnds) => {
    const out = sink();
    const writer = new BufferedWriter(out.stream);
    const lines = (prefix: string, ...texts: string[]): void => {
      const [bytes, count, ends] = block(texts);
      writer.writePrefixedLines(Buffer.from(prefix), bytes, count, withEnds ? ends : undefined);
    };
    writer.write("a ");
    lines("> ", "b", "c");
    writer.write("d ");
    writer.write("e ");
    lines("é ", "f");
    writer.write("x".repeat(70_000)); // over the batch size: written at once
    writer.write(" g");
    lines("", " h");
    lines("| ", "y".repeat(300_000)); // larger than the buffer
    writer.write("€ end");
    writer.write("z".repeat(200_000)); // text larger than the buffer
    await settle();
    expect(out.bytes().toString()).toBe(`a > b\n> c\nd e é f\n${"x".repeat(70_000)} g h\n| ${"y".repeat(300_000)}\n€ end${"z".repeat(200_000)}`);
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

