import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DISPLAY_LIMIT } from "../../src/handlers/line-splitter.js";
import { hasPython, runCli, runIds, workspace } from "../helpers/cli.js";
import { taskqOnPty } from "../helpers/pty.js";

const RED = "\x1b[31m";
const RESET = "\x1b[0m";

/** What a task prints: GitHub Actions workflow commands among lines that are none, `::` in some of these too. */
const PRINTED = [
  "before",
  "::error file=a.ts,line=3,col=5::bad thing",
  "std::vector here",
  "::1 is localhost",
  "a :: b",
  ":: no name::",
  "  ::warning title=W::indented, as the runner trims it",
  "::notice::note",
  "::group::Build",
  "in group",
  "::endgroup::",
  "::stop-commands::tok123",
  "::error::read as text while stopped",
  "::tok123::",
  "::add-mask::s3cret",
  "::debug::dbg",
  "10%\r20%",
  `::error::${"x".repeat(5000)}`,
  "after",
];

/**
 * The lines of PRINTED that go bare, for the runner to read as workflow commands: not the task's own
 * `::stop-commands::`, nor what comes up to its token (see TaskColours).
 */
const COMMANDS = new Set([1, 6, 7, 8, 10, 14, 15, 17].map((index) => PRINTED[index]));

/** A workspace whose task `lint` runs a script printing `lines` (each ended by "\n"). */
async function printing(lines: string[]): Promise<{ dir: string; file: string; logs: string; text: string }> {
  const ws = await workspace("tasks:\n  lint:\n    run: cat lines.txt\n");
  const text = lines.map((line) => `${line}\n`).join("");
  await writeFile(path.join(ws.dir, "lines.txt"), text);
  return { ...ws, text };
}

/** `taskq run` in plain lines into a pipe, with `env`: its stdout, and the text of its one run's log of `lint`. */
async function run(ws: { dir: string; file: string; logs: string }, env: Record<string, string | undefined>): Promise<{ stdout: string; log: string }> {
  const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env });
  expect(result.code).toBe(0);
  const [runId] = await runIds(ws.logs);
  return { stdout: result.stdout, log: await readFile(path.join(ws.logs, runId as string, "lint.log"), "utf8") };
}

/** The lines of `stdout` from the task's first to its last, after taskq's `start` line and before its `ok` line. */
function taskLines(stdout: string): string[] {
  const lines = stdout.split("\n");
  const start = lines.findIndex((line) => / start {3}lint /.test(line));
  const ok = lines.findIndex((line) => / ok {6}lint/.test(line));
  return lines.slice(start + 1, ok);
}

const CUT = `::error::${"x".repeat(4087)}… (5009 bytes)`;

