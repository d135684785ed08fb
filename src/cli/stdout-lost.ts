/**
 * A stdout that could not be written (a full disk), said once. main.ts says it in a generic
 * line; a command that made a change all the same (submit, cancel, prune) says instead what
 * was done and that it could not be written, and main.ts then adds nothing.
 */
let said = false;

/** Whether stdout could not be written (a full disk), but for a reader that has gone (`| head`), which is no error. */
export function stdoutLost(): boolean {
  const failed = process.stdout.errored as NodeJS.ErrnoException | null | undefined;
  return failed !== null && failed !== undefined && failed.code !== "EPIPE";
}

/** When stdout could not be written: `taskq: DONE, but WHAT could not be written to stdout (ENOSPC)` on stderr, the one line about it. */
export function sayStdoutLost(done: string, what: string): void {
  if (!stdoutLost()) return;
  const failed = process.stdout.errored as NodeJS.ErrnoException;
  said = true;
  process.stderr.write(`taskq: ${done}, but ${what} could not be written to stdout (${failed.code ?? failed.message})\n`);
}

/** Whether a command has said that stdout could not be written (sayStdoutLost). */
export function stdoutLostSaid(): boolean {
  return said;
}
