import { dirname, resolve } from "node:path";
import { buildTask, noteDefaultsNothingToRetry, noteEnvVariables, noteAt, notesOf, type BuildContext, type Workflow } from "./build-workflow.js";
import { findTaskPastLimit, lineColumnOf, tooManyTasksMessage } from "./count-tasks.js";
import { crOnlyLineEnding, decodeText } from "./decode-text.js";
import { orderTasks, type DependencyInput } from "./dependency-graph.js";
import { MAX_FILE_BYTES } from "./limits.js";
import type { SourceLocator } from "./locator.js";
import { ProblemList, TextLines } from "./problem-list.js";
import { quote } from "./report-issues.js";
import { readSimpleYaml, readSimpleYamlWithPlaces } from "./simple-yaml.js";
import { validateFile, type WellFormedDependencies } from "./validate.js";
import { WorkflowError } from "./workflow-error.js";
/**
 * The fast reader's path to a workflow (simple-yaml.ts), and what both paths build a workflow
 * with once the file is plain data: nothing here loads yaml, which only a file the fast reader
 * declines needs (see parse-workflow.ts and loadWorkflow).
 */

/** Options for parsing; `now` (epoch ms) resolves `delay` and judges `runAt`. */
export interface ParseOptions {
  now?: number;
  /** Where a task's `cwd` is resolved from; by default the workflow file's folder. */
  folder?: string;
  /** false: go straight to yaml, as when the fast reader has already declined this text. */
  simple?: boolean;
  /** Note each task's `cwd` that is not a folder now (see noteMissingCwd); loadWorkflow's default. */
  checkCwd?: boolean;
  /** Note a `set -o pipefail` or a bash-only construct in a run that this machine's /bin/sh refuses (see notePipefail, noteBashism); loadWorkflow's default. */
  checkShell?: boolean;
}

/** The message for a file over MAX_FILE_BYTES. */
export function tooLargeMessage(bytes: number): string {
  return `the file is ${bytes.toLocaleString("en-US")} bytes; the limit is ${MAX_FILE_BYTES.toLocaleString("en-US")} bytes (64 MiB)`;
}

/**
 * The workflow, when parseWorkflow would get it from the fast reader: the same checks before
 * it, in the same order; or the WorkflowError it would throw from there (a file over the task
 * limit, a simple file with problems). Undefined whenever parseWorkflow would read the file
 * with yaml: parseWorkflow, given `simple: false`, then says what it would have said.
 */
export function parseIfSimple(text: string | Buffer, file: string, options: ParseOptions = {}): Workflow | undefined {
  if (options.simple === false || text.length > MAX_FILE_BYTES) return undefined;
  const decoded = decodeText(text);
  if (!decoded.ok || crOnlyLineEnding(decoded.text) !== undefined) return undefined;
  refuseTooManyTasks(decoded.text, file);
  return simpleWorkflow(decoded.text, sourceOf(file, options));
}

/**
 * The workflow, if the fast reader (simple-yaml.ts) reads the text, with its notes; a
 * WorkflowError with every problem, at its place, if it has any; undefined when the reader
 * declines the text, and parseWorkflow (with `simple: false`) gives the workflow or every
 * problem. Cheap in memory: no YAML document is built. A file found over the task limit
 * before reading is refused here already, with the WorkflowError parseWorkflow would throw.
 */
export function parseSimpleWorkflow(text: string | Buffer, file: string, options: ParseOptions = {}): Workflow | undefined {
  if (text.length > MAX_FILE_BYTES) return undefined;
  const decoded = decodeText(text);
  if (!decoded.ok) return undefined;
  refuseTooManyTasks(decoded.text, file);
  return simpleWorkflow(decoded.text, sourceOf(file, options));
}

/** Throws at the task past MAX_TASKS when a cheap count finds one, before any reader runs (see count-tasks.ts). */
export function refuseTooManyTasks(text: string, file: string): void {
  const past = findTaskPastLimit(text);
  if (past === undefined) return;
  const { line, col } = lineColumnOf(text, past.offset);
  throw new WorkflowError([{ file, line, col, message: tooManyTasksMessage(past.id) }]);
}

/** What a workflow is built with besides its data: its file's name (for messages), the time, where `cwd`s start and whether to look at them. */
export interface Source {
  file: string;
  now: number;
  folder: string;
  checkCwd: boolean;
  checkShell: boolean;
}

export function sourceOf(file: string, options: ParseOptions): Source {
  return { file, now: options.now ?? Date.now(), folder: options.folder ?? dirname(resolve(file)), checkCwd: options.checkCwd === true, checkShell: options.checkShell === true };
}

/**
 * The workflow, if the fast reader reads the text; undefined when it declines it (yaml then
 * reads it). A file with something to report (a problem, or a note such as a runAt in the
 * past) is read again, keeping where each value is, and built with those places: its problems
 * are thrown, and its notes given, at the positions yaml's tree would give (the loader's tests
 * hold the two to it). yaml is not needed for them: its tree of a 60 MB file took over 4 GB,
 * and taskq ran out of memory telling of one unknown key.
 */
export function simpleWorkflow(text: string, source: Source): Workflow | undefined {
  const data = readSimpleYaml(text);
  if (data === undefined) return undefined;
  const workflow = buildFromSimple(data, source);
  if (workflow !== undefined) return workflow;
  const placed = readSimpleYamlWithPlaces(text);
  if (placed === undefined) return undefined;
  return buildWorkflow(placed.data, { ...source, locator: placed.locator, problems: new ProblemList(source.file, new TextLines(text), text.length) });
}

