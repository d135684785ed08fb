import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, FIXTURES, removeWorkspaces, workspace } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../store/helpers.js";

afterAll(removeWorkspaces);

/** A cgroup made for a test: its folder, and how to give it a CPU quota of `cpus`. */
interface TestCgroup {
  folder: string;
  limit: (cpus: number) => void;
}

/**
 * A new cgroup with a CPU controller (v2 under the root, whose subtree must already have `cpu`;
 * else v1's `cpu` mount), or why there can be none here.
 */
function makeCgroup(): TestCgroup | string {
  if (process.getuid?.() !== 0) return "making a cgroup needs root";
  if (availableParallelism() < 2) return "one CPU: a quota cannot lower the default below it";
  const name = `taskq-test-${process.pid}`;
  const v2 = "/sys/fs/cgroup";
  const v1 = "/sys/fs/cgroup/cpu";
  try {
    if (existsSync(`${v2}/cgroup.subtree_control`) && readFileSync(`${v2}/cgroup.subtree_control`, "utf8").split(/\s+/).includes("cpu")) {
      mkdirSync(`${v2}/${name}`);
      return { folder: `${v2}/${name}`, limit: (cpus) => writeFileSync(`${v2}/${name}/cpu.max`, `${Math.round(cpus * 100_000)} 100000`) };
    }
    if (existsSync(`${v1}/cpu.cfs_quota_us`)) {
      mkdirSync(`${v1}/${name}`);
      return {
        folder: `${v1}/${name}`,
        limit: (cpus) => {
          writeFileSync(`${v1}/${name}/cpu.cfs_period_us`, "100000");
          writeFileSync(`${v1}/${name}/cpu.cfs_quota_us`, String(Math.round(cpus * 100_000)));
        },
      };
    }
  } catch (error) {
    return `cannot make a cgroup here: ${(error as Error).message}`;
  }
  return "no cgroup v2 with the cpu controller in the root's subtree, and no cgroup v1 cpu mount";
}

/** Starts the CLI inside `cgroup` (its shell joins the cgroup, then becomes taskq): stdout so far, and its end. */
function startInCgroup(cgroup: TestCgroup, args: string[], cwd: string, env: Record<string, string> = {}) {
  const child = spawn("sh", ["-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup.folder, process.execPath, BIN, ...args], {
    cwd,
    env: { ...process.env, CI: "true", NO_COLOR: "1", PATH: `${FIXTURES}:${process.env.PATH ?? ""}`, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

describe("the default concurrency in a cgroup with a CPU quota (a container's --cpus)", () => {
  it("is the quota rounded up, not the machine's CPU count", async (context) => {
    const cgroup = makeCgroup();
    if (typeof cgroup === "string") return context.skip(cgroup);
    try {
      cgroup.limit(0.5);
      const { dir, file, logs } = await workspace('tasks:\n  a: { run: "true" }\n  b: { run: "true" }\n');
      const run = startInCgroup(cgroup, ["run", file, "--output", "plain", "--log-dir", logs], dir);
      expect(await run.done, run.stderr()).toBe(0);
      expect(run.stdout().split("\n")[0]).toMatch(/: 2 tasks, concurrency 1, logs in /);
      // -j and the file's own value are kept as given.
      const given = startInCgroup(cgroup, ["run", file, "--output", "plain", "--log-dir", logs, "-j", "3"], dir);
      expect(await given.done, given.stderr()).toBe(0);
      expect(given.stdout().split("\n")[0]).toMatch(/, concurrency 3, /);
    } finally {
      await eventually(() => readFileSync(`${cgroup.folder}/cgroup.procs`, "utf8").trim() === "");
      rmdirSync(cgroup.folder);
    }
  });

  it("is the quota for a worker too", async (context) => {
    const cgroup = makeCgroup();
    if (typeof cgroup === "string") return context.skip(cgroup);
    const schema = uniqueSchema();
    try {
      cgroup.limit(0.5);
      const { dir, logs } = await workspace("tasks: {}\n");
      const worker = startInCgroup(cgroup, ["worker", "--log-dir", logs, "--store-schema", schema], dir, { TASKQ_STORE: DATABASE_URL });
      expect(await eventually(() => worker.stdout().includes("\n"), 20_000), worker.stderr()).toBe(true);
      worker.child.kill("SIGTERM");
      await worker.done;
      expect(worker.stdout().split("\n")[0]).toMatch(/ worker .*, concurrency 1, logs in /);
    } finally {
      await eventually(() => readFileSync(`${cgroup.folder}/cgroup.procs`, "utf8").trim() === "");
      rmdirSync(cgroup.folder);
      await dropSchema(schema);
    }
  });
});
