import type { ChalkInstance } from "chalk";

/** Prefixes kept at most: the running tasks are the ones that print. */
const MAX_KEPT = 1024;

/** What goes before each line of a task's output (`task-id | `, dimmed), as text or as bytes made once per task. */
export class TaskPrefixes {
  readonly #colors: ChalkInstance;
  readonly #bytes = new Map<string, Buffer>();

  constructor(colors: ChalkInstance) {
    this.#colors = colors;
  }

  text(taskId: string): string {
    return `${this.#colors.dim(`${taskId} |`)} `;
  }

  bytes(taskId: string): Buffer {
    let prefix = this.#bytes.get(taskId);
    if (prefix === undefined) {
      if (this.#bytes.size >= MAX_KEPT) this.#bytes.clear();
      prefix = Buffer.from(this.text(taskId));
      this.#bytes.set(taskId, prefix);
    }
    return prefix;
  }
}
