import { messageOf, shown, TaskqError } from "../errors.js";
import { afterFailure, normalizeError, waitForRecord } from "./attempt-outcome.js";
import { AttemptRunner } from "./attempt-runner.js";
import type { Backoff } from "./backoff.js";
import { AttemptTimeoutError, endedBeforeStop, isShutdownStop, QueueClosedError, TaskCancelledError, TaskNotFoundError, UnknownHandlerError } from "./errors.js";
import { QueueEvents, type QueueEventMap, type QueueEventName } from "./events.js";
import { Finalizer } from "./finalize.js";
import { resolveQueueOptions, waitOptionsProblem, type QueueOptions, type ShutdownOptions, type ShutdownResult } from "./options.js";
import { QueueShutdown } from "./queue-shutdown.js";
import { Schedule } from "./schedule.js";
import { addDependent, RecordAttemptContext, TaskRecord } from "./task-record.js";
import { createRecord, resolveDependencies, taskName } from "./task-spec.js";
import { TaskTable } from "./task-table.js";
import { isTerminal, type Handler, type QueueStats, type TaskResult, type TaskSpec } from "./types.js";

export type { QueueOptions, ShutdownOptions, ShutdownResult } from "./options.js";

/** The longest the queue starts attempts without letting the event loop turn (see Queue's #longTurn). */
const TURN_MS = 10;
/** The clock is read once every this many + 1 attempts started (a power of two, less one). */
const TURN_CHECK_MASK = 31;

/**
 * The event loop's own setImmediate, found at load (see turnScheduler). Fake timers installed before taskq loaded (jest's
 * or vitest's, enabled for every test file) put a fake one there, which no one runs once they are uninstalled or
 * installed anew: their fake (@sinonjs/fake-timers) keeps the one it replaced as its clock's `_setImmediate`.
 */
const loadedSetImmediate = typeof setImmediate === "function" ? eventLoopSetImmediate(setImmediate) : undefined;

/** Where there is no setImmediate (jest's jsdom environment, a bundle for a browser): a timer, which also lets the event loop turn. */
const onTimer = (callback: () => void): unknown => setTimeout(callback, 0);

function eventLoopSetImmediate(found: typeof setImmediate): typeof setImmediate {
  let real = found;
  for (let depth = 0; depth < 8; depth++) {
    const original = (real as { clock?: { _setImmediate?: unknown } }).clock?._setImmediate;
    if (typeof original !== "function" || original === real) break;
    real = original as typeof setImmediate;
  }
  return real;
}

/**
 * How #longTurn takes its turn: setImmediate, faked or not, except when fake timers fake it but
 * not `performance` (`toFake: ["setImmediate"]`, or with `Date` that `vi.setSystemTime` moves on).
 * The turn then came as real time passed, which no advance of fake time stands for: the faked
 * setImmediate never ran, and the queue stalled for good. The event loop's own, found at load, runs then.
 */
function turnScheduler(): (callback: () => void) => unknown {
  if (typeof setImmediate !== "function") return loadedSetImmediate ?? onTimer;
  if (setImmediate === loadedSetImmediate || loadedSetImmediate === undefined) return setImmediate;
  // A faked performance is a plain object whose now is its own; the real one's is Performance's.
  const { Performance } = globalThis as { Performance?: { prototype: { now: unknown } } };
  return Performance !== undefined && performance.now === Performance.prototype.now ? loadedSetImmediate : setImmediate;
}

/**
 * An in-process task queue: priorities, delayed tasks, retries with backoff,
 * per-attempt timeouts, DAG dependencies with cascading cancel, dead letters
 * and graceful shutdown. Node runs one thread, so state needs no lock; every
 * state change happens in a synchronous section and dispatch follows it.
 */
