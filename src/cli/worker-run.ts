import type { MetricsPort } from "../store/postgres/metrics-server.js";
import { hostname } from "node:os";
import path from "node:path";
import { TaskqError } from "../errors.js";
import { formatMs, formatSetMs } from "../engine/errors.js";
import { outerGraceWords } from "./outer-grace.js";
import { formatDuration } from "../handlers/format-duration.js";
import { SHOW_OPEN_LINE_AFTER_MS } from "../handlers/line-splitter.js";
import { DbErrorLines } from "./db-error-lines.js";
import { monotonicMs } from "../monotonic.js";
import {
  appendToLogFile,
  attemptLine,
  createShellHandler,
  fitConcurrencyToOpenFiles,
  killAllProcessGroups,
  logPathsIn,
  startGroupGuard,
  stopLeftovers,
  type FittedConcurrency,
  type OutputSink,
  type ShellTask,
  type StreamName,
} from "../handlers/index.js";
import type { LeasedTask, LeaseLost, Outcome, PostgresStore, PostgresWorker, ReleaseEnd, SweptTask, TaskNow, WorkerEvent } from "../store/postgres/index.js";
import { processExists } from "../process-exists.js";
import { workerHostAndPid } from "../store/postgres/worker-id.js";
import { DEFAULT_LEASE_MS } from "../store/postgres/worker-types.js";
import { isStoreMissing } from "../store/postgres/transient.js";
import { BufferedWriter, jsonRecordHead, toJson } from "./output.js";
import { holdLogFolder, renewLogFolderHold } from "./log-folders.js";
import { oneLine } from "./one-line.js";
import { coloursRefused } from "./render/colors.js";
import { eachLineText, hasControlBytes, rewrittenState, TaskColours, TerminalColours } from "./render/control-bytes.js";
import { clock } from "./render/describe.js";
import { holdsLegacyCommand, maskCommands, maskCommandsInStates, maskCommandsInText, underGitHubActions, withoutLegacyCommands, writeCommands } from "./render/workflow-commands.js";
import { leftoversGraceMs, leftoversNote, signalOf } from "./leftovers-stop.js";
import { pidOneNote } from "./pid-one.js";
import { RunHandlers } from "./run-handlers.js";
import { onShutdownSignals, secondSignal, shutdownSignals, signalExitCode, type EarlySignals } from "./signals.js";
import { fullPath } from "./full-path.js";
import { madeStoreNote } from "./store-flags.js";
import { keepHeapSmall } from "./small-heap.js";
import { smallThreadPool } from "./thread-pool.js";

/** The store's name of a failed operation before its error's message ("completeAndLease failed: "; see toStoreError). */
const STORE_OPERATION = /^[a-z][A-Za-z]* failed: /;

/**
 * How long a run's log folder stays marked in use after this worker's last task of it (see
 * holdLogFolder), and its shell handler kept for the run's next task (see RunHandlers).
 */
const MARKER_LINGER_MS = 1000;

/**
 * Leases shorter than this get a note at start: allowed (from 1s), but on a saturated machine
 * renewals came too late for a 1s lease, and healthy tasks became dead letters.
 */
const SHORT_LEASE_MS = 5_000;

/**
 * How long past the kill grace a stopping worker waits for a stopped task's handler to end (it
 * has sent SIGKILL by then) before giving the lease back regardless: as a local run waits.
 */
const ABORT_MARGIN_MS = 2_000;

/**
 * What tasks never inherit from the worker: the store's connection string and node-pg's
 * password variable may carry the password; the thread pool size is taskq's own (see thread-pool.ts).
 */
const STORE_SECRETS = ["TASKQ_STORE", "PGPASSWORD"];

export interface WorkerRunResult {
  exitCode: number;
  /** The signal that stopped the worker, if one did. */
  interrupted?: NodeJS.Signals;
  workerId: string;
}

export interface WorkerRunOptions {
  concurrency: number;
  shutdownTimeoutMs: number;
  killGraceMs: number;
  /** Set where both were shortened to fit the kill grace of the taskq running this one (see outer-grace.ts). */
  outerGraceMs?: number;
  logRoot: string;
  json: boolean;
  /** false (`--no-color`, of `taskq worker` and `run --store`): no colours, as NO_COLOR asks (see coloursRefused). */
  color?: boolean;
  leaseMs?: number;
  /** The metrics port, taken before the store opened (see takeMetricsPort): it serves the worker's metrics, and closes as the worker stops. */
  metrics?: MetricsPort;
  /** The address the metrics server listens on (127.0.0.1 unless --metrics-host). */
  metricsHost?: string;
  /** Resolves when the worker should stop on its own (e.g. its run finished). */
  until?: (worker: PostgresWorker) => Promise<void>;
  /** Told each of the worker's events, before it is printed (`run --store` looks at its run's state when a task ends). */
  onEvent?: (event: WorkerEvent) => void;
  /** The worker's id (default: a new one; see newWorkerId). */
  workerId?: string;
  /** Lease only this run's tasks (`run --store`); default: every run's. */
  runId?: string;
  /**
   * A note the worker gives among its first (`taskq worker --output json`: that a newer taskq migrated the store, as a
   * `note` record with these fields, which the plain lines have on stderr as the store opens).
   */
  storeNote?: { message: string } & Record<string, unknown>;
  /**
   * The concurrency fitted to the open-file limit before the store was opened (`run --store`,
   * as its --dry-run plans it): counted after, the store's first connections are counted twice,
   * held now and set aside for the pool. Default: fitted here.
   */
  fitted?: FittedConcurrency;
  /**
   * Called as the worker stops listening for shutdown signals, before it does: a caller that listens next (`run
   * --store`, while it ends its run) starts here, so no signal finds taskq with no listener for it, whose default
   * action ends taskq in silence.
   */
  takeSignals?: () => void;
  /**
   * For a worker whose run ends with it (`run --store`): called at the first shutdown signal, for the caller to
   * cancel at once what of the run waits. From then on, what this worker gives back is cancelled too, not queued
   * for another worker (see PostgresWorker.cancelWhatIsGivenBack): nothing the user asked to stop starts again.
   */
  endRun?: () => void;
  /**
   * Signals heard before the worker's own listeners (`run --store`: from before its run was stored), given to them as
   * they start listening, before the worker leases anything: with no listener meanwhile, a signal's default action
   * ended taskq in silence.
   */
  earlySignals?: EarlySignals;
}

