import { spawn } from "node:child_process";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { eventually, findLeftovers, findZombies, isAlive } from "../helpers/processes.js";

describe("leftover-process helper", () => {
  it("finds live processes by TASKQ_RUN_ID, and only whole entries", async () => {
    const runId = `helper-${randomUUID()}`;
    const child = spawn("sleep", ["1000"], { env: { ...process.env, TASKQ_RUN_ID: runId }, stdio: "ignore" });
    const other = spawn("sleep", ["1000"], { env: { ...process.env, TASKQ_RUN_ID: `${runId}-other` }, stdio: "ignore" });
    try {
      expect(await eventually(async () => (await findLeftovers(runId)).length > 0)).toBe(true);
      expect(await findLeftovers(runId)).toEqual([child.pid]);
    } finally {
      child.kill("SIGKILL");
      other.kill("SIGKILL");
    }
    await Promise.all([once(child, "exit"), once(other, "exit")]);
    expect(await findLeftovers(runId)).toEqual([]);
  });

  it("reports zombies of a process group separately, not as leftovers", async () => {
    const runId = `helper-${randomUUID()}`;
    // The shell becomes `sleep 1000` by exec; sleep never reaps the background child it inherited.
    const child = spawn("/bin/sh", ["-c", "sleep 0 & exec sleep 1000"], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, TASKQ_RUN_ID: runId },
    });
    const pgid = child.pid!;
    try {
      expect(await eventually(async () => (await findZombies([pgid])).length === 1)).toBe(true);
      const [zombie] = await findZombies([pgid]);
      expect(await isAlive(zombie!)).toBe(false);
      expect(await findLeftovers(runId)).toEqual([pgid]);
    } finally {
      process.kill(-pgid, "SIGKILL");
    }
    await once(child, "exit");
    expect(await findLeftovers(runId)).toEqual([]);
  });
});
