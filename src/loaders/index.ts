/**
 * The workflow loader: YAML file -> validated, typed Workflow, or a
 * WorkflowError listing every problem as `file:line:col: message`.
 */
export { loadWorkflow, loadSimpleWorkflow } from "./load-workflow.js";
export { parseWorkflow, type ParseOptions } from "./parse-workflow.js";
export { DEFAULT_BACKOFF, type Workflow, type WorkflowTask } from "./build-workflow.js";
export { WorkflowError, formatProblem, type WorkflowProblem } from "./workflow-error.js";
export { parseDuration, DURATION_PATTERN } from "./duration.js";
export { workflowJsonSchema, renderWorkflowJsonSchema, writeWorkflowJsonSchema, WORKFLOW_SCHEMA_FILE } from "./json-schema.js";
export {
  workflowFileSchema,
  taskSchema,
  defaultsSchema,
  TASK_ID_PATTERN,
  ENV_NAME_PATTERN,
  TASK_TYPES,
  PRIORITIES,
  type WorkflowFile,
  type TaskFile,
  type TaskDefaults,
} from "./schema.js";
export { MAX_FILE_BYTES, MAX_TASKS, MAX_NESTING_DEPTH, MAX_ALIAS_EXPANSION, MAX_DURATION_MS, MAX_CONCURRENCY, MAX_RETRIES } from "./limits.js";
