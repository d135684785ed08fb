/**
 * Worker thread of load-isolated.ts: parses one workflow file with yaml and posts the plain
 * result back. The main thread's fast reader has already declined the file, so it is skipped.
 */
import { parentPort, workerData } from "node:worker_threads";
import { loadWorkflow, WorkflowError } from "../loaders/index.js";
import { TaskqError } from "../errors.js";

const { file } = workerData as { file: string };
try {
  const workflow = await loadWorkflow(file, { simple: false });
  parentPort?.postMessage({ ok: true, workflow });
} catch (error) {
  if (error instanceof WorkflowError) parentPort?.postMessage({ ok: false, problems: error.problems, message: error.message });
  else if (error instanceof TaskqError) parentPort?.postMessage({ ok: false, code: error.code, message: error.message, exitCode: error.exitCode });
  else parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
}
