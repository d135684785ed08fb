import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { useDurableWorkspace } from "./durable-harness.js";

/**
 * A run id is for one workflow file: a CI job that gives one id ($CI_PIPELINE_ID) to build.yaml and then
 * deploy.yaml would otherwise merge deploy's tasks into build's run, and a task id both have would be
 * kept as build defined it and never run as deploy does. The same file again, edited or from another
 * folder (another checkout), still adds its new tasks.
 */
describe("a run id submitted again with another workflow file", () => {
  const durable = useDurableWorkspace("runfile");
  const { SCHEMA, SECRET_URL, ENV, runIds, taskq, workflowFile } = durable;

  /** `taskq submit - --run-id RUN`, the workflow `yaml` on its standard input (a generated workflow piped in). */
  function submitFromStdin(runId: string, yaml: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [BIN, "submit", "-", "--run-id", runId], { cwd: durable.ws.dir, env: { ...process.env, CI: "true", NO_COLOR: "1", ...ENV }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.stdin.end(yaml);
    return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  }

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
  it("read from standard input, on either side, is told by its tasks: one with none of the run's is refused (exit 2, nothing stored) where the other side is a file; one with some is taken, said so; piped in both times, taken", async () => {
    const buildYaml = "tasks:\n  compile: { run: echo compile }\n  test: { run: echo test, dependsOn: [compile] }\n";
    const otherYaml = "tasks:\n  lint: { run: echo lint }\n";
    const build = await workflowFile("stdin-build", buildYaml);
    const other = await workflowFile("stdin-other", otherYaml);
    const runId = `stdin-${randomBytes(3).toString("hex")}`;
    const piped = `stdin-${randomBytes(3).toString("hex")}`;
    runIds.push(runId, piped);
    const { store } = durable;
    expect((await taskq(["submit", build, "--run-id", runId])).code).toBe(0);

    // Another workflow piped in under the run id of build's: before, its task was added to build's run without a word.
    const refused = await submitFromStdin(runId, otherYaml);
    expect(refused).toEqual({
      code: 2,
      stdout: "",
      stderr: `taskq: run ${runId} was submitted from ${build}, not <stdin> (which has none of its tasks): a run id is for one workflow file, which may be submitted again, edited or not, to add its new tasks; nothing was submitted: submit it under another --run-id\n`,
    });
    expect((await store.runStatus(runId)).tasks.map((task) => task.key)).toEqual(["compile", "test"]);
    // The same workflow piped in: taken as the run's file, and said so.
    const same = await submitFromStdin(runId, buildYaml);
    expect(same).toEqual({
      code: 0,
      stdout: `${runId}\n`,
      stderr:
        `note: run ${runId} already submitted: 0 new tasks, 2 kept\n` +
        `note: run ${runId} was submitted from ${build}; <stdin> cannot be told from it by name, and is taken as that file, edited or not, as it has some of the run's tasks\n`,
    });

    // A run submitted from standard input, then given a file with none of its tasks: refused too.
    expect((await submitFromStdin(piped, buildYaml)).code).toBe(0);
    // Piped in again (a CI step run again): taken, as the same file by its path is, without a note.
    expect(await submitFromStdin(piped, buildYaml)).toEqual({ code: 0, stdout: `${piped}\n`, stderr: `note: run ${piped} already submitted: 0 new tasks, 2 kept\n` });
    // Another generated workflow piped in (a pipeline that submits its steps in parts): its tasks are added, without a word.
    expect(await submitFromStdin(piped, "tasks:\n  package: { run: echo package }\n")).toEqual({ code: 0, stdout: `${piped}\n`, stderr: `note: run ${piped} already submitted: 1 new task, 0 kept\n` });
    const byPath = await taskq(["submit", other, "--run-id", piped]);
    expect({ code: byPath.code, stderr: byPath.stderr }).toEqual({
      code: 2,
      stderr: `taskq: run ${piped} was submitted from <stdin>, not ${other} (which has none of its tasks): a run id is for one workflow file, which may be submitted again, edited or not, to add its new tasks; nothing was submitted: submit ${other} under another --run-id (such as ${piped}-stdin-other)\n`,
    });
    expect((await store.runStatus(piped)).tasks.map((task) => task.key)).toEqual(["compile", "test", "package"]);
  });
  it("read from a pipe by its path (`taskq submit <(generate)`, /dev/fd/N) and refused, is told to be submitted under another --run-id, not by that path again nor under an id made of its number", async () => {
    const build = await workflowFile("fd-build", "tasks:\n  compile: { run: echo compile }\n");
    const runId = `fd-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    expect((await taskq(["submit", build, "--run-id", runId])).code).toBe(0);
    // The workflow through a shell's process substitution: a pipe named /dev/fd/N.
    const script = `exec "$NODE" "$BIN" submit <(printf '%s' "$WORKFLOW") --run-id ${runId}`;
    const child = spawn("bash", ["-c", script], {
      cwd: durable.ws.dir,
      env: { ...process.env, CI: "true", NO_COLOR: "1", ...ENV, NODE: process.execPath, BIN, WORKFLOW: "tasks:\n  lint: { run: echo lint }\n" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    stderr = stderr.replace(/\/dev\/fd\/\d+/g, "/dev/fd/N");
    expect({ code, stderr }).toEqual({
      code: 2,
      stderr: `taskq: run ${runId} was submitted from ${build}, not /dev/fd/N (which has none of its tasks): a run id is for one workflow file, which may be submitted again, edited or not, to add its new tasks; nothing was submitted: submit it under another --run-id\n`,
    });
    expect((await durable.store.runStatus(runId)).tasks.map((task) => task.key)).toEqual(["compile"]);
  });
});
