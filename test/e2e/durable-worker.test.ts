import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, realpathSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { applicationName, storeApplicationName } from "../../src/store/postgres/application-name.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { LEASE_LAPSED } from "../../src/handlers/errors.js";
import { BIN, FIXTURES, hasPython, startCli, type RunningCli } from "../helpers/cli.js";
import { eventually, findLeftovers, liveState, SLOW_TO_TEAR_DOWN_PY } from "../helpers/processes.js";
import { startFreezableProxy } from "../helpers/tcp-proxy.js";
import { useDurableWorkspace } from "./durable-harness.js";
import { DATABASE_URL, task, workflow } from "../store/helpers.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_worker");
const { SCHEMA, SECRET_URL, ENV, runIds, workers, taskq, workflowFile, submit, startWorker, awaitWorker, waitForRun, cancelStrandedRun } = durable;
let store: PostgresStore;
let ws: { dir: string; logs: string };

beforeAll(() => {
  store = durable.store;
  ws = durable.ws;
});

/** Starts `run --store` on a workflow file, this file's store and log folder. */
function startRun(file: string, args: string[], env: Record<string, string> = {}): RunningCli {
  const cli = startCli(["run", file, "--log-dir", ws.logs, ...args], { cwd: ws.dir, env: { ...ENV, ...env } });
  workers.push(cli);
  return cli;
}

function newRunId(prefix: string): string {
  const runId = `${prefix}-${randomBytes(3).toString("hex")}`;
  runIds.push(runId);
  return runId;
}

/**
 * `run --store` of two tasks at -j 1, the one it did not start leased by another worker that is then SIGKILLed,
 * and the run stopped by SIGTERM: what it says of a task whose worker may be gone.
 */
async function stopWithTaskOnDeadWorker(name: string, json: boolean) {
  const file = await workflowFile(name, "tasks:\n  first: { run: 'echo started; sleep 1000' }\n  second: { run: 'echo started; sleep 1000' }\n");
  const runId = newRunId(name);
  const run = startRun(file, ["--run-id", runId, "-j", "1", "--shutdown-timeout", "0.5s", "--kill-grace", "1s", ...(json ? ["--output", "json"] : [])]);
  // The task's own output: its shell runs (a start record comes a turn of the event loop before it).
  const started = json ? /"event":"output","runId":"[^"]+","id":"(\w+)","attempt":1,"stream":"\w+","text":"started"/ : /\S+\/(\w+) \| started/;
  expect(await eventually(() => started.test(run.stdout()), 15_000)).toBe(true);
  const own = started.exec(run.stdout())![1]!;
  const other = own === "first" ? "second" : "first";
  const worker = await startWorker(["-j", "1"]);
  expect(await eventually(() => worker.stdout().includes(`${runId}/${other} | started`), 15_000)).toBe(true);
  worker.cli.child.kill("SIGKILL");
  await worker.cli.done;
  run.child.kill("SIGTERM");
  return { runId, result: await run.done, own, other, worker };
}

