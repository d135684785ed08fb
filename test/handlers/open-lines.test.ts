import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DISPLAY_LIMIT, LineSplitter, SHOW_OPEN_LINE_AFTER_MS } from "../../src/handlers/line-splitter.js";

const PERIOD = SHOW_OPEN_LINE_AFTER_MS;

/** A splitter that shows open lines after PERIOD, and the lines it gave, as text. */
function textSplitter(): { splitter: LineSplitter; lines: string[] } {
  const lines: string[] = [];
  return { splitter: new LineSplitter((text) => lines.push(text), undefined, { showOpenAfterMs: PERIOD }), lines };
}

/** As written (plain output into a file or a pipe): every line as the bytes handed on, "\n" included. */
function writtenSplitter(options: { wholeLines?: boolean } = {}): { splitter: LineSplitter; lines: string[] } {
  const lines: string[] = [];
  const onBlock = (bytes: Buffer, count: number, ends: Int32Array): void => {
    for (let line = 0, start = 0; line < count; start = ends[line] as number, line++) lines.push(bytes.toString("latin1", start, ends[line]));
  };
  return { splitter: new LineSplitter(() => expect.fail("as written, no line comes as text"), onBlock, { asWritten: true, showOpenAfterMs: PERIOD, ...options }), lines };
}

const push = (splitter: LineSplitter, text: string): void => splitter.push(Buffer.from(text, "latin1"));

/** Fake timers (the splitters' shared one-period timer and their clock) for each test of the describe it is called in. */
function useFakeTimersEachTest(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance"] });
  });
  afterEach(() => {
    // The shared timer runs out (it shows what is left open): the next test starts with none armed.
    vi.advanceTimersByTime(PERIOD * 2);
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
  });
}