/**
 * Runs a durable worker in this process until a signal, a lost lease, or
 * `until` resolves. Task output goes to `<logRoot>/<runId>/<task>.log` and to
 * stdout prefixed with `run/task |`. Returns the exit code, and the signal that stopped it.
 */
export async function runWorker(store: PostgresStore, options: WorkerRunOptions): Promise<WorkerRunResult> {
  const { PostgresWorker, metricsPort } = await import("../store/postgres/index.js");
  const out = new BufferedWriter(process.stdout);
  /** JSON under GitHub Actions: a record holding `##[` written so that the runner reads no command in it (see withoutLegacyCommands). */
  const legacyGuarded = options.json && underGitHubActions() ? withoutLegacyCommands : (json: string): string => json;
  /** `stamp`: the time of a record of several lines, read once for all of them (they were in time order a clock read apart, the first last). */
  const print = (record: Record<string, unknown>, text: string, stamp = options.json ? "" : clock()): void => {
    out.write(options.json ? `${legacyGuarded(toJson({ ts: new Date().toISOString(), ...record }))}\n` : `${stamp} ${text}\n`);
  };
  /** A note: in plain lines, `plain` (the message, unless worded for them) in the `note` column, as a local run's (see PlainRenderer). */
  const printNote = (message: string, plain = message, fields: Record<string, unknown> = {}): void => print({ event: "note", ...fields, message }, `note    ${plain}`);
  let lostLease = false;
  /** Set when the worker's first leases were refused for good (see the `store-unusable` event): it exits 1, saying why. */
  let unusable: unknown;
  /** Set when the store's database no longer exists (see the `database-gone` event): it exits 1, saying why. */
  let databaseGone: unknown;
  let interrupted: NodeJS.Signals | undefined;
  /** When the first signal came (monotonic): its stop, leftovers included, takes at most the time to finish and the kill grace. */
  let interruptedAt = 0;
  /** The worker's `stopped`, told last: after what its tasks left running is stopped too. */
  let stopped: WorkerEvent | undefined;
  let onHalted = (): void => undefined;
  // The worker stops by itself when a task it ran was taken over (it stalled past the lease): then this process ends too.
  const halted = new Promise<void>((resolve) => (onHalted = resolve));
  const poolEnv = smallThreadPool();
  // On a terminal a task's lines are cleaned as a local run's (see PlainRenderer): a task cannot
  // clear the screen, set the title, ring or write over its prefix. To a file or a pipe, as written.
  const terminal = !options.json && process.stdout.isTTY === true;
  /**
   * As written: the colours each task's output has left set (see OpenColours), by `run/task`, for the tasks that set any,
   * as a local run's plain lines keep them: taskq's own lines come after a reset, a task's next line's prefix too, and
   * its text in the colours set (a line shown before it ends, `\e[31mwait` then `ing\e[0m`, stays red, and only it).
   */
  const colours = new TaskColours(!coloursRefused(options.color ?? true), !terminal && underGitHubActions());
  /** On a terminal: the colours each task's lines have left set, set again at its next line, as a local run's (see TerminalColours). */
  const terminalColours = new TerminalColours(colours.keeps);
  const handlers = new RunHandlers((runId) => {
    const sink: OutputSink = {
      // Plain lines into a file or a pipe: every line comes to `lines` as bytes, none decoded.
      asWritten: !options.json && !terminal,
      // Plain lines: one not ended yet shows as far as it goes after a second, as a local run's (see PlainRenderer).
      ...(options.json ? {} : { showOpenLineAfterMs: SHOW_OPEN_LINE_AFTER_MS }),
      // Under GitHub Actions: a task's line comes whole, for its runner to read (see PlainRenderer), in plain lines as
      // written, in JSON as an `output` record's text (see JsonRenderer.wholeLines).
      wholeLines: colours.bareCommands,
      // Under GitHub Actions, a line's states no record holds: their `::add-mask::` goes to stderr all the same (see JsonRenderer.droppedStates).
      ...(options.json && colours.bareCommands ? { droppedStates: (taskId: string, stream: StreamName, bytes: Buffer) => writeCommands(process.stderr, maskCommandsInStates(bytes)) } : {}),
      line: (taskId, stream, text, attempt) =>
        options.json ? printOutput(taskId, stream, text, attempt) : out.write(`${runId}/${taskId} | ${terminal ? terminalColours.safe(`${runId}/${taskId}`, text) : text}\n`),
      whenDrained: () => out.whenDrained(),
      // On a terminal, a long line a carriage return rewrites shows as the terminal would (see OutputSink.lineState).
      ...(terminal ? { lineState: (text: string) => rewrittenState(text) } : {}),
      // An error or note may quote the workflow (a cwd's folder): through oneLine, as a local run's plain lines.
      // One about a task (what it left running) names it, as the worker's other records of a task do: in JSON by
      // its fields, in a plain line by `run/task`, as its ok and FAILED lines (a worker serves many runs, whose
      // tasks may share an id: "build: stopped 1 process" said not which run's).
      note: (text, taskId) =>
        taskId === undefined
          ? printNote(text, oneLine(text))
          : printNote(text, text.startsWith(`${taskId}: `) ? `${runId}/${oneLine(text)}` : oneLine(text), { runId, id: taskId }),
    };
    // Under GitHub Actions, a task's `::add-mask::` goes to stderr too, where the runner reads it as a command, before
    // the record (see maskCommands).
    const printOutput = (taskId: string, stream: StreamName, text: string, attempt: number | undefined): void => {
      if (colours.bareCommands) writeCommands(process.stderr, maskCommandsInText(text));
      print({ event: "output", runId, id: taskId, attempt, stream, text }, "");
    };
    // A loud task's lines go through as bytes (see LineSplitter), as plain lines or JSON records.
    sink.lines = options.json
      ? (taskId, stream, bytes, count, ends, attempt) => {
          if (colours.bareCommands) {
            writeCommands(process.stderr, maskCommands(bytes, count, ends));
            // A line holding `##[`: its record through print, where it is written so that the runner reads no command in it.
            if (holdsLegacyCommand(bytes)) return eachLineText(bytes, count, ends, (text) => print({ event: "output", runId, id: taskId, attempt, stream, text }, ""));
          }
          out.writeJsonLines(jsonRecordHead({ ts: new Date().toISOString(), event: "output", runId, id: taskId, attempt, stream }), bytes, count, ends);
        }
      : (taskId, stream, bytes, count, ends) => {
          if (terminal && (terminalColours.has(`${runId}/${taskId}`) || hasControlBytes(bytes))) {
            eachLineText(bytes, count, ends, (text) => sink.line(taskId, stream, text));
            return;
          }
          const key = `${runId}/${taskId}`;
          colours.write(out, key, Buffer.from(`${key} | `), bytes, count, ends);
        };
    // As for a local run: one pipe for stdout and stderr unless JSON labels each line's stream.
    const logDir = path.join(options.logRoot, runId);
    return createShellHandler({
      runId,
      logDir,
      killGraceMs: options.killGraceMs,
      sink,
      hiddenEnv: [...STORE_SECRETS, ...poolEnv],
      mergeOutput: !options.json,
      shutdownSignals,
      // Made again after a task deleted it: `prune --logs` must see it is in use.
      onLogDirRemade: () => renewLogFolderHold(logDir),
      // Its command ended by itself: the note that the time to finish has passed does not count it among those stopped.
      onCommandEnded: (signal) => worker.commandEnded(signal),
    });
  }, MARKER_LINGER_MS);
  // Leased tasks beyond what the open-file limit allows would fail to start, and use up their attempts.
  const fitted = options.fitted ?? fitConcurrencyToOpenFiles(options.concurrency, !options.json);
  const leaseSource = options.runId === undefined ? "--lease" : "the lease run --store takes";
  const dbErrors = new DbErrorLines();
  const worker = new PostgresWorker({
    store,
    concurrency: fitted.concurrency,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.runId === undefined ? {} : { runId: options.runId }),
    ...(options.workerId === undefined ? {} : { workerId: options.workerId }),
    // A stopped task's processes are gone by SIGKILL after the kill grace: its lease is not given back before.
    abortGraceMs: options.killGraceMs + ABORT_MARGIN_MS,
    handler: async (task: LeasedTask, context) => {
      // With its retryOn, the handler decides and words a failure as a local run's does: "killed by SIGKILL (137 is not in retryOn: not retried)".
      const shellTask: ShellTask = { id: task.key, run: task.run, env: task.env, cwd: task.cwd, ...(task.retryOn.length === 0 ? {} : { retryOn: task.retryOn }) };
      // `taskq prune --logs` leaves the run's folder alone while this worker runs one of its
      // tasks (and for a second after, when the next one is likely to come).
      const releaseLogDir = holdLogFolder(path.join(options.logRoot, task.runId), MARKER_LINGER_MS);
      const { handler, release } = handlers.hold(task.runId);
      try {
        return await handler(task.timeoutMs === null ? shellTask : { ...shellTask, timeoutMs: task.timeoutMs }, context);
      } finally {
        release();
        releaseLogDir();
      }
    },
    onEvent: (event) => {
      // Under GitHub Actions, a group the attempt left open ends with it, before the line that says how it ended (see TaskColours.endGroupOf):
      // recorded, given back by a stop, or its record given up on.
      if (event.type === "finished" || event.type === "released" || event.type === "record-lost") colours.endGroupOf(out, `${event.task.runId}/${event.task.key}`);
      options.onEvent?.(event);
      // A new process starts with a terminal's colours as its own; an ended one's colours end with it.
      if (event.type === "started" || event.type === "finished") {
        colours.forget(`${event.task.runId}/${event.task.key}`);
        terminalColours.forget(`${event.task.runId}/${event.task.key}`);
      }
      if (event.type === "finished" && event.result === false && event.outcome.kind === "success") endLostLog(event.task, event.outcome.exitCode ?? 0, event.taskNow, worker.workerId);
      if (event.type === "orphans-recovered") for (const swept of event.tasks) endDeadWorkersLog(swept, worker.workerId);
      if (event.type === "store-unusable") unusable = event.error;
      if (event.type === "database-gone") {
        databaseGone = event.error;
        // Said now, as the tasks are stopped: the error the worker ends with says it again, after what became of them.
        const message = `${goneWords(event.error)}: no task can be leased or recorded there any more; stopping the running tasks now (SIGTERM, then SIGKILL ${formatSetMs(options.killGraceMs)} later)`;
        return printNote(message, oneLine(message));
      }
      if (event.type === "stopping") {
        // A lease taken over stops the worker by itself: then this process stops it, as for a signal.
        if (event.reason === "lease-lost") {
          lostLease = true;
          // Said as a signal's stop is: the other running tasks get the same time to finish, and the user learns why.
          const message = `a task's lease was taken from this worker (it stalled past the lease: the task is another worker's, or a sweep ended it): no new task is leased; running tasks have ${formatSetMs(options.shutdownTimeoutMs)} to finish`;
          printNote(message);
        }
        return void onHalted();
      }
      if (event.type === "deadline-passed") {
        // As a local run says it: the time to finish that the signal's note gave has passed.
        const tasks = event.running === 1 ? "the running task" : `the ${event.running} running tasks`;
        const message = `the ${formatSetMs(options.shutdownTimeoutMs)} to finish have passed: stopping ${tasks} (SIGTERM, then SIGKILL ${formatSetMs(options.killGraceMs)} later)`;
        return printNote(message);
      }
      // `run --store` stops its worker once the run has ended: no one asked, so nothing to tell.
      if (event.type === "stopped" && event.reason === "requested" && interrupted === undefined) return;
      if (event.type === "stopped") return void (stopped = event);
      // `run --store` sweeps every run's expired leases, as any worker does, but tells of its own run's alone:
      // a CI job's log does not name other runs, their tasks and their workers.
      if (event.type === "orphans-recovered" && options.runId !== undefined) {
        const own = event.tasks.filter((swept) => swept.runId === options.runId);
        if (own.length > 0) describeEvent({ ...event, count: own.length, tasks: own }, print, leaseSource, dbErrors, worker.workerId);
        return;
      }
      describeEvent(event, print, leaseSource, dbErrors, worker.workerId);
    },
  });
  /**
   * A success whose record the database refused (its lease had run out, and another worker's sweep took the task)
   * left its log with no closing line, as a success does: its log says so now, as every attempt's that did not
   * succeed ends with how it ended. (A failed or stopped one's log says already how it ended.)
   */
  const endLostLog = ({ runId, key, attempt }: LeasedTask, exitCode: number, taskNow: TaskNow | null | undefined, ownId: string): void => {
    endLog(runId, key, attemptLine(attempt, `exited with code ${exitCode} but was not recorded: its lease had run out, and ${whatBecameOf(taskNow, ownId)}`), false);
  };
  /**
   * A task swept from a worker of this machine whose process is gone (SIGKILLed, crashed): nothing else ends
   * its attempt's log, which this worker shares where they have one --log-dir. Said before the next attempt
   * may start there. (A worker that only stalled ends its log itself once it runs again; one on another
   * machine has its log there; a log missing here is another folder's, left alone.)
   */
  const endDeadWorkersLog = (swept: SweptTask, ownId: string): void => {
    const dead = swept.workerId === null ? undefined : workerHostAndPid(swept.workerId);
    if (dead === undefined || dead.host !== hostname() || dead.pid === process.pid || processExists(dead.pid)) return;
    const line = attemptLine(swept.attempt, `lost: its worker ${swept.workerId} is gone and its lease ran out: ${SWEPT_WORDS[swept.state](swept.attempt, swept.maxAttempts, swept.runStopped)}, by worker ${ownId}`);
    endLog(swept.runId, swept.key, line, true);
  };
  /** Appends an attempt's closing line to a task's log under this worker's --log-dir; one that fails is noted (unless `ifThere`: a log not there is another folder's). */
  const endLog = (runId: string, key: string, line: string, ifThere: boolean): void => {
    const logPath = logPathsIn(path.join(options.logRoot, runId))(key);
    try {
      appendToLogFile(logPath, line);
    } catch (error) {
      if (ifThere && (error as NodeJS.ErrnoException).code === "ENOENT") return;
      const message = `cannot write log file ${logPath}: ${error instanceof Error ? error.message : String(error)}`;
      printNote(message, oneLine(message), { runId, id: key });
    }
  };
  // The guard starts with the worker, which lives long: its spawn (7-8 ms on a slow VM)
  // would otherwise hold back the worker's first long task, its heartbeats and its other tasks.
  // Should the worker be SIGKILLed, the guard stops its tasks within a third of the lease at most: a lease renewed
  // a third of it ago has two thirds left, so a task that takes its time over SIGTERM (or ignores it) is gone before
  // another worker may take the task over (a kill grace of 10s with --lease 3s ran both attempts at once for 5 s).
  // It watches the tasks' leases too: one whose worker is stopped (SIGSTOP) as it is about to run out is stopped (see guardLease).
  startGroupGuard(Math.min(options.killGraceMs, Math.floor((options.leaseMs ?? DEFAULT_LEASE_MS) / 3)), options.leaseMs ?? DEFAULT_LEASE_MS);
  const metricsHost = options.metricsHost ?? "127.0.0.1";
  options.metrics?.serve(worker.metrics.registry);
  const server = options.metrics?.server;
  // The schema named too: a worker given a mistyped one serves an empty store of its own, idle, while the runs wait in the right one.
  const schema = store.schema;
  // The log folder by its full path: a relative --log-dir (the default .taskq/logs) says nothing of where it is in a journal.
  const logDir = fullPath(options.logRoot);
  print(
    { event: "worker", workerId: worker.workerId, host: hostname(), pid: process.pid, store: store.description, schema, concurrency: fitted.concurrency, logDir },
    `worker ${worker.workerId}: ${store.description} (schema ${JSON.stringify(schema)}), concurrency ${fitted.concurrency}, logs in ${logDir}`,
  );
  // (Not for `run --store`, whose run went to that schema: it serves only that run.)
  const made = options.runId === undefined ? madeStoreNote(store, "this worker made an empty one; it runs only what is submitted to that schema (TASKQ_STORE_SCHEMA or --store-schema, as submit was given)") : undefined;
  if (made !== undefined) printNote(made);
  if (options.storeNote !== undefined) printNote(options.storeNote.message, options.storeNote.message, options.storeNote);
  if (fitted.note !== undefined) printNote(fitted.note);
  const pidOne = pidOneNote();
  if (pidOne !== undefined) printNote(pidOne);
  if (options.leaseMs !== undefined && options.leaseMs < SHORT_LEASE_MS) {
    const note =
      `--lease ${formatMs(options.leaseMs)} is short: on a busy machine (CPU saturated) a renewal, due every ${formatDuration(Math.floor(options.leaseMs / 3))}, ` +
      `may not get through before the lease runs out, and a healthy task then loses it (run again, or a dead letter); a longer lease (the default 30s) is safer`;
    printNote(note);
  }
  if (server !== undefined) {
    // With --metrics-port 0 the system picks the port: this line is the only way to learn it.
    const url = `http://${metricsHost.includes(":") ? `[${metricsHost}]` : metricsHost}:${metricsPort(server)}/metrics`;
    print({ event: "metrics", url }, `metrics ${url}`);
  }

  // One stop; a later call brings its deadline forward (never back), even while it waits on the database.
  const stop = (deadlineMs: number): Promise<void> => worker.stop({ deadlineMs });
  /** Set while what the tasks left running is being stopped, once the worker has stopped: a signal then kills it at once. */
  let stoppingLeftovers: AbortController | undefined;
  /** Set by a second signal ("killing every task now"): what the tasks left running then gets no grace either. */
  let killedAtOnce = false;
  const killLeftoversNow = (signal: NodeJS.Signals): boolean => {
    if (stoppingLeftovers === undefined) return false;
    // Said by stopLeftovers' onKillNow, once it finds something left to kill: what it stopped may be gone already.
    if (!stoppingLeftovers.signal.aborted) stoppingLeftovers.abort(signal);
    return true;
  };
  const removeSignalHandlers = onShutdownSignals({
    graceful: (signal) => {
      if (killLeftoversNow(signal)) return;
      interrupted = signal;
      interruptedAt = monotonicMs();
      const message = `${signal} received: no new task is leased; running tasks have ${formatSetMs(options.shutdownTimeoutMs)} to finish${options.outerGraceMs === undefined ? "" : `; shortened: ${outerGraceWords(options.outerGraceMs)}`}`;
      printNote(message);
      if (options.endRun !== undefined) {
        worker.cancelWhatIsGivenBack();
        options.endRun();
      }
      void stop(options.shutdownTimeoutMs);
    },
    immediate: (signal, first) => {
      if (killLeftoversNow(signal)) return;
      // A third signal stops the wait for the records of tasks that ended, which the database does not take (up to the lease).
      if (killedAtOnce && worker.giveUpRecords()) printNote(`${secondSignal(signal, first)}: giving up the records of the tasks that ended, which the database does not take; stopping now`);
      // Said once: a third signal (a storm of them) kills again, and says nothing new.
      if (!killedAtOnce) printNote(secondSignal(signal, first), `${secondSignal(signal, first)}: killing every task now`);
      killedAtOnce = true;
      // Abort first, so each attempt ends as a shutdown (lease given back, attempt not counted), not as a failure.
      // SIGKILLed, a task's processes are gone at once: its lease is not held back for the kill grace.
      worker.abortRunning(ABORT_MARGIN_MS);
      killAllProcessGroups("SIGKILL");
      void stop(0);
    },
  }, options.earlySignals?.copies);
  // As a signal while the worker starts: it leases nothing, and stops.
  for (const signal of options.earlySignals?.end() ?? []) removeSignalHandlers.deliver(signal);
  try {
    keepHeapSmall();
    await worker.start();
    await Promise.race([halted, options.until?.(worker) ?? new Promise<never>(() => undefined)]);
    await stop(options.shutdownTimeoutMs);
    // Daemons its tasks started (setsid) stop with the worker, given the grace a task gets; a signal meanwhile kills them at
    // once, and so does one before (a second signal: a supervisor's SIGKILL may follow within seconds).
    // After one signal, less grace (see leftoversGraceMs).
    const leftovers = { ...(interrupted === undefined ? {} : { interrupted }), interruptedAt, killedAtOnce, shutdownTimeoutMs: options.shutdownTimeoutMs, killGraceMs: options.killGraceMs };
    const graceMs = leftoversGraceMs(leftovers);
    stoppingLeftovers = new AbortController();
    if (killedAtOnce) stoppingLeftovers.abort();
    await stopLeftovers(graceMs, {
      signal: stoppingLeftovers.signal,
      onFound: (groups) => {
        const message = leftoversNote(leftovers, graceMs, groups);
        printNote(message);
      },
      onKillNow: () => {
        const signal = signalOf(stoppingLeftovers);
        printNote(`${signal} received: killing what the tasks left running now`, `${signal} received: the worker has stopped; killing what its tasks left running now`);
      },
    });
  } finally {
    killAllProcessGroups("SIGKILL");
    options.takeSignals?.();
    removeSignalHandlers();
    server?.close();
    // A group still open (a process a task left running opened it) would fold the worker's last lines away.
    colours.endGroupOf(out);
    if (stopped !== undefined) describeEvent(stopped, print, leaseSource, dbErrors, worker.workerId);
    out.flush();
  }
  const { workerId } = worker;
  if (interrupted !== undefined) return { exitCode: signalExitCode(interrupted), interrupted, workerId };
  if (unusable !== undefined) throw unusableStore(unusable, store.schema);
  if (databaseGone !== undefined) {
    const message = `${goneWords(databaseGone)}: the worker stopped (${store.description}); start it again once the database is back`;
    throw new TaskqError("STORE_NOT_FOUND", message, { cause: databaseGone, exitCode: 1 });
  }
  return { exitCode: lostLease ? 1 : 0, workerId };
}

