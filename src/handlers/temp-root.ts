import { accessSync, constants, readlinkSync, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const SHM = "/dev/shm";

/** Where taskq looks when TMPDIR names no folder it can write, in this order: the system's usual ones. */
const FALLBACK_ROOTS = ["/tmp", SHM];

/**
 * Where taskq's FIFOs and its guard's list go: TMPDIR when it is set; else /dev/shm where
 * it is a writable folder (Linux: tmpfs, so making and unlinking thousands of FIFOs costs
 * no disk writes; in /tmp on ext4 they slowed a 10k-task run by a quarter); else the temp dir.
 * A TMPDIR that names no folder taskq can write (a CI's, not there on this runner) gives way to
 * /tmp, else /dev/shm (see tempRootNote): without it, tasks would get no FIFOs and no guard.
 */
export function tempRoot(): string {
  return choice().root;
}

/** Where TMPDIR named no folder taskq could write and another was used, a note that says so; else undefined. */
export function tempRootNote(): string | undefined {
  return choice().note;
}

let chosen: { tmpdir: string | undefined; root: string; note?: string } | undefined;

/** The errors that say a folder has no room left (its file system full, or the user's quota), the only ones that move what taskq makes to another. */
const NO_ROOM = new Set(["ENOSPC", "EDQUOT"]);

/** Whether `code` says the file system had no room left (see NO_ROOM): another temp folder may have some. */
export function noRoom(code: string | undefined): boolean {
  return code !== undefined && NO_ROOM.has(code);
}

/**
 * Where something could not be made in the temp folders `tried` for want of room (a full /dev/shm, or
 * TMPDIR's disk full: see noRoom), the next of the temp dir's usual folders that taskq can write and that
 * is none of them (compared as resolved paths: TMPDIR=/a//b is /a/b), or undefined where none is left.
 * Each maker moves on its own (FIFOs can be made in a tmpfs full by size, a guard's list cannot), and says
 * so with noteTempRootMove once it made something there.
 */
export function nextTempRoot(tried: readonly string[]): string | undefined {
  const done = new Set(tried.map(resolved));
  return [tmpdir(), ...FALLBACK_ROOTS].find((folder) => !done.has(resolved(folder)) && usable(folder) === undefined);
}

/** A temp folder something could not be made in, and the error's code (see errorCode). */
export interface RootFailure {
  root: string;
  code: string;
}

/**
 * What `make` makes in `root` or, where it throws for want of room (see noRoom), in the next temp folder that takes it (see
 * nextTempRoot), each tried once: what it made, where, and the folders it could not be made in first (`failed`); else, made
 * nowhere, the folders tried and their errors (the last one's not for want of room, or no folder left), and that last error.
 * `failed`: folders given up already (tried in no more), and `root` undefined, the next after them.
 */
export function makeInTempRoot<T>(
  make: (root: string) => T,
  root: string | undefined,
  failed: readonly RootFailure[] = [],
): { made: T; root: string; failed: RootFailure[] } | { made?: undefined; failed: RootFailure[]; error?: unknown } {
  const failures = [...failed];
  let last: unknown;
  for (let next = root ?? nextTempRoot(failures.map((failure) => failure.root)); next !== undefined; next = nextTempRoot(failures.map((failure) => failure.root))) {
    try {
      return { made: make(next), root: next, failed: failures };
    } catch (error) {
      last = error;
      failures.push({ root: next, code: errorCode(error) });
      if (!noRoom(failures.at(-1)!.code)) break;
    }
  }
  return { failed: failures, error: last };
}

/** The folders something could not be made in, and why, for a note: "/dev/shm (ENOSPC), nor in /tmp (ENOSPC)". */
export function failedRoots(failed: readonly RootFailure[]): string {
  return failed.map(({ root, code }) => `${root} (${code})`).join(", nor in ");
}

/** Every folder taskq may make its files in (see nextTempRoot), for the guard to tidy the FIFO folder wherever it is. */
export function tempRoots(): string[] {
  return [...new Set([tempRoot(), tmpdir(), ...FALLBACK_ROOTS].map(resolved))];
}

const moves: string[] = [];

/** Records what moved where (see nextTempRoot), for the run to say (once: see the shell handler's sayTempRootMoves): called once something was made in the new folder. */
export function noteTempRootMove(note: string): void {
  moves.push(note);
}

/** What moved to another temp folder for want of room (see nextTempRoot), in the order it moved. */
export function tempRootMoveNotes(): readonly string[] {
  return moves;
}

/** `folder` with its links resolved where it can be, else normalized. */
function resolved(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}

function choice(): { root: string; note?: string } {
  const variable = process.env.TMPDIR;
  if (chosen !== undefined && chosen.tmpdir === variable) return chosen;
  chosen = { tmpdir: variable, ...choose(variable) };
  return chosen;
}

function choose(variable: string | undefined): { root: string; note?: string } {
  if (!variable) return { root: usable(SHM) === undefined ? SHM : tmpdir() };
  const root = tmpdir();
  const problem = usable(root);
  if (problem === undefined) return { root };
  const fallback = FALLBACK_ROOTS.find((folder) => folder !== root && usable(folder) === undefined);
  // Nowhere to go: TMPDIR's, as before, and the notes of what then fails (no FIFOs, no guard) say why.
  if (fallback === undefined) return { root };
  return { root: fallback, note: `TMPDIR ${root} is not a folder taskq can write (${problem}): its FIFOs and orphan guard's list go in ${fallback}` };
}

/** Why `folder` is not a folder taskq can make files in ("ENOENT", "not a folder"); undefined where it is. */
function usable(folder: string): string | undefined {
  try {
    if (!statSync(folder).isDirectory()) return "not a folder";
    accessSync(folder, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return errorCode(error);
  }
}

/** An fs error's code ("ENOSPC"), or the error as text where it has none: for a note that names the path already. */
export function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}

let namespace: string | undefined;

/** This process's PID namespace ("4026531836"), or "" where /proc does not say. */
function pidNamespace(): string {
  if (namespace === undefined) {
    try {
      namespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "";
    } catch {
      namespace = "";
    }
  }
  return namespace;
}

/**
 * `<pid>-n<PID namespace>-`: what follows the prefix of taskq's files in the temp root, so
 * that a later taskq can tell whether their owner is gone. A pid means something only in
 * its own namespace: the temp root may be shared with another container (a /tmp volume,
 * `--ipc=host`'s /dev/shm), where a live taskq's pid is unused here, or someone else's.
 */
export function ownerTag(): string {
  return `${process.pid}-n${pidNamespace()}-`;
}

/**
 * The owner's pid in a name made with ownerTag after `prefix`, where it can be checked
 * with kill(pid, 0): the owner is of this PID namespace. Else undefined: another
 * namespace's, a name from a taskq that did not say (older ones), or no namespace known here.
 */
/**
 * The pid in a name a taskq made before names carried the PID namespace (`<pid>-<random>`), or
 * where the namespace was unknown (`<pid>-n-`): its owner may be of another namespace, so only
 * what is also old (see LEGACY_STALE_MS) is judged by it.
 */
export function legacyOwnerPid(name: string, prefix: string): number | undefined {
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d+)-(?:n-)?(?!n\d+-)/.exec(name.slice(prefix.length));
  const pid = Number(match?.[1]);
  return match !== null && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** How old a legacy-named folder or list must be before a gone owner's is removed: no live taskq leaves its own untouched this long. */
export const LEGACY_STALE_MS = 60 * 60_000;

export function ownerPid(name: string, prefix: string): number | undefined {
  const match = /^(\d+)-n(\d+)-/.exec(name.slice(prefix.length));
  if (match === null || !name.startsWith(prefix) || match[2] !== pidNamespace()) return undefined;
  const pid = Number(match[1]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}
