/**
 * GitHub Actions' workflow commands (`::error file=a.ts,line=3::message`, `::group::name`, `::add-mask::value`) in a
 * task's plain lines. The runner reads one only where a line starts: behind taskq's `task |` prefix its annotations were
 * lost and a value to mask was not masked. Under GitHub Actions, such a line goes as the task wrote it, without the
 * prefix (see TaskColours), as when the command runs in the step itself.
 */

import { isWideSpace } from "../../handlers/line-splitter.js";

const COLONS = Buffer.from("::");

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
export function nextCommandLine(bytes: Buffer, from: number, count: number, ends: Int32Array): number {
  let start = from === 0 ? 0 : (ends[from - 1] as number);
  let cr = bytes.indexOf(CARRIAGE_RETURN, start);
  for (let line = from; line < count; line++) {
    const end = ends[line] as number;
    if (startsCommand(bytes, start, end)) return line;
    for (; cr !== -1 && cr < end - 1; cr = bytes.indexOf(CARRIAGE_RETURN, cr + 1)) if (startsCommand(bytes, cr + 1, end)) return line;
    start = end;
  }
  return count;
}

const CARRIAGE_RETURN = 0x0d;

/**
 * Whether the runner reads a workflow command from `at` on, a line's start (the line ending at `end`): after what its
 * TrimStart takes away, which is .NET's white space: space, tab, \v, \f and \r, and in UTF-8 U+0085, U+00A0 (a
 * no-break space), U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F and U+3000. The line's "\n" ends them.
 */
function startsCommand(bytes: Buffer, at: number, end: number): boolean {
  for (;;) {
    const byte = bytes[at];
    if (byte === 0x20 || byte === 0x09 || byte === 0x0b || byte === 0x0c || byte === 0x0d) at++;
    else if (byte === 0xc2 && (bytes[at + 1] === 0x85 || bytes[at + 1] === 0xa0)) at += 2;
    else if (byte !== undefined && byte >= 0xe1 && byte <= 0xe3 && at + 2 < end && isWideSpace(byte, bytes[at + 1] as number, bytes[at + 2] as number)) at += 3;
    else return byte === 0x3a && bytes[at + 1] === 0x3a && isCommand(bytes, at + 2, end);
  }
}

/** Whether a line (ending at `end`, its "\n" last) whose `::` ends at `name` goes on as a workflow command: a name, then `::`. */
function isCommand(bytes: Buffer, name: number, end: number): boolean {
  const close = bytes.indexOf(COLONS, name);
  return close > name && close + 2 < end && bytes[name] !== 0x20;
}

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
