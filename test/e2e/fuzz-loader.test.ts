import { writeFile } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseWorkflow, WorkflowError, type Workflow } from "../../src/loaders/index.js";
import { TASK_ID_PATTERN } from "../../src/loaders/schema.js";
import { runCli, workspace } from "../helpers/cli.js";

/**
 * Extends test/loaders/property.test.ts (mutations of one valid file, random text and
 * bytes: only WorkflowError, positions inside the file) with structured workflows whose
 * fields take good and bad values: parsing never hangs, an accepted file is a
 * well-formed Workflow, a refused one has every position inside the file, and the
 * real CLI agrees (exit 0 or 2, nothing else).
 */

const idArbitrary = fc.constantFrom("a", "b", "c", "build", "t-1", "x.y", "__proto__", "constructor", "../x", "a/b", "", "1", "a b", "é");
const valueArbitrary = fc.constantFrom(
  "1",
  "-1",
  "1.5",
  "1e400",
  "null",
  "true",
  "[]",
  "{}",
  '"5 minutes"',
  "30s",
  "-1s",
  "250ms",
  "1h30m",
  "2026-12-01T02:00:00Z",
  "2026-02-30T00:00:00Z",
  "2001-01-01T00:00:00+01:00",
  "2026-12-01T02:00:00",
  "high",
  "nope",
  "[1, 75]",
  "[0]",
  "{ base: 1s, max: 2s }",
  "{ base: 2s, max: 1s }",
  "{ A: x, 1B: y }",
  "*anchor",
);
const fieldArbitrary = fc.tuple(fc.constantFrom("retries", "timeout", "runAt", "delay", "priority", "retryOn", "backoff", "env", "cwd", "type", "dependsOn", "rn"), valueArbitrary);
const taskArbitrary: fc.Arbitrary<RandomTask> = fc.record({
  id: idArbitrary,
  run: fc.constantFrom("echo hi", "5", "null", "''", "[x]", "&anchor echo shared"),
  fields: fc.array(fieldArbitrary, { maxLength: 3 }),
  dependsOn: fc.array(idArbitrary, { maxLength: 3 }),
});
interface RandomTask {
  id: string;
  run: string;
  fields: Array<[string, string]>;
  dependsOn: string[];
}

/** Good values only, so that accepted files are common enough to check. */
const goodFields: Record<string, string[]> = {
  retries: ["0", "2"],
  timeout: ["30s", "250ms", "1.5"],
  priority: ["high", "low"],
  retryOn: ["[1, 75]"],
  backoff: ["{ base: 1s, max: 2s }"],
  env: ["{ A: x, B: 1 }"],
  // Before checkParse's clock, so in the past for it and for the real CLI's alike, whatever the date: neither refuses one as too far ahead.
  runAt: ["2001-01-01T00:00:00+01:00", "2026-05-15T02:00:00Z"],
};
const goodTasksArbitrary = fc.integer({ min: 1, max: 6 }).chain((size) =>
  fc.tuple(
    ...Array.from({ length: size }, (_, index) =>
      fc.record({
        id: fc.constant(`t${index}`),
        run: fc.constant("echo hi"),
        fields: fc.subarray(Object.keys(goodFields)).chain((names) => fc.tuple(...names.map((name) => fc.tuple(fc.constant(name), fc.constantFrom(...goodFields[name]!))))),
        dependsOn: fc.subarray(Array.from({ length: index }, (_, i) => `t${i}`)),
      }),
    ),
  ),
);
const fileArbitrary = fc.record({
  header: fc.subarray(["name: ci", "concurrency: 4", "concurrency: 0", "env: { NODE_ENV: test }", "defaults: { retries: 1 }", "defaults: { run: x }", "bogus: 1"]),
  tasks: fc.oneof(
    fc.array(taskArbitrary, { maxLength: 8 }),
    goodTasksArbitrary.map((tasks): RandomTask[] => tasks.map((task) => ({ ...task, fields: [...task.fields] as Array<[string, string]> }))),
  ),
  lineEnding: fc.constantFrom("\n", "\r\n"),
  bom: fc.boolean(),
});

