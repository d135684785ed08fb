import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import { buildFaultWorker, endWorkerProcess, startWorkerProcess, type WorkerProcess } from "./fault-processes.js";
import { openTestStore, sql, task, until, waitForRun, workflow } from "./helpers.js";

const TASKS = Number(process.env.TASKQ_FAULT_TASKS ?? 1000);

describe("worker processes under SIGKILL and SIGSTOP", () => {
  let store: PostgresStore;
  let schema: string;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
  let close: (() => Promise<void>) | undefined;
  let script: string;
  let cleanup: (() => Promise<void>) | undefined;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    ({ store, schema, close } = await openTestStore());
    ({ script, cleanup } = await buildFaultWorker());
    await sql(store, "CREATE TABLE $schema.ledger (task_key text, attempt int, pid int, phase text, at timestamptz DEFAULT now())");
  }, 120_000);
  afterAll(async () => {
    await Promise.all(processes.map((worker) => endWorkerProcess(worker, "SIGKILL")));
    await cleanup?.();
    await close?.();
  });

  // Each test ends its worker processes, so none is left to take the next test's tasks.
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((worker) => endWorkerProcess(worker)));
  });

  const start = async (env: Record<string, string>) => {
    const worker = await startWorkerProcess(script, { TASKQ_SCHEMA: schema, ...env });
    processes.push(worker);
    return worker;
  };

  it(`8 workers x ${TASKS} tasks: a SIGKILLed worker's attempts run again once, with attempt + 1`, async () => {
    // The others hold long leases: on a loaded machine a heartbeat can come seconds late, and a lease
    // lost that way is a second re-run this test would wrongly count. Only the victim's is short.
    const env = { CONCURRENCY: "4", LEASE_MS: "20000", HEARTBEAT_MS: "500", SWEEP_MS: "400", TASK_MS: "15" };
    // The victim's attempts are slow, so it is surely mid-task when killed.
    const victim = await start({ ...env, LEASE_MS: "1500", HEARTBEAT_MS: "300", TASK_MS: "5000" });
    const workers = [victim, ...(await Promise.all(Array.from({ length: 7 }, () => start(env))))];
    expect(workers).toHaveLength(8);
    const runId = await store.submitRun(workflow(Array.from({ length: TASKS }, (_, i) => task(`t${i}`, { retries: 2 }))), { runId: "kill" });
    const runningOnVictim = async () =>
      (await sql<{ key: string }>(store, "SELECT key FROM $schema.tasks WHERE state = 'running' AND worker_id = $1", [victim.workerId])).map(
        (row) => row.key,
      );
    await until(async () => (await runningOnVictim()).length === 4, 60_000);
    const interrupted = (await runningOnVictim()).sort();
    victim.child.kill("SIGKILL");
    await new Promise((resolve) => victim.child.once("exit", resolve));
    const status = await waitForRun(store, runId, 120_000);
    expect(status.state).toBe("succeeded");
    expect(status.counts.succeeded).toBe(TASKS);
    // Exactly the killed worker's attempts ran again, once each, with attempt 2, on another worker.
    const rerun = status.tasks.filter((row) => row.attempts > 1);
    expect(rerun.map((row) => row.key).sort()).toEqual(interrupted);
    expect(rerun.filter((row) => row.attempts !== 2 || row.workerId === victim.workerId)).toEqual([]);
    const ledger = await sql<{ task_key: string; begins: number; ends: number }>(
      store,
      `SELECT task_key, count(*) FILTER (WHERE phase = 'begin')::int AS begins, count(*) FILTER (WHERE phase = 'end')::int AS ends
         FROM $schema.ledger GROUP BY task_key`,
    );
    expect(ledger).toHaveLength(TASKS);
    // Every task's work ended exactly once. An interrupted task began twice, or once if the kill came
    // between its lease and the handler's first statement.
    const maxBegins = (key: string) => (interrupted.includes(key) ? 2 : 1);
    expect(ledger.filter((row) => row.begins < 1 || row.begins > maxBegins(row.task_key) || row.ends !== 1)).toEqual([]);
  }, 180_000);

  it("a worker SIGSTOPped past its lease and resumed changes nothing (stale token)", async () => {
    const env = { CONCURRENCY: "1", LEASE_MS: "800", HEARTBEAT_MS: "200", SWEEP_MS: "300", TASK_MS: "1500" };
    const stalled = await start(env);
    const runId = await store.submitRun(workflow([task("stall", { retries: 2 })]), { runId: "stop" });
    await until(() => stalled.inFlight().has("stall"), 20_000);
    stalled.child.kill("SIGSTOP");
    // The rescuer's lease is long, so a late heartbeat on a loaded machine cannot make a third attempt.
    const rescuer = await start({ ...env, LEASE_MS: "20000", HEARTBEAT_MS: "500" });
    const status = await waitForRun(store, runId, 30_000);
    expect(status.tasks[0]).toMatchObject({ state: "succeeded", attempts: 2, workerId: rescuer.workerId });
    const before = await sql(store, "SELECT * FROM $schema.tasks WHERE run_id = 'stop'");
    stalled.child.kill("SIGCONT");
    // Its attempt's end is told once the database has answered for it: whatever it tried to record came before.
    await until(() => stalled.events.some((event) => event.type === "finished" && event.key === "stall"), 20_000);
    expect(stalled.events.find((event) => event.type === "finished" && event.key === "stall")).toMatchObject({ result: false });
    expect(await sql(store, "SELECT * FROM $schema.tasks WHERE run_id = 'stop'")).toEqual(before);
  }, 60_000);
});
