import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, rmdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, runCli, runIds, workspace } from "../helpers/cli.js";

/**
 * The documented limits through the real CLI: beyond them a file is refused with
 * exit 2 before a task is built; within them a 40,000-task, 6 MB workflow is admitted.
 * The time bounds are loose: they catch a hang or a blow-up, not a slow machine.
 */
describe("workflow size limits", () => {
  it("rejects more than 200,000 tasks with exit 2, at the task past the limit, nothing run (case 21)", { timeout: 120_000 }, async () => {
    // Short entries: the count is checked before any task is validated, so their shape does not matter.
    const entries = Array.from({ length: 200_001 }, (_, index) => `t${index}: 0`);
    const line = `tasks: {${entries.join(", ")}}`;
    const ws = await workspace(`x: { run: touch ran }\n${line}\n`);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`${ws.file}:2:${line.indexOf(" t200000:") + 2}: too many tasks: "t200000" is task 200,001, and the limit is 200,000; split the workflow into several files\n1 problem; nothing was run\n`);
    expect(result.durationMs).toBeLessThan(60_000);
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
    expect(await runIds(ws.logs)).toEqual([]);
  });

  it("refuses 200,001 tasks written one per line at once, before reading them: run and validate, exit 2, nothing run", { timeout: 60_000 }, async () => {
    const lines = ["tasks:"];
    for (let index = 0; index <= 200_000; index++) lines.push(`  t${index}:`, `    run: touch ran-${index}`);
    const ws = await workspace(`${lines.join("\n")}\n`);
    const expected = `${ws.file}:400002:3: too many tasks: "t200000" is task 200,001, and the limit is 200,000; split the workflow into several files\n1 problem`;
    for (const args of [["run", ws.file, "--log-dir", ws.logs], ["validate", ws.file]]) {
      const result = await runCli(args, { cwd: ws.dir });
      expect(result).toMatchObject({ code: 2, stdout: "", stderr: `${expected}${args[0] === "run" ? "; nothing was run" : ""}\n` });
      // Read and parsed first, it took 6-16 s.
      expect(result.durationMs).toBeLessThan(4000);
    }
    expect(existsSync(path.join(ws.dir, "ran-0"))).toBe(false);
    expect(await runIds(ws.logs)).toEqual([]);
  });

  it("reports a problem in a large plainly written file without the memory of a YAML document tree: run and validate, exit 2", { timeout: 120_000 }, async () => {
    // 1,000 tasks, each depending on every one before it (3 MB, 500,000 dependencies), and one unknown key.
    const lines = ["tasks:"];
    for (let index = 0; index < 1000; index++) {
      lines.push(`  t${index}:`, "    run: exit 0");
      if (index > 0) lines.push(`    dependsOn: [${Array.from({ length: index }, (_, before) => `t${before}`).join(", ")}]`);
    }
    lines.push("  last:", "    run: touch ran", "    bogus: 1");
    const ws = await workspace(`${lines.join("\n")}\n`);
    const expected = `${ws.file}:${lines.length}:5: task "last": unknown key "bogus"\n1 problem`;
    // A 200 MB heap: the problem was found by building yaml's tree of the file (~1,000 bytes a
    // dependency), and a 60 MB file ran taskq out of its 4 GB heap (SIGABRT) after 3 minutes.
    for (const args of [["validate", ws.file], ["run", ws.file, "--log-dir", ws.logs]]) {
      const result = await runCli(args, { cwd: ws.dir, nodeArgs: ["--max-old-space-size=200"] });
      expect(result).toMatchObject({ code: 2, signal: null, stdout: "", stderr: `${expected}${args[0] === "run" ? "; nothing was run" : ""}\n` });
    }
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  it("admits 40,000 tasks in a 6 MB file (case 21)", { timeout: 150_000 }, async () => {
    const lines = ["tasks:"];
    for (let index = 0; index < 40_000; index++) {
      const dependsOn = index % 7 === 0 ? "" : `, dependsOn: [t${index - 1}]`;
      lines.push(`  t${index}: { run: 'echo task number ${index} ${"x".repeat(80)}'${dependsOn}, retries: 1, timeout: 5m }`);
    }
    const ws = await workspace(`${lines.join("\n")}\n`);
    expect((await stat(ws.file)).size).toBeGreaterThan(6_000_000);
    const result = await runCli(["validate", ws.file]);
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 40000 tasks\n` });
    expect(result.durationMs).toBeLessThan(120_000);
  });
});

const isRoot = process.getuid?.() === 0;

describe("process limits", () => {
  // As an unprivileged user (root ignores `ulimit -u`), with room for taskq's threads and a few tasks only.
  it.skipIf(!isRoot || !existsSync("/usr/bin/setpriv"))("out of processes (ulimit -u): spawns failing with EAGAIN are retried, and taskq ends with its summary instead of aborting", { timeout: 60_000 }, async () => {
    const tasks = Array.from({ length: 12 }, (_, index) => `  t${index}: { run: "echo hello; sleep 0.3" }`);
    const ws = await workspace(`defaults: { retries: 3, backoff: { base: 100ms, max: 200ms } }\ntasks:\n${tasks.join("\n")}\n`);
    await chmod(ws.dir, 0o777);
    const script = `ulimit -u 8; exec setpriv --reuid 12345 --regid 12345 --clear-groups "$0" run "$1" --log-dir "$2" -j 8 --output plain`;
    const result = await runPlainCommand("bash", ["-c", script, BIN, ws.file, ws.logs], ws.dir);
    expect(result.output).not.toMatch(/pthread_create/);
    expect(result.signal).toBe(null);
    // Eight at once cannot all start: some spawn fails, and is tried again (whether every task gets through in 4 attempts depends on timing).
    expect(result.output).toMatch(/retry +t\d+ attempt 1\/4 failed: could not start: spawn \/bin\/sh EAGAIN/);
    // Said in words: EAGAIN alone reads as "try again later", not as a limit to raise.
    expect(result.output).toMatch(/EAGAIN: no process can be made, a limit on processes is reached \(ulimit -u, a cgroup's pids\.max such as a container's --pids-limit, or the system's\)/);
    expect(result.output).toMatch(/Summary: \d+ succeeded, \d+ failed, 0 cancelled/);
    expect([0, 1]).toContain(result.code);
  });

  // Node itself needs 4 threads to start here; with one more allowed, or none, libuv could not
  // make its pool's thread and aborted taskq (SIGABRT, not a word), or every task failed.
  it.skipIf(!isRoot || !existsSync("/usr/bin/setpriv"))("a limit on processes with no room for one task (ulimit -u, pids.max): an error naming it, exit 1, before anything is made or run", { timeout: 60_000 }, async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran-a }\n  b: { run: touch ran-b }\n");
    await chmod(ws.dir, 0o777);
    const script = `ulimit -u 5; exec setpriv --reuid 12345 --regid 12345 --clear-groups "$0" run "$1" --log-dir "$2" --output plain`;
    const limited = await runPlainCommand("bash", ["-c", script, BIN, ws.file, ws.logs], ws.dir);
    expect(limited).toMatchObject({ code: 1, signal: null });
    expect(limited.output).toMatch(/^taskq: the process limit \(ulimit -u\) is 5, and this user runs \d processes and threads: too many to run a task, as taskq needs a thread of its own and a process for each running task; raise it \(ulimit -u 4096, say\)\n$/);
    const root = pidsCgroupRoot();
    if (root !== undefined) {
      const cgroup = path.join(root, `taskq-test-${process.pid}-${Date.now()}`);
      await mkdir(cgroup);
      try {
        await writeFile(path.join(cgroup, "pids.max"), "5");
        const script = `echo $$ > "$3/cgroup.procs" && exec "$0" run "$1" --log-dir "$2" --output plain`;
        const contained = await runPlainCommand("bash", ["-c", script, BIN, ws.file, ws.logs, cgroup], ws.dir);
        expect(contained).toMatchObject({ code: 1, signal: null });
        expect(contained.output).toMatch(/^taskq: taskq's cgroup allows 5 processes and threads \(pids\.max: a container's --pids-limit\), and \d run in it: too many to run a task, as taskq needs a thread of its own and a process for each running task; raise that limit\n$/);
      } finally {
        for (let tries = 0; tries < 50 && existsSync(cgroup); tries++) {
          await rmdir(cgroup).catch(() => new Promise((resolve) => setTimeout(resolve, 100)));
        }
      }
    }
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(false);
    expect(existsSync(ws.logs)).toBe(false);
    // run --store: before the store is reached (none listens here), so no run is left queued.
    const durable = await runPlainCommand("bash", ["-c", `${script} --store postgres://u@127.0.0.1:1/x`, BIN, ws.file, ws.logs], ws.dir);
    expect(durable).toMatchObject({ code: 1, signal: null });
    expect(durable.output).toMatch(/^taskq: the process limit \(ulimit -u\) is 5, .*; raise it \(ulimit -u 4096, say\)\n$/);
  });

  // A container's --pids-limit: a cgroup's pids.max, which root does not escape. The task's
  // bash takes every process left (it keeps trying to fork, so a slot freed is taken again),
  // then the task writes: taskq's first log write through libuv's thread pool needed a
  // thread that could not be made, and libuv aborted taskq (SIGABRT: no summary, no message).
  it.skipIf(!isRoot || pidsCgroupRoot() === undefined)("out of processes (a cgroup's pids.max): taskq ends with its summary instead of aborting", { timeout: 60_000 }, async () => {
    const fill = "bash -c 'while :; do sleep 5 & done' 2>/dev/null &";
    const spin = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"; // no fork: the filler meanwhile takes every process
    const write = "i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done";
    const ws = await workspace(`tasks:\n  fill: { run: "${fill} ${spin}; ${write}" }\n`);
    const cgroup = path.join(pidsCgroupRoot() ?? "", `taskq-test-${process.pid}-${Date.now()}`);
    await mkdir(cgroup);
    try {
      await writeFile(path.join(cgroup, "pids.max"), "24");
      // The shell moves itself into the cgroup (echo is a builtin: no fork), then becomes taskq.
      const script = `echo $$ > "$3/cgroup.procs" && exec "$0" run "$1" --log-dir "$2" --kill-grace 1s --output plain`;
      const result = await runPlainCommand("bash", ["-c", script, BIN, ws.file, ws.logs, cgroup], ws.dir);
      expect(result.signal).toBe(null);
      expect(result.output).toMatch(/fill \| line 2999\n/);
      expect(result.output).toMatch(/Summary: 1 succeeded, 0 failed, 0 cancelled/);
      expect(result.code).toBe(0);
    } finally {
      // Its last processes (the sleeps) are gone once taskq has stopped them; rmdir waits for none.
      for (let tries = 0; tries < 50 && existsSync(cgroup); tries++) {
        await rmdir(cgroup).catch(() => new Promise((resolve) => setTimeout(resolve, 100)));
      }
    }
  });
});

/** Where a child cgroup with a pids.max can be made (cgroup v1's pids controller, or v2 with pids enabled below its root), if anywhere. */
function pidsCgroupRoot(): string | undefined {
  if (existsSync("/sys/fs/cgroup/pids/cgroup.procs")) return "/sys/fs/cgroup/pids";
  try {
    if (readFileSync("/sys/fs/cgroup/cgroup.subtree_control", "utf8").split(/\s+/).includes("pids")) return "/sys/fs/cgroup";
  } catch {
    // no cgroup v2 at /sys/fs/cgroup
  }
  return undefined;
}

/** Runs a command to its end: its exit code or signal, and stdout and stderr together. */
function runPlainCommand(file: string, args: string[], cwd: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.on("close", (code, signal) => resolve({ code, signal, output }));
  });
}
