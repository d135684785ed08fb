import { IndexedHeap } from "./heap.js";
import { TaskRecord, byPriority, byDueAt } from "./task-record.js";

/** The longest delay setTimeout honours; a longer one would fire after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Where queued tasks wait: the ready heap (priority, then submission order), the
 * delayed heap (when due, on the monotonic clock, then submission order) and one timer, for the earliest
 * delayed task only. No polling: the queue is woken when that task is due.
 */
export class Schedule {
  readonly ready = new IndexedHeap<TaskRecord>(byPriority);
  readonly delayed = new IndexedHeap<TaskRecord>(byDueAt);
  readonly #onDue: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;

  /** `onDue` runs when the earliest delayed task's time comes. */
  constructor(onDue: () => void) {
    this.#onDue = onDue;
  }

  /** Pops every delayed task whose time has come; `due` moves each one on. */
  promoteDue(due: (record: TaskRecord) => void): void {
    if (this.delayed.size === 0) return;
    const now = performance.now();
    for (let top = this.delayed.peek(); top !== undefined && top.dueAt <= now; top = this.delayed.peek()) {
      this.delayed.pop();
      due(top);
    }
  }

  /** Sets the timer for the earliest delayed task, or clears it (`stopped`, or nothing delayed). */
  arm(stopped: boolean): void {
    const at = stopped ? Infinity : (this.delayed.peek()?.dueAt ?? Infinity);
    if (at === this.#timerAt) return;
    this.disarm();
    this.#timerAt = at;
    if (at === Infinity) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Infinity;
        this.#onDue();
      },
      Math.max(0, Math.min(at - performance.now(), MAX_TIMER_MS)),
    );
  }

  disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }
}
