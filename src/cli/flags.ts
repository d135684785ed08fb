import { homedir } from "node:os";
import path from "node:path";
import { isatty } from "node:tty";
import { UsageError } from "../errors.js";
import { formatMs } from "../engine/errors.js";
import { defaultConcurrency } from "./cpu-limit.js";
import { DURATION_EXPECTED, durationMistake, OVER_DURATION_LIMIT, overDurationLimit, parseDuration, secondsInDigits } from "../loaders/duration.js";
import { isRunId, RUN_ID_EXPECTED } from "../run-id.js";
import { isTaskId, TASK_ID_EXPECTED } from "../task-id.js";

/**
 * A duration flag ("5s", "1m30s", "2") in milliseconds, or a usage error naming the flag and
 * what it takes (`expected`: by default any duration's form and range).
 */
export function durationFlag(name: string, value: unknown, expected = DURATION_EXPECTED): number {
  const ms = typeof value === "string" || typeof value === "number" ? parseDuration(value) : undefined;
  if (ms === undefined) {
    // `31d`: written right, but past the range, which the form alone did not say it was.
    if (expected === DURATION_EXPECTED && typeof value === "string" && overDurationLimit(value)) {
      throw new UsageError(`${name}: ${JSON.stringify(value)} is ${OVER_DURATION_LIMIT}`);
    }
    const mistake = typeof value === "string" ? (durationMistake(value) ?? secondsWrittenOtherwise(value)) : undefined;
    throw new UsageError(`${name}: ${JSON.stringify(value)} is not ${expected}${mistake === undefined ? "" : ` (${mistake})`}`);
  }
  return ms;
}

/**
 * A flag's duration written as a number in a form other than digits (`1e3`, `0x10`, `+5`, `5e-1`),
 * which JavaScript and YAML read as that many seconds and a flag refuses: the seconds in digits and
 * the duration, as a workflow file's `timeout: 1e3` is told (`write 1000, or 16m40s`; `1e-9`: `write
 * 0.000000001, or 0ms`, to which it rounds); undefined for any other text, and for seconds past the range.
 */
function secondsWrittenOtherwise(value: string): string | undefined {
  const n = numberAsRead(value);
  if (n === undefined) return undefined;
  // `1e-9` in digits too (0.000000001), as a workflow file's `delay: 1e-9` is told, not String's 1e-9 again.
  const seconds = secondsInDigits(n);
  const ms = seconds === undefined ? undefined : parseDuration(seconds);
  if (seconds === undefined || seconds === value || ms === undefined) return undefined;
  return `a number of seconds is written in digits, with a point if need be: write ${seconds}, or ${formatMs(ms)}${ms === 0 && n !== 0 ? ", to which it is rounded (a duration is whole milliseconds)" : ""}`;
}

/**
 * The FILE of run, validate, list, graph and submit, or a usage error for an empty one (an
 * unset `$WORKFLOW`), which the loader would report as a file without a name that cannot be
 * read (`:1:1: cannot read file: no such file (ENOENT)`).
 */
export function workflowFileArgument(file: string): string {
  if (file === "") throw new UsageError("an empty file name: give a workflow file, or - for standard input");
  return file;
}

/** Standard input given twice (`validate - -`, `run - -`): it can be read only once, and was no task's id. */
export function stdinGivenTwice(words: readonly string[]): void {
  if (words.filter((word) => word === "-").length > 1) throw new UsageError("- (standard input) is given more than once, and it can be read only once: give - once");
}

/**
 * Before a workflow is read from standard input (`-`) that is a terminal: a line on stderr, or the
 * command would sit waiting in silence, its user unsure whether it hung. `isatty`, not
 * process.stdin, which would make a stream of the terminal (and set it non-blocking) before the
 * loader reads it.
 */
export function noteTerminalInput(file: string): void {
  if (file === "-" && isatty(0)) process.stderr.write("taskq: reading the workflow from the terminal (standard input): type or paste it, then press Ctrl-D\n");
}

/** The log root when --log-dir is not given. */
const DEFAULT_LOG_DIR = ".taskq/logs";

/**
 * --log-dir: the root of the run folders, or a usage error for an empty one (an unset
 * `$LOG_DIR`), which would put every run folder straight into the current folder (and
 * `prune --logs` would look there): `.` says that, if it is what is meant. One starting with `-`
 * is a flag taken for the folder (an unset, unquoted `$LOG_DIR` before it): `./-x` names such a folder.
 */
