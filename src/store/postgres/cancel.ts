import type pg from "pg";
import { RunNotFoundError } from "./store-error.js";
import { finalizeTask } from "./finalize.js";
import { cancelDependentsOfCancelAsked, refreshRunState } from "./graph.js";
import type { SchemaNames } from "./names.js";
import { ABORTED_BY_SHUTDOWN, notStartedReason, requestedReason, retryWaitedFor, withKilled } from "./shutdown-cancel.js";
import { taskNotFound, tasksNotFound } from "./status.js";
import { TERMINAL_STATES, type RunStatus, type TaskState } from "./types.js";

export interface CancelResult {
  /** Keys cancelled now: the targets that were blocked or queued, and their dependents. */
  cancelled: string[];
  /** Keys that were running: their workers abort them at the next heartbeat. */
  cancelRequested: string[];
  /**
   * Of each key in `cancelRequested`, in order: the worker holding it, and how long its lease has
   * left on the database's clock (negative: run out that long ago), and where it has run out while its worker still
   * waits on the database, for how long (see markWorkersWaiting). Once a lease has run out, a worker's sweep ends the task
   * cancelled, whether its worker lives or not, unless that worker's record of the attempt goes through first.
   */
  running: RunningTarget[];
  /**
   * Of the keys in `cancelled`, those that were waiting for a retry (see retryWaitedFor): the attempt that failed last and its error,
   * which their cancel's reason keeps ("cancelled by request: not retried (attempt 2 failed: ...)", or a stopped
   * run's "shutdown: not retried (...)").
   */
  notRetried: NotRetried[];
  /**
   * Set when there was nothing to cancel: the state the task (or the run) had already ended in.
   * Not an error, as a cancel of what has ended is no mistake: it may have ended just before.
   */
  ended?: TaskState;
}

/** A task a cancel found waiting for its retry (see CancelResult.notRetried). */
export interface NotRetried {
  key: string;
  /** The attempt that failed last: the retry was to be the next. */
  attempt: number;
  error: string;
}

/** A running task a cancel was asked for. */
export interface RunningTarget {
  key: string;
  workerId: string | null;
  leaseLeftMs: number;
  /** Its lease run out (`leaseLeftMs` 0 or less) while a statement of its worker's, begun before, waits on the database: for how long. */
  workerWaitingMs?: number;
}

/**
 * A whole run's cancel as a stopped `run --store` makes it: as a local run's shutdown, every task that
 * has not ended is the shutdown's (none cancelled on another's account), and `aborted` names those
 * whose attempts its own worker stopped and gave back, which were running.
 */
export interface ShutdownCancel {
  aborted: readonly string[];
  /**
   * Only the tasks waiting (blocked, queued): the cancel a stopping `run --store` makes at once, so that no
   * worker starts them while the running tasks have their time to finish. Those are not stopped but marked
   * (`cancel_kind` 'shutdown', no `cancel_requested`): whichever worker ends one, it is not queued again, for a
   * retry or given back, but cancelled as the shutdown's (see releaseLease, completeAttempt and the sweep).
   */
  waitingOnly?: boolean;
  /** Of those, how taskq's SIGKILL ended the attempt where it did ("killed with SIGKILL at once, ..."), added to its reason. */
  killed?: ReadonlyMap<string, string>;
}

/**
 * Cancels a whole run, or one task of it. Blocked and queued tasks end at
 * once (with their dependents); running ones get `cancel_requested`, which
 * their worker sees at the next heartbeat. With `shutdown`, the whole run's
 * tasks are cancelled as a stopped run's (see ShutdownCancel).
 */
