import { dependencyCancelled, emitTerminal, settleWaiters } from "./attempt-outcome.js";
import type { QueueEvents } from "./events.js";
import type { Schedule } from "./schedule.js";
import { TaskRecord } from "./task-record.js";
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
  /**
   * What a listener may interrupt, outermost first (see settleEmitting): a task whose terminal event is being emitted, its
   * dependents not settled yet, each cascade under way (see #settleDependents), and a task being announced as submitted
   * after its dependency had failed or been cancelled, its cancel not made yet (a Doomed entry, see announceDoomed: a
   * `submitted` listener). A stack, not a slot: a listener of one may end another task (a `failed` listener's cancel), whose
   * own event and cascade come on top of it, and a shutdown begun in that one's listeners finishes them all, not only the
   * innermost.
   */
  readonly #pending: (TaskRecord | Cascade | Doomed)[] = [];

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
    // With `cascade` false, whoever settles the dependents has them in hand already (the cascade's frame, or a shutdown
    // that ends every task).
    if (!cascade) {
      emitTerminal(this.#events, record);
      return;
    }
    // The record itself, not a frame made for it: every task that ends passes here.
    const pending = this.#pending;
    pending.push(record);
    try {
      emitTerminal(this.#events, record);
    } finally {
      pending.pop();
    }
    this.#settleDependents(record);
  }

  /**
   * For a shutdown begun by a listener of a task's `failed` or `cancelled` event (a fail-fast stop): that task's
   * dependents are cancelled for it first, as they were about to be, not as tasks the shutdown did not start. So is a
   * task whose `submitted` listener began it, submitted after its dependency had failed or been cancelled (a Doomed
   * entry): it is cancelled because of that dependency, as it was about to be, and its own dependents with it.
   */
  settleEmitting(): void {
    // Begun in a cascade (the listener of a task it cancelled): the rest of it, as it was about to be, not as tasks not
    // started; and of each task whose event or cascade it is in (a listener's cancel that began another), innermost
    // first, as they would have been settled had the listener returned. Frames pushed meanwhile (the cascades walked
    // here) are popped before the loop reaches below them; one walked already walks nothing (its list is dropped).
    const pending = this.#pending;
    for (let i = pending.length - 1; i >= 0; i--) {
      const entry = pending[i]!;
      if (entry instanceof TaskRecord) {
        // A success's dependents are being queued, not cancelled: the shutdown cancels those still waiting as not started.
        if (entry.status !== "SUCCEEDED") this.#settleDependents(entry);
        continue;
      }
      if (!("stack" in entry)) {
        this.cancelForDependency(entry.record, entry.dependency);
        continue;
      }
      this.#settleDependents(entry.done);
      for (let next = entry.stack.pop(); next !== undefined; next = entry.stack.pop()) this.#settleDependents(next);
    }
  }

  /**
   * Runs `announce` (the `submitted` event of `record`, submitted after its `dependency` had failed or been cancelled), then
   * cancels `record` because of it. A shutdown begun by a listener meanwhile cancels it so first (see settleEmitting): its
   * end was settled when it was submitted, not cut short by the shutdown.
   */
  announceDoomed(record: TaskRecord, dependency: TaskRecord, announce: () => void): void {
    const pending = this.#pending;
    pending.push({ record, dependency });
    try {
      announce();
    } finally {
      pending.pop();
    }
    // Cancelled already where a shutdown begun by a listener settled it (settleEmitting): finalize would do nothing, and
    // the error made for it would be thrown away.
    if (!isTerminal(record.status)) this.cancelForDependency(record, dependency);
  }

  /** Cancels `record` because `dependency` did not succeed; the reason names the task that started the cascade. */
  cancelForDependency(record: TaskRecord, dependency: TaskRecord, cascade = true): void {
    const error = dependencyCancelled(dependency, this.#tasks);
    this.finalize(record, "CANCELLED", { error, cancelReason: "dependency", dependency: error.dependency }, cascade);
  }

  /** Iterative, so a long dependency chain cannot overflow the stack. */
  #settleDependents(root: TaskRecord): void {
    const stack = [root];
    /** This cascade's entry in #pending, from when it first cancels a task. */
    let cascade: Cascade | undefined;
    try {
      for (let done = stack.pop(); done !== undefined; done = stack.pop()) {
        const dependents = done.dependents;
        if (dependents === undefined) continue;
        // Its list is dropped once walked: a shutdown begun by a listener meanwhile walks it (settleEmitting).
        if (done.status !== "SUCCEEDED") {
          if (cascade === undefined) this.#pending.push((cascade = { done, stack }));
          else cascade.done = done;
        }
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
      // Those pushed above it (listeners' cancels) have been popped by their own finally.
      if (cascade !== undefined) this.#pending.pop();
    }
  }
}

/**
 * A cascade under way (see Finalizer.#settleDependents): `done`, the task whose dependents are being cancelled, and
 * `stack`, those cancelled before whose own are not yet.
 */
interface Cascade {
  done: TaskRecord;
  stack: TaskRecord[];
}

/** A task being announced as submitted, whose `dependency` had failed or been cancelled already (see Finalizer.announceDoomed). */
interface Doomed {
  record: TaskRecord;
  dependency: TaskRecord;
}
