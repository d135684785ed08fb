import path from "node:path";
import { noteFields } from "./note-fields.js";
import { exponentialDelay, IndexedHeap, type Priority } from "../engine/index.js";
import type { Workflow, WorkflowTask } from "../loaders/index.js";
import { formatMs } from "../engine/errors.js";
import { oneLine } from "./one-line.js";
import { toJson } from "./to-json.js";
import { escapeControls } from "../escape-controls.js";
import { selectionWords, type TaskSelection } from "./task-selection.js";

const RANK: Record<Priority, number> = { low: 0, normal: 1, high: 2, critical: 3 };

type Node = { task: WorkflowTask; seq: number; waiting: number; due: number; heapIndex: number };

/**
 * The order tasks would start in at `concurrency` if every task succeeded and each took the
 * same short time: the engine's own rule (priority desc, then submission order) applied to
 * the tasks whose dependencies are done and whose time has come, `concurrency` at a time. A
 * task with a delay or a runAt ahead starts once nothing else can (the work that does not wait
 * is taken to end first), delays counted from `now`, the run's start.
 */
export function planOrder(workflow: Workflow, concurrency = Infinity, now = Date.now()): WorkflowTask[] {
  const nodes = new Map<string, Node>();
  const dependents = new Map<string, Node[]>();
  workflow.tasks.forEach((task, seq) => {
    const due = task.runAt ?? now + (task.delayMs ?? 0);
    nodes.set(task.id, { task, seq, waiting: task.dependsOn.length, due, heapIndex: -1 });
  });
  const ready = new IndexedHeap<Node>((a, b) =>
    RANK[a.task.priority] !== RANK[b.task.priority] ? RANK[a.task.priority] > RANK[b.task.priority] : a.seq < b.seq,
  );
  const later = new IndexedHeap<Node>((a, b) => (a.due !== b.due ? a.due < b.due : a.seq < b.seq));
  let clock = now;
  const release = (node: Node): void => void (node.due <= clock ? ready.push(node) : later.push(node));
  for (const node of nodes.values()) {
    for (const dependency of node.task.dependsOn) {
      const list = dependents.get(dependency) ?? [];
      list.push(node);
      dependents.set(dependency, list);
    }
    if (node.waiting === 0) release(node);
  }
  const order: WorkflowTask[] = [];
  // One step: every task started in the step before ends, its dependents are released, and
  // the free slots are filled; with nothing ready or running, the clock moves to the next due time.
  let running: Node[] = [];
  while (running.length > 0 || ready.size > 0 || later.size > 0) {
    if (running.length === 0 && ready.size === 0) {
      clock = later.peek()!.due;
      while (later.size > 0 && later.peek()!.due <= clock) ready.push(later.pop()!);
    }
    const ended = running;
    running = [];
    for (const node of ended) for (const dependent of dependents.get(node.task.id) ?? []) if (--dependent.waiting === 0) release(dependent);
    for (let node = ready.peek(); node !== undefined && running.length < concurrency; node = ready.peek()) {
      ready.pop();
      order.push(node.task);
      running.push(node);
    }
  }
  return order;
}

/** The most waits retryWords lists one by one. */
const MAX_WAITS_LISTED = 6;

/**
 * A task's retries and the wait before each, as the plan says them: the longest each wait may be
 * (base * 2^(n-1), capped at max; full jitter makes it anywhere from 0 to that), the first
 * retry's first: `2 retries after up to 1s, 2s`; the waits at the cap counted, not listed (`10
 * retries after up to 1s, 2s, 4s, 8s, 16s, then 30s each`); `3 retries at once` where the
 * backoff gives every wait 0 (a max or a base of 0); and, with a `retryOn`, the exit codes retried
 * (`, on exit codes 1, 75`: a timed-out attempt is retried whatever its code).
 */
export function retryWords(retries: number, backoff: WorkflowTask["backoff"], retryOn?: number[]): string {
  const { baseMs, maxMs } = backoff;
  const count = `${retries} retr${retries === 1 ? "y" : "ies"}`;
  const codes = retryOn === undefined ? "" : `, on exit code${retryOn.length === 1 ? "" : "s"} ${retryOn.join(", ")}`;
  // A base of 0 keeps every wait at 0 (see exponentialDelay), as a max of 0 does.
  if (baseMs === 0 || maxMs === 0) return `${count} at once${codes}`;
  const caps: number[] = [];
  for (let retry = 1; retry <= retries; retry++) {
    caps.push(exponentialDelay(retry, baseMs, maxMs));
    if (caps.at(-1) === maxMs) break;
  }
  const atMax = caps.at(-1) === maxMs ? retries - caps.length + 1 : 0;
  const doubling = (atMax > 1 ? caps.slice(0, -1) : caps).map(formatMs);
  // A long run of doublings (a base of 1ms up to a max of days: 30 of them) shows its first three and its last.
  const waits = doubling.length > MAX_WAITS_LISTED ? [...doubling.slice(0, 3), `… ${doubling.at(-1)!}`] : doubling;
  if (atMax > 1) waits.push(`${waits.length > 0 ? "then " : ""}${formatMs(maxMs)} each`);
  return `${count} after up to ${waits.join(", ")}${codes}`;
}

