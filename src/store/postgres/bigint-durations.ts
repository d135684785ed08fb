import { completeAndLeaseFunction, hotPathNames, type HotPathGeneration } from "./batch-functions.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 6: milliseconds as bigint. A workflow's durations go up to 30 days (2,592,000,000
 * ms), past int's 2,147,483,647: `timeout: 720h` or `backoff: { max: 600h }` failed the submit,
 * a long lease every lease. The columns are widened, and the hot path gets functions with
 * bigint `p_lease_ms` and `timeout_ms`: `lease_tasks_v6` and `complete_and_lease_v6`, new names
 * because a worker of an earlier version prepared its calls of the old ones, and a prepared
 * call fails for good once its result type changes ("cached plan must not change result type").
 * The old ones stay for such a worker, unchanged but for a timeout past int's range, cut to its
 * top (24.8 days, as long as its timer can wait anyway). pg returns bigint as text: the readers
 * convert it.
 */
export function bigintDurationsSql(names: SchemaNames): string {
  return `
    ALTER TABLE ${names.tasks} ALTER COLUMN backoff_base_ms TYPE bigint, ALTER COLUMN backoff_max_ms TYPE bigint,
                               ALTER COLUMN timeout_ms TYPE bigint;
    ${leaseTasksFunction(names, false, "first")}
    ${leaseTasksFunction(names, true, "first")}
    ${leaseTasksFunction(names, false, "v6")}
    ${leaseTasksFunction(names, true, "v6")}
    ${completeAndLeaseFunction(names, false, true, "v6")}
    ${completeAndLeaseFunction(names, true, true, "v6")}
  `;
}

/**
 * `lease_tasks` as migrations 2 (every run) and 4 (`byRun`: with `p_run`, one run's, or every
 * run's when it is null) made it; `generation` "v6": `lease_tasks_v6`, with bigint durations;
 * "v7" (migration 7): `lease_tasks_v7`, whose rows end with the task's `retry_on`; "first": the
 * old function with int ones. Sorting is switched off inside: the fetch must walk the queued rows'
 * index in order and stop after `p_limit` rows, even on a young table whose missing statistics
 * make "fetch all queued rows, then sort" look cheaper. `byId` (migration 10, "each"): each picked row is
 * then updated on its own, by its id, which only the primary key answers (see `leaseByIdSql`); "all"
 * (migration 11): the picked rows are updated in one statement, by the array of their ids (see
 * `leaseByIdsSql`).
 */
export function leaseTasksFunction({ quoted, tasks }: SchemaNames, byRun: boolean, generation: HotPathGeneration, byId: false | "each" | "all" = false): string {
  const { suffix, durations } = hotPathNames(generation);
  const name = `lease_tasks${suffix}`;
  const wide = generation !== "first";
  const [retryOnColumn, retryOnValue] = generation === "v7" ? [", retry_on int[]", ", t.retry_on"] : ["", ""];
  const pick = `SELECT q.id FROM ${tasks} q
         WHERE ${byRun ? "q.run_id = p_run AND " : ""}q.state = 'queued' AND q.not_before <= now()
         ORDER BY q.priority DESC, q.seq
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED`;
  const update = (where: string) => `UPDATE ${tasks} t
         SET state = 'running', attempts = t.attempts + 1, lease_token = gen_random_uuid(),
             lease_expires_at = now() + p_lease_ms * interval '1 millisecond', worker_id = p_worker,
             started_at = now(), cancel_requested = false
        ${where}
      RETURNING t.id, t.run_id, t.key, t.type, t.run, t.env, t.cwd, t.priority, t.seq, t.attempts, t.max_attempts,
                ${wide ? "t.timeout_ms" : "LEAST(t.timeout_ms, 2147483647)::int"}, t.lease_token,
                (extract(epoch FROM now() - GREATEST(t.queued_at, t.not_before)) * 1000)::float8${retryOnValue}`;
  return `
    CREATE OR REPLACE FUNCTION ${quoted}.${name}(p_worker text, p_limit int, p_lease_ms ${durations}${byRun ? ", p_run text" : ""})
    RETURNS TABLE (id bigint, run_id text, key text, type text, run text, env jsonb, cwd text, priority int,
                   seq bigint, attempts int, max_attempts int, timeout_ms ${durations}, lease_token uuid, queue_wait_ms float8${retryOnColumn})
    LANGUAGE plpgsql VOLATILE SET enable_sort = off SET enable_bitmapscan = off${byId === "all" ? " SET enable_seqscan = off" : ""} AS $fn$
    #variable_conflict use_column
    ${byId === "each" ? `DECLARE
      v_id bigint;
    ` : byId === "all" ? `DECLARE
      v_ids bigint[];
    ` : ""}BEGIN
      ${byRun ? `IF p_run IS NULL THEN
        RETURN QUERY SELECT * FROM ${quoted}.${name}(p_worker, p_limit, p_lease_ms);
        RETURN;
      END IF;` : ""}
      ${byId === "each" ? `FOR v_id IN ${pick} LOOP
        RETURN QUERY
        ${update("WHERE t.id = v_id")};
      END LOOP;` : byId === "all" ? `v_ids := ARRAY(${pick});
      IF cardinality(v_ids) > 0 THEN
        RETURN QUERY
        ${update("WHERE t.id = ANY(v_ids)")};
      END IF;` : `RETURN QUERY
      WITH picked AS (
        ${pick})
      ${update("FROM picked WHERE t.id = picked.id")};`}
    END
    $fn$;
  `;
}
