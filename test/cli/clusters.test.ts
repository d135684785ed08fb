import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eachCluster } from "../../src/cli/render/clusters.js";
import { terminalSafe } from "../../src/cli/render/control-bytes.js";
import textWidth from "../../src/cli/render/text-width.js";
import { bestOfAlternating } from "../helpers/timing.js";

const segmenter = new Intl.Segmenter();
const bySegmenter = (text: string): string[] => Array.from(segmenter.segment(text), ({ segment }) => segment);
const byClusters = (text: string): string[] => {
  const clusters: string[] = [];
  eachCluster(text, (cluster) => clusters.push(cluster));
  return clusters;
};

describe("a line's characters as a terminal places them", () => {
  // Some 26-30 s at load 13-18 on two cores, the default limit: given 120 s.
  it("are the clusters Intl.Segmenter gives, for every character of the BMP, next to others and next to characters that join", () => {
    // Every character next to the one before and after it in order, and in reverse order: where neither may join, a boundary.
    let inOrder = "";
    for (let point = 0x20; point < 0x10000; point++) if (point < 0xd800 || point >= 0xe000) inOrder += String.fromCharCode(point);
    for (const text of [inOrder, [...inOrder].reverse().join("")]) expect(byClusters(text)).toEqual(bySegmenter(text));
    // A mark after each and a prepended sign before each: the character with them.
    const partners = ["\u0301", "\u0600"];
    // Each partner before and after every character, in one text per partner and block of 4,096 characters.
    for (const partner of partners) {
      for (let block = 0x20; block < 0x10000; block += 0x1000) {
        let text = "";
        for (let point = block; point < Math.min(block + 0x1000, 0x10000); point++) {
          if (point < 0xd800 || point >= 0xe000) text += `${partner}${String.fromCharCode(point)}${partner}x`;
        }
        const expected = bySegmenter(text);
        const clusters = byClusters(text);
        const differs = clusters.findIndex((cluster, index) => cluster !== expected[index]);
        if (differs !== -1 || clusters.length !== expected.length) expect([partner, clusters.slice(differs - 3, differs + 3)]).toEqual([partner, expected.slice(differs - 3, differs + 3)]);
      }
    }
  }, 120_000);

  it("are the clusters Intl.Segmenter gives for any text of emoji, flags, skin tones, accents, jamo, Indic and Thai", () => {
    const unit = fc.constantFrom(
      "a", " ", "1", "#", "é", "e", "\u0301", "\u0308", "\ufe0f", "\u20e3", "\u200d", "\u200c", "\u{1f44d}", "\u{1f3fb}", "\u{1f1eb}", "\u{1f1f7}",
      "\u2764", "\u26a7", "\u{1f3f3}", "\u{1f468}", "\u1100", "\u1161", "\u11a8", "\uac00", "\uac01", "\ud7b0", "\u0915", "\u094d", "\u0937",
      "\u0e01", "\u0e33", "\u0600", "\u0d4e", "\uff76", "\uff9e", "日", "█", "⠋", "\u{e0067}", "\u{e007f}", "\u00ad",
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 40 }), (units) => {
        const text = units.join("");
        expect(byClusters(text)).toEqual(bySegmenter(text));
      }),
      { numRuns: 3000 },
    );
  });

  it("are remembered for short stretches only: lines of emoji each written once are not kept", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const emoji = ["\u{1f600}", "\u{1f602}", "\u{1f44d}", "\u{1f3fb}", "\u{1f7e9}"];
    let seed = 1;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const lines = Array.from({ length: 200 }, () => Array.from({ length: 2000 }, () => emoji[next() % emoji.length]).join(""));
    expect(new Set(lines).size).toBe(200);
    gc();
    const before = process.memoryUsage().heapUsed;
    let clusters = 0;
    for (const line of lines) eachCluster(line, () => clusters++);
    gc();
    expect(clusters).toBeGreaterThan(200 * 1000);
    // Each line's clusters kept, as before: some 11 MB here (more where each stretch is a slice that keeps its whole line).
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(3_000_000);
  });

  it("work out a progress line in text where characters may join in a fraction of the segmenter's time, as it shows", () => {
    const line = Array.from({ length: 300 }, (_, index) => `\r⠋ \u{1f44d}\u{1f3fb} step ${index}`).join("");
    const shown = terminalSafe(line, textWidth);
    expect(shown).toBe("⠋ \u{1f44d}\u{1f3fb} step 299");
    // Side by side with an ASCII line as long, rewritten as often, the best of five runs each, alternating: about 3x here,
    // some 20x when the segmenter was asked about every character of it.
    const ascii = Array.from({ length: 300 }, (_, index) => `\r-- :+1::: step ${index}`).join("");
    const [lineMs, asciiMs] = bestOfAlternating(20, () => terminalSafe(line, textWidth), () => terminalSafe(ascii, textWidth));
    expect(lineMs).toBeLessThan(8 * asciiMs);
  });
});
