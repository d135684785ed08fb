/**
 * The CLI's entry point and its one error boundary: only this file calls
 * process.exit. Commands throw TaskqErrors carrying their exit code.
 */
import { fstatSync, readFileSync } from "node:fs";
import { isatty } from "node:tty";
import { ENDING_SIGNALS, signalExitCode } from "./ending-signals.js";
import { stdoutClosed, stdoutLossCause, stdoutLostSaid, watchClosedStdout } from "./stdout-lost.js";

const argv = process.argv.slice(2);
/** Whether taskq started on a terminal (see noteTerminal); declared before main() runs, which sets it. */
let onTerminal = false;
/** Which of 0, 1 and 2 were terminals then, to Node (which saved their modes, to restore at exit): see terminalGone. */
let terminalFds: number[] = [];

// (`taskq --version` alone never gets here: bin/taskq.cjs answers it from package.json.)
void main();

function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

async function main(): Promise<void> {
  // A reader that went away (`taskq run f | head -1`), or an output that cannot be written
  // (a full disk), is not a reason to crash or stop the run: each task's log has its output.
  process.stdout.on("error", outputFailed("stdout"));
  process.stderr.on("error", outputFailed("stderr"));
  // A run's or a worker's progress lost so is said as it is lost, as a full disk's is, and it goes on (its tasks' logs
  // hold their output); another command's loss is said at its end, where it is an error (see exit).
  watchClosedStdout(() => {
    if (OUTPUT_IS_PROGRESS) outputFailed("stdout")(null);
  });
  noteTerminal();
  // SIGUSR1 makes a Node program open its debugger (port 9229, where any local process may then run
  // code as taskq's user) and print "Debugger listening on ..." to the terminal, behind the live
  // board's back: the next redraw took those two lines for the board's and left two board lines
  // behind. taskq is a command, not a server: the signal is ignored, and said so (through the
  // board's hook on stderr, above it). A debugger is for `node --inspect`.
  process.on("SIGUSR1", () => {
    process.stderr.write("taskq: SIGUSR1 ignored (no debugger opens on a signal: run taskq with node --inspect for one)\n");
  });
  // As PID 1 (a container without an init) no signal's default action is ever taken: SIGQUIT
  // (Ctrl-\, `docker kill -s QUIT`), SIGUSR2 or SIGALRM did nothing. Each ends taskq at once, as
  // anywhere else; the kernel then SIGKILLs every other process of the container. After the other
  // listeners (the terminal's settings, the cursor), which run within the same emit. The code is a
  // shell's for that signal (131: 128 + SIGQUIT).
  if (process.pid === 1) {
    for (const signal of ENDING_SIGNALS) process.on(signal, () => setImmediate(() => process.exit(signalExitCode(signal))));
  }
  const verbose = argv.includes("--verbose");
  try {
    const { buildProgram } = await import("./program.js");
    const program = buildProgram(readVersion());
    await program.parseAsync(process.argv);
    const code = typeof process.exitCode === "number" ? process.exitCode : 0;
    exit(code);
  } catch (error) {
    exit(await reportError(error, verbose));
  }
}

