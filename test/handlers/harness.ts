import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createShellHandler, type AttemptResult, type ShellHandlerOptions, type ShellTask, type StreamName } from "../../src/handlers/index.js";
import { eventually } from "../helpers/processes.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** A fixture script's path, quoted for a shell command line. */
export function fixture(name: string): string {
  return `'${path.join(FIXTURES, name)}'`;
}

export interface OutputLine {
  stream: StreamName;
  text: string;
}

export interface RunOptions extends Partial<Omit<ShellTask, "run">> {
  signal?: AbortSignal;
  attempt?: number;
}

/** One handler with its own run id, log folder and recording sink. */
export interface Harness {
  runId: string;
  dir: string;
  logDir: string;
  lines: OutputLine[];
  run(command: string, options?: RunOptions): Promise<AttemptResult>;
  /** Resolves once the sink has seen a line equal to `text`. */
  waitForLine(text: string): Promise<void>;
  logPath(taskId?: string): string;
  cleanup(): Promise<void>;
}

export async function createHarness(options: Partial<ShellHandlerOptions> = {}): Promise<Harness> {
  const runId = `test-${randomUUID()}`;
  const dir = await mkdtemp(path.join(tmpdir(), "taskq-handler-"));
  const logDir = options.logDir ?? path.join(dir, "logs");
  const lines: OutputLine[] = [];
  const handler = createShellHandler({
    runId,
    logDir,
    killGraceMs: 300,
    sink: { line: (_taskId, stream, text) => lines.push({ stream, text }) },
    ...options,
  });
  return {
    runId,
    dir,
    logDir,
    lines,
    run: (command, { signal, attempt = 1, ...task } = {}) =>
      handler(
        { id: "task", env: {}, cwd: dir, ...task, run: command },
        { signal: signal ?? new AbortController().signal, attempt, taskId: task.id ?? "task" },
      ),
    async waitForLine(text) {
      if (!(await eventually(() => lines.some((line) => line.text === text)))) throw new Error(`no output line "${text}"`);
    },
    logPath: (taskId = "task") => path.join(logDir, `${taskId}.log`),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Aborts the way the engine does: the reason is an Error carrying a `code`. */
export function abortWith(controller: AbortController, code: "TIMEOUT" | "CANCELLED" | "SHUTDOWN", message = code.toLowerCase()): void {
  controller.abort(Object.assign(new Error(message), { code }));
}

/** The rejection of `promise`, failing the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the attempt to fail, but it succeeded");
}
