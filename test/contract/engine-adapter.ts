import { Queue, type TaskResult } from "../../src/engine/index.js";
import type { ContractAdapter, ContractResult, ContractStatus, Harness } from "./adapter.js";

/** Retry delay of every contract task: short and fixed, so cases stay fast. */
const RETRY_DELAY_MS = 20;

function toResult(result: TaskResult): ContractResult {
  return {
    status: result.status.toLowerCase() as ContractStatus,
    attempts: result.attempts,
    ...(result.cancelReason === "dependency" && result.dependency !== undefined ? { cancelledBy: result.dependency, reason: (result.error as Error).message } : {}),
  };
}

/** The in-memory engine: one `Queue` per harness, tasks of type "job" routed to the case's handler. */
export const engineAdapter: ContractAdapter = {
  name: "engine (Queue)",
  create({ concurrency, handler }) {
    const queue = new Queue({
      concurrency,
      handlers: { job: (id: string, context) => handler(id, { attempt: context.attempt, signal: context.signal }) },
    });
    const ids = new Set<string>();
    const harness: Harness = {
      submit(tasks) {
        for (const task of tasks) {
          queue.submit({
            id: task.id,
            type: "job",
            payload: task.id,
            priority: task.priority ?? "normal",
            maxAttempts: task.maxAttempts ?? 1,
            backoff: () => RETRY_DELAY_MS,
            ...(task.timeoutMs === undefined ? {} : { timeoutMs: task.timeoutMs }),
            ...(task.delayMs === undefined ? {} : { runAt: Date.now() + task.delayMs }),
            ...(task.dependsOn === undefined ? {} : { dependsOn: task.dependsOn }),
          });
          ids.add(task.id);
        }
        return Promise.resolve();
      },
      start() {
        queue.start();
        return Promise.resolve();
      },
      cancel(id) {
        queue.cancel(id);
        return Promise.resolve();
      },
      async settle() {
        const results = await Promise.all([...ids].map(async (id) => [id, toResult(await queue.wait(id))] as const));
        return Object.fromEntries(results);
      },
      deadLetters() {
        return Promise.resolve(queue.deadLetters().map((result) => result.id));
      },
      async close() {
        await queue.shutdown({ drain: false, deadline: 0 });
      },
    };
    return Promise.resolve(harness);
  },
};
