import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/processes.js";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const { workflowFile, submit, startWorker, cancelStrandedRun } = useDurableWorkspace("taskq_e2e_sweep");

describe("orphan sweep", () => {
  it("a task of a SIGKILLed worker with a short lease comes back soon after that lease ran out, though the worker left has a long one", async () => {
    // The long-lease worker sweeps every 30 s by its own lease; busy with a task of its own, it cannot take the victim itself.
    const long = await startWorker(["-j", "1", "--lease", "60s"]);
    const hold = await submit(await workflowFile("hold", "tasks:\n  hold: { run: 'echo held; sleep 1000' }\n"));
    expect(await eventually(() => long.stdout().includes(`${hold}/hold | held`), 15_000)).toBe(true);
    // Started after the long worker's first sweep: that sweep could not have seen the short lease.
    const short = await startWorker(["-j", "1", "--lease", "3s"]);
    const victim = await submit(await workflowFile("victim", "tasks:\n  victim: { run: 'echo started; sleep 1000', retries: 1 }\n"));
    expect(await eventually(() => short.stdout().includes(`${victim}/victim | started`), 15_000)).toBe(true);
    short.cli.child.kill("SIGKILL");
    await short.cli.done;
    const killedAt = performance.now();
    const swept = `sweep   ${victim}/victim: lease expired (worker ${short.id}, attempt 1): queued again`;
    expect(await eventually(() => long.stdout().includes(swept), 40_000)).toBe(true);
    const waitedMs = performance.now() - killedAt;
    // Half of the long worker's own sweep period (30 s): it no longer waits for its own period, but for the short lease (3 s).
    expect(waitedMs).toBeLessThan(15_000);
    long.cli.child.kill("SIGKILL");
    await long.cli.done;
    await cancelStrandedRun(hold);
    await cancelStrandedRun(victim);
  }, 90_000);
});
