import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

/**
 * A run id is for one workflow file: a CI job that gives one id ($CI_PIPELINE_ID) to build.yaml and then
 * deploy.yaml would otherwise merge deploy's tasks into build's run, and a task id both have would be
 * kept as build defined it and never run as deploy does. The same file again, edited or from another
 * folder (another checkout), still adds its new tasks.
 */
describe("a run id submitted again with another workflow file", () => {
  const durable = useDurableWorkspace("runfile");
  const { SCHEMA, SECRET_URL, runIds, taskq, workflowFile } = durable;

  it("is refused by submit and run --store with exit 2, naming both files, and stores nothing; the same file, edited or by another path, still adds its tasks", async () => {
    const build = await workflowFile("build", "tasks:\n  compile: { run: 'exit 1' }\n  lint: { run: echo lint }\n");
    const deploy = await workflowFile("deploy", "tasks:\n  compile: { run: echo deploy-compile }\n  push: { run: echo push }\n");
    const runId = `pipe-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const { ws, store } = durable;
    const storeFlags = ["--store", SECRET_URL, "--store-schema", SCHEMA, "--log-dir", ws.logs];
    const first = await taskq(["run", build, ...storeFlags, "--run-id", runId], { TASKQ_STORE: "" });
    expect(first.code).toBe(1);

    const refused = `taskq: run ${runId} was submitted from ${build}, not ${deploy}: a run id is for one workflow file, which may be submitted again, edited or not, to add its new tasks; nothing was submitted: submit ${deploy} under another --run-id (such as ${runId}-deploy)\n`;
    const run = await taskq(["run", deploy, ...storeFlags, "--run-id", runId], { TASKQ_STORE: "" });
    expect(run).toMatchObject({ code: 2, stdout: "", stderr: refused });
    const submitted = await taskq(["submit", deploy, "--run-id", runId]);
    expect(submitted).toMatchObject({ code: 2, stdout: "", stderr: refused });
    const json = await taskq(["submit", deploy, "--run-id", runId, "--output", "json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ event: "error", code: "STORE_OTHER_FILE", exitCode: 2, message: refused.slice("taskq: ".length, -1) });
    const status = await store.runStatus(runId);
    expect(status.tasks.map((task) => task.key).sort()).toEqual(["compile", "lint"]);
    expect(status.file).toBe(build);

    // The same file, edited: its new task is added (the run, failed, runs again until it ends).
    await writeFile(build, "tasks:\n  compile: { run: 'exit 1' }\n  lint: { run: echo lint }\n  docs: { run: echo docs }\n");
    const edited = await taskq(["submit", build, "--run-id", runId]);
    expect(edited).toMatchObject({ code: 0, stdout: `${runId}\n`, stderr: `note: run ${runId} already submitted: 1 new task, 2 kept\n` });
    // The same file from another folder (another checkout of the repository): taken as that file, and said so.
    const checkout = path.join(ws.dir, `checkout-${randomBytes(3).toString("hex")}`);
    await mkdir(checkout);
    const moved = path.join(checkout, "build.yaml");
    await writeFile(moved, "tasks:\n  compile: { run: 'exit 1' }\n  lint: { run: echo lint }\n  docs: { run: echo docs }\n");
    const again = await taskq(["submit", moved, "--run-id", runId]);
    expect(again.code).toBeLessThan(2);
    expect(again.stdout).toBe(`${runId}\n`);
    expect(again.stderr).toContain(`note: run ${runId} was submitted from ${build}; ${moved} has the same name and is taken as that file, edited or not\n`);
    expect((await store.runStatus(runId)).tasks.map((task) => task.key).sort()).toEqual(["compile", "docs", "lint"]);
  });
});
