import type { Backoff } from "./backoff.js";
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
   */
  abortGraceMs?: number | undefined;
}

export interface ShutdownResult {
  /** true when the deadline or signal cut the drain short. */
  hardStopped: boolean;
}