async function reportError(error: unknown, verbose: boolean): Promise<number> {
  const { TaskqError } = await import("../errors.js");
  // A message names paths and files as given (a folder's file names, a --log-dir): their control characters are written out, not obeyed.
  const { escapeControlsInLines: escapeLines } = await import("../escape-controls.js");
  const { toJson: recordJson } = await import("./to-json.js");
  // A store's URL typed where a file, a task or another flag's value goes is repeated by the message: its password hidden.
  const { hidePasswords } = await import("../store/postgres/redact.js");
  const toJson = (value: unknown): string => hidePasswords(recordJson(value));
  const escapeControlsInLines = (text: string): string => hidePasswords(escapeLines(text));
  if (error instanceof TaskqError) {
    // A library error (the engine's) carries no exit code of the CLI's: it ends a command with 1.
    const exitCode = error.exitCode ?? 1;
    const problems = (error as { problems?: unknown[] }).problems;
    // With --output json, stdout stays NDJSON to the end: the error as a record too (stderr keeps the text).
    if (jsonOutput(argv)) {
      // The file named, as validate's record of each of several files names it: the one all its problems are in.
      const files = Array.isArray(problems) ? new Set(problems.map((problem) => (problem as { file?: unknown }).file)) : undefined;
      const file = files?.size === 1 ? [...files][0] : undefined;
      const record = Array.isArray(problems)
        ? { event: "invalid", ...(typeof file === "string" ? { file } : {}), code: error.code, exitCode, problems }
        : { event: "error", code: error.code, exitCode, message: error.message };
      process.stdout.write(`${toJson({ ts: new Date().toISOString(), ...record })}\n`);
    }
    if (Array.isArray(problems)) {
      // An invalid workflow: one file:line:col line per problem (the first MAX_PRINTED_PROBLEMS), then the verdict.
      const { printedProblems, problemCount } = await import("./problem-count.js");
      process.stderr.write(`${escapeControlsInLines(printedProblems(error.message, problems))}\n${problemCount(problems)}${UNDONE[COMMAND ?? ""] ?? ""}\n`);
      return exitCode;
    }
    process.stderr.write(`taskq: ${escapeControlsInLines(error.message)}\n`);
    if (verbose && error.stack) process.stderr.write(`${hidePasswords(error.stack)}\n`);
    return exitCode;
  }
  const commanderCode = (error as { code?: unknown; exitCode?: unknown } | null)?.exitCode;
  if (typeof commanderCode === "number") {
    // commander printed its own message (an unknown flag, a missing file argument); with --output json, a record of it too.
    if (commanderCode !== 0 && jsonOutput(argv)) {
      const message = (error instanceof Error ? error.message : String(error)).replace(/^(error|taskq): /, "");
      process.stdout.write(`${toJson({ ts: new Date().toISOString(), event: "error", code: "USAGE", exitCode: commanderCode, message })}\n`);
    }
    return commanderCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  // Stdout stays NDJSON to the end here too: a reader waiting for the last record gets one.
  if (jsonOutput(argv)) process.stdout.write(`${toJson({ ts: new Date().toISOString(), event: "error", code: "INTERNAL", exitCode: 1, message: `unexpected error (this is a bug): ${message}` })}\n`);
  process.stderr.write(`taskq: unexpected error (this is a bug): ${escapeControlsInLines(message)}\n`);
  if (verbose && error instanceof Error && error.stack) process.stderr.write(`${hidePasswords(error.stack)}\n`);
  else process.stderr.write("run again with --verbose for the stack trace\n");
  return 1;
}

/** The command given: only `--verbose` comes before it. */
const COMMAND = argv.find((arg) => !arg.startsWith("-"));

/**
 * What an invalid workflow's verdict says the command did not do, after its count of problems: `run`'s
 * "nothing was run", `submit`'s "nothing was submitted". None for the commands that run nothing anyway
 * (`validate`, `list`, `graph`): "nothing was run" after validate's problems read as if it might have.
 */
const UNDONE: Record<string, string> = { run: "; nothing was run", submit: "; nothing was submitted" };

/** The commands with no --output of their own (program.ts); cancel's and redrive's lines are JSON always, their errors text. */
const WITHOUT_OUTPUT_FLAG = new Set(["list", "graph", "schema", "help", "cancel", "redrive"]);

/**
 * Whether the command line asks for `--output json` (as commander reads it: `--output json`,
 * `--output=json` or `--json`, the last --output given winning, as in a run: `--output json --output plain` is plain;
 * a `--json` anywhere asks for JSON).
 */
function jsonOutput(args: string[]): boolean {
  // These take no --output: theirs is an unknown flag, answered in text alone.
  if (COMMAND !== undefined && WITHOUT_OUTPUT_FLAG.has(COMMAND)) return false;
  let mode: string | undefined;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === "--") break;
    if (arg.startsWith("--output=")) mode = arg.slice("--output=".length);
    else if (arg === "--output") mode = args[++index];
    // --json asks for records whatever --output says besides (`--json --output jsno` is a usage error, told as a record).
    else if (arg === "--json") return true;
  }
  return mode === "json";
}

