import type pg from "pg";
import type { SchemaNames } from "./names.js";

/**
 * Dependency-graph updates shared by submit, complete, sweep, cancel and
 * redrive. Each runs inside the caller's transaction. (Unblocking dependents
 * on success lives in the `complete_success` SQL function.)
 */

/**
 * Why a dependent was cancelled: named by the task at the root of the cascade and, where the cascade
 * came to it through another task, that one too, as a local run says it (`dependency "a" failed (via "b")`).
 */
export function dependencyReason(cause: string, state: "failed" | "cancelled", via: string = cause): string {
  return `dependency "${cause}" ${state === "failed" ? "failed" : "was cancelled"}${via === cause ? "" : ` (via "${via}")`}`;
}

/**
 * Cancels the dependents of running task `key`, whose cancel was asked for: at once, not once its worker hears of
 * it, as an attempt that succeeded meanwhile would free them. Their reason is worded for what `key` may still
 * come to (its attempt may succeed), not as dependencyReason's "was cancelled". Returns them as cancelDependents does.
 */
export function cancelDependentsOfCancelAsked(client: pg.ClientBase, names: SchemaNames, runId: string, key: string): Promise<string[]> {
  const reasonOf = (via: string) => `its dependency "${key}" was asked to cancel while it ran${via === key ? "" : ` (via "${via}")`}`;
  return cancelDependents(client, names, runId, key, "cancelled", key, "cancelled", reasonOf);
}

/**
 * Every task of the run that depends on another, by the key it depends on, each list in submission
 * order (as the engine keeps a task's dependents): the run's edges, read in one statement.
 */
export async function readDependents(client: pg.ClientBase, names: SchemaNames, runId: string): Promise<Map<string, string[]>> {
  const edges = await client.query<{ task_key: string; depends_on_key: string }>(
    `SELECT d.task_key, d.depends_on_key FROM ${names.deps} d JOIN ${names.tasks} t ON t.run_id = d.run_id AND t.key = d.task_key
      WHERE d.run_id = $1 ORDER BY t.seq`,
    [runId],
  );
  const dependents = new Map<string, string[]>();
  for (const { task_key: dependent, depends_on_key: on } of edges.rows) {
    const list = dependents.get(on);
    if (list === undefined) dependents.set(on, [dependent]);
    else list.push(dependent);
  }
  return dependents;
}

/**
 * Walks a cascade from `root` as the engine does (see its Finalizer): each task ended passes it on to
 * each of its dependents in submission order, the last one reached going first. Sets, in `reached`,
 * each task met for the first time, mapped to the task it came through, and returns those, in the
 * order met; one already there is passed, and not walked through again.
 */
export function walkCascade(root: string, dependentsOf: (key: string) => readonly string[] | undefined, reached: Map<string, string>): [key: string, via: string][] {
  const met: [string, string][] = [];
  const stack = [root];
  for (let done = stack.pop(); done !== undefined; done = stack.pop()) {
    for (const dependent of dependentsOf(done) ?? []) {
      if (reached.has(dependent) || dependent === root) continue;
      reached.set(dependent, done);
      met.push([dependent, done]);
      stack.push(dependent);
    }
  }
  return met;
}

/** Levels of dependents looked up one statement each before the run's whole graph is read instead. */
const LEVELS_BY_LOOKUP = 8;

/**
 * Cancels every blocked or queued transitive dependent of `key`, which ended `state`, recording
 * `cause` (default `key`: the task that failed or was cancelled at the root of the cascade, which
 * redrive looks for; `causeState` is how that one ended) and why, naming the task each came through
 * where that is not the cause. Returns the cancelled keys, in submission order.
 *
 * The graph is walked here, not in one recursive query: PostgreSQL may plan
 * that one (stale statistics on a freshly submitted run, or a merge join) to
 * read the run's edges again at every level, and a chain of 100,000 tasks then
 * took over 10 minutes, far past the statement limit, so its failure could
 * never be recorded. A task with no dependents costs one lookup; a shallow cascade one
 * a level; a deep one reads the run's edges once. The walk goes through tasks
 * of any state, as a dependent's dependents are cancelled whatever it is.
 */
