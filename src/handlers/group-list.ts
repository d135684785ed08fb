import { closeSync, constants, openSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";

/** Lines appended before the list is written again with only the groups still running. */
const COMPACT_AFTER_LINES = 4096;

/**
 * The guard's list of running task groups (see group-guard.ts), kept in a file that only
 * grows: "+PGID" when a group starts, "-PGID" when it is gone; replayed in order, the
 * groups whose last line is "+" are the running ones (a pgid used again is listed again).
 * An append is one write(2), and wakes no one. Every COMPACT_AFTER_LINES lines the file is
 * written again with only the running groups, so the guard never replays more than a few
 * thousand lines (a worker lists a group per task, for weeks); the new file replaces the
 * old by rename, so a taskq killed meanwhile leaves one or the other whole.
 *
 * add() and the constructor throw what the file system throws (a full disk); a deferred
 * write that fails (see remove) calls `onFailure`. The caller stops guarding then.
 */
export class GroupList {
  readonly #groups = new Set<number>();
  readonly #onFailure: () => void;
  #fd: number | undefined;
  #lines = 0;
  /** "-PGID" lines not yet written (see remove), and how many. */
  #removed = "";
  #removedCount = 0;
  #flushScheduled = false;

  /** Creates `file` (it must not exist), readable by this user only. */
  constructor(
    readonly file: string,
    onFailure: () => void = () => undefined,
  ) {
    this.#onFailure = onFailure;
    this.#fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND, 0o600);
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

  /** Closes and removes the file: a guard that finds no list stops nothing. Never throws. */
  discard(): void {
    this.#removed = "";
    this.#removedCount = 0;
    if (this.#fd !== undefined) {
      try {
        closeSync(this.#fd);
      } catch {
        // closed already
      }
      this.#fd = undefined;
    }
    try {
      unlinkSync(this.file);
    } catch {
      // gone already
    }
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
    } catch {
      this.#onFailure();
    }
  }

  #append(lines: string, count: number): void {
    if (this.#fd === undefined) return;
    writeSync(this.#fd, lines);
    this.#lines += count;
    if (this.#lines >= COMPACT_AFTER_LINES) this.#compact(this.#fd);
  }

  #compact(fd: number): void {
    const next = `${this.file}.new`;
    writeFileSync(next, [...this.#groups].map((pgid) => `+${pgid}\n`).join(""), { mode: 0o600 });
    renameSync(next, this.file);
    closeSync(fd);
    this.#fd = openSync(this.file, constants.O_WRONLY | constants.O_APPEND);
    this.#lines = this.#groups.size;
  }
}
