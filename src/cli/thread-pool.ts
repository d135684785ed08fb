/** The environment variable libuv reads, once, when its thread pool starts. */
const POOL_SIZE = "UV_THREADPOOL_SIZE";

/**
 * Starts libuv's thread pool, when something first needs it, with one thread instead of
 * four, unless UV_THREADPOOL_SIZE is set. taskq uses the pool for its log writes (one
 * writev at a time per task, batched) and, on a slow disk, for opening logs. Each thread's
 * mappings are copied by every task's fork and torn down by its exec: with one thread,
 * 1,000 `true` tasks whose logs were opened in the pool took 2535 instead of 2730 ms
 * (medians of 5, alternating), and eight tasks writing 20 MB each were no slower.
 *
 * Returns the names taskq set, for the shell handler to keep out of the tasks' environment:
 * a Node program run as a task starts with the pool it would have had anyway.
 */
export function smallThreadPool(): string[] {
  if (process.env[POOL_SIZE] !== undefined) return [];
  process.env[POOL_SIZE] = "1";
  return [POOL_SIZE];
}
