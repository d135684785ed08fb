import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "../fs-async.js";
import { guardGroup, unguardGroup } from "./group-guard.js";

/**
 * Process groups of running attempts. Each task's shell leads its own session and group
 * (sid = pgid = pid). Module-level so the CLI can kill everything synchronously on a second
 * Ctrl-C or at exit.
 *
 * A task's processes can leave its group but not its session: coreutils `timeout` and a
 * shell's job control (`set -m`) put their children in groups of their own. So a task is
 * stopped by signalling its group and every other group of its session (found in /proc),
 * and what a task left in such groups when its shell exited is stopped by a sweep about a
 * second later (SWEEP_AFTER_MS), and at exit. A process that starts a session of its own
 * (`setsid`, a daemon) is beyond reach, as for any runner without cgroups.
 */
const liveGroups = new Set<number>();
/** Sessions whose shell has exited, with their kill grace: the next sweep stops what they left in other groups. */
const endedSessions = new Map<number, number>();
let sweepTimer: NodeJS.Timeout | undefined;
let exitHookInstalled = false;

/** How long after a task's shell exits the processes it left in other groups are stopped. */
const SWEEP_AFTER_MS = 1000;

/** The lowest pid a task had: processes started by taskq's tasks have pids from there up (but for a wrap past pid_max). */
let lowestTaskPid = Infinity;

/**
 * The variable every task gets (see shell-handler.ts), with taskq's pid: what a task starts
 * inherits it, in whatever group or session it ends up (most daemons keep their environment).
 */
export const TASKQ_PID_VARIABLE = "TASKQ_PID";

/** A new task group; `killGraceMs` is how a guard stops it should taskq itself be SIGKILLed. */
export function registerProcessGroup(pgid: number, killGraceMs: number): void {
  liveGroups.add(pgid);
  if (pgid < lowestTaskPid) lowestTaskPid = pgid;
  guardGroup(pgid, killGraceMs);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Belt and braces: whatever ends taskq, no task process outlives it.
    process.on("exit", () => {
      killAllProcessGroups("SIGKILL");
      killMarkedProcesses();
    });
  }
}

/**
 * At exit: the group of every process that carries this taskq's TASKQ_PID, whatever its
 * session: a daemon a task started (`setsid`, out of reach of the task's session) runs
 * until taskq ends, no longer. Only pids from the first task's up are read.
 */
