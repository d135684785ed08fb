/** One shell task as the handler sees it: already validated and resolved by the loader. */
export interface ShellTask {
  id: string;
  /** Command line, run with `<shell> -c <run>`. */
  run: string;
  /** Extra environment, layered over taskq's own environment. */
  env: Record<string, string>;
  cwd: string;
  /** Exit codes worth retrying; any other non-zero exit is permanent. */
  retryOn?: number[];
  /** Only used to word the "timed out after 5m" message: the engine's signal enforces the timeout. */
  timeoutMs?: number;
}

/** Per-attempt context from the engine. */
export interface AttemptContext {
  /**
   * Aborted by the engine; `reason.code` is "TIMEOUT", "CANCELLED" or "SHUTDOWN", or a durable
   * worker's "LEASE_LOST", which kills the task at once (SIGKILL, no kill grace).
   */
  signal: AbortSignal;
  attempt: number;
  taskId: string;
  /** A durable worker's: the handler gives it a way to read the attempt's last lines while it runs (stored with each heartbeat). */
  watchTail?(read: () => string[]): void;
  /** Starts the attempt's timeout again from now: called once the command is spawned, so that waiting for its turn to start does not count (see the engine's AttemptContext). */
  startClock?(): void;
  /** A durable worker's: tells `listener` when the attempt's lease runs out unless renewed (performance.now()), at once and after each renewal (see guardLease). */
  onLeaseEnds?(listener: (endsAt: number) => void): void;
}

/**
 * Which of a task's streams a line came from: "output" when stdout and stderr share one
 * pipe (see ShellHandlerOptions.mergeOutput), in the order the task wrote them.
 */
export type StreamName = "stdout" | "stderr" | "output";

/** Where output lines go (a renderer); may be a no-op. */
export interface OutputSink {
  /**
   * One line without its newline; lines over 4096 bytes are cut for display. `attempt`: the
   * attempt whose process wrote it (late lines from what an attempt left running keep its number).
   */
  line(taskId: string, stream: StreamName, text: string, attempt?: number): void;
  /**
   * Optional fast path for loud tasks: `count` complete lines as raw bytes, each ending
   * in "\n", none over 4096 bytes or ending in "\r\n"; `ends[i]` is where line i ends in
   * `bytes` (just past its "\n"). Both are only valid during the call. Without it, every
   * line comes through `line`.
   */
  lines?(taskId: string, stream: StreamName, bytes: Buffer, count: number, ends: Int32Array, attempt?: number): void;
  /**
   * Set by a sink with `lines` that shows output as the task wrote it (plain lines into a
   * file or a pipe): then every line comes to `lines`, never decoded, so bytes that are not
   * UTF-8 go on as they came. A line ending in "\r\n" keeps its "\r"; one over 4096 bytes
   * comes cut on a character's boundary, ending in `… (N bytes)`; the last gains a "\n" when
   * the output did not end with one.
   */
  readonly asWritten?: boolean;
  /**
   * Optional, for a sink that shows lines as a terminal would (see rewrittenState): what a terminal shows of `text`, the
   * beginning of a line up to a carriage return, as text that ends in the same state. Of a line that carriage returns
   * rewrite past 4096 bytes (a progress bar that never writes a newline), what comes before its last state is kept as
   * this, not dropped: what the last state does not cover shows through, and a colour set before it holds.
   */
  lineState?(text: string): string;
  /**
   * Optional, for a live display: the bytes a chunk of a task's output ends with after its last newline (`fresh`: the
   * chunk held a newline, so they begin a line; else they go on from the chunk before), "" with `fresh` where it ended
   * with one. A line not ended yet (a progress bar that rewrites itself with carriage returns and never writes a
   * newline) comes nowhere else until it ends. Valid only during the call.
   */
  openLine?(taskId: string, stream: StreamName, bytes: Buffer, fresh: boolean): void;
  /**
   * Optional, for output a person may watch as it comes with no live display (plain lines into a CI log): a line not
   * ended after this many milliseconds comes (to `line`, or as written to `lines`) as far as it goes, as a line of its
   * own, and what comes of it from there on as a new line (see LineSplitter's `showOpenAfterMs`). Without it, a line
   * comes once it ends.
   */
  readonly showOpenLineAfterMs?: number;
  /**
   * Optional, for output GitHub Actions' runner reads (it masks a secret's value only whole): a line comes whole, not cut
   * for length (up to 1 MiB), as written to `lines` with `asWritten`, else as text to `line` (a JSON record's `text`), nor
   * shown before it ends but for its states a "\r" ended, which the runner reads as lines (see LineSplitter's
   * `wholeLines`). Not with `lineState`.
   */
  readonly wholeLines?: boolean;
  /**
   * Optional, with `wholeLines` as text: the states of a line that "\r" rewrote that do not come to `line` (its last
   * state alone does, once past 4 KiB), each ended by its "\r", as the task wrote them. The runner would have read each
   * as a line of its own, and a command in it (`::add-mask::`). Valid only during the call.
   */
  droppedStates?(taskId: string, stream: StreamName, bytes: Buffer, attempt?: number): void;
  /**
   * Optional backpressure: undefined while the sink keeps up, else a promise of the moment
   * it has caught up. Meanwhile the task's pipes are paused, as for a slow log file.
   */
  whenDrained?(): Promise<void> | undefined;
  /**
   * Optional: a message from taskq itself (shown once: a fallback the user should know of).
   * `taskId` is set where the note concerns one task (what it left running), for JSON's `id`.
   */
  note?(text: string, taskId?: string): void;
}

