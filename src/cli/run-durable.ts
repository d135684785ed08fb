import { setTimeout as sleep } from "node:timers/promises";
import type { Workflow } from "../loaders/index.js";
import type { PostgresStore } from "../store/postgres/index.js";
import { printRunSummary } from "./commands/durable.js";
import { checkLogRoot } from "./log-folders.js";
import { openStore, type StoreFlags } from "./store-flags.js";
import { runWorker } from "./worker-run.js";

export interface DurableRunOptions extends StoreFlags {
  concurrency: number;
  shutdownTimeoutMs: number;
  killGraceMs: number;
  logRoot: string;
  color: boolean;
  json: boolean;
  runId?: string;
}

/**
 * `taskq run FILE --store URL`: submits the workflow as a durable run, then
 * works on it in this process (other workers may help) until it ends.
 */
export async function runDurable(workflow: Workflow, options: DurableRunOptions): Promise<number> {
  // Before the run is submitted: a log folder this process cannot use would fail every task it ran.
  checkLogRoot(options.logRoot);
  const store = await openStore(options);
  try {
    const runId = await store.submitRun(workflow, options.runId === undefined ? {} : { runId: options.runId });
    const tasks = workflow.tasks.length;
    // With --output json every line is a JSON object, this one too (as a local run's first event).
    process.stdout.write(
      options.json
        ? `${JSON.stringify({ ts: new Date().toISOString(), event: "run", runId, file: workflow.file, store: store.description, tasks })}\n`
        : `run ${runId} submitted to ${store.description}: ${tasks} task${tasks === 1 ? "" : "s"}\n`,
    );
    workflow.tasks.length = 0;
    // Its own run's tasks only: another run's would run here with this process's environment (a CI job's secrets).
    const code = await runWorker(store, { ...options, runId, until: () => untilFinished(store, runId) });
    if (code === 0) return await printRunSummary(store, runId, { color: options.color, json: options.json });
    // Stopped (a signal, a lost lease): the summary if the database gives it soon, and the stop's exit code either way.
    const summary = printRunSummary(store, runId, { color: options.color, json: options.json }).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    const timer = new AbortController();
    const late = sleep(STOPPED_SUMMARY_MS, `the database did not answer within ${STOPPED_SUMMARY_MS / 1000}s`, { signal: timer.signal }).catch(() => undefined);
    const problem = await Promise.race([summary, late]);
    timer.abort();
    if (problem !== undefined) process.stderr.write(`taskq: no summary of run ${runId}: ${problem}\n`);
    return code;
  } finally {
    await store.close();
  }
}

/**
 * How long a stopped `run --store` waits for its summary: the user asked to stop, and a
 * database that does not answer would hold the exit for a statement's whole timeout (30 s).
 */
const STOPPED_SUMMARY_MS = 3000;

/** Resolves when the run reaches a terminal state (checked twice a second; cheap, indexed). */
async function untilFinished(store: PostgresStore, runId: string): Promise<void> {
  for (;;) {
    await sleep(500);
    const status = await store.runStatus(runId).catch(() => undefined);
    if (status !== undefined && status.state !== "running") return;
  }
}
