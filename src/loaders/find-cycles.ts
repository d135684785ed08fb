/**
 * The tasks of a strongly connected group (each waits on each through dependencies, so none can start), and its cycles
 * as task indexes (`[a, b, c]` means a -> b -> c -> a), each from its first task in file order.
 */
export interface CycleGroup {
  /** Its tasks, in file order. */
  members: number[];
  /** Every cycle of the group where `complete`; else the first few found, as examples. */
  cycles: number[][];
  /** Whether `cycles` holds every one: removing one dependency of each then ends them all, which it may not where only examples are. */
  complete: boolean;
}

/**
 * The strongly connected groups of the tasks marked in `include` that hold a cycle, in the order of their first tasks, with
 * their cycles: every one where there are at most MAX_CYCLES and they are found within the budget, so that removing
 * one dependency of each ends them all, and not one is left for the next run; past that, a tangle (40 tasks that all depend
 * on each other has more cycles than anyone reads) is told whole by the caller. Tarjan's algorithm and the look for cycles
 * are written with explicit stacks, so a 100,000-task cycle cannot overflow the call stack.
 */
export function findCycles(edges: number[][], include: boolean[]): CycleGroup[] {
  const unique = edges.map((targets) => (targets.length > 1 ? [...new Set(targets)] : targets));
  let budget = SHARED_BUDGET;
  const groups: CycleGroup[] = [];
  for (const group of stronglyConnected(unique, include)) {
    if (group.length < 2) continue;
    const members = group.sort((a, b) => a - b);
    const ring = ringOf(unique, members);
    if (ring !== undefined) {
      groups.push({ members, cycles: [ring], complete: true });
      continue;
    }
    const found = cyclesOf(unique, members, budget);
    budget = found.budget;
    // A budget spent before a cycle was found leaves none to show: the shortest through the group's first task is one.
    groups.push({ members, cycles: found.cycles.length > 0 ? found.cycles : [shortestCycle(unique, members)], complete: found.complete });
  }
  return groups.sort((a, b) => a.members[0]! - b.members[0]!);
}

/** At most this many cycles of a group are told one by one; a group with more is told whole. */
export const MAX_CYCLES = 16;

/**
 * The steps the look for every cycle may take in a group, per task and dependency of it, and in a file besides, shared by
 * its groups: a look over every path of tasks takes exponential time in a tangle, where it stops. So a group's own share
 * is never taken by another's tangle, and the whole stays linear in the file's size.
 */
const BUDGET_PER_STEP = 32;
const SHARED_BUDGET = 100_000;

/** The group's one cycle, from its first task, where it is one and nothing more (each member has one dependency inside it); else undefined. */
function ringOf(edges: number[][], members: number[]): number[] | undefined {
  const inside = new Set(members);
  const next = new Map<number, number>();
  for (const member of members) {
    const targets = edges[member]!.filter((target) => inside.has(target));
    if (targets.length !== 1) return undefined;
    next.set(member, targets[0]!);
  }
  const ring = [members[0]!];
  for (let node = next.get(members[0]!)!; node !== members[0]; node = next.get(node)!) ring.push(node);
  return ring;
}

/**
 * Every cycle of a group, each found once, from its first task in file order: from a task, every path through tasks
 * after it that comes back to it, the tasks after it that can reach it and be reached from it alone (Johnson's choice
 * of where to look next: the first task of the next group, among those after the one looked from, that holds a cycle;
 * so a 20,000-task cycle with one more through its second half takes two looks, not one from each of its tasks).
 * Incomplete past MAX_CYCLES, or once the group's own budget and the shared one are spent (the shared steps left are returned).
 * Sorted by first task, then length: the shortest first, as a reader takes them in.
 */
function cyclesOf(edges: number[][], members: number[], shared: number): { cycles: number[][]; complete: boolean; budget: number } {
  // The group on its own, its tasks numbered from 0 in file order: a look costs its size, not the file's.
  const localOf = new Map(members.map((member, index) => [member, index]));
  const inner = members.map((member) => edges[member]!.flatMap((target) => localOf.get(target) ?? []));
  const size = members.length + inner.reduce((total, targets) => total + targets.length, 0);
  let budget = shared + BUDGET_PER_STEP * size;
  const cycles: number[][] = [];
  const onPath = new Uint8Array(members.length);
  // The path looked along, and the next dependency to take from each of its tasks: a 20,000-task one in two arrays, not 20,000 of its own.
  const pathNodes = new Int32Array(members.length);
  const pathNext = new Int32Array(members.length);
  let complete = true;
  // The group itself first: it is one already, from its first task.
  let part: number[] | undefined = members.map((_, index) => index);
  search: while (part !== undefined) {
    const start: number = part[0]!;
    const inside = new Uint8Array(members.length);
    for (const node of part) inside[node] = 1;
    let depth = 1;
    pathNodes[0] = start;
    pathNext[0] = 0;
    onPath[start] = 1;
    while (depth > 0) {
      const node = pathNodes[depth - 1]!;
      const out = inner[node]!;
      const next = pathNext[depth - 1]!;
      if (next === out.length) {
        depth--;
        onPath[node] = 0;
        continue;
      }
      pathNext[depth - 1] = next + 1;
      if (--budget < 0) {
        complete = false;
        break search;
      }
      const target = out[next]!;
      if (target === start) {
        cycles.push(Array.from(pathNodes.subarray(0, depth), (step) => members[step]!));
        if (cycles.length > MAX_CYCLES) {
          complete = false;
          break search;
        }
      } else if (inside[target] === 1 && target > start && onPath[target] === 0) {
        pathNodes[depth] = target;
        pathNext[depth] = 0;
        depth++;
        onPath[target] = 1;
      }
    }
    budget -= size;
    part = stronglyConnected(inner, inner.map((_, index) => index > start))
      .filter((group) => group.length > 1)
      .map((group) => group.sort((a, b) => a - b))
      .sort((a, b) => a[0]! - b[0]!)[0];
  }
  // Stable: cycles of one length through the same first task stay in the order they were found.
  cycles.sort((a, b) => a[0]! - b[0]! || a.length - b.length);
  return { cycles: complete ? cycles : cycles.slice(0, MAX_CYCLES), complete, budget: Math.min(Math.max(budget, 0), shared) };
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
function shortestCycle(edges: number[][], members: number[]): number[] {
  const inside = new Set(members);
  const start = members[0]!;
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
      if (inside.has(target) && !parent.has(target)) {
        parent.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}
