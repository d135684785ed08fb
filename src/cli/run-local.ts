import { existsSync } from "node:fs";
import path from "node:path";
import { Queue, TaskCancelledError, exponentialBackoff, type Backoff } from "../engine/index.js";
import { formatSetMs } from "../engine/errors.js";
import { LongTimer } from "../engine/long-timer.js";
import { activeProcessGroups, createShellHandler, expectTaskPipes, fitConcurrencyToOpenFiles, killAllProcessGroups, startGroupGuard, stopLeftovers, type ShellTask } from "../handlers/index.js";
import { monotonicMs } from "../monotonic.js";
import type { Workflow } from "../loaders/index.js";
import { holdLogFolder, renewLogFolderHold } from "./log-folders.js";
import { leftoversGraceMs, leftoversNote, signalOf } from "./leftovers-stop.js";
import { outerGraceWords } from "./outer-grace.js";
import { pidOneNote } from "./pid-one.js";
import { createRenderer, type OutputMode } from "./render/index.js";
import type { RunSummary } from "./render/types.js";
import { createRunFolder } from "./run-folder.js";
import { EarlySignals, onJobControl, onShutdownSignals, secondSignal, shutdownSignals, signalExitCode } from "./signals.js";
import type { TaskSelection } from "./task-selection.js";
import { SummaryCollector } from "./summary.js";
import { smallThreadPool } from "./thread-pool.js";

export { prepareTaskPipes } from "../handlers/index.js";

export interface LocalRunOptions {
  concurrency: number;
  shutdownTimeoutMs: number;
  killGraceMs: number;
  /** Set where both were shortened to fit the kill grace of the taskq running this one (see outer-grace.ts). */
  outerGraceMs?: number;
  output: OutputMode;
  logRoot: string;
  color: boolean;
  /** Set where the command line named tasks: the run has those and what they depend on (see select-tasks.ts). */
  selection?: TaskSelection;
  /** --fail-fast: the first task that fails for good stops the run (see stopOnFirstFailure). */
  failFast?: boolean;
}

/**
 * Runs a validated workflow in this process: shell handler -> queue ->
 * renderer, with two-phase signal handling. Returns the exit code.
 */
export async function runLocal(workflow: Workflow, options: LocalRunOptions): Promise<number> {
  // From before the run's folder is made until the run's own handlers listen (see EarlySignals).
  const early = new EarlySignals();
  try {
    return await runWith(workflow, options, early);
  } finally {
    early.end();
  }
}

