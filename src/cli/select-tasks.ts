import { UsageError } from "../errors.js";
import { escapeControls } from "../escape-controls.js";
import { taskNoteText } from "../loaders/build-workflow.js";
import type { Workflow, WorkflowTask } from "../loaders/index.js";
import { quote } from "../loaders/report-issues.js";
import { closestMatch } from "../loaders/suggest.js";
import { isTaskId, TASK_ID_EXPECTED } from "../task-id.js";
import { withoutSpaces } from "./flags.js";
import { shellWord } from "./shell-word.js";
import type { TaskSelection } from "./task-selection.js";

/** The most unknown ids that get a "did you mean": each looks at every task id. */
const MAX_SUGGESTIONS = 5;

/**
 * The workflow cut to the tasks `ids` names and everything they depend on, transitively, as make
 * and Taskfile run a target: the others are left out of the run, not cancelled. The order stays the
 * file's topological one. An id the file has no task for is a usage error naming each such id, with
 * the task meant where one is close, before anything runs.
 */
export function selectTasks(workflow: Workflow, ids: readonly string[], afterFlags?: ReadonlyMap<string, string>): { workflow: Workflow; selection: TaskSelection } {
  const byId = new Map<string, WorkflowTask>();
  for (const task of workflow.tasks) byId.set(task.id, task);
  const named = [...new Set(ids)];
  const unknown = named.filter((id) => !byId.has(id));
  if (unknown.length > 0) throw new UsageError(unknownTasks(workflow.file, unknown, byId.keys(), afterFlags));
  const chosen = new Set<string>();
  const pending = [...named];
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    if (chosen.has(id)) continue;
    chosen.add(id);
    // Every dependency names a task of the file: the loader refused the file otherwise.
    for (const dependency of byId.get(id)!.dependsOn) if (!chosen.has(dependency)) pending.push(dependency);
  }
  const tasks = workflow.tasks.filter((task) => chosen.has(task.id));
  const { taskNotes: _, ...rest } = workflow;
  return { workflow: { ...rest, tasks, notes: selectedNotes(workflow, chosen) }, selection: { named, of: workflow.tasks.length } };
}

/**
 * The file's notes about the tasks chosen, and those about the file as a whole (its `env`): a note about tasks left
 * out (a runAt past, a `cwd` not there) is not the run's. One several tasks share names those of them chosen.
 */
function selectedNotes(workflow: Workflow, chosen: ReadonlySet<string>): string[] {
  if (workflow.taskNotes === undefined) return workflow.notes;
  /** By their place in the notes, those about a task left out: said of the tasks chosen, or (none of them) not said. */
  const changed = new Map<number, string | undefined>();
  for (const note of workflow.taskNotes) {
    const tasks = note.tasks.filter((id) => chosen.has(id));
    if (tasks.length < note.tasks.length) changed.set(note.index, tasks.length === 0 ? undefined : taskNoteText(note, tasks));
  }
  return workflow.notes.flatMap((note, index) => {
    if (!changed.has(index)) return [note];
    const said = changed.get(index);
    return said === undefined ? [] : [said];
  });
}

/**
 * `ci.yaml has no task "tset": nothing was run; did you mean "test"?`, each unknown id said, its likely meaning beside
 * it; where none is close, `taskq list`, which names every task, and the flag before it where that takes no value.
 */
function unknownTasks(file: string, unknown: readonly string[], ids: Iterable<string>, afterFlags?: ReadonlyMap<string, string>): string {
  const candidates = [...ids];
  const meant = unknown.map((id, index) => (isTaskId(id) && index < MAX_SUGGESTIONS ? closestMatch(id, candidates) : undefined));
  // `"$(cat task.txt)"` of a file with Windows line ends (`test\r`): the id meant, as status and cancel give it.
  const spaced = unknown.map((id) => withoutSpaces(id, isTaskId));
  const said = unknown.map((id, index) => {
    if (spaced[index] !== "") return `${quote(id)}${spaced[index]!}`;
    // `--x` after `--`, `a/b`: no task can have such an id.
    if (!isTaskId(id)) return `${quote(id)} (not a task id: ${TASK_ID_EXPECTED})`;
    return meant[index] === undefined || unknown.length === 1 ? quote(id) : `${quote(id)} (did you mean ${quote(meant[index])}?)`;
  });
  const list = said.length === 1 ? said[0]! : `${said.slice(0, -1).join(", ")} or ${said.at(-1)!}`;
  const name = escapeControls(file);
  const single = unknown.length === 1 ? meant[0] : undefined;
  // Where any id has no meaning to give (`zzz` beside `lnt`, which has one), the command that names every task.
  const unmatched = unknown.some((_, index) => meant[index] === undefined && spaced[index] === "");
  const hint = single !== undefined ? `; did you mean ${quote(single)}?` : unmatched ? ` (taskq list ${file === "<stdin>" ? "-" : shellWord(file)} lists its tasks)` : "";
  // `run ci.yaml --dry-run yes`: a word meant for a flag that takes none, not a task (`--json tset` is a task mistyped).
  const flag = unknown.map((id, index) => (meant[index] === undefined ? afterFlags?.get(id) : undefined)).find((before) => before !== undefined);
  return `${name} has no task ${list}: nothing was run${hint}${flag === undefined ? "" : `; ${flag} takes no value: give it alone`}`;
}
