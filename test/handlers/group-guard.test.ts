import { spawn } from "node:child_process";
import { closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GUARD_NAME, GUARD_SCRIPT } from "../../src/handlers/group-guard.js";
import { eventually, isAlive } from "../helpers/processes.js";

/**
 * Runs the guard's script with `list` as its list file's text (undefined: no file, as after
 * a taskq that ended as it should), then ends its input, as taskq's death does; resolves
 * with its exit code and whether the list is still there.
 */
async function runGuard(list: string | undefined, graceSeconds = 1): Promise<{ code: number | null; listLeft: boolean }> {
  const dir = mkdtempSync(path.join(tmpdir(), "taskq-guard-test-"));
  const file = path.join(dir, "list");
  if (list !== undefined) writeFileSync(file, list);
  // Its own session, as taskq starts it: a signal to "its own group" reaches nothing else.
  const guard = spawn("/bin/sh", ["-c", GUARD_SCRIPT, GUARD_NAME, String(process.pid), String(graceSeconds), file], { stdio: ["pipe", "ignore", "ignore"], detached: true });
  guard.stdin.end();
  const code = await new Promise<number | null>((resolve) => guard.once("exit", (exitCode) => resolve(exitCode)));
  const listLeft = existsSync(file);
  rmSync(dir, { recursive: true, force: true });
  return { code, listLeft };
}

/**
 * Runs the guard as taskq does, with the list handed over as descriptor 3 (taskq's own,
 * write-only: see GroupList), after `change` did what it does to the file (a task deleting
 * it, taskq emptying it); then ends its input.
 */
async function runGuardHoldingList(list: string, change: (file: string, fd: number) => void): Promise<number | null> {
  const dir = mkdtempSync(path.join(tmpdir(), "taskq-guard-test-"));
  const file = path.join(dir, "list");
  const fd = openSync(file, "wx", 0o600);
  try {
    writeFileSync(fd, list);
    const guard = spawn("/bin/sh", ["-c", GUARD_SCRIPT, GUARD_NAME, String(process.pid), "1", file], { stdio: ["pipe", "ignore", "ignore", fd], detached: true });
    change(file, fd);
    guard.stdin!.end();
    return await new Promise<number | null>((resolve) => guard.once("exit", (exitCode) => resolve(exitCode)));
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A process leading a group of its own, as a task's shell does (with taskq's TASKQ_PID, here this process's), or another program's (`marked: false`). */
function group(marked = true): number {
  const env = marked ? { ...process.env, TASKQ_PID: String(process.pid) } : { ...process.env, TASKQ_PID: "" };
  const child = spawn("sleep", ["1000"], { detached: true, stdio: "ignore", env });
  child.unref();
  return child.pid!;
}

describe("the guard's script", () => {
  it("stops the groups still listed at end of input, not those taken off, and ignores what is not a group id", async () => {
    // What is taken off is not taskq's any more (its id may be anyone's): here, another program's.
    const [kept, removed] = [group(), group(false)];
    try {
      // "+0" would have it signal its own group (itself) first, and stop before the others.
      expect(await runGuard(`+0\n+abc\n\n+${removed}\n+${kept}\n-${removed}\n`)).toEqual({ code: 0, listLeft: false });
      expect(await eventually(async () => !(await isAlive(kept)), 5000)).toBe(true);
      expect(await isAlive(removed)).toBe(true);
    } finally {
      for (const pid of [kept, removed]) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
  });

  it("leaves alone a listed group whose leader is not taskq's task (its id used again)", async () => {
    const stranger = group(false);
    try {
      expect(await runGuard(`+${stranger}\n`)).toEqual({ code: 0, listLeft: false });
      expect(await isAlive(stranger)).toBe(true);
    } finally {
      process.kill(-stranger, "SIGKILL");
    }
  });

  it("with nothing listed, ends at once", async () => {
    const started = Date.now();
    expect(await runGuard("#taskq\n")).toEqual({ code: 0, listLeft: false });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("reads its list through the descriptor taskq gave it: a list whose name a task deleted (rm -rf \"$TMPDIR\"/*) still has its groups stopped", async () => {
    const running = group();
    try {
      expect(await runGuardHoldingList(`#taskq\n+${running}\n`, (file) => unlinkSync(file))).toBe(0);
      expect(await eventually(async () => !(await isAlive(running)), 5000)).toBe(true);
    } finally {
      try {
        process.kill(-running, "SIGKILL");
      } catch {
        // stopped by the guard
      }
    }
  });

  it("a list taskq emptied as it exited as it should (its name deleted or not): stops nothing", async () => {
    const running = group();
    try {
      const emptied = (file: string, fd: number): void => ftruncateSync(fd, 0);
      expect(await runGuardHoldingList(`#taskq\n+${running}\n`, emptied)).toBe(0);
      expect(await runGuardHoldingList(`#taskq\n+${running}\n`, (file, fd) => (emptied(file, fd), unlinkSync(file)))).toBe(0);
      expect(await isAlive(running)).toBe(true);
    } finally {
      process.kill(-running, "SIGKILL");
    }
  });

  it("without its list (taskq removes it when it exits as it should), stops nothing", async () => {
    // Marked with this process's pid, which the guard is given as taskq's: a guard that went on without its list would find it.
    const running = group();
    try {
      expect(await runGuard(undefined)).toEqual({ code: 0, listLeft: false });
      expect(await isAlive(running)).toBe(true);
    } finally {
      process.kill(-running, "SIGKILL");
    }
  });

  it("once taskq is gone, removes taskq's FIFO folder named after the list's pid and namespace; not one of no known namespace (`<pid>-n-`), which may be another namespace's", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "taskq-guard-test-"));
    try {
      const tidiedBy = async (tag: string): Promise<boolean> => {
        // Stands for taskq: alive as the guard starts (its start time read), then gone.
        const taskq = spawn("sleep", ["1000"], { stdio: "ignore" });
        const list = path.join(dir, `taskq-guard-${taskq.pid!}-${tag}-0a1b2c`);
        const fifos = path.join(dir, `taskq-fifo-${taskq.pid!}-${tag}-3d4e5f`);
        writeFileSync(list, "#taskq\n");
        mkdirSync(fifos);
        const guard = spawn("/bin/sh", ["-c", GUARD_SCRIPT, GUARD_NAME, String(taskq.pid!), "1", list], { stdio: ["pipe", "ignore", "ignore"], detached: true });
        // The guard reads taskq's start time as it starts, then sleeps in its read of its input (state S): only then is taskq gone.
        const sleeping = () => /^\d+ \(.*\) S /.test(readFileSync(`/proc/${guard.pid!}/stat`, "utf8"));
        expect(await eventually(async () => sleeping(), 10_000)).toBe(true);
        taskq.kill("SIGKILL");
        await new Promise((resolve) => taskq.once("exit", resolve));
        guard.stdin.end();
        await new Promise((resolve) => guard.once("exit", resolve));
        return !existsSync(fifos);
      };
      expect(await tidiedBy("n4026531836")).toBe(true);
      expect(await tidiedBy("n")).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
