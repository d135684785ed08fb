import { accessSync, constants, lstatSync, readdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { TaskqError } from "../errors.js";
import { escapeControls } from "../escape-controls.js";
import { makeDirectory } from "../make-directory.js";
import { processExists, procStatFields } from "../process-exists.js";
import { folderProblem } from "./folder-problem.js";
import { fullPath, withFullPath } from "./full-path.js";

/**
 * A run folder being written holds `.taskq-active-<pid>` (its content: the host's name, then
 * the process's start time) for as long as some process writes into it: a local run for the
 * whole run, a durable worker while it runs a task of that run. `taskq prune --logs` never
 * deletes a folder whose marker names a live process of this host, or another host (it
 * cannot tell there): a task silent for longer than the age given would otherwise lose its
 * log, and whatever it writes later, to the deletion. A marker left by a taskq that was
 * SIGKILLed names a process that is gone, and is no obstacle, even once its pid is another
 * process's: the start time tells them apart.
 */
const MARKER_PREFIX = ".taskq-active-";

/**
 * Every run folder taskq writes holds this file, for good: `taskq prune --logs` deletes only
 * folders it can tell are taskq's, as durable run ids (`--run-id build-1234`) can be any name.
 */
const STAMP = ".taskq-run";
const STAMP_TEXT = "taskq run folder: taskq prune --logs deletes it once old\n";
/** What a stamp starts with, whatever version of taskq wrote it. */
const STAMP_START = "taskq run folder";

/**
 * Folders named like a run id that taskq makes (a local run's, see makeRunId, or a durable
 * run's default, see submit.ts) are taskq's too: earlier versions made them with no stamp.
 */
const LOCAL_RUN_ID = /^\d{8}-\d{6}-[0-9a-z]{4}$/;
const DEFAULT_DURABLE_RUN_ID = /^r-[0-9a-z]{8,9}-[0-9a-f]{8}$/;

/** Folders this process stamped lately: a worker stamps a run's folder once, not at each of its tasks. */
const stamped = new Set<string>();
const STAMPED_KEPT = 1000;

/**
 * Markers this process wrote, each with how many hold it and, once none does, the timer
 * that removes it (see holdLogFolder's `lingerMs`); all go at exit too.
 */
const holds = new Map<string, { count: number; timer: NodeJS.Timeout | undefined }>();
let exitHookInstalled = false;

/**
 * Marks `dir` in use by this process until the returned function is called (by every
 * holder: holds count). Makes the folder if it is missing. Never throws: a folder that
 * cannot be written fails the task's log instead, which says why.
 *
 * `lingerMs`: the marker stays this long after the last holder let go, and a new hold
 * meanwhile finds it there. A worker running a run's tasks one after the other then writes
 * and removes it once, not once per task (each a file created and removed on the log's
 * disk: 0.05 to 2 ms where that disk is slow).
 */
export function holdLogFolder(folder: string, lingerMs = 0): () => void {
  const dir = fullPath(folder);
  const marker = path.join(dir, `${MARKER_PREFIX}${process.pid}`);
  let hold = holds.get(marker);
  if (hold === undefined) {
    holds.set(marker, (hold = { count: 0, timer: undefined }));
    writeMarker(dir, marker);
  }
  if (hold.timer !== undefined) {
    clearTimeout(hold.timer);
    hold.timer = undefined;
  }
  hold.count++;
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const held of holds.keys()) removeMarker(held);
    });
  }
  const current = hold;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--current.count > 0) return;
    const remove = (): void => {
      if (holds.get(marker) !== current || current.count > 0) return;
      holds.delete(marker);
      removeMarker(marker);
    };
    if (lingerMs <= 0) remove();
    else current.timer = setTimeout(remove, lingerMs).unref();
  };
}

/** Writes this process's marker (and the stamp) again in `dir` if it holds it: the folder was deleted and made again during the run. */
export function renewLogFolderHold(folder: string): void {
  const dir = fullPath(folder);
  const marker = path.join(dir, `${MARKER_PREFIX}${process.pid}`);
  if (!holds.has(marker)) return;
  stamped.delete(dir);
  writeMarker(dir, marker);
}

