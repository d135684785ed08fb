import { MAX_DURATION_MS } from "./limits.js";

/** Text form of a duration: units in order d, h, m, s, ms, each at most once, each number whole or decimal (`1.5s`); or a plain number of seconds. */
export const DURATION_PATTERN = /^(?:(?=\d)(?:(\d+(?:\.\d+)?)d)?(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?|\d+(?:\.\d+)?)$/;

/** The forms a duration is written in, for messages that add its range. */
export const DURATION_FORMS = "a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds";

/** What a duration must look like; used in every duration error message but a timeout's, which cannot be 0. */
export const DURATION_EXPECTED = `${DURATION_FORMS}, from 0 to 30 days`;

const UNIT_MS = [86_400_000, 3_600_000, 60_000, 1000, 1] as const;

/**
 * Parses a duration into whole milliseconds (rounded): `250ms`, `30s`, `1.5s`, `5m`, `1h30m`,
 * `2d`, or a non-negative number of seconds (`1.5` is 1500 ms). Returns undefined for
 * anything else, including negatives, NaN, Infinity and values over 30 days.
 */
export function parseDuration(value: string | number): number | undefined {
  let ms: number;
  if (typeof value === "number") {
    if (!(value >= 0)) return undefined;
    ms = Math.round(value * 1000);
  } else {
    const match = DURATION_PATTERN.exec(value);
    if (match === null) return undefined;
    if (match.slice(1).every((part) => part === undefined)) {
      ms = Math.round(Number(value) * 1000);
    } else {
      ms = Math.round(UNIT_MS.reduce((total, unit, index) => total + Number(match[index + 1] ?? 0) * unit, 0));
    }
  }
  // Also rejects NaN and Infinity: comparisons with them are false.
  return ms >= 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}
