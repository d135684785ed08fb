import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/** Where the cgroup files are read: parameters so that tests can lay them out in a folder. */
export interface CgroupPaths {
  /** The cgroup file system's mount point: `/sys/fs/cgroup`. */
  root: string;
  /** This process's cgroup memberships: `/proc/self/cgroup`. */
  membership: string;
}

const SYSTEM: CgroupPaths = { root: "/sys/fs/cgroup", membership: "/proc/self/cgroup" };

/**
 * The default concurrency: the CPU count, lowered to the CPU quota of this process's cgroup
 * (a container's `--cpus`, a pod's CPU limit, a systemd unit's CPUQuota), rounded up, at least
 * 1. Node's availableParallelism() counts the machine's CPUs, not the quota: `docker run
 * --cpus=2` on a 64-CPU host would start 64 tasks at once, and throttle them.
 */
export function defaultConcurrency(paths: CgroupPaths = SYSTEM): number {
  const cpus = availableParallelism();
  const quota = cgroupCpuQuota(paths);
  return quota === undefined ? cpus : Math.min(cpus, Math.max(1, Math.ceil(quota)));
}

/**
 * The CPUs this process's cgroup may use (quota / period, a fraction), the lowest along its
 * cgroup and the ancestors visible here, as a parent's limit binds its children; undefined when
 * none sets one ("max", -1) or nothing can be read (not Linux, no cgroup file system). cgroup v1
 * when its `cpu` controller is mounted (it is then not in v2, as on a hybrid layout), else v2.
 */
export function cgroupCpuQuota(paths: CgroupPaths = SYSTEM): number | undefined {
  // Elsewhere there is no /proc: not even the one failed read.
  if (paths === SYSTEM && process.platform !== "linux") return undefined;
  const lines = readText(paths.membership)?.split("\n") ?? [];
  let v2Path: string | undefined;
  for (const line of lines) {
    // "hierarchy-id:controllers:path"; the path may itself hold a colon.
    const match = /^(\d+):([^:]*):(\/.*)$/.exec(line);
    if (match === null) continue;
    const [, id, controllers = "", cgroupPath = "/"] = match;
    if (id === "0" && controllers === "") v2Path = cgroupPath;
    else if (controllers.split(",").includes("cpu")) {
      // The mount is named after its controllers (`cpu,cpuacct`); systemd and Docker also link `cpu` to it.
      const quota = lowestQuota(`${paths.root}/${controllers}`, cgroupPath, readV1Quota);
      return (quota === undefined && controllers !== "cpu" ? lowestQuota(`${paths.root}/cpu`, cgroupPath, readV1Quota) : quota) ?? undefined;
    }
  }
  return v2Path === undefined ? undefined : (lowestQuota(paths.root, v2Path, readV2Quota) ?? undefined);
}

/**
 * The lowest quota of the cgroup at `cgroupPath` under `mount` and of its ancestors: null when
 * none has one, undefined when no file was there. A folder that is not there is skipped: in a
 * container without its own cgroup namespace, the path is the host's (`/docker/<id>`) while the
 * mount shows the container's cgroup at its top.
 */
function lowestQuota(mount: string, cgroupPath: string, read: (folder: string) => number | null | undefined): number | null | undefined {
  let lowest: number | null | undefined;
  const parts = cgroupPath.split("/").filter((part) => part !== "");
  // Outside this cgroup namespace's root (`/../x`): neither the cgroup nor its ancestors are in sight.
  if (parts.includes("..")) return undefined;
  for (let depth = parts.length; depth >= 0; depth--) {
    const quota = read(depth === 0 ? mount : `${mount}/${parts.slice(0, depth).join("/")}`);
    if (quota === undefined) continue;
    if (quota === null) lowest ??= null;
    else if (lowest === undefined || lowest === null || quota < lowest) lowest = quota;
  }
  return lowest;
}

/** cgroup v2 `cpu.max`: "max 100000" (no limit) or "200000 100000" (2 CPUs); undefined when not there. */
function readV2Quota(folder: string): number | null | undefined {
  const text = readText(`${folder}/cpu.max`);
  if (text === undefined) return undefined;
  const [quota, period] = text.trim().split(/\s+/);
  return quotaOf(quota, period);
}

/** cgroup v1 `cpu.cfs_quota_us` (-1: no limit) over `cpu.cfs_period_us`: the period is read only under a quota. */
function readV1Quota(folder: string): number | null | undefined {
  const quota = readText(`${folder}/cpu.cfs_quota_us`)?.trim();
  if (quota === undefined) return undefined;
  return /^\d+$/.test(quota) ? quotaOf(quota, readText(`${folder}/cpu.cfs_period_us`)?.trim()) : null;
}

/** CPUs from a quota and its period, in microseconds; null for "max", -1 or anything else that is not a limit. */
function quotaOf(quota: string | undefined, period: string | undefined): number | null {
  if (quota === undefined || period === undefined || !/^\d+$/.test(quota) || !/^\d+$/.test(period)) return null;
  const cpus = Number(quota) / Number(period);
  return Number.isFinite(cpus) && cpus > 0 ? cpus : null;
}

/** A small file's text, or undefined when it cannot be read (missing, not Linux, no permission). */
function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
