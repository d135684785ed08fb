import * as z from "zod/mini";
import { tooLongToStart } from "./argument-limit.js";
import { DURATION_EXPECTED, DURATION_FORMS, DURATION_PATTERN, parseDuration } from "./duration.js";
import { formatMs } from "../engine/errors.js";
import { INTEGER_RANGES, MAX_DURATION_MS } from "./limits.js";
import { TASK_ID_PATTERN } from "../task-id.js";

/**
 * The workflow file format, as zod schemas: the single source of truth for
 * validation, for the TypeScript types (z.infer) and for the JSON Schema that
 * editors use (see json-schema.ts). Messages are written to follow a field
 * label, e.g. "`retries` must be ...".
 */

export { TASK_ID_PATTERN };

/** Environment variable names accepted in `env`: the portable POSIX form. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Task types with a handler. */
export const TASK_TYPES = ["shell"] as const;

/** Priorities, lowest first. */
export const PRIORITIES = ["low", "normal", "high", "critical"] as const;

const durationText = `must be ${DURATION_EXPECTED}`;
const timeoutText = `must be ${DURATION_FORMS}, from 1ms to 30 days, or none (no limit)`;
const timeoutZeroText = "must be at least 1ms (a duration is rounded to whole milliseconds)";

/** `timeout: none` and `retryOn: any`: a task's way to be without the limit or the list `defaults` sets. */
const NONE = "none";
const ANY = "any";

/** An integer from `min` to `max`, with the same message for every way to miss. */
function integerFrom(min: number, max: number) {
  const text = `must be an integer from ${min} to ${max}`;
  return z.int({ error: text }).check(z.minimum(min, text), z.maximum(max, text));
}

/** `schema`, optional, with a description for the JSON Schema. */
function optional<T extends z.core.SomeType>(schema: T, description: string) {
  return z.optional(schema).check(z.describe(description));
}

/** A duration (text or seconds) from 0 to 30 days, parsed to milliseconds. */
const durationSchema = z.pipe(
  z.union(
    [
      z.string().check(
        z.regex(DURATION_PATTERN, { message: durationText, abort: true }),
        z.refine((text) => parseDuration(text) !== undefined, durationText),
      ),
      z.number({ error: durationText }).check(z.minimum(0, durationText), z.maximum(MAX_DURATION_MS / 1000, durationText)),
    ],
    { error: durationText },
  ),
  z.transform((value: string | number) => parseDuration(value) ?? 0),
);

/** The fewest seconds that round to 1 ms (Math.round(0.0005 * 1000) is 1): the shortest timeout written as a number. */
const MIN_TIMEOUT_SECONDS = 0.0005;

/**
 * A timeout: a duration from 1ms to 30 days, its messages saying so; or `none` (null after
 * validation), so that a task may run without the limit `defaults.timeout` sets. Zero is refused
 * in ways the JSON Schema says too, so editors flag `timeout: 0` and `0s`: text needs a digit
 * other than 0, a number at least MIN_TIMEOUT_SECONDS. Text under half a millisecond (`0.3ms`),
 * which rounds to 0, only the last check finds: a pattern cannot add up the units.
 */
const timeoutSchema = z.pipe(
  z.union(
    [
      z.literal(NONE, { error: timeoutText }),
      z.string().check(
        z.regex(DURATION_PATTERN, { message: timeoutText, abort: true }),
        z.refine((text) => parseDuration(text) !== undefined, { message: timeoutText, abort: true }),
        z.regex(/[1-9]/, { message: timeoutZeroText, abort: true }),
        z.refine((text) => (parseDuration(text) ?? 0) > 0, timeoutZeroText),
      ),
      z.number({ error: timeoutText }).check(
        z.minimum(0, { message: timeoutText, abort: true }),
        z.maximum(MAX_DURATION_MS / 1000, { message: timeoutText, abort: true }),
        z.minimum(MIN_TIMEOUT_SECONDS, timeoutZeroText),
      ),
    ],
    { error: timeoutText },
  ),
  z.transform((value: string | number) => (value === NONE ? null : (parseDuration(value) ?? 0))),
);

const runAtText = "must be a real date and time, ISO 8601 with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00";
const runAtSchema = z.iso.datetime({ offset: true, error: runAtText });

