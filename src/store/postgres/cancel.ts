import type pg from "pg";
import { TaskqError } from "../../errors.js";
import { finalizeTask } from "./finalize.js";
import type { SchemaNames } from "./names.js";
import { taskNotFound } from "./status.js";
import type { RunStatus, TaskState } from "./types.js";

export interface CancelResult {
  /** Keys cancelled now: the targets that were blocked or queued, and their dependents. */
  cancelled: string[];
  /** Keys that were running: their workers abort them at the next heartbeat. */
  cancelRequested: string[];
  /**
   * Set when there was nothing to cancel: the state the task (or the run) had already ended in.
   * Not an error, as a cancel of what has ended is no mistake: it may have ended just before.
   */
  ended?: TaskState;
}

/**
 * Cancels a whole run, or one task of it. Blocked and queued tasks end at
 * once (with their dependents); running ones get `cancel_requested`, which
 * their worker sees at the next heartbeat.
 */
export async function cancelTasks(client: pg.ClientBase, names: SchemaNames, runId: string, taskKey?: string): Promise<CancelResult> {
  const targets = await client.query<{ id: string; run_id: string; key: string; state: TaskState }>(
    `SELECT id, run_id, key, state FROM ${names.tasks}
      WHERE run_id = $1 AND ($2::text IS NULL OR key = $2)
      ORDER BY seq FOR UPDATE`,
    [runId, taskKey ?? null],
  );
  if (targets.rows.length === 0) {
    throw taskKey === undefined ? new TaskqError("STORE_NOT_FOUND", `no run "${runId}"`) : await taskNotFound(client, names, runId, taskKey);
  }
  const active = targets.rows.filter((row) => row.state === "blocked" || row.state === "queued" || row.state === "running");
  if (active.length === 0) {
    if (taskKey !== undefined) return { cancelled: [], cancelRequested: [], ended: targets.rows[0]!.state };
    const run = await client.query<{ state: RunStatus["state"] }>(`SELECT state FROM ${names.runs} WHERE id = $1`, [runId]);
    const state = run.rows[0]?.state;
    return { cancelled: [], cancelRequested: [], ...(state === undefined || state === "running" ? {} : { ended: state }) };
  }
  const result: CancelResult = { cancelled: [], cancelRequested: [] };
  const done = new Set<string>();
  for (const row of active) {
    if (done.has(row.key)) continue; // already cancelled as a dependent of an earlier target
    if (row.state === "running") {
      await client.query(`UPDATE ${names.tasks} SET cancel_requested = true WHERE id = $1`, [row.id]);
      result.cancelRequested.push(row.key);
      continue;
    }
    const { cascaded } = await finalizeTask(client, names, row, "cancelled", { cancelReason: "cancelled by request" });
    for (const key of [row.key, ...cascaded]) {
      done.add(key);
      result.cancelled.push(key);
    }
  }
  return result;
}
