import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseWorkflow, WorkflowError } from "../../src/loaders/index.js";
import { mutate, mutationOf, NOW } from "./helpers.js";

const valid = [
  "name: ci",
  "concurrency: 4",
  "env: { NODE_ENV: test }",
  "defaults:",
  "  retries: 1",
  "  timeout: 10m",
  "tasks:",
  "  install:",
  "    run: npm ci",
  "    priority: high",
  "  test:",
  "    run: npm test",
  "    dependsOn: install",
  "    retryOn: [1, 75]",
  "    backoff: { base: 1s, max: 30s }",
  "  deploy:",
  "    run: ./deploy.sh",
  "    dependsOn: [test]",
  "    runAt: 2026-01-15T02:00:00Z",
  "    env: &e { TARGET: prod }",
  "    cwd: infra",
  "",
].join("\n");

/** Characters that matter to YAML, so mutations hit interesting paths. */
const yamlChar = fc.constantFrom(..."abc-_:{}[],&*!|>'\"#%@`?~ \t\n\r\uFEFF01.é".split(""));

const mutation = mutationOf(yamlChar, 8);

/** Parses, asserting that any failure is a WorkflowError whose positions all lie inside the text. */
function checkParse(input: string | Buffer): void {
  const text = typeof input === "string" ? input : new TextDecoder().decode(input);
  const body = text.replace(/^\uFEFF/, "");
  // Lines that end in CR alone (classic Mac) are reported on those lines, as an editor shows them.
  const lines = body.split(/\r(?!\n)|\n/);
  try {
    parseWorkflow(input, "f.yaml", { now: NOW });
  } catch (error) {
    if (!(error instanceof WorkflowError)) throw error;
    expect(error.problems.length).toBeGreaterThan(0);
    for (const problem of error.problems) {
      expect(problem.file).toBe("f.yaml");
      expect(problem.line).toBeGreaterThanOrEqual(1);
      expect(problem.line).toBeLessThanOrEqual(lines.length);
      expect(problem.col).toBeGreaterThanOrEqual(1);
      expect(problem.col).toBeLessThanOrEqual(lines[problem.line - 1]!.length + 1);
    }
  }
}

describe("parseWorkflow on arbitrary input", () => {
  it("the unmutated base workflow is valid, so mutations start from a real workflow", () => {
    expect(parseWorkflow(valid, "f.yaml", { now: NOW }).tasks).toHaveLength(3);
  });

  it("throws only WorkflowError, with every position inside the file, for mutations of a valid workflow", () => {
    fc.assert(fc.property(fc.array(mutation, { minLength: 1, maxLength: 6 }), (mutations) => checkParse(mutate(valid, mutations))), { numRuns: 400 });
  });

  it("throws only WorkflowError for random YAML-ish text", () => {
    fc.assert(fc.property(fc.string({ unit: yamlChar, maxLength: 200 }), (text) => checkParse(`tasks:\n${text}`)), { numRuns: 300 });
    fc.assert(fc.property(fc.string({ unit: yamlChar, maxLength: 200 }), checkParse), { numRuns: 300 });
  });

  it("throws only WorkflowError for random bytes", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 120 }), (bytes) => checkParse(Buffer.from(bytes))), { numRuns: 300 });
  });
});
