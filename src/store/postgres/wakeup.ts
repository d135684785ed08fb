/**
 * A sticky wake-up flag: `notify()` before `wait()` is not lost, because the
 * flag stays set until a wait consumes it. Idle workers wait on it with a
 * timeout (the poll backstop, or the nearest not-before).
 */
export class Wakeup {
  #pending = false;
  #resolve: (() => void) | undefined;

  /** Wakes the current or the next waiter. */
  notify(): void {
    this.#pending = true;
    this.#resolve?.();
  }

  /** Forgets wake-ups so far: call before looking for work, so later ones count. */
  clear(): void {
    this.#pending = false;
  }

  /** Resolves on `notify()`, after `timeoutMs`, or when `signal` aborts. */
  async wait(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#pending || signal?.aborted === true) {
      this.#pending = false;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => this.#resolve?.();
    try {
      await new Promise<void>((resolve) => {
        this.#resolve = resolve;
        timer = setTimeout(resolve, Math.max(timeoutMs, 0));
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      this.#resolve = undefined;
      this.#pending = false;
    }
  }
}