async function runWith(workflow: Workflow, options: LocalRunOptions, early: EarlySignals): Promise<number> {
  const startedAt = Date.now();
  // Plain lines and the live board show no stream: stdout and stderr then share one pipe, so
  // the log and the display keep the order the task wrote them in. JSON labels each line.
  const mergeOutput = options.output !== "json";
  // First: an open-file limit too low for one task is an error before anything is made or run.
  const fitted = fitConcurrencyToOpenFiles(options.concurrency, mergeOutput, undefined, { others: 0 });
  // So is a limit on processes with no room for one task (and the pool's thread: see thread-pool.ts).
  const hiddenEnv = smallThreadPool();
  const { runId, logDir } = createRunFolder(options.logRoot, startedAt);
  // `taskq prune --logs` leaves the folder alone until the run ends (or taskq does).
  const releaseLogDir = holdLogFolder(logDir);
  const renderer = await createRenderer(options.output, { color: options.color });
  /**
   * The signals of the attempts whose command runs: one its timeout aborted is being stopped already, and the shutdown's
   * note does not count it, nor one whose command has ended (taskq stops what it left running, on its own clock).
   */
  const attempts = new Set<AbortSignal>();
  /** A task deleted the log folder (a clean-up step): the summary then says which of the logs it names are gone. */
  let logDirDeleted = false;
  const shell = createShellHandler({
    runId,
    logDir,
    killGraceMs: options.killGraceMs,
    sink: renderer,
    mergeOutput,
    hiddenEnv,
    shutdownSignals,
    // Made again after a task deleted it: `prune --logs` must see it is in use.
    onLogDirRemade: () => {
      logDirDeleted = true;
      renewLogFolderHold(logDir);
    },
    // Its command ended by itself: a stop of the run's tasks would not stop it, and its note does not count it. One
    // that ended as it was stopped (its timeout, a hard stop) stays: it was being stopped.
    onCommandEnded: (attempt) => {
      if (!attempt.aborted) attempts.delete(attempt);
    },
  });
  expectTaskPipes(workflow.tasks.length * (mergeOutput ? 1 : 2));
  // Before the first task of several; one task alone starts it just after its spawn (see group-guard.ts).
  if (workflow.tasks.length > 1) startGroupGuard(options.killGraceMs);
  const queue = new Queue({
    concurrency: fitted.concurrency,
    // The queue keeps each task's value for the run (queue.result()); the CLI never reads a
    // success's (its tail and timings), so none is kept: 3,000 tasks printing long lines
    // held 250 MB of tails. A failure's stays, for the summary's dead letters.
    handlers: {
      shell: async (task: ShellTask, context) => {
        attempts.add(context.signal);
        try {
          await shell(task, context);
        } finally {
          attempts.delete(context.signal);
        }
      },
    },
  });
  const summary = new SummaryCollector(queue, { runId, logDir });
  const maxAttempts = new Map<string, number>();
  for (const task of workflow.tasks) maxAttempts.set(task.id, task.retries + 1);
  let interrupted: NodeJS.Signals | undefined;
  /** When the first signal came (monotonic): its stop, leftovers included, takes at most the time to finish and the kill grace. */
  let interruptedAt = 0;
  let finished = false;
  /** Set while what the tasks left running is being stopped, after the last task: a signal then kills it at once. */
  let stoppingLeftovers: AbortController | undefined;
  const killLeftoversNow = (signal: NodeJS.Signals): void => {
    // Said by stopLeftovers' onKillNow, once it finds something left to kill: what it stopped may be gone already.
    if (stoppingLeftovers !== undefined && !stoppingLeftovers.signal.aborted) stoppingLeftovers.abort(signal);
  };
  const hardStop = new AbortController();
  /** A LongTimer: the time to finish may be longer than setTimeout's 24.8 days. */
  let deadlineNote: LongTimer | undefined;
  /** Set once the time to finish has passed: the queue has stopped the running tasks, and waits for their handlers. */
  let timeToFinishPassed = false;
  /** Set by a second signal ("killing every task now"). */
  let killedAtOnce = false;
  /** The task whose failure stopped the run, with --fail-fast. */
  let failedFast: string | undefined;
  // Installed before the run's first record, until the summary is out: a signal while thousands of tasks are
  // submitted (~0.3 s for 5,000) must not kill taskq mid-record, nor one after the last task ended cut the summary off.
  const removeSignalHandlers = onShutdownSignals({
    graceful: (signal) => {
      if (finished) return killLeftoversNow(signal);
      interrupted = signal;
      interruptedAt = monotonicMs();
      // --fail-fast has stopped the running tasks already, on the kill grace: no time to finish is given them now.
      if (failedFast !== undefined) {
        renderer.note(`${signal} received: the running tasks are being stopped already (fail-fast: ${failedFast} failed); send it again to kill them at once`);
        return;
      }
      // Durations as the worker and the leftovers' note say them: `2h`, not `7200s`.
      renderer.note(`${signal} received: no new task starts; running tasks have ${formatSetMs(options.shutdownTimeoutMs)} to finish (send it again to stop at once)${options.outerGraceMs === undefined ? "" : `; shortened: ${outerGraceWords(options.outerGraceMs)}`}`);
      renderer.stopping?.({ signal, phase: "finishing", until: Date.now() + options.shutdownTimeoutMs });
      const sayTimeToFinishPassed = (): void => {
        if (finished || queue.stats().running === 0) return;
        renderer.stopping?.({ signal, phase: "stopping" });
        // Those whose timeout has aborted them already are being stopped on its own clock, not this one's.
        let running = 0;
        for (const attempt of attempts) if (!timedOut(attempt)) running++;
        if (running === 0) return;
        renderer.note(
          `the ${formatSetMs(options.shutdownTimeoutMs)} to finish have passed: stopping ${running === 1 ? "the running task" : `the ${running} running tasks`} (SIGTERM, then SIGKILL ${formatSetMs(options.killGraceMs)} later)`,
        );
      };
      const abortGraceMs = options.killGraceMs + 2000;
      // The time to finish passing is said, then the queue stops the running tasks: the note counts them all. (The
      // queue had a deadline timer of its own, of the same length from a moment later, which a loaded machine now and
      // then fired first: a task it stopped ended before the note, which then counted one task fewer.)
      const stopRunning = (): void => {
        timeToFinishPassed = true;
        sayTimeToFinishPassed();
        void queue.shutdown({ drain: false, deadline: 0, abortGraceMs });
      };
      void queue.shutdown({ drain: false, signal: hardStop.signal, abortGraceMs });
      if (options.shutdownTimeoutMs <= 0) stopRunning();
      else deadlineNote = new LongTimer(stopRunning, options.shutdownTimeoutMs);
    },
    immediate: (signal, first) => {
      if (finished) return killLeftoversNow(signal);
      deadlineNote?.clear();
      // Said once: a third signal (a storm of them, a key held down) kills again, and says nothing new.
      if (!killedAtOnce) {
        renderer.note(`${secondSignal(signal, first)}: killing every task now`);
        renderer.stopping?.({ signal: first, phase: "killing" });
      }
      killAllProcessGroups("SIGKILL");
      killedAtOnce = true;
      // Past the time to finish, the queue has stopped the tasks already and waits for their handlers, which the
      // SIGKILL ends now: aborting its signal would end that wait, and the summary (and the exit) could come before
      // a stopped task's handler wrote how its attempt ended into the task's log.
      if (!timeToFinishPassed) hardStop.abort();
    },
  }, early.copies);
  // Signals that came while the run was set up: given to those handlers just before the first task may start.
  const earlySignals = early.end();
  renderer.attach(queue, {
    runId,
    file: workflow.file,
    ...(workflow.name === undefined ? {} : { name: workflow.name }),
    logDir,
    taskCount: workflow.tasks.length,
    ...(options.selection === undefined ? {} : { selection: options.selection }),
    concurrency: fitted.concurrency,
    maxAttempts,
  });
  // After the renderer's listeners: its `FAILED` line comes before the note that says what follows from it.
  if (options.failFast === true) {
    // Kept past the workflow's tasks (let go before the first spawn): which tasks wait for which, to tell a failed task's
    // own dependents, cancelled because of it with or without the flag, from the tasks the stop cancels.
    const dependentsOf = dependentsMap(workflow);
    queue.on("failed", (e) => {
      if (failedFast !== undefined || interrupted !== undefined) return;
      const { byStatus } = queue.stats();
      // As the shutdown's note counts them: one its timeout is stopping already, on its own clock, is not the stop's to stop.
      let running = 0;
      for (const attempt of attempts) if (!timedOut(attempt)) running++;
      const waiting = byStatus.READY + byStatus.SCHEDULED + byStatus.BLOCKED - blockedDependents(queue, dependentsOf, e.id);
      // Nothing running, and nothing waiting but the failed task's dependents: the stop has nothing to stop, and the run
      // ends as it would have (the last task to end, or one whose dependents were all that was left).
      if (running + waiting === 0) return;
      failedFast = e.id;
      renderer.note(failFastNote(e.id, waiting, running, options.killGraceMs));
      // Before the stop cancels anything: the board says it stops, and the JSON records name each task it cancels so.
      renderer.stopping?.({ failedFast: e.id, phase: "stopping", ...(running === 0 ? { waitingOnly: true } : {}) });
      stopOnFirstFailure(queue, e.id, options.killGraceMs + 2000);
    });
  }
  if (fitted.note !== undefined) renderer.note(fitted.note);
  const pidOne = pidOneNote();
  if (pidOne !== undefined) renderer.note(pidOne);
  for (const note of workflow.notes) renderer.note(note);
  submitAll(queue, workflow);
  const file = workflow.file;
  // Let go of the parsed workflow before the first spawn: every spawn forks, and costs grow with our own memory.
  workflow.tasks.length = 0;
  delete workflow.taskNotes;

  // Ctrl-Z stops the tasks with taskq, and `fg` continues them (time stopped counts toward their timeouts).
  const removeJobControl = onJobControl({
    stop: () => {
      renderer.suspend?.();
      killAllProcessGroups("SIGSTOP");
    },
    resume: () => {
      killAllProcessGroups("SIGCONT");
      renderer.resume?.();
    },
  });
  try {
    // Every task is cancelled before any starts, and the summary says so, as for a signal just after the start.
    for (const signal of earlySignals) removeSignalHandlers.deliver(signal);
    queue.start();
    await queue.shutdown({ drain: true });
    finished = true;
    deadlineNote?.clear();
    // Belt and braces: whatever happened, no task process outlives the run.
    if (activeProcessGroups() > 0) killAllProcessGroups("SIGKILL");
    const counts = queue.stats().byStatus;
    const exitCode = interrupted !== undefined ? signalExitCode(interrupted) : counts.FAILED + counts.CANCELLED > 0 ? 1 : 0;
    // Deleted by a task (a clean-up step) after the last log was opened: the summary's paths lead nowhere.
    // By its full path: the folder taskq was started in may be gone, the log folder made again in its place (see log-folders.ts).
    if (!existsSync(path.resolve(logDir))) {
      logDirDeleted = true;
      renderer.note(`the log folder ${logDir} was deleted during the run (by a task?): the tasks' logs are lost`);
    }
    const run = { runId, file, logDir, startedAt, exitCode, ...(interrupted === undefined ? {} : { interrupted }), ...(failedFast === undefined ? {} : { failedFast }) };
    // Daemons the tasks started (setsid) have run for the tasks after them: now they stop, given the grace a task gets,
    // before the summary, which is then the last word; a signal meanwhile kills them at once (the run's result stands).
    // After a signal, less or no grace (see leftoversGraceMs).
    const leftovers = { ...(interrupted === undefined ? {} : { interrupted }), interruptedAt, killedAtOnce, shutdownTimeoutMs: options.shutdownTimeoutMs, killGraceMs: options.killGraceMs };
    const graceMs = leftoversGraceMs(leftovers);
    stoppingLeftovers = new AbortController();
    if (killedAtOnce) stoppingLeftovers.abort();
    await stopLeftovers(graceMs, {
      signal: stoppingLeftovers.signal,
      onFound: (groups) => renderer.note(leftoversNote(leftovers, graceMs, groups)),
      onKillNow: () => renderer.note(`${signalOf(stoppingLeftovers)} received: every task has ended; killing what they left running now`),
    });
    // Built after that wait, which may take the kill grace: "in 1.2s" is the run's time to this summary.
    const built = summary.build(queue, run);
    if (logDirDeleted) markDeletedLogs(built);
    await renderer.finish(built);
    return exitCode;
  } finally {
    if (activeProcessGroups() > 0) killAllProcessGroups("SIGKILL");
    removeSignalHandlers();
    removeJobControl();
    releaseLogDir();
  }
}