let outputFailureSaid = false;
/** Set when stdout could not be written (but for EPIPE: its reader went away). */
let stdoutLost = false;

/**
 * Whether stdout shows a run's progress (`run`, `worker`), which the tasks' logs hold too, rather
 * than what the command is for (a list, a plan, the schema, a run id): that one's loss is an
 * error, exit 1, as a shell's `echo x > /dev/full` is.
 */
const OUTPUT_IS_PROGRESS = (COMMAND === "run" || COMMAND === "worker") && !argv.includes("--dry-run") && !helpOrVersionAsked(argv);

/** Whether the command line asks for help or the version (`run --help`, `run f.yaml -h`, `worker -V`): commander prints it, and runs nothing. */
function helpOrVersionAsked(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h" || arg === "--version" || arg === "-V");
}

/** Handles a write error of stdout or stderr (null: stdout closed from the start): EPIPE silently, any other once, on stderr if it still works. */
function outputFailed(name: "stdout" | "stderr"): (error: NodeJS.ErrnoException | null) => void {
  return (error) => {
    if (error?.code === "EPIPE") return;
    if (name === "stdout") stdoutLost = true;
    // A command that made a change all the same (submit, cancel, prune) has said it, naming the change.
    if (outputFailureSaid || (name === "stdout" && stdoutLostSaid())) return;
    outputFailureSaid = true;
    if (name === "stdout" && !process.stderr.destroyed) {
      // A worker serves every run, until stopped: it, not "the run", goes on.
      const goesOn = OUTPUT_IS_PROGRESS ? `; the ${COMMAND === "worker" ? "worker" : "run"} goes on, and each task's output is in its log` : "";
      process.stderr.write(`taskq: cannot write to stdout (${stdoutLossCause(error)})${goesOn}\n`);
    }
  };
}

/** The signals whose exit codes (128 + n) taskq ends with. */
const EXIT_SIGNALS: Record<number, NodeJS.Signals> = { 129: "SIGHUP", 130: "SIGINT", 143: "SIGTERM" };

/**
 * Exits with `code`; after a signal, with a terminal on stdin, stdout or stderr, by that
 * signal instead (the shell reports the same 128 + n). Node 20 restores the terminal's modes
 * at exit and aborts (SIGABRT, "Assertion failed" in ResetStdio) when the terminal is gone,
 * as when its window closes, which is what sends SIGHUP: a process ended by a signal skips
 * that restore. Dying by the signal is also what an interactive shell's loop (`for f in *; do
 * taskq run $f; done`) looks for to stop at Ctrl-C. A terminal gone by then after a run that
 * was not interrupted (a SIGHUP while the tasks' leftovers were stopped, when the run's code
 * stands) ends taskq by SIGHUP too. Without a terminal, the exit code as is.
 */