describe("GitHub Actions workflow commands in plain output", () => {
  it("under GitHub Actions, writes a task's workflow commands at the start of a line, without the prefix; every other line keeps it; the log as written", async () => {
    const ws = await printing(PRINTED);
    const { stdout, log } = await run(ws, { GITHUB_ACTIONS: "true" });
    expect(taskLines(stdout)).toEqual(
      PRINTED.map((line) => {
        if (line.includes("\r")) return "lint | 10%\rlint | 20%";
        return COMMANDS.has(line) ? line : `lint | ${line}`;
      }),
    );
    expect(log).toBe(ws.text);
  });

  it("under GitHub Actions, writes a workflow command longer than 4 KiB whole, up to 1 MiB: cut, `::add-mask::` gave the runner a value with taskq's mark, and the secret was not masked", async () => {
    const secret = "S".repeat(5000);
    // One of 200 KB comes in several reads of the pipe; one past 1 MiB is cut as any line.
    const big = "B".repeat(200_000);
    const huge = `::error::${"H".repeat(1024 * 1024)}`;
    const ws = await printing([`::add-mask::${secret}`, `token ${secret}`, `  ::add-mask::${big}`, huge, "after"]);
    const { stdout, log } = await run(ws, { GITHUB_ACTIONS: "true" });
    expect(taskLines(stdout)).toEqual([
      `::add-mask::${secret}`,
      `lint | token ${secret}`,
      `  ::add-mask::${big}`,
      `${huge.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(huge)} bytes)`,
      "lint | after",
    ]);
    expect(log).toBe(ws.text);
  });

  it("under GitHub Actions, shows a workflow command not ended after a second only once it ends: shown in pieces, `::add-mask::sec` then `ret` masked `sec` alone", async () => {
    const ws = await workspace(
      "tasks:\n  lint:\n    run: printf '::add-mask::sec'; sleep 2; printf 'ret\\n  :'; sleep 2; printf ':error::late\\n'; printf 'waiting'; sleep 2; printf ' done\\n'\n",
    );
    const { stdout } = await run(ws, { GITHUB_ACTIONS: "true" });
    // A line that is no command too (see below).
    expect(taskLines(stdout)).toEqual(["::add-mask::secret", "  ::error::late", "lint | waiting done"]);
  });

  it("under GitHub Actions, writes a line that is no command longer than 4 KiB whole, up to 1 MiB: cut, the runner, which masks a value only whole, showed the part of it before the cut; without, cuts it as before", async () => {
    // A masked value that straddles the 4 KiB cut: its first part was shown, unmasked.
    const secret = "S3CRET-VALUE".repeat(100);
    const line = `token ${"x".repeat(DISPLAY_LIMIT - 600)}${secret}${"y".repeat(6 * 1024 - DISPLAY_LIMIT - 600)}`;
    const huge = `log ${"H".repeat(1024 * 1024)}`;
    const ws = await printing([line, huge, "after"]);
    const gitHub = await run(ws, { GITHUB_ACTIONS: "true" });
    const hugeCut = `lint | ${huge.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(huge)} bytes)`;
    expect(taskLines(gitHub.stdout)).toEqual([`lint | ${line}`, hugeCut, "lint | after"]);
    expect(gitHub.log).toBe(ws.text);
    const { stdout } = await run(ws, { GITHUB_ACTIONS: undefined });
    expect(taskLines(stdout)).toEqual([`lint | ${line.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(line)} bytes)`, hugeCut, "lint | after"]);
  });

  it("under GitHub Actions, shows a line written in pieces a second or more apart once it ends, as one: shown in pieces, the runner masked neither piece of a value split there; without, in pieces as before", async () => {
    const ws = await workspace("tasks:\n  lint:\n    run: |\n      printf 'token: sec'; sleep 1.5; printf 'ret\\n'; echo after\n");
    const gitHub = await run(ws, { GITHUB_ACTIONS: "true" });
    expect(taskLines(gitHub.stdout)).toEqual(["lint | token: secret", "lint | after"]);
    expect(gitHub.log).toBe("token: secret\nafter\n");
    const { stdout } = await run(ws, { GITHUB_ACTIONS: undefined });
    expect(taskLines(stdout)).toEqual(["lint | token: sec", "lint | ret", "lint | after"]);
  });

  it("under GitHub Actions, shows of a line a carriage return rewrites (a progress bar) not ended after a second its states a `\\r` ended, which the runner reads as lines: its last waits for its end or its next `\\r`", async () => {
    const ws = await workspace("tasks:\n  lint:\n    run: |\n      printf '10%%\\rtoken: sec'; sleep 2; printf 'ret\\r30%%\\n'; echo after\n");
    const gitHub = await run(ws, { GITHUB_ACTIONS: "true" });
    expect(taskLines(gitHub.stdout)).toEqual(["lint | 10%", "lint | \rlint | token: secret\rlint | 30%", "lint | after"]);
    expect(gitHub.log).toBe("10%\rtoken: secret\r30%\nafter\n");
    // Without, its latest state so far, as it goes.
    const { stdout } = await run(ws, { GITHUB_ACTIONS: undefined });
    expect(taskLines(stdout)).toEqual(["lint | \rlint | token: sec", "lint | ret\rlint | 30%", "lint | after"]);
  });

  it("under GitHub Actions, a failed task's summary shows its long last lines cut after a whole word, with their length, where the output has them whole; without, cut to 1,000 characters", async () => {
    const lines = [`token ${"é".repeat(150_000)}`, `10%\r${"w".repeat(2000)}`, `${"\r".repeat(3)}${"v".repeat(5000)}`, "last"];
    const ws = await workspace("tasks:\n  lint:\n    run: cat lines.txt; exit 3\n");
    await writeFile(path.join(ws.dir, "lines.txt"), lines.map((line) => `${line}\n`).join(""));
    const summary = async (env: Record<string, string | undefined>): Promise<{ stdout: string; lastLines: string }> => {
      const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env });
      expect(result.code).toBe(1);
      return { stdout: result.stdout, lastLines: result.stdout.slice(result.stdout.indexOf("last 4 lines:")).split("\n").slice(0, 5).join("\n") };
    };
    const gitHub = await summary({ GITHUB_ACTIONS: "true" });
    expect(gitHub.stdout).toContain(`lint | ${lines[0]}\n`);
    // A line with no space or tab in its first 1,000 characters (of its last state) shows its length alone.
    expect(gitHub.lastLines).toBe(["last 4 lines:", `      token… (${6 + 300_000} bytes)`, "      … (2004 bytes)", "      … (5003 bytes)", "      last"].join("\n"));
    // Without, cut at the 1,000th character, and a line over 4 KiB that a "\r" rewrote cut for display from its last
    // "\r", the length that says is of its last state.
    expect((await summary({ GITHUB_ACTIONS: undefined })).lastLines).toBe(
      [
        "last 4 lines:",
        `      token ${"é".repeat(994)}… (${6 + 300_000} bytes)`,
        `      \r${"w".repeat(999)}… (2004 bytes)`,
        `      \r${"v".repeat(999)}… (5001 bytes)`,
        "      last",
      ].join("\n"),
    );
  });

  it("outside GitHub Actions (GITHUB_ACTIONS unset, or not `true`), prefixes every line as before", async () => {
    const ws = await printing(PRINTED);
    for (const value of [undefined, "false", ""]) {
      const { stdout, log } = await run(ws, { GITHUB_ACTIONS: value });
      expect(taskLines(stdout)).toEqual(
        PRINTED.map((line) => {
          if (line.startsWith("::error::x")) return `lint | ${CUT}`;
          if (line.includes("\r")) return "lint | 10%\rlint | 20%";
          return `lint | ${line}`;
        }),
      );
      expect(log).toBe(ws.text);
    }
  });

  it.skipIf(!hasPython())("on a terminal (plain output chosen there), prefixes a workflow command under GitHub Actions too: no runner reads a terminal", async () => {
    const ws = await printing(["::error file=a.ts,line=3,col=5::bad thing", "after"]);
    const { bytes, code } = await taskqOnPty(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, size: { cols: 100, rows: 30 } }, { GITHUB_ACTIONS: "true", NO_COLOR: "1" });
    expect(code).toBe(0);
    expect(bytes.toString().replaceAll("\r\n", "\n")).toContain("lint | ::error file=a.ts,line=3,col=5::bad thing\nlint | after\n");
  });

  it("writes as the task wrote it a line with a workflow command after a carriage return or Unicode white space: the runner reads a `\\r` as a line's end and trims that space, so behind the prefix `::add-mask::` masked nothing", async () => {
    const ws = await printing(["10%\r::add-mask::s3cret", "\u00a0::add-mask::nbsp", "\u3000::error::wide", "10%\r20%", "\u00a0std::vector"]);
    const { stdout, log } = await run(ws, { GITHUB_ACTIONS: "true" });
    expect(taskLines(stdout)).toEqual(["10%\r::add-mask::s3cret", "\u00a0::add-mask::nbsp", "\u3000::error::wide", "lint | 10%\rlint | 20%", "lint | \u00a0std::vector"]);
    expect(log).toBe(ws.text);
  });

  it("puts no reset before a workflow command where the task left a colour set: it ends that colour after the command, before the next prefix", async () => {
    // `\e[0m::add-mask::s3cret` is no command to the runner: it would show the value, not mask it.
    const ws = await printing([`${RED}red left set`, "::add-mask::s3cret", "still red", `::group::\x1b[1mbold name`, "bold"]);
    const { stdout, log } = await run(ws, { GITHUB_ACTIONS: "true", NO_COLOR: undefined });
    expect(taskLines(stdout)).toEqual([
      `lint | ${RED}red left set`,
      "::add-mask::s3cret",
      `${RESET}lint | ${RED}still red`,
      `::group::\x1b[1mbold name`,
      // The colours the command line left set (red, bold), set again after the prefix as for any line of the task's.
      `${RESET}lint | \x1b[1;31mbold`,
      // The group it left open ends with it, bare too, no reset before it either.
      "::endgroup::",
    ]);
    expect(log).toBe(ws.text);
  });
});

