import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { TaskqError } from "../errors.js";
import { fitConcurrencyToOpenFiles } from "../handlers/index.js";
import type { Workflow } from "../loaders/index.js";
import type { CancelResult, PostgresStore, RunStatus, WorkerEvent } from "../store/postgres/index.js";
import { generateRunId } from "../store/postgres/submit.js";
import { RunNotFoundError } from "../store/postgres/store-error.js";
import { endedNote, notRetriedNotes, printRunSummary, runDeletedError, storingRun, resubmitted, runningNotes, submitNotes, submitRecords, workerFields, type LocalLogs } from "./commands/durable.js";
import { checkLogRoot } from "./log-folders.js";
import { oneLine } from "./one-line.js";
import { clock } from "./render/describe.js";
import type { OutputMode } from "./render/index.js";
import { fileFailFastNote } from "./commands/run.js";
import { endRefusedRun } from "./refused-run.js";
import { openStore, RETRY_DROPPED_MS, type StoreFlags } from "./store-flags.js";
import { EarlySignals, onShutdownSignals, secondSignal, signalExitCode } from "./signals.js";
import { smallThreadPool } from "./thread-pool.js";
import { toJson } from "./to-json.js";
import { runWorker } from "./worker-run.js";

export interface DurableRunOptions extends StoreFlags {
  concurrency: number;
  shutdownTimeoutMs: number;
  killGraceMs: number;
  /** Set where both were shortened to fit the kill grace of the taskq running this one (see outer-grace.ts). */
  outerGraceMs?: number;
  logRoot: string;
  color: boolean;
  json: boolean;
  /** As asked for (`--output`); plain lines unless `json`. */
  output?: OutputMode;
  runId?: string;
  /** The lease this process's worker takes (`--lease`); the worker's default when not given. */
  leaseMs?: number;
  /** The file says `failFast: true`, and no --no-fail-fast leaves that out: noted, with the run's id (see fileFailFastNote). */
  failFastNoted?: boolean;
}

/**
 * `taskq run FILE --store URL`: submits the workflow as a durable run, then
 * works on it in this process (other workers may help) until it ends.
 */
