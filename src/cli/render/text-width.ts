import stringWidth from "string-width";

/**
 * Text of printable ASCII and the board's own symbols only (its spinner's braille, ▶ ✓ ✗ ↻ ⏲ … ·):
 * each of them one column, none a mark that joins the one before, nor one that starts an emoji.
 */
const ONE_COLUMN_EACH = /^[\x20-\x7e\u00b7\u2026\u21bb\u23f2\u25b6\u2713\u2717\u2800-\u28ff]*$/;

/**
 * The columns `text` takes on a terminal, as string-width counts them, but without it for the
 * board's own lines: its first look at a character outside ASCII compiles its emoji pattern
 * (\p{RGI_Emoji}), which took 0.1 s of CPU on an idle machine and 0.4-0.6 s on a loaded one, before
 * the first frame of a run of one `echo` was drawn, and each line with a ▶ went through it again.
 * ora counts a frame's rows with this too (the bundle gives it this module for string-width).
 */
export default function textWidth(text: string): number {
  return ONE_COLUMN_EACH.test(text) ? text.length : stringWidth(text);
}
