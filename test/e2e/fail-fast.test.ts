import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, runIds, startCli, workspace } from "../helpers/cli.js";
import { eventually, isAlive, leftoversCheckedAfterEach } from "../helpers/processes.js";
import { taskqOnPty } from "../helpers/pty.js";

// Every e2e run must leave no task process behind.
const logRoots = leftoversCheckedAfterEach();

/**
 * `boom` fails once `sleeper` runs (its pid written); `after` depends on boom; `queued` waits for a slot (concurrency 2);
 * `later` waits for its delay. `sleepFor` and `delay`: long where --fail-fast must cut them short, short where the run goes on.
 */
function pipeline(sleepFor: string, delay: string): string {
  return `concurrency: 2
tasks:
  boom:
    run: 'while [ ! -f sleeper.pid ]; do sleep 0.05; done; echo about to fail; exit 3'
  sleeper:
    run: 'echo sleeping; echo $$ > sleeper.pid.tmp && mv sleeper.pid.tmp sleeper.pid; exec sleep ${sleepFor}'
  after:
    run: 'touch after.ran'
    dependsOn: boom
  queued:
    run: 'touch queued.ran'
  later:
    run: 'touch later.ran'
    delay: ${delay}
`;
}

async function setUp(yaml: string) {
  const ws = await workspace(yaml);
  logRoots.push(ws.logs);
  return ws;
}

async function logOf(logs: string, id: string): Promise<string> {
  const [runId = ""] = await runIds(logs);
  return readFile(path.join(logs, runId, `${id}.log`), "utf8");
}

