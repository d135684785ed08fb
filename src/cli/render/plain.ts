import type { StreamName } from "../../handlers/index.js";
import type { ChalkInstance } from "chalk";
import type { Queue } from "../../engine/index.js";
import { escapeControls } from "../../escape-controls.js";
import { oneLine } from "../one-line.js";
import { BufferedWriter } from "../output.js";
import { eachLineText, expandTabsInBlock, hasControlBytes, rewrittenState, TaskColours, TerminalColours, terminalSafe } from "./control-bytes.js";
import { formatDuration } from "../../handlers/format-duration.js";
import { SHOW_OPEN_LINE_AFTER_MS } from "../../handlers/line-splitter.js";
import { clock, clockWithDate, clockZone, describeError } from "./describe.js";
import { formatSummary } from "./summary-text.js";
import { selectionWords } from "../task-selection.js";
import { TaskPrefixes } from "./task-prefixes.js";
import type { Renderer, RunInfo, RunSummary } from "./types.js";

/**
 * For CI logs and pipes: one timestamped line per event, task output prefixed
 * with the task id. No cursor movement, ever.
 *
 * On a terminal (plain output chosen there: `CI` set, `--output plain`, TERM=dumb), a task's
 * lines go through terminalSafe as above the live board: a task cannot clear the screen, set
 * the title or write over its prefix. Into a file or a pipe, they go as the task wrote them,
 * colours, "\r\n" and bytes that are not UTF-8 all, as in its log (see OutputSink.asWritten).
 *
 * A line a task has not ended after a second (`waiting for db...`, its newline 30 s away) shows as far as it goes, with
 * taskq's newline, and the rest of it later on a line of its own (see OutputSink.showOpenLineAfterMs): a CI log's reader
 * sees the task is not stuck. Not under GitHub Actions, whose runner masks a secret's value only whole: there a line comes
 * whole once it ends, but for a progress bar's states a "\r" ended (see OutputSink.wholeLines).
 */
export class PlainRenderer implements Renderer {
  readonly #out: BufferedWriter;
  readonly #c: ChalkInstance;
  readonly #prefixes: TaskPrefixes;
  readonly #terminal: boolean;
  /** Not on a terminal: every line comes to `lines`, as bytes, never decoded (see OutputSink.asWritten). */
  readonly asWritten: boolean;
  /** A line not ended yet shows as far as it goes after this long (see OutputSink.showOpenLineAfterMs). */
  readonly showOpenLineAfterMs = SHOW_OPEN_LINE_AFTER_MS;
  /**
   * Under GitHub Actions, as written: a task's line comes whole (see OutputSink.wholeLines), as its runner reads it, which
   * masks a secret's value only whole.
   */
  get wholeLines(): boolean {
    return this.#colours.bareCommands;
  }
  /** As written: the colours each task's output has left set (see OpenColours), for the tasks that set any. */
  readonly #colours: TaskColours;
  /** On a terminal: the colours each task's lines have left set, set again at its next line (see TerminalColours). */
  readonly #terminalColours: TerminalColours;
  #info: RunInfo | undefined;

  /**
   * `keepColours` false (NO_COLOR, --no-color): no task's colour is set again after its prefix (see OpenColours).
   * `bareCommands` (under GitHub Actions): into a file or a pipe, where its runner reads them, a task's workflow commands
   * go without the prefix (see workflow-commands.ts).
   */
  constructor(stream: NodeJS.WritableStream, colors: ChalkInstance, terminal = false, keepColours = true, bareCommands = false) {
    this.#colours = new TaskColours(keepColours, bareCommands && !terminal);
    this.#terminalColours = new TerminalColours(keepColours);
    this.#out = new BufferedWriter(stream);
    this.#c = colors;
    this.#prefixes = new TaskPrefixes(colors);
    this.#terminal = terminal;
    this.asWritten = !terminal;
  }

