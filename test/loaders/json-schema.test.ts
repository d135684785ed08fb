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
    const schema = workflowJsonSchema() as { required: string[]; additionalProperties: boolean; properties: Record<string, any> };
    expect(schema.required).toEqual(["tasks"]);
    expect(schema.additionalProperties).toBe(false);
    const tasks = schema.properties.tasks;
    expect(tasks.propertyNames.pattern).toBe(TASK_ID_PATTERN.source);
    expect(tasks.additionalProperties.required).toEqual(["run"]);
    expect(tasks.additionalProperties.additionalProperties).toBe(false);
    expect(tasks.additionalProperties.properties.timeout.anyOf.map((option: { type: string }) => option.type)).toEqual(["string", "number"]);
    expect(tasks.additionalProperties.properties.runAt.format).toBe("date-time");
  });
});
