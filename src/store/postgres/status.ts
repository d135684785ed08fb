import type pg from "pg";
import { TaskqError } from "../../errors.js";
import { closestMatch } from "../../loaders/suggest.js";
import { applicationName, storeApplicationName, storeNameEnds } from "./application-name.js";
import { RunNotFoundError } from "./store-error.js";
import type { SchemaNames } from "./names.js";
import type { DeadLetter, RunStatus, TaskState, TaskStatusRow } from "./types.js";

interface StatusRow {
  run_id: string;
  key: string;
  state: TaskState;
  priority: number;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  cancel_reason: string | null;
  cancelled_by: string | null;
  cancel_kind: "shutdown" | null;
  cancelled_running: boolean;
  worker_id: string | null;
  failed_worker_id: string | null;
  failed_attempt: number | null;
  tail: string[];
  tail_attempt: number | null;
  tail_worker_id: string | null;
  tail_worker_attempt: number | null;
  depends_on: string[];
  submitted_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  cancelled_dependents?: string[];
  running_ms?: number | null;
  lease_expired_ms?: number | null;
  retry_in_ms?: number | null;
  due_in_ms?: number | null;
  due_at?: Date | null;
  live_tail?: string[] | null;
  cancel_requested?: boolean | null;
}

const COLUMNS = `t.run_id, t.key, t.state, t.priority, t.attempts, t.max_attempts, t.last_error, t.exit_code, t.signal,
  t.timed_out, t.cancel_reason, t.cancelled_by, t.cancel_kind, t.cancelled_running, t.worker_id, t.failed_worker_id, t.failed_attempt, t.tail, t.tail_attempt, t.tail_worker_id, t.tail_worker_attempt, t.submitted_at, t.started_at, t.finished_at`;

function dependsOn(names: SchemaNames): string {
  return `ARRAY(SELECT d.depends_on_key FROM ${names.deps} d WHERE d.run_id = t.run_id AND d.task_key = t.key ORDER BY 1) AS depends_on`;
}

function toStatus(row: StatusRow): TaskStatusRow {
  return {
    runId: row.run_id,
    key: row.key,
    state: row.state,
    priority: row.priority,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    // None for a success: a row that succeeded before migration 19 may still hold an earlier attempt's error.
    lastError: row.state === "succeeded" ? null : row.last_error,
    exitCode: row.exit_code,
    signal: row.signal,
    timedOut: row.timed_out,
    cancelReason: row.cancel_reason,
    cancelledBy: row.cancelled_by,
    ...(row.state === "cancelled" && row.cancel_kind === "shutdown" ? { cancelKind: "shutdown" as const } : {}),
    ...(row.state === "cancelled" && row.cancelled_running ? { cancelledRunning: true as const } : {}),
    workerId: row.worker_id,
    // Its latest counted attempt failed, and the task waits for its retry (or was cancelled or stopped meanwhile; an
    // attempt since was given back, not counted): the worker that ran it has its log (migration 20). (failed_attempt is the
    // attempts of a running task, one at least: it matches no task that made none.)
    ...(row.state !== "succeeded" && row.failed_attempt === row.attempts && row.failed_worker_id !== null ? { failedWorkerId: row.failed_worker_id } : {}),
    tail: row.tail,
    // Lines of an earlier attempt, the latest having left none, say which attempt they are of. (A success stores its own lines, and no attempt.)
    ...(row.state !== "succeeded" && row.tail.length > 0 && row.tail_attempt !== null && (row.tail_attempt < row.attempts || ofFailedAttempt(row))
      ? { tailAttempt: row.tail_attempt, tailWorkerId: tailWorker(row) }
      : {}),
    dependsOn: row.depends_on,
    submittedAt: row.submitted_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    ...(row.running_ms != null ? { runningMs: Math.max(0, Math.round(row.running_ms)) } : {}),
    ...(row.lease_expired_ms != null ? { leaseExpiredMs: Math.max(0, Math.round(row.lease_expired_ms)) } : {}),
    ...(row.retry_in_ms != null ? { retryInMs: Math.max(0, Math.round(row.retry_in_ms)) } : {}),
    ...(row.due_in_ms != null && row.due_at != null ? { dueInMs: Math.max(0, Math.round(row.due_in_ms)), dueAt: row.due_at } : {}),
    ...(row.live_tail != null && row.live_tail.length > 0 ? { liveTail: row.live_tail } : {}),
    ...(row.cancel_requested === true ? { cancelRequested: true as const } : {}),
    // Marked by a stopped `run --store` (see ShutdownCancel.waitingOnly): however it ends, it is cancelled.
    ...(row.state === "running" && row.cancel_kind === "shutdown" && row.cancel_requested !== true ? { runStopped: true as const } : {}),
  };
}

