import { shown, TaskqError } from "../errors.js";
import { formatMs } from "./errors.js";

/** Delay in milliseconds before retry number `attempt` (1 = the first retry). */
export type Backoff = (attempt: number) => number;

export interface ExponentialBackoffOptions {
  /** Delay before the first retry, before jitter. Default 1000 ms (or `maxMs`, if less). */
  baseMs?: number | undefined;
  /** Upper bound of the delay, before jitter: not under `baseMs`. Default 30000 ms (or `baseMs`, if more). */
  maxMs?: number | undefined;
  /** Uniform random source in [0, 1); injectable so tests are exact. */
  random?: (() => number) | undefined;
}

/**
 * base * 2^(attempt - 1), capped at max. Pure: no jitter, no clock. Its bounds are checked as
 * exponentialBackoff checks them (a `maxMs` of Infinity returned Infinity, which a backoff built
 * on it would hand the queue, failing the task instead of retrying it); a max under the base caps
 * every delay at it.
 */
export function exponentialDelay(attempt: number, baseMs: number, maxMs: number): number {
  checkAttempt("exponentialDelay", attempt);
  // Both bounds are required: from JavaScript, one left out (undefined) was taken as none by checkBounds, and the delay came out NaN.
  for (const [name, value] of [["baseMs", baseMs], ["maxMs", maxMs]] as const) {
    if (value === undefined) throw new TaskqError("INVALID_OPTION", `exponentialDelay ${name} must be a number of ms, 0 or more, got undefined: exponentialDelay(attempt, baseMs, maxMs) takes all three`);
  }
  checkBounds("exponentialDelay", baseMs, maxMs);
  return delay(attempt, baseMs, maxMs);
}

/**
 * An attempt number, a whole one: NaN (or undefined, or a string, from JavaScript) would make the delay NaN, and a
 * fraction (1.5) or Infinity count no retry, yet gave a delay between two retries' (or the cap). 0 or less is the first retry.
 */
function checkAttempt(caller: string, attempt: unknown): asserts attempt is number {
  if (typeof attempt !== "number" || !Number.isInteger(attempt)) {
    throw new TaskqError("INVALID_OPTION", `${caller} attempt must be a whole number (1 for the first retry), got ${shown(attempt)}`);
  }
}

/** exponentialDelay, of bounds already checked (exponentialBackoff's, once). */
function delay(attempt: number, baseMs: number, maxMs: number): number {
  // 2 ** 1100 is Infinity, so the cap also covers overflow; a base of 0 stays 0 (0 * Infinity is NaN: `maxMs: 0` alone, whose base is 0, failed its task at retry 1025).
  return baseMs === 0 ? 0 : Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);
}

/**
 * Exponential backoff with "full jitter": uniform in [0, d], so a burst of
 * failures does not retry in lockstep. As a workflow file's `backoff`: a `baseMs` over the
 * default max raises the max to it (`baseMs: 60_000` alone is a minute, not capped at 30 s), a
 * `maxMs` under the default base lowers the base to it, and a `maxMs` under a `baseMs` given is
 * refused.
 */
export function exponentialBackoff(options: ExponentialBackoffOptions = {}): Backoff {
  checkOptions(options);
  // null, for the options or any of them, is none given.
  const given = options ?? {};
  const maxMs = given.maxMs ?? Math.max(given.baseMs ?? 0, 30_000);
  const baseMs = given.baseMs ?? Math.min(maxMs, 1000);
  const random = given.random ?? Math.random;
  return (attempt) => {
    checkAttempt("exponentialBackoff's backoff", attempt);
    const delayMs = delay(attempt, baseMs, maxMs);
    const drawn: unknown = random();
    // NaN (or not a number) from an injected source made the delay NaN; one outside [0, 1) is clamped, below.
    if (typeof drawn !== "number" || Number.isNaN(drawn)) {
      throw new TaskqError("INVALID_OPTION", `exponentialBackoff random must return a number in [0, 1), got ${shown(drawn)}`);
    }
    // Clamped: a random source returning 1 (Math.random never does; an injected one may) would give d + 1, past the cap.
    return Math.min(delayMs, Math.max(0, Math.floor(drawn * (delayMs + 1))));
  };
}

const OPTION_NAMES: ReadonlySet<string> = new Set<keyof ExponentialBackoffOptions>(["baseMs", "maxMs", "random"]);

