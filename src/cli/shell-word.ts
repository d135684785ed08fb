import { CONTROLS, escapeControls } from "../escape-controls.js";

/** `name` as a shell reads it back: quoted where it holds more than letters, digits and `/._-+:@%,=`. */
export function shellWord(name: string): string {
  if (/^[\w/.+:@%,=-]+$/.test(name)) return name;
  // A control character (or a bidi one) as bash's $'...' writes it: pasted, it names the same file,
  // where the message's own escapes (\u001b) in '...' would name another.
  // Each as its UTF-8 bytes (\xHH): bash reads \uXXXX by the locale, and under LC_ALL=C leaves it as text.
  if (escapeControls(name) !== name) return `$'${name.replace(/[\\']/g, "\\$&").replace(CONTROLS, (character) => [...Buffer.from(character)].map((byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join(""))}'`;
  return `'${name.replace(/'/g, "'\\''")}'`;
}
