import { TaskqError } from "../../errors.js";
import type { SchemaNames } from "./names.js";

/** SQLSTATE of the refusal of a new run id that another run's id is but for case (see runIdCaseSql). */
const RUN_ID_CASE_SQLSTATE = "TQ001";

/**
 * Migration 23: a new run whose id is an existing run's but for case (`build-1` beside `Build-1`) is refused. A run's id names
 * its log folder on every worker (`<log-dir>/<run-id>`), and a file system that does not tell case apart (macOS's and
 * Windows' by default) would make the two runs' folders one, their tasks' logs one file where they share a task id, as a
 * workflow's two task ids the same but for case are refused for theirs. Checked in the database, by a trigger, so that a
 * taskq of an earlier version is refused too (in the trigger's short words, as the database's). Two such ids submitted at
 * the same moment, neither committed as the other looks, both pass: no lock is taken for that rare case, which would
 * make a submit wait, silently, for another's transaction. A submit of an existing run's id, exactly, is not refused (it
 * adds to that run); nor are the runs a store already has that are so named: they stay as they are.
 */
export function runIdCaseSql({ quoted, runs }: SchemaNames): string {
  return `
    CREATE INDEX IF NOT EXISTS runs_id_lower ON ${runs} (lower(id));
    CREATE OR REPLACE FUNCTION ${quoted}.refuse_run_id_case_twin() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
    DECLARE
      twin text;
    BEGIN
      IF EXISTS (SELECT 1 FROM ${runs} WHERE id = NEW.id) THEN
        RETURN NEW;
      END IF;
      SELECT id INTO twin FROM ${runs} WHERE lower(id) = lower(NEW.id) ORDER BY created_at LIMIT 1;
      IF twin IS NOT NULL THEN
        -- The stored run's id in DETAIL, for taskq's words (see runIdCaseError); MESSAGE for an earlier taskq's, which shows it as the database's.
        RAISE EXCEPTION USING ERRCODE = '${RUN_ID_CASE_SQLSTATE}', DETAIL = twin,
          MESSAGE = format('run id %s differs from run %s''s only in case (their log folders would be one where case is not told apart): nothing was submitted', NEW.id, twin);
      END IF;
      RETURN NEW;
    END
    $fn$;
    DROP TRIGGER IF EXISTS runs_id_case ON ${runs};
    CREATE TRIGGER runs_id_case BEFORE INSERT ON ${runs} FOR EACH ROW EXECUTE FUNCTION ${quoted}.refuse_run_id_case_twin();
  `;
}

/**
 * The trigger's refusal (see runIdCaseSql) of `runId` as taskq's error: STORE_RUN_ID_CASE, naming the stored run (the
 * error's DETAIL), exit 2 as a run id given to another file is (nothing was submitted). Undefined for any other error.
 */
export function runIdCaseError(error: unknown, runId: string): TaskqError | undefined {
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown };
  if (code !== RUN_ID_CASE_SQLSTATE || typeof detail !== "string") return undefined;
  const message =
    `run id ${JSON.stringify(runId)} differs from run ${detail}'s only in case: a run's id names its log folder on every worker, and where the file system does not tell case apart (macOS, Windows) the two would share one; ` +
    `nothing was submitted: submit it as ${detail} to add to that run, or under another --run-id`;
  return new TaskqError("STORE_RUN_ID_CASE", message, { cause: error, exitCode: 2 });
}
