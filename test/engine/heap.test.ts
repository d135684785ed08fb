import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IndexedHeap } from "../../src/engine/heap.js";
import { TaskRecord, byDueAt, byPriority } from "../../src/engine/task-record.js";

interface Item {
  heapIndex: number;
  key: number;
  seq: number;
}

const less = (a: Item, b: Item): boolean => (a.key !== b.key ? a.key < b.key : a.seq < b.seq);

function item(key: number, seq: number): Item {
  return { heapIndex: -1, key, seq };
}

function popAll<T extends { heapIndex: number }>(heap: IndexedHeap<T>): T[] {
  const out: T[] = [];
  for (let next = heap.pop(); next !== undefined; next = heap.pop()) out.push(next);
  return out;
}

/** Random integers from a seeded generator, so failures reproduce. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function record(rank: number, seq: number, dueAt = 0): TaskRecord {
  const record = new TaskRecord(`t${seq}`, "echo", undefined, rank, 1, 0, seq, 0, undefined);
  record.dueAt = dueAt;
  return record;
}

describe("IndexedHeap", () => {
  it("pops an empty heap as undefined", () => {
    const heap = new IndexedHeap<Item>(less);
    expect(heap.pop()).toBeUndefined();
    expect(heap.peek()).toBeUndefined();
    expect(heap.size).toBe(0);
  });

  it("keeps FIFO order among equal keys (comparator stability)", () => {
    const heap = new IndexedHeap<Item>(less);
    for (let seq = 1; seq <= 100; seq++) heap.push(item(7, seq));
    expect(popAll(heap).map((i) => i.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it("pops 10k random items in sorted order", () => {
    const random = seeded(42);
    const heap = new IndexedHeap<Item>(less);
    const items = Array.from({ length: 10_000 }, (_, seq) => item(Math.floor(random() * 100), seq));
    for (const i of items) heap.push(i);
    expect(heap.size).toBe(10_000);
    const expected = [...items].sort((a, b) => a.key - b.key || a.seq - b.seq);
    expect(popAll(heap)).toEqual(expected);
    expect(items.every((i) => i.heapIndex === -1)).toBe(true);
  });

  it("removes from the middle and keeps every index and the order", () => {
    const random = seeded(7);
    const heap = new IndexedHeap<Item>(less);
    const items = Array.from({ length: 2_000 }, (_, seq) => item(Math.floor(random() * 50), seq));
    for (const i of items) heap.push(i);
    const removed = new Set<Item>();
    for (const i of items) {
      if (random() < 0.4) {
        expect(heap.remove(i)).toBe(true);
        expect(i.heapIndex).toBe(-1);
        removed.add(i);
      }
    }
    expect(heap.size).toBe(items.length - removed.size);
    // Removing again, or an item never pushed, changes nothing.
    for (const i of removed) expect(heap.remove(i)).toBe(false);
    expect(heap.remove(item(1, 99_999))).toBe(false);
    const expected = items.filter((i) => !removed.has(i)).sort((a, b) => a.key - b.key || a.seq - b.seq);
    expect(popAll(heap)).toEqual(expected);
  });

  it("does not remove an item that belongs to another heap at the same index", () => {
    const a = new IndexedHeap<Item>(less);
    const b = new IndexedHeap<Item>(less);
    const inA = item(1, 1);
    const inB = item(1, 2);
    a.push(inA);
    b.push(inB);
    expect(a.remove(inB)).toBe(false);
    expect(a.size).toBe(1);
    expect(b.size).toBe(1);
  });

  it("refuses an item it holds already, which pushed twice came out twice and outlived its remove()", () => {
    const heap = new IndexedHeap<Item>(less);
    const b = item(2, 1);
    const c = item(3, 2);
    heap.push(b);
    heap.push(c);
    expect(() => heap.push(b)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: "IndexedHeap.push: the item is in this heap already, at index 0: an item is held once (remove it first)" }));
    expect(heap.remove(b)).toBe(true);
    expect(popAll(heap)).toEqual([c]);
    // Removed, or popped, it may be pushed again.
    heap.push(b);
    expect(heap.pop()).toBe(b);
    heap.push(b);
    expect(popAll(heap)).toEqual([b]);
  });

  it("drains every item and resets their indexes", () => {
    const heap = new IndexedHeap<Item>(less);
    const items = [item(3, 1), item(1, 2), item(2, 3)];
    for (const i of items) heap.push(i);
    expect(new Set(heap.drain())).toEqual(new Set(items));
    expect(heap.size).toBe(0);
    expect(items.every((i) => i.heapIndex === -1)).toBe(true);
  });

  it("agrees with a sorted model under random push, pop and remove", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.record({ op: fc.constant("push" as const), key: fc.integer({ min: 0, max: 5 }) }), fc.record({ op: fc.constantFrom("pop" as const, "remove" as const), pick: fc.nat() })), { maxLength: 300 }),
        (ops) => {
          const heap = new IndexedHeap<Item>(less);
          let model: Item[] = [];
          let seq = 0;
          for (const op of ops) {
            if (op.op === "push") {
              const i = item(op.key, seq++);
              heap.push(i);
              model.push(i);
              model.sort((x, y) => x.key - y.key || x.seq - y.seq);
            } else if (op.op === "pop") {
              expect(heap.pop()).toBe(model.shift());
            } else if (model.length > 0) {
              const victim = model[op.pick % model.length]!;
              expect(heap.remove(victim)).toBe(true);
              model = model.filter((i) => i !== victim);
            }
            expect(heap.size).toBe(model.length);
            expect(heap.peek()).toBe(model[0]);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("task comparators", () => {
  it("orders ready tasks by priority desc, then submission sequence", () => {
    const heap = new IndexedHeap<TaskRecord>(byPriority);
    const records = [record(1, 1), record(3, 2), record(1, 3), record(0, 4), record(3, 5), record(2, 6)];
    for (const r of records) heap.push(r);
    expect(popAll(heap).map((r) => r.seq)).toEqual([2, 5, 6, 1, 3, 4]);
  });

  it("orders delayed tasks by when they are due, then submission sequence", () => {
    const heap = new IndexedHeap<TaskRecord>(byDueAt);
    const records = [record(3, 1, 500), record(0, 2, 100), record(1, 3, 500), record(2, 4, 100), record(0, 5, 50)];
    for (const r of records) heap.push(r);
    expect(popAll(heap).map((r) => r.seq)).toEqual([5, 2, 4, 1, 3]);
  });

  it("never reads the clock", () => {
    const now = Date.now;
    const monotonic = performance.now;
    let reads = 0;
    Date.now = () => {
      reads++;
      return now();
    };
    performance.now = () => {
      reads++;
      return monotonic.call(performance);
    };
    try {
      byPriority(record(1, 1), record(1, 2));
      byDueAt(record(1, 1, 5), record(1, 2, 5));
    } finally {
      Date.now = now;
      performance.now = monotonic;
    }
    expect(reads).toBe(0);
  });
});

describe("IndexedHeap from JavaScript", () => {
  it.each([undefined, null, 5])("refuses a comparator that is not a function (%s) when made, not at the second push", (less) => {
    const make = (): IndexedHeap<Item> => new IndexedHeap<Item>(less as unknown as (a: Item, b: Item) => boolean);
    expect(make).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: expect.stringContaining("IndexedHeap needs a comparator, less(a, b) => boolean") }));
  });
});
