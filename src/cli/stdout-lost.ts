/**
 * A stdout that could not be written (a full disk, or closed), said once. main.ts says it in a generic
 * line; a command that made a change all the same (submit, cancel, prune) says instead what
 * was done and that it could not be written, and main.ts then adds nothing.
 */
let said = false;

/** Whether anything was written to a stdout closed at the start (see watchClosedStdout). */
let writtenClosed = false;

/**
 * Where stdout was closed when taskq started (`taskq list f.yaml >&-`), as bin/taskq.cjs's first
 * line, run by sh, found (node opens /dev/null in its place, where every write succeeds and is
 * lost), notes whether anything is written to it: a command that printed only an error (on stderr)
 * lost nothing. `onFirstWrite` is called as the first thing is written (and lost). Called once, at the start; with stdout open, it does nothing. (Started by
 * `node bin/taskq.cjs`, without sh, a closed stdout is not known.)
 */
export function watchClosedStdout(onFirstWrite: () => void): void {
  if ((globalThis as Record<symbol, unknown>)[Symbol.for("taskq.stdoutClosed")] !== true) return;
  const stream = process.stdout as unknown as { write: (...args: unknown[]) => boolean };
  const write = stream.write.bind(process.stdout);
  stream.write = (...args: unknown[]): boolean => {
    if (!writtenClosed) {
      writtenClosed = true;
      onFirstWrite();
    }
    return write(...args);
  };
}

/** Whether output was written to a stdout closed from the start (see watchClosedStdout): lost. */
export function stdoutClosed(): boolean {
  return writtenClosed;
}

/** What stdout's loss is said as: `EBADF: it is closed`, or the write error's code (`ENOSPC`). */
export function stdoutLossCause(failed: NodeJS.ErrnoException | null | undefined): string {
  if (failed === null || failed === undefined) return "EBADF: it is closed";
  return failed.code ?? failed.message;
}

/** Whether stdout could not be written (a full disk, a closed stdout), but for a reader that has gone (`| head`), which is no error. */
export function stdoutLost(): boolean {
  const failed = process.stdout.errored as NodeJS.ErrnoException | null | undefined;
  return stdoutClosed() || (failed !== null && failed !== undefined && failed.code !== "EPIPE");
}

/** When stdout could not be written: `taskq: DONE, but WHAT could not be written to stdout (ENOSPC)` on stderr, the one line about it. */
export function sayStdoutLost(done: string, what: string): void {
  if (!stdoutLost()) return;
  said = true;
  const failed = process.stdout.errored;
  process.stderr.write(`taskq: ${done}, but ${what} could not be written to stdout (${stdoutLossCause(stdoutClosed() ? null : failed)})\n`);
}

/** Whether a command has said that stdout could not be written (sayStdoutLost). */
export function stdoutLostSaid(): boolean {
  return said;
}
