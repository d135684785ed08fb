import { randomBytes } from "node:crypto";
import type { ChalkInstance } from "chalk";
import { escapeControls } from "../../escape-controls.js";
import { formatDuration } from "../../handlers/format-duration.js";
import { cutMarkStart, tailLineInWords } from "../../handlers/line-splitter.js";
import { oneLine } from "../one-line.js";
import { terminalSafe } from "./control-bytes.js";
import { clockWithDate } from "./describe.js";
import { holdsWorkflowCommand, maskCommandsInText, unescapeData } from "./workflow-commands.js";
import type { RunSummary } from "./types.js";

/** Running tasks listed by a durable run's status; the rest are counted. */
const RUNNING_SHOWN = 50;
/** Of a running task's last lines (JSON has them all), those its status shows: a glance, not its log. */
const RUNNING_LINES_SHOWN = 3;
/** Dead letters shown with their log path and last lines; the others get one line each. */
const DEAD_LETTERS_WITH_LINES = 20;
/** The tasks a dead letter cancelled named on its line; the rest counted (JSON lists them all). */
const VICTIMS_SHOWN = 50;

/** "a, b, c", or past VICTIMS_SHOWN "a, b, ... and 59,950 more": a root failure of a 60,000-task chain made a 600 KB line. */
export function shownIds(ids: string[]): string {
  if (ids.length <= VICTIMS_SHOWN) return ids.join(", ");
  return `${ids.slice(0, VICTIMS_SHOWN).join(", ")}, ... and ${(ids.length - VICTIMS_SHOWN).toLocaleString("en-US")} more`;
}

/** Of a worker whose lease ran out, and which waits on no statement of its: what it may be. */
export const WORKER_GONE = "gone, stalled or cut off from the database";

/** What a statement of a worker's waiting on the database may be, when the lease of its task ran out (see leaseRanOutWords). */
export const WORKER_WAITS_FOR = "a renewal, or the record of how the attempt ended, which may still go through";

/**
 * What a running task's lease run out `leaseExpiredMs` ago means, as status and cancel say it. Its worker still
 * waiting on the database (`workerWaitingMs`: its record held up by a lock, a slow database) is neither gone nor
 * stalled: that record may yet go through, and no sweep takes a task whose row it holds. `next`: what a worker's
 * sweep does with it ("queues it again", "cancels it").
 */
export function leaseRanOutWords(leaseExpiredMs: number, workerWaitingMs: number | undefined, next: string): string {
  const ago = `its lease ran out ${formatDuration(leaseExpiredMs)} ago`;
  return workerWaitingMs === undefined
    ? `${ago} (the worker is ${WORKER_GONE}): a worker's sweep ${next}`
    : `${ago} while its worker waits on the database (a statement of its, for ${formatDuration(workerWaitingMs)}: ${WORKER_WAITS_FOR}); if it does not, a worker's sweep ${next}`;
}

/** Tasks not ended: blocked, scheduled, ready or running. */
export function unfinishedCount(counts: RunSummary["counts"]): number {
  return counts.BLOCKED + counts.SCHEDULED + counts.READY + counts.RUNNING;
}

/**
 * "1 blocked, 2 scheduled, 1 ready": the unfinished tasks as the JSON counts split them, those
 * there are. A durable run is often looked at unfinished, and whether its tasks wait for a
 * worker or for their time is the question.
 */
export function unfinishedParts(counts: RunSummary["counts"]): string {
  const parts: [number, string][] = [
    [counts.BLOCKED, "blocked"],
    [counts.SCHEDULED, "scheduled"],
    [counts.READY, "ready"],
    [counts.RUNNING, "running"],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, word]) => `${n} ${word}`)
    .join(", ");
}

/**
 * The end-of-run summary as text: counts, wall time, dead letters, then what they cancelled.
 * `terminal`: it goes to a terminal, so what tasks wrote (their last lines, the errors that
 * quote them) goes through terminalSafe as their lines did during the run: a failed task's
 * last line cannot clear the summary off the screen or hide the cursor. An error or a cancel's
 * reason is taskq's one line, wherever it goes: what it quotes (a cwd's folder) through oneLine.
 */
