import { IndexedHeap } from "./heap.js";
import { TaskRecord, byPriority, byDueAt } from "./task-record.js";

/** The longest delay setTimeout honours; a longer one would fire after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How far apart two measures of one runAt may fall (see promoteDue): the two clocks are read side
 * by side, with nothing allocated between them, so a few milliseconds at most. No more: a task
 * whose runAt was read before a wall clock step may otherwise come due this much early.
 */
const CLOCK_SLACK_MS = 20;

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

  /**
   * Pops every delayed task whose time has come; `due` moves each one on. A task whose runAt
   * is no later than one that came due comes with it, as Go's heap ordered by runAt has it:
   * dueAt is runAt measured against Date.now(), in whole milliseconds and read apart from
   * performance.now() (a garbage collection may come between), so tasks of one runAt are due
   * a little apart, in no order of theirs. Popped one by one, the first would start alone,
   * ahead of a higher priority or an earlier submission of the same runAt. Within
   * CLOCK_SLACK_MS only, so a wall clock stepped forward brings no task on by more.
   */
  promoteDue(due: (record: TaskRecord) => void): void {
    if (this.delayed.size === 0) return;
    const now = performance.now();
    let runAt = -Infinity;
    for (let top = this.delayed.peek(); top !== undefined && (top.dueAt <= now || (top.runAt <= runAt && top.dueAt < now + CLOCK_SLACK_MS)); top = this.delayed.peek()) {
      this.delayed.pop();
      if (top.runAt > runAt) runAt = top.runAt;
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
