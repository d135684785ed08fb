import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, workspace, type CliResult } from "../helpers/cli.js";
import { findLeftovers } from "../helpers/processes.js";

/** Whether coreutils `timeout` is here. */
const hasTimeout = (() => {
  try {
    execFileSync("timeout", ["5", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const started: number[] = [];

afterEach(() => {
  // Whatever a failed test left: the process group each test started.
  for (const pgid of started.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

/** `timeout 60 taskq run FILE ...` as a shell with job control starts it: `timeout` leads a process group, taskq in it. */
function underTimeout(args: string[], cwd: string): { pgid: number; taskqPid: () => number | undefined; stdout: () => string; done: Promise<CliResult> } {
  const begun = Date.now();
  const child = spawn("timeout", ["60", process.execPath, BIN, ...args], { cwd, env: { ...process.env, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  started.push(child.pid!);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<CliResult>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, durationMs: Date.now() - begun })));
  const taskqPid = (): number | undefined => {
    try {
      const pids = execFileSync("ps", ["-o", "pid=", "--ppid", String(child.pid)], { encoding: "utf8" }).trim();
      return pids === "" ? undefined : Number(pids.split("\n")[0]);
    } catch {
      return undefined;
    }
  };
  return { pgid: child.pid!, taskqPid, stdout: () => stdout, done };
}

/** Whether a SIGINT sent to process `pid` waits still, not yet taken by it (its bit, 2, in the process's shared pending set). */
function sigintPending(pid: number): boolean {
  const pending = /^ShdPnd:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0";
  return (parseInt(pending.slice(-1), 16) & 2) !== 0;
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("taskq under a wrapper that forwards signals (coreutils timeout)", () => {
  it.skipIf(!hasTimeout)("one Ctrl-C to the group (reaching timeout, which passes it on, and taskq) is one: the tasks get their time to finish, not a SIGKILL at once", { timeout: 60_000 }, async () => {
    const ws = await workspace('tasks:\n  a: { run: "echo ready; sleep 30" }\n  b: { run: "sleep 30" }\n');
    const run = underTimeout(["run", ws.file, "--output", "plain", "--log-dir", ws.logs, "--shutdown-timeout", "1s", "--kill-grace", "5s"], ws.dir);
    await waitFor(() => /a \| ready/.test(run.stdout()), "task a to start");
    const runId = /run (\S+): 2 tasks/.exec(run.stdout())?.[1] ?? "";
    // As a terminal's Ctrl-C: to every process of the foreground group, timeout and taskq.
    process.kill(-run.pgid, "SIGINT");
    const result = await run.done;
    expect(result.stdout).toContain("SIGINT received: no new task starts; running tasks have 1s to finish");
    expect(result.stdout).not.toContain("killing every task now");
    expect(result.stdout).toMatch(/the 1s to finish have passed: stopping the 2 running tasks/);
    expect(result.stdout).toMatch(/cancel {2}a: aborted by shutdown\n/);
    expect(result.code).toBe(130);
    expect(await findLeftovers(runId)).toEqual([]);
  });

  it.skipIf(!hasTimeout)("one Ctrl-C that reaches taskq three times (timeout passes it on to taskq and to its group) is one too", { timeout: 60_000 }, async () => {
    const ws = await workspace('tasks:\n  a: { run: "echo ready; sleep 30" }\n');
    const run = underTimeout(["run", ws.file, "--output", "plain", "--log-dir", ws.logs, "--shutdown-timeout", "1s", "--kill-grace", "5s"], ws.dir);
    await waitFor(() => /a \| ready/.test(run.stdout()), "task a to start");
    const pid = run.taskqPid();
    expect(pid).toBeDefined();
    // Three within 250 ms, each taken on its own (signals pending at once are one): the terminal's, and timeout's two copies.
    // Each is sent as soon as taskq has taken the one before, with no timer between them: a timer of 60 ms that a loaded
    // machine ran late put the third past the 250 ms, a second Ctrl-C.
    for (let copy = 0; copy < 3; copy++) {
      process.kill(pid!, "SIGINT");
      for (const until = Date.now() + 5000; sigintPending(pid!) && Date.now() < until; );
    }
    const result = await run.done;
    expect(result.stdout).toContain("SIGINT received: no new task starts; running tasks have 1s to finish");
    expect(result.stdout).not.toContain("killing every task now");
    expect(result.stdout).toMatch(/cancel {2}a: aborted by shutdown\n/);
    expect(result.code).toBe(130);
  });

  it.skipIf(!hasTimeout)("a second signal, later, still stops every task at once", { timeout: 60_000 }, async () => {
    const ws = await workspace('tasks:\n  a: { run: "echo ready; sleep 30" }\n');
    const run = underTimeout(["run", ws.file, "--output", "plain", "--log-dir", ws.logs, "--shutdown-timeout", "30s"], ws.dir);
    await waitFor(() => /a \| ready/.test(run.stdout()), "task a to start");
    process.kill(-run.pgid, "SIGINT");
    await waitFor(() => /SIGINT received: no new task starts/.test(run.stdout()), "the first signal's note");
    await new Promise((resolve) => setTimeout(resolve, 600));
    // timeout passes on the first signal alone: the second goes to the group (a second Ctrl-C reaches taskq from the terminal).
    process.kill(-run.pgid, "SIGINT");
    const result = await run.done;
    expect(result.stdout).toContain("SIGINT received again: killing every task now");
    expect(result.stdout).toMatch(/cancel {2}a: aborted by shutdown; killed with SIGKILL at once, not after the kill grace\n/);
    expect(result.durationMs).toBeLessThan(20_000);
    expect(run.taskqPid()).toBeUndefined();
  });

  it("a script's second SIGINT to taskq's pid, 100 ms after its first, still stops every task at once: the shell that started taskq in its process group passes no signal on", { timeout: 90_000 }, async () => {
    const ws = await workspace('tasks:\n  a: { run: "echo ready; sleep 60" }\n');
    // A script without job control: `taskq run &` stays in the script's process group, the shell taskq's parent.
    const script = [
      `"$0" "$1" run "$2" --output plain --log-dir "$3" --shutdown-timeout 60s > "$4" 2>&1 &`,
      "pid=$!",
      'until grep -q "a | ready" "$4"; do sleep 0.05; done',
      "kill -INT $pid; sleep 0.1; kill -INT $pid",
      "wait $pid",
    ].join("\n");
    const out = path.join(ws.dir, "out.txt");
    const child = spawn("bash", ["-c", script, process.execPath, BIN, ws.file, ws.logs, out], { cwd: ws.dir, env: { ...process.env, CI: "true", NO_COLOR: "1" }, stdio: "ignore", detached: true });
    started.push(child.pid!);
    const code = await new Promise<number | null>((resolve) => child.on("close", (exit) => resolve(exit)));
    const stdout = await readFile(out, "utf8");
    // Before: the second was dropped for a copy, and the task had its 60 s to finish.
    expect(stdout).toContain("SIGINT received again: killing every task now");
    expect(stdout).toMatch(/cancel {2}a: aborted by shutdown; killed with SIGKILL at once, not after the kill grace\n/);
    expect(code).toBe(130);
  });
});
