import { PassThrough } from "node:stream";
import stringWidth from "string-width";
import { stripVTControlCharacters } from "node:util";
import { Chalk } from "chalk";
import type { Ora } from "ora";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Queue } from "../../src/engine/index.js";
import { TtyRenderer } from "../../src/cli/render/tty.js";

afterEach(() => {
  vi.useRealTimers();
});

/** maxAttempts by id, counting the rows the board writes out: each row written looks its task up once. */
class CountedMap extends Map<string, number> {
  lookups = 0;
  override get(id: string): number | undefined {
    this.lookups++;
    return super.get(id);
  }
}

/** Enough of ora for the board: the text it is given is what the terminal would show. */
function fakeSpinner(): Ora {
  const spinner = {
    text: "",
    isSpinning: false,
    start(text?: string) {
      if (text !== undefined) spinner.text = text;
      spinner.isSpinning = true;
      return spinner;
    },
    stop() {
      spinner.isSpinning = false;
      return spinner;
    },
    // ora's render draws its frame, which the board's override of frame builds.
    render: () => {
      spinner.frame();
      return spinner;
    },
    clear: () => spinner,
    frame: () => spinner.text,
    spinner: { frames: ["-"] },
  };
  return spinner as unknown as Ora;
}

describe("the live board with many tasks waiting", () => {
  it("writes out only the rows the screen has room for, counting the others", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const stream = Object.assign(new PassThrough(), { columns: 80, rows: 24 }) as unknown as NodeJS.WriteStream;
    const spinner = fakeSpinner();
    const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 0 }));
    const queue = new Queue({ concurrency: 2, handlers: { shell: () => Promise.resolve() } });
    const count = 10_000;
    const maxAttempts = new CountedMap();
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: count, concurrency: 2, maxAttempts });
    // Each waits an hour: a `delay: 1h` workflow of 10,000 tasks, whose board shows 20 of them and counts the rest.
    for (let i = 0; i < count; i++) {
      maxAttempts.set(`t${i}`, 1);
      queue.submit({ id: `t${i}`, type: "shell", runAt: Date.now() + 3_600_000 });
    }
    maxAttempts.lookups = 0;
    await vi.advanceTimersByTimeAsync(1_000); // ten frames
    const board = stripVTControlCharacters(spinner.text).split("\n");
    expect(board[0]).toBe("0/10000 done");
    // On 24 rows, a third of them (8) left to task output: the totals (behind the spinner), 12 tasks, "… 9988 more", and
    // the empty row the cursor waits on.
    expect(board).toHaveLength(15);
    expect(board[1]).toMatch(/^ {2}⏲ t0 {2}at .* \(in 59m59s\)$/);
    expect(board[12]).toMatch(/^ {2}⏲ t11 /);
    expect(board[13]).toBe("  … 9988 more");
    expect(board[14]).toBe("");
    // 12 rows a frame, not 10,000: the work of a frame does not grow with the tasks waiting.
    expect(maxAttempts.lookups).toBeLessThanOrEqual(10 * 12);
    await queue.shutdown({ drain: false });
    renderer.suspend();
  });

  it("on a screen of four rows, shows the first running task and counts the rest on the totals line, not a lone \"… N more\"", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const stream = Object.assign(new PassThrough(), { columns: 80, rows: 4 }) as unknown as NodeJS.WriteStream;
    const spinner = fakeSpinner();
    const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 0 }));
    const queue = new Queue({ concurrency: 2, handlers: { shell: () => new Promise(() => undefined) } });
    const maxAttempts = new Map([["a", 1], ["b", 1], ["c", 1]]);
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: 3, concurrency: 2, maxAttempts });
    queue.submit({ id: "c", type: "shell", runAt: Date.now() + 3_600_000 });
    queue.submit({ id: "a", type: "shell" });
    queue.submit({ id: "b", type: "shell" });
    queue.start();
    await vi.advanceTimersByTimeAsync(200);
    // The totals (with the count of those not shown), one task, and the empty row the cursor waits on.
    expect(stripVTControlCharacters(spinner.text).split("\n")).toEqual(["0/3 done … 2 more", expect.stringMatching(/^ {2}▶ a {2}attempt 1\/1 {2}/) as string, ""]);
    void queue.shutdown({ drain: false, deadline: 0 });
    renderer.suspend();
  });
});