describe("taskq worker", () => {
  it("serving many one-task runs, its heap stays bounded: a run's handler goes once the run has no task here", async () => {
    const probe = path.join(ws.dir, `heap-${randomBytes(3).toString("hex")}`);
    // Plain node with the collector exposed, and a preload that reports the heap after a full collection.
    const cli = startCli(["worker", "-j", "4", "--log-dir", ws.logs], {
      cwd: ws.dir,
      env: { ...ENV, TASKQ_HEAP_PROBE: probe, TASKQ_CODE_CACHE: "0" },
      nodeArgs: ["--expose-gc", "--require", path.join(FIXTURES, "heap-probe.cjs")],
    });
    const { child } = cli;
    await awaitWorker(cli);

    const ended = async (): Promise<number> => {
      const counts = await store.countByState();
      return counts.succeeded + counts.failed + counts.cancelled;
    };
    let served = await ended();
    /** Submits `count` runs of one quick task each and waits until the worker has run them all. */
    const serveRuns = async (count: number): Promise<void> => {
      const runTrue = workflow([task("only", { run: "true", cwd: ws.dir })]);
      for (let i = 0; i < count; i++) await store.submitRun(runTrue, { runId: `heap-${i}-${randomBytes(4).toString("hex")}` });
      served += count;
      expect(await eventually(async () => (await ended()) >= served, 120_000)).toBe(true);
    };
    const probed = async (): Promise<number[]> => (await readFile(probe, "utf8").catch(() => "")).split("\n").filter(Boolean).map(Number);
    /** The worker's heap after a full collection, once the handlers of the runs just served may have gone (after 1 s). */
    const heap = async (): Promise<number> => {
      await sleep(2_000);
      const before = (await probed()).length;
      child.kill("SIGUSR2");
      expect(await eventually(async () => (await probed()).length > before, 10_000)).toBe(true);
      return (await probed()).at(-1)!;
    };
    await serveRuns(50);
    const warm = await heap();
    await serveRuns(400);
    const after = await heap();
    expect((await store.countByState()).failed).toBe(0);
    // Each run's handler kept for ever grew it by ~10 KB a run (4 MB here); what grows now is noise (~0.4 MB).
    expect(after - warm).toBeLessThan(2_000_000);
    child.kill("SIGTERM");
    expect((await cli.done).code).toBe(143);
  }, 240_000);

  it("in plain lines, shows a line its task has not ended yet as far as it goes before the rest comes, as a local run does", async () => {
    const runId = await submit(await workflowFile("open-line", "tasks:\n  db: { run: \"printf 'waiting...'; sleep 3; echo done\" }\n"));
    const worker = await startWorker(["-j", "1"]);
    let early = "";
    expect(await eventually(() => ((early = worker.stdout()), early.includes(`${runId}/db | waiting...\n`) || early.includes("done")), 20_000)).toBe(true);
    expect(early).toContain(`${runId}/db | waiting...\n`);
    expect(early).not.toContain(`${runId}/db | done`);
    expect(await eventually(() => worker.stdout().includes(`${runId}/db | waiting...\n${runId}/db | done\n`), 20_000)).toBe(true);
  });

  it("in plain lines into a pipe, a line shown before it ends keeps its colours as a local run's: taskq's lines after it are not coloured, the rest of it is", async () => {
    const runId = await submit(await workflowFile("open-colour", "tasks:\n  d: { run: \"printf '\\\\033[31mwait'; sleep 2; printf 'ing\\\\033[0m\\\\n'\" }\n"));
    const worker = await startWorker(["-j", "1"], { NO_COLOR: "" }); // colours kept: the tests' NO_COLOR off
    expect(await eventually(() => worker.stdout().includes(`${runId}/d`) && /\bok +\S+\/d\b/.test(worker.stdout()), 20_000)).toBe(true);
    const out = worker.stdout();
    // Reset before the next line, whoever writes it; the prefix of the rest uncoloured, its text red again.
    expect(out).toContain(`${runId}/d | \x1b[31mwait\n\x1b[0m${runId}/d | \x1b[31ming\x1b[0m\n`);
  });

  // `taskq worker` took no --no-color (run --store did): a CI script that passes it to each command got a usage error, exit 2.
  it("--no-color sets no task's colour again after its prefix, as NO_COLOR does, and its help names it", async () => {
    const runId = await submit(await workflowFile("no-color", "tasks:\n  d: { run: \"printf '\\\\033[31mwait'; sleep 2; printf 'ing\\\\033[0m\\\\n'\" }\n"));
    const worker = await startWorker(["-j", "1", "--no-color"], { NO_COLOR: "" }); // the tests' NO_COLOR off: the flag alone
    expect(await eventually(() => worker.stdout().includes(`${runId}/d`) && /\bok +\S+\/d\b/.test(worker.stdout()), 20_000)).toBe(true);
    // Reset before the next line, as ever; the rest of the line after its prefix as the task wrote it, its red not set again.
    expect(worker.stdout()).toContain(`${runId}/d | \x1b[31mwait\n\x1b[0m${runId}/d | ing\x1b[0m\n`);
    const help = await taskq(["worker", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain("--no-color no colours (NO_COLOR and FORCE_COLOR are honoured too)");
  });

  it("applies retryOn as a local run does (a signal as 128 + its number, a timeout whatever it lists), and says why a failure is not retried", async () => {
    const file = await workflowFile(
      "retry-on",
      `defaults: { backoff: { base: 50ms, max: 50ms } }
tasks:
  killed: { run: 'echo "try $TASKQ_ATTEMPT"; kill -KILL $$', retries: 2, retryOn: [2] }
  unlisted: { run: 'exit 1', retries: 1, retryOn: [2] }
  listed: { run: 'echo "try $TASKQ_ATTEMPT"; kill -TERM $$', retries: 1, retryOn: [143] }
  slow: { run: 'sleep 1000', timeout: 300ms, retries: 1, retryOn: [75] }
`,
    );
    const worker = await startWorker(["-j", "4"]);
    const runId = await submit(file);
    const status = await waitForRun(runId);
    const byKey = Object.fromEntries(status.tasks.map((row) => [row.key, [row.attempts, row.lastError]]));
    expect(byKey).toEqual({
      killed: [1, "killed by SIGKILL (not by taskq: perhaps the out-of-memory killer; 137 is not in retryOn: not retried)"],
      unlisted: [1, "exited with code 1 (1 is not in retryOn: not retried)"],
      listed: [2, "killed by SIGTERM"],
      slow: [2, "timed out after 300ms"],
    });
    expect(worker.stdout()).toContain(`FAILED  ${runId}/killed after 1 attempt: killed by SIGKILL (not by taskq: perhaps the out-of-memory killer; 137 is not in retryOn: not retried)\n`);
    expect(worker.stdout()).toContain(`FAILED  ${runId}/unlisted after 1 attempt: exited with code 1 (1 is not in retryOn: not retried)\n`);
    expect(await readFile(path.join(ws.logs, runId, "killed.log"), "utf8")).toBe("try 1\n--- taskq: attempt 1 killed by SIGKILL (not by taskq: perhaps the out-of-memory killer; 137 is not in retryOn: not retried) ---\n");
    expect(await readFile(path.join(ws.logs, runId, "unlisted.log"), "utf8")).toBe("--- taskq: attempt 1 exited with code 1 (1 is not in retryOn: not retried) ---\n");

    const dead = await taskq(["dead-letters", runId]);
    expect(dead.code).toBe(0);
    expect(dead.stdout).toContain(`${runId}/killed: killed by SIGKILL (not by taskq: perhaps the out-of-memory killer; 137 is not in retryOn: not retried) (1 attempt)\n  log: <log-dir>/${runId}/killed.log (on ${worker.id})\n    try 1\n`);
    expect(dead.stdout).toContain(`${runId}/unlisted: exited with code 1 (1 is not in retryOn: not retried) (1 attempt)\n`);
    const summary = await taskq(["status", runId]);
    expect(summary.code).toBe(1);
    expect(summary.stdout).toMatch(/\S+ killed: killed by SIGKILL \(not by taskq: perhaps the out-of-memory killer; 137 is not in retryOn: not retried\) \(1 attempt\)/);
    expect(summary.stdout).toMatch(/\S+ unlisted: exited with code 1 \(1 is not in retryOn: not retried\) \(1 attempt\)/);
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  });

  it("frozen past its lease with no other worker (SIGSTOP, SIGCONT): the success is recorded, and the worker goes on", async () => {
    const file = await workflowFile("frozen", "tasks:\n  deploy: { run: 'touch frozen.began; sleep 1; echo deployed' }\n");
    const worker = await startWorker(["--lease", "2s", "-j", "1"]);
    const runId = await submit(file);
    // Its shell runs (the start line comes a turn of the worker's event loop before it).
    expect(await eventually(() => existsSync(path.join(ws.dir, "frozen.began")), 15_000)).toBe(true);
    worker.cli.child.kill("SIGSTOP");
    // Past the lease: the task ends meanwhile (the worker's own process is stopped, not the task's). Held until its
    // shell is gone too: a loaded machine's `sleep 1` could outlast a fixed 4 s, and the worker, let go on, found its lease
    // run out with the task still running and killed it. And until the database has the lease run out.
    try {
      expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 15_000)).toBe(true);
      expect(await eventually(async () => (await store.runStatus(runId)).tasks[0]?.leaseExpiredMs !== undefined, 15_000)).toBe(true);
    } finally {
      worker.cli.child.kill("SIGCONT");
    }
    const status = await waitForRun(runId);
    expect(status.tasks[0]).toMatchObject({ state: "succeeded", attempts: 1 });
    expect(await readFile(path.join(ws.logs, runId, "deploy.log"), "utf8")).toBe("deployed\n");
    expect(await eventually(() => worker.stdout().includes(`ok      ${runId}/deploy`), 10_000)).toBe(true);
    expect(worker.stdout()).not.toMatch(/the result was not recorded|stopped|within 0s/);
    // Not stopped by itself: it goes on serving.
    expect(worker.cli.child.exitCode).toBe(null);
    const next = await submit(await workflowFile("after-frozen", "tasks:\n  next: { run: echo next }\n"));
    expect((await waitForRun(next)).state).toBe("succeeded");
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  });

  it("stopping, held up (SIGSTOP, SIGCONT) past its abort grace while an ended task's leftover waits out its kill grace: the success is recorded, its lease not given back", async () => {
    // Its command ends before the time to finish passes; what it left ignores SIGTERM, so its handler waits out the kill
    // grace (2s), past the time to finish (1s). The wait for the stopped tasks (the kill grace and 2 s) passes while the worker is held up.
    const file = await workflowFile("held-up", "tasks:\n  ended: { run: 'ignore-sigterm & sleep 0.3; echo done' }\n  long: { run: 'echo up; sleep 30' }\n");
    const worker = await startWorker(["-j", "2", "--shutdown-timeout", "1s", "--kill-grace", "2s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/ended | done`) && worker.stdout().includes(`${runId}/long | up`), 15_000)).toBe(true);
    worker.cli.child.kill("SIGTERM");
    expect(await eventually(() => worker.stdout().includes("the 1s to finish have passed"), 15_000)).toBe(true);
    worker.cli.child.kill("SIGSTOP");
    try {
      await sleep(6_000);
    } finally {
      worker.cli.child.kill("SIGCONT");
    }
    expect((await worker.cli.done).code).toBe(143);
    expect(worker.stdout()).toMatch(new RegExp(`ok\\s+${runId}/ended\\n`));
    expect(worker.stdout()).not.toMatch(new RegExp(`release\\s+${runId}/ended`));
    expect(worker.stdout()).toMatch(new RegExp(`note\\s+${runId}/ended: stopped \\d+ processes it left running`));
    const { tasks } = await store.runStatus(runId);
    expect(tasks.find((t) => t.key === "ended")).toMatchObject({ state: "succeeded", attempts: 1 });
    await cancelStrandedRun(runId);
  });

  it("frozen past its lease while its task ends, which another worker took over: the result is discarded, its log says so, and the worker stops (exit 1)", async () => {
    const file = await workflowFile("frozen-taken", "tasks:\n  deploy: { run: 'touch frozen-taken.began; sleep 1; echo deployed $TASKQ_ATTEMPT', retries: 1 }\n");
    const frozen = await startWorker(["--lease", "2s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => existsSync(path.join(ws.dir, "frozen-taken.began")), 15_000)).toBe(true);
    frozen.cli.child.kill("SIGSTOP");
    // The task ends meanwhile (its processes are not stopped); the other worker sweeps the lease and runs it again.
    const other = await startWorker(["--lease", "2s", "-j", "1"]);
    const status = await waitForRun(runId, 30_000);
    expect(status.tasks[0]).toMatchObject({ state: "succeeded", attempts: 2 });
    // Its line may come a moment after the database's record, which the wait above reads.
    expect(await eventually(() => other.stdout().includes(`ok      ${runId}/deploy`), 10_000)).toBe(true);
    // Attempt 1's shell gone too (not only attempt 2's): its end is what the worker meets as it goes on.
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 15_000)).toBe(true);
    frozen.cli.child.kill("SIGCONT");
    // Its work was someone else's: as when a renewal finds the task taken over, it takes no more (README: Leases and heartbeats).
    expect(await eventually(() => frozen.stdout().includes(`stale   ${runId}/deploy: exited with code 0, not recorded: its lease had run out, and worker ${other.id} took the task over\n`), 10_000)).toBe(true);
    expect(await eventually(() => frozen.cli.child.exitCode !== null, 10_000)).toBe(true);
    const result = await frozen.cli.done;
    // Why it stops, and what of the tasks it still runs, as a signal's stop says it.
    expect(result.stdout).toContain(
      "note    a task's lease was taken from this worker (it stalled past the lease: the task is another worker's, or a sweep ended it): no new task is leased; running tasks have 10s to finish\n",
    );
    expect(result.stdout).toMatch(/stopped \(lease-lost\)\n$/);
    expect(result.code).toBe(1);
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "succeeded", attempts: 2 });
    // Its log (this machine's, shared with the other worker) says what became of attempt 1, as of every attempt that did not succeed.
    // Its output reached the log only once this worker ran again, after attempt 2's.
    expect(await readFile(path.join(ws.logs, runId, "deploy.log"), "utf8")).toBe(
      `--- taskq: attempt 2 ---\ndeployed 2\ndeployed 1\n--- taskq: attempt 1 exited with code 0 but was not recorded: its lease had run out, and worker ${other.id} took the task over ---\n`,
    );
  });

  it("run --store sweeps another run's expired lease, as any worker does, and tells of its own run's tasks alone", async () => {
    // Another run's task, leased by a worker that died: its lease runs out in 1 s.
    const otherRun = `elsewhere-${randomBytes(3).toString("hex")}`;
    runIds.push(otherRun);
    await store.submitRun(workflow([task("secret-step", { run: "true", cwd: ws.dir, retries: 1 })]), { runId: otherRun });
    expect(await store.lease("gone-4121-a3f9c2", 10, 1_000, { runId: otherRun })).toHaveLength(1);
    await sleep(1_500);
    const file = await workflowFile("own-sweeps", "tasks:\n  mine: { run: 'sleep 2' }\n");
    const runId = newRunId("own-sweeps");
    const result = await startRun(file, ["--run-id", runId]).done;
    expect(result.code).toBe(0);
    // Swept all the same: queued again for a worker to take.
    expect((await store.runStatus(otherRun)).tasks[0]).toMatchObject({ key: "secret-step", state: "queued", attempts: 1 });
    expect(result.stdout).not.toContain(otherRun);
    expect(result.stdout).not.toContain("secret-step");
    expect(result.stdout).not.toMatch(/^\S+ sweep /m);
  });

  it("frozen past its lease while its task succeeds, which another worker's sweep ended failed: it says the success was not recorded and what the sweep did, not that a worker took the task over", async () => {
    const file = await workflowFile("frozen-swept", "tasks:\n  deploy: { run: 'touch frozen-swept.began; sleep 1; echo deployed' }\n  next: { run: echo next, dependsOn: deploy }\n");
    const frozen = await startWorker(["--lease", "2s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => existsSync(path.join(ws.dir, "frozen-swept.began")), 15_000)).toBe(true);
    frozen.cli.child.kill("SIGSTOP");
    // No attempt left: the other worker's sweep ends the task failed, and its dependent cancelled.
    const other = await startWorker(["--lease", "2s", "-j", "1"]);
    const status = await waitForRun(runId, 30_000);
    const swept = `lease expired (worker ${frozen.id}, attempt 1)`;
    expect(status.tasks.find((row) => row.key === "deploy")).toMatchObject({ state: "failed", lastError: swept });
    // Its shell gone meanwhile (a loaded machine's `sleep 1` may outlast the sweep): its end is what the worker meets as it goes on.
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 15_000)).toBe(true);
    frozen.cli.child.kill("SIGCONT");
    const said = `exited with code 0, not recorded: its lease had run out, and the task ended failed: ${swept}; a redrive runs it again`;
    expect(await eventually(() => frozen.stdout().includes(`stale   ${runId}/deploy: ${said}\n`), 10_000)).toBe(true);
    const result = await frozen.cli.done;
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain("took the task over");
    expect(await readFile(path.join(ws.logs, runId, "deploy.log"), "utf8")).toBe(
      `deployed\n--- taskq: attempt 1 exited with code 0 but was not recorded: its lease had run out, and the task ended failed: ${swept}; a redrive runs it again ---\n`,
    );
    other.cli.child.kill("SIGTERM");
    expect((await other.cli.done).code).toBe(143);
  });

  it("frozen past its lease mid-task, which another worker took over: the guard stopped the task as its lease was about to run out; it says so and that it was taken over, not that it could not be renewed, and stops (exit 1)", async () => {
    const file = await workflowFile("frozen-mid-taken", "tasks:\n  job: { run: 'echo \"try $TASKQ_ATTEMPT\"; sleep 1000', retries: 1 }\n");
    const frozen = await startWorker(["--lease", "2s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => frozen.stdout().includes(`${runId}/job | try 1`), 15_000)).toBe(true);
    frozen.cli.child.kill("SIGSTOP");
    const other = await startWorker(["--lease", "2s", "-j", "1"]);
    expect(await eventually(() => other.stdout().includes(`${runId}/job | try 2`), 30_000)).toBe(true);
    frozen.cli.child.kill("SIGCONT");
    const result = await frozen.cli.done;
    // (A LOST line may come first, where the lease watch, due as the worker woke, came before the shell's end.)
    expect(result.stdout).toContain(
      `stale   ${runId}/job: ${LEASE_LAPSED}, not recorded: its lease had run out, and worker ${other.id} took the task over\n`,
    );
    expect(result.stdout).toMatch(/took the task over\n.*note {4}a task's lease was taken from this worker/);
    expect(result.stdout).not.toContain("could not be renewed");
    expect(result.code).toBe(1);
    await taskq(["cancel", runId]);
    expect((await waitForRun(runId, 30_000)).state).toBe("cancelled");
    other.cli.child.kill("SIGTERM");
    expect((await other.cli.done).code).toBe(143);
  });

  it("a session holding three running tasks' rows past their lease costs them their leases alone, said with who holds them: the worker's other tasks keep theirs", async () => {
    const held = await submit(await workflowFile("row-held", "tasks:\n  h1: { run: 'echo started; sleep 60' }\n  h2: { run: 'echo started; sleep 60' }\n  h3: { run: 'echo started; sleep 60' }\n"));
    // The free task runs on until the rows are let go (its gate made then): its lease renewed all through the lock.
    const other = await submit(await workflowFile("row-free", "tasks:\n  free: { run: 'echo started; until [ -e \"$TASKQ_RUN_ID.go\" ]; do sleep 0.05; done' }\n"));
    // Submitted first, the four start together, and their renewals are due together: the held rows' renewals come first to its few renewal connections.
    const worker = await startWorker(["--lease", "4s", "-j", "4"]);
    const started = (runId: string, key: string) => worker.stdout().includes(`${runId}/${key} | started`);
    expect(await eventually(() => ["h1", "h2", "h3"].every((key) => started(held, key)) && started(other, "free"), 15_000)).toBe(true);
    // A psql session, say, that locks the held run's rows and keeps its transaction open longer than the lease.
    const client = new pg.Client({ connectionString: DATABASE_URL, application_name: "psql" });
    await client.connect();
    try {
      const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      await client.query("BEGIN");
      await client.query(`SELECT id FROM "${SCHEMA}".tasks WHERE run_id = $1 FOR UPDATE`, [held]);
      // Held until each held task's lease has run out (the worker says so, killing it): past the lease, as long as it takes.
      expect(await eventually(() => ["h1", "h2", "h3"].every((key) => worker.stdout().includes(`LOST    ${held}/${key}: `)), 30_000)).toBe(true);
      await client.query("COMMIT");
      await writeFile(path.join(ws.dir, `${other}.go`), "");
      // The renewals of the free row went through all along, while each of a held row waited briefly and said which session holds it.
      expect((await waitForRun(other)).tasks[0]).toMatchObject({ key: "free", state: "succeeded", attempts: 1 });
      expect(worker.stdout()).toContain(`db      heartbeat failed: task "h1" of run ${held} is locked by another session (pid ${pid}, application_name "psql"`);
      // The lease lost said as lost to that lock, in the LOST line and the attempt's error, not as a worker stalled or a database that did not answer.
      expect(worker.stdout()).toContain(`LOST    ${held}/h1: lease ran out while its task's row was locked by another session; killing the task\n`);
      expect(worker.stdout()).not.toContain("the worker stalled or the database did not answer");
      const lost = (await waitForRun(held)).tasks.find((t) => t.key === "h1");
      expect(lost?.lastError).toContain(`the lease ran out while its renewals waited for a lock: task "h1" of run ${held} is locked by another session (pid ${pid}, application_name "psql"`);
    } finally {
      await client.end();
    }
    expect((await waitForRun(held)).tasks.map((t) => t.state)).toEqual(["failed", "failed", "failed"]);
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  }, 60_000);

  it("a session holding 24 running tasks' rows past their lease: every lease lost is said as lost to that session's lock, none as a database that did not answer", async () => {
    const keys = Array.from({ length: 24 }, (_, i) => `t${String(i + 1).padStart(2, "0")}`);
    const runId = await submit(await workflowFile("rows-held", `tasks:\n${keys.map((key) => `  ${key}: { run: 'echo started; sleep 30' }\n`).join("")}`));
    // More tasks than the worker's few renewal connections can serve in a lease while each renewal waits its lock wait for a held row.
    const worker = await startWorker(["--lease", "3s", "-j", "24"]);
    expect(await eventually(() => keys.every((key) => worker.stdout().includes(`${runId}/${key} | started`)), 20_000)).toBe(true);
    const client = new pg.Client({ connectionString: DATABASE_URL, application_name: "psql" });
    await client.connect();
    try {
      const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      await client.query("BEGIN");
      await client.query(`SELECT id FROM "${SCHEMA}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
      // Held until every task's lease has run out (the worker says so, killing it): past the lease, as long as it takes.
      expect(await eventually(() => keys.every((key) => worker.stdout().includes(`LOST    ${runId}/${key}: `)), 30_000)).toBe(true);
      await client.query("COMMIT");
      const session = `another session (pid ${pid}, application_name "psql"`;
      const tasks = (await waitForRun(runId)).tasks;
      expect(tasks.map((t) => t.state)).toEqual(keys.map(() => "failed"));
      // Each said as lost to that lock: its own row refused, or its renewal kept from a connection by the others' renewals, each refused theirs.
      for (const t of tasks) {
        expect(t.lastError).toMatch(/^the lease ran out while its renewals? waited for a (lock|connection)/);
        expect(t.lastError).toContain(session);
      }
      const out = worker.stdout();
      expect(out).toContain(`db      heartbeat failed: task "`);
      expect(out).not.toContain("the worker stalled or the database did not answer");
      expect(out).not.toContain("lease could not be renewed");
    } finally {
      await client.end();
    }
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  }, 90_000);

  it("a session holding a running task's row for less than its lease costs it nothing: its renewal goes through once the row is free", async () => {
    const go = path.join(ws.dir, `row-held-briefly-${randomBytes(3).toString("hex")}.go`);
    // A lease long beside the test's own delays: the row is let go as a renewal has met it, and the lease has what is left of
    // it from the last renewal before (a heartbeat's interval less), 8 s. Before, a lease of 6 s with the row held a fixed
    // 4.5 s left 1.5 s from the last renewal to the lock, which a loaded machine's delays (the start line read, a connection
    // made) could pass: the lease ran out under the lock.
    const worker = await startWorker(["--lease", "12s", "-j", "1"]);
    const runId = await submit(await workflowFile("row-held-briefly", `tasks:\n  brief: { run: 'echo started; until [ -e "${go}" ]; do sleep 0.1; done' }\n`));
    expect(await eventually(() => worker.stdout().includes(`${runId}/brief | started`), 15_000)).toBe(true);
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const leaseEnd = async (): Promise<number> =>
      (await client.query<{ at: number }>(`SELECT extract(epoch FROM lease_expires_at)::float8 AS at FROM "${SCHEMA}".tasks WHERE run_id = $1`, [runId])).rows[0]!.at;
    try {
      await client.query("BEGIN");
      await client.query(`SELECT id FROM "${SCHEMA}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
      // Until a renewal has waited for the row and been refused it (the worker says whose lock it met).
      expect(await eventually(() => worker.stdout().includes(`db      heartbeat failed: task "brief" of run ${runId} is locked by another session`), 20_000)).toBe(true);
      await client.query("COMMIT");
      const heldEnd = await leaseEnd();
      // Renewed once the row is free: the lease's end moves on.
      expect(await eventually(async () => (await leaseEnd()) > heldEnd, 15_000)).toBe(true);
    } finally {
      await client.query("ROLLBACK").catch(() => undefined);
      await client.end();
    }
    await writeFile(go, "");
    expect((await waitForRun(runId)).tasks[0]).toMatchObject({ state: "succeeded", attempts: 1 });
    expect(worker.stdout()).not.toContain("LOST");
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  }, 60_000);

  it("frozen past its lease mid-task with no other worker: the guard stops the task, and the attempt is recorded as failed, saying why, and retried", async () => {
    const mark = path.join(ws.dir, `frozen-mid-${randomBytes(3).toString("hex")}`);
    const yaml = `tasks:\n  job:\n    run: 'if [ -f "$MARK" ]; then echo "second run"; else touch "$MARK"; echo first; sleep 1000; fi'\n    env: { MARK: "${mark}" }\n    retries: 1\n    backoff: { base: 50ms }\n`;
    const worker = await startWorker(["--lease", "2s", "-j", "1"]);
    const runId = await submit(await workflowFile("frozen-mid", yaml));
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | first`), 15_000)).toBe(true);
    worker.cli.child.kill("SIGSTOP");
    try {
      // Stopped past its lease: woken once the guard has killed the task's processes and the database has the lease run out.
      expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 15_000)).toBe(true);
      expect(await eventually(async () => (await store.runStatus(runId)).tasks[0]?.leaseExpiredMs !== undefined, 15_000)).toBe(true);
    } finally {
      worker.cli.child.kill("SIGCONT");
    }
    const status = await waitForRun(runId);
    expect(status.tasks[0]).toMatchObject({ state: "succeeded", attempts: 2 });
    const out = worker.stdout();
    // The guard's stop said, as the task's log says it.
    expect(out).toContain(`retry   ${runId}/job attempt 1/2 failed: ${LEASE_LAPSED};`);
    expect(await readFile(path.join(ws.logs, runId, "job.log"), "utf8")).toContain(`--- taskq: attempt 1 stopped: ${LEASE_LAPSED} ---\n`);
    expect(out).toContain(`${runId}/job | second run`);
    // The worker goes on: no line of its stop ("stopped (lease-lost)").
    expect(out).not.toMatch(/the result was not recorded|^\S+ stopped \(/m);
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  });

  it("a lease that runs out kills its task at once (SIGKILL, no kill grace): one that ignores SIGTERM does not run on beside the worker that may take it over", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      // Given SIGTERM and the kill grace, this task ran on for 30 s after its lease ran out, while
      // another worker's sweep queued it again and that worker ran it too.
      const file = await workflowFile("lost-stubborn", "tasks:\n  job: { run: 'trap \"\" TERM; echo started; while :; do sleep 0.2; done' }\n");
      const worker = await startWorker(["-j", "1", "--lease", "2s", "--kill-grace", "30s"], { TASKQ_STORE: proxy.url(SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/job | started`), 15_000)).toBe(true);
      proxy.freeze();
      expect(await eventually(() => worker.stdout().includes(`LOST    ${runId}/job: lease could not be renewed; killing the task`), 15_000)).toBe(true);
      expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 5_000)).toBe(true);
      // Nothing reached the database: the task stays leased until its lease is swept, here at once.
      await cancelStrandedRun(runId);
    } finally {
      await proxy.close();
    }
  });

  it.skipIf(!existsSync("/dev/full"))("a worker whose stdout cannot be written (a full disk) says that it goes on, not a run, and runs the tasks", async () => {
    const file = await workflowFile("full-stdout", "tasks:\n  a: { run: 'echo a' }\n");
    const full = openSync("/dev/full", "w");
    const child = spawn(BIN, ["worker", "--log-dir", ws.logs, "-j", "1"], { cwd: ws.dir, env: { ...process.env, ...ENV, NO_COLOR: "1" }, stdio: ["ignore", full, "pipe"] });
    closeSync(full);
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const done = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      const runId = newRunId("full-stdout");
      await submit(file, ["--run-id", runId]);
      expect((await waitForRun(runId)).state).toBe("succeeded");
    } finally {
      child.kill("SIGTERM");
    }
    expect(await done).toBe(143);
    expect(stderr).toBe("taskq: cannot write to stdout (ENOSPC); the worker goes on, and each task's output is in its log\n");
  });

  it("its first line and worker record name the schema it serves and the full path of its log folder, and a schema it had to make a store in is said so (a mistyped TASKQ_STORE_SCHEMA)", async () => {
    const typo = `${SCHEMA}_typo`;
    try {
      for (const json of [false, true]) {
        // A relative --log-dir, as the default is: the first line names where it is.
        const cli = startCli(["worker", "--log-dir", "rel-logs", "-j", "1", ...(json ? ["--output", "json"] : [])], { cwd: ws.dir, env: { ...ENV, TASKQ_STORE_SCHEMA: typo } });
        const logDir = path.join(realpathSync(ws.dir), "rel-logs");
        workers.push(cli);
        const made = `schema "${typo}" had no taskq store: this worker made an empty one`;
        expect(await eventually(() => cli.stdout().includes(json ? '"event":"worker"' : made) || cli.child.exitCode !== null, 15_000)).toBe(true);
        cli.child.kill("SIGTERM");
        const lines = (await cli.done).stdout.trimEnd().split("\n");
        if (json) {
          const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
          expect(records[0]).toMatchObject({ event: "worker", store: expect.stringContaining("127.0.0.1") as unknown, schema: typo, logDir });
          // Made by the first of the two workers: the second found the store there.
          expect(records.filter((record) => String(record.message).includes("had no taskq store"))).toEqual([]);
        } else {
          expect(lines[0]).toMatch(new RegExp(`^\\S+ worker \\S+: postgres://\\S+ \\(schema "${typo}"\\), concurrency 1, logs in ${logDir}$`));
          expect(lines[1]).toMatch(/^\S+ note {4}/);
          expect(lines[1]!.replace(/^\S+ /, "")).toBe(`note    ${made}; it runs only what is submitted to that schema (TASKQ_STORE_SCHEMA or --store-schema, as submit was given)`);
        }
      }
      // A worker in a schema that has a store names it, and says nothing of making one.
      const worker = await startWorker(["-j", "1"]);
      expect(worker.stdout()).toContain(` (schema "${SCHEMA}"), concurrency 1, logs in `);
      expect(worker.stdout()).not.toContain("had no taskq store");
    } finally {
      await store.pool.query(`DROP SCHEMA IF EXISTS "${typo}" CASCADE`);
    }
  });

  it("after SIGTERM it says stopped last, once its running task has finished, in JSON and in plain lines", async () => {
    // The task runs on until the test has seen the worker take the signal (its note), then ends: told after that note, as it
    // would be after a fixed wait, with no wait longer than the stop takes.
    const file = await workflowFile("stop-last", "tasks:\n  job: { run: 'echo started; until [ -e \"$TASKQ_RUN_ID.go\" ]; do sleep 0.05; done; echo done' }\n");
    for (const json of [true, false]) {
      // A worker in JSON names itself in a record, which startWorker does not read.
      const worker = { cli: startCli(["worker", "--log-dir", ws.logs, "-j", "1", ...(json ? ["--output", "json"] : [])], { cwd: ws.dir, env: ENV }) };
      workers.push(worker.cli);
      expect(await eventually(() => /"event":"worker"|worker \S+: /.test(worker.cli.stdout()), 15_000)).toBe(true);
      const runId = newRunId("stop-last");
      await submit(file, ["--run-id", runId]);
      // The task's own output: its shell runs (a start record comes a turn of the event loop before it).
      expect(await eventually(() => /\| started|"text":"started"/.test(worker.cli.stdout()), 15_000)).toBe(true);
      worker.cli.child.kill("SIGTERM");
      expect(await eventually(() => worker.cli.stdout().includes("SIGTERM received: no new task is leased"), 15_000)).toBe(true);
      await writeFile(path.join(ws.dir, `${runId}.go`), "");
      const result = await worker.cli.done;
      expect(result.code).toBe(143);
      const lines = result.stdout.trimEnd().split("\n");
      if (json) {
        const events = lines.map((line) => (JSON.parse(line) as { event: string }).event);
        // The task ran on after the signal: its end is told, then the worker's stop, last.
        expect(events.indexOf("finished")).toBeGreaterThan(events.indexOf("note"));
        // The note says what the plain line says: what the signal does, and the time to finish.
        expect(lines.map((line) => JSON.parse(line) as { event: string; message?: string }).find((record) => record.event === "note")?.message).toBe(
          "SIGTERM received: no new task is leased; running tasks have 10s to finish",
        );
        expect(events.at(-1)).toBe("stopped");
        expect(events.filter((event) => event === "stopped")).toHaveLength(1);
      } else {
        expect(lines.findIndex((line) => line.includes(`ok      ${runId}/job`))).toBeGreaterThan(lines.findIndex((line) => line.includes("SIGTERM received")));
        expect(lines.at(-1)).toMatch(/ stopped \(requested\)$/);
      }
      expect((await store.runStatus(runId)).state).toBe("succeeded");
    }
  });

  it("after SIGTERM it says stopped last, after the note that it stops what its tasks left running", async () => {
    const file = await workflowFile("stop-daemon", `tasks:\n  job: { run: "setsid sh -c 'sleep 1000' & echo started" }\n`);
    for (const json of [true, false]) {
      const worker = { cli: startCli(["worker", "--log-dir", ws.logs, "-j", "1", "--kill-grace", "1s", ...(json ? ["--output", "json"] : [])], { cwd: ws.dir, env: ENV }) };
      workers.push(worker.cli);
      expect(await eventually(() => /"event":"worker"|worker \S+: /.test(worker.cli.stdout()), 15_000)).toBe(true);
      const runId = newRunId("stop-daemon");
      await submit(file, ["--run-id", runId]);
      expect((await waitForRun(runId)).state).toBe("succeeded");
      worker.cli.child.kill("SIGTERM");
      const result = await worker.cli.done;
      expect(result.code).toBe(143);
      const lines = result.stdout.trimEnd().split("\n");
      const leftovers = lines.findIndex((line) => line.includes("stopping the process group the tasks left running"));
      expect(leftovers).toBeGreaterThan(0);
      expect(lines.at(-1)).toMatch(json ? /"event":"stopped","reason":"requested"/ : / stopped \(requested\)$/);
      expect(lines.filter((line) => /"event":"stopped"| stopped \(requested\)$/.test(line))).toHaveLength(1);
    }
  });

  // Between the listener of the store's opening and the worker's own (its guard spawned, its handlers made), no listener:
  // a SIGTERM there ended the worker by the signal itself, with no `stopped` line and no exit code of its own. The preload
  // sends it as the guard is spawned, in that gap, every time.
  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
    ["SIGHUP", 129],
  ] as const)("a %s while it is set up, just after its store opened, stops it as one later does: it runs nothing, says stopped, and exits %i", async (signal, code) => {
    const file = await workflowFile(`setup-${signal}`, "tasks:\n  a: { run: 'touch ran-setup-a' }\n");
    const runId = newRunId(`setup-${signal}`);
    await submit(file, ["--run-id", runId]);
    for (const json of [false, true]) {
      const cli = startCli(["worker", "--log-dir", ws.logs, ...(json ? ["--output", "json"] : [])], {
        cwd: ws.dir,
        env: { ...ENV, TASKQ_TEST_SIGNAL_AT_GUARD: signal },
        nodeArgs: ["--require", path.join(FIXTURES, "signal-at-guard.cjs")],
      });
      workers.push(cli);
      const result = await cli.done;
      expect({ code: result.code, signal: result.signal }).toEqual({ code, signal: null });
      const note = `${signal} received: no new task is leased; running tasks have 10s to finish`;
      if (json) {
        const records = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as { event: string; message?: string });
        // A lease its start had on its way when the signal was heard goes back, its task not started.
        expect(records.map((record) => record.event).filter((event) => event !== "released")).toEqual(["worker", "note", "stopped"]);
        expect(records[1]!.message).toBe(note);
      } else {
        const lines = result.stdout.trimEnd().split("\n");
        expect(lines[1]).toMatch(new RegExp(`^\\S+ note    ${note}$`));
        expect(lines.filter((line) => !/^\S+ release /.test(line)).slice(2)).toEqual([expect.stringMatching(/^\S+ stopped \(requested\)$/)]);
      }
      expect(result.stderr).toBe("");
    }
    expect((await store.runStatus(runId)).tasks.map((row) => [row.key, row.state, row.attempts])).toEqual([["a", "queued", 0]]);
    expect(existsSync(path.join(ws.dir, "ran-setup-a"))).toBe(false);
    await store.cancelRun(runId);
  });

  it("--shutdown-timeout past 24.8 days: after SIGTERM its running task is left to finish, with no TimeoutOverflowWarning", async () => {
    const file = await workflowFile("long-stop", "tasks:\n  job: { run: 'echo started; sleep 1000' }\n");
    const worker = await startWorker(["--shutdown-timeout", "600h", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | started`), 15_000)).toBe(true);
    worker.cli.child.kill("SIGTERM");
    expect(await eventually(() => worker.stdout().includes("SIGTERM received: no new task is leased; running tasks have 25d to finish"))).toBe(true);
    // A clamped timer fired after 1 ms: the task was killed and its lease given back at once.
    await sleep(2_000);
    expect(worker.cli.child.exitCode).toBe(null);
    expect(worker.stdout()).not.toContain("release");
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "running", attempts: 1 });
    worker.cli.child.kill("SIGTERM");
    const result = await worker.cli.done;
    expect(result.code).toBe(143);
    expect(result.stderr).not.toContain("TimeoutOverflowWarning");
    expect((await store.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", attempts: 0 });
    await store.cancelRun(runId);
  });

  it("tasks never see PGPASSWORD, with which the worker and run --store connect; the workflow's env may give a task one", async () => {
    const pgPassword = `pg-${randomBytes(6).toString("hex")}`;
    const yaml = `tasks:\n  plain: { run: 'echo "pw=\${PGPASSWORD-unset}"' }\n  given: { run: 'echo "pw=$PGPASSWORD"', env: { PGPASSWORD: of-its-own } }\n`;
    // The URL without a password: the driver takes PGPASSWORD's (trust auth accepts any).
    const env = { TASKQ_STORE: DATABASE_URL, PGPASSWORD: pgPassword };
    const worker = await startWorker(["-j", "1"], env);
    const runId = await submit(await workflowFile("pgpassword", yaml));
    expect((await waitForRun(runId)).state).toBe("succeeded");
    worker.cli.child.kill("SIGTERM");
    const workerResult = await worker.cli.done;
    const ownId = newRunId("pgpassword-run");
    const run = await taskq(["run", path.join(ws.dir, "pgpassword.yaml"), "--log-dir", ws.logs, "--run-id", ownId], env);
    expect(run.code).toBe(0);
    for (const [result, id] of [[workerResult, runId], [run, ownId]] as const) {
      expect(result.stdout).toContain(`${id}/plain | pw=unset\n`);
      expect(result.stdout).toContain(`${id}/given | pw=of-its-own\n`);
      expect(`${result.stdout}${result.stderr}`).not.toContain(pgPassword);
      expect(await readFile(path.join(ws.logs, id, "plain.log"), "utf8")).toBe("pw=unset\n");
    }
  });
  it.skipIf(!existsSync("/usr/bin/script"))("on a terminal, a task cannot clear the screen, set the title, ring or write over its prefix; into a pipe and the log, its bytes as written", { timeout: 60_000 }, async () => {
    const script = String.raw`printf 'a\033[2J\033[Hcleared\n\033]0;title\007b\n\033[31mred\n12345\b\b\b\b\b\bX\nstep 1\rstep 2\ncrlf\r\n'`;
    const file = await workflowFile("noisy", `tasks:\n  noisy: { run: ${JSON.stringify(script)} }\n`);
    const onTerminal = newRunId("noisy-tty");
    expect((await taskq(["submit", file, "--run-id", onTerminal])).code).toBe(0);
    // A worker whose stdout is a pty (util-linux script); it names itself with its pid, which stops it.
    const command = `stty cols 100 rows 30; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} worker -j 1 --log-dir ${JSON.stringify(ws.logs)}`;
    const child = spawn("/usr/bin/script", ["-qec", command, "/dev/null"], { cwd: ws.dir, env: { ...process.env, ...ENV, NO_COLOR: "" }, stdio: ["ignore", "pipe", "inherit"] });
    let shown = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (shown += chunk));
    const exited = new Promise((resolve) => child.on("close", resolve));
    try {
      expect(await eventually(() => shown.includes(`ok      ${onTerminal}/noisy`), 20_000)).toBe(true);
    } finally {
      const pid = /worker \S+-(\d+)-[0-9a-f]+: /.exec(shown)?.[1];
      if (pid !== undefined) process.kill(Number(pid), "SIGTERM");
      else child.kill("SIGKILL");
      await exited;
    }
    shown = shown.replace(/\r\n/g, "\n");
    expect(shown).toContain(`${onTerminal}/noisy | acleared\n`);
    expect(shown).toContain(`${onTerminal}/noisy | b\n`);
    expect(shown).toContain(`${onTerminal}/noisy | \x1b[31mred\x1b[0m\n`);
    // Backspaces as a terminal works them out, none past the line's start into the prefix: X over the 1; the red the line before left set, set again.
    expect(shown).toContain(`${onTerminal}/noisy | \x1b[31mX2345\x1b[0m\n`);
    expect(shown).toContain(`${onTerminal}/noisy | \x1b[31mstep 2\x1b[0m\n`);
    expect(shown).toContain(`${onTerminal}/noisy | \x1b[31mcrlf\x1b[0m\n`);
    for (const control of ["\x1b[2J", "\x1b]0;", "\x07", "\x08"]) expect(shown).not.toContain(control);
    // Not a terminal: the bytes as the task wrote them, as in its log, with the prefix again after a `\r` that rewrites the line.
    const worker = await startWorker(["-j", "1"]);
    const again = await submit(file);
    expect((await waitForRun(again)).state).toBe("succeeded");
    worker.cli.child.kill("SIGTERM");
    const { stdout } = await worker.cli.done;
    expect(stdout).toContain(`${again}/noisy | a\x1b[2J\x1b[Hcleared\n`);
    // The task left its red set: the prefix after it comes after a reset, and under NO_COLOR the red is not set again, as in a local run.
    expect(stdout).toContain(`${again}/noisy | \x1b[31mred\n\x1b[0m${again}/noisy | 12345`);
    expect(stdout).toContain(`\n${again}/noisy | step 1\r${again}/noisy | step 2\n`);
    expect(stdout).toContain(`\n${again}/noisy | crlf\r\n`);
    for (const runId of [onTerminal, again]) expect(await readFile(path.join(ws.logs, runId, "noisy.log"), "utf8")).toContain("\x1b]0;title\x07b\n");
  });

  // The lines of an earlier attempt that ran on another worker were shown under the last attempt's log ("on B"), which does not have them.
  it("lines of an earlier attempt that ran on another worker name that worker's log, in status, dead-letters and JSON", async () => {
    const file = await workflowFile(
      "tail-elsewhere",
      `defaults:
  backoff: { base: 10ms, max: 10ms }
tasks:
  r: { run: 'if [ "$TASKQ_ATTEMPT" = 1 ]; then echo trying 1; exit 7; fi; sleep 1000', retries: 2 }
  d: { run: 'if [ "$TASKQ_ATTEMPT" = 1 ]; then echo trying d; exit 7; fi; while [ ! -e tail-elsewhere.go ]; do sleep 0.1; done; exit 7', retries: 1 }
`,
    );
    const a = await startWorker(["-j", "2", "--shutdown-timeout", "0.5s", "--kill-grace", "1s"]);
    const runId = await submit(file);
    // Attempt 1 of each fails on A, and A starts attempt 2 of each, which its stop gives back (not counted).
    expect(await eventually(() => a.stdout().includes(`start   ${runId}/r (attempt 2/3)`) && a.stdout().includes(`start   ${runId}/d (attempt 2/2)`), 15_000)).toBe(true);
    a.cli.child.kill("SIGTERM");
    expect((await a.cli.done).code).toBe(143);
    await writeFile(path.join(ws.dir, "tail-elsewhere.go"), "");
    // A short lease: the cancel below stops r at B's next heartbeat, a third of the lease (a second, not the default 10 s).
    const b = await startWorker(["-j", "2", "--lease", "3s"]);
    expect(await eventually(() => b.stdout().includes(`start   ${runId}/r (attempt 2/3)`) && b.stdout().includes(`FAILED  ${runId}/d`), 15_000)).toBe(true);
    const cancel = await taskq(["cancel", runId]);
    expect(cancel.code).toBe(0);
    await waitForRun(runId);

    const status = await taskq(["status", runId]);
    expect(status.stdout).toContain(
      `  ✗ d: exited with code 7 (2 attempts)\n    log: <log-dir>/${runId}/d.log (on ${b.id})\n    last line of attempt 1 (attempt 2 left none; its log: <log-dir>/${runId}/d.log (on ${a.id})):\n      trying d\n`,
    );
    expect(status.stdout).toContain(`    log: <log-dir>/${runId}/r.log (on ${b.id})\n    last line of attempt 1 (its log: <log-dir>/${runId}/r.log (on ${a.id})):\n      trying 1\n`);
    const json = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { deadLetters: object[]; cancelled: object[] };
    expect(json.deadLetters[0]).toMatchObject({ id: "d", workerId: b.id, tail: ["trying d"], tailAttempt: 1, tailWorkerId: a.id, tailLogPath: `<log-dir>/${runId}/d.log (on ${a.id})` });
    expect(json.cancelled[0]).toMatchObject({ id: "r", running: true, workerId: b.id, tail: ["trying 1"], tailAttempt: 1, tailWorkerId: a.id, tailLogPath: `<log-dir>/${runId}/r.log (on ${a.id})` });

    const dead = await taskq(["dead-letters", runId]);
    expect(dead.stdout).toBe(
      `${runId}/d: exited with code 7 (2 attempts)\n  log: <log-dir>/${runId}/d.log (on ${b.id})\n  last line of attempt 1 (attempt 2 left none; its log: <log-dir>/${runId}/d.log (on ${a.id})):\n    trying d\n`,
    );
    const deadJson = JSON.parse((await taskq(["dead-letters", runId, "--output", "json"])).stdout) as object;
    expect(deadJson).toMatchObject({ key: "d", workerId: b.id, tailAttempt: 1, tailWorkerId: a.id });
    b.cli.child.kill("SIGTERM");
    expect((await b.cli.done).code).toBe(143);
  });
});

/** taskq under `ulimit -n 40`, too low for one task, against the store. */
function underFewFiles(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `ulimit -n 40; exec "${process.execPath}" "$@"`;
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script, "bash", BIN, ...args], { cwd: ws.dir, env: { ...process.env, ...ENV, CI: "true", NO_COLOR: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("taskq worker that cannot run a task", () => {
  it("an open-file limit too low for one task is an error before the store is opened: no schema made", async () => {
    const schema = `${SCHEMA}_none`;
    const result = await underFewFiles(["worker", "--log-dir", ws.logs, "--store-schema", schema]);
    expect(result.stderr).toMatch(/^taskq: the open-file limit \(ulimit -n\) is 40, too low to run a task/);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    const admin = new PostgresStore({ connectionString: DATABASE_URL, schema: SCHEMA });
    try {
      const made = await admin.pool.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema]);
      expect(made.rowCount).toBe(0);
    } finally {
      await admin.close();
    }
  });
});

describe("taskq run --store", () => {
  it("an open-file limit too low for one task is an error before the run is submitted: nothing left queued", async () => {
    const file = await workflowFile("few-files", "tasks:\n  a: { run: 'true' }\n  b: { run: 'true' }\n");
    const runId = newRunId("few-files");
    const result = await underFewFiles(["run", file, "--log-dir", ws.logs, "--run-id", runId]);
    expect(result.stderr).toMatch(/^taskq: the open-file limit \(ulimit -n\) is 40, too low to run a task/);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    const status = await taskq(["status", runId]);
    expect(status.stderr).toBe(`taskq: no run "${runId}" in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA)\n`);
  });

  // A Ctrl-C reaches a task whose shell is still starting in the worker's process group. Here
  // the task kills itself with the worker's signal once the worker has it, as that race ends.
  it("a task that dies of the signal that stopped its worker is given back, not failed, and the next worker runs it", async () => {
    const file = await workflowFile(
      "shared-signal",
      "tasks:\n  a: { run: '[ -e shared-signal-once ] && { echo again; exit 0; }; touch shared-signal-once; echo ready; while [ ! -e shared-signal-go ]; do sleep 0.05; done; kill -INT $$' }\n",
    );
    const runId = await submit(file);
    const worker = await startWorker(["-j", "1"]);
    expect(await eventually(() => worker.stdout().includes(`${runId}/a | ready`), 15_000)).toBe(true);
    worker.cli.child.kill("SIGINT");
    expect(await eventually(() => worker.stdout().includes("SIGINT received"), 15_000)).toBe(true);
    await writeFile(path.join(ws.dir, "shared-signal-go"), "");
    const stopped = await worker.cli.done;
    expect(stopped.code).toBe(130);
    expect(stopped.stdout).toContain(`release ${runId}/a: lease given back for another worker\n`);
    expect(stopped.stdout).not.toContain("FAILED");
    const next = await startWorker(["-j", "1"]);
    expect((await waitForRun(runId)).state).toBe("succeeded");
    expect(await eventually(() => next.stdout().includes(`${runId}/a | again`), 10_000)).toBe(true);
    next.cli.child.kill("SIGTERM");
    expect((await next.cli.done).code).toBe(143);
  });

  it("frozen past its lease while a worker took its task over and ended the run: it says its result was not recorded, and exits as the run ended (0)", async () => {
    const file = await workflowFile("run-frozen", "tasks:\n  build: { run: 'touch run-frozen.began; sleep 1; echo built', retries: 1 }\n  ship: { run: echo shipped, dependsOn: build }\n");
    const runId = newRunId("run-frozen");
    const run = startRun(file, ["--run-id", runId, "--lease", "2s"]);
    expect(await eventually(() => existsSync(path.join(ws.dir, "run-frozen.began")), 15_000)).toBe(true);
    run.child.kill("SIGSTOP");
    const other = await startWorker(["--lease", "2s", "-j", "1"]);
    expect((await waitForRun(runId, 30_000)).state).toBe("succeeded");
    expect(await eventually(() => other.stdout().includes(`ok      ${runId}/ship`), 10_000)).toBe(true);
    run.child.kill("SIGCONT");
    const result = await run.done;
    expect(result.stdout).toContain(`stale   ${runId}/build: exited with code 0, not recorded: its lease had run out, and worker ${other.id} took the task over\n`);
    // Why this worker stops, when that stopped it, comes after the attempt's end. Once resumed, it may
    // see the run's end first (the other worker ended it meanwhile): that stops it, with nothing to tell.
    const note = result.stdout.indexOf("note    a task's lease was taken from this worker");
    if (note !== -1) expect(note).toBeGreaterThan(result.stdout.indexOf(`stale   ${runId}/build`));
    expect(result.stdout).toContain("Summary: 2 succeeded, 0 failed, 0 cancelled");
    expect(result.code).toBe(0);
  });

  it("stopped by a lost lease, a SIGTERM while its summary is read: it stops at once with 143, as one while the summary of a run that ended by itself is read, not with the lost lease's 1", async () => {
    const file = await workflowFile("lost-then-signal", "tasks:\n  build: { run: 'touch lost-then-signal.began; sleep 30', retries: 1 }\n");
    const runId = newRunId("lost-then-signal");
    // The signal as its worker's last line is out: the stop's cancel and summary are then being read.
    const run = startCli(["run", file, "--log-dir", ws.logs, "--run-id", runId, "--lease", "2s"], {
      cwd: ws.dir,
      env: { ...ENV, TASKQ_TEST_SIGNAL_AT_OUTPUT: "SIGTERM", TASKQ_TEST_SIGNAL_AT_OUTPUT_TEXT: "stopped (lease-lost)" },
      nodeArgs: ["--require", path.join(FIXTURES, "signal-at-output.cjs")],
    });
    workers.push(run);
    expect(await eventually(() => existsSync(path.join(ws.dir, "lost-then-signal.began")), 15_000)).toBe(true);
    run.child.kill("SIGSTOP");
    // Its stop at the end kills attempt 2 (`sleep 30`) at once rather than after the default 10 s to finish.
    const other = await startWorker(["--lease", "2s", "-j", "1", "--shutdown-timeout", "0.5s", "--kill-grace", "1s"]);
    try {
      expect(await eventually(() => other.stdout().includes(`start   ${runId}/build (attempt 2/2)`), 30_000)).toBe(true);
    } finally {
      run.child.kill("SIGCONT");
    }
    const result = await run.done;
    expect(result.stdout).toContain("stopped (lease-lost)\n");
    expect(result.stderr).toContain(`taskq: SIGTERM received while the summary of run ${runId} was being read: stopping now; see it with: taskq status ${runId}\n`);
    // Before: 1, the lost lease's code, where the signal had stopped taskq.
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 143, signal: null });
    other.cli.child.kill("SIGTERM");
    await other.cli.done;
    await cancelStrandedRun(runId);
  });

  it("its summary of a task cancelled here, whose lines are of an attempt another worker ran, names that worker's log for them", async () => {
    const file = await workflowFile(
      "joined-tail",
      "tasks:\n  r: { run: 'if [ \"$TASKQ_ATTEMPT\" = 1 ]; then echo trying 1; exit 7; fi; sleep 1000', retries: 2, backoff: { base: 10ms, max: 10ms } }\n",
    );
    const runId = newRunId("joined-tail");
    expect((await taskq(["submit", file, "--run-id", runId])).code).toBe(0);
    const other = await startWorker(["-j", "1", "--shutdown-timeout", "0.5s", "--kill-grace", "1s"]);
    expect(await eventually(() => other.stdout().includes(`retry   ${runId}/r attempt 1/3 failed`), 15_000)).toBe(true);
    other.cli.child.kill("SIGTERM");
    expect((await other.cli.done).code).toBe(143);
    const run = startRun(file, ["--run-id", runId, "--lease", "3s"]);
    expect(await eventually(() => run.stdout().includes(`start   ${runId}/r (attempt 2/3)`), 15_000)).toBe(true);
    expect((await taskq(["cancel", runId])).code).toBe(0);
    const result = await run.done;
    expect(result.stdout).toContain(
      `  - r: cancelled by request\n    log: ${path.join(ws.logs, runId, "r.log")}\n    last line of attempt 1 (its log: <log-dir>/${runId}/r.log (on ${other.id})):\n      trying 1\n`,
    );
    const status = await taskq(["status", runId]);
    expect(status.stdout).toMatch(new RegExp(`    log: <log-dir>/${runId}/r\\.log \\(on (?!${other.id})\\S+\\)\\n    last line of attempt 1 \\(its log: <log-dir>/${runId}/r\\.log \\(on ${other.id}\\)\\):\\n      trying 1\\n`));
  });

  it("its summary of a dead letter whose lines are of an attempt it ran before a silent one names no other log, nor does status", async () => {
    const file = await workflowFile(
      "silent-later",
      "tasks:\n  r: { run: 'if [ \"$TASKQ_ATTEMPT\" = 1 ]; then echo trying 1; fi; exit 7', retries: 2, backoff: { base: 10ms, max: 10ms } }\n",
    );
    const runId = newRunId("silent-later");
    const result = await startRun(file, ["--run-id", runId]).done;
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`  ✗ r: exited with code 7 (3 attempts)\n    log: ${path.join(ws.logs, runId, "r.log")}\n    last line of attempt 1 (attempt 3 left none):\n      trying 1\n`);
    // The store keeps the worker that wrote the lines (this one, as every attempt's): before, status said of a run on one worker
    // "its log: on the worker that ran attempt 1, which the store did not record".
    const status = await taskq(["status", runId]);
    expect(status.stdout).toMatch(new RegExp(`  ✗ r: exited with code 7 \\(3 attempts\\)\\n    log: <log-dir>/${runId}/r\\.log \\(on \\S+\\)\\n    last line of attempt 1 \\(attempt 3 left none\\):\\n      trying 1\\n`));
    expect(status.stdout).not.toContain("its log");
    const dead = await taskq(["dead-letters", runId]);
    expect(dead.stdout).toContain("  last line of attempt 1 (attempt 3 left none):\n    trying 1\n");
  });

  it("stopped by SIGTERM: its one task, cut short, is cancelled as it is given back, not queued for another worker to start again", async () => {
    const file = await workflowFile("interrupted-one", "tasks:\n  only: { run: 'echo started; sleep 1000' }\n");
    const runId = newRunId("interrupted-one");
    const run = startRun(file, ["--run-id", runId, "--shutdown-timeout", "0.5s", "--kill-grace", "1s"]);
    expect(await eventually(() => run.stdout().includes(`${runId}/only | started`), 15_000)).toBe(true);
    run.child.kill("SIGTERM");
    const result = await run.done;
    expect(result.code).toBe(143);
    expect(result.stdout).toContain(`release ${runId}/only: cancelled, as its run was stopped\n`);
    // Nothing was left for the run's last cancel.
    expect(result.stdout).not.toContain(`run ${runId} stopped:`);
    expect(result.stdout).toContain("Cancelled (1):\n  - only: aborted by shutdown\n");
    const status = await store.runStatus(runId);
    expect(status.state).toBe("cancelled");
    expect(status.tasks.map((row) => [row.key, row.state, row.attempts])).toEqual([["only", "cancelled", 0]]);
  });

  // The summary record said "exitCode":1 while the process exited 143, where a local run's says 143.
  it("stopped by SIGTERM, --output json: the summary record is the last line and its exitCode is the one taskq exits with, as a local run's", async () => {
    const file = await workflowFile("interrupted-json", "tasks:\n  only: { run: 'echo started; sleep 1000' }\n");
    const runId = newRunId("interrupted-json");
    const run = startRun(file, ["--run-id", runId, "--shutdown-timeout", "0.5s", "--kill-grace", "1s", "--output", "json"]);
    expect(await eventually(() => run.stdout().includes('"text":"started"'), 15_000)).toBe(true);
    run.child.kill("SIGTERM");
    const result = await run.done;
    expect(result.code).toBe(143);
    const records = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as { event: string; exitCode?: number; interrupted?: string });
    expect(records.at(-1)).toMatchObject({ event: "summary", exitCode: 143, interrupted: "SIGTERM", state: "cancelled" });
  });

  // Between the listener of the run's storing and the worker's own (its guard spawned, its handlers made), no
  // listener: a runner's SIGTERM just after the run was stored ended taskq by the signal itself, no summary, and
  // left the run live, its tasks queued for any worker to run.
  it.each(["SIGTERM", "SIGINT"] as const)("stopped by %s as soon as its run is stored: the run is cancelled before any of its tasks runs, and the summary says so", async (signal) => {
    const file = await workflowFile(`stored-then-${signal}`, "tasks:\n  a: { run: 'touch ran-stored-a' }\n  b: { run: 'touch ran-stored-b', dependsOn: a }\n");
    const runId = newRunId(`stored-then-${signal}`);
    const run = startRun(file, ["--run-id", runId]);
    // At once, as its first line is read: the worker is then still being set up.
    let sent = false;
    run.child.stdout!.on("data", (chunk: Buffer | string) => {
      if (!sent && String(chunk).includes(`run ${runId} submitted to `)) {
        sent = true;
        run.child.kill(signal);
      }
    });
    const result = await run.done;
    expect(sent).toBe(true);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: signal === "SIGTERM" ? 143 : 130, signal: null });
    expect(result.stdout).toContain(`Summary: 0 succeeded, 0 failed, 2 cancelled in `);
    expect(result.stdout).toContain(`(interrupted by ${signal})\n`);
    const status = await store.runStatus(runId);
    expect(status.state).toBe("cancelled");
    expect(status.tasks.map((row) => [row.key, row.state])).toEqual([
      ["a", "cancelled"],
      ["b", "cancelled"],
    ]);
    expect(existsSync(path.join(ws.dir, "ran-stored-a"))).toBe(false);
  });

  // Once its run had ended, no listener was left while the summary was written and the store closed: a runner's SIGTERM
  // then ended taskq by the signal itself, a run that succeeded reported as killed, what stdout still held lost.
  it("a SIGTERM as its summary comes out changes nothing: the summary is whole and it exits 0 for a run that succeeded, as a local run does", async () => {
    const file = await workflowFile("summary-then-signal", "tasks:\n  quick: { run: 'echo hi' }\n");
    const runId = newRunId("summary-then-signal");
    const run = startRun(file, ["--run-id", runId]);
    let sent = false;
    run.child.stdout!.on("data", (chunk: Buffer | string) => {
      if (!sent && String(chunk).includes("Summary: ")) {
        sent = true;
        run.child.kill("SIGTERM");
      }
    });
    const result = await run.done;
    expect(sent).toBe(true);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
    expect(result.stdout).toContain(`\nSummary: 1 succeeded, 0 failed, 0 cancelled in `);
    expect(result.stdout).toMatch(/\n\nlogs: \S+\n$/);
    expect(result.stderr).toBe("");
  });

  // A run submitted again that had ended runs nothing: its summary follows at once, which no listener heard a signal during,
  // as a run's that ends by itself now is: a runner's SIGTERM there ended taskq by the signal itself, the summary lost.
  it("of a run that had ended, a SIGTERM as its first line comes out stops it at once naming taskq status, or, the summary written, changes nothing", async () => {
    const file = await workflowFile("ended-then-signal", "tasks:\n  quick: { run: 'echo hi' }\n");
    const runId = newRunId("ended-then-signal");
    expect((await startRun(file, ["--run-id", runId]).done).code).toBe(0);
    for (const json of [false, true]) {
      const run = startRun(file, ["--run-id", runId, ...(json ? ["--output", "json"] : [])]);
      let sent = false;
      run.child.stdout!.on("data", (chunk: Buffer | string) => {
        if (!sent && String(chunk).includes(runId)) {
          sent = true;
          run.child.kill("SIGTERM");
        }
      });
      const result = await run.done;
      expect(sent).toBe(true);
      expect(result.signal).toBeNull();
      if (result.code === 143) {
        expect(result.stderr).toBe(`taskq: SIGTERM received while the summary of run ${runId} was being read: stopping now; see it with: taskq status ${runId}\n`);
      } else {
        expect(result.code).toBe(0);
        expect(result.stdout).toContain(json ? `"event":"summary","runId":"${runId}"` : "\nSummary: 1 succeeded, 0 failed, 0 cancelled in ");
        expect(result.stderr).toBe("");
      }
    }
  });

  /** Sessions of other processes on this database running an INSERT of a run into this schema, where `condition` (SQL on pg_stat_activity). */
  async function runInserts(condition: string): Promise<number> {
    const { rowCount } = await store.pool.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${condition} AND query LIKE $1`,
      [`%INSERT INTO "${durable.SCHEMA}".runs%`],
    );
    return rowCount ?? 0;
  }

  // A signal while the run was submitted (seconds, for a large workflow) killed taskq by the signal
  // itself: nothing printed, and the run stayed queued in the database for any worker to run.
  it("stopped by SIGTERM while its run is being submitted: once stored, the run is cancelled, and the JSON ends with its summary", async () => {
    const file = await workflowFile("interrupted-submit", "tasks:\n  a: { run: 'touch ran-a' }\n  b: { run: 'touch ran-b', dependsOn: a }\n");
    const runId = newRunId("interrupted-submit");
    const locker = await store.pool.connect();
    try {
      // Holds the submit's INSERT of its run until the signal has come.
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE "${durable.SCHEMA}".runs IN EXCLUSIVE MODE`);
      const run = startRun(file, ["--run-id", runId, "--output", "json"]);
      expect(await eventually(async () => (await runInserts("wait_event_type = 'Lock'")) > 0, 15_000)).toBe(true);
      run.child.kill("SIGTERM");
      await sleep(300);
      await locker.query("COMMIT");
      const result = await run.done;
      expect({ code: result.code, signal: result.signal }).toEqual({ code: 143, signal: null });
      const records = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as { event: string });
      expect(records[0]).toMatchObject({ event: "run", runId });
      expect(records.at(-1)).toMatchObject({ event: "summary", runId, exitCode: 143, interrupted: "SIGTERM", state: "cancelled" });
      expect(records.map((record) => record.event)).not.toContain("started");
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      locker.release();
    }
    expect((await store.runStatus(runId)).tasks.map((row) => [row.key, row.state])).toEqual([
      ["a", "cancelled"],
      ["b", "cancelled"],
    ]);
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(false);
  });

  it("a second signal while its run is being submitted cancels the submit and stops, without waiting for the lock: nothing is stored", async () => {
    const file = await workflowFile("interrupted-submit-twice", "tasks:\n  a: { run: 'touch ran-twice' }\n");
    // No --run-id: the run id taskq chose is the one its JSON error record names.
    let runId: string | undefined;
    const locker = await store.pool.connect();
    try {
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE "${durable.SCHEMA}".runs IN EXCLUSIVE MODE`);
      const run = startRun(file, ["--output", "json"]);
      expect(await eventually(async () => (await runInserts("wait_event_type = 'Lock'")) > 0, 15_000)).toBe(true);
      run.child.kill("SIGTERM");
      await sleep(200);
      run.child.kill("SIGTERM");
      const result = await run.done;
      expect({ code: result.code, signal: result.signal }).toEqual({ code: 143, signal: null });
      // With --output json, stdout ends with an error record, as any failure's: it names the run.
      const record = JSON.parse(result.stdout) as { runId?: string };
      runId = record.runId;
      expect(record).toMatchObject({ event: "error", code: "INTERRUPTED", exitCode: 143, runId: expect.stringMatching(/^r-[a-z0-9]+-[0-9a-f]{8}$/) });
      expect(result.stderr).toBe(
        `taskq: SIGTERM received while the run was being submitted: stopping once the database has answered the submit (it waits up to 30s for each statement, and tries again for up to 10s where the connection drops), then a run it stored is cancelled before any of its tasks runs here; press Ctrl-C again (or send a second signal) to stop now\n` +
          "taskq: SIGTERM received again while the run was being submitted: cancelling its submit: stopping once the database has said whether the run was stored (up to 3s); press Ctrl-C again (or send a third signal) to stop at once\n" +
          "taskq: SIGTERM received again while the run was being submitted: stopped; its submit was cancelled: nothing was submitted\n",
      );
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      locker.release();
    }
    // The statement that stores a new run was waiting on the lock: cancelled before taskq left, it does not store the run once the lock is free.
    expect(await eventually(async () => (await runInserts("state = 'active'")) === 0, 15_000)).toBe(true);
    if (runId === undefined) throw new Error("no run named");
    const stored = (await store.pool.query(`SELECT 1 FROM "${durable.SCHEMA}".runs WHERE id = $1`, [runId])).rowCount === 1;
    if (stored) await store.cancelRun(runId);
    expect(stored).toBe(false);
  });

  it("a second signal also kills at once what its tasks left in sessions of their own (a daemon ignoring SIGTERM), not after the kill grace", { timeout: 90_000 }, async () => {
    // A supervisor's SIGKILL may follow the second signal within seconds (GitHub Actions: 2.5 s): the daemon's kill grace came first.
    // "started" once the daemon is in its session (its ready file made): before, under load, the signals could come while it
    // had not yet left the task's process group, whose SIGKILL then took it, leaving nothing to say it killed.
    const runId = newRunId("second-signal");
    const ready = path.join(ws.dir, `${runId}.ready`);
    const file = await workflowFile("second-signal", `tasks:\n  daemon: { run: "setsid sh -c 'trap \\"\\" TERM; touch ${ready}; sleep 1000 & wait' & until [ -e ${ready} ]; do sleep 0.05; done; echo started; sleep 1000" }\n`);
    const run = startRun(file, ["--run-id", runId, "--shutdown-timeout", "30s", "--kill-grace", "30s"]);
    expect(await eventually(() => run.stdout().includes(`${runId}/daemon | started`), 15_000)).toBe(true);
    run.child.kill("SIGINT");
    expect(await eventually(() => run.stdout().includes("SIGINT received"), 5_000)).toBe(true);
    const second = Date.now();
    run.child.kill("SIGTERM");
    const result = await run.done;
    expect(Date.now() - second).toBeLessThan(10_000);
    expect(result.code).toBe(130);
    expect(result.stdout).toContain("killing the process group the tasks left running now, as the second signal asked");
    expect(result.stdout).not.toContain("Ctrl-C or SIGTERM kills it now");
    expect(await findLeftovers(runId)).toEqual([]);
  });

  it("one signal: the whole stop, what its tasks left in sessions of their own included, takes at most --shutdown-timeout + --kill-grace", { timeout: 90_000 }, async () => {
    // Before, the daemon got a kill grace of its own after the task's stop had taken both: 1s + 5s + 5s.
    // "started" once the daemon is in its session, ignoring SIGTERM (its ready file made): see the test above.
    const runId = newRunId("one-signal");
    const ready = path.join(ws.dir, `${runId}.ready`);
    const file = await workflowFile("one-signal", `tasks:\n  daemon: { run: "setsid sh -c 'trap \\"\\" TERM; touch ${ready}; sleep 1000 & wait' & trap '' TERM; until [ -e ${ready} ]; do sleep 0.05; done; echo started; sleep 1000 & wait" }\n`);
    const run = startRun(file, ["--run-id", runId, "--shutdown-timeout", "1s", "--kill-grace", "5s"]);
    expect(await eventually(() => run.stdout().includes(`${runId}/daemon | started`), 15_000)).toBe(true);
    const signalled = Date.now();
    run.child.kill("SIGTERM");
    const result = await run.done;
    expect(Date.now() - signalled).toBeLessThan(1000 + 5000 + 2500);
    expect(result.code).toBe(143);
    expect(result.stdout).toMatch(/killing the process group the tasks left running now: the time to finish and the kill grace \(1s \+ 5s\) since the SIGTERM have passed|what is left of the time the SIGTERM gave/);
    expect(await findLeftovers(runId)).toEqual([]);
  });

  it("when the time to finish has passed, a task whose command has ended (its worker waits out what it left running) is not counted among the running tasks stopped", { timeout: 60_000 }, async () => {
    const runId = newRunId("command-ended");
    const ready = path.join(ws.dir, `${runId}.ready`);
    // `ended`'s command ends at once; what it leaves ignores SIGTERM, so its attempt waits out the kill grace.
    const file = await workflowFile(
      "command-ended",
      `tasks:\n  ended: { run: "sh -c 'trap \\"\\" TERM; touch ${ready}; exec sleep 30' & until [ -e ${ready} ]; do sleep 0.01; done; echo left" }\n  long: { run: "echo up; sleep 30" }\n`,
    );
    const run = startRun(file, ["--run-id", runId, "-j", "2", "--shutdown-timeout", "500ms", "--kill-grace", "3s"]);
    expect(await eventually(() => run.stdout().includes(`${runId}/ended | left`) && run.stdout().includes(`${runId}/long | up`), 15_000)).toBe(true);
    await sleep(300);
    run.child.kill("SIGTERM");
    const result = await run.done;
    expect(result.code).toBe(143);
    // Before: "stopping the 2 running tasks", though only `long` was stopped: `ended` then succeeded.
    expect(result.stdout).toContain("the 500ms to finish have passed: stopping the running task (SIGTERM, then SIGKILL 3s later)");
    expect(result.stdout).toMatch(new RegExp(` ok +${runId}/ended\\n`));
  });

  it("stopped by SIGINT: cancels the run's tasks that had not started and says so; the run ends, so no worker runs them and prune deletes it", async () => {
    const file = await workflowFile(
      "interrupted",
      // The task cut short is not first in the file: the summary's order must be its own, not the submission's.
      "tasks:\n  other: { run: echo other, priority: low }\n  first: { run: 'echo started; sleep 1000', priority: high }\n  later: { run: echo later, dependsOn: first }\n",
    );
    const runId = newRunId("interrupted");
    const run = startRun(file, ["--run-id", runId, "-j", "1", "--shutdown-timeout", "1s", "--kill-grace", "1s"]);
    expect(await eventually(() => run.stdout().includes(`${runId}/first | started`), 15_000)).toBe(true);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toBe("");
    // At the signal, what waits; as it is given back, what ran.
    expect(result.stdout).toContain(`run ${runId} stopping: cancelled 2 tasks that had not started\n`);
    expect(result.stdout).toContain(`release ${runId}/first: cancelled, as its run was stopped\n`);
    expect(result.stdout.indexOf(`run ${runId} stopping:`)).toBeLessThan(result.stdout.indexOf(`release ${runId}/first`));
    expect(result.stdout).not.toContain(`run ${runId} stopped:`);
    expect(result.stdout).toMatch(/Summary: 0 succeeded, 0 failed, 3 cancelled in \S+ \(interrupted by SIGINT\)/);
    // As a local run's shutdown says it: the task it cut short first, with its log here and its last lines, then those it did not start.
    expect(result.stdout).toContain(
      `Cancelled (3):\n  - first: aborted by shutdown\n    log: ${path.join(ws.logs, runId, "first.log")}\n    last line:\n      started\n  - other: shutdown: not started\n  - later: shutdown: not started\n`,
    );
    const status = await store.runStatus(runId);
    expect(status.state).toBe("cancelled");
    expect(status.tasks.map((row) => [row.key, row.state, row.attempts])).toEqual([
      ["other", "cancelled", 0],
      ["first", "cancelled", 0],
      ["later", "cancelled", 0],
    ]);
    // A worker started later finds nothing of it to run.
    const worker = await startWorker(["-j", "1"]);
    await sleep(1_000);
    expect(worker.stdout()).not.toContain(runId);
    worker.cli.child.kill("SIGTERM");
    await worker.cli.done;
    expect((await store.pruneRuns(0, { dryRun: true })).runs).toContain(runId);
  });

  it("stopped by SIGINT while a task waits for its retry: says it was waiting for its retry, with its failed attempt's error, not that it had not started, and its summary gives its log and last line, as a local run's does", async () => {
    // A retry up to 30 days after its failed attempt (full jitter): one due within the test's seconds is one chance in ~200,000.
    const file = await workflowFile("interrupted-retry", "tasks:\n  r: { run: 'echo trying; exit 7', retries: 5, backoff: { base: 30d, max: 30d } }\n  later: { run: echo later, dependsOn: r }\n");
    const runId = newRunId("interrupted-retry");
    const run = startRun(file, ["--run-id", runId, "-j", "1"]);
    expect(await eventually(() => run.stdout().includes(`retry   ${runId}/r attempt 1/6 failed: exited with code 7; next attempt in `), 15_000)).toBe(true);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    // Before: "cancelled 2 tasks that had not started", of a task that had run and failed.
    expect(result.stdout).toMatch(
      new RegExp(`run ${runId} stopping: cancelled 1 task that had not started and 1 task waiting for its retry\n\\S+ note {4}"r" was waiting for its retry: not retried \\(attempt 1 failed: exited with code 7\\)\n`),
    );
    expect(result.stdout).toContain(
      `Cancelled (2):\n  - r: shutdown: not retried (attempt 1 failed: exited with code 7)\n    log: ${path.join(ws.logs, runId, "r.log")}\n    last line of attempt 1:\n      trying\n  - later: shutdown: not started\n`,
    );
  });

  it("stopped by SIGINT while a task waits for its retry: the `run R stopping` line and the notes under it carry one time, not the notes an earlier one than the line above them", async () => {
    const file = await workflowFile("stopping-times", "tasks:\n  r: { run: 'exit 7', retries: 5, backoff: { base: 30d, max: 30d } }\n");
    const runId = newRunId("stopping-times");
    // Every read of the clock a millisecond after the last: the line's time and its notes' differ unless read once.
    const run = startCli(["run", file, "--log-dir", ws.logs, "--run-id", runId, "-j", "1"], { cwd: ws.dir, env: ENV, nodeArgs: ["--require", path.join(FIXTURES, "ticking-clock.cjs")] });
    workers.push(run);
    expect(await eventually(() => run.stdout().includes(`retry   ${runId}/r attempt 1/6 failed`), 15_000)).toBe(true);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    const record = new RegExp(`(\\S+) run ${runId} stopping: cancelled 1 task waiting for its retry\n(\\S+) note {4}"r" was waiting for its retry`).exec(result.stdout);
    expect(record).not.toBeNull();
    // Before: the note's time a few milliseconds before the line above it.
    expect(record![2]).toBe(record![1]);
  });

  it("stopped by SIGINT while an attempt after a failed one runs silent: its summary gives the failed attempt's lines, labelled, as status and a local run's summary do", async () => {
    const mark = path.join(ws.dir, `silent-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile(
      "silent-second",
      `tasks:\n  r:\n    run: 'if [ "$TASKQ_ATTEMPT" = 1 ]; then echo trying 1; exit 7; fi; touch "$MARK"; sleep 1000'\n    retries: 1\n    backoff: { base: 10ms, max: 10ms }\n    env: { MARK: "${mark}" }\n`,
    );
    const runId = newRunId("silent-second");
    const run = startRun(file, ["--run-id", runId, "-j", "1", "--shutdown-timeout", "0.5s", "--kill-grace", "1s"]);
    expect(await eventually(() => existsSync(mark), 15_000)).toBe(true);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    // Before: its log alone, no lines, while status gave attempt 1's.
    expect(result.stdout).toContain(`Cancelled (1):\n  - r: aborted by shutdown\n    log: ${path.join(ws.logs, runId, "r.log")}\n    last line of attempt 1:\n      trying 1\n`);
    expect((await taskq(["status", runId])).stdout).toContain(`Cancelled (1):\n  - r: aborted by shutdown\n    log: <log-dir>/${runId}/r.log (on `);
    expect((await taskq(["status", runId])).stdout).toContain(`    last line of attempt 1:\n      trying 1\n`);
  });

  it("stopped by SIGINT while a task waits for its retry, --output json: the summary's cancelled record of it names the worker whose attempt failed, with its host and pid, as a dead letter does", async () => {
    // A retry up to 30 days after its failed attempt (full jitter): one due within the test's seconds is one chance in ~200,000.
    const file = await workflowFile("interrupted-retry-json", "tasks:\n  r: { run: 'echo trying; exit 7', retries: 5, backoff: { base: 30d, max: 30d } }\n");
    const runId = newRunId("interrupted-retry-json");
    const run = startRun(file, ["--run-id", runId, "-j", "1", "--output", "json"]);
    expect(await eventually(() => run.stdout().includes('"event":"finished"') && run.stdout().includes('"state":"queued"'), 15_000)).toBe(true);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    const records = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const own = records.find((record) => record.event === "worker")!;
    const summary = records.at(-1)!;
    expect(summary.event).toBe("summary");
    // Before: logPath alone said which worker's log it was (here, this process's), in no field a program reads.
    expect(summary.cancelled).toEqual([
      {
        id: "r",
        reason: "shutdown",
        message: "shutdown: not retried (attempt 1 failed: exited with code 7)",
        logPath: path.join(ws.logs, runId, "r.log"),
        logFile: `${runId}/r.log`,
        workerId: own.workerId,
        workerHost: hostname(),
        workerPid: run.child.pid,
        tail: ["trying"],
        tailAttempt: 1,
      },
    ]);
  });

  it("stopped by SIGINT while another worker runs tasks of its run: what waits is cancelled at the signal, and a task there that ends after it starts no dependent and is not retried", async () => {
    // Before, what waited was cancelled only once this process's own tasks had stopped (up to the time to finish and
    // the kill grace): meanwhile the other worker ended "build" and started "deploy", and retried "flaky", after the user asked to stop.
    const runId = newRunId("stopped-deploy");
    const gate = path.join(ws.dir, `gate-${runId}`);
    const marker = path.join(ws.dir, `deployed-${runId}`);
    const waitGate = `echo started; while [ ! -f ${gate} ]; do sleep 0.1; done`;
    const file = await workflowFile(
      "stopped-deploy",
      `tasks:\n  long: { run: 'echo started; sleep 1000', priority: critical }\n  build: { run: '${waitGate}' }\n` +
        `  flaky: { run: '${waitGate}; exit 1', retries: 2, backoff: { base: 10ms } }\n  deploy: { run: 'touch ${marker}', dependsOn: build }\n`,
    );
    // This process leases "long" (at -j 1, before any other worker is there); the other one then takes "build" and "flaky".
    const run = startRun(file, ["--run-id", runId, "-j", "1", "--shutdown-timeout", "2s", "--kill-grace", "1s"]);
    expect(await eventually(() => run.stdout().includes(`${runId}/long | started`), 15_000)).toBe(true);
    const worker = await startWorker(["-j", "2"]);
    expect(await eventually(() => worker.stdout().includes(`${runId}/build | started`) && worker.stdout().includes(`${runId}/flaky | started`), 15_000)).toBe(true);
    run.child.kill("SIGINT");
    expect(await eventually(() => run.stdout().includes(`run ${runId} stopping: cancelled 1 task that had not started\n`), 15_000)).toBe(true);
    // Both end on the other worker after the signal: "build" succeeds, "flaky" fails with retries left.
    await writeFile(gate, "");
    const stateOf = async (key: string) => (await store.runStatus(runId)).tasks.find((row) => row.key === key)?.state;
    expect(await eventually(async () => (await stateOf("build")) === "succeeded" && (await stateOf("flaky")) !== "running", 15_000)).toBe(true);
    const result = await run.done;
    expect(result.code).toBe(130);
    await sleep(500);
    worker.cli.child.kill("SIGTERM");
    await worker.cli.done;
    expect(worker.stdout()).not.toContain(`${runId}/deploy`);
    expect(worker.stdout()).not.toContain(`${runId}/flaky (attempt 2/3)`);
    expect(existsSync(marker)).toBe(false);
    const rows = new Map((await store.runStatus(runId)).tasks.map((row) => [row.key, row]));
    expect(rows.get("deploy")).toMatchObject({ state: "cancelled", attempts: 0, cancelReason: "shutdown: not started" });
    expect(rows.get("build")).toMatchObject({ state: "succeeded" });
    expect(rows.get("flaky")).toMatchObject({ state: "cancelled", attempts: 1, cancelReason: expect.stringMatching(/^shutdown: not retried \(attempt 1 failed: .*exit(ed with)? code 1/) as string });
    expect(rows.get("long")).toMatchObject({ state: "cancelled", cancelReason: "aborted by shutdown" });
  });

  it("a run --store whose run another run --store of it stopped (its SIGINT) says so before its summary, not only 'shutdown: not started'", async () => {
    const runId = newRunId("two-jobs");
    const file = await workflowFile("two-jobs", "tasks:\n  a: { run: 'echo started; sleep 3' }\n  b: { run: 'echo started; sleep 3' }\n  c: { run: echo c, dependsOn: [a, b] }\n");
    const first = startRun(file, ["--run-id", runId, "-j", "1"]);
    expect(await eventually(() => /\/[ab] \| started/.test(first.stdout()), 15_000)).toBe(true);
    const second = startRun(file, ["--run-id", runId, "-j", "1"]);
    expect(await eventually(() => /\/[ab] \| started/.test(second.stdout()), 15_000)).toBe(true);
    first.child.kill("SIGINT");
    expect((await first.done).code).toBe(130);
    const result = await second.done;
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`note    run ${runId} was stopped by another process \\(a signal to another run --store of it\\): its tasks that had not started were cancelled\n[\\s\\S]*Summary: `));
    expect(result.stdout).toContain("c: shutdown: not started");
  });

  it("a task that another run --store of its run stops while it runs here is said to be cancelled by that shutdown, as its summary and status say it, not by request: by its worker's lines and in its log", async () => {
    const runId = newRunId("stopped-here");
    const file = await workflowFile("stopped-here", "tasks:\n  a: { run: 'echo started; sleep 1000', priority: high }\n  b: { run: 'echo started; sleep 1000' }\n");
    const first = startRun(file, ["--run-id", runId, "-j", "1", "--shutdown-timeout", "1s", "--kill-grace", "1s"]);
    expect(await eventually(() => first.stdout().includes(`${runId}/a | started`), 15_000)).toBe(true);
    // This one runs "b", and hears of the stop that the first one asks of it at its next heartbeat (every second).
    const second = startRun(file, ["--run-id", runId, "-j", "1", "--lease", "3s"]);
    expect(await eventually(() => second.stdout().includes(`${runId}/b | started`), 15_000)).toBe(true);
    first.child.kill("SIGINT");
    expect((await first.done).code).toBe(130);
    const result = await second.done;
    expect(result.code).toBe(1);
    // Before, "cancel  RUN/b: cancelled by request", above a summary (and a status) that said "b: aborted by shutdown".
    expect(result.stdout).toContain(`cancel  ${runId}/b: aborted by shutdown\n`);
    expect(result.stdout).not.toContain("cancelled by request");
    expect(result.stdout).toContain("  - b: aborted by shutdown\n");
    expect((await store.runStatus(runId)).tasks.find((row) => row.key === "b")).toMatchObject({ state: "cancelled", cancelReason: "aborted by shutdown" });
    // Its kill and its log say so too: before, "cancel  RUN/b: cancel requested; killing the task", and a log that
    // ended "--- taskq: attempt 1 stopped: cancelled by request ---" (the renewal said only that a cancel was asked).
    expect(result.stdout).toContain(`cancel  ${runId}/b: its run was stopped; killing the task\n`);
    expect(result.stdout).not.toContain("cancel requested");
    const log = await readFile(path.join(ws.logs, runId, "b.log"), "utf8");
    expect(log).toContain("--- taskq: attempt 1 stopped: aborted by shutdown ---");
    expect(log).not.toContain("cancelled by request");
  });

  it("stopped by SIGINT: its summary, status and their JSON give each task the shutdown's reason and words, as a local run's summary does", async () => {
    const file = await workflowFile(
      "interrupted-json",
      // The task cut short is not first in the file: the summary's order must be its own, not the submission's.
      "tasks:\n  other: { run: echo other, priority: low }\n  first: { run: 'echo started; sleep 1000', priority: high }\n  later: { run: echo later, dependsOn: first }\n",
    );
    /** Runs the file (with `args`), SIGINTs it once its task has printed, and returns its summary's cancelled tasks. */
    const interrupted = async (args: string[]): Promise<unknown[]> => {
      const run = startRun(file, ["-j", "1", "--shutdown-timeout", "1s", "--kill-grace", "1s", "--output", "json", ...args]);
      expect(await eventually(() => run.stdout().includes('"text":"started"'), 15_000)).toBe(true);
      run.child.kill("SIGINT");
      const result = await run.done;
      expect(result.code).toBe(130);
      return (JSON.parse(result.stdout.trim().split("\n").at(-1)!) as { cancelled: unknown[] }).cancelled;
    };
    const withLog = await interrupted(["--store", ""]);
    // Each gives the task it cut short its log and last lines (a stored run's from its own worker, which gave the lease back with them).
    expect(withLog[0]).toMatchObject({ id: "first", logFile: expect.stringMatching(/\/first\.log$/), tail: ["started"] });
    const withoutLog = (cancelled: unknown[]) =>
      cancelled.map((line) => {
        const { logPath: _path, logFile: _file, tail: _tail, workerId: _worker, workerHost: _host, workerPid: _pid, ...rest } = line as Record<string, unknown>;
        return rest;
      });
    const local = withoutLog(withLog);
    // Cut short first, as the text lists them; then the others as they were cancelled.
    expect(local).toEqual([
      { id: "first", reason: "shutdown", message: "aborted by shutdown", running: true },
      { id: "other", reason: "shutdown", message: "shutdown: not started" },
      { id: "later", reason: "shutdown", message: "shutdown: not started" },
    ]);
    const runId = newRunId("interrupted-json");
    // The same tasks, reasons and words as the local run's.
    const stored = await interrupted(["--run-id", runId]);
    // With the worker that ran it, this process's own, as a dead letter and a task cancelled as it waited for its retry give
    // theirs (before, none: a program could not tell whose log it was).
    expect(stored.find((line) => (line as { id: string }).id === "first")).toEqual({
      id: "first",
      reason: "shutdown",
      message: "aborted by shutdown",
      running: true,
      logPath: path.join(ws.logs, runId, "first.log"),
      logFile: `${runId}/first.log`,
      workerId: expect.stringMatching(/-[1-9]\d*-[0-9a-f]{6}$/) as string,
      workerHost: hostname(),
      workerPid: expect.any(Number) as number,
      tail: ["started"],
    });
    const first = stored.find((line) => (line as { id: string }).id === "first") as { workerId: string; workerPid: number };
    expect(first.workerId).toMatch(new RegExp(`-${first.workerPid}-[0-9a-f]{6}$`));
    // In the same order too: the task cut short first.
    expect(withoutLog(stored)).toEqual(local);
    // Status gives the task cut short its log, on the worker that ran it, and the last lines its attempt wrote, which its
    // worker stored as it gave the lease back (before, neither: only the run's own summary had them).
    const statusLines = (JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { cancelled: unknown[] }).cancelled;
    expect(withoutLog(statusLines)).toEqual(local);
    expect(statusLines[0]).toEqual({
      ...local[0],
      logPath: `<log-dir>/${runId}/first.log (on ${first.workerId})`,
      logFile: `${runId}/first.log`,
      workerId: first.workerId,
      workerHost: hostname(),
      workerPid: first.workerPid,
      tail: ["started"],
    });
    expect((await taskq(["status", runId])).stdout).toContain(
      `Cancelled (3):\n  - first: aborted by shutdown\n    log: <log-dir>/${runId}/first.log (on ${first.workerId})\n    last line:\n      started\n  - other: shutdown: not started\n  - later: shutdown: not started\n`,
    );
  });

  it("a signal just after tasks were started, before some had spawned their command: each such task's cancel, in the summary, status and their JSON, says it was stopped before its command started, as a local run's does, not 'not started' after its started record", async () => {
    // This process leases all eight at once (their started records come out together); their commands spawn one per turn of
    // the event loop after that. A SIGINT as the first started record is read comes before some of them spawned.
    const file = await workflowFile("not-spawned", `tasks:\n${Array.from({ length: 8 }, (_, i) => `  t${i}: { run: "echo ran" }\n`).join("")}`);
    const NOT_SPAWNED_LOG = "--- taskq: attempt 1 stopped by the shutdown before its command started ---\n";
    let caught = 0;
    for (let round = 0; round < 8 && caught === 0; round++) {
      const runId = newRunId("not-spawned");
      const run = startRun(file, ["--run-id", runId, "-j", "8", "--output", "json"]);
      let signalled = false;
      run.child.stdout!.on("data", () => {
        if (signalled || !run.stdout().includes('"event":"started"')) return;
        signalled = true;
        run.child.kill("SIGINT");
      });
      const result = await run.done;
      expect(result.code).toBe(130);
      const records = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      const started = new Set(records.filter((record) => record.event === "started").map((record) => record.id));
      const summary = records.at(-1) as { event: string; cancelled: { id: string; message: string }[] };
      expect(summary.event).toBe("summary");
      const status = JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { cancelled: unknown[] };
      const statusText = (await taskq(["status", runId])).stdout;
      for (const line of summary.cancelled) {
        const log = await readFile(path.join(ws.logs, runId, `${line.id}.log`), "utf8").catch(() => "");
        if (log !== NOT_SPAWNED_LOG) continue;
        // Started by this worker, its command never ran: the cancel agrees with its started record and its log.
        expect(started.has(line.id)).toBe(true);
        expect(line).toEqual({ id: line.id, reason: "shutdown", message: "shutdown: stopped before its command started" });
        expect(status.cancelled).toContainEqual(line);
        expect(statusText).toContain(`  - ${line.id}: shutdown: stopped before its command started\n`);
        caught++;
      }
    }
    // The race was met (else the test proves nothing).
    expect(caught).toBeGreaterThan(0);
  });

  it("stopped by SIGTERM while another worker, SIGKILLed, holds one of its tasks: says that task stops at a heartbeat only if its worker lives, else once its lease runs out", async () => {
    // Before, it said the task stopped at its worker's next heartbeat: a dead worker sends none.
    const { runId, result, other, worker } = await stopWithTaskOnDeadWorker("stopped-orphan", false);
    expect(result.code).toBe(143);
    expect(result.stdout).toMatch(
      new RegExp(
        `\\d\\d:\\d\\d:\\d\\d\\.\\d{3} run ${runId} stopped: asked 1 task running on another worker to stop\n` +
          `\\d\\d:\\d\\d:\\d\\d\\.\\d{3} note {4}"${other}" runs on worker ${worker.id}, which stops it at its next heartbeat; if that worker is gone \\(killed, its machine lost\\), ` +
          `the task stays running until its lease runs out, in \\d+s, and then the next sweep of any running worker cancels it\n`,
      ),
    );
    expect(result.stdout).not.toContain("stops at their next heartbeat");
    await cancelStrandedRun(runId);
  });

  it("stopped by SIGTERM while another worker holds one of its tasks, --output json: the cancelled record gives that task's worker and lease left", async () => {
    const { runId, result, own, other, worker } = await stopWithTaskOnDeadWorker("stopped-orphan-json", true);
    expect(result.code).toBe(143);
    const records = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // Its own task is cancelled as it is given back; the other's is asked to stop once this process's have stopped.
    expect(records.find((record) => record.event === "released")).toMatchObject({ runId, id: own, cancelled: true });
    const cancelled = records.find((record) => record.event === "cancelled");
    expect(cancelled).toMatchObject({
      runId,
      cancelled: [],
      cancelRequested: [other],
      running: [{ id: other, workerId: worker.id, workerHost: hostname(), workerPid: worker.cli.child.pid, leaseLeftMs: expect.any(Number) as number }],
    });
    await cancelStrandedRun(runId);
  });

  it("stopped while a task on another worker has run out its lease as a statement of that worker's still waits on the database: its note and its JSON (workerWaitingMs) both say so, as status does", async () => {
    const file = await workflowFile("stopped-waiting", "tasks:\n  first: { run: 'echo started; sleep 1000' }\n  second: { run: 'echo started; sleep 1000' }\n");
    const started = /"event":"output","runId":"[^"]+","id":"(\w+)","attempt":1,"stream":"\w+","text":"started"/;
    for (const json of [false, true]) {
      const runId = newRunId("stopped-waiting");
      // Its sweeps, which follow the earliest lease to run out, held back on their way (see below): they do not take the other's task.
      const database = new URL(DATABASE_URL);
      const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
      const run = startRun(file, ["--run-id", runId, "-j", "1", "--lease", "60s", "--shutdown-timeout", "0.5s", "--kill-grace", "1s", "--output", json ? "json" : "plain"], { TASKQ_STORE: proxy.url(SECRET_URL) });
      const ownStarted = json ? started : /\S+\/(\w+) \| started/;
      expect(await eventually(() => ownStarted.test(run.stdout()), 15_000)).toBe(true);
      const other = ownStarted.exec(run.stdout())![1] === "first" ? "second" : "first";
      const worker = await startWorker(["-j", "1", "--lease", "3s"]);
      expect(await eventually(() => worker.stdout().includes(`${runId}/${other} | started`), 15_000)).toBe(true);
      // Before that lease runs out (it was renewed within a second): the sweep's statement, and what its connection sends after it.
      const sweep = proxy.holdNext("WHERE state = 'running' AND lease_expires_at < now()");
      worker.cli.child.kill("SIGKILL");
      await worker.cli.done;
      // A statement of that worker's begun before its lease ran out, still in progress (a renewal held up by a slow database).
      const session = new pg.Client({ connectionString: DATABASE_URL, application_name: storeApplicationName(`taskq worker ${worker.id}`, SCHEMA) });
      await session.connect();
      const waiting = session.query("SELECT pg_sleep(60)").catch(() => undefined);
      try {
        expect(await eventually(async () => (await taskq(["status", runId])).stdout.includes("while its worker waits on the database"), 15_000)).toBe(true);
        run.child.kill("SIGTERM");
        const result = await run.done;
        expect(result.code).toBe(143);
        if (!json) {
          expect(result.stdout).toMatch(new RegExp(`note {4}"${other}" on worker ${worker.id}: its lease ran out \\S+ ago while its worker waits on the database`));
          continue;
        }
        const records = result.stdout
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        const cancelled = records.find((record) => record.event === "cancelled" && record.stopping === undefined) as { running: Record<string, unknown>[] };
        expect(cancelled.running).toEqual([expect.objectContaining({ id: other, workerId: worker.id, workerWaitingMs: expect.any(Number) as number })]);
        expect(cancelled.running[0]!.leaseLeftMs).toBeLessThanOrEqual(0);
      } finally {
        const client = new pg.Client({ connectionString: DATABASE_URL });
        await client.connect();
        await client.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [storeApplicationName(`taskq worker ${worker.id}`, SCHEMA)]);
        await client.end();
        await waiting;
        await session.end();
        sweep.release();
        await proxy.close();
      }
      await cancelStrandedRun(runId);
    }
  });

  it("stopped while its database does not answer: exits soon with the signal's code, saying the run may still be live and how to cancel it", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("unanswered", "tasks:\n  a: { run: 'echo started; sleep 1000' }\n  b: { run: echo b, dependsOn: a }\n");
      const runId = newRunId("unanswered");
      const run = startRun(file, ["--run-id", runId, "--shutdown-timeout", "1s", "--kill-grace", "1s"], { TASKQ_STORE: proxy.url(SECRET_URL) });
      expect(await eventually(() => run.stdout().includes(`${runId}/a | started`), 15_000)).toBe(true);
      proxy.freeze();
      const signalledAt = Date.now();
      run.child.kill("SIGTERM");
      const result = await run.done;
      expect(result.code).toBe(143);
      expect(Date.now() - signalledAt).toBeLessThan(20_000);
      expect(result.stderr).toContain(`taskq: run ${runId} may still be live (the database did not answer within 3s): its tasks that had not started may not have been cancelled`);
      expect(result.stderr).toContain(`cancel it with: taskq cancel ${runId}\n`);
      // As it says: nothing reached the database.
      expect((await store.runStatus(runId)).state).toBe("running");
      await cancelStrandedRun(runId);
    } finally {
      await proxy.close();
    }
  });

  // Once it has said the run may still be live, it closes the store, which waits up to a second for connections the database
  // does not answer: with no listener left, a runner's SIGTERM then ended taskq by the signal itself, not with its exit code.
  it("stopped while its database does not answer, a SIGTERM as it closes the store, having said the run may still be live, changes nothing: it exits 143", async () => {
    const database = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const file = await workflowFile("unanswered-close", "tasks:\n  a: { run: 'echo started; sleep 1000' }\n");
      const runId = newRunId("unanswered-close");
      const run = startRun(file, ["--run-id", runId, "--shutdown-timeout", "0.5s", "--kill-grace", "0.5s"], { TASKQ_STORE: proxy.url(SECRET_URL) });
      expect(await eventually(() => run.stdout().includes(`${runId}/a | started`), 15_000)).toBe(true);
      proxy.freeze();
      let sent = false;
      run.child.stderr!.on("data", () => {
        if (!sent && run.stderr().includes("may still be live")) {
          sent = true;
          run.child.kill("SIGTERM");
        }
      });
      run.child.kill("SIGTERM");
      const result = await run.done;
      expect(sent).toBe(true);
      expect({ code: result.code, signal: result.signal }).toEqual({ code: 143, signal: null });
      expect(result.stderr).toContain(`taskq: no summary of run ${runId}: the database did not answer within 3s\n`);
      await cancelStrandedRun(runId);
    } finally {
      await proxy.close();
    }
  });

  it("--output json: a note about one task (what it left running) names its run and task, as the worker's other records of a task do", async () => {
    const file = await workflowFile("note-id", "tasks:\n  bg: { run: 'sleep 1000 & echo started' }\n");
    const runId = newRunId("note-id");
    const result = await startRun(file, ["--run-id", runId, "--output", "json"]).done;
    expect(result.code).toBe(0);
    const notes = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.event === "note");
    expect(notes).toEqual([{ ts: expect.any(String), event: "note", runId, id: "bg", message: "bg: stopped 1 process it left running (`wait` for it in the script, or start it with `setsid` to leave it running on purpose)" }]);
  });

  it("plain lines: a note about one task (what it left running) names its run and task, as its ok line does: two runs' tasks of one id are told apart", async () => {
    const file = await workflowFile("note-run", "tasks:\n  bg: { run: 'sleep 1000 & echo started' }\n");
    const worker = await startWorker(["-j", "2"]);
    const first = await submit(file);
    const second = await submit(file);
    await waitForRun(first);
    await waitForRun(second);
    const note = (runId: string): string => `note    ${runId}/bg: stopped 1 process it left running (\`wait\` for it in the script, or start it with \`setsid\` to leave it running on purpose)\n`;
    expect(await eventually(() => worker.stdout().includes(`ok      ${second}/bg\n`) && worker.stdout().includes(`ok      ${first}/bg\n`), 15_000)).toBe(true);
    // Each said "bg: stopped 1 process ...": the same words for either run.
    expect(worker.stdout()).toContain(note(first));
    expect(worker.stdout()).toContain(note(second));
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  });

  it("--output json: a failed attempt's finished record has its exitCode, signal and timedOut, as a local run's failed event has", async () => {
    const file = await workflowFile(
      "finished-fields",
      "tasks:\n  code: { run: 'exit 3', retries: 1, backoff: { base: 10ms } }\n  killed: { run: 'kill -KILL $$' }\n  slow: { run: 'sleep 30', timeout: 500ms }\n",
    );
    const runId = newRunId("finished-fields");
    const result = await startRun(file, ["--run-id", runId, "--output", "json", "-j", "3"]).done;
    expect(result.code).toBe(1);
    const finished = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.event === "finished")
      .map(({ id, attempt, maxAttempts, state, exitCode, signal, timedOut }) => ({ id, attempt, maxAttempts, state, exitCode, signal, timedOut }))
      .sort((a, b) => `${String(a.id)}${String(a.attempt)}`.localeCompare(`${String(b.id)}${String(b.attempt)}`));
    expect(finished).toEqual([
      { id: "code", attempt: 1, maxAttempts: 2, state: "queued", exitCode: 3, signal: null, timedOut: false },
      { id: "code", attempt: 2, maxAttempts: 2, state: "failed", exitCode: 3, signal: null, timedOut: false },
      { id: "killed", attempt: 1, maxAttempts: 1, state: "failed", exitCode: null, signal: "SIGKILL", timedOut: false },
      { id: "slow", attempt: 1, maxAttempts: 1, state: "failed", exitCode: null, signal: "SIGTERM", timedOut: true },
    ]);
  });

  it("its summary names this process's log folder, words a timeout as a local run does, and tells of no stop it was not asked for", async () => {
    const file = await workflowFile("summary", "tasks:\n  fine: { run: echo fine }\n  slow: { run: 'echo waiting; sleep 30', timeout: 1s }\n");
    const runId = newRunId("summary");
    const result = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/Dead letters \(1\):\n\s+\S+ slow: timed out after 1s \(1 attempt\)/);
    expect(result.stdout).toContain(`    log: ${path.join(ws.logs, runId, "slow.log")}\n`);
    expect(result.stdout).toContain(`logs: ${path.join(ws.logs, runId)}\n`);
    expect(result.stdout).not.toContain("stopped");
    expect(await readFile(path.join(ws.logs, runId, "slow.log"), "utf8")).toBe("waiting\n--- taskq: attempt 1 timed out after 1s ---\n");
  });

  it("a shell that exited by itself while what it left running was stopped, its timeout passing meanwhile, failed as it did, as a local run says: not timed out", async () => {
    // The shell exits 3 at once; its background job ignores SIGTERM, so stopping it takes the kill grace (5s),
    // and the task's end waits for that: its 2s timeout passes meanwhile, after the shell had ended.
    const yaml = "tasks:\n  left: { run: 'echo begun; sh -c \"trap \\\"\\\" TERM; sleep 60\" & exit 3', timeout: 2s, retries: 1, retryOn: [1] }\n";
    const file = await workflowFile("exited-then-timeout", yaml);
    const words = "exited with code 3 (3 is not in retryOn: not retried)";
    const runId = newRunId("exited-then-timeout");
    // The two runs side by side: each waits out its kill grace, and neither reads the other's store or logs.
    const [local, result] = await Promise.all([
      taskq(["run", file, "--store", "", "--log-dir", path.join(ws.logs, "local"), "--kill-grace", "5s"]),
      taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId, "--kill-grace", "5s", "--output", "json"]),
    ]);
    expect(local.code).toBe(1);
    expect(local.stdout).toContain(`FAILED  left after 1 attempt: ${words}\n`);
    expect(result.code).toBe(1);
    const finished = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.event === "finished")
      .map(({ attempt, state, error, exitCode, timedOut }) => ({ attempt, state, error, exitCode, timedOut }));
    expect(finished).toEqual([{ attempt: 1, state: "failed", error: words, exitCode: 3, timedOut: false }]);
    const dead = await taskq(["dead-letters", runId]);
    expect(dead.stdout).toContain(`${runId}/left: ${words} (1 attempt)\n`);
    expect(await readFile(path.join(ws.logs, runId, "left.log"), "utf8")).toBe(`begun\n--- taskq: attempt 1 ${words} ---\n`);
  }, 60_000);

  it("its ok, retry and FAILED lines say which attempt ended, in a local run's words", async () => {
    const file = await workflowFile(
      "attempt-words",
      `defaults: { backoff: { base: 10ms, max: 10ms } }
tasks:
  flaky: { run: 'exit 3', retries: 2 }
  second: { run: '[ "$TASKQ_ATTEMPT" = 2 ] || exit 1', retries: 1 }
  once: { run: 'exit 4' }
  fine: { run: 'true', retries: 1 }
`,
    );
    // The event lines, without their time, the durable run's id, and the backoff drawn at random.
    const eventLines = (stdout: string, prefix: string) =>
      stdout
        .split("\n")
        .map((line) => /^\d\d:\d\d:\d\d\.\d{3} ((?:ok|retry|FAILED) .*)$/.exec(line)?.[1])
        .filter((line) => line !== undefined)
        .map((line) => line.replace(prefix, "").replace(/next attempt in \d+ms$/, "next attempt in Nms"))
        .sort();
    const local = await taskq(["run", file, "--store", "", "--log-dir", path.join(ws.logs, "local")]);
    expect(local.code).toBe(1);
    const runId = newRunId("attempt-words");
    const durable = await taskq(["run", file, "--log-dir", ws.logs, "--run-id", runId]);
    expect(durable.code).toBe(1);
    const expected = [
      "FAILED  flaky after 3 attempts: exited with code 3",
      "FAILED  once: exited with code 4",
      "ok      fine after 1 attempt",
      "ok      second after 2 attempts",
      "retry   flaky attempt 1/3 failed: exited with code 3; next attempt in Nms",
      "retry   flaky attempt 2/3 failed: exited with code 3; next attempt in Nms",
      "retry   second attempt 1/2 failed: exited with code 1; next attempt in Nms",
    ];
    expect(eventLines(local.stdout, "")).toEqual(expected);
    expect(eventLines(durable.stdout, `${runId}/`)).toEqual(expected);
  });
});

describe("connections in pg_stat_activity", () => {
  /** The application names of the database's connections that start with `prefix`. */
  async function applicationNames(prefix: string): Promise<string[]> {
    const { rows } = await store.pool.query<{ name: string }>("SELECT application_name AS name FROM pg_stat_activity WHERE starts_with(application_name, $1)", [prefix]);
    return rows.map((row) => row.name);
  }

  it("a worker's are named `taskq worker <id> in <schema>` (at most 63 bytes), whatever the URL's application_name or PGAPPNAME says", async () => {
    const worker = await startWorker(["-j", "1"]);
    const named = storeApplicationName(`taskq worker ${worker.id}`, SCHEMA);
    expect(Buffer.byteLength(named)).toBeLessThanOrEqual(63);
    // Ended by its store: the schema, or where the id leaves it no room (this one has 25 characters), a digest of it.
    expect(named.startsWith("taskq worker ")).toBe(true);
    expect(named.endsWith(` in ${SCHEMA}`) || named.endsWith(` in #${createHash("sha256").update(SCHEMA).digest("hex").slice(0, 16)}`)).toBe(true);
    expect(await eventually(async () => (await applicationNames(named)).includes(named), 15_000)).toBe(true);
    // Before, the user's name won: taskq no longer knew its own sessions (a lock one held was waited for 5 s, not 30 s).
    const fromUrl = `mine-${randomBytes(4).toString("hex")}`;
    const url = new URL(SECRET_URL);
    url.searchParams.set("application_name", fromUrl);
    const byUrl = await startWorker(["-j", "1"], { TASKQ_STORE: url.toString() });
    const fromEnv = `theirs-${randomBytes(4).toString("hex")}`;
    const byEnv = await startWorker(["-j", "1"], { PGAPPNAME: fromEnv });
    const byUrlNamed = storeApplicationName(`taskq worker ${byUrl.id}`, SCHEMA);
    const byEnvNamed = storeApplicationName(`taskq worker ${byEnv.id}`, SCHEMA);
    expect(await eventually(async () => (await applicationNames(byUrlNamed)).length > 0 && (await applicationNames(byEnvNamed)).length > 0, 15_000)).toBe(true);
    // Every one of their connections, the one that LISTENs too, once set up (named at their start by the user's, then by taskq's).
    expect(await eventually(async () => (await applicationNames(fromUrl)).length === 0 && (await applicationNames(fromEnv)).length === 0, 5_000)).toBe(true);
    for (const each of [worker, byUrl, byEnv]) {
      each.cli.child.kill("SIGTERM");
      expect((await each.cli.done).code).toBe(143);
    }
  });

  it("`run --store`'s are named `taskq run <run id> in <schema>`", async () => {
    const file = await workflowFile("app-name", "tasks:\n  a: { run: 'echo started; sleep 1000' }\n");
    const runId = newRunId("app-name");
    const run = startRun(file, ["--run-id", runId, "-j", "1", "--shutdown-timeout", "0.5s", "--kill-grace", "1s"]);
    expect(await eventually(() => run.stdout().includes(`${runId}/a | started`), 15_000)).toBe(true);
    const named = storeApplicationName(`taskq run ${runId}`, SCHEMA);
    expect(named.startsWith(`taskq run ${runId.slice(0, 10)}`)).toBe(true);
    expect(await applicationNames(`taskq run ${runId.slice(0, 10)}`)).toContain(named);
    run.child.kill("SIGTERM");
    expect((await run.done).code).toBe(143);
  });

  it("a name too long keeps its start and its end, in 63 bytes of printable ASCII", () => {
    const long = applicationName(`taskq worker ${"h".repeat(100)}é-1234-abcdef`);
    expect(long).toBe(`taskq worker ${"h".repeat(17)}..${"h".repeat(18)}?-1234-abcdef`);
    expect(Buffer.byteLength(long)).toBe(63);
    expect(applicationName("taskq status r-1")).toBe("taskq status r-1");
  });

  it("a store's session ends with its schema, whole where it fits or is short, else a digest of it; the words before it are cut, never the end", () => {
    const digest = (schema: string) => createHash("sha256").update(schema).digest("hex").slice(0, 16);
    expect(storeApplicationName("taskq worker vm-1-abcdef", "taskq")).toBe("taskq worker vm-1-abcdef in taskq");
    const long = "s".repeat(48);
    expect(storeApplicationName("taskq status r-1", "s".repeat(30))).toBe(`taskq status r-1 in ${"s".repeat(30)}`);
    expect(storeApplicationName("taskq worker vm-1-abcdef", long)).toBe(`taskq worker vm-1-abcdef in #${digest(long)}`);
    const cut = storeApplicationName(`taskq worker ${"h".repeat(100)}-1234-abcdef`, "ci");
    expect(cut).toBe(`taskq worker ${"h".repeat(14)}..${"h".repeat(16)}-1234-abcdef in ci`);
    expect(Buffer.byteLength(cut)).toBe(63);
    const cutLong = storeApplicationName(`taskq worker ${"h".repeat(100)}-1234-abcdef`, long);
    expect(Buffer.byteLength(cutLong)).toBe(63);
    expect(cutLong.endsWith(` in #${digest(long)}`)).toBe(true);
    expect(cutLong.startsWith("taskq worker hh")).toBe(true);
  });
});

describe("a taskq run by a worker's task", () => {
  it.skipIf(!hasPython())("has its tasks the worker SIGKILLed on a second signal gone before the worker exits", async () => {
    const innerDir = path.join(ws.dir, `nested-${randomBytes(3).toString("hex")}`);
    await mkdir(innerDir);
    await writeFile(path.join(innerDir, "inner.yaml"), "tasks:\n  mapped:\n    run: exec python3 maps.py\n");
    await writeFile(path.join(innerDir, "maps.py"), SLOW_TO_TEAR_DOWN_PY);
    const inner = `cd "${innerDir}" && "${process.execPath}" "${BIN}" run inner.yaml --log-dir inner-logs`;
    const file = await workflowFile("nested-killed", `tasks:\n  sub:\n    run: ${JSON.stringify(inner)}\n`);
    const worker = await startWorker();
    const runId = await submit(file);
    let mapped: number | undefined;
    // Looked at in /proc the moment the worker has exited, as a CI runner's look for leftover processes would.
    let atExit: string | undefined;
    worker.cli.child.once("exit", () => {
      if (mapped !== undefined) atExit = liveState(mapped);
    });
    try {
      expect(await eventually(() => /mapped \| pid \d+/.test(worker.stdout()), 30_000)).toBe(true);
      mapped = Number(/mapped \| pid (\d+)/.exec(worker.stdout())?.[1]);
      expect(liveState(mapped)).toBeDefined();
      worker.cli.child.kill("SIGINT");
      expect(await eventually(() => worker.stdout().includes("SIGINT received:"), 30_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      const result = await worker.cli.done;
      expect(result.code).toBe(130);
      expect(result.stdout).toContain("SIGINT received again: killing every task now");
      // Before, the worker waited only for its own tasks' processes: this one was still being torn down, state R or D.
      expect(atExit).toBeUndefined();
    } finally {
      if (mapped !== undefined && liveState(mapped) !== undefined) process.kill(mapped, "SIGKILL");
      await cancelStrandedRun(runId).catch(() => undefined);
    }
  }, 60_000);
});
