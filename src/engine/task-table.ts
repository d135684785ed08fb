import type { TaskRecord } from "./task-record.js";
import { STATUSES, isTerminal, type QueueStats, type TaskResult, type TaskStatus } from "./types.js";

/**
 * The queue's bookkeeping: every task by id, how many are in each status, how many
 * have not ended, the retries so far and the dead letters. Status changes go through
 * setStatus, so the counts can never drift from the records.
 */
export class TaskTable {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
  /** FAILED tasks, oldest failure first: a set, so forgetting one is O(1). */
  readonly #deadLetters = new Set<TaskRecord>();
  /** Tasks not yet in a terminal status. */
  #outstanding = 0;
  /** Retries scheduled so far. */
  retries = 0;
  /**
   * Whether any task has been forgotten (remove): an id the table does not hold may then be one it once did. A flag,
   * not the ids: a long-lived queue forgets so as not to keep per-task memory for good.
   */
  forgotAny = false;

  get(id: string): TaskRecord | undefined {
    return this.#tasks.get(id);
  }

  has(id: string): boolean {
    return this.#tasks.has(id);
  }

  values(): IterableIterator<TaskRecord> {
    return this.#tasks.values();
  }

  /** Tasks in `status` now. */
  count(status: TaskStatus): number {
    return this.#counts[status];
  }

  get outstanding(): number {
    return this.#outstanding;
  }

  /** A new task, BLOCKED until the queue knows better. */
  add(record: TaskRecord): void {
    this.#tasks.set(record.id, record);
    record.status = "BLOCKED";
    this.#counts.BLOCKED++;
    this.#outstanding++;
  }

  setStatus(record: TaskRecord, status: TaskStatus): void {
    this.#counts[record.status]--;
    this.#counts[status]++;
    if (isTerminal(status)) {
      this.#outstanding--;
      if (status === "FAILED") this.#deadLetters.add(record);
    }
    record.status = status;
  }

  /** Drops an ended task: it leaves the map, its status's count and the dead letters. */
  remove(record: TaskRecord): void {
    this.#tasks.delete(record.id);
    this.forgotAny = true;
    this.#counts[record.status]--;
    this.#deadLetters.delete(record);
  }

  /** Only a hard stop needs the running tasks by name; a scan then spares a set update per attempt. */
  running(): TaskRecord[] {
    const running: TaskRecord[] = [];
    for (const record of this.#tasks.values()) if (record.status === "RUNNING") running.push(record);
    return running;
  }

  /** `task-<n>`; a suffix only if a caller already took that id. */
  freeId(n: number): string {
    const base = `task-${n}`;
    let id = base;
    for (let suffix = 2; this.#tasks.has(id); suffix++) id = `${base}-${suffix}`;
    return id;
  }

  stats(): QueueStats {
    return {
      total: this.#tasks.size,
      byStatus: { ...this.#counts },
      running: this.#counts.RUNNING,
      retries: this.retries,
      deadLetters: this.#deadLetters.size,
    };
  }

  /** FAILED tasks, oldest failure first. */
  deadLetters(): TaskResult[] {
    return [...this.#deadLetters].map((r) => r.result());
  }
}
