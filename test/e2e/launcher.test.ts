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
async function launch(link: string, args: string[], cwd: string): Promise<Launched> {
  const child = spawn(link, args, { cwd, env: { ...process.env, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
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
