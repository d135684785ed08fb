import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

// A run id or task id mistyped on the command line (the durable commands take them from a person or a CI variable).
const durable = useDurableWorkspace("taskq_e2e_typos");
const { taskq, workflowFile, submit } = durable;

const WORKFLOW = `tasks:
  build: { run: "true", delay: 1h }
  deploy: { run: "true", dependsOn: [build] }
  shard-1: { run: "true", dependsOn: [build] }
  shard-2: { run: "true", dependsOn: [build] }
`;

describe("a task id no task of the run has", () => {
  it("names the run's task meant, where one is named almost so", async () => {
    const runId = await submit(await workflowFile("tasks", WORKFLOW), ["--run-id", "typo-tasks"]);
    const cancel = await taskq(["cancel", runId, "biuld"]);
    expect({ code: cancel.code, stdout: cancel.stdout, stderr: cancel.stderr }).toEqual({
      code: 1,
      stdout: "",
      stderr: `taskq: no task "biuld" in run "${runId}"; did you mean "build"?\n`,
    });
    const redrive = await taskq(["redrive", runId, "Deploy"]);
    expect({ code: redrive.code, stderr: redrive.stderr }).toEqual({ code: 1, stderr: `taskq: no task "Deploy" in run "${runId}"; did you mean "deploy"?\n` });
    // One named like none of them is not given a guess, nor one named as a task but for its number (another of a series).
    for (const task of ["lint", "shard-9"]) {
      const far = await taskq(["cancel", runId, task]);
      expect({ code: far.code, stderr: far.stderr }).toEqual({ code: 1, stderr: `taskq: no task "${task}" in run "${runId}"\n` });
    }
  });
});