/** Whether `text` is a `runAt` as the schema takes it. */
export function isRunAt(text: string): boolean {
  return runAtSchema.safeParse(text).success;
}
/**
 * No NUL in a text a process is given (a command, a folder, a variable): the OS cannot take one.
 * A pattern, not a refine, so that the JSON Schema says it too.
 */
// eslint-disable-next-line no-control-regex -- the NUL is the point
const noNul = z.regex(/^[^\x00]*$/, "must not contain a NUL character");

/** A command longer than a process can be given: no attempt of its task could ever start. */
const runFitsOneArgument = z.superRefine((run: string, context) => {
  const tooLong = tooLongToStart(run, "argument");
  if (tooLong !== undefined) context.addIssue({ code: "custom", message: `${tooLong}, so the task could never start: put the command in a script file` });
});

/** Each variable no longer than a process can be given (a refine: the JSON Schema cannot say it). */
const variablesFitOneArgument = z.superRefine((env: Record<string, string>, context) => {
  for (const name of Object.keys(env)) {
    // zod runs this check on a mapping whose other values failed theirs too: those are not text.
    const value: unknown = env[name];
    const tooLong = typeof value === "string" ? tooLongToStart(value, "variable", name) : undefined;
    if (tooLong !== undefined) context.addIssue({ code: "custom", path: [name], message: `${tooLong}, so no task given it could start` });
  }
});

const envValueText = 'must be a string, an integer or true/false (quote other values, e.g. "1.10", which YAML would read as 1.1)';
const [MIN_EXIT_CODE, MAX_EXIT_CODE] = INTEGER_RANGES.retryOn;
const retryOnText = `must be a list of exit codes, integers from ${MIN_EXIT_CODE} to ${MAX_EXIT_CODE}, or any (every failure is retried)`;
/** One item of `retryOn`: it is told apart from the list, as `dependsOn[1]` "must be a task id". */
const exitCodeText = `must be an exit code, an integer from ${MIN_EXIT_CODE} to ${MAX_EXIT_CODE}`;

/**
 * YAML's merge key (`<<: *base`, `<<: [*a, *b]`), which toPlain merges, in the JSON Schema: a
 * tool that checks a file without merging it first sees the key, whose value is a mapping or a
 * list of mappings. One that merges (as yaml-language-server does) never sees it.
 */
const mergeKey = {
  "^<<$": {
    description: "YAML merge key: the keys of this mapping, or of these mappings, that the mapping does not set itself",
    anyOf: [{ type: "object" }, { type: "array", items: { type: "object" } }],
  },
};

/**
 * Keys YAML reads as other than text, which taskq reads as written (`1:` is the task "1", `true:`
 * the variable "true"), in the JSON Schema: an editor that checks a key as YAML types it (as
 * yaml-language-server does) checks `1:` as the number 1, which a string's pattern refuses. A task
 * id written as a number is one not below zero (`-1:` is no id); a variable's name is never a
 * number, but any boolean (`true`, `False`) is one. A number does not say how it was written:
 * `+1:` and `.5:`, which are no ids, are taken too. No key in JSON is other than a string, so a
 * tool that checks the data (Ajv) never uses these; they are `$defs` that `propertyNames` refers
 * to, as Ajv's strict mode (strictTypes) refuses a type other than string written in it.
 */
const keyDefinitions = {
  // YAML's null as a key (`null:`, `NULL:`) is the id or the name as written to taskq; `~:` is one an editor cannot tell from it.
  taskIdKey: { description: "A task id YAML reads as a number, a boolean or null (1:, 1.5:, true:, null:)", anyOf: [{ type: "number", minimum: 0 }, { type: "boolean" }, { type: "null" }] },
  variableNameKey: { description: "A variable name YAML reads as a boolean or null (true:, NULL:)", type: ["boolean", "null"] },
};

/**
 * A mapping of names (task ids, variables) to values, matching `pattern` or written as `keys` (see
 * keyDefinitions), that a merge key may fill too, in the JSON Schema.
 */
function mergeableRecordJson(pattern: RegExp, keys: keyof typeof keyDefinitions) {
  return z.meta({ propertyNames: { anyOf: [{ type: "string", pattern: pattern.source }, { const: "<<" }, { $ref: `#/$defs/${keys}` }] }, patternProperties: mergeKey });
}

