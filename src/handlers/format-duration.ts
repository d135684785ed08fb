/**
 * A short human duration: 250ms, 1.5s, 5m, 1h30m, 25d, 18d14h. Past a day in days and hours, as a
 * retry's delay is said (see formatDelay): "600h" made the reader divide. Each rounded to its
 * smaller unit, carried into the larger one, so no unit shows 60 (or 24 hours).
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return `${ms}ms`;
  if (Math.round(ms) < 1000) return `${Math.round(ms)}ms`;
  // At most one decimal, without a trailing ".0".
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${tenths / 10}s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return twoUnits(seconds, 60, "m", "s");
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1440) return twoUnits(minutes, 60, "h", "m");
  return twoUnits(Math.round(ms / 3_600_000), 24, "d", "h");
}

/** `count` small units as whole big ones (`per` small units each) and the rest: "1m30s", "2h" (a zero rest left out). */
function twoUnits(count: number, per: number, bigUnit: string, smallUnit: string): string {
  const bigs = Math.floor(count / per);
  const rest = count - bigs * per;
  return rest === 0 ? `${bigs}${bigUnit}` : `${bigs}${bigUnit}${rest}${smallUnit}`;
}
