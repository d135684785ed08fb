/**
 * Hard limits on workflow files. They are checked before the expensive steps
 * (size before reading, nesting while tokenizing, task count before building
 * the document tree), so hostile input fails fast with a clear message.
 * Each admits a 40,000-task / 6 MB workflow with a wide margin.
 */

/** Largest workflow file accepted, in bytes (64 MiB). */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** Most tasks one workflow may define. */
export const MAX_TASKS = 200_000;

/** Deepest nesting of mappings and lists (a workflow needs about 5 levels). */
export const MAX_NESTING_DEPTH = 128;

/** Most YAML nodes that aliases (`*name`) may expand to in total: stops "billion laughs" files. */
export const MAX_ALIAS_EXPANSION = 1_000_000;

/** Longest duration accepted anywhere (timeout, delay, backoff): 30 days. */
export const MAX_DURATION_MS = 30 * 24 * 60 * 60 * 1000;

/** Highest `concurrency` value. */
export const MAX_CONCURRENCY = 10_000;

/** Highest `retries` value. */
export const MAX_RETRIES = 100;

/** The integer fields and each one's range, lowest and highest: concurrency, retries, and each exit code of retryOn. */
export const INTEGER_RANGES = { concurrency: [1, MAX_CONCURRENCY], retries: [0, MAX_RETRIES], retryOn: [1, 255] } as const satisfies Record<string, readonly [number, number]>;

/** The fields holding a duration, in a task and `defaults` (`timeout`, `delay`) and in a `backoff` (`base`, `max`). */
export const DURATION_FIELDS = { task: ["timeout", "delay"], backoff: ["base", "max"] } as const;

/** Whether `field` (a last name: `backoff.max` is `max`) holds a duration. */
export function isDurationField(field: unknown): boolean {
  return (DURATION_FIELDS.task as readonly unknown[]).includes(field) || (DURATION_FIELDS.backoff as readonly unknown[]).includes(field);
}
