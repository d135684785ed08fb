import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const { taskq, workflowFile, submit } = useDurableWorkspace("taskq_e2e_scheduled");

/**
 * `status` of a run whose tasks wait for their `delay` or `runAt`: counted as scheduled, they are listed with when each
 * runs, as the tasks waiting for a retry are (before, the counts said `2 scheduled` and nothing said when).
 */
describe("status lists the tasks waiting for their delay or runAt, with when each runs", () => {
  it("in text and in JSON, soonest due first; a task blocked on its dependency is not among them", async () => {
    // Whole seconds: the runAt the JSON gives back is the one written.
    const runAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3 * 86_400_000);
    const runId = await submit(await workflowFile("scheduled", `tasks:\n  later: { run: "true", runAt: "${runAt.toISOString()}" }\n  soon: { run: "true", delay: 1h }\n  after: { run: "true", dependsOn: [soon] }\n`));

    const text = await taskq(["status", runId]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("3 unfinished (1 blocked, 2 scheduled)");
    const lines = text.stdout.split("\n");
    const at = lines.indexOf("Scheduled (2):");
    expect(at).toBeGreaterThan(0);
    // The clock time, with its date where it is not today (as a local run's board gives it), and how long until then.
    expect(lines[at + 1]).toMatch(/^ {2}⏲ soon: at (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d\.\d{3} \(in (59m[\d.]+s|1h)\)$/);
    expect(lines[at + 2]).toMatch(/^ {2}⏲ later: at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.000 \(in [23]d[^)]*\)$/);
    expect(lines[at + 3]).toBe("");

    const json = await taskq(["status", runId, "--output", "json"]);
    const summary = JSON.parse(json.stdout) as { scheduled?: { id: string; inMs: number; runAt: number }[] };
    expect(summary.scheduled?.map((task) => task.id)).toEqual(["soon", "later"]);
    const [soon, later] = summary.scheduled!;
    expect(later!.runAt).toBe(runAt.getTime());
    expect(later!.inMs).toBeGreaterThan(2 * 86_400_000);
    // Due an hour after the submit, on the database's clock (this machine's, here): generous bounds.
    expect(soon!.inMs).toBeGreaterThan(50 * 60_000);
    expect(soon!.inMs).toBeLessThanOrEqual(3_600_000);
    expect(Math.abs(soon!.runAt - (Date.now() + soon!.inMs))).toBeLessThan(10 * 60_000);
  }, 30_000);
});
