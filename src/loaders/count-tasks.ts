import { MAX_TASKS } from "./limits.js";

/**
 * Fewer characters than this cannot hold MAX_TASKS + 1 tasks as block-mapping lines (an
 * indent, an id, `:` and a newline: with ids all different, most are 3 characters or more),
 * so smaller files, 10,000-task ones among them, are not looked at: `validate` of them is as
 * fast as before. (The check after parsing still counts every file.)
 */
const MIN_CHARACTERS_OVER_LIMIT = (MAX_TASKS + 1) * 5;

/** A top-level `tasks:` line opening a block mapping (nothing after the `:` but a comment). */
const TASKS_LINE = /^(?:tasks|'tasks'|"tasks") *:(?:[ \t]+(?:#.*)?)?\r?$/m;
/** A task key as ids are written (plain, or quoted without escapes), then `:` and a space or the line's end. */
const TASK_KEY = /([A-Za-z0-9_][A-Za-z0-9_.-]*|"[^"\\\n]*"|'[^'\n]*') *:(?:[ \t]|\r?$)/my;

/** The task past MAX_TASKS: where its key starts, and its id as written. */
export interface TaskPastLimit {
  offset: number;
  id: string;
}

/**
 * Finds the task past MAX_TASKS by counting the lines of the top-level `tasks` block mapping
 * that hold a key at its indentation, before anything is parsed: a file of 200,001 tasks was
 * refused only after the YAML reader had built its syntax tree (~13 s). A line at a mapping's
 * indentation is one of its keys, even inside an unclosed quote or bracket, as yaml reads it.
 * The count never exceeds the real one: at anything else at that indentation (`? key`, a
 * list, an id written otherwise) it stops and leaves the file to the full check after parsing
 * (scan-tokens.ts), as it does for `tasks` written as one flow mapping (`tasks: {...}`).
 */
export function findTaskPastLimit(text: string): TaskPastLimit | undefined {
  if (text.length < MIN_CHARACTERS_OVER_LIMIT) return undefined;
  const header = TASKS_LINE.exec(text);
  if (header === null) return undefined;
  let indent = 0;
  let count = 0;
  for (let start = text.indexOf("\n", header.index) + 1; start > 0 && start < text.length; ) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    let content = start;
    while (content < end && text.charCodeAt(content) === 0x20) content++;
    const first = text.charCodeAt(content);
    const blank = content === end || first === 0x23 /* # */ || (first === 0x0d /* \r */ && content + 1 === end);
    if (!blank) {
      const lineIndent = content - start;
      if (indent === 0) indent = lineIndent;
      if (lineIndent < indent || indent === 0) return undefined; // the block has ended (or is not a nested mapping)
      if (lineIndent === indent) {
        TASK_KEY.lastIndex = content;
        const key = TASK_KEY.exec(text);
        if (key === null) return undefined;
        if (++count > MAX_TASKS) return { offset: content, id: key[1]! };
      }
    }
    start = end + 1;
  }
  return undefined;
}

/** The 1-based line and column of `offset` in `text`. */
export function lineColumnOf(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let index = text.indexOf("\n"); index !== -1 && index < offset; index = text.indexOf("\n", index + 1)) {
    line++;
    lineStart = index + 1;
  }
  return { line, col: offset - lineStart + 1 };
}

/** The problem for the task past the limit, `id` as the file writes it (if it has one to show). */
export function tooManyTasksMessage(id: string | undefined): string {
  const which = id === undefined ? "this is task" : `"${unquote(id)}" is task`;
  return `too many tasks: ${which} ${(MAX_TASKS + 1).toLocaleString("en-US")}, and the limit is ${MAX_TASKS.toLocaleString("en-US")}; split the workflow into several files`;
}

function unquote(key: string): string {
  const quote = key[0];
  return (quote === '"' || quote === "'") && key.length >= 2 && key.at(-1) === quote ? key.slice(1, -1) : key;
}
