import type { Backoff } from "./backoff.js";
import type { HeapItem } from "./heap.js";
import { containListeners } from "./contained-signal.js";
import { AttemptTimeoutError } from "./errors.js";
import type { QueueEvents } from "./events.js";
import { LongTimer } from "./long-timer.js";
import { isTerminal, type CancelReason, type TaskResult, type TaskStatus } from "./types.js";

/** Priority as a number, so the comparator does no string work. */
export const PRIORITY_RANK = { low: 0, normal: 1, high: 2, critical: 3 } as const;

type Waiter = { resolve: (result: TaskResult) => void };

/** The queue's internal state of one task; kept compact, there may be millions. */
export class TaskRecord implements HeapItem {
  heapIndex = -1;
  status: TaskStatus = "READY";
  attempts = 0;
  /** Unfinished dependencies (BLOCKED while > 0). */
  waitingOn = 0;
  dependents: TaskRecord[] | undefined = undefined;
  /** The length of `dependents` at which those that have ended are dropped from it (see addDependent). */
  pruneDependentsAt = PRUNE_DEPENDENTS_MIN;
  /** The attempt in progress, while RUNNING. */
  current: RecordAttemptContext | undefined = undefined;
  cancelRequested = false;
  value: unknown = undefined;
  error: unknown = undefined;
  cancelReason: CancelReason | undefined = undefined;
  dependency: string | undefined = undefined;
  waiters: Waiter[] | undefined = undefined;

  constructor(
    readonly id: string,
    readonly type: string,
    /** Dropped when the task ends: no result shows it, and a long-lived queue keeps every ended task. */
    public payload: unknown,
    readonly rank: number,
    readonly maxAttempts: number,
    readonly timeoutMs: number,
    readonly seq: number,
    public runAt: number,
    /** Dropped when the task ends, as the payload is (it may hold what the payload holds). */
    public backoff: Backoff | undefined,
  ) {}

  /**
   * When a SCHEDULED task is due, on the monotonic clock (performance.now()): its runAt as it
   * stood from when the task was scheduled. The delayed heap waits on this, as Go's timers wait
   * on the monotonic clock, so a wall clock stepped back (NTP, a VM resumed) does not hold a
   * retry or a delay back by the step; runAt stays the wall-clock time that events tell.
   */
  dueAt = 0;

  result(): TaskResult {
    const result: TaskResult = { id: this.id, type: this.type, status: this.status, attempts: this.attempts };
    if (this.value !== undefined) result.value = this.value;
    if (this.error !== undefined) result.error = this.error;
    if (this.cancelReason !== undefined) result.cancelReason = this.cancelReason;
    if (this.dependency !== undefined) result.dependency = this.dependency;
    return result;
  }
}

/** The shortest list of dependents that is pruned (see addDependent). */
const PRUNE_DEPENDENTS_MIN = 64;

/**
 * Lists `dependent` as waiting on `record`. One that ends while it waits (cancelled, then forgotten) stays listed until
 * `record` ends, which a long-running task may not do for long: those that have ended are dropped whenever the list has
 * doubled since it was last pruned, so that it holds as many as wait, not every one that ever did.
 */
export function addDependent(record: TaskRecord, dependent: TaskRecord): void {
  const dependents = (record.dependents ??= []);
  dependents.push(dependent);
  if (dependents.length < record.pruneDependentsAt) return;
  let kept = 0;
  for (const waiting of dependents) if (!isTerminal(waiting.status)) dependents[kept++] = waiting;
  dependents.length = kept;
  record.pruneDependentsAt = Math.max(PRUNE_DEPENDENTS_MIN, 2 * kept);
}

/** Ready order: priority desc, then submission order. Strict, time-free. */
export function byPriority(a: TaskRecord, b: TaskRecord): boolean {
  return a.rank !== b.rank ? a.rank > b.rank : a.seq < b.seq;
}

/** Delayed order: when due, then submission order. */
export function byDueAt(a: TaskRecord, b: TaskRecord): boolean {
  return a.dueAt !== b.dueAt ? a.dueAt < b.dueAt : a.seq < b.seq;
}

/**
 * One attempt, as the queue keeps it; a handler sees a view of it (see attempt-runner.ts).
 * The AbortController is made only when the handler reads `signal` (a no-op handler never
 * pays for one).
 */
export class RecordAttemptContext {
  #controller: AbortController | undefined = undefined;
  /** Why the attempt's signal aborted, once it has. */
  abortReason: unknown = undefined;
  timeoutTimer: LongTimer | undefined = undefined;
  /** A synchronous handler's outcome, held until the queue records it. */
  ok = false;
  outcome: unknown = undefined;
  readonly startedAt: number;

  constructor(
    readonly record: TaskRecord,
    readonly attempt: number,
    now: number,
    /** Where what the handler's abort listeners throw is reported (see containListeners). */
    readonly events: QueueEvents,
  ) {
    this.startedAt = now;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      containListeners(this.#controller.signal, (error) => this.events.reportAbortListener(this.record.id, this.attempt, error));
      if (this.abortReason !== undefined) this.#controller.abort(this.abortReason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.#controller?.abort(reason);
  }

  /** Starts the timeout again from now (see AttemptContext.startClock): only while one runs, so never for an attempt ended or aborted. */
  restartTimer(): void {
    const ms = this.record.timeoutMs;
    if (this.timeoutTimer === undefined || this.abortReason !== undefined || !(ms > 0)) return;
    this.timeoutTimer.clear();
    this.timeoutTimer = new LongTimer(() => this.abort(new AttemptTimeoutError(ms)), ms);
  }

  clearTimer(): void {
    this.timeoutTimer?.clear();
    this.timeoutTimer = undefined;
  }
}
