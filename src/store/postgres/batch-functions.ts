import type { SchemaNames } from "./names.js";

/**
 * Migration 3: `complete_and_lease`, the worker's whole hot path in one round
 * trip and one commit. It records the successes that ended since the last call
 * (like `complete_success`, for several tokens), then leases up to `p_limit`
 * tasks (via `lease_tasks`, so it sees the dependents it just unblocked), and
 * when it leased none, says how long until the nearest delayed task.
 *
 * Rows: 'ended' (lease_token = the token presented, run_id, unblocked), one per
 * token that still owned its task (a stale token gets none); 'leased' (the
 * lease_tasks columns); 'idle' (delay_ms, null when nothing is queued).
 *
 * Dependents are unblocked in (run_id, key) order across the whole batch, so
 * two batches touching the same dependents lock them in the same order.
 */
export function completeAndLeaseSql(names: SchemaNames): string {
  return completeAndLeaseFunction(names, false);
}

/**
 * Migration 4: `lease_tasks` and `complete_and_lease` with a last argument, `p_run`:
 * only that run's tasks are leased (`taskq run --store` works on its own run, never on
 * another's, which would run it with this process's environment). Overloads, so a
 * worker of the previous version, calling the functions without it, keeps working.
 * The index keeps a run's fetch a walk of its own queued rows, whatever other runs queue.
 */
export function runFilterSql(names: SchemaNames): string {
  const { quoted, tasks } = names;
  return `
    CREATE INDEX tasks_fetch_run ON ${tasks} (run_id, priority DESC, seq) WHERE state = 'queued';

    CREATE FUNCTION ${quoted}.lease_tasks(p_worker text, p_limit int, p_lease_ms int, p_run text)
    RETURNS TABLE (id bigint, run_id text, key text, type text, run text, env jsonb, cwd text, priority int,
                   seq bigint, attempts int, max_attempts int, timeout_ms int, lease_token uuid, queue_wait_ms float8)
    LANGUAGE plpgsql VOLATILE SET enable_sort = off SET enable_bitmapscan = off AS $fn$
    #variable_conflict use_column
    BEGIN
      IF p_run IS NULL THEN
        RETURN QUERY SELECT * FROM ${quoted}.lease_tasks(p_worker, p_limit, p_lease_ms);
        RETURN;
      END IF;
      RETURN QUERY
      WITH picked AS (
        SELECT q.id FROM ${tasks} q
         WHERE q.run_id = p_run AND q.state = 'queued' AND q.not_before <= now()
         ORDER BY q.priority DESC, q.seq
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED)
      UPDATE ${tasks} t
         SET state = 'running', attempts = t.attempts + 1, lease_token = gen_random_uuid(),
             lease_expires_at = now() + p_lease_ms * interval '1 millisecond', worker_id = p_worker,
             started_at = now(), cancel_requested = false
        FROM picked WHERE t.id = picked.id
      RETURNING t.id, t.run_id, t.key, t.type, t.run, t.env, t.cwd, t.priority, t.seq, t.attempts, t.max_attempts,
                t.timeout_ms, t.lease_token,
                (extract(epoch FROM now() - GREATEST(t.queued_at, t.not_before)) * 1000)::float8;
    END
    $fn$;
    ${completeAndLeaseFunction(names, true)}
  `;
}

/**
 * Migration 5: each task keeps the lease token of the attempt whose end was recorded last
 * (`ended_token`), and the state that end moved it to (`ended_as`). A worker whose reply was
 * lost after the commit retries the completion and finds its token owning nothing: these
 * say whether the end it retries is the one recorded (see `readRecordedEnd`), so a recorded
 * result is not reported lost. The success functions are replaced to fill them (same
 * signatures: a worker of the previous version keeps working); the other ends are recorded
 * in complete.ts.
 */
export function recordedEndSql(names: SchemaNames): string {
  return `
    ALTER TABLE ${names.tasks} ADD COLUMN ended_token uuid, ADD COLUMN ended_as text;
    ${completeSuccessFunction(names, true)}
    ${completeAndLeaseFunction(names, false, true)}
    ${completeAndLeaseFunction(names, true, true)}
  `;
}