describe("the live board's finished tasks", () => {
  it("with more finished than the screen has room for, shows the latest to end, a failure just now among them, not those that ended first", async () => {
    // 17 rows, a third of them (5) left to task output: room for 9 task rows, one of them "… N more". Two keep running; of
    // the 14 that end, 0 first ... 13 last, 13 failing.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const stream = Object.assign(new PassThrough(), { columns: 80, rows: 17 }) as unknown as NodeJS.WriteStream;
    const spinner = fakeSpinner();
    const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 0 }));
    const ends = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
    const shell = (_payload: unknown, { taskId }: { taskId: string }): Promise<void> => new Promise((resolve, reject) => ends.set(taskId, { resolve, reject }));
    const ids = [...Array.from({ length: 14 }, (_, index) => `pkg${String(index).padStart(2, "0")}`), "long-a", "long-b"];
    const queue = new Queue({ concurrency: 16, handlers: { shell } });
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: ids.length, concurrency: 16, maxAttempts: new Map(ids.map((id) => [id, 1])) });
    // The long ones submitted last: the map's order of rows is their start's, and the last to start are not the last to end.
    for (const id of ids) queue.submit({ id, type: "shell", maxAttempts: 1 });
    queue.start();
    await vi.advanceTimersByTimeAsync(100);
    for (let index = 0; index < 14; index++) {
      const end = ends.get(`pkg${String(index).padStart(2, "0")}`)!;
      if (index === 13) end.reject(new Error("exit 1"));
      else end.resolve();
      await vi.advanceTimersByTimeAsync(100);
    }
    const board = stripVTControlCharacters(spinner.text).split("\n");
    expect(board[0]).toBe("14/16 done · 1 not ok");
    expect(board.slice(1, 3)).toEqual([expect.stringMatching(/^ {2}▶ long-a /) as string, expect.stringMatching(/^ {2}▶ long-b /) as string]);
    // The six latest to end, in the order they ended, the failure last; the eight before them counted.
    expect(board.slice(3)).toEqual(["  ✓ pkg08", "  ✓ pkg09", "  ✓ pkg10", "  ✓ pkg11", "  ✓ pkg12", "  ✗ pkg13: exit 1", "  … 8 more", ""]);
    void queue.shutdown({ drain: false, deadline: 0 });
    renderer.suspend();
  });
});

describe("the live board's times", () => {
  it("round as the summary's and every message's do: half a second short of a day is in 1d, not in 23h59m", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const stream = Object.assign(new PassThrough(), { columns: 80, rows: 24 }) as unknown as NodeJS.WriteStream;
    const spinner = fakeSpinner();
    const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 0 }));
    const queue = new Queue({ concurrency: 1, handlers: { shell: () => Promise.resolve() } });
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: 2, concurrency: 1, maxAttempts: new Map([["day", 1], ["hour", 1]]) });
    queue.submit({ id: "day", type: "shell", runAt: Date.now() + 86_400_500 });
    queue.submit({ id: "hour", type: "shell", runAt: Date.now() + 3_660_500 });
    await vi.advanceTimersByTimeAsync(1_000);
    const board = stripVTControlCharacters(spinner.text).split("\n");
    expect(board[1]).toMatch(/^ {2}⏲ day {2}at .* \(in 1d\)$/);
    // 1h0m59.5s: to the nearest minute, as past a day to the nearest hour (it was cut to 1h).
    expect(board[2]).toMatch(/^ {2}⏲ hour {2}at .* \(in 1h1m\)$/);
    await queue.shutdown({ drain: false });
    renderer.suspend();
  });
});

