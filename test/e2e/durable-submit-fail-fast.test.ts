import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_submitfailfast");
const { taskq, workflowFile, SCHEMA } = durable;

/** The reason in a refusal of --fail-fast ("..., and a store is given (--store): <reason>; ..."), a durable run's whatever made it durable. */
function reason(message: string): string | undefined {
  return /^taskq: --fail-fast is for a local run, and [^:]+: ([^;]+);/.exec(message)?.[1];
}

/**
 * `submit --fail-fast` was refused as an unknown option ("'submit' takes no --fail-fast, an option of 'run'"), where
 * `run --store --fail-fast` says why a durable run does not take it: it says the same reason now, with the same exit code.
 */
describe("submit --fail-fast is refused for the reason run --store --fail-fast is", () => {
  it("exit 2, the reason run --store gives, nothing submitted; in JSON too", async () => {
    const file = await workflowFile("fail-fast", "failFast: true\ntasks:\n  boom: { run: 'exit 3' }\n");
    const run = await taskq(["run", file, "--fail-fast", "--run-id", "run-fail-fast"]);
    const submitted = await taskq(["submit", file, "--fail-fast", "--run-id", "submit-fail-fast"]);
    expect({ code: submitted.code, stdout: submitted.stdout }).toEqual({ code: run.code, stdout: "" });
    expect(run.code).toBe(2);
    expect(submitted.stderr).toBe(
      "taskq: --fail-fast is for a local run, and submit makes a durable run: a durable run's tasks run in its workers, which go on with the others when one fails; " +
        "run the file with taskq run, without a store, or stop the run with `taskq cancel`\n",
    );
    expect(run.stderr).toMatch(/^taskq: --fail-fast is for a local run, and a store is given \(TASKQ_STORE\): /);
    expect(reason(submitted.stderr)).toBe("a durable run's tasks run in its workers, which go on with the others when one fails");
    expect(reason(run.stderr)).toBe(reason(submitted.stderr));

    const json = await taskq(["submit", file, "--fail-fast", "--run-id", "submit-fail-fast", "--output", "json"]);
    const record = JSON.parse(json.stdout) as { event: string; code: string; exitCode: number; message: string };
    expect({ code: json.code, event: record.event, errorCode: record.code, exitCode: record.exitCode }).toEqual({ code: 2, event: "error", errorCode: "USAGE", exitCode: 2 });
    expect(`taskq: ${record.message}\n`).toBe(submitted.stderr);
    // Refused before anything is stored.
    const runs = await durable.store.pool.query(`SELECT id FROM "${SCHEMA}".runs`);
    expect(runs.rows).toEqual([]);

    // Without it, the file's failFast is noted as ever, and --no-fail-fast leaves the note out: neither is taken for --fail-fast.
    const noted = await taskq(["submit", file, "--run-id", "noted"]);
    expect({ code: noted.code, stdout: noted.stdout }).toEqual({ code: 0, stdout: "noted\n" });
    expect(noted.stderr).toContain("note: the file's failFast (true) does not stop a durable run: ");
    const known = await taskq(["submit", file, "--run-id", "known", "--no-fail-fast"]);
    expect({ code: known.code, stdout: known.stdout, stderr: known.stderr }).toEqual({ code: 0, stdout: "known\n", stderr: "" });
    for (const runId of ["noted", "known"]) await durable.store.cancelRun(runId);
  }, 30_000);
});