export async function cancelTasks(client: pg.ClientBase, names: SchemaNames, runId: string, taskKey?: string, shutdown?: ShutdownCancel): Promise<CancelResult> {
  const targets = await lockTargets(client, names, runId, taskKey === undefined ? null : [taskKey]);
  if (targets.rows.length === 0) {
    throw taskKey === undefined ? new RunNotFoundError(runId) : await taskNotFound(client, names, runId, taskKey, "cancel");
  }
  const active = targets.rows.filter((row) => row.state === "blocked" || row.state === "queued" || row.state === "running");
  if (active.length === 0) {
    if (taskKey !== undefined) return { cancelled: [], cancelRequested: [], running: [], notRetried: [], ended: targets.rows[0]!.state };
    // Its tasks have all ended, the run not settled yet (its worker died before, or it is settling now): settled
    // here, it says how it ended, rather than an empty cancel with no word of why.
    await refreshRunState(client, names, runId);
    const run = await client.query<{ state: RunStatus["state"] }>(`SELECT state FROM ${names.runs} WHERE id = $1`, [runId]);
    const state = run.rows[0]?.state;
    return { cancelled: [], cancelRequested: [], running: [], notRetried: [], ...(state === undefined || state === "running" ? {} : { ended: state }) };
  }
  if (taskKey === undefined) return shutdown === undefined ? cancelEveryTask(client, names, targets.rows) : cancelAtShutdown(client, names, targets.rows, shutdown);
  return cancelTarget(client, names, runId, active[0]!);
}

/** What a cancel of several tasks of a run did to one of them (see cancelSeveral). */
export interface TargetCancel extends CancelResult {
  /** The task given. */
  key: string;
  /** Cancelled as a dependent of this task, given before it, whose cancel is said to have cancelled it. */
  cancelledWith?: string;
}

/** The tasks of a run a cancel acts on, all (`keys` null) or those of `keys`, locked, in their order. */
function lockTargets(client: pg.ClientBase, names: SchemaNames, runId: string, keys: readonly string[] | null): Promise<pg.QueryResult<TaskRow & { run_id: string }>> {
  return client.query<TaskRow & { run_id: string }>(
    `SELECT id, run_id, key, state, worker_id, attempts, last_error,
            extract(epoch FROM lease_expires_at - now())::float8 * 1000 AS lease_left_ms FROM ${names.tasks}
      WHERE run_id = $1 AND ($2::text[] IS NULL OR key = ANY($2))
      ORDER BY seq FOR UPDATE`,
    [runId, keys],
  );
}

/**
 * Cancels several tasks of a run (`given`, as typed: each once, in that order) as `cancelTasks` cancels one, in the caller's
 * transaction: every key is looked for first, and one the run has not fails the whole cancel, naming each such key, before
 * anything is changed. A task cancelled as a dependent of one given before it is said so (`cancelledWith`), not cancelled again.
 */
export async function cancelSeveral(client: pg.ClientBase, names: SchemaNames, runId: string, given: readonly string[]): Promise<TargetCancel[]> {
  const keys = [...new Set(given)];
  const targets = await lockTargets(client, names, runId, keys);
  const rows = new Map(targets.rows.map((row) => [row.key, row]));
  const missing = keys.filter((key) => !rows.has(key));
  if (missing.length > 0) throw await tasksNotFound(client, names, runId, missing, given.length, "cancel");
  /** Of each task cancelled on another's account, the task given whose cancel did it. */
  const cancelledWith = new Map<string, string>();
  const results: TargetCancel[] = [];
  for (const key of keys) {
    const row = rows.get(key)!;
    const by = cancelledWith.get(key);
    if (by !== undefined) {
      results.push({ key, cancelled: [], cancelRequested: [], running: [], notRetried: [], cancelledWith: by });
      continue;
    }
    if (TERMINAL_STATES.includes(row.state)) {
      results.push({ key, cancelled: [], cancelRequested: [], running: [], notRetried: [], ended: row.state });
      continue;
    }
    const result = await cancelTarget(client, names, runId, row);
    for (const other of result.cancelled) if (other !== key) cancelledWith.set(other, key);
    results.push({ key, ...result });
  }
  return results;
}

/**
 * Cancels one task that has not ended (`row`, locked): blocked or queued, at once, with its dependents; running, by asking its worker
 * to stop, its dependents cancelled at once.
 */
