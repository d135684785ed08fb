import { messageOf } from "../errors.js";
import { AttemptTimeoutError, isShutdownStop, TaskCancelledError, withoutStack } from "./errors.js";
import type { QueueEvents } from "./events.js";
import type { Finalizer } from "./finalize.js";
import { GraceTimer } from "./long-timer.js";
import type { ShutdownOptions, ShutdownResult } from "./options.js";
import type { Schedule } from "./schedule.js";
import { checkShutdownOptions, ShutdownControl, type StopCause } from "./shutdown-control.js";
import type { RecordAttemptContext, TaskRecord } from "./task-record.js";
import type { TaskTable } from "./task-table.js";
import { isTerminal } from "./types.js";

/** What the shutdown path reaches of its Queue. */
export interface ShutdownTarget {
  readonly tasks: TaskTable;
  readonly schedule: Schedule;
  readonly events: QueueEvents;
  readonly finalizer: Finalizer;
  /** Fails (or retries, or cancels as not retried) an attempt that timed out before the stop. */
  failAttempt(record: TaskRecord, context: RecordAttemptContext, error: unknown): void;
  /** Starts the queue if it was not, else dispatches: a drain must run what is left. */
  resume(): void;
}

/**
 * A Queue's shutdown path: closing, the drain, the hard stop at the deadline or signal (with
 * its abortGraceMs), and the end, when nothing is left running or outstanding.
 */
export class QueueShutdown {
  readonly #queue: ShutdownTarget;
  #closing = false;
  #drain = true;
  #hardStopped = false;
  #drained = false;
  #control: ShutdownControl | undefined;
  #idleWaiters: (() => void)[] = [];
  /** Ends a hard stop's abortGraceMs wait now; set while it waits. */
  #endGrace: (() => void) | undefined;
  /** Shortens a hard stop's abortGraceMs wait under way to the grace now given (see begin); set while it waits. */
  #shortenGrace: ((graceMs: number) => void) | undefined;
  /**
   * The abortGraceMs of the calls so far: the shortest given, or undefined where none gave one (0 then). Read when the
   * hard stop comes, whichever call's deadline or signal brings it: a later call that gives none keeps an earlier one's.
   */
  #graceMs: number | undefined;
  /** The signal reason of a hard stop, and the error of every task it ends. */
  #stopReason: TaskCancelledError | undefined;
  /** Set where that reason is the stopping signal's own, in its caller's words (see #hardStop). */
  #ownWords = false;
  /** Set while a hard stop aborts the running attempts, before it has cancelled the tasks not started (see settlesLater). */
  #aborting = false;

  constructor(queue: ShutdownTarget) {
    this.#queue = queue;
  }

  /** shutdown() was called: submit() refuses tasks. */
  get begun(): boolean {
    return this.#control !== undefined;
  }

  get closing(): boolean {
    return this.#closing;
  }

  /** Whether a failed attempt may be retried: false once shutdown({ drain: false }) or a hard stop came. */
  get draining(): boolean {
    return this.#drain;
  }

  /** The deadline passed or the signal aborted: nothing more is dispatched. */
  get hardStopped(): boolean {
    return this.#hardStopped;
  }

  get stopReason(): TaskCancelledError | undefined {
    return this.#stopReason;
  }

  /**
   * How a task the stop keeps from its retry is said to be stopped (`WORDS: not retried (...)`): "shutdown", or the words
   * of the stop's own reason (`fail-fast: task "b" failed`, see #hardStop), whether it waited for its retry or its attempt
   * failed as the stop came.
   */
  get notRetriedWords(): string {
    return this.#ownWords ? this.#stopReason!.message : "shutdown";
  }

  /**
   * Whether an attempt that settles now is recorded a microtask later: while a hard stop aborts the running attempts.
   * A handler's thenable may settle at once from its signal's abort listener; recorded then, its task ended before the
   * tasks not started were cancelled, and its dependents as its dependency's (or queued, after a success), where a
   * promise's outcome, always a microtask later, finds them cancelled as the shutdown's.
   */
  get settlesLater(): boolean {
    return this.#aborting;
  }

