/**
 * `text` as a message quotes it, at most `max` characters (UTF-16 units, as columns are counted): past that, its first
 * `max - 3` and `...`, or with `fromEnd` `...` and its last. An emoji's surrogate pair the cut falls in is left out whole:
 * half of one was printed as U+FFFD and quoted in JSON as `\ud83d`.
 */
export function shortened(text: string, max = 60, fromEnd = false): string {
  if (text.length <= max) return text;
  const kept = max - 3;
  if (fromEnd) {
    const start = text.length - kept;
    return `...${text.slice(/[\uDC00-\uDFFF]/.test(text[start]!) && /[\uD800-\uDBFF]/.test(text[start - 1]!) ? start + 1 : start)}`;
  }
  return `${text.slice(0, /[\uD800-\uDBFF]/.test(text[kept - 1]!) && /[\uDC00-\uDFFF]/.test(text[kept]!) ? kept - 1 : kept)}...`;
}