async function cancelTarget(client: pg.ClientBase, names: SchemaNames, runId: string, row: TaskRow & { run_id: string }): Promise<CancelResult> {
  const result: CancelResult = { cancelled: [], cancelRequested: [], running: [], notRetried: [] };
  if (row.state === "running") {
    await client.query(`UPDATE ${names.tasks} SET cancel_requested = true WHERE id = $1`, [row.id]);
    result.cancelRequested.push(row.key);
    result.running.push(runningTarget(row));
    // Its dependents now, not at its worker's next heartbeat (up to a third of the lease on).
    result.cancelled.push(...(await cancelDependentsOfCancelAsked(client, names, runId, row.key)));
    return result;
  }
  const { cascaded } = await finalizeTask(client, names, row, "cancelled", { cancelReason: requestedReason(row) });
  addNotRetried(result, row);
  result.cancelled.push(row.key, ...cascaded);
  return result;
}

interface TaskRow {
  id: string;
  key: string;
  state: TaskState;
  worker_id: string | null;
  attempts: number;
  last_error: string | null;
  /** Null but for a running task. */
  lease_left_ms: number | null;
}

/** Adds `row` to the result's notRetried where it was waiting for a retry, as requestedReason words it. */
function addNotRetried(result: CancelResult, row: TaskRow): void {
  const retry = retryWaitedFor(row);
  if (retry !== undefined) result.notRetried.push({ key: row.key, ...retry });
}

function runningTarget(row: TaskRow): RunningTarget {
  return { key: row.key, workerId: row.worker_id, leaseLeftMs: Math.round(row.lease_left_ms ?? 0) };
}

/**
 * Cancels every task of a run, on rows the caller has locked (`rows`, in submission order), in a
 * handful of statements whatever the run's size: a run of 20,000 tasks took two round trips a task
 * (10 s, past the 3 s `run --store` gives it after Ctrl-C). As a local run's shutdown cancels what
 * has not ended, each task is the cancel's own, none on another's account: a blocked or queued task
 * is cancelled by request (before, one a task earlier in the file reached through the graph was
 * "dependency "b" was cancelled", as if b's cancel, not the run's, had ended it); a running one gets
 * `cancel_requested`.
 */
async function cancelEveryTask(client: pg.ClientBase, names: SchemaNames, rows: TaskRow[]): Promise<CancelResult> {
  const result: CancelResult = { cancelled: [], cancelRequested: [], running: [], notRetried: [] };
  const running: string[] = [];
  const requested: WaitingEnds & { as: "request" } = { ids: [], reasons: [], as: "request" };
  for (const row of rows) {
    if (row.state === "running") {
      running.push(row.id);
      result.cancelRequested.push(row.key);
      result.running.push(runningTarget(row));
    } else if (row.state === "blocked" || row.state === "queued") {
      requested.ids.push(row.id);
      requested.reasons.push(requestedReason(row));
      addNotRetried(result, row);
      result.cancelled.push(row.key);
    }
  }
  if (running.length > 0) {
    await client.query(`UPDATE ${names.tasks} SET cancel_requested = true WHERE id = ANY($1::bigint[])`, [running]);
  }
  // One waiting for its retry keeps its failed attempt's error (see requestedReason).
  await endWaiting(client, names, requested);
  return result;
}

/**
 * Waiting tasks a cancel ends, each (`ids`) with its reason, and how they were cancelled: by request, as finalizeTask records
 * a cancel without an attempt; or by a stopped run's shutdown (cancel_kind 'shutdown'), each saying whether its attempt was
 * running (`running`, cancelled_running), as finalizeTask records such a cancel.
 */
type WaitingEnds = { ids: string[]; reasons: string[] } & ({ as: "request" } | { as: "shutdown"; running: boolean[] });

/** Ends `ended` cancelled (see WaitingEnds) in one statement whatever their number; none, no statement. */
async function endWaiting(client: pg.ClientBase, names: SchemaNames, ended: WaitingEnds): Promise<void> {
  if (ended.ids.length === 0) return;
  const set = {
    request: "lease_token = NULL, lease_expires_at = NULL",
    shutdown: "lease_token = NULL, lease_expires_at = NULL, cancel_kind = 'shutdown', cancelled_running = x.running",
  }[ended.as];
  // The array a kind has not (empty) is padded with nulls by unnest, and not read.
  await client.query(
    `UPDATE ${names.tasks} t
        SET state = 'cancelled', finished_at = now(), waiting_on = 0, cancel_reason = x.reason, ${set}
       FROM unnest($1::bigint[], $2::text[], $3::boolean[]) AS x(id, reason, running)
      WHERE t.id = x.id`,
    [ended.ids, ended.reasons, ended.as === "shutdown" ? ended.running : []],
  );
}

