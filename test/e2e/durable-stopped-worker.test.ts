import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { eventually, findGuards, findLeftovers, findWithEntry } from "../helpers/processes.js";
import { useDurableWorkspace, type Worker } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_stopped");
const { taskq, workflowFile, submit, startWorker, waitForRun } = durable;
let ws: { dir: string; logs: string };

beforeAll(() => {
  ws = durable.ws;
});

/** Why the attempt ended, in its log, its line and its dead letter (see LeaseLapsedError). */
const LEASE_LAPSED =
  "its lease was about to run out while the worker was stopped (SIGSTOP), so taskq's orphan guard froze the task (SIGSTOP), and it was killed as the lease ran out, never running beside another worker's attempt";

/**
 * A one-task run (`run`, which echoes "try N" first) on a worker alone (`--lease 6s`), the worker stopped once the task has
 * started and woken only once the task's processes are gone (the guard froze, then killed them as the lease ran out); the
 * run's status once it has ended.
 */
async function stoppedPastLease(name: string, run: string): Promise<{ worker: Worker; runId: string; status: Awaited<ReturnType<typeof waitForRun>> }> {
  const file = await workflowFile(name, `tasks:\n  job: { run: ${JSON.stringify(run)} }\n`);
  const worker = await startWorker(["--lease", "6s", "-j", "1"]);
  const runId = await submit(file);
  expect(await eventually(() => worker.stdout().includes(`${runId}/job | try 1`), 15_000)).toBe(true);
  worker.cli.child.kill("SIGSTOP");
  try {
    // Its processes gone while the worker is stopped: the guard froze, then killed them.
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 30_000)).toBe(true);
  } finally {
    worker.cli.child.kill("SIGCONT");
  }
  return { worker, runId, status: await waitForRun(runId, 30_000) };
}

/**
 * Attempt 1 becomes `sleep` (its shell's pid, its group's, written down); attempt 2 looks, as it starts, whether that process
 * still runs (a zombie does not: the stopped worker cannot reap it) and fails if it does.
 */
const OVERLAP_CHECK =
  'if [ "$TASKQ_ATTEMPT" = 1 ]; then echo $$ > first.pid; echo "try 1"; exec sleep 1000; fi; ' +
  'p=$(cat first.pid); if read -r s < "/proc/$p/stat" && case "${s##*) }" in Z*|X*) false ;; *) true ;; esac; then echo "attempt 1 still running"; exit 3; fi; ' +
  'echo "attempt 1 gone"';

