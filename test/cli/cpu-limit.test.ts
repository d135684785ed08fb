import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cgroupCpuQuota, defaultConcurrency, type CgroupPaths } from "../../src/cli/cpu-limit.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A folder laid out as /sys/fs/cgroup and /proc/self/cgroup would be: `files` maps paths under the cgroup root to their text. */
function layout(membership: string, files: Record<string, string>): CgroupPaths {
  const dir = mkdtempSync(path.join(tmpdir(), "taskq-cgroup-"));
  folders.push(dir);
  const root = path.join(dir, "sys/fs/cgroup");
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  mkdirSync(path.join(dir, "proc/self"), { recursive: true });
  writeFileSync(path.join(dir, "proc/self/cgroup"), membership);
  return { root, membership: path.join(dir, "proc/self/cgroup") };
}

describe("cgroupCpuQuota", () => {
  it("reads cgroup v2 cpu.max of the process's own cgroup", () => {
    const paths = layout("0::/kubepods/pod1/c1\n", { "kubepods/pod1/c1/cpu.max": "150000 100000\n", "cpu.max": "max 100000\n" });
    expect(cgroupCpuQuota(paths)).toBe(1.5);
  });

  it("takes the lowest limit of the cgroup and its ancestors (a pod's or a slice's limit binds its members)", () => {
    const paths = layout("0::/ci.slice/job.scope\n", { "ci.slice/job.scope/cpu.max": "max 100000\n", "ci.slice/cpu.max": "200000 100000\n" });
    expect(cgroupCpuQuota(paths)).toBe(2);
    const tighter = layout("0::/a/b\n", { "a/b/cpu.max": "50000 100000\n", "a/cpu.max": "400000 100000\n" });
    expect(cgroupCpuQuota(tighter)).toBe(0.5);
  });

  it("is undefined when no cgroup has a limit (max), or there is nothing to read", () => {
    expect(cgroupCpuQuota(layout("0::/\n", { "cpu.max": "max 100000\n" }))).toBeUndefined();
    expect(cgroupCpuQuota(layout("0::/a\n", { "a/cpu.max": "max 100000\n" }))).toBeUndefined();
    expect(cgroupCpuQuota(layout("0::/a\n", {}))).toBeUndefined();
    expect(cgroupCpuQuota(layout("", {}))).toBeUndefined();
    expect(cgroupCpuQuota({ root: "/nonexistent/cgroup", membership: "/nonexistent/proc/self/cgroup" })).toBeUndefined();
    expect(cgroupCpuQuota(layout("0::/\n", { "cpu.max": "garbage\n" }))).toBeUndefined();
  });

  it("reads the mount's top when the cgroup's own folder is not in sight (a container without its own cgroup namespace)", () => {
    expect(cgroupCpuQuota(layout("0::/docker/0123abcd\n", { "cpu.max": "200000 100000\n" }))).toBe(2);
  });

  it("reads cgroup v1 cpu.cfs_quota_us over cpu.cfs_period_us, in the mount named after the controllers", () => {
    const membership = "12:memory:/docker/x\n4:cpu,cpuacct:/docker/x\n0::/\n";
    const paths = layout(membership, { "cpu,cpuacct/docker/x/cpu.cfs_quota_us": "300000\n", "cpu,cpuacct/docker/x/cpu.cfs_period_us": "100000\n", "cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n" });
    expect(cgroupCpuQuota(paths)).toBe(3);
  });

  it("reads cgroup v1 under cpu/ when the controllers' own mount is not there, and -1 is no limit", () => {
    const paths = layout("3:cpuacct,cpu:/job\n", { "cpu/job/cpu.cfs_quota_us": "25000\n", "cpu/job/cpu.cfs_period_us": "50000\n" });
    expect(cgroupCpuQuota(paths)).toBe(0.5);
    expect(cgroupCpuQuota(layout("1:cpu:/job\n", { "cpu/job/cpu.cfs_quota_us": "-1\n", "cpu/job/cpu.cfs_period_us": "100000\n" }))).toBeUndefined();
  });

  it("prefers v1 when the cpu controller is mounted there (a hybrid layout: v2 then has no cpu.max)", () => {
    const paths = layout("0::/\n1:cpu:/job\n", { "cpu/job/cpu.cfs_quota_us": "100000\n", "cpu/job/cpu.cfs_period_us": "100000\n", "unified/cgroup.procs": "" });
    expect(cgroupCpuQuota(paths)).toBe(1);
  });
});

describe("defaultConcurrency", () => {
  it("rounds the quota up, to at least 1 and at most the CPU count", () => {
    const cpus = availableParallelism();
    expect(defaultConcurrency(layout("0::/\n", { "cpu.max": "10000 100000\n" }))).toBe(1);
    expect(defaultConcurrency(layout("0::/\n", { "cpu.max": "1 100000\n" }))).toBe(1);
    expect(defaultConcurrency(layout("0::/\n", { "cpu.max": `${(cpus - 1) * 100000 + 1} 100000\n` }))).toBe(cpus);
    expect(defaultConcurrency(layout("0::/\n", { "cpu.max": `${cpus * 4 * 100000} 100000\n` }))).toBe(cpus);
    expect(defaultConcurrency(layout("0::/\n", { "cpu.max": "max 100000\n" }))).toBe(cpus);
  });
});