describe("the live board's rows on a narrow terminal", () => {
  it("cut a task's id, not its time, and the same way in every frame whatever the time's digits", async () => {
    // At 40 columns the time was cut to its first digit, "1…" nine frames in ten and "1s" the tenth.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const stream = Object.assign(new PassThrough(), { columns: 40, rows: 24 }) as unknown as NodeJS.WriteStream;
    const spinner = fakeSpinner();
    const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 0 }));
    const queue = new Queue({ concurrency: 1, handlers: { shell: () => new Promise(() => undefined) } });
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: 1, concurrency: 1, maxAttempts: new Map([["build-the-frontend", 1]]) });
    queue.submit({ id: "build-the-frontend", type: "shell" });
    queue.start();
    const rows: string[] = [];
    for (let frame = 0; frame < 125; frame++) {
      await vi.advanceTimersByTimeAsync(100);
      rows.push(stripVTControlCharacters(spinner.text).split("\n")[1]!);
    }
    for (const row of rows) expect(row).toMatch(/^ {2}▶ buil…tend {2}attempt 1\/1 {2}(\d+(\.\d)?s|\d+ms)$/);
    expect(rows.at(-1)).toBe("  ▶ buil…tend  attempt 1/1  12.5s");
    void queue.shutdown({ drain: false, deadline: 0 });
    renderer.suspend();
  });

  it("cut a task's id in its middle, so that tasks whose ids differ only at their end are told apart", async () => {
    // Eight deploys to regions, at 50 columns: each row was "▶ deploy-the-web-frontend-to-…", alike.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const stream = Object.assign(new PassThrough(), { columns: 50, rows: 24 }) as unknown as NodeJS.WriteStream;
    const spinner = fakeSpinner();
    const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 1 }));
    const ids = Array.from({ length: 8 }, (_, index) => `deploy-the-web-frontend-to-region-eu-west-${index + 1}`);
    const queue = new Queue({ concurrency: 8, handlers: { shell: () => new Promise(() => undefined) } });
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: 8, concurrency: 8, maxAttempts: new Map(ids.map((id) => [id, 1])) });
    for (const id of ids) queue.submit({ id, type: "shell" });
    queue.start();
    await vi.advanceTimersByTimeAsync(1000);
    const rows = stripVTControlCharacters(spinner.text).split("\n").slice(1, 9);
    expect(new Set(rows).size).toBe(8);
    expect(rows[0]).toBe("  ▶ deploy-th…eu-west-1  attempt 1/1  1s");
    for (const row of rows) expect(stringWidth(row)).toBeLessThanOrEqual(49);
    // The symbol's colour codes stay whole.
    expect(spinner.text).toContain("\x1b[36m▶\x1b[39m deploy-th…eu-west-8");
    // Too narrow for the attempt and the time (24 columns): the id alone, still cut in its middle.
    Object.assign(stream, { columns: 24 });
    await vi.advanceTimersByTimeAsync(100);
    const narrow = stripVTControlCharacters(spinner.text).split("\n").slice(1, 4);
    expect(narrow).toEqual(["  ▶ deploy-th…eu-west-1", "  ▶ deploy-th…eu-west-2", "  ▶ deploy-th…eu-west-3"]);
    // At 9 columns, the four the id has beside the rest of the row too: cut at its end there, the rows were "  ▶ dep…" alike.
    Object.assign(stream, { columns: 9 });
    await vi.advanceTimersByTimeAsync(100);
    expect(stripVTControlCharacters(spinner.text).split("\n").slice(1, 4)).toEqual(["  ▶ de…1", "  ▶ de…2", "  ▶ de…3"]);
    void queue.shutdown({ drain: false, deadline: 0 });
    renderer.suspend();
  });

  it("cut a finished, failed or cancelled task's id in its middle too, so that rows of ids that differ only at their end are told apart", async () => {
    // At 40 columns "✓ deploy-the-web-frontend-to-region-eu-west-1" and "-2" were both "✓ deploy-the-web-frontend-to-region-…".
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const stream = Object.assign(new PassThrough(), { columns: 40, rows: 24 }) as unknown as NodeJS.WriteStream;
    const spinner = fakeSpinner();
    const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 1 }));
    const ids = Array.from({ length: 5 }, (_, index) => `deploy-the-web-frontend-to-region-eu-west-${index + 1}`);
    // The first two succeed, the third fails, the last two are cancelled because of it.
    const shell = (_payload: unknown, { taskId }: { taskId: string }): Promise<void> => (taskId.endsWith("-3") ? Promise.reject(new Error("exit 1")) : Promise.resolve());
    const queue = new Queue({ concurrency: 5, handlers: { shell } });
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: 5, concurrency: 5, maxAttempts: new Map(ids.map((id) => [id, 1])) });
    for (const [index, id] of ids.entries()) queue.submit({ id, type: "shell", maxAttempts: 1, dependsOn: index >= 3 ? [ids[2]!] : [] });
    queue.start();
    await vi.advanceTimersByTimeAsync(200);
    const board = (): string[] => stripVTControlCharacters(spinner.text).split("\n").slice(1, 6).sort((a, b) => region(a) - region(b));
    const region = (row: string): number => Number(/eu-west-(\d)/.exec(row)?.[1]);
    const rows = board();
    expect(rows).toHaveLength(5);
    expect(new Set(rows).size).toBe(5);
    for (const [index, row] of rows.entries()) expect(row).toMatch(new RegExp(`^  [✓✗-] deploy-the-we.*….*eu-west-${index + 1}$`));
    expect(rows[0]).toBe("  ✓ deploy-the-web-fr…-region-eu-west-1");
    for (const row of rows) expect(stringWidth(row)).toBeLessThanOrEqual(39);
    // Each row in its colour, whole: green, red, yellow.
    expect(spinner.text).toContain("\x1b[32m✓ deploy-the-web-fr…-region-eu-west-1\x1b[39m");
    expect(spinner.text).toContain("\x1b[31m✗ deploy-the-web-fr…-region-eu-west-3\x1b[39m");
    // Wide enough for the id: the id whole, what went wrong cut at its end.
    Object.assign(stream, { columns: 60 });
    await vi.advanceTimersByTimeAsync(100);
    const wide = board();
    expect(wide[0]).toBe("  ✓ deploy-the-web-frontend-to-region-eu-west-1");
    expect(wide[2]).toBe("  ✗ deploy-the-web-frontend-to-region-eu-west-3: exit 1");
    expect(wide[3]).toMatch(/^ {2}- deploy-the-web-frontend-to-region-eu-west-4: .+…$/);
    for (const row of wide) expect(stringWidth(row)).toBeLessThanOrEqual(59);
    // At 9 columns, four columns of the id, its start and its end: cut at its end there, the rows were "  ✓ dep…" alike.
    Object.assign(stream, { columns: 9 });
    await vi.advanceTimersByTimeAsync(100);
    expect(board().sort()).toEqual(["  - de…4", "  - de…5", "  ✓ de…1", "  ✓ de…2", "  ✗ de…3"]);
    renderer.suspend();
  });
});