/** Environment variables; integers and booleans become strings, other values are rejected (YAML would alter them). */
const envSchema = z
  .record(
    z.string().check(z.regex(ENV_NAME_PATTERN, `names must match ${ENV_NAME_PATTERN.source}`)),
    z
      .pipe(z.union([z.string().check(noNul), z.int(), z.boolean()], { error: envValueText }), z.transform(String)),
    { error: "must be a mapping of variable names to values" },
  )
  .check(variablesFitOneArgument, mergeableRecordJson(ENV_NAME_PATTERN, "variableNameKey"), z.describe("Environment variables for the command"));

const noRunAtWithDelay = (options: { runAt?: unknown; delay?: unknown }): boolean => options.runAt === undefined || options.delay === undefined;
const noRunAtWithDelayMessage = { message: "cannot be set together with `runAt`; keep one", path: ["delay"] };
/**
 * Extension fields (`x-common: &common ...`), which hold YAML anchors for other fields to use
 * (as docker compose's do), in the JSON Schema: taskq ignores them (validate.ts drops them first)
 * in the top level, `defaults` and a task, so `additionalProperties: false` must let them be; and
 * the merge key, which those mappings may hold too.
 */
const extensionFields = { "^x-": {}, ...mergeKey };

/**
 * noRunAtWithDelay in the JSON Schema, which a refine does not reach. The `properties`, which
 * accept any value, declare what `required` names, as Ajv's strict mode (strictRequired) asks.
 */
const noRunAtWithDelayJson = z.meta({ not: { properties: { runAt: true, delay: true }, required: ["runAt", "delay"] }, patternProperties: extensionFields });

/** Every task field that `defaults` may also set. */
const taskOptionsShape = {
  type: optional(z.enum(TASK_TYPES, { error: `must be one of: ${TASK_TYPES.join(", ")}` }), "Handler that runs the task (default shell)"),
  priority: optional(z.enum(PRIORITIES, { error: `must be one of: ${PRIORITIES.join(", ")}` }), "Scheduling priority (default normal)"),
  retries: optional(integerFrom(...INTEGER_RANGES.retries), "Extra attempts after the first (default 0)"),
  retryOn: optional(
    z.union(
      [
        z.pipe(z.literal(ANY, { error: retryOnText }), z.transform(() => null)),
        z
          .array(z.int({ error: exitCodeText }).check(z.minimum(MIN_EXIT_CODE, exitCodeText), z.maximum(MAX_EXIT_CODE, exitCodeText)), { error: retryOnText })
          .check(z.minLength(1, "must list at least one exit code (leave it out, or write any, to retry any failure)")),
      ],
      { error: retryOnText },
    ),
    "Only these exit codes are retried; any: every failure (undoes defaults.retryOn)",
  ),
  backoff: optional(
    z
      .strictObject(
        { base: optional(durationSchema, "First retry delay (default 1s)"), max: optional(durationSchema, "Longest retry delay (default 30s)") },
        { error: "must be a mapping with `base` and/or `max`" },
      )
      .check(
        // Only two durations read as such: zod runs the check after a field's own failed (`max: 40d`, past the range,
        // stays the text), and "40d" >= 1000 is false, which said a max longer than the base was shorter.
        // Both values, each read as a duration (`max: 90` against `base: 2m`: 1m30s, 2m).
        z.refine((backoff) => typeof backoff.base !== "number" || typeof backoff.max !== "number" || backoff.max >= backoff.base, {
          error: (issue) => {
            const { base, max } = issue.input as { base: number; max: number };
            return `must not be shorter than \`backoff.base\` (${formatMs(base)}), got ${formatMs(max)}`;
          },
          path: ["max"],
        }),
        // A merge key, as validate takes one here too (`backoff: { <<: *slow }`).
        z.meta({ patternProperties: mergeKey }),
      ),
    "Exponential backoff between attempts, with full jitter",
  ),
  timeout: optional(timeoutSchema, "Time limit per attempt, from 1ms to 30 days; none: no limit (undoes defaults.timeout)"),
  runAt: optional(runAtSchema, "Do not start before this time: ISO 8601 with a timezone, at most 30 days after the file is read (as delay)"),
  delay: optional(durationSchema, "Do not start before this long after the workflow starts"),
  env: z.optional(envSchema),
  cwd: optional(
    z.string({ error: "must be a folder path, relative to the workflow file" }).check(
      z.minLength(1, "must not be empty"),
      noNul,
    ),
    "Working directory, relative to the workflow file's folder",
  ),
};

