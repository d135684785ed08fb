import { spawn } from "node:child_process";
import { readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, workspace } from "../helpers/cli.js";

interface Launched {
  pid: number | undefined;
  code: number | null;
  stdout: string;
  stderr: string;
  /** taskq's command line, read from /proc while it ran. */
  cmdline: string[];
}

/** Runs `taskq` as users do: an executable on PATH, here npm's kind of bin link to bin/taskq.cjs. */
async function launch(link: string, args: string[], cwd: string, extraEnv: Record<string, string | undefined> = {}): Promise<Launched> {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "true", NO_COLOR: "1", ...extraEnv };
  for (const [name, value] of Object.entries(extraEnv)) if (value === undefined) delete env[name];
  const child = spawn(link, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  // Read until sh has exec'd node (milliseconds on an idle machine; generous on a loaded one).
  let cmdline: string[] = [];
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const text = await readFile(`/proc/${child.pid}/cmdline`, "utf8").catch(() => "");
    cmdline = text.split("\0").filter(Boolean);
    if (cmdline.some((arg) => arg.startsWith("--v8-pool-size"))) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { pid: child.pid, code, stdout, stderr, cmdline };
}

describe("the taskq executable", () => {
  it("run through a bin link, execs node on itself with one V8 worker thread, passing every argument intact", async () => {
    const ws = await workspace('tasks:\n  hello: { run: "sleep 0.3; echo \\"hi from $TASKQ_TASK_ID\\"" }\n', "my flow.yaml");
    const link = path.join(ws.dir, "taskq");
    await symlink(BIN, link);
    const result = await launch(link, ["run", ws.file, "--log-dir", path.join(ws.dir, "log dir"), "--output", "plain"], ws.dir);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("hello | hi from hello\n");
    // The same process (exec, not a child of sh): node, the flag, this file, the arguments as given.
    expect(path.basename(result.cmdline[0] ?? "")).toBe("node");
    expect(result.cmdline.slice(1)).toEqual(["--v8-pool-size=1", link, "run", ws.file, "--log-dir", path.join(ws.dir, "log dir"), "--output", "plain"]);
  });

  it("starts node with glibc's malloc trim threshold set, unless the user set one, and keeps it from the tasks", async () => {
    // The task tells what it got, and what taskq's node started with (/proc keeps a process's first environment).
    const ws = await workspace(`tasks:\n  look: { run: 'echo "task: \${MALLOC_TRIM_THRESHOLD_-unset} \${TASKQ_MALLOC_TRIM-unset}"; echo "taskq: $(tr "\\\\0" "\\\\n" < /proc/$TASKQ_PID/environ | grep "^MALLOC_TRIM_THRESHOLD_=")"' }\n`);
    const link = path.join(ws.dir, "taskq");
    await symlink(BIN, link);
    const args = ["run", ws.file, "--log-dir", path.join(ws.dir, "logs"), "--output", "plain"];
    const unset = await launch(link, args, ws.dir, { MALLOC_TRIM_THRESHOLD_: undefined, TASKQ_MALLOC_TRIM: undefined });
    expect(unset.code).toBe(0);
    expect(unset.stdout).toContain("look | task: unset unset\n");
    expect(unset.stdout).toContain("look | taskq: MALLOC_TRIM_THRESHOLD_=131072\n");
    const own = await launch(link, args, ws.dir, { MALLOC_TRIM_THRESHOLD_: "4096", TASKQ_MALLOC_TRIM: undefined });
    expect(own.code).toBe(0);
    expect(own.stdout).toContain("look | task: 4096 unset\n");
    expect(own.stdout).toContain("look | taskq: MALLOC_TRIM_THRESHOLD_=4096\n");
  });

  it("passes the exit code on", async () => {
    const ws = await workspace('tasks:\n  boom: { run: "exit 3" }\n');
    const link = path.join(ws.dir, "taskq");
    await symlink(BIN, link);
    const failed = await launch(link, ["run", ws.file, "--log-dir", path.join(ws.dir, "logs"), "--output", "plain"], ws.dir);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("boom");
    const version = await launch(link, ["--version"], ws.dir);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
