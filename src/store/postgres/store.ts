import pg from "pg";
import { TaskqError } from "../../errors.js";
import { isRunId, RUN_ID_EXPECTED } from "../../run-id.js";
import { cancelTasks, type CancelResult } from "./cancel.js";
import { completeAttempt, completeSuccess, releaseLease } from "./complete.js";
import { completeAndLease, type CompleteAndLeaseResult, type EndedAttempt } from "./complete-and-lease.js";
import { refreshRunState, settleRuns } from "./graph.js";
import { leaseTasks, nextRunnableDelay, renewLease } from "./lease.js";
import { NotificationListener } from "./listener.js";
import { migrate } from "./migrations.js";
import { schemaNames, type SchemaNames } from "./names.js";
import { pruneRuns, type PruneResult } from "./prune.js";
import { redactConnectionString } from "./redact.js";
import { redriveTask, type RedriveResult } from "./redrive.js";
import { readDeadLetters, readRunStatus } from "./status.js";
import { generateRunId, submitNewRun, submitRun } from "./submit.js";
import { toStoreError } from "./store-error.js";
import { sweepExpiredLeases } from "./sweep.js";
import { inTransaction } from "./transaction.js";
import type { CompletionResult, DeadLetter, HeartbeatStatus, LeasedTask, Outcome, RunStatus, TaskState, Workflow } from "./types.js";

const ignoreError = (): void => undefined;

export interface PostgresStoreOptions {
  /** An existing pool (not closed by `close()`), or... */
  pool?: pg.Pool;
  /** ...a connection string for a pool the store owns. */
  connectionString?: string;
  /** Size of an owned pool (default 10). */
  poolSize?: number;
  /** Schema holding the tables (default "taskq"). */
  schema?: string;
  /** Connection errors the store recovers from (idle clients, the listener); default: ignored. */
  onError?: (error: unknown) => void;
  /** Random source for retry jitter, injectable for exact tests. */
  random?: () => number;
}

/**
 * The durable queue on PostgreSQL: runs, tasks and their dependencies, leased
 * to workers on several machines. Every method is one short transaction and
 * uses the database clock.
 */
export class PostgresStore {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** Where the store connects, with any password replaced by `***`. */
  readonly description: string;
  readonly #names: SchemaNames;
  readonly #ownsPool: boolean;
  readonly #random: () => number;
  readonly #onError: (error: unknown) => void;
  #listener: NotificationListener | undefined;

