import type { Backoff } from "./backoff.js";

/** Scheduling priority; higher runs first. */
export type Priority = "low" | "normal" | "high" | "critical";

export const PRIORITIES: readonly Priority[] = ["low", "normal", "high", "critical"];

/**
 * Where a task is in its lifecycle. SUCCEEDED, FAILED and CANCELLED are
 * terminal: a task reaches exactly one of them, exactly once.
 */
export type TaskStatus = "BLOCKED" | "SCHEDULED" | "READY" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";

export const STATUSES: readonly TaskStatus[] = [
  "BLOCKED",
  "SCHEDULED",
  "READY",
  "RUNNING",
  "SUCCEEDED",
  "FAILED",
  "CANCELLED",
];

export function isTerminal(status: TaskStatus): boolean {
  return status === "SUCCEEDED" || status === "FAILED" || status === "CANCELLED";
}

/** What a handler gets besides the payload. */
export interface AttemptContext {
  /** Aborts on the attempt's timeout, on cancel and on hard shutdown; `reason` says which. */
  readonly signal: AbortSignal;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly taskId: string;
  /**
   * Starts the attempt's timeout again from now, for a handler whose work begins after a wait of
   * its own (the shell handler's turn to spawn, behind the other tasks started at the same moment):
   * that wait then does not count against the task's timeout, which until then runs from the
   * attempt's start. Nothing for a task without a timeout, or once the attempt was aborted or has ended.
   * A method of the context's prototype: a wrapper that copies the context (`{ ...context }`) passes it on by name.
   */
  startClock?(): void;
}

/**
 * Runs one attempt of one task type (the Strategy). Return (or resolve) to
 * succeed; throw (or reject) to fail the attempt. Throw an error with
 * `permanent: true` (e.g. PermanentError), or one wrapping it as its `cause`, to fail without retrying.
 * A handler must honour `signal`: it is the only way to stop it.
 */
export type Handler<P = unknown, R = unknown> = (payload: P, context: AttemptContext) => R | PromiseLike<R>;

/** What a caller submits. */
export interface TaskSpec<P = unknown> {
  /** Idempotency key; generated when empty. */
  id?: string | undefined;
  /** Selects the handler. */
  type: string;
  payload?: P | undefined;
  priority?: Priority | undefined;
  /** Attempts in all, the first included. Default: the queue's defaultMaxAttempts (3), also for 0 or less, as in the Go design. */
  maxAttempts?: number | undefined;
  /** Per-attempt timeout in ms; none when absent or 0. */
  timeoutMs?: number | undefined;
  /** Not before this time (epoch ms or Date). */
  runAt?: number | Date | undefined;
  /** Ids of tasks already submitted. */
  dependsOn?: readonly string[] | undefined;
  /** Per-task retry delays; the queue's backoff when absent. */
  backoff?: Backoff | undefined;
}

/** Why a task ended CANCELLED. */
export type CancelReason = "cancel" | "dependency" | "shutdown";

/** A task's outcome, the same shape whatever the status. */
export interface TaskResult {
  id: string;
  type: string;
  status: TaskStatus;
  attempts: number;
  value?: unknown;
  /** The last attempt's error (FAILED), or why it was cancelled (CANCELLED). */
  error?: unknown;
  cancelReason?: CancelReason;
  /** For cancelReason "dependency": the dependency that did not succeed. */
  dependency?: string;
}

export interface QueueStats {
  total: number;
  byStatus: Record<TaskStatus, number>;
  running: number;
  retries: number;
  deadLetters: number;
}
