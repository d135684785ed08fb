/** Retry backoff of one task: base * 2^(attempt-1), capped at max. */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/**
 * Delay before the retry that follows failed attempt number `attempt` (1-based):
 * uniform in [0, min(base * 2^(attempt-1), max)] ("full jitter"), so a burst
 * of failures does not retry in lockstep. `random` is injectable for exact tests.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponential = policy.baseMs * 2 ** Math.max(attempt - 1, 0);
  const ceiling = Number.isFinite(exponential) ? Math.min(exponential, policy.maxMs) : policy.maxMs;
  return Math.floor(random() * (Math.max(ceiling, 0) + 1));
}
