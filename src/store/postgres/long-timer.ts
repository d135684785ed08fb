import { GraceTimer, LongTimer } from "../../engine/long-timer.js";

export { LongTimer };

/** A stop's deadline: it may be brought forward (a second signal makes it now), never put off. */
export class Deadline {
  #at = Infinity;
  #timer: LongTimer | GraceTimer | undefined;
  #reach: () => void = () => undefined;
  readonly reached = new Promise<"deadline">((resolve) => (this.#reach = () => resolve("deadline")));
  readonly #grace: boolean;

  /**
   * `grace`: a wait given to handlers (a stop's abort grace), whose time the process was held up past its end is given back
   * (see GraceTimer): reached in the same instant as the handlers' own timers, a task whose command had ended by itself, exit 0,
   * had its lease given back, to be run again.
   */
  constructor(options: { grace?: boolean } = {}) {
    this.#grace = options.grace === true;
  }

  /** Makes the deadline `ms` from now, unless it is sooner already. */
  within(ms: number): void {
    const at = performance.now() + ms;
    if (at >= this.#at) return;
    this.#at = at;
    this.#timer?.clear();
    this.#timer = this.#grace ? new GraceTimer(this.#reach, ms) : new LongTimer(this.#reach, ms);
  }

  dispose(): void {
    this.#timer?.clear();
  }
}
