import { monotonicMs } from "../monotonic.js";
import { stoppedProcesses } from "./process-groups.js";
import { readProcCommand } from "./proc-read.js";

/** How long a task's process stays stopped before its task gets a note that says so. */
export const STOPPED_NOTE_AFTER_MS = 10_000;
/** How often running tasks' sessions are looked at for stopped processes (one pass over /proc for all of them). */
const LOOK_EVERY_MS = 2500;
/** A timer a little early is no reason to wait for the next look. */
const TIMER_SLACK_MS = 100;

/** What is known of one running task's stopped processes. */
interface Watched {
  onStopped: (pid: number, command: string) => void;
  /** Each stopped process: when it was first seen stopped, and whether its task was told. */
  stopped: Map<number, { since: number; told: boolean }>;
}

const watched = new Map<number, Watched>();
let timer: NodeJS.Timeout | undefined;

/**
 * Watches a running task's session (`sid`, its shell's pid) for processes stopped by a signal
 * (`kill -STOP`, a SIGTSTP): one stopped for STOPPED_NOTE_AFTER_MS or more holds its task up
 * without a word, as a hang would. `onStopped` hears of each once, with the process's pid and
 * command, until it is continued. Costs one pass over /proc every LOOK_EVERY_MS while tasks run.
 */
export function watchStopped(sid: number, onStopped: (pid: number, command: string) => void): void {
  watched.set(sid, { onStopped, stopped: new Map() });
  timer ??= setInterval(lookForStopped, LOOK_EVERY_MS).unref();
}

/** The task's shell has exited: its session is no longer watched. */
export function unwatchStopped(sid: number): void {
  watched.delete(sid);
  if (watched.size > 0 || timer === undefined) return;
  clearInterval(timer);
  timer = undefined;
}

function lookForStopped(): void {
  const now = monotonicMs();
  for (const [sid, watch] of watched) {
    const stoppedNow = new Set(stoppedProcesses(sid));
    // Continued since (or gone): forgotten, so a stop later is told again.
    for (const pid of watch.stopped.keys()) if (!stoppedNow.has(pid)) watch.stopped.delete(pid);
    for (const pid of stoppedNow) {
      const seen = watch.stopped.get(pid);
      if (seen === undefined) watch.stopped.set(pid, { since: now, told: false });
      else if (!seen.told && now - seen.since >= STOPPED_NOTE_AFTER_MS - TIMER_SLACK_MS) {
        // Stopped at least since it was first seen so: told between 10 s and 10 s + LOOK_EVERY_MS after it stopped.
        seen.told = true;
        watch.onStopped(pid, readProcCommand(pid) ?? "");
      }
    }
  }
}

