import type { StreamName } from "../../handlers/index.js";
import type { Queue, QueueEventName } from "../../engine/index.js";
import { noteFields } from "../note-fields.js";
import { taskLog } from "../summary.js";
import { BufferedWriter, jsonRecordHead, toJson } from "../output.js";
import { describeError, attemptResultOf } from "./describe.js";
import type { Renderer, RunInfo, RunSummary, Stopping } from "./types.js";
import { eachLineText } from "./control-bytes.js";
import { holdsLegacyCommand, maskCommands, maskCommandsInStates, maskCommandsInText, withoutLegacyCommands, writeCommands } from "./workflow-commands.js";

const EVENTS: QueueEventName[] = ["submitted", "scheduled", "ready", "started", "retrying", "succeeded", "failed", "cancelled"];

/**
 * NDJSON: one JSON object per line, for programs. Errors become { message, code, exitCode, signal, timedOut }; a
 * `failed` or `retrying` record also has its exitCode, signal and timedOut beside `error`, as a dead letter has, and a
 * `cancelled` one its `message`, as the summary's `cancelled` entries have it.
 */
export class JsonRenderer implements Renderer {
  readonly #out: BufferedWriter;
  /** The workflow file, for the place a note names in it (see noteFields). */
  #file: string | undefined;
  /** A --fail-fast stop began: the tasks the queue cancels as a shutdown's are the stop's (see stopping). */
  #failingFast = false;
  /**
   * Under GitHub Actions: a task's line comes whole in its `output` record's `text` (see OutputSink.wholeLines), up to
   * 1 MiB: its runner, which masks a secret's value only whole, read the part of a line cut at 4 KiB unmasked.
   */
  readonly wholeLines: boolean;
  /** Under GitHub Actions: where a task's `::add-mask::` goes as a command, before its record (see maskCommands). */
  readonly #commands: NodeJS.WritableStream | undefined;

  constructor(stream: NodeJS.WritableStream, wholeLines = false, commands: NodeJS.WritableStream | undefined = undefined) {
    this.#out = new BufferedWriter(stream);
    this.wholeLines = wholeLines;
    this.#commands = wholeLines ? commands : undefined;
  }

  attach(queue: Queue, info: RunInfo): void {
    this.#file = info.file;
    // A selection (`taskq run ci.yaml test`): `tasks` counts those run; `selected` names those given, `fileTasks` counts the file's.
    const selected = info.selection === undefined ? {} : { selected: info.selection.named, fileTasks: info.selection.of };
    this.#emit({ event: "run", runId: info.runId, file: info.file, name: info.name, tasks: info.taskCount, ...selected, concurrency: info.concurrency, logDir: info.logDir });
    for (const name of EVENTS) {
      queue.on(name, (e) => {
        const { error, value: _value, ...rest } = e as { error?: unknown; value?: unknown; id: string };
        // Where the attempt writes, and where a failed task's log is, as the summary's dead letters give it: a program
        // watching the records opens it there, without waiting for the summary or building the path from the run's.
        if (name === "started") this.#emit({ event: name, ...rest, ...taskLog(info, rest.id) });
        else if (error === undefined) this.#emit({ event: name, ...rest });
        // A failed attempt's exit code, signal and timeout beside its error too, as the summary's dead letters and a
        // worker's `finished` record give them: one shape for a program to read wherever a task failed.
        else if (name === "failed") this.#emit({ event: name, ...rest, ...failureFields(error), error: serializeError(error), ...taskLog(info, rest.id) });
        else if (name === "retrying") this.#emit({ event: name, ...rest, ...failureFields(error), error: serializeError(error) });
        // Why, as the summary's `cancelled` entries give it: "fail-fast" for a fail-fast stop's, where a Ctrl-C's is "shutdown".
        else if (name === "cancelled") this.#emit({ event: name, ...rest, ...(this.#failingFast && (rest as { reason?: unknown }).reason === "shutdown" ? { reason: "fail-fast" } : {}), message: describeError(error), error: serializeError(error) });
        else this.#emit({ event: name, ...rest, error: serializeError(error) });
      });
    }
  }

  /** `attempt` says which attempt wrote the line: a retried task's lines, or late ones from what an attempt left running, are told apart. */
  line(taskId: string, stream: StreamName, text: string, attempt?: number): void {
    if (this.#commands !== undefined) writeCommands(this.#commands, maskCommandsInText(text));
    this.#emit({ event: "output", id: taskId, attempt, stream, text });
  }

  /**
   * A line's states that no record holds (see OutputSink.droppedStates): their `::add-mask::` goes to stderr all the
   * same, as the runner, reading each state as a line, would have taken it.
   */
  droppedStates(taskId: string, stream: StreamName, bytes: Buffer): void {
    if (this.#commands !== undefined) writeCommands(this.#commands, maskCommandsInStates(bytes));
  }

  /** The same records as `line` gives for each line, built as bytes where JSON keeps the line as it is. */
  lines(taskId: string, stream: StreamName, bytes: Buffer, count: number, ends: Int32Array, attempt?: number): void {
    if (this.#commands !== undefined) {
      writeCommands(this.#commands, maskCommands(bytes, count, ends));
      // A line holding `##[`: its record through #emit, where it is written so that the runner reads no command in it.
      if (holdsLegacyCommand(bytes)) return eachLineText(bytes, count, ends, (text) => this.#emit({ event: "output", id: taskId, attempt, stream, text }));
    }
    this.#out.writeJsonLines(jsonRecordHead({ ts: new Date().toISOString(), event: "output", id: taskId, attempt, stream }), bytes, count, ends);
  }

  /**
   * A fail-fast stop is told before it cancels anything, and no other stop cancels a task after it (a signal then only kills
   * what it stops): each task cancelled as a shutdown's from then on is the stop's, said "fail-fast".
   */
  stopping(state: Stopping): void {
    if (state.failedFast !== undefined) this.#failingFast = true;
  }

  whenDrained(): Promise<void> | undefined {
    return this.#out.whenDrained();
  }

  note(text: string, taskId?: string): void {
    // A note about one task (what it left running) names it, as every other record of a task does: no parsing of its message.
    this.#emit({ event: "note", ...(taskId === undefined ? {} : { id: taskId }), ...noteFields(text, this.#file) });
  }

  async finish(summary: RunSummary): Promise<void> {
    this.#emit({ event: "summary", ...summary });
    this.#out.flush();
  }

  #emit(record: Record<string, unknown>): void {
    const json = toJson({ ts: new Date().toISOString(), ...record });
    this.#out.write(`${this.#commands === undefined ? json : withoutLegacyCommands(json)}\n`);
  }
}

/** A failed attempt's exit code, signal and timeout, as DeadLetterLine gives them: null, null and false where it never ran. */
function failureFields(error: unknown): { exitCode: number | null; signal: string | null; timedOut: boolean } {
  const result = attemptResultOf(error);
  return { exitCode: result?.exitCode ?? null, signal: result?.signal ?? null, timedOut: result?.timedOut ?? false };
}

function serializeError(error: unknown): Record<string, unknown> {
  const result = attemptResultOf(error);
  const code = (error as { code?: unknown } | null)?.code;
  return {
    message: describeError(error),
    ...(typeof code === "string" ? { code } : {}),
    ...(result ? { exitCode: result.exitCode, signal: result.signal, timedOut: result.timedOut } : {}),
  };
}
