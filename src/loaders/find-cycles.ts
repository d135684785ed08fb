/**
 * The dependency cycles of each strongly connected group of tasks, as task indexes
 * (`[a, b, c]` means a -> b -> c -> a). Tarjan's algorithm, written with an
 * explicit stack so a 100,000-task cycle cannot overflow the call stack; each
 * cycle is the shortest one through the group's first task in file order. A group
 * that is more than that one cycle (a <-> b <-> c) has others, which removing one of
 * its dependencies would leave: they are found in the group without the cycle's last
 * dependency and in the group without its first, and so on, so every problem is reported
 * at once, not one per run.
 * Only nodes marked in `include` are considered.
 */
export function findCycles(edges: number[][], include: boolean[]): number[][] {
  const cycles: number[][] = [];
  let looks = MAX_LOOKS;
  /** Each cycle found, by its tasks in order: a look without one dependency may find again one found without the other. */
  const seen = new Set<string>();
  /** A group still to look in, with `edges` less the dependencies taken out on the way to it (`edges` itself for the first groups). */
  const pending = stronglyConnected(edges, include)
    .filter((group) => group.length > 1)
    .map((group) => ({ group, rest: edges }));
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    const { group, rest } = next;
    const cycle = shortestCycle(rest, group);
    const key = cycle.join(",");
    if (seen.has(key)) continue;
    seen.add(key);
    cycles.push(cycle);
    if (isRing(rest, group) || looks <= 0) continue;
    const members = new Array<boolean>(edges.length).fill(false);
    for (const member of group) members[member] = true;
    // Without the dependency that closes the cycle back to its first task: the next look from that task finds the cycles
    // that share the cycle's first dependency with it (a -> b -> a, then a -> b -> c -> a), which taking that one out would hide.
    const [last, first] = [[cycle.at(-1)!, cycle[0]!], [cycle[0]!, cycle[1 % cycle.length]!]] as const;
    looks--;
    const without = withoutDependency(rest, last);
    pending.push(...stronglyConnected(without, members).filter((part) => part.length > 1).map((part) => ({ group: part, rest: without })));
    // And without its first, for those through the last (a -> b -> a, then a -> c -> b -> a): only the part that still holds
    // the last, as every other cycle is left in the look above.
    if (looks <= 0) continue;
    looks--;
    const other = withoutDependency(rest, first);
    const through = stronglyConnected(other, members).find((part) => part.length > 1 && part.includes(last[0]) && part.includes(last[1]));
    if (through !== undefined) pending.push({ group: through, rest: other });
  }
  // Stable: cycles through the same first task stay in the order they were found.
  return cycles.sort((a, b) => a[0]! - b[0]!);
}

/**
 * Looks for more cycles in a group after its first at most this many times in a file, two for each
 * cycle found (without its last dependency, and without its first): each look is a pass over the whole
 * graph, and a tangle of 1,000 tasks that all depend on each other has more cycles than anyone reads.
 */
const MAX_LOOKS = 100;

/** `edges` less one dependency, `[from, to]`: a copy, `edges` kept as it is. */
function withoutDependency(edges: number[][], [from, to]: readonly [number, number]): number[][] {
  const rest = edges.slice();
  rest[from] = edges[from]!.filter((target) => target !== to);
  return rest;
}

/** Whether the group is one cycle and nothing more: each member has one dependency inside it. */
function isRing(edges: number[][], group: number[]): boolean {
  const members = new Set(group);
  return group.every((member) => edges[member]!.filter((target) => members.has(target)).length === 1);
}

function stronglyConnected(edges: number[][], include: boolean[]): number[][] {
  const count = edges.length;
  const order = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const stack: number[] = [];
  const groups: number[][] = [];
  let counter = 0;
  const visit = (node: number, work: Array<[number, number]>) => {
    order[node] = low[node] = counter++;
    stack.push(node);
    onStack[node] = 1;
    work.push([node, 0]);
  };
  for (let start = 0; start < count; start++) {
    if (!include[start] || order[start] !== -1) continue;
    const work: Array<[number, number]> = [];
    visit(start, work);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [node, next] = frame;
      const out = edges[node]!;
      if (next < out.length) {
        frame[1]++;
        const target = out[next]!;
        if (!include[target]) continue;
        if (order[target] === -1) visit(target, work);
        else if (onStack[target]) low[node] = Math.min(low[node]!, order[target]!);
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low[parent[0]] = Math.min(low[parent[0]]!, low[node]!);
      if (low[node] === order[node]) {
        const group: number[] = [];
        let member: number;
        do {
          member = stack.pop()!;
          onStack[member] = 0;
          group.push(member);
        } while (member !== node);
        groups.push(group);
      }
    }
  }
  return groups;
}

/** Breadth-first search inside the group from its first task back to itself. */
function shortestCycle(edges: number[][], group: number[]): number[] {
  const members = new Set(group);
  const start = group.reduce((min, node) => Math.min(min, node));
  const parent = new Map<number, number>([[start, -1]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const target of edges[node]!) {
      if (target === start) {
        const path = [node];
        for (let step = parent.get(node)!; step !== -1; step = parent.get(step)!) path.push(step);
        return path.reverse();
      }
      if (members.has(target) && !parent.has(target)) {
        parent.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}
