import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

// A run id or task id mistyped on the command line (the durable commands take them from a person or a CI variable).
const durable = useDurableWorkspace("taskq_e2e_typos");
const { SCHEMA, taskq, workflowFile, submit } = durable;

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

describe("a run id no run has", () => {
  it("names the run meant, where one is named almost so, in every command that takes a run", async () => {
    const runId = await submit(await workflowFile("runs", WORKFLOW), ["--run-id", "nightly-1234"]);
    const where = `in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA)`;
    for (const args of [["status", "nigthly-1234"], ["cancel", "nigthly-1234"], ["dead-letters", "nigthly-1234"], ["redrive", "nigthly-1234", "build"], ["status", "Nightly-1234"]]) {
      const result = await taskq(args);
      expect({ args, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        args,
        code: 1,
        stdout: "",
        stderr: `taskq: no run "${args[1]!}" ${where}; did you mean "${runId}"?\n`,
      });
    }
    const json = await taskq(["status", "nigthly-1234", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ event: "error", code: "STORE_NOT_FOUND", message: `no run "nigthly-1234" ${where}; did you mean "${runId}"?` });
    // One named like no run is not given a guess, nor one named as a run but for its number: another run of a series,
    // not submitted yet or pruned, is no typo of the one next to it.
    for (const other of ["weekly", "nightly-1235"]) {
      const far = await taskq(["status", other]);
      expect({ code: far.code, stderr: far.stderr }).toEqual({ code: 1, stderr: `taskq: no run "${other}" ${where}\n` });
    }
  });
});
