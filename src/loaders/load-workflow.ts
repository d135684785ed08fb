import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { MAX_FILE_BYTES } from "./limits.js";
import { parseIfSimple, parseSimpleWorkflow, tooLargeMessage, type ParseOptions } from "./parse-simple.js";
import type { Workflow } from "./build-workflow.js";
import { closestMatch } from "./suggest.js";
import { WorkflowError } from "./workflow-error.js";
import { systemWords } from "../system-words.js";

/**
 * Reads and parses a workflow file. The size is checked with stat before
 * reading, so a huge file is rejected without loading it. A task's `cwd` that is
 * not a folder now, or that this user cannot enter, gets a note (unless `checkCwd: false`). Any problem,
 * including an unreadable file, is a WorkflowError (exit code 2). Read
 * synchronously: parsing blocks far longer anyway, and the CLI's start then
 * needs no round trip through libuv's thread pool (nor its four threads).
 */
export async function loadWorkflow(file: string, options: ParseOptions = {}): Promise<Workflow> {
  const { bytes, folder } = readWorkflowFile(file);
  const parseOptions: ParseOptions = { folder, checkCwd: true, checkShell: true, ...options, now: options.now ?? Date.now() };
  const simple = parseIfSimple(bytes, nameOf(file), parseOptions);
  if (simple !== undefined) return simple;
  // yaml is loaded only now, for a file the fast reader declines: a file it takes (most, with
  // their problems and notes too) runs without it (~1 ms of a one-task run, and 0.3 MB of
  // young garbage that cost a scavenge before the first spawn).
  const { parseWorkflow } = await import("./parse-workflow.js");
  return parseWorkflow(bytes, nameOf(file), { ...parseOptions, simple: false });
}

/** As loadWorkflow, but only through the fast reader: undefined when it declines the file (see parseSimpleWorkflow). */
export function loadSimpleWorkflow(file: string, options: ParseOptions = {}): Workflow | undefined {
  const { bytes, folder } = readWorkflowFile(file);
  return parseSimpleWorkflow(bytes, nameOf(file), { folder, checkCwd: true, checkShell: true, ...options });
}

/** `-` for the workflow file: standard input, named so in messages. */
const STDIN = "-";

function nameOf(file: string): string {
  return file === STDIN ? "<stdin>" : file;
}

/**
 * The file's bytes, and for a pipe or device (`<(generate)`, /dev/stdin) the current folder
 * as the one tasks' `cwd` starts from: that file's own folder (/dev/fd) means nothing.
 */