export function logDirFlag(value: unknown): string {
  if (typeof value !== "string") return DEFAULT_LOG_DIR;
  if (value === "") throw new UsageError('--log-dir: an empty folder name (for the current folder, give ".")');
  // `--log-dir $LOG_DIR --dry-run` with LOG_DIR unset took the flag after it for the folder, and ran everything.
  if (value.startsWith("-")) throw new UsageError(`--log-dir: "${value}" looks like a flag, not a folder (was the value before it left out?); for a folder of that name, give ./${value}`);
  // `--log-dir "~/logs"`, a CI variable holding it, or `--log-dir=~/logs` (bash and zsh expand no ~ after `--log-dir=`): no shell expanded it, and taskq made a folder named "~" in the
  // current folder while it said "logs in ~/logs/...", which reads as the home folder's (and `rm -rf ~` removes that).
  if (value.startsWith("~")) {
    const why = `--log-dir: "${value}" starts with ~, which no shell expanded (it was quoted, came from a variable, or followed --log-dir=, after which a shell leaves a ~ as it is) and taskq does not`;
    // `~ci/logs`, a user's home folder: named by the shell alone, so its full path is asked for.
    const first = value.split("/")[0]!;
    const give = first === "~" ? `give the home folder's path (${path.join(homedir(), value.slice(1))})` : `give the full path of ${first}'s home folder`;
    throw new UsageError(`${why}: it would name a folder "${first}" in the current folder; ${give}, or ./${value} for a folder of that name`);
  }
  return value;
}

/**
 * -j: a positive integer, else the file's value, else the CPU count, lowered to a container's CPU
 * quota (see cpu-limit.ts and wholeNumberFlag). An error names the flag as it was typed (`name`,
 * see typedFlagName).
 */
export function concurrencyFlag(value: unknown, fromFile: number | undefined, name = "--concurrency"): number {
  if (value === undefined) return fromFile ?? defaultConcurrency();
  // `-j=4`: a short flag's value follows it, or a space; the `=` is taken for part of the value.
  const hint = typeof value === "string" && /^=\d+$/.test(value) ? `write -j ${value.slice(1)} or --concurrency=${value.slice(1)}: a short flag takes no =` : undefined;
  return wholeNumberFlag(name, value, { min: 1, max: 10_000, expected: "a whole number from 1 to 10000", ...(hint === undefined ? {} : { hint }) });
}

/**
 * A flag with a short and a long name as the user typed it (`-j` or `--concurrency`), for its
 * errors: `-j 0` answered `--concurrency: "0" ...` named a flag the user never wrote. The last
 * that gives it wins, as its value does; `long` when argv has neither. Reads only up to `--`.
 */
export function typedFlagName(short: string, long: string, argv: readonly string[] = process.argv.slice(2)): string {
  let typed = long;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (arg === "--") break;
    if (arg === long || arg === short) {
      typed = arg;
      index++; // its value, whatever it looks like
    } else if (arg.startsWith(`${long}=`)) typed = long;
    else if (arg.startsWith(short)) typed = short; // -j4, -j=4
  }
  return typed;
}

/**
 * An integer flag (-j, --metrics-port): ASCII digits alone, or a usage error naming the flag and
 * the value. The same rule for every one: Number() would take `1e3`, `0x10` and `0b11` as 1000,
 * 16 and 3, and `+2` or ` 2` are a sign and a space that a shell variable slipped in (`-j "$N "`):
 * each is refused with the number it would have been (`4.0`, `1e1` too), rather than some forms
 * taken and others not.
 */
export function wholeNumberFlag(name: string, value: unknown, range: { min: number; max: number; expected: string; hint?: string; aside?: string }): number {
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : NaN;
  if (Number.isSafeInteger(n) && n >= range.min && n <= range.max) return n;
  const spaced = typeof value === "string" ? /^\s*\+?(\d+)\s*$/.exec(value)?.[1] : undefined;
  const otherwise = spaced === undefined && typeof value === "string" ? integerWrittenOtherwise(value) : undefined;
  const meant = spaced ?? otherwise;
  const fits = meant !== undefined && meant !== value && Number(meant) >= range.min && Number(meant) <= range.max;
  const how = otherwise === undefined ? "digits alone, without a space or a sign" : "digits alone";
  const hint = range.hint ?? (fits ? `${how}: ${meant}` : range.aside);
  throw new UsageError(`${name}: ${JSON.stringify(value)} is not ${range.expected}${hint === undefined ? "" : ` (${hint})`}`);
}

