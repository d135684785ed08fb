import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import pg from "pg";
import { BIN, FIXTURES, runCli, runIds, workspace } from "../helpers/cli.js";
import { leftoversCheckedAfterEach } from "../helpers/processes.js";
import { taskqOnPty } from "../helpers/pty.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../store/helpers.js";

/** What defaults' retryOn is told, after `defaults: retryOn `, where no task that takes it sets retries. */
const NOTHING_TO_RETRY =
  "does nothing without retries (which default to 0): the tasks that take it make one attempt each, never retried; add retries: N to defaults for up to N more attempts";

// Every e2e run must leave no task process behind.
const logRoots = leftoversCheckedAfterEach();

/**
 * A pipeline whose tasks each leave a marker file: deploy needs test and lint, test needs build,
 * build and lint need setup. `docs` stands apart, and fails: run, it would fail the run.
 */
const PIPELINE = `tasks:
  setup: { run: "touch setup.done" }
  build: { run: "touch build.done", dependsOn: [setup] }
  test: { run: "touch test.done", dependsOn: [build] }
  lint: { run: "touch lint.done", dependsOn: [setup] }
  deploy: { run: "touch deploy.done", dependsOn: [test, lint] }
  docs: { run: "touch docs.done; exit 1" }
`;

const TASKS = ["setup", "build", "test", "lint", "deploy", "docs"];

async function pipeline() {
  const ws = await workspace(PIPELINE);
  logRoots.push(ws.logs);
  const ran = (): string[] => TASKS.filter((task) => existsSync(path.join(ws.dir, `${task}.done`)));
  const taskq = (...args: string[]) => runCli(["run", ws.file, "--log-dir", ws.logs, ...args], { cwd: ws.dir });
  return { ...ws, ran, taskq };
}

