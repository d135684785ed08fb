import { spawn } from "node:child_process";
import { closeSync, constants, lstatSync, mkdtempSync, openSync, readdirSync, renameSync, rmSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { processExists } from "../process-exists.js";
import { GUARD_LIST_PREFIX } from "./group-guard.js";
import { unlinkQuietly } from "./group-list.js";
import { holdBriefly, pipesOpenedAhead } from "./open-file-limit.js";
import { errorCode, failedRoots, LEGACY_STALE_MS, legacyOwnerPid, makeInTempRoot, nextTempRoot, noRoom, noteTempRootMove, ownerPid, ownerTag, tempRoot, type RootFailure } from "./temp-root.js";

/** The two ends of one pipe: the task writes to `write`, taskq reads `read` (non-blocking). */
export interface PipeEnds {
  read: number;
  write: number;
}

/** FIFOs made by the first mkfifo; each later batch doubles, up to MAX_BATCH. */
const FIRST_BATCH = 8;
const MAX_BATCH = 512;
const MAX_FAILURES = 2;
/** The folder's name: `taskq-fifo-<pid>-n<PID namespace>-<random>`, so a later taskq can remove what a killed one left (see ownerTag). */
const PREFIX = "taskq-fifo-";
/** What a run did not use, kept for the next (see FifoPool): `taskq-fifo-spare-<random>`. */
const SPARE_PREFIX = `${PREFIX}spare-`;
/** Spare folders kept in one root at most (one per taskq that ran at the same time). */
const MAX_SPARES = 4;
/** FIFOs kept in a spare folder at most: enough for a short run, few enough to list fast. */
const MAX_SPARE_FIFOS = 64;
/** A guard list left this long by a taskq that is gone is no one's (see staleGuardList). */
const STALE_GUARD_LIST_MS = 60_000;

/**
 * Real pipes for tasks' stdout and stderr. Node's `stdio: "pipe"` gives a child Unix
 * sockets, and Linux will not open a socket again by name: `echo x > /dev/stderr` or
 * `tee /dev/stdout`, common in CI scripts, fail with ENXIO. A FIFO is a pipe that can be
 * reopened, so each stream gets one: made ahead by `mkfifo` in batches (Node cannot make
 * one itself), in a private folder under the temp dir, opened at both ends and unlinked
 * (its ends stay valid; /proc/self/fd/N still reopens it). Opened ahead, a task's FIFOs
 * are unlinked just after it starts, off the path from one task's end to the next one's
 * start (see openAhead); the folder is this user's only (0700) all along.
 *
 * A taskq killed outright (SIGKILL) leaves its folder behind: the next pool removes the
 * folders of processes that no longer exist.
 *
 * FIFOs a run did not use are kept for the next run: at exit the folder is renamed
 * `taskq-fifo-spare-*`, and the next pool in the same root claims it by renaming it to
 * its own name (atomic: two taskqs cannot claim one folder), so a short run needs no
 * mkfifo before its first task. A folder is claimed only if it is a directory of this
 * user with mode 0700, and only its FIFOs are used; at most MAX_SPARES are kept.
 *
 * When FIFOs cannot be made (no mkfifo, no writable temp dir), take() answers undefined
 * from then on and tasks get Node's sockets (which cannot be reopened by name).
 */
export class FifoPool {
  readonly #root: string | undefined;
  /** The root the folder is in. */
  #rootDir: string | undefined;
  #dir: string | undefined;
  #ready: string[] = [];
  /** FIFOs opened ahead (see openAhead), not yet unlinked; handed out before any in #ready. */
  #opened: Array<{ file: string; ends: PipeEnds }> = [];
  /** FIFOs handed out by take() from #opened, unlinked by the next openAhead (or at exit). */
  #toUnlink: string[] = [];
  #next = 0;
  #batch = FIRST_BATCH;
  #filling: Promise<void> | undefined;
  /** FIFOs the mkfifo under way is making. */
  #making = 0;
  /** Failures since the last success; at MAX_FAILURES, FIFOs are given up for good. */
  #failures = 0;
  /** What went wrong last, for the note a run prints when it falls back to sockets. */
  #problem = "";
  #exitHook = false;
  /** Pipes kept open ahead (see openAhead): two tasks' worth, none under a low open-file limit. */
  #ahead: number | undefined;
  /** Pipes the run has yet to take, as expect() was told (undefined: not told); none are opened ahead past them. */
  #expectedLeft: number | undefined;
  /** The temp folders left for want of room (see nextTempRoot), and why ("/dev/shm (ENOSPC)"): said once FIFOs are made elsewhere. */
  #left: RootFailure[] = [];
  /** What could not be made where the FIFOs were first to go ("a folder for tasks' FIFOs"), for that note. */
  #leftFor = "";
  /** The root the last move note named (see #noteMove): a later move to another is told too. */
  #moveNoted: string | undefined;

  /** `root`: where the folder goes; by default TMPDIR if set, else /dev/shm, else the temp dir. */
  constructor(root?: string) {
    this.#root = root;
  }

  /** Why FIFOs were given up for good ("cannot make a folder in /x: ENOENT"), or undefined while they work. */
  get problem(): string | undefined {
    return this.#failures >= MAX_FAILURES ? this.#problem : undefined;
  }

  /** Pipes opened ahead and not yet handed out (see openAhead). */
  get openedAhead(): number {
    return this.#opened.length;
  }

  /** `count` pipes (one for stdout and stderr together, or one each), or undefined when this machine cannot give FIFOs. */
  take(count: 1): Promise<[PipeEnds] | undefined>;
  take(count?: 2): Promise<[PipeEnds, PipeEnds] | undefined>;
  take(count: 1 | 2): Promise<[PipeEnds] | [PipeEnds, PipeEnds] | undefined>;
  async take(count: 1 | 2 = 2): Promise<PipeEnds[] | undefined> {
    if (this.#expectedLeft !== undefined) this.#expectedLeft = Math.max(0, this.#expectedLeft - count);
    if (this.#opened.length >= count) {
      const taken = this.#opened.splice(this.#opened.length - count, count);
      for (const { file } of taken) this.#toUnlink.push(file);
      return taken.map(({ ends }) => ends); // openAhead makes the next batch when it is time
    }
    while (this.#failures < MAX_FAILURES) {
      while (this.#ready.length < count && this.#failures < MAX_FAILURES) await this.#fill();
      if (this.#failures >= MAX_FAILURES) break;
      const pipes: PipeEnds[] = [];
      for (let i = 0; i < count; i++) {
        const ends = openFifo(this.#ready.pop() as string);
        if (ends === undefined) break;
        pipes.push(ends);
      }
      if (pipes.length === count) {
        this.#failures = 0;
        this.#fillIfLow();
        return pipes;
      }
      for (const ends of pipes) closeEnds(ends);
      this.#fail(`cannot open a FIFO in ${this.#dir ?? this.#rootDir ?? "the temp folder"}`);
    }
    return undefined;
  }

  /** Starts making the first batch now, so the first task need not wait for mkfifo. */
  prepare(): void {
    if (this.#ready.length === 0 && this.#failures < MAX_FAILURES) void this.#fill();
  }

  /**
   * The run will take about `count` pipes: the next batch makes what those at hand do not
   * cover (up to MAX_BATCH) in one mkfifo, made as soon as the batch in the making is done,
   * instead of batches doubling up to it. Each mkfifo is a fork on taskq's main thread that
   * holds back every task start and timer meanwhile (a 200-task run made 6 of them, ~5 ms
   * each where a spawn is slow).
   */
  expect(count: number): void {
    this.#expectedLeft = count;
    const missing = count - this.#ready.length - this.#opened.length - this.#making;
    this.#batch = Math.min(MAX_BATCH, Math.max(this.#batch, missing));
    if (this.#failures >= MAX_FAILURES) return;
    if (this.#filling === undefined) this.#fillIfLow();
    else void this.#filling.then(() => this.#fillIfLow());
  }

  /**
   * At exit: keeps the FIFOs not used for the next run (see the class), or removes the
   * folder when there are none worth keeping.
   */
  retire(): void {
    this.#unlinkTaken();
    // FIFOs opened ahead are still in the folder: closed, they are spares like the rest.
    for (const { file, ends } of this.#opened.splice(0).reverse()) {
      closeEnds(ends);
      this.#ready.push(file);
    }
    const dir = this.#dir;
    // Not kept in a folder it moved to for want of room (see #leave): the next taskq starts in the first, and tidies that alone.
    if (dir === undefined || this.#rootDir === undefined || this.#ready.length === 0 || this.#left.length > 0) return this.dispose();
    try {
      // #ready is taken from its end: the FIFOs at its start go.
      for (const file of this.#ready.splice(0, Math.max(0, this.#ready.length - MAX_SPARE_FIFOS))) unlinkSync(file);
      const spare = path.join(this.#rootDir, `${SPARE_PREFIX}${randomName()}`);
      renameSync(dir, spare);
      this.#dir = undefined;
      this.#ready = [];
      // Several taskqs ending at once would each leave one: counted after the rename, so of
      // two that race, the later to count sees both and one goes (both, at worst: fewer).
      if (spareFolders(this.#rootDir) > MAX_SPARES) rmSync(spare, { recursive: true, force: true });
    } catch {
      this.dispose();
    }
  }

  /** Removes the folder and the FIFOs not yet used, and closes the pipes opened ahead. */
  dispose(): void {
    this.#unlinkTaken();
    this.#closeOpened();
    if (this.#dir === undefined) return;
    try {
      rmSync(this.#dir, { recursive: true, force: true });
    } catch {
      // a leftover folder in the temp dir is not worth failing the run for
    }
    this.#dir = undefined;
    this.#ready = [];
  }

  /**
   * Unlinks the FIFOs take() handed out since the last call, and opens the next tasks'
   * (up to pipesOpenedAhead()), for take() to hand out with no syscall. The handler calls it
   * once a task has started, when taskq often waits for a task to end anyway, rather than
   * between one task's end and the next one's start, where each syscall delays the next
   * task (1,000 `true` tasks at -j 2: ~45 µs less between a task's exit and the next
   * spawn). No more than the run is still expected to take (see expect): a run's last tasks,
   * and a one-task run's, open none they would only close again at exit (~0.8 ms of a
   * one-task run where a spawn costs ~1 ms). A pipe past those (a retry) is opened when
   * taken. Never throws: take() finds what went wrong.
   */
  openAhead(): void {
    this.#unlinkTaken();
    const ahead = Math.min((this.#ahead ??= pipesOpenedAhead()), this.#expectedLeft ?? Infinity);
    while (this.#opened.length < ahead && this.#ready.length > 0) {
      const file = this.#ready.pop() as string;
      const ends = openEnds(file);
      if (ends === undefined) {
        unlinkQuietly(file);
        return;
      }
      this.#opened.push({ file, ends });
    }
    this.#fillIfLow();
  }

  #unlinkTaken(): void {
    for (const file of this.#toUnlink.splice(0)) unlinkQuietly(file);
  }

  #closeOpened(): void {
    for (const { ends } of this.#opened.splice(0)) closeEnds(ends);
  }

  /** Makes the next batch before this one runs out, so no task waits for mkfifo. */
  #fillIfLow(): void {
    if (this.#ready.length + this.#opened.length < this.#batch / 4) void this.#fill();
  }

  /**
   * Something went wrong (no temp dir, no mkfifo, the folder removed under us by a temp
   * cleaner): start again in a new folder, once, before falling back to sockets for good.
   */
  #fail(problem: string): void {
    this.#failures++;
    this.#problem = problem;
    this.dispose();
  }

  #fill(): Promise<void> {
    this.#filling ??= this.#make().finally(() => {
      this.#filling = undefined;
    });
    return this.#filling;
  }

  async #make(): Promise<void> {
    let dir: string;
    const root = (this.#rootDir ??= this.#root ?? tempRoot());
    try {
      if (this.#dir === undefined && this.#next === 0) {
        this.#hookExit();
        const spares = tidyRoot(root);
        if (this.#claim(root, spares)) return;
      }
      dir = this.#dir ??= this.#makeFolder();
    } catch (error) {
      const code = errorCode(error);
      // After a move, where the folder it moved to failed too (for want of room, or another reason): each, with its reason.
      const failed = [...this.#left, { root: this.#rootDir, code }];
      this.#fail(this.#left.length === 0 ? `cannot make a folder in ${this.#rootDir}: ${code}` : `cannot make ${this.#leftFor} in ${failedRoots(failed)}`);
      return;
    }
    /** The folder's root: another than `root` where #makeFolder moved on. */
    const dirRoot = this.#rootDir;
    this.#hookExit();
    const names: string[] = [];
    for (let i = 0; i < this.#batch; i++) names.push(path.join(dir, String(this.#next++)));
    this.#batch = Math.min(this.#batch * 2, MAX_BATCH);
    this.#making = names.length;
    const failure = await new Promise<{ why: string; ran: boolean } | undefined>((resolve) => {
      // Its stderr says why it failed ("No space left on device"), which the run's note passes on: an exit code alone does not.
      const child = spawn("mkfifo", ["-m", "600", "--", ...names], { stdio: ["ignore", "ignore", "pipe"] });
      // Its stderr pipe, a spawn's pipe that the open-file count sets aside already, until it closes.
      const release = holdBriefly(1);
      let said = "";
      child.stderr.setEncoding("utf8").on("data", (text: string) => {
        if (said.length < 1024) said += text;
      });
      child.on("error", (error: NodeJS.ErrnoException) => {
        release();
        resolve({ why: `cannot run mkfifo: ${error.code ?? error.message}`, ran: false });
      });
      child.on("close", (code) => {
        release();
        const why = said.split("\n", 1)[0]!.replace(/^mkfifo: /, "").trim();
        resolve(code === 0 ? undefined : { why: `mkfifo failed in ${dir} (exit ${code}${why === "" ? "" : `: ${why}`})`, ran: true });
      });
    });
    this.#making = 0;
    if (this.#dir !== dir) return; // disposed meanwhile
    if (failure === undefined) {
      this.#ready.push(...names);
      this.#noteMove();
      return;
    }
    // No room for them in this root (a tmpfs out of inodes, a disk full): the next batch is made in the next temp folder.
    const noRoomCode = this.#root === undefined && failure.ran ? roomProblem(dir) : undefined;
    if (noRoomCode !== undefined && this.#leave(dirRoot, "FIFOs for tasks' output", noRoomCode)) this.dispose();
    else this.#fail(failure.why);
  }

  /**
   * FIFOs cannot be made in `root` for want of room: the next temp folder that taskq can write becomes the pool's root,
   * where there is one (true), and `root` is told of once they are made there (see #noteMove); else nothing changes (false).
   */
  #leave(root: string, what: string, code: string): boolean {
    const next = nextTempRoot([...this.#left.map((left) => left.root), root]);
    if (next === undefined) return false;
    if (this.#left.length === 0) this.#leftFor = what;
    if (!this.#left.some((left) => left.root === root)) this.#left.push({ root, code });
    this.#rootDir = next;
    return true;
  }

  /**
   * FIFOs were made: where it is elsewhere than the root they were first to go in (see #leave), the run says so, once for
   * each folder they moved to (moved on again, from /tmp filled during the run, the note names where they are now).
   */
  #noteMove(): void {
    if (this.#left.length === 0 || this.#moveNoted === this.#rootDir || this.#left.some((left) => left.root === this.#rootDir)) return;
    this.#moveNoted = this.#rootDir;
    noteTempRootMove(`cannot make ${this.#leftFor} in ${failedRoots(this.#left)}: they are made in ${this.#rootDir} instead`);
  }

  /**
   * A new folder in the root. Where none can be made in the default root for want of room (a full
   * /dev/shm, TMPDIR's disk full: see noRoom), in the next temp folder that takes one (see makeInTempRoot), the folders
   * left told of as #leave tells of them; a root given is kept. Throws the last folder's error where none is made, that folder the root.
   */
  #makeFolder(): string {
    const make = (root: string): string => mkdtempSync(path.join(root, `${PREFIX}${ownerTag()}`));
    if (this.#root !== undefined) return make(this.#rootDir as string);
    const made = makeInTempRoot(make, this.#rootDir, this.#left);
    const left = made.made === undefined ? made.failed.slice(0, -1) : made.failed;
    if (this.#left.length === 0 && left.length > 0) this.#leftFor = "a folder for tasks' FIFOs";
    this.#left = left;
    if (made.made === undefined) {
      this.#rootDir = made.failed.at(-1)!.root;
      throw made.error;
    }
    this.#rootDir = made.root;
    return made.made;
  }

  #hookExit(): void {
    if (this.#exitHook) return;
    this.#exitHook = true;
    process.on("exit", () => this.retire());
  }

  /**
   * Claims a spare folder (see the class): true when it holds at least one FIFO.
   * Spares beyond MAX_SPARES - 1 are removed, so folders do not pile up.
   */
  #claim(root: string, spares: string[]): boolean {
    let kept = 0;
    let claimed = false;
    for (const spare of spares) {
      const from = path.join(root, spare);
      if (!claimed) {
        const to = path.join(root, `${PREFIX}${ownerTag()}${randomName()}`);
        try {
          renameSync(from, to); // fails if another taskq claimed it first
        } catch {
          continue;
        }
        if (!privateFolder(to)) {
          try {
            renameSync(to, from); // not one of ours: give it back as it was
          } catch {
            // gone meanwhile
          }
          continue;
        }
        claimed = true;
        this.#dir = to;
        const numbers = readdirSync(to, { withFileTypes: true })
          .filter((entry) => entry.isFIFO() && /^\d+$/.test(entry.name))
          .map((entry) => Number(entry.name));
        this.#next = numbers.length === 0 ? 0 : Math.max(...numbers) + 1;
        // Taken from the end: the lowest numbers first, as in a batch.
        this.#ready = numbers.sort((a, b) => b - a).map((n) => path.join(to, String(n)));
      } else if (++kept >= MAX_SPARES && privateFolder(from)) {
        try {
          rmSync(from, { recursive: true, force: true });
        } catch {
          // another taskq's to remove, or gone
        }
      }
    }
    return this.#ready.length > 0;
  }
}

/**
 * Removes the FIFO folders of taskq processes that are gone (and guard lists that both a
 * taskq and its guard left: see staleGuardList), and lists the spare folders (see
 * FifoPool). Only what a taskq of this PID namespace made is looked at (see ownerTag).
 * Never throws.
 */
function tidyRoot(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const spares: string[] = [];
  for (const name of names) {
    if (name.startsWith(GUARD_LIST_PREFIX)) {
      if (staleGuardList(root, name)) unlinkQuietly(path.join(root, name));
      continue;
    }
    if (!name.startsWith(PREFIX)) continue;
    if (name.startsWith(SPARE_PREFIX)) {
      spares.push(name);
      continue;
    }
    // Only a folder whose owner can be checked (of this PID namespace): another's live taskq may be
    // using it. One named the older way, by its pid alone, once it is an hour old too.
    const pid = ownerPid(name, PREFIX) ?? (olderThan(path.join(root, name), LEGACY_STALE_MS) ? legacyOwnerPid(name, PREFIX) : undefined);
    if (pid === undefined || pid === process.pid || processExists(pid)) continue;
    try {
      rmSync(path.join(root, name), { recursive: true, force: true });
    } catch {
      // someone else's, or already gone
    }
  }
  return spares;
}

/**
 * A guard's list whose taskq is gone and was last written a minute ago: its guard reads it
 * the moment taskq dies and removes it, so it is one whose guard was killed too (a whole
 * container stopped). A younger one may be about to be read.
 */
function staleGuardList(root: string, name: string): boolean {
  const file = path.join(root, name);
  const pid = ownerPid(name, GUARD_LIST_PREFIX) ?? (olderThan(file, LEGACY_STALE_MS) ? legacyOwnerPid(name, GUARD_LIST_PREFIX) : undefined);
  if (pid === undefined || pid === process.pid || processExists(pid)) return false;
  return olderThan(file, STALE_GUARD_LIST_MS);
}

/** How many spare folders `root` holds (0 where it cannot be read). */
function spareFolders(root: string): number {
  try {
    return readdirSync(root).filter((name) => name.startsWith(SPARE_PREFIX)).length;
  } catch {
    return 0;
  }
}

/** Whether `file` was last changed over `ms` ago (false when it cannot be looked at). */
function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}

/** A directory (not a link) of this user's that no one else may enter, as mkdtemp makes them. */
function privateFolder(dir: string): boolean {
  try {
    const stats = lstatSync(dir);
    return stats.isDirectory() && stats.uid === process.getuid?.() && (stats.mode & 0o777) === 0o700;
  } catch {
    return false;
  }
}

function randomName(): string {
  return Math.random().toString(36).slice(2, 10).padEnd(8, "0");
}

/**
 * Where mkfifo failed in `dir`: whether for want of room, by the code a file made there meets (ENOSPC, EDQUOT), as a
 * FIFO needs what an empty file does (an inode); not by mkfifo's message, which the locale words.
 */
function roomProblem(dir: string): string | undefined {
  const probe = path.join(dir, `.room-${randomName()}`);
  try {
    closeSync(openSync(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
    unlinkQuietly(probe);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return noRoom(code) ? code : undefined;
  }
}

/** Opens both ends of a FIFO, then unlinks it. */
function openFifo(file: string): PipeEnds | undefined {
  try {
    return openEnds(file);
  } finally {
    unlinkQuietly(file);
  }
}

/** Opens both ends of a FIFO: the reader first, so the writer's open does not block. */
function openEnds(file: string): PipeEnds | undefined {
  let read: number | undefined;
  try {
    read = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    return { read, write: openSync(file, constants.O_WRONLY) };
  } catch {
    if (read !== undefined) closeSync(read);
    return undefined;
  }
}


export function closeEnds(ends: PipeEnds): void {
  for (const fd of [ends.read, ends.write]) {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
  }
}

let shared: FifoPool | undefined;

/** Starts making the FIFOs of the first tasks (`taskq run` calls it while it reads the workflow). */
export function prepareTaskPipes(): void {
  fifoPool().prepare();
}

/** The run will need about `count` pipes (see FifoPool.expect). */
export function expectTaskPipes(count: number): void {
  fifoPool().expect(count);
}

/** The process's pool, shared by every handler. */
export function fifoPool(): FifoPool {
  return (shared ??= new FifoPool());
}
