import { access, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { TaskqError } from "../errors.js";

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
  // `run --store` asks before it submits, then its worker again.
  if (poolSet !== undefined) return poolSet;
  const set = process.env[POOL_SIZE] === undefined;
  if (set) process.env[POOL_SIZE] = "1";
  const limits = [userProcessLimit(), ...cgroupPidsLimits()];
  if (limits.some((limit) => limit.max < FEW_PROCESSES)) {
    // Where libuv cannot make its thread it aborts taskq with no word: say why first.
    const full = limits.find((limit) => limit.max - limit.used() < ROOM_NEEDED);
    if (full !== undefined) throw processLimitError(full);
    startPool();
  }
  poolSet = set ? [POOL_SIZE] : [];
  return poolSet;
}

/** What the first call returned. */
let poolSet: string[] | undefined;

/**
 * Below this many processes (`ulimit -u`, or a cgroup's `pids.max`: a container's
 * `--pids-limit`; threads count too), the pool starts before the first task instead of at
 * the first log write: once tasks have used up the limit, libuv cannot make its thread and
 * aborts the whole process, summary and all.
 */
const FEW_PROCESSES = 65_536;

/** The pool's thread and one task's shell: with less room, no task could run. */
const ROOM_NEEDED = 2;

/** A limit on processes and threads, and how many of them count against it now (read when asked: it costs a look through /proc). */
interface ProcessLimit {
  what: "ulimit" | "cgroup";
  max: number;
  used: () => number;
}

function processLimitError(limit: ProcessLimit): TaskqError {
  const used = limit.used();
  const [name, raise] = limit.what === "ulimit" ? [`the process limit (ulimit -u) is ${limit.max}, and this user runs ${used} processes and threads`, "raise it (ulimit -u 4096, say)"] : [`taskq's cgroup allows ${limit.max} processes and threads (pids.max: a container's --pids-limit), and ${used} run in it`, "raise that limit"];
  return new TaskqError("PROCESS_LIMIT", `${name}: too many to run a task, as taskq needs a thread of its own and a process for each running task; ${raise}`, { exitCode: 1 });
}

/**
 * The soft `ulimit -u` (none when unlimited or unknown, or for root, whom Linux does not hold
 * to it); what counts against it are the threads of every process of this user, which only
 * a look through /proc can tell, taken only when the system runs that many threads at all.
 */
function userProcessLimit(): ProcessLimit {
  const none: ProcessLimit = { what: "ulimit", max: Infinity, used: () => 0 };
  let max: number;
  try {
    const limit = /^Max processes +(\S+)/m.exec(readFileSync("/proc/self/limits", "latin1"))?.[1];
    if (limit === undefined || limit === "unlimited") return none;
    max = Number(limit);
  } catch {
    return none; // no /proc: the pool starts when first needed
  }
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return { what: "ulimit", max, used: () => 0 };
  return { what: "ulimit", max, used: () => (systemThreads() < max ? 0 : userThreads(uid)) };
}

/** Every thread of the system, from /proc/loadavg ("0.00 0.01 0.05 1/123 4567"); Infinity if unknown. */
function systemThreads(): number {
  try {
    return Number(/ \d+\/(\d+) /.exec(readFileSync("/proc/loadavg", "latin1"))?.[1] ?? Infinity);
  } catch {
    return Infinity;
  }
}

/** The threads of the processes whose real user is `uid`, as this PID namespace shows them. */
function userThreads(uid: number): number {
  let threads = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "latin1");
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) === uid) threads += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
    } catch {
      // gone meanwhile
    }
  }
  return threads;
}

/**
 * The `pids.max` of this process's cgroup and of those above it (cgroup v2, or v1's pids
 * controller), each with its `pids.current`; "max" is none. A container's own cgroup may be
 * the root of what it mounts (a cgroup namespace): the root is read too.
 */
function cgroupPidsLimits(): ProcessLimit[] {
  let membership: string;
  try {
    membership = readFileSync("/proc/self/cgroup", "latin1");
  } catch {
    return [];
  }
  const limits: ProcessLimit[] = [];
  for (const line of membership.split("\n")) {
    const [id, controllers, cgroup] = line.split(":", 3);
    if (cgroup === undefined || !cgroup.startsWith("/")) continue;
    const roots = id === "0" && controllers === "" ? ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] : controllers?.split(",").includes("pids") ? ["/sys/fs/cgroup/pids"] : [];
    for (const root of roots) {
      for (let folder = cgroup; ; folder = path.posix.dirname(folder)) {
        const at = path.posix.join(root, folder);
        try {
          const max = Number(readFileSync(path.posix.join(at, "pids.max"), "latin1").trim());
          // "max" reads as NaN: no limit
          if (max < FEW_PROCESSES) limits.push({ what: "cgroup", max, used: () => pidsCurrent(at) });
        } catch {
          // none there (a hierarchy's root has none), or not mounted
        }
        if (folder === "/") break;
      }
    }
  }
  return limits;
}

/** The processes and threads in a cgroup now; 0 if that cannot be read. */
function pidsCurrent(cgroup: string): number {
  try {
    return Number(readFileSync(path.posix.join(cgroup, "pids.current"), "latin1").trim()) || 0;
  } catch {
    return 0;
  }
}

/** Any request to the pool starts it; this one asks for nothing that matters. */
function startPool(): void {
  access("/", () => {});
}
