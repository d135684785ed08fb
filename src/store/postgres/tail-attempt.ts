import type { SchemaNames } from "./names.js";

/**
 * Migration 13: which attempt a task's stored last lines are of. An attempt that left no lines (it
 * printed nothing, or its log could not be written) keeps those of the latest earlier attempt that
 * had some, as a local run's summary shows them, and `tail_attempt` says which attempt that was (a
 * dead letter then says `last 2 lines of attempt 1 (attempt 2 left none)`). Null for lines stored
 * before this migration, which an attempt that left none replaces, as it did then.
 */
export function tailAttemptSql(names: SchemaNames): string {
  return `ALTER TABLE ${names.tasks} ADD COLUMN IF NOT EXISTS tail_attempt int;`;
}

/**
 * Migration 21: the worker whose attempt wrote a task's stored last lines, and that attempt's number. An attempt
 * that left none keeps an earlier one's lines, whose log is on that attempt's worker's machine: before, the store
 * knew that worker only where the lines were of the attempt that failed last (`failed_worker_id`), and `status`
 * said of lines of an attempt before a silent one that it did not record it (on one worker too). `tail_worker_attempt`
 * is the attempt's number: where it is not `tail_attempt` (lines stored since by a worker of an earlier version that
 * sets neither), the worker is not known.
 */
export function tailWorkerSql(names: SchemaNames): string {
  return `ALTER TABLE ${names.tasks} ADD COLUMN IF NOT EXISTS tail_worker_id text, ADD COLUMN IF NOT EXISTS tail_worker_attempt int;`;
}

/**
 * The SET clauses that store an attempt's last lines, `lines` (an SQL expression of type text[]), as
 * those of the task's latest attempt, `attempts`, by its worker, `worker_id`, unless it left none and an earlier attempt's are kept.
 * `when` (SQL): store them only where it holds (otherwise both columns stay as they are).
 */
export function setTailSql(lines: string, when = "true"): string {
  return `tail = CASE WHEN (${when}) AND NOT (cardinality(${lines}) = 0 AND tail_attempt IS NOT NULL) THEN ${lines} ELSE tail END,
            tail_attempt = CASE WHEN (${when}) AND cardinality(${lines}) > 0 THEN attempts ELSE tail_attempt END,
            tail_worker_id = CASE WHEN (${when}) AND cardinality(${lines}) > 0 THEN worker_id ELSE tail_worker_id END,
            tail_worker_attempt = CASE WHEN (${when}) AND cardinality(${lines}) > 0 THEN attempts ELSE tail_worker_attempt END`;
}
