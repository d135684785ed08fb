import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, realpathSync } from "node:fs";
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { tmpdir } from "node:os";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { BIN, FIXTURES, ROOT, runCli, runIds, startCli, workspace, type CliResult } from "../helpers/cli.js";
import { findLeftovers, leftoversCheckedAfterEach } from "../helpers/processes.js";

// Every e2e run must leave no task process behind.
const logRoots = leftoversCheckedAfterEach();

async function run(yaml: string, args: string[] = []) {
  const ws = await workspace(yaml);
  logRoots.push(ws.logs);
  const result = await runCli(["run", ws.file, "--log-dir", ws.logs, ...args], { cwd: ws.dir });
  const [runId] = await runIds(ws.logs);
  return { ...result, ...ws, runId, logDir: runId === undefined ? ws.logs : path.join(ws.logs, runId) };
}

/** Runs a command (not taskq itself) to its end; the output as text. */
function runPlain(file: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd, env: { ...process.env, CI: "", NO_COLOR: "" }, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.on("close", (code) => resolve({ code, stdout }));
  });
}

/** Runs the CLI with `args` under an open-file limit (soft and hard: Node raises the soft limit to the hard one). */
function runWithFileLimit(limit: number, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCliAfter(`ulimit -n ${limit}`, args, cwd);
}

/** Runs the CLI with `args` from sh, once `script` has run there (`cd` away, `ulimit`...). */
function runCliAfter(script: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", `${script} && exec "$0" "$@"`, process.execPath, BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs the CLI with its stdout a file, as `taskq run ... > out` does; stdout as the bytes in that file. */
async function runCliIntoFile(args: string[], cwd: string): Promise<{ code: number | null; stdout: Buffer }> {
  const out = path.join(cwd, "stdout.out");
  const fd = openSync(out, "w");
  try {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", fd, "inherit"] });
      child.on("close", resolve);
    });
    return { code, stdout: await readFile(out) };
  } finally {
    closeSync(fd);
  }
}