/** The outcome of one attempt: the same shape on success and failure. */
export interface AttemptResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
  /** The last output lines (display versions, stdout and stderr in arrival order). */
  tail: string[];
}

export interface ShellHandlerOptions {
  runId: string;
  /** The run's log folder: each task logs to `<logDir>/<taskId>.log`. */
  logDir: string;
  /** Time between SIGTERM to the process group and SIGKILL. */
  killGraceMs: number;
  sink: OutputSink;
  /** Last lines kept for the summary; default 20. */
  tailLines?: number;
  /**
   * Shell used as `<shell> -c <run>`; default "/bin/sh". Not $SHELL: that is the user's
   * interactive shell (zsh, fish...), and a pipeline must behave the same on every machine.
   */
  shell?: string;
  /**
   * One pipe for the task's stdout and stderr together (where FIFOs can be made), so the log
   * and the sink get its output in exactly the order it was written, as a terminal shows it;
   * lines then come as stream "output". Default false: two pipes, each line labelled with its
   * stream, but lines written close together to both may be logged out of order.
   */
  mergeOutput?: boolean;
  /** Variables of taskq's own environment that tasks must not see (e.g. TASKQ_STORE, which may hold a password). */
  hiddenEnv?: readonly string[];
  /**
   * taskq's own shutdown signals (SIGINT, SIGTERM, SIGHUP), where the CLI handles them.
   * `stopping()`: one has come, so no task's command starts from now on; an attempt about to
   * start ends with a TaskCancelledError of reason "shutdown" instead. `received(signal)`:
   * whether `signal`, which a task's shell died of, is one taskq has received or receives in a
   * moment: a signal to taskq's process group reaches a task whose shell is still starting in
   * it. Such an attempt was stopped with taskq, not failed: it ends the same way. `diedStarting`:
   * the shell died before its command ran, as such a signal kills it: the wait for taskq's own
   * is longer then (see SHARED_SIGNAL_WAIT_MS in cli/signals.ts).
   */
  shutdownSignals?: { stopping(): boolean; received(signal: NodeJS.Signals, diedStarting: boolean): Promise<boolean> };
  /** Called when the log folder was found deleted during the run and was made again. */
  onLogDirRemade?: () => void;
  /**
   * Called when an attempt's command has ended (its shell exited), with the attempt's signal: what is left of the
   * attempt is taskq's (stopping what it left running, reading its last output), which a stop of it would not change.
   */
  onCommandEnded?: (attempt: AbortSignal) => void;
  /**
   * Log files are opened on the main thread until opening one takes longer than this
   * (averaged over the last few), then in libuv's thread pool. Default 0.25 ms; 0 opens
   * them in the pool from the second task on (tests use it).
   */
  slowLogOpenMs?: number;
}

export type ShellHandler = (task: ShellTask, ctx: AttemptContext) => Promise<AttemptResult>;
