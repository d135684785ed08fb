import path from "node:path";
import type { Queue, QueueEventMap } from "../engine/index.js";
import { NotSpawnedError } from "../handlers/errors.js";
import { attemptResultOf, describeError } from "./render/describe.js";
import type { CancelledLine, DeadLetterLine, RunSummary } from "./render/types.js";

/** A task's log, as the summary and the JSON records name it: its path, and its path under the `--log-dir` (`<run-id>/<task-id>.log`). */
export function taskLog(run: { runId: string; logDir: string }, id: string): { logPath: string; logFile: string } {
  return { logPath: path.join(run.logDir, `${id}.log`), logFile: `${run.runId}/${id}.log` };
}

/** Collects what the summary needs from the queue's events, so nothing else about a task is kept. */
export class SummaryCollector {
  readonly #cancelled: CancelledLine[] = [];
  /** The tasks whose attempt is running: a cancel then cuts the attempt short (see CancelledLine.running). */
  readonly #running = new Set<string>();
  /**
   * The last lines of a task's latest failed attempt that had any, while it waits for the
   * next one: an attempt that could not write its log (a full disk) ends with none, and the
   * summary then shows these rather than nothing. Let go of once the task ends otherwise.
   */
  readonly #earlierTails = new Map<string, { attempt: number; tail: string[] }>();
  /** The tasks that have failed an attempt and were given another, until they end. */
  readonly #retried = new Set<string>();
  /** How many of #cancelled, at its start, were cut short while running. */
  #cutShort = 0;
  /**
   * How many of #cancelled, right after those cut short, the queue had started (their `start` line out, their attempt
   * counted) but whose command the signal kept from spawning: named before the tasks that never started, which may be
   * hundreds and would otherwise fill the text's first 50 (these are cancelled last, once their start gives up).
   */
  #notSpawned = 0;

  readonly #runId: string;
  readonly #logDir: string;

  constructor(queue: Queue, run: { runId: string; logDir: string }) {
    this.#runId = run.runId;
    this.#logDir = run.logDir;
    queue.on("started", (e: QueueEventMap["started"]) => this.#running.add(e.id));
    queue.on("cancelled", (e: QueueEventMap["cancelled"]) => {
      const earlier = this.#earlierTails.get(e.id);
      this.#earlierTails.delete(e.id);
      const line: CancelledLine = { id: e.id, reason: e.reason, message: describeError(e.error) };
      if (e.dependency !== undefined) line.dependency = e.dependency;
      // Started by the queue, its command never spawned (the signal came while its attempt got ready): not cut short.
      const started = this.#running.delete(e.id);
      const notSpawned = started && e.error instanceof NotSpawnedError;
      const wasRunning = started && !notSpawned;
      const result = wasRunning ? (attemptResultOf(e.error) ?? attemptResultOf(causeOf(e.error))) : undefined;
      // Nor one whose attempt ended by itself in the time to finish (it failed, and the shutdown took its retry): its
      // attempt's lines, as those of one waiting for its retry at the signal.
      const endedByItself = result !== undefined && !result.cancelled;
      const cutShort = wasRunning && !endedByItself;
      const tail = cutShort ? (result?.tail ?? []) : [];
      // (One that wrote nothing: the lines of the latest attempt that wrote some, as for a dead letter.)
      // One whose failed attempt printed nothing at all, ended by itself or waiting for its retry, still gives its log
      // path (the log holds how that attempt ended).
      const waited = this.#retried.delete(e.id) && !wasRunning;
      const own = endedByItself && (result.tail.length > 0 || earlier === undefined);
      const before = own ? { attempt: e.attempts, tail: result.tail } : (earlier ?? (waited ? { attempt: e.attempts, tail: [] } : undefined));
      if (cutShort || before !== undefined) {
        if (cutShort) line.running = true;
        // Where its attempt was when stopped: what a CI job's log should show of a step the job's timeout cut short.
        Object.assign(line, taskLog({ runId: this.#runId, logDir: this.#logDir }, e.id));
        // Its attempt left no lines, or it waited for a retry: the failed attempt's before it, as a dead letter gives them.
        line.tail = tail.length === 0 && before !== undefined ? before.tail : tail;
        if (tail.length === 0 && before !== undefined) line.tailAttempt = before.attempt;
      }
      // Those cut short while running first (as the text lists them), each in the order it ended; then those started
      // whose command never spawned; then the rest.
      if (cutShort) this.#cancelled.splice(this.#cutShort++, 0, line);
      else if (notSpawned) this.#cancelled.splice(this.#cutShort + this.#notSpawned++, 0, line);
      else this.#cancelled.push(line);
    });
    queue.on("retrying", (e: QueueEventMap["retrying"]) => {
      this.#running.delete(e.id);
      const tail = attemptResultOf(e.error)?.tail ?? [];
      this.#retried.add(e.id);
      if (tail.length > 0) this.#earlierTails.set(e.id, { attempt: e.attempt, tail });
    });
    queue.on("succeeded", (e: QueueEventMap["succeeded"]) => {
      this.#running.delete(e.id);
      this.#earlierTails.delete(e.id);
      this.#retried.delete(e.id);
    });
    queue.on("failed", (e: QueueEventMap["failed"]) => {
      this.#running.delete(e.id);
      this.#retried.delete(e.id);
    });
  }

  build(
    queue: Queue,
    run: { runId: string; file: string; logDir: string; startedAt: number; interrupted?: NodeJS.Signals; failedFast?: string; exitCode: number },
  ): RunSummary {
    const deadLetters: DeadLetterLine[] = queue.deadLetters().map((dead) => {
      const result = attemptResultOf(dead.error);
      const tail = result?.tail ?? [];
      const earlier = tail.length === 0 ? this.#earlierTails.get(dead.id) : undefined;
      const line: DeadLetterLine = {
        id: dead.id,
        attempts: dead.attempts,
        error: describeError(dead.error),
        exitCode: result?.exitCode ?? null,
        signal: result?.signal ?? null,
        timedOut: result?.timedOut ?? false,
        ...taskLog(run, dead.id),
        tail: earlier?.tail ?? tail,
      };
      if (earlier !== undefined) line.tailAttempt = earlier.attempt;
      return line;
    });
    const summary: RunSummary = {
      runId: run.runId,
      file: run.file,
      logDir: run.logDir,
      wallMs: Date.now() - run.startedAt,
      counts: queue.stats().byStatus,
      deadLetters,
      cancelled: this.#cancelled,
      exitCode: run.exitCode,
    };
    if (run.interrupted !== undefined) summary.interrupted = run.interrupted;
    if (run.failedFast !== undefined) {
      summary.failedFast = run.failedFast;
      // Every task the stop cancelled, as the `cancelled` records name it (see JsonRenderer.stopping): a fail-fast stop
      // begins only where no signal came before it, and a signal during it stops nothing the stop had not.
      for (const line of this.#cancelled) if (line.reason === "shutdown") line.reason = "fail-fast";
    }
    return summary;
  }
}

/** An error's `cause`; undefined where reading it throws (a getter or a Proxy of a handler's). */
function causeOf(error: unknown): unknown {
  try {
    return (error as { cause?: unknown } | null)?.cause;
  } catch {
    return undefined;
  }
}