describe("LineSplitter showing a line not ended yet (showOpenAfterMs)", () => {
  useFakeTimersEachTest();

  it("shows `waiting for db...` once held a period, and the rest of the line later as a line of its own", () => {
    const { splitter, lines } = textSplitter();
    push(splitter, "connecting\nwaiting for db...");
    expect(lines).toEqual(["connecting"]);
    vi.advanceTimersByTime(PERIOD - 1);
    expect(lines).toEqual(["connecting"]);
    vi.advanceTimersByTime(1);
    expect(lines).toEqual(["connecting", "waiting for db..."]);
    vi.advanceTimersByTime(30_000);
    expect(lines).toHaveLength(2); // shown once, not again each period
    push(splitter, "ok\nnext\n");
    splitter.flush();
    expect(lines).toEqual(["connecting", "waiting for db...", "ok", "next"]);
  });

  it("as written: the held bytes with taskq's newline, then the rest", () => {
    const { splitter, lines } = writtenSplitter();
    push(splitter, "waiting for db...");
    vi.advanceTimersByTime(PERIOD);
    expect(lines).toEqual(["waiting for db...\n"]);
    push(splitter, "ok\n");
    expect(lines).toEqual(["waiting for db...\n", "ok\n"]);
  });

  it("as written, holds back an escape sequence or a character the line's bytes cut short, to go with the rest of the line", () => {
    // Shown cut, the "\n" and the next prefix went into a hyperlink's URI, which taskq could not then end before its own lines.
    const { splitter, lines } = writtenSplitter();
    push(splitter, "wait \x1b]8;;https://exa");
    vi.advanceTimersByTime(PERIOD);
    expect(lines).toEqual(["wait \n"]);
    push(splitter, "mple.com\x1b\\link\n");
    expect(lines).toEqual(["wait \n", "\x1b]8;;https://example.com\x1b\\link\n"]);
    // A colour's code, a character's first byte of two: alike.
    push(splitter, "x \x1b[3");
    vi.advanceTimersByTime(PERIOD);
    push(splitter, "1mred\ncaf\xc3");
    vi.advanceTimersByTime(PERIOD);
    push(splitter, "\xa9\n");
    expect(lines.slice(2)).toEqual(["x \n", "\x1b[31mred\n", "caf\n", "\xc3\xa9\n"]);
  });

  it("as text (on a terminal), holds back an escape sequence or a character the line's bytes cut short too", () => {
    const { splitter, lines } = textSplitter();
    push(splitter, "x \x1b[3");
    vi.advanceTimersByTime(PERIOD);
    push(splitter, "1mred\ncaf\xc3");
    vi.advanceTimersByTime(PERIOD);
    push(splitter, "\xa9\n");
    expect(lines).toEqual(["x ", "\x1b[31mred", "caf", "é"]);
  });

  it("as written, shows nothing of a line that is all a sequence cut short, and what is held back once it stays so a period", () => {
    const { splitter, lines } = writtenSplitter();
    push(splitter, "\x1b]8;;https://exa");
    vi.advanceTimersByTime(PERIOD * 3);
    expect(lines).toEqual([]);
    push(splitter, "mple.com\x07link\n");
    expect(lines).toEqual(["\x1b]8;;https://example.com\x07link\n"]);
    push(splitter, "wait \x1b[");
    vi.advanceTimersByTime(PERIOD);
    expect(lines.slice(1)).toEqual(["wait \n"]);
    vi.advanceTimersByTime(PERIOD * 3);
    expect(lines.slice(1)).toEqual(["wait \n"]);
    push(splitter, "0mdone\n");
    expect(lines.slice(1)).toEqual(["wait \n", "\x1b[0mdone\n"]);
  });

  it("adds no empty line for a \"\\r\" alone after the line was shown (a progress bar's return before its newline), as written or as text", () => {
    for (const make of [writtenSplitter, textSplitter]) {
      const { splitter, lines } = make();
      push(splitter, "x");
      vi.advanceTimersByTime(PERIOD);
      push(splitter, "\r");
      vi.advanceTimersByTime(PERIOD * 2);
      push(splitter, "\n");
      push(splitter, "after\n");
      splitter.flush();
      expect(lines.map((line) => line.replace(/\n$/, ""))).toEqual(["x", "after"]);
    }
  });

  it("adds no empty line where the newline alone comes after the line was shown, nor at the end", () => {
    for (const ending of ["\n", "\r\n"]) {
      const { splitter, lines } = writtenSplitter();
      push(splitter, "waiting");
      vi.advanceTimersByTime(PERIOD);
      push(splitter, ending);
      push(splitter, "after\n");
      splitter.flush();
      expect(lines).toEqual(["waiting\n", "after\n"]);
    }
    const { splitter, lines } = textSplitter();
    push(splitter, "last words");
    vi.advanceTimersByTime(PERIOD);
    splitter.flush();
    expect(lines).toEqual(["last words"]);
  });

  it("shows a line written in pieces within a period whole", () => {
    const { splitter, lines } = textSplitter();
    push(splitter, "Compiling x ... ");
    vi.advanceTimersByTime(PERIOD / 2);
    push(splitter, "ok\nCompiling y ... ");
    // y's line began later: it is timed from then, not from x's.
    vi.advanceTimersByTime(PERIOD / 2);
    push(splitter, "ok\n");
    vi.advanceTimersByTime(PERIOD * 3);
    expect(lines).toEqual(["Compiling x ... ok", "Compiling y ... ok"]);
  });

  it("times a line begun in a chunk of its own from then, not from the line before it", () => {
    const { splitter, lines } = textSplitter();
    push(splitter, "first ");
    vi.advanceTimersByTime(PERIOD / 2);
    push(splitter, "line\n");
    push(splitter, "second ");
    vi.advanceTimersByTime(PERIOD / 2);
    expect(lines).toEqual(["first line"]);
    push(splitter, "line\n");
    vi.advanceTimersByTime(PERIOD * 2);
    expect(lines).toEqual(["first line", "second line"]);
  });

  it("shows a progress bar that never ends its line at its latest state, once a period, not every state", () => {
    const { splitter, lines } = writtenSplitter();
    for (let percent = 1; percent <= 25; percent++) {
      push(splitter, `\rdownloading ${percent * 4}%`);
      vi.advanceTimersByTime(PERIOD / 10);
    }
    // 2.5 periods of states, ten a period: two shown, each its latest state alone.
    expect(lines).toEqual(["\rdownloading 40%\n", "\rdownloading 80%\n"]);
    push(splitter, "\rdone\n");
    expect(lines.at(-1)).toBe("\rdownloading 84%\rdownloading 88%\rdownloading 92%\rdownloading 96%\rdownloading 100%\rdone\n");
  });

  it("cuts a long line held open as a line that ends is cut, with its length", () => {
    const { splitter, lines } = writtenSplitter();
    push(splitter, "y".repeat(DISPLAY_LIMIT + 10));
    vi.advanceTimersByTime(PERIOD);
    expect(lines).toEqual([`${"y".repeat(DISPLAY_LIMIT)}… (${DISPLAY_LIMIT + 10} bytes)\n`].map((line) => Buffer.from(line).toString("latin1")));
    push(splitter, "z\n");
    expect(lines.at(-1)).toBe("z\n");
  });

  it("keeps one timer for every splitter, and none while no line is open", () => {
    const splitters = Array.from({ length: 50 }, () => textSplitter());
    for (const { splitter } of splitters) push(splitter, "line\n".repeat(100));
    expect(vi.getTimerCount()).toBe(0);
    for (const { splitter } of splitters) for (let chunk = 0; chunk < 100; chunk++) push(splitter, "half a line");
    expect(vi.getTimerCount()).toBe(1);
    for (const { splitter } of splitters) push(splitter, "\n");
    vi.advanceTimersByTime(PERIOD);
    expect(vi.getTimerCount()).toBe(0);
    expect(splitters.every(({ lines }) => lines.length === 101 && lines[100] === "half a line".repeat(100))).toBe(true);
  });

  it("shows nothing early without the option", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((text) => lines.push(text));
    push(splitter, "waiting");
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(PERIOD * 10);
    expect(lines).toEqual([]);
  });
});