describe("GitHub Actions and JSON output", () => {
  /** `taskq run --output json` with `env`: the text of each of its `output` records, and the text of its one run's log of `lint`. */
  async function runJson(ws: { dir: string; file: string; logs: string }, env: Record<string, string | undefined>): Promise<{ texts: string[]; log: string }> {
    const result = await runCli(["run", ws.file, "--output", "json", "--log-dir", ws.logs], { cwd: ws.dir, env });
    expect(result.code).toBe(0);
    const records = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; id?: string; text?: string });
    const [runId] = await runIds(ws.logs);
    const texts = records.filter((record) => record.event === "output" && record.id === "lint").map((record) => record.text as string);
    return { texts, log: await readFile(path.join(ws.logs, runId as string, "lint.log"), "utf8") };
  }

  it("under GitHub Actions, an output record's text holds a line longer than 4 KiB whole, up to 1 MiB: cut, the runner, which masks a value only whole, showed the part of a token before the cut; without, cuts it as before", async () => {
    // A token across the 4 KiB cut; one at the end of a line of 200 KB, which comes in several reads of the pipe; one in a
    // line ended by "\r\n"; a line past 1 MiB, cut as in plain output.
    const token = `ghs_${"T0k3n".repeat(7)}1`;
    const across = `${"x".repeat(4080)}${token}`;
    const long = `token ${"é".repeat(100_000)}${token}`;
    const crlf = `${"c".repeat(5000)}${token}`;
    const huge = `log ${"H".repeat(1024 * 1024)}`;
    const ws = await printing([across, long, `${crlf}\r`, huge, "after"]);
    const gitHub = await runJson(ws, { GITHUB_ACTIONS: "true" });
    const hugeCut = `${huge.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(huge)} bytes)`;
    expect(gitHub.texts).toEqual([across, long, crlf, hugeCut, "after"]);
    expect(gitHub.log).toBe(ws.text);
    const { texts, log } = await runJson(ws, { GITHUB_ACTIONS: undefined });
    expect(texts).toEqual([
      `${across.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(across)} bytes)`,
      `${long.slice(0, (DISPLAY_LIMIT - 6) / 2 + 6)}… (${Buffer.byteLength(long)} bytes)`,
      `${crlf.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(crlf)} bytes)`,
      hugeCut,
      "after",
    ]);
    expect(log).toBe(ws.text);
  });

  it("under GitHub Actions, an output record's text of a line that \\r rewrote is its last state, as without, but whole up to 1 MiB: before, every state went, in records of up to 1 MiB", async () => {
    // A record escapes the "\r": the runner reads it as one line, so the earlier states mask nothing. A progress bar of
    // 100,000 states, each its own write (before: records of 988,160 and 611,840 characters); a line whose states pass
    // 1 MiB, one of them alone (before: three records); a last state past 4 KiB, a token at its end.
    const token = `ghs_${"T0k3n".repeat(7)}1`;
    const last = `\rdone ${"y".repeat(5000)}${token}`;
    const ws = await workspace(`tasks:\n  lint:\n    run: '"${process.execPath}" bar.mjs'\n`);
    const script = [
      'for (let i = 0; i < 100000; i++) process.stdout.write(`\\rprogress ${String(i).padStart(6, "0")}`);',
      'process.stdout.write("\\n");',
      'process.stdout.write(`start\\r${"x".repeat(1100000)}\\rshort\\n`);',
      `process.stdout.write(${JSON.stringify(`a\rb${last}\n`)});`,
    ].join("\n");
    await writeFile(path.join(ws.dir, "bar.mjs"), script);
    const gitHub = await runJson(ws, { GITHUB_ACTIONS: "true" });
    expect(gitHub.texts).toEqual(["\rprogress 099999", "\rshort", last]);
    const { texts, log } = await runJson(ws, { GITHUB_ACTIONS: undefined });
    expect(texts).toEqual(["\rprogress 099999", "\rshort", `${last.slice(0, DISPLAY_LIMIT)}… (${last.length} bytes)`]);
    expect(gitHub.log).toBe(log);
    expect(log.endsWith(`\rshort\na\rb${last}\n`)).toBe(true);
  });
});

