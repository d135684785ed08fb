import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, hasPython, runCli, runIds, startCli, workspace } from "../helpers/cli.js";
import { eventually, findLeftovers, isAlive, liveState, SLOW_TO_TEAR_DOWN_PY } from "../helpers/processes.js";

describe("a taskq run by a task of another taskq", () => {
  it("fits its stop into the outer's kill grace: its cancel lines and summary reach the outer task's log", async () => {
    const inner = await workspace("tasks:\n  a:\n    run: sleep 30\n  b:\n    run: sleep 30\n", "inner.yaml");
    const innerLogs = path.join(inner.dir, "inner-logs");
    // The inner's own defaults (10s to finish, 5s kill grace) are far past the outer's 4s grace.
    const outer = await workspace(
      `tasks:\n  sub:\n    run: ${JSON.stringify(`"${process.execPath}" "${BIN}" run "${inner.file}" --log-dir "${innerLogs}" --shutdown-timeout 20s`)}\n    timeout: 2s\n`,
      "outer.yaml",
    );
    const result = await runCli(["run", outer.file, "--log-dir", outer.logs, "--kill-grace", "4s"], { cwd: outer.dir });
    expect(result.code).toBe(1);
    const [outerRun] = await runIds(outer.logs);
    const [innerRun] = await runIds(innerLogs);
    expect(outerRun).toBeDefined();
    expect(innerRun).toBeDefined();
    const log = await readFile(path.join(outer.logs, outerRun!, "sub.log"), "utf8");
    expect(log).toMatch(/note +--shutdown-timeout 20s is shortened to \S+: the taskq running this one kills it 4s after its SIGTERM \(TASKQ_KILL_GRACE_MS\)/);
    expect(log).toMatch(/note +SIGTERM received: no new task starts; running tasks have \S+ to finish/);
    expect(log).toMatch(/cancel +a: aborted by shutdown/);
    expect(log).toMatch(/cancel +b: aborted by shutdown/);
    expect(log).toContain("Summary: 0 succeeded, 0 failed, 2 cancelled");
    expect(log).toContain(`logs: ${path.join(innerLogs, innerRun!)}`);
    // Ended by itself, within the grace: not SIGKILLed by the outer.
    expect(result.stdout).not.toContain("killed with SIGKILL");
    expect(await findLeftovers(outerRun!)).toEqual([]);
    expect(await findLeftovers(innerRun!)).toEqual([]);
  }, 60_000);

  it("is killed with its tasks at once by a second signal to the outer, not left to its guard and its kill grace", async () => {
    // A task that ignores SIGTERM: only a SIGKILL ends it, which the inner's guard sends its kill grace (30s here) after.
    const inner = await workspace("tasks:\n  stubborn:\n    run: trap '' TERM; echo pid $$; exec sleep 300\n  other:\n    run: sleep 300\n", "inner.yaml");
    const innerLogs = path.join(inner.dir, "inner-logs");
    const outer = await workspace(`tasks:\n  sub:\n    run: ${JSON.stringify(`"${process.execPath}" "${BIN}" run "${inner.file}" --log-dir "${innerLogs}" --kill-grace 30s`)}\n`, "outer.yaml");
    // Grace enough for the inner's stop as it is (10s + 30s): not shortened.
    const run = startCli(["run", outer.file, "--log-dir", outer.logs, "--kill-grace", "120s"], { cwd: outer.dir });
    let stubborn: number | undefined;
    try {
      expect(await eventually(() => /stubborn \| pid \d+/.test(run.stdout()), 30_000)).toBe(true);
      stubborn = Number(/stubborn \| pid (\d+)/.exec(run.stdout())?.[1]);
      process.kill(-run.child.pid!, "SIGINT");
      expect(await eventually(() => run.stdout().includes("SIGINT received: no new task starts"), 30_000)).toBe(true);
      // Another kind: never taken for a copy of the first.
      process.kill(-run.child.pid!, "SIGTERM");
      const result = await run.done;
      expect(result.code).toBe(130);
      expect(result.stdout).toContain("SIGTERM received after SIGINT: killing every task now");
      const [innerRun] = await runIds(innerLogs);
      expect(innerRun).toBeDefined();
      // Gone with the outer's own tasks: before, the inner's guard SIGKILLed them its kill grace later, long after the outer had exited.
      expect(await eventually(async () => !(await isAlive(stubborn!)) && (await findLeftovers(innerRun!)).length === 0, 10_000)).toBe(true);
    } finally {
      if (stubborn !== undefined && (await isAlive(stubborn))) process.kill(stubborn, "SIGKILL");
      for (const runId of await runIds(innerLogs)) for (const pid of await findLeftovers(runId)) process.kill(pid, "SIGKILL");
    }
  }, 60_000);

  it.skipIf(!hasPython())("has the nested run's tasks it SIGKILLed on a second signal gone before it exits", async () => {
    const inner = await workspace("tasks:\n  mapped:\n    run: exec python3 maps.py\n", "inner.yaml");
    await writeFile(path.join(inner.dir, "maps.py"), SLOW_TO_TEAR_DOWN_PY);
    const innerLogs = path.join(inner.dir, "inner-logs");
    const outer = await workspace(`tasks:\n  sub:\n    run: ${JSON.stringify(`cd "${inner.dir}" && "${process.execPath}" "${BIN}" run inner.yaml --log-dir "${innerLogs}"`)}\n`, "outer.yaml");
    const run = startCli(["run", outer.file, "--log-dir", outer.logs], { cwd: outer.dir });
    let mapped: number | undefined;
    // Looked at in /proc the moment the outer has exited, as a CI runner's look for leftover processes would.
    let atExit: string | undefined;
    run.child.once("exit", () => {
      if (mapped !== undefined) atExit = liveState(mapped);
    });
    try {
      expect(await eventually(() => /mapped \| pid \d+/.test(run.stdout()), 30_000)).toBe(true);
      mapped = Number(/mapped \| pid (\d+)/.exec(run.stdout())?.[1]);
      expect(liveState(mapped)).toBeDefined();
      process.kill(-run.child.pid!, "SIGINT");
      expect(await eventually(() => run.stdout().includes("SIGINT received: no new task starts"), 30_000)).toBe(true);
      process.kill(-run.child.pid!, "SIGINT");
      const result = await run.done;
      expect(result.code).toBe(130);
      expect(result.stdout).toContain("SIGINT received again: killing every task now");
      // Before, the outer waited only for its own tasks' processes: this one was still being torn down, state R or D.
      expect(atExit).toBeUndefined();
    } finally {
      if (mapped !== undefined && liveState(mapped) !== undefined) process.kill(mapped, "SIGKILL");
    }
  }, 60_000);

  it("gives each task its kill grace in TASKQ_KILL_GRACE_MS", async () => {
    const ws = await workspace('tasks:\n  show:\n    run: echo "grace=$TASKQ_KILL_GRACE_MS"\n');
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--kill-grace", "1500ms"], { cwd: ws.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("grace=1500");
  }, 30_000);
});
