import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { GUARD_NAME, GUARD_SCRIPT } from "../../src/handlers/group-guard.js";
import { eventually, isAlive } from "../helpers/processes.js";

/** Runs the guard's script on `input` (then end of input, as when taskq dies); resolves with its exit code. */
function runGuard(input: string, graceSeconds = 1): Promise<number | null> {
  // Its own session, as taskq starts it: a signal to "its own group" reaches nothing else.
  const guard = spawn("/bin/sh", ["-c", GUARD_SCRIPT, GUARD_NAME, String(process.pid), String(graceSeconds)], { stdio: ["pipe", "ignore", "ignore"], detached: true });
  guard.stdin.end(input);
  return new Promise((resolve) => guard.once("exit", (code) => resolve(code)));
}

/** A process leading a group of its own, as a task's shell does. */
function group(): number {
  const child = spawn("sleep", ["1000"], { detached: true, stdio: "ignore" });
  child.unref();
  return child.pid!;
}

describe("the guard's script", () => {
  it("stops the groups still listed at end of input, not those taken off, and ignores what is not a group id", async () => {
    const [kept, removed] = [group(), group()];
    try {
      // "+0" would have it signal its own group (itself) first, and stop before the others.
      expect(await runGuard(`+0\n+abc\n\n+${removed}\n+${kept}\n-${removed}\n`)).toBe(0);
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

  it("with nothing listed, ends at once", async () => {
    const started = Date.now();
    expect(await runGuard("")).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