function writeMarker(dir: string, marker: string): void {
  const text = markerText();
  try {
    writeFileSync(marker, text);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return;
    try {
      makeDirectory(dir);
      writeFileSync(marker, text);
    } catch {
      return; // Not writable: the task's log reports it.
    }
  }
  stamp(dir);
}

function stamp(dir: string): void {
  if (stamped.has(dir)) return;
  try {
    writeFileSync(path.join(dir, STAMP), STAMP_TEXT);
  } catch {
    return; // The marker was written: the folder was there a moment ago, and is gone or read-only now.
  }
  stamped.add(dir);
  if (stamped.size > STAMPED_KEPT) stamped.delete(stamped.values().next().value!);
}

let ownMarkerText: string | undefined;

/** The host's name, then this process's start time where /proc tells it (see markerIsLive). */
function markerText(): string {
  if (ownMarkerText === undefined) {
    const started = processStartTime("self");
    ownMarkerText = `${hostname()}\n${started === undefined ? "" : `${started}\n`}`;
  }
  return ownMarkerText;
}

/**
 * A process's start time (field 22 of /proc/<pid>/stat, in clock ticks since boot), or
 * undefined without /proc or such a process. A pid is another process's (or thread's) once
 * the kernel's counter has gone round (32,768 ids by default, threads counting too), or has
 * been set back; pid and start time together are never used again.
 */
function processStartTime(pid: number | "self"): string | undefined {
  const field = procStatFields(pid)?.[22 - 3];
  return field !== undefined && /^\d+$/.test(field) ? field : undefined;
}

function removeMarker(marker: string): void {
  try {
    unlinkSync(marker);
  } catch {
    // Gone already (the folder was removed during the run): nothing to do.
  }
}

/**
 * Makes the log root if it is missing, and checks that run folders can be made in it. A
 * durable worker asks before it leases anything: with a root it cannot use, every task it
 * took would fail on its log and, its attempts used up, end a dead letter, and the worker
 * would go on taking more.
 */
