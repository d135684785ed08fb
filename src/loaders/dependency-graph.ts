import type { SourceLocator } from "./locator.js";
import type { ProblemList } from "./problem-list.js";
import { fullWidthColonKey, fullWidthColonWords, invisibleInKey, quote, readsAsNull } from "./report-issues.js";
import { closestMatch } from "./suggest.js";
import { taskSchema } from "./schema.js";
import { findCycles } from "./find-cycles.js";
import { MinHeap } from "./min-heap.js";
import { isTaskId, TASK_ID_EXPECTED } from "../task-id.js";

/** A task's dependencies as written: each id with its index in the `dependsOn` list (undefined for the one-string form). */
export interface DependencyInput {
  id: string;
  /** `repeats`: the indexes of the list's later items that name the same task again (`dependsOn: [b, b]`), which count once. */
  dependsOn: Array<{ id: string; index: number | undefined; repeats?: number[] }>;
}

/** A cycle longer than this is shown by its first steps. */
const CYCLE_STEPS_SHOWN = 10;

/** Suggestions cost a scan of all ids; beyond this many unknown dependencies, skip them. */
const MAX_SUGGESTIONS = 50;

/**
 * Checks dependencies (unknown or invalid ids, self-dependency, cycles) and returns the
 * tasks in topological order: Kahn's algorithm, ready ties broken by file order.
 */
