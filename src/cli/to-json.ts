const C1 = /[\u0080-\u009f]/g;
const HAS_C1 = /[\u0080-\u009f]/;

/**
 * JSON.stringify's text with the C1 controls (U+0080 to U+009F) escaped too, as `\u009b`:
 * the same value to any JSON reader, but NDJSON read on a terminal (`taskq run --output json`
 * there) cannot have it obey a task's "\u009b2J" (CSI, as UTF-8 C2 9B: xterm.js, VS Code's
 * terminal, clears the screen), as JSON's own escapes already keep it from obeying ESC.
 */
export function toJson(value: unknown): string {
  const text = JSON.stringify(value);
  return HAS_C1.test(text) ? text.replace(C1, (c) => `\\u00${c.charCodeAt(0).toString(16)}`) : text;
}
