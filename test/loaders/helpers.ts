import fc from "fast-check";
import { parseWorkflow, WorkflowError, type ParseOptions, type Workflow } from "../../src/loaders/index.js";

/** A fixed clock: 2026-01-01T00:00:00Z. */
export const NOW = Date.parse("2026-01-01T00:00:00Z");

/** Parses YAML given as lines (joined with "\n"), at a fixed clock. */
export function parse(text: string | Buffer, file = "/work/wf/ci.yaml"): Workflow {
  return parseWorkflow(text, file, { now: NOW });
}

/** The problems `parseWorkflow` reports, each as "line:col: message"; fails if it does not throw a WorkflowError. */
export function problemsOf(text: string | Buffer, file = "wf.yaml", options: ParseOptions = {}): string[] {
  try {
    parseWorkflow(text, file, { now: NOW, ...options });
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

/** One edit of a text: insert characters, delete a run, or repeat a run in place. */
export type Mutation = { kind: "insert"; at: number; text: string } | { kind: "delete" | "duplicate"; at: number; length: number };

/** Mutations whose inserted text is drawn from `unit`, at most `maxInsert` characters. */
export function mutationOf(unit: fc.Arbitrary<string>, maxInsert: number): fc.Arbitrary<Mutation> {
  return fc.oneof(
    fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), text: fc.string({ unit, maxLength: maxInsert }) }),
    fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 12 }) }),
    fc.record({ kind: fc.constant("duplicate" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 60 }) }),
  );
}

/** Applies mutations in order; positions wrap around the text's current length. */
export function mutate(text: string, mutations: Mutation[]): string {
  let result = text;
  for (const change of mutations) {
    const at = change.at % (result.length + 1);
    if (change.kind === "insert") result = result.slice(0, at) + change.text + result.slice(at);
    else if (change.kind === "delete") result = result.slice(0, at) + result.slice(at + change.length);
    else result = result.slice(0, at) + result.slice(at, at + change.length) + result.slice(at);
  }
  return result;
}
