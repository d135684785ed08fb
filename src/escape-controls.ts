/**
 * `text` with its control characters written out, safe on one line of a terminal: line breaks
 * and tabs as `\n`, `\r`, `\t`, every other control character as `\u001b` (as validate quotes a
 * value): C0 controls, DEL, the C1 controls U+0080 to U+009F (a terminal may obey them too), the
 * Unicode line separators, and the bidirectional embeddings, overrides and isolates (U+202A to
 * U+202E, U+2066 to U+2069), which make a terminal that orders text both ways (VTE) show what
 * follows them reversed or moved ("Trojan Source"). For what taskq prints of a file's text or a path it was given.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, escaped);
}

/** Every character escapeControls writes out (global: reset `lastIndex`, or use it with `replace`). */
export const CONTROLS = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

function escaped(character: string): string {
  if (character === "\n") return "\\n";
  if (character === "\t") return "\\t";
  if (character === "\r") return "\\r";
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * `text`'s lines, each with its control characters written out (see escapeControls): for a message
 * of several lines (one per problem) whose parts name paths and files taskq was given, which may
 * hold an escape that would clear the screen, or a bidi override that would reverse the line.
 * Already escaped text is left as it is.
 */
export function escapeControlsInLines(text: string): string {
  return text.split("\n").map(escapeControls).join("\n");
}
