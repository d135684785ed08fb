import { messageOf, TaskqError } from "../errors.js";
import { afterFailure, normalizeError, waitForRecord } from "./attempt-outcome.js";
import { AttemptRunner } from "./attempt-runner.js";
import { exponentialBackoff, type Backoff } from "./backoff.js";
import { AttemptTimeoutError, isShutdownStop, QueueClosedError, TaskCancelledError, TaskNotFoundError, UnknownHandlerError } from "./errors.js";
import { QueueEvents, type QueueEventMap, type QueueEventName } from "./events.js";
import { Finalizer } from "./finalize.js";
import { LongTimer } from "./long-timer.js";
import type { QueueOptions, ShutdownOptions, ShutdownResult } from "./options.js";
import { Schedule } from "./schedule.js";
import { checkShutdownOptions, isAbortSignal, notASignal, ShutdownControl, type StopCause } from "./shutdown-control.js";
import { RecordAttemptContext, TaskRecord } from "./task-record.js";
import { createRecord, orDefault, resolveDependencies, shown } from "./task-spec.js";
import { TaskTable } from "./task-table.js";
import { isTerminal, type Handler, type QueueStats, type TaskResult, type TaskSpec } from "./types.js";

export type { QueueOptions, ShutdownOptions, ShutdownResult } from "./options.js";

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
  readonly #schedule = new Schedule(() => this.#pump());
  readonly #finalizer = new Finalizer(this.#tasks, this.#schedule, this.#events, (record) => this.#enqueue(record, true));
  #seq = 0;
  #started = false;
  #closing = false;
  #drain = true;
  #hardStopped = false;
  #drained = false;
  #pumping = false;
  #pumpAgain = false;
  #shutdown: ShutdownControl | undefined;
  #idleWaiters: (() => void)[] = [];
  /** Ends a hard stop's abortGraceMs wait now; set while it waits. */
  #endGrace: (() => void) | undefined;
  readonly #runner = new AttemptRunner((context, ok, outcome) => this.#finishAttempt(context, ok, outcome));
  /** The signal reason of a hard stop, and the error of every task it ends. */
  #stopReason: TaskCancelledError | undefined;

  constructor(options: QueueOptions) {
    checkOptionShape(options);
    const concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new TaskqError("INVALID_OPTION", `concurrency must be a positive integer, got ${shown(concurrency)}`);
    }
    this.#concurrency = concurrency;
    this.#handlers = new Map(Object.entries(options.handlers) as [string, Handler<unknown, unknown>][]);
    this.#inherited = new Set(inheritedMethods(options.handlers));
    // A number here would be called when the first attempt fails, and fail every task that retries.
    if (options.backoff !== undefined && options.backoff !== null && typeof options.backoff !== "function") {
      throw new TaskqError("INVALID_OPTION", `backoff must be a function (attempt) => ms, such as exponentialBackoff(), got ${shown(options.backoff)}`);
    }
    this.#backoff = options.backoff ?? exponentialBackoff({ baseMs: 100, maxMs: 10_000 });
    // 0 or less is unset, as for a spec's maxAttempts (see orDefault).
    const defaultMaxAttempts = orDefault(options.defaultMaxAttempts, 3);
    if (!Number.isInteger(defaultMaxAttempts)) {
      throw new TaskqError("INVALID_OPTION", `defaultMaxAttempts must be an integer (0 or less, or none, for 3), got ${shown(defaultMaxAttempts)}`);
    }
    this.#defaultMaxAttempts = defaultMaxAttempts;
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
    if (this.#closing) throw new QueueClosedError();
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
    const dependencies = resolveDependencies(this.#tasks, id, spec.dependsOn);
    // The sequence moves only for a task taken: a refused spec uses up no `task-<n>` id.
    const record = createRecord(id, spec, this.#seq + 1, this.#defaultMaxAttempts);
    this.#seq++;
    this.#tasks.add(record);
    const failed = dependencies.length === 0 ? undefined : dependencies.find((d) => d.status === "FAILED" || d.status === "CANCELLED");
    if (failed === undefined) {
      for (const dependency of dependencies) {
        if (dependency.status === "SUCCEEDED") continue;
        record.waitingOn++;
        (dependency.dependents ??= []).push(record);
      }
      if (record.waitingOn === 0) this.#enqueue(record, false);
    }
    if (this.#events.has("submitted")) {
      const event: QueueEventMap["submitted"] = {
        id,
        type: spec.type,
        priority: spec.priority ?? "normal",
        status: record.status,
        dependsOn: dependencies.map((d) => d.id),
      };
      if (record.runAt > 0) event.runAt = record.runAt;
      this.#events.emit("submitted", event);
    }
    if (failed !== undefined) this.#finalizer.cancelForDependency(record, failed);
    this.#pump();
    return id;
  }

  /** Starts dispatching. Tasks may be submitted before. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#pump();
  }

  /**
   * Cancels a task. A queued or blocked task ends CANCELLED at once; a running
   * one has its signal aborted and ends CANCELLED when its handler settles.
   * Dependents are cancelled too. Returns false if the task had already ended.
   */
  cancel(id: string): boolean {
    const record = this.#tasks.get(id);
    if (record === undefined) throw new TaskNotFoundError(id);
    if (isTerminal(record.status)) return false;
    const error = new TaskCancelledError("cancel", `task "${id}" was cancelled`);
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

  /** The result of a task so far (its status may not be terminal yet). */
  get(id: string): TaskResult | undefined {
    return this.#tasks.get(id)?.result();
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
   * (drain: false, an earlier deadline) and returns the same promise.
   */
  shutdown(given: ShutdownOptions = {}): Promise<ShutdownResult> {
    checkShutdownOptions(given); // a bad option throws before anything changes
    const options = given ?? {}; // null is no options, as for wait(id, null)
    this.#closing = true;
    const shutdown = (this.#shutdown ??= new ShutdownControl());
    // Nothing left to run: drained as it is, so a deadline already passed cuts nothing short.
    this.#checkDrained();
    // Already drained: nothing to stop, and a timer or listener set now would never be cleaned up.
    if (this.#drained) return shutdown.promise;
    if (options.drain === false && this.#drain) {
      this.#drain = false;
      this.#cancelNotStarted("shutdown: not started");
    }
    const grace = options.abortGraceMs ?? 0;
    // A deadline already passed or a signal already aborted stops at once, before a queue
    // that was not started starts anything. During a hard stop's abortGraceMs, either ends
    // the wait for the aborted handlers, as the signal aborting then does; a deadline passing
    // then does not: the attempts it would abort have been.
    const stopped = shutdown.watch(options, (cause) => {
      if (!this.#hardStopped) void this.#hardStop(grace, cause);
      else if (cause === "signal") this.#endGrace?.();
    });
    if (stopped !== undefined) {
      if (!this.#hardStopped) void this.#hardStop(grace, stopped);
      else this.#endGrace?.();
    }
    if (!this.#started) this.start();
    else this.#pump();
    return shutdown.promise;
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
    if (!this.#started || this.#hardStopped) return;
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
        while (this.#tasks.count("RUNNING") < this.#concurrency && ready.size > 0) this.#startAttempt(ready.pop()!);
      } while (this.#pumpAgain);
    } finally {
      this.#pumping = false;
    }
    this.#schedule.arm(this.#hardStopped);
    this.#checkDrained();
  }

  /** A delayed task whose time has come. */
  readonly #promote = (record: TaskRecord): void => {
    this.#tasks.setStatus(record, "READY");
    this.#schedule.ready.push(record);
    if (this.#events.has("ready")) this.#events.emit("ready", { id: record.id, from: "SCHEDULED" });
  };

  #startAttempt(record: TaskRecord): void {
    this.#tasks.setStatus(record, "RUNNING");
    record.attempts++;
    const context = new RecordAttemptContext(record, record.attempts, Date.now());
    record.current = context;
    if (this.#events.has("started")) {
      this.#events.emit("started", { id: record.id, attempt: record.attempts, maxAttempts: record.maxAttempts });
      // A listener that stopped the queue at once has ended the task already: its handler
      // would run after the drain, and its timeout timer outlive the queue.
      if (record.current !== context) return;
      // One that stopped it with an abortGraceMs left the attempt for the grace to end: it has
      // not begun, so it ends here, as the hard stop ends those it waited for.
      if (this.#hardStopped) {
        this.#finalizer.finalize(record, "CANCELLED", { error: this.#stopReason, cancelReason: "shutdown" });
        this.#notifyIdle();
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
    } else if (this.#hardStopped && !(context.abortReason instanceof AttemptTimeoutError)) {
      // An attempt whose timeout came first ends by it: the stop only found it being stopped already.
      // How the stopped attempt ended is the cancel's cause: a shell's last lines say where it was when stopped.
      const ended = ok ? this.#stopReason : normalizeError(outcome, context);
      const error = ended === this.#stopReason ? this.#stopReason : new TaskCancelledError("shutdown", "aborted by shutdown", undefined, { cause: ended });
      this.#finalizer.finalize(record, "CANCELLED", { error, cancelReason: "shutdown" });
    } else if (this.#shutdown !== undefined && isShutdownStop(outcome)) {
      // The handler says the shutdown stopped its attempt (a shell that died of the signal that stopped the CLI).
      this.#finalizer.finalize(record, "CANCELLED", { error: outcome, cancelReason: "shutdown" });
    } else {
      this.#failAttempt(record, context, normalizeError(outcome, context));
    }
    this.#notifyIdle();
    this.#pump();
  }

  #failAttempt(record: TaskRecord, context: RecordAttemptContext, error: unknown): void {
    const after = afterFailure(record, context.attempt, error, this.#drain, this.#backoff);
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

  #cancelNotStarted(message: string): void {
    for (const record of this.#tasks.values()) {
      if (isTerminal(record.status) || record.status === "RUNNING") continue;
      // A task waiting to retry did start: its failed attempt's error stays in the message.
      const text = record.attempts > 0 ? `shutdown: not retried (attempt ${record.attempts} failed: ${messageOf(record.error)})` : message;
      const error = new TaskCancelledError("shutdown", text);
      this.#finalizer.finalize(record, "CANCELLED", { error, cancelReason: "shutdown" }, false);
    }
  }

  async #hardStop(graceMs: number, cause: StopCause): Promise<void> {
    if (this.#hardStopped || this.#shutdown === undefined) return;
    this.#hardStopped = true;
    this.#drain = false;
    this.#schedule.arm(true);
    this.#cancelNotStarted(cause === "deadline" ? "shutdown: not started before the deadline" : "shutdown: not started before the shutdown signal aborted");
    const reason = (this.#stopReason = new TaskCancelledError("shutdown", "aborted by shutdown"));
    const running = this.#tasks.running();
    for (const record of running) record.current?.abort(reason);
    if (this.#tasks.count("RUNNING") > 0 && graceMs > 0) {
      await new Promise<void>((resolve) => {
        const end = (): void => {
          timer.clear();
          this.#endGrace = undefined;
          resolve();
        };
        const timer = new LongTimer(end, graceMs);
        this.#idleWaiters.push(end);
        this.#endGrace = end;
      });
    }
    for (const record of running) {
      // A cancel asked for before the deadline stays its reason: the shutdown only stopped waiting for the handler.
      const context = record.current;
      if (record.cancelRequested) this.#finalizer.finalize(record, "CANCELLED", { error: record.error, cancelReason: "cancel" }, false);
      // So does a timeout: the attempt had timed out before the stop, which could not abort it again.
      else if (context?.abortReason instanceof AttemptTimeoutError) this.#failAttempt(record, context, context.abortReason);
      else this.#finalizer.finalize(record, "CANCELLED", { error: reason, cancelReason: "shutdown" }, false);
    }
    this.#checkDrained();
  }

  #notifyIdle(): void {
    if (this.#tasks.count("RUNNING") > 0 || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const waiter of waiters) waiter();
  }

  #checkDrained(): void {
    const shutdown = this.#shutdown;
    if (shutdown === undefined || this.#drained || this.#tasks.outstanding > 0 || this.#tasks.count("RUNNING") > 0) return;
    this.#drained = true;
    this.#schedule.disarm();
    this.#notifyIdle();
    if (this.#events.has("drained")) this.#events.emit("drained", { hardStopped: this.#hardStopped });
    shutdown.finish({ hardStopped: this.#hardStopped });
  }
}

/**
 * What is wrong with wait()'s options, for JavaScript callers: a signal that is not one would
 * fail as "Invalid value used as weak map key", and a misspelt `sigal` leave a wait no signal
 * ends. null (or a null signal) is none.
 */
function waitOptionsProblem(options: unknown): string | undefined {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== "object") return `wait options must be an object ({ signal }), got ${shown(options)}`;
  // It has no keys of its own: taken for options without a signal, it would leave a wait no signal ends.
  if (isAbortSignal(options)) return "wait options must be an object ({ signal }), got an AbortSignal: pass it as wait(id, { signal })";
  const unknown = Object.keys(options).filter((name) => name !== "signal");
  if (unknown.length > 0) return `unknown wait option ${unknown.map((name) => JSON.stringify(name)).join(", ")}: the option is signal`;
  const { signal } = options as { signal?: unknown };
  if (signal !== undefined && signal !== null && !isAbortSignal(signal)) return `wait's signal must be an AbortSignal, got ${notASignal(signal)}`;
  return undefined;
}

/** The options a Queue takes: a misspelt one (`concurrensy`) would otherwise be ignored. */
const OPTION_NAMES: ReadonlySet<string> = new Set<keyof QueueOptions>(["concurrency", "handlers", "backoff", "defaultMaxAttempts"]);

/**
 * What the types refuse, refused at construction for JavaScript callers: no options object,
 * no `handlers` object, a handler that is not a function (it would fail each of its tasks
 * at their first attempt instead), or an option the queue does not know.
 */
function checkOptionShape(options: unknown): asserts options is QueueOptions {
  if (typeof options !== "object" || options === null) {
    throw new TaskqError("INVALID_OPTION", `Queue options must be an object with handlers by task type, got ${shown(options)}`);
  }
  const unknown = Object.keys(options).filter((name) => !OPTION_NAMES.has(name));
  if (unknown.length > 0) {
    throw new TaskqError("INVALID_OPTION", `unknown Queue option ${unknown.map((name) => JSON.stringify(name)).join(", ")}: the options are ${[...OPTION_NAMES].join(", ")}`);
  }
  const { handlers } = options as { handlers?: unknown };
  // A Map has no entries of its own: every task would be refused with "no handler for task type".
  const isMap = handlers instanceof Map;
  if (typeof handlers !== "object" || handlers === null || Array.isArray(handlers) || isMap) {
    const got = Array.isArray(handlers) ? "an array" : isMap ? "a Map: Object.fromEntries(map) is one" : shown(handlers);
    throw new TaskqError("INVALID_OPTION", `handlers must be an object of functions by task type ({ email: async (payload, ctx) => ... }), got ${got}`);
  }
  for (const [type, handler] of Object.entries(handlers)) {
    if (typeof handler !== "function") {
      throw new TaskqError("INVALID_OPTION", `handler ${JSON.stringify(type)} must be a function (payload, ctx) => result, got ${shown(handler)}`);
    }
  }
  // Handlers are own properties, as the Go design's map by task type: a class instance's methods
  // would leave a queue with no handlers, every submit refused with "the queue has no handlers".
  const inherited = inheritedMethods(handlers);
  if (Object.keys(handlers).length === 0 && inherited.length > 0) {
    const first = inherited[0]!;
    throw new TaskqError(
      "INVALID_OPTION",
      `handlers must be the object's own properties, by task type: ${inherited.map((name) => JSON.stringify(name)).join(", ")} ${inherited.length === 1 ? "is" : "are"} inherited (a class's methods?); pass { ${first}: instance.${first}.bind(instance), ... }`,
    );
  }
}

/**
 * The functions `handlers` inherits and does not hold itself, constructors aside, and the chain's
 * root too: Object.prototype, of this realm or another (a vm context's).
 */
function inheritedMethods(handlers: object): string[] {
  const names: string[] = [];
  for (let proto: object | null = Object.getPrototypeOf(handlers) as object | null; proto !== null && Object.getPrototypeOf(proto) !== null; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
      if (name !== "constructor" && typeof value === "function" && !Object.hasOwn(handlers, name) && !names.includes(name)) names.push(name);
    }
  }
  return names;
}
