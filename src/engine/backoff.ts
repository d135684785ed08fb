import { messageOf, TaskqError } from "../errors.js";

/** Delay in milliseconds before retry number `attempt` (1 = the first retry). */
export type Backoff = (attempt: number) => number;

export interface ExponentialBackoffOptions {
  /** Delay before the first retry, before jitter. Default 1000 ms. */
  baseMs?: number | undefined;
  /** Upper bound of the delay, before jitter. Default 30000 ms. */
  maxMs?: number | undefined;
  /** Uniform random source in [0, 1); injectable so tests are exact. */
  random?: (() => number) | undefined;
}

/** base * 2^(attempt - 1), capped at max. Pure: no jitter, no clock. */
export function exponentialDelay(attempt: number, baseMs: number, maxMs: number): number {
  // 2 ** 1100 is Infinity, so the cap also covers overflow.
  return Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);
}

/**
 * Exponential backoff with "full jitter": uniform in [0, d], so a burst of
 * failures does not retry in lockstep.
 */
export function exponentialBackoff(options: ExponentialBackoffOptions = {}): Backoff {
  checkOptions(options);
  // null, for the options or any of them, is none given.
  const given = options ?? {};
  const baseMs = given.baseMs ?? 1000;
  const maxMs = given.maxMs ?? 30_000;
  const random = given.random ?? Math.random;
  return (attempt) => {
    const delayMs = exponentialDelay(attempt, baseMs, maxMs);
    // Clamped: a random source returning 1 (Math.random never does; an injected one may) would give d + 1, past the cap.
    return Math.min(delayMs, Math.max(0, Math.floor(random() * (delayMs + 1))));
  };
}

const OPTION_NAMES: ReadonlySet<string> = new Set<keyof ExponentialBackoffOptions>(["baseMs", "maxMs", "random"]);

/**
 * What the types refuse, refused when given, for JavaScript callers: `{ base: 100 }` (a
 * workflow file's name) would otherwise be ignored for the 1 s default, and a base of "abc"
 * would retry at once, every time.
 */
function checkOptions(options: unknown): asserts options is ExponentialBackoffOptions | null {
  if (options === null) return;
  if (typeof options !== "object") {
    throw new TaskqError("INVALID_OPTION", `exponentialBackoff options must be an object ({ baseMs, maxMs }), got ${messageOf(options)}`);
  }
  const unknown = Object.keys(options).filter((name) => !OPTION_NAMES.has(name));
  if (unknown.length > 0) {
    throw new TaskqError("INVALID_OPTION", `unknown exponentialBackoff option ${unknown.map((name) => JSON.stringify(name)).join(", ")}: the options are ${[...OPTION_NAMES].join(", ")}`);
  }
  const { baseMs, maxMs, random } = options as Record<keyof ExponentialBackoffOptions, unknown>;
  for (const [name, value] of [["baseMs", baseMs], ["maxMs", maxMs]] as const) {
    if (value !== undefined && value !== null && (typeof value !== "number" || Number.isNaN(value) || value < 0)) {
      const shown = typeof value === "string" ? `${JSON.stringify(value)} (a string)` : messageOf(value);
      throw new TaskqError("INVALID_OPTION", `exponentialBackoff ${name} must be a number of ms, 0 or more, got ${shown}`);
    }
  }
  if (random !== undefined && random !== null && typeof random !== "function") {
    throw new TaskqError("INVALID_OPTION", `exponentialBackoff random must be a function () => [0, 1), got ${messageOf(random)}`);
  }
}
