import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = path.join(ROOT, "bin/taskq.cjs");
export const FIXTURES = path.join(ROOT, "test/fixtures");

let python: boolean | undefined;

/** Whether python3 with its pty module is here: tests drive taskq's terminal from it (node has no pty of its own). */
export function hasPython(): boolean {
  if (python === undefined) {
    try {
      execFileSync("python3", ["-c", "import pty"], { stdio: "ignore" });
      python = true;
    } catch {
      python = false;
    }
  }
  return python;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

export interface RunningCli {
  child: ChildProcess;
  /** Output so far. */
  stdout: () => string;
  stderr: () => string;
  done: Promise<CliResult>;
}

/**
 * How the CLI is started: `uid` and `gid` run it as another user (the test must run as root);
 * `through` is a command that execs node with the rest of its arguments (`setpriv` dropping a capability).
 */
export interface CliOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  nodeArgs?: string[];
  uid?: number;
  gid?: number;
  through?: string[];
}

/**
 * Starts the real CLI as the leader of its own process group (as a shell
 * would), with CI set so output is plain, and PATH including the fixtures.
 */
export function startCli(args: string[], options: CliOptions = {}): RunningCli {
  const started = Date.now();
  const node = [process.execPath, ...(options.nodeArgs ?? []), BIN, ...args];
  const [command, ...rest] = [...(options.through ?? []), ...node];
  const child = spawn(command!, rest, {
    cwd: options.cwd ?? ROOT,
    // No TASKQ_KILL_GRACE_MS from a taskq running the tests: the CLI would shorten its stop times to it. No GITHUB_ACTIONS
    // from a runner running them: a task's workflow commands would lose their prefix (a test sets it to see that).
    env: {
      ...process.env,
      CI: "true",
      NO_COLOR: "1",
      PATH: `${FIXTURES}:${process.env.PATH ?? ""}`,
      TASKQ_KILL_GRACE_MS: undefined,
      GITHUB_ACTIONS: undefined,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    uid: options.uid,
    gid: options.gid,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<CliResult>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, durationMs: Date.now() - started }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** Folders made by workspace() and not yet removed. */
const workspaces: string[] = [];

/**
 * A fresh folder holding `workflow.yaml` with the given text; returns paths for the file and
 * the log root. Removed by removeWorkspaces(): after each test file (test/helpers/setup.ts),
 * or sooner where a test leaves big logs.
 */
export async function workspace(yaml: string, name = "workflow.yaml"): Promise<{ dir: string; file: string; logs: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "taskq-e2e-"));
  workspaces.push(dir);
  const file = path.join(dir, name);
  await writeFile(file, yaml);
  return { dir, file, logs: path.join(dir, "logs") };
}

/** The run ids that have a log folder under `logs` (one per `taskq run`); none where no run made `logs` (a refused file). */
export async function runIds(logs: string): Promise<string[]> {
  return readdir(logs).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
}

/** Deletes every workspace made so far (in this test file: each file runs in its own worker). */
export async function removeWorkspaces(): Promise<void> {
  const dirs = workspaces.splice(0);
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
}