/**
 * Why a stopping worker's record of an ended task is not taken yet, in words: a lock another session holds (a psql session's
 * row lock), also after a try that failed; else "does not answer" once a try has failed (`lockWait` absent), an answer not come yet before.
 */
function recordWhy(refusedWith: string | undefined, lockWait: boolean | undefined): string {
  if (refusedWith !== undefined) return `the database refuses it (${oneLine(refusedWith)})`;
  if (lockWait === undefined) return "the database does not answer";
  return lockWait ? "the database was reached, but a statement of this worker's waits on a lock another session holds" : "the database has not answered yet";
}

/**
 * What becomes of a lease a stopped worker could not give back (see sweepExpiredLeases): "lease
 * expired" is recorded as the attempt's error, and the sweep of any worker running then (or of the
 * next one started) takes the task.
 */
function leaseFate(withinMs: number, one: boolean, leaseSource: string, mayHoldMs?: number): string {
  const seconds = (ms: number): string => formatMs(Math.ceil(ms / 1000) * 1000);
  // A renewal whose reply was lost may have been taken: the database then holds the lease longer than this clock says,
  // up to a lease from when the loss was seen. "Run out already" alone was said of a lease the database may still hold.
  const doubt = mayHoldMs === undefined ? "" : `, unless a renewal whose reply was lost went through: then within ${seconds(mayHoldMs)}`;
  // The time left on this machine's clock, in whole seconds up: a stop that waited on a record may have taken most of the lease, or all of it.
  const when =
    withinMs <= 0
      ? `${one ? "It has" : "Each has"} run out already${mayHoldMs === undefined ? "" : " on this worker's clock"}${doubt} (${leaseSource}); ${mayHoldMs === undefined ? "a worker" : "then a worker"}`
      : `${one ? "It runs" : "Each runs"} out within ${seconds(withinMs)}${doubt} (${leaseSource}); then a worker`;
  return `${when} (another one, or the next one started) queues the task again, this attempt counted (or ends it: failed when it has no attempts left, cancelled when a cancel was asked for)`;
}

