import { formatSetMs } from "../engine/errors.js";
import { formatDuration } from "../handlers/format-duration.js";
import { monotonicMs } from "../monotonic.js";

/** How the run or worker ended, as what its tasks left running is then stopped. */
export interface LeftoversStop {
  /** The first signal, if one came, and when (monotonicMs). */
  interrupted?: NodeJS.Signals;
  interruptedAt: number;
  /** A second signal came ("killing every task now"). */
  killedAtOnce: boolean;
  shutdownTimeoutMs: number;
  killGraceMs: number;
}

/**
 * The grace what the tasks left running (setsid daemons) gets between SIGTERM and SIGKILL: the kill
 * grace when no signal came; after one, only what is left of the time to finish and the kill grace
 * since it (a runner sizes its own grace, then SIGKILL, to those two, and the tasks' stop may have taken
 * them both already); after a second, none (a runner's SIGKILL may follow within seconds: GitHub
 * Actions sends it 2.5 s after its SIGTERM, and the kill grace would cost the summary).
 */
export function leftoversGraceMs(stop: LeftoversStop): number {
  if (stop.killedAtOnce) return 0;
  if (stop.interrupted === undefined) return stop.killGraceMs;
  return Math.min(stop.killGraceMs, Math.max(0, stop.interruptedAt + stop.shutdownTimeoutMs + stop.killGraceMs - monotonicMs()));
}

/** The note said when `groups` process groups the tasks left running are found, to be stopped with `graceMs` (leftoversGraceMs). */
export function leftoversNote(stop: LeftoversStop, graceMs: number, groups: number): string {
  const what = `${groups === 1 ? "the process group" : `the ${groups} process groups`} the tasks left running`;
  if (stop.killedAtOnce) return `killing ${what} now, as the second signal asked`;
  // No grace given (--kill-grace 0), whether a signal came or not: not a time that has passed.
  if (stop.killGraceMs <= 0) return `stopping ${what}: SIGTERM, then SIGKILL right after it (the kill grace is 0)`;
  if (graceMs < 1) {
    return `killing ${what} now: the time to finish and the kill grace (${formatSetMs(stop.shutdownTimeoutMs)} + ${formatSetMs(stop.killGraceMs)}) since the ${stop.interrupted} have passed`;
  }
  const cut = graceMs < stop.killGraceMs ? `, what is left of the time the ${stop.interrupted} gave` : "";
  return `stopping ${what} (SIGTERM, then SIGKILL ${cut === "" ? formatSetMs(graceMs) : formatDuration(graceMs)} later${cut}; Ctrl-C or SIGTERM kills ${groups === 1 ? "it" : "them"} now)`;
}

/** The signal a stop of what the tasks left running was cut short by (its abort's reason). */
export function signalOf(stopping: AbortController | undefined): NodeJS.Signals {
  return stopping?.signal.reason as NodeJS.Signals;
}
