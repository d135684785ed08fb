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
 * The SET clauses that store an attempt's last lines, `lines` (an SQL expression of type text[]), as
 * those of the task's latest attempt, `attempts`, unless it left none and an earlier attempt's are kept.
 * `when` (SQL): store them only where it holds (otherwise both columns stay as they are).
 */
export function setTailSql(lines: string, when = "true"): string {
  return `tail = CASE WHEN (${when}) AND NOT (cardinality(${lines}) = 0 AND tail_attempt IS NOT NULL) THEN ${lines} ELSE tail END,
            tail_attempt = CASE WHEN (${when}) AND cardinality(${lines}) > 0 THEN attempts ELSE tail_attempt END`;
}