function killMarkedProcesses(): void {
  if (lowestTaskPid === Infinity) return;
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return;
  }
  const marker = Buffer.from(`${TASKQ_PID_VARIABLE}=${process.pid}\0`);
  for (const name of names) {
    const pid = Number(name);
    if (!(pid >= lowestTaskPid) || pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${name}/environ`);
    } catch {
      continue; // gone, or not ours to read
    }
    if (!hasEntry(environ, marker)) continue;
    const stat = readStatSync(name);
    // Its group is in a session a task's process made: every member descends from the task.
    if (stat !== undefined && stat.pgrp > 1) signalProcessGroup(stat.pgrp, "SIGKILL");
  }
}

/** Whether a NUL-separated environment holds `entry` (which ends in its NUL). */
function hasEntry(environ: Buffer, entry: Buffer): boolean {
  for (let at = environ.indexOf(entry); at !== -1; at = environ.indexOf(entry, at + 1)) if (at === 0 || environ[at - 1] === 0) return true;
  return false;
}

/** The attempt's shell has exited and its group is reaped; what it left in other groups of its session goes at the next sweep. */
export function unregisterProcessGroup(pgid: number, killGraceMs = 0): void {
  liveGroups.delete(pgid);
  unguardGroup(pgid);
  endedSessions.set(pgid, killGraceMs);
  sweepTimer ??= setTimeout(sweepEndedSessions, SWEEP_AFTER_MS).unref();
}

/** How many task process groups are alive (attempts not yet settled). */
export function activeProcessGroups(): number {
  return liveGroups.size;
}

/** Sends `signal` to every live task process group, and to every other group of their sessions and of ended ones; synchronous, never throws. */
export function killAllProcessGroups(signal: NodeJS.Signals): void {
  for (const pgid of liveGroups) signalProcessGroup(pgid, signal);
  if (liveGroups.size === 0 && endedSessions.size === 0) return;
  const sessions = new Set([...liveGroups, ...endedSessions.keys()]);
  for (const pgid of sessionStragglers(sessions, endedSessions)) signalProcessGroup(pgid, signal);
}

/** Signals the task's group and every other group of its session (the task's pid is both ids); false when none is left. */
export function signalSession(sid: number, signal: NodeJS.Signals): boolean {
  let found = signalProcessGroup(sid, signal);
  for (const pgid of sessionStragglers(new Set([sid]))) found = signalProcessGroup(pgid, signal) || found;
  return found;
}

/** Whether a group other than the task's own (pgid = sid) is left in the task's session. */
export function hasSessionStragglers(sid: number): boolean {
  return sessionStragglers(new Set([sid])).length > 0;
}

/**
 * The groups other than their own (pgid = sid) with a live member in `sessions`, from one
 * synchronous pass over /proc. Only pids from the lowest session id up are read: a task's
 * processes are started after its shell, and pids grow (but for a wrap past pid_max, the
 * one case missed). For `ended` sessions, whose shell has exited and been reaped, a process
 * with the session's id as its pid means the id was reused: that session is skipped.
 */
function sessionStragglers(sessions: ReadonlySet<number>, ended?: ReadonlyMap<number, unknown>): number[] {
  if (sessions.size === 0) return [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return []; // no /proc: only the groups themselves can be signalled
  }
  let lowest = Infinity;
  for (const sid of sessions) lowest = Math.min(lowest, sid);
  const found = new Map<number, number>(); // group -> its session
  const reused = new Set<number>();
  for (const name of names) {
    const pid = Number(name);
    if (!(pid >= lowest)) continue; // also skips "self", "net" and the rest
    if (ended?.has(pid) === true) reused.add(pid);
    const stat = readStatSync(name);
    if (stat === undefined || stat.state === "Z" || stat.state === "X" || stat.pgrp === stat.session) continue;
    if (sessions.has(stat.session)) found.set(stat.pgrp, stat.session);
  }
  const result: number[] = [];
  for (const [pgid, sid] of found) if (!reused.has(sid)) result.push(pgid);
  return result;
}

/** Fields of /proc/<pid>/stat: "pid (comm) state ppid pgrp session ...", comm may hold spaces and parentheses. */
function parseStat(text: string): { state: string; pgrp: number; session: number } {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ", 4);
  return { state: fields[0] ?? "", pgrp: Number(fields[2]), session: Number(fields[3]) };
}

function readStatSync(pid: string): { state: string; pgrp: number; session: number } | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return undefined; // the process is gone
  }
}

/**
 * Stops what ended tasks left in other groups of their sessions: SIGTERM, then SIGKILL
 * after the longest kill grace among them, for the groups still there then. Sessions with
 * nothing left are forgotten.
 */
function sweepEndedSessions(): void {
  sweepTimer = undefined;
  if (endedSessions.size === 0) return;
  const sessions = new Map(endedSessions);
  endedSessions.clear();
  const groups = sessionStragglers(new Set(sessions.keys()), sessions);
  if (groups.length === 0) return;
  for (const pgid of groups) signalProcessGroup(pgid, "SIGTERM");
  let graceMs = 0;
  for (const grace of sessions.values()) graceMs = Math.max(graceMs, grace);
  // Looked up again: a group gone meanwhile may have had its id reused.
  setTimeout(() => {
    for (const pgid of sessionStragglers(new Set(sessions.keys()), sessions)) signalProcessGroup(pgid, "SIGKILL");
  }, graceMs).unref();
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
    return parseStat(await readFile(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return undefined; // the process is gone
  }
}