/** How an attempt ended, in words: "it succeeded (exit 0)", "it failed: exit code 2", "it was cancelled". */
function endedWords(outcome: Outcome): string {
  if (outcome.kind === "success") return `it succeeded (exit ${outcome.exitCode ?? 0})`;
  if (outcome.kind === "cancelled") return "it was cancelled";
  return `it failed (${outcome.error})`;
}

/** How an attempt ended, as JSON fields: of a failed one, its signal and timeout too, as its `finished` record gives them. */
function endedFields(outcome: Outcome): Record<string, unknown> {
  if (outcome.kind === "success") return { ended: "succeeded", exitCode: outcome.exitCode ?? 0 };
  if (outcome.kind === "cancelled") return { ended: "cancelled" };
  return {
    ended: "failed",
    error: outcome.error,
    ...(outcome.exitCode === undefined || outcome.exitCode === null ? {} : { exitCode: outcome.exitCode }),
    signal: outcome.signal ?? null,
    timedOut: outcome.timedOut === true,
  };
}

/**
 * Which attempt ended, as a local run's lines say it: " attempt 1/3 failed" before a retry,
 * " after 3 attempts" for a task that ended with more than one allowed; nothing for a stale or cancelled end.
 */
function attemptWords(state: string, attempt: number, maxAttempts: number): string {
  if (state === "queued") return ` attempt ${attempt}/${maxAttempts} failed`;
  if ((state === "succeeded" || state === "failed") && maxAttempts > 1) return ` after ${attempt} attempt${attempt === 1 ? "" : "s"}`;
  return "";
}

