import { TaskqError } from "../errors.js";
import { onShutdownSignals, signalExitCode } from "./signals.js";

/**
 * Opens a store (`open`) with SIGINT, SIGTERM and SIGHUP heard, for a command that opens it to submit (submit,
 * run --store) or to work (worker); `undone` says what was not done, in the words of that command. Opening may wait long: a connection, another process's migration (its lock), one of its own
 * over a big store. Unheard, a signal then killed taskq by its default action, in silence, with no exit code
 * of its own. Heard, it stops the command at once with the signal's exit code (128 + n): nothing is submitted
 * or leased yet, and a migration under way is rolled back as its connection closes with the process.
 */
export async function openUnlessStopped<T extends { close(): Promise<void> }>(open: () => Promise<T>, undone: string): Promise<T> {
  let stop: (signal: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    stop = (signal) =>
      reject(new TaskqError("INTERRUPTED", `${signal} received while the store was being opened: stopped; ${undone}`, { exitCode: signalExitCode(signal) }));
  });
  // A second signal finds the command already stopping: nothing more to do.
  const remove = onShutdownSignals({ graceful: stop, immediate: () => undefined });
  const opening = open();
  try {
    return await Promise.race([opening, stopped]);
  } catch (error) {
    // Stopped: a store that opens after all is closed (its error, if it fails, was not asked for).
    opening.then((store) => store.close(), () => undefined).catch(() => undefined);
    throw error;
  } finally {
    remove();
  }
}
