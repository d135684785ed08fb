/**
 * A worker process for fault tests (SIGKILL, SIGSTOP): runs no-op-ish tasks
 * that record each attempt in a ledger table, and prints one JSON line per
 * worker event on stdout. Configured by environment variables:
 * DATABASE_URL, TASKQ_SCHEMA, CONCURRENCY, LEASE_MS, HEARTBEAT_MS, SWEEP_MS, TASK_MS, WORKER_ID.
 */
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";

const env = (name: string, fallback: string): string => process.env[name] ?? fallback;
const schema = env("TASKQ_SCHEMA", "taskq");
const taskMs = Number(env("TASK_MS", "20"));
const store = new PostgresStore({ connectionString: env("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"), schema, poolSize: 4 });
const print = (line: object): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

const worker = new PostgresWorker({
  store,
  workerId: env("WORKER_ID", `fault-${process.pid}`),
  concurrency: Number(env("CONCURRENCY", "4")),
  leaseMs: Number(env("LEASE_MS", "2000")),
  heartbeatMs: Number(env("HEARTBEAT_MS", "300")),
  sweepMs: Number(env("SWEEP_MS", "500")),
  pollMs: 500,
  handler: async (task, context) => {
    await store.pool.query(`INSERT INTO "${schema}".ledger (task_key, attempt, pid, phase) VALUES ($1, $2, $3, 'begin')`, [
      task.key,
      context.attempt,
      process.pid,
    ]);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, taskMs);
      context.signal.addEventListener("abort", () => (clearTimeout(timer), reject(context.signal.reason as Error)), { once: true });
    });
    await store.pool.query(`INSERT INTO "${schema}".ledger (task_key, attempt, pid, phase) VALUES ($1, $2, $3, 'end')`, [
      task.key,
      context.attempt,
      process.pid,
    ]);
  },
  onEvent: (event) => {
    if (event.type === "started") print({ type: "started", key: event.task.key, attempt: event.task.attempt });
    else if (event.type === "finished") print({ type: "finished", key: event.task.key, attempt: event.task.attempt, result: event.result === false ? false : event.result.state });
    else if (event.type === "lease-lost") print({ type: "lease-lost", key: event.task.key, why: event.why });
    else if (event.type === "stopped") print({ type: "stopped", reason: event.reason });
    else if (event.type === "orphans-recovered") print({ type: "orphans-recovered", count: event.count });
  },
});

process.once("SIGTERM", () => {
  void worker
    .stop({ deadlineMs: 2_000 })
    .then(() => store.close())
    .then(() => process.exit(0));
});
await worker.start();
print({ type: "ready", pid: process.pid });
