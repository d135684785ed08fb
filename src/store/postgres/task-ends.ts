import type { SchemaNames } from "./names.js";

/** First key of the advisory lock one fold of `task_end_changes` holds (the second is the schema). */
export const FOLD_LOCK_CLASS = 0x656e_6473; // "ends"

/**
 * Migration 15: the count of tasks by state without reading every task. A count of the tasks table
 * (the metrics' `taskq_tasks`) took seconds on a store of millions of rows. Each change of a task's
 * state (its insert and delete too) appends one row to `task_end_changes`, in the transaction that made
 * it; the sweep folds those rows into the totals of `task_ends` (`fold_task_ends`), in one transaction
 * that deletes them. `count_tasks()` reads the totals and the changes not yet folded in one snapshot: the
 * same counts as a count of the table at that moment, in the time of a read of a few small tables.
 *
 * SECURITY DEFINER (owned by the role that migrates), with a fixed search path: a role given the store's
 * tables before these two were added (GRANT ... ON ALL TABLES) still changes, counts and folds tasks.
 * The totals start from a count made once the triggers are in place: their lock keeps writers out until
 * this migration commits, so no change is counted twice or missed.
 */
export function taskEndsSql({ quoted, tasks, schema }: SchemaNames): string {
  const [ends, changes] = [`${quoted}.task_ends`, `${quoted}.task_end_changes`];
  const safe = "SECURITY DEFINER SET search_path = pg_catalog, pg_temp";
  return `
    CREATE TABLE ${ends} (state text PRIMARY KEY, count bigint NOT NULL);
    -- A state a task left (null: it was inserted) and the one it took (null: it was deleted).
    CREATE TABLE ${changes} (old_state text, new_state text);

    CREATE FUNCTION ${quoted}.record_task_end_change() RETURNS trigger
    LANGUAGE plpgsql ${safe} AS $fn$
    BEGIN
      INSERT INTO ${changes} (old_state, new_state)
      VALUES (CASE WHEN TG_OP <> 'INSERT' THEN OLD.state END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.state END);
      RETURN NULL;
    END
    $fn$;
    -- Only a change of state costs an insert: heartbeats, tails and the like do not.
    CREATE TRIGGER tasks_state_changed AFTER UPDATE OF state ON ${tasks}
      FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION ${quoted}.record_task_end_change();
    CREATE TRIGGER tasks_added_or_removed AFTER INSERT OR DELETE ON ${tasks}
      FOR EACH ROW EXECUTE FUNCTION ${quoted}.record_task_end_change();

    INSERT INTO ${ends} (state, count) SELECT t.state, count(*) FROM ${tasks} t GROUP BY t.state;

    -- One fold at a time (another one running: this one has nothing to do).
    CREATE FUNCTION ${quoted}.fold_task_ends() RETURNS void
    LANGUAGE plpgsql ${safe} AS $fn$
    BEGIN
      IF NOT pg_try_advisory_xact_lock(${FOLD_LOCK_CLASS}, hashtext('${schema}')) THEN
        RETURN;
      END IF;
      WITH gone AS (DELETE FROM ${changes} RETURNING old_state, new_state),
           moved AS (SELECT v.state, sum(v.n) AS n
                       FROM gone g, LATERAL (VALUES (g.old_state, -1), (g.new_state, 1)) AS v(state, n)
                      WHERE v.state IS NOT NULL GROUP BY v.state)
      INSERT INTO ${ends} AS e (state, count) SELECT m.state, m.n FROM moved m
      ON CONFLICT (state) DO UPDATE SET count = e.count + EXCLUDED.count;
    END
    $fn$;

    CREATE FUNCTION ${quoted}.count_tasks() RETURNS TABLE (state text, count bigint)
    LANGUAGE sql STABLE ${safe} AS $fn$
      SELECT x.state, sum(x.n)::bigint
        FROM (SELECT e.state, e.count FROM ${ends} e
              UNION ALL SELECT c.new_state, count(*) FROM ${changes} c WHERE c.new_state IS NOT NULL GROUP BY c.new_state
              UNION ALL SELECT c.old_state, -count(*) FROM ${changes} c WHERE c.old_state IS NOT NULL GROUP BY c.old_state) AS x(state, n)
       GROUP BY x.state
    $fn$;
  `;
}
