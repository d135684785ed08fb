import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { registerProcessGroup, unregisterProcessGroup } from "../../src/handlers/process-groups.js";
import { GroupTerminator } from "../../src/handlers/terminate-group.js";
import { eventually } from "../helpers/processes.js";

/** The pids of the live `/bin/sleep <mark>` processes. */
async function sleepers(mark: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (/^\d+$/.test(name) && (await readFile(`/proc/${name}/cmdline`, "latin1").catch(() => "")) === `/bin/sleep\x00${mark}\x00`) found.push(Number(name));
  }
  return found;
}

/** A process's state letter ("S", "Z"), from /proc; undefined once it is gone. */
function state(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ", 1)[0];
  } catch {
    return undefined;
  }
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe("GroupTerminator", () => {
  it("a task stopped while its shell ran: what cleared its environment (env -i) and ignores SIGTERM is SIGKILLed after the grace, though the pass over /proc its reap shares was made before Node reaped the shell", async () => {
    // A duration no other process has: the sleeper carries no variable of taskq's to be found by.
    const mark = `${5000 + (process.pid % 1000)}.${Date.now() % 1000}`;
    const folder = await mkdtemp(path.join(tmpdir(), "taskq-reap-"));
    const stubborn = path.join(folder, "stubborn.sh");
    await writeFile(stubborn, `trap "" TERM\nexec /bin/sleep ${mark}\n`);
    // A task's shell: the leader of a session of its own, whose job control puts the sleeper in a group of its own.
    const shell = spawn("bash", ["-c", `set -m; env -i /bin/sh ${stubborn} & wait`], { detached: true, stdio: "ignore" });
    const pid = shell.pid!;
    cleanup = async () => {
      for (const sleeper of await sleepers(mark)) process.kill(sleeper, "SIGKILL");
      await rm(folder, { recursive: true, force: true });
    };
    registerProcessGroup(pid, 300);
    expect(await eventually(async () => (await sleepers(mark)).length === 1)).toBe(true);
    const terminator = new GroupTerminator(pid, 300);
    // Reaped as the shell handler reaps it: when Node tells of the shell's exit, in the same turn of the event loop.
    const reaped = new Promise((resolve, reject) => {
      shell.once("exit", () => void terminator.reap().then(resolve, reject));
    });
    // Stopped in a timer: the SIGTERM's pass over /proc is made then, in the turn whose poll for I/O then reaps the
    // shell, dead of the SIGTERM by then (the wait below), and tells of its exit. That pass still shows the shell.
    setTimeout(() => {
      terminator.terminate();
      for (const until = performance.now() + 5000; state(pid) !== "Z" && performance.now() < until; );
    }, 0);
    await reaped;
    terminator.dispose();
    unregisterProcessGroup(pid, 300);
    // The sleeper ignored the SIGTERM: gone, the grace's SIGKILL reached it.
    expect(await sleepers(mark)).toEqual([]);
  });
});
