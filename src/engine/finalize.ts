import { dependencyCancelled, emitTerminal, settleWaiters } from "./attempt-outcome.js";
import type { QueueEvents } from "./events.js";
import type { Schedule } from "./schedule.js";
import type { TaskRecord } from "./task-record.js";
import type { TaskTable } from "./task-table.js";
import { isTerminal, type CancelReason } from "./types.js";

/** How a task ended: its value, or its error and why it was cancelled. */
export interface Outcome {
  value?: unknown;
  error?: unknown;
  cancelReason?: CancelReason;
  /** The task whose failure or cancel started the cascade that cancelled this one. */
  dependency?: string;
}

/**
 * The one way into a terminal status, and what follows from it: the task leaves its heap
 * or its attempt, waiters are settled, the terminal event is emitted, and its dependents
 * are unblocked or cancelled in cascade.
 */
export class Finalizer {
  readonly #tasks: TaskTable;
  readonly #schedule: Schedule;
  readonly #events: QueueEvents;
  /** Queues a dependent whose last dependency succeeded. */
  readonly #enqueue: (record: TaskRecord) => void;
  /** The task whose terminal event is being emitted, its dependents not settled yet (see settleEmitting). */
  #emitting: TaskRecord | undefined;
  /**
   * The cascade under way (see #settleDependents): the task whose dependents are being cancelled, and those cancelled
   * before, whose own are not yet. A shutdown begun by the `cancelled` listener of a task it cancelled finishes it first.
   */
  #cascade: Cascade | undefined;

  constructor(tasks: TaskTable, schedule: Schedule, events: QueueEvents, enqueue: (record: TaskRecord) => void) {
    this.#tasks = tasks;
    this.#schedule = schedule;
    this.#events = events;
    this.#enqueue = enqueue;
  }

  /**
   * Runs once per task; later calls do nothing. With `cascade` false the caller settles
   * the dependents itself (the cascade loop, or a shutdown that ends every task), so the
   * list stays for it to walk.
   */
  finalize(record: TaskRecord, status: "SUCCEEDED" | "FAILED" | "CANCELLED", outcome: Outcome, cascade = true): void {
    if (isTerminal(record.status)) return;
    if (record.status === "READY") this.#schedule.ready.remove(record);
    else if (record.status === "SCHEDULED") this.#schedule.delayed.remove(record);
    else if (record.status === "RUNNING") {
      record.current?.clearTimer();
      record.current = undefined;
    }
    this.#tasks.setStatus(record, status);
    // Read by no result, wait or idempotent submit: kept, every ended task would hold its payload for good.
    record.payload = undefined;
    record.backoff = undefined;
    record.value = outcome.value;
    record.error = status === "SUCCEEDED" ? undefined : outcome.error;
    record.cancelReason = outcome.cancelReason;
    record.dependency = outcome.dependency;
    settleWaiters(record);
    const outer = this.#emitting;
    this.#emitting = cascade ? record : undefined;
    try {
      emitTerminal(this.#events, record);
    } finally {
      this.#emitting = outer;
    }
    if (cascade) this.#settleDependents(record);
  }

  /**
   * For a shutdown begun by a listener of a task's `failed` or `cancelled` event (a fail-fast stop): that task's
   * dependents are cancelled for it first, as they were about to be, not as tasks the shutdown did not start.
   */
  settleEmitting(): void {
    const record = this.#emitting;
    if (record !== undefined && record.status !== "SUCCEEDED") this.#settleDependents(record);
    // Begun in a cascade (the listener of a task it cancelled): the rest of it, as it was about to be, not as tasks not
    // started; and of each cascade it is in (a listener's cancel that began another), innermost first.
    for (let cascade = this.#cascade; cascade !== undefined; cascade = cascade.outer) {
      this.#settleDependents(cascade.done);
      for (let done = cascade.stack.pop(); done !== undefined; done = cascade.stack.pop()) this.#settleDependents(done);
    }
  }

  /** Cancels `record` because `dependency` did not succeed; the reason names the task that started the cascade. */
  cancelForDependency(record: TaskRecord, dependency: TaskRecord, cascade = true): void {
    const error = dependencyCancelled(dependency, this.#tasks);
    this.finalize(record, "CANCELLED", { error, cancelReason: "dependency", dependency: error.dependency }, cascade);
  }

  /** Iterative, so a long dependency chain cannot overflow the stack. */
  #settleDependents(root: TaskRecord): void {
    const stack = [root];
    const outer = this.#cascade;
    try {
      for (let done = stack.pop(); done !== undefined; done = stack.pop()) {
        const dependents = done.dependents;
        if (dependents === undefined) continue;
        // Its list is dropped once walked: a shutdown begun by a listener meanwhile walks it (settleEmitting).
        if (done.status !== "SUCCEEDED") this.#cascade = { done, stack, outer };
        for (const dependent of dependents) {
          if (isTerminal(dependent.status)) continue;
          if (done.status === "SUCCEEDED") {
            if (--dependent.waitingOn === 0) this.#enqueue(dependent);
          } else {
            // Pushed before its `cancelled` event, so that a shutdown begun there settles its dependents too.
            stack.push(dependent);
            this.cancelForDependency(dependent, done, false);
          }
        }
        done.dependents = undefined;
      }
    } finally {
      this.#cascade = outer;
    }
  }
}

/** A cascade under way (see Finalizer.#settleDependents), and the one whose listener began it, if any. */
interface Cascade {
  done: TaskRecord;
  stack: TaskRecord[];
  outer: Cascade | undefined;
}
