import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as z from "zod/mini";
import { workflowFileSchema } from "./schema.js";

/** Where the committed JSON Schema lives, relative to the repository root. */
export const WORKFLOW_SCHEMA_FILE = "schema/workflow.schema.json";

/**
 * The JSON Schema (draft 2020-12) of a workflow file, generated from the zod
 * schema so the two cannot drift. It describes what a user may write (the
 * input side: durations as text or seconds), for editor completion.
 */
export function workflowJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(workflowFileSchema, { io: "input", target: "draft-2020-12" });
}

/** The committed file's exact text: pretty JSON with a trailing newline. */
export function renderWorkflowJsonSchema(): string {
  return JSON.stringify(workflowJsonSchema(), null, 2) + "\n";
}

/** Rewrites the committed schema file; returns its absolute path. */
export function writeWorkflowJsonSchema(): string {
  const path = fileURLToPath(new URL(`../../${WORKFLOW_SCHEMA_FILE}`, import.meta.url));
  writeFileSync(path, renderWorkflowJsonSchema());
  return path;
}
