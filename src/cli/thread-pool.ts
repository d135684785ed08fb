import { access, readFileSync } from "node:fs";

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
  const set = process.env[POOL_SIZE] === undefined;
  if (set) process.env[POOL_SIZE] = "1";
  if (fewProcessesAllowed()) startPool();
  return set ? [POOL_SIZE] : [];
}

/**
 * Below this many processes (`ulimit -u`; threads count too), the pool starts before the
 * first task instead of at the first log write: once tasks have used up the limit, libuv
 * cannot make its thread and aborts the whole process, summary and all.
 */
const FEW_PROCESSES = 65_536;

function fewProcessesAllowed(): boolean {
  try {
    const limit = /^Max processes +(\S+)/m.exec(readFileSync("/proc/self/limits", "latin1"))?.[1];
    return limit !== undefined && limit !== "unlimited" && Number(limit) < FEW_PROCESSES;
  } catch {
    return false; // no /proc: the pool starts when first needed
  }
}

/** Any request to the pool starts it; this one asks for nothing that matters. */
function startPool(): void {
  access("/", () => {});
}
