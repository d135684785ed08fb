import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isAlive } from "../helpers/processes.js";
import { SLACK_MS, checkAllClean, jsonEvents, readLedger, runToEnd, tasksYaml } from "./reliability-harness.js";

afterEach(() => checkAllClean());

/** ms between a task's "started" event and its terminal event, by taskq's own timestamps. */
function attemptSpan(stdout: string, id: string, terminal: string): number {
  const events = jsonEvents(stdout);
  const start = events.find((e) => e.event === "started" && e.id === id);
  const end = events.find((e) => e.event === terminal && e.id === id);
  expect(start, `started ${id}`).toBeDefined();
  expect(end, `${terminal} ${id}`).toBeDefined();
  return Date.parse(end!.ts as string) - Date.parse(start!.ts as string);
}

describe("process trees and timeouts", () => {
  it("times out `sleep 1000` and `sleep 1000 & sleep 1000` within timeout + grace + 0.5 s, and the sleeps are gone (case 9)", async () => {
    const yaml = tasksYaml([
      ["one", '{ run: "echo pgid $$; sleep 1000", timeout: 300ms }'],
      ["two", '{ run: "echo pgid $$; sleep 1000 & sleep 1000", timeout: 300ms }'],
    ]);
    const result = await runToEnd(yaml, ["--kill-grace", "500ms", "--output", "json"]);
    expect(result.code).toBe(1);
    for (const id of ["one", "two"]) {
      const failed = jsonEvents(result.stdout).find((e) => e.event === "failed" && e.id === id);
      expect(failed?.error).toMatchObject({ timedOut: true, message: "timed out after 300ms" });
      expect(attemptSpan(result.stdout, id, "failed")).toBeLessThan(300 + 500 + 500 + SLACK_MS);
    }
  });

  it("SIGKILLs the group when a grandchild ignores SIGTERM, after the grace (case 10)", async () => {
    const yaml = tasksYaml([["tree", '{ run: "echo pgid $$; spawn-grandchild", timeout: 300ms }']]);
    const result = await runToEnd(yaml, ["--kill-grace", "700ms", "--output", "json"]);
    expect(result.code).toBe(1);
    const grandchild = (await readLedger(result.run.ledger)).find((e) => e.event === "grandchild");
    expect(grandchild).toBeDefined();
    expect(await isAlive(grandchild!.pid)).toBe(false);
    // The grandchild survives SIGTERM, so the attempt cannot settle before the grace is over.
    const span = attemptSpan(result.stdout, "tree", "failed");
    expect(span).toBeGreaterThanOrEqual(300 + 700 - 50);
    expect(span).toBeLessThan(300 + 700 + 500 + SLACK_MS);
  });

  it("cascades a failure: dependents CANCELLED without starting, the independent task succeeds, the summary names the cause (case 12)", async () => {
    const yaml = tasksYaml([
      ["A", '{ run: "exit 3" }'],
      ["B", '{ run: "touch ran-B", dependsOn: A }'],
      ["C", '{ run: "touch ran-C", dependsOn: [A] }'],
      ["D", '{ run: "touch ran-D" }'],
    ]);
    const result = await runToEnd(yaml);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toMatch(/start\s+[BC] /);
    expect(result.stdout).toMatch(/cancel\s+B: dependency "A" failed/);
    expect(result.stdout).toMatch(/cancel\s+C: dependency "A" failed/);
    expect(result.stdout).toMatch(/ok\s+D/);
    expect(result.stdout).toMatch(/Summary: 1 succeeded, 1 failed, 2 cancelled/);
    expect(result.stdout).toMatch(/✗ A: exited with code 3 \(1 attempt\)[\s\S]*cancelled because of it: (B, C|C, B)/);
    expect(existsSync(path.join(result.run.dir, "ran-D"))).toBe(true);
    expect(existsSync(path.join(result.run.dir, "ran-B"))).toBe(false);
    expect(existsSync(path.join(result.run.dir, "ran-C"))).toBe(false);
  });
});
