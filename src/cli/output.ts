/**
 * Batches writes to a stream: many small writes become one per tick (or per
 * 64 KiB), which matters when tasks print hundreds of thousands of lines.
 * Takes text and raw bytes; both come out in the order they were written.
 */
export class BufferedWriter {
  /** Text written since the last bytes (joined lazily: the common case is text only). */
  #text: string[] = [];
  /** Earlier pending output, as bytes, when raw bytes were written. */
  #bytes: Buffer[] = [];
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
    this.#text.push(text);
    this.#added(text.length);
  }

  /** Raw bytes of formatted output. The writer keeps `bytes` until it is written: do not reuse it. */
  writeBytes(bytes: Buffer): void {
    if (this.#broken) return;
    this.#textToBytes();
    this.#bytes.push(bytes);
    this.#added(bytes.length);
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#text.length === 0 && this.#bytes.length === 0) return;
    let output: string | Buffer;
    if (this.#bytes.length === 0) output = this.#text.join("");
    else {
      this.#textToBytes();
      output = this.#bytes.length === 1 ? (this.#bytes[0] as Buffer) : Buffer.concat(this.#bytes);
    }
    this.#text = [];
    this.#bytes = [];
    this.#size = 0;
    if (!this.#broken && !this.stream.destroyed) this.stream.write(output);
  }

  #added(size: number): void {
    this.#size += size;
    if (this.#size >= 65_536) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  #textToBytes(): void {
    if (this.#text.length === 0) return;
    this.#bytes.push(Buffer.from(this.#text.join("")));
    this.#text = [];
  }
}
