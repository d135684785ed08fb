/** A binary min-heap of numbers: Kahn's algorithm uses it to pick the earliest ready task in file order. */
export class MinHeap {
  readonly #items: number[] = [];

  push(value: number): void {
    const items = this.#items;
    items.push(value);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (items[parent]! <= value) break;
      items[index] = items[parent]!;
      index = parent;
    }
    items[index] = value;
  }

  pop(): number | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && items[right]! < items[left]! ? right : left;
      if (items[child]! >= last) break;
      items[index] = items[child]!;
      index = child;
    }
    items[index] = last;
    return top;
  }
}