export async function runDurable(workflow: Workflow, options: DurableRunOptions): Promise<number> {
  // The live board draws a local queue's events; a durable run's state is in the database, shared
  // with other workers, and this process prints what its own worker does, as `taskq worker` does.
  if (options.output === "tty") process.stderr.write("note: --output tty: a run with a store prints plain lines, not the live board (that is for local runs)\n");
  // Before the run is submitted: a log folder this process cannot use would fail every task it ran.
  checkLogRoot(options.logRoot);
  // So is an open-file limit too low for one task (OPEN_FILE_LIMIT): the run would stay queued.
  // Fitted before the store opens, as --dry-run plans it (see WorkerRunOptions.fitted).
  const fitted = fitConcurrencyToOpenFiles(options.concurrency, !options.json);
  // And a limit on processes with no room for one task (PROCESS_LIMIT; see thread-pool.ts).
  smallThreadPool();
  // Its summary, and its cancel when stopped, ride out a dropped connection, as `status` and `cancel` do.
  // Chosen here, not by the store, so that a second signal can name the run it may leave behind, and its connections are named after it.
  const submitId = options.runId ?? generateRunId();
  // Heard from here until the worker's own listeners are there, handed on to them then (see WorkerRunOptions.earlySignals):
  // the store's opening and the run's storing listen for themselves, and go as each ends; a signal just after the run
  // was stored, while its worker was set up, found no listener and ended taskq by its default action, in silence, the
  // run left live, its tasks queued for any worker.
  const unheard = new EarlySignals();
  const store = await openStore(options, { retryDroppedMs: RETRY_DROPPED_MS, applicationName: `taskq run ${submitId}`, undoneIfStopped: "nothing was submitted", runsTasks: true, saysNewer: options.json }).catch(
    (error: unknown) => {
      unheard.end();
      throw error;
    },
  );
  try {
    // A signal while the run is submitted waits for it to be stored, then ends it, as one later does (see storingRun).
    // Its state read with it, while a signal still waits: no turn of the event loop is left without a listener.
    // A run submitted again may have ended: it then runs nothing more (said, with no worker started), and its summary follows.
    const {
      value: [submitted, state],
      early,
    } = await storingRun(submitId, store, workflow, "a run it stored is cancelled before any of its tasks runs here", options.json);
    // No worker runs: the signals heard while the run was stored are that stop's, and one now is heard as before.
    if (early !== undefined) unheard.end();
    const { runId } = submitted;
    const tasks = workflow.tasks.length;
    // First, as submit's: the file's settings that a durable run does not keep to.
    const localOnly = options.failFastNoted === true ? [fileFailFastNote(runId)] : [];
    if (options.json) {
      // Every line is a JSON object, these too (as a local run's first event and its notes), as `submit --output json` writes them.
      process.stdout.write(submitRecords(workflow, submitted, store, localOnly, state).map((record) => `${toJson(record)}\n`).join(""));
    } else {
      const notes = [...localOnly, ...submitNotes(workflow.notes, submitted, workflow.file), ...(state === "running" ? [] : [endedNote(runId, state)])];
      // An existing run id adds only the tasks that are new: "submitted: 3 tasks" would say all three were.
      // The schema named, as a worker's first line names it: a worker given another one never runs the run.
      const where = `${store.description} (schema ${JSON.stringify(store.schema)})`;
      const head = submitted.created ? `run ${runId} submitted to ${where}: ${tasks} task${tasks === 1 ? "" : "s"}` : resubmitted(submitted, ` to ${where}`);
      // Timed, the notes in the `note` column, as the worker's lines that follow (and a local run's plain lines).
      // Through oneLine, as submit's: a note may quote the file (a cwd's folder, written out).
      process.stdout.write(`${clock()} ${head}\n${notes.map((note) => `${clock()} note    ${oneLine(note)}\n`).join("")}`);
    }
    workflow.tasks.length = 0;
    // Its exit code as its summary says it, as for a run submitted again while it ran: 0 only once it succeeded.
    if (state !== "running" && early === undefined) {
      // As for a run that ends by itself (below): a signal while its summary is read stops taskq at once, naming taskq
      // status, and one once it is written changes nothing. Unheard, a runner's SIGTERM ended taskq by the signal itself,
      // the summary lost.
      const atSummary = signalAtSummary(runId);
      const heard = onShutdownSignals({ graceful: atSummary.heard, immediate: atSummary.heard }, unheard.copies);
      for (const signal of unheard.end()) heard.deliver(signal);
      const code = await printRunSummary(store, runId, { color: options.color, json: options.json });
      atSummary.written();
      return code;
    }
    let stopped: { exitCode: number; interrupted?: NodeJS.Signals; workerId?: string };
    /**
     * The tasks its worker gave back as it stopped, each with the last lines its attempt wrote: a stop by a signal
     * cancels them as aborted by the shutdown, and the summary gives each its log and those lines, as a local run's does.
     */
    const aborted = new Map<string, string[]>();
    /** The cancel of what waits, made at the first signal (see endRun): waited for before the run's last cancel and its summary. */
    let waitingCancelled: Promise<void> | undefined;
    /** Set once that cancel is made: what a stop cut short later then says may be live is only what runs on other workers. */
    let waitingDone = false;
    /**
     * How the run had ended where that cancel found it ended: its last task had ended just before the signal, this process
     * not yet aware of it (see untilFinished), or the stop ended it first (a task leased as the signal came, given back
     * cancelled). Of the first, the signal stopped nothing, and the run ends as one that ended by itself (see end).
     */
    let endedBeforeSignal: string | undefined;
    /** Of those, how taskq's SIGKILL ended the attempt where it did (a second Ctrl-C): recorded with the cancel, as a local run's summary says it. */
    const killed = new Map<string, string>();
    /** Every attempt of each of the run's tasks its worker ended (see LocalLogs.attemptsEndedHere). */
    const attemptsEndedHere = new Map<string, Set<number>>();
    /**
     * What a signal does once the worker has stopped, while the run ends (stopNow, below); nothing before, when the
     * worker's own listeners are there too. Listened for from before the worker stops listening (see takeSignals): a
     * signal between the two, at a load that let the test see the worker's "stopped" line first, ended taskq in silence.
     */
    let onLateSignal: (signal: NodeJS.Signals) => void = () => undefined;
    let removeLate: (() => void) | undefined;
    const takeSignals = (): void => {
      removeLate = onShutdownSignals({ graceful: (signal) => onLateSignal(signal), immediate: (signal) => onLateSignal(signal) });
    };
    if (early !== undefined) {
      // No worker starts: the run ends below as one stopped later does, the same 3 s given to its cancel and summary.
      writeNote(`${early} received while the run was being submitted: it is cancelled before this process runs any of its tasks`, options.json);
      stopped = { exitCode: signalExitCode(early), interrupted: early };
    } else {
      const taskEnds = nextEvent((event) => event.type === "finished");
      const onEvent = (event: WorkerEvent): void => {
        taskEnds.tell(event);
        // Its log is here: that of a task waiting for its retry when the run is cancelled, where this worker ran its attempt.
        if (event.type === "finished" && event.task.runId === runId) {
          attemptsEndedHere.set(event.task.key, (attemptsEndedHere.get(event.task.key) ?? new Set()).add(event.task.attempt));
        }
        // Given back as the worker stopped: its attempt ran, and the stop cut it short. Not one with no lines at all,
        // never started (a lease the stop came before, or a command the signal kept from spawning).
        if (event.type === "released" && event.task.runId === runId && event.tail !== undefined) {
          aborted.set(event.task.key, event.tail);
          if (event.killed !== undefined) killed.set(event.task.key, event.killed);
        }
      };
      // Stopped by a signal, the run ends with this process, as a local run does: what waits is cancelled at once, before
      // another worker starts it (a deploy after Ctrl-C), while this process's running tasks have their time to finish.
      const endRun = (): void => {
        waitingCancelled = store.cancelRun(runId, undefined, { shutdown: { aborted: [], waitingOnly: true } }).then(
          (result) => {
            waitingDone = true;
            endedBeforeSignal = result.ended;
            tellCancelled(runId, result, options.json, "stopping");
          },
          (error: unknown) => {
            const why = error instanceof Error ? error.message : String(error);
            writeNote(`the tasks of run ${runId} that had not started could not be cancelled at once (${why}): they are once this process's tasks have stopped`, options.json);
          },
        );
      };
      // Its own run's tasks only: another run's would run here with this process's environment (a CI job's secrets).
      try {
        stopped = await runWorker(store, { ...options, runId, fitted, onEvent, takeSignals, endRun, earlySignals: unheard, until: () => untilFinished(store, runId, taskEnds.next) });
      } catch (error) {
        // The worker's error says what became of the run, and is taskq's last word: a signal from here until taskq exits
        // (the refused run's cancel has its own, below; the store's close, up to a second) changes nothing, as once a
        // stopped run has said what became of it. With no listener, it ended taskq by its default action, in silence.
        onLateSignal = () => undefined;
        if (removeLate === undefined) takeSignals();
        // Refused its first leases for good: the run it submitted would wait for ever, and the error says what becomes of it.
        if (error instanceof TaskqError && error.code === "STORE_UNUSABLE") throw await endRefusedRun(store, runId, submitted.created, error, STOPPED_SUMMARY_MS);
        throw error;
      }
    }
    const { exitCode, interrupted, workerId } = stopped;
    // Where this process ran none of the run's tasks (stopped while submitting), its logs are the workers'.
    const local = workerId === undefined ? undefined : ({ logDir: path.join(options.logRoot, runId), workerId, cutShort: aborted, attemptsEndedHere } satisfies LocalLogs);
    const summaryOptions = { color: options.color, json: options.json, ...(local === undefined ? {} : { local }) };
    if (exitCode === 0) {
      // The run has ended: a signal while its summary is read stops taskq at once, saying where the summary is; once the
      // summary is written, one changes nothing (as for a local run: the summary's exit code stands), also while the
      // store closes, until taskq exits. With no listener, a runner's SIGTERM then ended taskq by its default action: the
      // summary cut off, or a run that succeeded ending as killed.
      const atSummary = signalAtSummary(runId);
      onLateSignal = atSummary.heard;
      if (removeLate === undefined) takeSignals();
      // Its end seen (untilFinished), a prune may delete it before the summary is read: said so, not as a mistyped id.
      const deleted = (error: unknown): never => {
        throw error instanceof RunNotFoundError ? runDeletedError(runId, options, store.schema, "once it ended, before its summary was read") : error;
      };
      const status = await store.runStatus(runId).catch(deleted);
      // Stopped by another process (a signal to another `run --store` of it, as two CI jobs of one run): its
      // "shutdown: not started" would otherwise come from nowhere this process could see.
      if (status.tasks.some((task) => task.cancelKind === "shutdown")) {
        writeNote(`run ${runId} was stopped by another process (a signal to another run --store of it): its tasks that had not started were cancelled`, options.json);
      }
      const code = await printRunSummary(store, runId, summaryOptions, status).catch(deleted);
      atSummary.written();
      return code;
    }
    // Stopped (a signal, a lost lease): the summary if the database gives it soon, and the stop's exit code either way.
    // Stopped by a signal, the run ends here, as a local run does: what has not started never will.
    let cancelled = interrupted === undefined;
    /** The summary's exit code, once it is printed. */
    let summaryCode: number | undefined;
    /** The run's status, where end() read it before its summary. */
    let read: RunStatus | undefined;
    const end = async (): Promise<void> => {
      if (interrupted !== undefined) {
        await waitingCancelled;
        // Found ended by the cancel at the signal, however it ended, the run has nothing live: a signal while its status is
        // read names `taskq status`, and a database slow to answer says no summary, not that the run may still be live.
        if (endedBeforeSignal !== undefined) cancelled = true;
        // Ended with no task cancelled by a stop: by itself, before the signal, which found nothing left to stop.
        read = endedBeforeSignal === undefined ? undefined : await store.runStatus(runId);
        if (read?.tasks.some((task) => task.cancelKind === "shutdown") === true) endedBeforeSignal = undefined;
        if (endedBeforeSignal === undefined) {
          // As a local run's shutdown ends what it stopped: each task the shutdown's, none a dependency's.
          tellCancelled(runId, await store.cancelRun(runId, undefined, { shutdown: { aborted: [...aborted.keys()], killed } }), options.json);
        } else {
          writeNote(`run ${runId} had already ended (${endedBeforeSignal}) when ${interrupted} came: nothing was left to stop, and its summary is that of a run that ended by itself`, options.json);
        }
        cancelled = true;
      }
      // Not "interrupted" where the run had ended before the signal: nothing was left to interrupt.
      const asStopped = interrupted === undefined || endedBeforeSignal !== undefined ? {} : { interrupted };
      summaryCode = await printRunSummary(store, runId, { ...summaryOptions, ...asStopped }, read);
    };
    // The worker's listeners are gone: a signal now (a second Ctrl-C, a runner's SIGTERM after its SIGINT) would kill
    // taskq by its default action, in silence, the run left live with its tasks that had not started queued for any worker.
    const stopNow = (signal: NodeJS.Signals): void => {
      const said = interrupted === undefined ? `${signal} received` : secondSignal(signal, interrupted);
      process.stderr.write(
        cancelled
          ? `taskq: ${said} while the summary of run ${runId} was being read: stopping now; see it with: taskq status ${runId}\n`
          : `taskq: ${said} while run ${runId} was being stopped: stopping now; it may still be live: ${stillLive(waitingDone)}; cancel it with: taskq cancel ${runId}\n`,
      );
      // After a lost lease, no signal had stopped it: this one does, with its 128 + n, as one while the summary of a run
      // that ended by itself is read; after a first signal, that one's (a second changes nothing of the code).
      process.exit(interrupted === undefined ? signalExitCode(signal) : exitCode);
    };
    onLateSignal = stopNow;
    if (removeLate === undefined) takeSignals();
    // Only what the server answers from here: the worker's refusals said theirs.
    store.takeRefusal();
    const failure = end().then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    const timer = new AbortController();
    const late = sleep(STOPPED_SUMMARY_MS, "late" as const, { signal: timer.signal }).catch(() => undefined);
    const ended = await Promise.race([failure, late]);
    // Not given up on as one that did not answer where the server answered with a refusal, tried again (too many connections).
    const refused = ended === "late" ? store.takeRefusal() : undefined;
    const problem =
      ended !== "late"
        ? ended
        : refused === undefined
          ? `the database did not answer within ${STOPPED_SUMMARY_MS / 1000}s`
          : `the database refused it for ${STOPPED_SUMMARY_MS / 1000}s: ${oneLine(refused)}`;
    // Heard until taskq exits, and nothing more done: what is left is to say what became of the run, and the store's close,
    // which waits up to a second for connections a database that does not answer holds. Unheard, a signal then ended
    // taskq by the signal itself, not with the stop's exit code.
    onLateSignal = () => undefined;
    timer.abort();
    if (!cancelled) process.stderr.write(`taskq: run ${runId} may still be live (${problem ?? "no answer"}): ${stillLive(waitingDone)}; cancel it with: taskq cancel ${runId}\n`);
    if (problem !== undefined) process.stderr.write(`taskq: no summary of run ${runId}: ${problem}\n`);
    // Stopped by a lost lease, not a signal: its task was another worker's, which may have ended the run as a
    // local run ends, and the exit says how (0 once it succeeded); one still running exits 1, as its summary says.
    // So too where the run had ended before the signal: the summary's code stands (0 for a run that succeeded), as a local
    // run's does once its last task has ended.
    if ((interrupted === undefined || endedBeforeSignal !== undefined) && summaryCode !== undefined) return summaryCode;
    return exitCode;
  } finally {
    // Where the run was not stored, or the worker did not start.
    unheard.end();
    await store.close();
  }
}

