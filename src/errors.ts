import { shortened } from "./shorten.js";

/**
 * Every error taskq throws is a TaskqError with a stable string `code`.
 * Branch on `code` (or `instanceof`), never on message text.
 */
export class TaskqError extends Error {
  readonly code: string;
  /**
   * The process exit code the CLI uses when this error ends a command, where one was given;
   * the CLI exits 1 on an error without one. The library's own errors (the engine's, a task's)
   * carry none: a `{ exitCode: 1 }` on a task's error read as how its command ended.
   */
  declare readonly exitCode?: number;

  constructor(code: string, message: string, options: { cause?: unknown; exitCode?: number | undefined } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    // Set only when given: a field declared with a value would be an own `exitCode: undefined`.
    if (options.exitCode !== undefined) this.exitCode = options.exitCode;
  }
}

/** A failure that retrying cannot fix (bad input, command not found): never retried. */
export class PermanentError extends TaskqError {
  readonly permanent = true as const;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super("PERMANENT", message, options);
  }
}

/** How deep isPermanent looks through causes: a chain that loops back ends here. */
const CAUSE_DEPTH = 32;

/**
 * True for a PermanentError, or any error object carrying `permanent: true`, or one wrapping
 * such an error as its `cause` (`new Error("step failed", { cause })`), as Go's errors.As
 * unwraps an error wrapped with %w. An error that sets `permanent` itself, true or false,
 * decides for the errors it wraps. Never throws: a handler may throw an object whose
 * `permanent` getter throws (or a Proxy), which is not marked.
 */
export function isPermanent(error: unknown): boolean {
  try {
    let current = error;
    for (let depth = 0; depth < CAUSE_DEPTH && typeof current === "object" && current !== null; depth++) {
      const { permanent, cause } = current as { permanent?: unknown; cause?: unknown };
      if (permanent !== undefined) return permanent === true;
      current = cause;
    }
    return false;
  } catch {
    return false;
  }
}

/**
 * A thrown value as text for a message (an Error's message, else String(value)). Never throws:
 * String() does for an object without a prototype or with a throwing toString, and a handler
 * may throw anything.
 */
export function messageOf(value: unknown): string {
  try {
    return value instanceof Error ? String(value.message) : String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return "(a value that cannot be shown)";
    }
  }
}

/**
 * A value as a message shows it: a string quoted, so `"50"` is not taken for the number 50
 * (JavaScript callers, whom the types do not hold back, pass either).
 */
export function shown(value: unknown): string {
  if (typeof value === "string") return `${JSON.stringify(value)} (a string)`;
  if (typeof value === "function") return "a function";
  // Not "5", which reads as the number 5 that the message asks for: "timeoutMs must be a non-negative number, got 5".
  if (typeof value === "bigint") return `${value}n (a bigint)`;
  return (typeof value === "object" && value !== null ? plainShown(value) : undefined) ?? messageOf(value);
}

/**
 * An array, or an object whose text is "[object Object]", by its JSON and what it is: `[] (an array)`,
 * `{"ms":5000} (an object)`. Their text said nothing: "timeoutMs must be a non-negative number, got "
 * for `[]`, "got [object Object]" for `{ ms: 5000 }`. Undefined for any other object (a Date, an
 * Error), and for one that throws when read (a revoked Proxy).
 */
function plainShown(value: object): string | undefined {
  try {
    const array = Array.isArray(value);
    if (!array && messageOf(value) !== "[object Object]") return undefined;
    const json = JSON.stringify(value) as string | undefined;
    const what = array ? "an array" : "an object";
    return json === undefined ? what : `${shortened(json, 80)} (${what})`;
  } catch {
    return undefined;
  }
}

/** Bad command-line usage: exit code 2. */
export class UsageError extends TaskqError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("USAGE", message, { ...options, exitCode: 2 });
  }
}
