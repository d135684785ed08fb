import type pg from "pg";
import { settleRuns } from "./graph.js";
import type { SchemaNames } from "./names.js";
import { LONG_QUERY_TIMEOUT_MS, LONG_STATEMENT_TIMEOUT_SQL, timedQuery } from "./timeouts.js";
import { retryConflicts, transactionOnce } from "./transaction.js";

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
 *
 * A submit of one of those run ids at the same moment holds its tasks and then wants its run,
 * which the DELETE holds and wants the tasks of: the one that waited first gives way (its lock
 * wait cut short, see LOCK_WAIT_MS, or PostgreSQL ending it as a deadlock), and a prune that lost
 * runs again (the run is then running again, and stays).
 */
export async function pruneRuns(db: pg.Pool, names: SchemaNames, olderThanMs: number, dryRun: boolean): Promise<PruneResult> {
  return retryConflicts(() => pruneOnce(db, names, olderThanMs, dryRun));
}

async function pruneOnce(db: pg.Pool, names: SchemaNames, olderThanMs: number, dryRun: boolean): Promise<PruneResult> {
  await settleRuns(db, names);
  const cutoff = await db.query<{ before: Date }>("SELECT now() - make_interval(secs => $1::double precision / 1000) AS before", [olderThanMs]);
  const before = cutoff.rows[0]!.before;
  const which = `r.state <> 'running' AND r.finished_at < $1
     AND NOT EXISTS (SELECT 1 FROM ${names.tasks} t WHERE t.run_id = r.id AND t.state IN ('blocked', 'queued', 'running'))`;
  // Deleting a long history (every task and dependency of those runs) may rightly take minutes: the server
  // is told so too, in a transaction of the statement's own.
  // A lock held by another session (another prune deleting the same runs) is not waited for long: see LOCK_WAIT_MS.
  const result = await transactionOnce(db, async (client) => {
    await client.query(LONG_STATEMENT_TIMEOUT_SQL);
    return client.query<{ id: string }>(
      timedQuery(
        { text: dryRun ? `SELECT r.id FROM ${names.runs} r WHERE ${which}` : `DELETE FROM ${names.runs} r WHERE ${which} RETURNING r.id`, values: [before] },
        LONG_QUERY_TIMEOUT_MS,
      ),
    );
  }, { shortLockWaits: true });
  return { before: before.toISOString(), runs: result.rows.map((row) => row.id).sort() };
}