export function formatSummary(summary: RunSummary, c: ChalkInstance, terminal = false, options: { commandsRead?: boolean } = {}): string {
  const safe = terminal ? terminalSafe : endingColours;
  // A task's lines, quoted: under GitHub Actions, where a workflow command among them is not read as one (see quoted), and
  // a line a worker elsewhere cut within a word is cut after a whole one (see tailLineInWords).
  const commandsRead = options.commandsRead === true;
  const quote = (lines: string[]): string[] => quoted(lines.map((line) => dimLine(c, `      ${safe(commandsRead ? tailLineInWords(line) : line)}`)), commandsRead);
  const { counts } = summary;
  const out: string[] = [""];
  const parts = [
    c.green(`${counts.SUCCEEDED} succeeded`),
    counts.FAILED > 0 ? c.red(`${counts.FAILED} failed`) : `${counts.FAILED} failed`,
    counts.CANCELLED > 0 ? c.yellow(`${counts.CANCELLED} cancelled`) : `${counts.CANCELLED} cancelled`,
  ];
  const unfinished = unfinishedCount(counts);
  if (unfinished > 0) parts.push(`${unfinished} unfinished (${unfinishedParts(counts)})`);
  // A Ctrl-C during a fail-fast stop: both, in the order they came.
  const stops = [
    ...(summary.failedFast === undefined ? [] : [`stopped by fail-fast: ${summary.failedFast} failed`]),
    ...(summary.interrupted === undefined ? [] : [`interrupted by ${summary.interrupted}`]),
  ];
  const interrupted = stops.length === 0 ? "" : c.yellow(` (${stops.join(", then ")})`);
  out.push(`${c.bold("Summary")}: ${parts.join(", ")} in ${formatDuration(summary.wallMs)}${interrupted}`);
  // A durable run looked at while it runs: which tasks, on which worker, for how long.
  const running = summary.running ?? [];
  if (running.length > 0) {
    out.push("", c.bold.cyan(`Running (${running.length}):`));
    for (const task of running.slice(0, RUNNING_SHOWN)) {
      const worker = task.workerId === null ? "" : ` on ${safe(task.workerId)}`;
      // A lease run out: nothing runs the task until a worker's sweep takes it up, unless its worker, still waiting on the database, records it first.
      // A cancel asked for is what the sweep honours first (see sweepExpiredLeases).
      const next = task.cancelRequested === true || task.runStopped === true ? "cancels it" : task.attempt < task.maxAttempts ? "queues it again" : "ends it (no attempts left)";
      const cancelling = task.cancelRequested === true ? c.yellow(", cancel requested") : task.runStopped === true ? c.yellow(", its run stopped") : "";
      const expired = task.leaseExpiredMs === undefined ? "" : c.yellow(`; ${leaseRanOutWords(task.leaseExpiredMs, task.workerWaitingMs, next)}`);
      out.push(`  ${c.cyan("▶")} ${c.bold(task.id)}: attempt ${task.attempt}/${task.maxAttempts}${worker}, for ${formatDuration(task.runningMs)}${cancelling}${expired}`);
      const lines = task.lastLines?.slice(-RUNNING_LINES_SHOWN) ?? [];
      if (lines.length > 0) {
        out.push(`    last ${lines.length === 1 ? "line" : `${lines.length} lines`} (at its last heartbeat):`);
        out.push(...quote(lines));
      }
    }
    if (running.length > RUNNING_SHOWN) out.push(`  ... and ${running.length - RUNNING_SHOWN} more`);
  }
  // Those waiting for their retry: when each is due, and how the attempt before failed.
  const retrying = summary.retrying ?? [];
  if (retrying.length > 0) {
    out.push("", c.bold.yellow(`Waiting for a retry (${retrying.length}):`));
    for (const task of retrying.slice(0, RUNNING_SHOWN)) {
      const when = task.inMs > 0 ? `in ${formatDuration(task.inMs)}` : "due, waiting for a worker";
      out.push(`  ${c.yellow("↻")} ${c.bold(task.id)}: attempt ${task.attempt}/${task.maxAttempts} ${when} (attempt ${task.attempt - 1} failed: ${safe(oneLine(task.error))})`);
    }
    if (retrying.length > RUNNING_SHOWN) out.push(`  ... and ${retrying.length - RUNNING_SHOWN} more`);
  }
  // Those waiting for their delay or runAt: when each runs, as a local run's board gives it.
  const scheduled = summary.scheduled ?? [];
  if (scheduled.length > 0) {
    out.push("", c.bold.cyan(`Scheduled (${scheduled.length}):`));
    for (const task of scheduled.slice(0, RUNNING_SHOWN)) out.push(`  ${c.cyan("⏲")} ${c.bold(task.id)}: at ${clockWithDate(task.runAt)} (in ${formatDuration(task.inMs)})`);
    if (scheduled.length > RUNNING_SHOWN) out.push(`  ... and ${scheduled.length - RUNNING_SHOWN} more`);
  }
  // Cancelled tasks by the dead letter that caused them: one pass, not one per dead letter.
  const victimsOf = new Map<string, string[]>();
  const dead = new Set(summary.deadLetters.map((letter) => letter.id));
  const others: RunSummary["cancelled"] = [];
  for (const x of summary.cancelled) {
    if (x.reason === "dependency" && x.dependency !== undefined && dead.has(x.dependency)) {
      const victims = victimsOf.get(x.dependency) ?? [];
      victims.push(x.id);
      victimsOf.set(x.dependency, victims);
    } else others.push(x);
  }
  if (summary.deadLetters.length > 0) {
    out.push("", c.bold.red(`Dead letters (${summary.deadLetters.length}):`));
    for (const [index, letter] of summary.deadLetters.entries()) {
      const tries = letter.attempts === 1 ? "1 attempt" : `${letter.attempts} attempts`;
      out.push(`  ${c.red("✗")} ${c.bold(letter.id)}: ${safe(oneLine(letter.error))} (${tries})`);
      // Past the first few, the last lines would bury the list: each log has them.
      if (index < DEAD_LETTERS_WITH_LINES) {
        out.push(`    log: ${escapeControls(letter.logPath)}${letter.logDeleted === true ? DELETED : ""}`);
        if (letter.tail.length > 0) {
          const lines = `last ${letter.tail.length === 1 ? "line" : `${letter.tail.length} lines`}`;
          // Lines of an earlier attempt say so: the last one wrote none (its log could not be written, say).
          // Of an attempt that ran on another worker: the log that has them (not the one above).
          const elsewhere = letter.tailLogPath === undefined ? "" : `; its log: ${escapeControls(letter.tailLogPath)}`;
          const from = letter.tailAttempt === undefined ? "" : ` of attempt ${letter.tailAttempt} (attempt ${letter.attempts} left none${elsewhere})`;
          out.push(`    ${lines}${from}:`);
          out.push(...quote(letter.tail));
        } else {
          // Said, so that no one opens the log for lines it has not (it has how each attempt ended).
          out.push(c.dim("    no output"));
        }
      }
      const victims = victimsOf.get(letter.id);
      if (victims !== undefined) out.push(`    cancelled because of it: ${shownIds(victims)}`);
    }
    const without = summary.deadLetters.length - DEAD_LETTERS_WITH_LINES;
    if (without > 0) out.push(c.dim(`  (the last ${without} without their last lines: see <id>.log in ${escapeControls(summary.logDir)})`));
  }
  if (others.length > 0) {
    out.push("", c.bold.yellow(`Cancelled (${others.length}):`));
    // Those cut short while running first: their work was under way, and the others may be hundreds.
    const shown = [...others.filter((x) => x.running), ...others.filter((x) => !x.running)].slice(0, 50);
    let withLines = 0;
    for (const x of shown) {
      out.push(`  ${c.yellow("-")} ${x.id}: ${safe(oneLine(x.message))}`);
      // Those cut short while running, the first few as dead letters are: where each was when stopped.
      if (x.logPath === undefined || withLines++ >= DEAD_LETTERS_WITH_LINES) continue;
      out.push(`    log: ${escapeControls(x.logPath)}${x.logDeleted === true ? DELETED : ""}`);
      const tail = x.tail ?? [];
      if (tail.length > 0) {
        // Lines of an earlier attempt say so: the one cut short left none, or it waited for its retry.
        const elsewhere = x.tailLogPath === undefined ? "" : ` (its log: ${escapeControls(x.tailLogPath)})`;
        out.push(`    last ${tail.length === 1 ? "line" : `${tail.length} lines`}${x.tailAttempt === undefined ? "" : ` of attempt ${x.tailAttempt}${elsewhere}`}:`);
        out.push(...quote(tail));
      } else {
        // As under a dead letter: no one opens the log for lines it has not.
        out.push(c.dim("    no output"));
      }
    }
    if (others.length > shown.length) out.push(`  ... and ${others.length - shown.length} more`);
  }
  out.push("", c.dim(`logs: ${escapeControls(summary.logDir)}`));
  // Before any task's lines: a value one task masked may show in another's, quoted before it (a running task's, a dead letter's); of
  // every line the summary holds, shown or not (a running task's earlier lines, the dead letters past the first few), as JSON's.
  if (commandsRead) out.unshift(...(tailMaskCommands(summaryTaskLines(summary)) ?? []));
  return `${out.join("\n")}\n`;
}

