/**
 * The CLI's entry point and its one error boundary: only this file calls
 * process.exit. Commands throw TaskqErrors carrying their exit code.
 */
import { readFileSync } from "node:fs";

const argv = process.argv.slice(2);

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
  if (error instanceof TaskqError) {
    const problems = (error as { problems?: unknown[] }).problems;
    // With --output json, stdout stays NDJSON to the end: the error as a record too (stderr keeps the text).
    if (jsonOutput(argv)) {
      const record = Array.isArray(problems)
        ? { event: "invalid", code: error.code, exitCode: error.exitCode, problems }
        : { event: "error", code: error.code, exitCode: error.exitCode, message: error.message };
      process.stdout.write(`${JSON.stringify({ ts: new Date().toISOString(), ...record })}\n`);
    }
    if (Array.isArray(problems)) {
      // An invalid workflow: one file:line:col line per problem, then the verdict.
      const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
      process.stderr.write(`${error.message}\n${count}; nothing was run\n`);
      return error.exitCode;
    }
    process.stderr.write(`taskq: ${error.message}\n`);
    if (verbose && error.stack) process.stderr.write(`${error.stack}\n`);
    return error.exitCode;
  }
  const commanderCode = (error as { code?: unknown; exitCode?: unknown } | null)?.exitCode;
  if (typeof commanderCode === "number") {
    // commander printed its own message (an unknown flag, a missing file argument); with --output json, a record of it too.
    if (commanderCode !== 0 && jsonOutput(argv)) {
      const message = (error instanceof Error ? error.message : String(error)).replace(/^error: /, "");
      process.stdout.write(`${JSON.stringify({ ts: new Date().toISOString(), event: "error", code: "USAGE", exitCode: commanderCode, message })}\n`);
    }
    return commanderCode;
  }
  process.stderr.write(`taskq: unexpected error (this is a bug): ${error instanceof Error ? error.message : String(error)}\n`);
  if (verbose && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  else process.stderr.write("run again with --verbose for the stack trace\n");
  return 1;
}

/** Whether the command line asks for `--output json` (as commander reads it: `--output json` or `--output=json`). */
function jsonOutput(args: string[]): boolean {
  return args.some((arg, index) => arg === "--output=json" || (arg === "--output" && args[index + 1] === "json"));
}

let outputFailureSaid = false;

/** Handles a write error of stdout or stderr: EPIPE silently, any other once, on stderr if it still works. */
function outputFailed(name: "stdout" | "stderr"): (error: NodeJS.ErrnoException) => void {
  return (error) => {
    if (error.code === "EPIPE" || outputFailureSaid) return;
    outputFailureSaid = true;
    if (name === "stdout" && !process.stderr.destroyed) {
      process.stderr.write(`taskq: cannot write to stdout (${error.code ?? error.message}); the run goes on, and each task's output is in its log\n`);
    }
  };
}

/** After a signal, how long output may wait for a reader that does not read before taskq exits anyway. */
const SIGNAL_FLUSH_MS = 2000;

/**
 * Exits once stdout and stderr have flushed, so output is never cut off. A run ended by a
 * signal (exit code 128 + n) waits at most SIGNAL_FLUSH_MS: the user asked to stop, and a
 * reader that stopped reading (`taskq run | less`, left open) must not keep taskq alive.
 */
function exit(code: number): void {
  if (code > 128) setTimeout(() => process.exit(code), SIGNAL_FLUSH_MS).unref();
  let pending = 2;
  const done = (): void => {
    if (--pending === 0) process.exit(code);
  };
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.writableLength === 0 || stream.destroyed) done();
    else stream.write("", done);
  }
}
