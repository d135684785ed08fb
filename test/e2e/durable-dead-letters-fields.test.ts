import { afterAll, describe, expect, it } from "vitest";
import { runCli, workspace } from "../helpers/cli.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../store/helpers.js";

/**
 * `dead-letters --output json` gives the fields README lists, no others: before, each record also had `cancelReason` and
 * `cancelledBy`, a cancelled task's, null in every dead letter and named nowhere.
 */
describe("dead-letters --output json", () => {
  const schema = uniqueSchema();
  afterAll(async () => dropSchema(schema));

  it("has the fields README lists, and no cancelled task's", async () => {
    const ws = await workspace('tasks:\n  build: { run: "echo building; exit 3" }\n  deploy: { run: "true", dependsOn: build }\n');
    const options = { cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } };
    const runId = `dl-${schema}`;
    const run = await runCli(["run", "--store", DATABASE_URL, "--run-id", runId, "--log-dir", ws.logs, ws.file], options);
    expect(run.code).toBe(1);
    const result = await runCli(["dead-letters", runId, "--output", "json"], options);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const records = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(1);
    // README's list (tailAttempt and tailWorkerId only where the lines are an earlier attempt's: not here).
    const documented = ["runId", "key", "state", "attempts", "maxAttempts", "lastError", "exitCode", "signal", "timedOut", "dependsOn", "submittedAt", "startedAt", "finishedAt", "priority", "workerId", "workerHost", "workerPid", "tail", "cancelledDependents"];
    expect(Object.keys(records[0]!).sort()).toEqual([...documented].sort());
    expect(records[0]).toMatchObject({ runId, key: "build", state: "failed", lastError: "exited with code 3", tail: ["building"], cancelledDependents: ["deploy"] });
  }, 30_000);
});