/**
 * A quoted line into a file or a pipe: its bytes, but not a colour it left on (its reset in a line not quoted, or past the
 * cut of a long one), which would colour the summary's own lines and what the CI log has after. An OSC 8 hyperlink left
 * open (its text cut at the tail line's length, or its end in a line not quoted) is ended too: SGR 0 does not. Both end
 * before taskq's `… (N bytes)` of a line cut for length (see cutMarkStart), as the line's did during the run: after it,
 * the mark showed in the task's colour.
 */
function endingColours(text: string): string {
  if (!text.includes("\x1b")) return text;
  const cut = cutMarkStart(text);
  const kept = cut === -1 ? text : text.slice(0, cut);
  const ending = `${kept.includes("\x1b]8;") ? "\x1b]8;;\x1b\\" : ""}\x1b[0m`;
  // Cut for display into a pipe, and short enough to be kept whole (see tailLine): ended there already.
  if (cut !== -1 && kept.endsWith(ending)) return text;
  return `${kept}${ending}${text.slice(kept.length)}`;
}

/** After a log's path, where a task deleted it with its folder during the run: the path leads nowhere. */
const DELETED = " (deleted by a task during the run, with its folder)";

// eslint-disable-next-line no-control-regex -- matching the escape sequence is the point
const SGR = /\x1b\[[0-9;:]*m/g;

/**
 * A task's last lines as the summary quotes them; with `commandsRead` (plain lines under GitHub Actions), those holding a
 * workflow command as its runner reads one (it trims the indent: `      ::group::Build`) between a `::stop-commands::`
 * and the token that resumes them, as the runner's documentation has untrusted text printed. Quoted as they were, a
 * failed task's `::error file=a.ts::...` made its annotation a second time, and a `::group::` put the rest of the
 * summary, the other dead letters and the logs' folder, into a group the log shows folded. (`dead-letters` quotes them so too.)
 */
export function quoted(lines: string[], commandsRead: boolean): string[] {
  if (!commandsRead || !lines.some(holdsWorkflowCommand)) return lines;
  const token = `taskq-${randomBytes(8).toString("hex")}`;
  return [`::stop-commands::${token}`, ...lines, `::${token}::`];
}

/**
 * The `::add-mask::` commands (and the runner's older `##[add-mask]` form, as `::add-mask::`) tasks' last lines hold, as
 * the store keeps them, each once, as lines to write where GitHub Actions' runner reads them (see maskCommands), before
 * any of those lines: inside the stop that quotes them (see quoted) the runner reads none, and `status` and `dead-letters`
 * show lines a worker elsewhere wrote, whose runner never read their commands. Left out: a value of white space only, which
 * the runner refuses, and, as a value runs to its line's end (or a `\r`), the last of a line cut at TAIL_LINE_LIMIT
 * characters, which the cut shortened. Undefined where there is none.
 */
export function tailMaskCommands(lines: readonly string[]): string[] | undefined {
  let found: Set<string> | undefined;
  const add = (text: string): void => {
    for (const mask of maskCommandsInText(text) ?? []) if (unescapeData(mask.slice(MASK_COMMAND.length)).trim() !== "") (found ??= new Set()).add(mask);
  };
  for (const line of lines) {
    const mark = cutMarkStart(line);
    // Of a cut line, the parts a `\r` ended, whole. Not the last, which the cut shortened: masked as far as it was kept or is
    // shown, it was `-----BEGIN` of a certificate, or one character, masked wherever it stood in the rest of the job's log.
    add(mark === -1 ? line : line.slice(0, Math.max(line.lastIndexOf("\r", mark), 0)));
  }
  return found === undefined ? undefined : [...found];
}

const MASK_COMMAND = "::add-mask::";

/** Every task's last lines a summary holds, shown or not: the running tasks', the dead letters', the cancelled tasks'. */
export function summaryTaskLines(summary: RunSummary): string[] {
  return [...(summary.running ?? []).flatMap((task) => task.lastLines ?? []), ...summary.deadLetters.flatMap((letter) => letter.tail), ...summary.cancelled.flatMap((x) => x.tail ?? [])];
}

/**
 * A task's line, dimmed to tell it from taskq's own words: the dimming is set again after each
 * colour sequence of the task's own (SGR), as a `\e[0m` or `\e[22m` in its text would end it
 * for the rest of the line.
 */
export function dimLine(c: ChalkInstance, text: string): string {
  if (!text.includes("\x1b[")) return c.dim(text);
  // What the dimming opens with ("" without colours), read off chalk rather than assumed.
  const probe = c.dim("\u0000");
  const open = probe.slice(0, probe.indexOf("\u0000"));
  return c.dim(open === "" ? text : text.replace(SGR, (sequence) => `${sequence}${open}`));
}
