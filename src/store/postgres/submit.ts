import { randomBytes } from "node:crypto";
import path from "node:path";
import type pg from "pg";
import { TaskqError } from "../../errors.js";
import { endStopMarks } from "./cancel.js";
import { dependencyReason, notifyWorkers } from "./graph.js";
import type { SchemaNames } from "./names.js";
import { storableText } from "./text.js";
import { queryOnOwnClient } from "./transaction.js";
import { isRunId } from "../../run-id.js";
import { PRIORITY_VALUES, type TaskState, type Workflow, type WorkflowTask } from "./types.js";

/** A fresh run id: sortable by creation time, unique across machines. */
export function generateRunId(): string {
  return `r-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

interface NewTaskRow {
  ord: number;
  key: string;
  type: string;
  run: string;
  env: Record<string, string>;
  cwd: string;
  priority: number;
  run_at: number | null;
  /** `delay`: added to the database's clock when the row is written. */
  delay_ms: number | null;
  state: TaskState;
  max_attempts: number;
  retry_on: number[];
  backoff_base_ms: number;
  backoff_max_ms: number;
  timeout_ms: number | null;
  waiting_on: number;
  cancel_reason: string | null;
  cancelled_by: string | null;
}

/**
 * The run's name and file, as stored. The loader refuses a NUL where it would change what
 * runs (command, environment, folder, id), but a name is free text, which PostgreSQL's
 * text refuses with a NUL in it.
 */
function runLabels(workflow: Workflow): [string | null, string] {
  return [workflow.name === undefined ? null : storableText(workflow.name), storableText(workflow.file)];
}

/** A task of the run as a dependency: its state, and the task whose end cancelled it, if any. */
interface KnownTask {
  state: TaskState;
  cancelledBy: string | null;
}

/** What a submit did: how many of the workflow's tasks it added, and what became of those the run already had. */
export interface SubmitResult {
  runId: string;
  /** Tasks of the workflow new to the run, now stored. */
  added: number;
  /** Tasks of the workflow the run already had: their stored definitions stay (see `changed`). */
  kept: number;
  /** Kept tasks whose definition in the workflow differs from the stored one, in workflow order. */
  changed: ChangedTask[];
  /** Whether this submit made the run (else it added to, or left as it was, a run of that id). */
  created: boolean;
  /**
   * The file the run was submitted from, where a resubmit gave the same file by another path (another checkout or folder),
   * or where one of the two was read from standard input or a pipe (`unnamed`), and the workflow was taken as that file
   * for the tasks it shares with the run.
   */
  storedFile?: string;
  /** Set with `storedFile` where the two could not be told apart by name: one of them was read from standard input or a pipe. */
  unnamed?: true;
}

/** A resubmitted task that differs from the stored one: fields named as a workflow file names them. */
export interface ChangedTask {
  key: string;
  /** The fields that differ, in the order of a task's definition; all keep their stored value but... */
  differ: string[];
  /**
   * ...these, which take the new one: `priority`, `runAt` and `delay` (counted from this submit) of
   * a task still queued (dedup). A queued task whose file sets neither `runAt` nor `delay` any more
   * keeps the not-before it has (`runAt or delay` in `differ` alone).
   */
  taken: string[];
}

/** A stored task as a submit compares it with the workflow's, and its state and cause as a dependency. */
interface StoredTask {
  key: string;
  state: TaskState;
  cancelled_by: string | null;
  type: string;
  run: string;
  env: Record<string, string>;
  cwd: string;
  priority: number;
  max_attempts: number;
  retry_on: number[];
  backoff_base_ms: number;
  backoff_max_ms: number;
  timeout_ms: number | null;
  depends_on: string[];
  /** Its not-before, in milliseconds since the epoch... */
  not_before_ms: number;
  /** ...and after its submit (written in the same statement, so on the same clock): a blocked task's delay, or 0. */
  wait_ms: number;
  /** Never leased: its not-before is still the one a submit wrote (a retry's backoff or a lease given back moves it). */
  never_started: boolean;
  /** Its not-before is still ahead, on the database's clock. */
  waiting: boolean;
}

const sameSet = <T>(a: readonly T[], b: readonly T[]): boolean => {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((item) => set.has(item));
};

const sameEnv = (a: Record<string, string>, b: Record<string, string>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([name, value]) => Object.hasOwn(a, name) && a[name] === value);

/**
 * How a resubmitted task differs from the stored one, or undefined when it does not. What runs
 * (command, environment, folder, retries, timeout, dependencies) is never changed: the task may
 * have run already, and its dependents were planned on it. A task still queued takes a new
 * priority (dedup: see `updateQueued`), and a new `runAt` or `delay` likewise (a `delay` counts
 * from each submit); with neither, it keeps its not-before. A blocked task keeps all of them.
 * The `runAt` or `delay` of both is compared (see `changedTiming`), of a queued one only until it
 * is first leased: after that its not-before is a retry's or a lease's, not a submit's, and kept.
 */
function changedTask(stored: StoredTask, task: WorkflowTask): ChangedTask | undefined {
  const differ: string[] = [];
  if (stored.type !== task.type) differ.push("type");
  if (stored.run !== task.run) differ.push("run");
  if (!sameEnv(stored.env, task.env)) differ.push("env");
  if (stored.cwd !== task.cwd) differ.push("cwd");
  const priority = stored.priority !== PRIORITY_VALUES[task.priority];
  if (priority) differ.push("priority");
  if (stored.max_attempts !== Math.max(task.retries, 0) + 1) differ.push("retries");
  if (!sameSet(stored.retry_on, task.retryOn ?? [])) differ.push("retryOn");
  if (stored.backoff_base_ms !== task.backoff.baseMs || stored.backoff_max_ms !== task.backoff.maxMs) differ.push("backoff");
  if (stored.timeout_ms !== (task.timeoutMs ?? null)) differ.push("timeout");
  if (!sameSet(stored.depends_on, task.dependsOn)) differ.push("dependsOn");
  const when = stored.state === "blocked" || (stored.state === "queued" && stored.never_started) ? changedTiming(stored, task) : undefined;
  if (when !== undefined) differ.push(when);
  if (differ.length === 0) return undefined;
  const taken = stored.state === "queued" ? differ.filter((field) => field === "priority" || field === "runAt" || field === "delay") : [];
  return { key: task.id, differ, taken };
}

/** Closer than this (milliseconds) is the same time: what the database's timestamps and floats keep of a runAt or a delay. */
const SAME_TIME_MS = 0.01;

/**
 * Which of the workflow's `runAt` or `delay` differs from a task's stored one, if either does: the
 * not-before its submit wrote is compared, its runAt, or its submit's time plus its delay (a queued
 * task that a resubmit gave a new delay has that resubmit's time as its own: see updateQueued).
 */
function changedTiming(stored: StoredTask, task: WorkflowTask): string | undefined {
  if (task.runAt !== undefined) return Math.abs(stored.not_before_ms - task.runAt) < SAME_TIME_MS ? undefined : "runAt";
  if (task.delayMs !== undefined) return Math.abs(stored.wait_ms - task.delayMs) < SAME_TIME_MS ? undefined : "delay";
  // Neither is set now: the stored task had one or the other (the database cannot tell which). A queued
  // one keeps it, which matters only while it waits (one redriven has a not-before of its own, now).
  if (stored.state === "queued" && !stored.waiting) return undefined;
  return Math.abs(stored.wait_ms) < SAME_TIME_MS ? undefined : "runAt or delay";
}

/** Decides the initial state of a new task from the states of its dependencies. */
function planTask(task: WorkflowTask, ord: number, known: Map<string, KnownTask>): NewTaskRow {
  let waitingOn = 0;
  let cause: { key: string; root: string; rootState: "failed" | "cancelled" } | undefined;
  for (const dep of task.dependsOn) {
    const found = known.get(dep);
    if (found === undefined) {
      throw new TaskqError("STORE_UNKNOWN_DEPENDENCY", `task "${task.id}" depends on "${dep}", which is not part of the run`);
    }
    const { state } = found;
    if (state !== "succeeded") waitingOn++;
    // Named as a cascade names it: by the task at its root, which a redrive of that task looks for.
    // The message names it so too, and the dependency it came through, as a cascade does.
    if ((state === "failed" || state === "cancelled") && cause === undefined) {
      const root = found.cancelledBy ?? dep;
      cause = { key: dep, root, rootState: root === dep ? state : known.get(root)?.state === "failed" ? "failed" : "cancelled" };
    }
  }
  const state: TaskState = cause !== undefined ? "cancelled" : waitingOn > 0 ? "blocked" : "queued";
  return {
    ord,
    key: task.id,
    type: task.type,
    run: task.run,
    env: task.env,
    cwd: task.cwd,
    priority: PRIORITY_VALUES[task.priority],
    run_at: task.runAt ?? null,
    delay_ms: task.delayMs ?? null,
    state,
    max_attempts: Math.max(task.retries, 0) + 1,
    retry_on: task.retryOn ?? [],
    backoff_base_ms: task.backoff.baseMs,
    backoff_max_ms: task.backoff.maxMs,
    timeout_ms: task.timeoutMs ?? null,
    waiting_on: cause !== undefined ? 0 : waitingOn,
    cancel_reason: cause !== undefined ? dependencyReason(cause.root, cause.rootState, cause.key) : null,
    cancelled_by: cause?.root ?? null,
  };
}

/** What `submitRun` and `submitNewRun` did; `settle`: whether the run may have ended, for the caller to settle after commit. */
export type SubmitOutcome = Omit<SubmitResult, "runId"> & { settle: boolean };

/**
 * Inserts a run and its tasks in one transaction. Idempotent on the run id:
 * tasks that already exist are not duplicated, and keep their stored definition
 * but that a still-queued one takes the new priority and not-before (dedup on
 * key). Returns what it added and kept, and whether the run may have ended
 * (every new task cancelled at once).
 */
export async function submitRun(client: pg.ClientBase, names: SchemaNames, workflow: Workflow, runId: string): Promise<SubmitOutcome> {
  const created = await client.query(
    `INSERT INTO ${names.runs} (id, name, file) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING id`,
    [runId, ...runLabels(workflow)],
  );
  const isNew = created.rowCount === 1;
  const storedAs = isNew ? undefined : await sameFile(client, names, runId, workflow.file);
  // A new run has no tasks yet: skip reading them. Otherwise FOR SHARE keeps a dependency
  // from completing between reading its state and inserting its dependents.
  // Their definitions too, which a resubmit does not change: to say where the workflow's differ.
  const existing = isNew
    ? []
    : (
        await client.query<StoredTask>(
          `SELECT key, state, cancelled_by, type, run, env, cwd, priority, max_attempts, retry_on,
                  backoff_base_ms::float8 AS backoff_base_ms, backoff_max_ms::float8 AS backoff_max_ms, timeout_ms::float8 AS timeout_ms,
                  (extract(epoch FROM not_before) * 1000)::float8 AS not_before_ms,
                  (extract(epoch FROM not_before - submitted_at) * 1000)::float8 AS wait_ms,
                  started_at IS NULL AS never_started, not_before > now() AS waiting,
                  ARRAY(SELECT d.depends_on_key FROM ${names.deps} d WHERE d.run_id = t.run_id AND d.task_key = t.key) AS depends_on
             FROM ${names.tasks} t WHERE run_id = $1 AND key = ANY($2) ORDER BY id FOR SHARE`,
          [runId, [...new Set(workflow.tasks.flatMap((task) => [task.id, ...task.dependsOn]))]],
        )
      ).rows;
  // Both read from standard input or a pipe: a generator's workflow, submitted again or adding the tasks of a later step
  // (a pipeline that uploads its steps in parts), taken without a word whatever tasks it has.
  const bothPiped = storedAs !== undefined && unnamedFile(storedAs.file) && unnamedFile(workflow.file);
  // Standard input or a pipe on one side, a file on the other: told by its tasks, a workflow with none of the run's is another one.
  if (storedAs?.unnamed === true && !bothPiped && existing.length === 0) throw otherFileError(runId, storedAs.file, workflow.file, "has none of its tasks");
  const storedFile = storedAs === undefined || bothPiped ? undefined : storedAs;
  const states = new Map<string, KnownTask>(existing.map((row) => [row.key, { state: row.state, cancelledBy: row.cancelled_by }]));
  const stored = new Map(existing.map((row) => [row.key, row]));
  const fresh: NewTaskRow[] = [];
  const resubmitted: QueuedUpdate[] = [];
  const changed: ChangedTask[] = [];
  for (const task of workflow.tasks) {
    const before = stored.get(task.id);
    if (before !== undefined) {
      const change = changedTask(before, task);
      if (change !== undefined) changed.push(change);
      // A not-before only where the file's runAt or delay changed: the same delay again would count
      // from this submit, and move a task that the resubmit (a CI step run again) keeps as it is.
      const newTime = change?.taken.some((field) => field === "runAt" || field === "delay") === true;
      resubmitted.push({ key: task.id, priority: PRIORITY_VALUES[task.priority], run_at: newTime ? (task.runAt ?? null) : null, delay_ms: newTime ? (task.delayMs ?? null) : null });
      continue;
    }
    if (states.has(task.id)) {
      throw new TaskqError("STORE_DUPLICATE_TASK", `task "${task.id}" appears twice in ${workflow.file}`);
    }
    const row = planTask(task, fresh.length, states);
    fresh.push(row);
    states.set(row.key, { state: row.state, cancelledBy: row.cancelled_by });
  }
  const queued = fresh.some((row) => row.state === "queued");
  if (fresh.length > 0) await insertTasks(client, names, runId, fresh, workflow.tasks, queued);
  const done = {
    added: fresh.length,
    kept: resubmitted.length,
    changed,
    created: isNew,
    ...(storedFile === undefined ? {} : { storedFile: storedFile.file, ...(storedFile.unnamed ? { unnamed: true as const } : {}) }),
  };
  if (isNew) return { ...done, settle: !fresh.some((row) => row.state !== "cancelled") };
  const requeued = await updateQueued(client, names, runId, resubmitted);
  if (fresh.length > 0 || requeued > 0) await endStopMarks(client, names, runId);
  await client.query(
    `UPDATE ${names.runs} SET state = 'running', finished_at = NULL
      WHERE id = $1 AND state <> 'running'
        AND EXISTS (SELECT 1 FROM ${names.tasks} WHERE run_id = $1 AND state IN ('blocked','queued','running'))`,
    [runId],
  );
  if (requeued > 0 && !queued) await notifyWorkers(client, names, runId);
  return { ...done, settle: true };
}

/** A file's name as given that says nothing of which file it is: standard input, a pipe or device (`<(generate)`, /dev/stdin). */
function unnamedFile(file: string): boolean {
  const absolute = path.resolve(file);
  return file === "<stdin>" || absolute.startsWith("/dev/") || absolute.startsWith("/proc/");
}

/**
 * A resubmit is of the file the run was submitted from, edited or not: a run id given to another
 * file (build.yaml, then deploy.yaml under one $CI_PIPELINE_ID) would merge the two into one run,
 * and a task id both have would be kept as the first defined it and never run as the second does.
 * Files are told apart by name, as the folder differs for the same file from another checkout or
 * folder: the stored path is returned then, for a note. A file read from standard input or a pipe, on either
 * side, has no name to tell it by: it is returned `unnamed`, and told by its tasks (see submitRun). Nothing is
 * told of a run stored without its file.
 */
async function sameFile(client: pg.ClientBase, names: SchemaNames, runId: string, file: string): Promise<{ file: string; unnamed: boolean } | undefined> {
  const found = await client.query<{ file: string | null }>(`SELECT file FROM ${names.runs} WHERE id = $1`, [runId]);
  const stored = found.rows[0]?.file ?? null;
  if (stored === null) return undefined;
  if (unnamedFile(stored) || unnamedFile(file)) return { file: stored, unnamed: true };
  if (path.normalize(stored) === path.normalize(storableText(file))) return undefined;
  if (path.basename(stored) === path.basename(storableText(file))) return { file: stored, unnamed: false };
  throw otherFileError(runId, stored, file, "");
}

/**
 * STORE_OTHER_FILE: run `runId`, submitted from `stored`, given another workflow `file` (`why`: what tells it apart, where its name does not).
 * One read from standard input or a pipe (`<(generate)`: /dev/fd/63) is told to be submitted as "it": its path is no name to give
 * again, nor to make a run id of.
 */
function otherFileError(runId: string, stored: string, file: string, why: string): TaskqError {
  return new TaskqError(
    "STORE_OTHER_FILE",
    `run ${runId} was submitted from ${stored}, not ${file}${why === "" ? "" : ` (which ${why})`}: a run id is for one workflow file, which may be submitted again, edited or not, to add its new tasks; nothing was submitted: submit ${unnamedFile(file) ? "it" : file} under another --run-id${unnamedFile(file) ? "" : otherId(runId, file)}`,
    { exitCode: 2 },
  );
}

/** A run id for another file, after the one given: mono-1 and deploy.yaml give " (such as mono-1-deploy)", where that is a run id. */
function otherId(runId: string, file: string): string {
  const word = path.basename(file).replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "");
  const id = `${runId}-${word}`;
  return word !== "" && isRunId(id) ? ` (such as ${id})` : "";
}

/** The INSERT of planned task rows (`$2`, as JSON) into run `runId`, in submission order; `from` supplies `runId`. */
function insertTasksSql(names: SchemaNames, runId: string, from = ""): string {
  return `INSERT INTO ${names.tasks} (run_id, key, type, run, env, cwd, priority, not_before, state, max_attempts, retry_on,
                                     backoff_base_ms, backoff_max_ms, timeout_ms, waiting_on, cancel_reason, cancelled_by,
                                     queued_at, finished_at)
     SELECT ${runId}, x.key, x.type, x.run, x.env, x.cwd, x.priority,
            ${notBeforeSql("now()")}, x.state, x.max_attempts,
            ARRAY(SELECT jsonb_array_elements_text(x.retry_on)::int), x.backoff_base_ms, x.backoff_max_ms, x.timeout_ms,
            x.waiting_on, x.cancel_reason, x.cancelled_by,
            CASE WHEN x.state = 'queued' THEN now() END, CASE WHEN x.state = 'cancelled' THEN now() END
       FROM ${from} jsonb_to_recordset($2) AS x(ord int, key text, type text, run text, env jsonb, cwd text, priority int,
            run_at float8, delay_ms float8, state text, max_attempts int, retry_on jsonb, backoff_base_ms bigint, backoff_max_ms bigint,
            timeout_ms bigint, waiting_on int, cancel_reason text, cancelled_by text)
      ORDER BY x.ord`;
}

/** Dependency edges of the new tasks, as [task, dependency] pairs. */
function newEdges(rows: NewTaskRow[], tasks: WorkflowTask[]): string[][] {
  const fresh = new Set(rows.map((row) => row.key));
  return tasks.filter((task) => fresh.has(task.id)).flatMap((task) => task.dependsOn.map((dep) => [task.id, dep]));
}

/** Inserts new tasks in submission order, and wakes workers in the same statement when one is runnable. */
async function insertTasks(
  client: pg.ClientBase,
  names: SchemaNames,
  runId: string,
  rows: NewTaskRow[],
  tasks: WorkflowTask[],
  notify: boolean,
): Promise<void> {
  await client.query(
    `WITH inserted AS (${insertTasksSql(names, "$1")} RETURNING 1)
     SELECT count(*), CASE WHEN $3 THEN pg_notify($4, $1) END FROM inserted`,
    [runId, JSON.stringify(rows), notify, names.channel],
  );
  const edges = newEdges(rows, tasks);
  if (edges.length === 0) return;
  await client.query(
    `INSERT INTO ${names.deps} (run_id, task_key, depends_on_key)
     SELECT $1, e->>0, e->>1 FROM jsonb_array_elements($2) e ON CONFLICT DO NOTHING`,
    [runId, JSON.stringify(edges)],
  );
}

/**
 * The common case in one statement, so one round trip and one commit: a run
 * id not seen before. Inserts the run, its tasks and their edges, and wakes
 * workers. Returns undefined, changing nothing, when the run already exists or
 * the workflow only makes sense next to its existing tasks (a dependency on
 * one of them); `submitRun` then takes over.
 */
export async function submitNewRun(pool: pg.Pool, names: SchemaNames, workflow: Workflow, runId: string, signal?: AbortSignal): Promise<SubmitOutcome | undefined> {
  const states = new Map<string, KnownTask>();
  const rows: NewTaskRow[] = [];
  for (const task of workflow.tasks) {
    if (states.has(task.id) || task.dependsOn.some((dep) => !states.has(dep))) return undefined;
    const row = planTask(task, rows.length, states);
    rows.push(row);
    states.set(row.key, { state: row.state, cancelledBy: row.cancelled_by });
  }
  // Made before connecting: a throw here leaves no client taken from the pool.
  const values = [
    runId,
    JSON.stringify(rows),
    ...runLabels(workflow),
    JSON.stringify(newEdges(rows, workflow.tasks)),
    rows.some((row) => row.state === "queued"),
    names.channel,
  ];
  // On a client of its own: a connection that fails as it is made sent nothing, which its error says, so that a stopped
  // submit does not say the run may have been stored by this try (see storingRun); stopped while it connected, nothing is sent.
  // Each part runs once whether or not it is referenced; the FROM run makes the inserts empty when the run exists.
  const result = await queryOnOwnClient<{ created: number }>(pool, {
    // Named: prepared once per connection.
    name: names.statement("submit_new"),
    text: `WITH run AS (
       INSERT INTO ${names.runs} (id, name, file) VALUES ($1, $3, $4) ON CONFLICT (id) DO NOTHING RETURNING id),
     inserted AS (${insertTasksSql(names, "run.id", "run,")} RETURNING 1),
     edges AS (
       INSERT INTO ${names.deps} (run_id, task_key, depends_on_key)
       SELECT run.id, e->>0, e->>1 FROM run, jsonb_array_elements($5) e ON CONFLICT DO NOTHING RETURNING 1)
     SELECT (SELECT count(*) FROM run)::int AS created,
            (SELECT pg_notify($7, $1) FROM run WHERE $6) AS notified`,
    values,
  }, signal);
  if (result.rows[0]?.created !== 1) return undefined;
  return { added: rows.length, kept: 0, changed: [], created: true, settle: !rows.some((row) => row.state !== "cancelled") };
}

/**
 * A row's not-before: its runAt, or the database's clock plus its delay (so a delay, like
 * every other time of the durable mode, does not depend on the submitting machine's clock),
 * or else `otherwise`.
 */
function notBeforeSql(otherwise: string): string {
  return `COALESCE(to_timestamp(x.run_at / 1000.0), now() + x.delay_ms * interval '1 millisecond', ${otherwise})`;
}

interface QueuedUpdate {
  key: string;
  priority: number;
  run_at: number | null;
  delay_ms: number | null;
}

/**
 * Dedup: a resubmitted task still waiting in the queue takes the new priority, and the new
 * not-before where its runAt or delay changed. A new delay counts from this submit, which is then
 * the task's submit time: the next submit compares its delay with the not-before less that
 * (see changedTiming), so the same file again finds it unchanged and moves nothing.
 */
async function updateQueued(client: pg.ClientBase, names: SchemaNames, runId: string, rows: QueuedUpdate[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await client.query(
    `UPDATE ${names.tasks} t
        SET priority = x.priority, not_before = ${notBeforeSql("t.not_before")},
            submitted_at = CASE WHEN x.run_at IS NULL AND x.delay_ms IS NOT NULL THEN now() ELSE t.submitted_at END
       FROM jsonb_to_recordset($2) AS x(key text, priority int, run_at float8, delay_ms float8)
      WHERE t.run_id = $1 AND t.key = x.key AND t.state = 'queued'
        AND (t.priority <> x.priority OR t.not_before <> ${notBeforeSql("t.not_before")})`,
    [runId, JSON.stringify(rows)],
  );
  return result.rowCount ?? 0;
}