/*
 * The rows a success changes, found by key. Before migration 9 each condition also named the state the row
 * must be in (`t.state = 'running'`, `t.state = 'blocked'`), from which PostgreSQL infers the condition of
 * the partial index of active tasks (tasks_active): with statistics older than the run (autovacuum off, or
 * a run submitted in the last minute) it thinks that index nearly empty, and read it whole, every active
 * task, to find one row, for each success and each dependent. A chain of 100,000 tasks ran at a few dozen
 * tasks a second. `unique` (migration 9) tests the state with IS NOT DISTINCT FROM (the same, as state is
 * never null), from which PostgreSQL infers no index condition: the only index left is the unique one.
 */

/**
 * `next_delay_ms(p_run)` (migration 9): milliseconds until the earliest queued task (of run `p_run`; of
 * every run when null) may start, null when none is queued: the idle row of `complete_and_lease`. Its
 * queued rows are read in lease order, with sorting off, as `lease_tasks` reads them: through their own
 * index, never through tasks_active (every active task), which with stale statistics looks as small.
 */
export function nextDelayFunction({ quoted, tasks }: SchemaNames): string {
  return `
    CREATE OR REPLACE FUNCTION ${quoted}.next_delay_ms(p_run text) RETURNS float8
    LANGUAGE sql STABLE SET enable_sort = off SET enable_bitmapscan = off AS $fn$
      SELECT (extract(epoch FROM min(f.not_before) - now()) * 1000)::float8
        FROM (SELECT q.not_before FROM ${tasks} q
               WHERE q.state = 'queued' AND (p_run IS NULL OR q.run_id = p_run)
               ORDER BY q.priority DESC, q.seq OFFSET 0) f
    $fn$;
  `;
}

/** The task whose running attempt holds lease `token` (a plpgsql expression), as `t`. */
function runningTokenSql(token: string, unique: boolean): string {
  return `t.lease_token = ${token} AND t.state ${unique ? "IS NOT DISTINCT FROM" : "="} 'running'`;
}

/**
 * Dependent `key` of run `run` (plpgsql expressions), as `t`, if blocked. `unique`: its id is found by
 * run and key alone (the unique (run_id, key) index), then the row by that id.
 */
function blockedDependentSql(tasks: string, run: string, key: string, unique: boolean): string {
  return unique
    ? `t.id = (SELECT x.id FROM ${tasks} x WHERE x.run_id = ${run} AND x.key = ${key}) AND t.state IS NOT DISTINCT FROM 'blocked'`
    : `t.run_id = ${run} AND t.key = ${key} AND t.state = 'blocked'`;
}

/**
 * `complete_success` (migration 2): records one successful attempt in one round trip: ends the
 * task, unblocks its dependents, settles the run. `recordsEnd` (migration 5) also sets
 * `ended_token` and `ended_as`; `unique` (migration 9) finds the task and its dependents through unique indexes only;
 * `settlesIdle` (migration 12) looks for the run's active tasks only when it found none among the dependents;
 * `clearsError` (migration 19) clears the error an earlier attempt left, as it replaces its exit code and signal.
 */
