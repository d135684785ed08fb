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
  const ms = durationMs(value);
  // Also rejects NaN and Infinity: comparisons with them are false. `!!int -0` is 0, not -0 (which the engine would keep as such).
  return ms !== undefined && ms >= 0 && ms <= MAX_DURATION_MS ? ms + 0 : undefined;
}

/** What a duration written right but past the range is told, a flag's and a field's alike. */
export const OVER_DURATION_LIMIT = `longer than the maximum of 30 days (${MAX_DURATION_MS / 3_600_000}h)`;

/** Whether `value` is written as a duration, but one longer than any duration may be (`31d`, `721h`, 2600000 seconds). */
export function overDurationLimit(value: string | number): boolean {
  const ms = durationMs(value);
  return ms !== undefined && ms > MAX_DURATION_MS;
}

/** A duration's milliseconds as written, whatever its size; undefined for a text not written as one, or a negative number. */
function durationMs(value: string | number): number | undefined {
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
  return ms;
}

/** The units in the order a duration writes them. */
const UNITS = ["d", "h", "m", "s", "ms"] as const;

/** A unit of a duration. */
export type DurationUnit = (typeof UNITS)[number];

/** The units a duration may have where milliseconds mean nothing (prune's age). */
export const UNITS_BUT_MS: readonly DurationUnit[] = ["d", "h", "m", "s"];

/** Each unit in words, as a hint names it. */
const UNIT_WORDS: Record<"h" | "m" | "s", string> = { h: "hours", m: "minutes", s: "seconds" };

/** Other names of the units (lower-cased), as other tools write them. */
const UNIT_NAMES: Record<string, (typeof UNITS)[number]> = {
  day: "d", days: "d",
  hr: "h", hrs: "h", hour: "h", hours: "h",
  min: "m", mins: "m", minute: "m", minutes: "m",
  sec: "s", secs: "s", second: "s", seconds: "s",
  msec: "ms", msecs: "ms", millisecond: "ms", milliseconds: "ms",
};

/**
 * Why a text that is not a duration is not one, with the duration meant where it can tell
 * (`30s1m`: units go in the order d, h, m, s, ms, each at most once: 1m30s); undefined when it
 * cannot tell, or the text is a duration. `units`: those that may be used, as its words name them.
 */
