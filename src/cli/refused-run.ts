import { setTimeout as sleep } from "node:timers/promises";
import { TaskqError } from "../errors.js";
import type { CancelResult, PostgresStore } from "../store/postgres/index.js";
import { unusableStoreState } from "../store/postgres/transient.js";
import { onShutdownSignals, signalExitCode } from "./signals.js";

/**
 * The error a `run --store` whose worker was refused its first leases for good (STORE_UNUSABLE) ends with: the
 * worker's, and what became of the run it had submitted. Left queued, a run this command made would be run
 * later by any worker with the rights, unseen, after the command (a CI step) has failed, perhaps twice over
 * once the step is run again; and no prune ever removes it, as it never ends. So it is cancelled, as a stop by
 * a signal ends it. One it joined (an existing --run-id) is left to the workers that run it. A cancel refused
 * too (the role lacks the rights for it as well) leaves the run queued: the error names it and what to do.
 */
export async function endRefusedRun(store: PostgresStore, runId: string, created: boolean, refused: TaskqError, waitMs: number): Promise<TaskqError> {
  const fate = created ? await cancelRefusedRun(store, runId, waitMs) : `run ${runId} existed before this command, and is left as it was for the workers that run it`;
  return new TaskqError(refused.code, `${refused.message}; ${fate}`, { cause: refused, exitCode: refused.exitCode ?? 1 });
}

async function cancelRefusedRun(store: PostgresStore, runId: string, waitMs: number): Promise<string> {
  const stillQueued = (state: string): string =>
    `run ${runId}, which this command submitted, ${state}, and a worker with those rights would run it: ` +
    `cancel it with \`taskq cancel ${runId}\`, or run it with \`taskq worker\`, either as a role with those rights (the same --store and --store-schema)`;
  // The worker's signal handlers are gone: a signal now would kill taskq in silence, the run left queued.
  const removeSignals = onShutdownSignals({
    graceful: (signal) => stopNow(signal),
    immediate: (signal) => stopNow(signal),
  });
  const stopNow = (signal: NodeJS.Signals): void => {
    process.stderr.write(`taskq: ${signal} received while run ${runId} was being cancelled: stopping now; ${stillQueued("may still be queued")}\n`);
    process.exit(signalExitCode(signal));
  };
  const timer = new AbortController();
  try {
    const late = sleep(waitMs, undefined, { signal: timer.signal }).then(
      () => `may still be queued (the database did not answer its cancel within ${waitMs / 1000}s)`,
      () => "may still be queued",
    );
    // As a stop by a signal cancels it: each task "shutdown: not started".
    const ended = await Promise.race([store.cancelRun(runId, undefined, { shutdown: { aborted: [] } }), late]).catch(
      (error: unknown) => `is still queued (${refusedWords(error)})`,
    );
    return typeof ended === "string" ? stillQueued(ended) : cancelledWords(runId, ended);
  } finally {
    timer.abort();
    removeSignals();
  }
}

/** Why the cancel failed: one refused as the leases were (SQLSTATE 42501 most often) is not told the worker's advice twice. */
function refusedWords(error: unknown): string {
  const state = unusableStoreState(error);
  return state === undefined ? `cancelling it failed too: ${error instanceof Error ? error.message : String(error)}` : `its cancel was refused too, SQLSTATE ${state}`;
}

/** What the cancel did, as `taskq cancel` says it; a run that ended meanwhile (other workers ran it) says how. */
function cancelledWords(runId: string, { cancelled, cancelRequested, ended }: CancelResult): string {
  if (ended !== undefined) return `run ${runId}, which this command submitted, has already ended (${ended}), run by other workers`;
  const tasks = (count: number): string => `${count} task${count === 1 ? "" : "s"}`;
  const asked = cancelRequested.length === 0 ? "" : `, and ${tasks(cancelRequested.length)} running on other workers asked to stop`;
  return (
    `run ${runId}, which this command submitted, is cancelled (${tasks(cancelled.length)} that had not started${asked}), so that no worker runs it ` +
    "after this command failed; once the role has the rights, run the workflow again (under a new --run-id, if you gave one)"
  );
}
