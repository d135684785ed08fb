import type pg from "pg";
import { NOT_SPAWNED } from "../../handlers/errors.js";
import { backoffDelay } from "./backoff.js";
import { SET_FAILED_WORKER_SQL } from "./failed-worker.js";
import { finalizeTask, type AttemptRecord } from "./finalize.js";
import { notifyWorkers } from "./graph.js";
import type { SchemaNames } from "./names.js";
import { cancelWaitingOfStoppedRun } from "./cancel.js";
import { notStartedReason, requestedReason, retryWaitedFor, runningCancel, runningCancelReason } from "./shutdown-cancel.js";
import { setTailSql } from "./tail-attempt.js";
import type { CompletionResult, Outcome } from "./types.js";

interface OwnedRow {
  id: string;
  run_id: string;
  key: string;
  attempts: number;
  max_attempts: number;
  /** bigint (migration 6), which pg returns as text. */
  backoff_base_ms: string;
  backoff_max_ms: string;
  cancel_requested: boolean;
  /** 'shutdown' where the cancel asked for was a stopped run's (migration 14). */
  cancel_kind: "shutdown" | null;
  /** The error of its attempt that failed last, while it waits for its retry or runs the next attempt. */
  last_error: string | null;
}

/** Locks the running task owned by `token`; undefined when the lease was lost. */
async function lockOwned(client: pg.ClientBase, names: SchemaNames, token: string): Promise<OwnedRow | undefined> {
  const result = await client.query<OwnedRow>(
    `SELECT id, run_id, key, attempts, max_attempts, backoff_base_ms, backoff_max_ms, cancel_requested, cancel_kind, last_error
       FROM ${names.tasks} WHERE lease_token = $1 AND state = 'running' FOR UPDATE`,
    [token],
  );
  return result.rows[0];
}

/**
 * A failure is retried when attempts remain and its handler did not make it permanent. The
 * handler alone applies `retryOn` (the task's, which the lease hands it), as in a local run: it
 * knows what a decision here could not, that a timed-out attempt, or one its worker stopped, is
 * retried whatever `retryOn` lists, and it words why a failure is not retried.
 */
function isRetryable(row: OwnedRow, outcome: Extract<Outcome, { kind: "failure" }>): boolean {
  return outcome.permanent !== true && row.attempts < row.max_attempts;
}

function attemptRecord(outcome: Extract<Outcome, { kind: "failure" }>): Required<AttemptRecord> {
  return {
    lastError: outcome.error,
    exitCode: outcome.exitCode ?? null,
    signal: outcome.signal ?? null,
    timedOut: outcome.timedOut ?? false,
    tail: outcome.tail ?? [],
  };
}

/**
 * Records a successful attempt in one round trip (the migration's
 * `complete_success` function): ends the task, unblocks its dependents, and
 * settles the run. False when `token` no longer owns the task.
 */
export async function completeSuccess(
  pool: pg.Pool,
  names: SchemaNames,
  token: string,
  outcome: Extract<Outcome, { kind: "success" }>,
): Promise<CompletionResult | false> {
  const result = await pool.query<{ run_id: string; unblocked: string[] }>({
    name: names.statement("complete"),
    text: `SELECT run_id, unblocked FROM ${names.quoted}.complete_success($1, $2, $3)`,
    values: [token, outcome.exitCode ?? 0, outcome.tail ?? []],
  });
  const row = result.rows[0];
  if (row === undefined) return false;
  return { runId: row.run_id, state: "succeeded", cascaded: [], unblocked: row.unblocked };
}

/**
 * Records the end of a failed or cancelled attempt. Guarded by the lease token: a worker whose
 * lease was lost (swept, or re-leased by another) changes nothing and gets false.
 */