  attach(queue: Queue, info: RunInfo): void {
    this.#info = info;
    const c = this.#c;
    // The name, notes and errors quote the workflow file (a cwd's folder) through oneLine, as validate
    // quotes them: each event stays one line, whatever line break or escape the file holds.
    const name = info.name ? ` "${oneLine(info.name)}"` : "";
    const tasks = info.selection !== undefined ? selectionWords(info.taskCount, info.selection) : info.taskCount === 1 ? "1 task" : `${info.taskCount} tasks`;
    // Where local time is not UTC, which zone the lines' times are in (see clockZone): before the logs' folder, which
    // ends the line, as scripts that take it from there read it.
    const zone = clockZone();
    this.#event(`run ${info.runId}${name}: ${tasks}, concurrency ${info.concurrency}, ${zone === undefined ? "" : `times in ${zone}, `}logs in ${escapeControls(info.logDir)}`);
    queue.on("submitted", (e) => {
      if (e.status === "SCHEDULED" && e.runAt !== undefined) this.#event(`${c.cyan("wait")}    ${e.id} scheduled for ${clockWithDate(e.runAt)}`);
    });
    // Dependencies done, its runAt still ahead.
    queue.on("scheduled", (e) => this.#event(`${c.cyan("wait")}    ${e.id} scheduled for ${clockWithDate(e.runAt)}`));
    queue.on("started", (e) => {
      // A new process: a terminal's colours as its own start.
      this.#colours.forget(e.id);
      this.#terminalColours.forget(e.id);
      this.#event(`${c.cyan("start")}   ${e.id} (attempt ${e.attempt}/${e.maxAttempts})`);
    });
    queue.on("retrying", (e) => {
      // Under GitHub Actions, a group the attempt left open ends with it, before the line that says so (see TaskColours.endGroupOf).
      this.#colours.endGroupOf(this.#out, e.id);
      this.#event(`${c.yellow("retry")}   ${e.id} attempt ${e.attempt}/${e.maxAttempts} failed: ${oneLine(describeError(e.error))}; next attempt in ${formatDuration(e.delayMs)}`);
    });
    // Its colours end with it: its next lines, if any, are late ones of a process it left running.
    const ended = (e: { id: string }): void => {
      this.#colours.endGroupOf(this.#out, e.id);
      this.#colours.forget(e.id);
      this.#terminalColours.forget(e.id);
    };
    queue.on("succeeded", ended);
    queue.on("failed", ended);
    queue.on("cancelled", ended);
    queue.on("succeeded", (e) => this.#event(`${c.green("ok")}      ${e.id}${this.#attempts(e.id, e.attempts)}`));
    queue.on("failed", (e) => this.#event(`${c.red("FAILED")}  ${e.id}${this.#attempts(e.id, e.attempts)}: ${oneLine(describeError(e.error))}`));
    queue.on("cancelled", (e) => this.#event(`${c.yellow("cancel")}  ${e.id}: ${oneLine(describeError(e.error))}`));
  }

  line(taskId: string, _stream: StreamName, text: string): void {
    this.#out.write(`${this.#prefixes.text(taskId)}${this.#terminal ? this.#terminalColours.safe(taskId, text) : text}\n`);
  }

  /**
   * On a terminal, the same output as `line` gives for each line, built as bytes: no string per
   * line, but for a block with a control byte. Elsewhere every line, as the task wrote it.
   */
  lines(taskId: string, stream: StreamName, bytes: Buffer, count: number, ends: Int32Array): void {
    // A task that left colours set goes line by line, each set again at its line's start.
    const coloured = this.#terminal && this.#terminalColours.has(taskId);
    if (coloured || (this.#terminal && hasControlBytes(bytes))) {
      const tabbed = coloured ? undefined : expandTabsInBlock(bytes, count);
      if (tabbed !== undefined) {
        this.#out.writePrefixedLines(this.#prefixes.bytes(taskId), tabbed.bytes, count, tabbed.ends);
        return;
      }
      eachLineText(bytes, count, ends, (text) => this.line(taskId, stream, text));
      return;
    }
    this.#colours.write(this.#out, taskId, this.#prefixes.bytes(taskId), bytes, count, ends);
  }

  whenDrained(): Promise<void> | undefined {
    return this.#out.whenDrained();
  }

  /** Called on a terminal only: elsewhere asWritten is set, and a splitter that passes every line as written keeps no state (see OutputSink.lineState). */
  lineState(text: string): string {
    return rewrittenState(text);
  }

  note(text: string): void {
    this.#event(`${this.#c.magenta("note")}    ${oneLine(text)}`);
  }

  async finish(summary: RunSummary): Promise<void> {
    // A group still open (a process a task left running opened it) would fold the summary away.
    this.#colours.endGroupOf(this.#out);
    // Under GitHub Actions, into a file or a pipe, its runner reads workflow commands in the summary's lines too.
    this.#out.write(formatSummary(summary, this.#c, this.#terminal, { commandsRead: this.#colours.bareCommands }));
    this.#out.flush();
  }

  #attempts(id: string, attempts: number): string {
    const max = this.#info?.maxAttempts.get(id) ?? 1;
    return max > 1 ? ` after ${attempts} attempt${attempts === 1 ? "" : "s"}` : "";
  }

  /** On a terminal, through terminalSafe: an error or note may quote a task's output or the workflow file. */
  #event(text: string): void {
    this.#out.write(`${this.#c.dim(clock())} ${this.#terminal ? terminalSafe(text) : text}\n`);
  }
}
