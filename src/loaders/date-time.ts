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
  if (fixes.length === 0) return undefined;
  const said = fixes.join("; ");
  const offset = zone === undefined || zone.toUpperCase() === "Z" ? "Z" : `${zone.slice(0, 3)}:${zone.length > 3 ? zone.slice(-2) : "00"}`;
  const meant = `${date!}T${minutes ?? "00:00"}${seconds ?? ":00"}${offset}`;
  return isRunAt(meant) ? `${said}, as in ${meant}` : said;
}
