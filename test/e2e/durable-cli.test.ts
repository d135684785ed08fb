import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, realpathSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { hostname, networkInterfaces } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { DISPLAY_LIMIT } from "../../src/handlers/line-splitter.js";
import { storeApplicationName } from "../../src/store/postgres/application-name.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import type { RunStatus } from "../../src/store/postgres/types.js";
import { BIN, FIXTURES, startCli, type CliResult } from "../helpers/cli.js";
import { eventually, findGuards, findLeftovers } from "../helpers/processes.js";
import { startFreezableProxy, startPasswordServer, startSilentServer } from "../helpers/tcp-proxy.js";
import { useDurableWorkspace, withPassword, type Worker } from "./durable-harness.js";
import { DATABASE_URL, sql } from "../store/helpers.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_durable");
const { SCHEMA, PASSWORD, SECRET_URL, ENV, runIds, workers, taskq, workflowFile, submit, startWorker, waitForRun, cancelStrandedRun } = durable;

/**
 * `status`'s stderr without its note that no worker of this store is connected (a run not finished, with no worker of
 * this file's running), which a worker an earlier test ended may still keep from it a moment: the database lists its sessions until they end.
 */
function withoutNoWorkerNote(stderr: string): string {
  // With --output json, a note record (NO_WORKER).
  return stderr.replace(`note: no worker is connected to this store (schema "${SCHEMA}"): the run's tasks wait until one is (taskq worker)\n`, "").replace(/^\{"ts":"[^"]+","event":"note","code":"NO_WORKER",.*\n/m, "");
}
/**
 * `cancel`'s stderr without its note that no worker of this store is connected to sweep its running tasks (their worker
 * killed, with no worker of this file's running), which a worker an earlier test ended may still keep from it a moment.
 */
function withoutNoSweepNote(stderr: string): string {
  return stderr.replace(new RegExp(`^note: no worker is connected to this store \\(schema "${SCHEMA}"\\): .* stays? running until one is \\(taskq worker\\) and its sweep cancels (it|them)\n`, "m"), "");
}
let store: PostgresStore;
let ws: { dir: string; logs: string };

beforeAll(() => {
  store = durable.store;
  ws = durable.ws;
});

/** One task that prints "first" and hangs on its first run, and prints "second run" on any later one. */
async function hangsOnFirstRun(name: string): Promise<string> {
  const mark = path.join(ws.dir, `${name}-${randomBytes(3).toString("hex")}`);
  return workflowFile(
    name,
    `tasks:
  job:
    run: 'if [ -f "$MARK" ]; then echo "second run"; else touch "$MARK"; echo first; sleep 1000; fi'
    env: { MARK: "${mark}" }
`,
  );
}

/** Sends SIGTERM and returns how the worker ended. */
/** A runAt `days` ahead of now, as ISO 8601: within the 30 days a runAt may be ahead, whatever the date the test runs on. */
function daysAhead(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString();
}

async function stopWorker(worker: Worker): Promise<CliResult> {
  worker.cli.child.kill("SIGTERM");
  return worker.cli.done;
}

function taskOf(status: RunStatus, key: string) {
  const row = status.tasks.find((task) => task.key === key);
  if (row === undefined) throw new Error(`no task ${key} in run ${status.runId}`);
  return row;
}

/** The time of a worker line's local clock ("12:04:05.123"), on the day of `near` (within 12 hours of it). */
function clockTime(clock: string, near: number): number {
  const [hours = NaN, minutes = NaN, seconds = NaN] = clock.split(":").map(Number);
  const at = new Date(near).setHours(hours, minutes, 0, 0) + seconds * 1000;
  const day = 86_400_000;
  return at - near > day / 2 ? at - day : near - at > day / 2 ? at + day : at;
}

/** The `start` lines of a worker's output for a run: [line, task, attempt, attempts]. */
const starts = (text: string, runId: string) => [...text.matchAll(new RegExp(`start {3}${runId}/(\\S+) \\(attempt (\\d+)/(\\d+)\\)`, "g"))];


/** What `status --watch` says as it starts where no worker of the store is connected (durable-no-worker.test.ts tests it). */
function noWorkerNote(schema: string): string {
  return `note: no worker is connected to this store (schema "${schema}") (as the watch started): the run's tasks wait until one is (taskq worker)\n`;
}

describe("durable mode through the CLI", () => {
  it("a run submitted on one machine is worked by two workers; status prints the summary and its exit code", async () => {
    // Each t* leaves a mark and waits until two have (at most 15 s): on -j 1 workers, the first
    // cannot end before the other worker has started one, so neither can do the run alone.
    const meeting = path.join(ws.dir, `meeting-${randomBytes(3).toString("hex")}`);
    await mkdir(meeting);
    const meet = (word: string) =>
      `{ run: 'touch "$MEET/$TASKQ_TASK_ID"; i=0; while [ "$(ls "$MEET" | wc -l)" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done; echo ${word}', env: { MEET: "${meeting}" } }`;
    const file = await workflowFile(
      "fan-out",
      `name: fan-out
tasks:
  t1: ${meet("one")}
  t2: ${meet("two")}
  t3: ${meet("three")}
  t4: ${meet("four")}
  report: { run: echo report, dependsOn: [t1, t2, t3, t4] }
  environment: { run: env }   # its log is checked for the password with every other output
`,
    );
    const runId = `fan-out-${randomBytes(3).toString("hex")}`;
    expect(await submit(file, ["--run-id", runId])).toBe(runId);
    // Submitting the same run id again is idempotent, and says that nothing was added.
    const again = await taskq(["submit", file, "--run-id", runId]);
    expect(again).toMatchObject({ code: 0, stdout: `${runId}\n`, stderr: `note: run ${runId} already submitted: 0 new tasks, 6 kept\n` });
    expect((await store.runStatus(runId)).tasks).toHaveLength(6);

    // Not finished yet: the summary counts it as unfinished, split as the JSON splits it, and the exit code is 1.
    const early = await taskq(["status", runId]);
    expect(early.code).toBe(1);
    expect(early.stdout).toMatch(/Summary: 0 succeeded, 0 failed, 0 cancelled, 6 unfinished \(1 blocked, 5 ready\) in /);

    const [first, second] = await Promise.all([startWorker(["-j", "1"]), startWorker(["-j", "1"])]);
    const watched = await taskq(["status", runId, "--watch"]);
    expect(watched.stderr).toBe("");
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/Summary: 6 succeeded, 0 failed, 0 cancelled in /);

    const json = await taskq(["status", runId, "--output", "json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), event: "summary", runId, state: "succeeded", exitCode: 0, counts: { SUCCEEDED: 6 } });

    // Both workers took part (the meeting saw to it); each task ran exactly once.
    const [a, b] = [await stopWorker(first), await stopWorker(second)];
    expect([a.code, b.code]).toEqual([143, 143]);
    const ranBy = [starts(a.stdout, runId), starts(b.stdout, runId)];
    expect(ranBy[0]!.length).toBeGreaterThan(0);
    expect(ranBy[1]!.length).toBeGreaterThan(0);
    expect(ranBy.flat().map((match) => match[1]).sort()).toEqual(["environment", "report", "t1", "t2", "t3", "t4"]);
    expect(`${a.stdout}${b.stdout}`).toContain(`${runId}/report | report`);

    const unknown = await taskq(["status", "no-such-run"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`taskq: no run "no-such-run" in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA)\n`);
  });

  it("submit's notes on stderr, and run --store's and its worker's lines, escape a workflow's control characters (a cwd's ESC as \\u001b), as validate's do", async () => {
    const file = await workflowFile("escaped-note", 'tasks:\n  a: { run: "true", cwd: "sub\\u001b[2Jx" }\n');
    const runId = `escaped-${randomBytes(3).toString("hex")}`;
    const result = await taskq(["submit", file, "--run-id", runId]);
    runIds.push(runId);
    // Cancelled at once, so that no later test's worker takes it.
    await store.cancelRun(runId);
    expect(result).toMatchObject({ code: 0, stdout: `${runId}\n` });
    const note = String.raw`: task "a": cwd "sub\u001b[2Jx" (${ws.dir}/sub\u001b[2Jx) does not exist now`;
    expect(result.stderr).toContain(note);
    expect(result.stderr).not.toContain("\u001b");
    // run --store prints them on stdout, before its worker's lines.
    const run = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", `${runId}-run`]);
    runIds.push(`${runId}-run`);
    const head = run.stdout.split(/\n(?=\S+ worker )/)[0] ?? "";
    expect(head).toContain(note);
    expect(head).not.toContain("\u001b");
    // Its worker's FAILED line, as the summary, names the folder as the note does: on its one line.
    const failed = String.raw`FAILED  ${runId}-run/a: could not start: working directory ${ws.dir}/sub\u001b[2Jx does not exist`;
    expect(run.stdout).toContain(failed);
    expect(run.stdout).not.toContain("\u001b");
  });

  it("run --store works the run in its own process: exit 0, or exit 1 with the dead letters", async () => {
    const storeFlags = ["--store", SECRET_URL, "--store-schema", SCHEMA, "--log-dir", ws.logs];
    const good = await workflowFile("good", "tasks:\n  a: { run: echo a }\n  b: { run: echo b, dependsOn: a }\n");
    const goodId = `good-${randomBytes(3).toString("hex")}`;
    runIds.push(goodId);
    const ok = await taskq(["run", good, ...storeFlags, "--run-id", goodId], { TASKQ_STORE: "" });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    // The schema named, as a worker's first line names it: a worker given another one never runs the run.
    expect(ok.stdout).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} run ${goodId} submitted to postgres://postgres:\\*\\*\\*@\\S+ \\(schema "${SCHEMA}"\\): 2 tasks\n`));
    expect(ok.stdout).toMatch(/Summary: 2 succeeded, 0 failed, 0 cancelled/);
    expect(starts(ok.stdout, goodId)).toHaveLength(2);
    // In causal order: b, unblocked and leased in the round trip that recorded a, starts after a's `ok`.
    const aOk = ok.stdout.indexOf(`ok      ${goodId}/a\n`);
    expect(aOk).toBeGreaterThan(-1);
    expect(ok.stdout.indexOf(`start   ${goodId}/b `)).toBeGreaterThan(aOk);

    // The same run id again: nothing runs twice, and it says so; the summary is the finished run's.
    // --output tty: no live board for a durable run, and a note says so, once.
    const again = await taskq(["run", good, ...storeFlags, "--run-id", goodId, "--output", "tty"], { TASKQ_STORE: "" });
    expect(again.stderr).toBe("note: --output tty: a run with a store prints plain lines, not the live board (that is for local runs)\n");
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} run ${goodId} already submitted to postgres://postgres:\\*\\*\\*@\\S+ \\(schema "${SCHEMA}"\\): 0 new tasks, 2 kept\n`));
    expect(starts(again.stdout, goodId)).toHaveLength(0);
    expect(again.stdout).toMatch(/Summary: 2 succeeded/);

    const bad = await workflowFile(
      "bad",
      `tasks:
  fine: { run: echo fine }
  bad: { run: 'echo "boom line"; exit 4', retries: 1, backoff: { base: 50ms, max: 50ms } }
  after: { run: echo after, dependsOn: bad }
`,
    );
    const badId = `bad-${randomBytes(3).toString("hex")}`;
    runIds.push(badId);
    const failed = await taskq(["run", bad, ...storeFlags, "--run-id", badId], { TASKQ_STORE: "" });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/Summary: 1 succeeded, 1 failed, 1 cancelled/);
    expect(failed.stdout).toMatch(/Dead letters \(1\):\n\s+\S+ bad: exited with code 4 \(2 attempts\)/);
    expect(failed.stdout).toMatch(/last line:\n\s+boom line/);
    expect(failed.stdout).toMatch(/cancelled because of it: after/);
  });

  it("under GitHub Actions, run --store and a worker write a task's workflow commands at a line's start, without the `run/task |` prefix, and its long lines whole, as a local run does", async () => {
    // Last, a value of 5,000 bytes to mask and a line that holds it: whole, not cut at 4 KiB.
    const file = await workflowFile(
      "gha",
      "tasks:\n  lint: { run: 'echo before; echo \"::error file=a.ts,line=3::bad\"; echo \"::add-mask::s3cret\"; echo \"a::b\"; echo \"::add-mask::$(printf %5000s | tr \" \" S)\"; echo \"token $(printf %5000s | tr \" \" S)\"' }\n",
    );
    const expected = (runId: string) =>
      `${runId}/lint | before\n::error file=a.ts,line=3::bad\n::add-mask::s3cret\n${runId}/lint | a::b\n::add-mask::${"S".repeat(5000)}\n${runId}/lint | token ${"S".repeat(5000)}\n`;
    const storeFlags = ["--store", SECRET_URL, "--store-schema", SCHEMA, "--log-dir", ws.logs];
    for (const gitHub of [true, false]) {
      const runId = `gha-${randomBytes(3).toString("hex")}`;
      runIds.push(runId);
      const result = await taskq(["run", file, ...storeFlags, "--run-id", runId], { TASKQ_STORE: "", ...(gitHub ? { GITHUB_ACTIONS: "true" } : {}) });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(gitHub ? expected(runId) : `${runId}/lint | before\n${runId}/lint | ::error file=a.ts,line=3::bad\n${runId}/lint | ::add-mask::s3cret\n`);
      if (!gitHub) expect(result.stdout).toContain(`${runId}/lint | token ${"S".repeat(4090)}… (5006 bytes)\n`);
    }
    const worker = await startWorker(["-j", "1"], { GITHUB_ACTIONS: "true" });
    const runId = await submit(file);
    await waitForRun(runId);
    expect(await eventually(() => worker.stdout().includes(`ok      ${runId}/lint`), 5_000)).toBe(true);
    expect(worker.stdout()).toContain(expected(runId));
    worker.cli.child.kill("SIGTERM");
    await worker.cli.done;
  });

  it("under GitHub Actions, run --store --output json and a worker --output json hold a task's line longer than 4 KiB whole in its output record's text, up to 1 MiB, as a local run does", async () => {
    // A token across the 4 KiB cut: cut, the runner, which masks a value only whole, showed its first part. A line past 1 MiB is cut as in plain output.
    const token = `ghs_${"T0k3n".repeat(7)}1`;
    const across = `${"x".repeat(4080)}${token}`;
    const huge = `log ${"H".repeat(1024 * 1024)}`;
    await writeFile(path.join(ws.dir, "long-lines.txt"), `${across}\n${huge}\n${"after"}\n`);
    const file = await workflowFile("gha-json", `tasks:\n  lint: { run: 'cat "${path.join(ws.dir, "long-lines.txt")}"' }\n`);
    const hugeCut = `${huge.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(huge)} bytes)`;
    /** The text of each `output` record of run `runId`'s task `lint` in `stdout`. */
    const texts = (stdout: string, runId: string): string[] =>
      stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { event: string; runId?: string; id?: string; text?: string })
        .filter((record) => record.event === "output" && record.runId === runId && record.id === "lint")
        .map((record) => record.text as string);
    const storeFlags = ["--store", SECRET_URL, "--store-schema", SCHEMA, "--log-dir", ws.logs, "--output", "json"];
    for (const gitHub of [true, false]) {
      const runId = `gha-json-${randomBytes(3).toString("hex")}`;
      runIds.push(runId);
      const result = await taskq(["run", file, ...storeFlags, "--run-id", runId], { TASKQ_STORE: "", ...(gitHub ? { GITHUB_ACTIONS: "true" } : {}) });
      expect(result.code).toBe(0);
      expect(texts(result.stdout, runId)).toEqual([gitHub ? across : `${across.slice(0, DISPLAY_LIMIT)}… (${Buffer.byteLength(across)} bytes)`, hugeCut, "after"]);
    }
    const worker = startCli(["worker", "--log-dir", ws.logs, "-j", "1", "--output", "json"], { cwd: ws.dir, env: { ...ENV, GITHUB_ACTIONS: "true" } });
    workers.push(worker);
    const runId = await submit(file);
    await waitForRun(runId);
    expect(await eventually(() => worker.stdout().includes(`"event":"finished","runId":"${runId}"`), 5_000)).toBe(true);
    expect(texts(worker.stdout(), runId)).toEqual([across, hugeCut, "after"]);
    worker.child.kill("SIGTERM");
    await worker.done;
  });

  it("run --store --output json: every line of a loud task is one NDJSON record with its run, task and stream", async () => {
    const script = path.join(ws.dir, "loud-json.sh");
    // 3,000 x 3 lines: plain, quoted, and one with a byte that is not UTF-8 (\377).
    await writeFile(script, `i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); printf 'n %d\\n"q" \\303\\251\\n\\377x\\n' $i; done\n`);
    const file = await workflowFile("loud-json", `tasks:\n  loud: { run: 'sh "${script}"' }\n`);
    const runId = `json-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const result = await taskq(["run", file, "--store", SECRET_URL, "--store-schema", SCHEMA, "--log-dir", ws.logs, "--run-id", runId, "--output", "json"], {
      TASKQ_STORE: "",
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const records = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; runId?: string; id?: string; attempt?: number; stream?: string; text?: string });
    // Every line is JSON, the first one too: the run, where it was submitted (no password).
    expect(records[0]).toMatchObject({ event: "run", runId, file, store: expect.stringMatching(/^postgres:\/\/postgres:\*\*\*@/), schema: SCHEMA, tasks: 1 });
    // Each with its time, as a local run's records, the summary too.
    expect(records.filter((record) => !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(String((record as { ts?: unknown }).ts)))).toEqual([]);
    expect(records.at(-1)).toMatchObject({ event: "summary", runId, state: "succeeded" });
    const output = records.filter((record) => record.event === "output");
    expect(output.map((record) => `${record.runId} ${record.id} ${record.attempt} ${record.stream}`)).toEqual(Array(9000).fill(`${runId} loud 1 stdout`));
    expect(output.map((record) => record.text)).toEqual(Array.from({ length: 3000 }, (_, i) => [`n ${i + 1}`, '"q" é', "\ufffdx"]).flat());
  });

  it("cancel RUN TASK: the worker kills the running task within a heartbeat; its dependents are cancelled", async () => {
    const file = await workflowFile(
      "cancel",
      `tasks:
  long: { run: "echo started; sleep 1000" }
  after: { run: echo after, dependsOn: long }
  side: { run: echo side }
`,
    );
    const worker = await startWorker(["-j", "2", "--lease", "3s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/long | started`))).toBe(true);

    // While it runs, status names it with its attempt, the worker holding it and for how long.
    const running = await taskq(["status", runId]);
    expect(running.code).toBe(1);
    expect(running.stdout).toMatch(/\nRunning \((1|2)\):\n( {2}▶ .*\n)* {2}▶ long: attempt 1\/1 on \S+, for \d+(ms|\.\ds|s)\n/);
    const runningJson = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { running: Array<{ id: string; workerId: string }> };
    const long = runningJson.running.find((task) => task.id === "long");
    expect(long).toMatchObject({ id: "long", attempt: 1, maxAttempts: 1, workerId: worker.id, workerHost: hostname(), workerPid: worker.cli.child.pid, runningMs: expect.any(Number) });
    expect(worker.stdout()).toContain(long!.workerId);

    const cancelled = await taskq(["cancel", runId, "long"]);
    expect(cancelled.code).toBe(0);
    // Its dependent at once: were the task to end well before its worker hears of the cancel, it would not run.
    expect(JSON.parse(cancelled.stdout)).toEqual({ cancelled: ["after"], cancelRequested: ["long"] });
    // It says who stops it, and what becomes of it should that worker be gone.
    expect(cancelled.stderr).toMatch(
      new RegExp(`^note: "long" runs on worker ${long!.workerId}, which stops it at its next heartbeat; if that worker is gone \\(killed, its machine lost\\), the task stays running until its lease runs out, in \\d+s, and then the next sweep of any running worker cancels it\n$`),
    );
    const requestedAt = Date.now();
    const status = await waitForRun(runId, 10_000);
    // The lease is 3 s, so the heartbeat that sees the request comes within 1 s: the worker's own line
    // says when (a late heartbeat timer still has 2 s before the lease would run out).
    const seen = new RegExp(`^(\\S+) cancel  ${runId}/long: cancel requested; killing the task$`, "m").exec(worker.stdout());
    expect(seen).not.toBeNull();
    expect(clockTime(seen![1]!, requestedAt) - requestedAt).toBeLessThan(3_000);
    expect(taskOf(status, "long")).toMatchObject({ state: "cancelled", attempts: 1 });
    expect(taskOf(status, "after")).toMatchObject({ state: "cancelled", cancelledBy: "long" });
    expect(taskOf(status, "side")).toMatchObject({ state: "succeeded" });
    // Killed while the worker still runs: `sleep 1000` is gone now, not at the worker's exit.
    expect(await findLeftovers(runId)).toEqual([]);

    const summary = await taskq(["status", runId]);
    expect(summary.code).toBe(1);
    expect(summary.stdout).toMatch(/Summary: 1 succeeded, 0 failed, 2 cancelled/);
    expect(summary.stdout).toMatch(/long: cancelled by request/);
    // Cut short as it ran: its log, on the worker that ran it, and the last lines its attempt wrote, which its end stored, as
    // a task cancelled as it waited for its retry has them (before, neither).
    expect(summary.stdout).toContain(`  - long: cancelled by request\n    log: <log-dir>/${runId}/long.log (on ${worker.id})\n    last line:\n      started\n`);
    const cancelledJson = (JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { cancelled: Array<{ id: string }> }).cancelled;
    expect(cancelledJson.find((line) => line.id === "long")).toEqual({
      id: "long",
      reason: "cancel",
      message: "cancelled by request",
      running: true,
      logPath: `<log-dir>/${runId}/long.log (on ${worker.id})`,
      logFile: `${runId}/long.log`,
      workerId: worker.id,
      workerHost: hostname(),
      workerPid: worker.cli.child.pid,
      tail: ["started"],
    });
    expect(summary.stdout).toMatch(/after: its dependency "long" was asked to cancel while it ran/);

    // Cancelling what has already ended is no error, for one task as for the run: it says so.
    const twice = await taskq(["cancel", runId, "long"]);
    expect(twice).toMatchObject({ code: 0, stderr: `note: task "long" of run ${runId} has already ended (cancelled): nothing to cancel\n` });
    expect(JSON.parse(twice.stdout)).toEqual({ cancelled: [], cancelRequested: [] });
    const ended = await taskq(["cancel", runId]);
    expect(ended).toMatchObject({ code: 0, stderr: `note: run ${runId} has already ended (cancelled): nothing to cancel\n` });
    expect(JSON.parse(ended.stdout)).toEqual({ cancelled: [], cancelRequested: [] });
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("cancel RUN TASK of a task that ignores SIGTERM: SIGKILLed after the worker's kill grace, its cancel says so in status, as a local run's does", async () => {
    const file = await workflowFile("cancel-stubborn", `tasks:\n  stubborn: { run: "trap '' TERM; echo started; sleep 1000" }\n`);
    const worker = await startWorker(["-j", "1", "--lease", "3s", "--kill-grace", "1s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/stubborn | started`))).toBe(true);
    expect((await taskq(["cancel", runId, "stubborn"])).code).toBe(0);
    const status = await waitForRun(runId, 15_000);
    // Before, "cancelled by request" alone: the second of the kill grace it took went unexplained.
    const reason = "cancelled by request; killed with SIGKILL after the kill grace (1s): it did not stop on SIGTERM";
    expect(taskOf(status, "stubborn")).toMatchObject({ state: "cancelled", cancelReason: reason });
    expect((await taskq(["status", runId])).stdout).toContain(`\n  - stubborn: ${reason}\n`);
    // The worker's own line says it too, as its `released` lines do.
    const killed = "killed with SIGKILL after the kill grace (1s): it did not stop on SIGTERM";
    expect(await eventually(() => worker.stdout().includes(`cancel  ${runId}/stubborn: cancelled by request (${killed})\n`))).toBe(true);
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("cancel RUN of a task whose retry a stopping worker gave back: its note and status keep the failed attempt's error and name the worker whose log has it", async () => {
    // Attempt 1 fails (exit 7) on the first worker; attempt 2 hangs, and the worker's stop gives its lease back.
    const mark = path.join(ws.dir, `released-retry-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile(
      "cancel-released-retry",
      `tasks:
  r:
    run: 'echo "trying $TASKQ_ATTEMPT"; if [ "$TASKQ_ATTEMPT" = 2 ]; then touch "$MARK"; sleep 1000; fi; exit 7'
    retries: 5
    backoff: { base: 10ms, max: 10ms }
    env: { MARK: "${mark}" }
`,
    );
    const failing = await startWorker(["-j", "1", "--shutdown-timeout", "0.5s", "--kill-grace", "1s"]);
    const runId = await submit(file);
    expect(await eventually(() => existsSync(mark), 15_000)).toBe(true);
    expect((await stopWorker(failing)).stdout).toContain(`release ${runId}/r: lease given back for another worker`);
    expect(taskOf(await store.runStatus(runId), "r")).toMatchObject({ state: "queued", attempts: 1, lastError: "exited with code 7", workerId: null });

    const cancel = await taskq(["cancel", runId]);
    expect(cancel.code).toBe(0);
    // Before: "not retried (attempt 1 failed: released by a stopping worker)", and its log "(on its worker)".
    expect(cancel.stderr).toBe('note: "r" was waiting for its retry: not retried (attempt 1 failed: exited with code 7)\n');
    const reason = "cancelled by request: not retried (attempt 1 failed: exited with code 7)";
    expect((await taskq(["status", runId])).stdout).toContain(`\nCancelled (1):\n  - r: ${reason}\n    log: <log-dir>/${runId}/r.log (on ${failing.id})\n    last line of attempt 1:\n      trying 1\n`);
  });

  it("cancel RUN of a task waiting for its retry keeps its failed attempt's error, in the cancel's note, status and its JSON, as a local run's shutdown says it", async () => {
    // Attempts 1 and 2 fail (exit 7); the worker, stopped during attempt 2, records it and leases no third: r waits for its retry.
    const mark = path.join(ws.dir, `retry-wait-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile(
      "cancel-retrying",
      `tasks:
  r:
    run: 'echo "trying $TASKQ_ATTEMPT"; if [ "$TASKQ_ATTEMPT" = 2 ]; then touch "$MARK"; sleep 1; fi; exit 7'
    retries: 5
    backoff: { base: 10ms, max: 10ms }
    env: { MARK: "${mark}" }
  after: { run: echo after, dependsOn: r }
`,
    );
    const worker = await startWorker(["-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => existsSync(mark), 15_000)).toBe(true);
    expect((await stopWorker(worker)).stdout).toContain(`retry   ${runId}/r attempt 2/6 failed: exited with code 7; next attempt in `);
    expect(taskOf(await store.runStatus(runId), "r")).toMatchObject({ state: "queued", attempts: 2 });

    const cancel = await taskq(["cancel", runId]);
    expect(cancel.code).toBe(0);
    expect(JSON.parse(cancel.stdout)).toEqual({ cancelled: ["r", "after"], cancelRequested: [] });
    // Before, nothing: and status said "r: cancelled by request" alone, its two failed attempts gone from its words.
    expect(cancel.stderr).toBe('note: "r" was waiting for its retry: not retried (attempt 2 failed: exited with code 7)\n');
    const reason = "cancelled by request: not retried (attempt 2 failed: exited with code 7)";
    const status = await taskq(["status", runId]);
    expect(status.code).toBe(1);
    // Its log and the last line of its failed attempt, as a local run's summary gives a task its shutdown did not retry; on the
    // worker that ran that attempt (before, "(on its worker)": the task, queued again, had no worker).
    expect(status.stdout).toContain(`\nCancelled (2):\n  - r: ${reason}\n    log: <log-dir>/${runId}/r.log (on ${worker.id})\n    last line of attempt 2:\n      trying 2\n  - after: cancelled by request\n`);
    const json = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { cancelled: unknown[] };
    // For a program, the worker whose log logPath names, with its host and pid, as a dead letter gives them (before, logPath's words alone).
    expect(json.cancelled).toEqual([
      {
        id: "r",
        reason: "cancel",
        message: reason,
        logPath: `<log-dir>/${runId}/r.log (on ${worker.id})`,
        logFile: `${runId}/r.log`,
        workerId: worker.id,
        workerHost: hostname(),
        workerPid: worker.cli.child.pid,
        tail: ["trying 2"],
        tailAttempt: 2,
      },
      { id: "after", reason: "cancel", message: "cancelled by request" },
    ]);
  });

  it("run --store stopped by a second Ctrl-C: its summary and status say the tasks it cut short were SIGKILLed at once, as a local run's do", async () => {
    const file = await workflowFile("stopped-at-once", `tasks:\n  stubborn: { run: "trap '' TERM; echo started; sleep 1000" }\n  polite: { run: "echo started; sleep 1000" }\n`);
    const run = startCli(["run", file, "-j", "2", "--log-dir", ws.logs, "--shutdown-timeout", "60s", "--kill-grace", "60s"], { cwd: ws.dir, env: ENV });
    workers.push(run);
    expect(await eventually(() => run.stdout().includes("stubborn | started") && run.stdout().includes("polite | started"), 15_000)).toBe(true);
    const runId = /^\S+ run (\S+) submitted/.exec(run.stdout())![1]!;
    run.child.kill("SIGINT");
    expect(await eventually(() => run.stdout().includes("SIGINT received: no new task is leased"))).toBe(true);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    // Before, "aborted by shutdown" alone, in the summary and in status, where the tasks' logs said the SIGKILL.
    const reason = "aborted by shutdown; killed with SIGKILL at once, not after the kill grace";
    for (const id of ["stubborn", "polite"]) {
      expect(result.stdout).toContain(`\n  - ${id}: ${reason}\n`);
      expect(await readFile(path.join(ws.logs, runId, `${id}.log`), "utf8")).toMatch(/--- taskq: attempt 1 stopped: the worker is stopping; killed with SIGKILL at once, not after the kill grace ---\n$/);
    }
    const status = await store.runStatus(runId);
    expect(status.tasks.map((t) => [t.key, t.state, t.cancelReason])).toEqual([
      ["stubborn", "cancelled", reason],
      ["polite", "cancelled", reason],
    ]);
  });

  it("run --store given a signal just after its last task ended, before it saw its run end: the summary and exit code are those of a run that ended by itself, not interrupted", async () => {
    for (const [name, run, line, code, summary] of [
      ["ends-ok", "echo done", "ok      ", 0, "Summary: 1 succeeded, 0 failed, 0 cancelled in "],
      ["ends-failed", "exit 3", "FAILED  ", 1, "Summary: 0 succeeded, 1 failed, 0 cancelled in "],
    ] as const) {
      const file = await workflowFile(name, `tasks:\n  last: { run: "${run}" }\n`);
      const runId = `${name}-${randomBytes(3).toString("hex")}`;
      runIds.push(runId);
      const cli = startCli(["run", file, "--log-dir", ws.logs, "--run-id", runId], {
        cwd: ws.dir,
        env: { ...ENV, TASKQ_TEST_SIGNAL_AT_OUTPUT: "SIGTERM", TASKQ_TEST_SIGNAL_AT_OUTPUT_TEXT: `${line}${runId}/last` },
        nodeArgs: ["--require", path.join(FIXTURES, "signal-at-output.cjs")],
      });
      workers.push(cli);
      const result = await cli.done;
      // Before: exit 143 and "(interrupted by SIGTERM)", a run that had succeeded counted as stopped.
      expect({ code: result.code, signal: result.signal }).toEqual({ code, signal: null });
      expect(result.stdout).toContain(`note    run ${runId} had already ended (${code === 0 ? "succeeded" : "failed"}) when SIGTERM came: nothing was left to stop`);
      expect(result.stdout).toContain(summary);
      expect(result.stdout).not.toContain("interrupted");
      expect(result.stdout).not.toContain(`run ${runId} stopped`);
    }
  });

  it("run --store given a second signal while it reads the status of a run that had ended before the first: names taskq status, not a run that may still be live", async () => {
    const file = await workflowFile("ended-second", `tasks:\n  last: { run: "echo done" }\n`);
    const runId = `ended-second-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const cli = startCli(["run", file, "--log-dir", ws.logs, "--run-id", runId], {
      cwd: ws.dir,
      // SIGTERM as the last task's line is out, SIGINT as the run's status is then read (its first such statement).
      env: { ...ENV, TASKQ_TEST_SIGNAL_AT_OUTPUT: "SIGTERM", TASKQ_TEST_SIGNAL_AT_OUTPUT_TEXT: `ok      ${runId}/last`, TASKQ_TEST_SIGNAL_AT_QUERY: "SIGINT", TASKQ_TEST_SIGNAL_AT_QUERY_TEXT: "retry_in_ms" },
      nodeArgs: ["--require", path.join(FIXTURES, "signal-at-output.cjs"), "--require", path.join(FIXTURES, "signal-at-query.cjs")],
    });
    workers.push(cli);
    const result = await cli.done;
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 143, signal: null });
    // Before: "while run R was being stopped: stopping now; it may still be live: ...; cancel it with: taskq cancel R", of a run that had succeeded.
    expect(result.stderr).toContain(`taskq: SIGINT received after SIGTERM while the summary of run ${runId} was being read: stopping now; see it with: taskq status ${runId}`);
    expect(result.stderr).not.toContain("may still be live");
    expect((await store.runStatus(runId)).state).toBe("succeeded");
  });

  it("status and run --store JSON: a dead letter gives its log as a path under the worker's --log-dir and the worker's id, host and pid, besides logPath's words", async () => {
    const file = await workflowFile("log-file", "tasks:\n  bad: { run: 'echo boom; exit 4' }\n");
    const worker = await startWorker(["-j", "1"]);
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("failed");
    const status = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { deadLetters: Array<Record<string, unknown>> };
    // logPath stays as documented, words for people; logFile and workerId are for a program.
    expect(status.deadLetters).toEqual([
      expect.objectContaining({
        id: "bad",
        logPath: `<log-dir>/${runId}/bad.log (on ${worker.id})`,
        logFile: `${runId}/bad.log`,
        workerId: worker.id,
        workerHost: hostname(),
        workerPid: worker.cli.child.pid,
      }),
    ]);
    expect(await readFile(path.join(ws.logs, String(status.deadLetters[0]!.logFile)), "utf8")).toContain("boom\n");
    // dead-letters JSON names the worker as status does: its id, host and pid, side by side.
    const letters = (await taskq(["dead-letters", runId, "--output", "json"])).stdout.trim().split("\n");
    expect(letters).toHaveLength(1);
    const letter = JSON.parse(letters[0]!) as Record<string, unknown>;
    expect(letter).toMatchObject({ key: "bad", workerId: worker.id, workerHost: hostname(), workerPid: worker.cli.child.pid });
    expect(Object.keys(letter).slice(Object.keys(letter).indexOf("workerId"), Object.keys(letter).indexOf("workerId") + 3)).toEqual(["workerId", "workerHost", "workerPid"]);
    worker.cli.child.kill("SIGTERM");
    await worker.cli.done;

    // run --store, whose own worker ran it: logPath is this machine's path, and logFile the same under its --log-dir.
    const ownId = `log-file-${randomBytes(3).toString("hex")}`;
    runIds.push(ownId);
    const own = await taskq(["run", file, "--store", SECRET_URL, "--store-schema", SCHEMA, "--log-dir", ws.logs, "--run-id", ownId, "--output", "json"], { TASKQ_STORE: "" });
    expect(own.code).toBe(1);
    const records = own.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const ownWorker = records.find((record) => record.event === "worker");
    // The worker record says its host and pid as fields: a program need not read them out of its id.
    expect(ownWorker).toMatchObject({ workerId: expect.stringMatching(/-\d+-[0-9a-f]{6}$/), host: hostname(), pid: expect.any(Number) });
    expect(ownWorker!.workerId).toBe(`${hostname()}-${String(ownWorker!.pid)}-${String(ownWorker!.workerId).slice(-6)}`);
    expect(records.at(-1)).toMatchObject({
      event: "summary",
      deadLetters: [
        { id: "bad", logPath: path.join(ws.logs, ownId, "bad.log"), logFile: `${ownId}/bad.log`, workerId: ownWorker!.workerId, workerHost: hostname(), workerPid: ownWorker!.pid },
      ],
    });
  });

  it("run --store and status list the dead letters in the order they failed, as a local run's summary and dead-letters do", async () => {
    // Submitted first, failed last: the summary's first 20 dead letters are the first 20 to fail, in either mode.
    const file = await workflowFile("failure-order", "tasks:\n  slow: { run: 'sleep 1; echo slow; exit 3' }\n  fast: { run: 'echo fast; exit 4' }\n");
    const dead = (stdout: string) => (JSON.parse(stdout.trim().split("\n").at(-1)!) as { deadLetters: Array<{ id: string }> }).deadLetters.map((d) => d.id);
    const local = await taskq(["run", file, "-j", "2", "--store", "", "--log-dir", ws.logs, "--output", "json"]);
    expect(local.code).toBe(1);
    expect(dead(local.stdout)).toEqual(["fast", "slow"]);

    const runId = `failure-order-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const run = await taskq(["run", file, "-j", "2", "--log-dir", ws.logs, "--run-id", runId, "--output", "json"]);
    expect(run.code).toBe(1);
    expect(dead(run.stdout)).toEqual(["fast", "slow"]);
    expect(dead((await taskq(["status", runId, "--output", "json"])).stdout)).toEqual(["fast", "slow"]);
    expect((await taskq(["status", runId])).stdout).toMatch(/Dead letters \(2\):\n\s+\S+ fast: [^]*\n\s+\S+ slow: /);
    const letters = (await taskq(["dead-letters", runId, "--output", "json"])).stdout.trim().split("\n");
    expect(letters.map((line) => (JSON.parse(line) as { key: string }).key)).toEqual(["fast", "slow"]);
  });

  it("a dead letter whose last attempt printed nothing shows the lines of the attempt before, and says which, in run --store, status and dead-letters, as a local run's summary does", async () => {
    const file = await workflowFile(
      "quiet-last",
      `tasks:
  flaky:
    run: 'if [ "$TASKQ_ATTEMPT" = 1 ]; then echo first-line; echo second-line; exit 3; else exit 4; fi'
    retries: 1
    backoff: { base: 10ms, max: 10ms }
`,
    );
    const letter = (stdout: string) => (JSON.parse(stdout.trim().split("\n").at(-1)!) as { deadLetters: Array<Record<string, unknown>> }).deadLetters[0];
    const local = await taskq(["run", file, "--store", "", "--log-dir", ws.logs, "--output", "json"]);
    expect(local.code).toBe(1);
    expect(letter(local.stdout)).toMatchObject({ id: "flaky", attempts: 2, tail: ["first-line", "second-line"], tailAttempt: 1 });

    const runId = `quiet-last-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const run = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId, "--output", "json"]);
    expect(run.code).toBe(1);
    const fields = ({ id, attempts, error, tail, tailAttempt }: Record<string, unknown>) => ({ id, attempts, error, tail, tailAttempt });
    expect(fields(letter(run.stdout)!)).toEqual(fields(letter(local.stdout)!));
    expect(fields(letter((await taskq(["status", runId, "--output", "json"])).stdout)!)).toEqual(fields(letter(local.stdout)!));
    expect((await taskq(["status", runId])).stdout).toContain("    last 2 lines of attempt 1 (attempt 2 left none):\n      first-line\n      second-line\n");
    expect(JSON.parse((await taskq(["dead-letters", runId, "--output", "json"])).stdout)).toMatchObject({ key: "flaky", tail: ["first-line", "second-line"], tailAttempt: 1 });
    const { workerId } = JSON.parse((await taskq(["dead-letters", runId, "--output", "json"])).stdout) as { workerId: string };
    expect((await taskq(["dead-letters", runId])).stdout).toBe(
      `${runId}/flaky: exited with code 4 (2 attempts)\n  log: <log-dir>/${runId}/flaky.log (on ${workerId})\n  last 2 lines of attempt 1 (attempt 2 left none):\n    first-line\n    second-line\n`,
    );
  });

  it("a dead letter that printed nothing, or blank lines alone, says `no output` under its log in dead-letters, as run --store's summary and status say it", async () => {
    const file = await workflowFile("no-output", "tasks:\n  silent: { run: 'exit 7' }\n  blank: { run: 'echo; echo \"  \"; exit 1' }\n");
    const runId = `no-output-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const run = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/silent\.log\n {4}no output\n/);
    expect((await taskq(["status", runId])).stdout).toMatch(/silent\.log \(on [^)]+\)\n {4}no output\n/);
    const { workerId } = JSON.parse((await taskq(["dead-letters", runId, "--output", "json"])).stdout.split("\n")[0]!) as { workerId: string };
    const dead = await taskq(["dead-letters", runId]);
    expect(dead.stdout).toContain(`${runId}/silent: exited with code 7 (1 attempt)\n  log: <log-dir>/${runId}/silent.log (on ${workerId})\n  no output\n`);
    expect(dead.stdout).toContain(`${runId}/blank: exited with code 1 (1 attempt)\n  log: <log-dir>/${runId}/blank.log (on ${workerId})\n  no output\n`);
  });

  it("run --store's summary and status name the task a cascade came through to each dependent it cancelled, as a local run's summary does", async () => {
    const file = await workflowFile("via", "tasks:\n  a: { run: 'exit 3' }\n  b: { run: echo b, dependsOn: a }\n  c: { run: echo c, dependsOn: b }\n");
    const cancelled = (stdout: string) => (JSON.parse(stdout.trim().split("\n").at(-1)!) as { cancelled: unknown[] }).cancelled;
    const local = await taskq(["run", file, "--store", "", "--log-dir", ws.logs, "--output", "json"]);
    expect(local.code).toBe(1);
    expect(cancelled(local.stdout)).toEqual([
      { id: "b", reason: "dependency", dependency: "a", message: 'dependency "a" failed' },
      { id: "c", reason: "dependency", dependency: "a", message: 'dependency "a" failed (via "b")' },
    ]);

    const runId = `via-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const run = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId, "--output", "json"]);
    expect(run.code).toBe(1);
    expect(cancelled(run.stdout)).toEqual(cancelled(local.stdout));
    expect(cancelled((await taskq(["status", runId, "--output", "json"])).stdout)).toEqual(cancelled(local.stdout));
  });

  it("dead-letters lists a failed task with its last lines; redrive runs it again with fresh attempts, then its dependents", async () => {
    const marker = path.join(ws.dir, `fixed-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile(
      "redrive",
      `tasks:
  check:
    run: 'if [ -f "$MARKER" ]; then echo fixed; else echo "marker missing"; exit 1; fi'
    env: { MARKER: "${marker}" }
    retries: 1
    backoff: { base: 50ms, max: 50ms }
  deploy: { run: echo deploy, dependsOn: check }
  notify: { run: echo notify, dependsOn: deploy }
`,
    );
    const worker = await startWorker(["-j", "2"]);
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("failed");

    const dead = await taskq(["dead-letters", runId]);
    expect(dead.code).toBe(0);
    // Where its log is, as status says it: under the --log-dir of the worker that ran its last attempt.
    const { workerId } = JSON.parse((await taskq(["dead-letters", runId, "--output", "json"])).stdout) as { workerId: string };
    expect(dead.stdout).toBe(
      `${runId}/check: exited with code 1 (2 attempts)\n  log: <log-dir>/${runId}/check.log (on ${workerId})\n    marker missing\n  cancelled because of it: deploy, notify\n`,
    );
    const all = await taskq(["dead-letters", "--output", "json"]);
    const rows = all.stdout.trim().split("\n").map((line) => JSON.parse(line) as { runId: string; key: string; attempts: number });
    expect(rows.filter((row) => row.runId === runId)).toMatchObject([{ key: "check", attempts: 2, tail: ["marker missing"] }]);
    expect((await taskq(["status", runId])).code).toBe(1);
    // A dependent it cancelled is not what to redrive: the message names the task that is.
    expect(await taskq(["redrive", runId, "deploy"])).toMatchObject({
      code: 1,
      stderr: 'taskq: task "deploy" was cancelled (dependency "check" failed): only failed tasks can be redriven; redrive "check", and it waits for it again\n',
    });

    await writeFile(marker, "");
    const redriven = await taskq(["redrive", runId, "check"]);
    expect(redriven.code).toBe(0);
    expect(JSON.parse(redriven.stdout)).toEqual({ requeued: "check", reblocked: ["deploy", "notify"] });
    // --watch with --output json is NDJSON throughout: progress lines, then the summary.
    const watched = await taskq(["status", runId, "--watch", "--output", "json"]);
    expect(watched.code).toBe(0);
    const events = watched.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; state?: string });
    expect(events.at(-1)).toMatchObject({ event: "summary", state: "succeeded", exitCode: 0 });
    expect(events.slice(0, -1).every((event) => event.event === "progress")).toBe(true);
    const status = await waitForRun(runId);
    expect(status.state).toBe("succeeded");
    expect(taskOf(status, "check")).toMatchObject({ state: "succeeded", attempts: 1 });
    expect(status.tasks.map((task) => task.state)).toEqual(["succeeded", "succeeded", "succeeded"]);
    // Fresh attempts: the redriven run starts at 1 of 2 again; the dependents run after it.
    expect(starts(worker.stdout(), runId).map((match) => `${match[1]}#${match[2]}`)).toEqual(["check#1", "check#2", "check#1", "deploy#1", "notify#1"]);
    // The log keeps every attempt, those before the redrive too, though its attempt number starts again.
    expect(await readFile(path.join(ws.logs, runId, "check.log"), "utf8")).toBe(
      "marker missing\n--- taskq: attempt 1 exited with code 1 ---\n--- taskq: attempt 2 ---\nmarker missing\n--- taskq: attempt 2 exited with code 1 ---\n--- taskq: attempt 1 ---\nfixed\n",
    );
    expect((await taskq(["status", runId])).code).toBe(0);
    expect((await taskq(["dead-letters", runId])).stdout).toBe("no dead letters\n");
    const wrong = await taskq(["redrive", runId, "check"]);
    expect(wrong).toMatchObject({ code: 1, stderr: 'taskq: task "check" succeeded: only failed tasks can be redriven\n' });
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("a redriven task whose first attempt fails for good on another worker: status names that worker as where its log is, not the one of a retried attempt before the redrive", async () => {
    // Before the redrive, attempt 1 fails and is retried on the first worker; after it, attempt 1 fails for good (126: not retried) on the second.
    const marker = path.join(ws.dir, `redriven-elsewhere-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile(
      "redrive-elsewhere",
      `tasks:
  check:
    run: 'if [ -f "$MARKER" ]; then echo "not executable here"; exit 126; fi; echo "marker missing"; exit 1'
    env: { MARKER: "${marker}" }
    retries: 1
    backoff: { base: 10ms, max: 10ms }
`,
    );
    const first = await startWorker(["-j", "1"]);
    const runId = await submit(file);
    expect(taskOf(await waitForRun(runId), "check")).toMatchObject({ state: "failed", attempts: 2, workerId: first.id });
    expect((await stopWorker(first)).code).toBe(143);
    await writeFile(marker, "");
    expect((await taskq(["redrive", runId, "check"])).code).toBe(0);
    const second = await startWorker(["-j", "1"]);
    expect(taskOf(await waitForRun(runId), "check")).toMatchObject({ state: "failed", attempts: 1, exitCode: 126, workerId: second.id });
    // Before, status said "(on <the first worker>)", which has no attempt of the redrive; dead-letters said the second.
    const log = `log: <log-dir>/${runId}/check.log (on ${second.id})`;
    expect((await taskq(["status", runId])).stdout).toContain(log);
    expect((await taskq(["dead-letters", runId])).stdout).toContain(log);
    const json = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { deadLetters: { logPath: string; workerId: string }[] };
    expect(json.deadLetters).toMatchObject([{ logPath: `<log-dir>/${runId}/check.log (on ${second.id})`, workerId: second.id }]);
    expect((await stopWorker(second)).code).toBe(143);
  });

  // It said so twice: its own line, then the generic `taskq: cannot write to stdout (ENOSPC)`.
  it.skipIf(!existsSync("/dev/full"))("submit whose stdout cannot be written (a full disk) exits 1 and says on stderr, in one line, which run it submitted", async () => {
    const file = await workflowFile("lost-id", "tasks:\n  a: { run: echo a }\n");
    for (const args of [["submit", file], ["submit", file, "--output", "json"]]) {
      const full = openSync("/dev/full", "w");
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(BIN, args, { cwd: ws.dir, env: { ...process.env, ...ENV, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", full, "pipe"] });
        let stderr = "";
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stderr }));
      }).finally(() => closeSync(full));
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^taskq: run \S+ was submitted, but its id could not be written to stdout \(ENOSPC\)\n$/);
      const runId = /^taskq: run (\S+)/.exec(result.stderr)?.[1];
      const status = await taskq(["status", runId!, "--output", "json"]);
      expect(JSON.parse(status.stdout.trim().split("\n").at(-1)!)).toMatchObject({ runId, state: "running" });
      expect((await taskq(["cancel", runId!])).code).toBe(0);
    }
  });

  it.skipIf(!existsSync("/dev/full"))("cancel, redrive and prune whose stdout cannot be written (a full disk) exit 1 and say on stderr, in one line, what they changed", async () => {
    const toFull = async (args: string[]) => {
      const full = openSync("/dev/full", "w");
      return new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(BIN, args, { cwd: ws.dir, env: { ...process.env, ...ENV, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", full, "pipe"] });
        let stderr = "";
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stderr }));
      }).finally(() => closeSync(full));
    };
    const file = await workflowFile("lost-change", 'tasks:\n  a: { run: "exit 3" }\n  b: { run: "true", dependsOn: a }\n  later: { run: "true", delay: 1h }\n');
    const runId = await submit(file);
    const cancelled = await toFull(["cancel", runId, "later"]);
    expect(cancelled).toEqual({ code: 1, stderr: `taskq: run ${runId}: cancelled later, but that could not be written to stdout (ENOSPC)\n` });
    const worker = await startWorker(["-j", "1"]);
    expect((await waitForRun(runId)).state).toBe("failed");
    const redriven = await toFull(["redrive", runId, "a"]);
    expect(redriven).toEqual({ code: 1, stderr: `taskq: run ${runId}: task "a" was queued again (waiting for it again: b), but that could not be written to stdout (ENOSPC)\n` });
    expect((await waitForRun(runId)).state).toBe("failed");
    expect((await stopWorker(worker)).code).toBe(143);
    // prune too: the run is deleted all the same, and stderr says so.
    await store.pool.query(`UPDATE "${SCHEMA}".runs SET finished_at = now() - interval '8 days' WHERE id = $1`, [runId]);
    const pruned = await toFull(["prune", "--older-than", "7d"]);
    expect(pruned.code).toBe(1);
    expect(pruned.stderr).toMatch(/^taskq: pruned 1 run ended before \S+, but that could not be written to stdout \(ENOSPC\)\n$/);
    expect((await taskq(["status", runId])).stderr).toBe(`taskq: no run "${runId}" in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA)\n`);
  });

  it("dead-letters names the first 50 tasks a dead letter cancelled and counts the rest, as a run's summary does; JSON lists them all", async () => {
    const dependents = Array.from({ length: 60 }, (_, i) => `  d${i}: { run: "true", dependsOn: root }\n`).join("");
    const file = await workflowFile("many-victims", `tasks:\n  root: { run: "exit 3" }\n${dependents}`);
    const worker = await startWorker(["-j", "2"]);
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("failed");
    const dead = await taskq(["dead-letters", runId]);
    expect(dead.code).toBe(0);
    const shown = Array.from({ length: 50 }, (_, i) => `d${i}`).join(", ");
    const json = await taskq(["dead-letters", runId, "--output", "json"]);
    const rows = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { cancelledDependents: string[]; workerId: string });
    expect(dead.stdout).toBe(`${runId}/root: exited with code 3 (1 attempt)\n  log: <log-dir>/${runId}/root.log (on ${rows[0]!.workerId})\n  no output\n  cancelled because of it: ${shown}, ... and 10 more\n`);
    expect(rows).toHaveLength(1);
    expect([...rows[0]!.cancelledDependents].sort()).toEqual(Array.from({ length: 60 }, (_, i) => `d${i}`).sort());
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("dead-letters and status --output json write a task's C1 controls escaped (\\u009b), as run's JSON does: NDJSON read on a terminal cannot obey them", async () => {
    // printf writes C2 9B, U+009B (CSI) as UTF-8, which JSON.stringify leaves as it is.
    const file = await workflowFile("c1-dead", `tasks:\n  csi: { run: ${JSON.stringify(String.raw`printf 'before \302\2332J after\n'; exit 4`)} }\n`);
    const worker = await startWorker(["-j", "1"]);
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("failed");
    const dead = await taskq(["dead-letters", runId, "--output", "json"]);
    const status = await taskq(["status", runId, "--output", "json"]);
    for (const result of [dead, status]) {
      expect(result.stdout).toContain("before \\u009b2J after");
      expect(result.stdout).not.toContain("\u009b");
    }
    expect((JSON.parse(dead.stdout) as { tail: string[] }).tail).toEqual(["before \u009b2J after"]);
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it.skipIf(!existsSync("/usr/bin/script"))("dead-letters keeps an error quoting a folder's line break on its line, and on a terminal a task's last lines cannot clear the screen", async () => {
    const file = await workflowFile(
      "noisy-dead",
      `tasks:
  noisy: { run: ${JSON.stringify(String.raw`printf 'a\033[2J\033]0;title\007b\n'; exit 4`)} }
  lost: { run: "true", cwd: "no\\nsuch", dependsOn: first }
  first: { run: "true" }
`,
    );
    const worker = await startWorker(["-j", "2"]);
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("failed");
    const piped = await taskq(["dead-letters", runId]);
    expect(piped.code).toBe(0);
    // Into a pipe the last lines go as written (as in the log); the error is one line either way.
    expect(piped.stdout).toMatch(new RegExp(`^${runId}/noisy: exited with code 4 \\(1 attempt\\)\n  log: <log-dir>/${runId}/noisy\\.log \\(on \\S+\\)\n    a\x1b\\[2J\x1b\\]0;title\x07b\n`, "m"));
    expect(piped.stdout).toContain(`${runId}/lost: could not start: working directory ${path.join(ws.dir, "no")}\\nsuch does not exist`);
    expect(piped.stdout.split("\n").filter((line) => line.startsWith("such"))).toEqual([]);
    // On a terminal (util-linux script), cleaned as status shows them.
    const command = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} dead-letters ${runId}`;
    const shown = await new Promise<string>((resolve) => {
      const child = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], { cwd: ws.dir, env: { ...process.env, ...ENV }, stdio: ["ignore", "pipe", "inherit"] });
      let text = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      child.on("close", () => resolve(text));
    });
    expect(shown.replace(/\r\n/g, "\n")).toMatch(new RegExp(`^${runId}/noisy: exited with code 4 \\(1 attempt\\)\n  log: <log-dir>/${runId}/noisy\\.log \\(on \\S+\\)\n    ab\n`, "m"));
    for (const control of ["\x1b[2J", "\x1b]0;", "\x07"]) expect(shown).not.toContain(control);
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("status shows a running task's last lines as its worker's last heartbeat stored them (JSON: all of them), newer ones as it prints more", async () => {
    const go = path.join(ws.dir, `go-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile(
      "watched",
      `tasks:
  job: { run: 'for i in 1 2 3 4; do echo "step $i"; done; while [ ! -f "$GO" ]; do sleep 0.05; done; echo deploying; sleep 1000', env: { GO: "${go}" } }
`,
    );
    const worker = await startWorker(["-j", "1", "--lease", "1s"]);
    const runId = await submit(file);
    const shows = async (text: string) => {
      let status = await taskq(["status", runId]);
      const seen = await eventually(async () => (status = await taskq(["status", runId])).stdout.includes(text), 10_000);
      return seen ? status.stdout : `never: ${status.stdout}`;
    };
    // The last three of its lines, under its line; a heartbeat comes every third of the lease.
    expect(await shows("step 4")).toMatch(new RegExp(`▶ job: attempt 1/1 on ${worker.id}, for \\S+\n    last 3 lines \\(at its last heartbeat\\):\n      step 2\n      step 3\n      step 4\n`));
    const json = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { running: { id: string; lastLines?: string[] }[] };
    expect(json.running).toMatchObject([{ id: "job", lastLines: ["step 1", "step 2", "step 3", "step 4"] }]);
    await writeFile(go, "");
    expect(await shows("deploying")).toContain("      step 3\n      step 4\n      deploying\n");
    await taskq(["cancel", runId]);
    expect((await waitForRun(runId)).state).toBe("cancelled");
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("status says when a running task's lease has run out (its worker SIGKILLed, no other worker to sweep it), not only for how long it runs", async () => {
    const file = await workflowFile("orphaned", "tasks:\n  job: { run: 'echo started; sleep 1000', retries: 1 }\n  last: { run: 'sleep 1000' }\n");
    const worker = await startWorker(["-j", "1", "--lease", "1s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | started`))).toBe(true);
    const holding = await taskq(["status", runId]);
    expect(holding.stdout).toMatch(new RegExp(`▶ job: attempt 1/2 on ${worker.id}, for \\S+\n`));
    worker.cli.child.kill("SIGKILL");
    await worker.cli.done;
    let status = await taskq(["status", runId]);
    expect(await eventually(async () => (status = await taskq(["status", runId])).stdout.includes("its lease ran out"), 10_000)).toBe(true);
    expect(status.stdout).toMatch(
      new RegExp(`▶ job: attempt 1/2 on ${worker.id}, for \\S+; its lease ran out \\S+ ago \\(the worker is gone, stalled or cut off from the database\\): a worker's sweep queues it again\n`),
    );
    const json = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { running: { id: string; leaseExpiredMs?: number }[] };
    expect(json.running).toMatchObject([{ id: "job", leaseExpiredMs: expect.any(Number) as number }]);
    // A statement begun since the lease ran out, by a session named as a `run --store` of the same run id would be
    // (another process of that run id): no sign that the worker that held the lease is there, waiting on the database.
    const other = new pg.Client({ connectionString: DATABASE_URL, application_name: storeApplicationName(`taskq run ${runId}`, SCHEMA) });
    await other.connect();
    // Held until the status below has been read: a statement of 6 s, before, could end first on a loaded machine (a
    // command's start), and the status then read saw no statement at all.
    const sleeping = other.query("SELECT pg_sleep(60)").catch(() => undefined);
    try {
      const active = async () => (await sql<{ n: number }>(store, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", [storeApplicationName(`taskq run ${runId}`, SCHEMA)]))[0]!.n === 1;
      expect(await eventually(active, 5_000)).toBe(true);
      const meanwhile = await taskq(["status", runId]);
      expect(meanwhile.stdout).toContain("(the worker is gone, stalled or cut off from the database): a worker's sweep queues it again\n");
      expect(meanwhile.stdout).not.toContain("waits on the database");
      expect(await active()).toBe(true);
    } finally {
      // Its statement ended by the server too, not left to run its minute out once the session is closed.
      await sql(store, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [storeApplicationName(`taskq run ${runId}`, SCHEMA)]);
      await other.end();
    }
    await sleeping;
    await cancelStrandedRun(runId);
  });

  it("status of a task whose lease ran out while its worker's record of it waits on the database (its row locked) says so, not that the worker is gone; the record then goes through", async () => {
    const go = path.join(ws.dir, "record-held.go");
    const file = await workflowFile("record-held", `tasks:\n  job: { run: 'echo started; until [ -e ${go} ]; do sleep 0.1; done', retries: 1 }\n`);
    const worker = await startWorker(["-j", "1", "--lease", "2s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | started`))).toBe(true);
    // Another session holds the task's row (a long transaction, a slow migration): the worker's renewals and its record wait on it.
    const holder = await store.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${SCHEMA}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
      await writeFile(go, "");
      let status = await taskq(["status", runId]);
      expect(await eventually(async () => (status = await taskq(["status", runId])).stdout.includes("its lease ran out"), 15_000)).toBe(true);
      expect(status.stdout).toMatch(
        new RegExp(
          `▶ job: attempt 1/2 on ${worker.id}, for \\S+; its lease ran out \\S+ ago while its worker waits on the database \\(a statement of its, for \\S+: ` +
            `a renewal, or the record of how the attempt ended, which may still go through\\); if it does not, a worker's sweep queues it again\n`,
        ),
      );
      expect(status.stdout).not.toContain("gone");
      const json = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { running: unknown[] };
      expect(json.running).toMatchObject([{ id: "job", leaseExpiredMs: expect.any(Number) as number, workerWaitingMs: expect.any(Number) as number }]);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      holder.release();
    }
    // As said: the worker was there, and its record of the attempt went through (no sweep, no second attempt).
    expect((await waitForRun(runId)).tasks[0]).toMatchObject({ state: "succeeded", attempts: 1 });
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("status of a task whose cancel was asked for while its worker is gone says a sweep cancels it, not that it queues it again", async () => {
    const file = await workflowFile("orphan-cancelled", "tasks:\n  job: { run: 'echo started; sleep 1000', retries: 1 }\n");
    // A lease long beside the cancel's own start and query, which must come before it runs out. Before, a lease of 4 s
    // left the cancel less than 3 s from the worker's kill (a renewal is due every third of it), which a loaded
    // machine's start of a command could pass: the cancel found the lease run out already.
    const worker = await startWorker(["-j", "1", "--lease", "30s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | started`))).toBe(true);
    worker.cli.child.kill("SIGKILL");
    await worker.cli.done;
    const cancel = await taskq(["cancel", runId]);
    expect(cancel.stdout).toBe(`{"cancelled":[],"cancelRequested":["job"]}\n`);
    // Not only that its worker stops it: that worker is gone, and nothing happens until the lease runs out.
    expect(withoutNoSweepNote(cancel.stderr)).toMatch(new RegExp(`^note: "job" runs on worker ${worker.id}, .*the task stays running until its lease runs out, in ([1-9]|[12]\\d|30)s, and then the next sweep of any running worker cancels it\n$`));
    // Asked again once the lease ran out (its end moved to a moment ago, as the 30 s would have it): as status says it, the
    // worker is gone, stalled or cut off from the database, and a sweep cancels it.
    await store.pool.query(`UPDATE "${SCHEMA}".tasks SET lease_expires_at = now() - interval '2 seconds' WHERE run_id = $1`, [runId]);
    const again = await taskq(["cancel", runId]);
    expect(withoutNoSweepNote(again.stderr)).toMatch(
      new RegExp(`^note: "job" on worker ${worker.id}: its lease ran out \\S+ ago \\(the worker is gone, stalled or cut off from the database\\): a worker's sweep cancels it\n$`),
    );
    let status = await taskq(["status", runId]);
    expect(await eventually(async () => (status = await taskq(["status", runId])).stdout.includes("its lease ran out"), 10_000)).toBe(true);
    expect(status.stdout).toMatch(
      new RegExp(`▶ job: attempt 1/2 on ${worker.id}, for \\S+, cancel requested; its lease ran out \\S+ ago \\(the worker is gone, stalled or cut off from the database\\): a worker's sweep cancels it\n`),
    );
    const json = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { running: unknown[] };
    expect(json.running).toMatchObject([{ id: "job", cancelRequested: true, leaseExpiredMs: expect.any(Number) as number }]);
    // As said: the sweep ends it cancelled, its attempts left unused.
    await store.sweepOrphans();
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "cancelled", cancelReason: "cancelled by request" });
  });

  it("cancel of a task whose lease ran out while a statement of its worker's still waits on the database says, as status does, that its record may still go through, not that the worker is gone", async () => {
    const file = await workflowFile("cancel-waiting", "tasks:\n  job: { run: 'echo started; sleep 1000', retries: 1 }\n");
    const worker = await startWorker(["-j", "1", "--lease", "3s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | started`))).toBe(true);
    worker.cli.child.kill("SIGKILL");
    await worker.cli.done;
    // A statement of that worker's begun before its lease ran out (its record or a renewal held up by a lock, a slow database),
    // as pg_stat_activity shows one: a session named as the worker names its own, its statement still in progress.
    const name = storeApplicationName(`taskq worker ${worker.id}`, SCHEMA);
    const session = new pg.Client({ connectionString: DATABASE_URL, application_name: name });
    await session.connect();
    const waiting = session.query("SELECT pg_sleep(60)").catch(() => undefined);
    try {
      const active = async () => (await sql<{ n: number }>(store, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", [name]))[0]!.n === 1;
      expect(await eventually(active, 5_000)).toBe(true);
      let status = await taskq(["status", runId]);
      expect(await eventually(async () => (status = await taskq(["status", runId])).stdout.includes("its lease ran out"), 10_000)).toBe(true);
      expect(status.stdout).toContain("while its worker waits on the database");
      const cancel = await taskq(["cancel", runId]);
      expect(cancel.stdout).toBe(`{"cancelled":[],"cancelRequested":["job"]}\n`);
      expect(cancel.stderr).toMatch(
        new RegExp(
          `^note: "job" on worker ${worker.id}: its lease ran out \\S+ ago while its worker waits on the database \\(a statement of its, for \\S+: ` +
            `a renewal, or the record of how the attempt ended, which may still go through\\); if it does not, a worker's sweep cancels it\n$`,
        ),
      );
      expect(cancel.stderr).not.toContain("gone");
    } finally {
      await sql(store, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [name]);
      await waiting;
      await session.end();
    }
    // That statement ended, no session of the worker's is left: gone, stalled or cut off, as status says it too.
    const again = await taskq(["cancel", runId]);
    expect(withoutNoSweepNote(again.stderr)).toMatch(
      new RegExp(`^note: "job" on worker ${worker.id}: its lease ran out \\S+ ago \\(the worker is gone, stalled or cut off from the database\\): a worker's sweep cancels it\n$`),
    );
    expect((await taskq(["status", runId])).stdout).toContain("(the worker is gone, stalled or cut off from the database): a worker's sweep cancels it\n");
    await store.sweepOrphans();
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "cancelled", cancelReason: "cancelled by request" });
  });

  it("cancel and a resubmit while another session holds a task's row (an open psql transaction) give up within seconds naming that session, change nothing, and keep no running task from its lease", { timeout: 90_000 }, async () => {
    const file = await workflowFile("row-held", "tasks:\n  a: { run: 'echo started; sleep 1000' }\n  b: { run: 'echo b', dependsOn: [a] }\n");
    const worker = await startWorker(["-j", "1", "--lease", "3s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/a | started`))).toBe(true);
    // Another session holds b's row (SELECT ... FOR UPDATE in a transaction left open): cancel locks a's row first,
    // then waits on b's; a resubmit shares both. Meanwhile a's worker must renew its lease, every second.
    const holder = new pg.Client({ connectionString: DATABASE_URL, application_name: "row-holder" });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${SCHEMA}".tasks WHERE run_id = $1 AND key = 'b' FOR UPDATE`, [runId]);
      const { pid } = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!;
      const locked = (operation: string, undone: string) =>
        new RegExp(
          `^taskq: ${operation} failed: task "b" of run ${runId} is locked by another session \\(pid ${pid}, application_name "row-holder", client [^,()]+, its transaction open for \\S+\\); ` +
            `each of \\d+ tries over \\S+ gave up after waiting \\S+ for it, so as not to keep running tasks' rows from their workers' lease renewals: ${undone}; ` +
            `try again once that session's transaction has ended\n$`,
        );
      let sent = performance.now();
      const cancel = await taskq(["cancel", runId]);
      // Its renewals waited on the cancel's lock on a's row: a 30 s wait cost a its lease ("LOST", then killed and failed).
      expect(worker.stdout()).not.toContain("LOST");
      expect(cancel.stderr).toMatch(locked("cancelRun", "nothing was cancelled"));
      expect(performance.now() - sent).toBeLessThan(15_000);
      expect([cancel.code, cancel.stdout]).toEqual([1, ""]);
      sent = performance.now();
      const resubmit = await taskq(["submit", file, "--run-id", runId]);
      expect(resubmit.stderr).toMatch(locked("submitRun", "nothing was submitted"));
      expect(performance.now() - sent).toBeLessThan(15_000);
      expect([resubmit.code, resubmit.stdout]).toEqual([1, ""]);
      // Over three leases gone by, a still runs on its worker, its lease renewed: no cancel asked, b still waits for it.
      expect(worker.stdout()).not.toContain("LOST");
      const status = await store.runStatus(runId);
      expect(taskOf(status, "a")).toMatchObject({ state: "running", attempts: 1, workerId: worker.id });
      expect(taskOf(status, "a").cancelRequested).toBeUndefined();
      expect(taskOf(status, "a").leaseExpiredMs).toBeUndefined();
      expect(taskOf(status, "b")).toMatchObject({ state: "blocked" });
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    // The lock gone, the same cancel goes through whole: b at once, a stopped by its worker at its next heartbeat.
    const again = await taskq(["cancel", runId]);
    expect([again.code, again.stdout]).toEqual([0, `{"cancelled":["b"],"cancelRequested":["a"]}\n`]);
    const ended = await waitForRun(runId);
    expect(ended.state).toBe("cancelled");
    expect(taskOf(ended, "a")).toMatchObject({ state: "cancelled", cancelReason: "cancelled by request", attempts: 1 });
    expect(worker.stdout()).not.toContain("LOST");
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("records of ends each waiting on a row another session holds take the worker's pool, never a running task's lease renewals; once the lock goes they go through", { timeout: 90_000 }, async () => {
    const fails = Array.from({ length: 8 }, (_, i) => i + 1);
    const yaml = ["tasks:", "  r: { run: 'echo started; sleep 1000' }", ...fails.flatMap((n) => [`  f${n}: { run: 'sleep 2; exit 1' }`, `  d${n}: { run: 'echo d', dependsOn: [f${n}] }`])].join("\n");
    const file = await workflowFile("ends-wait", `${yaml}\n`);
    const runId = await submit(file);
    // Another session holds every d* row: recording f*'s failures (which cancel their dependents) waits on it, 8 at once,
    // 7 on the pool's connections (its listener has the 8th) and one for a connection.
    const holder = new pg.Client({ connectionString: DATABASE_URL, application_name: "row-holder" });
    await holder.connect();
    const worker = await startWorker(["-j", "9", "--lease", "3s"]);
    let sweeper: Awaited<ReturnType<typeof startWorker>> | undefined;
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "${SCHEMA}".tasks WHERE run_id = $1 AND key LIKE 'd%' FOR UPDATE`, [runId]);
      expect(await eventually(() => worker.stdout().includes(`${runId}/r | started`), 15_000)).toBe(true);
      // Another worker of the fleet, with nothing to run, sweeps every 1.5 s: the lease of the end waiting for a
      // connection is renewed all the while (its record not yet sent holds no row), or that sweep takes the task.
      sweeper = await startWorker(["-j", "1", "--lease", "3s"]);
      const waiting = async () =>
        // (Not in the holder's transaction, which would see pg_stat_activity as it was at its first look.)
        (await store.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [storeApplicationName(`taskq worker ${worker.id}`, SCHEMA)])).rows[0]!.n;
      expect(await eventually(async () => (await waiting()) === 7, 15_000)).toBe(true);
      // While the 8 records wait, r keeps its lease, renewed every second: its end, as the database has it, moves on by more
      // than two leases (without renewals it would have run out twice over), however long the renewals take to come.
      const leaseEnd = async (): Promise<number> =>
        (await store.pool.query<{ at: number }>(`SELECT extract(epoch FROM lease_expires_at)::float8 AS at FROM "${SCHEMA}".tasks WHERE run_id = $1 AND key = 'r'`, [runId])).rows[0]!.at;
      const heldFrom = await leaseEnd();
      expect(await eventually(async () => (await leaseEnd()) > heldFrom + 6, 30_000)).toBe(true);
      expect(await waiting()).toBe(7);
      expect(worker.stdout()).not.toContain("LOST");
      const status = await store.runStatus(runId);
      expect(taskOf(status, "r")).toMatchObject({ state: "running", attempts: 1, workerId: worker.id });
      expect(taskOf(status, "r").leaseExpiredMs).toBeUndefined();
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    // The lock gone, the 8 failures are recorded as they ended, their dependents settled; r runs on.
    let latest = await store.runStatus(runId);
    expect(await eventually(async () => ((latest = await store.runStatus(runId)), fails.every((n) => taskOf(latest, `f${n}`).state === "failed")), 15_000)).toBe(true);
    expect(fails.map((n) => [taskOf(latest, `f${n}`).attempts, taskOf(latest, `d${n}`).state])).toEqual(fails.map(() => [1, "cancelled"]));
    // Each said once its record's reply is back (a moment after the database shows it: the run's state is refreshed first).
    const said = (n: number) => worker.stdout().includes(`FAILED  ${runId}/f${n}: exited with code 1`);
    await eventually(() => fails.every(said), 10_000);
    expect(fails.filter((n) => !said(n))).toEqual([]);
    expect(worker.stdout() + worker.cli.stderr()).not.toMatch(/LOST|did not answer|lease expired|not recorded/);
    expect(sweeper.stdout()).not.toMatch(/lease expired/);
    expect((await stopWorker(sweeper)).code).toBe(143);
    expect(taskOf(latest, "r")).toMatchObject({ state: "running", attempts: 1 });
    await store.cancelRun(runId);
    expect((await waitForRun(runId)).state).toBe("failed");
    expect(worker.stdout()).not.toContain("LOST");
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("SIGTERM to a worker run by a task of another taskq: its note says its stop times were shortened to fit that one's kill grace", async () => {
    // It said "running tasks have 1.6s to finish", as if its flags were 10s and 5s by mistake, with no word of why.
    const worker = await startWorker(["-j", "1"], { TASKQ_KILL_GRACE_MS: "4000" });
    const left = await stopWorker(worker);
    expect(left.code).toBe(143);
    expect(left.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} note {4}SIGTERM received: no new task is leased; running tasks have 1\.6s to finish; shortened: the taskq running this one kills it 4s after its SIGTERM \(TASKQ_KILL_GRACE_MS\)\n/m);
  });

  it("SIGTERM: the worker stops leasing, kills its task after --shutdown-timeout and gives the lease back; another worker runs it at once", async () => {
    const file = await hangsOnFirstRun("handover");
    const leaving = await startWorker(["-j", "1", "--lease", "30s", "--shutdown-timeout", "1s", "--kill-grace", "1s"]);
    const runId = await submit(file);
    expect(await eventually(() => leaving.stdout().includes(`${runId}/job | first`))).toBe(true);
    const staying = await startWorker(["-j", "1", "--lease", "30s"]);

    const signalledAt = Date.now();
    const left = await stopWorker(leaving);
    expect(left.code).toBe(143);
    // Its notes in the `note` column, as a local run's plain lines have them (they read "note: ...", or had no label).
    expect(left.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} note {4}SIGTERM received: no new task is leased; running tasks have 1s to finish\n/m);
    // As a local run says it: why the task gets SIGTERM now.
    const passed = left.stdout.search(/^\d\d:\d\d:\d\d\.\d{3} note {4}the 1s to finish have passed: stopping the running task \(SIGTERM, then SIGKILL 1s later\)\n/m);
    expect(passed).toBeGreaterThan(left.stdout.indexOf("SIGTERM received"));
    expect(passed).toBeLessThan(left.stdout.indexOf(`release ${runId}/job`));
    expect(left.stdout).toContain(`release ${runId}/job: lease given back for another worker`);
    const status = await waitForRun(runId, 10_000);
    // Well within the 30 s lease: the lease was released, not left to expire.
    expect(Date.now() - signalledAt).toBeLessThan(6_000);
    // The interrupted attempt is not counted: with no retries, the task still succeeds, on attempt 1.
    expect(taskOf(status, "job")).toMatchObject({ state: "succeeded", attempts: 1, maxAttempts: 1, workerId: staying.id });
    expect(staying.stdout()).toContain(`start   ${runId}/job (attempt 1/1)`);
    expect(staying.stdout()).toContain(`${runId}/job | second run`);
    // Both workers write to this machine's log folder: the attempt given back (not counted) keeps its output.
    expect(await readFile(path.join(ws.logs, runId, "job.log"), "utf8")).toBe("first\n--- taskq: attempt 1 stopped: the worker is stopping ---\n--- taskq: attempt 1 ---\nsecond run\n");
    expect((await stopWorker(staying)).code).toBe(143);
  });

  it("SIGTERM to a worker whose task ignores it: the lease goes back only once the task is killed, so it never runs on two workers at once", async () => {
    const marks = path.join(ws.dir, `stubborn-${randomBytes(3).toString("hex")}`);
    // The first copy ignores SIGTERM and writes a mark every 0.1 s until it is killed; the second ends at once.
    const file = await workflowFile(
      "stubborn",
      `tasks:
  job:
    run: 'if [ -f "$MARKS" ]; then echo "second $(date +%s%3N)" >> "$MARKS"; else trap "" TERM; while :; do echo "first $(date +%s%3N)" >> "$MARKS"; sleep 0.1; done; fi'
    env: { MARKS: "${marks}" }
`,
    );
    const leaving = await startWorker(["-j", "1", "--lease", "30s", "--shutdown-timeout", "1s", "--kill-grace", "2s"]);
    const runId = await submit(file);
    expect(await eventually(async () => (await readFile(marks, "utf8").catch(() => "")).includes("first"))).toBe(true);
    const staying = await startWorker(["-j", "1", "--lease", "30s"]);

    const left = await stopWorker(leaving);
    const exitedAt = Date.now();
    expect(left.code).toBe(143);
    expect(taskOf(await waitForRun(runId, 20_000), "job")).toMatchObject({ state: "succeeded", attempts: 1, workerId: staying.id });
    // The first copy's last mark (it was killed by SIGKILL after the 2 s grace) came before the second copy started.
    const written = (await readFile(marks, "utf8")).trim().split("\n").map((line) => line.split(" "));
    const lastFirst = Math.max(...written.filter(([copy]) => copy === "first").map(([, at]) => Number(at)));
    const second = written.filter(([copy]) => copy === "second").map(([, at]) => Number(at));
    expect(second).toHaveLength(1);
    expect(lastFirst).toBeLessThan(second[0]!);
    const lines = left.stdout.trimEnd().split("\n");
    expect(lines.filter((line) => line.includes(`release ${runId}/job: lease given back for another worker`))).toHaveLength(1);
    // Said last, and the process ends right after: nothing of the task was left to stop.
    expect(lines.at(-1)).toMatch(/ stopped \(requested\)$/);
    const stoppedFor = exitedAt - clockTime(lines.at(-1)!.slice(0, 12), exitedAt);
    expect(stoppedFor).toBeLessThan(2_000);
    // Its log says the stop took the SIGKILL, as a local run's does.
    expect(await readFile(path.join(ws.logs, runId, "job.log"), "utf8")).toBe(
      "--- taskq: attempt 1 stopped: the worker is stopping; killed with SIGKILL after the kill grace (2s): it did not stop on SIGTERM ---\n--- taskq: attempt 1 ---\n",
    );
    expect((await stopWorker(staying)).code).toBe(143);
  });

  it("a second SIGTERM kills the task at once and still gives its lease back, the attempt not counted", async () => {
    const file = await hangsOnFirstRun("twice");
    const leaving = await startWorker(["-j", "1", "--lease", "30s", "--shutdown-timeout", "60s", "--kill-grace", "60s"]);
    const runId = await submit(file);
    expect(await eventually(() => leaving.stdout().includes(`${runId}/job | first`))).toBe(true);
    const signalledAt = Date.now();
    leaving.cli.child.kill("SIGTERM");
    expect(await eventually(() => leaving.stdout().includes("SIGTERM received:"))).toBe(true);
    leaving.cli.child.kill("SIGTERM");
    const left = await leaving.cli.done;
    // Far inside the 60 s shutdown timeout and kill grace: nothing waited for them.
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    expect(left.code).toBe(143);
    // The kill said, as the task's log says it.
    expect(left.stdout).toContain(`release ${runId}/job: lease given back for another worker (killed with SIGKILL at once, not after the kill grace)\n`);
    const staying = await startWorker(["-j", "1", "--lease", "30s"]);
    const status = await waitForRun(runId, 10_000);
    expect(taskOf(status, "job")).toMatchObject({ state: "succeeded", attempts: 1, maxAttempts: 1, workerId: staying.id });
    expect((await stopWorker(staying)).code).toBe(143);
  });

  it("a signal while the stopped worker closes its store ends it with the stop's exit code, not by the signal's default action", async () => {
    // Once the worker's "stopped" line is out, its signal listeners are gone; the store then closes (ms), and only
    // after that does taskq's exit listen again. A signal between the two ended taskq by its default action (a
    // SIGTERM after a Ctrl-C: killed by SIGTERM, not the 130 of the stop it had begun), what stdout held lost.
    const worker = await startWorker(["-j", "1"]);
    const { child } = worker.cli;
    const stoppedLine = new Promise<void>((resolve) => {
      const onData = (): void => {
        if (!/stopped \(/.test(worker.stdout())) return;
        child.stdout!.off("data", onData);
        resolve();
      };
      child.stdout!.on("data", onData);
      child.on("exit", () => resolve());
    });
    child.kill("SIGINT");
    await stoppedLine;
    // SIGTERMs until it exits: the first ones come while the store closes.
    for (let sent = 0; child.exitCode === null && child.signalCode === null && sent < 20_000; sent++) {
      child.kill("SIGTERM");
      await new Promise((resolve) => setImmediate(resolve));
    }
    const left = await worker.cli.done;
    expect({ code: left.code, signal: left.signal }).toEqual({ code: 130, signal: null });
    expect(left.stdout).toMatch(/\d stopped \(requested\)\n/);
  });

  it("a worker SIGKILLed mid-task: its guard stops the task, so it never runs on beside the retry on another machine", async () => {
    const file = await hangsOnFirstRun("killed");
    const doomed = await startWorker(["-j", "1", "--lease", "2s", "--kill-grace", "1s"]);
    // Its guard is there before any task: started with the worker, not at its first long task.
    expect(await findGuards(doomed.cli.child.pid!)).toHaveLength(1);
    const runId = await submit(file);
    expect(await eventually(() => doomed.stdout().includes(`${runId}/job | first`))).toBe(true);
    expect((await findLeftovers(runId)).length).toBeGreaterThan(0);
    doomed.cli.child.kill("SIGKILL");
    await doomed.cli.done;
    // `sleep 1000` ends only if something stops it: taskq cannot any more.
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 10_000)).toBe(true);
    // The run still ends: the lease expires and the task, out of attempts, is a dead letter.
    const worker = await startWorker(["-j", "1", "--lease", "2s"]);
    const status = await waitForRun(runId, 15_000);
    expect(taskOf(status, "job")).toMatchObject({ state: "failed", attempts: 1 });
    expect(await findGuards(worker.cli.child.pid!)).toHaveLength(1);
    expect((await stopWorker(worker)).code).toBe(143);
    // A worker that stops as it should leaves no guard behind.
    expect(await eventually(async () => (await findGuards(worker.cli.child.pid!)).length === 0, 5_000)).toBe(true);
  });

  it("a worker SIGKILLed mid-task with a kill grace longer than a third of its lease: its guard stops a task that ignores SIGTERM within a third of the lease, before another worker may take the task over", async () => {
    const file = await workflowFile("stubborn-guard", "tasks:\n  job: { run: 'trap \"\" TERM PIPE; echo first; while :; do sleep 0.2; done' }\n");
    // It ignores SIGTERM (and SIGPIPE, its output's reader gone). A third of 6s is 2s: the guard waits that, not the 30s kill grace, before its SIGKILL.
    const doomed = await startWorker(["-j", "1", "--lease", "6s", "--kill-grace", "30s"]);
    const runId = await submit(file);
    expect(await eventually(() => doomed.stdout().includes(`${runId}/job | first`))).toBe(true);
    expect((await findLeftovers(runId)).length).toBeGreaterThan(0);
    doomed.cli.child.kill("SIGKILL");
    await doomed.cli.done;
    // Well within the 30s kill grace (a loaded machine's margin besides): the lease's two thirds left are 4s.
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 15_000)).toBe(true);
    await cancelStrandedRun(runId);
  });

  it("run --store --lease 2s: its worker takes that lease; SIGKILLed mid-task, the run ends on another worker within seconds, not after the default 30s", async () => {
    const file = await hangsOnFirstRun("run-lease");
    const runId = `lease-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const run = startCli(["run", file, "--log-dir", ws.logs, "--run-id", runId, "--lease", "2s", "--output", "plain"], { cwd: ws.dir, env: { ...ENV } });
    workers.push(run);
    expect(await eventually(() => run.stdout().includes("job | first"))).toBe(true);
    const left = async () =>
      Number((await store.pool.query<{ left: string }>(`SELECT extract(epoch FROM lease_expires_at - now()) AS left FROM "${SCHEMA}".tasks WHERE run_id = $1`, [runId])).rows[0]?.left);
    // Renewed every third of it: never more than 2 s ahead.
    expect(await left()).toBeLessThanOrEqual(2);
    run.child.kill("SIGKILL");
    await run.done;
    const worker = await startWorker(["-j", "1", "--lease", "2s"]);
    const status = await waitForRun(runId, 15_000);
    expect(taskOf(status, "job")).toMatchObject({ state: "failed", attempts: 1 });
    expect((await stopWorker(worker)).code).toBe(143);
    // And a local run has no lease to take.
    const local = await taskq(["run", file, "--lease", "2s", "--store", ""]);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain("--lease needs a store (--store or TASKQ_STORE)");
  });

  it("--metrics-port 0 prints the URL; /metrics counts attempts, retries, completions and an orphan recovered after a worker was killed", async () => {
    const state = path.join(ws.dir, `flaky-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile(
      "metrics",
      `tasks:
  orphan:
    run: 'if [ "$TASKQ_ATTEMPT" = 1 ]; then echo first; sleep 2; exit 1; fi; echo "attempt $TASKQ_ATTEMPT"'
    priority: high
    retries: 1
  flaky:
    run: flaky 2 "$STATE"
    env: { STATE: "${state}" }
    retries: 1
    backoff: { base: 50ms, max: 50ms }
`,
    );
    const doomed = await startWorker(["-j", "1", "--lease", "2s"]);
    const runId = await submit(file);
    expect(await eventually(() => doomed.stdout().includes(`${runId}/orphan | first`))).toBe(true);
    // A machine that dies: no graceful stop, no release. Its task's lease must expire first.
    doomed.cli.child.kill("SIGKILL");
    await doomed.cli.done;

    const worker = await startWorker(["-j", "2", "--lease", "2s", "--metrics-port", "0"]);
    const url = /metrics (http:\/\/127\.0\.0\.1:(\d+)\/metrics)/.exec(worker.stdout())?.[1];
    expect(url).toBeDefined();
    const status = await waitForRun(runId, 15_000);
    expect(status.state).toBe("succeeded");
    // The orphan re-ran after the lease expired, with its attempt counted.
    expect(taskOf(status, "orphan")).toMatchObject({ state: "succeeded", attempts: 2, workerId: worker.id });
    // The sweep names the task, whose worker lost it, and what became of it.
    expect(worker.stdout()).toContain(`sweep   ${runId}/orphan: lease expired (worker ${doomed.id}, attempt 1): queued again (attempt 2/2 next)\n`);
    expect(worker.stdout()).toContain(`start   ${runId}/orphan (attempt 2/2)`);
    // The dead worker's attempt ends its log (on this machine, shared by both) before the next attempt, as every attempt that did not succeed ends it:
    // nothing else would (its "first" may not have reached the log before the SIGKILL).
    const logTail = `--- taskq: attempt 1 lost: its worker ${doomed.id} is gone and its lease ran out: queued again (attempt 2/2 next), by worker ${worker.id} ---\n--- taskq: attempt 2 ---\nattempt 2\n`;
    expect([logTail, `first\n${logTail}`]).toContain(await readFile(path.join(ws.logs, runId, "orphan.log"), "utf8"));
    // A retry says when the next attempt is due, as a local run's does.
    expect(worker.stdout()).toMatch(new RegExp(`retry   ${runId}/flaky attempt 1/\\d+ failed: exited with code 1; next attempt in \\d+ms\n`));

    const response = await fetch(url!);
    expect(response.status).toBe(200);
    const text = await response.text();
    const metric = (pattern: string) => Number(new RegExp(`^${pattern} (\\S+)$`, "m").exec(text)?.[1]);
    expect(metric('taskq_tasks\\{state="succeeded"\\}')).toBeGreaterThanOrEqual(2);
    expect(metric('taskq_tasks\\{state="running"\\}')).toBe(0);
    expect(metric("taskq_attempts_total")).toBe(3);
    expect(metric("taskq_retries_total")).toBe(1);
    expect(metric('taskq_completions_total\\{outcome="succeeded"\\}')).toBe(2);
    expect(metric('taskq_completions_total\\{outcome="retried"\\}')).toBe(1);
    expect(metric("taskq_queue_wait_seconds_count")).toBe(3);
    expect(metric('taskq_run_seconds_count\\{outcome="succeeded"\\}')).toBe(2);
    expect(metric("taskq_orphans_recovered_total")).toBe(1);
    expect(text).toMatch(/^taskq_lease_renewals_total \d+$/m);
    expect((await fetch(url!.replace("/metrics", "/other"))).status).toBe(404);
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("/metrics has this worker's running tasks (taskq_worker_running_tasks), beside the store's taskq_tasks{state=\"running\"}, which counts every worker's", async () => {
    const go = path.join(ws.dir, `go-${randomBytes(3).toString("hex")}`);
    const slow = `{ run: 'echo started; until [ -e "$GO" ]; do sleep 0.05; done', env: { GO: "${go}" } }`;
    const file = await workflowFile("running-gauge", `tasks:\n  a: ${slow}\n  b: ${slow}\n  c: ${slow}\n`);
    const [two, one] = [await startWorker(["-j", "2", "--metrics-port", "0"]), await startWorker(["-j", "1", "--metrics-port", "0"])];
    const urlOf = (worker: Worker) => /metrics (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(worker.stdout())?.[1] ?? "";
    const scrape = async (worker: Worker) => {
      const text = await (await fetch(urlOf(worker))).text();
      return { text, value: (pattern: string) => Number(new RegExp(`^${pattern} (\\S+)$`, "m").exec(text)?.[1]) };
    };
    const idle = await scrape(two);
    expect(idle.text).toContain("# HELP taskq_worker_running_tasks Tasks this worker runs now (attempts whose command has not ended), of every run\n# TYPE taskq_worker_running_tasks gauge\n");
    expect(idle.value("taskq_worker_running_tasks")).toBe(0);
    const runId = await submit(file);
    const started = (worker: Worker) => (worker.stdout().match(new RegExp(`${runId}/\\S+ \\| started`, "g")) ?? []).length;
    expect(await eventually(() => started(two) === 2 && started(one) === 1, 10_000)).toBe(true);
    const [busyTwo, busyOne] = [await scrape(two), await scrape(one)];
    expect(busyTwo.value("taskq_worker_running_tasks")).toBe(2);
    expect(busyOne.value("taskq_worker_running_tasks")).toBe(1);
    // The store's count is every worker's, the same on both.
    expect(busyTwo.value('taskq_tasks\\{state="running"\\}')).toBeGreaterThanOrEqual(3);
    expect(busyOne.value('taskq_tasks\\{state="running"\\}')).toBe(busyTwo.value('taskq_tasks\\{state="running"\\}'));
    await writeFile(go, "");
    expect((await waitForRun(runId)).state).toBe("succeeded");
    expect(await eventually(async () => (await scrape(two)).value("taskq_worker_running_tasks") === 0 && (await scrape(one)).value("taskq_worker_running_tasks") === 0)).toBe(true);
    expect([(await stopWorker(two)).code, (await stopWorker(one)).code]).toEqual([143, 143]);
  });

  it("a task whose worker was SIGKILLed mid-task: its dead letter shows what it printed up to the worker's last heartbeat", async () => {
    const file = await workflowFile(
      "killed-mid-task",
      `tasks:
  build:
    run: 'echo compiling; echo linking; sleep 60'
`,
    );
    const doomed = await startWorker(["-j", "1", "--lease", "2s"]);
    const runId = await submit(file);
    expect(await eventually(() => doomed.stdout().includes(`${runId}/build | linking`))).toBe(true);
    // Heartbeats come every third of the lease: once one has stored both lines (as the database has them), the worker is killed.
    expect(await eventually(async () => (await store.runStatus(runId)).tasks[0]?.liveTail?.join("\n") === "compiling\nlinking", 15_000)).toBe(true);
    doomed.cli.child.kill("SIGKILL");
    await doomed.cli.done;

    const worker = await startWorker(["-j", "1", "--lease", "2s"]);
    expect((await waitForRun(runId, 15_000)).state).toBe("failed");
    const dead = await taskq(["dead-letters", runId]);
    expect(dead).toMatchObject({ code: 0, stderr: "" });
    // Its log is on the machine of the worker that died: the sweep ended the attempt, no worker ran another.
    expect(dead.stdout).toBe(`${runId}/build: lease expired (worker ${doomed.id}, attempt 1) (1 attempt)\n  log: <log-dir>/${runId}/build.log (on ${doomed.id})\n    compiling\n    linking\n`);
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("worker flags: a lease under 1s or over 24h is a usage error, one under 5s gets a note; a metrics port in use is a plain error", async () => {
    const short = await taskq(["worker", "--lease", "0"]);
    expect(short.code).toBe(2);
    expect(short.stderr).toBe('taskq: --lease: "0" is shorter than the minimum of 1s\n');
    // A duration the format takes (up to 30 days), but a lease that long would leave a dead worker's tasks for weeks.
    const long = await taskq(["worker", "--lease", "600h"]);
    expect(long).toMatchObject({ code: 2, stdout: "", stderr: 'taskq: --lease: "600h" is longer than the maximum of 24h\n' });
    // Not a duration at all: the range it names is a lease's, not any duration's (0 to 30 days).
    expect(await taskq(["worker", "--lease", "abc"])).toMatchObject({ code: 2, stdout: "", stderr: 'taskq: --lease: "abc" is not a duration like 30s, 5m or 1h, from 1s to 24h\n' });
    // Under 5s, allowed, with a note: on a busy machine such a lease may run out between renewals.
    const brief = await startWorker(["--lease", "1s"]);
    expect(await eventually(() => brief.stdout().includes("note    --lease 1s is short: on a busy machine (CPU saturated) a renewal, due every 333ms, may not get through before the lease runs out"))).toBe(true);
    expect(brief.stdout()).toContain("a longer lease (the default 30s) is safer\n");
    expect((await stopWorker(brief)).code).toBe(143);
    const first = await startWorker(["--metrics-port", "0", "--lease", "24h"]);
    const port = /metrics http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(first.stdout())?.[1] ?? "";
    // Said before the store is opened: a worker given a schema with no store makes none there.
    const absent = `taskq_e2e_absent_${randomBytes(3).toString("hex")}`;
    const taken = await taskq(["worker", "--metrics-port", port, "--store-schema", absent]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe(`taskq: --metrics-port ${port} is already in use\n`);
    expect((await store.pool.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [absent])).rows).toEqual([]);
    // So is it when the store cannot be reached at all.
    expect(await taskq(["worker", "--metrics-port", port, "--store", "postgres://postgres@127.0.0.1:1/none"])).toMatchObject({ code: 1, stderr: `taskq: --metrics-port ${port} is already in use\n` });
    expect(await stopWorker(first)).toMatchObject({ code: 143, stdout: expect.not.stringContaining("is short") });
  });

  it("--metrics-host: the metrics listen on that address only; one not of this machine is a plain error, one without a port a usage error", async () => {
    const alone = await taskq(["worker", "--metrics-host", "0.0.0.0"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe("taskq: --metrics-host needs --metrics-port\n");
    // TEST-NET-1 (RFC 5737): an address no machine here has.
    const foreign = await taskq(["worker", "--metrics-port", "0", "--metrics-host", "192.0.2.1"]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toBe("taskq: --metrics-host 192.0.2.1: not an address of this machine\n");
    // Every 127.x address is this machine's loopback: one other than 127.0.0.1 shows where it listens.
    const worker = await startWorker(["--metrics-port", "0", "--metrics-host", "127.0.0.2"]);
    const url = /metrics (http:\/\/127\.0\.0\.2:\d+\/metrics)/.exec(worker.stdout())?.[1];
    expect(url).toBeDefined();
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/^taskq_attempts_total \d+$/m);
    await expect(fetch(url!.replace("127.0.0.2", "127.0.0.1"))).rejects.toThrow();
    expect((await stopWorker(worker)).code).toBe(143);
    // An IPv6 address as a URL writes it, in brackets: the address inside (it was looked up as a name, ENOTFOUND).
    if (Object.values(networkInterfaces()).some((addresses) => addresses?.some((address) => address.address === "::1"))) {
      const six = await startWorker(["--metrics-port", "0", "--metrics-host", "[::1]"]);
      const at = /metrics (http:\/\/\[::1\]:\d+\/metrics)/.exec(six.stdout())?.[1];
      expect(at).toBeDefined();
      expect((await fetch(at!)).status).toBe(200);
      expect((await stopWorker(six)).code).toBe(143);
    }
  });

  it("prune --older-than: a run whose last tasks ended before then, never settled since (no worker swept after them), is pruned, not dated by the prune's settling", async () => {
    const run = await submit(await workflowFile("prune-unsettled", "tasks:\n  a: { run: echo a }\n  b: { run: echo b }\n"));
    const worker = await startWorker(["-j", "2"]);
    expect((await waitForRun(run)).state).toBe("succeeded");
    expect((await stopWorker(worker)).code).toBe(143);
    // As two last tasks ending at once leave it (each saw the other running), 8 days ago: no worker has swept since.
    await store.pool.query(`UPDATE "${SCHEMA}".tasks SET finished_at = now() - interval '8 days' WHERE run_id = $1`, [run]);
    await store.pool.query(`UPDATE "${SCHEMA}".runs SET state = 'running', finished_at = NULL, created_at = now() - interval '8 days' WHERE id = $1`, [run]);
    const listed = await taskq(["prune", "--older-than", "7d", "--dry-run", "--output", "json"]);
    expect(listed.code).toBe(0);
    // Before: settled by the prune itself, it ended "now", and was kept for 7 days more.
    expect((JSON.parse(listed.stdout) as { wouldPrune: string[] }).wouldPrune).toContain(run);
    const ended = await store.pool.query<{ state: string; age: number }>(`SELECT state, extract(epoch FROM now() - finished_at)::float8 AS age FROM "${SCHEMA}".runs WHERE id = $1`, [run]);
    expect(ended.rows[0]!.state).toBe("succeeded");
    expect(ended.rows[0]!.age).toBeGreaterThan(8 * 86_400 - 60);
    const pruned = await taskq(["prune", "--older-than", "7d"]);
    expect(pruned.stdout).toContain(`  ${run}\n`);
  });

  it("prune --older-than: deletes the runs that ended before then with their tasks; never a running one, however old; --dry-run only lists", async () => {
    const old = await submit(await workflowFile("prune-old", "tasks:\n  a: { run: echo old }\n"));
    const recent = await submit(await workflowFile("prune-recent", "tasks:\n  a: { run: echo recent }\n"));
    const worker = await startWorker(["-j", "2"]);
    expect((await waitForRun(old)).state).toBe("succeeded");
    expect((await waitForRun(recent)).state).toBe("succeeded");
    expect((await stopWorker(worker)).code).toBe(143);
    // No worker any more: this one stays running.
    const running = await submit(await workflowFile("prune-running", "tasks:\n  a: { run: echo never }\n"));
    // A week is not waited for: the clock of these runs is moved back instead.
    await store.pool.query(`UPDATE "${SCHEMA}".runs SET finished_at = now() - interval '8 days' WHERE id = $1`, [old]);
    await store.pool.query(`UPDATE "${SCHEMA}".runs SET created_at = now() - interval '60 days' WHERE id = $1`, [running]);

    const listed = await taskq(["prune", "--older-than", "7d", "--dry-run", "--output", "json"]);
    expect(listed.code).toBe(0);
    const dry = JSON.parse(listed.stdout) as { before: string; wouldPrune: string[] };
    expect(dry.wouldPrune).toEqual([old]);
    expect(Math.abs(Date.parse(dry.before) - (Date.now() - 7 * 86_400_000))).toBeLessThan(60_000);
    expect((await taskq(["status", old])).code).toBe(0);

    const pruned = await taskq(["prune", "--older-than", "7d"]);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(new RegExp(`^pruned 1 run ended before \\S+:\n  ${old}\n$`));
    const gone = await taskq(["status", old]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`taskq: no run "${old}" in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA)\n`);
    const rows = await store.pool.query(`SELECT count(*)::int AS n FROM "${SCHEMA}".tasks WHERE run_id = $1`, [old]);
    expect(rows.rows[0].n).toBe(0);
    for (const kept of [recent, running]) expect((await store.runStatus(kept)).runId).toBe(kept);

    expect((await taskq(["prune", "--older-than", "400d"])).stdout).toMatch(/^no run ended before \S+\n$/);
    const bad = await taskq(["prune", "--older-than", "7 days"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('taskq: --older-than: "7 days" is not an age like 7d, 12h or 30m (write it without spaces, with the units d, h, m and s: 7d)\n');
    expect((await taskq(["cancel", running])).code).toBe(0);
  });

  it("--run-id must be a plain name, checked before the file is read or the store opened, as the run id given to status, cancel, dead-letters and redrive; without a store it is a usage error", async () => {
    const file = await workflowFile("run-id", "tasks:\n  a: { run: echo a }\n");
    for (const args of [["submit", file], ["run", file]]) {
      for (const runId of ["../../elsewhere", "", "nightly/42"]) {
        const refused = await taskq([...args, "--run-id", runId, "--store", "postgres://nobody@127.0.0.1:1/none"]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toBe(`taskq: --run-id: ${JSON.stringify(runId)} is not a run id: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit\n`);
      }
    }
    // A run id no run can have, given to the commands that read or change a run: the same usage error, before the store is opened.
    const expected = 'is not a run id: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit\n';
    const long = "r".repeat(5000);
    const ids: [string, string][] = [["../etc", '"../etc"'], ["bell\u0007\u001b[2Jx", '"bell\\u0007\\u001b[2Jx"'], [long, `"${"r".repeat(64)}"... (5000 characters)`]];
    for (const [runId, shown] of ids) {
      for (const args of [["status", runId], ["cancel", runId], ["dead-letters", runId], ["redrive", runId, "a"]]) {
        const refused = await taskq([...args, "--store", "postgres://nobody@127.0.0.1:1/none"]);
        expect(refused).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${shown} ${expected}` });
      }
    }
    // So is a task id no workflow can have, given to cancel or redrive: not "no task" from the store.
    const taskIds: [string, string][] = [["", '""'], ["../x", '"../x"'], ["..", '".."']];
    for (const [task, shown] of taskIds) {
      for (const args of [["cancel", "some-run", task], ["redrive", "some-run", task]]) {
        const refused = await taskq([...args, "--store", "postgres://nobody@127.0.0.1:1/none"]);
        expect(refused).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${shown} is not a task id: ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."\n` });
      }
    }
    const local = await taskq(["run", file, "--run-id", "nightly-42"], { TASKQ_STORE: "" });
    expect(local.code).toBe(2);
    expect(local.stderr).toBe("taskq: --run-id needs a store (--store or TASKQ_STORE): a local run's id is made from the time\n");
    expect(local.stdout).toBe("");
  });

  it("submit stopped by SIGTERM or SIGINT while it stores a large run: the run is stored whole and its id printed, or a second signal cancels its submit and says what became of the run", { timeout: 120_000 }, async () => {
    const file = await workflowFile("big-submit", `tasks:\n${Array.from({ length: 30_000 }, (_, i) => `  t${i}: { run: "echo ${i}" }\n`).join("")}`);
    /** Whether the submit's statement is running in the database now. */
    const storing = async (): Promise<boolean> => {
      const { rows } = await store.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'taskq submit r-%' AND state = 'active' AND query LIKE 'WITH run AS%' AND query LIKE $1",
        [`%"${SCHEMA}".runs%`],
      );
      return rows[0]!.n > 0;
    };
    const stored = async (): Promise<{ id: string; tasks: number }[]> =>
      sql<{ id: string; tasks: number }>(store, "SELECT r.id, (SELECT count(*)::int FROM $schema.tasks t WHERE t.run_id = r.id) AS tasks FROM $schema.runs r WHERE r.file LIKE '%big-submit%'");
    try {
      for (const signal of ["SIGTERM", "SIGINT"] as const) {
        const cli = startCli(["submit", file], { cwd: ws.dir, env: ENV });
        expect(await eventually(storing, 60_000)).toBe(true);
        cli.child.kill(signal);
        const result = await cli.done;
        const runs = await stored();
        runIds.push(...runs.map((run) => run.id));
        // Stored whole, and said: stdout is its id, as ever, and the exit the signal's.
        expect(runs).toEqual([{ id: result.stdout.trim(), tasks: 30_000 }]);
        expect(result.code).toBe(signal === "SIGTERM" ? 143 : 130);
        // Said at once, then what became of the run.
        expect(result.stderr).toBe(`taskq: ${signal} received while the run was being submitted: stopping once the database has answered the submit (it waits up to 30s for each statement, and tries again for up to 10s where the connection drops), then its id is printed if it was stored; press Ctrl-C again (or send a second signal) to stop now\n` + `taskq: ${signal} received while the run was being submitted: run ${runs[0]!.id} was stored whole; cancel it with \`taskq cancel ${runs[0]!.id}\` if it should not run\n`);
        await sql(store, "DELETE FROM $schema.runs WHERE id = $1", [runs[0]!.id]);
      }
      // A second signal does not wait for the database: it cancels the submit's statement, and says what became of the run.
      const cli = startCli(["submit", file], { cwd: ws.dir, env: ENV });
      expect(await eventually(storing, 60_000)).toBe(true);
      cli.child.kill("SIGTERM");
      await sleep(20);
      cli.child.kill("SIGTERM");
      const result = await cli.done;
      expect(result.code).toBe(143);
      // Cancelled as it stored the run, as a rule; where it had committed first, the run is named as stored; where the database
      // did not say how the submit ended within taskq's 3 s (a loaded machine), the run is named as one that may have been stored.
      // Where taskq read the database's answer (the run stored whole, its id printed) before the second signal, that signal
      // changes nothing: what it says is what it says were that signal not heard at all. That is so even where the test read
      // the run as not yet committed after sending it: the commit may land a moment later, and taskq's event loop may read
      // its answer before the signal, both there in the same turn (under load, 3 in 5 runs of this file).
      const named = /run (\S+) was stored whole( before its submit could be cancelled|; cancel it)/.exec(result.stderr)?.[1];
      const maybe = /run (\S+) may have been stored/.exec(result.stderr)?.[1];
      // The cancel said at once, before taskq waits for the database's answer; not by a second signal that came once the run
      // was stored (its state being read), which stops at once with nothing to cancel: a run named as stored may have either.
      const cancelling = "taskq: SIGTERM received again while the run was being submitted: cancelling its submit: stopping once the database has said whether the run was stored (up to 3s); press Ctrl-C again (or send a third signal) to stop at once\n";
      const seconds =
        maybe !== undefined
          ? [`${cancelling}taskq: SIGTERM received again while the run was being submitted: stopping now; run ${maybe} may have been stored: see \`taskq status ${maybe}\`, and cancel it with \`taskq cancel ${maybe}\`\n`]
          : named === undefined
            ? [`${cancelling}taskq: SIGTERM received again while the run was being submitted: stopped; its submit was cancelled: nothing was submitted\n`]
            : [
                ...["", cancelling].map((said) => `${said}taskq: SIGTERM received again while the run was being submitted: stopping now; run ${named} was stored whole before its submit could be cancelled: cancel it with \`taskq cancel ${named}\` if it should not run\n`),
                `taskq: SIGTERM received while the run was being submitted: run ${named} was stored whole; cancel it with \`taskq cancel ${named}\` if it should not run\n`,
              ];
      const first = `taskq: SIGTERM received while the run was being submitted: stopping once the database has answered the submit (it waits up to 30s for each statement, and tries again for up to 10s where the connection drops), then its id is printed if it was stored; press Ctrl-C again (or send a second signal) to stop now\n`;
      expect(seconds.map((second) => first + second), `stderr: ${result.stderr}`).toContain(result.stderr);
      // Whatever the database made of it, what it says is so: no statement goes on to store the run after taskq has gone.
      expect(await eventually(async () => !(await storing()), 30_000)).toBe(true);
      const runs = await stored();
      runIds.push(...runs.map((run) => run.id));
      if (maybe === undefined) expect(runs).toEqual(named === undefined ? [] : [{ id: named, tasks: 30_000 }]);
      else expect(runs.every((run) => run.id === maybe && run.tasks === 30_000)).toBe(true);
    } finally {
      // Not left queued for the workers of the tests that follow.
      await sql(store, "DELETE FROM $schema.runs WHERE file LIKE '%big-submit%'");
    }
  });

  // The test above takes a run that committed before the second signal was read: a second SIGTERM ignored would pass it.
  // Here the submit cannot commit while both are sent: its statement waits on a lock another session holds on the runs.
  it("submit of a large run given a second SIGTERM while its statement waits on a lock: cancels its submit and stops, nothing stored", { timeout: 120_000 }, async () => {
    const file = await workflowFile("big-submit-locked", `tasks:\n${Array.from({ length: 30_000 }, (_, i) => `  t${i}: { run: "echo ${i}" }\n`).join("")}`);
    const waiting = async (): Promise<boolean> => {
      const { rows } = await store.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'taskq submit r-%' AND wait_event_type = 'Lock' AND query LIKE 'WITH run AS%' AND query LIKE $1",
        [`%"${SCHEMA}".runs%`],
      );
      return rows[0]!.n > 0;
    };
    const locker = await store.pool.connect();
    try {
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE "${SCHEMA}".runs IN EXCLUSIVE MODE`);
      const cli = startCli(["submit", file], { cwd: ws.dir, env: ENV });
      expect(await eventually(waiting, 60_000)).toBe(true);
      cli.child.kill("SIGTERM");
      // One at a time: two signals sent at once may reach it as one.
      expect(await eventually(() => cli.stderr().includes("SIGTERM received while the run was being submitted"), 10_000)).toBe(true);
      cli.child.kill("SIGTERM");
      // Ended while the lock is still held: it does not wait for it.
      const result = await cli.done;
      expect(result.code).toBe(143);
      expect(result.stderr).toBe(
        "taskq: SIGTERM received while the run was being submitted: stopping once the database has answered the submit (it waits up to 30s for each statement, and tries again for up to 10s where the connection drops), then its id is printed if it was stored; press Ctrl-C again (or send a second signal) to stop now\n" +
          "taskq: SIGTERM received again while the run was being submitted: cancelling its submit: stopping once the database has said whether the run was stored (up to 3s); press Ctrl-C again (or send a third signal) to stop at once\n" +
          "taskq: SIGTERM received again while the run was being submitted: stopped; its submit was cancelled: nothing was submitted\n",
      );
      expect(result.stdout).toBe("");
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      locker.release();
    }
    // The lock let go, no statement of the submit goes on to store the run.
    expect(await eventually(async () => !(await waiting()), 30_000)).toBe(true);
    const runs = await sql<{ id: string }>(store, "SELECT id FROM $schema.runs WHERE file LIKE '%big-submit-locked%'");
    runIds.push(...runs.map((run) => run.id));
    expect(runs).toEqual([]);
  });

  it("submit takes durations up to the format's 30 days, past PostgreSQL's int", async () => {
    const file = await workflowFile(
      "long-durations",
      "tasks:\n  a: { run: echo a, timeout: 720h, retries: 1, backoff: { base: 700h } }\n  b: { run: echo b, dependsOn: a, retries: 1, backoff: { max: 600h } }\n",
    );
    const runId = await submit(file);
    const status = await taskq(["status", runId, "--output", "json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({ event: "summary", runId, state: "running", counts: { READY: 1, BLOCKED: 1 } });
    expect((await taskq(["cancel", runId])).code).toBe(0);
  });

  it("a schema name the store cannot take is a usage error that does not blame the store; an empty TASKQ_STORE_SCHEMA is unset", async () => {
    const expected = 'invalid schema name "My-Schema"; expected lower-case letters, digits and "_" (at most 48, not starting with a digit)';
    expect(await taskq(["status", "x", "--store-schema", "My-Schema"])).toMatchObject({ code: 2, stderr: `taskq: --store-schema: ${expected}\n` });
    expect(await taskq(["status", "x"], { TASKQ_STORE_SCHEMA: "My-Schema" })).toMatchObject({ code: 2, stderr: `taskq: TASKQ_STORE_SCHEMA: ${expected}\n` });
    expect(await taskq(["redrive", "x", "a", "--store-schema", ""])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^taskq: --store-schema: invalid schema name ""; /) });
    // PostgreSQL's own schemas: tables made among its catalog's, or in a session's temporary schema.
    for (const reserved of ["information_schema", "pg_temp", "pg_catalog", "pg_mine"]) {
      const why = `invalid schema name "${reserved}"; PostgreSQL reserves it (pg_* and information_schema are its own)`;
      expect(await taskq(["status", "x"], { TASKQ_STORE_SCHEMA: reserved })).toMatchObject({ code: 2, stderr: `taskq: TASKQ_STORE_SCHEMA: ${why}\n` });
      expect(await taskq(["worker", "--log-dir", ws.logs, "--store-schema", reserved])).toMatchObject({ code: 2, stderr: `taskq: --store-schema: ${why}\n` });
    }
    // Empty: the default schema, in a database that does not exist here (so no schema of the default name is made).
    const missing = new URL(SECRET_URL);
    missing.pathname = "/taskq_no_such_database";
    const unset = await taskq(["status", "x"], { TASKQ_STORE: missing.toString(), TASKQ_STORE_SCHEMA: "" });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toMatch(/^taskq: cannot open the store postgres:\/\/postgres:\*\*\*@\S+\/taskq_no_such_database: connect failed: database "taskq_no_such_database" does not exist\n$/);
  });

  it("prune --logs leaves a run's folder alone while a worker runs one of its tasks, not after", async () => {
    const gate = path.join(ws.dir, `gate-${randomBytes(3).toString("hex")}`);
    const runId = await submit(
      await workflowFile("prune-logs", `tasks:\n  wait: { run: 'while [ ! -f "$GATE" ]; do sleep 0.05; done; echo through', env: { GATE: "${gate}" } }\n`),
    );
    const worker = await startWorker();
    const runDir = path.join(ws.logs, runId);
    const marker = `.taskq-active-${worker.cli.child.pid}`;
    expect(await eventually(async () => (await readdir(runDir).catch((): string[] => [])).includes(marker), 15_000)).toBe(true);
    // Dry runs only: this file's other runs keep their logs (they are checked for the password).
    const wouldPrune = async (): Promise<string[]> => {
      const result = await taskq(["prune", "--logs", "--log-dir", ws.logs, "--older-than", "0s", "--dry-run", "--output", "json"]);
      expect(result.code).toBe(0);
      return (JSON.parse(result.stdout) as { wouldPrune: string[] }).wouldPrune;
    };
    expect(await wouldPrune()).not.toContain(runId);
    await writeFile(gate, "");
    expect((await waitForRun(runId)).state).toBe("succeeded");
    // The worker runs on; the run's folder is no longer in use.
    expect(await eventually(async () => !(await readdir(runDir)).includes(marker), 5_000)).toBe(true);
    // The stamp stays: the folder is the worker's, whatever the run's id (see log-folders.ts).
    expect((await readdir(runDir)).sort()).toEqual([".taskq-run", "wait.log"]);
    expect(await wouldPrune()).toContain(runId);
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("never prints the password of the connection string, also when the store cannot be reached", async () => {
    for (const port of ["1", "99999"]) {
      const unreachable = withPassword(DATABASE_URL, PASSWORD).replace(/@([^/:]+)(:\d+)?\//, `@$1:${port}/`);
      for (const args of [["status", "some-run"], ["worker"], ["dead-letters", "--verbose"]]) {
        const result = await taskq([...args, "--store", unreachable]);
        // Port 99999 is no port: the URL does not parse, which is the user's to fix.
        expect(result.code).toBe(port === "1" ? 1 : 2);
        expect(result.stderr).toContain(port === "1" ? `taskq: cannot open the store postgres://postgres:***@` : `taskq: --store: postgres://postgres:***@`);
        expect(`${result.stdout}${result.stderr}`).not.toContain(PASSWORD);
      }
    }
    const missing = await taskq(["status", "x"], { TASKQ_STORE: "" });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no store: pass --store/);
  });

  it("an empty --store is a usage error on the store's commands, though TASKQ_STORE is set (the flag wins); run --store '' runs locally", async () => {
    const file = await workflowFile("empty-store", "tasks:\n  a: { run: echo local }\n");
    const commands = [["submit", file], ["worker"], ["status", "some-run"], ["status", "some-run", "--watch"], ["cancel", "some-run"], ["dead-letters"], ["redrive", "some-run", "a"], ["prune", "--older-than", "30d"]];
    for (const args of commands) {
      const result = await taskq([...args, "--store", ""]);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(result.stderr).toBe(
        `taskq: --store is empty: pass --store postgres://user@host/db, or leave it out to use TASKQ_STORE${args[0] === "prune" ? " (prune --logs prunes this machine's log folders)" : ""}\n`,
      );
    }
    const local = await taskq(["run", file, "--store", "", "--output", "plain", "--log-dir", path.join(ws.dir, "empty-store-logs")]);
    expect(local.code).toBe(0);
    expect(local.stdout).toContain("local");
    expect(local.stdout).not.toContain("submitted to");
  });

  it("a failing task that prints a NUL byte: each attempt is recorded and retried; the dead letter has its exit code and last lines", async () => {
    const file = await workflowFile(
      "nul",
      `tasks:
  nul: { run: 'echo attempt $TASKQ_ATTEMPT; printf "x\\0y\\n"; exit 1', retries: 2, backoff: { base: 50ms, max: 50ms } }
`,
    );
    const worker = await startWorker(["-j", "1", "--lease", "2s"]);
    const runId = await submit(file);
    const status = await waitForRun(runId, 15_000);
    // Not "lease expired": every attempt's end was stored, NUL and all.
    expect(taskOf(status, "nul")).toMatchObject({ state: "failed", attempts: 3, exitCode: 1, lastError: "exited with code 1", tail: ["attempt 3", "x\uFFFDy"] });
    expect(starts(worker.stdout(), runId).map((match) => match[2])).toEqual(["1", "2", "3"]);
    expect(worker.stdout()).not.toMatch(/^\S+ db /m);
    const dead = await taskq(["dead-letters", runId]);
    expect(dead.stdout).toBe(`${runId}/nul: exited with code 1 (3 attempts)\n  log: <log-dir>/${runId}/nul.log (on ${worker.id})\n    attempt 3\n    x\uFFFDy\n`);
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("a store URL that does not parse is a usage error naming where it came from", async () => {
    const file = await workflowFile("bad-url", "tasks:\n  a: { run: echo a }\n");
    const malformed = `postgres://postgres:${PASSWORD}@[::1:5432/db`;
    const shown = "postgres://postgres:***@[::1:5432/db is not a valid URL";
    expect(await taskq(["status", "x", "--store", malformed])).toMatchObject({ code: 2, stdout: "", stderr: `taskq: --store: ${shown}\n` });
    expect(await taskq(["submit", file], { TASKQ_STORE: malformed })).toMatchObject({ code: 2, stdout: "", stderr: `taskq: TASKQ_STORE: ${shown}\n` });
  });

  it("a refused connection is said so by every command, those that make the store as those that only read it", async () => {
    const file = await workflowFile("refused", "tasks:\n  a: { run: echo a }\n");
    const refused = "postgres://nobody@127.0.0.1:1/none";
    const expected = `taskq: cannot open the store ${refused}: connect failed: connect ECONNREFUSED 127.0.0.1:1\n`;
    for (const args of [["status", "x"], ["submit", file], ["worker", "--log-dir", ws.logs], ["run", file, "--log-dir", ws.logs]]) {
      const result = await taskq([...args, "--store", refused]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(expected);
    }
  });

  it("a server that asks for a password when none was given: every command says so, and where the password goes, at once", async () => {
    for (const method of ["scram", "md5"] as const) {
      const server = await startPasswordServer(method);
      try {
        const url = `postgres://ci@127.0.0.1:${server.port}/builds`;
        // Before, with SCRAM: "connect failed: SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string".
        const expected = (source: string) =>
          `taskq: cannot open the store ${url}: connect failed: the server asks for a password, and none was given: put it in the URL of ${source} (postgres://USER:PASSWORD@HOST/DB) or in PGPASSWORD\n`;
        const status = await taskq(["status", "x", "--store", url], { PGPASSWORD: "" });
        expect(status).toMatchObject({ code: 1, stdout: "", stderr: expected("--store") });
        expect(status.durationMs).toBeLessThan(8_000);
        const worker = await taskq(["worker", "--log-dir", ws.logs], { TASKQ_STORE: url, PGPASSWORD: "" });
        expect(worker).toMatchObject({ code: 1, stderr: expected("TASKQ_STORE") });
        // A password given and refused is the server's to say.
        if (method === "md5") {
          const wrong = await taskq(["status", "x", "--store", url], { PGPASSWORD: "wrong" });
          expect(wrong).toMatchObject({ code: 1, stderr: `taskq: cannot open the store ${url}: connect failed: password authentication failed for user "ci"\n` });
        }
      } finally {
        await server.close();
      }
    }
  });

  it("a store that accepts connections and never answers: status, submit and worker fail within seconds, naming it without the password", async () => {
    const silent = await startSilentServer();
    try {
      const at = (query: string) => `postgres://postgres:${PASSWORD}@127.0.0.1:${silent.port}/qa${query}`;
      const file = await workflowFile("silent", "tasks:\n  a: { run: echo a }\n");
      const started = Date.now();
      // connect_timeout, as libpq reads it, where the URL sets it; 10 s where it does not.
      const [status, submitted, worker] = await Promise.all([
        taskq(["status", "x", "--store", at("")]),
        taskq(["submit", file, "--store", at("?connect_timeout=2")]),
        taskq(["worker", "--log-dir", ws.logs, "--store", at("?connect_timeout=2")]),
      ]);
      expect(Date.now() - started).toBeLessThan(20_000);
      const redacted = (query: string) => `postgres://postgres:***@127.0.0.1:${silent.port}/qa${query}`;
      expect(status).toMatchObject({ code: 1, stderr: `taskq: cannot open the store ${redacted("")}: connect failed: no connection to the database within 10s\n` });
      expect(status.durationMs).toBeGreaterThan(9_000);
      for (const result of [submitted, worker]) {
        expect(result).toMatchObject({ code: 1, stderr: `taskq: cannot open the store ${redacted("?connect_timeout=2")}: connect failed: no connection to the database within 2s\n` });
        expect(result.durationMs).toBeLessThan(8_000);
      }
    } finally {
      await silent.close();
    }
  });

  it("workers whose database stops answering still stop on SIGTERM, and sooner on a second one", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("stalled", "tasks:\n  a: { run: 'echo started; sleep 1000' }\n  b: { run: 'echo started; sleep 1000' }\n");
      // A long lease: what ends them is the signal, not a lease running out.
      const flags = ["-j", "1", "--lease", "30s", "--shutdown-timeout", "1s", "--kill-grace", "1s"];
      const [patient, impatient] = await Promise.all([0, 1].map(() => startWorker(flags, { TASKQ_STORE: proxy.url(SECRET_URL) })));
      const runId = await submit(file);
      expect(await eventually(() => [patient!, impatient!].every((worker) => worker.stdout().includes("| started")))).toBe(true);
      proxy.freeze();
      const signalledAt = Date.now();
      patient!.cli.child.kill("SIGTERM");
      impatient!.cli.child.kill("SIGTERM");
      expect(await eventually(() => impatient!.stdout().includes("SIGTERM received:"))).toBe(true);
      impatient!.cli.child.kill("SIGTERM");
      const ended = (worker: Worker) => worker.cli.done.then((result) => ({ ...result, afterMs: Date.now() - signalledAt }));
      const [second, first] = await Promise.all([ended(impatient!), ended(patient!)]);
      expect(second.stdout).toContain("SIGTERM received again: killing every task now");
      // Its task was killed by the second signal, not stopped at the deadline the first one set.
      expect(second.stdout).not.toContain("to finish have passed");
      expect(first.stdout).toContain("note    the 1s to finish have passed: stopping the running task (SIGTERM, then SIGKILL 1s later)\n");
      expect(second).toMatchObject({ code: 143 });
      expect(second.afterMs).toBeLessThan(8_000);
      // The graceful one: its 1 s to finish, its task's kill, and a moment for the releases the database never answers.
      expect(first).toMatchObject({ code: 143 });
      expect(first.afterMs).toBeLessThan(12_000);
      // Their last words: what becomes of the lease each could not give back (not a "retrying" that never comes), then the stop.
      for (const { stdout } of [first, second]) {
        expect(stdout.trimEnd().split("\n").at(-1)).toMatch(/^[\d:.]+ stopped \(requested\)$/);
        expect(stdout.trimEnd().split("\n").at(-2)).toMatch(
          new RegExp(
            `^[\\d:.]+ left    ${runId}/[ab]: its lease was not given back \\(the database could not be reached\\)\\. It runs out within \\d+s \\(--lease\\); ` +
              "then a worker \\(another one, or the next one started\\) queues the task again, this attempt counted \\(or ends it: failed when it has no attempts left, cancelled when a cancel was asked for\\)$",
          ),
        );
      }
      // Nothing reached the database: the tasks stay leased until their lease runs out, or here, are cancelled.
      await cancelStrandedRun(runId);
    } finally {
      await proxy.close();
    }
  });

  it("a worker cut off from its database (connections refused) stops on SIGTERM, its last words saying what becomes of its lease", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("cut-off", "tasks:\n  a: { run: 'echo started; sleep 1000' }\n");
      const worker = await startWorker(["-j", "1", "--lease", "20s", "--shutdown-timeout", "1s", "--kill-grace", "1s"], { TASKQ_STORE: proxy.url(SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes("| started"))).toBe(true);
      await proxy.close();
      const { code, stdout } = await stopWorker(worker);
      expect(code).toBe(143);
      const lines = stdout.trimEnd().split("\n");
      // The tries it gave up on say no "retrying"; the last lines say what happens next, and that the worker stopped.
      expect(lines.at(-1)).toMatch(/^[\d:.]+ stopped \(requested\)$/);
      expect(lines.at(-2)).toMatch(new RegExp(`^[\\d:.]+ left    ${runId}/a: its lease was not given back \\(the database could not be reached\\)\\. It runs out within \\d+s \\(--lease\\); then a worker`));
      expect(lines.at(-3)).toMatch(/^[\d:.]+ db {6}release failed: connect ECONNREFUSED [\d.:]+$/);
      await cancelStrandedRun(runId);
    } finally {
      await proxy.close();
    }
  });

  it("stopped while its database refuses connections, a worker whose task succeeded keeps trying to record it while the lease holds, and records it once the database answers", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("record-late", "tasks:\n  deploy: { run: 'echo started; sleep 3; echo deployed' }\n  after: { run: echo after, dependsOn: deploy }\n");
      const worker = await startWorker(["-j", "1", "--lease", "30s", "--shutdown-timeout", "5s"], { TASKQ_STORE: proxy.url(SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/deploy | started`))).toBe(true);
      proxy.refuse();
      const signalledAt = Date.now();
      worker.cli.child.kill("SIGTERM");
      // The task ends within its 5 s to finish; the record is still tried on past the 5 s, and said so.
      expect(await eventually(() => worker.stdout().includes(`record  ${runId}/deploy: it succeeded (exit 0); the database does not answer: trying to record it until its lease runs out, within`), 15_000)).toBe(true);
      // Past where a stopping worker gave up before (the 5 s, then 2 s and 2 s more): the database answers again.
      await sleep(Math.max(12_000 - (Date.now() - signalledAt), 0));
      expect(worker.cli.child.exitCode).toBe(null);
      proxy.accept();
      const { code, stdout } = await worker.cli.done;
      expect(code).toBe(143);
      const lines = stdout.trimEnd().split("\n");
      expect(lines.at(-1)).toMatch(/^[\d:.]+ stopped \(requested\)$/);
      expect(stdout).toContain(`ok      ${runId}/deploy`);
      expect(stdout).not.toContain("left ");
      const status = await store.runStatus(runId);
      expect(taskOf(status, "deploy")).toMatchObject({ state: "succeeded", attempts: 1 });
      expect(taskOf(status, "after")).toMatchObject({ state: "queued" });
      await store.cancelRun(runId);
    } finally {
      await proxy.close();
    }
  });

  it("stopped while its database refuses connections until its lease runs out, a worker says how the task it could not record ended", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("record-never", "tasks:\n  deploy: { run: 'echo started; sleep 2; echo deployed' }\n");
      const worker = await startWorker(["-j", "1", "--lease", "9s", "--shutdown-timeout", "5s"], { TASKQ_STORE: proxy.url(SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/deploy | started`))).toBe(true);
      proxy.refuse();
      const signalledAt = Date.now();
      worker.cli.child.kill("SIGTERM");
      const { code, stdout } = await worker.cli.done;
      expect(code).toBe(143);
      // Bounded by the lease: it ran out within 9 s of the last renewal, before the signal.
      expect(Date.now() - signalledAt).toBeLessThan(15_000);
      const lines = stdout.trimEnd().split("\n");
      expect(lines.at(-1)).toMatch(/^[\d:.]+ stopped \(requested\)$/);
      expect(lines.at(-2)).toMatch(
        new RegExp(`^[\\d:.]+ left    ${runId}/deploy \\(it succeeded \\(exit 0\\) but could not be recorded\\): its lease was not given back \\(the database could not be reached\\)\\. It has run out already \\(--lease\\); a worker`),
      );
      proxy.accept();
      await cancelStrandedRun(runId);
    } finally {
      await proxy.close();
    }
  });

  it("--output json: a failed attempt its stopping worker could not record has its exitCode, signal and timedOut in the recording and leases-left records, as in its finished record", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("record-failed", "tasks:\n  deploy: { run: 'echo started; sleep 2; kill -KILL $$' }\n");
      const worker = startCli(["worker", "--log-dir", ws.logs, "-j", "1", "--lease", "9s", "--shutdown-timeout", "5s", "--output", "json"], {
        cwd: ws.dir,
        env: { ...ENV, TASKQ_STORE: proxy.url(SECRET_URL) },
      });
      workers.push(worker);
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes('"text":"started"'), 15_000)).toBe(true);
      proxy.refuse();
      worker.child.kill("SIGTERM");
      const { code, stdout } = await worker.done;
      expect(code).toBe(143);
      const records = stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const ended = { ended: "failed", error: "killed by SIGKILL (not by taskq: perhaps the out-of-memory killer)", signal: "SIGKILL", timedOut: false };
      expect(records.find((record) => record.event === "recording")).toEqual({ ts: expect.any(String), event: "recording", runId, id: "deploy", ...ended, withinMs: expect.any(Number) });
      expect(records.find((record) => record.event === "leases-left")).toMatchObject({ event: "leases-left", tasks: [{ runId, id: "deploy", ...ended }], strays: false });
      proxy.accept();
      await cancelStrandedRun(runId);
    } finally {
      await proxy.close();
    }
  });

  it("run --store stopped while its database does not answer exits with the signal's code, soon, saying it has no summary", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("stopped-run", "tasks:\n  a: { run: 'echo started; sleep 1000' }\n");
      const run = startCli(["run", file, "--log-dir", ws.logs, "--shutdown-timeout", "1s", "--kill-grace", "1s"], {
        cwd: ws.dir,
        env: { ...ENV, TASKQ_STORE: proxy.url(SECRET_URL) },
      });
      workers.push(run);
      expect(await eventually(() => run.stdout().includes("| started"), 15_000)).toBe(true);
      proxy.freeze();
      const signalledAt = Date.now();
      run.child.kill("SIGTERM");
      const result = await run.done;
      expect(result.code).toBe(143);
      // Its 1 s to finish, the kill, a few seconds for what the database never answers, and 3 s for the summary: not 30 s.
      expect(Date.now() - signalledAt).toBeLessThan(15_000);
      expect(result.stderr).toMatch(/taskq: no summary of run \S+: /);
      // run has no --lease flag (worker has): the line about the lease left names none.
      expect(result.stdout).toMatch(/ left {4}\S+\/a: its lease was not given back \(the database could not be reached\)\. It runs out within \d+s \(the lease run --store takes\); then a worker/);
      expect(result.stdout).not.toContain("--lease");
    } finally {
      await proxy.close();
    }
  });

  // Its worker stopped, run --store cancels the run and reads its summary with no listener for a signal: a second Ctrl-C
  // (or a runner's SIGTERM after its SIGINT) then killed taskq in silence, the run left live, its tasks queued for any worker.
  it("run --store: a second signal while it ends its stopped run stops it at once, saying the run may still be live and how to cancel it", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("stopped-twice", "tasks:\n  a: { run: 'echo started; sleep 1000' }\n  b: { run: 'echo b', dependsOn: a }\n");
      const run = startCli(["run", file, "--log-dir", ws.logs, "--shutdown-timeout", "1s", "--kill-grace", "1s"], {
        cwd: ws.dir,
        env: { ...ENV, TASKQ_STORE: proxy.url(SECRET_URL) },
      });
      workers.push(run);
      expect(await eventually(() => run.stdout().includes("| started"), 15_000)).toBe(true);
      const runId = /^\S+ run (\S+) submitted/.exec(run.stdout())![1]!;
      // The database stops answering: the run's cancel and summary wait (3 s at most) for it once the worker has stopped.
      proxy.freeze();
      run.child.kill("SIGTERM");
      expect(await eventually(() => / stopped \(/.test(run.stdout()), 20_000)).toBe(true);
      run.child.kill("SIGINT");
      const result = await run.done;
      expect(result.code).toBe(143);
      expect(result.stderr).toContain(
        `taskq: SIGINT received after SIGTERM while run ${runId} was being stopped: stopping now; it may still be live: its tasks that had not started may not have been cancelled, and a worker would run them; cancel it with: taskq cancel ${runId}\n`,
      );
      proxy.accept();
      await cancelStrandedRun(runId);
    } finally {
      await proxy.close();
    }
  });

  it("a reply lost after its commit (connection cut): the worker gives back what it leased, the attempt not counted, and reports what was recorded", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      // No retries: an attempt used up by a lease that never started would make a dead letter.
      const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
      const file = await workflowFile("lost-reply", `tasks:\n${keys.map((key) => `  ${key}: { run: "sleep 0.1; echo ${key}" }\n`).join("")}`);
      const worker = await startWorker(["-j", "2", "--lease", "2s"], { TASKQ_STORE: proxy.url(SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/k1 | k1`))).toBe(true);
      // Three round trips that record the tasks just done and lease the next ones commit; their replies are lost.
      for (let cut = 0; cut < 3; cut++) await proxy.cutAfterReply("complete_and_lease");
      const status = await waitForRun(runId, 20_000);
      expect(status.tasks.filter((row) => row.state !== "succeeded" || row.attempts !== 1).map((row) => `${row.key}: ${row.state}, ${row.lastError}`)).toEqual([]);
      // The worker prints a task's end once the database has answered; the run may be seen done a moment before.
      const oks = () => worker.stdout().match(new RegExp(`ok {6}${runId}/`, "g"))?.length ?? 0;
      await eventually(() => oks() >= 30, 10_000);
      const out = worker.stdout();
      expect(out).toMatch(new RegExp(`release ${runId}/k\\d+: leased by a round trip whose reply was lost; given back, the attempt not counted`));
      // Each success the lost round trips recorded is told as recorded, not as a lost lease.
      expect(out).not.toMatch(/the result was not recorded|FAILED/);
      expect(out.match(new RegExp(`ok {6}${runId}/`, "g"))).toHaveLength(30);
      // Each task started once: what the lost round trips leased had never started.
      expect(starts(out, runId).map((match) => match[1]).sort()).toEqual([...keys].sort());
      expect((await stopWorker(worker)).code).toBe(143);
    } finally {
      await proxy.close();
    }
  });

  it("run --store works on its own run only: another run's task is left to the workers, and never sees this process's environment", async () => {
    const leaked = path.join(ws.dir, `leaked-${randomBytes(3).toString("hex")}`);
    // First in line: critical, and submitted before.
    const other = await submit(await workflowFile("others", `tasks:\n  theirs: { run: 'echo "secret=$CI_SECRET" > "${leaked}"', priority: critical }\n`));
    const own = await workflowFile("own", "tasks:\n  mine: { run: echo mine }\n  after: { run: echo after, dependsOn: mine }\n");
    const ownId = `own-${randomBytes(3).toString("hex")}`;
    runIds.push(ownId);
    const result = await taskq(["run", own, "--store", SECRET_URL, "--store-schema", SCHEMA, "--log-dir", ws.logs, "--run-id", ownId], {
      TASKQ_STORE: "",
      CI_SECRET: "hunter2",
    });
    expect(result.code).toBe(0);
    expect(starts(result.stdout, ownId)).toHaveLength(2);
    expect(starts(result.stdout, other)).toEqual([]);
    expect((await store.runStatus(other)).tasks[0]).toMatchObject({ state: "queued", attempts: 0 });
    // A worker runs every run's tasks, with its own environment.
    const worker = await startWorker(["-j", "1"]);
    expect((await waitForRun(other)).state).toBe("succeeded");
    expect(await readFile(leaked, "utf8")).toBe("secret=\n");
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("a log folder that cannot be used: the worker says so and exits before leasing anything; run --store before submitting", async () => {
    const runId = await submit(await workflowFile("no-logs", "tasks:\n  a: { run: echo a }\n"));
    const cli = startCli(["worker", "--log-dir", "/proc/nope"], { cwd: ws.dir, env: ENV });
    workers.push(cli);
    expect(await eventually(() => cli.child.exitCode !== null, 10_000)).toBe(true);
    const refused = await cli.done;
    expect(refused).toMatchObject({ code: 1, stdout: "", stderr: "taskq: cannot write to the log folder /proc/nope: /proc/nope cannot be made in /proc, a proc file system, whose entries only the kernel makes (ENOENT): give --log-dir a folder elsewhere\n" });
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", attempts: 0 });

    const ownId = `no-logs-${randomBytes(3).toString("hex")}`;
    const run = await taskq(["run", path.join(ws.dir, "no-logs.yaml"), "--store", SECRET_URL, "--store-schema", SCHEMA, "--log-dir", "/proc/nope", "--run-id", ownId]);
    expect(run).toMatchObject({ code: 1, stderr: "taskq: cannot write to the log folder /proc/nope: /proc/nope cannot be made in /proc, a proc file system, whose entries only the kernel makes (ENOENT): give --log-dir a folder elsewhere\n" });
    await expect(store.runStatus(ownId)).rejects.toMatchObject({ code: "STORE_NOT_FOUND" });
    // A relative one is named with the full path it resolved to: the worker's current folder may be anywhere (systemd's is /).
    const upToProc = path.relative(realpathSync(ws.dir), "/proc/nope");
    const relative = await taskq(["worker", "--log-dir", upToProc]);
    expect(relative).toMatchObject({ code: 1, stderr: `taskq: cannot write to the log folder ${upToProc} (/proc/nope): /proc/nope cannot be made in /proc, a proc file system, whose entries only the kernel makes (ENOENT): give --log-dir a folder elsewhere\n` });
    expect((await taskq(["cancel", runId])).code).toBe(0);
  });

  it("status times a run on the database's clock: a machine whose clock is behind or ahead of it shows the time the run has taken, never a negative one", async () => {
    const file = await workflowFile("skewed", "tasks:\n  waits: { run: 'true' }\n");
    const runId = await submit(file);
    // Submitted 10 minutes ago on the database's clock; no worker takes its task.
    await sql(store, "UPDATE $schema.runs SET created_at = now() - interval '10 minutes' WHERE id = $1", [runId]);
    const wallMs = async (shiftMs: number): Promise<number> => {
      const result = await taskq(["status", runId, "--output", "json"], { NODE_OPTIONS: `--require ${path.join(FIXTURES, "clock-shift.cjs")}`, TASKQ_TEST_CLOCK_SHIFT_MS: String(shiftMs) });
      expect({ code: result.code, stderr: withoutNoWorkerNote(result.stderr) }).toEqual({ code: 1, stderr: "" });
      return (JSON.parse(result.stdout) as { wallMs: number }).wallMs;
    };
    for (const shiftMs of [-3_600_000, 0, 3_600_000]) {
      const wall = await wallMs(shiftMs);
      expect(wall).toBeGreaterThanOrEqual(600_000);
      expect(wall).toBeLessThan(660_000);
    }
    // Stored as if in the future (a clock set back on the database's machine): no time yet, not a negative one.
    await sql(store, "UPDATE $schema.runs SET created_at = now() + interval '1 hour' WHERE id = $1", [runId]);
    expect(await wallMs(0)).toBe(0);
    const plain = await taskq(["status", runId]);
    expect(plain.stdout).toMatch(/ unfinished \(1 ready\) in 0ms\n/);
    await store.cancelRun(runId);
  });

  it("status --output json: a task waiting for its delay or a retry's backoff is SCHEDULED, not READY; file is the file submitted", async () => {
    const file = await workflowFile(
      "scheduled",
      `name: scheduled-run
tasks:
  now: { run: "sleep 1000" }
  later: { run: echo later, delay: 1h }
  retried: { run: "exit 3", retries: 1, backoff: { base: 1h, max: 1h } }
  waiting: { run: echo waiting, dependsOn: now }
`,
    );
    const runId = await submit(file);
    // This test's own worker: "retried" fails once and waits for its backoff (jitter at its top: nearly 1h), "now" is given back.
    const worker = await PostgresStore.open({ connectionString: DATABASE_URL, schema: SCHEMA, random: () => 0.99 });
    try {
      const [now, retried] = await worker.lease("test-worker", 2, 30_000);
      expect([now!.key, retried!.key]).toEqual(["now", "retried"]);
      expect(await worker.complete(retried!.leaseToken, { kind: "failure", error: "exited with code 3", exitCode: 3 })).toMatchObject({ state: "queued" });
      expect(await worker.release(now!.leaseToken)).toBe(true);
    } finally {
      await worker.close();
    }
    const json = await taskq(["status", runId, "--output", "json"]);
    expect(withoutNoWorkerNote(json.stderr)).toBe("");
    expect(JSON.parse(json.stdout)).toMatchObject({
      event: "summary",
      runId,
      file,
      state: "running",
      counts: { BLOCKED: 1, SCHEDULED: 2, READY: 1, RUNNING: 0, SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 },
    });
    // Which task waits for its retry, when it is due and why: the counts alone left a run sitting there unexplained.
    const retrying = (JSON.parse(json.stdout) as { retrying: Array<{ id: string; attempt: number; maxAttempts: number; inMs: number; error: string }> }).retrying;
    expect(retrying).toEqual([{ id: "retried", attempt: 2, maxAttempts: 2, inMs: expect.any(Number) as number, error: "exited with code 3" }]);
    expect(retrying[0]!.inMs).toBeGreaterThan(30 * 60_000);
    expect(retrying[0]!.inMs).toBeLessThanOrEqual(3_600_000);
    // The text says the same, in the same words (and --watch too: see below).
    const text = await taskq(["status", runId]);
    expect(text.stdout).toMatch(/^Summary: 0 succeeded, 0 failed, 0 cancelled, 4 unfinished \(1 blocked, 2 scheduled, 1 ready\) in /m);
    expect(text.stdout).toMatch(/\nWaiting for a retry \(1\):\n {2}↻ retried: attempt 2\/2 in \d+m[\d.]+s \(attempt 1 failed: exited with code 3\)\n/);
    expect((await taskq(["cancel", runId])).code).toBe(0);
  });

  it("a run that does not exist is an error for every command; an empty --metrics-port and a store that is not PostgreSQL are usage errors", async () => {
    const runs = [["status"], ["dead-letters"], ["cancel"], ["cancel", "a"], ["redrive", "a"]].map(([command, ...rest]) => [command!, "no-such-run", ...rest]);
    for (const args of runs) {
      const result = await taskq(args);
      expect({ args, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ args, code: 1, stdout: "", stderr: `taskq: no run "no-such-run" in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA)\n` });
    }
    // The store's error carries no exit code of its own: the CLI's is 1, in the JSON record too.
    const json = await taskq(["status", "no-such-run", "--output", "json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ event: "error", code: "STORE_NOT_FOUND", exitCode: 1 });
    // A run that exists, without that task: the task is what is missing.
    const known = await submit(await workflowFile("known-run", "tasks:\n  a: { run: echo a }\n"));
    for (const command of ["cancel", "redrive"]) {
      expect(await taskq([command, known, "nope"])).toMatchObject({ code: 1, stderr: `taskq: no task "nope" in run "${known}"\n` });
    }
    expect((await taskq(["cancel", known])).code).toBe(0);
    // An unset $PORT: not a random port.
    const empty = await taskq(["worker", "--metrics-port", ""]);
    expect(empty).toMatchObject({ code: 2, stderr: 'taskq: --metrics-port: "" is not a port number from 0 to 65535 (0 picks a free one)\n' });
    const file = await workflowFile("not-postgres", "tasks:\n  a: { run: echo a }\n");
    for (const url of [`mysql://root:${PASSWORD}@127.0.0.1:5432/test`, "127.0.0.1:5432/test"]) {
      for (const args of [["status", "x"], ["worker"], ["submit", file]]) {
        const result = await taskq(args, { TASKQ_STORE: url });
        expect(result.code).toBe(2);
        expect(result.stderr).toMatch(/^taskq: the store \S+ is not a PostgreSQL URL: it must start with postgres:\/\/ or postgresql:\/\/\n$/);
      }
    }
    // A connect_timeout that is not a number: a usage error naming it, and where it was given, before anything is stored.
    const badTimeout = `${SECRET_URL}?connect_timeout=abc`;
    for (const args of [["status", "x"], ["worker"], ["submit", file], ["run", file, "--log-dir", ws.logs]]) {
      expect(await taskq(args, { TASKQ_STORE: badTimeout })).toMatchObject({
        code: 2,
        stdout: "",
        stderr: "taskq: TASKQ_STORE: connect_timeout=abc in the connection string is not a whole number of seconds (at least 2, or 0 for no limit)\n",
      });
    }
    expect(await taskq(["status", "x", "--store", badTimeout])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^taskq: --store: connect_timeout=abc in the connection string/) });
    const postgresql = await taskq(["dead-letters", "no-such-run"], { TASKQ_STORE: SECRET_URL.replace(/^postgres:/, "postgresql:") });
    expect(postgresql).toMatchObject({ code: 1, stderr: `taskq: no run "no-such-run" in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA)\n` });
  });

  it("status, cancel, dead-letters, prune and redrive in a schema without a store say so, and make none there", async () => {
    const absent = `taskq_e2e_absent_${randomBytes(3).toString("hex")}`;
    const commands = [["status", "r"], ["cancel", "r"], ["dead-letters"], ["prune", "--older-than", "1d"], ["redrive", "r", "a"]];
    const message = (source: string) =>
      `taskq: ${SECRET_URL.replace(PASSWORD, "***")}: no taskq store in schema "${absent}" (${source}): nothing was ever submitted there; submit, worker and run --store make one\n`;
    for (const args of commands) {
      const result = await taskq([...args, "--store-schema", absent]);
      expect({ args, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ args, code: 1, stdout: "", stderr: message("given by --store-schema") });
    }
    expect(await taskq(["status", "r"], { TASKQ_STORE_SCHEMA: absent })).toMatchObject({ code: 1, stderr: message("given by TASKQ_STORE_SCHEMA") });
    const made = await store.pool.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [absent]);
    expect(made.rows).toEqual([]);
  });

  it("run --store --dry-run under a low open-file limit plans the concurrency the run then uses", async () => {
    const file = await workflowFile("fd-plan", `tasks:\n${Array.from({ length: 10 }, (_, i) => `  t${i}: { run: "true" }`).join("\n")}\n`);
    /** taskq under `ulimit -n limit`, against the store. */
    const limited = (limit: number, args: string[]) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn("sh", ["-c", `ulimit -n ${limit} && exec "$0" "$@"`, process.execPath, BIN, ...args], { cwd: ws.dir, env: { ...process.env, ...ENV, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "inherit"] });
        let stdout = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.on("close", (code) => resolve({ code, stdout }));
      });
    // Four limits in a row (a task costs three descriptors): one of them is where a descriptor more or less moves the fit by a task.
    for (const limit of [64, 65, 66, 67]) {
      const dry = await limited(limit, ["run", file, "-j", "200", "--dry-run"]);
      expect(dry.code).toBe(0);
      const planned = Number(/concurrency (\d+) \(not 200/.exec(dry.stdout)?.[1]);
      expect(planned).toBeGreaterThan(1);
      const real = await limited(limit, ["run", file, "-j", "200", "--log-dir", ws.logs]);
      expect(real.code).toBe(0);
      expect({ limit, used: Number(/worker \S+: \S+ \(schema "[^"]+"\), concurrency (\d+), logs in /.exec(real.stdout)?.[1]) }).toEqual({ limit, used: planned });
    }
  });

  it("status --watch rides out a database that refuses connections for a while, saying so (a record in JSON), and ends on any other error", async () => {
    // A database of its own, which this test closes to connections and opens again (the server keeps running).
    const database = `${new URL(DATABASE_URL).pathname.slice(1)}_watch_${randomBytes(3).toString("hex")}`;
    const url = new URL(DATABASE_URL);
    url.pathname = `/${database}`;
    const env = { TASKQ_STORE: url.toString() };
    const allow = async (yes: boolean) => {
      await store.pool.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS ${yes}`);
      if (!yes) await store.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [database]);
    };
    await store.pool.query(`CREATE DATABASE "${database}"`);
    const watches: ReturnType<typeof startCli>[] = [];
    try {
      const file = await workflowFile("watch-outage", "tasks:\n  a: { run: echo a, delay: 1h }\n");
      const runId = (await taskq(["submit", file], env)).stdout.trim();
      const records = (watch: ReturnType<typeof startCli>) => watch.stdout().trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
      const events = (watch: ReturnType<typeof startCli>) => records(watch).map((record) => record.event);
      const json = startCli(["status", runId, "--watch", "--output", "json"], { cwd: ws.dir, env: { ...ENV, ...env } });
      const plain = startCli(["status", runId, "--watch"], { cwd: ws.dir, env: { ...ENV, ...env } });
      watches.push(json, plain);
      // Each has also said (once, after its first read) that no worker is connected: a look the outage would cut short.
      const saidNoWorker = () => json.stderr().endsWith("\n") && plain.stderr().endsWith("\n");
      expect(await eventually(() => events(json).includes("progress") && plain.stdout().includes(": 0 succeeded") && saidNoWorker(), 15_000)).toBe(true);
      await allow(false);
      expect(await eventually(() => events(json).includes("db-error") && plain.stdout().includes("; retrying\n"), 15_000)).toBe(true);
      // Still polling through the outage: each says so again at its next read (a second on), and neither has ended.
      // (Counted in the text as it comes: a record may be read before its line is whole.)
      const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;
      expect(await eventually(() => count(json.stdout(), /"event":"db-error".*\n/g) >= 2 && count(plain.stdout(), /; retrying\n/g) >= 2, 15_000)).toBe(true);
      expect([json.child.exitCode, plain.child.exitCode]).toEqual([null, null]);
      expect(records(json).find((record) => record.event === "db-error")).toEqual({
        ts: expect.any(String),
        event: "db-error",
        runId,
        operation: "status",
        message: `database "${database}" is not currently accepting connections`,
        retrying: true,
      });
      expect(plain.stdout()).toMatch(new RegExp(`^\\S+ ${runId}: status failed: database "${database}" is not currently accepting connections; retrying$`, "m"));
      await allow(true);
      expect(await eventually(() => events(json).at(-1) === "progress" && /unfinished \(1 scheduled\)\n$/.test(plain.stdout()), 15_000)).toBe(true);
      expect((await taskq(["cancel", runId], env)).code).toBe(0);
      for (const watch of [json, plain]) expect((await watch.done).code).toBe(1);
      expect(events(json).at(-1)).toBe("summary");
      // One vocabulary in the stream: a progress record counts as the summary record does (and the plain line words it).
      const progress = records(json).filter((record) => record.event === "progress").at(-1);
      expect(progress?.counts).toEqual({ BLOCKED: 0, SCHEDULED: 1, READY: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 });
      expect(Object.keys(records(json).at(-1)!.counts as object)).toEqual(Object.keys(progress!.counts as object));
      // Nothing but the note that no worker is connected (no worker runs here), said once by each as it started.
      // (With --output json, as a note record: NO_WORKER.)
      expect(plain.stderr()).toBe(noWorkerNote(SCHEMA));
      const { ts: _ts, ...jsonNote } = JSON.parse(json.stderr()) as Record<string, unknown>;
      expect(jsonNote).toEqual({ event: "note", code: "NO_WORKER", message: noWorkerNote(SCHEMA).replace(/^note: /, "").trimEnd(), schema: SCHEMA });

      // Not an outage (the store's tables gone): the watch ends at once, with the error.
      const second = (await taskq(["submit", file], env)).stdout.trim();
      const ending = startCli(["status", second, "--watch"], { cwd: ws.dir, env: { ...ENV, ...env } });
      watches.push(ending);
      expect(await eventually(() => ending.stdout().includes(": 0 succeeded"), 15_000)).toBe(true);
      const admin = new PostgresStore({ connectionString: url.toString(), schema: SCHEMA });
      try {
        await admin.pool.query(`DROP SCHEMA "${SCHEMA}" CASCADE`);
      } finally {
        await admin.close();
      }
      const ended = await ending.done;
      expect(ended.code).toBe(1);
      // The schema dropped whole: said, after the server's words, with what to do.
      expect(ended.stderr.replace(noWorkerNote(SCHEMA), "")).toMatch(new RegExp(`^taskq: runStatus failed: .*does not exist \\(schema "${SCHEMA}" no longer holds a whole taskq store: part or all of it was dropped after it was made.*\\)\n$`));
    } finally {
      for (const watch of watches) if (watch.child.exitCode === null) process.kill(-watch.child.pid!, "SIGKILL");
      await store.pool.query(`DROP DATABASE "${database}" WITH (FORCE)`);
    }
  });

  it("status --watch of a run deleted while watched (a prune) says so with its last counts, not as a mistyped run id", async () => {
    const runId = await submit(await workflowFile("watch-deleted", "tasks:\n  a: { run: echo a, delay: 1h }\n"));
    const watch = startCli(["status", runId, "--watch"], { cwd: ws.dir, env: ENV });
    try {
      expect(await eventually(() => watch.stdout().includes(": 0 succeeded"), 15_000)).toBe(true);
      // As a prune deletes an ended run: the run's row, and its tasks with it.
      await store.pool.query(`DELETE FROM "${SCHEMA}".runs WHERE id = $1`, [runId]);
      const ended = await watch.done;
      expect(ended.code).toBe(1);
      expect(ended.stderr.replace(noWorkerNote(SCHEMA), "")).toBe(
        `taskq: run "${runId}" was deleted from schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA) while watched; its last read: 0 succeeded, 0 failed, 0 cancelled, 1 unfinished (1 scheduled) (a prune deletes a run once it has ended)\n`,
      );
    } finally {
      if (watch.child.exitCode === null) process.kill(-watch.child.pid!, "SIGKILL");
    }
  });

  it("status --watch | head -1 ends once head has its line", async () => {
    // No worker: the run stays unfinished, and the watch would go on for ever.
    const runId = await submit(await workflowFile("watched", "tasks:\n  a: { run: echo a }\n  b: { run: echo b, delay: 1h }\n"));
    const pipeline = spawn("sh", ["-c", `"${process.execPath}" "${BIN}" status "${runId}" --watch | head -1`], {
      cwd: ws.dir,
      env: { ...process.env, ...ENV, CI: "true", NO_COLOR: "1", PATH: `${FIXTURES}:${process.env.PATH ?? ""}` },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    pipeline.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const ended = new Promise<number | null>((resolve) => pipeline.on("close", resolve));
    try {
      // The shell waits for both ends of the pipe: it exits once taskq has.
      expect(await Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve("still running"), 8_000))])).toBe(0);
      // The task waiting for its delay is told apart from the one free to start, in the summary's words.
      expect(stdout).toMatch(new RegExp(`^\\S+ ${runId}: 0 succeeded, 0 failed, 0 cancelled, 2 unfinished \\(1 scheduled, 1 ready\\)\n$`));
    } finally {
      if (pipeline.exitCode === null) process.kill(-pipeline.pid!, "SIGKILL");
    }
    expect((await taskq(["cancel", runId])).code).toBe(0);
  });

  it("submit of a run id again keeps the tasks it has as stored (a queued one takes the new priority), adds the new ones, and says so", async () => {
    // One file, edited between submits: a run id is for one workflow file (durable-run-file.test.ts).
    const first = "tasks:\n  a: { run: echo v1, priority: low }\n  c: { run: echo c, dependsOn: a }\n";
    const v1 = await workflowFile("version", first);
    const runId = `version-${randomBytes(3).toString("hex")}`;
    expect(await submit(v1, ["--run-id", runId])).toBe(runId);
    await workflowFile("version", "tasks:\n  a: { run: echo v2, priority: high }\n  c: { run: echo c, dependsOn: a, retries: 2 }\n  b: { run: echo b }\n");
    const second = await taskq(["submit", v1, "--run-id", runId]);
    expect(second).toMatchObject({
      code: 0,
      stdout: `${runId}\n`,
      stderr:
        `note: run ${runId} already submitted: 1 new task, 2 kept\n` +
        `note: run ${runId} already has task "a" with another definition (run, priority): the stored run is kept; it is still queued and takes the new priority\n` +
        `note: run ${runId} already has task "c" with another definition (retries): the stored one is kept\n`,
    });
    const worker = await startWorker(["-j", "1"]);
    const status = await waitForRun(runId);
    expect(status.state).toBe("succeeded");
    // The stored command ran, with the new priority: on one slot, "a" (high now, not low) before the new "b" (normal).
    expect(worker.stdout()).toContain(`${runId}/a | v1\n`);
    expect(worker.stdout()).not.toContain(`${runId}/a | v2`);
    expect(starts(worker.stdout(), runId).map((match) => match[1])).toEqual(["a", "c", "b"]);
    expect(taskOf(status, "c")).toMatchObject({ state: "succeeded", maxAttempts: 1 });

    // Ended, a task keeps its priority too, and the run has ended; run --store says the same, as notes of its own output.
    await workflowFile("version", first);
    const third = await taskq(["submit", v1, "--run-id", runId]);
    expect(third.stderr).toBe(
      `note: run ${runId} already submitted: 0 new tasks, 2 kept\nnote: run ${runId} already has task "a" with another definition (priority): the stored one is kept\n` +
        `note: run ${runId} has already ended (succeeded): none of its tasks runs again\n`,
    );
    const run = await taskq(["run", v1, "--log-dir", ws.logs, "--run-id", runId, "--output", "json"]);
    expect(run.code).toBe(0);
    const records = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[0]).toMatchObject({ event: "run", runId, tasks: 2, added: 0, kept: 2 });
    expect(records[1]).toMatchObject({ event: "note", message: `run ${runId} already has task "a" with another definition (priority): the stored one is kept` });
    expect(records.at(-1)).toMatchObject({ event: "summary", state: "succeeded" });
    expect((await stopWorker(worker)).code).toBe(143);
  });

  it("submit of a run id again names a blocked task whose runAt or delay the file changed: it keeps the stored one", async () => {
    const version = (when: string) => `tasks:\n  a: { run: echo a }\n  deploy: { run: echo deploy, dependsOn: a, ${when} }\n`;
    const runId = `when-${randomBytes(3).toString("hex")}`;
    // Days ahead of now, within runAt's limit of 30: a fixed date would pass, or be refused as too far.
    const [first, second] = [daysAhead(10), daysAhead(20)];
    expect(await submit(await workflowFile("when", version(`runAt: "${first}"`)), ["--run-id", runId])).toBe(runId);
    const notBefore = async () => (await store.pool.query<{ at: Date }>(`SELECT not_before AS at FROM "${SCHEMA}".tasks WHERE run_id = $1 AND key = 'deploy'`, [runId])).rows[0]?.at;
    const stored = await notBefore();
    const kept = (field: string) => `note: run ${runId} already submitted: 0 new tasks, 2 kept\nnote: run ${runId} already has task "deploy" with another definition (${field}): the stored one is kept\n`;
    for (const [when, field] of [[`runAt: "${second}"`, "runAt"], ["delay: 1h", "delay"]] as const) {
      const again = await taskq(["submit", await workflowFile("when", version(when)), "--run-id", runId]);
      expect(again).toMatchObject({ code: 0, stdout: `${runId}\n`, stderr: kept(field) });
    }
    // The same time as stored: nothing to say but what was kept.
    const same = await taskq(["submit", await workflowFile("when", version(`runAt: "${first}"`)), "--run-id", runId]);
    expect(same.stderr).toBe(`note: run ${runId} already submitted: 0 new tasks, 2 kept\n`);
    expect(await notBefore()).toEqual(stored);
    expect((await taskq(["cancel", runId])).code).toBe(0);
  });

  it("submit of a run id again names a queued task's changed runAt or delay with its priority: it takes them (a removed one is kept)", async () => {
    const runId = `queued-when-${randomBytes(3).toString("hex")}`;
    // One file, edited between submits.
    const version = async (fields: string) => workflowFile("queued-when", `tasks:\n  a: { ${fields} }\n`);
    expect(await submit(await version("run: echo a, delay: 1h"), ["--run-id", runId])).toBe(runId);
    const notBefore = async () =>
      (await store.pool.query<{ ms: number }>(`SELECT (extract(epoch FROM not_before - now()) * 1000)::float8 AS ms FROM "${SCHEMA}".tasks WHERE run_id = $1 AND key = 'a'`, [runId])).rows[0]?.ms ?? NaN;
    const again = async (fields: string) => (await taskq(["submit", await version(fields), "--run-id", runId])).stderr;
    const head = `note: run ${runId} already submitted: 0 new tasks, 1 kept\nnote: run ${runId} already has task "a" with another definition`;
    // The same file again (a submit step run twice): nothing changes, nor is said to, and the delay is not counted again.
    const first = await notBefore();
    for (let i = 0; i < 2; i++) {
      await sleep(50);
      expect(await again("run: echo a, delay: 1h")).toBe(`note: run ${runId} already submitted: 0 new tasks, 1 kept\n`);
    }
    expect(first - (await notBefore())).toBeGreaterThanOrEqual(90);
    expect(await again("run: echo a, delay: 2h, priority: high")).toBe(`${head} (priority, delay): it is still queued and takes the new priority and delay, counted from this submit\n`);
    expect(await notBefore()).toBeGreaterThan(7_000_000);
    expect(await again(`run: echo a, runAt: "${daysAhead(10)}", priority: high`)).toBe(`${head} (runAt): it is still queued and takes the new runAt\n`);
    const atRunAt = await notBefore();
    expect(atRunAt).toBeGreaterThan(9 * 86_400_000);
    // Neither any more: the queued task keeps its not-before, and says so.
    expect(await again("run: echo a, priority: high")).toBe(`${head} (runAt or delay): the stored one is kept\n`);
    expect(await again(`run: echo b, runAt: "${daysAhead(20)}"`)).toBe(
      `${head} (run, priority, runAt): the stored run is kept; it is still queued and takes the new priority and runAt\n`,
    );
    expect((await notBefore()) - atRunAt).toBeGreaterThan(9 * 86_400_000);
    expect((await taskq(["cancel", runId])).code).toBe(0);
  });

  // A cancelled run submitted again was "already submitted: 0 new tasks, 2 kept", exit 0 for submit, and
  // for run --store a worker started with nothing to do: neither said the run had ended, nor how.
  it("a run submitted again once it has ended says how it ended and that none of its tasks runs again: submit exits 1 unless it succeeded, run --store as its summary, with no worker", async () => {
    const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const file = await workflowFile("ended", "tasks:\n  a: { run: 'sleep 1000' }\n  b: { run: echo b, dependsOn: a }\n");
    const runId = `ended-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    expect(await submit(file, ["--run-id", runId])).toBe(runId);
    // Nothing runs it yet: both tasks are cancelled at once, and the run has ended.
    expect((await taskq(["cancel", runId])).code).toBe(0);
    expect((await store.runStatus(runId)).state).toBe("cancelled");
    const cancelled = `run ${runId} has already ended (cancelled): none of its tasks runs again; to run the workflow again, submit it under another --run-id`;
    const again = await taskq(["submit", file, "--run-id", runId]);
    expect(again).toMatchObject({ code: 1, stdout: `${runId}\n`, stderr: `note: run ${runId} already submitted: 0 new tasks, 2 kept\ntaskq: ${cancelled}\n` });
    const json = await taskq(["submit", file, "--run-id", runId, "--output", "json"]);
    expect(json).toMatchObject({ code: 1, stderr: "" });
    expect(json.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ event: "run", runId, added: 0, kept: 2, state: "cancelled" }),
      { ts: expect.any(String), event: "note", message: cancelled },
    ]);
    const run = await taskq(["run", file, "--run-id", runId, "--log-dir", ws.logs]);
    expect(run).toMatchObject({ code: 1, stderr: "" });
    expect(run.stdout).toMatch(
      new RegExp(`^\\S+ run ${runId} already submitted to \\S+ \\(schema "${SCHEMA}"\\): 0 new tasks, 2 kept\n\\S+ note {4}${escaped(cancelled)}\n\nSummary: 0 succeeded, 0 failed, 2 cancelled in `),
    );
    const runJson = await taskq(["run", file, "--run-id", runId, "--log-dir", ws.logs, "--output", "json"]);
    expect(runJson.code).toBe(1);
    expect(runJson.stdout.trim().split("\n").map((line) => (JSON.parse(line) as { event: string }).event)).toEqual(["run", "note", "summary"]);

    // A failed run is told how to run its failed task again; one that succeeded only that it has ended, exit 0, as before.
    const failing = await workflowFile("ended-failed", "tasks:\n  a: { run: exit 3 }\n");
    const failedId = `ended-failed-${randomBytes(3).toString("hex")}`;
    runIds.push(failedId);
    expect((await taskq(["run", failing, "--run-id", failedId, "--log-dir", ws.logs])).code).toBe(1);
    expect(await taskq(["submit", failing, "--run-id", failedId])).toMatchObject({
      code: 1,
      stderr: `note: run ${failedId} already submitted: 0 new tasks, 1 kept\ntaskq: run ${failedId} has already ended (failed): none of its tasks runs again; to run a failed task again: taskq redrive ${failedId} TASK (taskq dead-letters ${failedId} lists them), or submit the workflow under another --run-id\n`,
    });
    const passing = await workflowFile("ended-succeeded", "tasks:\n  a: { run: echo a }\n");
    const succeededId = `ended-succeeded-${randomBytes(3).toString("hex")}`;
    runIds.push(succeededId);
    expect((await taskq(["run", passing, "--run-id", succeededId, "--log-dir", ws.logs])).code).toBe(0);
    const succeeded = `run ${succeededId} has already ended (succeeded): none of its tasks runs again`;
    expect(await taskq(["submit", passing, "--run-id", succeededId])).toMatchObject({ code: 0, stderr: `note: run ${succeededId} already submitted: 0 new tasks, 1 kept\nnote: ${succeeded}\n` });
    const rerun = await taskq(["run", passing, "--run-id", succeededId, "--log-dir", ws.logs]);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toMatch(new RegExp(`\n\\S+ note {4}${escaped(succeeded)}\n\nSummary: 1 succeeded, 0 failed, 0 cancelled in `));
    // A task the file adds runs, and the run with it: it has not ended any more.
    const grown = await workflowFile("ended-succeeded", "tasks:\n  a: { run: echo a }\n  c: { run: echo c, dependsOn: a }\n");
    const grew = await taskq(["run", grown, "--run-id", succeededId, "--log-dir", ws.logs]);
    expect(grew.code).toBe(0);
    expect(grew.stdout).not.toContain("has already ended");
    expect(grew.stdout).toMatch(/Summary: 2 succeeded, 0 failed, 0 cancelled in /);
  });

  it("submit and run --store note a runAt in the past as validate does", async () => {
    const file = await workflowFile("past", 'tasks:\n  a: { run: echo a, runAt: "2020-01-01T00:00:00Z" }\n');
    const validated = await taskq(["validate", file]);
    const note = /^note: .*runAt 2020-01-01T00:00:00Z is in the past; the task runs now$/m.exec(validated.stdout)?.[0];
    expect(note).toBeDefined();
    const submitted = await taskq(["submit", file]);
    runIds.push(submitted.stdout.trim());
    expect(submitted).toMatchObject({ code: 0, stderr: `${note}\n` });
    const runId = `past-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const run = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId]);
    expect(run.code).toBe(0);
    // Timed, as every other line of run --store's plain output and of a local run's: the notes in the `note` column.
    expect(run.stdout).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} run ${runId} submitted to \\S+ \\(schema "${SCHEMA}"\\): 1 task\n`));
    expect(run.stdout.split("\n")[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} note {4}/);
    expect(run.stdout.split("\n")[1]!.replace(/^\S+ note {4}/, "note: ")).toBe(note);
    expect((await taskq(["cancel", submitted.stdout.trim()])).code).toBe(0);
  });

  it("submit of a file that sets concurrency says the workers do not keep to it, in a note (a record in JSON)", async () => {
    const file = await workflowFile("one-at-a-time", "concurrency: 1\ntasks:\n  a: { run: 'true' }\n  b: { run: 'true' }\n");
    const note = "the file's concurrency (1) does not limit a submitted run: each worker runs up to its own -j tasks at once, of this run and others";
    const plain = await taskq(["submit", file]);
    expect(plain.code).toBe(0);
    runIds.push(plain.stdout.trim());
    expect(plain.stderr).toBe(`note: ${note}\n`);
    const json = await taskq(["submit", file, "--output", "json"]);
    expect(json.code).toBe(0);
    const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; runId?: string; message?: string });
    runIds.push(records[0]!.runId!);
    expect(records.slice(1)).toEqual([{ ts: expect.any(String) as string, event: "note", message: note }]);
    for (const runId of runIds.slice(-2)) await store.cancelRun(runId);
  });

  it("submit and run --store of a file with failFast: true say the durable run does not stop at a failure, naming the run to cancel, and it does not: its other tasks run", async () => {
    const marker = path.join(ws.dir, `went-on-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile("fail-fast", `failFast: true\ntasks:\n  boom: { run: 'exit 3' }\n  other: { run: 'sleep 0.5; touch ${marker}' }\n`);
    const note = (runId: string) => `the file's failFast (true) does not stop a durable run: when a task fails, its workers go on with the others (the run fails all the same); stop it with \`taskq cancel ${runId}\``;
    const submitted = await taskq(["submit", file]);
    expect(submitted.code).toBe(0);
    runIds.push(submitted.stdout.trim());
    expect(withoutNoWorkerNote(submitted.stderr)).toBe(`note: ${note(submitted.stdout.trim())}\n`);
    await store.cancelRun(submitted.stdout.trim());
    // With --output json, the note's record names the run too.
    const json = await taskq(["submit", file, "--output", "json"]);
    const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; runId?: string; message?: string });
    runIds.push(records[0]!.runId!);
    expect(records.filter((record) => record.event === "note").map((record) => record.message)).toContain(note(records[0]!.runId!));
    await store.cancelRun(records[0]!.runId!);
    const runId = `fail-fast-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const run = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId]);
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n")[1]!.replace(/^\S+ note {4}/, "note: ")).toBe(`note: ${note(runId)}`);
    expect(run.stdout).toContain(`ok      ${runId}/other\n`);
    expect(run.stdout).toMatch(/Summary: 1 succeeded, 1 failed, 0 cancelled in /);
    expect(existsSync(marker)).toBe(true);
  });

  it("run --store --no-fail-fast runs a file with failFast: true without its note (submit's: see durable-submit-fail-fast.test.ts); submit --output json leaves it out too", async () => {
    const file = await workflowFile("fail-fast-known", "failFast: true\ntasks:\n  boom: { run: 'exit 3' }\n  other: { run: 'true' }\n");
    const json = await taskq(["submit", file, "--no-fail-fast", "--output", "json"]);
    const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; runId?: string; message?: string });
    runIds.push(records[0]!.runId!);
    expect(records.some((record) => record.event === "note" && record.message!.includes("failFast"))).toBe(false);
    await store.cancelRun(records[0]!.runId!);
    const runId = `fail-fast-known-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const run = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId, "--no-fail-fast"]);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain("failFast");
    expect(run.stdout).toMatch(/Summary: 1 succeeded, 1 failed, 0 cancelled in /);
  });

  it("submit --output json prints the run as a record and its notes as validate's, with file, line and col; its errors as records too", async () => {
    const file = await workflowFile("past-json", 'tasks:\n  a: { run: echo a, runAt: "2020-01-01T00:00:00Z" }\n');
    const validated = await taskq(["validate", file, "--output", "json"]);
    const validNote = (JSON.parse(validated.stdout.trim().split("\n")[1]!) as Record<string, unknown>);
    expect(validNote).toMatchObject({ event: "note", file, line: 2, col: expect.any(Number) });
    const runId = `json-${randomBytes(3).toString("hex")}`;
    runIds.push(runId);
    const records = async (args: string[]) => {
      const result = await taskq(["submit", ...args, "--run-id", runId, "--output", "json"]);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      return result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    };
    const first = await records([file]);
    expect(first).toEqual([
      { ts: expect.any(String), event: "run", runId, file, store: expect.stringMatching(/^postgres:\/\/postgres:\*\*\*@/), schema: SCHEMA, tasks: 1, added: 1, kept: 0, state: "running" },
      { ...validNote, ts: expect.any(String) },
    ]);
    // Again with another priority, the same file edited (a run id is for one file): the note on the kept task is a record too.
    const again = await records([await workflowFile("past-json", 'tasks:\n  a: { run: echo a, runAt: "2020-01-01T00:00:00Z", priority: high }\n')]);
    expect(again.map((record) => [record.event, record.added, record.kept])).toEqual([["run", 0, 1], ["note", undefined, undefined], ["note", undefined, undefined]]);
    expect(again[2]).toMatchObject({ message: `run ${runId} already has task "a" with another definition (priority): it is still queued and takes the new priority` });
    // An invalid file is an `invalid` record, as for validate and run (exit 2).
    const invalid = await taskq(["submit", await workflowFile("bad-json", "tasks:\n  a: { run: echo a, dependsOn: [zz] }\n"), "--output", "json"]);
    expect(invalid.code).toBe(2);
    expect(JSON.parse(invalid.stdout.trim())).toMatchObject({ event: "invalid" });
    expect((await taskq(["cancel", runId])).code).toBe(0);
  });
});
