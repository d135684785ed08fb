import { randomBytes } from "node:crypto";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import type { TaskStatusRow, Workflow, WorkflowTask } from "../../src/store/postgres/types.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import { waitForRun } from "../store/helpers.js";
import type { ContractAdapter, ContractResult, ContractStatus, ContractTask, Harness } from "./adapter.js";

/** Retry backoff of every contract task: short, so cases stay fast (full jitter makes it 0-20 ms). */
const BACKOFF = { baseMs: 20, maxMs: 20 };

function toWorkflowTask(task: ContractTask): WorkflowTask {
  return {
    id: task.id,
    type: "job",
    run: "",
    priority: task.priority ?? "normal",
    retries: (task.maxAttempts ?? 1) - 1,
    backoff: BACKOFF,
    env: {},
    cwd: ".",
    dependsOn: task.dependsOn ?? [],
    ...(task.timeoutMs === undefined ? {} : { timeoutMs: task.timeoutMs }),
    // A workflow's `delay`: the store adds it to the database's clock.
    ...(task.delayMs === undefined ? {} : { delayMs: task.delayMs }),
  };
}

function toResult(row: TaskStatusRow): ContractResult {
  return {
    // The cases only read settled runs, whose tasks are all terminal.
    status: row.state as ContractStatus,
    attempts: row.attempts,
    ...(row.cancelledBy === null ? {} : { cancelledBy: row.cancelledBy, reason: row.cancelReason ?? "" }),
  };
}

/**
 * The PostgreSQL store: one run per harness, worked by one PostgresWorker
 * whose handler is the case's. `store()` is read when a harness is created
 * (the test file opens the store on its own schema in beforeAll).
 */
export function postgresAdapter(store: () => PostgresStore): ContractAdapter {
  return {
    name: "PostgreSQL store (PostgresWorker)",
    create({ concurrency, handler }) {
      const runId = `contract-${randomBytes(4).toString("hex")}`;
      const worker = new PostgresWorker({
        store: store(),
        concurrency,
        leaseMs: 5_000,
        pollMs: 500,
        handler: (task, context) => handler(task.key, { attempt: context.attempt, signal: context.signal }),
      });
      const harness: Harness = {
        async submit(tasks) {
          const workflow: Workflow = { file: "contract.yaml", folder: process.cwd(), name: "contract", tasks: tasks.map(toWorkflowTask), notes: [] };
          await store().submitRun(workflow, { runId });
        },
        start: () => worker.start(),
        async cancel(id) {
          await store().cancelRun(runId, id);
        },
        async settle() {
          const status = await waitForRun(store(), runId, 20_000);
          return Object.fromEntries(status.tasks.map((row) => [row.key, toResult(row)]));
        },
        async deadLetters() {
          return (await store().deadLetters(runId)).map((row) => row.key);
        },
        async close() {
          // Whatever a failed case left behind must not reach the next case's worker.
          await store().cancelRun(runId).catch(() => undefined);
          await worker.stop({ deadlineMs: 1_000 });
        },
      };
      return Promise.resolve(harness);
    },
  };
}
