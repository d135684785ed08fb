import path from "node:path";
import xterm from "@xterm/headless";
import { afterEach, describe, expect, it } from "vitest";
import { runIds, workspace } from "../helpers/cli.js";
import { eventually, findLeftovers } from "../helpers/processes.js";
import { taskqOnPty, type PtyOptions, type Size } from "../helpers/pty.js";

// The live board under a real pty, its bytes replayed in xterm.js (headless) to see what a user
// sees: the screen and the scrollback once the run is over.

let logRoots: string[] = [];
afterEach(async () => {
  // Within seconds: where a signal's default action ended taskq, its guard stops the tasks once it has died.
  for (const logs of logRoots) for (const runId of await runIds(logs)) expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 10_000)).toBe(true);
  logRoots = [];
});

interface Resize {
  to: Size;
  /** Once this has matched `count` times in the output, and the board is drawn below. */
  when: string;
  count: number;
  /** Resized again to `to`, `after` seconds later. */
  back?: { to: Size; after: number };
}

/**
 * Runs `taskq run` on the workflow on a pty of `size` (`fromStdin`: `taskq run -`, the workflow on
 * its stdin), resized as `resize` says, with `key` typed and job control as `bgFg` says; its bytes, its exit code, where it was resized, and whether the
 * terminal echoes typing after it.
 */
async function runOnPty(
  yaml: string,
  size: Size,
  { resize, fromStdin, ...rest }: { resize?: Resize; fromStdin?: boolean } & Pick<PtyOptions, "key" | "bgFg" | "stopFg" | "flush" | "signal"> = {},
): Promise<{ bytes: Buffer; code: number; resizedAt: number | null; echo: boolean | null }> {
  const ws = await workspace(yaml);
  logRoots.push(ws.logs);
  const go = path.join(ws.dir, "go");
  const options = { cwd: ws.dir, size, ...(resize === undefined ? {} : { resize: { ...resize, touch: go } }), ...(fromStdin === true ? { stdin: ws.file } : {}), ...rest };
  return taskqOnPty(["run", fromStdin === true ? "-" : ws.file, "--log-dir", ws.logs], options, { GO: go });
}

/**
 * The lines of the screen and scrollback after replaying `bytes` on a terminal of `size`,
 * resized at byte `resizedAt` as the pty was; rows a line wrapped into joined again.
 * `reflowCursorLine`: whether the terminal rewraps the cursor's row too (VTE, kitty) or not (xterm.js's default).
 */
