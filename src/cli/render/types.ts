import type { StreamName } from "../../handlers/index.js";
import type { Queue, TaskStatus } from "../../engine/index.js";
import type { TaskSelection } from "../task-selection.js";

/** What a renderer knows about the run before it starts. */
export interface RunInfo {
  runId: string;
  file: string;
  name?: string;
  logDir: string;
  taskCount: number;
  /** Set where the command line named tasks: `taskCount` is of those and what they depend on, out of the file's. */
  selection?: TaskSelection;
  concurrency: number;
  /** maxAttempts by task id, for "attempt n/m". */
  maxAttempts: ReadonlyMap<string, number>;
}

/** A FAILED task as the summary shows it. */
export interface DeadLetterLine {
  id: string;
  attempts: number;
  /** "exited with code 3", "killed by SIGKILL", "timed out after 5m", ... */
  error: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /**
   * Where to read its log, in words where it is on another machine (`<log-dir>/r2/a.log (on vm-1)`):
   * for people. `logFile` and `workerId` say the same for programs.
   */
  logPath: string;
  /** Its log's path under the `--log-dir` of the machine that ran it: `<run-id>/<task-id>.log`. */
  logFile: string;
  /** A local run's, where a task deleted that log with its folder during the run: the path leads nowhere. */
  logDeleted?: true;
  /** A durable run's only: the worker that ran its last attempt (null where the database does not say). */
  workerId?: string | null;
  /** A durable run's only: that worker's host and process id, read from its id (null where it does not say). */
  workerHost?: string | null;
  workerPid?: number | null;
  tail: string[];
  /**
   * Set when `tail` is an earlier attempt's: the last one left no lines (it could not write its
   * log, say), so the summary shows the lines of the latest attempt that had some.
   */
  tailAttempt?: number;
  /** A durable run's, where those lines are in another log than `logPath` (their attempt ran on another worker): that log, in words. */
  tailLogPath?: string;
  /** Beside `tailLogPath`: the worker whose log it is (null where the database does not say). */
  tailWorkerId?: string | null;
}

export interface CancelledLine {
  id: string;
  /** "fail-fast" for one a --fail-fast stop cancelled (a shutdown's, to the queue), where "shutdown" is a signal's (Ctrl-C) or a durable run's stop. */
  reason: "cancel" | "dependency" | "shutdown" | "fail-fast";
  /** For reason "dependency": the task whose failure caused it. */
  dependency?: string;
  message: string;
  /** True for a task whose attempt was running when it was cancelled (cut short by a shutdown). */
  running?: true;
  /** A task cut short: where its log is, as DeadLetterLine.logPath and logFile say it. */
  logPath?: string;
  logFile?: string;
  /** As DeadLetterLine.logDeleted. */
  logDeleted?: true;
  /**
   * A durable run's task cancelled as it waited for its retry: the worker whose attempt failed last, whose log `logPath`
   * names (null where the database does not say), and that worker's host and process id, as DeadLetterLine has them;
   * of one `run --store` cut short, that process's own worker (its log is that process's).
   */
  workerId?: string | null;
  workerHost?: string | null;
  workerPid?: number | null;
  /** A task cut short: the last lines its attempt wrote (none where it ended after the shutdown stopped waiting for it). */
  tail?: string[];
  /**
   * Where `tail` is an earlier attempt's, which: a task cut short whose attempt left no lines, or one stopped while it
   * waited for a retry (not running; logPath and logFile given as for one cut short), has the last lines of the
   * latest attempt that left some, as a dead letter has.
   */
  tailAttempt?: number;
  /** Those lines' log and its worker, where not `logPath`'s, as DeadLetterLine has them. */
  tailLogPath?: string;
  tailWorkerId?: string | null;
}

/** A task running when a durable run's status was read. */
export interface RunningLine {
  id: string;
  attempt: number;
  maxAttempts: number;
  /** The worker that holds its lease. */
  workerId: string | null;
  /** That worker's host and process id, read from its id (null where it does not say). */
  workerHost?: string | null;
  workerPid?: number | null;
  /** Since its attempt began, on the database's clock. */
  runningMs: number;
  /** Its cancel was asked for: its worker stops it at its next heartbeat; a sweep cancels it once its lease has run out. */
  cancelRequested?: true;
  /** Its run was stopped by `run --store` (JSON `runStopped`): however it ends, it is cancelled, not retried nor queued again. */
  runStopped?: true;
  /** How long ago its lease ran out, where it has: no worker runs it, whatever the database still says. */
  leaseExpiredMs?: number;
  /**
   * Where its lease ran out while its worker still has a statement waiting on the database (a renewal, or the record of
   * how the attempt ended, held up by a lock or a slow database): for how long. That worker is neither gone nor stalled.
   */
  workerWaitingMs?: number;
  /** Its last lines so far, as its worker's last heartbeat stored them: none before the first. */
  lastLines?: string[];
}

