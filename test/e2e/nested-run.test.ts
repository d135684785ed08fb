import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, runCli, runIds, workspace } from "../helpers/cli.js";
import { findLeftovers } from "../helpers/processes.js";

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

  it("gives each task its kill grace in TASKQ_KILL_GRACE_MS", async () => {
    const ws = await workspace('tasks:\n  show:\n    run: echo "grace=$TASKQ_KILL_GRACE_MS"\n');
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--kill-grace", "1500ms"], { cwd: ws.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("grace=1500");
  }, 30_000);
});
