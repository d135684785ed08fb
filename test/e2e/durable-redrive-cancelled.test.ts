import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const { taskq, workflowFile, submit } = useDurableWorkspace("taskq_e2e_redrivecancel");

/**
 * `redrive` of a task cancelled by request, or because a dependency was, which no redrive brings back: it says how to run
 * it again, as a submit of a run that has ended does (before, only `only failed tasks can be redriven`, and no way on).
 */
describe("redrive of a task cancelled otherwise than by a failure says how to run it again", () => {
  it("by request, and as its dependency was cancelled: submit the workflow under another --run-id", async () => {
    const runId = await submit(await workflowFile("cancelled", 'tasks:\n  build: { run: "true", delay: 1h }\n  deploy: { run: "true", dependsOn: build }\n'));
    const cancel = await taskq(["cancel", runId, "build"]);
    expect({ code: cancel.code, stdout: JSON.parse(cancel.stdout) as unknown }).toEqual({ code: 0, stdout: { cancelled: ["build", "deploy"], cancelRequested: [] } });

    const again = "only failed tasks can be redriven; to run it again, submit the workflow under another --run-id";
    const requested = await taskq(["redrive", runId, "build"]);
    expect({ code: requested.code, stdout: requested.stdout, stderr: requested.stderr }).toEqual({ code: 1, stdout: "", stderr: `taskq: task "build" was cancelled by request: ${again}\n` });
    const dependent = await taskq(["redrive", runId, "deploy"]);
    expect({ code: dependent.code, stderr: dependent.stderr }).toEqual({ code: 1, stderr: `taskq: task "deploy" was cancelled (dependency "build" was cancelled): ${again}\n` });
  }, 30_000);
});