describe("a worker stopped alone (SIGSTOP) while its task runs on", { timeout: 120_000 }, () => {
  it("its task's processes are stopped before its lease runs out, so the attempt another worker starts never runs beside it; woken, it says why", async () => {
    const file = await workflowFile("stopped", `tasks:\n  job: { run: '${OVERLAP_CHECK}', retries: 1 }\n`);
    const frozen = await startWorker(["--lease", "6s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => frozen.stdout().includes(`${runId}/job | try 1`), 15_000)).toBe(true);
    frozen.cli.child.kill("SIGSTOP");
    const other = await startWorker(["--lease", "6s", "-j", "1"]);
    const status = await waitForRun(runId, 60_000);
    // Attempt 2 found attempt 1's process gone as it started.
    expect(await readFile(path.join(ws.logs, runId, "job.log"), "utf8")).toContain("attempt 1 gone\n");
    expect(status.tasks[0]).toMatchObject({ state: "succeeded", attempts: 2 });
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 15_000)).toBe(true);
    frozen.cli.child.kill("SIGCONT");
    // Woken, the worker says why its attempt ended, and stops as one whose task was taken over does (exit 1).
    const result = await frozen.cli.done;
    expect(result.stdout).toContain(`stale   ${runId}/job: ${LEASE_LAPSED}, not recorded: its lease had run out, and worker ${other.id} took the task over\n`);
    expect(result.code).toBe(1);
    expect(await eventually(async () => (await readFile(path.join(ws.logs, runId, "job.log"), "utf8")).includes(`--- taskq: attempt 1 stopped: ${LEASE_LAPSED} ---\n`), 10_000)).toBe(true);
    other.cli.child.kill("SIGTERM");
    expect((await other.cli.done).code).toBe(143);
  });

  it("with no other worker to take the task over: woken, the attempt's failure says why, in the dead letter too", async () => {
    const { worker, runId, status } = await stoppedPastLease("stopped-alone", "echo \"try $TASKQ_ATTEMPT\"; sleep 1000");
    expect(status.tasks[0]).toMatchObject({ state: "failed", attempts: 1, lastError: LEASE_LAPSED });
    const dead = await taskq(["dead-letters", runId]);
    expect(dead.stdout).toContain(`${runId}/job: ${LEASE_LAPSED} (1 attempt)\n`);
    expect(await eventually(() => worker.stdout().includes(`FAILED  ${runId}/job: ${LEASE_LAPSED}\n`), 10_000)).toBe(true);
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  });

  it("a healthy worker's tasks, each running for several leases, are not stopped; nor when the worker is stopped for a moment well within its lease", async () => {
    const file = await workflowFile("healthy", "tasks:\n  a: { run: 'sleep 10; echo done' }\n  b: { run: 'sleep 10; echo done' }\n  c: { run: 'sleep 10; echo done' }\n");
    const worker = await startWorker(["--lease", "3s", "-j", "3"]);
    const runId = await submit(file);
    expect(await eventually(() => (worker.stdout().match(/ start {3}/g) ?? []).length === 3, 15_000)).toBe(true);
    await sleep(3_000);
    // Stopped for a moment: far from the end of a lease renewed every second (the guard looks only then, see guardLease).
    worker.cli.child.kill("SIGSTOP");
    await sleep(200);
    worker.cli.child.kill("SIGCONT");
    const status = await waitForRun(runId, 60_000);
    expect(status.state).toBe("succeeded");
    for (const row of status.tasks) expect(row).toMatchObject({ state: "succeeded", attempts: 1 });
    expect(worker.stdout()).not.toMatch(/LOST|stale|orphan guard/);
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  });
  it("stopped past the point where a quarter of its lease is left, but woken before it runs out: the task, frozen meanwhile, runs on where it was and succeeds on its first attempt", async () => {
    const file = await workflowFile("frozen-woken", "tasks:\n  job: { run: 'i=0; while [ $i -lt 60 ]; do echo \"tick $i\"; i=$((i+1)); sleep 0.25; done' }\n");
    const worker = await startWorker(["--lease", "12s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | tick 2\n`), 15_000)).toBe(true);
    worker.cli.child.kill("SIGSTOP");
    let frozen: boolean;
    try {
      // The guard freezes the task (its shell and its `sleep` stopped) once less than a quarter of the lease is left:
      // 5-9 s into the stop, 40-75% of the lease (renewed every third of it). Woken at once then, 2-3 s before its end (a
      // lease of 12 s: the worker's renewal on waking has time, on a slow machine too).
      frozen = await eventually(async () => {
        const processes = await findLeftovers(runId);
        return processes.length > 0 && (await Promise.all(processes.map(async (pid) => (await readFile(`/proc/${pid}/stat`, "latin1").catch(() => "")).includes(") T ")))).every(Boolean);
      }, 15_000);
    } finally {
      worker.cli.child.kill("SIGCONT");
    }
    expect(frozen).toBe(true);
    const status = await waitForRun(runId, 60_000);
    expect(status.tasks[0]).toMatchObject({ state: "succeeded", attempts: 1 });
    // Its ticks went on after the wake, to the last.
    expect(await readFile(path.join(ws.logs, runId, "job.log"), "utf8")).toContain("tick 59\n");
    expect(worker.stdout()).not.toMatch(/LOST|stale|orphan guard/);
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  });

  it("a task that traps SIGTERM and exits 0 is not recorded as succeeded when its lease ran out while its worker was stopped", async () => {
    const { worker, status } = await stoppedPastLease("stopped-trap", "trap \"echo trapped; exit 0\" TERM; echo \"try $TASKQ_ATTEMPT\"; while :; do sleep 0.2; done");
    expect(status.tasks[0]).toMatchObject({ state: "failed", attempts: 1, lastError: LEASE_LAPSED });
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
  });

  it("once the worker exits, nothing of its guard's lease watch is left (no `sleep`), however long the lease", async () => {
    // A lease of its own, so that its guard's processes are told from other workers' by their environment.
    const entry = "TASKQ_GUARD_LEASE_CS=360700";
    const worker = await startWorker(["--lease", "3607s", "-j", "1"]);
    // The watch naps in a `sleep` of its own (a sixteenth of the lease, 1 s at most).
    expect(await eventually(async () => (await findWithEntry(entry)).length >= 2, 15_000)).toBe(true);
    const pid = worker.cli.child.pid ?? 0;
    worker.cli.child.kill("SIGTERM");
    expect((await worker.cli.done).code).toBe(143);
    expect(await eventually(async () => (await findGuards(pid)).length === 0, 15_000)).toBe(true);
    expect(await eventually(async () => (await findWithEntry(entry)).length === 0, 10_000)).toBe(true);
  });
});