describe("the live board's totals line during a stop", () => {
  it("at every width, shows the time left whole, and keeps or leaves out the count not ok and the stop's long words for the whole countdown: neither comes and goes as its digits change", async () => {
    // "11/12 done · 11 not ok · SIGINT: 11.9s left" at 44 columns: it fits with "10s" and "9s", not with "10.5s" or "9.9s",
    // so the count not ok showed once a second for one frame, and left the next.
    for (let columns = 24; columns <= 90; columns++) {
      vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
      const stream = Object.assign(new PassThrough(), { columns, rows: 24 }) as unknown as NodeJS.WriteStream;
      const spinner = fakeSpinner();
      const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 0 }));
      const queue = new Queue({ concurrency: 1, handlers: { shell: () => new Promise(() => undefined) } });
      const ids = Array.from({ length: 12 }, (_, i) => `t${i}`);
      renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: 12, concurrency: 1, maxAttempts: new Map(ids.map((id) => [id, 1])) });
      queue.submit({ id: "t0", type: "shell" });
      for (const id of ids.slice(1)) queue.submit({ id, type: "shell", dependsOn: ["t0"] });
      queue.start();
      await vi.advanceTimersByTimeAsync(200);
      // A Ctrl-C: the 11 tasks still queued are cancelled at once (not ok), t0 has 12 s to finish.
      renderer.stopping({ signal: "SIGINT", phase: "finishing", until: Date.now() + 12_000 });
      void queue.shutdown({ drain: false, deadline: 60_000 });
      const totals: string[] = [];
      for (let frame = 0; frame < 125; frame++) {
        await vi.advanceTimersByTimeAsync(100);
        totals.push(stripVTControlCharacters(spinner.text).split("\n")[0]!);
      }
      renderer.suspend();
      vi.useRealTimers();
      expect(totals.some((line) => line.includes("SIGINT")), `${columns}`).toBe(true);
      // The time left whole in every frame, down to 24 columns: the count done cut it there to "11/12 done · SIGINT:…".
      for (const line of totals) expect([columns, line]).toEqual([columns, expect.stringMatching(/SIGINT\)?: (\d+(\.\d)?m?s left|stopping)/)]);
      const changes = (shows: (line: string) => boolean): number => totals.filter((line, i) => i > 0 && shows(line) !== shows(totals[i - 1]!)).length;
      expect(changes((line) => line.includes("not ok")), `${columns}: ${totals.join(" | ")}`).toBeLessThanOrEqual(1);
      expect(changes((line) => line.includes("stopping (SIGINT)")), `${columns}: ${totals.join(" | ")}`).toBeLessThanOrEqual(1);
    }
  });
});

