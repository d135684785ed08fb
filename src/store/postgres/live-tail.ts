import type { SchemaNames } from "./names.js";

/**
 * Migration 8: a running attempt's last lines, stored by its worker's heartbeats. A worker
 * that dies mid-task (SIGKILL, out of memory, a machine gone) records nothing of the attempt,
 * and its log is on that machine: the sweeper that finds the lease expired takes these lines
 * for the attempt's tail, so its dead letter shows what the task last printed, as of the last
 * heartbeat. `live_tail_token` is the lease token of the attempt whose lines they are: lines
 * of an earlier attempt of the task are never taken for a later one's.
 */
export function liveTailSql(names: SchemaNames): string {
  return `ALTER TABLE ${names.tasks} ADD COLUMN IF NOT EXISTS live_tail text[], ADD COLUMN IF NOT EXISTS live_tail_token uuid;`;
}
