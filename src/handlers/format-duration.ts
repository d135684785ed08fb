/**
 * A duration rounded for reading, the form of every time taskq measures or counts down (a task's
 * time on the live board, a retry's delay, a run's wall time, how long the database failed):
 * 250ms, 42.5s, 1m0.3s, 59m59.9s, 2h5m, 18d14h. Under a second to the ms; under an hour to the
 * tenth of a second; under a day to the minute; past it to the hour. Rounded to the last unit it
 * shows, the unit picked after rounding, so no unit shows 60 (nor 24 hours) and one duration is
 * said one way: 59,960 ms is 1m, 86,399,960 ms is 1d, never 60s nor 23h59m. A duration the user
 * wrote (a timeout, the kill grace, --lease) is said exactly instead, by formatMs.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return `${ms}ms`;
  if (Math.round(ms) < 1000) return `${Math.round(ms)}ms`;
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${tenths / 10}s`;
  // Seconds to the tenth after whole minutes: "1m0.3s", not "1m300ms".
  if (tenths < 36_000) return twoUnits(tenths, 600, "m", (rest) => `${rest / 10}s`);
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1440) return twoUnits(minutes, 60, "h", (rest) => `${rest}m`);
  return twoUnits(Math.round(ms / 3_600_000), 24, "d", (rest) => `${rest}h`);
}

/** `count` small units as whole big ones (`per` small units each) and the rest: "1m30s", "2h" (a zero rest left out). */
function twoUnits(count: number, per: number, bigUnit: string, small: (rest: number) => string): string {
  const bigs = Math.floor(count / per);
  const rest = count - bigs * per;
  return rest === 0 ? `${bigs}${bigUnit}` : `${bigs}${bigUnit}${small(rest)}`;
}
