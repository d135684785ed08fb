import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/processes.js";
import { useDurableWorkspace } from "./durable-harness.js";

// A task's lease renewals refused by the database (an error it answers with), not unanswered, until the lease runs out.
const durable = useDurableWorkspace("taskq_e2e_refused");
const { SCHEMA, workflowFile, submit, startWorker, waitForRun } = durable;

describe("a lease that runs out while the database refuses its renewals", () => {
  it("says what the database answered them, not that it did not answer or that the worker stalled", { timeout: 60_000 }, async () => {
    const file = await workflowFile("refused", "tasks:\n  job: { run: 'echo started; sleep 1000' }\n");
    const worker = await startWorker(["--lease", "3s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | started`), 15_000)).toBe(true);
    // Every renewal from now on is refused, at once, by the server: its table is not there (as too many connections, or a
    // role's rights revoked, are refused).
    await durable.store.pool.query(`ALTER TABLE "${SCHEMA}".tasks RENAME TO tasks_away`);
    let lost: boolean;
    try {
      lost = await eventually(() => worker.stdout().includes(`lost    ${runId}/job: `), 20_000);
    } finally {
      await durable.store.pool.query(`ALTER TABLE "${SCHEMA}".tasks_away RENAME TO tasks`);
    }
    expect(lost).toBe(true);
    const line = worker.stdout().split("\n").find((text) => text.includes(`lost    ${runId}/job: `)) ?? "";
    // Before: "the lease ran out before a renewal (the worker stalled or the database did not answer)".
    expect(line).toContain(`it failed (the lease ran out before a renewal: the database refused its renewals (relation "${SCHEMA}.tasks" does not exist); killed with SIGKILL at once`);
    expect(line).not.toContain("did not answer");
    expect((await waitForRun(runId, 30_000)).state).toBe("failed");
  });
});
