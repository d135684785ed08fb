import type pg from "pg";
import { TaskqError } from "../../errors.js";
import { endStopMarks } from "./cancel.js";
import { cancelDependents, cancelDependentsOfCancelAsked, notifyWorkers } from "./graph.js";
import type { SchemaNames } from "./names.js";
import { taskNotFound, tasksNotFound } from "./status.js";
import type { TaskState } from "./types.js";

export interface RedriveResult {
  /** The failed task, queued again with fresh attempts. */
  requeued: string;
  /** Dependents cancelled because of it, blocked again and waiting on their dependencies. */
  reblocked: string[];
}

/**
 * Sends a dead-lettered task back to the queue with its attempts reset, and
 * re-blocks every dependent cancelled because of it (transitively). A
 * dependent that also depends on another failed or cancelled task is
 * cancelled again, this time on that task's account.
 */
export async function redriveTask(client: pg.ClientBase, names: SchemaNames, runId: string, taskKey: string): Promise<RedriveResult> {
  const found = await client.query<{ id: string; state: TaskState; cancel_reason: string | null; cancelled_by: string | null }>(
    `SELECT id, state, cancel_reason, cancelled_by FROM ${names.tasks} WHERE run_id = $1 AND key = $2 FOR UPDATE`,
    [runId, taskKey],
  );
  const task = found.rows[0];
  if (task === undefined) throw await taskNotFound(client, names, runId, taskKey, "redrive");
  if (task.state !== "failed") throw new TaskqError("STORE_NOT_REDRIVABLE", notRedrivable(taskKey, task, await redriveInstead(client, names, runId, task)));
  // started_at stays (the last attempt's): a task that ran is not one a resubmit may give its delay or runAt
  // again (see changedTask), and the same file submitted again (a CI step run again) moves nothing.
  // Its attempts start again at 1: the worker of a failed attempt before the redrive names none of theirs (migration 20).
  await client.query(
    `UPDATE ${names.tasks}
        SET state = 'queued', attempts = 0, not_before = now(), queued_at = now(), finished_at = NULL,
            last_error = NULL, exit_code = NULL, signal = NULL, timed_out = false, tail = '{}', tail_attempt = NULL, tail_worker_id = NULL, tail_worker_attempt = NULL, worker_id = NULL,
            failed_worker_id = NULL, failed_attempt = NULL, cancel_requested = false
      WHERE id = $1`,
    [task.id],
  );
  await endStopMarks(client, names, runId);
  // In submission order: an UPDATE returns its rows in whatever order it met them.
  const reblocked = await client.query<{ key: string }>(
    `WITH reblocked AS (
       UPDATE ${names.tasks}
          SET state = 'blocked', cancelled_by = NULL, cancel_reason = NULL, finished_at = NULL
        WHERE run_id = $1 AND cancelled_by = $2 AND state = 'cancelled'
        RETURNING key, seq)
     SELECT key FROM reblocked ORDER BY seq`,
    [runId, taskKey],
  );
  const keys = reblocked.rows.map((row) => row.key);
  await client.query(
    `UPDATE ${names.tasks} t
        SET waiting_on = (SELECT count(*) FROM ${names.deps} d
                            JOIN ${names.tasks} dt ON dt.run_id = d.run_id AND dt.key = d.depends_on_key
                           WHERE d.run_id = t.run_id AND d.task_key = t.key AND dt.state <> 'succeeded')
      WHERE t.run_id = $1 AND t.key = ANY($2)`,
    [runId, keys],
  );
  // Other dependencies that did not succeed cancel their share of the re-blocked tasks again.
  // Each with the task at the root of its own cascade, if one cancelled it, and how that one ended.
  // So does one running whose cancel was asked for, as that cancel did (see cancelTasks): its attempt
  // may yet succeed, and would free them.
  const blockers = await client.query<{ key: string; state: "failed" | "cancelled" | "running"; cancelled_by: string | null; root_state: TaskState | null }>(
    `SELECT DISTINCT dt.key, dt.state, dt.cancelled_by,
            (SELECT r.state FROM ${names.tasks} r WHERE r.run_id = dt.run_id AND r.key = dt.cancelled_by) AS root_state
       FROM ${names.deps} d JOIN ${names.tasks} dt ON dt.run_id = d.run_id AND dt.key = d.depends_on_key
      WHERE d.run_id = $1 AND d.task_key = ANY($2) AND (dt.state IN ('failed', 'cancelled') OR (dt.state = 'running' AND dt.cancel_requested))`,
    [runId, keys],
  );
  const recancelled = new Set<string>();
  for (const blocker of blockers.rows) {
    if (blocker.state === "running") {
      for (const key of await cancelDependentsOfCancelAsked(client, names, runId, blocker.key)) recancelled.add(key);
      continue;
    }
    const cause = blocker.cancelled_by ?? blocker.key;
    const causeState = blocker.cancelled_by === null ? blocker.state : blocker.root_state === "failed" ? "failed" : "cancelled";
    for (const key of await cancelDependents(client, names, runId, blocker.key, blocker.state, cause, causeState)) recancelled.add(key);
  }
  await client.query(`UPDATE ${names.runs} SET state = 'running', finished_at = NULL WHERE id = $1`, [runId]);
  await notifyWorkers(client, names, runId);
  return { requeued: taskKey, reblocked: keys.filter((key) => !recancelled.has(key)) };
}