/** The CLI with `input` on its standard input. */
function runWithInput(args: string[], input: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, CI: "true", NO_COLOR: "1", PATH: `${FIXTURES}:${process.env.PATH ?? ""}`, TASKQ_KILL_GRACE_MS: undefined }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("taskq run FILE TASK...: only those tasks and what they depend on", () => {
  it("runs a named task and its dependencies, transitively, and nothing else; the start and the summary count those alone", async () => {
    const { taskq, ran } = await pipeline();
    const result = await taskq("test");
    // docs, which fails, is not run: the run succeeds.
    expect(result.code).toBe(0);
    expect(ran()).toEqual(["setup", "build", "test"]);
    expect(result.stdout).toMatch(/^\S+ run \S+: 3 of 6 tasks \(test and what it depends on\), concurrency \d+, logs in /);
    // The others are neither failed nor cancelled: they are not the run's.
    expect(result.stdout).toMatch(/\nSummary: 3 succeeded, 0 failed, 0 cancelled in /);
    for (const task of ["lint", "deploy", "docs"]) expect(result.stdout).not.toMatch(new RegExp(`\\b${task}\\b`));
  });

  it("several tasks: each with what it depends on, a dependency they share run once", async () => {
    const { taskq, ran } = await pipeline();
    const result = await taskq("lint", "build", "lint");
    expect(result.code).toBe(0);
    expect(ran()).toEqual(["setup", "build", "lint"]);
    expect(result.stdout).toMatch(/ run \S+: 3 of 6 tasks \(lint, build and what they depend on\), /);
    expect(result.stdout.match(/ start {3}setup /g)).toHaveLength(1);
    expect(result.stdout).toMatch(/\nSummary: 3 succeeded, 0 failed, 0 cancelled in /);
  });

  it("--json: the run record counts the tasks run, and names those selected and the file's count; the summary counts those run", async () => {
    const { taskq, ran } = await pipeline();
    const result = await taskq("--json", "build");
    expect(result.code).toBe(0);
    expect(ran()).toEqual(["setup", "build"]);
    const records = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[0]).toMatchObject({ event: "run", tasks: 2, selected: ["build"], fileTasks: 6 });
    expect(records.filter((record) => record.event === "submitted").map((record) => record.id)).toEqual(["setup", "build"]);
    expect(records.at(-1)).toMatchObject({ event: "summary", counts: { SUCCEEDED: 2, FAILED: 0, CANCELLED: 0 }, exitCode: 0 });
  });

  it("a failure among the selected tasks fails the run, as ever", async () => {
    const { taskq, ran } = await pipeline();
    const result = await taskq("docs", "setup");
    expect(result.code).toBe(1);
    expect(ran()).toEqual(["setup", "docs"]);
    expect(result.stdout).toMatch(/\nSummary: 1 succeeded, 1 failed, 0 cancelled in /);
  });

  it("an id the file has no task for: exit 2, the id named with the task meant, and nothing runs", async () => {
    const { taskq, ran, file, logs } = await pipeline();
    const typo = await taskq("tset");
    expect(typo).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${file} has no task "tset": nothing was run; did you mean "test"?\n` });
    // A good id beside it does not run either.
    const several = await taskq("build", "lnt", "zzz");
    expect(several).toMatchObject({ code: 2, stdout: "" });
    expect(several.stderr).toBe(`taskq: ${file} has no task "lnt" (did you mean "lint"?) or "zzz": nothing was run (taskq list ${file} lists its tasks)\n`);
    const none = await taskq("zzz");
    expect(none.stderr).toBe(`taskq: ${file} has no task "zzz": nothing was run (taskq list ${file} lists its tasks)\n`);
    expect(ran()).toEqual([]);
    expect(await runIds(logs)).toEqual([]);
    // As a record too, with --json.
    const json = await taskq("--json", "tset");
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ event: "error", code: "USAGE", exitCode: 2, message: `${file} has no task "tset": nothing was run; did you mean "test"?` });
  });

  it("an id with white space around it (a task read by $(cat) from a file with Windows line ends) gives the id meant", async () => {
    const { taskq, ran, file } = await pipeline();
    const crlf = await taskq("test\r");
    expect(crlf).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${file} has no task "test\\r" (write it without spaces: test): nothing was run\n` });
    const two = await taskq(" build", "lnt");
    expect(two.stderr).toBe(`taskq: ${file} has no task " build" (write it without spaces: build) or "lnt" (did you mean "lint"?): nothing was run\n`);
    expect(ran()).toEqual([]);
  });

  it("the taskq list the error gives, of a file named with a space, is one a shell runs as written", async () => {
    const ws = await workspace(PIPELINE, "my ci.yaml");
    logRoots.push(ws.logs);
    const none = await runCli(["run", "my ci.yaml", "zzz", "--log-dir", ws.logs], { cwd: ws.dir });
    expect(none).toMatchObject({ code: 2, stdout: "", stderr: `taskq: my ci.yaml has no task "zzz": nothing was run (taskq list 'my ci.yaml' lists its tasks)\n` });
    const list = await runCli(["list", "my ci.yaml"], { cwd: ws.dir });
    expect(list.code).toBe(0);
  });

  it("the file is checked whole first: an invalid file is said as ever, whatever is selected", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true', dependsOn: [b] }\n  c: { run: 'true' }\n");
    const result = await runCli(["run", ws.file, "c"], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('task "a" depends on "b", which is not defined');
    expect(result.stderr).not.toContain("has no task");
  });

  it("--dry-run shows the plan of the selected tasks alone, and runs nothing", async () => {
    const { taskq, ran, file } = await pipeline();
    const result = await taskq("--dry-run", "test");
    expect(result.code).toBe(0);
    expect(ran()).toEqual([]);
    expect(result.stdout.replace(/concurrency \d+/, "concurrency N")).toBe(
      [
        `plan for ${file}: 3 of 6 tasks (test and what it depends on), concurrency N; nothing is run`,
        "   1. setup: touch setup.done  (priority normal)",
        "   2. build: touch build.done  (priority normal; after setup)",
        "   3. test: touch test.done  (priority normal; after build)",
        "",
      ].join("\n"),
    );
    const json = await taskq("--dry-run", "--json", "lint");
    const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[0]).toMatchObject({ event: "plan", tasks: 2, selected: ["lint"], fileTasks: 6 });
    expect(records.slice(1).map((record) => record.id)).toEqual(["setup", "lint"]);
  });

  it("a workflow from standard input (-) takes tasks too", async () => {
    const ws = await workspace(PIPELINE);
    logRoots.push(ws.logs);
    const result = await runWithInput(["run", "-", "build", "--log-dir", ws.logs], PIPELINE, ws.dir);
    expect(result.code).toBe(0);
    expect(TASKS.filter((task) => existsSync(path.join(ws.dir, `${task}.done`)))).toEqual(["setup", "build"]);
    expect(result.stdout).toMatch(/: 2 of 6 tasks \(build and what it depends on\), /);
  });

  it("a word that looks like a flag, after --, is taken for a task id and refused as none; a word after a flag that takes no value is said so", async () => {
    const { taskq, ran, file } = await pipeline();
    const dashed = await taskq("--", "--test");
    expect(dashed.code).toBe(2);
    expect(dashed.stderr).toMatch(new RegExp(`^taskq: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} has no task "--test" \\(not a task id: ids match `));
    const stray = await taskq("--dry-run", "yes");
    expect(stray).toMatchObject({ code: 2, stdout: "" });
    expect(stray.stderr).toBe(`taskq: ${file} has no task "yes": nothing was run (taskq list ${file} lists its tasks); --dry-run takes no value: give it alone\n`);
    // Flags after the tasks are read as flags.
    const after = await taskq("build", "--dry-run");
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/: 2 of 6 tasks \(build and what it depends on\), /);
    expect(ran()).toEqual([]);
  });

  it("a task whose id ends in .yaml is selected, named or after --; words that name no task, all ending in .yaml, are several files", async () => {
    const ws = await workspace(`tasks:\n  x.yaml: { run: "touch x.done" }\n  other: { run: "touch other.done" }\n`);
    logRoots.push(ws.logs);
    const run = (...args: string[]) => runCli(["run", ws.file, "--log-dir", ws.logs, ...args], { cwd: ws.dir });
    for (const words of [["x.yaml"], ["--", "x.yaml"]]) {
      const result = await run(...words);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/: 1 of 2 tasks \(x\.yaml\), /);
    }
    expect(existsSync(path.join(ws.dir, "x.done"))).toBe(true);
    expect(existsSync(path.join(ws.dir, "other.done"))).toBe(false);
    // `taskq run workflows/*.yaml`: a glob of files, the first valid or not, is told as several files.
    await writeFile(path.join(ws.dir, "b.yaml"), "tasks: { b: { run: 'true' } }\n");
    const glob = await run("b.yaml");
    expect(glob).toMatchObject({ code: 2, stdout: "" });
    expect(glob.stderr).toMatch(/^taskq: too many arguments for 'run': it takes one workflow file, and got 2 \(.*workflow\.yaml, b\.yaml\); for each in turn: /);
    await writeFile(path.join(ws.dir, "b.yaml"), "tasks: { b: {} }\n");
    const invalidFirst = await runCli(["run", "b.yaml", path.basename(ws.file)], { cwd: ws.dir });
    expect(invalidFirst).toMatchObject({ code: 2, stdout: "" });
    expect(invalidFirst.stderr).toMatch(/^taskq: too many arguments for 'run': it takes one workflow file, and got 2 \(b\.yaml, workflow\.yaml\)/);
  });

  it("with a store, a selection is refused before anything is stored or run (a durable run is its whole file); submit refuses one too", async () => {
    const { taskq, ran, file, dir } = await pipeline();
    const flag = await taskq("--store", "postgres://127.0.0.1:1/none", "test");
    expect(flag).toMatchObject({ code: 2, stdout: "" });
    expect(flag.stderr).toBe("taskq: selecting tasks (test) is for a local run, and a store is given (--store): a durable run runs every task of its file; run without a store, or give a file with those tasks\n");
    const env = await runCli(["run", file, "test", "--dry-run"], { cwd: dir, env: { TASKQ_STORE: "postgres://127.0.0.1:1/none" } });
    expect(env).toMatchObject({ code: 2, stdout: "" });
    expect(env.stderr).toContain("a store is given (TASKQ_STORE)");
    const submit = await runCli(["submit", file, "test", "--store", "postgres://127.0.0.1:1/none"], { cwd: dir });
    expect(submit).toMatchObject({ code: 2, stdout: "" });
    expect(submit.stderr).toBe(`taskq: too many arguments for 'submit': it takes one workflow file (${file}), and got 'test' besides; a durable run runs every task of its file: selecting tasks is for taskq run without a store\n`);
    expect(ran()).toEqual([]);
  });

  it("says the file's notes about the tasks run alone, and those about the file as a whole: in the run, its --dry-run, and both with --json", async () => {
    // Notes about each kind of place: the file's env (every task's), a task's dependsOn, a retryOn two tasks share, a runAt
    // past and a cwd not there (each of a task left out).
    const ws = await workspace(`env:
  TASKQ_ATTEMPT: "1"
tasks:
  setup: { run: "touch setup.done" }
  build: { run: "touch build.done", dependsOn: [setup, setup] }
  test: { run: "touch test.done", dependsOn: [build], retryOn: &codes [127], retries: 1 }
  lint: { run: "touch lint.done", dependsOn: [setup], retryOn: *codes, retries: 1 }
  deploy: { run: "touch deploy.done", dependsOn: [test, lint], runAt: "2020-01-01T00:00:00Z" }
  docs: { run: "touch docs.done", cwd: nowhere }
`);
    logRoots.push(ws.logs);
    const taskq = (...args: string[]) => runCli(["run", ws.file, "--log-dir", ws.logs, ...args], { cwd: ws.dir });
    const file = ws.file;
    const env = `${file}:2:18: env: TASKQ_ATTEMPT is set by taskq for each task (to the attempt's number): the value given here is never seen`;
    const repeat = `${file}:5:56: task "build": dependsOn lists "setup" more than once; it counts once`;
    const retryOn = (whose: string) => `${file}:6:71: ${whose}: retryOn lists 127: exit codes 126 and 127 (not executable, not found) are never retried`;
    const runAt = `${file}:8:71: task "deploy": runAt 2020-01-01T00:00:00Z is in the past; the task runs once its dependencies are done`;
    const cwd = `${file}:9:40: task "docs": cwd "nowhere" (${path.join(ws.dir, "nowhere")}) does not exist now: no task it depends on could make it first: the task fails to start unless something else makes that folder before then`;
    /** The notes of plain output (the run's, timestamped, or the plan's), and of JSON records, as `file:line:col: message`. */
    const plainNotes = (stdout: string) => [...stdout.matchAll(/^(?:\S+ note {4}|note: )(.*)$/gm)].map((match) => match[1]);
    const jsonNotes = (stdout: string) =>
      stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { event: string; message: string; file: string; line: number; col: number })
        .filter((record) => record.event === "note")
        .map((record) => `${record.file}:${record.line}:${record.col}: ${record.message}`);

    // The whole file: every note, as before.
    expect(plainNotes((await taskq("--dry-run")).stdout)).toEqual([env, repeat, retryOn('tasks "test" and "lint"'), runAt, cwd]);
    // test and what it depends on: not deploy's runAt, nor docs' cwd; the retryOn test shares with lint is said of test alone.
    const expected = [env, repeat, retryOn('task "test"')];
    const run = await taskq("test");
    expect(run.code).toBe(0);
    expect(plainNotes(run.stdout)).toEqual(expected);
    const plan = await taskq("test", "--dry-run");
    expect(plainNotes(plan.stdout)).toEqual(expected);
    const json = await taskq("test", "--json");
    expect(json.code).toBe(0);
    expect(jsonNotes(json.stdout)).toEqual(expected);
    expect(jsonNotes((await taskq("test", "--dry-run", "--json")).stdout)).toEqual(expected);
    // lint and docs: each note of theirs, none of build's, test's or deploy's.
    expect(plainNotes((await taskq("lint", "docs", "--dry-run")).stdout)).toEqual([env, retryOn('task "lint"'), cwd]);
    expect(TASKS.filter((task) => existsSync(path.join(ws.dir, `${task}.done`)))).toEqual(["setup", "build", "test"]);
  });

  it("says a note of defaults where a task run takes the value noted, not where only tasks left out do", async () => {
    const ws = await workspace(`defaults: { retryOn: [127] }\ntasks:\n  own: { run: "touch own.done", retryOn: [1], retries: 1 }\n  taker: { run: "touch taker.done" }\n`);
    logRoots.push(ws.logs);
    const note = `note    ${ws.file}:1:22: defaults: retryOn lists 127: exit codes 126 and 127 (not executable, not found) are never retried`;
    // own sets retries, but takes no part in defaults' retryOn: for the task that takes it, it does nothing.
    const nothing = `note    ${ws.file}:1:22: defaults: retryOn ${NOTHING_TO_RETRY}`;
    const own = await runCli(["run", ws.file, "own", "--log-dir", ws.logs], { cwd: ws.dir });
    expect(own.code).toBe(0);
    expect(own.stdout).not.toContain(" note ");
    const taker = await runCli(["run", ws.file, "taker", "--log-dir", ws.logs], { cwd: ws.dir });
    expect(taker.code).toBe(0);
    expect(taker.stdout).toContain(note);
    expect(taker.stdout).toContain(nothing);
  });

  it("an error in a task left out still refuses the run (exit 2): the file is invalid", async () => {
    const ws = await workspace(`tasks:\n  a: { run: "touch a.done" }\n  b: { run: "touch b.done", runAt: "2099-01-01T00:00:00Z" }\n`);
    const result = await runCli(["run", ws.file, "a", "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toMatch(/task "b": `runAt` 2099-01-01T00:00:00Z is [\d,]+ days from now, past the limit of 30 days ahead/);
    expect(existsSync(path.join(ws.dir, "a.done"))).toBe(false);
  });

  it("the live board says the run is some of the file's tasks, as plain output's first line does; on a narrow terminal, or while a Ctrl-C stops the run, the counts alone", async () => {
    const yaml = PIPELINE.replace('"touch setup.done"', '"sleep 1; touch setup.done"');
    for (const { cols, shown } of [
      { cols: 100, shown: true },
      { cols: 36, shown: false },
    ]) {
      const ws = await workspace(yaml);
      logRoots.push(ws.logs);
      const { bytes, code } = await taskqOnPty(["run", ws.file, "test", "--log-dir", ws.logs, "--output", "tty"], { cwd: ws.dir, size: { cols, rows: 24 } });
      expect(code).toBe(0);
      // eslint-disable-next-line no-control-regex -- the terminal's colour codes
      const text = bytes.toString("utf8").replace(/\x1b\[[0-9;]*m/g, "");
      expect(text).toContain("0/3 done");
      if (shown) expect(text).toContain("0/3 done · 3 of 6 tasks (test and what it depends on)\r\n");
      else expect(text).not.toContain("3 of 6");
      expect(TASKS.filter((task) => existsSync(path.join(ws.dir, `${task}.done`)))).toEqual(["setup", "build", "test"]);
    }
    // A Ctrl-C's stop takes the line: its words, not the selection's.
    const ws = await workspace(PIPELINE.replace('"touch setup.done"', '"echo started; sleep 30"'));
    logRoots.push(ws.logs);
    const args = ["run", ws.file, "test", "--log-dir", ws.logs, "--output", "tty", "--shutdown-timeout", "1s", "--kill-grace", "1s"];
    const stopped = await taskqOnPty(args, { cwd: ws.dir, size: { cols: 100, rows: 24 }, key: { text: "\x03", when: String.raw`started[\s\S]*0/3 done` } }, { NO_COLOR: "1" });
    const text = stopped.bytes.toString("utf8");
    expect(text).toContain("0/3 done · 3 of 6 tasks (test and what it depends on)\r\n");
    const afterSignal = text.slice(text.indexOf("SIGINT received"));
    // (build and test, not started, are cancelled at once.)
    expect(afterSignal).toMatch(/\d\/3 done (· 2 not ok )?· stopping \(SIGINT\)/);
    expect(afterSignal).not.toContain("3 of 6");
  });

  it("with a store, a task id that ends in .yaml is refused as a selection, not taken for a second file; one that names no task is", async () => {
    const ws = await workspace(`tasks:\n  x.yaml: { run: "touch x.done" }\n  other: { run: "touch other.done" }\n`);
    await writeFile(path.join(ws.dir, "b.yaml"), "tasks: { b: { run: 'true' } }\n");
    const schema = uniqueSchema();
    try {
      const storeFlags = ["--store", DATABASE_URL, "--store-schema", schema, "--log-dir", ws.logs];
      for (const args of [[ws.file, "x.yaml", ...storeFlags], [ws.file, ...storeFlags, "--", "x.yaml"], [ws.file, "x.yaml", "b.yaml", ...storeFlags]]) {
        const flag = await runCli(["run", ...args], { cwd: ws.dir });
        expect(flag).toMatchObject({ code: 2, stdout: "" });
        expect(flag.stderr).toMatch(/^taskq: selecting tasks \(x\.yaml(, b\.yaml)?\) is for a local run, and a store is given \(--store\): a durable run runs every task of its file; /);
      }
      const env = await runCli(["run", ws.file, "x.yaml", "--log-dir", ws.logs], { cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } });
      expect(env).toMatchObject({ code: 2, stdout: "" });
      expect(env.stderr).toMatch(/^taskq: selecting tasks \(x\.yaml\) is for a local run, and a store is given \(TASKQ_STORE\): /);
      // A word that is no task of the file: several files, as without a store.
      const glob = await runCli(["run", ws.file, "b.yaml", ...storeFlags], { cwd: ws.dir });
      expect(glob).toMatchObject({ code: 2, stdout: "" });
      expect(glob.stderr).toMatch(/^taskq: too many arguments for 'run': it takes one workflow file, and got 2 \(.*workflow\.yaml, b\.yaml\); for each in turn: /);
      // Nothing was stored, nor run: the schema was never made.
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        expect((await client.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema])).rowCount).toBe(0);
      } finally {
        await client.end();
      }
      expect(existsSync(path.join(ws.dir, "x.done"))).toBe(false);
    } finally {
      await dropSchema(schema);
    }
  });

  it("taskq run --help shows the tasks argument", async () => {
    const help = await runCli(["run", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: taskq run [options] <file> [tasks...]");
    expect(help.stdout).toMatch(/\n {2}tasks +run only these tasks and what they depend on/);
  });
});
