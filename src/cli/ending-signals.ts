import { constants } from "node:os";

/**
 * The signals whose default action ends a process, other than the shutdown signals taskq
 * handles (SIGINT, SIGTERM, SIGHUP), those Node itself takes (SIGUSR1, SIGPIPE, SIGXFSZ), those
 * a handler cannot take (SIGKILL, and SIGSEGV, SIGBUS, SIGFPE and SIGILL, a fault's) and SIGPROF
 * (V8's profiler samples with it): each ends taskq at once, by that signal, as Ctrl-\ does.
 * Those this platform has.
 */
export const ENDING_SIGNALS = (["SIGQUIT", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGXCPU", "SIGABRT", "SIGTRAP", "SIGSYS", "SIGIO", "SIGPWR", "SIGSTKFLT"] as const).filter(
  (signal) => constants.signals[signal as keyof typeof constants.signals] !== undefined,
);

/** A shell's code for a process a signal ended: 128 + its number (131 for SIGQUIT). */
export function signalExitCode(signal: (typeof ENDING_SIGNALS)[number]): number {
  return 128 + (constants.signals[signal as keyof typeof constants.signals] ?? 0);
}