/**
 * Redrives several tasks of a run (`given`, as typed: each once, in that order) as `redriveTask` redrives one, in the caller's
 * transaction: every key is looked at first, and one the run has not, or one that did not fail, fails the whole redrive
 * before anything is changed (the first not redrivable is said; every key not in the run is named). Its error counts the
 * ids given, a task given twice twice, as typed.
 */
export async function redriveSeveral(client: pg.ClientBase, names: SchemaNames, runId: string, given: readonly string[]): Promise<RedriveResult[]> {
  const keys = [...new Set(given)];
  const found = await client.query<{ key: string; state: TaskState; cancel_reason: string | null; cancelled_by: string | null }>(
    `SELECT key, state, cancel_reason, cancelled_by FROM ${names.tasks} WHERE run_id = $1 AND key = ANY($2) ORDER BY seq FOR UPDATE`,
    [runId, keys],
  );
  const rows = new Map(found.rows.map((row) => [row.key, row]));
  const missing = keys.filter((key) => !rows.has(key));
  if (missing.length > 0) throw await tasksNotFound(client, names, runId, missing, given.length, "redrive");
  for (const key of keys) {
    const task = rows.get(key)!;
    if (task.state === "failed") continue;
    // Cancelled because a task failed that is given too: its redrive brings this one back.
    const instead = await redriveInstead(client, names, runId, task, rows);
    const insteadGiven = instead !== undefined && rows.has(instead);
    const message = insteadGiven
      ? `task ${JSON.stringify(key)} was cancelled (${task.cancel_reason ?? "cancelled"}): only failed tasks can be redriven; the redrive of ${JSON.stringify(instead)}, given too, brings it back: leave ${JSON.stringify(key)} out`
      : notRedrivable(key, task, instead);
    throw new TaskqError("STORE_NOT_REDRIVABLE", `${message} (none of the ${given.length} tasks given was redriven)`);
  }
  const results: RedriveResult[] = [];
  for (const key of keys) results.push(await redriveTask(client, names, runId, key));
  return results;
}

/**
 * Of a task that did not fail, cancelled by a cascade, the failed task at its root, whose redrive brings it back (see redriveTask),
 * which is worth saying; undefined where none does. `known`: rows already read (the tasks given), looked at before the table.
 */
async function redriveInstead(
  client: pg.ClientBase,
  names: SchemaNames,
  runId: string,
  task: { cancelled_by: string | null },
  known: ReadonlyMap<string, { state: TaskState }> = new Map(),
): Promise<string | undefined> {
  if (task.cancelled_by === null) return undefined;
  const root = known.get(task.cancelled_by) ?? (await client.query<{ state: TaskState }>(`SELECT state FROM ${names.tasks} WHERE run_id = $1 AND key = $2`, [runId, task.cancelled_by])).rows[0];
  return root?.state === "failed" ? task.cancelled_by : undefined;
}

/** Why a task that did not fail cannot be redriven; `instead`: the failed task whose redrive brings it back. */
function notRedrivable(taskKey: string, task: { state: TaskState; cancel_reason: string | null }, instead: string | undefined): string {
  const only = "only failed tasks can be redriven";
  const name = `task ${JSON.stringify(taskKey)}`;
  switch (task.state) {
    case "succeeded":
      return `${name} succeeded: ${only}`;
    case "cancelled": {
      // "cancelled by request" reads as it is; "dependency "f" failed" as the cause it is.
      const reason = task.cancel_reason ?? "cancelled";
      const why = reason.startsWith("cancelled") ? `was ${reason}` : `was cancelled (${reason})`;
      // Nothing brings back a task cancelled otherwise (by request, a stopped run, a dependency cancelled): a run of its own
      // does, as a submit of a run that has ended says it (see endedNote).
      const next = instead === undefined ? "; to run it again, submit the workflow under another --run-id" : `; redrive ${JSON.stringify(instead)}, and it waits for it again`;
      return `${name} ${why}: ${only}${next}`;
    }
    default:
      return `${name} has not ended (${task.state}): ${only}`;
  }
}
