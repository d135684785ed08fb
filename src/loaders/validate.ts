import type * as z from "zod/mini";

/** An issue as zod reports it. */
type Issue = z.core.$ZodIssue;
import { tooManyTasksMessage } from "./count-tasks.js";
import { MAX_TASKS } from "./limits.js";
import type { FoldedSource } from "./folded-run.js";
import type { DataPath, SourceLocator } from "./locator.js";
import type { ProblemList } from "./problem-list.js";
import { describeValue, fullWidthColonWords, invisibleInKey, keyMeant, noBreakSpaceInKey, quote, reportIssues, slashCommentWords, topKeyAsTask } from "./report-issues.js";
import { defaultsSchema, dependencyItemSchema, taskSchema, workflowHeaderSchema, type TaskDefaults, type TaskFile } from "./schema.js";
import { isTaskId, TASK_ID_EXPECTED } from "../task-id.js";

/** The validated file: header fields, and tasks in file order. */
export interface ValidatedFile {
  /** Undefined when the header has problems (already reported). */
  header: z.output<typeof workflowHeaderSchema> | undefined;
  /**
   * Where the header has problems: the fields of `defaults` each valid on its own, so that what a task's fields are checked
   * against (its backoff's bounds against those of defaults, say) is still checked, and every problem shows at once.
   */
  partialDefaults?: TaskDefaults;
  /**
   * Every task in file order; `task` is undefined when it has problems, but
   * its `dependsOn` (what of it is well-formed) still feeds the dependency checks.
   */
  tasks: Array<{ id: string; task: TaskFile | undefined; dependsOn: WellFormedDependencies }>;
}

/** `dependsOn` as validated: one id, or a list with undefined at each item that is not an id (already reported), so the others keep their index. */
export type WellFormedDependencies = string | Array<string | undefined> | undefined;

/** What a file with no content is told; one with comments alone, that it has those only. */
const EMPTY_FILE = "file is empty; a workflow needs a `tasks` mapping";
const ONLY_COMMENTS = "file has only comments; a workflow needs a `tasks` mapping";

const parseOptions = { reportInput: true } as const;
const dependsOnSchema = taskSchema.shape.dependsOn;

