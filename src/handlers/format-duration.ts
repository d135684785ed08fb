/** A short human duration: 250ms, 1.5s, 5m, 1h30m. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return `${ms}ms`;
  // Each unit rounded first, then split: a rest rounded up to a whole next unit said "60s", "1m60s" or "1h60m".
  if (Math.round(ms) < 1000) return `${Math.round(ms)}ms`;
  if (Math.round(ms / 100) < 600) return `${trim(ms / 1000)}s`;
  const totalSeconds = Math.round(ms / 1000);
  if (totalSeconds < 3600) {
    const minutes = Math.floor(totalSeconds / 60);
    const seconds = totalSeconds - minutes * 60;
    return seconds === 0 ? `${minutes}m` : `${minutes}m${seconds}s`;
  }
  const totalMinutes = Math.round(ms / 60_000);
  const hours = Math.floor(totalMinutes / 60);
  const minutes = totalMinutes - hours * 60;
  return minutes === 0 ? `${hours}h` : `${hours}h${minutes}m`;
}

/** At most one decimal, without a trailing ".0". */
function trim(value: number): string {
  return String(Math.round(value * 10) / 10);
}
