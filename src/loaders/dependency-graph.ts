import type { SourceLocator } from "./locator.js";
import type { ProblemList } from "./problem-list.js";
import { quote } from "./report-issues.js";
import { closestMatch } from "./suggest.js";
import { findCycles } from "./find-cycles.js";
import { MinHeap } from "./min-heap.js";

/** A task's dependencies as written: each id with its index in the `dependsOn` list (undefined for the one-string form). */
export interface DependencyInput {
  id: string;
  dependsOn: Array<{ id: string; index: number | undefined }>;
}

/** Suggestions cost a scan of all ids; beyond this many unknown dependencies, skip them. */
const MAX_SUGGESTIONS = 50;

/**
 * Checks dependencies (unknown ids, self-dependency, cycles) and returns the
 * tasks in topological order: Kahn's algorithm, ready ties broken by file order.
 */
export function orderTasks(tasks: DependencyInput[], locator: SourceLocator, problems: ProblemList): number[] {
  const indexOf = new Map(tasks.map((task, index) => [task.id, index]));
  const dependents: number[][] = tasks.map(() => []);
  const waitingOn = new Array<number>(tasks.length).fill(0);
  const edges: number[][] = tasks.map(() => []);
  let suggestions = 0;
  for (const [index, task] of tasks.entries()) {
    for (const dependency of task.dependsOn) {
      const at = () => locator.offsetOf(dependencyPath(task.id, dependency.index));
      if (dependency.id === task.id) {
        problems.atOffset(at(), `task ${quote(task.id)} depends on itself`);
        continue;
      }
      const target = indexOf.get(dependency.id);
      if (target === undefined) {
        const match = suggestions++ < MAX_SUGGESTIONS ? closestMatch(dependency.id, indexOf.keys()) : undefined;
        const hint = match === undefined ? "" : `; did you mean ${quote(match)}?`;
        problems.atOffset(at(), `task ${quote(task.id)} depends on ${quote(dependency.id)}, which is not defined${hint}`);
        continue;
      }
      edges[index]!.push(target);
      dependents[target]!.push(index);
      waitingOn[index]!++;
    }
  }
  const ready = new MinHeap();
  for (const [index, count] of waitingOn.entries()) if (count === 0) ready.push(index);
  const order: number[] = [];
  for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
    order.push(next);
    for (const dependent of dependents[next]!) if (--waitingOn[dependent]! === 0) ready.push(dependent);
  }
  if (order.length < tasks.length) reportCycles(tasks, edges, waitingOn, locator, problems);
  return order;
}

function reportCycles(tasks: DependencyInput[], edges: number[][], waitingOn: number[], locator: SourceLocator, problems: ProblemList): void {
  const stuck = waitingOn.map((count) => count > 0);
  for (const cycle of findCycles(edges, stuck)) {
    const positions = cycle.map((from, step) => {
      const to = cycle[(step + 1) % cycle.length]!;
      const dependency = tasks[from]!.dependsOn.find((entry) => entry.id === tasks[to]!.id);
      return locator.offsetOf(dependencyPath(tasks[from]!.id, dependency?.index));
    });
    const names = [...cycle, cycle[0]!].map((index) => tasks[index]!.id);
    const where = cycle.map((from, step) => `${tasks[from]!.id} -> ${tasks[cycle[(step + 1) % cycle.length]!]!.id} at ${problems.lineCol(positions[step]!)}`);
    problems.atOffset(positions[0]!, `dependency cycle: ${names.join(" -> ")} (${where.join(", ")}); remove one of these dependencies`);
  }
}

function dependencyPath(id: string, index: number | undefined): Array<string | number> {
  return index === undefined ? ["tasks", id, "dependsOn"] : ["tasks", id, "dependsOn", index];
}
