import { afterAll, describe, expect, it } from "vitest";
import { runCli, workspace } from "../helpers/cli.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../store/helpers.js";

/**
 * `redrive` of a task cancelled by request, or because a dependency was, which no redrive brings back: it says how to run
 * it again, as a submit of a run that has ended does (before, only `only failed tasks can be redriven`, and no way on).
 */
describe("redrive of a task cancelled otherwise than by a failure says how to run it again", () => {
  const schema = uniqueSchema();
  afterAll(async () => dropSchema(schema));

  it("by request, and as its dependency was cancelled: submit the workflow under another --run-id", async () => {
    const ws = await workspace('tasks:\n  build: { run: "true", delay: 1h }\n  deploy: { run: "true", dependsOn: build }\n');
    const options = { cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } };
    const submitted = await runCli(["submit", ws.file], options);
    expect(submitted.code).toBe(0);
    const runId = submitted.stdout.trim();
    const cancel = await runCli(["cancel", runId, "build"], options);
    expect({ code: cancel.code, stdout: JSON.parse(cancel.stdout) as unknown }).toEqual({ code: 0, stdout: { cancelled: ["build", "deploy"], cancelRequested: [] } });

    const again = "only failed tasks can be redriven; to run it again, submit the workflow under another --run-id";
    const requested = await runCli(["redrive", runId, "build"], options);
    expect({ code: requested.code, stdout: requested.stdout, stderr: requested.stderr }).toEqual({ code: 1, stdout: "", stderr: `taskq: task "build" was cancelled by request: ${again}\n` });
    const dependent = await runCli(["redrive", runId, "deploy"], options);
    expect({ code: dependent.code, stderr: dependent.stderr }).toEqual({ code: 1, stderr: `taskq: task "deploy" was cancelled (dependency "build" was cancelled): ${again}\n` });
  }, 30_000);
});