/**
 * --fail-fast: stops the run as a Ctrl-C's stop does once its time to finish has passed, at once: no task starts, those waiting
 * (blocked, queued, scheduled, waiting to retry) are cancelled, and the running ones stopped (SIGTERM to each process group,
 * SIGKILL after the kill grace), each in the words of the reason, which names the failed task. Called from the `failed`
 * listener, before the queue starts another task; the failed task's dependents are still cancelled because of it.
 */
function stopOnFirstFailure(queue: Queue, failed: string, abortGraceMs: number): void {
  const stop = new AbortController();
  stop.abort(new TaskCancelledError("shutdown", `fail-fast: task "${failed}" failed`));
  void queue.shutdown({ signal: stop.signal, abortGraceMs });
}

/**
 * "fail-fast: build failed: no new task starts, the 3 tasks waiting are cancelled; stopping the 2 running tasks (SIGTERM,
 * then SIGKILL 5s later)": each part where it is so. `waiting` leaves out the failed task's dependents (cancelled as ever).
 */
function failFastNote(failed: string, waiting: number, running: number, killGraceMs: number): string {
  const parts: string[] = [];
  if (waiting > 0) parts.push(`no new task starts, ${waiting === 1 ? "the task waiting is" : `the ${waiting} tasks waiting are`} cancelled`);
  if (running > 0) parts.push(`stopping ${running === 1 ? "the running task" : `the ${running} running tasks`} (SIGTERM, then SIGKILL ${formatSetMs(killGraceMs)} later)`);
  return `fail-fast: ${failed} failed: ${parts.join("; ")}`;
}