/**
 * What a stopped `run --store` whose last cancel was not made leaves live: with the cancel made at the signal (`waitingDone`),
 * only its tasks running on other workers, not asked to stop; else its tasks that had not started too, which any worker would run.
 */
function stillLive(waitingDone: boolean): string {
  return waitingDone
    ? "its tasks that had not started were cancelled, but those running on other workers were not asked to stop"
    : "its tasks that had not started may not have been cancelled, and a worker would run them";
}

/** A note of the run's, as a timed plain line or a JSON record. */
function writeNote(message: string, json: boolean): void {
  process.stdout.write(json ? `${toJson({ ts: new Date().toISOString(), event: "note", message })}\n` : `${clock()} note    ${oneLine(message)}\n`);
}

/**
 * How long a stopped `run --store` waits for its cancel and its summary: the user asked to stop,
 * and a database that does not answer would hold the exit for a statement's whole timeout (30 s).
 */
const STOPPED_SUMMARY_MS = 3000;

/**
 * Says what stopping the run cancelled: what was not running, and what runs on other workers. Of
 * those, as `taskq cancel` says it: a worker alive stops its task at its next heartbeat, but one that
 * is gone (SIGKILLed, its machine lost) never will; its task stays running until its lease runs out.
 */
function tellCancelled(runId: string, { cancelled, cancelRequested, running, notRetried }: CancelResult, json: boolean, when: "stopping" | "stopped" = "stopped"): void {
  if (cancelled.length === 0 && cancelRequested.length === 0) return;
  if (json) {
    // `running`: of each task in cancelRequested, its worker and how long its lease has left (negative: run out), and, run out
    // while that worker still waits on the database, for how long (as status gives it, and the plain note words it).
    const leases = running.map((task) => ({
      id: task.key,
      workerId: task.workerId,
      ...workerFields(task.workerId),
      leaseLeftMs: task.leaseLeftMs,
      ...(task.workerWaitingMs === undefined ? {} : { workerWaitingMs: task.workerWaitingMs }),
    }));
    process.stdout.write(`${toJson({ ts: new Date().toISOString(), event: "cancelled", runId, ...(when === "stopping" ? { stopping: true } : {}), cancelled, cancelRequested, running: leases })}\n`);
    return;
  }
  // Those waiting for a retry did start: told apart, each with its failed attempt's error below, as a local run's cancel lines say it.
  const waited = notRetried.length;
  const others = cancelled.length - waited;
  const retries = waited === 0 ? [] : [`${count(waited)} waiting for ${waited === 1 ? "its retry" : "their retries"}`];
  // One time for the record's lines, read once: the notes, read before the head line, had earlier times than the line above them.
  const stamp = clock();
  const notes = [...notRetriedNotes(runId, notRetried), ...runningNotes(running)].map((note) => `${stamp} note    ${note}\n`).join("");
  if (when === "stopping") {
    // At the signal, before any of its running tasks has stopped: none of those is in the count.
    process.stdout.write(`${stamp} run ${runId} stopping: cancelled ${[...(others === 0 ? [] : [`${count(others)} that had not started`]), ...retries].join(" and ")}\n${notes}`);
    return;
  }
  const parts: string[] = [];
  // Those its worker gave back and could not cancel then (the database not answering) are queued again: cancelled too.
  const notStarted = others === 0 ? [] : [`${count(others)} that had not started or ${others === 1 ? "was" : "were"} given back`];
  if (cancelled.length > 0) parts.push(`cancelled ${[...notStarted, ...retries].join(" and ")}`);
  if (cancelRequested.length > 0) parts.push(`asked ${count(cancelRequested.length)} running on ${cancelRequested.length === 1 ? "another worker" : "other workers"} to stop`);
  process.stdout.write(`${stamp} run ${runId} stopped: ${parts.join("; ")}\n${notes}`);
}

