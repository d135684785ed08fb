/**
 * Why a `runAt` written in a near-ISO form is not one, and the form meant (`2026-12-03 10:00:00Z`:
 * a space for the T), where it can tell; undefined when it cannot. `isRunAt` is the schema's check,
 * which the form meant must pass.
 */
export function runAtMistake(text: string, isRunAt: (text: string) => boolean): string | undefined {
  const parts = /^(\d{4}-\d{2}-\d{2})(?:([Tt]|\s+)(\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?$/.exec(text.trim());
  if (parts === null) return undefined;
  const [, date, separator, minutes, seconds, zone] = parts;
  const fixes: string[] = [];
  if (minutes === undefined) fixes.push("add a time after a T");
  else if (separator !== "T") fixes.push(/\s/.test(separator ?? "") ? "write T between the date and the time, not a space" : zone === "z" ? "write T and Z in upper case" : "write the T in upper case");
  if (minutes !== undefined && seconds === undefined) fixes.push("add the seconds");
  if (minutes !== undefined && /\s[Zz+-]|\s$/.test(text.trim().slice(date!.length + 1))) fixes.push("leave no space before the timezone");
  if (zone === undefined) fixes.push("add a timezone, Z for UTC or an offset like +01:00");
  else if (zone === "z") {
    if (separator !== "t") fixes.push("write the Z in upper case");
  } else if (zone !== "Z" && !zone.includes(":")) fixes.push("write the offset with its minutes after a colon");
  // What no calendar or clock has, told by its part (2026-02-30, T24:00:00, T23:59:60, month 13): "must be a real date" alone left the reader to find it.
  fixes.push(...impossibleParts(date!, minutes, seconds, zone));
  if (fixes.length === 0) return undefined;
  const said = fixes.join("; ");
  const offset = zone === undefined || zone.toUpperCase() === "Z" ? "Z" : `${zone.slice(0, 3)}:${zone.length > 3 ? zone.slice(-2) : "00"}`;
  const meant = `${date!}T${minutes ?? "00:00"}${seconds ?? ":00"}${offset}`;
  return isRunAt(meant) ? `${said}, as in ${meant}` : said;
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** The parts of a date and time written in the ISO form that no calendar or clock has: "February 2026 has 28 days", "hour 24: hours go from 00 to 23". */
function impossibleParts(date: string, hoursMinutes: string | undefined, seconds: string | undefined, zone: string | undefined): string[] {
  const said: string[] = [];
  const year = Number(date.slice(0, 4));
  const month = date.slice(5, 7);
  const day = date.slice(8, 10);
  if (Number(month) < 1 || Number(month) > 12) said.push(`month ${month}: months go from 01 to 12`);
  if (Number(day) === 0) said.push("day 00: days start at 01");
  else if (Number(month) >= 1 && Number(month) <= 12) {
    const days = daysIn(year, Number(month));
    if (Number(day) > days) said.push(`${MONTHS[Number(month) - 1]!}${Number(month) === 2 ? ` ${date.slice(0, 4)}` : ""} has ${days} days`);
  }
  if (hoursMinutes !== undefined) {
    const hour = hoursMinutes.slice(0, 2);
    const minute = hoursMinutes.slice(3, 5);
    if (Number(hour) > 23) said.push(`hour ${hour}: hours go from 00 to 23${hour === "24" ? ", midnight at a day's end being T00:00:00 of the next day" : ""}`);
    if (Number(minute) > 59) said.push(`minute ${minute}: minutes go from 00 to 59`);
  }
  if (seconds !== undefined) {
    const second = seconds.slice(1, 3);
    if (Number(second) > 59) said.push(`second ${second}: seconds go from 00 to 59${second === "60" ? ", with no leap second" : ""}`);
  }
  if (zone !== undefined && zone.length > 1) {
    const digits = zone.slice(1).replace(":", "");
    if (Number(digits.slice(0, 2)) > 23 || Number(digits.slice(2) || "0") > 59) said.push(`offset ${zone}: offsets go from -23:59 to +23:59`);
  }
  return said;
}

/** Days in `month` (1 to 12) of `year`, in the Gregorian calendar. */
function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
