import type { LineCounter } from "yaml";
import { lowerBound } from "./lower-bound.js";
import type { WorkflowProblem } from "./workflow-error.js";

/**
 * The problems of one task that another task sharing the value can have word for word, the task's id
 * apart (the id as quote() writes it, [1]): `task "id": ...`, and `task "id" depends on "x", ...`
 * (a `dependsOn` shared), with how each reads for several tasks (see at).
 */
const TASK_FORMS: ReadonlyArray<{ pattern: RegExp; several: string }> = [
  { pattern: /^task ("(?:[^"\\]|\\.)*"): /, several: ": " },
  { pattern: /^task ("(?:[^"\\]|\\.)*") depends on (?=")/, several: " depend on " },
];

/** The longest id quote() writes in full (see report-issues.ts): a longer one is shortened, and two may read alike. */
const QUOTED_IN_FULL = 60;

/** How many tasks a problem they share names: all of up to one more than this, else these and how many more (see sharedBy). */
export const SHARED_NAMED = 3;

/** `tasks "a" and "b"`, `tasks "a", "b", "c" and 197 more`: the tasks sharing a problem, the first few named (`ids`, quoted), of `count`. */
export function sharedBy(ids: readonly string[], count: number): string {
  if (count > SHARED_NAMED + 1) return `tasks ${ids.slice(0, SHARED_NAMED).join(", ")} and ${count - SHARED_NAMED} more`;
  return `tasks ${ids.slice(0, -1).join(", ")} and ${ids.at(-1)!}`;
}

/** Collects problems for one file, turning source offsets into 1-based line:col. */
export class ProblemList {
  readonly problems: WorkflowProblem[] = [];
  readonly #file: string;
  readonly #lineCounter: Pick<LineCounter, "linePos"> | undefined;
  readonly #textLength: number;
  /** Two checks may catch the same fault; the user should read it once. */
  readonly #seen = new Set<string>();
  /** Offsets of values an earlier problem already explains (see explained). */
  readonly #explained = new Set<number>();
  /** Offsets of keys whose empty value an earlier problem already explains (see keyExplained). */
  readonly #keyExplained = new Set<number>();
  /** Offsets of mappings whose missing fields an earlier problem may explain (see missingExplained). */
  readonly #missingExplained = new Set<number>();
  /** The problems that begin `task "id": `, by place and the rest of their message: the tasks that share each (see at). */
  readonly #shared = new Map<string, { problem: WorkflowProblem; ids: string[]; count: number }>();

  /** Whether the file is named as JSON (`ci.json`), which taskq reads as YAML: some advice differs for it. */
  get json(): boolean {
    return /\.json$/i.test(this.#file);
  }

  constructor(file: string, lineCounter?: Pick<LineCounter, "linePos">, textLength = 0) {
    this.#file = file;
    this.#lineCounter = lineCounter;
    this.#textLength = textLength;
  }

  /** Adds a problem at a character offset of the (BOM-stripped) text; `task`, the id of the task it is of, where known (see at). */
  atOffset(offset: number, message: string, task?: string): void {
    if (this.#lineCounter === undefined) return this.at(1, 1, message, task);
    const clamped = Math.max(0, Math.min(offset, this.#textLength));
    const { line, col } = this.#lineCounter.linePos(clamped);
    this.at(line, col, message, task);
  }

  /**
   * Marks the value at `offset` as explained by a problem just reported there (an unknown
   * alias, read as nothing; a mapping whose keys were all refused): what later checks find
   * wrong with that value (`got nothing (null)`, "is empty") follows from it, and is not said.
   */
  explained(offset: number): void {
    this.#explained.add(offset);
  }

  /**
   * Marks the value of the key at `offset`, left empty (`retries: !!int`), as explained by a problem just reported:
   * the field's refusal, told at its key as the value has no text, follows from it. Unlike explained, the mapping
   * that starts at the same key (a task's first line) keeps its missing fields told (`run` is missing).
   */
  keyExplained(offset: number): void {
    this.#keyExplained.add(offset);
  }

  /**
   * Marks the mapping at `offset` as one whose missing fields a problem reported in it may explain:
   * a `<<` it could not merge (`<<: 5`, `<<: *nope`) beside other keys, which may have been meant to
   * bring `run`. A missing field is then not said too; the mapping's other faults still are.
   */
  missingExplained(offset: number): void {
    this.#missingExplained.add(offset);
  }

  /** Whether a field missing from the mapping at `offset` is explained already (see explained and missingExplained). */
  isMissingExplained(offset: number): boolean {
    return this.#explained.has(offset) || this.#missingExplained.has(offset);
  }

  /** atOffset, unless the value at `offset` is already explained (see explained). */
  followOn(offset: number, message: string, task?: string): void {
    if (!this.#explained.has(offset) && !this.#keyExplained.has(offset)) this.atOffset(offset, message, task);
  }

  /** `line:col` of an offset, for messages that point at a second place. */
  lineCol(offset: number): string {
    if (this.#lineCounter === undefined) return "1:1";
    const { line, col } = this.#lineCounter.linePos(Math.max(0, Math.min(offset, this.#textLength)));
    return `${line}:${col}`;
  }

  /**
   * Adds a problem at a known line and column. The same problem of several tasks at one place (a
   * value they share through an alias or a merge key, `<<: *defaults` in each of 200 tasks) is one
   * problem, naming the first few tasks and how many more (see sharedBy), not one line per task.
   * `task`, the id of the task the problem is of, where known: two tasks whose ids quote() shortens
   * alike (past 60 characters) are two tasks, not the same problem told twice.
   */
  at(line: number, col: number, message: string, task?: string): void {
    // Only a shortened id tells two tasks apart that the message does not: any other problem told twice, by two checks, is one.
    const key = task === undefined || task.length <= QUOTED_IN_FULL ? `${line}:${col}:${message}` : `${line}:${col}:${message}\0${task}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    for (const [form, { pattern, several }] of TASK_FORMS.entries()) {
      const task = pattern.exec(message);
      if (task === null) continue;
      const rest = message.slice(task[0].length);
      const place = `${form}:${line}:${col}:${rest}`;
      const shared = this.#shared.get(place);
      if (shared === undefined) {
        const problem = { file: this.#file, line, col, message };
        this.#shared.set(place, { problem, ids: [task[1]!], count: 1 });
        this.problems.push(problem);
        return;
      }
      shared.count++;
      if (shared.ids.length <= SHARED_NAMED) shared.ids.push(task[1]!);
      shared.problem.message = `${sharedBy(shared.ids, shared.count)}${several}${rest}`;
      return;
    }
    this.problems.push({ file: this.#file, line, col, message });
  }

  get size(): number {
    return this.problems.length;
  }
}

/** yaml's LineCounter for a text read without yaml: the 1-based line and column (in UTF-16 units) of an offset. */
export class TextLines implements Pick<LineCounter, "linePos"> {
  readonly #starts: number[] = [0];

  constructor(text: string) {
    for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) this.#starts.push(at + 1);
  }

  readonly linePos = (offset: number): { line: number; col: number } => {
    const starts = this.#starts;
    const low = lowerBound(starts, offset);
    if (starts[low] === offset) return { line: low + 1, col: 1 };
    return { line: low, col: offset - starts[low - 1]! + 1 };
  };
}
