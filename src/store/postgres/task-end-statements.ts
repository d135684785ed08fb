import type { SchemaNames } from "./names.js";
import { FOLD_LOCK_CLASS } from "./task-ends.js";

/**
 * Migration 18: each statement that changes tasks' states appends one row to `task_end_changes` for each
 * pair of states it moved tasks between, with how many (`n`), instead of one row for each task. Migration
 * 15's row triggers cost every lease and every end an insert of its own (no-op tasks ran 11-16% slower),
 * and a submit of 100,000 tasks or a prune of them wrote 100,000 rows for the sweep to fold.
 *
 * Statement triggers with transition tables, one for each event: PostgreSQL allows transition tables on
 * neither a trigger of several events nor one for an UPDATE OF a column list. So the UPDATE trigger runs
 * on every UPDATE of tasks (a heartbeat's too), and appends nothing when no state changed.
 *
 * The rows migration 15 appended stand for one change each: `n` starts at 1 for them. The fold and
 * `count_tasks()` add up `n` rather than count rows; a worker of an earlier version calls the same two
 * functions by name, and so keeps the same totals. Dropping and making the triggers locks the tasks
 * against writers until this migration commits: no change is recorded by both kinds, or by neither.
 */
export function taskEndStatementsSql({ quoted, tasks, schema }: SchemaNames): string {
  const [ends, changes] = [`${quoted}.task_ends`, `${quoted}.task_end_changes`];
  const safe = "SECURITY DEFINER SET search_path = pg_catalog, pg_temp";
  return `
    -- The tasks first, then the changes, as a writer locks them: a writer between the two could not wait on this.
    DROP TRIGGER tasks_state_changed ON ${tasks};
    DROP TRIGGER tasks_added_or_removed ON ${tasks};
    DROP FUNCTION ${quoted}.record_task_end_change();
    ALTER TABLE ${changes} ADD COLUMN n bigint NOT NULL DEFAULT 1;

    -- added: the rows as the statement left them (INSERT, UPDATE); removed: as they were (UPDATE, DELETE).
    CREATE FUNCTION ${quoted}.record_task_end_changes() RETURNS trigger
    LANGUAGE plpgsql ${safe} AS $fn$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO ${changes} (old_state, new_state, n) SELECT NULL, a.state, count(*) FROM added a GROUP BY a.state;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO ${changes} (old_state, new_state, n) SELECT r.state, NULL, count(*) FROM removed r GROUP BY r.state;
      ELSE
        INSERT INTO ${changes} (old_state, new_state, n)
        SELECT r.state, a.state, count(*) FROM removed r JOIN added a ON a.id = r.id WHERE a.state <> r.state GROUP BY r.state, a.state;
      END IF;
      RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER tasks_added AFTER INSERT ON ${tasks} REFERENCING NEW TABLE AS added
      FOR EACH STATEMENT EXECUTE FUNCTION ${quoted}.record_task_end_changes();
    CREATE TRIGGER tasks_changed AFTER UPDATE ON ${tasks} REFERENCING OLD TABLE AS removed NEW TABLE AS added
      FOR EACH STATEMENT EXECUTE FUNCTION ${quoted}.record_task_end_changes();
    CREATE TRIGGER tasks_removed AFTER DELETE ON ${tasks} REFERENCING OLD TABLE AS removed
      FOR EACH STATEMENT EXECUTE FUNCTION ${quoted}.record_task_end_changes();

    CREATE OR REPLACE FUNCTION ${quoted}.fold_task_ends() RETURNS void
    LANGUAGE plpgsql ${safe} AS $fn$
    BEGIN
      IF NOT pg_try_advisory_xact_lock(${FOLD_LOCK_CLASS}, hashtext('${schema}')) THEN
        RETURN;
      END IF;
      WITH gone AS (DELETE FROM ${changes} RETURNING old_state, new_state, n),
           moved AS (SELECT v.state, sum(v.n) AS n
                       FROM gone g, LATERAL (VALUES (g.old_state, -g.n), (g.new_state, g.n)) AS v(state, n)
                      WHERE v.state IS NOT NULL GROUP BY v.state)
      INSERT INTO ${ends} AS e (state, count) SELECT m.state, m.n FROM moved m
      ON CONFLICT (state) DO UPDATE SET count = e.count + EXCLUDED.count;
    END
    $fn$;

    CREATE OR REPLACE FUNCTION ${quoted}.count_tasks() RETURNS TABLE (state text, count bigint)
    LANGUAGE sql STABLE ${safe} AS $fn$
      SELECT x.state, sum(x.n)::bigint
        FROM (SELECT e.state, e.count FROM ${ends} e
              UNION ALL SELECT c.new_state, sum(c.n) FROM ${changes} c WHERE c.new_state IS NOT NULL GROUP BY c.new_state
              UNION ALL SELECT c.old_state, -sum(c.n) FROM ${changes} c WHERE c.old_state IS NOT NULL GROUP BY c.old_state) AS x(state, n)
       GROUP BY x.state
    $fn$;
  `;
}
