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
