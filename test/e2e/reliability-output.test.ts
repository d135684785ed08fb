import { execFile, spawn } from "node:child_process";
import { createReadStream, existsSync, openSync, closeSync } from "node:fs";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, FIXTURES, removeWorkspaces, runIds, workspace } from "../helpers/cli.js";
import { findLeftovers } from "../helpers/processes.js";
import { SLACK_MS, checkAllClean, runToEnd, startRun, tasksYaml } from "./reliability-harness.js";

const run = promisify(execFile);
const TIME = "/usr/bin/time";
const MB = 1024 * 1024;
/** The peak RSS budget of taskq itself, in KiB. */
const RSS_LIMIT_KB = 150 * 1024;

/** Log roots of runs started outside the harness, checked for leftovers after each test. */
let ownLogRoots: string[] = [];
afterEach(async () => {
  for (const logs of ownLogRoots) for (const runId of await runIds(logs)) expect(await findLeftovers(runId)).toEqual([]);
  ownLogRoots = [];
  await checkAllClean();
  await removeWorkspaces(); // some tests here leave 100-300 MB of logs
});

function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "true", NO_COLOR: "1", PATH: `${FIXTURES}:${process.env.PATH ?? ""}`, ...extra };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return env;
}

/** Polls a process's VmHWM (the kernel's high-water mark of its RSS); stop() returns the highest seen, in KiB. */
function watchPeakRss(pid: number): { stop: () => number } {
  let peakKb = 0;
  const poll = setInterval(() => {
    void readFile(`/proc/${pid}/status`, "utf8")
      .then((text) => (peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(text)?.[1] ?? 0))))
      .catch(() => undefined);
  }, 50);
  return {
    stop: () => {
      clearInterval(poll);
      return peakKb;
    },
  };
}

/**
 * Runs `taskq run` with stdout to `stdoutPath` and measures taskq's peak RSS: with
 * /usr/bin/time -f %M when present, else by polling VmHWM (the kernel's high-water mark).
 */
async function runMeasured(yaml: string, stdoutPath: string, args: string[] = [], env: Record<string, string> = {}) {
  const ws = await workspace(yaml);
  ownLogRoots.push(ws.logs);
  const peakFile = path.join(ws.dir, "peak");
  const useTime = existsSync(TIME);
  const command = ["run", ws.file, "--log-dir", ws.logs, ...args];
  const out = openSync(stdoutPath, "w");
  const child = useTime
    ? spawn(TIME, ["-f", "%M", "-o", peakFile, process.execPath, BIN, ...command], { cwd: ws.dir, env: cliEnv(env), stdio: ["ignore", out, "pipe"], detached: true })
    : spawn(process.execPath, [BIN, ...command], { cwd: ws.dir, env: cliEnv(env), stdio: ["ignore", out, "pipe"], detached: true });
  closeSync(out);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const peak = watchPeakRss(child.pid!);
  const code = await new Promise<number | null>((resolve) => child.on("close", (exitCode) => resolve(exitCode)));
  const polledKb = peak.stop();
  const peakKb = useTime ? Number((await readFile(peakFile, "utf8")).trim().split("\n").at(-1)) : polledKb;
  const [runId] = await runIds(ws.logs);
  return { code, stderr, peakKb, dir: ws.dir, logDir: path.join(ws.logs, runId!) };
}

/** True when the file is `record` repeated `count` times (streamed: the file may be huge). */
async function fileRepeats(file: string, record: Buffer, count: number): Promise<boolean> {
  if ((await stat(file)).size !== record.length * count) return false;
  const chunkRecords = 1024;
  const expected = Buffer.concat(Array.from({ length: chunkRecords }, () => record));
  let offset = 0;
  // Chunks are whole multiples of the record, so each compares against the same buffer.
  for await (const chunk of createReadStream(file, { highWaterMark: record.length * chunkRecords }) as AsyncIterable<Buffer>) {
    if (!chunk.equals(expected.subarray(0, chunk.length))) return false;
    offset += chunk.length;
  }
  return offset === record.length * count;
}