type RandomFile = typeof fileArbitrary extends fc.Arbitrary<infer T> ? T : never;

function render(file: RandomFile): string {
  const lines = [...file.header, "tasks:"];
  for (const task of file.tasks) {
    const key = task.id === "" ? "''" : JSON.stringify(task.id);
    lines.push(`  ${key}:`, `    run: ${task.run}`);
    for (const [name, value] of task.fields) lines.push(`    ${name}: ${value}`);
    if (task.dependsOn.length > 0) lines.push(`    dependsOn: [${task.dependsOn.map((id) => JSON.stringify(id)).join(", ")}]`);
  }
  return `${file.bom ? "\uFEFF" : ""}${lines.join(file.lineEnding)}${file.lineEnding}`;
}

/** An accepted file must give a Workflow the engine can take as is. */
function checkWorkflow(workflow: Workflow): void {
  const seen = new Set<string>();
  for (const task of workflow.tasks) {
    expect(TASK_ID_PATTERN.test(task.id) && task.id !== "." && task.id !== "..").toBe(true);
    expect(seen.has(task.id)).toBe(false);
    // Topological order: every dependency came earlier, and none is the task itself.
    for (const dependency of task.dependsOn) expect(seen.has(dependency)).toBe(true);
    seen.add(task.id);
    expect(typeof task.run).toBe("string");
    expect(Number.isInteger(task.retries) && task.retries >= 0 && task.retries <= 100).toBe(true);
    if (task.timeoutMs !== undefined) expect(task.timeoutMs).toBeGreaterThan(0);
    if (task.runAt !== undefined) expect(Number.isFinite(task.runAt)).toBe(true);
  }
}

/** Parses within a time bound; a refusal must be a WorkflowError with positions inside the text. */
function checkParse(text: string): "valid" | "invalid" {
  const lines = text.replace(/^\uFEFF/, "").split("\n");
  const started = performance.now();
  try {
    checkWorkflow(parseWorkflow(text, "f.yaml", { now: Date.parse("2026-06-01T00:00:00Z") }));
    return "valid";
  } catch (error) {
    if (!(error instanceof WorkflowError)) throw error;
    for (const problem of error.problems) {
      expect(problem.line).toBeGreaterThanOrEqual(1);
      expect(problem.line).toBeLessThanOrEqual(lines.length);
      expect(problem.col).toBeGreaterThanOrEqual(1);
      expect(problem.col).toBeLessThanOrEqual(lines[problem.line - 1]!.length + 1);
    }
    return "invalid";
  } finally {
    // Small inputs parse in milliseconds: ten seconds is a hang (a quadratic blow-up), not a slow machine.
    expect(performance.now() - started).toBeLessThan(10_000);
  }
}

describe("workflow loader on structured random files", () => {
  it("never crashes or hangs; accepts only well-formed workflows; positions stay inside the file", () => {
    const outcomes = { valid: 0, invalid: 0 };
    fc.assert(
      fc.property(fileArbitrary, (file) => {
        outcomes[checkParse(render(file))]++;
      }),
      { numRuns: 400 },
    );
    // Both paths were exercised, or the property proves little.
    expect(outcomes.valid).toBeGreaterThan(0);
    expect(outcomes.invalid).toBeGreaterThan(0);
  });

  it("the real CLI agrees: `validate` exits 0 or 2, with file:line:col lines inside the file", { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fileArbitrary, async (file) => {
        const text = render(file);
        const expected = checkParse(text);
        const ws = await workspace("");
        await writeFile(ws.file, text);
        const result = await runCli(["validate", ws.file]);
        expect(result.code).toBe(expected === "valid" ? 0 : 2);
        if (expected === "invalid") {
          const lines = result.stderr.trimEnd().split("\n");
          expect(lines.at(-1)).toMatch(/^\d+ problems?$/);
          for (const line of lines.slice(0, -1)) expect(line).toMatch(new RegExp(`^${ws.file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+:\\d+: `));
        }
      }),
      { numRuns: 6 },
    );
  });
});
