import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderWorkflowJsonSchema, TASK_ID_PATTERN, workflowJsonSchema, writeWorkflowJsonSchema, WORKFLOW_SCHEMA_FILE } from "../../src/loaders/index.js";

const regenerate = `UPDATE_WORKFLOW_SCHEMA=1 npx vitest run test/loaders/json-schema.test.ts`;

describe("workflow JSON Schema", () => {
  it(`is committed at ${WORKFLOW_SCHEMA_FILE} exactly as generated from the zod schema`, () => {
    if (process.env.UPDATE_WORKFLOW_SCHEMA === "1") writeWorkflowJsonSchema();
    const committed = readFileSync(new URL(`../../${WORKFLOW_SCHEMA_FILE}`, import.meta.url), "utf8");
    expect(committed, `${WORKFLOW_SCHEMA_FILE} is out of date; regenerate it with: ${regenerate}`).toBe(renderWorkflowJsonSchema());
  });

  it("describes what users write: task id pattern, required run, durations as text or seconds, no unknown keys", () => {
    type Node = { required?: string[]; additionalProperties?: boolean | Node; properties?: Record<string, Node>; propertyNames?: Node; pattern?: string; anyOf?: Node[]; type?: string; format?: string };
    const schema = workflowJsonSchema() as Node;
    expect(schema.required).toEqual(["tasks"]);
    expect(schema.additionalProperties).toBe(false);
    const tasks = schema.properties!.tasks!;
    expect(tasks.propertyNames!.pattern).toBe(TASK_ID_PATTERN.source);
    const task = tasks.additionalProperties as Node;
    expect(task.required).toEqual(["run"]);
    expect(task.additionalProperties).toBe(false);
    expect(task.properties!.timeout!.anyOf!.map((option) => option.type)).toEqual(["string", "number"]);
    expect(task.properties!.runAt!.format).toBe("date-time");
  });
});
