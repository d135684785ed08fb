import { escapeControls } from "../escape-controls.js";

/**
 * Text from a workflow file (a command, a note quoting a folder) on one line of one column,
 * safe to print to a terminal: a `run: |` block's last line break dropped, line breaks and
 * tabs written as `\n`, `\r`, `\t`, every other control character as `\u001b` (as validate
 * quotes a value): C0 controls, DEL, the C1 controls U+0080 to U+009F (a terminal may obey
 * them too) and the Unicode line separators. A workflow from an untrusted pull request then
 * cannot ring the bell, clear the screen or rewrite a line of `list` or `--dry-run`.
 */
export function oneLine(text: string): string {
  return escapeControls(text.replace(/\n$/, ""));
}
