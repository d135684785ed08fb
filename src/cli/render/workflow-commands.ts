import { toJson } from "../to-json.js";

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
 * The name of the workflow command at a line's start (`line` as eachCommandLine hands it on, its "\n" last), in lower
 * case, and its data as the runner reads it; undefined where the line starts with none.
 */
export function commandAtStart(line: Buffer): { name: string; data: string } | undefined {
  const end = line.length - 1;
  if (!isWorkflowCommand(line, 0, end)) return undefined;
  const at = trimmedStart(line, 0, end) + 2;
  const close = line.indexOf(COMMAND_COLONS, at);
  const space = line.indexOf(0x20, at);
  const nameEnd = space !== -1 && space < close ? space : close;
  const cr = line.indexOf(CARRIAGE_RETURN, close + 2);
  return { name: line.toString("utf8", at, nameEnd).toLowerCase(), data: unescapeData(line.toString("utf8", close + 2, cr === -1 || cr > end ? end : cr)) };
}

/**
 * The workflow commands of a line (`line` as eachCommandLine hands it on, its "\n" last) as the runner reads them: at
 * its start and after each "\r" (its log splits a line there), in order, each name in lower case.
 */
export function commandsInParts(line: Buffer): { name: string; data: string }[] {
  const found: { name: string; data: string }[] = [];
  const end = line.length - 1;
  for (let from = 0; from <= end; ) {
    const cr = line.indexOf(CARRIAGE_RETURN, from);
    const to = cr === -1 || cr >= end ? end : cr;
    const command = commandAtStart(Buffer.concat([line.subarray(from, to), NEWLINE]));
    if (command !== undefined) found.push(command);
    from = to + 1;
  }
  return found;
}

const NEWLINE = Buffer.from("\n");

/**
 * The names the runner refuses as a `::stop-commands::` token (it then stops nothing): none, `pause-logging`, and a
 * workflow command's name.
 */
export const REFUSED_STOP_TOKENS: ReadonlySet<string> = new Set(["", "pause-logging", "add-mask", "error", "warning", "notice", "debug", "group", "endgroup", "echo", "set-output", "save-state", "set-env", "add-path", "add-matcher", "remove-matcher", "stop-commands"]);

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

/**
 * For `--output json` under GitHub Actions: the `::add-mask::` commands a block's lines hold (at a line's start or
 * after a "\r", as the runner reads them), each as a line to write on stderr, where the runner reads it. In an
 * `output` record a task's `::add-mask::` comes after the record's `{"ts":...`, where the runner reads no command: the
 * value was never masked, in that record, in every later one (`token=<the value>`) and in the summary's `tail`. On
 * stderr, before the record goes to stdout, it is read as the task wrote it. Where taskq's JSON writes the value
 * otherwise than the runner's own JSON form of a secret (which it masks too: `\"` and `\\`, but not a C1 control,
 * which toJson escapes as `\u009b` and the runner does not), a second command masks the value as the records hold it.
 * Undefined where there is none (the common case, one look at each line's first bytes). Every one goes, whatever
 * `::stop-commands::` the task wrote before it: the runner never sees that stop, inside a record, and keeping to it
 * only left the value unmasked (one the task quoted in its stop is a value it printed all the same).
 */
export function maskCommands(bytes: Buffer, count: number, ends: Int32Array): string[] | undefined {
  let found: string[] | undefined;
  // The runner's older form, `##[add-mask]value`, is read anywhere in a line: where a block holds one (one search of it),
  // each of its lines is read.
  const legacy = bytes.indexOf(LEGACY_PREFIX) !== -1;
  const next = (from: number): number => (legacy ? from : nextCommandLine(bytes, from, count, ends));
  for (let line = next(0); line < count; line = next(line + 1)) {
    const start = line === 0 ? 0 : (ends[line - 1] as number);
    const end = (ends[line] as number) - 1;
    // Each part the runner reads as a line: from the line's start, and after each "\r".
    for (let from = start; from <= end; ) {
      const cr = bytes.indexOf(CARRIAGE_RETURN, from);
      const to = cr === -1 || cr >= end ? end : cr;
      const data = legacy && !isWorkflowCommand(bytes, from, to) ? legacyMaskData(bytes, from, to) : maskData(bytes, from, to);
      if (data !== undefined) (found ??= []).push(...maskLines(data));
      from = to + 1;
    }
  }
  return found;
}

/** The same as maskCommands for one line as text (a `line` of a sink that hands on text). */
export function maskCommandsInText(text: string): string[] | undefined {
  if (!text.includes("::") && !text.includes(LEGACY_PREFIX)) return undefined;
  const bytes = Buffer.from(`${text}\n`);
  return maskCommands(bytes, 1, Int32Array.of(bytes.length));
}

/**
 * The same as maskCommands for the states of a line that "\r" rewrote and that no record holds (see
 * OutputSink.droppedStates): bytes read as one line, each part of it up to a "\r" a line to the runner.
 */
export function maskCommandsInStates(bytes: Buffer): string[] | undefined {
  // The line's end one past its bytes, where a block has its "\n": its last byte is read, none past it.
  return maskCommands(bytes, 1, Int32Array.of(bytes.length + 1));
}

