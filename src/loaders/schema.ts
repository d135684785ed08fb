import { z } from "zod";
import { DURATION_EXPECTED, DURATION_PATTERN, parseDuration } from "./duration.js";
import { MAX_CONCURRENCY, MAX_DURATION_MS, MAX_RETRIES } from "./limits.js";

/**
 * The workflow file format, as zod schemas: the single source of truth for
 * validation, for the TypeScript types (z.infer) and for the JSON Schema that
 * editors use (see json-schema.ts). Messages are written to follow a field
 * label, e.g. "`retries` must be ...".
 */

/** Task ids: letters, digits, `_ . -`, not starting with `.` or `-`, at most 128 characters; never `/`, so log file names stay inside their folder. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** Environment variable names accepted in `env`: the portable POSIX form. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Task types with a handler. */
export const TASK_TYPES = ["shell"] as const;

/** Priorities, lowest first. */
export const PRIORITIES = ["low", "normal", "high", "critical"] as const;

const durationText = `must be ${DURATION_EXPECTED}`;

/** An integer from `min` to `max`, with the same message for every way to miss. */
function integerFrom(min: number, max: number) {
  const text = `must be an integer from ${min} to ${max}`;
  return z.int({ error: text }).min(min, text).max(max, text);
}

/** A duration (text or seconds), parsed to milliseconds. */
const durationSchema = z
  .union(
    [
      z
        .string()
        .regex(DURATION_PATTERN, { message: durationText, abort: true })
        .refine((text) => parseDuration(text) !== undefined, durationText),
      z.number({ error: durationText }).min(0, durationText).max(MAX_DURATION_MS / 1000, durationText),
    ],
    { error: durationText },
  )
  .transform((value) => parseDuration(value) ?? 0);

const runAtText = "must be an ISO 8601 date-time with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00";
const envValueText = 'must be a string, an integer or true/false (quote other values, e.g. "1.10", which YAML would read as 1.1)';
const retryOnText = "must be a list of exit codes, integers from 1 to 255";

/** Environment variables; integers and booleans become strings, other values are rejected (YAML would alter them). */
const envSchema = z
  .record(
    z.string().regex(ENV_NAME_PATTERN, `names must match ${ENV_NAME_PATTERN.source}`),
    z.union([z.string(), z.int(), z.boolean()], { error: envValueText }).transform(String),
    { error: "must be a mapping of variable names to values" },
  )
  .describe("Environment variables for the command");

const noRunAtWithDelay = (options: { runAt?: unknown; delay?: unknown }): boolean => options.runAt === undefined || options.delay === undefined;
const noRunAtWithDelayMessage = { message: "cannot be set together with `runAt`; keep one", path: ["delay"] };

/** Every task field that `defaults` may also set. */
const taskOptionsShape = {
  type: z.enum(TASK_TYPES, { error: `must be one of: ${TASK_TYPES.join(", ")}` }).optional().describe("Handler that runs the task (default shell)"),
  priority: z.enum(PRIORITIES, { error: `must be one of: ${PRIORITIES.join(", ")}` }).optional().describe("Scheduling priority (default normal)"),
  retries: integerFrom(0, MAX_RETRIES).optional().describe("Extra attempts after the first (default 0)"),
  retryOn: z
    .array(z.int({ error: retryOnText }).min(1, retryOnText).max(255, retryOnText), { error: retryOnText })
    .min(1, "must list at least one exit code (leave it out to retry any failure)")
    .optional()
    .describe("Only these exit codes are retried"),
  backoff: z
    .strictObject(
      { base: durationSchema.optional().describe("First retry delay (default 1s)"), max: durationSchema.optional().describe("Longest retry delay (default 30s)") },
      { error: "must be a mapping with `base` and/or `max`" },
    )
    .refine((backoff) => backoff.base === undefined || backoff.max === undefined || backoff.max >= backoff.base, {
      message: "must not be shorter than `backoff.base`",
      path: ["max"],
    })
    .optional()
    .describe("Exponential backoff between attempts, with full jitter"),
  timeout: durationSchema.refine((ms) => ms > 0, "must be longer than 0").optional().describe("Time limit per attempt"),
  runAt: z.iso.datetime({ offset: true, error: runAtText }).optional().describe("Do not start before this time"),
  delay: durationSchema.optional().describe("Do not start before this long after the workflow starts"),
  env: envSchema.optional(),
  cwd: z
    .string({ error: "must be a folder path, relative to the workflow file" })
    .min(1, "must not be empty")
    .refine((cwd) => !cwd.includes("\0"), "must not contain a NUL character")
    .optional()
    .describe("Working directory, relative to the workflow file's folder"),
};

const dependencyText = "must be a task id or a list of task ids";
const taskReference = z.string({ error: dependencyText }).min(1, dependencyText);

/** One task of the `tasks` mapping (its id is the key). */
export const taskSchema = z
  .strictObject(
    {
      run: z
        .string({ error: "must be a non-empty command string" })
        .regex(/\S/, "must be a non-empty command string")
        .describe("Shell command to run"),
      dependsOn: z.union([taskReference, z.array(taskReference, { error: dependencyText })], { error: dependencyText }).optional().describe("Tasks that must succeed first"),
      ...taskOptionsShape,
    },
    { error: "must be a mapping with at least `run`" },
  )
  .refine(noRunAtWithDelay, noRunAtWithDelayMessage);

/** The `defaults` block: any task field except `run` and `dependsOn`; each task's own value wins. */
export const defaultsSchema = z
  .strictObject(taskOptionsShape, { error: "must be a mapping of task fields" })
  .refine(noRunAtWithDelay, noRunAtWithDelayMessage)
  .describe("Values for every task; a task's own value wins");

/** The top-level fields other than `tasks`, which the loader validates entry by entry. */
export const workflowHeaderSchema = z.strictObject({
  name: z.string({ error: "must be a string" }).min(1, "must not be empty").optional().describe("Workflow name"),
  concurrency: integerFrom(1, MAX_CONCURRENCY).optional().describe("Most tasks running at once"),
  env: envSchema.optional(),
  defaults: defaultsSchema.optional(),
});

/** A whole workflow file. */
export const workflowFileSchema = workflowHeaderSchema
  .extend({
    tasks: z
      .record(z.string().regex(TASK_ID_PATTERN), taskSchema)
      .describe("Tasks by id; ids match " + TASK_ID_PATTERN.source + " (not . or ..)"),
  })
  .meta({ title: "taskq workflow", description: "A DAG of shell tasks run by `taskq run`" });

/** A task as written in the file, after validation (durations in ms). */
export type TaskFile = z.output<typeof taskSchema>;
/** The `defaults` block after validation. */
export type TaskDefaults = z.output<typeof defaultsSchema>;
/** A workflow file as written, after validation. */
export type WorkflowFile = z.output<typeof workflowFileSchema>;