/**
 * The integer a flag's value is in a form Number() reads but an integer flag refuses (`4.0`, `1e1`,
 * `0x10`, `0b11`, `0o7`, `+4.0`), in digits, for its error to name; undefined for any other value (one
 * with a fraction, `2.5`, is no integer meant).
 */
function integerWrittenOtherwise(value: string): string | undefined {
  const n = numberAsRead(value);
  return n !== undefined && Number.isSafeInteger(n) ? String(n) : undefined;
}

/**
 * The number JavaScript (and YAML) read in `value` where it is one written with a sign, a point, an exponent or a base
 * (`+4.0`, `1e3`, `0x10`: Number() alone reads no sign before a base, `+0x10`); undefined for any other text.
 */
function numberAsRead(value: string): number | undefined {
  if (!/^\+?(?:0[xX][\da-fA-F]+|0[oO][0-7]+|0[bB][01]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)$/.test(value)) return undefined;
  return Number(value.replace(/^\+/, ""));
}

/** --run-id: undefined when not given, else a valid run id (see run-id.ts), or a usage error. */
export function runIdFlag(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !isRunId(value)) throw new UsageError(`--run-id: ${shownArgument(value)} is not a run id: ${RUN_ID_EXPECTED}${withoutSpaces(value, isRunId)}`);
  return value;
}

/**
 * The RUN of status, cancel, dead-letters and redrive: checked as submit checks --run-id, so a
 * name no run can have is a usage error, not a "no run" that echoes it as typed.
 */
export function runIdArgument(value: string): string {
  if (!isRunId(value)) throw new UsageError(`${shownArgument(value)} is not a run id: ${RUN_ID_EXPECTED}${withoutSpaces(value, isRunId)}`);
  return value;
}

/** A task id given to `cancel` or `redrive`: one no workflow can have is a usage error, as a bad run id is, not "no such task". */
export function taskIdArgument(value: string): string {
  if (!isTaskId(value)) throw new UsageError(`${shownArgument(value)} is not a task id: ${TASK_ID_EXPECTED}${withoutSpaces(value, isTaskId)}`);
  return value;
}

/**
 * ` (write it without spaces: build-42)` where an id is refused only for the white space around it: a CI variable or a
 * file read with `$(cat ...)` that kept a space, a tab or a Windows line's `\r`, which the quoted id shows but does not point at.
 */
export function withoutSpaces(value: unknown, valid: (id: string) => boolean): string {
  if (typeof value !== "string") return "";
  const trimmed = value.trim();
  return trimmed !== value && valid(trimmed) ? ` (write it without spaces: ${trimmed})` : "";
}

/** A rejected run id (or task id) as the error shows it: quoted with its control characters escaped, and a long one cut. */
function shownArgument(value: unknown): string {
  if (typeof value !== "string" || value.length <= 2 * RUN_ID_SHOWN) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, RUN_ID_SHOWN))}... (${value.length} characters)`;
}

/** How much of a long rejected run id an error shows. */
const RUN_ID_SHOWN = 64;

/** Shortest lease the CLI accepts: heartbeats come every third of it, and a pause longer than it loses the task. */
const MIN_LEASE_MS = 1_000;
/**
 * Longest: a dead worker's tasks wait that long to be swept. (The worker's timers, like
 * setTimeout, end at 24.8 days; past that a lease would run out at once.)
 */
const MAX_LEASE_MS = 24 * 3_600_000;

/** `--lease` of `worker` and `run --store`: a duration from 1s to 24h, in ms. */
export function leaseFlag(value: unknown): number {
  // Not any duration's range (0 to 30 days): a lease's.
  const ms = durationFlag("--lease", value, "a duration like 30s, 5m or 1h, from 1s to 24h");
  // A zero lease would make the heartbeat and orphan-sweep timers fire back to back against the database.
  if (ms < MIN_LEASE_MS) throw new UsageError(`--lease: ${JSON.stringify(value)} is shorter than the minimum of 1s`);
  if (ms > MAX_LEASE_MS) throw new UsageError(`--lease: ${JSON.stringify(value)} is longer than the maximum of 24h`);
  return ms;
}