/** Each task's direct dependents, by id. */
function dependentsMap(workflow: Workflow): Map<string, string[]> {
  const dependents = new Map<string, string[]>();
  for (const task of workflow.tasks) {
    for (const dependency of task.dependsOn) {
      const list = dependents.get(dependency);
      if (list === undefined) dependents.set(dependency, [task.id]);
      else list.push(task.id);
    }
  }
  return dependents;
}

/** How many of `failed`'s dependents, direct or not, still wait (BLOCKED): each is about to be cancelled because of it. */
function blockedDependents(queue: Queue, dependentsOf: Map<string, string[]>, failed: string): number {
  const seen = new Set<string>();
  const stack = [failed];
  let blocked = 0;
  for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
    for (const dependent of dependentsOf.get(id) ?? []) {
      if (seen.has(dependent)) continue;
      seen.add(dependent);
      if (queue.get(dependent)?.status === "BLOCKED") blocked++;
      stack.push(dependent);
    }
  }
  return blocked;
}

/** Whether an attempt's signal was aborted by its timeout (the engine's AttemptTimeoutError). */
function timedOut(attempt: AbortSignal): boolean {
  return attempt.aborted && (attempt.reason as { code?: unknown } | null)?.code === "TIMEOUT";
}

function submitAll(queue: Queue, workflow: Workflow): void {
  const backoffs = new Map<string, Backoff>();
  // `delay` counts from here, the start of the run.
  const startedAt = Date.now();
  for (const task of workflow.tasks) {
    const key = `${task.backoff.baseMs}/${task.backoff.maxMs}`;
    let backoff = backoffs.get(key);
    if (backoff === undefined) backoffs.set(key, (backoff = exponentialBackoff(task.backoff)));
    // Every field at once: one shape for every payload, whichever fields a task sets.
    const payload: ShellTask = { id: task.id, run: task.run, env: task.env, cwd: task.cwd, retryOn: task.retryOn, timeoutMs: task.timeoutMs };
    queue.submit({
      id: task.id,
      type: task.type,
      payload,
      priority: task.priority,
      maxAttempts: task.retries + 1,
      backoff,
      ...(task.timeoutMs === undefined ? {} : { timeoutMs: task.timeoutMs }),
      // A Date: a time from the file is one however long ago, where a number before 2001 would be refused as a delay meant.
      ...(task.runAt !== undefined ? { runAt: new Date(task.runAt) } : task.delayMs !== undefined ? { runAt: startedAt + task.delayMs } : {}),
      dependsOn: task.dependsOn,
    });
  }
}

/**
 * The summary's logs that a task deleted with their folder (a clean-up step's `rm -rf .taskq`, or `git clean -xdf`):
 * a log opened before is gone, though the folder was made again for the tasks after, so its path leads nowhere.
 */
function markDeletedLogs(built: RunSummary): void {
  for (const line of [...built.deadLetters, ...built.cancelled]) {
    if (line.logPath !== undefined && !existsSync(path.resolve(line.logPath))) line.logDeleted = true;
  }
}