export function completeSuccessFunction({ quoted, tasks, deps, runs, channel }: SchemaNames, recordsEnd: boolean, unique = false, settlesIdle = false, clearsError = false): string {
  return `
    CREATE ${recordsEnd ? "OR REPLACE " : ""}FUNCTION ${quoted}.complete_success(p_token uuid, p_exit_code int, p_tail text[])
    RETURNS TABLE (run_id text, unblocked text[], run_finished boolean)
    LANGUAGE plpgsql VOLATILE AS $fn$
    #variable_conflict use_column
    DECLARE
      v_run text;
      v_key text;
      v_dependent text;
      v_state text;${settlesIdle ? `
      v_active boolean := false;` : ""}
    BEGIN
      UPDATE ${tasks} t
         SET state = 'succeeded', finished_at = now(), lease_token = NULL, lease_expires_at = NULL, waiting_on = 0,
             exit_code = p_exit_code, signal = NULL, timed_out = false, tail = p_tail${recordsEnd ? ", ended_token = p_token, ended_as = 'succeeded'" : ""}${clearsError ? ", last_error = NULL" : ""}
       WHERE ${runningTokenSql("p_token", unique)}
       RETURNING t.run_id, t.key INTO v_run, v_key;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      -- One dependent at a time, by its unique key: never a scan of the run, whatever the statistics say.
      unblocked := '{}';
      FOR v_dependent IN SELECT d.task_key FROM ${deps} d WHERE d.run_id = v_run AND d.depends_on_key = v_key LOOP
        UPDATE ${tasks} t
           SET waiting_on = t.waiting_on - 1,
               state = CASE WHEN t.waiting_on <= 1 THEN 'queued' ELSE t.state END,
               queued_at = CASE WHEN t.waiting_on <= 1 THEN now() ELSE t.queued_at END
         WHERE ${blockedDependentSql(tasks, "v_run", "v_dependent", unique)}
         RETURNING t.state INTO v_state;
        IF v_state = 'queued' THEN
          unblocked := unblocked || v_dependent;
        END IF;${settlesIdle ? `
        v_active := v_active OR v_state IS NOT NULL;` : ""}
        v_state := NULL;
      END LOOP;
      IF cardinality(unblocked) > 0 THEN
        PERFORM pg_notify('${channel}', v_run);
      END IF;
      -- Settle the run when nothing else in it is active. Two last tasks ending at once may each see the
      -- other still running; the sweeper's settleRuns and runStatus catch that case.${settlesIdle ? `
      -- A dependent found blocked is active, and locked by this transaction until it commits: no need to look.
      IF v_active THEN
        run_finished := false;
      ELSE
        ${settleRunSql(runs, tasks)}
        run_finished := FOUND;
      END IF;` : `
      ${settleRunSql(runs, tasks)}
      run_finished := FOUND;`}
      run_id := v_run;
      RETURN NEXT;
    END
    $fn$;
  `;
}

/**
 * Generations of the hot-path functions, `lease_tasks` and `complete_and_lease`: "first" (migrations 2 to 5,
 * int durations), "v6" (migration 6: `..._v6`, bigint durations), "v7" (migration 7: `..._v7`, which also
 * return each leased task's `retry_on`). A new generation has new names: a worker of an earlier version
 * prepared its calls of the old ones, and a prepared call fails for good once its result type changes.
 */
export type HotPathGeneration = "first" | "v6" | "v7";

/** The functions' name suffix and the type of their durations. */
export function hotPathNames(generation: HotPathGeneration): { suffix: string; durations: string } {
  return generation === "first" ? { suffix: "", durations: "int" } : { suffix: `_${generation}`, durations: "bigint" };
}

/**
 * `complete_and_lease`; `byRun` adds `p_run`, which the lease and the idle delay keep to;
 * `recordsEnd` (migration 5, replacing the function) sets `ended_token` and `ended_as`;
 * `generation` "v6" (migration 6) makes `complete_and_lease_v6`, with bigint durations, leasing through
 * `lease_tasks_v6`; "v7" (migration 7) `complete_and_lease_v7`, whose leased rows carry `retry_on` too;
 * `unique` (migration 9) finds the task and its dependents through unique indexes only; `settlesIdle`
 * (migration 12) looks for a run's active tasks only when none of the dependents it found is one;
 * `delaysWhenShort` (migration 16) returns the idle row whenever it leased fewer than `p_limit`, not only none;
 * `notifiesLeftQueued` (migration 17) wakes workers only when a dependent it freed is still queued once its
 * own lease is done (one it leased itself is no work for another worker); `clearsError` (migration 19) clears the
 * error an earlier attempt of a task that succeeds left.
 */