export function durationMistake(text: string, units: readonly DurationUnit[] = UNITS): string | undefined {
  if (DURATION_PATTERN.test(text)) return undefined;
  const value = text.trim();
  // " 5s" (a space a shell variable slipped in): refused, with the duration meant, by every flag and field alike.
  if (value !== text && DURATION_PATTERN.test(value)) return `write it without spaces: ${value}`;
  if (/^-\s*\d/.test(value)) return "a duration cannot be negative";
  // `.5s`, `1.m`: a point with no digit on one side, which the pattern does not take; `1,5s`: a decimal comma.
  const points = value.replace(/(^|\D)\.(\d)/g, "$10.$2").replace(/(\d)\.(?!\d)/g, "$1");
  if (points !== value && DURATION_PATTERN.test(points)) return `write ${points}: a number's point needs a digit on each side`;
  const comma = value.replace(/(\d),(\d)/g, "$1.$2");
  if (comma !== value && DURATION_PATTERN.test(comma)) return `write ${comma}: a number's decimal mark is a point`;
  const spaced = /\s/.test(text);
  const joined = value.replace(/\s+/g, "");
  // `1m30`, `1h30`: a number without a unit after others, meant in the unit after the one before it (1m30s, 1h30m)
  // where it is fewer than the one before holds (not `1d30`, 30 hours); not after seconds, as `5m30s10` has its seconds already, and 10ms is a guess too far.
  const bare = /^((?:\d+(?:\.\d+)?[A-Za-z]+)+)(\d+(?:\.\d+)?)$/.exec(joined);
  const before = bare === null ? undefined : unitOf(/([A-Za-z]+)$/.exec(bare[1]!)![1]!);
  const next = before === "d" ? "h" : before === "h" ? "m" : before === "m" ? "s" : undefined;
  // Only where that fix is a duration: `1e3` and `0x10` have no unit of theirs either.
  if (bare !== null && next !== undefined && units.includes(next) && DURATION_PATTERN.test(`${bare[1]}${bare[2]}${next}`)) {
    // More of it than the unit before holds (`1d30`: 30 hours, over a day): no unit is likelier than another, and each is named.
    const meant: Array<keyof typeof UNIT_WORDS> = Number(bare[2]) < UNIT_MS[UNITS.indexOf(before!)]! / UNIT_MS[UNITS.indexOf(next)]! ? [next] : (["h", "m", "s"] as const).filter((unit) => UNITS.indexOf(unit) > UNITS.indexOf(before!) && units.includes(unit));
    // Not one past 30 days (`29d30h`, which the next run refuses as too long), where another is within them.
    const within = meant.filter((unit) => parseDuration(`${bare[1]}${bare[2]}${unit}`) !== undefined);
    const choices = within.length > 0 ? within : meant;
    const written = choices.map((unit) => `${bare[1]}${bare[2]}${unit} for ${UNIT_WORDS[unit]}`);
    return choices.length === 1
      ? `the last number, ${bare[2]}, has no unit: write ${written[0]!}`
      : `the last number, ${bare[2]}, has no unit: write the one meant, ${written.slice(0, -1).join(", ")} or ${written.at(-1)!}`;
  }
  if (!/^(?:\d+(?:\.\d+)?[A-Za-z]+)+$/.test(joined)) return undefined;
  const parts = [...joined.matchAll(/(\d+(?:\.\d+)?)([A-Za-z]+)/g)].map((match) => {
    const unit = unitOf(match[2]!);
    return { number: match[1]!, written: match[2]!, unit: unit !== undefined && units.includes(unit) ? unit : undefined };
  });
  const named = `${units.slice(0, -1).join(", ")} and ${units.at(-1)!}`;
  const unknown = parts.find((part) => part.unit === undefined);
  if (unknown !== undefined) return `${JSON.stringify(unknown.written)} is not a unit: the units are ${named}`;
  const given = parts.map((part) => part.unit!);
  const twice = given.find((unit, index) => given.indexOf(unit) !== index);
  if (twice !== undefined) return `each unit at most once: ${twice} is given twice`;
  const ordered = [...parts].sort((a, b) => UNITS.indexOf(a.unit!) - UNITS.indexOf(b.unit!));
  const meant = ordered.map((part) => `${part.number}${part.unit!}`).join("");
  const why = [
    ...(spaced ? ["without spaces"] : []),
    ...(parts.some((part) => part.written !== part.unit) ? [`with the units ${named}`] : []),
    ...(ordered.some((part, index) => part !== parts[index]) ? [`with its units in the order ${units.join(", ")}`] : []),
  ];
  return why.length === 0 || !DURATION_PATTERN.test(meant) ? undefined : `write it ${why.join(", ")}: ${meant}`;
}

/** The unit a duration's `written` unit names (`s`, `sec`, `S`), if any. */
function unitOf(written: string): (typeof UNITS)[number] | undefined {
  const lower = written.toLowerCase();
  // `M` alone may be months to some: only the lower-case `m` is minutes.
  if (written === "M") return undefined;
  return (UNITS as readonly string[]).includes(lower) ? (lower as (typeof UNITS)[number]) : UNIT_NAMES[lower];
}

/** A number of seconds in digits, as a duration is written without a unit (`16`, `0.5`). */
const SECONDS_IN_DIGITS = /^[0-9]+(?:\.[0-9]+)?$/;

/** The most decimals secondsInDigits writes: a smaller number of seconds than 1e-24 is written 0, as it is 0ms all the same. */
const MAX_DECIMALS = 24;

/**
 * A number of seconds as a duration writes it (see SECONDS_IN_DIGITS): `16`, `0.5`, and one JavaScript
 * writes with an exponent (`1e-9`), which YAML reads `1e-9` and `0.000000001` as, in digits too
 * (`0.000000001`), so that a sub-millisecond one is not taken as 0ms unsaid; undefined for a
 * negative number or one not finite.
 */
export function secondsInDigits(value: number): string | undefined {
  const written = String(value);
  if (SECONDS_IN_DIGITS.test(written)) return written;
  const exponent = /^([0-9])(?:\.([0-9]+))?e-([0-9]+)$/.exec(written);
  if (exponent === null) return undefined;
  const [, first, rest = "", power] = exponent as unknown as [string, string, string | undefined, string];
  const decimals = `${"0".repeat(Number(power) - 1)}${first}${rest}`;
  return decimals.length > MAX_DECIMALS ? "0" : `0.${decimals}`;
}