/** Thrown by the simple path's locator: the file has something to report, which needs positions. */
const NEEDS_POSITIONS = new Error("the file has something to report");
const noPositions: SourceLocator = {
  offsetOf(): never {
    throw NEEDS_POSITIONS;
  },
  endsAtComment(): never {
    throw NEEDS_POSITIONS;
  },
  commentInsteadOf(): never {
    throw NEEDS_POSITIONS;
  },
  textAt(): never {
    throw NEEDS_POSITIONS;
  },
  plainSourceOf(): never {
    throw NEEDS_POSITIONS;
  },
  // The fast reader reads no value whose lines YAML folds: nothing to say, and no positions needed.
  foldedSourceOf(): undefined {
    return undefined;
  },
};

/**
 * The workflow from readSimpleYaml's data, or undefined when it has anything to
 * report (a problem, or a note such as a runAt in the past): simpleWorkflow then
 * reads the file again, keeping the positions every message needs.
 */
function buildFromSimple(data: unknown, source: Source): Workflow | undefined {
  const problems = new ProblemList(source.file);
  try {
    const workflow = buildWorkflow(data, { ...source, locator: noPositions, problems });
    return problems.size === 0 ? workflow : undefined;
  } catch (error) {
    if (error === NEEDS_POSITIONS || error instanceof WorkflowError) return undefined;
    throw error;
  }
}

/** Validates plain data, orders the tasks and builds them; throws a WorkflowError listing every problem. */
export function buildWorkflow(data: unknown, source: Source & { locator: SourceLocator; problems: ProblemList }): Workflow {
  const { file, now, folder, checkCwd, checkShell, locator, problems } = source;
  const validated = validateFile(data, locator, problems);
  if (validated === undefined) throw new WorkflowError(problems.problems);
  // A dependency listed twice counts once, and is noted: likely a slip for another id.
  const repeats = new Map<number, Array<{ index: number; id: string }>>();
  const inputs: DependencyInput[] = validated.tasks.map(({ id, dependsOn }, task) => ({
    id,
    dependsOn: dependencyList(dependsOn, (index, dependency) => {
      const list = repeats.get(task) ?? [];
      list.push({ index, id: dependency });
      repeats.set(task, list);
    }),
  }));
  const order = orderTasks(inputs, locator, problems);
  const { header } = validated;
  const context: BuildContext = { file, now, folder, env: header?.env ?? {}, defaults: header?.defaults ?? validated.partialDefaults ?? {}, locator, problems, notes: new Map() };
  if (problems.size > 0 || header === undefined) {
    // What only building finds (a runAt too far ahead, a backslash YAML folds away, a backoff
    // bound against defaults'), looked for in every task the schema passed all the same, so
    // that every problem shows at once; with defaults that have problems, against those of its fields valid alone.
    for (const [index, { id, task }] of validated.tasks.entries()) {
      if (task !== undefined) buildTask(id, task, inputs[index]!.dependsOn.map((dependency) => dependency.id), context);
    }
    throw new WorkflowError(problems.problems);
  }
  if (checkCwd) context.cwdProblems = new Map();
  if (checkShell) context.checkShell = true;
  if (header.env !== undefined) noteEnvVariables(header.env, ["env"], "env", context);
  if (header.defaults?.env !== undefined) noteEnvVariables(header.defaults.env, ["defaults", "env"], "defaults", context);
  const valid = validated.tasks.map(({ id, task }) => {
    // Every task is valid here: one that was not left a problem, and we threw above.
    if (task === undefined) throw new Error(`task ${id} was not validated`);
    return { id, task };
  });
  // Before any task is built: on the fast reader's path, a note there sends the file to be read with positions now.
  const noteDefaults = noteDefaultsNothingToRetry(valid, context);
  const tasks = order.map((index) => {
    const { id, task } = valid[index]!;
    for (const repeat of repeats.get(index) ?? []) {
      noteAt(id, ["tasks", id, "dependsOn", repeat.index], `dependsOn lists ${quote(repeat.id)} more than once; it counts once`, context);
    }
    return buildTask(id, task, inputs[index]!.dependsOn.map((dependency) => dependency.id), context);
  });
  noteDefaults();
  if (problems.size > 0) throw new WorkflowError(problems.problems); // a backoff whose bounds come from both defaults and the task
  // In the file's order, as problems are: the tasks were built in start order, and defaults' notes as each task took them.
  const { notes, taskNotes } = notesOf(context, validated.tasks.map(({ id }) => id));
  const workflow: Workflow = { file, folder, tasks, notes };
  if (taskNotes.length > 0) workflow.taskNotes = taskNotes;
  if (header.name !== undefined) workflow.name = header.name;
  if (header.concurrency !== undefined) workflow.concurrency = header.concurrency;
  if (header.failFast !== undefined) workflow.failFast = header.failFast;
  return workflow;
}

/**
 * `dependsOn` as a list without repeats or items that are not ids, each entry keeping its index
 * in the file for error positions (and those of its repeats); `repeated` is told of each repeat (its index, the id).
 */
function dependencyList(dependsOn: WellFormedDependencies, repeated: (index: number, id: string) => void): DependencyInput["dependsOn"] {
  if (dependsOn === undefined) return [];
  if (typeof dependsOn === "string") return [{ id: dependsOn, index: undefined }];
  const seen = new Map<string, DependencyInput["dependsOn"][number]>();
  const list: DependencyInput["dependsOn"] = [];
  for (const [index, id] of dependsOn.entries()) {
    if (id === undefined) continue;
    const first = seen.get(id);
    if (first !== undefined) {
      repeated(index, id);
      (first.repeats ??= []).push(index);
      continue;
    }
    const entry = { id, index };
    seen.set(id, entry);
    list.push(entry);
  }
  return list;
}
