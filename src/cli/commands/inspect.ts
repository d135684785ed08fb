import { noteFields } from "../note-fields.js";
import { printedProblems, problemCount } from "../problem-count.js";
import { TaskqError } from "../../errors.js";
import { noteTerminalInput, stdinGivenTwice, workflowFileArgument } from "../flags.js";
import { oneLine } from "../one-line.js";
import { toJson } from "../to-json.js";
import { escapeControls, escapeControlsInLines } from "../../escape-controls.js";
import type { Workflow } from "../../loaders/index.js";

async function load(file: string): Promise<Workflow> {
  // Not through loaders/index.js, which loads yaml at once: see loadWorkflow.
  const { loadWorkflow } = await import("../../loaders/load-workflow.js");
  noteTerminalInput(workflowFileArgument(file));
  return loadWorkflow(file);
}

/**
 * `taskq validate FILE...`: exit 0 and a one-line verdict, or the problems and exit 2. With
 * `--output json`, one record for the verdict (`valid`, or `invalid` with each problem: see
 * main.ts) and one per note, as `run --output json` writes them. Several files (a CI's
 * `taskq validate workflows/*.yaml`) are each checked and each given its verdict, and the
 * command fails if any has problems.
 */
export async function validateCommand(files: string[], json = false): Promise<number> {
  // One file fails as every command does: its problems are the error (see main.ts).
  if (files.length === 1) return validateOne(await load(files[0]!), json);
  // Standard input read twice is empty the second time.
  stdinGivenTwice(files);
  let failed = 0;
  let exitCode = 0;
  for (const file of files) {
    try {
      validateOne(await load(file), json);
    } catch (error) {
      if (!(error instanceof TaskqError)) throw error;
      failed++;
      exitCode = Math.max(exitCode, error.exitCode ?? 1);
      reportInvalid(file, error, json);
    }
  }
  if (failed > 0) process.stderr.write(`${failed} of ${files.length} files ${failed === 1 ? "has" : "have"} problems\n`);
  return exitCode;
}