export function orderTasks(tasks: DependencyInput[], locator: SourceLocator, problems: ProblemList): number[] {
  const indexOf = new Map(tasks.map((task, index) => [task.id, index]));
  const dependents: number[][] = tasks.map(() => []);
  const waitingOn = new Array<number>(tasks.length).fill(0);
  const edges: number[][] = tasks.map(() => []);
  let suggestions = 0;
  /** The id suggested for an unknown dependency, by its place and id (see below). */
  const suggested = new Map<string, string>();
  for (const [index, task] of tasks.entries()) {
    for (const dependency of task.dependsOn) {
      const at = () => locator.offsetOf(dependencyPath(task.id, dependency.index));
      if (dependency.id === task.id) {
        // What to do, where it was told only what is wrong: a task cannot wait for its own end.
        problems.atOffset(at(), `task ${quote(task.id)} depends on itself, and would wait for its own end forever; remove ${dependency.index === undefined ? "its dependsOn" : `${quote(task.id)} from its dependsOn`}`, task.id);
        continue;
      }
      const target = indexOf.get(dependency.id);
      if (target === undefined) {
        // Not the task itself: a task cannot depend on itself, so that is never what was meant.
        // Only where written plain: a quoted value (`dependsOn: "-a"`) is the text meant, no list item missing its space.
        const glued = dependency.index === undefined ? dashesGlued(dependency.id, indexOf, task.id, () => locator.plainSourceOf(dependencyPath(task.id, undefined)) !== undefined) : undefined;
        const several = glued === undefined ? severalIds(dependency.id, indexOf, task.id) : undefined;
        // A value several tasks share (dependsOn: *deps) has the hint its first task had, so that they are told once (see ProblemList.at), past the budget too.
        const offset = at();
        const place = `${offset}:${dependency.id}`;
        const earlier = suggested.get(place);
        const reusable = earlier !== undefined && earlier !== task.id && !task.dependsOn.some((other) => other.id === earlier);
        const match = several !== undefined || glued !== undefined ? undefined : reusable ? earlier : suggestions++ < MAX_SUGGESTIONS ? closestMatch(dependency.id, otherIds(indexOf.keys(), task.id, task.dependsOn)) : undefined;
        if (match !== undefined && earlier === undefined) suggested.set(place, match);
        const hint = glued !== undefined ? `; a list item needs a space after its -: write ${glued.map((id) => `- ${id}`).join(", ")} on ${glued.length === 1 ? "a line" : "lines"} of ${glued.length === 1 ? "its" : "their"} own below dependsOn, or dependsOn: [${glued.join(", ")}]` : several !== undefined ? `; to depend on several tasks, list them: dependsOn: [${several.join(", ")}]` : match === undefined ? "" : `; did you mean ${quote(match)}?`;
        // An id no task can have ("../x", "a/b") is not a task left out: say what is wrong with it.
        const what = several === undefined && !isTaskId(dependency.id) ? `is not a valid task id: ${TASK_ID_EXPECTED}` : "is not defined";
        // `bu\u200bild`, which looks just like the id meant: the character told, and where, as the did-you-mean would not say why.
        let invisible = what === "is not defined" ? "" : invisibleInKey(dependency.id, offset, problems, locator);
        // `- retries\uff1a 2` below dependsOn, a task's field and its value read as an id, a full-width colon between them: to move out
        // of dependsOn. Only a task's field: `- b\uff1a c` was told to write b:, a mapping in dependsOn.
        const fullWidth = what === "is not defined" ? undefined : fullWidthColonKey(dependency.id, true);
        if (fullWidth !== undefined && Object.hasOwn(taskSchema.shape, fullWidth)) invisible = `; ${fullWidthColonWords(fullWidth, "dependsOn")}`;
        // An id refused already where it is written (`dependsOn: ! ~`, `! null`, `[! null]`: a `!` before it) is not said again.
        const say = what === "is not defined" && !readsAsNull(dependency.id) ? problems.atOffset.bind(problems) : problems.followOn.bind(problems);
        say(offset, `task ${quote(task.id)} depends on ${quote(dependency.id)}, which ${what}${invisible === "" ? hint : invisible}`, task.id);
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

/**
 * `dependsOn: -b`, or `-b` and `-c` on lines of their own below `dependsOn:` (one text, "-b -c"):
 * list items written with no space after the dash, each read as text (the one-string form only, written plain). The ids
 * meant, each a defined task other than `self` (as severalIds), or undefined: the advice must lead to a workflow that loads.
 */
function dashesGlued(written: string, indexOf: Map<string, number>, self: string, isPlain: () => boolean): string[] | undefined {
  const words = written.split(/\s+/);
  if (!words.every((word) => word.length > 1 && word.startsWith("-") && word.slice(1) !== self && indexOf.has(word.slice(1)))) return undefined;
  if (!isPlain()) return undefined;
  return words.map((word) => word.slice(1));
}

/**
 * `dependsOn: "lint, test"` or `dependsOn: lint test`: one string naming several defined tasks,
 * split at commas and spaces (no id has either), or undefined when it is not that.
 */
function severalIds(written: string, indexOf: Map<string, number>, self: string): string[] | undefined {
  if (!/[\s,]/.test(written)) return undefined;
  const ids = written.split(/[\s,]+/).filter((id) => id !== "");
  return ids.length > 1 && ids.every((id) => id !== self && indexOf.has(id)) ? ids : undefined;
}

/**
 * Each cycle as a problem, at its first dependency; cycles that share a dependency as one problem (a -> b -> c -> a and
 * b -> c -> d -> b, both through b -> c), which one edit may end, at the dependency they all go through where there is one:
 * told apart, each said "remove one of these dependencies" and named the one they share again. A group of tasks with
 * more cycles than are told one by one (see findCycles) is one problem, which names dependencies whose removal ends
 * them all: told by the first few, removing one dependency of each left others, told on the next run.
 */
function reportCycles(tasks: DependencyInput[], edges: number[][], waitingOn: number[], locator: SourceLocator, problems: ProblemList): void {
  const stuck = waitingOn.map((count) => count > 0);
  const offsetOf = (from: number, to: number): number => {
    const dependency = tasks[from]!.dependsOn.find((entry) => entry.id === tasks[to]!.id);
    return locator.offsetOf(dependencyPath(tasks[from]!.id, dependency?.index));
  };
  /** Every place the dependency is written (`dependsOn: [b, b]`: 2:28 and 2:31): removed at one only, the other kept the cycle. */
  const placesOf = (from: number, to: number): string => {
    const dependency = tasks[from]!.dependsOn.find((entry) => entry.id === tasks[to]!.id);
    const places = [dependency?.index, ...(dependency?.repeats ?? [])].map((index) => problems.lineCol(locator.offsetOf(dependencyPath(tasks[from]!.id, index))));
    return [...new Set(places)].join(" and ");
  };
  const edgeKey = (from: number, to: number): number => from * tasks.length + to;
  const stepsOf = (cycle: number[]): number[] => cycle.map((from, step) => edgeKey(from, cycle[(step + 1) % cycle.length]!));
  for (const { members, cycles, complete } of findCycles(edges, stuck)) {
    const joined = complete ? joinedByDependency(cycles, stepsOf) : undefined;
    // Past CYCLES_NAMED + 1 in one problem, some go unnamed, and "one dependency of each" cannot be followed.
    if (joined === undefined || joined.some((group) => group.length > CYCLES_NAMED + 1)) {
      reportTangle(members, cycles, tasks, edges, offsetOf, placesOf, problems);
      continue;
    }
    for (const group of joined) {
      if (group.length === 1) {
        const cycle = group[0]!;
        const { path, where } = cycleWords(cycle, tasks, placesOf);
        problems.atOffset(offsetOf(cycle[0]!, cycle[1 % cycle.length]!), `dependency cycle: ${path} (${where.join(", ")}); remove one of these dependencies`);
        continue;
      }
      // The dependencies every cycle of the group goes through, in the first's order: removing one ends them all.
      const sets = group.map((cycle) => new Set(stepsOf(cycle)));
      const first = group[0]!;
      const shared = first.flatMap((from, step) => {
        const to = first[(step + 1) % first.length]!;
        return sets.every((steps) => steps.has(edgeKey(from, to))) ? [[from, to] as const] : [];
      });
      const words = group.map((cycle) => cycleWords(cycle, tasks, placesOf));
      const paths = words.map((word) => word.path);
      const listed = `${paths.slice(0, -1).join(", ")} and ${paths.at(-1)!}`;
      const where = [...new Set(words.flatMap((word) => word.where))];
      const all = group.length === 2 ? "both" : `all ${group.length}`;
      const edge = ([from, to]: readonly [number, number]) => `${tasks[from]!.id} -> ${tasks[to]!.id}`;
      const advice =
        shared.length === 0
          ? `remove one dependency of each; one they share ends every cycle through it`
          : `remove ${shared.length === 1 ? edge(shared[0]!) : `one of ${sharedWords(shared.map(edge))}`}, which ${all} go through, or one other dependency of each`;
      const at = shared[0] === undefined ? offsetOf(first[0]!, first[1 % first.length]!) : offsetOf(...shared[0]);
      problems.atOffset(at, `dependency cycles ${listed}, which share a dependency (${where.join(", ")}); ${advice}`);
    }
  }
}

/** Cycles joined by a shared dependency, directly or through others, each group in the order given: a union-find over the cycles. */
function joinedByDependency(cycles: number[][], stepsOf: (cycle: number[]) => number[]): number[][][] {
  const parent = cycles.map((_, index) => index);
  const root = (index: number): number => {
    while (parent[index] !== index) index = parent[index] = parent[parent[index]!]!;
    return index;
  };
  const cycleOf = new Map<number, number>();
  for (const [index, cycle] of cycles.entries()) {
    for (const key of stepsOf(cycle)) {
      const other = cycleOf.get(key);
      if (other === undefined) cycleOf.set(key, index);
      else parent[root(index)] = root(other);
    }
  }
  const joined = new Map<number, number[][]>();
  for (const [index, cycle] of cycles.entries()) {
    const group = joined.get(root(index));
    if (group === undefined) joined.set(root(index), [cycle]);
    else group.push(cycle);
  }
  return [...joined.values()];
}

/**
 * A group of tasks with more cycles than are told one by one, as one problem: its tasks, its first cycles, and the
 * dependencies among them on a task written below their own (or above it, where those are fewer), at the first of them:
 * with those removed, each task of the group waits only on tasks on one side of it in the file, so no cycle is left.
 */
function reportTangle(
  members: number[],
  cycles: number[][],
  tasks: DependencyInput[],
  edges: number[][],
  offsetOf: (from: number, to: number) => number,
  placesOf: (from: number, to: number) => string,
  problems: ProblemList,
): void {
  const inside = new Set(members);
  const below: Array<[number, number]> = [];
  const above: Array<[number, number]> = [];
  for (const from of members) {
    for (const to of new Set(edges[from])) if (inside.has(to)) (to > from ? below : above).push([from, to]);
  }
  const [cut, side] = below.length <= above.length ? [below, "below"] : [above, "above"];
  const ids = members.length > TASKS_NAMED + 1 ? `${members.slice(0, TASKS_NAMED).map((member) => tasks[member]!.id).join(", ")} and ${(members.length - TASKS_NAMED).toLocaleString("en-US")} more` : `${members.slice(0, -1).map((member) => tasks[member]!.id).join(", ")} and ${tasks[members.at(-1)!]!.id}`;
  const paths = cycles.slice(0, CYCLES_NAMED).map((cycle) => cycleWords(cycle, tasks, placesOf).path);
  const such = paths.length === 1 ? paths[0]! : `${paths.slice(0, -1).join(", ")} and ${paths.at(-1)!}`;
  const where = cut.slice(0, cut.length > TASKS_NAMED + 1 ? TASKS_NAMED : cut.length).map(([from, to]) => `${tasks[from]!.id} -> ${tasks[to]!.id} at ${placesOf(from, to)}`);
  const more = where.length < cut.length ? ` and ${(cut.length - where.length).toLocaleString("en-US")} more` : "";
  problems.atOffset(
    offsetOf(...cut[0]!),
    `dependency cycles among ${members.length.toLocaleString("en-US")} tasks (${ids}), more than are told one by one, such as ${such}; remove from each of these tasks its dependencies on those ${side} it in the file, which ends every cycle: ${where.join(", ")}${more}`,
  );
}

/** How many tasks a tangle's problem names, and how many of the dependencies to remove; past one more, the rest are counted. */
const TASKS_NAMED = 10;

/** The dependencies cycles share, as named: past one more than CYCLES_NAMED, the first of them and how many more (a long ring's thousands made a line of megabytes). */
function sharedWords(edges: string[]): string {
  return edges.length > CYCLES_NAMED + 1 ? `${edges.slice(0, CYCLES_NAMED).join(", ")} and ${(edges.length - CYCLES_NAMED).toLocaleString("en-US")} more` : edges.join(", ");
}

/** How many cycles one problem names, of cycles that share a dependency (more are told as a tangle), and of a tangle's. */
const CYCLES_NAMED = 3;

/** A cycle's path (`a -> b -> a`) and where each of its dependencies is written (each place, where one is written twice); a long one by its first steps (a 2,000-task one made a 68 KB line). */
function cycleWords(cycle: number[], tasks: DependencyInput[], placesOf: (from: number, to: number) => string): { path: string; where: string[] } {
  const shown = cycle.length <= CYCLE_STEPS_SHOWN ? cycle.length : CYCLE_STEPS_SHOWN - 1;
  const id = (step: number) => tasks[cycle[step % cycle.length]!]!.id;
  const names = Array.from({ length: shown + 1 }, (_, step) => id(step));
  const where = Array.from({ length: shown }, (_, step) => `${id(step)} -> ${id(step + 1)} at ${placesOf(cycle[step]!, cycle[(step + 1) % cycle.length]!)}`);
  const more = shown === cycle.length ? "" : ` -> ... (${cycle.length.toLocaleString("en-US")} tasks in all) -> ${id(0)}`;
  if (more !== "") where.push("...");
  return { path: `${names.join(" -> ")}${more}`, where };
}

function dependencyPath(id: string, index: number | undefined): Array<string | number> {
  return index === undefined ? ["tasks", id, "dependsOn"] : ["tasks", id, "dependsOn", index];
}

/** `ids` but `self` and those its dependsOn lists already: a task never depends on itself, and one listed twice counts once. */
function* otherIds(ids: Iterable<string>, self: string, listed: readonly { id: string }[]): Generator<string> {
  const taken = new Set(listed.map((dependency) => dependency.id));
  for (const id of ids) if (id !== self && !taken.has(id)) yield id;
}
