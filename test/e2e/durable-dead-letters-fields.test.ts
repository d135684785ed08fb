import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_deadfields");
const { SCHEMA, SECRET_URL, runIds, taskq, workflowFile } = durable;

/**
 * `dead-letters --output json` gives the fields README lists, no others: before, each record also had `cancelReason` and
 * `cancelledBy`, a cancelled task's, null in every dead letter and named nowhere.
 */
describe("dead-letters --output json", () => {
  it("has the fields README lists, and no cancelled task's", async () => {
    const file = await workflowFile("failing", 'tasks:\n  build: { run: "echo building; exit 3" }\n  deploy: { run: "true", dependsOn: build }\n');
    const runId = `dl-${SCHEMA}`;
    runIds.push(runId);
    const run = await taskq(["run", "--store", SECRET_URL, "--run-id", runId, "--log-dir", durable.ws.logs, file]);
    expect(run.code).toBe(1);
    const result = await taskq(["dead-letters", runId, "--output", "json"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const records = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(1);
    // README's list (tailAttempt and tailWorkerId only where the lines are an earlier attempt's: not here).
    const documented = ["runId", "key", "state", "attempts", "maxAttempts", "lastError", "exitCode", "signal", "timedOut", "dependsOn", "submittedAt", "startedAt", "finishedAt", "priority", "workerId", "workerHost", "workerPid", "tail", "cancelledDependents"];
    expect(Object.keys(records[0]!).sort()).toEqual([...documented].sort());
    expect(records[0]).toMatchObject({ runId, key: "build", state: "failed", lastError: "exited with code 3", tail: ["building"], cancelledDependents: ["deploy"] });
  }, 30_000);
});