function readWorkflowFile(file: string): { bytes: Buffer; folder?: string } {
  try {
    if (file === STDIN) {
      const bytes = readStream(0);
      if (bytes.length === 0 && isNullDevice(0)) throw problem(nameOf(file), stdinNull(file));
      return { bytes, folder: currentFolder(file) };
    }
    const info = statSync(file);
    if (info.isDirectory()) throw problem(file, `cannot read file: it is a directory${filesIn(file)}`);
    // Opening one fails with ENXIO, "no such device or address", which names neither the file nor why.
    if (info.isSocket()) throw problem(file, "cannot read file: it is a socket");
    if (info.size > MAX_FILE_BYTES) throw problem(file, tooLargeMessage(info.size));
    if (!info.isFile()) {
      const bytes = readStream(file);
      // /dev/stdin (or /dev/fd/0) where standard input is /dev/null: told as `-` is.
      if (bytes.length === 0 && STDIN_ALIASES.has(resolve(file)) && isNullDevice(0)) throw problem(file, stdinNull(file));
      return { bytes, folder: currentFolder(file) };
    }
    // /dev/stdin (or /dev/fd/0) given a file (`taskq run /dev/stdin < ci.yaml`) is a file too, in /dev or /proc: as for `-`, tasks start in the current folder.
    return isDeviceAlias(file) ? { bytes: readFileSync(file), folder: currentFolder(file) } : { bytes: readFileSync(file) };
  } catch (error) {
    if (error instanceof WorkflowError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? "";
    // Standard input that is a folder (`taskq run - < dir`): said as for a path.
    if (code === "EISDIR") throw problem(nameOf(file), "cannot read file: it is a directory", error);
    // The system's words, not Node's message, which repeats the code and adds the call (`ELOOP: ..., stat 'f'`).
    const detail = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : (systemWords(error) ?? (error as Error).message);
    const meant = code === "ENOENT" && file !== STDIN ? fileMeant(file) : "";
    // Words first, the code after, as every other error of a file or folder says it: "no such file (ENOENT)".
    throw problem(nameOf(file), `cannot read file: ${code ? `${detail} (${code})` : detail}${meant}`, error);
  }
}

/**
 * For a workflow file that is not there, the one meant: `; did you mean ci.yml?` where its
 * folder holds a YAML file named almost so (ci.yml for ci.yaml, Pipeline.yaml for
 * pipeline.yaml), or that its folder is not there either.
 */
function fileMeant(file: string): string {
  const folder = dirname(file);
  let names: string[];
  try {
    names = yamlFilesIn(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return "";
    // `taskq run "~/ci.yaml"`, or a CI variable holding it: no shell expanded the ~, and taskq does not.
    if (file.startsWith("~/")) return `; its folder, ${folder}, does not exist either: a ~ no shell expanded (quoted, or from a variable) is not the home folder; give its path, ${join(homedir(), file.slice(2))}`;
    return `; its folder, ${folder}, does not exist either`;
  }
  const written = basename(file);
  // ci.yaml and ci.yml are the same name to whoever wrote one for the other.
  const stem = (name: string): string => name.replace(/\.ya?ml$/i, "");
  const byStem = new Map(names.map((name) => [stem(name), name]));
  const meant = names.find((name) => stem(name) === stem(written)) ?? byStem.get(closestMatch(stem(written), byStem.keys()) ?? "");
  if (meant === undefined) return "";
  return `; did you mean ${folder !== "." ? join(folder, meant) : file.startsWith("./") ? `./${meant}` : meant}?`;
}

/** The names of the YAML files (.yaml, .yml) in `folder`, sorted. */
function yamlFilesIn(folder: string): string[] {
  return readdirSync(folder)
    .filter((name) => /\.ya?ml$/i.test(name))
    .sort();
}

/** For a folder given as the workflow file (`taskq run workflows/`): the YAML files in it to give instead, the first three. */
function filesIn(folder: string): string {
  let names: string[];
  try {
    names = yamlFilesIn(folder);
  } catch {
    return "";
  }
  if (names.length === 0) return "; give a workflow file, not a folder";
  const shown = names.slice(0, 3).map((name) => join(folder, name));
  return `; give one of its workflow files: ${shown.join(", ")}${names.length > shown.length ? ` (and ${names.length - shown.length} more)` : ""}`;
}

/**
 * The current folder, where the tasks of a workflow read from a pipe start. One that was
 * deleted (process.cwd() throws ENOENT) is said to be gone: the file itself was there, and
 * "cannot read file: no such file (ENOENT)" would send the user looking for it.
 */
function currentFolder(file: string): string {
  try {
    return process.cwd();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw problem(nameOf(file), `the current folder no longer exists (${code}): the tasks of a workflow read from stdin or a pipe start there`, error);
  }
}

/**
 * Standard input that is /dev/null: a CI step's, a service's, or one closed (`<&-`), which
 * Node opens as /dev/null. "file is empty" would send the user to a file that is not there.
 */
function stdinNull(given: string): string {
  return `standard input is /dev/null (or was closed): there is no workflow to read; redirect one in (\`${given} < ci.yaml\`), or give the file's path instead of ${given}`;
}

/** The paths of standard input itself, as a workflow file's (see stdinNull). */
const STDIN_ALIASES = new Set(["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]);

function isNullDevice(fd: number): boolean {
  try {
    const info = fstatSync(fd);
    return info.isCharacterDevice() && info.rdev === statSync("/dev/null").rdev;
  } catch {
    return false;
  }
}

/** A path in /dev or /proc (/dev/stdin, /dev/fd/3, /proc/self/fd/0): another file's stand-in, whose folder means nothing to tasks. */
function isDeviceAlias(file: string): boolean {
  const absolute = resolve(file);
  return absolute.startsWith("/dev/") || absolute.startsWith("/proc/");
}

/**
 * A pipe or device (`<(generate)`, /dev/stdin, `-`) has no size to check first: read it up
 * to the limit and no further, so /dev/zero is refused instead of read until memory runs out.
 */
function readStream(file: string | 0): Buffer {
  const fd = file === 0 ? 0 : openSync(file, "r");
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(65_536);
      const bytes = readWaiting(fd, chunk);
      if (bytes === 0) return Buffer.concat(chunks, total);
      chunks.push(chunk.subarray(0, bytes));
      total += bytes;
      if (total > MAX_FILE_BYTES) throw problem(nameOf(file === 0 ? STDIN : file), `the file is larger than the limit of ${MAX_FILE_BYTES.toLocaleString("en-US")} bytes (64 MiB)`);
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

/** readSync that waits on a descriptor left non-blocking (stdin can be): EAGAIN means "not yet". */
function readWaiting(fd: number, buffer: Buffer): number {
  for (;;) {
    try {
      return readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}


function problem(file: string, message: string, cause?: unknown): WorkflowError {
  return new WorkflowError([{ file, line: 1, col: 1, message }], cause === undefined ? {} : { cause });
}
