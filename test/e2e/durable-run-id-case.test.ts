import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_runidcase");
const { SCHEMA, taskq, workflowFile, submit } = durable;

/**
 * `submit --run-id Build-1`, then `--run-id build-1`: both were stored, two runs whose log folders are one on a file system
 * that does not tell case apart (macOS's). The second is refused now, naming the first, by submit and run --store alike.
 */
describe("a run id that a stored run's is but for case", () => {
  it("is refused by submit and run --store (exit 2, nothing submitted), naming the stored run; that run's own id is submitted again", async () => {
    const file = await workflowFile("case", 'tasks:\n  a: { run: "true", delay: 1h }\n');
    expect(await submit(file, ["--run-id", "Build-1"])).toBe("Build-1");
    const why = (id: string) =>
      `run id "${id}" differs from run Build-1's only in case: a run's id names its log folder on every worker, and where the file system does not tell case apart (macOS, Windows) the two would share one; ` +
      "nothing was submitted: submit it as Build-1 to add to that run, or under another --run-id";
    const submitted = await taskq(["submit", file, "--run-id", "build-1"]);
    expect({ code: submitted.code, stdout: submitted.stdout, stderr: submitted.stderr }).toEqual({ code: 2, stdout: "", stderr: `taskq: ${why("build-1")}\n` });
    const json = await taskq(["submit", file, "--run-id", "BUILD-1", "--output", "json"]);
    expect({ code: json.code, record: JSON.parse(json.stdout) as unknown }).toEqual({ code: 2, record: { ts: expect.any(String), event: "error", code: "STORE_RUN_ID_CASE", exitCode: 2, message: why("BUILD-1") } });
    const run = await taskq(["run", file, "--run-id", "build-1", "--log-dir", durable.ws.logs]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 2, stderr: `taskq: ${why("build-1")}\n` });
    const { rows } = await durable.store.pool.query<{ id: string }>(`SELECT id FROM "${SCHEMA}".runs`);
    expect(rows).toEqual([{ id: "Build-1" }]);

    const again = await taskq(["submit", file, "--run-id", "Build-1"]);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 0, stdout: "Build-1\n" });
    await durable.store.cancelRun("Build-1");
  }, 30_000);
});
