import { isUtf8 } from "node:buffer";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hasPython, runIds, workspace } from "../helpers/cli.js";
import { eventually, findLeftovers } from "../helpers/processes.js";
import { taskqOnPty } from "../helpers/pty.js";

const size = { cols: 100, rows: 24 };

describe.skipIf(!hasPython())("on a terminal", () => {
  it("draws the live board as the foreground job, and plain lines as a background job, not a board over the shell's prompt", async () => {
    const ws = await workspace('tasks:\n  a: { run: "sleep 0.5; echo from-a" }\n  b: { run: "echo from-b", dependsOn: [a] }\n');
    const args = ["run", ws.file, "--log-dir", ws.logs];
    const foreground = (await taskqOnPty(args, { cwd: ws.dir, size }, { NO_COLOR: "1" })).bytes.toString("latin1");
    // The board: the cursor hidden while it is drawn, and lines erased as it is redrawn.
    expect(foreground).toContain("\x1b[?25l");
    expect(foreground).toContain("Summary: 2 succeeded");
    const background = (await taskqOnPty(args, { cwd: ws.dir, size, background: true }, { NO_COLOR: "1" })).bytes.toString("latin1");
    expect(background).not.toContain("\x1b[");
    expect(background).toMatch(/ok\s+a\r\n/);
    expect(background).toContain("b | from-b");
    expect(background).toContain("Summary: 2 succeeded");
  }, 60_000);

  it("--output tty started as a background job prints task output as lines, not a board over the shell's prompt, as it does once continued with `bg`", async () => {
    // The board was drawn from the background ten times a second, over the prompt and what the user typed at it.
    const ws = await workspace('tasks:\n  a: { run: "for i in 1 2 3 4; do echo a-$i; sleep 0.3; done" }\n  b: { run: "echo from-b", dependsOn: [a] }\n');
    const args = ["run", ws.file, "--log-dir", ws.logs, "--output", "tty"];
    const background = (await taskqOnPty(args, { cwd: ws.dir, size, background: true }, { NO_COLOR: "1" })).bytes.toString("utf8");
    expect(background).not.toContain("\x1b[?25l");
    expect(background).not.toContain("done");
    for (let i = 1; i <= 4; i++) expect(background).toContain(`a | a-${i}\r\n`);
    expect(background).toContain("b | from-b\r\n");
    expect(background).toContain("Summary: 2 succeeded");
  }, 60_000);

  it("shows a task's bytes that are not UTF-8 as U+FFFD on a terminal, board or plain lines: a lone 0x9B (8-bit CSI) never reaches it", async () => {
    // To a terminal not in UTF-8 (a Latin-1 xterm, a serial console), 0x9B is CSI: "\x9b2J" cleared its screen.
    const ws = await workspace("tasks:\n  a: { run: \"printf 'raw c1 \\\\2332J here \\\\377 end\\\\n'\" }\n");
    const args = ["run", ws.file, "--log-dir", ws.logs];
    for (const env of [{ NO_COLOR: "1" }, { NO_COLOR: "1", CI: "true" }]) {
      const { bytes } = await taskqOnPty(args, { cwd: ws.dir, size }, env);
      expect(isUtf8(bytes), JSON.stringify(env)).toBe(true);
      expect(bytes.toString("utf8")).toContain("a | raw c1 \ufffd2J here \ufffd end\r\n");
    }
    // The log keeps the bytes as written.
    const [runId] = await runIds(ws.logs);
    expect(await readFile(path.join(ws.logs, runId!, "a.log"))).toEqual(Buffer.from("raw c1 \x9b2J here \xff end\n", "latin1"));
  }, 60_000);

  it("--output json on a terminal writes a task's C1 controls escaped (\\u009b), as JSON's own escapes write ESC: the terminal obeys none", async () => {
    // U+009B is CSI: "\u009b2J" as UTF-8 (C2 9B), written as it was inside a JSON string, cleared an xterm.js screen (VS Code's terminal).
    const ws = await workspace("tasks:\n  a: { run: \"printf 'x \\\\302\\\\2332J pwned\\\\n'; exit 1\" }\n");
    const { bytes } = await taskqOnPty(["run", ws.file, "--log-dir", ws.logs, "--output", "json"], { cwd: ws.dir, size }, { NO_COLOR: "1" });
    expect(bytes.includes(Buffer.from([0xc2, 0x9b]))).toBe(false);
    const records = bytes
      .toString("utf8")
      .split("\r\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { event: string; text?: string; deadLetters?: Array<{ tail: string[] }> });
    // The same text to a JSON reader: in the output record, and in the summary's last lines.
    expect(records.find((record) => record.event === "output")?.text).toBe("x \u009b2J pwned");
    expect(records.find((record) => record.event === "summary")?.deadLetters?.[0]?.tail).toEqual(["x \u009b2J pwned"]);
  }, 60_000);

  it("a workflow read from standard input that is the terminal (validate -): a line says so and how to end it, then the text typed is read", async () => {
    const ws = await workspace("");
    // Typed once the line is out: the workflow, then Ctrl-D at the start of a line (end of input).
    const run = await taskqOnPty(["validate", "-"], { cwd: ws.dir, size, key: { text: "tasks:\n  a: { run: echo typed }\n\x04", when: "Ctrl-D" } }, { NO_COLOR: "1" });
    const output = run.bytes.toString("utf8");
    expect(output).toContain("taskq: reading the workflow from the terminal (standard input): type or paste it, then press Ctrl-D\r\n");
    expect(output).toContain("<stdin>: ok, 1 task");
    expect(run.code).toBe(0);
  }, 60_000);

  it("a task run from a terminal has no /dev/tty: what it writes there fails in the task (never reaching the board), and a read from it fails at once instead of waiting", async () => {
    const ws = await workspace('tasks:\n  write: { run: "echo on-the-tty > /dev/tty" }\n  ask: { run: "read answer < /dev/tty && echo got-$answer" }\n');
    const run = await taskqOnPty(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir, size }, { NO_COLOR: "1" });
    const output = run.bytes.toString("utf8");
    expect(output).not.toContain("on-the-tty");
    expect(output).not.toContain("got-");
    expect(output).toMatch(/write \| .*\/dev\/tty: No such device or address/);
    expect(output).toMatch(/ask \| .*\/dev\/tty: No such device or address/);
    expect(output).toContain("Summary: 0 succeeded, 2 failed");
    expect(run.code).toBe(1);
  }, 60_000);

  it("says on the board's totals line that a Ctrl-C's shutdown is under way, with the time left to finish, then that the tasks are stopped", async () => {
    // It ignores SIGTERM (sleep too, inheriting that): the board is up for the kill grace after the time to finish.
    const ws = await workspace("tasks:\n  slow: { run: \"trap '' TERM; echo started; sleep 30\" }\n");
    const args = ["run", ws.file, "--log-dir", ws.logs, "--shutdown-timeout", "2s", "--kill-grace", "1s"];
    // Ctrl-C typed once the board shows the task's first line: the terminal sends SIGINT to taskq.
    const run = await taskqOnPty(args, { cwd: ws.dir, size, key: { text: "\x03", when: String.raw`started[\s\S]*0/1 done` } }, { NO_COLOR: "1" });
    const output = run.bytes.toString("utf8");
    expect(output).toContain("SIGINT received: no new task starts");
    expect(output).toMatch(/0\/1 done · stopping \(SIGINT\): (1\.\d|2)s left to finish/);
    expect(output).toContain("0/1 done · stopping (SIGINT): stopping the running tasks");
    expect(output).toContain("(interrupted by SIGINT)");
    // On a terminal of 40 columns, too narrow for those words: the short ones, the countdown whole (it was cut to "stopping (SIGI…").
    const narrow = (await taskqOnPty(args, { cwd: ws.dir, size: { cols: 40, rows: 24 }, key: { text: "\x03", when: String.raw`started[\s\S]*0/1 done` } }, { NO_COLOR: "1" })).bytes.toString("utf8");
    expect(narrow).toMatch(/0\/1 done · SIGINT: (1\.\d|2)s left/);
    expect(narrow).toContain("0/1 done · SIGINT: stopping");
    expect(narrow).not.toContain("stopping (SIGI…");
  }, 60_000);

  it("keeps a Ctrl-C's countdown whole on a narrow terminal when the tasks it cancelled are counted as not ok on the totals line", async () => {
    // The tasks still queued are cancelled at once: "11/12 done · 11 not ok · SIGINT: 1.9s left" took 42 columns,
    // and at 40 the countdown was cut ("SIGINT: 1.9…"), as with every Ctrl-C of a run with tasks still to start.
    const queued = Array.from({ length: 11 }, (_, i) => `  q${i}: { run: "true", dependsOn: slow }\n`).join("");
    const ws = await workspace(`tasks:\n  slow: { run: "trap '' TERM; echo started; sleep 30" }\n${queued}`);
    const args = ["run", ws.file, "--log-dir", ws.logs, "--shutdown-timeout", "2s", "--kill-grace", "1s"];
    const run = await taskqOnPty(args, { cwd: ws.dir, size: { cols: 40, rows: 24 }, key: { text: "\x03", when: String.raw`started[\s\S]*0/12 done` } }, { NO_COLOR: "1" });
    const output = run.bytes.toString("utf8");
    expect(output).toMatch(/11\/12 done · SIGINT: (1\.\d|2)s left\r\n/);
    expect(output).toContain("11/12 done · SIGINT: stopping\r\n");
    expect(output).not.toMatch(/SIGINT: [^\r\n]*…/);
    expect(output).toContain("Summary: 0 succeeded, 0 failed, 12 cancelled");
  }, 60_000);

  it("ends by SIGHUP, not by Node's abort, when its terminal is closed while it stops what the tasks left running", async () => {
    // A daemon that ignores SIGTERM: with a long kill grace, taskq waits for it after the last task, its run already a success.
    const ws = await workspace("tasks:\n  a: { run: \"setsid sh -c 'trap \\\"\\\" TERM; sleep 60' > /dev/null 2>&1 & echo started\" }\n");
    const args = ["run", ws.file, "--log-dir", ws.logs, "--kill-grace", "30s"];
    const run = await taskqOnPty(args, { cwd: ws.dir, size, hangupWhen: "stopping the process group the tasks left running" }, { NO_COLOR: "1" });
    // Before, exit 0 went through Node's restore of the terminal's modes, which aborts (SIGABRT,
    // "Assertion failed" in ResetStdio) on a terminal that is gone; a hung-up terminal's processes end by SIGHUP.
    expect(run.code).toBe(-1); // python's returncode for a process ended by signal 1
    const [runId] = await runIds(ws.logs);
    // The signal killed the daemon at once, not after the kill grace.
    expect(await eventually(async () => (await findLeftovers(runId!)).length === 0, 10_000)).toBe(true);
  }, 60_000);
});