/** The 1 MiB a line kept whole holds at most (see LineSplitter's `wholeLines`). */
const WHOLE_LINE_LIMIT = 1024 * 1024;

/** `text` as the lines a written splitter gives (see writtenSplitter): its UTF-8 bytes, each a character. */
const latin1 = (text: string): string => Buffer.from(text).toString("latin1");

/** `text` pushed in pieces of `size` bytes. */
function pushInPieces(splitter: LineSplitter, text: string, size: number): void {
  for (let at = 0; at < text.length; at += size) push(splitter, text.slice(at, at + size));
}

describe("LineSplitter keeping lines whole (wholeLines: plain output under GitHub Actions)", () => {
  useFakeTimersEachTest();

  it("keeps a line written in many chunks whole up to 1 MiB, shown once it ends, however long that takes; one longer is cut as without wholeLines", () => {
    const line = `token ${"x".repeat(WHOLE_LINE_LIMIT - 6)}`;
    const { splitter, lines } = writtenSplitter({ wholeLines: true });
    for (let at = 0; at < line.length; at += 64 * 1024) {
      push(splitter, line.slice(at, at + 64 * 1024));
      vi.advanceTimersByTime(PERIOD);
    }
    expect(lines).toEqual([]);
    push(splitter, "\r\n");
    expect(lines).toEqual([`${line}\r\n`]);
    // A byte more, then a line of the bound's length again: cut as without wholeLines, and whole again after it.
    const longer = `${line}y`;
    const { splitter: cut, lines: cutLines } = writtenSplitter({ wholeLines: true });
    const { splitter: plain, lines: plainLines } = writtenSplitter();
    for (const each of [cut, plain]) pushInPieces(each, `${longer}\n${line}\n`, 64 * 1024);
    expect(cutLines).toEqual([latin1(`${"token ".padEnd(DISPLAY_LIMIT, "x")}… (${WHOLE_LINE_LIMIT + 1} bytes)\n`), `${line}\n`]);
    expect(cutLines[0]).toBe(plainLines[0]);
    // In one chunk the same.
    const { splitter: one, lines: oneLines } = writtenSplitter({ wholeLines: true });
    push(one, `${longer}\n${line}\n`);
    expect(oneLines).toEqual(cutLines);
  });

  it("shows a progress bar's states a \\r ended once a period, as written: `abc\\r\\rdef`, a \\r at a chunk's end, a \\r\\n ending", () => {
    // Two "\r": the states before the last go on as one line, with the "\r" it ended on; the last waits for the line's end.
    const { splitter, lines } = writtenSplitter({ wholeLines: true });
    push(splitter, "abc\r\rdef");
    vi.advanceTimersByTime(PERIOD);
    expect(lines).toEqual(["abc\r\n"]);
    push(splitter, "ghi\n");
    expect(lines).toEqual(["abc\r\n", "\rdefghi\n"]);
    // A "\r" that ends a chunk rewrites nothing yet: it may start a "\r\n".
    const { splitter: ends, lines: endsLines } = writtenSplitter({ wholeLines: true });
    push(ends, "a\rb");
    push(ends, "c\r");
    vi.advanceTimersByTime(PERIOD);
    expect(endsLines).toEqual(["a\n"]);
    push(ends, "\n");
    expect(endsLines).toEqual(["a\n", "\rbc\r\n"]);
    // A "\r\n" ending after a period: one line, not a state then an empty line.
    const { splitter: crlf, lines: crlfLines } = writtenSplitter({ wholeLines: true });
    push(crlf, "50%\r");
    vi.advanceTimersByTime(PERIOD * 3);
    expect(crlfLines).toEqual([]);
    push(crlf, "\nnext\n");
    expect(crlfLines).toEqual(["50%\r\n", "next\n"]);
  });

  it("hands on a 1 MiB line with no \\r ended by a \\r whole, and cuts a state after a \\r that passes 1 MiB alone", () => {
    // Up to the bound, then a "\r" and more in the chunk that crosses it: the line to the runner (up to its "\r") is whole.
    const first = "x".repeat(WHOLE_LINE_LIMIT - 10);
    const { splitter, lines } = writtenSplitter({ wholeLines: true });
    pushInPieces(splitter, first, 64 * 1024);
    push(splitter, "abcdefghij\rtoken: sec");
    vi.advanceTimersByTime(PERIOD);
    push(splitter, "ret\n");
    expect(lines).toEqual([`${first}abcdefghij\n`, "\rtoken: secret\n"]);
    // The state after the "\r" passing the bound: that state alone is cut, as without wholeLines, from its "\r".
    const { splitter: past, lines: pastLines } = writtenSplitter({ wholeLines: true });
    pushInPieces(past, `10%\r${"y".repeat(WHOLE_LINE_LIMIT + 5)}\n`, 64 * 1024);
    expect(pastLines).toEqual(["10%\n", latin1(`\r${"y".repeat(DISPLAY_LIMIT - 1)}… (${WHOLE_LINE_LIMIT + 6} bytes)\n`)]);
  });

  it("hands on the open line whole when the task ends without a newline, and the state that waits with it", () => {
    const long = `token ${"s".repeat(DISPLAY_LIMIT * 2)}`;
    const { splitter, lines } = writtenSplitter({ wholeLines: true });
    push(splitter, "done\n");
    pushInPieces(splitter, long, 1000);
    splitter.flush();
    expect(lines).toEqual(["done\n", `${long}\n`]);
    // A progress bar's last state, after the states before it went on.
    const { splitter: bar, lines: barLines } = writtenSplitter({ wholeLines: true });
    push(bar, "10%\rtoken: sec");
    vi.advanceTimersByTime(PERIOD);
    push(bar, "ret");
    bar.flush();
    expect(barLines).toEqual(["10%\n", "\rtoken: secret\n"]);
    // Ended by a "\r": kept with it.
    const { splitter: returned, lines: returnedLines } = writtenSplitter({ wholeLines: true });
    push(returned, "50%\r");
    returned.flush();
    expect(returnedLines).toEqual(["50%\r\n"]);
  });

  it("shows of a progress bar that ends each state with its \\r (`printf '%d%%\\r'`) each state a period late, and its last at the line's end", () => {
    // A "\r" counts once more of the line follows it: the state before it may be a value cut short.
    const { splitter, lines } = writtenSplitter({ wholeLines: true });
    push(splitter, "10%\r");
    vi.advanceTimersByTime(PERIOD);
    expect(lines).toEqual([]);
    push(splitter, "20%\r");
    vi.advanceTimersByTime(PERIOD);
    expect(lines).toEqual(["10%\n"]);
    push(splitter, "30%\r");
    vi.advanceTimersByTime(PERIOD);
    expect(lines).toEqual(["10%\n", "\r20%\n"]);
    vi.advanceTimersByTime(PERIOD * 5);
    expect(lines).toEqual(["10%\n", "\r20%\n"]);
    push(splitter, "\n");
    expect(lines).toEqual(["10%\n", "\r20%\n", "\r30%\r\n"]);
  });

  it("keeps a progress bar's last state whole when its states within a period pass 1 MiB: it hands on the states before it instead", () => {
    // 120,000 states of 9 bytes within a second, then a value's first part, the rest a period later: past the bound, the
    // states went on cut, the last of them, `\rtoken: sec`, shown alone, `ret` after it, and the value masked in neither.
    const states = Array.from({ length: 120_000 }, (_, i) => `\r${String(i).padStart(8)}`).join("");
    const { splitter, lines } = writtenSplitter({ wholeLines: true });
    pushInPieces(splitter, states, 64 * 1024);
    push(splitter, "\rtoken: sec");
    vi.advanceTimersByTime(PERIOD);
    push(splitter, "ret\n");
    expect(lines.at(-1)).toBe("\rtoken: secret\n");
    // Every state before it as written, none cut, each line at most the bound.
    expect(lines.slice(0, -1).map((line) => line.slice(0, -1)).join("")).toBe(states);
    expect(lines.every((line) => line.endsWith("\n") && line.length <= WHOLE_LINE_LIMIT + 1)).toBe(true);
    // In one chunk too: the states that go with the last in a line within the bound go with it.
    const { splitter: one, lines: oneLines } = writtenSplitter({ wholeLines: true });
    push(one, `${states}\rtoken: secret\n`);
    expect(oneLines.length).toBeGreaterThan(1);
    expect(oneLines.at(-1)).toMatch(/\rtoken: secret\n$/);
    expect(oneLines.map((line) => line.slice(0, -1)).join("")).toBe(`${states}\rtoken: secret`);
    expect(oneLines.every((line) => line.length <= WHOLE_LINE_LIMIT + 1)).toBe(true);
    // A state of 1 MiB, its "\r" past the bound: whole, and so is the state after it.
    const { splitter: full, lines: fullLines } = writtenSplitter({ wholeLines: true });
    const state = "s".repeat(WHOLE_LINE_LIMIT);
    pushInPieces(full, state, 64 * 1024);
    push(full, "\rtoken: secret\n");
    expect(fullLines).toEqual([`${state}\n`, "\rtoken: secret\n"]);
    const { splitter: crlf, lines: crlfLines } = writtenSplitter({ wholeLines: true });
    pushInPieces(crlf, `${state}\r\n`, 64 * 1024);
    expect(crlfLines).toEqual([`${state}\r\n`]);
  });
  it("keeps whole the states of a line whose kept bytes end in \\r at 1 MiB where more \\r come: `\\r\\rB`, `\\r\\r\\n`, `\\r` then `\\r\\n`, `\\r\\r\\r`", () => {
    // The state before them went (`\rBBB… (5001 bytes)`), and a line that ends so was cut, a "\r" put before it.
    const state = "A".repeat(WHOLE_LINE_LIMIT);
    const after = "B".repeat(5000);
    const cases: [string[], string[]][] = [
      [[`${state}\r\r${after}\n`], [`${state}\n`, `\r\r${after}\n`]],
      [[`${state}\r`, `\r${after}\n`], [`${state}\n`, `\r\r${after}\n`]],
      [[`${state}\r\r\r${after}\n`], [`${state}\n`, `\r\r\r${after}\n`]],
      [[`${state}\r\r\n`], [`${state}\r\r\n`]],
      [[`${state}\r`, "\r\n"], [`${state}\r\r\n`]],
      [["Q".repeat(10), `${state.slice(10)}\r\r\n`], [`${"Q".repeat(10)}${state.slice(10)}\r\r\n`]],
      [[`x\r${state.slice(1)}\r\r${after}\n`], ["x\n", `\r${state.slice(1)}\r\n`, `\r${after}\n`]],
      // A state of 1 MiB after a "\r": whole, as at the line's start.
      [[`x\r${state}\r${after}\n`], ["x\n", `\r${state}\n`, `\r${after}\n`]],
      [[`\r${state}\n`], [`\r${state}\n`]],
    ];
    for (const [pieces, expected] of cases) {
      const { splitter, lines } = writtenSplitter({ wholeLines: true });
      for (const piece of pieces) push(splitter, piece);
      splitter.flush();
      expect(lines).toEqual(expected);
    }
  });

  it("after a state longer than 1 MiB, cut, keeps the states after it whole again, as a line of their own", () => {
    // Before, every later state of the line went as without wholeLines: `\rtoken: sss… (5008 bytes)`, the value unmasked.
    const long = "y".repeat(WHOLE_LINE_LIMIT + 5);
    const token = `token: ${"s".repeat(5000)}`;
    const cut = latin1(`${"y".repeat(DISPLAY_LIMIT)}… (${WHOLE_LINE_LIMIT + 5} bytes)\n`);
    for (const size of [64 * 1024, WHOLE_LINE_LIMIT * 2]) {
      const { splitter, lines } = writtenSplitter({ wholeLines: true });
      pushInPieces(splitter, `${long}\r${token}\rdone\n`, size);
      expect(lines).toEqual([cut, `\r${token}\rdone\n`]);
    }
    // Its "\r" at a chunk's end.
    const { splitter, lines } = writtenSplitter({ wholeLines: true });
    push(splitter, `${long}\r`);
    push(splitter, `${token}\n`);
    expect(lines).toEqual([cut, `\r${token}\n`]);
  });

  it("cuts a state longer than 1 MiB after a \r however it comes, in one chunk too, and goes on with the states after it", () => {
    // In one chunk, the "\r" kept whole before it was taken for a cut state's end, and the line began again there, endlessly.
    const long = "y".repeat(WHOLE_LINE_LIMIT + 5);
    const cutAfter = (before: number) => latin1(`\r${"y".repeat(DISPLAY_LIMIT - before)}… (${WHOLE_LINE_LIMIT + 5 + before} bytes)\n`);
    for (const size of [64 * 1024, WHOLE_LINE_LIMIT * 4]) {
      const alone = writtenSplitter({ wholeLines: true });
      pushInPieces(alone.splitter, `\r${long}\n`, size);
      expect(alone.lines, `in pieces of ${size}`).toEqual([cutAfter(1)]);
      const after = writtenSplitter({ wholeLines: true });
      pushInPieces(after.splitter, `x\r${long}\rdone\n`, size);
      expect(after.lines, `in pieces of ${size}`).toEqual(["x\n", cutAfter(1), "\rdone\n"]);
    }
    const twice = writtenSplitter({ wholeLines: true });
    push(twice.splitter, `${long}\r`);
    push(twice.splitter, `${long}\n`);
    expect(twice.lines).toHaveLength(2);
    expect(twice.lines.join("")).not.toContain("y".repeat(DISPLAY_LIMIT + 1));
  });

  it("hands on a line of states each under 1 MiB as written, a \\n put only before a \\r, in whatever chunks it comes", () => {
    // Random lines of states near the bound, "\r" runs, "\r\n" and "\r\r\n" endings, cut into chunks at random and around
    // each "\r", some a period apart (their states shown then): a seeded generator, so a failure repeats.
    let seed = 0x9e3779b9;
    const random = (below: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % below;
    };
    const stateLength = (): number => [random(20), WHOLE_LINE_LIMIT - 1 - random(4), random(WHOLE_LINE_LIMIT)][random(3)] as number;
    const endings = ["\r", "\r\r", "\r\r\r", "\n", "\r\n", "\r\r\n"];
    for (let round = 0; round < 20; round++) {
      let input = "";
      const near: number[] = [];
      for (let state = 0, count = 2 + random(4); state < count; state++) {
        input += String.fromCharCode(0x61 + random(26)).repeat(stateLength());
        near.push(input.length + random(5) - 2);
        input += endings[random(endings.length)];
      }
      const cuts = [...near.filter(() => random(2) === 0), ...Array.from({ length: random(8) }, () => random(input.length))]
        .filter((at) => at > 0 && at < input.length)
        .sort((a, b) => a - b);
      const { splitter, lines } = writtenSplitter({ wholeLines: true });
      let from = 0;
      for (const at of [...cuts, input.length]) {
        push(splitter, input.slice(from, at));
        if (random(4) === 0) vi.advanceTimersByTime(PERIOD);
        from = at;
      }
      splitter.flush();
      // The output is the input, but for a "\n" before a "\r" (a state's line ended) and one at the end if it had none.
      const output = lines.join("");
      let at = 0;
      for (let out = 0; out < output.length; out++) {
        if (output[out] === input[at]) at++;
        else if (output[out] !== "\n" || (input[at] !== "\r" && (at < input.length || out < output.length - 1 || input.endsWith("\n")))) {
          expect.fail(`round ${round}: the output differs from the input at its byte ${at} of ${input.length}`);
        }
      }
      expect(at).toBe(input.length);
      // No line longer than the bound, its leading "\r" and its ending aside: no state held past it, none cut.
      for (const line of lines) expect(line.replace(/\r*\n$/, "").length).toBeLessThanOrEqual(WHOLE_LINE_LIMIT + 1);
    }
  });
});

