import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, runCli, runIds, workspace } from "../helpers/cli.js";

const RED = "\x1b[31m";
const RESET = "\x1b[0m";
/** The tests' NO_COLOR off (taskq's own lines still plain: stdout is a pipe), for the colours taskq sets again after a prefix. */
const COLOURS_ON = { NO_COLOR: undefined };
const LINK = "\x1b]8;;https://example.com\x1b\\";
const LINK_END = "\x1b]8;;\x1b\\";

/** `taskq run` with `args` on a terminal (a pty `script` makes, 100 columns), TERM=dumb (no colours of taskq's own), `env` added: what it printed there, "\r\n" as "\n". */
function onTerminal(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string }> {
  const command = `stty cols 100 rows 30; TERM=dumb exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${args.map((arg) => JSON.stringify(arg)).join(" ")}`;
  return new Promise((resolve) => {
    const child = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], { cwd, env: { ...process.env, CI: "", NO_COLOR: "", ...env }, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.on("close", (code) => resolve({ code, stdout: stdout.replaceAll("\r\n", "\n") }));
  });
}

describe("plain output of a task that leaves a colour set", () => {
  it("shows each `task |` prefix, and taskq's own lines, in their own colours, the task's colour set again after the prefix; its log as it wrote it", async () => {
    // A colour set on one line and left set at its end, and at a carriage return that rewrites a line (a progress bar).
    const printed = `${RED}red starts\\nstill red\\n\\033[32m10%%\\r20%%\\r${RESET}done\\n${RED}left on\\n`.replaceAll("\x1b", "\\033");
    const ws = await workspace(`tasks:\n  a:\n    run: printf '${printed}'\n`);
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: COLOURS_ON });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const from = lines.findIndex((line) => line.includes("a | "));
    expect(lines.slice(from, from + 5)).toEqual([
      `a | ${RED}red starts`,
      `${RESET}a | ${RED}still red`,
      `${RESET}a | ${RED}\x1b[32m10%\r${RESET}a | \x1b[32m20%\r${RESET}a | \x1b[32m${RESET}done`,
      `a | ${RED}left on`,
      // taskq's next line: the reset first, so that its clock is not red.
      // eslint-disable-next-line no-control-regex -- the reset is the point
      expect.stringMatching(/^\x1b\[0m\d\d:\d\d:\d\d\.\d{3} ok {6}a$/) as unknown as string,
    ]);
    const [runId] = await runIds(ws.logs);
    const log = await readFile(path.join(ws.logs, runId as string, "a.log"), "latin1");
    expect(log).toContain(`${RED}red starts\nstill red\n\x1b[32m10%\r20%\r${RESET}done\n${RED}left on\n`);
  });

  it("takes no escape sequence but a colour code (ESC [ digits ; : m) as a colour: a key mode's ESC [ > 4 ; 2 m sets no dim", async () => {
    // xterm's key modifier mode (CSI > Pp ; Pv m, vim writes it) and its query (CSI ? Pp m) end in "m" and are not SGR: as
    // SGR, `2` is dim and `4` underline, which taskq set again after every later prefix, where the task never set them.
    const ws = await workspace(`tasks:\n  a:\n    run: printf '\\033[31mred\\033[>4;2m\\033[?4m\\nnext\\n'\n`);
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: COLOURS_ON });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`a | ${RED}red\x1b[>4;2m\x1b[?4m\n${RESET}a | ${RED}next\n`);
  });

  it("keeps one task's colour out of another task's prefix and lines", async () => {
    // `a` sets red and leaves it set, and runs on; `b`, running beside it, prints plain lines a moment later.
    const ws = await workspace(
      `tasks:\n  a:\n    run: printf '\\033[31mred\\n'; sleep 3\n  b:\n    run: sleep 1; printf 'plain one\\nplain two\\n'\n`,
    );
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: COLOURS_ON });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`a | ${RED}red\n${RESET}b | plain one\nb | plain two\n`);
    // Every red the output leaves set is reset before anything taskq writes next.
    expect(result.stdout.split("\n").filter((line) => line.startsWith("b | ") || / ok {6}b$/.test(line)).every((line) => !line.includes(RED))).toBe(true);
  });

  it.each([
    ["NO_COLOR=1", [], { NO_COLOR: "1" }],
    ["--no-color", ["--no-color"], COLOURS_ON],
    ["FORCE_COLOR=0", [], { NO_COLOR: undefined, FORCE_COLOR: "0" }],
  ])("under %s sets no colour of its own, a task's colour not again after its prefix: only a reset before taskq's next bytes, the task's as it wrote them", async (_, flags, env) => {
    const printed = `${RED}red starts\\nnot red\\n\x1b[32m10%%\\r20%%\\n${RED}left on\\n`.replaceAll("\x1b", "\\033");
    const ws = await workspace(`tasks:\n  a:\n    run: printf '${printed}'\n`);
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs, ...flags], { cwd: ws.dir, env });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const from = lines.findIndex((line) => line.includes("a | "));
    expect(lines.slice(from, from + 5)).toEqual([
      `a | ${RED}red starts`,
      `${RESET}a | not red`,
      `a | \x1b[32m10%\r${RESET}a | 20%`,
      `a | ${RED}left on`,
      // eslint-disable-next-line no-control-regex -- the reset is the point
      expect.stringMatching(/^\x1b\[0m\d\d:\d\d:\d\d\.\d{3} ok {6}a$/) as unknown as string,
    ]);
    // The task's bytes, and only them, hold a colour code: none in taskq's own.
    expect(result.stdout.replaceAll(RED, "").replaceAll("\x1b[32m", "").replaceAll(RESET, "")).not.toContain("\x1b");
  });

  it("ends an OSC 8 hyperlink a task left open before each prefix and taskq's own lines, and starts it again after the prefix, under NO_COLOR too", async () => {
    // A terminal makes every character after a link's start part of it, line after line, until its end (ESC ] 8 ; ; ST): a reset does not end it.
    const ws = await workspace(String.raw`tasks:
  a:
    run: printf '\033]8;;https://example.com\033\\link\nmore\n\033]8;;\033\\after\n'; exit 1
`);
    for (const env of [COLOURS_ON, { NO_COLOR: "1" }]) {
      const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env });
      expect(result.code).toBe(1);
      const lines = result.stdout.split("\n");
      const from = lines.findIndex((line) => line.includes("a | "));
      expect(lines.slice(from, from + 4)).toEqual([
        `a | ${LINK}link`,
        `${RESET}${LINK_END}a | ${LINK}more`,
        `${RESET}${LINK_END}a | ${LINK}${LINK_END}after`,
        // The link ended by the task: taskq's next line as it is.
        expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} FAILED {2}a: exited with code 1$/) as unknown as string,
      ]);
    }
  });

  it("keeps a link open over a line cut for length, whose ending (taskq's `… (N bytes)`) it is not part of", async () => {
    // The link started in a line cut past 4 KiB, and one started before a cut line of many colour codes: each cut line's
    // ending ends the link, as the task did not, and the task's next line is in the link again, framed as any other.
    const ws = await workspace(String.raw`tasks:
  a:
    run: |
      printf '\033]8;;https://example.com\033\\'; head -c 5000 /dev/zero | tr '\0' x; printf '\nafter\n'
      for i in $(seq 20); do printf '\033[1mb\033[22m'; done; head -c 5000 /dev/zero | tr '\0' y; printf '\nend\n'
`);
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: COLOURS_ON });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const from = lines.findIndex((line) => line.includes("a | "));
    expect(lines[from]?.startsWith(`a | ${LINK}xxx`)).toBe(true);
    expect(lines[from]?.endsWith(`xxx${LINK_END}${RESET}… (${5000 + LINK.length} bytes)`)).toBe(true);
    expect(lines[from + 1]).toBe(`${RESET}${LINK_END}a | ${LINK}after`);
    expect(lines[from + 2]).toMatch(/… \(5200 bytes\)$/);
    expect(lines[from + 3]).toBe(`${RESET}${LINK_END}a | ${LINK}end`);
    // The link's end before taskq's next line.
    // eslint-disable-next-line no-control-regex -- the link's end is the point
    expect(lines[from + 4]).toMatch(/^\x1b\[0m\x1b\]8;;\x1b\\\d\d:\d\d:\d\d\.\d{3} ok/);
  });

  it("takes a task's own short line that ends as a cut one does (`… (12 bytes)`) for its text: a link it ends stays ended, its colours go on to its end", async () => {
    // A link the task ends, then a reset and words like taskq's mark: its next line is out of the link; a red line ending
    // so fails the task, its summary's last line in red to its end (the reset after it, not before its last words).
    const ws = await workspace(String.raw`tasks:
  a:
    run: printf '\033]8;;https://example.com\033\\link\033]8;;\033\\\033[0m… (12 bytes)\nafter\n\033[31mred… (12 bytes)\n'; exit 1
`);
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: COLOURS_ON });
    expect(result.code).toBe(1);
    const lines = result.stdout.split("\n");
    const from = lines.findIndex((line) => line.includes("a | "));
    expect(lines[from]).toBe(`a | ${LINK}link${LINK_END}${RESET}… (12 bytes)`);
    expect(lines[from + 1]).toBe("a | after");
    expect(lines[from + 2]).toBe(`a | ${RED}red… (12 bytes)`);
    expect(lines.filter((line) => line.startsWith("      "))).toContain(`      ${RED}red… (12 bytes)${RESET}`);
  });

  it("ends a link a task leaves open at its end before taskq's next line", async () => {
    const ws = await workspace(String.raw`tasks:
  a:
    run: printf '\033]8;;https://example.com\033\\link\n'; exit 1
`);
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(1);
    // eslint-disable-next-line no-control-regex -- the link's end is the point
    expect(result.stdout).toMatch(/\na \| \x1b\]8;;https:\/\/example\.com\x1b\\link\n\x1b\[0m\x1b\]8;;\x1b\\\d\d:\d\d:\d\d\.\d{3} FAILED {2}a:/);
  });

  it.skipIf(!existsSync("/usr/bin/script"))("on a terminal, ends taskq's own lines and a summary's last lines with no reset where nothing is left set, and with one where a colour is", { timeout: 60_000 }, async () => {
    // taskq's own coloured words end their colour (`\e[36mstart\e[39m`): a reset after the line was one too many, and a last
    // line that ends with its reset got a second. A last line that leaves green set still gets one, before the dimming ends.
    const ws = await workspace(String.raw`tasks:
  a:
    run: printf '\033[31mred\033[0m\n\033[32mgreen\n'; exit 1
`);
    const result = await onTerminal(["run", "workflow.yaml", "--output", "plain", "--log-dir", "logs"], ws.dir, { FORCE_COLOR: "1" });
    expect(result.code).toBe(1);
    const lines = result.stdout.split("\n");
    const start = lines.find((line) => line.includes("start"));
    // eslint-disable-next-line no-control-regex -- escapes are what is checked
    expect(start).toMatch(/\x1b\[36mstart\x1b\[39m {3}a \(attempt 1\/1\)$/);
    // eslint-disable-next-line no-control-regex -- escapes are what is checked
    expect(lines.find((line) => line.includes("FAILED"))).toMatch(/\x1b\[31mFAILED\x1b\[39m {2}a: exited with code 1$/);
    expect(lines).toContain(`\x1b[2ma |\x1b[22m ${RED}red${RESET}`);
    expect(lines).toContain(`\x1b[2m      ${RED}\x1b[2mred${RESET}\x1b[2m\x1b[22m`);
    expect(lines).toContain(`\x1b[2m      \x1b[32m\x1b[2mgreen${RESET}\x1b[2m\x1b[22m`);
    expect(result.stdout).not.toContain(`${RESET}${RESET}`);
  });

  it.skipIf(!existsSync("/usr/bin/script"))("on a terminal, ends a line cut for length's colour before taskq's `… (N bytes)`, as into a pipe: plain lines, the board's, the summary's last lines", { timeout: 60_000 }, async () => {
    // The cut line in yellow, past 4 KiB; a last line in magenta past the 1,000 characters a summary's last line keeps.
    const ws = await workspace(String.raw`tasks:
  a:
    run: printf '\033[33m'; head -c 5000 /dev/zero | tr '\0' z; printf '\n\033[35m'; head -c 2000 /dev/zero | tr '\0' y; printf '\n'; exit 1
`);
    const YELLOW = "\x1b[33m";
    const MAGENTA = "\x1b[35m";
    for (const output of ["plain", "tty"]) {
      const result = await onTerminal(["run", "workflow.yaml", "--output", output, "--log-dir", "logs"], ws.dir, { FORCE_COLOR: "1" });
      expect(result.code, result.stdout).toBe(1);
      const lines = result.stdout.split("\n");
      // The task's line: its colour reset, then the mark (it was in yellow, the reset after it).
      const cut = lines.find((line) => line.includes(`a |\x1b[22m ${YELLOW}zzz`));
      expect(cut?.endsWith(`zzz${RESET}… (5005 bytes)`), output).toBe(true);
      // The summary's last lines, dimmed: the mark in the summary's dim, not in the task's colour.
      const last = lines.filter((line) => line.startsWith(`\x1b[2m      `));
      expect(last, output).toEqual([
        `\x1b[2m      ${YELLOW}\x1b[2m${"z".repeat(1000 - YELLOW.length)}${RESET}\x1b[2m… (5005 bytes)\x1b[22m`,
        `\x1b[2m      ${MAGENTA}\x1b[2m${"y".repeat(1000 - MAGENTA.length)}${RESET}\x1b[2m… (2005 bytes)\x1b[22m`,
      ]);
      expect(result.stdout, output).not.toContain(`bytes)${RESET}`);
    }
    // Into a pipe, the same summary's last lines: the reset before the mark, not after it.
    const piped = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: COLOURS_ON });
    expect(piped.code).toBe(1);
    const lines = piped.stdout.split("\n");
    expect(lines.find((line) => line.startsWith("a | "))?.endsWith(`zzz${RESET}… (5005 bytes)`)).toBe(true);
    expect(lines.filter((line) => line.startsWith("      "))).toEqual([
      `      ${YELLOW}${"z".repeat(1000 - YELLOW.length)}${RESET}… (5005 bytes)`,
      `      ${MAGENTA}${"y".repeat(1000 - MAGENTA.length)}${RESET}… (2005 bytes)`,
    ]);
  });

  it.skipIf(!existsSync("/usr/bin/script"))("on a terminal, sets a colour a task's line left set again at the start of its next line, a line shown before it ends and its rest too; not under NO_COLOR", { timeout: 60_000 }, async () => {
    // Each line on a terminal ends with a reset (see terminalSafe): the red the first line leaves set, and the green of `wait`, shown a second before its `ing`.
    const ws = await workspace(String.raw`tasks:
  a:
    run: printf '\033[31mred starts\nstill red\n\033[0mplain\n\033[32mwait'; sleep 2; printf 'ing\nafter\033[0m\nend\n'
`);
    const coloured = await onTerminal(["run", "workflow.yaml", "--output", "plain", "--log-dir", "logs"], ws.dir);
    expect(coloured.code).toBe(0);
    expect(coloured.stdout).toContain(
      `a | ${RED}red starts${RESET}\na | ${RED}still red${RESET}\na | ${RESET}plain\na | \x1b[32mwait${RESET}\na | \x1b[32ming${RESET}\na | \x1b[32mafter${RESET}\na | end\n`,
    );
    const plain = await onTerminal(["run", "workflow.yaml", "--output", "plain", "--log-dir", "logs"], ws.dir, { NO_COLOR: "1" });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain(`a | ${RED}red starts${RESET}\na | still red\na | ${RESET}plain\na | \x1b[32mwait${RESET}\na | ing\na | after${RESET}\na | end\n`);
  });
});
