import type { SchemaNames } from "./names.js";

/**
 * Migration 22: a redrive by a taskq of an earlier version forgets the workers of the attempts before it, as this version's
 * does. A redrive starts a task's attempts again at 0 and drops its stored lines (`tail_attempt` null); a version before
 * migration 21 left `tail_worker_id` and `tail_worker_attempt` as they were, and one before migration 20 `failed_worker_id`
 * and `failed_attempt`. Its workers, which set neither, then ran attempts of the same numbers again: lines of the new
 * attempt 1 matched the `tail_worker_attempt` 1 from before the redrive, and `status` named that attempt's worker as the one
 * whose log has them (where another worker's log has them); a task waiting for its retry after the new attempt 1, the worker
 * of the attempt 1 before. In every statement that changes a task's attempts or its lines' attempt, this trigger clears the
 * worker of lines the task no longer has, and of a failed attempt past those it counts: this version's statements never leave
 * either (a lease given back uncounts only an attempt that did not fail), so it changes nothing they do.
 *
 * Tasks a redrive of such a version left so, not leased since, are cleared here too: queued, their attempts 0 (read through
 * the index of queued tasks, not every task, while the trigger's lock keeps workers' writes waiting). Those leased since
 * cannot be told apart.
 */
export function earlierRedriveSql({ quoted, tasks }: SchemaNames): string {
  const staleTail = "NEW.tail_attempt IS NULL AND (NEW.tail_worker_id IS NOT NULL OR NEW.tail_worker_attempt IS NOT NULL)";
  const staleFailed = "NEW.failed_attempt > NEW.attempts";
  return `
    CREATE OR REPLACE FUNCTION ${quoted}.forget_workers_of_uncounted_attempts() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      IF ${staleTail} THEN
        NEW.tail_worker_id := NULL;
        NEW.tail_worker_attempt := NULL;
      END IF;
      IF ${staleFailed} THEN
        NEW.failed_worker_id := NULL;
        NEW.failed_attempt := NULL;
      END IF;
      RETURN NEW;
    END
    $fn$;
    DROP TRIGGER IF EXISTS tasks_attempts_reset ON ${tasks};
    CREATE TRIGGER tasks_attempts_reset BEFORE UPDATE OF attempts, tail_attempt ON ${tasks}
      FOR EACH ROW WHEN ((${staleTail}) OR ${staleFailed}) EXECUTE FUNCTION ${quoted}.forget_workers_of_uncounted_attempts();

    UPDATE ${tasks} SET tail_worker_id = NULL, tail_worker_attempt = NULL
     WHERE state = 'queued' AND attempts = 0 AND tail_attempt IS NULL AND (tail_worker_id IS NOT NULL OR tail_worker_attempt IS NOT NULL);
    UPDATE ${tasks} SET failed_worker_id = NULL, failed_attempt = NULL WHERE state = 'queued' AND attempts = 0 AND failed_attempt > 0;
  `;
}
