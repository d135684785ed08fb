/** Delay in milliseconds before retry number `attempt` (1 = the first retry). */
export type Backoff = (attempt: number) => number;

export interface ExponentialBackoffOptions {
  /** Delay before the first retry, before jitter. Default 1000 ms. */
  baseMs?: number;
  /** Upper bound of the delay, before jitter. Default 30000 ms. */
  maxMs?: number;
  /** Uniform random source in [0, 1); injectable so tests are exact. */
  random?: () => number;
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
  const { baseMs = 1000, maxMs = 30_000, random = Math.random } = options;
  return (attempt) => Math.floor(random() * (exponentialDelay(attempt, baseMs, maxMs) + 1));
}