  constructor(options: PostgresStoreOptions) {
    this.#names = schemaNames(options.schema ?? "taskq");
    this.schema = this.#names.schema;
    this.#ownsPool = options.pool === undefined;
    this.pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? 10 });
    this.description = redactConnectionString(options.connectionString ?? "(pool)");
    this.#random = options.random ?? Math.random;
    this.#onError = options.onError ?? (() => undefined);
    // An idle client whose backend was terminated emits 'error' on the pool; unhandled, it would crash the process.
    this.pool.on("error", (error) => this.#onError(error));
    // A backend terminated in the same packet burst that completed its connection reaches the client before
    // any caller could listen; a permanent listener keeps that from crashing the process (queries still fail).
    this.pool.on("connect", (client) => client.on("error", ignoreError));
  }

  /** Creates the store and applies pending migrations. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    await store.migrate();
    return store;
  }

  /** Applies pending migrations (idempotent, safe to run concurrently). */
  async migrate(): Promise<number[]> {
    return this.#guard("migrate", () => migrate(this.pool, this.schema));
  }

  /** Submits a workflow as a run (idempotent on `runId`); returns the run id. */
  async submitRun(workflow: Workflow, options: { runId?: string } = {}): Promise<string> {
    if (options.runId !== undefined && !isRunId(options.runId)) {
      throw new TaskqError("INVALID_RUN_ID", `${JSON.stringify(options.runId)} is not a run id: ${RUN_ID_EXPECTED}`, { exitCode: 2 });
    }
    return this.#guard("submitRun", async () => {
      const runId = options.runId ?? generateRunId();
      // A new run takes one statement; an existing one (a resubmission) the full transaction.
      const { settle } =
        (await submitNewRun(this.pool, this.#names, workflow, runId)) ??
        (await inTransaction(this.pool, (client) => submitRun(client, this.#names, workflow, runId)));
      if (settle) await refreshRunState(this.pool, this.#names, runId);
      return runId;
    });
  }

  /** Leases up to `limit` runnable tasks for `leaseMs`. */
  async lease(workerId: string, limit: number, leaseMs: number): Promise<LeasedTask[]> {
    return this.#guard("lease", () => leaseTasks(this.pool, this.#names, workerId, limit, leaseMs));
  }

  /**
   * The worker's hot path: records the successful attempts in `ended` and
   * leases up to `limit` tasks, in one round trip and one commit.
   */
  async completeAndLease(ended: EndedAttempt[], workerId: string, limit: number, leaseMs: number): Promise<CompleteAndLeaseResult> {
    return this.#guard("completeAndLease", () => completeAndLease(this.pool, this.#names, ended, workerId, limit, leaseMs));
  }

  /** Extends a lease; "lost" when another worker or the sweeper owns the task now. */
  async heartbeat(taskId: string, token: string, leaseMs: number): Promise<HeartbeatStatus> {
    return this.#guard("heartbeat", () => renewLease(this.pool, this.#names, taskId, token, leaseMs));
  }

  /** Records an attempt's outcome; false when `token` no longer owns the task. */
  async complete(token: string, outcome: Outcome): Promise<CompletionResult | false> {
    return this.#guard("complete", async () => {
      if (outcome.kind === "success") return completeSuccess(this.pool, this.#names, token, outcome);
      const result = await inTransaction(this.pool, (client) => completeAttempt(client, this.#names, token, outcome, this.#random));
      if (result !== false && result.state !== "queued") await refreshRunState(this.pool, this.#names, result.runId);
      return result;
    });
  }

  /** Requeues a leased task at once without counting the attempt (graceful worker stop). */
  async release(token: string): Promise<boolean> {
    return this.#guard("release", async () => {
      const runId = await inTransaction(this.pool, (client) => releaseLease(client, this.#names, token));
      if (runId !== undefined) await refreshRunState(this.pool, this.#names, runId);
      return runId !== undefined;
    });
  }

  /**
   * Recovers tasks whose lease expired; returns how many. Also settles runs
   * whose last tasks ended at the same moment (see `complete_success`).
   */
  async sweepOrphans(limit = 100): Promise<number> {
    return this.#guard("sweepOrphans", async () => {
      const count = await inTransaction(this.pool, (client) => sweepExpiredLeases(client, this.#names, limit));
      await settleRuns(this.pool, this.#names);
      return count;
    });
  }

  /** Cancels a run, or one task: queued/blocked at once, running at the next heartbeat. */
  async cancelRun(runId: string, taskKey?: string): Promise<CancelResult> {
    return this.#guard("cancelRun", async () => {
      const result = await inTransaction(this.pool, (client) => cancelTasks(client, this.#names, runId, taskKey));
      await refreshRunState(this.pool, this.#names, runId);
      return result;
    });
  }

  /** Failed tasks, of one run or of all. */
  async deadLetters(runId?: string): Promise<DeadLetter[]> {
    return this.#guard("deadLetters", () => readDeadLetters(this.pool, this.#names, runId));
  }

  /** A run's tasks and counts. Also settles the run's state, should a worker have died between commit and refresh. */
  async runStatus(runId: string): Promise<RunStatus> {
    return this.#guard("runStatus", async () => {
      await refreshRunState(this.pool, this.#names, runId);
      return readRunStatus(this.pool, this.#names, runId);
    });
  }

  /** Queues a failed task again with fresh attempts and re-blocks the dependents it cancelled. */
  async redrive(runId: string, taskKey: string): Promise<RedriveResult> {
    return this.#guard("redrive", () => inTransaction(this.pool, (client) => redriveTask(client, this.#names, runId, taskKey)));
  }

  /** Deletes the runs that ended more than `olderThanMs` ago (see prune.ts); with `dryRun`, lists them. */
  async pruneRuns(olderThanMs: number, options: { dryRun?: boolean } = {}): Promise<PruneResult> {
    return this.#guard("pruneRuns", () => pruneRuns(this.pool, this.#names, olderThanMs, options.dryRun === true));
  }

  /** Milliseconds until the earliest queued task is runnable, or null if none is queued. */
  async nextRunnableDelay(): Promise<number | null> {
    return this.#guard("nextRunnableDelay", () => nextRunnableDelay(this.pool, this.#names));
  }

  /** Number of tasks in each state, across all runs (for the queue-size gauge). */
  async countByState(): Promise<Record<TaskState, number>> {
    return this.#guard("countByState", async () => {
      const result = await this.pool.query<{ state: TaskState; count: number }>(
        `SELECT state, count(*)::int AS count FROM ${this.#names.tasks} GROUP BY state`,
      );
      const counts: Record<TaskState, number> = { blocked: 0, queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
      for (const row of result.rows) counts[row.state] = row.count;
      return counts;
    });
  }

  /** Runs one operation; driver errors become TaskqErrors with a stable code (see store-error.ts). */
  async #guard<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toStoreError(operation, error);
    }
  }

  /** Calls `callback` whenever tasks may have become runnable; returns the unsubscribe function. */
  subscribe(callback: () => void): () => void {
    this.#listener ??= new NotificationListener(this.pool, this.#names.channel, this.#onError);
    return this.#listener.subscribe(callback);
  }

  /** Resolves once the notification listener is connected (for tests and benchmarks). */
  async listening(): Promise<void> {
    await this.#listener?.ready();
  }

  /** Stops listening and, if the store created the pool, closes it. */
  async close(): Promise<void> {
    await this.#listener?.close();
    this.#listener = undefined;
    if (this.#ownsPool) await this.pool.end();
  }
}
