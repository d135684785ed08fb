import path from "node:path";
import type { Queue, QueueEventMap } from "../engine/index.js";
import { attemptResultOf, describeError } from "./render/describe.js";
import type { CancelledLine, DeadLetterLine, RunSummary } from "./render/types.js";

/** Collects what the summary needs from the queue's events, so nothing else about a task is kept. */
export class SummaryCollector {
  readonly #cancelled: CancelledLine[] = [];

  constructor(queue: Queue) {
    queue.on("cancelled", (e: QueueEventMap["cancelled"]) => {
      const line: CancelledLine = { id: e.id, reason: e.reason, message: describeError(e.error) };
      if (e.dependency !== undefined) line.dependency = e.dependency;
      this.#cancelled.push(line);
    });
  }

  build(
    queue: Queue,
    run: { runId: string; file: string; logDir: string; startedAt: number; interrupted?: NodeJS.Signals; exitCode: number },
  ): RunSummary {
    const deadLetters: DeadLetterLine[] = queue.deadLetters().map((dead) => {
      const result = attemptResultOf(dead.error);
      return {
        id: dead.id,
        attempts: dead.attempts,
        error: describeError(dead.error),
        exitCode: result?.exitCode ?? null,
        signal: result?.signal ?? null,
        timedOut: result?.timedOut ?? false,
        logPath: path.join(run.logDir, `${dead.id}.log`),
        tail: result?.tail ?? [],
      };
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
    return summary;
  }
}
