/**
 * How many problems an invalid workflow's list holds, as its verdict says it ("1 problem",
 * "10 problems, and more YAML errors after them"): the line that says YAML errors were cut
 * short (see read-yaml.ts) is not one of them.
 */
export function problemCount(problems: readonly unknown[]): string {
  const cut = problems.some(isCutShort);
  const listed = problems.length - (cut ? 1 : 0);
  return `${listed === 1 ? "1 problem" : `${listed} problems`}${cut ? ", and more YAML errors after them" : ""}`;
}

/** Whether `problem` is the line that says YAML errors were cut short (see read-yaml.ts), which is none of them. */
function isCutShort(problem: unknown): boolean {
  return /^\.\.\. and up to \d+ more YAML errors/.test((problem as { message?: string }).message ?? "");
}

/** The most problems of one file printed as text: past them, a run of one mistake made many times would bury the count. */
export const MAX_PRINTED_PROBLEMS = 50;

/**
 * The lines of an invalid workflow's problems (its error's message: one file:line:col line each)
 * as text prints them: the first MAX_PRINTED_PROBLEMS, then how many more there are, which
 * `--output json` lists every one of. The verdict after them still counts them all.
 */
export function printedProblems(message: string, problems: readonly unknown[]): string {
  const lines = message.split("\n");
  if (lines.length <= MAX_PRINTED_PROBLEMS) return message;
  // Counted from the problems (a line each, in order), not their lines' text: a value quoted in one may read as the line that says YAML errors were cut short.
  const more = problems.slice(MAX_PRINTED_PROBLEMS).filter((problem) => !isCutShort(problem)).length;
  return [...lines.slice(0, MAX_PRINTED_PROBLEMS), `... and ${more} more problem${more === 1 ? "" : "s"} (--output json lists every one)`].join("\n");
}
