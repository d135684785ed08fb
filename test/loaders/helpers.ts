import { parseWorkflow, WorkflowError, type Workflow } from "../../src/loaders/index.js";

/** A fixed clock: 2026-01-01T00:00:00Z. */
export const NOW = Date.parse("2026-01-01T00:00:00Z");

/** Parses YAML given as lines (joined with "\n"), at a fixed clock. */
export function parse(text: string | Buffer, file = "/work/wf/ci.yaml"): Workflow {
  return parseWorkflow(text, file, { now: NOW });
}

/** The problems `parseWorkflow` reports, each as "line:col: message"; fails if it does not throw a WorkflowError. */
export function problemsOf(text: string | Buffer, file = "wf.yaml"): string[] {
  try {
    parseWorkflow(text, file, { now: NOW });
  } catch (error) {
    if (!(error instanceof WorkflowError)) throw error;
    return error.problems.map((problem) => `${problem.line}:${problem.col}: ${problem.message}`);
  }
  throw new Error("expected a WorkflowError, but the workflow parsed");
}

/** Joins lines with "\n" and a trailing newline. */
export function yaml(...lines: string[]): string {
  return lines.join("\n") + "\n";
}