export function completeAndLeaseFunction(
  { quoted, tasks, deps, runs, channel }: SchemaNames,
  byRun: boolean,
  recordsEnd = false,
  generation: HotPathGeneration = "first",
  unique = false,
  settlesIdle = false,
  delaysWhenShort = false,
  notifiesLeftQueued = false,
  clearsError = false,
): string {
  const { suffix: version, durations } = hotPathNames(generation);
  // Migration 7's rows end with the leased task's retry_on (null in the other kinds of row).
  const [retryOnColumn, retryOnNull, retryOnLeased] = generation === "v7" ? [", retry_on int[]", ", NULL::int[]", ", l.retry_on"] : ["", "", ""];
  return `
    CREATE ${recordsEnd ? "OR REPLACE " : ""}FUNCTION ${quoted}.complete_and_lease${version}(p_done jsonb, p_worker text, p_limit int, p_lease_ms ${durations}${byRun ? ", p_run text" : ""})
    RETURNS TABLE (kind text, lease_token uuid, run_id text, unblocked text[], delay_ms float8,
                   id bigint, key text, type text, run text, env jsonb, cwd text, priority int, seq bigint,
                   attempts int, max_attempts int, timeout_ms ${durations}, queue_wait_ms float8${retryOnColumn})
    LANGUAGE plpgsql VOLATILE AS $fn$
    #variable_conflict use_column
    DECLARE
      v_done record;
      v_dep record;
      v_run text;
      v_key text;
      v_state text;
      v_tokens uuid[] := '{}';
      v_runs text[] := '{}';
      v_dep_runs text[] := '{}';
      v_dep_keys text[] := '{}';
      v_dep_source int[] := '{}';
      v_freed_source int[] := '{}';
      v_freed_keys text[] := '{}';${notifiesLeftQueued ? `
      v_freed_runs text[] := '{}';` : ""}${settlesIdle ? `
      v_active_runs text[] := '{}';` : ""}
      v_leased int := 0;
    BEGIN
      -- One task at a time, by its unique lease token: never a scan, whatever the statistics say.
      FOR v_done IN SELECT x.token, x.exit_code, x.tail FROM jsonb_to_recordset(p_done) AS x(token uuid, exit_code int, tail text[]) LOOP
        UPDATE ${tasks} t
           SET state = 'succeeded', finished_at = now(), lease_token = NULL, lease_expires_at = NULL, waiting_on = 0,
               exit_code = coalesce(v_done.exit_code, 0), signal = NULL, timed_out = false, tail = coalesce(v_done.tail, '{}')${
                 recordsEnd ? ", ended_token = v_done.token, ended_as = 'succeeded'" : ""}${clearsError ? ", last_error = NULL" : ""}
         WHERE ${runningTokenSql("v_done.token", unique)}
         RETURNING t.run_id, t.key INTO v_run, v_key;
        IF FOUND THEN
          v_tokens := v_tokens || v_done.token;
          v_runs := v_runs || v_run;
          FOR v_dep IN SELECT d.task_key FROM ${deps} d WHERE d.run_id = v_run AND d.depends_on_key = v_key LOOP
            v_dep_runs := v_dep_runs || v_run;
            v_dep_keys := v_dep_keys || v_dep.task_key;
            v_dep_source := v_dep_source || cardinality(v_tokens);
          END LOOP;
        END IF;
      END LOOP;
      -- A dependent of several tasks in the batch counts them all at once; it is reported by the last of them.
      FOR v_dep IN SELECT x.r, x.k, count(*)::int AS n, max(x.s) AS s
                     FROM unnest(v_dep_runs, v_dep_keys, v_dep_source) AS x(r, k, s)
                    GROUP BY x.r, x.k ORDER BY x.r, x.k LOOP
        UPDATE ${tasks} t
           SET waiting_on = t.waiting_on - v_dep.n,
               state = CASE WHEN t.waiting_on <= v_dep.n THEN 'queued' ELSE t.state END,
               queued_at = CASE WHEN t.waiting_on <= v_dep.n THEN now() ELSE t.queued_at END
         WHERE ${blockedDependentSql(tasks, "v_dep.r", "v_dep.k", unique)}
         RETURNING t.state INTO v_state;
        IF v_state = 'queued' THEN
          v_freed_source := v_freed_source || v_dep.s;
          v_freed_keys := v_freed_keys || v_dep.k;${notifiesLeftQueued ? `
          v_freed_runs := v_freed_runs || v_dep.r;` : ""}
        END IF;${settlesIdle ? `
        IF v_state IS NOT NULL THEN
          v_active_runs := v_active_runs || v_dep.r;
        END IF;` : ""}
        v_state := NULL;
      END LOOP;
${notifiesLeftQueued ? "" : `      IF cardinality(v_freed_keys) > 0 THEN
        PERFORM pg_notify('${channel}', '');
      END IF;
`}      -- Settle each run with nothing active left (see complete_success for the race the sweeper catches).${settlesIdle ? `
      -- A run with a dependent found blocked has an active task, locked by this transaction: no need to look.` : ""}
      FOR v_run IN SELECT DISTINCT r FROM unnest(v_runs) AS r${settlesIdle ? " WHERE r <> ALL (v_active_runs)" : ""} ORDER BY 1 LOOP
        ${settleRunSql(runs, tasks)}
      END LOOP;
      RETURN QUERY
        SELECT 'ended'::text, v_tokens[i], v_runs[i],
               ARRAY(SELECT f.k FROM unnest(v_freed_source, v_freed_keys) AS f(s, k) WHERE f.s = i),
               NULL::float8, NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::jsonb, NULL::text, NULL::int,
               NULL::bigint, NULL::int, NULL::int, NULL::${durations}, NULL::float8${retryOnNull}
          FROM generate_subscripts(v_tokens, 1) AS i;
      IF p_limit > 0 THEN
        RETURN QUERY
          SELECT 'leased'::text, l.lease_token, l.run_id, NULL::text[], NULL::float8, l.id, l.key, l.type, l.run, l.env,
                 l.cwd, l.priority, l.seq, l.attempts, l.max_attempts, l.timeout_ms, l.queue_wait_ms${retryOnLeased}
            FROM ${quoted}.lease_tasks${version}(p_worker, p_limit, p_lease_ms${byRun ? ", p_run" : ""}) l;
        GET DIAGNOSTICS v_leased = ROW_COUNT;
        IF v_leased ${delaysWhenShort ? "< p_limit" : "= 0"} THEN
          RETURN QUERY
            SELECT 'idle'::text, NULL::uuid, NULL::text, NULL::text[],
                   ${unique ? `${quoted}.next_delay_ms(${byRun ? "p_run" : "NULL"})` : "(extract(epoch FROM min(q.not_before) - now()) * 1000)::float8"},
                   NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::jsonb, NULL::text, NULL::int,
                   NULL::bigint, NULL::int, NULL::int, NULL::${durations}, NULL::float8${retryOnNull}${
              unique ? ";" : `
              FROM ${tasks} q WHERE q.state = 'queued'${byRun ? " AND (p_run IS NULL OR q.run_id = p_run)" : ""};`}
        END IF;
      END IF;${notifiesLeftQueued ? `
      -- Only a freed task this call did not lease is work for another worker; each is found by its unique key.
      IF EXISTS (SELECT 1 FROM unnest(v_freed_runs, v_freed_keys) AS f(r, k)
                  WHERE (SELECT x.state FROM ${tasks} x WHERE x.run_id = f.r AND x.key = f.k) IS NOT DISTINCT FROM 'queued') THEN
        PERFORM pg_notify('${channel}', '');
      END IF;` : ""}
    END
    $fn$;
  `;
}

/**
 * The statement that settles run `v_run` (a plpgsql variable) once none of its tasks is active:
 * failed if one failed, else cancelled if one was, else succeeded. Both ways a task ends use it.
 */
function settleRunSql(runs: string, tasks: string): string {
  return `UPDATE ${runs} r
         SET state = CASE WHEN EXISTS (SELECT 1 FROM ${tasks} x WHERE x.run_id = v_run AND x.state = 'failed') THEN 'failed'
                          WHEN EXISTS (SELECT 1 FROM ${tasks} x WHERE x.run_id = v_run AND x.state = 'cancelled') THEN 'cancelled'
                          ELSE 'succeeded' END,
             finished_at = now()
       WHERE r.id = v_run AND r.state = 'running'
         AND NOT EXISTS (SELECT 1 FROM ${tasks} x WHERE x.run_id = v_run AND x.state IN ('blocked', 'queued', 'running'));`;
}