/** A `baseMs` and a `maxMs` (undefined: not given), each a number of ms, 0 or more, and finite. */
function checkBounds(caller: string, baseMs: unknown, maxMs: unknown): void {
  for (const [name, value] of [["baseMs", baseMs], ["maxMs", maxMs]] as const) {
    if (value !== undefined && (typeof value !== "number" || Number.isNaN(value) || value < 0)) {
      throw new TaskqError("INVALID_OPTION", `${caller} ${name} must be a number of ms, 0 or more, got ${shown(value)}`);
    }
  }
  if (typeof baseMs === "number" && !Number.isFinite(baseMs)) {
    throw new TaskqError("INVALID_OPTION", `${caller} baseMs must be a finite number of ms, got ${baseMs}: every retry would wait for ever`);
  }
  // A cap of Infinity is no cap: the doubling overflows to Infinity at retry 1025 (of a 1 s base), which fails the task there instead of retrying it.
  if (typeof maxMs === "number" && !Number.isFinite(maxMs)) {
    throw new TaskqError(
      "INVALID_OPTION",
      `${caller} maxMs must be a finite number of ms, got ${maxMs}: the doubling delay would reach Infinity, and the task would fail there instead of retrying; for a cap out of the way, give a long one (2_592_000_000 for 30 days)`,
    );
  }
}

/**
 * What the types refuse, refused when given, for JavaScript callers: `{ base: 100 }` (a
 * workflow file's name) would otherwise be ignored for the 1 s default, and a base of "abc"
 * would retry at once, every time.
 */
function checkOptions(options: unknown): asserts options is ExponentialBackoffOptions | null {
  if (options === null) return;
  // An array: a list of delays, which a backoff of its own gives ((attempt) => delays[attempt - 1]); `[]` was taken for no options.
  if (typeof options !== "object" || Array.isArray(options)) {
    const hint = Array.isArray(options)
      ? ": for a list of delays, pass a backoff of your own, (attempt) => delays[Math.min(attempt, delays.length) - 1]"
      : typeof options === "number"
        ? `: for a base of ${options} ms, pass exponentialBackoff({ baseMs: ${options} })`
        : "";
    throw new TaskqError("INVALID_OPTION", `exponentialBackoff options must be an object ({ baseMs, maxMs }), got ${shown(options)}${hint}`);
  }
  const unknown = Object.keys(options).filter((name) => !OPTION_NAMES.has(name));
  if (unknown.length > 0) {
    throw new TaskqError("INVALID_OPTION", `unknown exponentialBackoff option ${unknown.map((name) => JSON.stringify(name)).join(", ")}: the options are ${[...OPTION_NAMES].join(", ")}`);
  }
  const { baseMs, maxMs, random } = options as Record<keyof ExponentialBackoffOptions, unknown>;
  checkBounds("exponentialBackoff", baseMs ?? undefined, maxMs ?? undefined);
  if (typeof baseMs === "number" && typeof maxMs === "number" && maxMs < baseMs) {
    // Both values named, each also as a duration: the cap would cut every delay to it, the base said nothing.
    throw new TaskqError("INVALID_OPTION", `exponentialBackoff maxMs must not be less than baseMs, ${msWords(baseMs)}, got ${msWords(maxMs)}`);
  }
  if (random !== undefined && random !== null && typeof random !== "function") {
    throw new TaskqError("INVALID_OPTION", `exponentialBackoff random must be a function () => [0, 1), got ${shown(random)}`);
  }
}

/** 90000 -> "90000 ms (1m30s)", 250 -> "250 ms", 0.1 + 0.2 -> "0.3 ms" (to the microsecond, as formatMs says it). */
function msWords(ms: number): string {
  const exact = Math.round(ms * 1000) / 1000;
  return exact < 1000 ? `${exact} ms` : `${exact} ms (${formatMs(ms)})`;
}

/**
 * What is wrong with `backoff`, a function, for being one of this module's that makes or reads a
 * backoff rather than being one: `backoff: exponentialBackoff` would be called with the attempt
 * as its options at the first retry, and fail the task there ("options must be an object, got 1").
 */
export function backoffFunctionProblem(backoff: unknown): string | undefined {
  if (backoff === exponentialBackoff) return "is exponentialBackoff itself, which makes a backoff: pass exponentialBackoff() or exponentialBackoff({ baseMs, maxMs })";
  if (backoff === exponentialDelay) return "is exponentialDelay, whose arguments are (attempt, baseMs, maxMs): pass exponentialBackoff({ baseMs, maxMs }), or (attempt) => exponentialDelay(attempt, baseMs, maxMs)";
  return undefined;
}
