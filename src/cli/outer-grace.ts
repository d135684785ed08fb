import { formatSetMs } from "../engine/errors.js";

/**
 * The variable taskq sets for each task: its kill grace in milliseconds, how long the task has, once sent
 * SIGTERM (its timeout, taskq's own stop), before it is SIGKILLed with every process of its group.
 */
export const KILL_GRACE_VARIABLE = "TASKQ_KILL_GRACE_MS";

/** What taskq leaves itself, of the grace the taskq running it gives, for its summary and its exit: a fifth, at least this. */
const MIN_MARGIN_MS = 500;

export interface StopTimes {
  shutdownTimeoutMs: number;
  killGraceMs: number;
}

/**
 * A taskq run by a task of another (`run: taskq run inner.yaml`) is SIGKILLed by it the outer's kill grace after its
 * SIGTERM, whatever its own stop would take: with its own time to finish (10s) and kill grace (5s), it was killed mid-stop,
 * and its cancel lines and summary never reached the outer task's log. Where KILL_GRACE_VARIABLE is set, its stop is fitted
 * into that grace, less a margin: its kill grace at most half of what is left, its time to finish the rest. `outerGraceMs`
 * is the grace given, set when either is cut.
 */
export function fitToOuterGrace(times: StopTimes, env: NodeJS.ProcessEnv = process.env): StopTimes & { outerGraceMs?: number } {
  const raw = env[KILL_GRACE_VARIABLE];
  if (raw === undefined || !/^\d{1,12}$/.test(raw)) return times;
  const outerGraceMs = Number(raw);
  const budget = Math.max(0, outerGraceMs - Math.max(MIN_MARGIN_MS, Math.round(outerGraceMs / 5)));
  if (times.shutdownTimeoutMs + times.killGraceMs <= budget) return times;
  const killGraceMs = Math.min(times.killGraceMs, Math.floor(budget / 2));
  const shutdownTimeoutMs = Math.min(times.shutdownTimeoutMs, budget - killGraceMs);
  return { shutdownTimeoutMs, killGraceMs, outerGraceMs };
}

/** Why the stop takes less than the flags say: "the taskq running this one kills it 3s after its SIGTERM (TASKQ_KILL_GRACE_MS)". */
export function outerGraceWords(outerGraceMs: number): string {
  return `the taskq running this one kills it ${formatSetMs(outerGraceMs)} after its SIGTERM (${KILL_GRACE_VARIABLE})`;
}

/** The note for flags given and shortened: "--shutdown-timeout 1m is shortened to 1.2s and --kill-grace 5s is shortened to 1.2s: ...". */
export function shortenedNote(given: StopTimes, fitted: StopTimes & { outerGraceMs?: number }, flags: { shutdownTimeout: boolean; killGrace: boolean }): string | undefined {
  if (fitted.outerGraceMs === undefined) return undefined;
  const parts: string[] = [];
  if (flags.shutdownTimeout && fitted.shutdownTimeoutMs < given.shutdownTimeoutMs) parts.push(`--shutdown-timeout ${formatSetMs(given.shutdownTimeoutMs)} is shortened to ${formatSetMs(fitted.shutdownTimeoutMs)}`);
  if (flags.killGrace && fitted.killGraceMs < given.killGraceMs) parts.push(`--kill-grace ${formatSetMs(given.killGraceMs)} is shortened to ${formatSetMs(fitted.killGraceMs)}`);
  if (parts.length === 0) return undefined;
  return `${parts.join(" and ")}: ${outerGraceWords(fitted.outerGraceMs)}, and this run's stop must end, summary written, within that`;
}
