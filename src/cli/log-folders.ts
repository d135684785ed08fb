import { accessSync, constants, lstatSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { TaskqError } from "../errors.js";
import { makeDirectory } from "../make-directory.js";
import { processExists } from "../process-exists.js";
import { folderProblem } from "./folder-problem.js";

/**
 * A run folder being written holds `.taskq-active-<pid>` (its content: the host's name)
 * for as long as some process writes into it: a local run for the whole run, a durable
 * worker while it runs a task of that run. `taskq prune --logs` never deletes a folder
 * whose marker names a live process of this host, or another host (it cannot tell there):
 * a task silent for longer than the age given would otherwise lose its log, and whatever
 * it writes later, to the deletion. A marker left by a taskq that was SIGKILLed names a
 * process that is gone, and is no obstacle.
 */
const MARKER_PREFIX = ".taskq-active-";

/** A local run's id (see makeRunId): an empty folder so named is a run that wrote no log. */
const LOCAL_RUN_ID = /^\d{8}-\d{6}-[0-9a-z]{4}$/;

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
export function holdLogFolder(dir: string, lingerMs = 0): () => void {
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

/** Writes this process's marker again in `dir` if it holds it: the folder was deleted and made again during the run. */
export function renewLogFolderHold(dir: string): void {
  const marker = path.join(dir, `${MARKER_PREFIX}${process.pid}`);
  if (holds.has(marker)) writeMarker(dir, marker);
}

function writeMarker(dir: string, marker: string): void {
  try {
    writeFileSync(marker, `${hostname()}\n`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return;
    try {
      makeDirectory(dir);
      writeFileSync(marker, `${hostname()}\n`);
    } catch {
      // Not writable: the task's log reports it.
    }
  }
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
    throw new TaskqError("LOG_DIR", `cannot write to the log folder ${root}: ${folderProblem(error, root)}`, { cause: error, exitCode: 1 });
  }
}

export interface LogPruneResult {
  /** Folders last written before this moment were deleted, or would be. */
  before: string;
  /** Their names (run ids), sorted. */
  runs: string[];
}

/**
 * Deletes the run folders under `root` last written more than `olderThanMs` ago: a
 * folder's age is that of its newest log (or of the folder, when newer). Only folders that
 * are clearly taskq's: every entry a `*.log` file (or a marker) and at least one log, or
 * empty and named like a local run id. Anything else under `root` (a file, a folder with
 * other files or subfolders, a symbolic link) is left alone, so a mistaken `--log-dir`
 * deletes nothing of the user's. A folder in use (see MARKER_PREFIX) is never deleted.
 * With `dryRun`, only lists them. A missing `root` has nothing to prune.
 */
export function pruneLogFolders(root: string, olderThanMs: number, options: { dryRun: boolean; now?: number }): LogPruneResult {
  const before = (options.now ?? Date.now()) - olderThanMs;
  let names: string[];
  try {
    names = readdirSync(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    if (code === "ENOENT") return { before: new Date(before).toISOString(), runs: [] };
    throw new TaskqError("LOG_DIR", `cannot read the log folder ${root}: ${folderProblem(error, root)}`, { cause: error, exitCode: 1 });
  }
  const host = hostname();
  const runs: string[] = [];
  for (const name of names.sort()) {
    const dir = path.join(root, name);
    const folder = inspectRunFolder(dir, name, host);
    if (folder === undefined || folder.inUse || folder.lastWriteMs >= before) continue;
    if (!options.dryRun) {
      try {
        rmSync(dir, { recursive: true });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? "error";
        if (code === "ENOENT") continue; // pruned meanwhile by another prune
        throw new TaskqError("LOG_DIR", `cannot delete ${dir}: ${folderProblem(error, dir)}`, { cause: error, exitCode: 1 });
      }
    }
    runs.push(name);
  }
  return { before: new Date(before).toISOString(), runs };
}

/** A run folder's newest write and whether a live process holds it; undefined for anything not a run folder. */
function inspectRunFolder(dir: string, name: string, host: string): { lastWriteMs: number; inUse: boolean } | undefined {
  try {
    const stats = lstatSync(dir);
    if (!stats.isDirectory()) return undefined;
    let lastWriteMs = stats.mtimeMs;
    let logs = 0;
    let inUse = false;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isFile()) return undefined;
      if (entry.name.startsWith(MARKER_PREFIX)) {
        inUse ||= markerIsLive(path.join(dir, entry.name), entry.name.slice(MARKER_PREFIX.length), host);
        continue;
      }
      if (!entry.name.endsWith(".log")) return undefined;
      logs++;
      lastWriteMs = Math.max(lastWriteMs, lstatSync(path.join(dir, entry.name)).mtimeMs);
    }
    if (logs === 0 && !LOCAL_RUN_ID.test(name)) return undefined;
    return { lastWriteMs, inUse };
  } catch {
    return undefined; // removed or changed while looked at: left for the next prune
  }
}

/** Whether the process a marker names may still write: alive on this host, or on another host (unknown). */
function markerIsLive(marker: string, pidText: string, host: string): boolean {
  const pid = Number(pidText);
  if (!/^\d+$/.test(pidText) || pid <= 1) return false;
  let markerHost: string;
  try {
    markerHost = readFileSync(marker, "utf8").trim();
  } catch {
    return false; // removed as we looked: its process is done
  }
  return markerHost !== host || processExists(pid);
}
