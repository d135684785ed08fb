import { access, readFileSync } from "node:fs";
import path from "node:path";

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
 * Below this many processes (`ulimit -u`, or a cgroup's `pids.max`: a container's
 * `--pids-limit`; threads count too), the pool starts before the first task instead of at
 * the first log write: once tasks have used up the limit, libuv cannot make its thread and
 * aborts the whole process, summary and all.
 */
const FEW_PROCESSES = 65_536;

function fewProcessesAllowed(): boolean {
  return processLimit() < FEW_PROCESSES || cgroupPidsLimit() < FEW_PROCESSES;
}

/** The soft `ulimit -u`; Infinity when unlimited or unknown (no /proc: the pool starts when first needed). */
function processLimit(): number {
  try {
    const limit = /^Max processes +(\S+)/m.exec(readFileSync("/proc/self/limits", "latin1"))?.[1];
    return limit === undefined || limit === "unlimited" ? Infinity : Number(limit);
  } catch {
    return Infinity;
  }
}

/**
 * The lowest `pids.max` of this process's cgroup and those above it (cgroup v2, or v1's pids
 * controller); Infinity where each says "max" or none can be read. A container's own cgroup
 * may be the root of what it mounts (a cgroup namespace): the root is read too.
 */
function cgroupPidsLimit(): number {
  let membership: string;
  try {
    membership = readFileSync("/proc/self/cgroup", "latin1");
  } catch {
    return Infinity;
  }
  let lowest = Infinity;
  for (const line of membership.split("\n")) {
    const [id, controllers, cgroup] = line.split(":", 3);
    if (cgroup === undefined || !cgroup.startsWith("/")) continue;
    const roots = id === "0" && controllers === "" ? ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] : controllers?.split(",").includes("pids") ? ["/sys/fs/cgroup/pids"] : [];
    for (const root of roots) {
      for (let folder = cgroup; ; folder = path.posix.dirname(folder)) {
        try {
          const limit = Number(readFileSync(path.posix.join(root, folder, "pids.max"), "latin1").trim());
          if (limit < lowest) lowest = limit; // "max" reads as NaN: no limit
        } catch {
          // none there (a hierarchy's root has none), or not mounted
        }
        if (folder === "/") break;
      }
    }
  }
  return lowest;
}

/** Any request to the pool starts it; this one asks for nothing that matters. */
function startPool(): void {
  access("/", () => {});
}