export function checkLogRoot(root: string): void {
  try {
    makeDirectory(root);
    accessSync(root, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new TaskqError("LOG_DIR", `cannot write to the log folder ${withFullPath(root)}: ${folderProblem(error, root)}`, { cause: error, exitCode: 1 });
  }
}

export interface LogPruneResult {
  /** Folders last written before this moment were deleted, or would be. */
  before: string;
  /** Their names (run ids), sorted. */
  runs: string[];
  /**
   * Those that could not be deleted (another user's, in a shared root), or not even read (another
   * user's, mode 700: its age and contents unknown), each with why; the others were pruned all the same.
   */
  failed: Array<{ run: string; dir: string; problem: string; unreadable?: true }>;
  /** Those last written before then, kept as a live process (a run, a worker) holds them; sorted. */
  inUse: string[];
}

/**
 * Deletes the run folders under `root` last written more than `olderThanMs` ago: a
 * folder's age is that of its newest log (or of the folder, when newer). Only folders taskq
 * can tell it made: stamped (see STAMP), or named like a run id it makes; and holding
 * nothing but `*.log` files, markers and the stamp. Anything else under `root` (a file, a
 * folder of logs that is not taskq's, a folder with other files or subfolders, a symbolic
 * link) is left alone, so a mistaken `--log-dir` deletes nothing of the user's. A folder in
 * use (see MARKER_PREFIX) is never deleted. With `dryRun`, only lists them. A `root` that
 * cannot be read, or does not exist, is an error (LOG_DIR, exit 1). A folder that cannot be deleted (another user's, in a root users
 * share) is listed in `failed`, and the folders after it are still pruned.
 */
export function pruneLogFolders(root: string, olderThanMs: number, options: { dryRun: boolean; now?: number }): LogPruneResult {
  const before = (options.now ?? Date.now()) - olderThanMs;
  let names: string[];
  try {
    names = readdirSync(root);
  } catch (error) {
    // A root that does not exist is said, as one that is not a folder is: "nothing to prune" there
    // hid a mistyped --log-dir, or a prune run from another folder than the runs were (a cron job's).
    throw new TaskqError("LOG_DIR", `cannot read the log folder ${escapeControls(root)}: ${folderProblem(error, root)}`, { cause: error, exitCode: 1 });
  }
  const host = hostname();
  const runs: string[] = [];
  const failed: LogPruneResult["failed"] = [];
  const inUse: string[] = [];
  for (const name of names.sort()) {
    const dir = path.join(root, name);
    const folder = inspectRunFolder(dir, name, host);
    if (folder !== undefined && "unreadable" in folder) {
      failed.push({ run: name, dir, problem: folderProblem(folder.unreadable, dir), unreadable: true });
      continue;
    }
    if (folder === undefined || folder.lastWriteMs >= before) continue;
    if (folder.inUse) {
      inUse.push(name);
      continue;
    }
    if (!options.dryRun) {
      try {
        removeRunFolder(dir);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? "error";
        if (code === "ENOENT") continue; // pruned meanwhile by another prune
        failed.push({ run: name, dir, problem: folderProblem(error, dir) });
        continue;
      }
    }
    runs.push(name);
  }
  return { before: new Date(before).toISOString(), runs, failed, inUse };
}

/**
 * Deletes a run folder, which holds files only (see inspectRunFolder), one file at a time, so
 * that a file that may not be deleted fails with its own error: Node's recursive rm takes a
 * file's EPERM (the sticky bit, an append-only log) for a folder to empty, and throws ENOTDIR.
 */
function removeRunFolder(dir: string): void {
  for (const name of readdirSync(dir)) {
    try {
      unlinkSync(path.join(dir, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error; // ENOENT: deleted meanwhile
    }
  }
  rmdirSync(dir);
}

/**
 * A run folder's newest write and whether a live process holds it; undefined for anything not a
 * run folder. A folder named like a run id taskq makes that this user may not read (another
 * user's, mode 700) is `unreadable`, with the error: its age is unknown, and a prune that passed
 * over it in silence would leave the user believing the root pruned. One with another name may be
 * any program's, and is passed over as the others that are not taskq's.
 */
function inspectRunFolder(dir: string, name: string, host: string): { lastWriteMs: number; inUse: boolean } | { unreadable: unknown } | undefined {
  try {
    const stats = lstatSync(dir);
    if (!stats.isDirectory()) return undefined;
    let lastWriteMs = stats.mtimeMs;
    const namedAsOurs = LOCAL_RUN_ID.test(name) || DEFAULT_DURABLE_RUN_ID.test(name);
    let taskqs = namedAsOurs;
    let inUse = false;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (namedAsOurs && (code === "EACCES" || code === "EPERM")) return { unreadable: error };
      throw error;
    }
    for (const entry of entries) {
      if (!entry.isFile()) return undefined;
      if (entry.name === STAMP) {
        taskqs ||= readFileSync(path.join(dir, STAMP), "utf8").startsWith(STAMP_START);
      } else if (entry.name.startsWith(MARKER_PREFIX)) {
        inUse ||= markerIsLive(path.join(dir, entry.name), entry.name.slice(MARKER_PREFIX.length), host);
      } else if (entry.name.endsWith(".log")) {
        lastWriteMs = Math.max(lastWriteMs, lstatSync(path.join(dir, entry.name)).mtimeMs);
      } else {
        return undefined;
      }
    }
    return taskqs ? { lastWriteMs, inUse } : undefined;
  } catch {
    return undefined; // removed or changed while looked at: left for the next prune
  }
}

/**
 * Whether the process a marker names may still write: alive on this host, or on another
 * host (unknown). Alive: a process with its pid and its start time; by the pid alone where
 * /proc is missing, or the marker has no start time (written by an earlier version).
 */
function markerIsLive(marker: string, pidText: string, host: string): boolean {
  const pid = Number(pidText);
  if (!/^\d+$/.test(pidText) || pid <= 1) return false;
  let lines: string[];
  try {
    lines = readFileSync(marker, "utf8").split("\n");
  } catch {
    return false; // removed as we looked: its process is done
  }
  if (lines[0]?.trim() !== host) return true;
  const started = lines[1]?.trim() ?? "";
  const startedNow = started === "" ? undefined : processStartTime(pid);
  return startedNow === undefined ? processExists(pid) : startedNow === started;
}
