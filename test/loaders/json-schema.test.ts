import { readFileSync } from "node:fs";
import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { isMap, isScalar, parse as parseYaml, parseAllDocuments, parseDocument, type YAMLMap } from "yaml";
import { parseWorkflow, renderWorkflowJsonSchema, TASK_ID_PATTERN, workflowJsonSchema, WorkflowError, writeWorkflowJsonSchema, WORKFLOW_SCHEMA_FILE } from "../../src/loaders/index.js";
import { NOW, yaml } from "./helpers.js";

const regenerate = `UPDATE_WORKFLOW_SCHEMA=1 npx vitest run test/loaders/json-schema.test.ts`;

describe("workflow JSON Schema", () => {
  it(`is committed at ${WORKFLOW_SCHEMA_FILE} exactly as generated from the zod schema`, () => {
    if (process.env.UPDATE_WORKFLOW_SCHEMA === "1") writeWorkflowJsonSchema();
    const committed = readFileSync(new URL(`../../${WORKFLOW_SCHEMA_FILE}`, import.meta.url), "utf8");
    expect(committed, `${WORKFLOW_SCHEMA_FILE} is out of date; regenerate it with: ${regenerate}`).toBe(renderWorkflowJsonSchema());
  });

  it("describes what users write: task id pattern, required run, durations as text or seconds, no unknown keys", () => {
    type Node = { required?: string[]; additionalProperties?: boolean | Node; properties?: Record<string, Node>; propertyNames?: Node; pattern?: string; const?: string; $ref?: string; anyOf?: Node[]; type?: string; format?: string };
    const schema = workflowJsonSchema() as Node;
    // `tasks`, or a merge key that may bring them, for a tool that checks the file without merging it.
    expect(schema.anyOf!.map((option) => option.required)).toEqual([["tasks"], ["<<"]]);
    expect(schema.additionalProperties).toBe(false);
    const tasks = schema.properties!.tasks!;
    // Or `<<`, YAML's merge key, for a tool that checks the file without merging it.
    // Or a key YAML reads as a number or a boolean, for an editor that checks a key as YAML types it (see below).
    expect(tasks.propertyNames!.anyOf!.map((option) => option.pattern ?? option.const ?? option.$ref)).toEqual([TASK_ID_PATTERN.source, "<<", "#/$defs/taskIdKey"]);
    const task = tasks.additionalProperties as Node;
    // `run`, or a merge key that may bring it, for a tool that checks the file without merging it.
    expect(task.anyOf!.map((option) => option.required)).toEqual([["run"], ["<<"]]);
    expect(task.additionalProperties).toBe(false);
    expect(task.properties!.timeout!.anyOf!.map((option) => option.type)).toEqual(["string", "string", "number"]);
    expect(task.properties!.runAt!.format).toBe("date-time");
  });

  it("compiles with Ajv in strict mode, as a tool that validates workflows with it may set", () => {
    // strict: true turns on strictRequired: a `required` must name properties its schema declares.
    const compile = () => new Ajv2020({ strict: true, validateFormats: false }).compile(workflowJsonSchema());
    expect(compile).not.toThrow();
    const strictAccepts = compile();
    expect(strictAccepts(task({ delay: "1s" }))).toBe(true);
    expect(strictAccepts(task({ delay: "1s", runAt: "2026-01-15T02:00:00Z" }))).toBe(false);
  });
});

/** The JSON Schema as an editor applies it (formats are left to the patterns zod writes beside them). */
const schemaAccepts = new Ajv2020({ validateFormats: false }).compile(workflowJsonSchema());

/** What `taskq validate` says of the same data, written as JSON (which is YAML). */
function validateAccepts(data: unknown): boolean {
  try {
    parseWorkflow(JSON.stringify(data), "wf.yaml", { now: NOW });
    return true;
  } catch (error) {
    if (error instanceof WorkflowError) return false;
    throw error;
  }
}

const task = (fields: Record<string, unknown>) => ({ tasks: { a: { run: "x", ...fields } } });

