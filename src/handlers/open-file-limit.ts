import { readFileSync } from "node:fs";

/** Descriptors left for taskq itself: stdio, libuv, the FIFO folder, scans of /proc, a database's sockets. */
const RESERVED = 64;

/** What the shell handler's running tasks may use of the open-file limit, and why it is less than asked. */
export interface FittedConcurrency {
  concurrency: number;
  /** Set when `concurrency` had to be lowered: a note for the user. */
  note?: string;
}

/**
 * Lowers `requested` to the tasks this process can run at once within its open-file limit
 * (`ulimit -n`; Node raises the soft limit to the hard one as it starts). Each running task
 * holds its log and its pipes' read ends, and while it starts, their write ends: three
 * descriptors, four when stdout and stderr are apart (not `merged`). Past the limit, tasks
 * would fail to start (EMFILE) and end up as dead letters through no fault of their own.
 * Where the limit cannot be read (not Linux), `requested` stands.
 */
export function fitConcurrencyToOpenFiles(requested: number, merged: boolean, limit = openFileLimit()): FittedConcurrency {
  if (limit === undefined) return { concurrency: requested };
  const fits = Math.max(1, Math.floor((limit - RESERVED) / (merged ? 3 : 4)));
  if (requested <= fits) return { concurrency: requested };
  return {
    concurrency: fits,
    note: `concurrency ${requested} is more than ${limit} open files allow (ulimit -n): at most ${fits} tasks run at once`,
  };
}

/** The soft limit on open files from /proc/self/limits, or undefined (unlimited, or unknown). */
function openFileLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}