/**
 * A task's runAt in the plan: one already past is due (the loader's note names it as written), not "not
 * before" a time gone by; one ahead in UTC, as a runAt is most often written, to the second where it has
 * no milliseconds (2026-12-20T02:00:00Z, not 2026-12-20T02:00:00.000Z).
 */
function runAtWords(runAt: number, now: number): string {
  if (runAt <= now) return "runAt already past: no wait";
  return `not before ${new Date(runAt).toISOString().replace(/\.000Z$/, "Z")}`;
}

/** The concurrency a run would use, and, when lower than asked, the one asked and why (see fitConcurrencyToOpenFiles). */
export interface PlannedConcurrency {
  concurrency: number;
  requested?: number;
  note?: string;
  /** Set where the command line named tasks: the workflow has those and what they depend on. */
  selection?: TaskSelection;
  /** Set where the run would stop at the first task that fails for good (--fail-fast, or the file's `failFast: true`). */
  failFast?: boolean;
}

/**
 * `taskq run --dry-run`: the plan, one task a line, in start order, with where each would run
 * (when not in the workflow's folder: its `cwd` from there) and the names of the variables the
 * file gives it (not their values: a plan goes to CI logs). As JSON (`--output json`): one
 * object per line, the plan's own, then each task's, then the notes.
 */
export function printPlan(workflow: Workflow, planned: PlannedConcurrency, json = false): void {
  const { concurrency, requested, selection, failFast } = planned;
  const order = planOrder(workflow, concurrency);
  const tasks = workflow.tasks.length;
  const lowered = requested !== undefined && requested > concurrency ? requested : undefined;
  // Every record has its `ts`, as a run's and validate's do.
  const now = Date.now();
  const ts = new Date(now).toISOString();
  const lines = json
    ? [toJson({ ts, event: "plan", file: workflow.file, tasks, ...(selection === undefined ? {} : { selected: selection.named, fileTasks: selection.of }), concurrency, ...(lowered === undefined ? {} : { requestedConcurrency: lowered }), ...(failFast === true ? { failFast } : {}) })]
    : [
        `plan for ${escapeControls(workflow.file)}: ${selection === undefined ? `${tasks} task${tasks === 1 ? "" : "s"}` : selectionWords(tasks, selection)}, concurrency ${concurrency}${lowered === undefined ? "" : ` (not ${lowered}: the open-file limit allows no more, see the note)`}${failFast === true ? ", fail-fast (the first task that fails for good stops the run)" : ""}; nothing is run`,
      ];
  order.forEach((task, index) => {
    if (json) {
      const { id, run, priority, dependsOn, runAt, delayMs, retries, retryOn, backoff, timeoutMs, cwd } = task;
      lines.push(toJson({ ts, event: "planned", position: index + 1, id, run, priority, dependsOn, runAt, delayMs, retries, retryOn, backoff, timeoutMs, cwd, envNames: Object.keys(task.env) }));
      return;
    }
    const details = [`priority ${task.priority}`];
    if (task.dependsOn.length > 0) details.push(`after ${task.dependsOn.join(", ")}`);
    if (task.runAt !== undefined) details.push(runAtWords(task.runAt, now));
    // `delay: 0` is no wait: said as a task without a delay is, not `0ms after the run starts`.
    if (task.delayMs !== undefined && task.delayMs > 0) details.push(`${formatMs(task.delayMs)} after the run starts`);
    if (task.retries > 0) details.push(retryWords(task.retries, task.backoff, task.retryOn));
    if (task.timeoutMs !== undefined) details.push(`timeout ${formatMs(task.timeoutMs)}`);
    if (task.cwd !== workflow.folder) details.push(`in ${oneLine(path.relative(workflow.folder, task.cwd))}`);
    const names = Object.keys(task.env);
    if (names.length > 0) details.push(`env ${names.map(oneLine).join(", ")}`);
    lines.push(`${String(index + 1).padStart(4)}. ${task.id}: ${oneLine(task.run)}  (${details.join("; ")})`);
  });
  // The run's own note first, as the run prints it.
  const notes = planned.note === undefined ? workflow.notes : [planned.note, ...workflow.notes];
  for (const note of notes) lines.push(json ? toJson({ ts, event: "note", ...noteFields(note, workflow.file) }) : `note: ${oneLine(note)}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
