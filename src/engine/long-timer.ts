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

  constructor(callback: () => void, ms: number) {
    let left = Math.max(ms, 0);
    let dueAt = timerNow() + left;
    const onTimer = (): void => {
      const lateMs = timerNow() - dueAt;
      const backMs = Math.min(lateMs, left);
      if (lateMs < HELD_UP_MS || backMs <= 0) return callback();
      left -= backMs;
      dueAt = timerNow() + backMs;
      this.#timer = new LongTimer(onTimer, backMs);
    };
    this.#timer = new LongTimer(onTimer, left);
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
