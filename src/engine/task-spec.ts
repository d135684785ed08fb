import { shown, TaskqError } from "../errors.js";
import { backoffFunctionProblem } from "./backoff.js";
import { UnknownDependencyError } from "./errors.js";
import { PRIORITY_RANK, TaskRecord } from "./task-record.js";
import type { TaskSpec } from "./types.js";

/** Shared by every task without dependencies: one allocation less per submit. */
const NO_DEPENDENCIES: TaskRecord[] = [];

/** The fields of a TaskSpec: a misspelt one (`dependOn`) would otherwise be ignored, and the task run without it. */
/** The latest time a Date holds (ECMAScript's time values): 275,760 years after 1970. */
const MAX_TIME_MS = 8.64e15;

const SPEC_FIELDS: ReadonlySet<string> = new Set<keyof TaskSpec>(["id", "type", "payload", "priority", "maxAttempts", "timeoutMs", "runAt", "dependsOn", "backoff"]);

/** What a workflow file's field is called here. */
const WORKFLOW_FIELDS: Readonly<Record<string, string>> = {
  retries: "maxAttempts (attempts in all, the first included)",
  timeout: "timeoutMs",
  delay: "runAt (epoch ms or a Date)",
};

/**
 * How a task's errors name it: `task "a"`, or, for a spec without an id, by its type (see Queue.submit): the id it
 * would have been given (`task-1`) is not taken by a refused spec, and named the next task submitted.
 */
export function taskName(id: string, type?: unknown): string {
  return type === undefined ? `task "${id}"` : `a task of type ${JSON.stringify(type)} (no id given)`;
}

/** A validated record for `spec`; throws INVALID_TASK naming the field that is wrong. */
export function createRecord(id: string, spec: TaskSpec<unknown>, seq: number, defaultMaxAttempts: number, name = taskName(id)): TaskRecord {
  for (const field in spec) {
    if (SPEC_FIELDS.has(field)) continue;
    const hint = Object.hasOwn(WORKFLOW_FIELDS, field) ? `: a task's field here is ${WORKFLOW_FIELDS[field]}` : `: the fields are ${[...SPEC_FIELDS].join(", ")}`;
    throw new TaskqError("INVALID_TASK", `${name}: unknown field ${JSON.stringify(field)}${hint}`);
  }
  const priority = spec.priority ?? "normal";
  // hasOwn, so "toString" and friends from the prototype are not priorities; a string, as a key of ["high"] would be "high".
  const rank = typeof priority === "string" && Object.hasOwn(PRIORITY_RANK, priority) ? PRIORITY_RANK[priority] : undefined;
  if (rank === undefined) {
    const names = Object.keys(PRIORITY_RANK).join(", ");
    // A number (the Go design's priorities are numbers) quoted as "3" would read as a string.
    const message = typeof priority === "string" ? `unknown priority ${JSON.stringify(priority)}: the priorities are ${names}` : `priority must be one of ${names}, got ${shown(priority)}`;
    throw new TaskqError("INVALID_TASK", `${name}: ${message}`);
  }
  const maxAttempts = orDefault(spec.maxAttempts, defaultMaxAttempts);
  if (!Number.isInteger(maxAttempts)) {
    throw new TaskqError("INVALID_TASK", `${name}: maxAttempts must be an integer (0 or less, or none, for the queue's default), got ${shown(maxAttempts)}`);
  }
  const timeoutMs = spec.timeoutMs ?? 0;
  // Infinity is not negative: "must be a non-negative number, got Infinity" said nothing of what to give.
  if (timeoutMs === Infinity) {
    throw new TaskqError("INVALID_TASK", `${name}: timeoutMs must be a finite number of ms, got Infinity: for no time limit, give 0 or leave it out`);
  }
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw new TaskqError("INVALID_TASK", `${name}: timeoutMs must be a non-negative number, got ${shown(timeoutMs)}`);
  }
  // A number here would be called when the first attempt fails, and fail the task then.
  if (spec.backoff !== undefined && spec.backoff !== null && typeof spec.backoff !== "function") {
    throw new TaskqError("INVALID_TASK", `${name}: backoff must be a function (attempt) => ms, such as exponentialBackoff(), got ${shown(spec.backoff)}`);
  }
  const backoffProblem = spec.backoff === undefined || spec.backoff === null ? undefined : backoffFunctionProblem(spec.backoff);
  if (backoffProblem !== undefined) throw new TaskqError("INVALID_TASK", `${name}: backoff ${backoffProblem}`);
  const date = dateTime(spec.runAt);
  const runAt = date ?? spec.runAt ?? 0;
  // Infinity would wait forever, and a drain with it.
  // A Date holds no time past ±8.64e15 ms: a number beyond it (1e300) is no time either, and would wait for ever as Infinity would.
  if (typeof runAt !== "number" || !Number.isFinite(runAt) || Math.abs(runAt) > MAX_TIME_MS) {
    const given = date !== undefined ? "an invalid Date" : shown(runAt);
    throw new TaskqError("INVALID_TASK", `${name}: runAt is not a valid time (epoch ms or a Date), got ${given}`);
  }
  // A delay (runAt: 60_000 for "in a minute") or a Unix timestamp in seconds reads as a time in
  // 1970, long past: the task would run at once. Not while a clock set back there (fake timers) makes it one.
  if (date === undefined && runAt > 0 && runAt < EPOCH_LIKE_MS && Date.now() >= EPOCH_LIKE_MS) {
    const when = new Date(runAt).toISOString();
    throw new TaskqError("INVALID_TASK", `${name}: runAt is a time in ms since the epoch, and ${runAt} is ${when}: for a delay, pass Date.now() + ${runAt}; for seconds since the epoch, ${runAt} * 1000`);
  }
  // A number before 1970 is no time a program means (a delay of the wrong sign, a difference taken the wrong way round): it would run at once. A Date of then is taken.
  if (date === undefined && runAt < 0 && Date.now() >= EPOCH_LIKE_MS) {
    throw new TaskqError("INVALID_TASK", `${name}: runAt is a time in ms since the epoch, and ${runAt} is ${new Date(runAt).toISOString()}, before 1970: pass a time (Date.now() + a delay in ms) or a Date`);
  }
  return new TaskRecord(id, spec.type, spec.payload, rank, maxAttempts, timeoutMs, seq, runAt, spec.backoff ?? undefined);
}

