import { shown, TaskqError } from "../errors.js";

/** An item that knows its own position in the heap that holds it (-1 when in none). */
export interface HeapItem {
  heapIndex: number;
}

/**
 * An indexed binary min-heap: `less(a, b)` true means a comes out first.
 * Items record their index, so removing an arbitrary item is O(log n), which is
 * what makes cancelling a queued task cheap. `less` must be a strict total order
 * that never changes while an item is in the heap (so: never read the clock).
 */
export class IndexedHeap<T extends HeapItem> {
  readonly #items: T[] = [];
  readonly #less: (a: T, b: T) => boolean;

  constructor(less: (a: T, b: T) => boolean) {
    // From JavaScript: none given failed only at the second push, as "this[#less] is not a function".
    if (typeof less !== "function") throw new TaskqError("INVALID_OPTION", `IndexedHeap needs a comparator, less(a, b) => boolean (true: a comes out first), got ${shown(less)}`);
    this.#less = less;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  /** Throws INVALID_OPTION for an item this heap holds already: pushed twice, it came out twice, and remove() took out one copy. */
  push(item: T): void {
    const held = item.heapIndex;
    if (held >= 0 && this.#items[held] === item) {
      throw new TaskqError("INVALID_OPTION", `IndexedHeap.push: the item is in this heap already, at index ${held}: an item is held once (remove it first)`);
    }
    item.heapIndex = this.#items.length;
    this.#items.push(item);
    this.#up(item.heapIndex);
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    if (top === undefined) return undefined;
    const last = items.pop()!;
    if (last !== top) {
      items[0] = last;
      last.heapIndex = 0;
      this.#down(0);
    }
    top.heapIndex = -1;
    return top;
  }

  /** Removes `item` if it is in this heap; O(log n). */
  remove(item: T): boolean {
    const index = item.heapIndex;
    const items = this.#items;
    if (index < 0 || items[index] !== item) return false;
    const last = items.pop()!;
    if (last !== item) {
      items[index] = last;
      last.heapIndex = index;
      this.#down(index);
      this.#up(last.heapIndex);
    }
    item.heapIndex = -1;
    return true;
  }

  /** Empties the heap and returns its items in no particular order. */
  drain(): T[] {
    const items = this.#items.splice(0);
    for (const item of items) item.heapIndex = -1;
    return items;
  }

  #up(index: number): void {
    const items = this.#items;
    const item = items[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = items[parentIndex]!;
      if (!this.#less(item, parent)) break;
      items[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    items[index] = item;
    item.heapIndex = index;
  }

  #down(index: number): void {
    const items = this.#items;
    const length = items.length;
    const item = items[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = left;
      if (right < length && this.#less(items[right]!, items[left]!)) child = right;
      const childItem = items[child]!;
      if (!this.#less(childItem, item)) break;
      items[index] = childItem;
      childItem.heapIndex = index;
      index = child;
    }
    items[index] = item;
    item.heapIndex = index;
  }
}
