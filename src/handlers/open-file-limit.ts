import { readdirSync, readFileSync } from "node:fs";
import { TaskqError } from "../errors.js";
import { LATE_PIPES_MAX } from "./attempt-output.js";

/**
 * Descriptors a running task costs taskq, measured (`ulimit -n L; taskq run -j J` of 50
 * `sleep 0.3` tasks, the smallest L that runs them all, J = 1 to 10): its log and its
 * output's FIFO, both ends while it starts (tasks started in one turn all hold them at
 * once), or two sockets where there are no FIFOs: 3; with stdout and stderr apart
 * (`--output json`), two FIFOs: 5.
 */
const PER_TASK = 3;
const PER_TASK_APART = 5;
/**
 * Opened after the count is taken, whatever the concurrency: the guard's list and its
 * pipe (2), a spawn's own pipe while it runs (2), a read of /proc and a log marker (2).
 */
const LATER = 6;
// LATE_PIPES_MAX: pipes that processes ended tasks left running still write to (see attempt-output.ts), one descriptor each.
/** Pipes the FIFO pool opens ahead (see FifoPool.openAhead), two descriptors each. */
const PIPES_AHEAD = 4;
/** Below this limit no pipe is opened ahead: those 8 descriptors are better spent on tasks. */
const AHEAD_MIN_LIMIT = 256;
/**
 * What a caller that says nothing opens besides its tasks: a durable worker's database
 * connections (a pool of 8, its listener among them, and 2 for lease renewals) and metrics sockets.
 */
const OTHERS = 16;
/** Held by taskq itself at most, where it cannot be counted: a limit this far above the need is not checked. */
const MOST_HELD = 512;
/** Assumed held where /proc cannot list them. */
const HELD_UNKNOWN = 32;

/** What the shell handler's running tasks may use of the open-file limit, and why it is less than asked. */
export interface FittedConcurrency {
  concurrency: number;
  /** Set when `concurrency` had to be lowered: a note for the user. */
  note?: string;
}

/**
 * Lowers `requested` to the tasks this process can run at once within its open-file limit
 * (`ulimit -n`; Node raises the soft limit to the hard one as it starts): what is left once
 * the descriptors taskq holds now (`held`, counted in /proc by default), those it opens later
 * (LATER, pipes opened ahead, and `others`: the caller's own, see OTHERS) are set aside,
 * divided by a task's cost (see PER_TASK). Past the limit, tasks would fail to start (EMFILE)
 * and end up as dead letters through no fault of their own; so where not even one task fits,
 * throws (OPEN_FILE_LIMIT, exit 1) before anything runs. Where the limit cannot be read (not
 * Linux), `requested` stands.
 */
export function fitConcurrencyToOpenFiles(requested: number, merged: boolean, limit = openFileLimit(), counts: { held?: number; others?: number } = {}): FittedConcurrency {
  if (limit === undefined) return { concurrency: requested };
  const perTask = merged ? PER_TASK : PER_TASK_APART;
  const later = LATER + LATE_PIPES_MAX + 2 * pipesOpenedAhead(limit) + (counts.others ?? OTHERS);
  // The common case (a limit in the thousands) needs no count.
  if (counts.held === undefined && limit - MOST_HELD >= later + requested * perTask) return { concurrency: requested };
  const held = counts.held ?? heldDescriptors(limit) ?? HELD_UNKNOWN;
  const fits = Math.floor((limit - held - later) / perTask);
  if (fits < 1) {
    const needed = held + later + perTask;
    throw new TaskqError(
      "OPEN_FILE_LIMIT",
      `the open-file limit (ulimit -n) is ${limit}, too low to run a task: taskq holds ${held} files and needs ${needed - held} more for one; raise it to ${needed} at least (ulimit -n 1024, say)`,
      { exitCode: 1 },
    );
  }
  if (requested <= fits) return { concurrency: requested };
  return {
    concurrency: fits,
    note: `concurrency ${requested} is more than ${limit} open files allow (ulimit -n): at most ${fits === 1 ? "1 task runs" : `${fits} tasks run`} at once`,
  };
}

/** Pipes the FIFO pool keeps open ahead of the next tasks: none under a low open-file limit. */
export function pipesOpenedAhead(limit = openFileLimit()): number {
  return limit === undefined || limit >= AHEAD_MIN_LIMIT ? PIPES_AHEAD : 0;
}

/** Descriptors held for a moment that LATER sets aside already (see holdBriefly): not counted as held. */
let brieflyHeld = 0;

/**
 * Says that `count` descriptors are held until the function returned is called: those of a
 * spawn that LATER sets aside already (the FIFO pool's mkfifo, which `taskq run` starts while it
 * reads the file). Counted as held as well, they were set aside twice, and a run counted while
 * its mkfifo ran (on a loaded machine) ran fewer tasks at once than its `--dry-run` said.
 */
export function holdBriefly(count: number): () => void {
  brieflyHeld += count;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    brieflyHeld -= count;
  };
}

let knownLimit: number | null | undefined;

/** The soft limit on open files from /proc/self/limits, or undefined (unlimited, or unknown). Read once. */
function openFileLimit(): number | undefined {
  if (knownLimit === undefined) {
    try {
      const match = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
      knownLimit = match === null ? null : Number(match[1]);
    } catch {
      knownLimit = null;
    }
  }
  return knownLimit ?? undefined;
}

/**
 * Descriptors this process holds below `limit` (one inherited above it takes no room: new
 * ones get the lowest free number), or undefined without /proc.
 */
function heldDescriptors(limit: number): number | undefined {
  try {
    let held = 0;
    for (const name of readdirSync("/proc/self/fd")) if (Number(name) < limit) held++;
    return Math.max(0, held - 1 - brieflyHeld); // less the listing's own, closed by now
  } catch {
    return undefined;
  }
}