describe("the live board's running tasks", () => {
  it("shows a line a task has not ended yet at the end of its row: a progress bar's latest `\\r` state, cut to the width", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const stream = Object.assign(new PassThrough(), { columns: 50, rows: 24 }) as unknown as NodeJS.WriteStream;
    const spinner = fakeSpinner();
    const renderer = new TtyRenderer(spinner, stream, new Chalk({ level: 0 }));
    const queue = new Queue({ concurrency: 2, handlers: { shell: () => new Promise(() => undefined) } });
    renderer.attach(queue, { runId: "r", file: "w.yaml", logDir: "/tmp/r", taskCount: 1, concurrency: 2, maxAttempts: new Map([["a", 1]]) });
    queue.submit({ id: "a", type: "shell" });
    queue.start();
    const row = async (): Promise<string> => {
      await vi.advanceTimersByTimeAsync(100);
      return stripVTControlCharacters(spinner.text).split("\n")[1] as string;
    };
    expect(await row()).toMatch(/^ {2}▶ a {2}attempt 1\/1 {2}\S+$/);
    // States in chunks of their own, one split across two, one in colour; a "\r" that ends a chunk rewrites nothing yet.
    renderer.openLine("a", "stdout", Buffer.from("\r1%"), false);
    expect(await row()).toMatch(/^ {2}▶ a {2}attempt 1\/1 {2}\S+ {2}1%$/);
    renderer.openLine("a", "stdout", Buffer.from("\r\x1b[32m4"), false);
    renderer.openLine("a", "stdout", Buffer.from("2%\x1b[0m\r"), false);
    expect(await row()).toMatch(/^ {2}▶ a {2}attempt 1\/1 {2}\S+ {2}42%$/);
    // Cut to the row's width.
    renderer.openLine("a", "stdout", Buffer.from(`\rdownloading ${"x".repeat(60)}`), false);
    const long = await row();
    expect(long).toMatch(/^ {2}▶ a {2}attempt 1\/1 {2}\S+ {2}downloading x*…$/);
    expect(stringWidth(long)).toBeLessThanOrEqual(49);
    // The line ended (it scrolls above the board): nothing more on the row; a new one, written without "\r", shows too.
    renderer.openLine("a", "stdout", Buffer.alloc(0), true);
    expect(await row()).toMatch(/^ {2}▶ a {2}attempt 1\/1 {2}\S+$/);
    renderer.openLine("a", "stdout", Buffer.from("waiting..."), true);
    expect(await row()).toMatch(/^ {2}▶ a {2}attempt 1\/1 {2}\S+ {2}waiting\.\.\.$/);
    void queue.shutdown({ drain: false, deadline: 0 });
    renderer.suspend();
  });
});
