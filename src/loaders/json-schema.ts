import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as z from "zod/mini";
import { taskSchema, workflowFileSchema } from "./schema.js";

/** Where the committed JSON Schema lives, relative to the repository root. */
export const WORKFLOW_SCHEMA_FILE = "schema/workflow.schema.json";

/**
 * The JSON Schema (draft 2020-12) of a workflow file, generated from the zod
 * schema so the two cannot drift. It describes what a user may write (the
 * input side: durations as text or seconds), for editor completion.
 */
export function workflowJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(workflowFileSchema, { io: "input", target: "draft-2020-12", override: (context) => (runOrMerge(context), tasksOrMerge(context)) });
}

/**
 * A task needs `run`, or a `<<` that may bring it: a tool that checks the file without merging it
 * first cannot see what the merge brings, and marked `build: { <<: *base }` as lacking `run` where
 * `base` has one. One that merges (yaml-language-server) sees no `<<`, and still needs `run`. The
 * `properties`, which accept any value, declare what `required` names (see noRunAtWithDelayJson).
 */
function runOrMerge({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: { required?: string[]; anyOf?: unknown[] } }): void {
  if (zodSchema !== taskSchema || jsonSchema.required?.join() !== "run") return;
  delete jsonSchema.required;
  jsonSchema.anyOf = [{ properties: { run: true }, required: ["run"] }, { properties: { "<<": true }, required: ["<<"] }];
}

/**
 * The top level needs `tasks`, or a `<<` that may bring them (`<<: *base`, with `base: { tasks: ... }`),
 * as a task needs `run`: taskq merges that file, and a tool that checks it without merging marked it as
 * lacking `tasks`.
 */
function tasksOrMerge({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: { required?: string[]; anyOf?: unknown[] } }): void {
  if (zodSchema !== workflowFileSchema || jsonSchema.required?.join() !== "tasks") return;
  delete jsonSchema.required;
  jsonSchema.anyOf = [{ properties: { tasks: true }, required: ["tasks"] }, { properties: { "<<": true }, required: ["<<"] }];
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