/** One file's verdict when it is valid, on stdout: `FILE: ok, N tasks` and its notes, or their JSON records. */
function validateOne(workflow: Workflow, json: boolean): number {
  if (json) {
    const ts = new Date().toISOString();
    const records = [{ ts, event: "valid", file: workflow.file, tasks: workflow.tasks.length }, ...workflow.notes.map((message) => ({ ts, event: "note", ...noteFields(message, workflow.file) }))];
    process.stdout.write(records.map((record) => `${toJson(record)}\n`).join(""));
    return 0;
  }
  // The file's name escaped, as the errors and notes that name it show it (`ci\n.yaml`).
  const lines = [`${escapeControls(workflow.file)}: ok, ${workflow.tasks.length} task${workflow.tasks.length === 1 ? "" : "s"}`];
  // Through oneLine, as list's commands: a note may quote the file (a cwd's folder, written out).
  for (const note of workflow.notes) lines.push(`note: ${oneLine(note)}`);
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/**
 * One file's verdict among several when it is not valid: its problems at file:line:col and how
 * many on stderr (with `--output json`, an `invalid` record naming the file, or an `error` one,
 * on stdout too), as one file's error is said, but going on to the next file.
 */
function reportInvalid(file: string, error: TaskqError, json: boolean): void {
  const problems = (error as { problems?: unknown[] }).problems;
  const shown = file === "-" ? "<stdin>" : file;
  // An empty name shown as one: "taskq: : an empty file name" read as a slip of taskq's.
  const name = shown === "" ? "''" : escapeControls(shown);
  if (json) {
    const exitCode = error.exitCode ?? 1;
    const record = Array.isArray(problems) ? { event: "invalid", file: shown, code: error.code, exitCode, problems } : { event: "error", file: shown, code: error.code, exitCode, message: error.message };
    process.stdout.write(`${toJson({ ts: new Date().toISOString(), ...record })}\n`);
  }
  // As main.ts says one file's: the names the message gives of files and folders written out.
  if (Array.isArray(problems)) process.stderr.write(`${escapeControlsInLines(printedProblems(error.message, problems))}\n${name}: ${problemCount(problems)}\n`);
  else process.stderr.write(`taskq: ${name}: ${escapeControlsInLines(error.message)}\n`);
}

/**
 * The notes validate gives a workflow (a line break YAML keeps in a > block, a past runAt), on stderr, as
 * `note: ...` lines: list's and graph's stdout is their table or graph alone, for a program to read.
 */
function writeNotes(workflow: Workflow): void {
  if (workflow.notes.length > 0) process.stderr.write(workflow.notes.map((note) => `note: ${oneLine(note)}\n`).join(""));
}

/** `taskq list FILE`: the tasks in topological order, tab-separated; the notes on stderr. */
export async function listCommand(file: string): Promise<number> {
  const workflow = await load(file);
  writeNotes(workflow);
  const lines = ["ID\tPRIORITY\tRETRIES\tDEPENDS ON\tRUN"];
  for (const task of workflow.tasks) {
    lines.push([task.id, task.priority, task.retries, task.dependsOn.join(",") || "-", oneLine(task.run)].join("\t"));
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** `taskq graph FILE`: Mermaid (default) or Graphviz dot; the notes on stderr. */
export async function graphCommand(file: string, format: "mermaid" | "dot"): Promise<number> {
  const workflow = await load(file);
  writeNotes(workflow);
  // JSON's quoting writes out C0 controls (`\u001b`); escapeControls the rest a terminal obeys too (C1 controls,
  // line separators, bidirectional overrides: the workflow's name may hold them), the same way, as list does.
  const quote = (id: string): string => escapeControls(JSON.stringify(id));
  const lines: string[] = [];
  if (format === "dot") {
    lines.push(`digraph ${quote(workflow.name ?? "workflow")} {`, "  rankdir=LR;");
    for (const task of workflow.tasks) {
      lines.push(`  ${quote(task.id)};`);
      for (const dependency of task.dependsOn) lines.push(`  ${quote(dependency)} -> ${quote(task.id)};`);
    }
    lines.push("}");
  } else {
    // Mermaid node ids must be simple: number the tasks, label them with their ids.
    const index = new Map(workflow.tasks.map((task, i) => [task.id, `t${i}`]));
    lines.push("graph LR");
    for (const task of workflow.tasks) lines.push(`  ${index.get(task.id)}[${quote(task.id)}]`);
    for (const task of workflow.tasks) {
      for (const dependency of task.dependsOn) lines.push(`  ${index.get(dependency)} --> ${index.get(task.id)}`);
    }
  }
  const text = `${lines.join("\n")}\n`;
  if (format === "mermaid") writeMermaidLimitNotes(text, workflow.tasks.reduce((edges, task) => edges + task.dependsOn.length, 0));
  process.stdout.write(text);
  return 0;
}

/** Mermaid's defaults for `maxEdges` and `maxTextSize`, among the settings a diagram cannot change itself (its `secure` ones). */
const MERMAID_MAX_EDGES = 500;
const MERMAID_MAX_TEXT_SIZE = 50_000;

/**
 * A graph past Mermaid's default limits is not drawn where Mermaid runs with its defaults (mermaid-cli, a page that renders
 * a Markdown file's diagrams): an error takes its place (`Too many edges`, `Maximum text size in diagram exceeded`). Said
 * on stderr, as the notes are, with the format that has no such limit.
 */
function writeMermaidLimitNotes(text: string, edges: number): void {
  const count = (n: number): string => n.toLocaleString("en-US");
  const has: string[] = [];
  const most: string[] = [];
  if (edges > MERMAID_MAX_EDGES) {
    has.push(`${count(edges)} edges`);
    most.push(`draws at most ${MERMAID_MAX_EDGES} edges (maxEdges)`);
  }
  if (text.length > MERMAID_MAX_TEXT_SIZE) {
    has.push(`${count(text.length)} characters`);
    most.push(`reads at most ${count(MERMAID_MAX_TEXT_SIZE)} characters (maxTextSize)`);
  }
  if (has.length === 0) return;
  process.stderr.write(
    `note: this graph has ${has.join(" and ")}, and Mermaid ${most.join(" and ")} with its default settings, which a diagram cannot change itself: drawn so, it shows an error instead; --format dot gives Graphviz, which has no such limit\n`,
  );
}

/** `taskq schema`: the JSON Schema of workflow files. */
export async function schemaCommand(): Promise<number> {
  const { workflowJsonSchema } = await import("../../loaders/json-schema.js");
  process.stdout.write(`${JSON.stringify(workflowJsonSchema(), null, 2)}\n`);
  return 0;
}