const dependencyText = "must be a task id or a list of task ids";
/**
 * A task id, with `text` as the message for anything else; a number or boolean as YAML reads
 * it. toPlain hands over only numbers that String() writes as they were written (`1`, `1.5`;
 * `1.0` comes as the text "1.0"), so any number is taken, as `1.5:` is as a key; an alias may not.
 * The JSON Schema holds a string to the id pattern, so an editor marks `dependsOn: "lint, test"`;
 * validate checks ids later, where it can say which id was meant.
 */
function taskReference(text: string) {
  return z.pipe(
    // A negative number is no id (`-1` is not one): the JSON Schema says so as the task id key's does; validate says which id.
    z.union([z.string().check(z.minLength(1, text), z.meta({ pattern: TASK_ID_PATTERN.source })), z.number().check(z.meta({ minimum: 0 })), z.boolean()], { error: text }),
    z.transform((id: string | number | boolean) => String(id)),
  );
}

/** One item of a `dependsOn` list: it is told apart from the list, as `dependsOn[1]` "must be a task id". */
export const dependencyItemSchema = taskReference("must be a task id");

/** One task of the `tasks` mapping (its id is the key). */
export const taskSchema = z
  .strictObject(
    {
      run: z
        .string({
          // `run: true` (the command) is YAML's boolean: say to quote it, as for an env value.
          error: (issue) =>
            typeof issue.input === "boolean"
              ? `must be a command string (YAML reads an unquoted ${String(issue.input)} as a boolean: write "${String(issue.input)}")`
              : "must be a non-empty command string",
        })
        .check(
          z.regex(/\S/, "must be a non-empty command string"),
          noNul,
          runFitsOneArgument,
          z.describe("Shell command to run"),
        ),
      dependsOn: optional(z.union([taskReference(dependencyText), z.array(dependencyItemSchema, { error: dependencyText })], { error: dependencyText }), "Tasks that must succeed first"),
      ...taskOptionsShape,
    },
    { error: "must be a mapping with at least `run`" },
  )
  .check(z.refine(noRunAtWithDelay, noRunAtWithDelayMessage), noRunAtWithDelayJson);

/** The `defaults` block: any task field except `run` and `dependsOn`; each task's own value wins. */
export const defaultsSchema = z
  .strictObject(taskOptionsShape, { error: "must be a mapping of task fields" })
  .check(z.refine(noRunAtWithDelay, noRunAtWithDelayMessage), noRunAtWithDelayJson, z.describe("Values for every task; a task's own value wins"));

/** The top-level fields other than `tasks`, which the loader validates entry by entry. */
export const workflowHeaderSchema = z.strictObject({
  name: optional(z.string({ error: "must be a string" }).check(z.minLength(1, "must not be empty")), "Workflow name"),
  concurrency: optional(integerFrom(...INTEGER_RANGES.concurrency), "Most tasks running at once"),
  failFast: optional(z.boolean({ error: "must be true or false" }), "Stop the run at the first task that fails for good, as `taskq run --fail-fast` (a local run's only)"),
  env: z.optional(envSchema),
  defaults: z.optional(defaultsSchema),
});

/** A whole workflow file. */
export const workflowFileSchema = z
  .extend(workflowHeaderSchema, {
    tasks: z
      .record(z.string().check(z.regex(TASK_ID_PATTERN)), taskSchema)
      .check(
        z.refine((tasks) => Object.keys(tasks).length > 0, "must define at least one task"),
        // The refine, as the JSON Schema says it (validate.ts reports an empty `tasks` itself).
        z.meta({ minProperties: 1 }),
        mergeableRecordJson(TASK_ID_PATTERN, "taskIdKey"),
        z.describe("Tasks by id, at least one; ids match " + TASK_ID_PATTERN.source + " (not . or ..)"),
      ),
  })
  .check(z.meta({ title: "taskq workflow", description: "A DAG of shell tasks run by `taskq run`", patternProperties: extensionFields, $defs: keyDefinitions }));

/** A task as written in the file, after validation (durations in ms). */
export type TaskFile = z.output<typeof taskSchema>;
/** The `defaults` block after validation. */
export type TaskDefaults = z.output<typeof defaultsSchema>;
/** A workflow file as written, after validation. */
export type WorkflowFile = z.output<typeof workflowFileSchema>;
