import { MAX_TIMER_MS } from "./schedule.js";

/**
 * A timer for any delay: setTimeout turns one past 2^31-1 ms (24.8 days) into 1 ms, and a
 * workflow (or a flag: --shutdown-timeout, --kill-grace) may set 30 days, so a longer one waits
 * in steps. `unref`: it does not keep the process alive, as setTimeout(...).unref().
 */
export class LongTimer {
  #timer: NodeJS.Timeout | undefined;
  readonly #unref: boolean;

  constructor(callback: () => void, ms: number, options: { unref?: boolean } = {}) {
    this.#unref = options.unref === true;
    this.#arm(callback, Math.max(ms, 0));
  }

  #arm(callback: () => void, remainingMs: number): void {
    const step = Math.min(remainingMs, MAX_TIMER_MS);
    this.#timer = setTimeout(() => (remainingMs > step ? this.#arm(callback, remainingMs - step) : callback()), step);
    if (this.#unref) this.#timer.unref();
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}

/** How late a grace's timer may fire before the process counts as held up (see GraceTimer): a busy machine's timers come a few ms late, tens now and then. */
export const HELD_UP_MS = 100;

/**
 * A LongTimer for a wait given to handlers (a hard stop's grace for the handlers it aborted): time the process was held up past
 * its end (stopped by SIGSTOP or Ctrl-Z and continued, a paused VM) is given back, as long as it came late, up to `ms` more in
 * all. The handlers' own timers (a kill grace) came due in the stall with this one, and what they do next (a poll for a
 * process to be gone, a log to close) needs the event loop to turn: given up on in the same instant, a task whose command
 * had ended by itself, exit 0, was recorded as stopped.
 */
export class GraceTimer {
  #timer: LongTimer;
  readonly #callback: () => void;
  /** The wait's length: as given, or as shortened since (see shorten). */
  #ms: number;
  /** What of it may still be given back. */
  #left: number;
  /** When the wait ends, on timerNow's clock: what its timer is set for, as given back or shortened since. */
  #dueAt: number;
  /** The last time given back: when the process was found continued, and how much (see shorten). */
  #givenBack: { at: number; ms: number } | undefined;

  constructor(callback: () => void, ms: number) {
    this.#callback = callback;
    this.#ms = this.#left = Math.max(ms, 0);
    this.#dueAt = timerNow() + this.#left;
    this.#timer = new LongTimer(this.#onTimer, this.#left);
  }

  readonly #onTimer = (): void => {
    const backMs = this.#giveBack(timerNow());
    if (backMs > 0) this.#timer = new LongTimer(this.#onTimer, backMs);
    else this.#callback();
  };

  /** Gives back the time its timer is late by at `now`, where the process was held up: the ms given back (the wait goes on that long), or 0. */
  #giveBack(now: number): number {
    const lateMs = now - this.#dueAt;
    const backMs = Math.min(lateMs, this.#left);
    if (lateMs < HELD_UP_MS || backMs <= 0) return 0;
    this.#left -= backMs;
    this.#dueAt = now + backMs;
    this.#givenBack = { at: now, ms: backMs };
    return backMs;
  }

  /**
   * Makes the wait `ms` long, counted from its start as before (a later, shorter abortGraceMs): its end comes that much
   * sooner, at once where that has passed, and what is left to give back is as much less. Time the process was held up is
   * given back first, as its timer gives it back: whether that timer has fired since or not yet (a call from an I/O
   * callback, which runs before the timers once the process is continued), a shorter wait given after a stall ends that
   * much after it, not in the same instant as the handlers' own timers' turn. So the end moved sooner is kept no earlier than
   * the time given back after the process was continued (up to the new length): a stall that crossed the shorter end would
   * otherwise have its time given back, then taken away with the shortening, and the wait end at once.
   */
  shorten(ms: number): void {
    const byMs = this.#ms - Math.max(ms, 0);
    if (!(byMs > 0)) return;
    this.#ms -= byMs;
    this.#timer.clear();
    const now = timerNow();
    this.#giveBack(now);
    this.#left = Math.max(this.#left - byMs, 0);
    this.#dueAt -= byMs;
    const given = this.#givenBack;
    if (given !== undefined) this.#dueAt = Math.max(this.#dueAt, given.at + Math.min(given.ms, this.#ms));
    const waitMs = this.#dueAt - now;
    if (waitMs <= 0) return this.#callback();
    this.#timer = new LongTimer(this.#onTimer, waitMs);
  }

  clear(): void {
    this.#timer.clear();
  }
}

/**
 * The time on setTimeout's own clock: fake timers' (@sinonjs/fake-timers, as vitest and jest install them, keep theirs as
 * `setTimeout.clock`) where they fake it, else the monotonic clock. Fake timers that fake setTimeout but not `performance`
 * would otherwise make a grace's timer, fired on fake time while real time went on, look held up, and its wait go on.
 */
export function timerNow(): number {
  const clock = (setTimeout as { clock?: { now?: unknown } }).clock;
  return typeof clock?.now === "number" ? clock.now : performance.now();
}
