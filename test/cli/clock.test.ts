import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../src/cli/render/describe.js";

const savedTz = process.env.TZ;

afterEach(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

/** What clock() printed when it asked a Date for every field. */
function reference(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2): string => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

describe("clock", () => {
  // Zones with daylight saving (a 30-minute one at Lord Howe), and offsets of 45 and 30 minutes.
  // Each zone gets its own days, so no minute is asked for in two zones (clock() keeps its last minute).
  const zones: Array<[string, string]> = [
    ["UTC", "2026-06-01T00:00:00Z"],
    ["America/New_York", "2026-03-07T12:00:00Z"], // DST starts 2026-03-08 07:00 UTC
    ["America/New_York", "2026-10-31T12:00:00Z"], // and ends 2026-11-01 06:00 UTC
    ["Australia/Lord_Howe", "2026-04-04T00:00:00Z"], // back 30 minutes on 2026-04-05
    ["Asia/Kathmandu", "2026-07-01T00:00:00Z"],
    ["America/St_Johns", "2026-03-07T12:00:00Z"],
  ];
  for (const [zone, from] of zones) {
    it(`prints local time as a Date does, in ${zone} from ${from}`, () => {
      process.env.TZ = zone;
      const start = Date.parse(from);
      // Two days in steps that land on every second and millisecond of a minute in turn.
      for (let ms = start; ms < start + 2 * 86_400_000; ms += 7_919) expect(clock(ms)).toBe(reference(ms));
      for (const ms of [start + 59_999, start + 60_000, start + 60_001, start + 0.5, start + 999.9]) expect(clock(ms)).toBe(reference(ms));
    });
  }
});
