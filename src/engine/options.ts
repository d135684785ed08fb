import { shown, TaskqError } from "../errors.js";
import { backoffFunctionProblem, exponentialBackoff, type Backoff } from "./backoff.js";
import { isAbortSignal, notASignal } from "./shutdown-control.js";
import { orDefault } from "./task-spec.js";
import type { Handler } from "./types.js";

export interface QueueOptions {
  /** Attempts running at once. Default 4. */
  concurrency?: number | undefined;
  /** Handlers by task type; fixed at construction. */
  handlers: Record<string, Handler<never, unknown>>;
  /** Delay before each retry. Default: 100 ms * 2^(n-1), capped at 10 s, full jitter. */
  backoff?: Backoff | undefined;
  /** maxAttempts for specs that give none (or 0 or less). Default 3, also for 0 or less. */
  defaultMaxAttempts?: number | undefined;
}

export interface ShutdownOptions {
  /** true (default): run everything already submitted. false: cancel what has not started. */
  drain?: boolean | undefined;
  /** When to stop waiting and abort running attempts: ms from now, or a Date. */
  deadline?: number | Date | undefined;
  /** Aborting it stops at once, like a passed deadline; during `abortGraceMs`, it ends that wait. */
  signal?: AbortSignal | undefined;
  /**
   * After a hard stop, how long to wait for aborted handlers to settle before finalizing them anyway. Default 0;
   * Infinity, and a negative or NaN grace, are refused. The signal aborting, or a shutdown() call with a deadline passed, ends it at once.
   * Held up past its end (the process stopped and continued), it waits on as long as it came late, up to abortGraceMs more in all.
   * Of several shutdown() calls, the shortest given counts, whichever call's deadline or signal stops: a later call that gives
   * none keeps an earlier one's, one that gives a longer one changes nothing, and one that gives a shorter one during the
   * wait ends it that long after the stop (at once if that has passed). The default 0 is for when no call gave one.
   */
  abortGraceMs?: number | undefined;
}

export interface ShutdownResult {
  /** true when the deadline or signal cut the drain short. */
  hardStopped: boolean;
}

/** A Queue's options, checked and with their defaults filled in. */
export interface ResolvedQueueOptions {
  concurrency: number;
  handlers: Map<string, Handler<unknown, unknown>>;
  /** Methods the handlers object inherits (a class's), named when a task's type is one of them. */
  inherited: ReadonlySet<string>;
  backoff: Backoff;
  defaultMaxAttempts: number;
}

/** Checks a Queue's options and fills in their defaults; throws INVALID_OPTION for what is wrong. */
export function resolveQueueOptions(options: QueueOptions): ResolvedQueueOptions {
  checkOptionShape(options);
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TaskqError("INVALID_OPTION", `concurrency must be a positive integer, got ${shown(concurrency)}`);
  }
  // A number here would be called when the first attempt fails, and fail every task that retries.
  if (options.backoff !== undefined && options.backoff !== null && typeof options.backoff !== "function") {
    throw new TaskqError("INVALID_OPTION", `backoff must be a function (attempt) => ms, such as exponentialBackoff(), got ${shown(options.backoff)}`);
  }
  const backoffProblem = backoffFunctionProblem(options.backoff);
  if (backoffProblem !== undefined) throw new TaskqError("INVALID_OPTION", `backoff ${backoffProblem}`);
  // 0 or less is unset, as for a spec's maxAttempts (see orDefault).
  const defaultMaxAttempts = orDefault(options.defaultMaxAttempts, 3);
  if (!Number.isInteger(defaultMaxAttempts)) {
    throw new TaskqError("INVALID_OPTION", `defaultMaxAttempts must be an integer (0 or less, or none, for 3), got ${shown(defaultMaxAttempts)}`);
  }
  return {
    concurrency,
    handlers: new Map(Object.entries(options.handlers) as [string, Handler<unknown, unknown>][]),
    inherited: new Set(inheritedMethods(options.handlers)),
    backoff: options.backoff ?? exponentialBackoff({ baseMs: 100, maxMs: 10_000 }),
    defaultMaxAttempts,
  };
}

/**
 * What is wrong with wait()'s options, for JavaScript callers: a signal that is not one would
 * fail as "Invalid value used as weak map key", and a misspelt `sigal` leave a wait no signal
 * ends. null (or a null signal) is none.
 */
export function waitOptionsProblem(options: unknown): string | undefined {
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
