/**
 * Shapes the PostgreSQL store reads and returns. A workflow is the loader's
 * output, imported as a type only: the store loads no loader code.
 */
import type { Priority } from "../../engine/index.js";
import type { Workflow, WorkflowTask } from "../../loaders/index.js";

export type { Workflow, WorkflowTask };

export type PriorityName = Priority;

export type TaskState = "blocked" | "queued" | "running" | "succeeded" | "failed" | "cancelled";

export const TERMINAL_STATES: readonly TaskState[] = ["succeeded", "failed", "cancelled"];

/** Priority names map to integers so the fetch index can order by them. */
export const PRIORITY_VALUES: Record<PriorityName, number> = { low: 0, normal: 1, high: 2, critical: 3 };

/** A task handed to one worker for one attempt. */
export interface LeasedTask {
  /** Database id of the task row (a bigint, as a string). */
  taskId: string;
  runId: string;
  key: string;
  type: string;
  run: string;
  env: Record<string, string>;
  cwd: string;
  priority: number;
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
  timeoutMs: number | null;
  /** The exit codes worth retrying; empty when the task lists none (any failure is). */
  retryOn: number[];
  /** Proof of ownership: every later write for this attempt must present it. */
  leaseToken: string;
  /** Time the task waited in the queue before this attempt, per the database clock. */
  queueWaitMs: number;
}

/** How an attempt ended, as the worker reports it. */
export type Outcome =
  | { kind: "success"; exitCode?: number | null; tail?: string[] }
  | {
      kind: "failure";
      error: string;
      exitCode?: number | null;
      signal?: string | null;
      permanent?: boolean;
      timedOut?: boolean;
      tail?: string[];
    }
  /** `killed`: how taskq's SIGKILL ended the attempt, in the shell handler's words (see sigkillWords), added to the reason recorded. */
  | { kind: "cancelled"; reason?: string; tail?: string[]; killed?: string };

/** What became of a task whose record a worker could not make (see PostgresStore.taskNow). */
export interface TaskNow {
  state: TaskState;
  /** The worker it is leased to, or was last run by; null when none is (queued again). */
  workerId: string | null;
  /** Its last error, or the reason it was cancelled; null once it succeeded (an earlier attempt's error is no error of its). */
  error: string | null;
}

/** The state an accepted completion moved the task to. */
export interface CompletionResult {
  runId: string;
  state: "succeeded" | "queued" | "failed" | "cancelled";
  /** Backoff before the next attempt, when requeued. */
  retryDelayMs?: number;
  /**
   * Of an attempt cancelled as it ran: the reason recorded, but for how taskq's SIGKILL ended it ("aborted by shutdown"
   * where the cancel was asked by a stopped run, though its worker heard of it as a cancel).
   */
  cancelReason?: string;
  /** Keys of dependents cancelled because of this completion. */
  cascaded: string[];
  /** Keys of dependents that became runnable. */
  unblocked: string[];
}

export type HeartbeatStatus = "renewed" | "lost" | "cancel-requested";

/** What a renewal found (see PostgresStore.renew): its status, and of a cancel asked for, whose it is. */
export interface LeaseRenewal {
  status: HeartbeatStatus;
  /**
   * With "cancel-requested": "request", asked by `taskq cancel`; "shutdown", asked by a stopped `run --store` of its
   * run, which records the attempt as "aborted by shutdown".
   */
  cancelKind?: "request" | "shutdown";
}

/** One row of `runStatus` and `deadLetters`. */
export interface TaskStatusRow {
  runId: string;
  key: string;
  state: TaskState;
  priority: number;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelReason: string | null;
  /** The failed or cancelled task that caused this one's cancellation. */
  cancelledBy: string | null;
  /** A cancelled task's, where a stopped `run --store` cancelled it, as a local run's shutdown does. */
  cancelKind?: "shutdown";
  /** A cancelled task whose attempt was running when it was cancelled (asked to stop, or given back by a stopped run's worker). */
  cancelledRunning?: true;
  workerId: string | null;
  /**
   * Where the task's latest counted attempt failed and it was queued for its retry: the worker that ran that attempt,
   * whose machine has its log (`workerId` is null once queued again, or the worker of an attempt given back since).
   */
  failedWorkerId?: string;
  tail: string[];
  /**
   * Set where `tail` is an earlier attempt's: the task's latest attempt left no lines (it printed
   * nothing, or could not write its log), and these are those of the latest attempt that had some.
   */
  tailAttempt?: number;
  /**
   * Beside `tailAttempt`: the worker whose attempt wrote those lines, whose log has them (the latest attempt may have run on
   * another, `workerId`); null where the store does not say.
   */
  tailWorkerId?: string | null;
  dependsOn: string[];
  submittedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** A running task's time since its attempt was leased, on the database's clock (status only). */
  runningMs?: number;
  /**
   * A running task whose lease has run out, and for how long (status only): its worker no longer
   * renews it (gone, stalled or cut off), and no sweep has queued it again yet.
   */
  leaseExpiredMs?: number;
  /**
   * Where its lease has run out (status only): how long a statement of its worker has been waiting on the database,
   * where one is (its renewal, or the record of how the attempt ended, held up by a lock or a slow database), as
   * `pg_stat_activity` shows the worker's sessions by their names (`taskq worker <id>`, `taskq run <run id>`).
   */
  workerWaitingMs?: number;
  /**
   * A task waiting for its retry (status only: queued, an attempt made): how long until it is due, on the
   * database's clock; 0 once due, waiting for a worker. Its `lastError` is the failed attempt's.
   */
  retryInMs?: number;
  /**
   * A task waiting for its `delay` or `runAt` (status only: queued, no attempt made, not due yet): how long until it
   * is due, on the database's clock, and when that is (`dueAt`, the database's time).
   */
  dueInMs?: number;
  dueAt?: Date;
  /** A running attempt's last lines, as its worker's last heartbeat stored them (none before its first). */
  liveTail?: string[];
  /** A running task whose cancel was asked for (status only): its worker stops it at its next heartbeat, or a sweep cancels it. */
  cancelRequested?: true;
  /** A running task whose run `run --store` stopped (status only): not retried, nor queued again, however it ends; a sweep cancels it. */
  runStopped?: true;
}

/** A failed task: as status gives it, without a cancelled task's `cancelReason` and `cancelledBy`. */
export interface DeadLetter extends Omit<TaskStatusRow, "cancelReason" | "cancelledBy"> {
  /** Dependents cancelled (transitively) because this task failed. */
  cancelledDependents: string[];
}

export interface RunStatus {
  runId: string;
  name: string | null;
  /** The workflow file as it was given to submit; null for a run stored without one. */
  file: string | null;
  state: "running" | "succeeded" | "failed" | "cancelled";
  createdAt: Date;
  /** When it was read, on the database's clock (as createdAt is): a run still running has run until then. */
  readAt: Date;
  counts: Record<TaskState, number>;
  /** Of the queued tasks, those waiting for their not-before (a delay, a runAt, a retry's backoff). */
  scheduled: number;
  tasks: TaskStatusRow[];
}
