/**
 * One dependency cycle per strongly connected group of tasks, as task indexes
 * (`[a, b, c]` means a -> b -> c -> a). Tarjan's algorithm, written with an
 * explicit stack so a 100,000-task cycle cannot overflow the call stack; each
 * cycle is the shortest one through the group's first task in file order.
 * Only nodes marked in `include` are considered.
 */
export function findCycles(edges: number[][], include: boolean[]): number[][] {
  const groups = stronglyConnected(edges, include).filter((group) => group.length > 1);
  const cycles = groups.map((group) => shortestCycle(edges, group));
  return cycles.sort((a, b) => a[0]! - b[0]!);
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