const ADD_MASK = "add-mask";

/**
 * The data of an `::add-mask::` command at bytes[start, end) (after white space; `::add-mask::data`), as written; else
 * undefined.
 */
function maskData(bytes: Buffer, start: number, end: number): string | undefined {
  if (!isWorkflowCommand(bytes, start, end)) return undefined;
  const at = trimmedStart(bytes, start, end) + 2;
  const close = bytes.indexOf(COMMAND_COLONS, at);
  const space = bytes.indexOf(0x20, at);
  const nameEnd = space !== -1 && space < close ? space : close;
  const name = bytes.toString("utf8", at, nameEnd).toLowerCase();
  if (name !== ADD_MASK) return undefined;
  return bytes.toString("utf8", close + 2, end);
}

/** What opens a command of the runner's older form, `##[name]data`, anywhere in a line. */
const LEGACY_PREFIX = "##[";

/**
 * The same as maskData for a command of the runner's older form in bytes[start, end): the first `##[` in it, its name up
 * to a space or the `]` that closes it, its data after that `]`. The data goes on as the `::add-mask::` command's where
 * it holds no `%`, whose escapes this form reads otherwise (`%3B` and `%5D` too): a value with one is not sent, rather
 * than sent as another value.
 */
function legacyMaskData(bytes: Buffer, start: number, end: number): string | undefined {
  const at = bytes.indexOf(LEGACY_PREFIX, start);
  if (at === -1 || at >= end) return undefined;
  const close = bytes.indexOf(0x5d, at + LEGACY_PREFIX.length);
  if (close === -1 || close >= end) return undefined;
  const section = bytes.toString("utf8", at + LEGACY_PREFIX.length, close);
  const space = section.indexOf(" ");
  const name = (space === -1 ? section : section.slice(0, space)).toLowerCase();
  const data = bytes.toString("utf8", close + 1, end);
  return name === ADD_MASK && data !== "" && !data.includes("%") ? data : undefined;
}

/**
 * A JSON record as written to stdout under GitHub Actions: each `[` after `##` as `\u005b`, the same text once decoded.
 * The runner reads the older form of a command, `##[name]data`, anywhere in a line, a record's too: a task's
 * `##[stop-commands]tok` stopped it reading every command of the step, another task's `::add-mask::` on stderr included
 * (whose value then showed), and a `##[error]` made an annotation. Where the record holds none, as it is.
 */
export function withoutLegacyCommands(json: string): string {
  return json.includes(LEGACY_PREFIX) ? json.replaceAll(LEGACY_PREFIX, "##\\u005b") : json;
}

/** Whether bytes hold the runner's older form of a command, `##[` (see withoutLegacyCommands). */
export function holdsLegacyCommand(bytes: Buffer): boolean {
  return bytes.indexOf(LEGACY_PREFIX) !== -1;
}

/** A command's data as the runner reads it: `%0D`, `%0A` and `%25` stand for "\r", "\n" and `%`. */
export function unescapeData(data: string): string {
  return data.replaceAll("%0D", "\r").replaceAll("%0A", "\n").replaceAll("%25", "%");
}

/**
 * The lines that mask `data` (a command's data as written, `%25`, `%0D` and `%0A` standing for `%`, "\r" and "\n",
 * as the runner reads them): the command itself, and where the value is otherwise in a record, one for that form.
 */
function maskLines(data: string): string[] {
  const lines = [`::${ADD_MASK}::${data}`];
  const value = unescapeData(data);
  const inRecord = toJson(value).slice(1, -1);
  if (inRecord !== value && inRecord !== runnerJsonForm(value)) lines.push(`::${ADD_MASK}::${inRecord.replaceAll("%", "%25")}`);
  return lines;
}

/**
 * The form of a value the runner masks as JSON (Newtonsoft's JsonConvert.ToString without its quotes): `"`, `\` and
 * the controls below U+0020 escaped as JSON.stringify escapes them, and U+0085, U+2028 and U+2029 as `\u0085`.
 */
function runnerJsonForm(value: string): string {
  return JSON.stringify(value)
    .slice(1, -1)
    .replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Writes a task's `::add-mask::` commands (see maskCommands) where the runner reads them, at once: the record that
 * holds the value is still in the records' buffer, and goes to stdout after them.
 */
export function writeCommands(stream: NodeJS.WritableStream, lines: string[] | undefined): void {
  if (lines !== undefined) stream.write(`${lines.join("\n")}\n`);
}

/**
 * Whether the runner reads a workflow command in `text` (a line without its "\n"): at its start, or after a "\r" in it;
 * or `##[` anywhere in it.
 */
export function holdsWorkflowCommand(text: string): boolean {
  // The runner's older form (`##[error]message`) is read anywhere in a line.
  if (text.includes(LEGACY_PREFIX)) return true;
  if (!text.includes("::")) return false;
  const bytes = Buffer.from(`${text}\n`);
  return nextCommandLine(bytes, 0, 1, Int32Array.of(bytes.length)) === 0;
}
