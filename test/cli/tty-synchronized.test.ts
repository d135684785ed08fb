import { PassThrough } from "node:stream";
import { Chalk } from "chalk";
import ora from "ora";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Queue } from "../../src/engine/index.js";
import { TtyRenderer } from "../../src/cli/render/tty.js";

afterEach(() => {
  vi.useRealTimers();
});

const BEGIN = "\x1b[?2026h";
const END = "\x1b[?2026l";

/** A terminal's stream as ora uses it, keeping what is written; `full` makes each write say it must wait for 'drain'. */
function fakeTerminal() {
  const written: string[] = [];
  const stream = Object.assign(new PassThrough(), {
    isTTY: true,
    columns: 80,
    rows: 24,
    full: false,
    cursorTo: () => true,
    moveCursor: () => true,
    clearLine: () => true,
  });
  const write = stream.write.bind(stream);
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    written.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    return !stream.full;
  }) as typeof stream.write;
  stream.resume(); // what is written is read away
  return { stream, written };
}

/** Where a synchronized update is left open at the end of `text` (a begin inside one begins nothing: ora's frame nests in the board's). */
function openUpdates(text: string): number[] {
  const open: number[] = [];
  let begun: number | undefined;
  // eslint-disable-next-line no-control-regex -- the escapes that begin and end an update
  for (const match of text.matchAll(/\x1b\[\?2026([hl])/g)) {
    if (match[1] === "h") begun ??= match.index;
    else begun = undefined;
  }
  if (begun !== undefined) open.push(begun);
  return open;
}

describe("the live board's synchronized updates", () => {
  it("ends each one it begins, also when the terminal's stream is full and ora puts its frame off until it drains", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "setTimeout", "clearTimeout", "Date"] });
    const { stream, written } = fakeTerminal();
    const spinner = ora({ stream: stream as unknown as NodeJS.WriteStream, isEnabled: true, discardStdin: false, hideCursor: false, interval: 2 ** 31 - 1 });
    const renderer = new TtyRenderer(spinner, stream as unknown as NodeJS.WriteStream, new Chalk({ level: 0 }));
    const queue = new Queue({ concurrency: 1, handlers: { shell: () => new Promise(() => {}) } });
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: 1, concurrency: 1, maxAttempts: new Map() });
    try {
      expect(written.join("")).toContain(END); // the first frame
      for (let tick = 0; tick < 4; tick++) {
        // From the second tick on, the stream is full: ora draws no frame until 'drain'.
        stream.full = tick > 0;
        renderer.line("build", "stdout", `line ${tick}`);
        vi.advanceTimersByTime(100);
        const text = written.join("");
        expect(text).toContain(`line ${tick}\n`);
        expect(openUpdates(text), JSON.stringify(text.slice(-300))).toEqual([]);
      }
      // The frame comes back once the stream drains, in an update of its own.
      stream.full = false;
      const before = written.length;
      stream.emit("drain");
      expect(written.slice(before).join("")).toContain(BEGIN);
      expect(openUpdates(written.join(""))).toEqual([]);
    } finally {
      spinner.stop();
    }
  });
});
