import { constants } from "node:os";
import { readProcCommand, readProcStat } from "../handlers/proc-read.js";
import { monotonicMs } from "../monotonic.js";

const HANDLED = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * How long a task's shell that died of a shutdown signal before its command ran waits for taskq
 * to receive it too (see shutdownSignals): the two come in either order, a few ms apart, later on
 * a loaded machine.
 */
export const SHARED_SIGNAL_WAIT_MS = 500;
/**
 * The same for a shell that died of one later, its command running: no signal to taskq's process
 * group reaches it there, only one sent to every process (`kill -TERM -1`, a container's stop)
 * does, or the task's own (`kill -INT $$`), the common case, which costs each such failure this
 * much. On a machine loaded enough that taskq hears of its own later, the task counts as failed.
 */
export const LATE_SIGNAL_WAIT_MS = 50;

/**
 * How soon after a shutdown signal one more of the same kind is taken for it again, passed on by a
 * wrapper in taskq's process group (see ForwardedCopy). A forwarder passes it on within a few ms;
 * a person presses Ctrl-C again well after this.
 */
export const FORWARDED_COPY_MS = 250;

/**
 * Drops the copies of each shutdown signal that a wrapper sharing taskq's process group passes on:
 * coreutils `timeout`, npm and the like forward the SIGINT or SIGTERM they get, and a terminal's
 * Ctrl-C, or a runner's signal to the process group, reaches both the wrapper and taskq, which then
 * had it two or three times, a few ms apart (`timeout` passes it on to taskq and to the whole group):
 * the first Ctrl-C's copy was taken for a second Ctrl-C and killed every task at once, and the
 * second's for a third, which gave up the records of tasks that had ended (a worker's, where the
 * database does not take them: a task that succeeded then counts as lost). Only with a parent in
 * taskq's own process group (a shell with job control makes taskq lead a group of its own: no copy
 * comes) that is no shell (see SHELLS), and only within FORWARDED_COPY_MS of the last signal of its
 * kind taken: every such copy.
 */
class ForwardedCopy {
  /** When a signal of each kind was last taken: a SIGINT's late copy after a SIGTERM taken since is still a copy. */
  readonly #taken = new Map<NodeJS.Signals, number>();

  /** Whether `signal`, just received, is a forwarded copy of the last one of its kind taken. */
  isCopy(signal: NodeJS.Signals): boolean {
    const now = monotonicMs();
    const at = this.#taken.get(signal);
    // Measured from the signal taken, not from a copy: a wrapper's copies all come within a few ms of it.
    if (at !== undefined && now - at <= FORWARDED_COPY_MS && parentMayForward()) return true;
    this.#taken.set(signal, now);
    return false;
  }
}

/**
 * Shells, which pass on no signal: one that started taskq without job control (`sh -c`, a script's `taskq run &`)
 * shares its process group, and a second signal sent to taskq soon after the first (a script's `kill -INT $pid`
 * twice) is a second one, not a copy.
 */
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "ash", "yash", "posh", "fish", "tcsh", "csh"]);

/** Whether taskq's parent may have passed a signal on: it is in taskq's process group (a wrapper that started it: `timeout`, npm), and no shell. */
function parentMayForward(): boolean {
  const own = readProcStat("self")?.pgrp;
  if (own === undefined || process.ppid <= 1) return false;
  if (readProcStat(process.ppid)?.pgrp !== own) return false;
  const name = readProcCommand(process.ppid);
  return name !== undefined && !SHELLS.has(name);
}

/** The shutdown signals this process has received, and the waits of shutdownSignals.received(). */
const received = new Set<NodeJS.Signals>();
const awaited = new Set<{ signal: NodeJS.Signals; done: (got: boolean) => void }>();

function receive(signal: NodeJS.Signals): void {
  received.add(signal);
  for (const wait of awaited) if (wait.signal === signal) wait.done(true);
}

/**
 * taskq's shutdown signals as a shell handler needs them (ShellHandlerOptions.shutdownSignals).
 * A signal sent to taskq's process group (a terminal's Ctrl-C, a runner's `kill -- -PGID`)
 * also reaches a task whose shell is starting: until it leads a group of its own, it is in
 * taskq's, with every signal blocked, and it dies of that signal as it unblocks them, before
 * its command runs. Which of the two deaths taskq hears of first is a matter of timing: a
 * shell that died of one before its command ran waits up to SHARED_SIGNAL_WAIT_MS for taskq's,
 * one that died later LATE_SIGNAL_WAIT_MS.
 */
