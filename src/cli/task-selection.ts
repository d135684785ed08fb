// Apart from select-tasks.ts, which loads the loaders' suggestions: the renderers need only these.

/** The tasks named on the command line (`taskq run ci.yaml test`), and how many tasks the file has. */
export interface TaskSelection {
  /** As named, each once, in the order given. */
  named: string[];
  /** The file's tasks, selected or not. */
  of: number;
}

/** `3 of 7 tasks (test and what it depends on)`: the selection as the run's first line and the plan's say it. */
export function selectionWords(count: number, selection: TaskSelection): string {
  const names = selection.named.length <= 3 ? selection.named.join(", ") : `${selection.named.slice(0, 3).join(", ")} and ${selection.named.length - 3} more`;
  const dependencies = count === selection.named.length ? "" : selection.named.length === 1 ? " and what it depends on" : " and what they depend on";
  return `${count} of ${selection.of} task${selection.of === 1 ? "" : "s"} (${names}${dependencies})`;
}