/** Why a lease was lost, in the LOST line. */
const LEASE_LOST_WORDS: Record<LeaseLost, string> = {
  taken: "lease taken over by another worker",
  stalled: "lease ran out while this worker was stalled (no renewal could be sent)",
  locked: "lease ran out while its task's row was locked by another session",
  queued: "lease ran out while its renewal waited behind other tasks' renewals, refused rows locked by another session",
  unreachable: "lease could not be renewed",
};

/** What a lease given back became (see ReleaseEnd), in a `release` line's words. */
const RELEASED_WORDS: Record<ReleaseEnd, string> = {
  queued: "lease given back for another worker",
  requested: "cancelled, as requested",
  "run-stopped": "cancelled, as its run was stopped",
};

/** What a sweep made of a task whose lease expired, in its `sweep` line. */
const SWEPT_WORDS: Record<SweptTask["state"], (attempt: number, maxAttempts: number, runStopped?: boolean) => string> = {
  queued: (attempt, maxAttempts) => `queued again (attempt ${attempt + 1}/${maxAttempts} next)`,
  failed: (attempt, maxAttempts) => `FAILED (no attempts left: ${attempt}/${maxAttempts})`,
  cancelled: (_attempt, _maxAttempts, runStopped) => RELEASED_WORDS[runStopped === true ? "run-stopped" : "requested"],
};