describe("output", () => {
  const FAIL_LINES = 20_000;
  const failingYaml = tasksYaml([["big", `{ run: "print-lines ${FAIL_LINES} ${"x".repeat(60)}; exit 3" }`]]);

  it("more than 64 KiB then a failure, piped: every byte arrives (case 8)", async () => {
    const result = await runToEnd(failingYaml);
    expect(result.code).toBe(1);
    const lines = [...result.stdout.matchAll(/^big \| x{60}(\d+)$/gm)].map((m) => Number(m[1]));
    expect(lines).toEqual(Array.from({ length: FAIL_LINES }, (_, i) => i + 1));
    expect(result.stdout).toMatch(/✗ big: exited with code 3/);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toMatch(/^logs: /);

    const ws = await workspace(failingYaml);
    ownLogRoots.push(ws.logs);
    const counted = await run("bash", ["-c", `set -o pipefail; "${process.execPath}" "${BIN}" run "${ws.file}" --log-dir "${ws.logs}" | wc -c`], { env: cliEnv() }).catch(
      (error: { code: number; stdout: string }) => error,
    );
    const taskBytes = Array.from({ length: FAIL_LINES }, (_, i) => `big | ${"x".repeat(60)}${i + 1}\n`.length).reduce((a, b) => a + b, 0);
    expect(Number(counted.stdout.trim())).toBeGreaterThan(taskBytes + 200);
    expect((counted as { code?: number }).code).toBe(1);
  });

  it("`taskq run f.yaml | head -1`: no crash, the run completes, its log is whole (case 8)", async () => {
    const ws = await workspace(failingYaml);
    ownLogRoots.push(ws.logs);
    const outcome = await run("bash", ["-c", `set -o pipefail; "${process.execPath}" "${BIN}" run "${ws.file}" --log-dir "${ws.logs}" | head -1`], {
      env: cliEnv(),
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect((outcome as { code?: number }).code).toBe(1); // the task's failure, not a crash
    expect(outcome.stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(outcome.stderr).toBe("");
    const [runId] = await runIds(ws.logs);
    const log = await readFile(path.join(ws.logs, runId!, "big.log"), "utf8");
    // Every line the task wrote, then how its attempt ended.
    const logLines = log.split("\n").filter(Boolean);
    expect(logLines).toHaveLength(FAIL_LINES + 1);
    expect(logLines.at(-1)).toBe("--- taskq: attempt 1 exited with code 3 ---");
  });

  it("300 MB on stdout: taskq's peak RSS stays under 150 MB and the log holds every byte (case 13)", { timeout: 120_000 }, async () => {
    const yaml = "tasks:\n  big:\n    run: |\n      line=$(head -c 999 /dev/zero | tr '\\0' x)\n      yes \"$line\" | head -c 314572800\n";
    const result = await runMeasured(yaml, "/dev/null");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.peakKb).toBeGreaterThan(0);
    expect(result.peakKb).toBeLessThan(RSS_LIMIT_KB);
    expect(await fileRepeats(path.join(result.logDir, "big.log"), Buffer.from(`${"x".repeat(999)}\n`), 314_572_800 / 1000)).toBe(true);
  });

  // Lines go whole under GitHub Actions (up to 1 MiB), for its runner to mask a secret in them: a failed task's last lines
  // held 20 of them whole, 8 tasks at -j 8 ~280 MB, where they keep what the summary shows of each.
  it("under GitHub Actions, 8 tasks each writing 20 lines of 1 MB: taskq's peak RSS stays under 150 MB and the summary shows each cut", { timeout: 120_000 }, async () => {
    const task = `{ run: "for i in $(seq 20); do head -c 1000000 /dev/zero | tr '\\\\0' x; echo; done; sleep 1; exit 3" }`;
    const yaml = tasksYaml(Array.from({ length: 8 }, (_, i): [string, string] => [`t${i}`, task]));
    const stdout = path.join((await workspace("")).dir, "stdout");
    const result = await runMeasured(yaml, stdout, ["-j", "8"], { GITHUB_ACTIONS: "true" });
    expect(result.code).toBe(1);
    expect(result.peakKb).toBeGreaterThan(0);
    expect(result.peakKb).toBeLessThan(RSS_LIMIT_KB);
    const text = await readFile(stdout, "utf8");
    // Each line whole on the way out, as the runner reads it; cut in the summary's last lines, after a whole word: with
    // none in its first 1,000 characters, its length alone.
    expect(text.split("\n").filter((line) => line === `t0 | ${"x".repeat(1_000_000)}`)).toHaveLength(20);
    expect(text).toContain(`\n      … (1000000 bytes)\n`);
  });

  // With --output json, a record's text holds each line whole too, a string of 1 MB: a failed task's last lines held 20 of
  // them, 8 tasks at -j 8 a peak of ~290 MB (~155 MB where they keep what the summary shows of each; each line is decoded
  // and written as JSON, more garbage than plain output's bytes make, so the budget is larger).
  it("under GitHub Actions with --output json, 8 tasks each writing 20 lines of 1 MB: taskq's peak RSS stays under 220 MB and the summary shows each cut", { timeout: 120_000 }, async () => {
    const task = `{ run: "for i in $(seq 20); do head -c 1000000 /dev/zero | tr '\\\\0' x; echo; done; sleep 1; exit 3" }`;
    const yaml = tasksYaml(Array.from({ length: 8 }, (_, i): [string, string] => [`t${i}`, task]));
    const stdout = path.join((await workspace("")).dir, "stdout");
    const result = await runMeasured(yaml, stdout, ["-j", "8", "--output", "json"], { GITHUB_ACTIONS: "true" });
    expect(result.code).toBe(1);
    expect(result.peakKb).toBeGreaterThan(0);
    expect(result.peakKb).toBeLessThan(220 * 1024);
    const records = (await readFile(stdout, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; id?: string; text?: string; deadLetters?: { id: string; tail: string[] }[] });
    // Each line whole in its record, as the runner reads it; cut in the summary's last lines.
    expect(records.filter((record) => record.event === "output" && record.id === "t0" && record.text === "x".repeat(1_000_000))).toHaveLength(20);
    const letter = records.find((record) => record.event === "summary")?.deadLetters?.find((each) => each.id === "t0");
    expect(letter?.tail.at(-1)).toBe("… (1000000 bytes)");
  });

  it("a reader of taskq's output that falls behind: the task waits, taskq's memory stays bounded, nothing is lost (case 13)", { timeout: 120_000 }, async () => {
    const bytes = 100_000_000;
    const ws = await workspace(`tasks:\n  loud: { run: "yes ${"x".repeat(99)} | head -c ${bytes}" }\n`);
    ownLogRoots.push(ws.logs);
    const child = spawn(process.execPath, [BIN, "run", ws.file, "--log-dir", ws.logs, "--output", "plain"], {
      cwd: ws.dir,
      env: cliEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const peak = watchPeakRss(child.pid!);
    const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    // Nobody reads taskq's stdout for two seconds: a CI log collector that stalls.
    child.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const [runId] = await runIds(ws.logs);
    const logPath = path.join(ws.logs, runId!, "loud.log");
    const loggedWhileStalled = (await stat(logPath)).size;
    let lines = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    });
    child.stdout.resume();
    const code = await closed;
    const peakKb = peak.stop();
    expect(code).toBe(0);
    // The task was held back, not taskq's memory filled: well under what it would write in 2 s.
    expect(loggedWhileStalled).toBeLessThan(bytes / 4);
    expect(peakKb).toBeGreaterThan(0);
    expect(peakKb).toBeLessThan(120 * 1024);
    expect((await stat(logPath)).size).toBe(bytes);
    expect(lines).toBeGreaterThanOrEqual(bytes / 100); // every output line reached the reader, plus taskq's own
  });

  it("one 50 MB line without a newline: a bounded prefix on screen, the whole line in the log, bounded memory (case 14)", { timeout: 60_000 }, async () => {
    const ws = await workspace("");
    const stdoutPath = path.join(ws.dir, "stdout");
    const result = await runMeasured(tasksYaml([["line", `{ run: "head -c ${50 * MB} /dev/zero | tr '\\\\0' a" }`]]), stdoutPath);
    expect(result.code).toBe(0);
    expect(result.peakKb).toBeLessThan(RSS_LIMIT_KB);
    const screen = await readFile(stdoutPath, "utf8");
    expect(screen.length).toBeLessThan(64 * 1024);
    expect(screen).toContain(`line | ${"a".repeat(4096)}… (${50 * MB} bytes)\n`);
    expect(await fileRepeats(path.join(result.logDir, "line.log"), Buffer.from("a".repeat(1024)), (50 * MB) / 1024)).toBe(true);
  });

  it("a progress bar rewritten with \\r past 4 KiB: the console and the summary show its last state, the log every state", async () => {
    // 1,000 states of ~20 bytes, as pip, curl or docker draw them, then a failure: its summary shows the last lines too.
    const bar = `for i in $(seq 1 1000); do printf '\\\\rdownloading %d/1000' $i; done; printf '\\\\n'; exit 3`;
    const yaml = tasksYaml([["bar", `{ run: "${bar}" }`]]);
    const plain = await runToEnd(yaml, ["--output", "plain"]);
    expect(plain.code).toBe(1);
    const lines = plain.stdout.split("\n");
    // Piped, the prefix again after the `\r`: a CI log page that honours it shows whose line it is.
    expect(lines).toContain("bar | \rbar | downloading 1000/1000");
    expect(plain.stdout).not.toContain("downloading 1/1000");
    const summaryTail = lines.slice(lines.findIndex((line) => line.includes("FAILED")));
    expect(summaryTail.some((line) => line.endsWith("downloading 1000/1000"))).toBe(true);
    const log = await readFile(path.join(plain.logDir, "bar.log"), "utf8");
    expect(log.startsWith("\rdownloading 1/1000\rdownloading 2/1000")).toBe(true);
    expect(log.endsWith("\rdownloading 1000/1000\n--- taskq: attempt 1 exited with code 3 ---\n")).toBe(true);

    const json = await runToEnd(yaml, ["--output", "json"]);
    const output = json.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { event: string; text?: string; tasks?: Array<{ tail?: string[] }> });
    expect(output.filter((e) => e.event === "output").map((e) => e.text)).toEqual(["\rdownloading 1000/1000"]);
  });

  it("a progress bar rewritten with \\r, over 1,000 characters but under 4 KiB: the summary's last line is its last state, not its first cut short", async () => {
    // 100 states of 14 bytes, then the last: the terminal's summary showed "progre… (1412 bytes)".
    const bar = `i=0; while [ $i -lt 100 ]; do printf 'progress %03d%%%%\\\\r' $i; i=$((i+1)); done; echo 'finished all'; exit 1`;
    const yaml = tasksYaml([["bar", `{ run: "${bar}" }`]]);
    const plain = await runToEnd(yaml, ["--output", "plain"]);
    expect(plain.code).toBe(1);
    const lines = plain.stdout.split("\n");
    const summaryTail = lines.slice(lines.findIndex((line) => line.startsWith("Dead letters")));
    expect(summaryTail).toContain("      \rfinished all");
    expect(summaryTail.join("\n")).not.toContain("progress 000%");
    const json = await runToEnd(yaml, ["--output", "json"]);
    const summary = JSON.parse(json.stdout.trimEnd().split("\n").at(-1) as string) as { deadLetters: Array<{ tail: string[] }> };
    expect(summary.deadLetters[0]?.tail).toEqual(["\rfinished all"]);
  });

  it("piped, a line cut for length and a failed task's last lines leave no colour on and no escape sequence open for the lines after them", async () => {
    // A test runner's red line past 4 KiB, whose reset came past the cut, coloured every line after it in the CI log (other
    // tasks', taskq's own, the summary, the next CI step's); a cut inside a sequence left a lone ESC, or an OSC 8 hyperlink
    // unended, which a terminal takes the lines after it into.
    const script = String.raw`printf '\033[31mERROR: '; head -c 5000 /dev/zero | tr '\0' x; printf '\033[0m\n'
head -c 4094 /dev/zero | tr '\0' y; printf '\033[1mbold\033[0m\n'
printf '\033]8;;https://example.com/'; head -c 5000 /dev/zero | tr '\0' u; printf '\033\\link\033]8;;\033\\\n'
printf '\033[31m'; head -c 1500 /dev/zero | tr '\0' z; printf '\033[0m\n'
printf '\033[31mFAIL: no reset\n'
printf '\033]8;;https://example.com/'; head -c 4070 /dev/zero | tr '\0' v; printf '\033\\'; head -c 100 /dev/zero | tr '\0' w; printf '\033]8;;\033\\\n'
exit 1`;
    const run = script
      .split("\n")
      .map((line) => `      ${line}`)
      .join("\n");
    const yaml = `tasks:\n  red:\n    run: |\n${run}\n  after:\n    run: echo plain words\n    dependsOn: red\n`;
    const plain = await runToEnd(yaml, ["--output", "plain"]);
    expect(plain.code).toBe(1);
    // A line after one that left a colour set ("FAIL: no reset") starts with a reset, before its prefix, and has the colour
    // set again after it: a line that ends in a colour is one the next line's reset ends.
    const raw = plain.stdout.split("\n");
    const resetAfter = new Set(raw.flatMap((line, index) => (raw[index + 1]?.startsWith("\x1b[0m") === true ? [index] : [])));
    const lines = raw.map((line) => (line.startsWith("\x1b[0m") ? line.slice(4) : line));
    expect(lines.filter((line) => line.startsWith("red | ") && line.endsWith(" bytes)"))).toHaveLength(4);
    expect(lines.filter((line) => line.startsWith("      ") && line.includes("\x1b"))).toHaveLength(3);
    // A streamed line goes as written, but where taskq cut it; the summary's lines are taskq's text.
    for (const [index, line] of lines.entries()) {
      if (line.startsWith("red | ") && !line.endsWith(" bytes)")) continue;
      const shown = JSON.stringify(line.slice(-60));
      // eslint-disable-next-line no-control-regex -- escapes are what is checked
      const colours = [...line.matchAll(/\x1b\[([0-9;]*)m/g)];
      if (colours.length > 0 && !resetAfter.has(index)) expect(colours.at(-1)?.[1], shown).toMatch(/^0?$/);
      // eslint-disable-next-line no-control-regex -- escapes are what is checked
      expect(line, shown).not.toMatch(/\x1b(\[[0-?]*)?…/);
      // eslint-disable-next-line no-control-regex -- escapes are what is checked
      expect(line, shown).not.toMatch(/\x1b\][^\x07\x1b]*($|…|\x1b[^\\])/);
    }
    // The log keeps every byte as written: the reset is the display's alone.
    const log = await readFile(path.join(plain.logDir, "red.log"), "latin1");
    expect(log.startsWith(`\x1b[31mERROR: ${"x".repeat(5000)}\x1b[0m\n${"y".repeat(4094)}\x1b[1mbold`)).toBe(true);
    expect(log).toContain(`\x1b[31mFAIL: no reset\n\x1b]8;;https://example.com/${"v".repeat(4070)}\x1b\\${"w".repeat(100)}\x1b]8;;\x1b\\\n--- taskq: attempt 1`);

    // JSON's text (and the live board's) of a line cut inside a sequence ends before it, as the piped line does.
    const json = await runToEnd(yaml, ["--output", "json"]);
    const texts = json.stdout
      .split("\n")
      .filter((line) => line.includes('"event":"output"'))
      .map((line) => (JSON.parse(line) as { text: string }).text);
    expect(texts.slice(1, 3)).toEqual([`${"y".repeat(4094)}… (4106 bytes)`, "… (5038 bytes)"]);
    // An OSC 8 link whose ST ("ESC \\") the cut splits: the link is left out whole, not open for want of its ST.
    expect(texts.at(-1)).toBe("… (4204 bytes)");
  });

  it("piped, a line cut inside an OSC 8 hyperlink's text, and a failed task's last line so cut, end the link: the lines after them are not part of it", async () => {
    // The link's URI and its ST are kept whole, its text and its end ("ESC ] 8 ; ; ESC \\") past the cut: a reset (SGR 0)
    // does not end a hyperlink, so every line after it (the next task's, taskq's own, the summary) was part of the link.
    const script = String.raw`printf '\033]8;;https://example.com/\033\\'; head -c 5000 /dev/zero | tr '\0' t; printf '\033]8;;\033\\\n'
printf 'between\n'
printf '\033]8;;https://example.com/\033\\'; head -c 2000 /dev/zero | tr '\0' s; printf '\033]8;;\033\\\n'
exit 1`;
    const run = script
      .split("\n")
      .map((line) => `      ${line}`)
      .join("\n");
    const yaml = `tasks:\n  linked:\n    run: |\n${run}\n`;
    const plain = await runToEnd(yaml, ["--output", "plain"]);
    expect(plain.code).toBe(1);
    const lines = plain.stdout.split("\n");
    const cut = lines.filter((line) => line.startsWith("linked | ") && line.endsWith(" bytes)"));
    const quoted = lines.filter((line) => line.startsWith("      ") && line.includes("\x1b]8;;https"));
    expect(cut).toHaveLength(1);
    expect(quoted).toHaveLength(2);
    for (const line of [...cut, ...quoted]) {
      const shown = JSON.stringify(line.slice(-60));
      // The last OSC 8 of the line is a link's end (no URI), after its text.
      // eslint-disable-next-line no-control-regex -- escapes are what is checked
      const links = [...line.matchAll(/\x1b\]8;[^;\x07\x1b]*;([^\x07\x1b]*)(?:\x07|\x1b\\)/g)];
      expect(links.length, shown).toBeGreaterThanOrEqual(2);
      expect(links.at(-1)?.[1], shown).toBe("");
    }
    expect(cut[0]).toContain(`${"t".repeat(1000)}`);
  });

  it("binary output: the log's bytes are exactly what the task wrote (case 15)", async () => {
    const yaml = "tasks:\n  bin:\n    run: |\n      { printf '\\000\\001\\377\\376\\r\\n\\033[2J\\033[31m'; head -c 200000 /dev/urandom; printf '\\r'; } > expected.bin\n      cat expected.bin\n";
    const result = await runToEnd(yaml);
    expect(result.code).toBe(0);
    const expected = await readFile(path.join(result.run.dir, "expected.bin"));
    expect(expected.length).toBe(200_016);
    expect((await readFile(path.join(result.logDir, "bin.log"))).equals(expected)).toBe(true);
  });

  it("tasks that read stdin get EOF at once, even when taskq's own stdin stays open (case 16)", async () => {
    const ws = await workspace(
      tasksYaml([
        ["reader", '{ run: "read x; echo read status $?", timeout: 20s }'],
        ["cat", '{ run: "cat; echo cat done", timeout: 20s }'],
      ]),
    );
    ownLogRoots.push(ws.logs);
    const started = Date.now();
    // stdin is a pipe nobody writes to or closes, like a terminal nobody types into.
    const child = spawn(process.execPath, [BIN, "run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir, env: cliEnv(), stdio: ["pipe", "pipe", "pipe"], detached: true });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.destroy();
    expect(code).toBe(0);
    expect(stdout).toMatch(/reader \| read status 1/);
    expect(stdout).toMatch(/cat \| cat done/);
    expect(Date.now() - started).toBeLessThan(5000 + SLACK_MS);
  });

  it("eight tasks writing 10k lines each, not on a TTY: every line intact and prefixed (case 17)", { timeout: 60_000 }, async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `t${i}`);
    const result = await runToEnd(tasksYaml(ids.map((id) => [id, `{ run: "print-lines 10000 ${id}-" }`])), ["-j", "8"], { CI: "" });
    expect(result.code).toBe(0);
    const seen = new Map<string, number[]>(ids.map((id) => [id, []]));
    for (const line of result.stdout.split("\n")) {
      const match = /^(t\d) \| (t\d)-(\d+)$/.exec(line);
      if (match === null) {
        // Anything else is taskq's own line; a mangled task line would show up here.
        expect(line).not.toMatch(/t\d-\d/);
        continue;
      }
      expect(match[2]).toBe(match[1]);
      seen.get(match[1]!)!.push(Number(match[3]));
    }
    const expected = Array.from({ length: 10_000 }, (_, i) => i + 1);
    for (const id of ids) expect(seen.get(id)).toEqual(expected);
  });

  it("NO_COLOR: no escape bytes from taskq; piped output never moves the cursor (case 18)", async () => {
    const yaml = tasksYaml([
      ["ok", '{ run: "echo fine" }'],
      ["bad", '{ run: "echo broken; exit 1", retries: 1, backoff: { base: 10ms } }'],
    ]);
    const plain = await runToEnd(yaml, [], { CI: "", NO_COLOR: "1" });
    expect(plain.code).toBe(1);
    expect(plain.stdout + plain.stderr).not.toContain("\u001b");
    const coloured = await runToEnd(yaml, [], { CI: "", NO_COLOR: "", FORCE_COLOR: "1" });
    expect(coloured.code).toBe(1);
    expect(coloured.stdout).toContain("\u001b["); // colours are on...
    // ...but nothing that moves the cursor, clears lines or hides the cursor.
    const cursorMoves = new RegExp(String.raw`\x1b\[[0-9;]*[ABCDEFGHJKSTfsu]|\x1b\[\?25[lh]|\r`);
    expect(coloured.stdout + coloured.stderr).not.toMatch(cursorMoves);
  });

  it("a log folder that cannot be created: a clear error, exit 1, nothing run (case 19)", async () => {
    const ws = await workspace(tasksYaml([["a", '{ run: "touch ran" }']]));
    await writeFile(path.join(ws.dir, "regular"), "");
    const logs = path.join(ws.dir, "regular", "logs");
    const child = spawn(process.execPath, [BIN, "run", ws.file, "--log-dir", logs], { cwd: ws.dir, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/^taskq: cannot create the log folder .*regular\/logs\/[\w-]+: .*regular is not a folder \(ENOTDIR\)\n$/);
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  it("a disk that fills up mid-run: the task fails with a clear error, dependents are cancelled, exit 1 (case 19)", async (context) => {
    const ws = await workspace("");
    const mountPoint = path.join(ws.dir, "tiny");
    await mkdir(mountPoint);
    const mounted = await run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint]).then(
      () => true,
      () => false,
    );
    if (!mounted) context.skip("cannot mount a small tmpfs here (needs root and mount rights)");
    try {
      const yaml = tasksYaml([
        ["writer", `{ run: "print-lines 100000 ${"x".repeat(40)}" }`],
        ["after", '{ run: "touch ran-after", dependsOn: writer }'],
      ]);
      const result = await startRun(yaml, ["--log-dir", mountPoint]);
      const outcome = await result.done;
      expect(outcome.code).toBe(1);
      expect(outcome.stdout).toMatch(/FAILED\s+writer: cannot write log file .*writer\.log: ENOSPC/);
      expect(outcome.stdout).toMatch(/cancel\s+after: dependency "writer" failed/);
      expect(outcome.stderr).toBe("");
      expect(existsSync(path.join(result.dir, "ran-after"))).toBe(false);
      const [runId] = await runIds(mountPoint);
      expect(await findLeftovers(runId!)).toEqual([]);
    } finally {
      await run("umount", [mountPoint]).catch(() => undefined);
      await rm(mountPoint, { recursive: true, force: true });
    }
  });
});

