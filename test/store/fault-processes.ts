import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { DATABASE_URL } from "./helpers.js";

/** An event line printed by test/store/fault-worker.ts. */
export interface FaultEvent {
  type: string;
  key?: string;
  attempt?: number;
  result?: string | false;
  reason?: string;
}

/** A worker OS process and the events it printed so far. */
export interface WorkerProcess {
  child: ChildProcess;
  workerId: string;
  events: FaultEvent[];
  /** Keys of attempts started and not finished. */
  inFlight: () => Set<string>;
}

/**
 * Compiles the fault worker (and the store it imports) into a throwaway
 * directory under node_modules/.cache, where `pg` and the package's ESM type
 * still resolve. Returns the script path and a cleanup function.
 */
export async function buildFaultWorker(): Promise<{ script: string; cleanup: () => Promise<void> }> {
  const outDir = join(process.cwd(), "node_modules", ".cache", `taskq-store-faults-${randomBytes(3).toString("hex")}`);
  const tsc = join(process.cwd(), "node_modules", "typescript", "bin", "tsc");
  const flags = ["--outDir", outDir, "--rootDir", ".", "--module", "nodenext", "--moduleResolution", "nodenext"];
  const more = ["--target", "ES2022", "--lib", "ES2023", "--types", "node", "--skipLibCheck", "--strict", "test/store/fault-worker.ts"];
  await promisify(execFile)(process.execPath, [tsc, ...flags, ...more], { cwd: process.cwd() });
  return { script: join(outDir, "test", "store", "fault-worker.js"), cleanup: () => rm(outDir, { recursive: true, force: true }) };
}

/** Starts one worker process; resolves once it is listening for work. */
export async function startWorkerProcess(script: string, env: Record<string, string>): Promise<WorkerProcess> {
  const workerId = `fault-${randomBytes(3).toString("hex")}`;
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, DATABASE_URL, WORKER_ID: workerId, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const events: FaultEvent[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`worker exited early with ${code}`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const event = JSON.parse(line) as FaultEvent;
      events.push(event);
      if (event.type === "ready") resolve();
    });
  });
  await ready;
  const inFlight = (): Set<string> => {
    const open = new Set<string>();
    for (const event of events) {
      if (event.type === "started") open.add(`${event.key}`);
      if (event.type === "finished" || event.type === "lease-lost") open.delete(`${event.key}`);
    }
    return open;
  };
  return { child, workerId, events, inFlight };
}

/** Ends a worker process this test started, by its pid. */
export async function endWorkerProcess(worker: WorkerProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.child.once("exit", resolve));
  worker.child.kill("SIGCONT");
  worker.child.kill(signal);
  await exited;
}