describe("GitHub Actions, plain output and a task's `::stop-commands::`", () => {
  it("under GitHub Actions, writes a task's own `::stop-commands::TOKEN` and its lines up to `::TOKEN::` behind its prefix: bare, it stopped the runner reading every task's commands, and another's `::add-mask::` masked nothing", async () => {
    const ws = await printing(["::STOP-COMMANDS::Abc", "::error::as text", "::abc::", "::error::read"]);
    await writeFile(ws.file, "tasks:\n  lint:\n    run: cat lines.txt; sleep 0.6; echo '::stop-commands::x'\n  other:\n    run: sleep 0.3; echo '::add-mask::m'\n");
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    for (const line of ["lint | ::STOP-COMMANDS::Abc", "lint | ::error::as text", "lint | ::abc::", "::error::read", "::add-mask::m", "lint | ::stop-commands::x"]) expect(lines).toContain(line);
  });
});

describe("GitHub Actions, JSON output and `::add-mask::`", () => {
  it("under GitHub Actions, writes a task's `::add-mask::` commands on stderr, where the runner reads them, and the value as the records hold it where the runner's JSON form differs; without, none: in a record, the runner never read the command and masked nothing", async () => {
    // In one block of a loud task's lines (a flood before them), indented, named in capitals, after a "\r"; a value
    // with a `"` and a `\` (whose JSON form the runner masks too), one with a `%25` (a `%` to the runner), one with a C1
    // control (toJson writes `\u009b`, which the runner's JSON form does not); and one written on its own later.
    const flood = Array.from({ length: 2000 }, (_, index) => `line ${index}`);
    const ws = await workspace(`tasks:\n  lint:\n    run: cat lines.txt; sleep 0.2; printf '%s\\n' '::add-mask::later'; echo 'x ::add-mask::no'\n`);
    const lines = [...flood, '::add-mask::pa"ss\\wd', "  ::ADD-MASK::x%25y", "50%\r::add-mask::c1\u009bz", "token pa\"ss\\wd", "not ::add-mask::no", "::add-mask ::mid"];
    await writeFile(path.join(ws.dir, "lines.txt"), lines.map((line) => `${line}\n`).join(""));
    const args = ["run", ws.file, "--output", "json", "--log-dir", ws.logs];
    const gitHub = await runCli(args, { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(gitHub.code).toBe(0);
    expect(gitHub.stderr.split("\n").filter((line) => line !== "")).toEqual([
      '::add-mask::pa"ss\\wd',
      "::add-mask::x%25y",
      "::add-mask::c1\u009bz",
      "::add-mask::c1\\u009bz",
      // A name, a space and no parameters: a command to the runner too.
      "::add-mask::mid",
      "::add-mask::later",
    ]);
    // The records as before: every line, the commands' included, one JSON object each.
    const texts = gitHub.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; text?: string })
      .filter((record) => record.event === "output")
      .map((record) => record.text);
    expect(texts).toEqual([...lines, "::add-mask::later", "x ::add-mask::no"]);
    const outside = await runCli(args, { cwd: ws.dir, env: { GITHUB_ACTIONS: undefined } });
    expect(outside.code).toBe(0);
    expect(outside.stderr).toBe("");
  });
});

