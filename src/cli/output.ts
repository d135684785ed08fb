/**
 * Batches writes to a stream: many small writes become one per tick (or per
 * 64 KiB), which matters when tasks print hundreds of thousands of lines.
 */
export class BufferedWriter {
  #chunks: string[] = [];
  #size = 0;
  #scheduled = false;
  #broken = false;

  constructor(readonly stream: NodeJS.WritableStream & { destroyed?: boolean }) {
    stream.on("error", () => {
      this.#broken = true; // EPIPE: the reader went away; keep running, stop writing.
    });
  }

  write(text: string): void {
    if (this.#broken) return;
    this.#chunks.push(text);
    this.#size += text.length;
    if (this.#size >= 65_536) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#chunks.length === 0) return;
    const text = this.#chunks.join("");
    this.#chunks = [];
    this.#size = 0;
    if (!this.#broken && !this.stream.destroyed) this.stream.write(text);
  }
}