describe("taskq run --fail-fast", () => {
  it("stops at the first failure: nothing more starts, what waits is cancelled naming it, what runs is stopped; exit 1", async () => {
    const ws = await setUp(pipeline("600", "10m"));
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--kill-grace", "2s"], { cwd: ws.dir });
    const { stdout } = result;
    expect(result.code).toBe(1);
    expect(result.signal).toBeNull();
    // The sleep (10 minutes) did not hold the run: it ended long before it would have.
    expect(result.durationMs).toBeLessThan(300_000);
    const pid = Number(await readFile(path.join(ws.dir, "sleeper.pid"), "utf8"));
    expect(await isAlive(pid)).toBe(false);
    expect(stdout).toContain("FAILED  boom: exited with code 3\n");
    expect(stdout).toContain("note    fail-fast: boom failed: no new task starts, the 2 tasks waiting are cancelled; stopping the running task (SIGTERM, then SIGKILL 2s later)\n");
    // The failed task's dependents are cancelled because of it, as without --fail-fast; the others because of the stop.
    expect(stdout).toContain('cancel  after: dependency "boom" failed\n');
    expect(stdout).toContain('cancel  queued: not started: fail-fast: task "boom" failed\n');
    expect(stdout).toContain('cancel  later: not started: fail-fast: task "boom" failed\n');
    expect(stdout).toContain('cancel  sleeper: fail-fast: task "boom" failed\n');
    expect(stdout).not.toMatch(/start {3}(queued|after|later) /);
    for (const marker of ["queued.ran", "after.ran", "later.ran"]) expect(existsSync(path.join(ws.dir, marker))).toBe(false);
    expect(stdout).toMatch(/Summary: 0 succeeded, 1 failed, 4 cancelled in \S+ \(stopped by fail-fast: boom failed\)\n/);
    expect(stdout).toContain("Dead letters (1):\n  ✗ boom: exited with code 3 (1 attempt)\n");
    expect(stdout).toContain("    cancelled because of it: after\n");
    expect(stdout).toContain('Cancelled (3):\n  - sleeper: fail-fast: task "boom" failed\n');
    expect(stdout).toContain("    last line:\n      sleeping\n");
    // The stopped task's log keeps its output and says it was stopped, and why.
    expect(await logOf(ws.logs, "sleeper")).toBe('sleeping\n--- taskq: attempt 1 stopped: fail-fast: task "boom" failed ---\n');
  });

  it("without the flag, the tasks that do not depend on the failed one run to their end, as before", async () => {
    const ws = await setUp(pipeline("0.2", "200ms"));
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAILED  boom: exited with code 3\n");
    expect(result.stdout).toContain('cancel  after: dependency "boom" failed\n');
    for (const id of ["sleeper", "queued", "later"]) expect(result.stdout).toContain(`ok      ${id}\n`);
    expect(existsSync(path.join(ws.dir, "queued.ran"))).toBe(true);
    expect(existsSync(path.join(ws.dir, "later.ran"))).toBe(true);
    expect(result.stdout).not.toContain("fail-fast");
    expect(result.stdout).toMatch(/Summary: 3 succeeded, 1 failed, 1 cancelled in \S+\n/);
  });

  it("says it in JSON: the note, each cancel's message, and the summary's failedFast, dead letter and cancelled", async () => {
    const ws = await setUp(pipeline("600", "10m"));
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--output", "json"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.find((e) => e.event === "note")?.message).toMatch(/^fail-fast: boom failed: no new task starts/);
    const cancelled = Object.fromEntries(events.filter((e) => e.event === "cancelled").map((e) => [e.id, e.message]));
    expect(cancelled).toEqual({
      after: 'dependency "boom" failed',
      queued: 'not started: fail-fast: task "boom" failed',
      later: 'not started: fail-fast: task "boom" failed',
      sleeper: 'fail-fast: task "boom" failed',
    });
    const summary = events.find((e) => e.event === "summary") as { failedFast?: string; exitCode: number; deadLetters: { id: string }[]; cancelled: { id: string; message: string; running?: boolean }[] };
    expect(summary.failedFast).toBe("boom");
    expect(summary.exitCode).toBe(1);
    expect(summary.deadLetters.map((letter) => letter.id)).toEqual(["boom"]);
    expect(summary.cancelled.find((x) => x.id === "sleeper")).toMatchObject({ message: 'fail-fast: task "boom" failed', running: true });
  });

  it("a task that had failed on its own as the stop came is FAILED with its exit code, not cancelled: summary, JSON and log agree", { timeout: 120_000 }, async () => {
    // `a` fails first, but a process it leaves ignoring SIGTERM holds its attempt open (its reap waits out the 10s kill grace):
    // `b` fails once `a`'s shell is gone, and its failure stops the run while `a` is still being recorded.
    const ws = await setUp(`concurrency: 3
tasks:
  a:
    run: 'echo $$ > a.pid; while [ ! -f go ]; do sleep 0.01; done; (trap "" TERM; exec sleep 600) & exit 3'
  b:
    run: 'while [ ! -f a.pid ] || [ ! -f go ]; do sleep 0.01; done; while kill -0 $(cat a.pid) 2>/dev/null; do sleep 0.01; done; exit 4'
  c:
    run: 'exec sleep 600'
`);
    const run = startCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--kill-grace", "10s", "--output", "json"], { cwd: ws.dir });
    expect(await eventually(() => existsSync(path.join(ws.dir, "a.pid")), 60_000)).toBe(true);
    await writeFile(path.join(ws.dir, "go"), "");
    const result = await run.done;
    expect(result.code).toBe(1);
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const failed = Object.fromEntries(events.filter((e) => e.event === "failed").map((e) => [e.id, e.exitCode]));
    expect(failed).toEqual({ a: 3, b: 4 });
    expect(events.filter((e) => e.event === "cancelled").map((e) => e.id)).toEqual(["c"]);
    const summary = events.find((e) => e.event === "summary") as { failedFast?: string; deadLetters: { id: string; exitCode?: number }[] };
    expect(summary.failedFast).toBe("b");
    expect(Object.fromEntries(summary.deadLetters.map((letter) => [letter.id, letter.exitCode]))).toEqual({ a: 3, b: 4 });
    expect(await logOf(ws.logs, "a")).toMatch(/--- taskq: attempt 1 exited with code 3 ---\n$/);
  });

  it("waits for a task's retries: a failed attempt with one to come stops nothing; a task waiting for its retry is cancelled when another fails", async () => {
    const ws = await setUp(`concurrency: 2
tasks:
  flaky:
    run: 'if [ "$TASKQ_ATTEMPT" -lt 2 ]; then exit 1; fi; exec sleep 600'
    retries: 1
    backoff: { base: 10m, max: 10m }
  boom:
    run: 'while [ ! -f go ]; do sleep 0.05; done; exit 3'
`);
    // Full jitter may make the 10m backoff short: the retry then runs (a long sleep), and is stopped as a running task.
    const run = startCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast"], { cwd: ws.dir });
    expect(await eventually(() => run.stdout().includes("retry   flaky attempt 1/2 failed"), 60_000)).toBe(true);
    // The retry to come kept the run going: boom, running, is let fail.
    await writeFile(path.join(ws.dir, "go"), "");
    const result = await run.done;
    expect(result.code).toBe(1);
    const before = result.stdout.slice(0, result.stdout.indexOf("FAILED  boom"));
    expect(before).not.toContain("fail-fast");
    expect(result.stdout).toContain("note    fail-fast: boom failed");
    const retried = result.stdout.includes("start   flaky (attempt 2/2)");
    expect(result.stdout).toContain(retried ? 'cancel  flaky: fail-fast: task "boom" failed\n' : 'cancel  flaky: fail-fast: task "boom" failed: not retried (attempt 1 failed: exited with code 1)\n');
    expect(result.stdout).toMatch(/Summary: 0 succeeded, 1 failed, 1 cancelled in \S+ \(stopped by fail-fast: boom failed\)\n/);
  }, 90_000);

  it("lets a run whose tasks all succeed, after a retry, end as ever: exit 0", async () => {
    const ws = await setUp(`tasks:
  flaky:
    run: 'if [ "$TASKQ_ATTEMPT" -lt 2 ]; then exit 1; fi; echo passed'
    retries: 1
    backoff: { base: 10ms, max: 10ms }
  other:
    run: 'sleep 0.3'
`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast"], { cwd: ws.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("retry   flaky attempt 1/2 failed: exited with code 1");
    expect(result.stdout).toContain("ok      flaky after 2 attempts\n");
    expect(result.stdout).toContain("ok      other\n");
    expect(result.stdout).not.toContain("fail-fast");
  });

  it("a Ctrl-C during its stop gives the running tasks no time to finish: the stop goes on, a second one kills them; exit 130", async () => {
    const ws = await setUp(`tasks:
  boom:
    run: 'while [ ! -f stubborn.pid ]; do sleep 0.05; done; exit 3'
  stubborn:
    run: "trap '' TERM; echo $$ > stubborn.pid; while :; do sleep 0.1; done"
`);
    const run = startCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--kill-grace", "10m"], { cwd: ws.dir });
    expect(await eventually(() => run.stdout().includes("note    fail-fast: boom failed"), 60_000)).toBe(true);
    process.kill(run.child.pid!, "SIGINT");
    expect(await eventually(() => run.stdout().includes("SIGINT received"), 60_000)).toBe(true);
    process.kill(run.child.pid!, "SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(result.stdout).toContain("note    SIGINT received: the running tasks are being stopped already (fail-fast: boom failed); send it again to kill them at once\n");
    expect(result.stdout).not.toContain("to finish");
    expect(result.stdout).toContain("note    SIGINT received again: killing every task now\n");
    // The summary names both: what stopped the run first, and the signal that ended it.
    expect(result.stdout).toMatch(/Summary: .* \(stopped by fail-fast: boom failed, then interrupted by SIGINT\)\n/);
    expect(await isAlive(Number(await readFile(path.join(ws.dir, "stubborn.pid"), "utf8")))).toBe(false);
  }, 90_000);

  it("says nothing of itself where the failed task was the last to end: nothing was left to stop", async () => {
    const ws = await setUp(`tasks:
  first:
    run: 'true'
  last:
    run: 'exit 3'
    dependsOn: first
`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAILED  last: exited with code 3\n");
    expect(result.stdout).not.toContain("fail-fast");
    expect(result.stdout).toMatch(/Summary: 1 succeeded, 1 failed, 0 cancelled in \S+\n/);
  });

  it("says nothing of itself where only the failed task's own dependents were left: they are cancelled because of it, as ever", async () => {
    const ws = await setUp(`tasks:
  boom:
    run: 'exit 3'
  after:
    run: 'touch after.ran'
    dependsOn: boom
  then:
    run: 'touch then.ran'
    dependsOn: after
`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('cancel  after: dependency "boom" failed\n');
    expect(result.stdout).toContain('cancel  then: dependency "boom" failed (via "after")\n');
    expect(result.stdout).not.toContain("fail-fast");
    expect(result.stdout).toMatch(/Summary: 0 succeeded, 1 failed, 2 cancelled in \S+\n/);
  });

  it("says what it stops and no more: no task waiting but the failed task's dependents, one running", async () => {
    const ws = await setUp(`tasks:
  boom:
    run: 'while [ ! -f sleeper.pid ]; do sleep 0.05; done; exit 3'
  after:
    run: 'touch after.ran'
    dependsOn: boom
  sleeper:
    run: 'echo $$ > sleeper.pid.tmp && mv sleeper.pid.tmp sleeper.pid; exec sleep 600'
`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--kill-grace", "2s"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("note    fail-fast: boom failed: stopping the running task (SIGTERM, then SIGKILL 2s later)\n");
    expect(result.stdout).toContain('cancel  after: dependency "boom" failed\n');
    expect(result.stdout).toContain('cancel  sleeper: fail-fast: task "boom" failed\n');
    expect(result.stdout).toMatch(/Summary: 0 succeeded, 1 failed, 2 cancelled in \S+ \(stopped by fail-fast: boom failed\)\n/);
  });

  it("does not count as running a task its timeout is stopping already: with nothing else to stop, the run ends as without the flag", async () => {
    const ws = await setUp(`tasks:
  slow:
    run: "trap 'touch stopping' TERM; while :; do sleep 0.05; done"
    timeout: 200ms
  boom:
    run: 'while [ ! -f stopping ]; do sleep 0.05; done; exit 3'
`);
    // boom fails once slow's timeout has sent it SIGTERM, which it ignores: the kill grace, not the fail-fast, ends it.
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--kill-grace", "3s"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAILED  boom: exited with code 3\n");
    expect(result.stdout).toContain("FAILED  slow: timed out after 200ms; killed with SIGKILL after the kill grace (3s)");
    expect(result.stdout).not.toContain("fail-fast");
    expect(result.stdout).toMatch(/Summary: 0 succeeded, 2 failed, 0 cancelled in \S+\n/);
  });

  it("says in JSON which tasks the stop cancelled: reason \"fail-fast\" in their records and the summary's, where a Ctrl-C's are \"shutdown\"", async () => {
    const ws = await setUp(pipeline("600", "10m"));
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--kill-grace", "2s", "--output", "json"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const reasons = Object.fromEntries(events.filter((e) => e.event === "cancelled").map((e) => [e.id, e.reason]));
    expect(reasons).toEqual({ after: "dependency", queued: "fail-fast", later: "fail-fast", sleeper: "fail-fast" });
    // The record's other fields as before: its attempts, message and error (code SHUTDOWN, as the engine has it).
    expect(events.find((e) => e.event === "cancelled" && e.id === "sleeper")).toEqual({
      ts: expect.any(String) as string,
      event: "cancelled",
      id: "sleeper",
      attempts: 1,
      reason: "fail-fast",
      message: 'fail-fast: task "boom" failed',
      error: { message: 'fail-fast: task "boom" failed', code: "SHUTDOWN" },
    });
    const summary = events.find((e) => e.event === "summary") as { cancelled: { id: string; reason: string }[] };
    expect(Object.fromEntries(summary.cancelled.map((x) => [x.id, x.reason]))).toEqual(reasons);
    for (const marker of ["queued.ran", "after.ran", "later.ran"]) expect(existsSync(path.join(ws.dir, marker))).toBe(false);

    // A Ctrl-C's stop, with the flag given but no task failed: "shutdown", as ever.
    const quiet = await setUp(`tasks:
  sleeper:
    run: 'echo $$ > sleeper.pid.tmp && mv sleeper.pid.tmp sleeper.pid; exec sleep 600'
  later:
    run: 'touch later.ran'
    delay: 10m
`);
    const run = startCli(["run", quiet.file, "--log-dir", quiet.logs, "--fail-fast", "--shutdown-timeout", "0s", "--output", "json"], { cwd: quiet.dir });
    expect(await eventually(() => existsSync(path.join(quiet.dir, "sleeper.pid")), 60_000)).toBe(true);
    process.kill(run.child.pid!, "SIGINT");
    const interrupted = await run.done;
    expect(interrupted.code).toBe(130);
    const records = interrupted.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(Object.fromEntries(records.filter((e) => e.event === "cancelled").map((e) => [e.id, e.reason]))).toEqual({ sleeper: "shutdown", later: "shutdown" });
    expect((records.find((e) => e.event === "summary") as { cancelled: { reason: string }[] }).cancelled.map((x) => x.reason)).toEqual(["shutdown", "shutdown"]);
    expect(existsSync(path.join(quiet.dir, "later.ran"))).toBe(false);
  }, 90_000);

  it("says on the board's totals line that the run is stopping because of the failure, as a Ctrl-C's stop says it", async () => {
    // The stopped task ignores SIGTERM: the board is up for the kill grace, the stop under way.
    const ws = await setUp(`tasks:
  boom:
    run: 'while [ ! -f stubborn.pid ]; do sleep 0.05; done; exit 3'
  stubborn:
    run: "trap '' TERM; echo $$ > stubborn.pid; echo started; while :; do sleep 0.1; done"
  queued:
    run: 'touch queued.ran'
    dependsOn: stubborn
`);
    const size = { cols: 100, rows: 24 };
    const run = await taskqOnPty(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--kill-grace", "2s"], { cwd: ws.dir, size }, { NO_COLOR: "1" });
    const output = run.bytes.toString("utf8");
    expect(run.code).toBe(1);
    expect(output).toContain("note: fail-fast: boom failed: no new task starts, the task waiting is cancelled; stopping the running task (SIGTERM, then SIGKILL 2s later)");
    expect(output).toMatch(/\d\/3 done · \d+ not ok · stopping \(fail-fast: boom failed\): stopping the running tasks/);
    expect(output).toContain("(stopped by fail-fast: boom failed)");
    expect(existsSync(path.join(ws.dir, "queued.ran"))).toBe(false);
    // Too narrow for those words: the short ones, as a Ctrl-C's ("SIGINT: stopping").
    await rm(path.join(ws.dir, "stubborn.pid"));
    const narrow = (await taskqOnPty(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--kill-grace", "2s"], { cwd: ws.dir, size: { cols: 40, rows: 24 } }, { NO_COLOR: "1" })).bytes.toString("utf8");
    expect(narrow).toContain("fail-fast: stopping");
    expect(existsSync(path.join(ws.dir, "queued.ran"))).toBe(false);
  }, 90_000);

  it("says on the board's totals line that it cancels the waiting tasks, not that it stops running ones, where none was running", async () => {
    // boom fails with nothing else running: the stop only cancels `later`, which waits for its delay.
    const ws = await setUp(`concurrency: 1
tasks:
  boom:
    run: 'exit 3'
  later:
    run: 'touch later.ran'
    delay: 10m
`);
    const wide = await taskqOnPty(["run", ws.file, "--log-dir", ws.logs, "--fail-fast"], { cwd: ws.dir, size: { cols: 100, rows: 24 } }, { NO_COLOR: "1" });
    const output = wide.bytes.toString("utf8");
    expect(wide.code).toBe(1);
    expect(output).toContain("note: fail-fast: boom failed: no new task starts, the task waiting is cancelled\r\n");
    expect(output).toMatch(/\d\/2 done · \d+ not ok · stopping \(fail-fast: boom failed\): cancelling the waiting tasks/);
    expect(output).not.toContain("stopping the running tasks");
    expect(output).toContain("(stopped by fail-fast: boom failed)");
    // Too narrow for those words: the short ones.
    const narrow = (await taskqOnPty(["run", ws.file, "--log-dir", ws.logs, "--fail-fast"], { cwd: ws.dir, size: { cols: 40, rows: 24 } }, { NO_COLOR: "1" })).bytes.toString("utf8");
    expect(narrow).toContain("fail-fast: cancelling");
    expect(narrow).not.toContain("fail-fast: stopping");
    expect(existsSync(path.join(ws.dir, "later.ran"))).toBe(false);
  }, 90_000);

  it("is refused with a store (exit 2, nothing run): a durable run's tasks run in its workers", async () => {
    const ws = await setUp(pipeline("600", "10m"));
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--fail-fast", "--store", "postgres://127.0.0.1:1/none"], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^taskq: --fail-fast is for a local run, and a store is given \(--store\)/);
    expect(await runIds(ws.logs)).toEqual([]);
    expect(existsSync(path.join(ws.dir, "sleeper.pid"))).toBe(false);
  });
});

describe("the workflow's failFast", () => {
  it("failFast: true stops the run as --fail-fast does: nothing more starts, what runs is stopped; exit 1", async () => {
    const ws = await setUp(`failFast: true\n${pipeline("600", "10m")}`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--kill-grace", "2s"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("note    fail-fast: boom failed: no new task starts, the 2 tasks waiting are cancelled; stopping the running task (SIGTERM, then SIGKILL 2s later)\n");
    expect(result.stdout).toContain('cancel  queued: not started: fail-fast: task "boom" failed\n');
    expect(result.stdout).toContain('cancel  sleeper: fail-fast: task "boom" failed\n');
    expect(result.stdout).toMatch(/Summary: 0 succeeded, 1 failed, 4 cancelled in \S+ \(stopped by fail-fast: boom failed\)\n/);
    expect(await isAlive(Number(await readFile(path.join(ws.dir, "sleeper.pid"), "utf8")))).toBe(false);
    for (const marker of ["queued.ran", "after.ran", "later.ran"]) expect(existsSync(path.join(ws.dir, marker))).toBe(false);
  });

  it("--no-fail-fast runs every task to its end whatever the file says; --fail-fast turns it on over failFast: false", async () => {
    const ws = await setUp(`failFast: true\n${pipeline("0.2", "200ms")}`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--no-fail-fast"], { cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('cancel  after: dependency "boom" failed\n');
    for (const id of ["sleeper", "queued", "later"]) expect(result.stdout).toContain(`ok      ${id}\n`);
    for (const marker of ["queued.ran", "later.ran"]) expect(existsSync(path.join(ws.dir, marker))).toBe(true);
    expect(result.stdout).not.toContain("fail-fast");
    expect(result.stdout).toMatch(/Summary: 3 succeeded, 1 failed, 1 cancelled in \S+\n/);

    const off = await setUp(`failFast: false\n${pipeline("600", "10m")}`);
    const on = await runCli(["run", off.file, "--log-dir", off.logs, "--fail-fast", "--kill-grace", "2s"], { cwd: off.dir });
    expect(on.code).toBe(1);
    expect(on.stdout).toMatch(/Summary: 0 succeeded, 1 failed, 4 cancelled in \S+ \(stopped by fail-fast: boom failed\)\n/);
    for (const marker of ["queued.ran", "after.ran", "later.ran"]) expect(existsSync(path.join(off.dir, marker))).toBe(false);
  });

  it("failFast: false runs every task to its end, as without it", async () => {
    const ws = await setUp(`failFast: false\n${pipeline("0.2", "200ms")}`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(1);
    for (const marker of ["queued.ran", "later.ran"]) expect(existsSync(path.join(ws.dir, marker))).toBe(true);
    expect(result.stdout).not.toContain("fail-fast");
  });

  it("a failFast that is not true or false is told at its line and column, and nothing runs (exit 2)", async () => {
    const ws = await setUp(`failFast: yes-please\n${pipeline("0.2", "200ms")}`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`${ws.file}:1:11: \`failFast\` must be true or false, got "yes-please"\n1 problem; nothing was run\n`);
    expect(await runIds(ws.logs)).toEqual([]);
    expect(existsSync(path.join(ws.dir, "sleeper.pid"))).toBe(false);
    expect(existsSync(path.join(ws.dir, "queued.ran"))).toBe(false);
    // GitHub Actions' spelling: the key meant, and where it goes.
    const actions = await setUp(`fail-fast: true\n${pipeline("0.2", "200ms")}`);
    const told = await runCli(["run", actions.file, "--log-dir", actions.logs], { cwd: actions.dir });
    expect(told.code).toBe(2);
    expect(told.stderr.startsWith(`${actions.file}:1:1: unknown key "fail-fast" at the top level; did you mean "failFast"? GitHub Actions' strategy.fail-fast is written so here`)).toBe(true);
    expect(existsSync(path.join(actions.dir, "queued.ran"))).toBe(false);
  });

  it("--dry-run's plan says fail-fast is on where it is: from the file, or --fail-fast; not with --no-fail-fast", async () => {
    const ws = await setUp(`failFast: true\n${pipeline("600", "10m")}`);
    const plan = async (...flags: string[]) => (await runCli(["run", ws.file, "--log-dir", ws.logs, "--dry-run", ...flags], { cwd: ws.dir })).stdout.split("\n")[0];
    expect(await plan()).toBe(`plan for ${ws.file}: 5 tasks, concurrency 2, fail-fast (the first task that fails for good stops the run); nothing is run`);
    expect(await plan("--no-fail-fast")).toBe(`plan for ${ws.file}: 5 tasks, concurrency 2; nothing is run`);
    expect(JSON.parse((await plan("--output", "json"))!)).toMatchObject({ event: "plan", concurrency: 2, failFast: true });
    expect(JSON.parse((await plan("--output", "json", "--no-fail-fast"))!)).not.toHaveProperty("failFast");
    const plain = await setUp(pipeline("600", "10m"));
    const flag = await runCli(["run", plain.file, "--log-dir", plain.logs, "--dry-run", "--fail-fast"], { cwd: plain.dir });
    expect(flag.stdout.split("\n")[0]).toBe(`plan for ${plain.file}: 5 tasks, concurrency 2, fail-fast (the first task that fails for good stops the run); nothing is run`);
    expect(await runIds(ws.logs)).toEqual([]);
    expect(existsSync(path.join(ws.dir, "sleeper.pid"))).toBe(false);
  });

  it("with a store, the file's failFast is noted, not refused: a durable run goes on past a failure; --no-fail-fast leaves the note out", async () => {
    const ws = await setUp(`failFast: true\n${pipeline("600", "10m")}`);
    const note = (cancel: string) => `note: the file's failFast (true) does not stop a durable run: when a task fails, its workers go on with the others (the run fails all the same); stop it with ${cancel}`;
    const store = ["--store", "postgres://127.0.0.1:1/none", "--dry-run"];
    const planned = await runCli(["run", ws.file, "--log-dir", ws.logs, ...store], { cwd: ws.dir });
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain(`; nothing is run\n`);
    expect(planned.stdout).not.toContain(", fail-fast");
    // A plan has no run id yet: the note names none, unless one is given.
    expect(planned.stdout.trimEnd().split("\n").at(-1)).toBe(note("`taskq cancel` and the run's id"));
    const named = await runCli(["run", ws.file, "--log-dir", ws.logs, ...store, "--run-id", "nightly-7"], { cwd: ws.dir });
    expect(named.stdout.trimEnd().split("\n").at(-1)).toBe(note("`taskq cancel nightly-7`"));
    const quiet = await runCli(["run", ws.file, "--log-dir", ws.logs, ...store, "--no-fail-fast"], { cwd: ws.dir });
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).not.toContain("failFast");
    // The flag itself is refused there, as ever, whatever the file says.
    const refused = await runCli(["run", ws.file, "--log-dir", ws.logs, ...store, "--fail-fast"], { cwd: ws.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^taskq: --fail-fast is for a local run/);
  });
});
