const ESCAPED = /[\u0080-\u009f\u2028\u2029]/g;
const HAS_ESCAPED = /[\u0080-\u009f\u2028\u2029]/;

/**
 * JSON.stringify's text with the C1 controls (U+0080 to U+009F) escaped too, as `\u009b`:
 * the same value to any JSON reader, but NDJSON read on a terminal (`taskq run --output json`
 * there) cannot have it obey a task's "\u009b2J" (CSI, as UTF-8 C2 9B: xterm.js, VS Code's
 * terminal, clears the screen), as JSON's own escapes already keep it from obeying ESC. So are
 * U+2028 and U+2029 (LINE and PARAGRAPH SEPARATOR), which JSON leaves raw but Python's
 * `splitlines()` and other Unicode-aware readers take as line breaks: one record would be two lines.
 */
export function toJson(value: unknown): string {
  const text = JSON.stringify(value);
  return HAS_ESCAPED.test(text) ? text.replace(ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) : text;
}
