import { closeSync, createWriteStream, openSync, type WriteStream } from "node:fs";
import path from "node:path";
import { TaskqError } from "../errors.js";

/**
 * Bytes of output buffered before the task's pipes are paused: bounds memory per running
 * task. 1 MiB keeps the disk as busy as 8 MiB did (300 MB flood: same wall time), with a
 * peak RSS of ~70 instead of ~120 MB.
 */
const LOG_HIGH_WATER_MARK = 1024 * 1024;

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
 * Throws (ENOTDIR, EACCES...) before any command starts.
 *
 * Opened and closed synchronously: one syscall on this thread is cheaper than a round
 * trip through libuv's thread pool, and both sit between one task's end and the next
 * one's start. Writes still go through the stream (and the pool), with backpressure.
 */
export function openLogFile(file: string, attempt: number): WriteStream {
  const fd = openSync(file, attempt > 1 ? "a" : "w");
  const log = createWriteStream(file, { fd, autoClose: false, highWaterMark: LOG_HIGH_WATER_MARK });
  // Failures are reported by AttemptOutput's listener; this one only keeps an error on a
  // path that never gets there (command failed to start) from crashing the process.
  log.on("error", () => {});
  if (attempt > 1) log.write(`\n--- taskq: attempt ${attempt} ---\n`);
  return log;
}

const closed = new WeakSet<WriteStream>();

/** Ends the log, waits for its pending writes (or their failure), then closes the file. Idempotent. */
export async function closeLogFile(log: WriteStream): Promise<void> {
  if (closed.has(log)) return;
  closed.add(log);
  // An errored stream never finishes (and, not auto-closed, never closes): nothing to wait for.
  if (!log.destroyed && !log.writableFinished && log.errored === null) {
    await new Promise<void>((resolve) => {
      const done = (): void => resolve();
      log.once("finish", done).once("error", done).once("close", done);
      if (!log.writableEnded) log.end();
    });
  }
  try {
    closeSync((log as WriteStream & { fd: number }).fd);
  } catch {
    // already closed: nothing left to lose
  }
}
