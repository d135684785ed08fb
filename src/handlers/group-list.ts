import { closeSync, constants, ftruncateSync, openSync, unlinkSync, writeSync } from "node:fs";

/**
 * Lines appended before the list is written again with only the groups still running (or
 * twice as many as those: see #append).
 */
const COMPACT_AFTER_LINES = 4096;

/**
 * The list's first line. An empty list is one taskq emptied as it exited as it should (see
 * discard): the guard stops nothing then, whereas a list with no group yet is still a
 * reason to look for processes by TASKQ_PID (a task whose spawn had not returned).
 */
const HEADER = "#taskq\n";

/**
 * The guard's list of running task groups (see group-guard.ts), kept in a file that only
 * grows: "+PGID" when a group starts, "-PGID" when it is gone; replayed in order, the
 * groups whose last line is "+" are the running ones (a pgid used again is listed again).
 * An append is one write(2), and wakes no one. Every COMPACT_AFTER_LINES lines the file is
 * written again with only the running groups (every twice as many lines as groups run, when
 * more than half of COMPACT_AFTER_LINES run at once), so the guard never replays more than a
 * few thousand lines, or twice the running groups (a worker lists a group per task, for weeks).
 *
 * The file is only ever written through one descriptor, which the guard shares (see
 * `descriptor`): its name may be deleted under us (a task's `rm -rf "$TMPDIR"/*`) and the
 * guard still reads what taskq wrote. So compacting rewrites the same file in place, never
 * a new one renamed over it: the running groups from offset 0, then a truncation. A taskq
 * killed between the two leaves them followed by the end of the old lines, starting mid-line
 * (digits, which the guard ignores): replayed, those lines repeat the last word on each
 * group they name, so the list still says what runs.
 *
 * add() and the constructor throw what the file system throws (a full disk); a deferred
 * write that fails (see remove) calls `onFailure`. The caller stops guarding then.
 */
export class GroupList {
  readonly #groups = new Set<number>();
  readonly #onFailure: (error: unknown) => void;
  #fd: number | undefined;
  /** Where the next line goes: taskq writes at known offsets (no O_APPEND, see #compact). */
  #size = 0;
  #lines = 0;
  /** "-PGID" lines not yet written (see remove), and how many. */
  #removed = "";
  #removedCount = 0;
  #flushScheduled = false;

  /** Creates `file` (it must not exist), readable by this user only. */
  constructor(
    readonly file: string,
    onFailure: (error: unknown) => void = () => undefined,
  ) {
    this.#onFailure = onFailure;
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeAll(fd, HEADER, 0);
    } catch (error) {
      closeSync(fd);
      unlinkQuietly(file);
      throw error;
    }
    this.#fd = fd;
    this.#size = HEADER.length;
  }

  /** The groups listed as running, for a list that takes this one's place (see group-guard.ts). */
  get groups(): ReadonlySet<number> {
    return this.#groups;
  }

  /** The list's descriptor (write-only), for the guard to hold; undefined once discarded. */
  get descriptor(): number | undefined {
    return this.#fd;
  }

  /** Lists a group at once: from here on, a guard acting on the list stops it. */
  add(pgid: number): void {
    this.#groups.add(pgid);
    const lines = `${this.#removed}+${pgid}\n`;
    const count = this.#removedCount + 1;
    this.#removed = "";
    this.#removedCount = 0;
    this.#append(lines, count);
  }

  /**
   * Takes the group off with the next add(), or at the end of this turn of the event loop:
   * at -j N the next task starts in the same turn, so one write does both (two writes per
   * task cost ~3% of taskq's CPU in a run of 1,000 `true` tasks). Until then a guard would
   * signal a group that has just ended: harmless, as its pgid is not used again that soon.
   */
  remove(pgid: number): void {
    if (!this.#groups.delete(pgid)) return;
    this.#removed += `-${pgid}\n`;
    this.#removedCount++;
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flushRemoved()).unref();
  }

  /**
   * Empties, closes and removes the file: a guard that finds its list empty (or gone) stops
   * nothing. Emptied through the descriptor, as the guard reads it whatever became of the
   * name. Never throws.
   */
  discard(): void {
    this.#removed = "";
    this.#removedCount = 0;
    if (this.#fd !== undefined) {
      try {
        ftruncateSync(this.#fd, 0);
      } catch {
        // nothing more to do: the name goes below
      }
      try {
        closeSync(this.#fd);
      } catch {
        // closed already
      }
      this.#fd = undefined;
    }
    unlinkQuietly(this.file);
  }

  #flushRemoved(): void {
    this.#flushScheduled = false;
    if (this.#removedCount === 0) return;
    const lines = this.#removed;
    const count = this.#removedCount;
    this.#removed = "";
    this.#removedCount = 0;
    try {
      this.#append(lines, count);
    } catch (error) {
      this.#onFailure(error);
    }
  }

  #append(lines: string, count: number): void {
    if (this.#fd === undefined) return;
    writeAll(this.#fd, lines, this.#size);
    this.#size += lines.length; // ASCII: one byte a character
    this.#lines += count;
    // Not at a fixed count alone: with 4,096 groups or more running (-j 6000 of long tasks), the
    // list was written again, whole, at every start and end (130 MB for 6,000 tasks). Twice the
    // running groups keeps the rewrites at most one line for each line appended since.
    if (this.#lines >= Math.max(COMPACT_AFTER_LINES, 2 * this.#groups.size)) this.#compact(this.#fd);
  }

  /** Writes the running groups over the file's start, then cuts off the rest (see the class). */
  #compact(fd: number): void {
    const text = HEADER + [...this.#groups].map((pgid) => `+${pgid}\n`).join("");
    writeAll(fd, text, 0);
    ftruncateSync(fd, text.length);
    this.#size = text.length;
    this.#lines = this.#groups.size;
  }
}

/** Writes all of `text` (ASCII) at `position`, however short each write(2) is. */
function writeAll(fd: number, text: string, position: number): void {
  const bytes = Buffer.from(text, "latin1");
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

export function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}
