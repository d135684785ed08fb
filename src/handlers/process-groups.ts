import { readdir, readFile } from "../fs-async.js";
import { guardGroup, unguardGroup } from "./group-guard.js";

/**
 * Process groups of running attempts (each task's shell leads its own group, pgid = pid).
 * Module-level so the CLI can kill everything synchronously on a second Ctrl-C or at exit.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** A new task group; `killGraceMs` is how a guard stops it should taskq itself be SIGKILLed. */
export function registerProcessGroup(pgid: number, killGraceMs: number): void {
  liveGroups.add(pgid);
  guardGroup(pgid, killGraceMs);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Belt and braces: whatever ends taskq, no task process outlives it.
    process.on("exit", () => killAllProcessGroups("SIGKILL"));
  }
}

export function unregisterProcessGroup(pgid: number): void {
  liveGroups.delete(pgid);
  unguardGroup(pgid);
}

/** How many task process groups are alive (attempts not yet settled). */
export function activeProcessGroups(): number {
  return liveGroups.size;
}

/** Sends `signal` to every live task process group; synchronous, never throws. */
export function killAllProcessGroups(signal: NodeJS.Signals): void {
  for (const pgid of liveGroups) signalProcessGroup(pgid, signal);
}

/** Signals a whole group; false when the group no longer exists. Never throws. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  // ESRCH is the common answer (every attempt asks once its shell exits): skip the stack trace.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM: a member exists but changed its user; the group is still there.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/**
 * True while the group has a member that is not a zombie. kill(-pgid, 0) alone also
 * succeeds for zombies, which linger when PID 1 reaps slowly or never (containers).
 */
export async function isProcessGroupAlive(pgid: number): Promise<boolean> {
  if (!signalProcessGroup(pgid, 0)) return false;
  return hasLiveMember(pgid);
}

async function hasLiveMember(pgid: number): Promise<boolean> {
  const live = await groupsWithLiveMembers();
  return live === undefined || live.has(pgid);
}

/** A scan not yet started; every caller until it starts shares it. */
let nextScan: Promise<Set<number> | undefined> | undefined;

/**
 * The process groups that have a live (non-zombie) member, from one pass over /proc
 * shared by every caller of the same tick: with 200 groups being reaped at once, one
 * scan per poll instead of 200 (each reading every /proc/<pid>/stat). A scan always
 * starts after the call, so it never misses a process that existed when asked.
 * Undefined when /proc cannot be read.
 */
function groupsWithLiveMembers(): Promise<Set<number> | undefined> {
  nextScan ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    nextScan = undefined;
    return scanLiveGroups();
  });
  return nextScan;
}

async function scanLiveGroups(): Promise<Set<number> | undefined> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return undefined; // no /proc: cannot tell zombies apart, so assume alive
  }
  const states = await Promise.all(entries.filter((name) => /^\d+$/.test(name)).map((pid) => readStat(pid)));
  const live = new Set<number>();
  for (const stat of states) if (stat !== undefined && stat.state !== "Z" && stat.state !== "X") live.add(stat.pgrp);
  return live;
}

async function readStat(pid: string): Promise<{ state: string; pgrp: number } | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", pgrp: Number(fields[2]) };
  } catch {
    return undefined; // the process is gone
  }
}
