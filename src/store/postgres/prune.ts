import type pg from "pg";
import { settleRuns } from "./graph.js";
import type { SchemaNames } from "./names.js";

export interface PruneResult {
  /** Runs that ended before this moment (the database's clock) were deleted, or would be. */
  before: string;
  /** Their ids, sorted. */
  runs: string[];
}

/**
 * Deletes the runs that ended more than `olderThanMs` ago, with their tasks and
 * dependencies (the foreign keys cascade). A running run is never deleted, however old:
 * nor is one whose tasks are still active (a redrive or a submit racing with this). Runs
 * whose last task ended but whose state was not yet settled are settled first, so they
 * count from when they ended. With `dryRun`, only lists them.
 */
export async function pruneRuns(db: pg.Pool, names: SchemaNames, olderThanMs: number, dryRun: boolean): Promise<PruneResult> {
  await settleRuns(db, names);
  const cutoff = await db.query<{ before: Date }>("SELECT now() - make_interval(secs => $1::double precision / 1000) AS before", [olderThanMs]);
  const before = cutoff.rows[0]!.before;
  const which = `r.state <> 'running' AND r.finished_at < $1
     AND NOT EXISTS (SELECT 1 FROM ${names.tasks} t WHERE t.run_id = r.id AND t.state IN ('blocked', 'queued', 'running'))`;
  const result = await db.query<{ id: string }>(
    dryRun ? `SELECT r.id FROM ${names.runs} r WHERE ${which}` : `DELETE FROM ${names.runs} r WHERE ${which} RETURNING r.id`,
    [before],
  );
  return { before: before.toISOString(), runs: result.rows.map((row) => row.id).sort() };
}