/**
 * Cancels every task of a run as a stopped `run --store` does, on rows the caller has locked (`rows`, in
 * submission order), in a statement or two whatever the run's size. As a local run's shutdown, each task
 * that has not ended is cancelled by the shutdown itself, none through a dependency: one waiting is "not
 * started" (or, attempts made, "not retried"), one given back by the run's own worker was "aborted"
 * while it ran, and one running on another worker is asked to stop, which it records as aborted too.
 */
async function cancelAtShutdown(client: pg.ClientBase, names: SchemaNames, rows: TaskRow[], shutdown: ShutdownCancel): Promise<CancelResult> {
  const aborted = new Set(shutdown.aborted);
  const result: CancelResult = { cancelled: [], cancelRequested: [], running: [], notRetried: [] };
  const running: string[] = [];
  const marked: string[] = [];
  const ended: WaitingEnds & { as: "shutdown" } = { ids: [], reasons: [], as: "shutdown", running: [] };
  for (const row of rows) {
    if (row.state === "running" && shutdown.waitingOnly === true) {
      marked.push(row.id);
    } else if (row.state === "running") {
      running.push(row.id);
      result.cancelRequested.push(row.key);
      result.running.push(runningTarget(row));
    } else if (row.state === "blocked" || row.state === "queued") {
      const wasRunning = aborted.has(row.key);
      ended.ids.push(row.id);
      ended.reasons.push(wasRunning ? withKilled(ABORTED_BY_SHUTDOWN, shutdown.killed?.get(row.key)) : notStartedReason(row));
      ended.running.push(wasRunning);
      if (!wasRunning) addNotRetried(result, row);
      result.cancelled.push(row.key);
    }
  }
  if (running.length > 0) {
    await client.query(`UPDATE ${names.tasks} SET cancel_requested = true, cancel_kind = 'shutdown' WHERE id = ANY($1::bigint[])`, [running]);
  }
  if (marked.length > 0) await client.query(`UPDATE ${names.tasks} SET cancel_kind = 'shutdown' WHERE id = ANY($1::bigint[])`, [marked]);
  await endWaiting(client, names, ended);
  return result;
}

/**
 * Cancels, as a stopped run's shutdown, the tasks of `runId` that wait: before a task of that run is
 * cancelled or failed on its behalf (given back, a failure not retried, a lease run out), so that its
 * dependents are cancelled on the shutdown's own account, as a local run's are, not on that task's.
 * Locks only waiting rows, in submission order: other transactions hold running ones.
 */
export async function cancelWaitingOfStoppedRun(client: pg.ClientBase, names: SchemaNames, runId: string): Promise<void> {
  const waiting = await client.query<TaskRow>(
    `SELECT id, key, state, worker_id, attempts, last_error, NULL AS lease_left_ms FROM ${names.tasks}
      WHERE run_id = $1 AND state IN ('blocked', 'queued')
      ORDER BY seq FOR UPDATE`,
    [runId],
  );
  if (waiting.rows.length > 0) await cancelAtShutdown(client, names, waiting.rows, { aborted: [], waitingOnly: true });
}

/**
 * For a run given work again (tasks added by a submit, a task redriven) while tasks a stop marked still run
 * (its `run --store` killed before its last cancel): those are asked to stop, as that cancel would have asked
 * them, so that no mark ends the new work (cancelWaitingOfStoppedRun would cancel it as the old stop's).
 */
export async function endStopMarks(client: pg.ClientBase, names: SchemaNames, runId: string): Promise<void> {
  await client.query(
    `UPDATE ${names.tasks} SET cancel_requested = true
      WHERE run_id = $1 AND state = 'running' AND cancel_kind = 'shutdown' AND NOT cancel_requested`,
    [runId],
  );
}
