import type { StreamName } from "../../handlers/index.js";
import type { ChalkInstance } from "chalk";
import type { Ora } from "ora";
import type { Queue } from "../../engine/index.js";
import { BufferedWriter, whenStreamDrained } from "../output.js";
import { clock, describeError, formatDelay } from "./describe.js";
import { formatSummary } from "./summary-text.js";
import { TaskPrefixes } from "./task-prefixes.js";
import type { Renderer, RunInfo, RunSummary } from "./types.js";

type Row =
  | { state: "running"; attempt: number; since: number }
  | { state: "retrying"; attempt: number; at: number }
  | { state: "scheduled"; at: number }
  | { state: "done"; ok: boolean; text: string; until: number };

/** How long a finished task stays on the board. */
const LINGER_MS = 3000;

/**
 * The live board for terminals: one line per task that is running, retrying
 * (with countdown), scheduled (with its time) or just finished, then totals.
 * Task output scrolls above the board.
 */
export class TtyRenderer implements Renderer {
  readonly #c: ChalkInstance;
  readonly #spinner: Ora;
  readonly #stream: NodeJS.WriteStream;
  readonly #rows = new Map<string, Row>();
  #info: RunInfo | undefined;
  #done = 0;
  #failed = 0;
  /**
   * Lines for above the board, written as the board is redrawn or once 64 KiB wait (a loud
   * task must not pile up output between two redraws); the board clears itself first.
   */
  readonly #pending: BufferedWriter;
  readonly #prefixes: TaskPrefixes;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(spinner: Ora, stream: NodeJS.WriteStream, colors: ChalkInstance) {
    this.#spinner = spinner;
    this.#stream = stream;
    this.#c = colors;
    this.#prefixes = new TaskPrefixes(colors);
    this.#pending = new BufferedWriter(stream, { eachTick: false, beforeWrite: () => spinner.clear() });
  }

  attach(queue: Queue, info: RunInfo): void {
    this.#info = info;
    queue.on("submitted", (e) => {
      if (e.status === "SCHEDULED" && e.runAt !== undefined) this.#rows.set(e.id, { state: "scheduled", at: e.runAt });
    });
    queue.on("scheduled", (e) => this.#rows.set(e.id, { state: "scheduled", at: e.runAt }));
    queue.on("started", (e) => this.#rows.set(e.id, { state: "running", attempt: e.attempt, since: Date.now() }));
    queue.on("retrying", (e) => {
      this.#rows.set(e.id, { state: "retrying", attempt: e.attempt, at: e.runAt });
      this.#print(this.#c.yellow(`↻ ${e.id} attempt ${e.attempt}/${e.maxAttempts} failed: ${describeError(e.error)}`));
    });
    queue.on("succeeded", (e) => this.#finishRow(e.id, true, this.#c.green(`✓ ${e.id}`)));
    queue.on("failed", (e) => {
      this.#finishRow(e.id, false, this.#c.red(`✗ ${e.id}: ${describeError(e.error)}`));
      this.#print(this.#c.red(`✗ ${e.id} failed: ${describeError(e.error)}`));
    });
    queue.on("cancelled", (e) => this.#finishRow(e.id, false, this.#c.yellow(`- ${e.id}: ${describeError(e.error)}`)));
    this.#spinner.start(this.#board());
    this.#timer = setInterval(() => this.#refresh(), 100);
  }

  line(taskId: string, _stream: StreamName, text: string): void {
    this.#pending.write(`${this.#prefixes.text(taskId)}${text}\n`);
  }

  /** The same output as `line` gives for each line, built as bytes: no string per line. */
  lines(taskId: string, _stream: StreamName, bytes: Buffer, count: number, ends: Int32Array): void {
    this.#pending.writePrefixedLines(this.#prefixes.bytes(taskId), bytes, count, ends);
  }

  whenDrained(): Promise<void> | undefined {
    return whenStreamDrained(this.#stream);
  }

  note(text: string): void {
    this.#print(this.#c.magenta(`note: ${text}`));
  }

  async finish(summary: RunSummary): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#flushLines();
    this.#spinner.stop();
    process.stdout.write(formatSummary(summary, this.#c));
  }

  #finishRow(id: string, ok: boolean, text: string): void {
    this.#done++;
    if (!ok) this.#failed++;
    this.#rows.set(id, { state: "done", ok, text, until: Date.now() + LINGER_MS });
  }

  #print(text: string): void {
    this.#pending.write(`${this.#c.dim(clock())} ${text}\n`);
  }

  #flushLines(): void {
    this.#pending.flush();
  }

  #refresh(): void {
    this.#flushLines();
    this.#spinner.text = this.#board();
    this.#spinner.render();
  }

  #board(): string {
    const now = Date.now();
    const c = this.#c;
    const lines: string[] = [];
    for (const [id, row] of this.#rows) {
      if (row.state === "done" && row.until < now) {
        this.#rows.delete(id);
        continue;
      }
      lines.push(this.#rowText(id, row, now));
    }
    const limit = Math.max(3, (this.#stream.rows || 24) - 4);
    const shown = lines.length > limit ? [...lines.slice(0, limit), c.dim(`… ${lines.length - limit} more`)] : lines;
    const total = this.#info?.taskCount ?? 0;
    const failed = this.#failed > 0 ? c.red(` · ${this.#failed} not ok`) : "";
    return [`${c.bold(`${this.#done}/${total} done`)}${failed}`, ...shown.map((l) => `  ${l}`)].join("\n");
  }

  #rowText(id: string, row: Row, now: number): string {
    const max = this.#info?.maxAttempts.get(id) ?? 1;
    switch (row.state) {
      case "running":
        return `${c(this.#c.cyan, "▶")} ${id}  attempt ${row.attempt}/${max}  ${formatDelay(now - row.since)}`;
      case "retrying":
        return `${c(this.#c.yellow, "↻")} ${id}  retry ${row.attempt + 1}/${max} in ${formatDelay(Math.max(0, row.at - now))}`;
      case "scheduled":
        return `${c(this.#c.cyan, "⏲")} ${id}  at ${clock(row.at)} (in ${formatDelay(Math.max(0, row.at - now))})`;
      case "done":
        return row.text;
    }
  }
}

function c(color: (text: string) => string, text: string): string {
  return color(text);
}