/** A task of a durable run waiting for its retry when its status was read. */
export interface RetryingLine {
  id: string;
  /** The attempt it waits to make. */
  attempt: number;
  maxAttempts: number;
  /** Until it is due, on the database's clock: 0 once due, waiting for a worker. */
  inMs: number;
  /** How the attempt before it failed. */
  error: string;
}

/** A task of a durable run waiting for its `delay` or `runAt` when its status was read. */
export interface ScheduledLine {
  id: string;
  /** Until it is due, on the database's clock. */
  inMs: number;
  /** When it is due, in epoch milliseconds (the database's time), as a local run's `scheduled` record gives its `runAt`. */
  runAt: number;
}

export interface RunSummary {
  runId: string;
  file: string;
  logDir: string;
  wallMs: number;
  counts: Record<TaskStatus, number>;
  deadLetters: DeadLetterLine[];
  cancelled: CancelledLine[];
  /** A durable run's status only: its running tasks, longest running first. */
  running?: RunningLine[];
  /** A durable run's tasks waiting for their retry, when its status was read while it ran. */
  retrying?: RetryingLine[];
  /** A durable run's tasks waiting for their `delay` or `runAt`, when its status was read while it ran. */
  scheduled?: ScheduledLine[];
  /** The signal that interrupted the run, if one did. */
  interrupted?: NodeJS.Signals;
  /** With --fail-fast: the task whose failure stopped the run, if one did. */
  failedFast?: string;
  exitCode: number;
}

/** Every renderer is fed by the same queue events and the same task output lines. */
export interface Renderer {
  /** Subscribes to the queue's events. */
  attach(queue: Queue, info: RunInfo): void;
  /** One line of a task's output (already cut to a bounded length), of attempt `attempt` (see OutputSink.line). */
  line(taskId: string, stream: StreamName, text: string, attempt?: number): void;
  /** Optional fast path: complete short lines as bytes (see OutputSink.lines). */
  lines?(taskId: string, stream: StreamName, bytes: Buffer, count: number, ends: Int32Array, attempt?: number): void;
  /** Every line comes to `lines`, as the task wrote it (see OutputSink.asWritten). */
  readonly asWritten?: boolean;
  /** What a terminal shows of the beginning of a line a carriage return rewrites (see OutputSink.lineState). */
  lineState?(text: string): string;
  /** The end of a task's output not yet a whole line (see OutputSink.openLine). */
  openLine?(taskId: string, stream: StreamName, bytes: Buffer, fresh: boolean): void;
  /** A line not ended after this many milliseconds shows as far as it goes (see OutputSink.showOpenLineAfterMs). */
  readonly showOpenLineAfterMs?: number;
  /** A task's line comes whole (see OutputSink.wholeLines). */
  readonly wholeLines?: boolean;
  /** The states of a line that "\r" rewrote that do not come to `line` (see OutputSink.droppedStates). */
  droppedStates?(taskId: string, stream: StreamName, bytes: Buffer, attempt?: number): void;
  /** Optional backpressure from a slow reader of the output (see OutputSink.whenDrained). */
  whenDrained?(): Promise<void> | undefined;
  /** A message from taskq itself (a note, a signal received); `taskId` where it concerns one task. */
  note(text: string, taskId?: string): void;
  /** Stops any live display and prints the summary. */
  finish(summary: RunSummary): Promise<void>;
  /** Ctrl-Z: taskq is about to stop; a live display takes itself off the terminal and shows the cursor. */
  suspend?(): void;
  /** Continued after suspend(): a live display draws itself again. */
  resume?(): void;
  /**
   * A shutdown is under way: a live display says so until the end (see Stopping). Told of a fail-fast stop before it
   * cancels anything: the JSON records then give each task it cancels the reason "fail-fast".
   */
  stopping?(state: Stopping): void;
}

/** What a shutdown is at: the running tasks finishing until `until` (Date.now()), being stopped, or killed. */
export interface Stopping {
  /** The signal that began the stop, or that kills the tasks of a fail-fast stop (phase "killing"). */
  signal?: NodeJS.Signals;
  /** A --fail-fast stop's: the task whose failure began it. */
  failedFast?: string;
  /**
   * A --fail-fast stop's: none of the tasks running is its to stop (none runs, or only those a timeout stops already): it
   * cancels the tasks waiting, and a live display says that, not that it stops running ones.
   */
  waitingOnly?: boolean;
  phase: "finishing" | "stopping" | "killing";
  /** For "finishing": when the time to finish runs out. */
  until?: number;
}
