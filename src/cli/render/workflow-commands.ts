/**
 * GitHub Actions' workflow commands (`::error file=a.ts,line=3::message`, `::group::name`, `::add-mask::value`) in a
 * task's plain lines. The runner reads one only where a line starts: behind taskq's `task |` prefix its annotations were
 * lost and a value to mask was not masked. Under GitHub Actions, such a line goes as the task wrote it, without the
 * prefix (see TaskColours), as when the command runs in the step itself.
 */

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

/** What opens and closes a workflow command's name. */
const COMMAND_COLONS = Buffer.from("::");

/**
 * Whether bytes[start, end) (a line without its "\n") is a workflow command as the runner reads one: after white space,
 * `::`, a name (not empty, not starting with a space), then `::`.
 */
function isWorkflowCommand(bytes: Buffer, start: number, end: number): boolean {
  const at = trimmedStart(bytes, start, end);
  if (bytes[at] !== 0x3a || bytes[at + 1] !== 0x3a || at + 2 >= end) return false;
  const close = bytes.indexOf(COMMAND_COLONS, at + 2);
  return close > at + 2 && close + 2 <= end && bytes[at + 2] !== 0x20;
}

/**
 * Where bytes[start, end) goes on after the white space GitHub Actions' runner trims from a line's start (.NET's TrimStart):
 * space, tab, \v, \f and \r, and in UTF-8 U+0085, U+00A0 (a no-break space), U+1680, U+2000 to U+200A, U+2028, U+2029,
 * U+202F, U+205F and U+3000.
 */
function trimmedStart(bytes: Buffer, start: number, end: number): number {
  let at = start;
  while (at < end) {
    const byte = bytes[at] as number;
    if (byte === 0x20 || byte === 0x09 || byte === 0x0b || byte === 0x0c || byte === 0x0d) at++;
    else if (byte === 0xc2 && at + 1 < end && (bytes[at + 1] === 0x85 || bytes[at + 1] === 0xa0)) at += 2;
    else if (byte >= 0xe1 && byte <= 0xe3 && at + 2 < end && isWideSpace(byte, bytes[at + 1] as number, bytes[at + 2] as number)) at += 3;
    else return at;
  }
  return end;
}

/** Whether three bytes are the UTF-8 of one of .NET's white space characters past U+00FF (see trimmedStart). */
function isWideSpace(first: number, second: number, third: number): boolean {
  if (first === 0xe1) return second === 0x9a && third === 0x80;
  if (first === 0xe3) return second === 0x80 && third === 0x80;
  if (second === 0x80) return third <= 0x8a ? third >= 0x80 : third === 0xa8 || third === 0xa9 || third === 0xaf;
  return second === 0x81 && third === 0x9f;
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
