/**
 * GitHub Actions' workflow commands (`::error file=a.ts,line=3::message`, `::group::name`, `::add-mask::value`) in a
 * task's plain lines. The runner reads one only where a line starts: behind taskq's `task |` prefix its annotations were
 * lost and a value to mask was not masked. Under GitHub Actions, such a line goes as the task wrote it, without the
 * prefix (see TaskColours), as when the command runs in the step itself.
 */

import { isWorkflowCommand } from "../../handlers/line-splitter.js";

/** Whether GitHub Actions' runner reads this output: it sets GITHUB_ACTIONS to "true" in every step it runs. */
export function underGitHubActions(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.GITHUB_ACTIONS === "true";
}

/**
 * The first of lines [from, count) of a block (`ends[i]` just past line i's "\n") that the runner takes for a workflow
 * command, or that holds one; `count` where none is. As its parser reads a line: after blanks (it trims them), `::`, a name (up to a space
 * or the next `::`, not empty: a stop token of `::stop-commands::` is any name), then `::` on the same line. A line with
 * `::` elsewhere (`std::vector`, `a :: b`) is none, nor one with no name or no `::` after it (`::1`). Each line's first
 * bytes alone are read but for one that starts with `::`: no search of a block for `::`, which a compiler's lines hold
 * (`crate::module`) and which cost a call per line (+50% of taskq's CPU on 100 MB of such lines). The runner reads a
 * "\r" as a line's end too (`50%\r::add-mask::s3cret` is `50%`, then a command): the bytes after each "\r" are read as
 * a line's start as well, found with one search of the block for "\r".
 */
function nextCommandLine(bytes: Buffer, from: number, count: number, ends: Int32Array): number {
  let start = from === 0 ? 0 : (ends[from - 1] as number);
  let cr = bytes.indexOf(CARRIAGE_RETURN, start);
  for (let line = from; line < count; line++) {
    const end = ends[line] as number;
    // Up to the line's "\n", which ends what the runner reads.
    if (isWorkflowCommand(bytes, start, end - 1)) return line;
    for (; cr !== -1 && cr < end - 1; cr = bytes.indexOf(CARRIAGE_RETURN, cr + 1)) if (isWorkflowCommand(bytes, cr + 1, end - 1)) return line;
    start = end;
  }
  return count;
}

const CARRIAGE_RETURN = 0x0d;

/**
 * Calls `lines` with each run of lines of a block that are not workflow commands, as a block of its own, and `command` with
 * each line that is one (its bytes, its "\n" last), in order.
 */
export function eachCommandLine(
  bytes: Buffer,
  count: number,
  ends: Int32Array,
  lines: (bytes: Buffer, count: number, ends: Int32Array) => void,
  command: (line: Buffer) => void,
): void {
  for (let from = 0; from < count; ) {
    const next = nextCommandLine(bytes, from, count, ends);
    if (next > from) {
      if (from === 0) lines(next === count ? bytes : bytes.subarray(0, ends[next - 1]), next, ends);
      else {
        // A run after a command: its own block, its ends from its start.
        const base = ends[from - 1] as number;
        const runEnds = ends.slice(from, next);
        for (let index = 0; index < runEnds.length; index++) runEnds[index] = (runEnds[index] as number) - base;
        lines(bytes.subarray(base, ends[next - 1]), next - from, runEnds);
      }
    }
    if (next === count) return;
    command(bytes.subarray(next === 0 ? 0 : ends[next - 1], ends[next]));
    from = next + 1;
  }
}