function exitNow(code: number): void {
  // A write that failed just now (a full disk) reports its 'error' on the next tick, which
  // process.exit would not wait for: the warning would be lost about 1 run in 6.
  const failed = process.stdout.errored;
  if (failed !== null && failed !== undefined) outputFailed("stdout")(failed);
  // Closed from the start (`taskq graph f.yaml >&-`): what was written went to node's /dev/null, with no error
  // to tell it (an error alone, on stderr, lost nothing). A run's progress is in its logs: a run goes on, its code its tasks', said as it was lost (see main).
  else if (!OUTPUT_IS_PROGRESS && stdoutClosed()) outputFailed("stdout")(null);
  if (stdoutLost && !OUTPUT_IS_PROGRESS && code === 0) code = 1;
  // A terminal gone since (its window closed while the tasks' leftovers were stopped, say), with
  // a code that is not a signal's: Node's restore would abort. Its processes end by SIGHUP, as the
  // hangup tells them to (nothing is left to read the code: its shell got SIGHUP too).
  const signal = EXIT_SIGNALS[code] ?? (terminalGone() ? "SIGHUP" : undefined);
  if (signal !== undefined && onTerminal) {
    // What process.exit would run first: task groups killed, the guard's list removed, spare FIFOs kept.
    process.exitCode = code;
    process.emit("exit", code);
    process.removeAllListeners(signal); // the default action again: end the process
    process.kill(process.pid, signal);
  }
  process.exit(code);
}

/**
 * Whether stdin, stdout or stderr was a terminal when taskq started (as Node judged, which
 * saved its modes then). Asked at the start: a terminal that has gone away is no terminal
 * to isatty() any more. stdout and stderr are streams by then (main listens to them); stdin
 * is looked at with fstat, not process.stdin, which would open a stream on it: a character
 * device other than the memory devices (/dev/null and the like, major 1).
 */
function noteTerminal(): void {
  terminalFds = [0, 1, 2].filter((fd) => isatty(fd));
  onTerminal = process.stdout.isTTY === true || process.stderr.isTTY === true;
  if (onTerminal) return;
  try {
    const info = fstatSync(0);
    onTerminal = info.isCharacterDevice() && Math.floor(info.rdev / 256) % 4096 !== 1;
  } catch {
    // no stdin
  }
}

/** Whether a descriptor that was a terminal at the start is one no more: the terminal has hung up (isatty fails with EIO). */
function terminalGone(): boolean {
  return terminalFds.some((fd) => !isatty(fd));
}

/** After a signal, how long output may wait for a reader that does not read before taskq exits anyway. */
const SIGNAL_FLUSH_MS = 2000;

/**
 * Before an exit that drops what stdout still holds: says so on stderr, where that can still get
 * out, so a missing summary is not a mystery (`taskq run | less` left open, a log collector
 * stalled, with stderr elsewhere). A stderr stuck as well (the same reader) hears nothing.
 */
function dropUnread(code: number): number {
  if (process.stdout.writableLength > 0 && !process.stdout.destroyed && process.stderr.writableLength === 0 && !process.stderr.destroyed) {
    const what = !OUTPUT_IS_PROGRESS ? "after the signal: the rest of its output is dropped" : COMMAND === "worker" ? "after the worker stopped: the rest of its output is dropped (each task's output is in its log)" : "after the run ended: the rest of its output, the summary included, is dropped (each task's output is in its log)";
    process.stderr.write(`taskq: stdout was not read for ${SIGNAL_FLUSH_MS / 1000}s ${what}\n`);
  }
  return code;
}

/**
 * Exits once stdout and stderr have flushed, so output is never cut off. A run ended by a
 * signal (exit code 128 + n) waits at most SIGNAL_FLUSH_MS: the user asked to stop, and a
 * reader that stopped reading (`taskq run | less`, left open) must not keep taskq alive.
 * So does a run or worker that gets a signal while it flushes, its own handlers gone: by the
 * signal's default action, taskq died at once, with another code than the one its summary
 * gives (143 for a run that succeeded, or ended by a SIGINT) and what stdout held lost in silence.
 */
function exit(code: number): void {
  let bounded = false;
  const bound = (): void => {
    if (bounded) return;
    bounded = true;
    setTimeout(() => exitNow(dropUnread(code)), SIGNAL_FLUSH_MS).unref();
  };
  if (code > 128) bound();
  if (OUTPUT_IS_PROGRESS) for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, bound);
  let pending = 2;
  const done = (): void => {
    if (--pending === 0) exitNow(code);
  };
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.writableLength === 0 || stream.destroyed) done();
    else stream.write("", done);
  }
}
