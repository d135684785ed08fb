/**
 * Which UTF-16 units may join a cluster with a character next to them, by unit: 0 not yet known, 1 never (a character of its
 * own whatever is around it), 2 may. Filled as units are met: most text uses a few hundred.
 */
const joinsByUnit = new Uint8Array(0x10000);

/**
 * What may make a character one cluster with the one before or after it (Unicode's grapheme cluster rules): a mark (an
 * accent, a variation selector, a virama) and a format character (a zero-width joiner, a prepended sign); the few other
 * extending and spacing marks (Thai and Lao AM, the halfwidth sound marks), Malayalam's dot reph, which is prepended;
 * Hangul jamo and syllables (L, V, T, LV, LVT); and by the units of a surrogate pair, every character past U+FFFF (an
 * emoji, its skin tone, a flag's halves, a tag).
 */
const JOINS = /^[\p{M}\p{Cf}\u0d4e\u0e33\u0eb3\uff9e\uff9f\u1100-\u11ff\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff\ud800-\udfff]$/u;

/** Some character of those in a text (see JOINS): text without any (ASCII, CJK, box drawing, a bar's blocks) is a character per code unit. */
const MAY_JOIN = /[\p{M}\p{Cf}\u0d4e\u0e33\u0eb3\uff9e\uff9f\u1100-\u11ff\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff\ud800-\udfff\u{10000}-\u{10ffff}]/u;

function mayJoin(unit: number): boolean {
  if (unit < 0x300) return false;
  let known = joinsByUnit[unit] as number;
  if (known === 0) joinsByUnit[unit] = known = JOINS.test(String.fromCharCode(unit)) ? 2 : 1;
  return known === 2;
}

let graphemes: Intl.Segmenter | undefined;
/** The clusters of each stretch segmented (see eachCluster): a progress line repeats a few (" 👍🏻 ", "é", a bar of "🟩"). */
const segmented = new Map<string, string[]>();
const SEGMENTED_MOST = 1024;
/**
 * The longest stretch kept there, in code units: a stretch may be a whole line of emoji, and a thousand such lines, each
 * of thousands written once, kept hundreds of megabytes.
 */
const SEGMENTED_LONGEST = 256;

/**
 * Calls `write` with each of `text`'s grapheme clusters, as Intl.Segmenter gives them, but asking it only about the
 * stretches where characters may join (see JOINS): each with the character before it and the one after it, for as long
 * as characters that may join follow. Between two characters that never join, there is always a boundary. The segmenter
 * took about 3 µs a character: a 4 KB progress line of "\r⠋ 👍🏻 step N" 4-8 ms. Text with none that may join (see MAY_JOIN)
 * costs one regular-expression test.
 */
export function eachCluster(text: string, write: (cluster: string) => void): void {
  const length = text.length;
  // Most text (ASCII, CJK, a bar's blocks) holds none that may join: a character per code unit, after one test.
  if (!MAY_JOIN.test(text)) {
    for (let index = 0; index < length; index++) write(text[index] as string);
    return;
  }
  let at = 0;
  while (at < length) {
    if (!mayJoin(text.charCodeAt(at)) && (at + 1 === length || !mayJoin(text.charCodeAt(at + 1)))) {
      write(text[at] as string);
      at++;
      continue;
    }
    let end = at + 1;
    for (;;) {
      while (end < length && mayJoin(text.charCodeAt(end))) end++;
      if (end === length) break;
      end++; // the character after: one that a prepended sign, a Hangul L or a virama joins
      if (end === length || !mayJoin(text.charCodeAt(end))) break;
    }
    const stretch = text.slice(at, end);
    let clusters = segmented.get(stretch);
    if (clusters === undefined) {
      clusters = Array.from((graphemes ??= new Intl.Segmenter()).segment(stretch), ({ segment }) => segment);
      if (stretch.length <= SEGMENTED_LONGEST) {
        if (segmented.size >= SEGMENTED_MOST) segmented.clear();
        segmented.set(stretch, clusters);
      }
    }
    for (const cluster of clusters) write(cluster);
    at = end;
  }
}