/** Checks the plain data against the schema, one task at a time (zod records would drop a `__proto__` id). */
export function validateFile(data: unknown, locator: SourceLocator, problems: ProblemList): ValidatedFile | undefined {
  if (data === null || data === undefined) {
    const held = heldText(locator.textAt(0, Infinity));
    // A file of `~` or `null` alone is not empty: told as any other top level that is not a mapping, at the value.
    if (held === "value") problems.atOffset(locator.offsetOf([]), `the top level must be a mapping with a \`tasks\` key, got ${describeValue(data, true)}`);
    else problems.at(1, 1, held === "comments" ? ONLY_COMMENTS : EMPTY_FILE);
    return undefined;
  }
  if (typeof data !== "object" || Array.isArray(data) || data instanceof Map || isTaggedValue(data)) {
    // After a tag told as not fitting (`!!map` alone: read as an empty string), not told again.
    problems.followOn(locator.offsetOf([]), `the top level must be a mapping with a \`tasks\` key, got ${describeValue(data, true)}${listedTopHint(data)}`);
    return undefined;
  }
  const { tasks, ...fields } = withoutExtensions(data as Record<string, unknown>);
  if (isTaggedValue(fields.defaults)) {
    problems.atOffset(locator.offsetOf(["defaults"]), `\`defaults\` must be a mapping of task fields, got ${describeValue(fields.defaults, true)}`);
    delete fields.defaults;
  }
  const rest = isRecord(fields.defaults) ? { ...fields, defaults: withoutExtensions(fields.defaults) } : fields;
  const defaultsBackoff = isRecord(rest.defaults) ? taggedBackoff(rest.defaults, ["defaults"]) : [];
  const parsedHeader = workflowHeaderSchema.safeParse(defaultsBackoff.length === 0 ? rest : { ...rest, defaults: { ...(rest.defaults as object), backoff: undefined } }, parseOptions);
  const header = defaultsBackoff.length === 0 && parsedHeader.success ? parsedHeader.data : undefined;
  let partialDefaults: TaskDefaults | undefined;
  if (header === undefined) {
    reportIssues([...defaultsBackoff, ...(parsedHeader.error?.issues ?? [])], [], locator, problems);
    if (isRecord(rest.defaults)) reportRunAtWithDelay(rest.defaults, ["defaults"], locator, problems);
    if (isRecord(rest.defaults) && defaultsBackoff.length === 0) partialDefaults = validFields(rest.defaults);
  }
  // `taks:`: told once, as the unknown key with the one meant (as `rn` in a task is), not also as `tasks` missing.
  // Nor where a JSONC comment ran into the `tasks` key (`// ci` above `"tasks": {`, read as one key): told as that key.
  const tasksMeant = tasks === undefined && Object.keys(fields).some((key) => keyMeant([], key) === "tasks" || /^\/[/*][^]*"tasks"$/.test(key));
  // Nor where tasks are written at the top level (`build:` with its `run`): each is told to go under `tasks:`, which says it.
  const tasksAbove = tasks === undefined && Object.entries(fields).some(([key, value]) => topKeyAsTask(key, value, locator));
  const entries = tasksMeant || tasksAbove ? [] : taskEntries(tasks, locator, problems);
  const valid: ValidatedFile["tasks"] = [];
  /** The last task not read from a misplaced field: the one those fields were meant for. */
  let above: string | undefined;
  /** Each id in lower case, and the first id written so: a later one differing only in case is refused (see sameLogIn). Only where an id has an upper-case letter. */
  const byCase = entries.some(([id]) => /[A-Z]/.test(id)) ? new Map<string, string>() : undefined;
  /** The fields written at a task id's indentation below a task left empty (`build:` then `run: make`): told as one problem, at the first. */
  let misplaced: { task: string; fields: string[] } | undefined;
  for (const [index, [id, raw]] of entries.entries()) {
    if (byCase !== undefined && isTaskId(id)) sameLogIn(id, byCase, locator, problems);
    if (!isTaskId(id)) {
      const shown = quote(id);
      const offset = locator.offsetOf(["tasks", id], "key");
      const noBreak = noBreakSpaceInKey(id, offset, problems, locator);
      // `// the build` before a task's id in a JSON file: read as the id's text.
      const slashes = /^\/[/*]/.test(id) ? `; ${slashCommentWords(id.slice(0, 2), problems.json)}` : "";
      problems.atOffset(offset, `invalid task id ${shown}: ${TASK_ID_EXPECTED}${noBreak}${slashes}${invisibleInKey(id, offset, problems, locator)}`);
      // A line indented with a no-break space (`  \u00a0 retries: 1`) is read as a task: what its value lacks as one follows from that.
      if (noBreak !== "") {
        valid.push({ id, task: undefined, dependsOn: undefined });
        continue;
      }
    }
    if (!isRecord(raw) && Object.hasOwn(taskSchema.shape, id) && misplaced?.fields.includes(id)) {
      if (misplaced.fields[0] === id) problems.atOffset(locator.offsetOf(["tasks", id], "key"), misplacedFieldsMessage(misplaced.task, misplaced.fields));
      valid.push({ id, task: undefined, dependsOn: undefined });
      continue;
    }
    misplaced = undefined;
    // `build:` left empty, then its fields at its own indentation: one mistake, the fields' indentation, not also an empty task.
    const below = raw === null && isTaskId(id) && !Object.hasOwn(taskSchema.shape, id) ? misplacedFieldsAfter(entries, index) : [];
    if (below.length > 0) {
      misplaced = { task: id, fields: below };
      above = id;
      valid.push({ id, task: undefined, dependsOn: undefined });
      continue;
    }
    if (!isRecord(raw) && Object.hasOwn(taskSchema.shape, id)) {
      // `run: make` at a task id's indentation (under `build:`, whose fields it was meant to be) is read as a task named run.
      const fix = above === undefined ? "write the task's id above it (build:), and indent its fields under that" : `indent it under ${quote(above)}, as that task's other fields`;
      problems.atOffset(locator.offsetOf(["tasks", id], "key"), `${notATask(id, raw)}; ${id} is a task's field, written here as a task id: ${fix}`);
      valid.push({ id, task: undefined, dependsOn: undefined });
      continue;
    }
    above = id;
    const glued = typeof raw === "string" ? GLUED_FIELD.exec(raw) : null;
    if (glued !== null && Object.hasOwn(taskSchema.shape, glued[1]!)) {
      problems.atOffset(locator.offsetOf(["tasks", id]), `${notATask(id, raw)}; a key's colon must be followed by a space${gluedFix(glued, locator.foldedSourceOf(["tasks", id]))}`);
      valid.push({ id, task: undefined, dependsOn: undefined });
      continue;
    }
    // `run\uff1a make`, a field's full-width colon (a CJK input method's), read as the task's one string.
    // Written as a list's item too (`- retries\uff1a 2`), read as a list of that text.
    const fullWidth = typeof raw === "string" ? FULL_WIDTH_FIELD.exec(raw) : Array.isArray(raw) && typeof raw[0] === "string" ? FULL_WIDTH_FIELD.exec(raw[0]) : null;
    if (fullWidth !== null && Object.hasOwn(taskSchema.shape, fullWidth[1]!)) {
      problems.atOffset(locator.offsetOf(["tasks", id]), `${notATask(id, raw)}; ${fullWidthColonWords(fullWidth[1]!)}`);
      valid.push({ id, task: undefined, dependsOn: undefined });
      continue;
    }
    if (isTaggedValue(raw)) {
      problems.atOffset(locator.offsetOf(["tasks", id]), notATask(id, raw));
      valid.push({ id, task: undefined, dependsOn: undefined });
      continue;
    }
    const backoff = isRecord(raw) ? taggedBackoff(raw, []) : [];
    // Without it, the task's other fields are checked (a Buffer's methods are no keys of backoff's to tell).
    const result = taskSchema.safeParse(isRecord(raw) ? withoutExtensions(backoff.length === 0 ? raw : { ...raw, backoff: undefined }) : raw, parseOptions);
    if (result.success && backoff.length === 0) {
      valid.push({ id, task: result.data, dependsOn: result.data.dependsOn });
      continue;
    }
    reportIssues([...backoff, ...(result.error?.issues ?? [])], ["tasks", id], locator, problems);
    if (isRecord(raw)) reportRunAtWithDelay(raw, ["tasks", id], locator, problems);
    valid.push({ id, task: undefined, dependsOn: wellFormedDependencies(isRecord(raw) ? raw.dependsOn : undefined) });
  }
  return partialDefaults === undefined ? { header, tasks: valid } : { header, tasks: valid, partialDefaults };
}

/** The task's fields (not mappings, which may be tasks so named) right after the entry at `index`, as ids: where a task left empty meant them as its own. */
function misplacedFieldsAfter(entries: ReadonlyArray<[string, unknown]>, index: number): string[] {
  const fields: string[] = [];
  for (const [id, raw] of entries.slice(index + 1)) {
    if (isRecord(raw) || !Object.hasOwn(taskSchema.shape, id) || fields.includes(id)) break;
    fields.push(id);
  }
  return fields;
}

/** What a task left empty with its fields below it at its own indentation is told, at the first field. */
function misplacedFieldsMessage(task: string, fields: string[]): string {
  const named = fields.length === 1 ? fields[0]! : `${fields.slice(0, -1).join(", ")} and ${fields.at(-1)!}`;
  const read = fields.length === 1 ? `a task's field, is at a task id's indentation, so it is read as a task named ${quote(fields[0]!)}` : "a task's fields, are at a task id's indentation, so each is read as a task of that name";
  return `task ${quote(task)} is left empty, and ${named} below it, ${read}: indent ${fields.length === 1 ? named : "them"} under ${quote(task)}, further than its id`;
}

/**
 * `Build:` and `build:`: two ids that differ only in case. Each task logs to `<run>/<id>.log`,
 * and on a file system that ignores case (macOS's and Windows' by default) those are one file,
 * appended to by both: each task's log, and the last lines a failure shows, would hold the
 * other's output too. The same file runs on Linux and on a Mac, so it is refused everywhere, at
 * the later id, naming the first, as a duplicate id is.
 */
function sameLogIn(id: string, byCase: Map<string, string>, locator: SourceLocator, problems: ProblemList): void {
  // Ids are ASCII (TASK_ID_PATTERN): lower case is how a file system that ignores case compares them.
  const folded = id.toLowerCase();
  const first = byCase.get(folded);
  if (first === undefined) {
    byCase.set(folded, id);
    return;
  }
  // The same id twice is a duplicate, told as one where the file is read.
  if (first === id) return;
  const at = problems.lineCol(locator.offsetOf(["tasks", first], "key"));
  problems.atOffset(
    locator.offsetOf(["tasks", id], "key"),
    `task id ${quote(id)} differs from ${quote(first)} (defined at ${at}) only in case: their logs, ${id}.log and ${first}.log, are one file on a file system that ignores case (macOS's and Windows' by default), where the two tasks' output would mix; rename one`,
  );
}

/** `- tasks:` (and its other keys, `- defaults:`), a top level written as a list's item: to drop the dash. Empty when it is not that. */
function listedTopHint(data: unknown): string {
  if (!Array.isArray(data) || !data.some((item) => isRecord(item) && Object.hasOwn(item, "tasks"))) return "";
  return `; remove the "- " before ${data.length === 1 ? "tasks" : "each item's keys"}: the top level is one mapping, not a list (tasks: { build: { run: ... } })`;
}

/**
 * `tasks:` written as a list of tasks that each name themselves (`- id: build`, as CI steps
 * are): the mapping meant, by the first few ids. Empty when it is not that.
 */
function listedTasksHint(tasks: unknown): string {
  if (!Array.isArray(tasks) || tasks.length === 0) return "";
  const keyed = listedIds(tasks);
  if (keyed !== undefined) {
    const shown = keyed.slice(0, 3).map((id) => `${id}: { run: ... }`);
    return `; remove the "- " before each task's id: a task is a key of \`tasks\`, not an item of a list (tasks: { ${shown.join(", ")}${keyed.length > shown.length ? ", ..." : ""} })`;
  }
  const ids = tasks.map((task) => (isRecord(task) ? (task.id ?? task.name) : undefined));
  if (ids.some((id) => typeof id !== "string" && typeof id !== "number")) return "";
  const hint = "; write each task under its id, with its fields indented below it";
  // A name no id can be (`Build step`) is not shown as one.
  if (!ids.every((id) => isTaskId(String(id)))) return `${hint} (tasks: { build: { run: ... } })`;
  const shown = ids.slice(0, 3).map((id) => `${String(id)}: { run: ... }`);
  return `${hint} (tasks: { ${shown.join(", ")}${ids.length > shown.length ? ", ..." : ""} })`;
}

/**
 * The ids of `tasks` written as a list of mappings keyed by id, as steps are: `- build:` with the task's fields below it,
 * `- build: make` (its command as the task), or one item holding several (`- build: {...}` then `test: {...}` below it).
 * Undefined where an item is not that: a key no id can be, a value no task is (a list, a number), or a string that is a
 * field's (`- run: make`, `- name: build`: a task written as a step, told apart by listedTasksHint).
 */
function listedIds(tasks: unknown[]): string[] | undefined {
  const ids: string[] = [];
  for (const task of tasks) {
    if (!isRecord(task) || Object.keys(task).length === 0) return undefined;
    for (const [key, value] of Object.entries(task)) {
      if (!isTaskId(key)) return undefined;
      if (typeof value === "string" ? STEP_FIELDS.has(key) || Object.hasOwn(taskSchema.shape, key) : !isRecord(value) && value !== null) return undefined;
      ids.push(key);
    }
  }
  return ids;
}

/** A step's fields that name it, as CI steps are written (`- name: build`): no task's ids. */
const STEP_FIELDS = new Set(["id", "name"]);

/** A task's field followed by a full-width colon (`run\uff1a make`), which YAML reads as the task's one string. */
const FULL_WIDTH_FIELD = /^([A-Za-z]+)\s*\uff1a/;

/** A task's field glued to its value (`run:make`), which YAML reads as the task's one string. */
const GLUED_FIELD = /^([A-Za-z]+):(\S.*)$/s;

/**
 * The fields meant by a task glued to its value: ` (run: make)`; for one over several lines (`run:make`, then
 * `retries:2` below it, which YAML joins into the one string "run:make retries:2"), each line's, not the first
 * line's field given the rest as its value.
 */
function gluedFix(glued: RegExpExecArray, folded: FoldedSource | undefined): string {
  const lines = folded === undefined || folded.block ? [] : folded.source.split("\n").map((line) => line.trim()).filter((line) => line !== "");
  // A line that is no field glued so (`run:echo` then `more`) goes on the value above it, as YAML reads it.
  const fields = lines.map((line) => {
    const field = GLUED_FIELD.exec(line);
    return field !== null && Object.hasOwn(taskSchema.shape, field[1]!) ? `${field[1]!}: ${field[2]!}` : undefined;
  });
  if (fields.filter((field) => field !== undefined).length < 2) return ` (${glued[1]!}: ${glued[2]!})`;
  const fixed: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (fields[index] !== undefined || fixed.length === 0) fixed.push(fields[index] ?? line);
    else fixed[fixed.length - 1] += ` ${line}`;
  }
  // "; " between them: a value may have ", " in it (`run:echo a, b`).
  return `, on each of its lines (${fixed.join("; ")})`;
}

/** What the schema says of a task that is not a mapping, for the cases told here with what to do. */
function notATask(id: string, raw: unknown): string {
  return `task ${quote(id)}: the task must be a mapping with at least \`run\`, got ${describeValue(raw, true)}`;
}

/**
 * The ids of a task's `dependsOn` that has problems, so the rest of it is checked all the same:
 * in `dependsOn: [a, ~, c]` the null is reported, and so is `c` if no task has that id.
 */
function wellFormedDependencies(dependsOn: unknown): WellFormedDependencies {
  if (!Array.isArray(dependsOn)) {
    const parsed = dependsOnSchema.safeParse(dependsOn);
    return parsed.success ? parsed.data : undefined;
  }
  return dependsOn.map((item) => {
    const parsed = dependencyItemSchema.safeParse(item);
    return parsed.success ? parsed.data : undefined;
  });
}

function taskEntries(tasks: unknown, locator: SourceLocator, problems: ProblemList): Array<[string, unknown]> {
  if (tasks === undefined) {
    problems.atOffset(locator.offsetOf([]), "`tasks` is missing; add a `tasks` mapping with at least one task");
    return [];
  }
  const entries = tasks instanceof Map ? [...(tasks as Map<string, unknown>)] : isRecord(tasks) && !isTaggedValue(tasks) ? Object.entries(tasks) : undefined;
  if (entries === undefined) {
    problems.followOn(locator.offsetOf(["tasks"]), `\`tasks\` must be a mapping of task id to task, got ${describeValue(tasks, true)}${listedTasksHint(tasks)}`);
    return [];
  }
  if (entries.length === 0) problems.followOn(locator.offsetOf(["tasks"]), "`tasks` is empty; define at least one task");
  // Counted before parsing too (scan-tokens.ts), where a `tasks` key written with escapes goes unseen.
  const past = entries[MAX_TASKS];
  if (past !== undefined) {
    problems.atOffset(locator.offsetOf(["tasks", past[0]], "key"), tooManyTasksMessage(past[0]));
    return [];
  }
  return entries;
}

/**
 * The schema checks `runAt` against `delay` only in an object that is otherwise valid: said
 * here too when the task (or `defaults`) has other problems, so every problem shows at once.
 * The same problem twice is shown once (ProblemList).
 */
function reportRunAtWithDelay(raw: Record<string, unknown>, path: DataPath, locator: SourceLocator, problems: ProblemList): void {
  if (raw.runAt === undefined || raw.delay === undefined) return;
  const owner = path[0] === "tasks" ? `task ${quote(String(path[1]))}: ` : "";
  problems.atOffset(locator.offsetOf([...path, "delay"]), `${owner}\`${path[0] === "tasks" ? "" : "defaults."}delay\` cannot be set together with \`runAt\`; keep one`);
}

/** Whether `key` is an extension field (`x-common: &common ...`), there to hold YAML anchors, as docker compose's are: taskq ignores it. */
export function isExtensionKey(key: string): boolean {
  return key.startsWith("x-");
}

/** `fields` without its extension fields (itself when it has none), keeping a null prototype. */
function withoutExtensions(fields: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(fields);
  if (!keys.some(isExtensionKey)) return fields;
  const kept: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of keys) if (!isExtensionKey(key)) kept[key] = fields[key];
  return kept;
}

/**
 * A `!!binary` (a Buffer) or `!!timestamp` (a Date) value: an object, but no mapping. Where a mapping is expected (the top
 * level, `tasks`, `defaults`, a task), it was read as one: a Buffer's bytes and methods each told as an unknown key or a task.
 */
/**
 * A `backoff` (at `path`: a task's, or `defaults`') that is a `!!timestamp` or `!!binary` value: the schema takes a Date, an
 * object with no keys of its own, for a mapping with neither field, and would run with the default backoff, unsaid. As the
 * schema's issue for a value that is no mapping, with the value, told as one where a mapping is meant.
 */
function taggedBackoff(fields: Record<string, unknown>, path: DataPath): Issue[] {
  if (!isTaggedValue(fields.backoff)) return [];
  return [{ code: "invalid_type", expected: "object", path: [...path, "backoff"], input: fields.backoff, message: "must be a mapping with `base` and/or `max`" }];
}

/** The fields of `defaults` each valid on its own (a task field's schema), the others left out: they are reported already. */
function validFields(defaults: Record<string, unknown>): TaskDefaults {
  const valid: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(defaults)) {
    const schema = Object.hasOwn(defaultsSchema.shape, key) ? defaultsSchema.shape[key as keyof typeof defaultsSchema.shape] : undefined;
    const parsed = schema?.safeParse(value);
    if (parsed?.success === true && parsed.data !== undefined) valid[key] = parsed.data;
  }
  return valid;
}

function isTaggedValue(value: unknown): boolean {
  return value instanceof Date || ArrayBuffer.isView(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What a file read as nothing holds: nothing, comments alone (a workflow commented out, a template's comments
 * left alone: said so, where "empty" would send its reader to look at an editor's buffer or the file's name), or
 * a null written (`~`, `null`). Line by line, so a file of millions of lines is read once.
 */
function heldText(text: string): "nothing" | "comments" | "value" {
  let comment = false;
  for (const line of text.replace(/^\uFEFF/, "").split("\n")) {
    const trimmed = line.trim();
    // A document's markers (`---`, `...`) around the comments hold no content either, nor a directive before them (`%YAML 1.2`),
    // which is all a line starting with % can be in a file read as nothing.
    if (trimmed === "" || trimmed === "---" || trimmed === "..." || line.startsWith("%")) continue;
    if (!trimmed.startsWith("#")) return "value";
    comment = true;
  }
  return comment ? "comments" : "nothing";
}
