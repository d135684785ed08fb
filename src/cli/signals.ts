import { constants } from "node:os";

const HANDLED = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/**
 * Two-phase signal handling: the first SIGINT, SIGTERM or SIGHUP calls
 * `graceful`, any later one calls `immediate`, with the first. Returns the function that
 * removes the handlers.
 */
export function onShutdownSignals(handlers: {
  graceful: (signal: NodeJS.Signals) => void;
  immediate: (signal: NodeJS.Signals, first: NodeJS.Signals) => void;
}): () => void {
  let first: NodeJS.Signals | undefined;
  const listener = (signal: NodeJS.Signals): void => {
    if (first === undefined) {
      first = signal;
      handlers.graceful(signal);
    } else {
      handlers.immediate(signal, first);
    }
  };
  for (const signal of HANDLED) process.on(signal, listener);
  return () => {
    for (const signal of HANDLED) process.off(signal, listener);
  };
}

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