  /** Queue.shutdown(): see there. */
  begin(given: ShutdownOptions): Promise<ShutdownResult> {
    checkShutdownOptions(given); // a bad option throws before anything changes
    // A deadline in ms counts from this call, not from after the cancelling below (100k tasks not started: a few hundred ms).
    // Read only for such a deadline: the first use of `performance` loads node:perf_hooks (see monotonicMs), and a run's
    // shutdown at its end has none.
    const calledAt = typeof given?.deadline === "number" && Number.isFinite(given.deadline) ? performance.now() : undefined;
    const options = given ?? {}; // null is no options, as for wait(id, null)
    this.#closing = true;
    const shutdown = (this.#control ??= new ShutdownControl());
    // Nothing left to run: drained as it is, so a deadline already passed cuts nothing short.
    this.checkDrained();
    // Already drained: nothing to stop, and a timer or listener set now would never be cleaned up.
    if (this.#drained) return shutdown.promise;
    if (options.drain === false && this.#drain) {
      this.#drain = false;
      this.#cancelNotStarted("shutdown: not started");
    }
    // A later call keeps what earlier ones gave and tightens it only (see ShutdownOptions): the shortest grace given counts,
    // for a hard stop to come and for one under way (its wait then ends that long after the stop, or at once if that has passed).
    const graceMs = options.abortGraceMs;
    if (graceMs !== undefined && graceMs !== null && graceMs < (this.#graceMs ?? Infinity)) {
      this.#graceMs = graceMs;
      this.#shortenGrace?.(graceMs);
    }
    // A deadline already passed or a signal already aborted stops at once, before a queue
    // that was not started starts anything. During a hard stop's abortGraceMs, either ends
    // the wait for the aborted handlers, as the signal aborting then does; a deadline passing
    // then does not: the attempts it would abort have been.
    const stopped = shutdown.watch(options, calledAt, (cause, signalReason) => {
      if (!this.#hardStopped) void this.#hardStop(cause, signalReason);
      else if (cause === "signal") this.#endGrace?.();
    });
    if (stopped !== undefined) {
      if (!this.#hardStopped) void this.#hardStop(stopped, stopped === "signal" ? options.signal?.reason : undefined);
      else this.#endGrace?.();
    }
    this.#queue.resume();
    return shutdown.promise;
  }

  /** `cause`: the error's, as the hard stop's reason has it (a signal's reason: a caller's `controller.abort(why)`). */
  #cancelNotStarted(message: string, cause?: { cause?: unknown }): void {
    const { tasks, schedule, finalizer } = this.#queue;
    // Begun from a task's `failed` event: its dependents are cancelled because of it, as without the shutdown.
    finalizer.settleEmitting();
    const stop = this.notRetriedWords;
    // Every task in the heaps ends here: emptied at once, not task by task (each an O(log n) removal: 100k queued took ~40 ms).
    schedule.ready.drain();
    schedule.delayed.drain();
    /** One error for the tasks never started, as the hard stop's reason is one for the attempts it stops: an Error costs ~2 µs to make, 0.2 s for 100k. */
    let notStarted: TaskCancelledError | undefined;
    for (const record of tasks.values()) {
      if (isTerminal(record.status) || record.status === "RUNNING") continue;
      // A task waiting to retry did start: its failed attempt's error stays in the message, and is the cause, as for
      // an attempt that fails once the shutdown began (afterFailure): the cause, not the message, holds its code and what it wrote last.
      const error =
        record.attempts > 0
          ? withoutStack(() => new TaskCancelledError("shutdown", `${stop}: not retried (attempt ${record.attempts} failed: ${messageOf(record.error)})`, undefined, { cause: record.error }))
          : (notStarted ??= withoutStack(() => new TaskCancelledError("shutdown", message, undefined, cause)));
      finalizer.finalize(record, "CANCELLED", { error, cancelReason: "shutdown" }, false);
    }
  }

  /** `signalReason`: the aborted signal's reason, the cause of the error the running tasks end with (a caller's `controller.abort(why)`). */
  async #hardStop(cause: StopCause, signalReason?: unknown): Promise<void> {
    if (this.#hardStopped || this.#control === undefined) return;
    const { tasks, schedule, finalizer } = this.#queue;
    this.#hardStopped = true;
    this.#drain = false;
    schedule.arm(true);
    const stopCause = cause === "signal" ? { cause: signalReason } : {};
    // A signal aborted with a shutdown's TaskCancelledError of the caller's words (a fail-fast stop's: `fail-fast: task "a"
    // failed`) is the stop's reason as it is: the running attempts are stopped, and the tasks not started cancelled, in those words.
    const own = cause === "signal" && isShutdownStop(signalReason) ? signalReason : undefined;
    this.#ownWords = own !== undefined;
    const reason = (this.#stopReason = own ?? new TaskCancelledError("shutdown", "aborted by shutdown", undefined, stopCause));
    // The running attempts are stopped first, at the deadline (or the signal), and their grace counts from then: cancelling
    // what has not started comes after, and takes a while for many tasks (100k: tens of ms, ~0.3 s before it was made cheaper).
    const running = tasks.running();
    this.#aborting = true;
    try {
      for (const record of running) record.current?.abort(reason);
    } finally {
      this.#aborting = false;
    }
    const graceMs = this.#graceMs ?? 0;
    const grace =
      tasks.count("RUNNING") > 0 && graceMs > 0
        ? new Promise<void>((resolve) => {
            const end = (): void => {
              timer.clear();
              this.#endGrace = undefined;
              this.#shortenGrace = undefined;
              resolve();
            };
            // Time the process was held up past its end is given back (see GraceTimer): a handler whose own timers came due
            // meanwhile settles as it does, not given up on in the same instant.
            // A shorter grace given later counts from the stop, and keeps what was given back: given after a stall, its end
            // is not in the same instant as the handlers' own timers' turn (see GraceTimer.shorten).
            const timer = new GraceTimer(end, graceMs);
            this.#idleWaiters.push(end);
            this.#endGrace = end;
            this.#shortenGrace = (shorterMs) => timer.shorten(shorterMs);
          })
        : undefined;
    // Their error has the running attempts' cause: the signal's reason, whether it aborted before shutdown() or during the drain.
    if (own !== undefined) this.#cancelNotStarted(`not started: ${own.message}`, { cause: own });
    else this.#cancelNotStarted(cause === "deadline" ? "shutdown: not started before the deadline" : "shutdown: not started before the shutdown signal aborted", stopCause);
    if (grace !== undefined) await grace;
    for (const record of running) {
      // A cancel asked for before the deadline stays its reason: the shutdown only stopped waiting for the handler.
      const context = record.current;
      if (record.cancelRequested) finalizer.finalize(record, "CANCELLED", { error: record.error, cancelReason: "cancel" }, false);
      // So does a timeout: the attempt had timed out before the stop, which could not abort it again.
      else if (context?.abortReason instanceof AttemptTimeoutError) this.#queue.failAttempt(record, context, context.abortReason);
      else finalizer.finalize(record, "CANCELLED", { error: reason, cancelReason: "shutdown" }, false);
    }
    this.checkDrained();
  }

  /** Ends a hard stop's abortGraceMs wait once no attempt is running. */
  notifyIdle(): void {
    if (this.#queue.tasks.count("RUNNING") > 0 || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Ends the shutdown once nothing is outstanding or running: the timer goes, `drained` is emitted, shutdown() resolves. */
  checkDrained(): void {
    const shutdown = this.#control;
    const { tasks, schedule, events } = this.#queue;
    if (shutdown === undefined || this.#drained || tasks.outstanding > 0 || tasks.count("RUNNING") > 0) return;
    this.#drained = true;
    schedule.disarm();
    this.notifyIdle();
    if (events.has("drained")) events.emit("drained", { hardStopped: this.#hardStopped });
    shutdown.finish({ hardStopped: this.#hardStopped });
  }
}