/**
 * As JSON records take lines: short ones in blocks, the rest as text, none held open (no showOpenAfterMs). Each line as
 * its text, a block's marked `block:`.
 */
function jsonSplitter(options: { wholeLines?: boolean; lineState?: (text: string) => string } = {}): { splitter: LineSplitter; lines: string[] } {
  const lines: string[] = [];
  const onBlock = (bytes: Buffer, count: number, ends: Int32Array): void => {
    for (let line = 0, start = 0; line < count; start = ends[line] as number, line++) lines.push(`block:${bytes.toString("utf8", start, (ends[line] as number) - 1)}`);
  };
  return { splitter: new LineSplitter((text) => lines.push(text), onBlock, options), lines };
}

describe("LineSplitter keeping lines whole as text (wholeLines: JSON output under GitHub Actions)", () => {
  it("hands on a line longer than DISPLAY_LIMIT whole as its text up to 1 MiB, in one chunk or in many, a \r\n ending dropped; one longer is cut as without wholeLines", () => {
    const token = `ghs_${"T0k3n".repeat(7)}1`;
    const across = `${"x".repeat(DISPLAY_LIMIT - 16)}${token}`;
    const long = `token ${"é".repeat(100_000)}${token}`;
    const line = `log ${"x".repeat(WHOLE_LINE_LIMIT - 4)}`;
    const input = `short\n${across}\n${long}\r\n${line}\n${line}y\nlast`;
    const cut = `${`${line}y`.slice(0, DISPLAY_LIMIT)}… (${WHOLE_LINE_LIMIT + 1} bytes)`;
    // Pieces of an odd size split its characters ("é" is two bytes).
    const bytes = Buffer.from(input);
    for (const size of [bytes.length, 64 * 1024, 1001]) {
      const { splitter, lines } = jsonSplitter({ wholeLines: true });
      for (let at = 0; at < bytes.length; at += size) splitter.push(bytes.subarray(at, at + size));
      splitter.flush();
      // As bytes, as a block's lines, where a block could have them: all but one a "\r\n" ends, and one cut.
      expect(lines).toEqual(["block:short", `block:${across}`, long, `block:${line}`, cut, "block:last"]);
    }
    // Without wholeLines, or with lineState (a terminal's view, which no runner reads), cut as before.
    for (const options of [{}, { wholeLines: true, lineState: (text: string) => text }]) {
      const { splitter, lines } = jsonSplitter(options);
      splitter.push(Buffer.from(`${across}\n`));
      expect(lines).toEqual([`${across.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(across)} bytes)`]);
    }
  });

  it("hands on a line that \r rewrote as without wholeLines, its last state once past DISPLAY_LIMIT, but that state whole up to 1 MiB, in whatever chunks it comes", () => {
    // A record escapes its "\r": the runner reads it as one line, so a progress bar's earlier states mask nothing. Before,
    // a bar of 100,000 states made two records of 988,160 and 611,840 characters, every state in them.
    let bar = "";
    for (let i = 0; i < 100_000; i++) bar += `\rprogress ${String(i).padStart(6, "0")}`;
    const token = `ghs_${"T0k3n".repeat(7)}1`;
    const last = `\r${"y".repeat(5000)}${token}`;
    const huge = `\r${"z".repeat(WHOLE_LINE_LIMIT + 1)}`;
    const finished = `\rfinished ${"!".repeat(DISPLAY_LIMIT)}`;
    const cases: [input: string, whole: string[], plain?: string[]][] = [
      [`${bar}\n`, ["\rprogress 099999"]],
      // Before: three records, `start`, the state past 1 MiB cut, then `\rshort`.
      [`start\r${"x".repeat(1_100_000)}\rshort\n`, ["\rshort"]],
      [`${bar}${finished}\r\n`, [finished], [`${finished.slice(0, DISPLAY_LIMIT)}… (${finished.length} bytes)`]],
      // Its last state past DISPLAY_LIMIT: whole up to 1 MiB (its "\r" aside), a token at its end included; past that, cut.
      [`a\rb${last}\n`, [last], [`${last.slice(0, DISPLAY_LIMIT)}… (${last.length} bytes)`]],
      [`${bar}\r${"z".repeat(WHOLE_LINE_LIMIT)}\n`, [`\r${"z".repeat(WHOLE_LINE_LIMIT)}`], [`\r${"z".repeat(DISPLAY_LIMIT - 1)}… (${WHOLE_LINE_LIMIT + 1} bytes)`]],
      [`pre${huge}\n`, [`${huge.slice(0, DISPLAY_LIMIT)}… (${huge.length} bytes)`]],
      [`pre${huge}${last}\n`, [last], [`${last.slice(0, DISPLAY_LIMIT)}… (${last.length} bytes)`]],
      // Up to DISPLAY_LIMIT, whole, every state in it, as without wholeLines.
      [`dl 10%\rdl 50%\r${"d".repeat(DISPLAY_LIMIT - 14)}\n`, [`dl 10%\rdl 50%\r${"d".repeat(DISPLAY_LIMIT - 14)}`]],
    ];
    for (const [input, whole, plain = whole] of cases) {
      const bytes = Buffer.from(input);
      for (const size of [bytes.length, 64 * 1024, 1001, 16]) {
        for (const [options, expected] of [
          [{ wholeLines: true }, whole],
          [{}, plain],
        ] as const) {
          const { splitter, lines } = jsonSplitter(options);
          for (let at = 0; at < bytes.length; at += size) splitter.push(bytes.subarray(at, at + size));
          splitter.flush();
          expect(lines.map((line) => line.replace(/^block:/, ""))).toEqual(expected);
        }
      }
    }
  });

  it("gives the same records whatever the chunking, and where no state of a line passes DISPLAY_LIMIT, the records without wholeLines (property)", () => {
    const short = fc.string({ minLength: 0, maxLength: 3000, unit: fc.constantFrom("a", "é", "-") });
    // A state about the bound's length: with "\r"s after it, or a state before it, the line passes the bound.
    const long = fc.integer({ min: WHOLE_LINE_LIMIT - 4, max: WHOLE_LINE_LIMIT + 2 }).map((length) => "L".repeat(length));
    const piece = fc.oneof({ arbitrary: fc.constantFrom("\r", "\r\r", "\r\n", "\n"), weight: 4 }, { arbitrary: short, weight: 4 }, { arbitrary: long, weight: 1 });
    const records = (chunks: Buffer[], options: { wholeLines?: boolean }): string[] => {
      const { splitter, lines } = jsonSplitter(options);
      for (const chunk of chunks) splitter.push(chunk);
      splitter.flush();
      return lines.map((line) => line.replace(/^block:/, ""));
    };
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 400_000 }), { minLength: 1, maxLength: 8 }), (pieces, sizes) => {
        const input = Buffer.from(pieces.join(""));
        const chunks: Buffer[] = [];
        for (let at = 0, i = 0; at < input.length; at += sizes[i++ % sizes.length]!) chunks.push(input.subarray(at, at + sizes[i % sizes.length]!));
        const whole = records(chunks, { wholeLines: true });
        expect(whole).toEqual(records([input], { wholeLines: true }));
        const states = pieces.join("").split(/[\r\n]/);
        if (states.every((state) => Buffer.byteLength(state) <= DISPLAY_LIMIT)) expect(whole).toEqual(records(chunks, {}));
      }),
      { numRuns: 200 },
    );
  });

  it("holds bounded memory for a line that \r rewrites forever without a newline", () => {
    let states = "";
    for (let i = 0; states.length < 64 * 1024; i++) states += `\rprogress ${String(i).padStart(6, "0")}`;
    const chunk = Buffer.from(states);
    const { splitter, lines } = jsonSplitter({ wholeLines: true });
    splitter.push(chunk);
    const before = process.memoryUsage().arrayBuffers;
    // 64 MiB of states: kept, they held it all (the same chunk is pushed again, so only what the splitter keeps grows).
    for (let pushed = 0; pushed < 1024; pushed++) splitter.push(chunk);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
    expect(lines).toEqual([]);
    splitter.flush();
    expect(lines).toEqual([`block:${states.slice(states.lastIndexOf("\r"))}`]);
  });
});

describe("the timer that shows open lines", () => {
  it("never keeps the process alive", () => {
    const before = process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    const splitter = new LineSplitter(() => {}, undefined, { showOpenAfterMs: PERIOD });
    splitter.push(Buffer.from("waiting"));
    expect(process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length).toBe(before);
    splitter.flush();
  });
});