describe("GitHub Actions, JSON output and `::stop-commands::`", () => {
  it("under GitHub Actions, writes on stderr every `::add-mask::` of a task, those between its `::stop-commands::TOKEN` and `::TOKEN::` too: the runner never sees a stop inside a record, so keeping to it only left values unmasked; another task's goes as well", async () => {
    // A stop, its token, one not ended, a "\r": none holds a mask back.
    const ws = await printing(["::stop-commands::Tok%2541", "::add-mask::quoted", "::tok%41::", "::add-mask::after", "::stop-commands::t2", "10%\r::add-mask::cr"]);
    await writeFile(ws.file, "tasks:\n  quiet:\n    run: cat lines.txt\n  other:\n    run: sleep 0.3; echo '::add-mask::other'\n");
    const gitHub = await runCli(["run", ws.file, "--output", "json", "--log-dir", ws.logs], { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(gitHub.code).toBe(0);
    expect(gitHub.stderr.split("\n").filter((line) => line !== "")).toEqual(["::add-mask::quoted", "::add-mask::after", "::add-mask::cr", "::add-mask::other"]);
  });
});

describe("GitHub Actions and the runner's older form of a command, `##[name]data`", () => {
  it("under GitHub Actions, writes on stderr as `::add-mask::` a task's `##[add-mask]value`, which the runner reads anywhere in a line (one with a `%` not, whose escapes that form reads otherwise), whatever `##[stop-commands]` came before it; and quotes a failed task's last line holding `##[` in the summary", async () => {
    const ws = await printing(["x ##[add-mask]leg1", "##[add-mask]pct%3Bx", "##[stop-commands]Tk", "##[add-mask]no", "::tk::", "50%\r##[ADD-MASK]leg2", "##[error]made an annotation"]);
    const gitHub = await runCli(["run", ws.file, "--output", "json", "--log-dir", ws.logs], { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(gitHub.code).toBe(0);
    expect(gitHub.stderr.split("\n").filter((line) => line !== "")).toEqual(["::add-mask::leg1", "::add-mask::no", "::add-mask::leg2"]);
    await writeFile(path.join(ws.dir, "lines.txt"), "a ##[error]made an annotation\n");
    await writeFile(ws.file, "tasks:\n  lint:\n    run: cat lines.txt; exit 1\n");
    const plain = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(plain.code).toBe(1);
    const lines = plain.stdout.split("\n");
    const stop = lines.findIndex((line) => line.startsWith("::stop-commands::"));
    expect(stop).not.toBe(-1);
    expect(lines[stop + 1]).toBe("      a ##[error]made an annotation");
  });
});

describe("GitHub Actions, JSON output and the states of a line past 4 KiB", () => {
  it("under GitHub Actions, writes on stderr an `::add-mask::` that a \"\\r\" ends in a line past 4 KiB, whose record holds its last state alone: the runner, reading the state as a line, masks the value; dropped unread, the value showed in every later record", async () => {
    // Whole in one write, and in pieces a second apart (the state dropped from the line held open).
    const ws = await workspace(
      "tasks:\n" +
        "  whole:\n    run: x=$(head -c 5000 /dev/zero | tr '\\0' x); printf '::add-mask::s3cret\\r%s\\n' \"$x\"; echo 'token s3cret'\n" +
        "  pieces:\n    run: x=$(head -c 5000 /dev/zero | tr '\\0' y); printf '  ::add-mask::pa55\\r'; sleep 0.3; printf '%s\\r' \"$x\"; sleep 0.3; printf 'last\\n'; echo 'token pa55'\n",
    );
    const gitHub = await runCli(["run", ws.file, "--output", "json", "--log-dir", ws.logs], { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(gitHub.code).toBe(0);
    expect(gitHub.stderr.split("\n").filter((line) => line !== "").sort()).toEqual(["::add-mask::pa55", "::add-mask::s3cret"]);
  });
});

describe("GitHub Actions and a failed task's last lines in the summary", () => {
  it("under GitHub Actions, cuts a last line longer than 1,000 characters after a whole word, in plain lines and JSON: cut at the 1,000th, a token across it showed its first part, which the runner, masking a value only whole, did not mask", async () => {
    const token = `ghs_${"T0k3n".repeat(7)}1`;
    const words = "word ".repeat(197);
    const across = `${words}${token} after`;
    const solid = "0".repeat(1100);
    const ws = await printing([across, solid]);
    await writeFile(ws.file, "tasks:\n  lint:\n    run: cat lines.txt; exit 3\n");
    const tails = async (output: "plain" | "json", env: Record<string, string | undefined>): Promise<string[]> => {
      const result = await runCli(["run", ws.file, "--output", output, "--log-dir", ws.logs], { cwd: ws.dir, env });
      expect(result.code).toBe(1);
      if (output === "json") {
        const summary = JSON.parse(result.stdout.trim().split("\n").at(-1) as string) as { deadLetters: { tail: string[] }[] };
        return summary.deadLetters[0]?.tail ?? [];
      }
      const lines = result.stdout.split("\n");
      const at = lines.findIndex((line) => line.trim() === "last 2 lines:");
      return lines.slice(at + 1, at + 3).map((line) => line.trim());
    };
    for (const output of ["plain", "json"] as const) {
      expect(await tails(output, { GITHUB_ACTIONS: "true" })).toEqual([`${words.trimEnd()}… (${across.length} bytes)`, `… (${solid.length} bytes)`]);
      // Outside GitHub Actions, at the 1,000th character as before.
      expect(await tails(output, { GITHUB_ACTIONS: undefined })).toEqual([`${across.slice(0, 1000)}… (${across.length} bytes)`, `${solid.slice(0, 1000)}… (${solid.length} bytes)`]);
    }
  });
});

describe("GitHub Actions and workflow commands in the summary", () => {
  it("under GitHub Actions, quotes a failed task's last lines that hold a workflow command between `::stop-commands::` and its token: the runner, which trims their indent, made an `::error` annotation twice and put the rest of the summary into a `::group::`", async () => {
    const ws = await workspace("tasks:\n  lint:\n    run: cat lines.txt; exit 1\n  quiet:\n    run: echo 'plain words'; exit 2\n");
    await writeFile(path.join(ws.dir, "lines.txt"), "::error file=a.ts,line=3::bad thing\n::group::Build\nhello\n");
    const summaryOf = async (env: Record<string, string | undefined>): Promise<string[]> => {
      const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env });
      expect(result.code).toBe(1);
      const lines = result.stdout.split("\n");
      return lines.slice(lines.findIndex((line) => line.startsWith("Dead letters")));
    };
    const gitHub = await summaryOf({ GITHUB_ACTIONS: "true" });
    const stop = gitHub.findIndex((line) => line.startsWith("::stop-commands::"));
    const token = /^::stop-commands::(taskq-[0-9a-f]{16})$/.exec(gitHub[stop] as string)?.[1];
    expect(token).toBeDefined();
    expect(gitHub.slice(stop + 1, stop + 5)).toEqual(["      ::error file=a.ts,line=3::bad thing", "      ::group::Build", "      hello", `::${token}::`]);
    // One stop only: the task whose lines hold no command is quoted as before.
    expect(gitHub.filter((line) => line.startsWith("::stop-commands::"))).toHaveLength(1);
    expect(gitHub).toContain("      plain words");
    const outside = await summaryOf({ GITHUB_ACTIONS: undefined });
    expect(outside.some((line) => line.includes("::stop-commands::") || line.startsWith("::taskq-"))).toBe(false);
    expect(outside).toContain("      ::group::Build");
  });
});

describe("GitHub Actions, a retry and the previous attempt's `::stop-commands::`", () => {
  /** A task whose first attempt opens a `::stop-commands::` and fails, and whose second masks a value and prints it. */
  async function retried(): Promise<{ dir: string; file: string; logs: string }> {
    const run = "if [ -f first ]; then echo ::add-mask::s3cretA; echo token=s3cretA; else touch first; echo ::stop-commands::tok1; exit 1; fi";
    return workspace(`tasks:\n  lint:\n    run: ${JSON.stringify(run)}\n    retries: 1\n    backoff: { base: 50ms, max: 50ms }\n`);
  }

  it("under GitHub Actions, plain output: the next attempt, a new process, is not held to the stop of the one before: its `::add-mask::` goes bare, for the runner to read", async () => {
    const ws = await retried();
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines).toContain("lint | ::stop-commands::tok1");
    expect(lines).toContain("::add-mask::s3cretA");
    expect(lines).toContain("lint | token=s3cretA");
  });

  it("under GitHub Actions, JSON output: the next attempt's `::add-mask::` goes to stderr, not held back by the stop of the one before", async () => {
    const ws = await retried();
    const result = await runCli(["run", ws.file, "--output", "json", "--log-dir", ws.logs], { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(result.code).toBe(0);
    expect(result.stderr.split("\n").filter((line) => line !== "")).toEqual(["::add-mask::s3cretA"]);
  });
});

describe("GitHub Actions, JSON output and `##[` in a record", () => {
  it("under GitHub Actions, writes each `[` after `##` in a record as `\\u005b`, the same text decoded, so that the runner reads no `##[stop-commands]` or `##[error]` in stdout's records, the summary's tail included; without, as before", async () => {
    const ws = await printing(["##[stop-commands]tok\"}", "a ##[error]made an annotation", "y ##[warning]w ##[group]g"]);
    await writeFile(ws.file, "tasks:\n  lint:\n    run: cat lines.txt; exit 1\n");
    const args = ["run", ws.file, "--output", "json", "--log-dir", ws.logs];
    for (const env of [{ GITHUB_ACTIONS: "true" }, { GITHUB_ACTIONS: undefined }]) {
      const result = await runCli(args, { cwd: ws.dir, env });
      expect(result.code).toBe(1);
      const records = result.stdout.trim().split("\n");
      const parsed = records.map((line) => JSON.parse(line) as { event: string; text?: string });
      expect(parsed.filter((record) => record.event === "output").map((record) => record.text)).toEqual(ws.text.trimEnd().split("\n"));
      expect(JSON.stringify(parsed.find((record) => record.event === "summary"))).toContain("##[error]made an annotation");
      if (env.GITHUB_ACTIONS === "true") expect(records.filter((line) => line.includes("##["))).toEqual([]);
      else expect(records.filter((line) => line.includes("##[")).length).toBeGreaterThan(3);
    }
  });
});

describe("GitHub Actions, plain output and a `::stop-commands::` after a carriage return, or one the runner refuses", () => {
  it("under GitHub Actions, keeps behind the prefix a stop after a `\\r`, which the runner reads as a line's start; ends a task's stop at a resume after a `\\r`; and takes no stop from a token the runner refuses", async () => {
    const ws = await printing(["x\r::stop-commands::tok2", "::error::as text", "::tok2::", "::add-mask::m2", "::stop-commands::toky", "::add-mask::no", "done\r::toky::", "::add-mask::m4", "::stop-commands::error", "::add-mask::m3", "::stop-commands::pause-logging", "::add-mask::m5"]);
    const { stdout } = await run(ws, { GITHUB_ACTIONS: "true" });
    const lines = taskLines(stdout);
    expect(lines).toContain("lint | x\rlint | ::stop-commands::tok2");
    expect(lines).toContain("lint | ::error::as text");
    expect(lines).toContain("lint | ::add-mask::no");
    for (const bare of ["::add-mask::m2", "::add-mask::m4", "::stop-commands::error", "::add-mask::m3", "::add-mask::m5"]) expect(lines).toContain(bare);
  });
});

describe("GitHub Actions, plain output and a `::group::` a task leaves open", () => {
  /** The runner's groups do not nest, and the last `::group::` read holds every line after it until an `::endgroup::`. */
  const openGroupAt = (lines: string[], index: number): boolean => {
    let open = false;
    for (const line of lines.slice(0, index)) {
      if (line.startsWith("::group::")) open = true;
      else if (line === "::endgroup::") open = false;
    }
    return open;
  };

  it("under GitHub Actions, ends a group a task's attempt left open (a step under `set -e` that failed in it, a timeout, a retry) before taskq's line of its end: the runner folded the rest of the log into it, the summary and its dead letters too", async () => {
    const ws = await workspace(
      [
        "tasks:",
        // Fails between its `::group::` and its `::endgroup::`, as `set -e` leaves it.
        `  install: { run: "set -e; echo '::group::npm ci'; echo installing; false; echo '::endgroup::'" }`,
        // Cut short by its timeout inside its group, then retried: each attempt's group ends with it.
        `  slow: { run: "echo '::group::slow step'; echo waiting; sleep 30", timeout: 500ms, retries: 1, backoff: { base: 10ms } }`,
        // Closes its own group: no second `::endgroup::` of taskq's.
        `  tidy: { run: "echo '::group::tidy'; echo inside; echo '::endgroup::'; echo after" }`,
        `  later: { run: "echo later line", dependsOn: tidy }`,
      ].join("\n") + "\n",
    );
    // One at a time: each group is the task's own, as the runner reads it (its groups do not nest).
    const args = ["run", ws.file, "--output", "plain", "--log-dir", ws.logs, "-j", "1"];
    const result = await runCli(args, { cwd: ws.dir, env: { GITHUB_ACTIONS: "true" } });
    expect(result.code).toBe(1);
    const lines = result.stdout.split("\n");
    // Every line of taskq's that says a task's end, the other tasks' lines and the summary are in no group.
    for (const [index, line] of lines.entries()) {
      if (/ (FAILED|retry|ok) {2,6}\S/.test(line) || line.startsWith("later |") || line.startsWith("Summary:") || line.startsWith("Dead letters")) {
        expect({ line, open: openGroupAt(lines, index) }).toEqual({ line, open: false });
      }
    }
    expect(openGroupAt(lines, lines.length)).toBe(false);
    // One `::endgroup::` for each group opened: taskq's where the task left one open, the task's own where it closed it.
    expect(lines.filter((line) => line.startsWith("::group::"))).toHaveLength(4);
    expect(lines.filter((line) => line === "::endgroup::")).toHaveLength(4);
    // The logs keep what the tasks wrote, nothing of taskq's group.
    const [runId] = await runIds(ws.logs);
    expect(await readFile(path.join(ws.logs, runId as string, "install.log"), "utf8")).toBe("::group::npm ci\ninstalling\n--- taskq: attempt 1 exited with code 1 ---\n");
    // Outside GitHub Actions, nothing is added.
    const outside = await runCli(args, { cwd: ws.dir, env: { GITHUB_ACTIONS: undefined } });
    expect(outside.stdout.split("\n").filter((line) => line.includes("::endgroup::"))).toEqual(["tidy | ::endgroup::"]);
  });
});
