/**
 * Milliseconds on the monotonic clock, from an arbitrary origin, as performance.now() counts
 * them: for durations and deadlines, never for dates. What the handlers and the CLI time with: the first
 * use of `performance` loads node:perf_hooks (eight modules, ~1 ms), which a run of tasks that
 * neither retry nor wait needs for nothing else; process.hrtime is there from the start.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