export async function completeAttempt(
  client: pg.ClientBase,
  names: SchemaNames,
  token: string,
  outcome: Exclude<Outcome, { kind: "success" }>,
  random: () => number = Math.random,
): Promise<CompletionResult | false> {
  const row = await lockOwned(client, names, token);
  if (row === undefined) return false;
  if (outcome.kind === "cancelled" || row.cancel_requested) {
    const requested = outcome.kind === "cancelled" ? (outcome.reason ?? "cancelled by request") : "cancelled by request";
    const attempt = outcome.kind === "failure" ? attemptRecord(outcome) : { tail: outcome.tail ?? [] };
    const killed = outcome.kind === "cancelled" ? outcome.killed : undefined;
    const graph = await finalizeTask(client, names, row, "cancelled", { attempt, endedToken: token, ...runningCancel(row, requested, killed) });
    return { runId: row.run_id, state: "cancelled", cancelReason: runningCancelReason(row, requested), cascaded: graph.cascaded, unblocked: [] };
  }
  const failure = attemptRecord(outcome);
  if (row.cancel_kind === "shutdown" && isRetryable(row, outcome)) {
    // Its run was stopped while it ran: not retried, as a local run's shutdown retries nothing.
    await cancelWaitingOfStoppedRun(client, names, row.run_id);
    const graph = await finalizeTask(client, names, row, "cancelled", {
      attempt: failure,
      endedToken: token,
      cancelReason: notStartedReason({ attempts: row.attempts, last_error: failure.lastError }),
      cancelKind: "shutdown",
    });
    return { runId: row.run_id, state: "cancelled", cascaded: graph.cascaded, unblocked: [] };
  }
  if (!isRetryable(row, outcome)) {
    const graph = await finalizeTask(client, names, row, "failed", { attempt: failure, endedToken: token });
    return { runId: row.run_id, state: "failed", cascaded: graph.cascaded, unblocked: [] };
  }
  const delay = backoffDelay(row.attempts, { baseMs: Number(row.backoff_base_ms), maxMs: Number(row.backoff_max_ms) }, random);
  await client.query(
    `UPDATE ${names.tasks}
        SET state = 'queued', not_before = now() + $2 * interval '1 millisecond', queued_at = now(),
            lease_token = NULL, lease_expires_at = NULL, ${SET_FAILED_WORKER_SQL}, worker_id = NULL,
            last_error = $3, exit_code = $4, signal = $5, timed_out = $6, ${setTailSql("$7::text[]")}, ended_token = $8, ended_as = 'queued'
      WHERE id = $1`,
    [row.id, delay, failure.lastError, failure.exitCode, failure.signal, failure.timedOut, failure.tail, token],
  );
  await notifyWorkers(client, names, row.run_id);
  return { runId: row.run_id, state: "queued", retryDelayMs: delay, cascaded: [], unblocked: [] };
}

/**
 * The end recorded for the attempt that held `token` on task `taskId`; false when the task's last
 * recorded end is another attempt's, or none. For a completion retried after its reply was lost:
 * its token owns nothing any more, maybe because that lost round trip committed it (migration 5).
 */
export async function readRecordedEnd(pool: pg.Pool, names: SchemaNames, taskId: string, token: string): Promise<CompletionResult | false> {
  const result = await pool.query<{ run_id: string; ended_as: CompletionResult["state"] }>(
    `SELECT run_id, ended_as FROM ${names.tasks} WHERE id = $1 AND ended_token = $2`,
    [taskId, token],
  );
  const row = result.rows[0];
  return row === undefined ? false : { runId: row.run_id, state: row.ended_as, cascaded: [], unblocked: [] };
}

/** last_error of a task given back by a stopping worker. */
const RELEASED = "released by a stopping worker";
/** last_error of a task given back because its lease never reached the worker (see releaseStrays). */
const STRAY = "released: leased by a round trip whose reply the worker never received";

/**
 * A lease given back by a worker whose run stops with it (`run --store` stopped by a signal): the task is
 * cancelled as the run's shutdown, not queued for another worker to start after the user asked to stop.
 * `attempt`: how far its attempt got: "started", it ran, and the stop cut it short; "not-spawned", it began (its start
 * line is out), but the stop kept its command from spawning; "not-started", it never began (leased, not yet started).
 * `killed`: how taskq's SIGKILL ended it, where it did.
 */
export interface StopCancel {
  attempt: "started" | "not-spawned" | "not-started";
  killed?: string | undefined;
}

/**
 * Gives a lease back on graceful shutdown: the task is queued again at once and
 * the interrupted attempt is not counted (the task did not fail; the worker
 * left). A task with a pending cancel request is cancelled instead, and so is
 * every task given back with `stop` or of a run stopped (see StopCancel). Returns the task's run
 * id and what became of it, or undefined when the token no longer owns the task.
 */