describe("workflow JSON Schema against validate", () => {
  it.each([
    ["a task", task({}), true],
    ["timeout: 1ms", task({ timeout: "1ms" }), true],
    ["timeout: 0.6ms (rounds to 1ms)", task({ timeout: "0.6ms" }), true],
    ["timeout: 0.0005 (seconds, rounds to 1ms)", task({ timeout: 0.0005 }), true],
    ["timeout: 30 days", task({ timeout: 2_592_000 }), true],
    ["delay: 0", task({ delay: 0 }), true],
    ["runAt alone", task({ runAt: "2026-01-15T02:00:00Z" }), true],
    ["runAt in defaults, delay in the task", { defaults: { runAt: "2026-01-15T02:00:00Z" }, tasks: { a: { run: "x", delay: "1s" } } }, true],
    ["timeout: 0", task({ timeout: 0 }), false],
    ["timeout: 0s", task({ timeout: "0s" }), false],
    ["timeout: 0ms", task({ timeout: "0ms" }), false],
    ["timeout: 0h0m0.0s", task({ timeout: "0h0m0.0s" }), false],
    ["timeout: 0.0004 (seconds, rounds to 0)", task({ timeout: 0.0004 }), false],
    ["timeout: -1", task({ timeout: -1 }), false],
    ["defaults.timeout: 0", { defaults: { timeout: 0 }, tasks: { a: { run: "x" } } }, false],
    ["a task's timeout: none and retryOn: any, undoing defaults'", { defaults: { timeout: "5m", retryOn: [1] }, tasks: { a: { run: "x", timeout: "none", retryOn: "any" } } }, true],
    ["timeout: never", { tasks: { a: { run: "x", timeout: "never" } } }, false],
    ["retryOn: all", { tasks: { a: { run: "x", retryOn: "all" } } }, false],
    ["tasks: {}", { tasks: {} }, false],
    ["delay with runAt", task({ delay: "1s", runAt: "2026-01-15T02:00:00Z" }), false],
    ["delay with runAt in defaults", { defaults: { delay: "1s", runAt: "2026-01-15T02:00:00Z" }, tasks: { a: { run: "x" } } }, false],
    ["dependsOn: [a, null]", { tasks: { a: { run: "x" }, b: { run: "x", dependsOn: ["a", null] } } }, false],
    ["dependsOn: one string naming two tasks", { tasks: { lint: { run: "x" }, test: { run: "x" }, b: { run: "x", dependsOn: "lint, test" } } }, false],
    ["dependsOn: [an id with a space after it]", { tasks: { a: { run: "x" }, b: { run: "x", dependsOn: ["a "] } } }, false],
    ["dependsOn: [..]", { tasks: { a: { run: "x" }, b: { run: "x", dependsOn: [".."] } } }, false],
    ["dependsOn: [-1], a number no task id is", { tasks: { a: { run: "x", dependsOn: [-1] } } }, false],
    ["dependsOn: -1", { tasks: { a: { run: "x", dependsOn: -1 } } }, false],
    ["dependsOn: [1.5, true], ids as YAML reads them", { tasks: { "1.5": { run: "x" }, true: { run: "x" }, b: { run: "x", dependsOn: [1.5, true] } } }, true],
    ["a NUL in run", task({ run: "echo a\u0000b" }), false],
    ["a NUL in cwd", task({ cwd: "a\u0000b" }), false],
    ["a NUL in an env value", task({ env: { A: "a\u0000b" } }), false],
    ["a NUL in the workflow's env", { env: { A: "\u0000" }, tasks: { a: { run: "x" } } }, false],
    ["a NUL in defaults.env", { defaults: { env: { A: "a\u0000" } }, tasks: { a: { run: "x" } } }, false],
    ["x- fields at the top level, in defaults and in a task", { "x-common": { A: 1 }, defaults: { "x-note": "n" }, tasks: { a: { run: "x", "x-owner": ["me"] } } }, true],
    ["x_ (not x-) in a task", task({ x_owner: "me" }), false],
    ["x- in a task's backoff", task({ backoff: { "x-note": "n" } }), false],
  ])("agrees on %s", (_, data, valid) => {
    expect(validateAccepts(data), "validate").toBe(valid);
    expect(schemaAccepts(data), "schema").toBe(valid);
  });

  // A tool that merges (yaml-language-server) checks the merged data; one that does not sees each `<<` with what it names.
  it("takes merge keys where validate takes them, merged or not: in a task, defaults, an env, a backoff, the top level and tasks; a `<<` of anything but mappings neither", () => {
    const text = yaml(
      "x-base: &base { retries: 2, env: { <<: { A: a }, B: b } }",
      "x-more: &more { lint: { run: eslint } }",
      "x-slow: &slow { base: 1s }",
      "<<: { name: ci }",
      "defaults: { <<: *base }",
      "tasks:",
      "  <<: *more",
      "  build: { <<: [*base, { timeout: 5m }], run: make, backoff: { <<: *slow, max: 2s } }",
    );
    expect(parseWorkflow(text, "wf.yaml", { now: NOW }).tasks.map((task) => task.id)).toEqual(["lint", "build"]);
    expect(parseWorkflow(text, "wf.yaml", { now: NOW }).tasks[1]?.backoff).toEqual({ baseMs: 1000, maxMs: 2000 });
    for (const merge of [true, false]) expect(schemaAccepts(parseYaml(text, { merge })), `merge: ${merge}`).toBe(true);
    // A task whose `run` comes from a merge alone: marked as lacking it by neither.
    const fromMerge = yaml("x-base: &base { run: make, retries: 1 }", "tasks:", "  build: { <<: *base }", "  test: { <<: *base, run: make test }");
    expect(parseWorkflow(fromMerge, "wf.yaml", { now: NOW }).tasks.map((task) => task.run)).toEqual(["make", "make test"]);
    for (const merge of [true, false]) expect(schemaAccepts(parseYaml(fromMerge, { merge })), `merge: ${merge}`).toBe(true);
    // Neither `run` nor a `<<`: lacking `run`, to both.
    const neither = yaml("tasks:", "  build: { retries: 1 }");
    expect(() => parseWorkflow(neither, "wf.yaml", { now: NOW })).toThrow("`run` is missing");
    expect(schemaAccepts(parseYaml(neither))).toBe(false);
    // The top level's `tasks` brought by a `<<` alone, as taskq takes them: not marked as lacking them by either.
    const tasksFromMerge = yaml("x-base: &base", "  tasks: { build: { run: make } }", "<<: *base");
    expect(parseWorkflow(tasksFromMerge, "wf.yaml", { now: NOW }).tasks.map((task) => task.id)).toEqual(["build"]);
    for (const merge of [true, false]) expect(schemaAccepts(parseYaml(tasksFromMerge, { merge })), `merge: ${merge}`).toBe(true);
    // Neither `tasks` nor a `<<`: lacking `tasks`, to both.
    const noTasks = yaml("name: ci", "x-base: { tasks: { build: { run: make } } }");
    expect(() => parseWorkflow(noTasks, "wf.yaml", { now: NOW })).toThrow("`tasks`");
    expect(schemaAccepts(parseYaml(noTasks))).toBe(false);
    const wrong = yaml("tasks:", "  build: { <<: 3, run: make }");
    expect(() => parseWorkflow(wrong, "wf.yaml", { now: NOW })).toThrow("a merge key `<<` takes a mapping");
    expect(schemaAccepts(parseYaml(wrong, { merge: false }))).toBe(false);
  });

  // yaml-language-server (VS Code's YAML extension) checks each key as YAML types it against `propertyNames`: `1:` as
  // the number 1, `true:` as a boolean. No JSON key is one, so Ajv, given the data, never sees them: each key is checked here.
  it("takes task ids and variable names that YAML reads as numbers or booleans where validate takes them, as an editor checks a key by its YAML type", () => {
    // Strict, as the schema must compile so (see above).
    const ajv = new Ajv2020({ strict: true, validateFormats: false }).addSchema(workflowJsonSchema(), "workflow");
    const keyCheck = (pointer: string) => ajv.getSchema(`workflow#${pointer}/propertyNames`) as ValidateFunction;
    /** Whether the keys of each mapping (at its path), typed as YAML reads them, are taken by its `propertyNames`. */
    const keysAccepted = (text: string): boolean => {
      const document = parseDocument(text);
      const tasks = document.get("tasks") as YAMLMap;
      const mappings: Array<[unknown, string]> = [
        [tasks, "/properties/tasks"],
        [document.get("env"), "/properties/env"],
        [document.getIn(["defaults", "env"]), "/properties/defaults/properties/env"],
        ...tasks.items.map((pair): [unknown, string] => [isMap(pair.value) ? pair.value.get("env") : undefined, "/properties/tasks/additionalProperties/properties/env"]),
      ];
      return mappings.every(([map, pointer]) => !isMap(map) || map.items.every((pair) => keyCheck(pointer)(isScalar(pair.key) ? pair.key.value : pair.key)));
    };
    const valid = (text: string) => {
      try {
        return parseWorkflow(text, "wf.yaml", { now: NOW }).tasks.length > 0;
      } catch (error) {
        if (error instanceof WorkflowError) return false;
        throw error;
      }
    };
    for (const id of ["1", "0", "01", "1.5", "1e3", "0x1f", "true", "False"]) {
      const text = yaml("env: { true: x }", "defaults: { env: { False: x } }", "tasks:", `  ${id}: { run: x, env: { TRUE: y, false: z } }`, `  b: { run: x, dependsOn: [${id}] }`);
      expect(valid(text), `validate, ${id}:`).toBe(true);
      expect(keysAccepted(text), `schema, ${id}:`).toBe(true);
    }
    // `null:` (or `Null:`, `NULL:`), YAML's null as a key: the id or the name as written, to taskq.
    for (const name of ["null", "Null", "NULL"]) {
      const text = yaml(`env: { ${name}: x }`, `defaults: { env: { ${name}: x } }`, "tasks:", `  ${name}: { run: x, env: { ${name}: y } }`, `  b: { run: x, dependsOn: ["${name}"] }`);
      expect(valid(text), `validate, ${name}:`).toBe(true);
      expect(keysAccepted(text), `schema, ${name}:`).toBe(true);
    }
    // Not ids or names to either: a negative number, a number as a variable's name; and one as a string.
    for (const text of [yaml("tasks:", "  -1: { run: x }"), yaml("tasks:", "  a: { run: x, env: { 1: y } }"), yaml("env: { 1: y }", "tasks:", "  a: { run: x }"), yaml("tasks:", "  a b: { run: x }")]) {
      expect(valid(text), text).toBe(false);
      expect(keysAccepted(text), text).toBe(false);
    }
  });

  // What JSON Schema cannot say: sums of units, values against each other, ids against the tasks.
  it.each([
    ["timeout: 0.3ms (rounds to 0)", task({ timeout: "0.3ms" })],
    ["a text duration over 30 days", task({ timeout: "721h" })],
    ["a runAt more than 30 days after the file is checked", task({ runAt: "2026-02-01T00:00:01Z" })],
    ["backoff.max under backoff.base", task({ backoff: { base: "5s", max: "1s" } })],
    ["an undefined dependency", task({ dependsOn: ["nope"] })],
    ["a task's backoff.max under defaults.backoff.base", { defaults: { backoff: { base: "5s" } }, tasks: { a: { run: "x", backoff: { max: "2s" } } } }],
    ["a cycle", { tasks: { a: { run: "x", dependsOn: "b" }, b: { run: "x", dependsOn: ["a"] } } }],
  ])("leaves to validate: %s", (_, data) => {
    expect(validateAccepts(data), "validate").toBe(false);
    expect(schemaAccepts(data), "schema").toBe(true);
  });

  // What the data an editor checks no longer says of the text: how a key was written, how many documents there were.
  it.each([
    ["a task id written twice, as 1: and \"1\":", yaml("tasks:", "  1: { run: x }", '  "1": { run: y }')],
    ["an id YAML reads as a number, which is no id as written: +1:", yaml("tasks:", "  +1: { run: x }")],
    ["an id YAML reads as a number, which is no id as written: .5:", yaml("tasks:", "  .5: { run: x }")],
    ['a quoted "<<", a key like any other', yaml("tasks:", '  a: { run: x, "<<": { retries: 1 } }')],
    ["a second YAML document", yaml("tasks:", "  a: { run: x }", "---", "tasks:", "  b: { run: x }")],
    // A number in range, written other than in digits: the number an editor sees is one the schema takes, written so (2, 1000, 16, 0).
    ["an integer written other than in digits: retries: 2.0", yaml("tasks:", "  a: { run: x, retries: 2.0 }")],
    ["an integer written other than in digits: concurrency: +3, retryOn: [1e1]", yaml("concurrency: +3", "tasks:", "  a: { run: x, retryOn: [1e1] }")],
    ["a duration's seconds written other than in digits: timeout: 0x10, delay: 1e3", yaml("tasks:", "  a: { run: x, timeout: 0x10, delay: 1e3 }")],
    ["a duration's seconds written other than in digits: delay: 1e-9, backoff.base: -0", yaml("tasks:", "  a: { run: x, delay: 1e-9, backoff: { base: -0 } }")],
  ])("leaves to validate: %s", (_, text) => {
    expect(() => parseWorkflow(text, "wf.yaml", { now: NOW }), "validate").toThrow(WorkflowError);
    const documents = parseAllDocuments(text, { merge: true }).map((document) => document.toJS() as unknown);
    expect(documents.map((data) => schemaAccepts(data)), "schema").toEqual(documents.map(() => true));
  });
});