function count(tasks: number): string {
  return `${tasks} task${tasks === 1 ? "" : "s"}`;
}

/** Resolves when the run reaches a terminal state: looked at (its state alone) after this worker ends a task, and every half second. */
async function untilFinished(store: PostgresStore, runId: string, taskEnded: () => Promise<void>): Promise<void> {
  for (;;) {
    // When this worker ends a task (its last, most often), else every half second (another worker's task).
    const ended = taskEnded();
    const poll = new AbortController();
    // The poll's timer is cleared when a task ends first: it would hold the process up to 0.5 s past the run.
    await Promise.race([sleep(RUN_STATE_POLL_MS, undefined, { signal: poll.signal }), ended]).catch(() => undefined);
    poll.abort();
    // A burst of ends is one look, not one each.
    await sleep(RUN_STATE_SETTLE_MS);
    // A run deleted meanwhile (a `prune` just after its last task ended) has ended too: waiting on would never end.
    const state = await store.runState(runId).catch((error: unknown) => ((error as { code?: unknown } | null)?.code === "STORE_NOT_FOUND" ? "deleted" : undefined));
    if (state !== undefined && state !== "running") return;
  }
}

/** How often `run --store` looks whether its run has ended, when none of its own tasks ends meanwhile. */
const RUN_STATE_POLL_MS = 500;
/** After one of its own tasks ended, how long it waits for others to end before it looks. */
const RUN_STATE_SETTLE_MS = 20;

/** `next()` resolves at the next event `matches` takes, as `tell` is given them. */
function nextEvent(matches: (event: WorkerEvent) => boolean): { tell: (event: WorkerEvent) => void; next: () => Promise<void> } {
  let waiting: (() => void) | undefined;
  let pending: Promise<void> | undefined;
  return {
    tell: (event) => {
      if (waiting === undefined || !matches(event)) return;
      const resolve = waiting;
      waiting = undefined;
      pending = undefined;
      resolve();
    },
    next: () => (pending ??= new Promise<void>((resolve) => (waiting = resolve))),
  };
}

/**
 * What a signal does once a run has ended: while its summary is read, it stops taskq at once, saying where the
 * summary is; once `written()`, it changes nothing, as for a local run (the summary's exit code stands).
 */
function signalAtSummary(runId: string): { heard: (signal: NodeJS.Signals) => void; written: () => void } {
  let written = false;
  return {
    heard: (signal) => {
      if (written) return;
      process.stderr.write(`taskq: ${signal} received while the summary of run ${runId} was being read: stopping now; see it with: taskq status ${runId}\n`);
      process.exit(signalExitCode(signal));
    },
    written: () => {
      written = true;
    },
  };
}