/** 10^12 ms, 31.7 years: a number of ms this large is a time (any since 2001), and a time smaller than it a duration meant. */
export const EPOCH_LIKE_MS = 1e12;

/**
 * The time of a Date (NaN for an invalid one), or undefined for what is not a Date. A Date of
 * another realm (a vm context, an iframe) is one too, which `instanceof Date` would refuse.
 */
export function dateTime(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value !== "object" || value === null) return undefined;
  try {
    return Date.prototype.getTime.call(value);
  } catch {
    return undefined; // not a Date: getTime reads a slot only Dates have
  }
}

/**
 * `value`, or `fallback` when it is unset: absent, or an integer of 0 or less, as the Go
 * design's `if spec.MaxAttempts <= 0 { spec.MaxAttempts = 3 }` reads a zero value. A
 * fraction or NaN is returned as given, for the caller to refuse.
 */
export function orDefault(value: number | null | undefined, fallback: number): number {
  return value === undefined || value === null || (Number.isInteger(value) && value <= 0) ? fallback : value;
}

/** The records of `dependsOn` (duplicates once); throws UnknownDependencyError for an id not held (never submitted, or forgotten). */
export function resolveDependencies(tasks: { get(id: string): TaskRecord | undefined; readonly forgotAny?: boolean }, id: string, dependsOn: readonly string[] | null | undefined, name = taskName(id)): TaskRecord[] {
  if (dependsOn === undefined || dependsOn === null) return NO_DEPENDENCIES;
  // A string would be read a character at a time.
  const given: unknown = dependsOn;
  // Shown as other fields' values are: "got string" named neither the value nor the fix, and "got object" an object's keys.
  if (!Array.isArray(given)) {
    const hint = typeof given === "string" ? `: for one dependency, pass [${JSON.stringify(given)}]` : given instanceof Set ? ": pass [...set]" : "";
    throw new TaskqError("INVALID_TASK", `${name}: dependsOn must be an array of task ids, got ${given instanceof Set ? "a Set" : shown(given)}${hint}`);
  }
  if (dependsOn.length === 0) return NO_DEPENDENCIES;
  const found: TaskRecord[] = [];
  for (const dependencyId of new Set(dependsOn)) {
    const dependency = tasks.get(dependencyId);
    if (dependency === undefined) throw unknownDependency(id, dependencyId, name, tasks.forgotAny === true);
    found.push(dependency);
  }
  return found;
}

/**
 * An id not found. One that is not a string (from JavaScript: ids read from JSON as numbers)
 * is said to be no id, not a task never submitted: `dependsOn: [5]` would say "5" was not
 * submitted when the task "5" was.
 */
function unknownDependency(id: string, dependencyId: unknown, name: string, forgotAny: boolean): TaskqError {
  if (typeof dependencyId === "string") return new UnknownDependencyError(id, dependencyId, name, forgotAny);
  const scalar = typeof dependencyId === "number" || typeof dependencyId === "bigint" || typeof dependencyId === "boolean";
  const hint = scalar ? ` (${JSON.stringify(String(dependencyId))})` : "";
  return new TaskqError("INVALID_TASK", `${name}: dependsOn lists ${shown(dependencyId)}, which is not a task id: ids are strings${hint}`);
}
