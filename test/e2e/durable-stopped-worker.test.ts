import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { eventually, findLeftovers } from "../helpers/processes.js";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_stopped");
const { taskq, workflowFile, submit, startWorker, waitForRun } = durable;
let ws: { dir: string; logs: string };

beforeAll(() => {
  ws = durable.ws;
});

/** Why the attempt ended, in its log, its line and its dead letter (see LeaseLapsedError). */
const LEASE_LAPSED = "its lease was about to run out while the worker was stopped (SIGSTOP), so taskq's orphan guard stopped the task before another worker could take it over";

/**
 * Attempt 1 becomes `sleep` (its shell's pid, its group's, written down); attempt 2 looks, as it starts, whether that process
 * still runs (a zombie does not: the stopped worker cannot reap it) and fails if it does.
 */
const OVERLAP_CHECK =
  'if [ "$TASKQ_ATTEMPT" = 1 ]; then echo $$ > first.pid; echo "try 1"; exec sleep 1000; fi; ' +
  'p=$(cat first.pid); if read -r s < "/proc/$p/stat" && case "${s##*) }" in Z*|X*) false ;; *) true ;; esac; then echo "attempt 1 still running"; exit 3; fi; ' +
  'echo "attempt 1 gone"';

describe("a worker stopped alone (SIGSTOP) while its task runs on", () => {
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
    const file = await workflowFile("stopped-alone", "tasks:\n  job: { run: 'echo \"try $TASKQ_ATTEMPT\"; sleep 1000' }\n");
    const worker = await startWorker(["--lease", "6s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/job | try 1`), 15_000)).toBe(true);
    worker.cli.child.kill("SIGSTOP");
    try {
      // Its shell gone while the worker is stopped: the guard stopped it.
      expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 30_000)).toBe(true);
    } finally {
      worker.cli.child.kill("SIGCONT");
    }
    const status = await waitForRun(runId, 30_000);
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
});