export async function cancelDependents(
  client: pg.ClientBase,
  names: SchemaNames,
  runId: string,
  key: string,
  state: "failed" | "cancelled",
  cause: string = key,
  causeState: "failed" | "cancelled" = state,
  reasonOf: (via: string) => string = (via) => dependencyReason(cause, causeState, via),
): Promise<string[]> {
  // The edges the cascade can reach, each task's dependents in submission order: level by level, then, deeper still, the run's.
  let dependents = new Map<string, string[]>();
  const seen = new Set([key]);
  let frontier = [key];
  for (let level = 0; frontier.length > 0 && level < LEVELS_BY_LOOKUP; level++) {
    // Key by key: with `depends_on_key = ANY($2)`, and statistics older than the run, PostgreSQL looked the
    // run up in the index and filtered the keys, reading every edge of the run at each level.
    const next = await client.query<{ key: string; dependents: string[] }>(
      `SELECT k.key, ARRAY(SELECT d.task_key FROM ${names.deps} d WHERE d.run_id = $1 AND d.depends_on_key = k.key
                            ORDER BY (SELECT x.seq FROM ${names.tasks} x WHERE x.run_id = $1 AND x.key = d.task_key)) AS dependents
         FROM unnest($2::text[]) AS k(key)`,
      [runId, frontier],
    );
    frontier = [];
    for (const row of next.rows) {
      dependents.set(row.key, row.dependents);
      for (const dependent of row.dependents) {
        if (seen.has(dependent)) continue;
        seen.add(dependent);
        frontier.push(dependent);
      }
    }
  }
  if (frontier.length > 0) dependents = await readDependents(client, names, runId);
  const reached = new Map<string, string>();
  walkCascade(key, (done) => dependents.get(done), reached);
  if (reached.size === 0) return [];
  // Each task's reason by its key, in one jsonb object, which the statement reads once and looks each key up in.
  const reasons = Object.fromEntries([...reached].map(([dependent, via]) => [dependent, reasonOf(via)]));
  // In submission order: an UPDATE returns its rows in whatever order it met them. Each row is found by the
  // id its run and key give, one key at a time (the unique (run_id, key) index), then by that id (the primary
  // key), whatever the statistics say: the state is tested with IS NOT DISTINCT FROM (the same, as state is
  // never null), from which PostgreSQL infers no partial index. With `run_id = $1 AND key = ANY($2) AND state
  // IN ('blocked', 'queued')`, and statistics older than the run, it read the partial index of active tasks
  // (tasks_active) whole, or the run's rows in the unique index, thinking either nearly empty: every task of
  // the run, for each failure. (So did a join with the keys and their reasons, as a hash join.)
  const result = await client.query<{ key: string }>(
    `WITH cancelled AS (
       UPDATE ${names.tasks} t
          SET state = 'cancelled', cancel_reason = $3::jsonb ->> t.key, cancelled_by = $4, finished_at = now(), waiting_on = 0
        WHERE t.id = ANY(ARRAY(SELECT (SELECT x.id FROM ${names.tasks} x WHERE x.run_id = $1 AND x.key = k.key)
                                 FROM unnest($2::text[]) AS k(key)))
          AND (t.state IS NOT DISTINCT FROM 'blocked' OR t.state IS NOT DISTINCT FROM 'queued')
        RETURNING t.key, t.seq)
     SELECT key FROM cancelled ORDER BY seq`,
    [runId, [...reached.keys()], JSON.stringify(reasons), cause],
  );
  return result.rows.map((row) => row.key);
}

/**
 * Records the run's final state once none of its tasks is active. It runs
 * after the transaction that ended a task has committed, on its own: of two
 * transactions ending a run's last tasks at once, each may see the other's
 * task as still running, but the refresh of whichever committed last sees
 * both. (Idempotent; submit and redrive set a run back to 'running' themselves.)
 */
export async function refreshRunState(db: pg.Pool | pg.ClientBase, names: SchemaNames, runId: string): Promise<void> {
  await db.query(
    `UPDATE ${names.runs} r
        SET state = s.state, finished_at = COALESCE(s.ended, now())
       FROM (SELECT CASE WHEN bool_or(state = 'failed') THEN 'failed'
                         WHEN bool_or(state = 'cancelled') THEN 'cancelled'
                         ELSE 'succeeded' END AS state,
                    max(finished_at) AS ended
               FROM ${names.tasks} WHERE run_id = $1) s
      WHERE r.id = $1 AND r.state = 'running'
        AND NOT EXISTS (SELECT 1 FROM ${names.tasks} WHERE run_id = $1 AND state IN ('blocked','queued','running'))`,
    [runId],
  );
}

/**
 * Settles every running run that has no active task left (a backstop the sweeper runs, as refreshRunState
 * settles one run). Each running run is asked for one active task; only a run with none has its tasks
 * looked at for how it ended. Aggregating every task of every running run instead read the whole of a run
 * in progress at each sweep: a worker sweeps every half lease, and a 20,000-task chain read 18 rows a task.
 * The one active task is a subquery of its own, run for each running run: as NOT EXISTS, with statistics
 * older than a run, PostgreSQL made it an anti-join that read every active task for each running run.
 * A run settled so ends when its last task did, not at the settling (as refreshRunState dates it too): settled
 * by prune's own call, a run whose tasks ended weeks ago was dated now, and `prune --older-than` kept it.
 */
export async function settleRuns(db: pg.Pool | pg.ClientBase, names: SchemaNames): Promise<number> {
  const result = await db.query(
    `UPDATE ${names.runs} r
        SET state = CASE WHEN EXISTS (SELECT 1 FROM ${names.tasks} x WHERE x.run_id = r.id AND x.state = 'failed') THEN 'failed'
                         WHEN EXISTS (SELECT 1 FROM ${names.tasks} x WHERE x.run_id = r.id AND x.state = 'cancelled') THEN 'cancelled'
                         ELSE 'succeeded' END,
            finished_at = COALESCE((SELECT max(x.finished_at) FROM ${names.tasks} x WHERE x.run_id = r.id), now())
      WHERE r.state = 'running'
        AND (SELECT true FROM ${names.tasks} x WHERE x.run_id = r.id AND x.state IN ('blocked', 'queued', 'running') LIMIT 1) IS NULL`,
  );
  return result.rowCount ?? 0;
}

/** Wakes idle workers once the transaction commits (NOTIFY is transactional). */
export async function notifyWorkers(client: pg.ClientBase, names: SchemaNames, payload = ""): Promise<void> {
  await client.query("SELECT pg_notify($1, $2)", [names.channel, payload]);
}