/**
 * Every task of a run in submission order, with counts by state. The run's row and its tasks are read
 * in one statement, as of one moment: read apart, a resubmit that reopened an ended run between the
 * two showed it ended with a task ready to run (and status exited 0 on it).
 */
export async function readRunStatus(pool: pg.Pool, names: SchemaNames, runId: string): Promise<RunStatus> {
  // Waiting for its not-before is told on the database's clock, as the lease tells it. A run without
  // tasks is one row with no task's (LEFT JOIN); no row at all, no run.
  const result = await pool.query<
    Omit<StatusRow, "key"> & { key: string | null; waiting: boolean | null; run_name: string | null; run_file: string | null; run_state: RunStatus["state"]; run_created_at: Date; read_at: Date }
  >(
    `SELECT r.name AS run_name, r.file AS run_file, r.state AS run_state, r.created_at AS run_created_at, now() AS read_at,
            ${COLUMNS}, ${dependsOn(names)}, (t.state = 'queued' AND t.not_before > now()) AS waiting,
            CASE WHEN t.state = 'running' THEN extract(epoch FROM now() - t.started_at)::float8 * 1000 END AS running_ms,
            CASE WHEN t.state = 'running' AND t.lease_expires_at < now() THEN extract(epoch FROM now() - t.lease_expires_at)::float8 * 1000 END AS lease_expired_ms,
            CASE WHEN t.state = 'running' AND t.live_tail_token = t.lease_token THEN t.live_tail END AS live_tail,
            CASE WHEN t.state = 'running' THEN t.cancel_requested END AS cancel_requested,
            CASE WHEN t.state = 'queued' AND t.attempts > 0 THEN greatest(0, extract(epoch FROM t.not_before - now())::float8 * 1000) END AS retry_in_ms,
            CASE WHEN t.state = 'queued' AND t.attempts = 0 AND t.not_before > now() THEN extract(epoch FROM t.not_before - now())::float8 * 1000 END AS due_in_ms,
            CASE WHEN t.state = 'queued' AND t.attempts = 0 AND t.not_before > now() THEN t.not_before END AS due_at
       FROM ${names.runs} r LEFT JOIN ${names.tasks} t ON t.run_id = r.id
      WHERE r.id = $1 ORDER BY t.seq`,
    [runId],
  );
  const head = result.rows[0];
  if (head === undefined) throw new RunNotFoundError(runId);
  const tasks = { rows: result.rows.filter((row): row is typeof row & StatusRow & { waiting: boolean } => row.key !== null) };
  const counts: Record<TaskState, number> = { blocked: 0, queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
  let scheduled = 0;
  for (const row of tasks.rows) {
    counts[row.state]++;
    if (row.waiting) scheduled++;
  }
  const rows = tasks.rows.map(toStatus);
  await markWorkersWaiting(pool, names.schema, rows.flatMap((row) => (row.leaseExpiredMs === undefined ? [] : [[row, { runId: row.runId, workerId: row.workerId, leaseExpiredMs: row.leaseExpiredMs }] as const])));
  return {
    runId,
    name: head.run_name,
    file: head.run_file,
    state: head.run_state,
    createdAt: head.run_created_at,
    readAt: head.read_at,
    counts,
    scheduled,
    tasks: rows,
  };
}

/**
 * Sets `workerWaitingMs` on each item (a status row, a cancel's running target) whose lease ran out, given beside it,
 * while a session of its worker has a statement in progress (see workersWaiting).
 */
export async function markWorkersWaiting(pool: pg.Pool, schema: string, expired: ReadonlyArray<readonly [{ workerWaitingMs?: number }, LeaseRunOut]>): Promise<void> {
  if (expired.length === 0) return;
  const waited = await workersWaiting(pool, schema, expired.map(([, lease]) => lease));
  for (const [index, [item]] of expired.entries()) {
    const waitedMs = waited[index];
    if (waitedMs !== undefined) item.workerWaitingMs = waitedMs;
  }
}

/** A running task whose lease ran out `leaseExpiredMs` ago, held by `workerId`, of run `runId`. */
export interface LeaseRunOut {
  runId: string;
  workerId: string | null;
  leaseExpiredMs: number;
}

/**
 * Of each task whose lease ran out, for how long a session of its worker has had a statement in progress, where it has
 * had one since before the lease ran out (else undefined): that worker is neither gone nor stalled, but waiting on the
 * database (its record of how the attempt ended, or a renewal, held up by a lock or a slow database), and may yet record
 * the attempt; a sweep skips the row it locks. What status and cancel say of such a task.
 * Its sessions are known by their names: `taskq worker <id> in <schema>`, or `taskq run <run id> in <schema>` for a run's
 * own worker (or without ` in <schema>`, an earlier taskq's). A session
 * another role's, whose state this role may not see (no pg_read_all_stats), or of an earlier taskq, which let the URL's
 * application_name name it, is not found; nor is one whose statement began after the lease ran out: the lease is then worded as run out.
 */
async function workersWaiting(pool: pg.Pool, schema: string, tasks: readonly LeaseRunOut[]): Promise<(number | undefined)[]> {
  const none = tasks.map(() => undefined);
  const sessionNames = (task: LeaseRunOut): string[] =>
    task.workerId === null
      ? []
      : [`taskq worker ${task.workerId}`, `taskq run ${task.runId}`].flatMap((words) => [storeApplicationName(words, schema), applicationName(words)]);
  const names = [...new Set(tasks.flatMap(sessionNames))];
  if (names.length === 0) return none;
  // Only a finer wording: a database that keeps pg_stat_activity from this role (REVOKE), or fails this read, leaves it out.
  const result = await pool.query<{ application_name: string; waiting_ms: number }>(
    `SELECT application_name, max(extract(epoch FROM now() - COALESCE(xact_start, query_start)))::float8 * 1000 AS waiting_ms
       FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
        AND application_name = ANY($1::text[])
      GROUP BY application_name`,
    [names],
  ).catch(() => undefined);
  if (result === undefined) return none;
  const waiting = new Map(result.rows.map((row) => [row.application_name, Math.max(0, Math.round(row.waiting_ms))]));
  return tasks.map((task) => {
    const found = sessionNames(task).flatMap((name) => waiting.get(name) ?? []);
    // Only a statement that began before the lease ran out: a renewal held up is one, and one begun since (a session of
    // another `run --store` of the same run id) says nothing of the worker that held the lease.
    const waitedMs = found.length === 0 ? undefined : Math.max(...found);
    return waitedMs !== undefined && waitedMs >= task.leaseExpiredMs ? waitedMs : undefined;
  });
}

/** Failed tasks (of one run, or all), each with the dependents cancelled because of it. A run that does not exist is an error. */
export async function readDeadLetters(pool: pg.Pool, names: SchemaNames, runId?: string): Promise<DeadLetter[]> {
  const result = await pool.query<StatusRow>(
    `SELECT ${COLUMNS}, ${dependsOn(names)},
            ARRAY(SELECT c.key FROM ${names.tasks} c WHERE c.run_id = t.run_id AND c.cancelled_by = t.key ORDER BY c.seq)
              AS cancelled_dependents
       FROM ${names.tasks} t
      WHERE t.state = 'failed' AND ($1::text IS NULL OR t.run_id = $1)
      ORDER BY t.finished_at, t.seq`,
    [runId ?? null],
  );
  // None: a run without dead letters, or no such run (a mistyped id is no all-clear).
  if (result.rows.length === 0 && runId !== undefined) {
    const run = await pool.query(`SELECT 1 FROM ${names.runs} WHERE id = $1`, [runId]);
    if (run.rows.length === 0) throw new RunNotFoundError(runId);
  }
  return result.rows.map((row) => {
    // Without a cancelled task's reason and the dependency it was cancelled by: a failed task has neither.
    const { cancelReason: _reason, cancelledBy: _by, ...status } = toStatus(row);
    return { ...status, cancelledDependents: row.cancelled_dependents ?? [] };
  });
}

/** The most run ids read for a "did you mean": the latest submitted, those most likely meant. */
const RUN_IDS_READ = 10_000;

/**
 * The run id of the store named almost as `runId` (a typo: `fial1` for `fail1`, `Build-7` for `build-7`), if one is.
 * Only ids a few characters longer or shorter are sent (closestMatch allows at most 3 edits), and of them the latest
 * 10,000: the database still looks at every run (no index serves the length or the order; ~0.8 s for 3 million runs,
 * under the statement limit, on this error's path only), but what comes back and is compared is bounded, and holds the
 * run just submitted: the first 100,000 in the table's order, read before, were the oldest, and left it out.
 */
export async function closestRunId(db: pg.Pool | pg.ClientBase, names: SchemaNames, runId: string): Promise<string | undefined> {
  const near = await db.query<{ id: string }>(`SELECT id FROM ${names.runs} WHERE abs(length(id) - $1) <= 3 ORDER BY created_at DESC LIMIT ${RUN_IDS_READ}`, [runId.length]);
  return closestMatch(runId, slipsOf(runId, near.rows.map((row) => row.id)));
}

/**
 * The error for a task not found: `no run` when the run itself does not exist (a mistyped run id), else `no task`, with
 * the run's task meant where one is named almost so (`no task "biuld" in run "x"; did you mean "build"?`), and where the id
 * is a stored run's, that `command` takes one run (see runsGiven).
 */
export async function taskNotFound(db: pg.Pool | pg.ClientBase, names: SchemaNames, runId: string, taskKey: string, command: TasksCommand): Promise<TaskqError> {
  const meant = await meantTasks(db, names, runId, [taskKey]);
  if (meant === undefined) return new RunNotFoundError(runId);
  const [near] = meant;
  return new TaskqError("STORE_NOT_FOUND", `no task "${taskKey}" in run "${runId}"${near === undefined ? "" : `; did you mean "${near}"?`}${await runsGiven(db, names, [taskKey], command)}`);
}

/** The commands that take a run and its tasks, whose errors for a task not found say so where one is a run. */
export type TasksCommand = "cancel" | "redrive";

const DONE: Record<TasksCommand, string> = { cancel: "cancelled", redrive: "redriven" };

/**
 * The error for several task ids given at once (`cancel RUN a b`, `redrive RUN a b`) of which `missing` are not in the run:
 * `no run` where the run does not exist, else each named, with the run's task meant where one is named almost so (`no task
 * "biuld" (did you mean "build"?) or "zz" in run "x"`), that none of those given was acted on, and which of them are stored
 * runs' ids (see runsGiven).
 */
export async function tasksNotFound(db: pg.Pool | pg.ClientBase, names: SchemaNames, runId: string, missing: readonly string[], given: number, command: TasksCommand): Promise<TaskqError> {
  const meant = await meantTasks(db, names, runId, missing);
  if (meant === undefined) return new RunNotFoundError(runId);
  const named = missing.map((key, index) => `${JSON.stringify(key)}${meant[index] === undefined ? "" : ` (did you mean "${meant[index]}"?)`}`);
  const list = named.length === 1 ? named[0]! : `${named.slice(0, -1).join(", ")} or ${named.at(-1)!}`;
  return new TaskqError("STORE_NOT_FOUND", `no task ${list} in run "${runId}": none of the ${given} tasks given was ${DONE[command]}${await runsGiven(db, names, missing, command)}`);
}

/**
 * Of each of `keys`, not in run `runId`, the task of the run named almost as it, where one is; undefined whole where the
 * run itself does not exist. Only keys a few characters longer or shorter than one of them are read (closestMatch allows
 * at most 3 edits): a run of 100,000 tasks sends back those of a few lengths, not every key it has.
 */
async function meantTasks(db: pg.Pool | pg.ClientBase, names: SchemaNames, runId: string, keys: readonly string[]): Promise<(string | undefined)[] | undefined> {
  const run = await db.query(`SELECT 1 FROM ${names.runs} WHERE id = $1`, [runId]);
  if (run.rows.length === 0) return undefined;
  const lengths = [...new Set(keys.flatMap((key) => [-3, -2, -1, 0, 1, 2, 3].map((slip) => key.length + slip)))];
  const near = await db.query<{ key: string }>(`SELECT key FROM ${names.tasks} WHERE run_id = $1 AND length(key) = ANY($2::int[]) ORDER BY seq`, [runId, lengths]);
  const stored = near.rows.map((row) => row.key);
  return keys.map((key) => closestMatch(key, slipsOf(key, stored.filter((other) => Math.abs(other.length - key.length) <= 3))));
}

/**
 * Where task ids not found are stored runs' ids (`cancel build-1 build-2 build-3`, meant as three runs), that `command`
 * takes one run and its tasks: ` (build-2 and build-3 are runs: cancel takes one run and its tasks; cancel each run on
 * its own)`; else "".
 */
async function runsGiven(db: pg.Pool | pg.ClientBase, names: SchemaNames, keys: readonly string[], command: TasksCommand): Promise<string> {
  const found = new Set((await db.query<{ id: string }>(`SELECT id FROM ${names.runs} WHERE id = ANY($1)`, [keys])).rows.map((row) => row.id));
  const runs = keys.filter((key) => found.has(key));
  if (runs.length === 0) return "";
  const list = runs.length === 1 ? `${runs[0]!} is a run` : `${runs.slice(0, -1).join(", ")} and ${runs.at(-1)!} are runs`;
  return ` (${list}: ${command} takes one run and its tasks; ${command} each run on its own)`;
}

/**
 * Of `ids`, those that may be a slip of `id`: not those named as it but for their numbers (`shard-9` and `shard-1`,
 * `build-1236` and `build-1235`), another task or run of a numbered series, which a "did you mean" would send the
 * user after (a run pruned, or not submitted yet, is no typo of the one next to it).
 */
export function slipsOf(id: string, ids: readonly string[]): string[] {
  const unnumbered = (name: string) => name.replace(/\d+/g, "0");
  return ids.filter((other) => unnumbered(other) !== unnumbered(id));
}

/**
 * Of a task cut short as it ran: its lines are of an attempt that failed (or whose lease ran out) before the one cut
 * short, which left none. The attempt a stopped run cut short is given back, not counted, so its number is one past
 * `attempts`, and lines of the attempt before it, `attempts`, would otherwise read as its own.
 */
function ofFailedAttempt(row: Pick<StatusRow, "state" | "cancelled_running" | "failed_attempt" | "tail_attempt">): boolean {
  return row.state === "cancelled" && row.cancelled_running && row.failed_attempt !== null && row.tail_attempt !== null && row.tail_attempt <= row.failed_attempt;
}

/**
 * The worker whose attempt wrote a task's stored last lines (`tail_attempt`'s), which its log on that worker's machine has:
 * that of the attempt that failed last where the lines are that attempt's (`failed_attempt`, migration 20: an earlier
 * attempt's lines are kept where a later one left none, and that later one may have run on another worker), that of the
 * latest attempt where they are its own; above all, the one stored with them (`tail_worker_id`, migration 21); null
 * where the store does not say (lines stored before migration 21 of an attempt before the one that failed last).
 */
function tailWorker(
  row: Pick<StatusRow, "attempts" | "worker_id" | "failed_worker_id" | "failed_attempt" | "tail_attempt" | "tail_worker_id" | "tail_worker_attempt">,
): string | null {
  if (row.tail_attempt === null) return null;
  // Stored with the lines (migration 21): where they are still that attempt's.
  if (row.tail_worker_id !== null && row.tail_worker_attempt === row.tail_attempt) return row.tail_worker_id;
  if (row.failed_worker_id !== null && row.tail_attempt === row.failed_attempt) return row.failed_worker_id;
  // Its own lines: of the latest attempt, or of one a stopped run cut short, given back (not counted: one past `attempts`).
  return row.tail_attempt >= row.attempts ? row.worker_id : null;
}

/**
 * Whether a worker of the store in `schema` that may run `runId`'s tasks is connected to the database: a session named
 * as a worker's (`taskq worker <id>`), ending as this store's do (storeNameEnds), or as the run's own `run --store`'s
 * (`taskq run <run id>`), in this database. A `run --store` of another run counts for nothing: it leases only its own
 * run's tasks. Undefined where that cannot be told: a worker's session without a store's end is an earlier taskq's,
 * whose store is not known (a rolling upgrade), as is one named as an earlier taskq's `run --store` of this run; or
 * this role may not read pg_stat_activity. Every session's name is there to read, another role's too.
 */
export async function workersConnected(pool: pg.Pool, schema: string, runId: string): Promise<boolean | undefined> {
  const [whole, digest] = storeNameEnds(schema);
  const result = await pool
    .query<{ ours: boolean; unknown: boolean }>(
      `SELECT coalesce(bool_or(worker AND (right(application_name, length($1)) = $1 OR right(application_name, length($2)) = $2) OR application_name = $3), false) AS ours,
              coalesce(bool_or(worker AND application_name !~ ' in ([a-z_][a-z0-9_]*|#[0-9a-f]{16})$' OR application_name = $4), false) AS unknown
         FROM (SELECT application_name, starts_with(application_name, 'taskq worker ') AS worker
                 FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                  AND (starts_with(application_name, 'taskq worker ') OR starts_with(application_name, 'taskq run '))) AS named`,
      [whole, digest, storeApplicationName(`taskq run ${runId}`, schema), applicationName(`taskq run ${runId}`)],
    )
    .catch(() => undefined);
  const row = result?.rows[0];
  if (row === undefined) return undefined;
  return row.ours ? true : row.unknown ? undefined : false;
}