/** The database gone, in words: `the store's database no longer exists (database "ci" does not exist: dropped or renamed)`. */
function goneWords(error: unknown): string {
  return `the store's database no longer exists (${storeErrorWords(error)}: dropped or renamed while the worker ran)`;
}

/**
 * An error's message, without the store's name of the statement that failed ("completeAndLease failed: "; see
 * toStoreError), which says nothing to the user: the worker's lines name what failed in their own words.
 */
function storeErrorWords(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return error instanceof TaskqError ? text.replace(STORE_OPERATION, "") : text;
}

/**
 * A worker that could not lease once, for a reason no retry fixes: an error that says what is wrong and that it
 * stopped, exit 1, where it used to try every few seconds for ever (and say so every 30 s), idle, as a supervisor
 * restarting it would never learn.
 */
function unusableStore(error: unknown, schema: string): TaskqError {
  const message = error instanceof Error ? error.message : String(error);
  return new TaskqError(
    "STORE_UNUSABLE",
    `the worker cannot lease from the store in schema ${JSON.stringify(schema)}: ${message}; it stops rather than try again, as no retry fixes that`,
    { cause: error, exitCode: 1 },
  );
}

/**
 * What became of a task whose record this worker could not make, its lease having run out, as the database said
 * (see PostgresStore.taskNow): another worker took it over, or a sweep ended it (failed, cancelled: then nothing
 * records that the attempt's work was done, and a redrive runs it again), or it is gone.
 */
export function whatBecameOf(taskNow: TaskNow | null | undefined, ownId: string): string {
  if (taskNow === undefined) return "the task was taken from this worker";
  if (taskNow === null) return "the task is no longer in the store (its run was pruned)";
  const { state, workerId, error } = taskNow;
  const why = error === null ? "" : `: ${oneLine(error)}`;
  // A sweep keeps the worker it took the task from: that one is this worker. Its end is said in its own words (a
  // sweep's "lease expired", or a cancel a user asked for once the sweep had queued it again), not laid to the sweep.
  if (workerId === ownId || workerId === null) {
    if (state === "failed") return `the task ended failed${why}; a redrive runs it again`;
    if (state === "cancelled") return `the task was cancelled${why}`;
    if (state === "queued" || state === "blocked") return "a sweep queued the task again";
    // This worker leased it again after its stall (at -j 2 or more): a later attempt, not this one.
    if (workerId === ownId) return state === "running" ? "this worker runs it again, as a later attempt" : `this worker ran it again, as a later attempt (${state})`;
    return "the task was taken from this worker";
  }
  return `worker ${workerId} took the task over`;
}

/**
 * `leaseSource`: what sets the lease's length, for the user to look up: `worker`'s --lease; `run --store` has
 * no such flag.
 */
