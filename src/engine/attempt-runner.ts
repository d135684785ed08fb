import { AttemptTimeoutError } from "./errors.js";
import { LongTimer } from "./long-timer.js";
import type { RecordAttemptContext } from "./task-record.js";
import type { AttemptContext, Handler } from "./types.js";

type Settle = (context: RecordAttemptContext, ok: boolean, outcome: unknown) => void;

/**
 * Calls handlers and reports each attempt's outcome to `settle`, once. A promise's
 * outcome comes when it settles; a synchronous handler's (a value, or a throw) in a
 * microtask, as a promise's would. One microtask serves every attempt settled
 * meanwhile: no closure or microtask per task on the hot path.
 */
export class AttemptRunner {
  readonly #settle: Settle;
  /** Attempts whose handler returned or threw synchronously, waiting for #flush. */
  readonly #settled: RecordAttemptContext[] = [];

  constructor(settle: Settle) {
    this.#settle = settle;
  }

  /** Starts the attempt's timeout (if any) and its handler. */
  run(handler: Handler<unknown, unknown>, payload: unknown, context: RecordAttemptContext, timeoutMs: number): void {
    if (timeoutMs > 0) context.timeoutTimer = new LongTimer(() => context.abort(new AttemptTimeoutError(timeoutMs)), timeoutMs);
    try {
      const outcome = handler(payload, new HandlerContext(context));
      // Reading `then` and calling it are inside the try: a hostile thenable fails the attempt, not the queue.
      if (typeof (outcome as PromiseLike<unknown> | null)?.then === "function") this.#follow(outcome as PromiseLike<unknown>, context);
      else this.#later(context, true, outcome);
    } catch (error) {
      this.#later(context, false, error);
    }
  }

  /**
   * Settles the attempt when `thenable` does. One that calls back before its `then` returns
   * (inside the dispatch loop that started the attempt) waits for a microtask, as a promise's
   * outcome always does: recorded in the loop, a zero-delay retry would start after tasks
   * submitted later. Of such outcomes, and a throw of `then`, the first counts.
   */
  #follow(thenable: PromiseLike<unknown>, context: RecordAttemptContext): void {
    let inThen = true;
    let queued = false;
    const settle = (ok: boolean, outcome: unknown): void => {
      if (!inThen) this.#settle(context, ok, outcome);
      else if (!queued) {
        queued = true;
        this.#later(context, ok, outcome);
      }
    };
    try {
      thenable.then(
        (value) => settle(true, value),
        (error: unknown) => settle(false, error),
      );
    } catch (error) {
      settle(false, error); // a hostile thenable fails the attempt, not the queue
    }
    inThen = false;
  }

  #later(context: RecordAttemptContext, ok: boolean, outcome: unknown): void {
    context.ok = ok;
    context.outcome = outcome;
    this.#settled.push(context);
    if (this.#settled.length === 1) queueMicrotask(this.#flush);
  }

  readonly #flush = (): void => {
    const settled = this.#settled;
    // Attempts started while flushing settle in this same loop, in order. Should settling
    // one throw (a fault of the queue's), the others still settle, and later ones get a
    // flush of their own: the first error is thrown once the list is empty.
    let fault: { error: unknown } | undefined;
    for (let i = 0; i < settled.length; i++) {
      const context = settled[i]!;
      try {
        this.#settle(context, context.ok, context.outcome);
      } catch (error) {
        fault ??= { error };
      }
      context.outcome = undefined;
    }
    settled.length = 0;
    if (fault !== undefined) throw fault.error;
  };
}

/**
 * What a handler sees of its attempt: fields of its own, so a wrapper that copies it
 * (`{ ...context, log }`) passes `signal` on, and none of the queue's state. `signal` is an
 * accessor of the object's own (one shared getter), so the AbortController is still made
 * only when a handler reads it. 200k no-op tasks: 0-0.5 µs an attempt more than handing the
 * handler the queue's own record of it; an object literal with a getter cost 2 µs.
 */
let SIGNAL: PropertyDescriptor; // set by HandlerContext's static block: its getter reads a private field

class HandlerContext implements AttemptContext {
  readonly taskId: string;
  readonly attempt: number;
  declare readonly signal: AbortSignal;
  readonly #context: RecordAttemptContext;

  constructor(context: RecordAttemptContext) {
    this.taskId = context.record.id;
    this.attempt = context.attempt;
    this.#context = context;
    Object.defineProperty(this, "signal", SIGNAL);
  }

  /**
   * On the prototype, not the object's own as `signal` is: a wrapper that copies the context with a spread
   * passes it on by name (`{ ...context, startClock: () => context.startClock() }`). Made own as `signal` is
   * (Object.defineProperties), it cost 0.2 µs an attempt more, 15% of a no-op task's time.
   */
  startClock(): void {
    this.#context.restartTimer();
  }

  static {
    SIGNAL = {
      enumerable: true,
      get(this: HandlerContext): AbortSignal {
        return this.#context.signal;
      },
    };
  }
}