export async function releaseLease(
  client: pg.ClientBase,
  names: SchemaNames,
  token: string,
  reason = RELEASED,
  stop?: StopCancel,
  tail?: string[],
  neverStarted = false,
  notSpawned = false,
): Promise<{ runId: string; ended: ReleaseEnd } | undefined> {
  // Its command never spawned, though the attempt was started (a stop of its own says so as "not-spawned"; one without, by `notSpawned`).
  const spawnless = notSpawned || stop?.attempt === "not-spawned";
  const row = await lockOwned(client, names, token);
  if (row === undefined) return undefined;
  if (row.cancel_requested) {
    // One its worker never started (or whose command never spawned) was not cut short as it ran: no lines, no log of it.
    const unstarted = neverStarted || reason === STRAY || stop?.attempt === "not-started" || spawnless;
    if (!unstarted) {
      await storeCutShortTail(client, names, row.id, tail);
      await finalizeTask(client, names, row, "cancelled", runningCancel(row));
      return { runId: row.run_id, ended: "requested" };
    }
    // Not counted, as any attempt given back unstarted (before, it was: a task its cancel found leased used up an attempt it never
    // ran); its reason that of a task the cancel found waiting, an earlier attempt's failure kept (see requestedReason).
    const counted = await uncount(client, names, row.id);
    const why = row.cancel_kind === "shutdown" ? (spawnless ? NOT_SPAWNED : notStartedReason(counted)) : requestedReason(counted);
    await finalizeTask(client, names, row, "cancelled", { cancelReason: why, cancelKind: row.cancel_kind, cancelledRunning: false });
    return { runId: row.run_id, ended: "requested" };
  }
  // Given back by this run's own stopping worker (`stop`), or by any worker once its run was stopped (marked
  // at the signal: an attempt it ran, cut short by its own stop).
  if (stop !== undefined || row.cancel_kind === "shutdown") {
    await cancelWaitingOfStoppedRun(client, names, row.run_id);
    // Never started here: a stray, or a lease its worker gave back before starting it (`neverStarted`, without a stop of its own).
    const notStarted = stop?.attempt === "not-started" || reason === STRAY || neverStarted;
    const cutShort = !spawnless && !notStarted;
    // Before the attempt is uncounted: its lines are of the attempt the stop cut short, not of the one before.
    if (cutShort) await storeCutShortTail(client, names, row.id, tail);
    // Not counted, as any attempt given back; the reason a stopped run's cancel gives it (see cancelAtShutdown).
    const counted = await uncount(client, names, row.id);
    // A stray never started either (see releaseStrays).
    // One whose start line is out, its command kept from spawning, is not "not started": a local run's words for it.
    const details =
      spawnless
        ? { cancelReason: NOT_SPAWNED, cancelKind: "shutdown" as const, cancelledRunning: false }
        : notStarted
          ? { cancelReason: notStartedReason(counted), cancelKind: "shutdown" as const, cancelledRunning: false }
          : runningCancel({ cancel_kind: "shutdown" }, undefined, stop?.killed);
    await finalizeTask(client, names, row, "cancelled", details);
    return { runId: row.run_id, ended: "run-stopped" };
  }
  // An attempt that failed before this one keeps its error: the task waits for the retry that failure asked for,
  // and a cancel then says why that attempt failed, not that a later one was given back (retryWaitedFor's rule, of
  // the attempts counted once this one is not). Only a task no attempt of which failed says it was given back.
  const waited = retryWaitedFor({ attempts: Math.max(row.attempts - 1, 0), last_error: row.last_error });
  await client.query(
    `UPDATE ${names.tasks}
        SET state = 'queued', attempts = GREATEST(attempts - 1, 0), not_before = now(), queued_at = now(),
            lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, last_error = $2
      WHERE id = $1`,
    [row.id, waited === undefined ? reason : waited.error],
  );
  await notifyWorkers(client, names, row.run_id);
  return { runId: row.run_id, ended: "queued" };
}

/** Takes back the attempt of a lease given back (not counted); returns the attempts left counted and the task's last error. */
async function uncount(client: pg.ClientBase, names: SchemaNames, id: string): Promise<{ attempts: number; last_error: string | null }> {
  const counted = await client.query<{ attempts: number; last_error: string | null }>(
    `UPDATE ${names.tasks} SET attempts = GREATEST(attempts - 1, 0) WHERE id = $1 RETURNING attempts, last_error`,
    [id],
  );
  return counted.rows[0]!;
}

/**
 * Stores, as the task's last lines (those `status` shows), the last lines of an attempt a cancel cut short as it gives its
 * lease back: `tail`, those its worker read as it ended, or else those its last heartbeat stored (live_tail, of this very
 * lease); none, nothing changes. Before this, `status` of a task a stopped run cut short showed no lines, though its
 * summary did.
 */
async function storeCutShortTail(client: pg.ClientBase, names: SchemaNames, id: string, tail: string[] | undefined): Promise<void> {
  const lines = `COALESCE($2::text[], CASE WHEN live_tail_token = lease_token THEN live_tail END)`;
  await client.query(`UPDATE ${names.tasks} SET ${setTailSql(lines, `${lines} IS NOT NULL`)} WHERE id = $1`, [id, tail ?? null]);
}

/** What a lease given back became: queued again, or cancelled, as its cancel asked or as its run was stopped. */
export type ReleaseEnd = "queued" | "requested" | "run-stopped";

/**
 * Gives back, as releaseLease does (the attempt not counted), every task running in the name of
 * `workerId` but for those whose tokens are in `keep` (the attempts the worker started). For a
 * worker that lost the reply to a lease round trip which may have committed: the tasks it leased
 * never started, and left to expire they would use up an attempt, the last one a dead letter.
 * Returns the tasks given back.
 */
export async function releaseStrays(
  client: pg.ClientBase,
  names: SchemaNames,
  workerId: string,
  keep: string[],
): Promise<{ runId: string; key: string }[]> {
  const strays = await client.query<{ lease_token: string; run_id: string; key: string }>(
    `SELECT lease_token, run_id, key FROM ${names.tasks}
      WHERE state = 'running' AND worker_id = $1 AND NOT (lease_token = ANY($2::uuid[]))
      ORDER BY id`,
    [workerId, keep],
  );
  const released: { runId: string; key: string }[] = [];
  for (const row of strays.rows) {
    // Locked and checked again: the sweeper may have taken it since.
    if ((await releaseLease(client, names, row.lease_token, STRAY)) !== undefined) released.push({ runId: row.run_id, key: row.key });
  }
  return released;
}