function describeEvent(event: WorkerEvent, print: (record: Record<string, unknown>, text: string, stamp?: string) => void, leaseSource: string, dbErrors: DbErrorLines, ownId: string): void {
  switch (event.type) {
    case "started": {
      const { runId, key, attempt, maxAttempts } = event.task;
      print({ event: "started", runId, id: key, attempt, maxAttempts }, `start   ${runId}/${key} (attempt ${attempt}/${maxAttempts})`);
      return;
    }
    case "finished": {
      const { runId, key, attempt, maxAttempts } = event.task;
      const state = event.result === false ? "stale" : event.result.state;
      // A cancel in the words it was recorded with: one a stopped run asked for is its shutdown's, as status says it.
      const cancelReason = event.result === false ? undefined : event.result.cancelReason;
      const error = event.outcome.kind === "failure" ? event.outcome.error : event.outcome.kind === "cancelled" ? (cancelReason ?? event.outcome.reason ?? "cancelled") : undefined;
      const words: Record<string, string> = { succeeded: "ok     ", queued: "retry  ", failed: "FAILED ", cancelled: "cancel ", stale: "stale  " };
      // A cancel that took taskq's SIGKILL says so, as its log, status and a `released` record say it.
      const killed = event.outcome.kind === "cancelled" ? event.outcome.killed : undefined;
      // The database refused the record: the lease token owns nothing, as another worker (or a sweep) has the task now;
      // how the attempt ended is said, a success above all: nothing else records that its work was done.
      const ended = event.outcome.kind === "success" ? `exited with code ${event.outcome.exitCode ?? 0}` : `${error ?? "stopped"}${killed === undefined ? "" : ` (${killed})`}`;
      const detail =
        event.result === false
          ? `: ${oneLine(ended)}, not recorded: its lease had run out, and ${whatBecameOf(event.taskNow, ownId)}`
          : error === undefined
            ? ""
            : `: ${oneLine(ended)}`;
      // A failed attempt's exit code, signal and timeout as fields, as a local run's `failed` event gives them: not only in the words of `error`.
      const failure =
        event.outcome.kind === "failure" ? { exitCode: event.outcome.exitCode ?? null, signal: event.outcome.signal ?? null, timedOut: event.outcome.timedOut === true } : {};
      // A retry's backoff, as a local run says it: when the next attempt is due (unknown for an end a lost reply had recorded).
      const delayMs = event.result === false ? undefined : event.result.retryDelayMs;
      // Not recorded: a success's exit code, and what became of the task (taken over, ended by a sweep), as fields too.
      const staleFields =
        event.result !== false
          ? {}
          : { ...(event.outcome.kind === "success" ? { exitCode: event.outcome.exitCode ?? 0 } : {}), ...(event.taskNow === undefined ? {} : { taskNow: event.taskNow }) };
      const next = delayMs === undefined ? "" : `; next attempt in ${formatDuration(delayMs)}`;
      print(
        {
          event: "finished",
          runId,
          id: key,
          attempt,
          maxAttempts,
          state,
          ...(error === undefined ? {} : { error }),
          ...(killed === undefined ? {} : { killed }),
          ...failure,
          ...(delayMs === undefined ? {} : { delayMs }),
          ...staleFields,
        },
        `${words[state] ?? state} ${runId}/${key}${attemptWords(state, attempt, maxAttempts)}${detail}${next}`,
      );
      return;
    }
    case "released":
      // How taskq's SIGKILL ended the attempt, where it did (a second signal), as the task's log says it.
      print(
        {
          event: "released",
          runId: event.task.runId,
          id: event.task.key,
          ...(event.killed === undefined ? {} : { killed: event.killed }),
          ...(event.cancelled === undefined ? {} : { cancelled: true, ...(event.cancelled === "run-stopped" ? { runStopped: true } : {}) }),
        },
        `release ${event.task.runId}/${event.task.key}: ${RELEASED_WORDS[event.cancelled ?? "queued"]}${event.killed === undefined ? "" : ` (${event.killed})`}`,
      );
      return;
    case "late-lease": {
      const late = `its lease ran out before it could start here (the round trip that leased it took ${formatDuration(Math.round(event.roundTripMs))}; the lease is ${formatMs(event.leaseMs)})`;
      print(
        { event: "late-lease", runId: event.task.runId, id: event.task.key, roundTripMs: Math.round(event.roundTripMs), leaseMs: event.leaseMs, released: event.released },
        event.released
          ? `release ${event.task.runId}/${event.task.key}: ${late}; not started, given back, the attempt not counted`
          : `skip    ${event.task.runId}/${event.task.key}: ${late}, and it was no longer this worker's (taken over, or ended); not started`,
      );
      return;
    }
    case "stray-released":
      print({ event: "stray-released", runId: event.runId, id: event.key }, `release ${event.runId}/${event.key}: leased by a round trip whose reply was lost; given back, the attempt not counted`);
      return;
    case "lease-lost":
      print({ event: "lease-lost", runId: event.task.runId, id: event.task.key, why: event.why }, `LOST    ${event.task.runId}/${event.task.key}: ${LEASE_LOST_WORDS[event.why]}; killing the task`);
      return;
    case "cancel-requested":
      print(
        { event: "cancel-requested", runId: event.task.runId, id: event.task.key, ...(event.runStopped ? { runStopped: true } : {}) },
        `cancel  ${event.task.runId}/${event.task.key}: ${event.runStopped ? "its run was stopped" : "cancel requested"}; killing the task`,
      );
      return;
    case "orphans-recovered": {
      const tasks = event.tasks.map(({ runId, key, attempt, maxAttempts, state, error, runStopped }) => ({ runId, id: key, attempt, maxAttempts, state, error, ...(runStopped ? { runStopped } : {}) }));
      // One line per task: which one a dead or stalled worker left, and what became of it.
      const lines = event.tasks.map(({ runId, key, attempt, maxAttempts, state, error, runStopped }) => `sweep   ${runId}/${key}: ${oneLine(error)}: ${SWEPT_WORDS[state](attempt, maxAttempts, runStopped)}`);
      const stamp = clock();
      print({ event: "orphans-recovered", count: event.count, tasks }, lines.join(`\n${stamp} `), stamp);
      return;
    }
    case "db-error": {
      // The line names the operation in the worker's words ("lease failed: ..."), once.
      const message = storeErrorWords(event.error);
      // The same error again, try after try, is said once, and again now and then (see DbErrorLines).
      const saying = dbErrors.failed(event.operation, message, event.retrying);
      if (!saying.say) return;
      const again = saying.again === undefined ? "" : ` (still failing after ${formatDuration(saying.again.failingForMs)}, ${saying.again.tries} tries)`;
      // A try given up on says nothing more here: the worker's last words tell what becomes of the lease ("leases-left").
      // A give-back of what a lost reply may have leased says what it is for: while it fails, the worker tries no lease.
      const what = event.strays === true ? ` (giving back what a round trip whose reply was lost may have leased, before leasing again)` : "";
      print(
        { event: "db-error", operation: event.operation, message, retrying: event.retrying, ...(event.strays === true ? { strays: true } : {}), ...(saying.again ?? {}) },
        `db      ${event.operation} failed${what}: ${message}${event.retrying ? "; retrying" : ""}${again}`,
      );
      return;
    }
    case "db-recovered": {
      // Said only after repeats of an error that were not each shown: its one line would otherwise read as still going on.
      const recovered = dbErrors.recovered(event.operation);
      if (recovered === undefined) return;
      print(
        { event: "db-recovered", operation: event.operation, ...recovered },
        `db      ${event.operation}: the database answers again (it failed for ${formatDuration(recovered.failedForMs)}, ${recovered.tries} tries)`,
      );
      return;
    }
    case "recording": {
      const { runId, key } = event.task;
      print(
        { event: "recording", runId, id: key, ...endedFields(event.outcome), withinMs: event.withinMs, ...(event.refusedWith === undefined ? {} : { refusedWith: event.refusedWith }), ...(event.lockWait === undefined ? {} : { lockWait: event.lockWait }) },
        // Where the server answered (too many connections, the database not accepting connections): what it answered, not that it is silent.
        `record  ${runId}/${key}: ${endedWords(event.outcome)}; ${recordWhy(event.refusedWith, event.lockWait)}: trying to record it until its lease runs out, within ${formatDuration(event.withinMs)}`,
      );
      return;
    }
    case "record-lost": {
      const { runId, key } = event.task;
      const message = storeErrorWords(event.error);
      // Its database gone, no sweep comes: the run went with it.
      // Its schema or tables gone, no sweep comes either until they are back: a sweep is a statement on those same tables.
      // A function of the store's gone (the message names it, and says the store is no longer whole) leaves the tables:
      // the sweep, which calls none of them, counts the attempt as lost as for any record lost.
      const fate =
        event.databaseGone === true
          ? "the store's database no longer exists"
          : isStoreMissing(event.error)
            ? "the store's tables are not there, so no sweep can count the attempt as lost until they are back"
            : "once its lease runs out, a sweep counts the attempt as lost: the task runs again if it has attempts left, else it fails";
      print(
        { event: "record-lost", runId, id: key, ...endedFields(event.outcome), message, ...(event.databaseGone === true ? { databaseGone: true } : {}) },
        `lost    ${runId}/${key}: ${endedWords(event.outcome)} but could not be recorded (${oneLine(message)}); ${fate}`,
      );
      return;
    }
    case "leases-left": {
      const left = event.tasks.map((task, i) => ({ task, outcome: event.outcomes[i] ?? null }));
      const tasks = left.map(({ task, outcome }) => ({ runId: task.runId, id: task.key, ...(outcome === null ? {} : endedFields(outcome)) }));
      const named = [
        ...left.map(({ task, outcome }) => `${task.runId}/${task.key}${outcome === null ? "" : ` (${endedWords(outcome)} but could not be recorded)`}`),
        // Not known to have leased any: the round trip may have found nothing to lease, or not reached the database.
        ...(event.strays ? [`${tasks.length === 0 ? "" : "and "}any tasks a round trip whose reply was lost may have leased`] : []),
      ];
      const one = tasks.length === 1 && !event.strays;
      const leases = one ? "its lease was" : tasks.length === 0 ? "any such leases were" : "their leases were";
      // Its database gone, no lease runs out and no sweep comes: the runs went with it.
      if (event.databaseGone === true) {
        print(
          { event: "leases-left", tasks, strays: event.strays, leaseMs: event.leaseMs, databaseGone: true },
          `left    ${named.join(", ")}: not recorded, as the store's database no longer exists, and the ${new Set(tasks.map((task) => task.runId)).size > 1 ? "runs" : "run"} with it`,
        );
        return;
      }
      // Reached and slow is not cut off: a lock another session holds (a migration's, a psql session's) is the thing to look at then.
      const why =
        event.lockWait === undefined
          ? event.refusedWith === undefined
            ? "the database could not be reached"
            : `the database refused the worker: ${oneLine(event.refusedWith)}`
          : event.lockWait
            ? "the database was reached, but a statement of this worker's waits on a lock another session holds"
            : "the database was reached, but did not answer in time";
      print(
        { event: "leases-left", tasks, strays: event.strays, leaseMs: event.leaseMs, withinMs: event.withinMs, ...(event.mayHoldMs === undefined ? {} : { mayHoldMs: event.mayHoldMs }), ...(event.lockWait === undefined ? {} : { lockWait: event.lockWait }), ...(event.refusedWith === undefined ? {} : { refusedWith: event.refusedWith }) },
        `left    ${named.join(", ")}: ${leases} not given back (${why}). ${leaseFate(event.withinMs, one, leaseSource, event.mayHoldMs)}`,
      );
      return;
    }
    case "deadline-passed": // told by the worker's onEvent, which knows the times
    case "store-unusable": // said by the error the worker ends with
    case "database-gone": // said by the worker's onEvent, and by the error it ends with
    case "stopping":
      return; // the signal's note or the LOST line said why; "stopped" comes once the tasks are ended or given back
    case "stopped":
      print({ event: "stopped", reason: event.reason }, `stopped (${event.reason})`);
      return;
  }
}
