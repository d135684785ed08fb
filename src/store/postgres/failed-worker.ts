import type { SchemaNames } from "./names.js";

/**
 * Migration 20: the worker whose attempt failed last, kept while the task waits for its retry. A task queued
 * again (its attempt failed, or its lease ran out) has no `worker_id`; cancelled then, or its run stopped, its
 * log, which the summary shows with that attempt's last lines, is on that worker's machine: `failed_worker_id`
 * names it. `failed_attempt` is that attempt's number: where the task's attempts no longer match (an attempt
 * since, recorded by a worker of an earlier version that sets neither), the worker is not known.
 */
export function failedWorkerSql(names: SchemaNames): string {
  return `ALTER TABLE ${names.tasks} ADD COLUMN IF NOT EXISTS failed_worker_id text, ADD COLUMN IF NOT EXISTS failed_attempt int;`;
}

/** The SET clauses that record the task's running attempt, leased by `worker_id`, as the one that failed last. */
export const SET_FAILED_WORKER_SQL = "failed_worker_id = worker_id, failed_attempt = attempts";
