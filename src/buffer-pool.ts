/**
 * Buffers of one size, used again once whoever had one is done with it: a loud task's
 * output then makes no garbage for V8 to collect and no fresh pages for the kernel to fault
 * in. At most `max` are kept, and none once `keptMs` pass without one coming back: every
 * fork of a task copies the page tables of all of taskq's memory.
 */
export class BufferPool {
  readonly #free: Buffer[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly size: number,
    readonly max: number,
    readonly keptMs: number,
  ) {}

  take(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafe(this.size);
  }

  /** `buffer` is no longer read or written by anyone (one of another size is let go). */
  give(buffer: Buffer): void {
    if (buffer.length !== this.size) return;
    if (this.#free.length < this.max) this.#free.push(buffer);
    const free = this.#free;
    if (this.#timer === undefined) this.#timer = setTimeout(() => (free.length = 0), this.keptMs).unref();
    else this.#timer.refresh();
  }
}
