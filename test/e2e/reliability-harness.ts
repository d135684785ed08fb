/**
 * Shared by the reliability, hostile and fuzz e2e suites: start the real CLI on a
 * workflow, wait for its tasks, signal it like a terminal or a CI runner would,
 * and check that nothing it started is left behind.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { expect } from "vitest";
import { runIds, startCli, workspace, type CliResult, type RunningCli } from "../helpers/cli.js";
import { eventually, findLeftovers, findZombies } from "../helpers/processes.js";

/**
 * Added to every time bound: the bounds are the issue's, the slack absorbs a loaded
 * machine (the configured timeouts are chosen so a real defect overshoots by far more).
 */
export const SLACK_MS = Number(process.env.TASKQ_TEST_SLACK_MS ?? 2500);

export interface StartedRun extends RunningCli {
  dir: string;
  file: string;
  logs: string;
  /** The ledger the fixtures append to (TASKQ_LEDGER). */
  ledger: string;
  /** When the last signal was sent (Date.now()), or undefined. */
  signalledAt: () => number | undefined;
  /** Ctrl-C: SIGINT (or another signal) to taskq's whole process group. */
  signalGroup: (signal: NodeJS.Signals) => void;
  /** A CI runner's cancel: the signal to taskq alone. */
  signalTaskq: (signal: NodeJS.Signals) => void;
  /** Milliseconds from the last signal to taskq's exit. */
  exited: Promise<{ result: CliResult; sinceSignalMs: number }>;
}

/** Every run started here, so afterEach can check and clean up. */
const started: StartedRun[] = [];

/** Starts `taskq run` on `yaml` in a fresh folder, with --log-dir under it and a ledger in its env. */
export async function startRun(yaml: string, args: string[] = [], env: Record<string, string> = {}): Promise<StartedRun> {
  const ws = await workspace(yaml);
  const ledger = path.join(ws.dir, "ledger");
  const cli = startCli(["run", ws.file, "--log-dir", ws.logs, ...args], { cwd: ws.dir, env: { TASKQ_LEDGER: ledger, ...env } });
  let signalledAt: number | undefined;
  const send = (target: number, signal: NodeJS.Signals): void => {
    signalledAt = Date.now();
    process.kill(target, signal);
  };
  const pid = cli.child.pid!;
  const exitedAt = new Promise<number>((resolve) => cli.child.once("exit", () => resolve(Date.now())));
  const run: StartedRun = {
    ...cli,
    ...ws,
    ledger,
    signalledAt: () => signalledAt,
    signalGroup: (signal) => send(-pid, signal),
    signalTaskq: (signal) => send(pid, signal),
    exited: Promise.all([cli.done, exitedAt]).then(([result, at]) => ({ result, sinceSignalMs: signalledAt === undefined ? NaN : at - signalledAt })),
  };
  started.push(run);
  return run;
}

/** Runs to the end and returns the result with the run id and its log folder. */
export async function runToEnd(yaml: string, args: string[] = [], env: Record<string, string> = {}) {
  const run = await startRun(yaml, args, env);
  const result = await run.done;
  const runId = await singleRunId(run.logs);
  return { ...result, run, runId, logDir: path.join(run.logs, runId) };
}

/** The run id: the name of the single folder under --log-dir. */
export async function singleRunId(logs: string): Promise<string> {
  const ids = await runIds(logs);
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

/** Waits until `check` holds; fails the test with `what` otherwise. */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  if (!(await eventually(check, timeoutMs))) throw new Error(`timed out waiting for ${what}`);
}

/** Ledger lines "<event> <task> <attempt> <pid>" as records. */
export async function readLedger(file: string): Promise<Array<{ event: string; task: string; attempt: number; pid: number }>> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [event = "", task = "", attempt = "0", pid = "0"] = line.split(" ");
      return { event, task, attempt: Number(attempt), pid: Number(pid) };
    });
}

/** Waits until the ledger has `count` lines of `event`. */
export async function waitForLedger(run: StartedRun, event: string, count: number, timeoutMs = 30_000): Promise<void> {
  await waitUntil(`${count} "${event}" ledger lines`, async () => (await readLedger(run.ledger)).filter((e) => e.event === event).length >= count, timeoutMs);
}

/** Waits until taskq's stdout matches `pattern` `count` times. */
export async function waitForOutput(run: StartedRun, pattern: RegExp, count = 1, timeoutMs = 30_000): Promise<void> {
  const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
  await waitUntil(`${count} x ${pattern} on stdout`, () => [...run.stdout().matchAll(global)].length >= count, timeoutMs);
}

/** Process group ids the tasks printed with `echo pgid $$` (the task shell leads its group), plain or json output. */
export function printedGroups(stdout: string): number[] {
  return [...stdout.matchAll(/(?:\| |"text":")pgid (\d+)/g)].map((m) => Number(m[1]));
}

/** NDJSON events from --output json. */
export function jsonEvents(stdout: string): Array<Record<string, unknown> & { event: string; id?: string }> {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown> & { event: string; id?: string });
}

/** Terminal status per task id, from the json events (each must appear once). */
export function terminalEvents(stdout: string): Map<string, string[]> {
  const terminal = new Map<string, string[]>();
  for (const e of jsonEvents(stdout)) {
    if (e.id === undefined || !["succeeded", "failed", "cancelled"].includes(e.event)) continue;
    terminal.set(e.id, [...(terminal.get(e.id) ?? []), e.event]);
  }
  return terminal;
}

/**
 * After each test: every run has ended (a stuck one is killed, and the test fails),
 * no process carries one of its run ids, and the given groups hold no zombie.
 */
export async function checkAllClean(extraGroups: number[] = []): Promise<void> {
  const runs = started.splice(0);
  const problems: string[] = [];
  for (const run of runs) {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      problems.push(`taskq (pid ${run.child.pid}) was still running after the test`);
      try {
        process.kill(-run.child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }
    for (const runId of await runIds(run.logs)) {
      // A task may still be dying from the SIGKILL of its group; give it a moment.
      await eventually(async () => (await findLeftovers(runId)).length === 0, 3000);
      const left = await findLeftovers(runId);
      if (left.length > 0) {
        problems.push(`run ${runId} left processes ${left.join(", ")}`);
        for (const pid of left) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // gone meanwhile
          }
        }
      }
    }
    const groups = [...printedGroups(run.stdout()), ...extraGroups];
    if (groups.length > 0) {
      // Zombies are reaped by PID 1; allow it a moment before calling one a leak.
      await eventually(async () => (await findZombies(groups)).length === 0, 3000);
      const zombies = await findZombies(groups);
      if (zombies.length > 0) problems.push(`zombies ${zombies.join(", ")} in task groups`);
    }
  }
  expect(problems).toEqual([]);
}

/** A workflow YAML of `count` tasks built by `task(index)` (each a flow mapping). */
export function tasksYaml(entries: Array<[string, string]>, header = ""): string {
  return `${header}tasks:\n${entries.map(([id, body]) => `  ${id}: ${body}`).join("\n")}\n`;
}

export { delay };
