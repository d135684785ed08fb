import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import path from "node:path";
import { TaskqError } from "../errors.js";

/** Bytes of output buffered before the task's pipes are paused: bounds memory per running task. */
const LOG_HIGH_WATER_MARK = 8 * 1024 * 1024;

/** A task id that would put its log file outside the run's log folder. */
export class InvalidTaskIdError extends TaskqError {
  readonly permanent = true as const;

  constructor(taskId: string, logDir: string) {
    super("INVALID_TASK_ID", `task id ${JSON.stringify(taskId)} cannot name a log file in ${logDir}`);
  }
}

/** `<logDir>/<taskId>.log`, refusing any id that would escape logDir. */
export function resolveLogPath(logDir: string, taskId: string): string {
  const folder = path.resolve(logDir);
  const file = path.resolve(folder, `${taskId}.log`);
  if (taskId === "" || path.dirname(file) !== folder || path.basename(file) !== `${taskId}.log`) {
    throw new InvalidTaskIdError(taskId, logDir);
  }
  return file;
}

/**
 * Opens the log for one attempt. The first attempt starts the file afresh; later
 * attempts append after a marker line, so the log tells every attempt's story.
 * Rejects (ENOTDIR, EACCES...) before any command starts.
 */
export async function openLogFile(file: string, attempt: number): Promise<WriteStream> {
  const log = createWriteStream(file, { flags: attempt > 1 ? "a" : "w", highWaterMark: LOG_HIGH_WATER_MARK });
  await once(log, "ready");
  // Failures are reported by AttemptOutput's listener; this one only keeps an error on a
  // path that never gets there (command failed to start) from crashing the process.
  log.on("error", () => {});
  if (attempt > 1) log.write(`\n--- taskq: attempt ${attempt} ---\n`);
  return log;
}