async function screen(bytes: Buffer, size: Size, resize: { at: number; to: Size } | undefined, reflowCursorLine: boolean): Promise<string[]> {
  const terminal = new xterm.Terminal({ cols: size.cols, rows: size.rows, scrollback: 100_000, allowProposedApi: true, reflowCursorLine });
  const write = (data: Buffer) => new Promise<void>((resolve) => terminal.write(data, resolve));
  await write(bytes.subarray(0, resize?.at ?? bytes.length));
  if (resize !== undefined) {
    terminal.resize(resize.to.cols, resize.to.rows);
    await write(bytes.subarray(resize.at));
  }
  const buffer = terminal.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < buffer.length; i++) {
    const row = buffer.getLine(i);
    if (row === undefined) continue;
    const wrapsOn = buffer.getLine(i + 1)?.isWrapped === true;
    const text = row.translateToString(!wrapsOn);
    if (row.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  terminal.dispose();
  return lines;
}

/** A line of the board: its totals, a running task's row, "… N more", or ora's cut. */
const BOARD_LINE = /\d+\/\d+ done|▶|… \d+ more|content truncated/;

describe("the live board on a terminal", () => {
  it("leaves no stale copy in the scrollback when the terminal gets narrower mid-run, whether it rewraps the cursor's row or not", async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `build-component-number-${i}-with-a-longish-name`);
    // Each task writes a line, waits for the resize (the driver makes $GO after it), then writes another a moment later.
    const yaml = `concurrency: 8\ntasks:\n${ids
      .map((id) => `  ${id}:\n    run: echo "step 1 of ${id}"; while [ ! -e "$GO" ]; do sleep 0.05; done; sleep 0.5; echo "step 2 of ${id}"; sleep 0.3\n`)
      .join("")}`;
    const size = { cols: 100, rows: 30 };
    const to = { cols: 50, rows: 30 };
    const { bytes, resizedAt } = await runOnPty(yaml, size, { resize: { to, when: "step 1 of ", count: ids.length } });
    for (const reflowCursorLine of [false, true]) {
      const lines = await screen(bytes, size, { at: resizedAt as number, to }, reflowCursorLine);
      expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
      // Every line of the tasks' output is there, once: the clearing took none of it.
      for (const id of ids) for (const step of [1, 2]) expect(lines.filter((line) => line === `${id} | step ${step} of ${id}`)).toHaveLength(1);
      expect(lines.filter((line) => line.startsWith("Summary: 8 succeeded, 0 failed"))).toHaveLength(1);
    }
  });

  it("with 50 tasks running, leaves a third of the screen to task output, and no board rows in the scrollback when the terminal loses up to a third of its rows", async () => {
    // The board took all rows but one: the output flashed through that one, and a terminal made shorter pushed board rows
    // into its scrollback (24 rows made 16 left 7 of them there), where no redraw reaches.
    const ids = Array.from({ length: 50 }, (_, i) => `t${String(i).padStart(2, "0")}`);
    const yaml = `concurrency: 50\ntasks:\n${ids
      .map((id) => `  ${id}:\n    run: echo "hello from ${id}"; while [ ! -e "$GO" ]; do sleep 0.1; done; sleep 1; echo "bye from ${id}"\n`)
      .join("")}`;
    const size = { cols: 80, rows: 24 };
    const to = { cols: 80, rows: 16 };
    const { bytes, resizedAt } = await runOnPty(yaml, size, { resize: { to, when: "hello from ", count: ids.length } });
    // Before the resize: the board's rows on the screen, at most two thirds of them.
    const before = await screen(bytes.subarray(0, resizedAt as number), size, undefined, false);
    expect(before.slice(-size.rows).filter((line) => BOARD_LINE.test(line)).length).toBeLessThanOrEqual(16);
    const lines = await screen(bytes, size, { at: resizedAt as number, to }, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    for (const id of ids) for (const word of ["hello", "bye"]) expect(lines.filter((line) => line === `${id} | ${word} from ${id}`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 50 succeeded, 0 failed"))).toHaveLength(1);
  }, 60_000);

  it("shows a progress bar that rewrites its line with `\\r` and writes no newline on its task's row as it goes, not only once it ends", async () => {
    const yaml = 'tasks:\n  prog:\n    run: for i in 1 2 3; do printf "\\r%d%%" $i; sleep 0.6; done\n';
    const size = { cols: 80, rows: 24 };
    const { bytes, code } = await runOnPty(yaml, size);
    expect(code).toBe(0);
    // eslint-disable-next-line no-control-regex -- the colours between the text
    const text = bytes.toString("utf8").replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "");
    // Each state on the row while it runs, before the line (its last state) scrolls above the board at the end.
    const last = text.indexOf("prog | 3%");
    expect(last).toBeGreaterThan(0);
    for (const state of ["1%", "2%", "3%"]) expect(text.slice(0, last)).toMatch(new RegExp(`▶ prog {2}attempt 1/1 {2}\\S+ {2}${state}\\r?$`, "m"));
  });

  it("shows a line's latest `\\r` state on its task's row in the colour set before that `\\r`, as a terminal shows it", async () => {
    // A colour set before a carriage return holds after it: a terminal shows "50%" in red.
    const yaml = "tasks:\n  prog:\n    run: printf '\\033[31mdownloading\\r50%%'; sleep 1.5; printf '\\n'\n";
    const { bytes, code } = await runOnPty(yaml, { cols: 80, rows: 24 });
    expect(code).toBe(0);
    const text = bytes.toString("utf8");
    const last = text.indexOf("prog |");
    expect(last).toBeGreaterThan(0);
    // eslint-disable-next-line no-control-regex -- the colour is the point
    expect(text.slice(0, last)).toMatch(/▶\x1b\[39m prog {2}attempt 1\/1 {2}\S+ {2}\x1b\[31m50%/);
  });

  it("takes the board off while the terminal reports a size of 0x0, task output going on as lines, and draws it again once it has a size", async () => {
    // ora counts a frame's rows by the width: with 0 columns it cleared none, and every redraw left a frame behind.
    const yaml = 'tasks:\n  a: { run: "echo a-0; while [ ! -e \\"$GO\\" ]; do sleep 0.05; done; for i in 1 2 3 4 5 6 7 8; do echo a-$i; sleep 0.3; done" }\n';
    const size = { cols: 80, rows: 24 };
    const { bytes } = await runOnPty(yaml, size, { resize: { to: { cols: 0, rows: 0 }, when: "a-0", count: 1, back: { to: size, after: 1.2 } } });
    // The screen keeps its size: only what the terminal reports changes.
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    for (let i = 0; i <= 8; i++) expect(lines.filter((line) => line === `a | a-${i}`)).toHaveLength(1);
    expect(lines.filter((line) => line.includes("note: the terminal reports no width (0 columns)"))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 0 failed"))).toHaveLength(1);
    // No board while the size is 0x0 (a-1 comes as it is reported, a-2 0.3 s later), and the board again from 1.2 s on (a-8 comes at 2.1 s).
    // eslint-disable-next-line no-control-regex -- the colours between the text
    const text = bytes.toString("utf8").replace(/\x1b\[[0-9;]*m/g, "");
    expect(text.indexOf("a | a-1")).toBeGreaterThan(0);
    expect(text.slice(text.indexOf("a | a-1"), text.indexOf("a | a-2"))).not.toContain("0/1 done");
    expect(text.slice(text.indexOf("a | a-8"))).toContain("0/1 done");
  });

  it("drops the bidirectional overrides and isolates of task output, and writes those of an error as \\u202e, so none reorders what the terminal shows", async () => {
    // U+202E (RLO) reversed the rest of its line where a terminal orders text both ways (VTE), U+2066 (LRI) moved it.
    const yaml = "tasks:\n  a:\n    run: printf 'a-\\342\\200\\256desrever \\342\\201\\246iso\\342\\201\\251 end\\n'; sleep 1\n  b:\n    run: \"true\"\n    cwd: \"sub\\u202Edir\"\n";
    const size = { cols: 100, rows: 24 };
    const { bytes } = await runOnPty(yaml, size);
    expect(bytes.toString("utf8")).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => line === "a | a-desrever iso end")).toHaveLength(1);
    expect(lines.filter((line) => line.includes(String.raw`✗ b failed: could not start: working directory`) && line.includes(String.raw`/sub\u202edir`))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 1 failed"))).toHaveLength(1);
  });

  it("fits tiny terminals: never taller than the screen nor wider than a row, so no redraw leaves a copy behind", async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `task-${String(i).padStart(2, "0")}`);
    const yaml = `concurrency: 12\ntasks:\n${ids.map((id) => `  ${id}:\n    run: sleep 1; echo "out of ${id}"\n`).join("")}`;
    const sizes = [
      { cols: 15, rows: 30 },
      { cols: 20, rows: 4 },
      { cols: 30, rows: 3 },
      { cols: 40, rows: 2 },
    ];
    // All at once, and every run over before the first check.
    const screens = await Promise.all(sizes.map(async (size) => screen((await runOnPty(yaml, size)).bytes, size, undefined, false)));
    for (const [i, lines] of screens.entries()) {
      const size = `${sizes[i]?.cols}x${sizes[i]?.rows}`;
      expect(lines.filter((line) => BOARD_LINE.test(line)), size).toEqual([]);
      for (const id of ids) expect(lines.filter((line) => line === `${id} | out of ${id}`), size).toHaveLength(1);
      expect(lines.filter((line) => line.startsWith("Summary: 12 succeeded, 0 failed")), size).toHaveLength(1);
    }
  });

  it("keeps every line of task output on a terminal of one column, which the spinner's row took one of at each redraw", async () => {
    // The first row of the board, the spinner and a space: two rows of one column to ora's count,
    // one on a terminal at least two wide (xterm.js, here), so each clear went a row too high.
    const yaml = 'tasks:\n  a: { run: "for i in 1 2 3 4 5 6; do echo a-$i; sleep 0.3; done" }\n';
    const size = { cols: 1, rows: 24 };
    const { bytes } = await runOnPty(yaml, size);
    const lines = await screen(bytes, size, undefined, false);
    for (let i = 1; i <= 6; i++) expect(lines.filter((line) => line === `a | a-${i}`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 0 failed"))).toHaveLength(1);
  });

  it("measures wide characters in columns, so rows holding them do not wrap and the board stays on a short screen", async () => {
    const wide = "漢字".repeat(20);
    // Each failed task's row (its cwd, past its workspace's path of some 60 columns) lingers on
    // the board while "slow" runs. (No emoji on the board: xterm.js gives them one column, as
    // Unicode 6 did, where terminals now give two.)
    const failing = ["w1", "w2", "w3", "w4", "w5"];
    const yaml = `concurrency: 6\ntasks:\n${failing.map((id) => `  ${id}:\n    run: echo hi\n    cwd: ${wide}-${id}\n`).join("")}  slow:\n    run: echo "🎉🎉🎉 ${wide}"; sleep 1.5\n`;
    const size = { cols: 100, rows: 10 };
    const { bytes } = await runOnPty(yaml, size);
    const lines = await screen(bytes, size, undefined, false);
    // The board's rows for them, cut ("…"); the summary's dead letters say the same in full.
    expect(lines.filter((line) => BOARD_LINE.test(line) || /^ {2}✗ w\d: .*…$/.test(line))).toEqual([]);
    for (const id of failing) expect(lines.filter((line) => line.includes(`✗ ${id} failed: could not start`))).toHaveLength(1);
    expect(lines.filter((line) => line === `slow | 🎉🎉🎉 ${wide}`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 5 failed"))).toHaveLength(1);
  });

  it("shows the running tasks first when more tasks wait than the screen has rows for, not behind the waiting ones as `… N more`", async () => {
    // 30 tasks delayed from the start (on the board from their submit) and 3 that run meanwhile:
    // the running ones came last, and a screen of 12 rows showed 8 waiting tasks and "… 25 more".
    const later = Array.from({ length: 30 }, (_, i) => `  later-${String(i).padStart(2, "0")}: { run: "true", delay: 3s }\n`).join("");
    const now = [0, 1, 2].map((i) => `  now-${i}: { run: "sleep 1.5; echo now-${i}" }\n`).join("");
    const size = { cols: 80, rows: 12 };
    const { bytes } = await runOnPty(`concurrency: 4\ntasks:\n${later}${now}`, size);
    // eslint-disable-next-line no-control-regex -- the colours between the text
    const text = bytes.toString("utf8").replace(/\x1b\[[0-9;]*m/g, "");
    for (const i of [0, 1, 2]) expect(text).toContain(`▶ now-${i}  attempt 1/1`);
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    expect(lines.filter((line) => line.startsWith("Summary: 33 succeeded, 0 failed"))).toHaveLength(1);
  });

  it("keeps what is typed during a run off the board: Enter, pressed three times, leaves no copy of the board behind, and the terminal echoes again after the run", async () => {
    // With echo on, each Enter moved the cursor a row down, below the board, and the next redraw
    // missed the board's top row: a stale "0/3 done" line per Enter.
    const yaml = 'tasks:\n  a: { run: "sleep 1.5; echo a-done" }\n  b: { run: "sleep 2; echo b-done" }\n  c: { run: "echo c-done", dependsOn: [a] }\n';
    const size = { cols: 80, rows: 24 };
    const { bytes, echo } = await runOnPty(yaml, size, { key: { text: "\r\r\r", when: String.raw`0/3 done`, gap: 0.3 } });
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    for (const id of ["a", "b", "c"]) expect(lines.filter((line) => line === `${id} | ${id}-done`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 3 succeeded, 0 failed"))).toHaveLength(1);
    expect(echo).toBe(true);
  });

  it("keeps what is typed off the board when the workflow comes on stdin (`generate | taskq run -`), not the terminal", async () => {
    // Echo was turned off on stdin alone: with the workflow there, it stayed on, and each Enter left a copy of the board's top row.
    const yaml = 'tasks:\n  a: { run: "sleep 1.5; echo a-done" }\n  b: { run: "sleep 2; echo b-done" }\n';
    const size = { cols: 80, rows: 24 };
    const { bytes, echo } = await runOnPty(yaml, size, { fromStdin: true, key: { text: "\r\r\r", when: String.raw`0/2 done`, gap: 0.3 } });
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    for (const id of ["a", "b"]) expect(lines.filter((line) => line === `${id} | ${id}-done`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 2 succeeded, 0 failed"))).toHaveLength(1);
    expect(echo).toBe(true);
  });

  it("goes on as plain lines, with no board over the shell's prompt, while stopped with Ctrl-Z and continued with `bg`, and brings the board back at `fg`", async () => {
    const yaml = 'tasks:\n  a: { run: "for i in 1 2 3 4 5 6 7 8; do echo a-$i; sleep 0.4; done" }\n';
    const size = { cols: 80, rows: 24 };
    const { bytes, echo } = await runOnPty(yaml, size, { key: { text: "\x1a", when: "a-2" }, bgFg: 1.2 });
    // eslint-disable-next-line no-control-regex -- the colours and cursor moves between the text
    const text = bytes.toString("utf8").replace(/\x1b\[[0-9;]*[A-HJKSTfmsu]/g, "");
    const [before, inBackground, after] = [text.slice(0, text.indexOf("$ bg")), text.slice(text.indexOf("$ bg"), text.indexOf("$ fg")), text.slice(text.indexOf("$ fg"))];
    expect(before).toContain("0/1 done");
    // In the background: the task's lines, and no board (no hidden cursor, no totals line).
    expect(inBackground).toMatch(/a \| a-\d/);
    expect(inBackground).not.toContain("\x1b[?25l");
    expect(inBackground).not.toContain("done");
    expect(after).toContain("0/1 done");
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    for (let i = 1; i <= 8; i++) expect(lines.filter((line) => line === `a | a-${i}`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 0 failed"))).toHaveLength(1);
    expect(echo).toBe(true);
  });

  it("draws the board at the terminal's new size after `fg` when the window was resized while taskq was stopped (Ctrl-Z), with no copy left above", async () => {
    // Stopped, taskq gets no SIGWINCH (the shell is the foreground job then), and `fg` sends none. The
    // first frame after `fg` was drawn at the old size: ten rows of 60 columns on a screen of 30x8,
    // three rows each, and the top of it scrolled off where no redraw reaches.
    const ids = Array.from({ length: 8 }, (_, i) => `build-component-number-${i}-with-a-longish-name`);
    const yaml = `concurrency: 8\ntasks:\n${ids.map((id) => `  ${id}:\n    run: for i in 1 2 3 4 5 6 7 8; do echo ${id.slice(-25)}-$i; sleep 0.4; done\n`).join("")}`;
    const size = { cols: 100, rows: 30 };
    const to = { cols: 30, rows: 8 };
    const { bytes } = await runOnPty(yaml, size, { key: { text: "\x1a", when: String.raw`-2\r\n[\s\S]*0/8 done` }, stopFg: to });
    // The screen takes its new size after the shell's line saying so (its end, "\r\n", is "\r\r\n" on the terminal).
    const marker = bytes.indexOf(`$ stty cols ${to.cols} rows ${to.rows}`);
    expect(marker).toBeGreaterThan(0);
    const at = bytes.indexOf("\n", marker) + 1;
    const lines = await screen(bytes, size, { at, to }, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    for (const id of ids) for (let i = 1; i <= 8; i++) expect(lines.filter((line) => line === `${id} | ${id.slice(-25)}-${i}`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 8 succeeded, 0 failed"))).toHaveLength(1);
  });

  it("draws the board once per tick of its timer, ten times a second, its spinner turning at each", async () => {
    // ora's own timer (80 ms) redrew the whole board between the board's own redraws (100 ms): some 22 frames a second.
    const yaml = 'tasks:\n  a: { run: "echo a-started; sleep 3.5; echo a-done" }\n';
    const size = { cols: 80, rows: 24 };
    const { bytes } = await runOnPty(yaml, size);
    const text = bytes.toString("utf8");
    // Each frame is one synchronized update ("\x1b[?2026h"); those while "a" ran quietly, once its
    // row shows its time to the tenth of a second (past 1 s), which times them.
    const frames = text
      .slice(text.indexOf("a-started"), text.indexOf("a-done"))
      .split("\x1b[?2026h")
      .slice(1)
      // eslint-disable-next-line no-control-regex -- the colours and cursor moves between the text
      .map((frame) => frame.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ""))
      .map((frame) => ({ glyph: frame.charAt(0), seconds: /attempt 1\/1 {2}(\d+(?:\.\d+)?)s\r\n/.exec(frame)?.[1] }))
      .filter((frame) => frame.seconds !== undefined);
    const elapsed = Number(frames.at(-1)?.seconds) - Number(frames[0]?.seconds);
    expect(elapsed).toBeGreaterThan(1.5);
    const perSecond = (frames.length - 1) / elapsed;
    expect(perSecond).toBeLessThan(13);
    expect(perSecond).toBeGreaterThan(3); // still drawn, on a loaded machine too
    // The spinner turns at every frame, as ora's timer turned it.
    for (let i = 1; i < frames.length; i++) expect(frames[i]?.glyph, `frame ${i}`).not.toBe(frames[i - 1]?.glyph);
    expect(new Set(frames.map((frame) => frame.glyph)).size).toBeGreaterThan(5);
  });

  it("clears the board, writes the tasks' lines and draws it again in one synchronized update, so a terminal never shows the board gone", async () => {
    // Only ora's frame was synchronized ("\x1b[?2026h" to "\x1b[?2026l"): the clear of the board's rows and the lines
    // written above it came before, and a terminal that painted then showed the board wiped, at each tick with output.
    const ids = Array.from({ length: 6 }, (_, i) => `loud-${i}`);
    const yaml = `concurrency: 6\ntasks:\n${ids.map((id) => `  ${id}:\n    run: for i in $(seq 1 25); do echo ${id}-$i; sleep 0.05; done\n`).join("")}`;
    const size = { cols: 80, rows: 24 };
    const { bytes } = await runOnPty(yaml, size);
    // A terminal that honours synchronized updates may paint anywhere outside one: at each escape or line's end there,
    // once the first frame is drawn and until the last (then the board goes for good), the screen shows the board.
    const terminal = new xterm.Terminal({ cols: size.cols, rows: size.rows, scrollback: 10_000, allowProposedApi: true });
    const write = (data: Buffer) => new Promise<void>((resolve) => terminal.write(data, resolve));
    const text = bytes.toString("latin1");
    const first = text.indexOf("\x1b[?2026l");
    const last = text.lastIndexOf("\x1b[?2026l");
    expect(first).toBeGreaterThan(0);
    const paints: number[] = [];
    let synchronized = false;
    // eslint-disable-next-line no-control-regex -- the escapes where a terminal may paint
    for (const match of text.matchAll(/\x1b\[\?2026[hl]|\x1b|\n/g)) {
      if (match[0] === "\x1b[?2026h") synchronized = true;
      else if (match[0] === "\x1b[?2026l") synchronized = false;
      else if (!synchronized && match.index > first && match.index < last) paints.push(match.index);
    }
    let at = 0;
    const gone: string[] = [];
    for (const paint of paints) {
      await write(bytes.subarray(at, paint));
      at = paint;
      const buffer = terminal.buffer.active;
      const rows = Array.from({ length: size.rows }, (_, row) => buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? "");
      if (!rows.some((row) => / \d+\/6 done/.test(row))) gone.push(`at byte ${paint}: ${JSON.stringify(rows.filter((row) => row !== ""))}`);
    }
    terminal.dispose();
    expect(gone.length, gone.slice(0, 3).join("\n")).toBe(0);
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    for (const id of ids) for (let i = 1; i <= 25; i++) expect(lines.filter((line) => line === `${id} | ${id}-${i}`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 6 succeeded, 0 failed"))).toHaveLength(1);
  });

  it("draws the board below a task's last line as things are then, not as at the timer's last tick: the run's end is shown over, its tasks done", async () => {
    // The board's text was made at each tick, and the redraw after the last lines (at the end of
    // the run) drew that: "b | published" came with "1/2 done" and b still running above it.
    const yaml = 'tasks:\n  a: { run: "sleep 0.3" }\n  b: { run: "sleep 0.3; echo published", dependsOn: a }\n';
    const size = { cols: 80, rows: 24 };
    const { bytes, code } = await runOnPty(yaml, size);
    expect(code).toBe(0);
    // Each frame is one synchronized update ("\x1b[?2026h"), the lines written before it in the segment before.
    const segments = bytes
      .toString("utf8")
      .split("\x1b[?2026h")
      // eslint-disable-next-line no-control-regex -- the colours and cursor moves between the text
      .map((segment) => segment.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ""));
    const at = segments.findIndex((segment) => segment.includes("b | published"));
    expect(at).toBeGreaterThan(0);
    // The frame on the screen when the line came: the clear of the board and the lines above it begin an update of their
    // own, the line's segment then, so the frame before it is the last segment up to it that holds one.
    const before = segments.slice(0, at + 1).findLast((segment) => / \d\/2 done/.test(segment)) as string;
    const after = segments[at + 1] as string;
    expect(after).toMatch(/ \d\/2 done/);
    // Drawn at a tick of the timer (its spinner turned) while b had yet to end, or at the run's
    // end (the line came after the last tick), where both are done.
    if (after.charAt(0) === before.charAt(0)) {
      expect(after).toContain("2/2 done");
      expect(after).toContain("✓ b");
      expect(after).not.toContain("▶");
    } else {
      expect(after).toContain("▶ b");
    }
    expect(segments.join("")).toContain("Summary: 2 succeeded, 0 failed");
  });

  it("ignores SIGUSR1, saying so above the board, where Node opened its debugger and printed behind the board's back", async () => {
    // Node's "Debugger listening on ws://..." and "For help, see: ..." went to the terminal between
    // two frames: the next clear took them for the board's rows, and left two board lines behind.
    const yaml = 'tasks:\n  a: { run: "for i in 1 2 3 4 5 6; do echo a-$i; sleep 0.3; done" }\n';
    const size = { cols: 80, rows: 24 };
    const { bytes, code } = await runOnPty(yaml, size, { signal: { name: "USR1", when: String.raw`a-2\r\n[\s\S]*0/1 done` } });
    expect(code).toBe(0);
    expect(bytes.toString("utf8")).not.toContain("Debugger listening");
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    expect(lines.filter((line) => line.startsWith("taskq: SIGUSR1 ignored"))).toHaveLength(1);
    for (let i = 1; i <= 6; i++) expect(lines.filter((line) => line === `a | a-${i}`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 0 failed"))).toHaveLength(1);
  });

  it("gives the terminal its echo back when Ctrl-\\ (SIGQUIT) ends taskq, which ends by that signal; its guard stops the task", async () => {
    // Run outside an interactive shell (a make recipe, a script), nothing else gives it back:
    // what the user typed next was not shown.
    const yaml = 'tasks:\n  a: { run: "echo a-started; sleep 30" }\n';
    const size = { cols: 80, rows: 24 };
    const { code, echo } = await runOnPty(yaml, size, { key: { text: "\x1c", when: String.raw`a-started[\s\S]*0/1 done` } });
    expect(code).toBe(-3); // python's returncode for a process ended by signal 3
    expect(echo).toBe(true);
    // afterEach checks that the task is gone: the guard gives it SIGTERM once taskq has died.
    const [logs] = logRoots;
    const [runId] = await runIds(logs!);
    expect(await eventually(async () => (await findLeftovers(runId!)).length === 0, 10_000)).toBe(true);
  });

  it("gives the terminal its echo back when another signal whose default ends a process (SIGUSR2, SIGALRM) ends taskq, which ends by it", async () => {
    // Before, only Ctrl-\ was handled so: `kill -USR2` left the terminal with echo off (and noflsh).
    const yaml = 'tasks:\n  a: { run: "echo a-started; sleep 30" }\n';
    const size = { cols: 80, rows: 24 };
    for (const [name, number] of [["USR2", 12], ["ALRM", 14]] as const) {
      const { code, echo } = await runOnPty(yaml, size, { signal: { name, when: String.raw`a-started[\s\S]*0/1 done` } });
      expect(code).toBe(-number); // python's returncode for a process ended by that signal
      expect(echo).toBe(true);
    }
    // afterEach checks that the tasks are gone: the guard gives them SIGTERM once taskq has died.
  });

  it("keeps its lines on a terminal that is behind when Ctrl-Z is typed: noflsh while the board is up, so the terminal drops none of them", async () => {
    // The terminal's default: a typed ^Z discards the output it has not drawn yet. Here it has not read
    // for 2.5 s, six task lines and many redraws; with flushing on, 4 of the 8 lines were lost.
    const yaml = 'tasks:\n  a: { run: "for i in 1 2 3 4 5 6 7 8; do echo a-$i; sleep 0.4; done" }\n';
    const size = { cols: 80, rows: 24 };
    const { bytes, echo } = await runOnPty(yaml, size, { key: { text: "\x1a", when: "a-1", lag: 2.5 }, bgFg: 1.2, flush: true });
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => BOARD_LINE.test(line))).toEqual([]);
    for (let i = 1; i <= 8; i++) expect(lines.filter((line) => line === `a | a-${i}`)).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 0 failed"))).toHaveLength(1);
    expect(echo).toBe(true);
  });

  it("lines a task's tab-separated columns up as the task laid them out, behind its prefix, and works out a spinner's backspaces", async () => {
    // The terminal put the tab stops from its first column: behind "ab | " (5 columns), "a\t1" and "abcde\t2" had their
    // second column 8 apart ("ab | a  1", "ab | abcde      2"). A spinner's "|\b/\b-\b" lost its backspaces: "spin |/-\\done".
    // The tabs come in a block of their own (laid out as bytes), the spinner's line in another.
    const yaml = "tasks:\n  ab:\n    run: printf 'a\\t1\\nabcde\\t2\\n'; sleep 0.2; printf 'spin |\\b/\\b-\\b\\\\\\bdone\\n'; sleep 0.5\n";
    const size = { cols: 80, rows: 24 };
    const { bytes } = await runOnPty(yaml, size);
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => line.startsWith("ab | "))).toEqual(["ab | a       1", "ab | abcde   2", "ab | spin done"]);
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 0 failed"))).toHaveLength(1);
  });

  it("shows a line that carriage returns rewrote as the terminal would have: what the last state does not cover stays, in the colours it was written in", async () => {
    // Only the text after the last "\r" was shown ("ab | XY"), and the colour set before it was lost ("OK" not green).
    const yaml = "tasks:\n  ab:\n    run: printf 'abcdef\\rXY\\n\\033[32mok\\rOK\\n'; sleep 0.5\n";
    const size = { cols: 80, rows: 24 };
    const { bytes } = await runOnPty(yaml, size);
    const lines = await screen(bytes, size, undefined, false);
    expect(lines.filter((line) => line.startsWith("ab | "))).toEqual(["ab | XYcdef", "ab | OK"]);
    expect(bytes.toString("utf8")).toContain("\x1b[32mOK\x1b[0m\r\n");
    expect(lines.filter((line) => line.startsWith("Summary: 1 succeeded, 0 failed"))).toHaveLength(1);
  });
});
