/**
 * How many problems an invalid workflow's list holds, as its verdict says it ("1 problem",
 * "10 problems, and more YAML errors after them"): the line that says YAML errors were cut
 * short (see read-yaml.ts) is not one of them.
 */
export function problemCount(problems: readonly unknown[]): string {
  const cut = problems.some((problem) => /^\.\.\. and up to \d+ more YAML errors/.test((problem as { message?: string }).message ?? ""));
  const listed = problems.length - (cut ? 1 : 0);
  return `${listed === 1 ? "1 problem" : `${listed} problems`}${cut ? ", and more YAML errors after them" : ""}`;
}
