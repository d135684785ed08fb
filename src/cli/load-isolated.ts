import { statSync } from "node:fs";
import { createRequire } from "node:module";
import type { Workflow, WorkflowProblem } from "../loaders/index.js";

/** Files above this size that the fast reader declines are parsed in a worker thread. */
const ISOLATE_ABOVE_BYTES = 256 * 1024;

type Reply = { ok: true; workflow: Workflow } | { ok: false; problems?: WorkflowProblem[]; code?: string; message: string; exitCode?: number };

/**
 * Loads a workflow for a run. A large file that the fast reader cannot take
 * (anchors, folded scalars...) is parsed by yaml in a
 * worker thread, whose heap is thrown away when it ends: the scheduler then
 * forks every task from a small process (fork cost grows with resident memory),
 * instead of one whose heap grew to hold the YAML document. Everything else is
 * read in place, which is faster than starting a thread, and the fast reader
 * leaves little garbage (measured, 10k-task file at -j 2 on tmpfs, 3 alternating
 * runs: read in place 30.8-31.8 s against 33.8-36.1 s through the thread; a file
 * with an anchor, for yaml: 36.3-45.1 s through the thread, 41.1-53.1 s in
 * place). Same result and same errors either way. `onThreadStarted` runs when
 * such a thread has started (see small-heap.ts).
 */
export async function loadWorkflowForRun(file: string, options: { onThreadStarted?: () => void } = {}): Promise<Workflow> {
  let size = 0;
  try {
    // `-` is standard input, read once, in place (not a file named "-" in the current folder).
    if (file !== "-") size = statSync(file).size;
  } catch {
    // the loader reports it
  }
  // Not through loaders/index.js, which loads yaml at once: see loadWorkflow.
  const { loadWorkflow, loadSimpleWorkflow } = await import("../loaders/load-workflow.js");
  const { WorkflowError } = await import("../loaders/workflow-error.js");
  if (size <= ISOLATE_ABOVE_BYTES) return loadWorkflow(file);
  const simple = loadSimpleWorkflow(file);
  if (simple !== undefined) return simple;
  // Required here, not imported: only large files need it (~1 ms to load), and the bundle
  // cannot use import() (see scripts/bundle-cli.js).
  const { Worker } = createRequire(import.meta.url)("node:worker_threads") as typeof import("node:worker_threads");
  const reply = await new Promise<Reply>((resolve, reject) => {
    const worker = new Worker(new URL("./load-worker.js", import.meta.url), { workerData: { file } });
    // The thread's isolate exists once it runs JavaScript: V8 reset some process-wide flags then.
    if (options.onThreadStarted) worker.once("online", options.onThreadStarted);
    worker.once("message", (message: Reply) => resolve(message));
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the workflow parser thread exited with code ${code}`)));
  });
  if (reply.ok) return reply.workflow;
  const { TaskqError } = await import("../errors.js");
  if (reply.problems !== undefined) throw new WorkflowError(reply.problems);
  throw new TaskqError(reply.code ?? "LOAD_FAILED", reply.message, { exitCode: reply.exitCode ?? 1 });
}