describe("taskq run", () => {
  it("runs the demo workflow green", async () => {
    const logs = path.join(ROOT, ".taskq/test-logs-demo");
    logRoots.push(logs);
    const result = await runCli(["run", "workflows/demo.yaml", "--log-dir", logs]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Summary: 8 succeeded, 0 failed, 0 cancelled/);
    expect(result.stdout).toMatch(/retry\s+unit-tests attempt 1\/3 failed: exited with code 1/);
    expect(result.stdout).toMatch(/retry\s+integration-tests attempt 1\/2 failed: timed out after 1s/);
    expect(result.stdout).toMatch(/unit-tests \| 42 tests passed/);
  });

  it("runs dependencies before dependents and higher priority first", async () => {
    const result = await run(
      `tasks:
  a: { run: echo a }
  b: { run: echo b, dependsOn: a }
  low: { run: echo low, priority: low }
  crit: { run: echo crit, priority: critical }
`,
      ["-j", "1"],
    );
    expect(result.code).toBe(0);
    const starts = [...result.stdout.matchAll(/start\s+(\S+)/g)].map((m) => m[1]);
    expect(starts).toEqual(["crit", "a", "b", "low"]);
  });

  it("passes env, cwd and the TASKQ_ variables to tasks, and writes each task's log", async () => {
    const ws = await workspace(`env: { SHARED: from-workflow, OVERRIDE: workflow }
tasks:
  show:
    run: echo "$SHARED $OVERRIDE $TASKQ_TASK_ID $TASKQ_ATTEMPT $TASKQ_RUN_ID"; pwd
    env: { OVERRIDE: task }
    cwd: sub
`);
    logRoots.push(ws.logs);
    await mkdir(path.join(ws.dir, "sub"));
    // Started from another folder: the task's cwd is the workflow file's folder's sub, not taskq's.
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: tmpdir() });
    expect(result.code).toBe(0);
    const [runId] = await runIds(ws.logs);
    const log = await readFile(path.join(ws.logs, runId!, "show.log"), "utf8");
    expect(log).toBe(`from-workflow task show 1 ${runId}\n${realpathSync(path.join(ws.dir, "sub"))}\n`);
  });

  it("fails with exit 1, names dead letters, their last lines and the tasks they cancelled", async () => {
    const logs = path.join(ROOT, ".taskq/test-logs-failures");
    logRoots.push(logs);
    const result = await runCli(["run", "workflows/failures.yaml", "--log-dir", logs]);
    expect(result.code).toBe(1);
    const out = result.stdout;
    expect(out).toMatch(/Summary: 2 succeeded, 2 failed, 2 cancelled/);
    expect(out).toMatch(/✗ missing-tool: exited with code 127 \(never retried: the shell's code for command not found\) \(1 attempt\)/);
    expect(out).toMatch(/✗ flaky-forever: exited with code 1 \(3 attempts\)/);
    expect(out).toMatch(/connection refused/);
    expect(out).toMatch(/cancelled because of it: deploy, notify/);
    const [runId] = await runIds(logs);
    const log = await readFile(path.join(logs, runId!, "flaky-forever.log"), "utf8");
    expect(log).toContain("attempt 3 of 3");
  });

  it("a dead letter in the summary shows its task's last 20 lines, and the file's concurrency holds when -j is not given", async () => {
    // concurrency: 1 in the file: b starts only after a ended (the ledger would show them overlap otherwise).
    const result = await run(`concurrency: 1
tasks:
  a: { run: 'echo start-a >> ledger; sleep 0.3; echo end-a >> ledger' }
  b: { run: 'echo start-b >> ledger; sleep 0.3; echo end-b >> ledger' }
  loud: { run: 'for i in $(seq 1 30); do echo line-$i; done; exit 1', priority: low }
`, ["--output", "plain"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`: 3 tasks, concurrency 1, logs in`);
    expect(await readFile(path.join(result.dir, "ledger"), "utf8")).toBe("start-a\nend-a\nstart-b\nend-b\n");
    const lines = Array.from({ length: 20 }, (_, index) => `      line-${index + 11}`).join("\n");
    expect(result.stdout).toContain(`    last 20 lines:\n${lines}\n\n`);
  });

  it("says \"1 task\", not \"1 tasks\", in the run's first line", async () => {
    const result = await run("tasks:\n  only: { run: echo hi }\n", ["--output", "plain", "-j", "2"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\S+ run \S+: 1 task, concurrency 2, logs in /);
  });

  it("a task that deletes the log folder: it is made again and still marked in use (prune leaves it), and the run says the earlier logs are lost", async () => {
    const ws = await workspace(`tasks:
  cleanup: { run: "rm -rf logs; echo cleaned" }
  after: { run: 'echo after; node "$TASKQ_BIN" prune --logs --log-dir logs --older-than 0s', dependsOn: cleanup }
`);
    logRoots.push(ws.logs);
    const result = await runCli(["run", ws.file, "--log-dir", "logs", "--output", "plain"], { cwd: ws.dir, env: { TASKQ_BIN: BIN } });
    expect(result.code).toBe(0);
    const [runId] = await runIds(ws.logs);
    expect(result.stdout).toContain(`note    the log folder logs/${runId} was deleted during the run (by a task?) and is made again: what was written to it before is lost`);
    expect(result.stdout).toMatch(new RegExp(`after \\| kept 1 run folder last written before \\S+, in use \\(a run or worker holds it\\):\nafter \\|   logs/${runId}\n`));
    expect(await readFile(path.join(ws.logs, runId!, "after.log"), "utf8")).toMatch(/^after\n/);
  });

  it("a task that deletes the log folder last: the summary's note says the logs are lost", async () => {
    const result = await run(`tasks:\n  a: { run: "echo a" }\n  cleanup: { run: "rm -rf logs/$TASKQ_RUN_ID", dependsOn: a }\n`, ["--output", "plain"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/note +the log folder \S+ was deleted during the run \(by a task\?\): the tasks' logs are lost\n/);
  });

  it("a failed task whose log a task deleted with the log folder: the summary says its log is gone, not only where it was", async () => {
    const result = await run(
      `tasks:
  install: { run: 'rm -rf "logs/$TASKQ_RUN_ID"; touch cleaned; echo "npm ERR! network"; exit 1' }
  mid: { run: "until [ -e cleaned ]; do sleep 0.05; done" }
  late: { run: "echo late; exit 4", dependsOn: mid }
`,
      ["--output", "plain", "-j", "2"],
    );
    expect(result.code).toBe(1);
    // install's log went with the folder; late's is in the folder made again after it.
    expect(result.stdout).toContain(`  ✗ install: exited with code 1 (1 attempt)\n    log: ${result.logDir}/install.log (deleted by a task during the run, with its folder)\n    last line:\n      npm ERR! network\n`);
    expect(result.stdout).toContain(`  ✗ late: exited with code 4 (1 attempt)\n    log: ${result.logDir}/late.log\n`);
    const json = await run(`tasks:\n  a: { run: 'rm -rf "logs/$TASKQ_RUN_ID"; exit 2' }\n`, ["--output", "json"]);
    const summary = JSON.parse(json.stdout.trim().split("\n").at(-1)!) as { deadLetters: Array<{ id: string; logDeleted?: boolean }> };
    expect(summary.deadLetters).toEqual([expect.objectContaining({ id: "a", logDeleted: true })]);
  });

  it("a task that deletes the folder taskq was started in, with its relative log folder: the log folder made again is still marked in use (prune leaves it), and the summary does not call its logs lost", async () => {
    const ws = await workspace(`tasks:
  cleanup: { run: "rm -rf project; echo cleaned" }
  after: { run: 'echo after; node "$TASKQ_BIN" prune --logs --log-dir project/logs --older-than 0s', dependsOn: cleanup }
`);
    const project = path.join(ws.dir, "project");
    await mkdir(project);
    const logs = path.join(project, "logs");
    logRoots.push(logs);
    // Tasks run in the workflow's folder; taskq itself in project/, which the first task deletes.
    const result = await runCli(["run", ws.file, "--log-dir", "logs", "--output", "plain"], { cwd: project, env: { TASKQ_BIN: BIN } });
    expect(result.code).toBe(0);
    const runId = / run (\S+): /.exec(result.stdout)?.[1];
    expect(result.stdout).toContain(`note    the log folder logs/${runId} was deleted during the run (by a task?) and is made again: what was written to it before is lost`);
    expect(result.stdout).toMatch(new RegExp(`after \\| kept 1 run folder last written before \\S+, in use \\(a run or worker holds it\\):\nafter \\|   project/logs/${runId}\n`));
    expect(result.stdout).not.toContain("the tasks' logs are lost");
    expect(await readFile(path.join(logs, runId!, "after.log"), "utf8")).toMatch(/^after\n/);
    expect(await readdir(path.join(logs, runId!))).toEqual([".taskq-run", "after.log"]);
  });

  it("reports a timeout as such and kills the command", async () => {
    const result = await run(`tasks:\n  slow: { run: sleep 1000, timeout: 300ms }\n`, ["--kill-grace", "1s"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/slow: timed out after 300ms \(1 attempt\)/);
  });

  it("a timeout that ran out while its pipes were being made says so, not that tasks were ahead of it", async () => {
    // No FIFOs at hand (a temp folder of its own, no spare ones in it) and a mkfifo that takes a second to make them.
    const ws = await workspace(`tasks:\n  one: { run: echo ran > ran, timeout: 200ms }\n`);
    logRoots.push(ws.logs);
    const bin = path.join(ws.dir, "bin");
    const temp = path.join(ws.dir, "tmp");
    await mkdir(bin);
    await mkdir(temp);
    const mkfifo = execFileSync("sh", ["-c", "command -v mkfifo"], { encoding: "utf8" }).trim();
    await writeFile(path.join(bin, "mkfifo"), `#!/bin/sh\nsleep 1\nexec ${mkfifo} "$@"\n`, { mode: 0o755 });
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir, env: { PATH: `${bin}:${FIXTURES}:${process.env.PATH ?? ""}`, TMPDIR: temp } });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAILED {2}one: timed out after 200ms before its command started \(making its pipes took ([89]\d\dms|\d(\.\d)?s)\)\n/);
    expect(result.stdout).not.toContain("ahead of it");
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  it("a timed-out task that ignored SIGTERM says it was killed with SIGKILL after the kill grace, in the summary and its log", async () => {
    // exec: the command is the task's own process (dash, unlike bash, does not exec a `-c` command's last one itself).
    const result = await run(`tasks:\n  stubborn: { run: ${JSON.stringify(`exec ${path.join(FIXTURES, "ignore-sigterm")}`)}, timeout: 300ms }\n`, ["--kill-grace", "500ms", "--output", "plain"]);
    expect(result.code).toBe(1);
    const ending = "timed out after 300ms; killed with SIGKILL after the kill grace (500ms): it did not stop on SIGTERM";
    expect(result.stdout).toContain(`stubborn: ${ending} (1 attempt)`);
    expect(await readFile(path.join(result.logDir, "stubborn.log"), "utf8")).toBe(`ready\n--- taskq: attempt 1 ${ending} ---\n`);
  });

  // Its own process stopped on the SIGTERM; what it started did not. Before, "it did not stop on SIGTERM" sent the
  // user to a script whose own handling of SIGTERM worked.
  it("a timed-out task whose shell stopped on SIGTERM, but not the processes it started, says how many of those the SIGKILL ended", async () => {
    // (1 s: time enough for each to set its traps on a loaded machine.)
    const spawner = JSON.stringify(path.join(FIXTURES, "spawn-grandchild"));
    const result = await run(
      `tasks:\n  one: { run: ${spawner}, timeout: 1s }\n  two: { run: "sh -c 'trap \\"\\" TERM; sleep 100' & sleep 100", timeout: 1s }\n  self: { run: "trap '' TERM; echo ready; sleep 100", timeout: 1s }\n`,
      ["--kill-grace", "500ms", "--output", "plain", "-j", "3"],
    );
    expect(result.code).toBe(1);
    const endings = {
      one: "timed out after 1s; killed with SIGKILL after the kill grace (500ms): 1 process it started did not stop on SIGTERM (its shell did)",
      two: "timed out after 1s; killed with SIGKILL after the kill grace (500ms): 2 processes it started did not stop on SIGTERM (its shell did)",
      self: "timed out after 1s; killed with SIGKILL after the kill grace (500ms): it did not stop on SIGTERM",
    };
    for (const [id, ending] of Object.entries(endings)) {
      expect(result.stdout).toContain(`${id}: ${ending} (1 attempt)`);
      expect((await readFile(path.join(result.logDir, `${id}.log`), "utf8")).trimEnd().split("\n").at(-1)).toBe(`--- taskq: attempt 1 ${ending} ---`);
    }
  });

  it("with --kill-grace 0 a task SIGKILLed after its timeout is not said to have ignored SIGTERM: its SIGKILL came right after it", async () => {
    // With no grace, nothing tells whether it would have ended on SIGTERM; before, the words said it ignored it.
    const result = await run(`tasks:\n  stubborn: { run: ${JSON.stringify(path.join(FIXTURES, "ignore-sigterm"))}, timeout: 300ms }\n`, ["--kill-grace", "0", "--output", "plain"]);
    expect(result.code).toBe(1);
    // Its shell (sh -c, which runs the script as its child) dies of the SIGTERM, or the SIGKILL finds it still there first;
    // what else that SIGKILL killed is counted where the shell was reaped before it went.
    const endings = [
      "timed out after 300ms; its shell was killed by SIGTERM; the SIGKILL sent right after its SIGTERM (the kill grace is 0) killed 2 processes it started",
      "timed out after 300ms; its shell was killed by SIGTERM, before the SIGKILL sent right after it (the kill grace is 0)",
      "timed out after 300ms; killed with SIGKILL right after its SIGTERM (the kill grace is 0)",
    ];
    const ending = endings.find((words) => result.stdout.includes(`stubborn: ${words} (1 attempt)`));
    expect(ending).toBeDefined();
    expect(result.stdout).not.toContain("did not stop on SIGTERM");
    expect(await readFile(path.join(result.logDir, "stubborn.log"), "utf8")).toBe(`ready\n--- taskq: attempt 1 ${ending!} ---\n`);
  });

  it("with --kill-grace 0 a task whose SIGTERM trap exited before the SIGKILL is said to have exited so, as its JSON exitCode says, not killed by the SIGKILL", { timeout: 120_000 }, async () => {
    // Whether the SIGKILL that comes right after the SIGTERM finds the shell still there is a race: runs are made until one
    // sends it after the trap's exit (its words then name the SIGKILL), and every run's words must agree with its record.
    const trapped = "timed out after 300ms; its shell exited with code 0 on its SIGTERM, before the SIGKILL sent right after it (the kill grace is 0)";
    let seen = 0;
    for (let tries = 0; tries < 30 && seen === 0; tries++) {
      const result = await run(`tasks:\n  trapper: { run: "trap 'exit 0' TERM; sleep 30 & wait", timeout: 300ms }\n`, ["--kill-grace", "0", "--output", "json"]);
      expect(result.code).toBe(1);
      const failed = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; exitCode?: number | null; signal?: string | null; error?: { message: string } }).find((record) => record.event === "failed")!;
      const message = failed.error!.message;
      // "killed with SIGKILL" only where the SIGKILL ended it; an exit code where the trap did.
      if (failed.signal !== "SIGKILL") expect(message).not.toContain("killed with SIGKILL");
      if (!message.includes("SIGKILL")) continue;
      if (failed.signal === "SIGKILL") continue; // the SIGKILL came while the trap ran: "killed with SIGKILL right after its SIGTERM", as it was
      expect({ exitCode: failed.exitCode, signal: failed.signal, message }).toEqual({ exitCode: 0, signal: null, message: trapped });
      expect((await readFile(path.join(result.logDir, "trapper.log"), "utf8")).trimEnd().split("\n").at(-1)).toBe(`--- taskq: attempt 1 ${trapped} ---`);
      seen++;
    }
    expect(seen).toBe(1);
  });

  it("retries a timed-out attempt whatever retryOn lists (a timeout has no exit code)", async () => {
    const result = await run(`tasks:\n  slow: { run: 'echo tried >> ledger; sleep 1000', timeout: 300ms, retries: 1, retryOn: [75], backoff: { base: 10ms } }\n`, ["--kill-grace", "1s"]);
    expect(result.code).toBe(1);
    expect(await readFile(path.join(result.dir, "ledger"), "utf8")).toBe("tried\ntried\n");
    expect(result.stdout).toMatch(/slow: timed out after 300ms \(2 attempts\)/);
  });

  it("a task's timeout: none and retryOn: any undo those of defaults, for that task alone", async () => {
    const yaml = [
      "defaults: { timeout: 300ms, retries: 1, retryOn: [75], backoff: { base: 10ms } }",
      "tasks:",
      "  capped: { run: 'sleep 1000' }",
      "  free: { run: 'sleep 1; echo done', timeout: none }",
      "  strict: { run: 'exit 4' }",
      `  lenient: { run: '[ "$TASKQ_ATTEMPT" = 2 ] || exit 4; echo again', retryOn: any }`,
      "",
    ].join("\n");
    const result = await run(yaml, ["--kill-grace", "1s", "--output", "plain"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/Summary: 2 succeeded, 2 failed, 0 cancelled/);
    expect(result.stdout).toMatch(/capped: timed out after 300ms \(2 attempts\)/);
    expect(result.stdout).toMatch(/strict: exited with code 4 \(4 is not in retryOn: not retried\) \(1 attempt\)/);
    expect(await readFile(path.join(result.logDir, "free.log"), "utf8")).toBe("done\n");
    expect(await readFile(path.join(result.logDir, "lenient.log"), "utf8")).toBe("--- taskq: attempt 1 exited with code 4 ---\n--- taskq: attempt 2 ---\nagain\n");
  });

  it("each attempt that did not succeed ends its log with how it ended: a timeout, an exit code, a command that could not start", async () => {
    const yaml = [
      "tasks:",
      "  slow: { run: 'echo start; sleep 1000', timeout: 300ms, retries: 2, backoff: { base: 10ms } }",
      "  code: { run: 'printf partial; exit 3' }",
      // Retries to spare: the one attempt's line says why no other follows, as an exit code 127's does.
      "  nowhere: { run: echo never, cwd: missing-folder, retries: 2 }",
      "  fine: { run: printf done }",
      "",
    ].join("\n");
    const result = await run(yaml, ["--kill-grace", "1s"]);
    expect(result.code).toBe(1);
    const log = (id: string): Promise<string> => readFile(path.join(result.logDir, `${id}.log`), "utf8");
    const timedOut = (attempt: number): string => `start\n--- taskq: attempt ${attempt} timed out after 300ms ---\n`;
    expect(await log("slow")).toBe(`${timedOut(1)}--- taskq: attempt 2 ---\n${timedOut(2)}--- taskq: attempt 3 ---\n${timedOut(3)}`);
    expect(await log("code")).toBe("partial\n--- taskq: attempt 1 exited with code 3 ---\n");
    expect(await log("nowhere")).toBe(`--- taskq: attempt 1 could not start: working directory ${path.join(result.dir, "missing-folder")} does not exist (the task's cwd: make that folder in a task this one depends on, or fix the cwd); never retried ---\n`);
    expect(result.stdout).toMatch(/FAILED +nowhere after 1 attempt: could not start: working directory .* does not exist \(the task's cwd: .*\); never retried\n/);
    expect(await log("fine")).toBe("done");
  });

  it("runs its thread pool with one thread unless UV_THREADPOOL_SIZE is set, and tasks get the variable as the user set it", async () => {
    // The task's first line starts taskq's pool (its log write); then the task counts taskq's threads.
    const yaml = `tasks:\n  count: { run: 'echo "pool=\${UV_THREADPOOL_SIZE-unset}"; sleep 0.5; echo "threads=$(ls /proc/$PPID/task | wc -l)"' }\n`;
    const ws = await workspace(yaml);
    logRoots.push(ws.logs);
    const threads = async (env: Record<string, string | undefined>): Promise<[string, number]> => {
      const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir, env });
      expect(result.code).toBe(0);
      return [/count \| pool=(\S+)/.exec(result.stdout)?.[1] ?? "", Number(/count \| threads=(\d+)/.exec(result.stdout)?.[1])];
    };
    const [seenByDefault, withOne] = await threads({ UV_THREADPOOL_SIZE: undefined });
    const [seenSet, withThree] = await threads({ UV_THREADPOOL_SIZE: "3" });
    expect(seenByDefault).toBe("unset");
    expect(seenSet).toBe("3");
    expect(withThree - withOne).toBe(2);
  });

  it("a dead letter's long last line is cut in the summary, saying how long it was", async () => {
    const long = "z".repeat(5000);
    const result = await run(`tasks:\n  long: { run: "printf '${long}\\\\n'; exit 3" }\n`);
    expect(result.code).toBe(1);
    // Cut for display at 4,096 bytes, then for the summary at 1,000 characters: the length stays the line's.
    const deadLetters = result.stdout.slice(result.stdout.indexOf("Dead letters (1):"));
    expect(deadLetters).toContain(`last line:\n      ${"z".repeat(1000)}\u2026 (5000 bytes)\n`);
  });

  it("--output tty with stderr not a terminal: a note, and plain lines instead of board frames that would pile up there", async () => {
    const long = "z".repeat(5000);
    const yaml = `tasks:\n  talk: { run: "printf 'one\\\\ntwo\\\\r\\\\nthree\\\\n${long}\\\\nlast'" }\n  quiet: { run: "true", dependsOn: talk }\n`;
    const result = await run(yaml, ["--output", "tty"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("note: --output tty: stderr is not a terminal, and the live board is drawn there; printing plain lines instead\n");
    const lines = result.stdout.split("\n");
    // Into a pipe, as written: the "\r" of "two\r\n" stays.
    for (const text of ["talk | one", "talk | two\r", "talk | three", "talk | last", `talk | ${"z".repeat(4096)}… (5000 bytes)`]) {
      expect(lines.filter((line) => line === text)).toHaveLength(1);
    }
    expect(result.stdout).not.toMatch(/\d\/2 done/);
    expect(result.stdout).toMatch(/Summary: 2 succeeded/);
  });

  // `script` runs taskq on a real pseudo-terminal; without `stty`, one that reports 0 columns.
  it.skipIf(!existsSync("/usr/bin/script"))("on a terminal: the live board when it has a size; plain lines, not a hang, when it reports none or is dumb", { timeout: 60_000 }, async () => {
    const yaml = `tasks:\n  talk: { run: "echo line 1; sleep 0.3; echo line 2" }\n  loud: { run: "seq 1 3000" }\n`;
    const ws = await workspace(yaml);
    logRoots.push(ws.logs);
    const command = (size: string): string => `${size}exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run workflow.yaml --log-dir logs`;
    const onTerminal = (size: string) => runPlain("/usr/bin/script", ["-qec", command(size), "/dev/null"], ws.dir);
    for (const [size, board] of [["", false], ["stty cols 100 rows 30; ", true], ["stty cols 100 rows 30; TERM=dumb ", false]] as const) {
      const result = await onTerminal(size);
      expect(result.code).toBe(0);
      const screen = stripVTControlCharacters(result.stdout);
      expect(screen).toMatch(/Summary: 2 succeeded/);
      expect(screen.match(/loud \| \d+/g)).toHaveLength(3000);
      expect(screen).toMatch(/talk \| line 2/);
      // The board's totals line is drawn only on a terminal with a width.
      expect(/\d\/2 done/.test(screen)).toBe(board);
    }
  });

  it.skipIf(!existsSync("/usr/bin/script"))("plain lines on a terminal with stderr redirected are in colour, as they go to the terminal", { timeout: 60_000 }, async () => {
    // Before, colours needed stderr to be a terminal too, where only the board is drawn.
    const ws = await workspace('tasks:\n  bad: { run: "exit 3" }\n');
    logRoots.push(ws.logs);
    const command = `stty cols 100 rows 30; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run workflow.yaml --log-dir logs 2>/dev/null`;
    const onTerminal = await runPlain("/usr/bin/script", ["-qec", command, "/dev/null"], ws.dir);
    expect(onTerminal.code).toBe(1);
    expect(onTerminal.stdout).toContain("Dead letters (1):");
    // The failure in red, as on a terminal with both streams.
    // eslint-disable-next-line no-control-regex -- the colour's escape is the point
    expect(onTerminal.stdout).toMatch(/\x1b\[31m[^\n]*bad/);
  });

  it.skipIf(!existsSync("/usr/bin/script"))("plain lines on a terminal: a task cannot clear the screen, set the title, ring or write over its prefix; into a pipe and the log, its bytes as written", { timeout: 60_000 }, async () => {
    const script = String.raw`printf 'a\033[2J\033[Hcleared\n\033]0;title\007b\n\033[31mred\n12345\b\b\b\b\b\bX\nstep 1\rstep 2\ncrlf\r\n'`;
    const ws = await workspace(`tasks:\n  noisy: { run: ${JSON.stringify(script)} }\n`);
    logRoots.push(ws.logs);
    const command = `stty cols 100 rows 30; TERM=dumb exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run workflow.yaml --log-dir logs`;
    const onTerminal = await runPlain("/usr/bin/script", ["-qec", command, "/dev/null"], ws.dir);
    expect(onTerminal.code).toBe(0);
    // No colours of taskq's own on a dumb terminal (the task's red is its own, kept): not the dimmed prefix of other terminals.
    expect(onTerminal.stdout).not.toContain("\x1b[2m");
    const shown = onTerminal.stdout.replace(/\r\n/g, "\n");
    expect(shown).toContain("noisy | acleared\n");
    expect(shown).toContain("noisy | b\n");
    expect(shown).toContain("noisy | \x1b[31mred\x1b[0m\n");
    // Backspaces as a terminal works them out, none past the line's start into the prefix: X over the 1; the red the line before left set, set again.
    expect(shown).toContain("noisy | \x1b[31mX2345\x1b[0m\n");
    expect(shown).toContain("noisy | \x1b[31mstep 2\x1b[0m\n");
    expect(shown).toContain("noisy | \x1b[31mcrlf\x1b[0m\n");
    for (const control of ["\x1b[2J", "\x1b]0;", "\x07", "\x08"]) expect(shown).not.toContain(control);
    // Not a terminal: the bytes as the task wrote them, as in its log, with the prefix again after a `\r` that rewrites the line.
    const piped = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain("noisy | a\x1b[2J\x1b[Hcleared\n");
    // The task left its red set: the prefix after it comes after a reset, and under the tests' NO_COLOR the red is not set again.
    expect(piped.stdout).toContain("noisy | \x1b[31mred\n\x1b[0mnoisy | 12345");
    expect(piped.stdout).toContain("\nnoisy | step 1\rnoisy | step 2\n");
    expect(piped.stdout).toContain("\nnoisy | crlf\r\n");
    const [first] = await runIds(ws.logs);
    expect(await readFile(path.join(ws.logs, first!, "noisy.log"), "utf8")).toContain("\x1b]0;title\x07b\n");
  });

  it.skipIf(!existsSync("/usr/bin/script"))("the live board with more rows than the screen shows the running tasks first, the ones that just ended after them", { timeout: 60_000 }, async () => {
    const quick = Array.from({ length: 12 }, (_, i) => `  quick-${i}: { run: "true" }`);
    const long = Array.from({ length: 3 }, (_, i) => `  long-${i}: { run: "sleep 2" }`);
    const ws = await workspace(`tasks:\n${[...quick, ...long].join("\n")}\n`);
    logRoots.push(ws.logs);
    // 10 rows: the board shows 6 tasks and "… N more"; the quick ones end at once and linger 3 s.
    const command = `stty cols 80 rows 10; TERM=xterm exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run workflow.yaml -j 15 --log-dir logs`;
    const result = await runPlain("/usr/bin/script", ["-qec", command, "/dev/null"], ws.dir);
    expect(result.code).toBe(0);
    const screen = stripVTControlCharacters(result.stdout);
    expect(screen).toMatch(/Summary: 15 succeeded/);
    expect(screen).toMatch(/… \d+ more/);
    for (const id of ["long-0", "long-1", "long-2"]) expect(screen).toMatch(new RegExp(`▶ ${id} {2}attempt 1/1`));
  });

  it.skipIf(!existsSync("/usr/bin/script"))("the summary on a terminal, plain or live board: a failed task's last lines and error cannot clear it, hide the cursor or colour what follows", { timeout: 60_000 }, async () => {
    const script = String.raw`printf 'normal line
[2J[Hcleared[?25l
prog 50%%
prog 100%%
[31mred no reset
'; exit 1`;
    const ws = await workspace(`tasks:\n  failing: { run: ${JSON.stringify(script)} }\n`);
    logRoots.push(ws.logs);
    for (const [mode, env] of [["plain", "TERM=dumb"], ["live board", "TERM=xterm env -u CI"]] as const) {
      const command = `stty cols 100 rows 30; ${env} ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run workflow.yaml --log-dir logs; echo "exit $?"`;
      const onTerminal = await runPlain("/usr/bin/script", ["-qec", command, "/dev/null"], ws.dir);
      const text = onTerminal.stdout.replace(/\r\n/g, "\n");
      expect({ mode, exit: /exit (\d+)/.exec(text)?.[1] }).toEqual({ mode, exit: "1" });
      const summary = text.slice(text.indexOf("Summary"));
      // The task's red is reset at its line's end (the summary's dimming, where there is one, set again after each of its colours).
      // eslint-disable-next-line no-control-regex -- escapes are what is checked
      expect({ mode, summary }).toEqual({ mode, summary: expect.stringMatching(/last 5 lines:\n.*normal line.*\n.*cleared.*\n.*prog 50%.*\n.*prog 100%.*\n.*\x1b\[31m(?:\x1b\[2m)?red no reset\x1b\[0m.*\n\n.*logs: /) });
      // eslint-disable-next-line no-control-regex -- escapes are what is checked
      expect({ mode, summary }).not.toEqual({ mode, summary: expect.stringMatching(/\x1b\[2J|\x1b\[H|\x1b\[\?25l|\r/) });
    }
  });

  it.skipIf(!existsSync("/usr/bin/script"))("the live board's note and failure lines show a cwd's line break and escape as validate quotes them, not a folder cut in two and coloured", { timeout: 60_000 }, async () => {
    const ws = await workspace('tasks:\n  lost: { run: "true", cwd: "no\\nsuch\\u001b[31m" }\n');
    logRoots.push(ws.logs);
    const command = `stty cols 300 rows 30; TERM=xterm env -u CI ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run workflow.yaml --log-dir logs; echo "exit $?"`;
    const text = (await runPlain("/usr/bin/script", ["-qec", command, "/dev/null"], ws.dir)).stdout.replace(/\r\n/g, "\n");
    expect(/exit (\d+)/.exec(text)?.[1]).toBe("1");
    const folder = String.raw`${ws.dir}/no\nsuch\u001b[31m`;
    expect(text).toContain(`(${folder}) does not exist now`);
    expect(text).toContain(`✗ lost failed: could not start: working directory ${folder} does not exist`);
  });

  it("prints NDJSON events with --output json", async () => {
    const result = await run(`tasks:\n  a: { run: echo hi }\n  b: { run: exit 3, dependsOn: a }\n`, ["--output", "json"]);
    expect(result.code).toBe(1);
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; id?: string; error?: unknown });
    const kinds = events.map((e) => `${e.event}:${e.id ?? ""}`);
    expect(kinds).toEqual(
      expect.arrayContaining(["run:", "started:a", "output:a", "succeeded:a", "started:b", "failed:b", "summary:"]),
    );
    const failed = events.find((e) => e.event === "failed")!;
    expect(failed.error).toMatchObject({ exitCode: 3, message: "exited with code 3" });
    expect(events.at(-1)).toMatchObject({ event: "summary", exitCode: 1 });
  });

  it("--output json: a failed attempt's exitCode, signal and timedOut are beside `error` in `retrying` and `failed`, as in the summary's dead letters", async () => {
    // A program read `.exitCode` of a dead letter but `.error.exitCode` of a `failed` record; both now have it at the top.
    const yaml = `tasks:\n  code: { run: exit 3, retries: 1, backoff: { base: 1ms } }\n  slow: { run: sleep 5, timeout: 200ms }\n  nocwd: { run: "true", cwd: missing }\n`;
    const result = await run(yaml, ["--output", "json"]);
    expect(result.code).toBe(1);
    type Failure = { event: string; id?: string; exitCode?: unknown; signal?: unknown; timedOut?: unknown; error?: unknown };
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Failure & { deadLetters?: Failure[] });
    const fields = (e: Failure | undefined) => ({ id: e?.id, exitCode: e?.exitCode, signal: e?.signal, timedOut: e?.timedOut });
    const retrying = events.find((e) => e.event === "retrying")!;
    expect(fields(retrying)).toEqual({ id: "code", exitCode: 3, signal: null, timedOut: false });
    const summary = events.at(-1)!;
    for (const id of ["code", "slow", "nocwd"]) {
      const failed = events.find((e) => e.event === "failed" && e.id === id);
      const dead = summary.deadLetters?.find((d) => d.id === id);
      expect(fields(failed)).toEqual(fields(dead));
    }
    expect(fields(events.find((e) => e.event === "failed" && e.id === "slow"))).toMatchObject({ timedOut: true });
    // The error object stays as it was, for programs that read it there.
    expect(events.find((e) => e.event === "failed" && e.id === "code")?.error).toMatchObject({ message: "exited with code 3", exitCode: 3, signal: null, timedOut: false });
  });

  it("--output json: `started` and `failed` records give the task's log, as the summary's dead letters do, so a program can open it as the task runs", async () => {
    const result = await run(`tasks:\n  broken: { run: "echo why; exit 3" }\n  fine: { run: "true" }\n`, ["--output", "json"]);
    expect(result.code).toBe(1);
    type Logged = { event: string; id?: string; logPath?: string; logFile?: string; deadLetters?: Logged[] };
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Logged);
    const log = (e: Logged | undefined) => ({ logPath: e?.logPath, logFile: e?.logFile });
    for (const id of ["broken", "fine"]) {
      expect(log(events.find((e) => e.event === "started" && e.id === id))).toEqual({ logPath: path.join(result.logDir, `${id}.log`), logFile: `${result.runId}/${id}.log` });
    }
    const failed = events.find((e) => e.event === "failed");
    expect(log(failed)).toEqual(log(events.at(-1)?.deadLetters?.[0]));
    expect(await readFile(failed!.logPath!, "utf8")).toMatch(/^why\n/);
  });

  it("--output json: a `cancelled` record has its `message` beside `error`, as the summary's `cancelled` entries have it", async () => {
    const result = await run(`tasks:
  a: { run: exit 1 }
  b: { run: "true", dependsOn: a }
`, ["--output", "json"]);
    expect(result.code).toBe(1);
    type Cancel = { event: string; id?: string; reason?: string; message?: unknown; dependency?: string; cancelled?: Cancel[] };
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Cancel);
    const cancelled = events.find((e) => e.event === "cancelled")!;
    const entry = events.at(-1)!.cancelled![0]!;
    expect({ id: cancelled.id, reason: cancelled.reason, message: cancelled.message, dependency: cancelled.dependency }).toEqual(entry);
    expect(entry.message).toBe('dependency "a" failed');
  });

  it("a failed task's last lines in the summary leave out the blank lines it printed last, which pushed out the lines that say what went wrong", async () => {
    // As a test runner or a build may end: its error, then more than 20 blank (or colour-reset) lines, in one write and in several.
    const blanks = `i=0; while [ $i -lt 30 ]; do printf '\\\\n  \\\\n\\\\033[0m\\\\n'; i=$((i+1)); done`;
    const yaml = `tasks:\n  once: { run: "echo 'FAIL: expected 1, got 2'; ${blanks}; exit 1" }\n  slowly: { run: "echo 'first'; echo 'Error: no such table'; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21; do echo; sleep 0.01; done; exit 1" }\n`;
    const plain = await run(yaml);
    expect(plain.code).toBe(1);
    const summary = plain.stdout.slice(plain.stdout.indexOf("Dead letters"));
    expect(summary).toContain("once: exited with code 1 (1 attempt)\n");
    expect(summary).toContain("last line:\n      FAIL: expected 1, got 2\n");
    expect(summary).toContain("last 2 lines:\n      first\n      Error: no such table\n");
    const json = await run(yaml, ["--output", "json"]);
    const last = JSON.parse(json.stdout.trimEnd().split("\n").at(-1)!) as { deadLetters: Array<{ id: string; tail: string[] }> };
    expect(Object.fromEntries(last.deadLetters.map((d) => [d.id, d.tail]))).toEqual({ once: ["FAIL: expected 1, got 2"], slowly: ["first", "Error: no such table"] });
  });

  it("a failed task's last lines leave out blank lines that end in an escape showing nothing, as a program's restore of the cursor at its exit", async () => {
    // ora, a test runner: the error, blank lines, then "\x1b[?25h" with no newline on the way out; `tput sgr0` gives "\x1b(B\x1b[m".
    const yaml = `tasks:\n  cursor: { run: "echo 'Error: no such table'; for i in $(seq 1 25); do echo; done; printf '\\\\033[?25h'; exit 1" }\n  tput: { run: "echo 'FAIL: expected 1'; echo; printf '\\\\033(B\\\\033[m\\\\n'; exit 1" }\n`;
    const plain = await run(yaml);
    expect(plain.code).toBe(1);
    const summary = plain.stdout.slice(plain.stdout.indexOf("Dead letters"));
    expect(summary).toMatch(/cursor\.log\n {4}last line:\n {6}Error: no such table\n/);
    expect(summary).toMatch(/tput\.log\n {4}last line:\n {6}FAIL: expected 1\n/);
  });

  it("a failed task's last lines leave out blank lines that end in a progress line cleared, which the summary shows empty", async () => {
    const yaml = `tasks:\n  progress: { run: "echo 'Error: disk full'; for i in $(seq 1 25); do echo; done; printf 'copying 50%%\\\\r\\\\033[K\\\\n'; exit 1" }\n`;
    const plain = await run(yaml);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/progress\.log\n {4}last line:\n {6}Error: disk full\n/);
  });

  it("a dead letter that printed nothing, or blank lines alone, says `no output` under its log, so that no one opens the log for lines", async () => {
    const quiet = await run(`tasks:\n  silent: { run: exit 7 }\n  blank: { run: "echo; echo '  '; exit 1" }\n`);
    expect(quiet.code).toBe(1);
    expect(quiet.stdout).toContain("silent: exited with code 7 (1 attempt)\n    log: ");
    expect(quiet.stdout).toMatch(/silent\.log\n {4}no output\n/);
    expect(quiet.stdout).toMatch(/blank\.log\n {4}no output\n/);
  });

  it("--output json gives every line of a loud task as JSON.stringify writes it; the log keeps the bytes", async () => {
    const ws = await workspace(`tasks:\n  loud: { run: "sh loud.sh" }\n`);
    logRoots.push(ws.logs);
    // Lines JSON keeps as they are, lines it escapes, and a byte that is not UTF-8 (\377).
    await writeFile(
      path.join(ws.dir, "loud.sh"),
      `i=0; while [ $i -lt 4000 ]; do i=$((i + 1)); printf 'line %d\\n"quoted" back\\\\slash\\ntab\\there \\303\\251 \\342\\234\\223\\n\\377bad\\n' $i; done\n`,
    );
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "json"], { cwd: ws.dir });
    expect(result.code).toBe(0);
    const texts = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; id?: string; attempt?: number; stream?: string; text?: string })
      .filter((event) => event.event === "output")
      .map((event) => `${event.id} ${event.attempt} ${event.stream} ${event.text}`);
    const expected = Array.from({ length: 4000 }, (_, i) => [`line ${i + 1}`, '"quoted" back\\slash', "tab\there é ✓", "\ufffdbad"]).flat();
    expect(texts).toEqual(expected.map((text) => `loud 1 stdout ${text}`));
    const [runId] = await runIds(ws.logs);
    const log = await readFile(path.join(ws.logs, runId!, "loud.log"));
    expect(log.toString("latin1").split("\xff").length - 1).toBe(4000);
    expect(log.toString("utf8")).toContain("line 4000\n\"quoted\" back\\slash\ntab\there é ✓\n\ufffdbad\n");
  });

  it("--output json: each output record names the attempt that wrote the line", async () => {
    const result = await run(`tasks:\n  flaky: { run: 'echo "try $TASKQ_ATTEMPT"; echo "oops $TASKQ_ATTEMPT" >&2; [ "$TASKQ_ATTEMPT" = 2 ]', retries: 1, backoff: { base: 10ms } }\n`, ["--output", "json"]);
    expect(result.code).toBe(0);
    const output = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; id?: string; attempt?: number; stream?: string; text?: string })
      .filter((event) => event.event === "output")
      .map(({ id, attempt, stream, text }) => ({ id, attempt, stream, text }));
    expect(output.filter((record) => record.stream === "stdout")).toEqual([
      { id: "flaky", attempt: 1, stream: "stdout", text: "try 1" },
      { id: "flaky", attempt: 2, stream: "stdout", text: "try 2" },
    ]);
    expect(output.filter((record) => record.stream === "stderr")).toEqual([
      { id: "flaky", attempt: 1, stream: "stderr", text: "oops 1" },
      { id: "flaky", attempt: 2, stream: "stderr", text: "oops 2" },
    ]);
  });

  it("--output plain into a file: every line's bytes as written, whatever ends it; a line cut for display cut on a character's boundary; JSON decodes them", async () => {
    // \351 alone is not UTF-8 (Latin-1's é). The long line: \377, 4,094 a's, then é across the 4,096-byte cut.
    const ws = await workspace(String.raw`tasks:
  lf: { run: "printf 'caf\\351 lf\\n'" }
  crlf: { run: "printf 'caf\\351 crlf\\r\\n'" }
  eof: { run: "printf 'caf\\351 eof'" }
  long: { run: "printf '\\377%s\\303\\251tail\\n' $(head -c 4094 /dev/zero | tr '\\0' a)" }
`);
    logRoots.push(ws.logs);
    const plain = await runCliIntoFile(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], ws.dir);
    expect(plain.code).toBe(0);
    const latin1 = (text: string): Buffer => Buffer.from(text, "latin1");
    const cut = Buffer.concat([latin1(`long | \xff${"a".repeat(4094)}`), Buffer.from("… (4101 bytes)\n")]);
    const lines = [latin1("lf | caf\xe9 lf\n"), latin1("crlf | caf\xe9 crlf\r\n"), latin1("eof | caf\xe9 eof\n"), cut];
    for (const line of lines) expect({ line: line.toString("latin1"), found: plain.stdout.includes(line) }).toEqual({ line: line.toString("latin1"), found: true });
    expect(plain.stdout.includes(Buffer.from("\ufffd"))).toBe(false);
    const [runId] = await runIds(ws.logs);
    expect(await readFile(path.join(ws.logs, runId!, "crlf.log"))).toEqual(latin1("caf\xe9 crlf\r\n"));
    // JSON holds text: each line decoded, as before, its "\r\n" a line end.
    const json = await runCliIntoFile(["run", ws.file, "--log-dir", ws.logs, "--output", "json"], ws.dir);
    expect(json.code).toBe(0);
    const texts = json.stdout
      .toString()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; id?: string; text?: string })
      .filter((event) => event.event === "output")
      .map((event) => `${event.id} ${event.text}`)
      .sort();
    expect(texts).toEqual(["crlf caf\ufffd crlf", "eof caf\ufffd eof", "lf caf\ufffd lf", `long \ufffd${"a".repeat(4094)}… (4101 bytes)`]);
  });

  it("--output json: an invalid file is one JSON record on stdout with each problem's line and column; stderr keeps the text", async () => {
    const result = await run(`tasks:\n  a: { run: touch ran-a, dependsOn: zz }\n  b: { run: touch ran-b, priority: urgent }\n`, ["--output", "json"]);
    expect(result.code).toBe(2);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]!) as { event: string; exitCode: number; problems: Array<{ file: string; line: number; col: number; message: string }> };
    expect(record).toMatchObject({ event: "invalid", code: "INVALID_WORKFLOW", exitCode: 2 });
    expect(record.problems.map(({ line, col }) => `${line}:${col}`)).toEqual(result.stderr.match(/(?<=:)\d+:\d+(?=: )/g));
    expect(record.problems.map((problem) => problem.message)).toEqual([expect.stringContaining('depends on "zz"'), expect.stringContaining("urgent")]);
    expect(result.stderr).toMatch(/2 problems; nothing was run/);
    expect(existsSync(path.join(result.dir, "ran-a"))).toBe(false);
  });

  // In /proc, mkdir answers ENOENT under a folder that exists: Node 20's recursive mkdirSync spins there forever.
  it.skipIf(!existsSync("/proc/self"))("a log folder that cannot be made is an error at once, nothing run: a file in the way, /proc or /sys", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran-a }\n");
    logRoots.push(ws.logs);
    await writeFile(path.join(ws.dir, "file"), "");
    const cases = [
      [path.join(ws.dir, "file", "logs"), `${path.join(ws.dir, "file")} is not a folder \\(ENOTDIR\\)`],
      ["/proc/taskq-nothing/logs", "/proc/taskq-nothing cannot be made in /proc, a proc file system, whose entries only the kernel makes \\(ENOENT\\): give --log-dir a folder elsewhere"],
      // In /sys mkdir answers EPERM, told as "not permitted" alone before.
      ...(existsSync("/sys/kernel")
        ? [["/sys/taskq-nothing/logs", "/sys/taskq-nothing cannot be made in /sys, a sysfs file system, whose entries only the kernel makes \\(EPERM\\): give --log-dir a folder elsewhere"] as const]
        : []),
    ] as const;
    for (const [logDir, reason] of cases) {
      const cli = startCli(["run", ws.file, "--log-dir", logDir], { cwd: ws.dir });
      const timer = setTimeout(() => cli.child.kill("SIGKILL"), 20_000);
      const result = await cli.done.finally(() => clearTimeout(timer));
      expect(result.signal).toBeNull();
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^taskq: cannot create the log folder ${logDir}/\\S+: ${reason}\\n$`));
    }
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(false);
  });

  it("a relative log folder that cannot be made is named with the full path it resolved to", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran-a }\n");
    logRoots.push(ws.logs);
    await writeFile(path.join(ws.dir, "file"), "");
    const result = await runCli(["run", ws.file, "--log-dir", "file/logs"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    const full = path.join(realpathSync(ws.dir), "file");
    const runId = /file\/logs\/(\S+) /.exec(result.stderr)?.[1];
    expect(result.stderr).toBe(`taskq: cannot create the log folder file/logs/${runId} (${full}/logs/${runId}): ${full} is not a folder (ENOTDIR)\n`);
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(false);
  });

  it("a log folder that cannot be made says why in words: a --log-dir that is a dangling symbolic link, a current folder that was deleted", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran-a }\n");
    logRoots.push(ws.logs);
    const link = path.join(ws.dir, "logs-link");
    await symlink(path.join(ws.dir, "nowhere"), link);
    const dangling = await runCli(["run", ws.file, "--log-dir", link], { cwd: ws.dir });
    expect(dangling.code).toBe(1);
    expect(dangling.stderr).toBe(`taskq: cannot create the log folder ${link}/${/logs-link\/(\S+):/.exec(dangling.stderr)?.[1]}: ${link} is a symbolic link to ${path.join(ws.dir, "nowhere")}, which does not exist (EEXIST)\n`);
    // taskq started in a folder that is then deleted, with the default (relative) log folder.
    const gone = path.join(ws.dir, "gone");
    await mkdir(gone);
    const deleted = await runCliAfter(`cd "${gone}" && rmdir "${gone}"`, ["run", ws.file, "--output", "plain"], ws.dir);
    expect(deleted.code).toBe(1);
    expect(deleted.stderr).toMatch(/^taskq: cannot create the log folder \.taskq\/logs\/\S+: the current folder no longer exists \(ENOENT\)\n$/);
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(false);
    // The workflow on stdin from there: the folder is named as the problem, not stdin as a file not found.
    await mkdir(gone);
    const piped = await runCliAfter(`cd "${gone}" && rmdir "${gone}" && exec < "${ws.file}"`, ["run", "-", "--output", "plain"], ws.dir);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toBe("<stdin>:1:1: the current folder no longer exists (ENOENT): the tasks of a workflow read from stdin or a pipe start there\n1 problem; nothing was run\n");
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(false);
  });

  it("-j beyond the open-file limit runs fewer at once, with a note, instead of failing tasks with EMFILE", async () => {
    const tasks = Array.from({ length: 100 }, (_, i) => `  t${i}: { run: "sleep 0.2; echo done ${i}" }`);
    const ws = await workspace(`tasks:\n${tasks.join("\n")}\n`);
    logRoots.push(ws.logs);
    // 100 tasks at once would need ~300 open files.
    const cli = await runWithFileLimit(128, ["run", ws.file, "-j", "100", "--log-dir", ws.logs, "--output", "plain"], ws.dir);
    const fits = Number(/note +concurrency 100 is more than 128 open files allow \(ulimit -n\): at most (\d+) tasks run at once/.exec(cli.stdout)?.[1]);
    // 128, less what taskq holds itself (a few dozen at most), over three a task.
    expect(fits).toBeGreaterThanOrEqual(25);
    expect(fits).toBeLessThan(100);
    expect(cli.stdout).toMatch(/Summary: 100 succeeded, 0 failed, 0 cancelled/);
    expect(cli.code).toBe(0);
  });

  it("--dry-run plans at the concurrency the run would use under the open-file limit, and says why it is lower", async () => {
    const tasks = Array.from({ length: 100 }, (_, i) => `  t${i}: { run: "touch ran-${i}" }`);
    const ws = await workspace(`tasks:\n${tasks.join("\n")}\n`);
    logRoots.push(ws.logs);
    const planned = new Map<string, number>();
    for (const output of ["plain", "json"]) {
      const dry = await runWithFileLimit(128, ["run", ws.file, "-j", "100", "--dry-run", "--output", output], ws.dir);
      expect(dry.code).toBe(0);
      let fits: number;
      if (output === "json") {
        const records = dry.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
        fits = Number(records[0]?.concurrency);
        expect(records[0]).toEqual({ ts: expect.any(String), event: "plan", file: ws.file, tasks: 100, concurrency: fits, requestedConcurrency: 100 });
        expect(records.at(-1)).toEqual({ ts: expect.any(String), event: "note", message: `concurrency 100 is more than 128 open files allow (ulimit -n): at most ${fits} tasks run at once` });
      } else {
        fits = Number(/concurrency (\d+) \(not 100/.exec(dry.stdout)?.[1]);
        expect(dry.stdout.split("\n")[0]).toBe(`plan for ${ws.file}: 100 tasks, concurrency ${fits} (not 100: the open-file limit allows no more, see the note); nothing is run`);
        expect(dry.stdout).toContain(`\nnote: concurrency 100 is more than 128 open files allow (ulimit -n): at most ${fits} tasks run at once\n`);
      }
      expect(fits).toBeGreaterThan(1);
      expect(fits).toBeLessThan(100);
      planned.set(output, fits);
    }
    expect(existsSync(path.join(ws.dir, "ran-0"))).toBe(false);
    // The run itself uses what the plan said.
    for (const output of ["plain", "json"]) {
      const real = await runWithFileLimit(128, ["run", ws.file, "-j", "100", "--log-dir", ws.logs, "--output", output], ws.dir);
      expect(real.code).toBe(0);
      expect(real.stdout).toContain(`concurrency 100 is more than 128 open files allow (ulimit -n): at most ${planned.get(output)} tasks run at once`);
    }
  });

  it("--dry-run and the run agree on the concurrency at every open-file limit, also while the run's first mkfifo is still running (a loaded machine)", { timeout: 60_000 }, async () => {
    const tasks = Array.from({ length: 40 }, (_, i) => `  t${i}: { run: "true" }`);
    const ws = await workspace(`tasks:\n${tasks.join("\n")}\n`);
    logRoots.push(ws.logs);
    // A slow mkfifo, as on a loaded machine: its pipe is open when the run counts what it holds. A TMPDIR of its own: no spare FIFOs to claim instead.
    const mkfifo = execFileSync("sh", ["-c", "command -v mkfifo"], { encoding: "utf8" }).trim();
    await mkdir(path.join(ws.dir, "bin"));
    await mkdir(path.join(ws.dir, "tmp"));
    await writeFile(path.join(ws.dir, "bin/mkfifo"), `#!/bin/sh\nsleep 0.5\nexec ${mkfifo} "$@"\n`, { mode: 0o755 });
    const setup = (limit: number): string => `ulimit -n ${limit} && export PATH="$PWD/bin:$PATH" TMPDIR="$PWD/tmp"`;
    // Three limits in a row: one of them is where a descriptor more or less changes the count of tasks (three each).
    for (const limit of [127, 128, 129]) {
      const dry = await runCliAfter(setup(limit), ["run", ws.file, "-j", "100", "--dry-run", "--output", "plain"], ws.dir);
      const planned = Number(/concurrency (\d+) \(not 100/.exec(dry.stdout)?.[1]);
      const real = await runCliAfter(setup(limit), ["run", ws.file, "-j", "100", "--log-dir", ws.logs, "--output", "plain"], ws.dir);
      expect(real.code).toBe(0);
      const ran = Number(/ 40 tasks, concurrency (\d+),/.exec(real.stdout)?.[1]);
      expect({ limit, ran }).toEqual({ limit, ran: planned });
    }
  });

  it("at 64 open files, -j 50 still runs several tasks at once: taskq sets aside what it holds, not a fixed 64", { timeout: 60_000 }, async () => {
    // The first six wait until all six have started: run one at a time, the first would wait in vain (20 s) and fail, and the others at once.
    const barrier = 'touch started-$TASKQ_TASK_ID; n=0; until [ $(ls started-* | wc -l) -ge 6 ]; do [ ! -e gave-up ] || exit 9; sleep 0.05; n=$((n+1)); [ $n -lt 400 ] || { touch gave-up; exit 9; }; done';
    const tasks = Array.from({ length: 50 }, (_, i) => `  t${i}: { run: '${i < 6 ? barrier : "true"}' }`);
    const ws = await workspace(`tasks:\n${tasks.join("\n")}\n`);
    logRoots.push(ws.logs);
    const cli = await runWithFileLimit(64, ["run", ws.file, "-j", "50", "--log-dir", ws.logs, "--output", "plain"], ws.dir);
    expect(cli.stdout).toMatch(/note +concurrency 50 is more than 64 open files allow \(ulimit -n\): at most \d+ tasks run at once/);
    expect(cli.stdout).toMatch(/Summary: 50 succeeded, 0 failed, 0 cancelled/);
    expect(cli.code).toBe(0);
  });

  it("an open-file limit too low for one task: an error naming ulimit -n, exit 1, before anything is made or run", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran-a }\n  b: { run: touch ran-b }\n");
    logRoots.push(ws.logs);
    for (const output of ["plain", "json"]) {
      const cli = await runWithFileLimit(22, ["run", ws.file, "--log-dir", ws.logs, "--output", output], ws.dir);
      expect(cli.code).toBe(1);
      expect(cli.stderr).toMatch(/^taskq: the open-file limit \(ulimit -n\) is 22, too low to run a task: taskq holds \d+ files and needs \d+ more for one; raise it to \d+ at least \(ulimit -n 1024, say\)\n$/);
      if (output === "json") expect(JSON.parse(cli.stdout)).toMatchObject({ event: "error", code: "OPEN_FILE_LIMIT", exitCode: 1 });
      else expect(cli.stdout).toBe("");
    }
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(false);
    expect(existsSync(ws.logs)).toBe(false);
  });

  it.skipIf(!existsSync("/dev/full"))("stdout that cannot be written (a full disk) does not stop the run: one warning, every task run and logged", async () => {
    const ws = await workspace('tasks:\n  a: { run: "echo from-a" }\n  b: { run: "echo from-b", dependsOn: a }\n');
    logRoots.push(ws.logs);
    const full = openSync("/dev/full", "w");
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, "run", ws.file, "--log-dir", ws.logs, "--output", "plain"], {
        cwd: ws.dir,
        env: { ...process.env, CI: "true", NO_COLOR: "1" },
        stdio: ["ignore", full, "pipe"],
      });
      let stderr = "";
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      child.on("close", (code) => resolve({ code, stderr }));
    }).finally(() => closeSync(full));
    expect(result.stderr).toBe("taskq: cannot write to stdout (ENOSPC); the run goes on, and each task's output is in its log\n");
    expect(result.code).toBe(0);
    const [runId] = await runIds(ws.logs);
    expect(await readFile(path.join(ws.logs, runId!, "b.log"), "utf8")).toBe("from-b\n");
  });

  it.skipIf(!existsSync("/dev/full"))("a last attempt whose log cannot be written (a full disk): the dead letter shows the earlier attempt's last lines, saying whose", async () => {
    // Attempt 1 prints, then turns its log into /dev/full (every write: ENOSPC) and fails;
    // attempt 2 cannot write its log's marker line, so its command never starts, and it leaves no lines.
    const yaml = `tasks:
  flaky:
    run: 'if [ "$TASKQ_ATTEMPT" = 1 ]; then echo first-out; echo second-out; ln -sf /dev/full "logs/$TASKQ_RUN_ID/flaky.log"; exit 1; fi; touch "started-$TASKQ_RUN_ID"; sleep 0.3; echo late-out'
    retries: 1
    backoff: { base: 10ms }
`;
    const ws = await workspace(yaml);
    logRoots.push(ws.logs);
    const plain = await runCli(["run", ws.file, "--log-dir", "logs"], { cwd: ws.dir, env: { CI: "true", NO_COLOR: "1" } });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/✗ flaky: cannot write log file .*flaky\.log: ENOSPC.* \(2 attempts\)\n {4}log: .*flaky\.log\n {4}last 2 lines of attempt 1 \(attempt 2 left none\):\n {6}first-out\n {6}second-out\n/);
    const json = await runCli(["run", ws.file, "--log-dir", "logs", "--output", "json"], { cwd: ws.dir });
    expect(json.code).toBe(1);
    const summary = JSON.parse(json.stdout.trim().split("\n").at(-1)!) as { runId: string; deadLetters: unknown[] };
    // logFile: its log under --log-dir, as a durable run's dead letter gives it.
    expect(summary.deadLetters).toEqual([
      expect.objectContaining({ id: "flaky", attempts: 2, tail: ["first-out", "second-out"], tailAttempt: 1, logPath: path.join("logs", summary.runId, "flaky.log"), logFile: `${summary.runId}/flaky.log` }),
    ]);
    // Never a command started, then stopped by taskq for want of its log (a deploy cut short, then run again).
    expect((await readdir(ws.dir)).filter((name) => name.startsWith("started-"))).toEqual([]);
  });

  it.skipIf(!existsSync("/dev/full"))("a retry whose log cannot be written does not start its command, every time: it fails as a log error and is retried", async () => {
    const yaml = `tasks:
  deploy:
    run: 'if [ "$TASKQ_ATTEMPT" = 1 ]; then ln -sf /dev/full "logs/$TASKQ_RUN_ID/deploy.log"; exit 1; fi; touch "ran-$TASKQ_RUN_ID-$TASKQ_ATTEMPT"; exit 0'
    retries: 3
    backoff: { base: 10ms }
`;
    const ws = await workspace(yaml);
    logRoots.push(ws.logs);
    for (let run = 0; run < 5; run++) {
      const result = await runCli(["run", ws.file, "--log-dir", "logs", "--output", "plain"], { cwd: ws.dir, env: { CI: "true", NO_COLOR: "1" } });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/✗ deploy: cannot write log file .*deploy\.log: ENOSPC.* \(4 attempts\)/);
    }
    expect((await readdir(ws.dir)).filter((name) => name.startsWith("ran-"))).toEqual([]);
  });

  it("a cwd missing when the run starts: made by a task it depends on, the task runs there (no note); missing for a task that depends on none, a note, and the task fails naming the folder", async () => {
    const result = await run(
      `tasks:
  make: { run: mkdir -p out }
  inside: { run: pwd, cwd: out, dependsOn: make }
  lost: { run: touch ran-lost, cwd: nowhere }
`,
      ["--output", "plain"],
    );
    expect(result.code).toBe(1);
    const nowhere = path.join(result.dir, "nowhere");
    // "inside" depends on the task that makes its folder: no note for it.
    expect(result.stdout).not.toContain('task "inside": cwd');
    expect(result.stdout).toContain(`note    ${result.file}:4:37: task "lost": cwd "nowhere" (${nowhere}) does not exist now: no task it depends on could make it first:`);
    expect(result.stdout).toContain(`inside | ${path.join(result.dir, "out")}\n`);
    expect(result.stdout).toMatch(/ok +inside\n/);
    expect(result.stdout).toContain(`✗ lost: could not start: working directory ${nowhere} does not exist (the task's cwd: make that folder in a task this one depends on, or fix the cwd); never retried (1 attempt)\n`);
    expect(result.stdout).toMatch(/Summary: 2 succeeded, 1 failed, 0 cancelled/);
  });

  it("plain lines: the workflow's name, a note and an error that quote a line break or an escape from the file stay on their one line, escaped as validate escapes them", async () => {
    // YAML's escapes: a real line break and ESC in the name and in a cwd that does not exist.
    const result = await run('name: "ci\\n12:00:00.000 ok      deploy\\u001b[2J"\ntasks:\n  lost: { run: "true", cwd: "no\\nsuch\\u001b[31m" }\n', ["--output", "plain"]);
    expect(result.code).toBe(1);
    const folder = String.raw`${result.dir}/no\nsuch\u001b[31m`;
    const lines = result.stdout.split("\n");
    // Every line is an event (a clock first), a line of the summary, or empty: none is a piece of one.
    for (const line of lines.slice(0, lines.indexOf(""))) expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} /);
    expect(result.stdout).toContain(String.raw`run ${result.runId} "ci\n12:00:00.000 ok      deploy\u001b[2J": 1 task`);
    expect(result.stdout).toContain(String.raw`note    ${result.file}:3:29: task "lost": cwd "no\nsuch\u001b[31m" (${folder}) does not exist now:`);
    expect(result.stdout).toContain(`FAILED  lost: could not start: working directory ${folder} does not exist (the task's cwd:`);
    expect(result.stdout).toContain(`✗ lost: could not start: working directory ${folder} does not exist (the task's cwd:`);
    // eslint-disable-next-line no-control-regex -- the control characters are the point
    expect(result.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
  });

  it("plain lines: a --log-dir and a workflow file named with a line break or an escape stay on their one line, as do validate's problems", async () => {
    const ws = await workspace('tasks:\n  bad: { run: "exit 3" }\n');
    const logs = path.join(ws.dir, "L\nfake\u001b[2J");
    const result = await runCli(["run", ws.file, "--log-dir", logs, "--output", "plain"], { cwd: ws.dir, env: { CI: "true", NO_COLOR: "1" } });
    expect(result.code).toBe(1);
    const shown = String.raw`${ws.dir}/L\nfake\u001b[2J`;
    // The zone before it where local time is not UTC (see clockZone).
    expect(result.stdout).toMatch(new RegExp(String.raw`concurrency \d+, (times in UTC[+-]\d{2}:\d{2}, )?logs in ${escapeRegExp(shown)}/\S+\n`));
    expect(result.stdout).toContain(`    log: ${shown}/`);
    expect(result.stdout).toContain(`\nlogs: ${shown}/`);
    // eslint-disable-next-line no-control-regex -- the control characters are the point
    expect(result.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    for (const runId of await runIds(logs)) expect(await findLeftovers(runId)).toEqual([]);

    const named = path.join(ws.dir, "nl\nname.yaml");
    await writeFile(named, "tasks:\n  a: { run: true, retries: x }\n");
    const checked = await runCli(["validate", named], { cwd: ws.dir });
    expect(checked.code).toBe(2);
    expect(checked.stderr).toContain(String.raw`${ws.dir}/nl\nname.yaml:2:`);
  });

  it("--dry-run prints the plan in start order, with each task's folder and the names of its variables, and runs nothing", async () => {
    const yaml = `env: { A: "1" }\ntasks:\n  a: { run: touch ran-a }\n  b: { run: touch ran-b, dependsOn: a, priority: critical, cwd: sub, env: { SECRET: hidden } }\n  c: { run: touch ran-c, priority: high }\n`;
    const result = await run(yaml, [
      "--dry-run",
      "-j",
      "1",
    ]);
    expect(result.code).toBe(0);
    expect([...result.stdout.matchAll(/^\s+\d+\. (\w+):/gm)].map((m) => m[1])).toEqual(["c", "a", "b"]);
    // The folder when not the workflow's, as from there; the variables' names, not their values (a plan goes to CI logs).
    expect(result.stdout).toContain("\n   1. c: touch ran-c  (priority high; env A)\n");
    expect(result.stdout).toContain("\n   3. b: touch ran-b  (priority critical; after a; in sub; env A, SECRET)\n");
    expect(result.stdout).not.toContain("hidden");
    expect(existsSync(path.join(result.dir, "ran-a"))).toBe(false);
    // With --output json: one JSON object per line, the plan's, then each task's in start order.
    const json = await runCli(["run", result.file, "--dry-run", "-j", "1", "--output", "json"], { cwd: result.dir });
    expect(json.code).toBe(0);
    const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toEqual([
      { ts: expect.any(String), event: "plan", file: result.file, tasks: 3, concurrency: 1 },
      { ts: expect.any(String), event: "planned", position: 1, id: "c", run: "touch ran-c", priority: "high", dependsOn: [], retries: 0, backoff: { baseMs: 1000, maxMs: 30_000 }, cwd: result.dir, envNames: ["A"] },
      { ts: expect.any(String), event: "planned", position: 2, id: "a", run: "touch ran-a", priority: "normal", dependsOn: [], retries: 0, backoff: { baseMs: 1000, maxMs: 30_000 }, cwd: result.dir, envNames: ["A"] },
      { ts: expect.any(String), event: "planned", position: 3, id: "b", run: "touch ran-b", priority: "critical", dependsOn: ["a"], retries: 0, backoff: { baseMs: 1000, maxMs: 30_000 }, cwd: path.join(result.dir, "sub"), envNames: ["A", "SECRET"] },
    ]);
    expect(existsSync(path.join(result.dir, "ran-c"))).toBe(false);
  });

  it("--dry-run shows how long a task waits before each retry, as the run's backoff would, and the backoff in JSON", async () => {
    const yaml = [
      "defaults: { backoff: { max: 20s } }",
      "tasks:",
      "  two: { run: \"true\", retries: 2 }",
      "  many: { run: \"true\", retries: 8 }",
      "  flat: { run: \"true\", retries: 3, backoff: { base: 5s, max: 5s }, timeout: 1m }",
      "  quick: { run: \"true\", retries: 1, backoff: { base: 250ms } }",
      "  now: { run: \"true\", retries: 2, backoff: { base: 0 } }",
      "  once: { run: \"true\" }",
      "  long: { run: \"true\", retries: 40, backoff: { base: 1ms, max: 30d } }",
      "",
    ].join("\n");
    const plan = await run(yaml, ["--dry-run", "-j", "1"]);
    expect(plan.code).toBe(0);
    expect(plan.stdout.split("\n").slice(1, -1)).toEqual([
      "   1. two: true  (priority normal; 2 retries after up to 1s, 2s)",
      // The waits at the cap counted, not listed: base 1s doubles to 16s, then the max, 20s.
      "   2. many: true  (priority normal; 8 retries after up to 1s, 2s, 4s, 8s, 16s, then 20s each)",
      "   3. flat: true  (priority normal; 3 retries after up to 5s each; timeout 1m)",
      "   4. quick: true  (priority normal; 1 retry after up to 250ms)",
      "   5. now: true  (priority normal; 2 retries at once)",
      "   6. once: true  (priority normal)",
      // 32 doublings before the max: the first three and the last.
      "   7. long: true  (priority normal; 40 retries after up to 1ms, 2ms, 4ms, … 24d20h31m23.648s, then 30d each)",
    ]);
    const json = await runCli(["run", plan.file, "--dry-run", "-j", "1", "--output", "json"], { cwd: plan.dir });
    const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; id?: string; backoff?: unknown });
    // No retryOn: every failing exit code is retried (the field is left out, as a timeoutMs not set is).
    expect(records.filter((r) => r.event === "planned").every((r) => !("retryOn" in r))).toBe(true);
    expect(records.filter((r) => r.event === "planned").map((r) => [r.id, r.backoff])).toEqual([
      ["two", { baseMs: 1000, maxMs: 20_000 }],
      ["many", { baseMs: 1000, maxMs: 20_000 }],
      ["flat", { baseMs: 5000, maxMs: 5000 }],
      ["quick", { baseMs: 250, maxMs: 20_000 }],
      ["now", { baseMs: 0, maxMs: 20_000 }],
      ["once", { baseMs: 1000, maxMs: 20_000 }],
      ["long", { baseMs: 1, maxMs: 2_592_000_000 }],
    ]);
  });

  it("--dry-run says which exit codes a task's retries are for, where it has a retryOn (its own or the defaults'); JSON: retryOn", async () => {
    const yaml = [
      "defaults: { retryOn: [75] }",
      "tasks:",
      "  one: { run: \"true\", retries: 2 }",
      "  two: { run: \"true\", retries: 1, retryOn: [1, 75], backoff: { max: 0 } }",
      "  any: { run: \"true\", retries: 1, retryOn: any }",
      "  none: { run: \"true\" }",
      "",
    ].join("\n");
    const plan = await run(yaml, ["--dry-run", "-j", "1"]);
    expect(plan.code).toBe(0);
    expect(plan.stdout.split("\n").slice(1, -1)).toEqual([
      "   1. one: true  (priority normal; 2 retries after up to 1s, 2s, on exit code 75)",
      "   2. two: true  (priority normal; 1 retry at once, on exit codes 1, 75)",
      "   3. any: true  (priority normal; 1 retry after up to 1s)",
      "   4. none: true  (priority normal)",
    ]);
    const json = await runCli(["run", plan.file, "--dry-run", "-j", "1", "--output", "json"], { cwd: plan.dir });
    const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; id?: string; retryOn?: number[] });
    expect(records.filter((r) => r.event === "planned").map((r) => [r.id, r.retryOn])).toEqual([
      ["one", [75]],
      ["two", [1, 75]],
      ["any", undefined],
      ["none", [75]],
    ]);
  });

  // It said `0ms after the run starts`, a wait that is none.
  it("--dry-run says nothing of a zero delay (`delay: 0`, `0s`, one that undoes defaults'), as of a task without one", async () => {
    const plan = await run("defaults:\n  delay: 5m\ntasks:\n  a: { run: \"true\", delay: 0 }\n  b: { run: \"true\", delay: 0s, dependsOn: [a] }\n  c: { run: \"true\" }\n", ["--dry-run", "-j", "1"]);
    expect(plan.code).toBe(0);
    expect(plan.stdout.split("\n").slice(1)).toEqual(["   1. a: true  (priority normal)", "   2. b: true  (priority normal; after a)", "   3. c: true  (priority normal; 5m after the run starts)", ""]);
  });

  it("counts `delay` from the start of the run, not from when the file was read", async () => {
    // Reading and checking 300 tasks takes tens of ms: they must not come off the delay.
    const dependents = Array.from({ length: 300 }, (_, i) => `  t${i}: { run: "true", dependsOn: gate }`);
    const yaml = `tasks:\n  gate: { run: "exit 1", delay: 1500ms }\n${dependents.join("\n")}\n`;
    const plan = await run(yaml, ["--dry-run"]);
    expect(plan.stdout).toMatch(/^ +1\. gate: exit 1 {2}\(priority normal; 1.5s after the run starts\)$/m);
    const result = await run(yaml, ["--output", "json"]);
    expect(result.code).toBe(1);
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { ts: string; event: string; id?: string; runAt?: number });
    const runStart = Date.parse(events.find((e) => e.event === "run")!.ts);
    const gate = events.find((e) => e.event === "submitted" && e.id === "gate")!;
    expect(gate.runAt! - runStart).toBeGreaterThanOrEqual(1500);
    expect(gate.runAt! - runStart).toBeLessThan(1500 + 1000);
    const started = Date.parse(events.find((e) => e.event === "started" && e.id === "gate")!.ts);
    expect(started).toBeGreaterThanOrEqual(gate.runAt!);
    expect(events.filter((e) => e.event === "cancelled")).toHaveLength(300);
  });

  it("--dry-run says a runAt already past is no wait, not 'not before' a time gone by, and one ahead to the second in UTC", async () => {
    const ahead = new Date(Date.now() + 3 * 86_400_000);
    ahead.setUTCMilliseconds(0);
    const yaml = `tasks:\n  late: { run: "true", runAt: "2026-01-01T03:00:00+01:00" }\n  soon: { run: "true", runAt: "${ahead.toISOString()}" }\n`;
    const plan = await run(yaml, ["--dry-run", "-j", "1"]);
    expect(plan.code).toBe(0);
    expect(plan.stdout.split("\n").slice(1, 3)).toEqual([
      "   1. late: true  (priority normal; runAt already past: no wait)",
      `   2. soon: true  (priority normal; not before ${ahead.toISOString().replace(".000Z", "Z")})`,
    ]);
    // As written, in the loader's note.
    expect(plan.stdout).toMatch(/^note: \S+:2:\d+: task "late": runAt 2026-01-01T03:00:00\+01:00 is in the past; the task runs now$/m);
  });

  it("says when a task whose dependencies are done waits for its delay, with its time: a plain line and a JSON record", async () => {
    const yaml = 'tasks:\n  q: { run: "true" }\n  d: { run: "true", delay: 1s, dependsOn: q }\n';
    const plain = await run(yaml, ["--output", "plain"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} wait {4}d scheduled for \d\d:\d\d:\d\d(\.\d{3})?$/m);
    const json = await run(yaml, ["--output", "json"]);
    const events = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; id?: string; runAt?: number });
    const scheduled = events.findIndex((e) => e.event === "scheduled" && e.id === "d");
    expect(scheduled).toBeGreaterThan(events.findIndex((e) => e.event === "succeeded" && e.id === "q"));
    expect(scheduled).toBeLessThan(events.findIndex((e) => e.event === "started" && e.id === "d"));
    expect(typeof events[scheduled]!.runAt).toBe("number");
  });

  it("honours NO_COLOR: no escape bytes at all", async () => {
    const result = await run(`tasks:\n  a: { run: "echo plain; exit 1" }\n`);
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).not.toContain("\u001b");
  });

  it("parses a large file, in place or in a worker thread, with the same results and the same errors", async () => {
    // Over 256 KiB: the fast reader reads it in place, its problems too; a file it declines (here
    // for an anchor) is parsed by yaml off the main thread so the scheduler stays small.
    const tasks = Array.from({ length: 3000 }, (_, i) => `  t${i}: { run: "echo ${"x".repeat(80)}"${i > 0 ? `, dependsOn: t${i - 1}` : ""} }`);
    for (const header of ["", "env: &shared { A: '1' }\n"]) {
      const valid = await run(`${header}tasks:\n${tasks.join("\n")}\n`, ["--dry-run"]);
      expect(valid.code).toBe(0);
      expect(valid.stdout).toMatch(header === "" ? /^ *3000\. t2999: echo x+ {2}\(priority normal; after t2998\)$/m : /^ *3000\. t2999: echo x+ {2}\(priority normal; after t2998; env A\)$/m);
    }
    // With problems, in place and (the anchor) off the main thread: each problem, at its line, the same either way.
    for (const [header, offset] of [["", 0], ["env: &shared { A: '1' }\n", 1]] as const) {
      const invalid = await run(`${header}tasks:\n${tasks.join("\n")}\n  bad: { run: 1, dependsOn: nope }\n  worse: { run: "true", retries: -1 }\n`);
      expect(invalid.code).toBe(2);
      expect(invalid.stderr).toContain(`${invalid.file}:${3002 + offset}:15: task "bad": \`run\` must be a non-empty command string, got 1`);
      expect(invalid.stderr).toMatch(new RegExp(`${invalid.file}:${3002 + offset}:\\d+: task "bad" depends on "nope", which is not defined`));
      expect(invalid.stderr).toMatch(new RegExp(`${invalid.file}:${3003 + offset}:\\d+: task "worse": `));
      expect(invalid.stderr).toMatch(/\n3 problems; nothing was run\n$/);
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether this machine's /bin/sh refuses `set -o pipefail` (dash before 0.5.13), as it runs every task's command. */
function shRefusesPipefail(): boolean {
  try {
    execFileSync("/bin/sh", ["-c", "set -o pipefail"], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
}

/** Whether this machine's /bin/sh refuses bash's `[[` (dash), as it runs every task's command. */
function shRefusesDoubleBracket(): boolean {
  try {
    execFileSync("/bin/sh", ["-c", "[[ 1 ]]"], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
}

/** `taskq validate` of the workspace's file, which must pass: its note lines. */
async function validatedNotes(ws: { dir: string; file: string }): Promise<string[]> {
  const validated = await runCli(["validate", ws.file], { cwd: ws.dir });
  expect(validated.code).toBe(0);
  return validated.stdout.split("\n").filter((line) => line.startsWith("note: "));
}

/**
 * A workflow whose one note, `note`, is at its first task's run (3:10): validate gives it alone, then a plain run
 * gives it too, before its tasks' lines. The run, for what its tasks then did.
 */
async function notedThenRun(ws: { dir: string; file: string; logs: string }, note: RegExp): Promise<CliResult> {
  const notes = await validatedNotes(ws);
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain(`note: ${ws.file}:3:10: `);
  expect(notes[0]).toMatch(note);
  logRoots.push(ws.logs);
  const ran = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
  expect(ran.stdout).toMatch(note);
  return ran;
}
describe.skipIf(!shRefusesDoubleBracket())("a run with bash's [[ ]] where /bin/sh refuses it (dash)", () => {
  it("validate and run note it at the run, with its line and the fix, before the test fails there; one run by bash is not noted", async () => {
    // validate said "ok", and the task took the else branch with dash's "[[: not found" alone.
    const yaml = [
      "tasks:",
      "  check:",
      "    run: |",
      "      echo checking",
      "      if [[ -d / ]]; then echo found; else echo missing; fi",
      "  bashed: { run: \"bash -c '[[ -d / ]] && echo bash found'\" }",
      "",
    ].join("\n");
    const note = /task "check": run has \[\[ -d \/ \]\] \(its line 2\), bash's test syntax, which \/bin\/sh[^:]* here does not have \("\[\[: not found"\): a run is run by \/bin\/sh -c, not bash, .*write \[ \.\.\. \].*; or run the commands with bash \(bash -c '\.\.\.', or a script file that begins with #!\/bin\/bash\)/;
    const ws = await workspace(yaml);
    const ran = await notedThenRun(ws, note);
    expect(ran.stdout.match(/ note +/g)).toHaveLength(1);
    expect(ran.stdout).toContain("[[: not found");
    expect(ran.stdout).toContain("check | missing");
    expect(ran.stdout).toContain("bashed | bash found");
  }, 60_000);

  it("says nothing of a run whose bash words are arguments, which /bin/sh runs to its end", async () => {
    // Each was noted as bash's, under dash, of a task that succeeded: the word after `do` or `!` in an
    // echo, after an escaped `;` or a line continuation, and an assignment in arithmetic.
    const yaml = [
      "tasks:",
      "  words: { run: echo now do source the env file }",
      "  bang: { run: echo tests ok! function coverage next }",
      "  escaped: { run: echo a\\; source b }",
      "  joined:",
      "    run: |",
      "      echo one \\",
      "        [[ two ]]",
      "  arith: { run: \"echo $(( (n=(2+3)) * 2 ))\" }",
      "",
    ].join("\n");
    const ws = await workspace(yaml);
    const validated = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(validated.code).toBe(0);
    expect(validated.stdout).not.toContain("note:");
    logRoots.push(ws.logs);
    const ran = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(ran.code).toBe(0);
    expect(ran.stdout).not.toMatch(/ note +/);
    expect(ran.stdout).toContain("words | now do source the env file");
    expect(ran.stdout).toContain("bang | tests ok! function coverage next");
    expect(ran.stdout).toContain("escaped | a; source b");
    expect(ran.stdout).toContain("joined | one [[ two ]]");
    expect(ran.stdout).toContain("arith | 10");
  }, 60_000);
});

describe.skipIf(!shRefusesPipefail())("a run with set -o pipefail where /bin/sh refuses it (dash)", () => {
  const yaml = [
    "tasks:",
    "  build:",
    "    run: |",
    "      echo building",
    "      set -euo pipefail",
    "      make all",
    "  lint: { run: \"bash -c 'set -euo pipefail; echo linted'\" }",
    "  probe:",
    "    run: |",
    "      # set -o pipefail",
    "      (set -o pipefail) 2>/dev/null || echo no pipefail here",
    "",
  ].join("\n");
  const note = /task "build": run has set -euo pipefail \(its line 2\), which \/bin\/sh[^:]* here refuses \("Illegal option -o pipefail"\): a run is run by \/bin\/sh -c, not bash, so the task exits 2 at that line and runs nothing after it; drop pipefail, or run the commands with bash/;

  it("validate, run and --dry-run note it at the run, naming the shell and its line, before the task exits 2 there; one run by bash, in a comment or in a subshell that tries it is not noted", async () => {
    // validate said "ok" and the run failed once the task started, with dash's "Illegal option -o pipefail" alone.
    const ws = await workspace(yaml);
    const validated = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(validated.code).toBe(0);
    expect(validated.stdout).toContain("workflow.yaml: ok, 3 tasks");
    const notes = validated.stdout.split("\n").filter((line) => line.startsWith("note: "));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(`note: ${ws.file}:3:10: `);
    expect(notes[0]).toMatch(note);
    const dry = await runCli(["run", ws.file, "--dry-run"], { cwd: ws.dir });
    expect(dry.code).toBe(0);
    expect(`${dry.stdout}${dry.stderr}`).toMatch(note);
    logRoots.push(ws.logs);
    const ran = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(ran.stdout).toMatch(note);
    expect(ran.stdout.match(/ note +/g)).toHaveLength(1);
    expect(ran.stdout).toContain("Illegal option -o pipefail");
    expect(ran.stdout).toMatch(/FAILED +build: exited with code 2/);
    expect(ran.stdout).toContain("lint | linted");
    expect(ran.stdout).toContain("probe | no pipefail here");
    expect(ran.code).toBe(1);
  }, 60_000);

  it("one in a command substitution is noted as ending that substitution's commands, which is what sh does; the task goes on", async () => {
    // Before, `v=$(set -o pipefail; ...)` went unnoted, its pipeline never run under dash, and v empty.
    const ws = await workspace(["tasks:", "  count:", "    run: |", "      v=$(set -o pipefail; echo abc | tr a x)", '      echo "got [$v]"', ""].join("\n"));
    const note = /task "count": run has set -o pipefail \(its line 1\), which \/bin\/sh[^:]* here refuses \("Illegal option -o pipefail"\): a run is run by \/bin\/sh -c, not bash, so the command substitution it is in exits 2 there and runs nothing after it \(its pipelines never run\); drop pipefail, or run the commands with bash/;
    const ran = await notedThenRun(ws, note);
    expect(ran.stdout).toContain("Illegal option -o pipefail");
    expect(ran.stdout).toContain("count | got []");
    expect(ran.code).toBe(0);
  }, 60_000);

  it("a set -o pipefail after a test of whether sh takes it is not noted: it runs only where sh does", async () => {
    // Before, each of these was told 'the task exits 2 at that line and runs nothing after it', and each ran to its end.
    const ws = await workspace(
      [
        "tasks:",
        "  a: { run: \"(set -o pipefail) 2>/dev/null && set -o pipefail; echo a ran\" }",
        "  b:",
        "    run: |",
        "      if (set -o pipefail) 2>/dev/null; then",
        "        set -o pipefail",
        "      fi",
        "      echo b ran",
        "  c: { run: '[ -n \"$BASH_VERSION\" ] && set -o pipefail; echo c ran' }",
        "  d: { run: 'set -o | grep -q pipefail && set -o pipefail; echo d ran' }",
        "",
      ].join("\n"),
    );
    const validated = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(validated.code).toBe(0);
    expect(validated.stdout).toBe(`${ws.file}: ok, 4 tasks\n`);
    logRoots.push(ws.logs);
    const ran = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(ran.stdout).not.toContain("pipefail");
    for (const id of ["a", "b", "c", "d"]) expect(ran.stdout).toContain(`${id} | ${id} ran`);
    expect(ran.code).toBe(0);
  }, 60_000);

  it("--output json gives the note as a record at its file, line and column", async () => {
    const ws = await workspace(yaml);
    const validated = await runCli(["validate", ws.file, "--output", "json"], { cwd: ws.dir });
    const records = validated.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; line?: number; col?: number; message?: string });
    const notes = records.filter((record) => record.event === "note");
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ line: 3, col: 10 });
    expect(notes[0]!.message).toMatch(/^task "build": run has set -euo pipefail \(its line 2\), which \/bin\/sh/);
  }, 60_000);
});

describe("a run with GitHub Actions' ${{ ... }}, which no shell knows", () => {
  it("an env value holding one is noted where it is written, as the task gets its characters as written, with where to set it instead", async () => {
    // The task was given the text "${{ secrets.DEPLOY_TOKEN }}" as its token, without a word.
    const ws = await workspace(
      [
        "env:",
        "  DEPLOY_TOKEN: ${{ secrets.DEPLOY_TOKEN }}",
        "tasks:",
        "  deploy:",
        '    run: printf "%s\\n" "$DEPLOY_TOKEN" "$STAGE"',
        '    env: { STAGE: "${{ vars.STAGE }}", PLAIN: "a $b" }',
        "",
      ].join("\n"),
    );
    logRoots.push(ws.logs);
    const ran = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(
      `note    ${ws.file}:2:17: env: the value of DEPLOY_TOKEN holds \${{ secrets.DEPLOY_TOKEN }}, GitHub Actions' expression syntax, which taskq does not replace: the task gets those characters as written; set DEPLOY_TOKEN in the env: of the step that runs taskq instead (every task inherits taskq's environment), and leave it out here\n`,
    );
    expect(ran.stdout).toMatch(new RegExp(`note +${escapeRegExp(ws.file)}:6:19: task "deploy": the value of STAGE holds \\$\\{\\{ vars\\.STAGE \\}\\}, GitHub Actions' expression syntax`));
    expect(ran.stdout.match(/ note +/g)).toHaveLength(2);
    expect(ran.stdout).toContain("deploy | ${{ secrets.DEPLOY_TOKEN }}\n");
  }, 60_000);

  it("a ${{ ... }} whose $ a backslash keeps is not noted: sh prints it as written", async () => {
    // Before, validate told 'run has ${{ x }}, ... /bin/sh refuses it as a bad substitution, and the task fails there', and the task printed it.
    const ws = await workspace(["tasks:", '  a: { run: "echo \\\\${{ x }}" }', "  b: { run: 'echo \"\\${{ y }}\"' }", ""].join("\n"));
    const validated = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(validated.code).toBe(0);
    expect(validated.stdout).toBe(`${ws.file}: ok, 2 tasks\n`);
    logRoots.push(ws.logs);
    const ran = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(ran.stdout).toContain("a | ${{ x }}\n");
    expect(ran.stdout).toContain("b | ${{ y }}\n");
    expect(ran.code).toBe(0);
  }, 60_000);

  it("validate and run note it at the run, with the variable to write instead, before the task fails there; one in single quotes or a comment is not noted", async () => {
    // validate said "ok", and the task failed once it started with sh's "Bad substitution" alone.
    const ws = await workspace(
      [
        "tasks:",
        "  build:",
        "    run: |",
        "      # tag ${{ github.ref_name }}",
        '      echo "building ${{ github.sha }}"',
        "  quoted: { run: \"echo '${{ kept }}'\" }",
        "  deploy: { run: 'deploy --token \"${{ secrets.DEPLOY_TOKEN }}\"' }",
        "",
      ].join("\n"),
    );
    const build = /task "build": run has \$\{\{ github\.sha \}\} \(its line 2\), GitHub Actions' expression syntax, which taskq does not replace: \/bin\/sh refuses it as a bad substitution, and the task fails there; the runner sets \$GITHUB_SHA for github\.sha, in taskq's environment and so in every task's: write that/;
    const deploy = /task "deploy": run has \$\{\{ secrets\.DEPLOY_TOKEN \}\}, GitHub Actions' expression syntax, .*; give the value to taskq's environment in the step that runs it \(env: \{ NAME: \$\{\{ \.\.\. \}\} \}\), and write \$NAME here/;
    const notes = await validatedNotes(ws);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toContain(`note: ${ws.file}:3:10: `);
    expect(notes[0]).toMatch(build);
    expect(notes[1]).toContain(`note: ${ws.file}:7:18: `);
    expect(notes[1]).toMatch(deploy);
    logRoots.push(ws.logs);
    const ran = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain", "-j", "1"], { cwd: ws.dir });
    expect(ran.stdout).toMatch(build);
    expect(ran.stdout).toMatch(deploy);
    expect(ran.stdout).toMatch(/build \| .*[Bb]ad substitution/);
    expect(ran.stdout).toContain("quoted | ${{ kept }}");
    expect(ran.code).toBe(1);
  }, 60_000);
});

describe("the zone of plain output's times", () => {
  it("says it in the run's first line where local time is not UTC: the lines' times are local, the run id's UTC", async () => {
    const ws = await workspace("tasks:\n  a:\n    run: echo hi\n");
    const firstLine = async (tz: string): Promise<string> => {
      const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: { TZ: tz } });
      expect(result.code).toBe(0);
      return result.stdout.split("\n")[0] as string;
    };
    // Before the logs' folder, which ends the line: a script taking the folder from the line's end still finds it.
    expect(await firstLine("Asia/Kolkata")).toMatch(new RegExp(String.raw`^\d{2}:\d{2}:\d{2}\.\d{3} run \S+: 1 task, concurrency \d+, times in UTC\+05:30, logs in ${escapeRegExp(ws.logs)}/\S+$`));
    expect(await firstLine("America/St_Johns")).toMatch(/, times in UTC-0[23]:30, logs in /);
    expect(await firstLine("UTC")).not.toContain("times in");
  });
});
