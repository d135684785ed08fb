import { TaskqError } from "../errors.js";
import { escapeControls } from "../escape-controls.js";

/** One problem in a workflow file; `line` and `col` are 1-based. */
export interface WorkflowProblem {
  file: string;
  line: number;
  col: number;
  message: string;
}

/**
 * Formats a problem as `file:line:col: message`, the shape editors and terminals link. A file
 * name with a line break (or another control character) is written out, as its values are, so
 * that each problem stays one line.
 */
export function formatProblem(problem: WorkflowProblem): string {
  return `${escapeControls(problem.file)}:${problem.line}:${problem.col}: ${problem.message}`;
}

/** Sorts problems by position, keeping the discovery order for equal positions. */
export function sortProblems(problems: WorkflowProblem[]): WorkflowProblem[] {
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort((a, b) => a.problem.line - b.problem.line || a.problem.col - b.problem.col || a.index - b.index)
    .map((entry) => entry.problem);
}

/**
 * A workflow file that cannot run: every problem found, at once.
 * Exit code 2 (invalid input), code `INVALID_WORKFLOW`.
 */
export class WorkflowError extends TaskqError {
  readonly problems: WorkflowProblem[];

  constructor(problems: WorkflowProblem[], options: { cause?: unknown } = {}) {
    const sorted = sortProblems(problems);
    super("INVALID_WORKFLOW", sorted.map(formatProblem).join("\n"), { ...options, exitCode: 2 });
    this.problems = sorted;
  }
}