export class Queue {
  readonly #handlers: Map<string, Handler<unknown, unknown>>;
  /** Methods the handlers object inherits (a class's), named when a task's type is one of them. */
  readonly #inherited: ReadonlySet<string>;
  readonly #concurrency: number;
  readonly #backoff: Backoff;
  readonly #defaultMaxAttempts: number;
  readonly #events = new QueueEvents();
  readonly #tasks = new TaskTable();
  /** The task whose attempt's started event is being emitted, and its last attempt's failure, a retry's (see cancel). */
  #announcing: { record: TaskRecord; failed: unknown } | undefined;
  readonly #schedule = new Schedule(() => this.#pump());
  readonly #finalizer = new Finalizer(this.#tasks, this.#schedule, this.#events, (record) => this.#enqueue(record, true));
  readonly #stop = new QueueShutdown({
    tasks: this.#tasks,
    schedule: this.#schedule,
    events: this.#events,
    finalizer: this.#finalizer,
    failAttempt: (record, context, error) => this.#failAttempt(record, context, error),
    resume: () => (this.#started ? this.#pump() : this.start()),
  });
  #seq = 0;
  #started = false;
  #pumping = false;
  #pumpAgain = false;
  /** Attempts started since #pump last looked at the clock (see #longTurn). */
  #starts = 0;
  /**
   * When (performance.now()) the event loop last had a turn through #longTurn's setImmediate, or
   * -1 until #longTurn first reads the clock. The monotonic clock, so that a wall clock stepped
   * either way (NTP; a test's vi.setSystemTime) gives no turn early: under fake timers, an
   * early one waited for a faked setImmediate that nothing ran. `performance`, as fake timers fake
   * it with setImmediate (process.hrtime, left real, made that setImmediate the queue's only way on
   * under load); first read at the first check, not here, as its first use loads perf_hooks, which a
   * run of a few tasks that neither retry nor wait needs for nothing else.
   */
  #turnAt = -1;
  /**
   * Date.now() at the same moment: a turn also waits for 10 ms on Date's clock, so that fake timers
   * that fake setImmediate and Date but not performance (the real one moving on alone) give none.
   */
  #turnDateAt = 0;
  /** Set while that setImmediate is pending: nothing starts until it runs. */
  #turnPending = false;
  readonly #runner = new AttemptRunner((context, ok, outcome) => {
    // A thenable settled from its abort listener as a hard stop aborts it: recorded once the stop has cancelled what had not started.
    if (this.#stop.settlesLater) queueMicrotask(() => this.#finishAttempt(context, ok, outcome));
    else this.#finishAttempt(context, ok, outcome);
  });

  constructor(options: QueueOptions) {
    const resolved = resolveQueueOptions(options);
    this.#concurrency = resolved.concurrency;
    this.#handlers = resolved.handlers;
    this.#inherited = resolved.inherited;
    this.#backoff = resolved.backoff;
    this.#defaultMaxAttempts = resolved.defaultMaxAttempts;
  }

  /** Subscribes to an event; returns the function that unsubscribes. */
  on<E extends QueueEventName>(name: E, listener: (event: QueueEventMap[E]) => unknown): () => void {
    return this.#events.on(name, listener);
  }

  /**
   * Adds a task and returns its id. Idempotent on id: an id already submitted
   * returns at once and changes nothing. Throws QueueClosedError after shutdown
   * began, UnknownHandlerError and UnknownDependencyError for bad specs.
   */
  submit<P>(spec: TaskSpec<P>): string {
    if (this.#stop.closing) throw new QueueClosedError();
    // From JavaScript: reading `type` of null would throw a TypeError, and of a string find no handler for "undefined".
    if (typeof spec !== "object" || spec === null) throw new TaskqError("INVALID_TASK", `a task must be an object ({ type, payload, ... }), got ${shown(spec)}`);
    if (!this.#handlers.has(spec.type)) {
      if (typeof spec.type === "string") throw new UnknownHandlerError(spec.type, [...this.#handlers.keys()], this.#inherited.has(spec.type));
      // From JavaScript: none given, or not a string, would be quoted as the type "undefined" or "5".
      const task = typeof spec.id === "string" && spec.id !== "" ? `task ${JSON.stringify(spec.id)}: type` : "a task's type";
      const types = this.#handlers.size === 0 ? "the queue has none" : [...this.#handlers.keys()].join(", ");
      throw new TaskqError("INVALID_TASK", `${task} must be a string naming a handler (${types}), got ${shown(spec.type)}`);
    }
    // A number would be a second id for the same task: get("5") finds nothing where get(5) does.
    if (spec.id !== undefined && spec.id !== null && typeof spec.id !== "string") throw new TaskqError("INVALID_TASK", `a task's id must be a string, got ${shown(spec.id)}`);
    // One map lookup per submit: a generated id is unique by construction.
    const id = spec.id ? spec.id : this.#tasks.freeId(this.#seq + 1);
    if (spec.id && this.#tasks.has(id)) return id;
    // A spec without an id is named by its type: the id made for it is not taken if it is refused, and is the next task's.
    const name = spec.id ? taskName(id) : taskName(id, spec.type);
    const dependencies = resolveDependencies(this.#tasks, id, spec.dependsOn, name);
    // The sequence moves only for a task taken: a refused spec uses up no `task-<n>` id.
    const record = createRecord(id, spec, this.#seq + 1, this.#defaultMaxAttempts, name);
    this.#seq++;
    this.#tasks.add(record);
    const failed = dependencies.length === 0 ? undefined : dependencies.find((d) => d.status === "FAILED" || d.status === "CANCELLED");
    if (failed === undefined) {
      for (const dependency of dependencies) {
        if (dependency.status === "SUCCEEDED") continue;
        record.waitingOn++;
        addDependent(dependency, record);
      }
      if (record.waitingOn === 0) this.#enqueue(record, false);
      this.#announce(record, spec, dependencies);
    } else {
      // Its end was settled as it came: a shutdown begun by a listener of its `submitted` event cancels it because of that
      // dependency first (see announceDoomed), not as a task not started.
      this.#finalizer.announceDoomed(record, failed, () => this.#announce(record, spec, dependencies));
    }
    this.#pump();
    return id;
  }

  /** Emits a task's `submitted` event. */
  #announce(record: TaskRecord, spec: TaskSpec<unknown>, dependencies: readonly TaskRecord[]): void {
    const { id } = record;
    if (this.#events.has("submitted")) {
      const event: QueueEventMap["submitted"] = {
        id,
        type: spec.type,
        priority: spec.priority ?? "normal",
        status: record.status,
        dependsOn: dependencies.map((d) => d.id),
      };
      if (record.runAt > 0) event.runAt = record.runAt;
      // A listener that dispatches (start(), a submit of its own) must not start this task before the
      // other listeners have been told of it: the dispatch waits for submit's #pump.
      const pumping = this.#pumping;
      this.#pumping = true;
      try {
        this.#events.emit("submitted", event);
      } finally {
        this.#pumping = pumping;
      }
    }
  }

  /** Starts dispatching. Tasks may be submitted before. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#pump();
  }

  /**
   * Cancels a task. A queued or blocked task ends CANCELLED at once; a running
   * one has its signal aborted and ends CANCELLED when its handler settles (one
   * cancelled from its `started` listener, at once: its handler is not called).
   * Dependents are cancelled too. Returns true for the call that cancelled it;
   * false if the task had already ended, or a cancel of it had already been asked
   * for, or a hard shutdown (its deadline or signal) is stopping it (it runs on
   * until its handler settles or the shutdown's grace ends), changing nothing.
   */
  cancel(id: string): boolean {
    const record = this.#tasks.get(id);
    if (record === undefined) throw new TaskNotFoundError(id);
    // A second cancel of a running task would replace its error with one its signal does not carry; so would a cancel
    // of one a hard stop has aborted already (every task running after the stop is being stopped by it or its timeout).
    if (isTerminal(record.status) || record.cancelRequested || (record.status === "RUNNING" && this.#stop.hardStopped)) return false;
    // A task waiting to retry (out its backoff, or past it for a slot, READY) did start: its failed attempt's error is the
    // cancel's cause, and quoted, as a shutdown's cancel has it (a cause not quoted is read as the attempt the cancel cut
    // short, whose kill it would tell). A running one's is its running attempt's, told when it ends.
    const waited = record.status !== "RUNNING" && record.attempts > 0;
    // A retry's attempt being announced (a cancel from its started listener) did nothing yet: the task is one cancelled
    // while it waited for that retry. Made here, not where the announcement ends, so that a listener that also stops the
    // queue at once (whose hard stop finalizes the task with its error before then) keeps the failure too.
    const announced = this.#announcing?.record === record && record.attempts > 1 ? this.#announcing : undefined;
    const error = waited
      ? notRetriedCancel(id, record.attempts, record.error)
      : announced !== undefined
        ? notRetriedCancel(id, record.attempts - 1, announced.failed)
        : new TaskCancelledError("cancel", `task "${id}" was cancelled`);
    if (record.status === "RUNNING") {
      record.cancelRequested = true;
      // Kept as the task's error: the signal may already carry another reason (a timeout).
      record.error = error;
      record.current?.abort(error);
      return true;
    }
    this.#finalizer.finalize(record, "CANCELLED", { error, cancelReason: "cancel" });
    this.#pump();
    return true;
  }

  /** Resolves with the task's result once it reaches a terminal status; rejects if `signal` aborts first. */
  wait(id: string, options: { signal?: AbortSignal | undefined } = {}): Promise<TaskResult> {
    const problem = waitOptionsProblem(options);
    if (problem !== undefined) return Promise.reject(new TaskqError("INVALID_OPTION", problem));
    const record = this.#tasks.get(id);
    if (record === undefined) return Promise.reject(new TaskNotFoundError(id));
    if (isTerminal(record.status)) return Promise.resolve(record.result());
    return waitForRecord(record, options?.signal);
  }

  /**
   * The result of a task so far (its status may not be terminal yet); undefined for an id the queue
   * does not hold. Throws TaskNotFoundError for an id that is not a string (from JavaScript), as
   * cancel, wait and forget do: `get(5)` is not a task "5" that has not been submitted.
   */
  get(id: string): TaskResult | undefined {
    const record = this.#tasks.get(id);
    if (record !== undefined) return record.result();
    if (typeof id !== "string") throw new TaskNotFoundError(id);
    return undefined;
  }

  /**
   * Drops an ended task, so that a long-lived queue does not keep every task it was ever given:
   * `get(id)` then returns undefined, `wait(id)` rejects with TASK_NOT_FOUND, a `dependsOn`
   * naming it is refused, a `submit` of its id is a new task, and it leaves `stats()` (but not
   * its `retries`) and `deadLetters()`. Returns false, forgetting nothing, for a task that has
   * not ended; throws TaskNotFoundError for an id the queue does not hold.
   */
  forget(id: string): boolean {
    const record = this.#tasks.get(id);
    if (record === undefined) throw new TaskNotFoundError(id);
    if (!isTerminal(record.status)) return false;
    this.#tasks.remove(record);
    return true;
  }

  stats(): QueueStats {
    return this.#tasks.stats();
  }

  /** FAILED tasks, oldest failure first. */
  deadLetters(): TaskResult[] {
    return this.#tasks.deadLetters();
  }

  /**
   * Stops accepting tasks, then drains (or, with drain: false, cancels what
   * has not started). When the deadline passes or `signal` aborts, running
   * attempts are aborted and every task left ends CANCELLED (after `abortGraceMs`, a
   * wait for the aborted handlers that the signal aborting, or a call with a deadline
   * already passed, ends at once). Always resolves,
   * and leaves no timer or signal listener behind. Calling it again escalates
   * and returns the same promise: an option a later call leaves out keeps what
   * the earlier calls gave, and one it gives counts where it tightens them
   * (drain: false, a deadline earlier than theirs, a signal of its own, an
   * abortGraceMs shorter than the shortest given: the first given counts, where
   * none was, and shortens a grace under way; a longer one changes nothing).
   */
  shutdown(given: ShutdownOptions = {}): Promise<ShutdownResult> {
    return this.#stop.begin(given);
  }

  /** Puts a runnable task in the delayed heap (runAt ahead) or the ready heap. */
  #enqueue(record: TaskRecord, announce: boolean): void {
    const from = record.status;
    const waitMs = record.runAt - Date.now();
    if (waitMs > 0) {
      record.dueAt = performance.now() + waitMs;
      this.#tasks.setStatus(record, "SCHEDULED");
      this.#schedule.delayed.push(record);
      if (announce && this.#events.has("scheduled")) this.#events.emit("scheduled", { id: record.id, runAt: record.runAt });
      return;
    }
    this.#tasks.setStatus(record, "READY");
    this.#schedule.ready.push(record);
    if (announce && this.#events.has("ready")) this.#events.emit("ready", { id: record.id, from });
  }

  /** Dispatches while there is room; re-entrant calls fold into the running loop. */
  #pump(): void {
    if (!this.#started || this.#stop.hardStopped) return;
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#pumpAgain = false;
        this.#schedule.promoteDue(this.#promote);
        const ready = this.#schedule.ready;
        while (this.#tasks.count("RUNNING") < this.#concurrency && ready.size > 0) {
          if (this.#turnPending || ((++this.#starts & TURN_CHECK_MASK) === 0 && this.#longTurn())) break;
          this.#startAttempt(ready.pop()!);
        }
      } while (this.#pumpAgain);
    } finally {
      this.#pumping = false;
    }
    this.#schedule.arm(this.#stop.hardStopped);
    this.#stop.checkDrained();
  }

  /**
   * Whether the event loop has had no turn for TURN_MS while attempts started: handlers that settle
   * without I/O (a cache hit, a check) start the next attempt from the last one's settling, a chain
   * of microtasks in which no timer runs (a shutdown's deadline, an attempt's timeout), no signal's
   * abort and no I/O. Then it gets one (a setImmediate), after which #pump goes on.
   */
  #longTurn(): boolean {
    const now = performance.now();
    const elapsed = now - this.#turnAt;
    // The first check, or a clock that went back (a test's fake performance installed or removed): count from now.
    if (this.#turnAt < 0 || elapsed < 0) {
      this.#turnAt = now;
      this.#turnDateAt = Date.now();
      return false;
    }
    const date = Date.now();
    const dateElapsed = date - this.#turnDateAt;
    // A wall clock stepped back: counted from now, as it does not say when the last turn was.
    if (dateElapsed < 0) this.#turnDateAt = date;
    const schedule = turnScheduler();
    // On the event loop's own setImmediate, a turn taken early costs a setImmediate: either clock's 10 ms takes it, so that
    // one a test froze (toFake: ["Date"], vi.setSystemTime without fake timers, toFake: ["performance"]) no longer kept
    // the event loop from turning at all. On a faked one, both: a turn taken early waited for a setImmediate no one ran.
    const due = schedule === loadedSetImmediate ? elapsed >= TURN_MS || dateElapsed >= TURN_MS : elapsed >= TURN_MS && dateElapsed >= TURN_MS;
    if (!due) return false;
    this.#turnPending = true;
    schedule(this.#afterTurn);
    return true;
  }

  readonly #afterTurn = (): void => {
    this.#turnPending = false;
    this.#turnAt = performance.now();
    this.#turnDateAt = Date.now();
    this.#pump();
  };

  /** A delayed task whose time has come. */
  readonly #promote = (record: TaskRecord): void => {
    this.#tasks.setStatus(record, "READY");
    this.#schedule.ready.push(record);
    if (this.#events.has("ready")) this.#events.emit("ready", { id: record.id, from: "SCHEDULED" });
  };

  #startAttempt(record: TaskRecord): void {
    // A retry's: its last attempt's failure, which a cancel from the started listener below would otherwise replace.
    const failed = record.error;
    const outer = this.#announcing;
    this.#tasks.setStatus(record, "RUNNING");
    record.attempts++;
    const context = new RecordAttemptContext(record, record.attempts, Date.now(), this.#events);
    record.current = context;
    if (this.#events.has("started")) {
      this.#announcing = { record, failed };
      try {
        this.#events.emit("started", { id: record.id, attempt: record.attempts, maxAttempts: record.maxAttempts });
      } finally {
        this.#announcing = outer;
      }
      // A listener that stopped the queue at once has ended the task already: its handler
      // would run after the drain, and its timeout timer outlive the queue.
      if (record.current !== context) return;
      // One that cancelled it: its handler would start its work with its signal aborted already, which one that does
      // not look first (a write, a request) would carry out for a task cancelled before it was called.
      // A retry's attempt so cancelled did nothing: the task ends as one cancelled while it waited for that retry,
      // `not retried (attempt 1 failed: ...)` with that failure as the cause (made by cancel, see #announcing).
      if (record.cancelRequested) {
        this.#finalizer.finalize(record, "CANCELLED", { error: record.error, cancelReason: "cancel" });
        this.#stop.notifyIdle();
        return;
      }
      // One that stopped it with an abortGraceMs left the attempt for the grace to end: it has
      // not begun, so it ends here, as the hard stop ends those it waited for.
      if (this.#stop.hardStopped) {
        this.#finalizer.finalize(record, "CANCELLED", { error: this.#stop.stopReason, cancelReason: "shutdown" });
        this.#stop.notifyIdle();
        return;
      }
    }
    this.#runner.run(this.#handlers.get(record.type)!, record.payload, context, record.timeoutMs);
  }

  /** Records an attempt's outcome: success, retry, failure or cancellation. */
  #finishAttempt(context: RecordAttemptContext, ok: boolean, outcome: unknown): void {
    const record = context.record;
    if (record.current !== context) return; // already finalized by a hard stop, or a thenable settling twice
    context.clearTimer();
    record.current = undefined;
    if (ok && !record.cancelRequested) {
      this.#finalizer.finalize(record, "SUCCEEDED", { value: outcome });
    } else if (record.cancelRequested) {
      this.#finalizer.finalize(record, "CANCELLED", { error: record.error, cancelReason: "cancel" });
    } else if (this.#stop.hardStopped && !(context.abortReason instanceof AttemptTimeoutError) && !endedBeforeStop(outcome)) {
      // An attempt whose timeout came first ends by it: the stop only found it being stopped already. One whose handler says
      // it had failed on its own before the stop's abort reached it (a shell that had exited with code 3) fails as it did
      // (#failAttempt: FAILED, or not retried), not recorded as stopped while its log tells how it ended.
      // How the stopped attempt ended is the cancel's cause: a shell's last lines say where it was when stopped.
      const stopReason = this.#stop.stopReason;
      const ended = ok ? stopReason : normalizeError(outcome, context);
      // In the stop's words: "aborted by shutdown", or those of the signal that stopped it (see QueueShutdown's hard stop).
      const error = ended === stopReason ? stopReason : new TaskCancelledError("shutdown", stopReason?.message ?? "aborted by shutdown", undefined, { cause: ended });
      this.#finalizer.finalize(record, "CANCELLED", { error, cancelReason: "shutdown" });
    } else if (this.#stop.begun && isShutdownStop(outcome)) {
      // The handler says the shutdown stopped its attempt (a shell that died of the signal that stopped the CLI).
      this.#finalizer.finalize(record, "CANCELLED", { error: outcome, cancelReason: "shutdown" });
    } else {
      this.#failAttempt(record, context, normalizeError(outcome, context));
    }
    this.#stop.notifyIdle();
    this.#pump();
  }

  #failAttempt(record: TaskRecord, context: RecordAttemptContext, error: unknown): void {
    const after = afterFailure(record, context.attempt, error, this.#stop.draining, this.#backoff, this.#stop.notRetriedWords);
    if (after.next === "fail") return this.#finalizer.finalize(record, "FAILED", { error });
    if (after.next === "cancel") return this.#finalizer.finalize(record, "CANCELLED", { error: after.error, cancelReason: "shutdown" });
    const { delayMs } = after;
    record.runAt = Date.now() + delayMs;
    record.dueAt = performance.now() + delayMs;
    record.error = error;
    this.#tasks.retries++;
    this.#tasks.setStatus(record, "SCHEDULED");
    this.#schedule.delayed.push(record);
    if (this.#events.has("retrying")) {
      this.#events.emit("retrying", { id: record.id, attempt: context.attempt, maxAttempts: record.maxAttempts, delayMs, runAt: record.runAt, error });
    }
  }
}

/**
 * The error of task `id` cancelled while it waited for its retry (or as that retry's attempt started, see #startAttempt):
 * attempt `attempt` failed with `failed`, quoted and the cause, as a shutdown's cancel of such a task has it (a cause not
 * quoted is read as the attempt the cancel cut short, whose kill it would tell).
 */
function notRetriedCancel(id: string, attempt: number, failed: unknown): TaskCancelledError {
  return new TaskCancelledError("cancel", `task "${id}" was cancelled: not retried (attempt ${attempt} failed: ${messageOf(failed)})`, undefined, { cause: failed });
}
