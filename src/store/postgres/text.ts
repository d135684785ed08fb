import type { Outcome } from "./types.js";

/** A UTF-16 surrogate without its other half: jsonb refuses it (as `\ud800`), and UTF-8 cannot encode it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text PostgreSQL accepts. Its `text` cannot hold NUL: one NUL fails the whole statement
 * ("invalid byte sequence for encoding "UTF8": 0x00"), so a task that printed one could
 * never have its attempt recorded. NUL and lone surrogates become U+FFFD, as bytes of
 * output that are not UTF-8 already do.
 */
export function storableText(text: string): string {
  return text.replaceAll("\0", "\uFFFD").replace(LONE_SURROGATE, "\uFFFD");
}

function storableLines(lines: string[] | undefined): string[] | undefined {
  return lines?.map(storableText);
}

function storableOrNull<T extends string | null | undefined>(text: T): T {
  return (typeof text === "string" ? storableText(text) : text) as T;
}

/**
 * An attempt's outcome as stored: its text (last lines of output, error message, signal,
 * cancel reason) comes from the task and may hold anything.
 */
export function storableOutcome<T extends Outcome>(outcome: T): T {
  const clean: Outcome =
    outcome.kind === "failure"
      ? { ...outcome, error: storableText(outcome.error), signal: storableOrNull(outcome.signal), tail: storableLines(outcome.tail) }
      : outcome.kind === "cancelled"
        ? { ...outcome, reason: storableOrNull(outcome.reason), tail: storableLines(outcome.tail) }
        : { ...outcome, tail: storableLines(outcome.tail) };
  return clean as T;
}