export const shutdownSignals = {
  stopping: (): boolean => received.size > 0,
  received(signal: NodeJS.Signals, diedStarting: boolean): Promise<boolean> {
    if (received.has(signal)) return Promise.resolve(true);
    if (!(HANDLED as readonly string[]).includes(signal)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wait = {
        signal,
        done: (got: boolean): void => {
          clearTimeout(timer);
          awaited.delete(wait);
          resolve(got);
        },
      };
      const timer = setTimeout(() => wait.done(false), diedStarting ? SHARED_SIGNAL_WAIT_MS : LATE_SIGNAL_WAIT_MS);
      awaited.add(wait);
    });
  },
};

/** 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/**
 * Takes the shutdown signals while a run is set up (its log folder made, its display loading),
 * before its own handlers listen: with none, a Ctrl-C then ended taskq by the signal's default
 * action, with no word and the run's folder left behind. `end` stops taking them and returns
 * those that came, for the run's handlers to be given (see onShutdownSignals' `deliver`).
 */
export class EarlySignals {
  readonly #got: NodeJS.Signals[] = [];
  #listening = true;
  /** Handed on to the run's handlers (see onShutdownSignals), which then drop no second copy. */
  readonly copies = new ForwardedCopy();
  readonly #listener = (signal: NodeJS.Signals): void => {
    if (!this.copies.isCopy(signal)) this.#got.push(signal);
  };

  constructor() {
    for (const signal of HANDLED) process.on(signal, this.#listener);
  }

  /** Stops taking the signals (again: nothing more) and returns those that came, the first first. */
  end(): NodeJS.Signals[] {
    if (this.#listening) for (const signal of HANDLED) process.off(signal, this.#listener);
    this.#listening = false;
    return this.#got;
  }
}

/**
 * Two-phase signal handling: the first SIGINT, SIGTERM or SIGHUP calls
 * `graceful`, any later one calls `immediate`, with the first. Returns the function that
 * removes the handlers; its `deliver` hands them a signal that came before they listened (EarlySignals).
 */
export function onShutdownSignals(
  handlers: {
    graceful: (signal: NodeJS.Signals) => void;
    immediate: (signal: NodeJS.Signals, first: NodeJS.Signals) => void;
  },
  copies = new ForwardedCopy(),
): (() => void) & { deliver: (signal: NodeJS.Signals) => void } {
  let first: NodeJS.Signals | undefined;
  const deliver = (signal: NodeJS.Signals): void => {
    // First: a task that died of the same signal is told that it did (see shutdownSignals),
    // once this listener has begun the shutdown.
    receive(signal);
    if (first === undefined) {
      first = signal;
      handlers.graceful(signal);
    } else {
      handlers.immediate(signal, first);
    }
  };
  // A copy a wrapper passed on is the first signal again: nothing to do.
  const listener = (signal: NodeJS.Signals): void => {
    if (!copies.isCopy(signal)) deliver(signal);
  };
  for (const signal of HANDLED) process.on(signal, listener);
  const remove = (): void => {
    for (const signal of HANDLED) process.off(signal, listener);
  };
  return Object.assign(remove, { deliver });
}

/**
 * Listens for the shutdown signals and does nothing with them, until taskq exits: for a command whose stop
 * has begun and whose last steps (a store closing, at most a second or so) come after its own listeners are
 * gone. With none, a signal's default action ended taskq at once, with another exit code than its stop's and
 * what stdout held lost; the exit listens again (see main.ts).
 */
export function holdSignals(): void {
  for (const signal of HANDLED) process.on(signal, ignoreSignal);
}

function ignoreSignal(): void {}

/**
 * Job control for a run: Ctrl-Z (SIGTSTP) stops taskq's own process group only, and each task
 * leads a group of its own, so the tasks would run on without it (their output backing up in
 * full pipes). `stop` is called on SIGTSTP, before taskq stops itself with SIGSTOP (the
 * default action a handler replaces); `resume` on SIGCONT (`fg`, `bg`). Returns the function
 * that removes both handlers.
 */
export function onJobControl(handlers: { stop: () => void; resume: () => void }): () => void {
  const stop = (): void => {
    handlers.stop();
    process.kill(process.pid, "SIGSTOP");
  };
  process.on("SIGTSTP", stop);
  process.on("SIGCONT", handlers.resume);
  return () => {
    process.off("SIGTSTP", stop);
    process.off("SIGCONT", handlers.resume);
  };
}

/** "SIGINT received again", or "SIGTERM received after SIGINT" (a runner's cancel after a Ctrl-C): what a second signal is called. */
export function secondSignal(signal: NodeJS.Signals, first: NodeJS.Signals): string {
  return signal === first ? `${signal} received again` : `${signal} received after ${first}`;
}
