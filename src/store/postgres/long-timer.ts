import { LongTimer } from "../../engine/long-timer.js";

export { LongTimer };

/** A stop's deadline: it may be brought forward (a second signal makes it now), never put off. */
export class Deadline {
  #at = Infinity;
  #timer: LongTimer | undefined;
  #reach: () => void = () => undefined;
  readonly reached = new Promise<"deadline">((resolve) => (this.#reach = () => resolve("deadline")));

  /** Makes the deadline `ms` from now, unless it is sooner already. */
  within(ms: number): void {
    const at = performance.now() + ms;
    if (at >= this.#at) return;
    this.#at = at;
    this.#timer?.clear();
    this.#timer = new LongTimer(this.#reach, ms);
  }

  dispose(): void {
    this.#timer?.clear();
  }
}
