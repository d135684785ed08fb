import { readdirSync, readFileSync, statSync } from "node:fs";
import { LongTimer } from "../engine/long-timer.js";
import { procStatFields } from "../process-exists.js";
import { lastStatCpuMs, lastStatEnded, lastStatStartTime, procBuffer, readProcEnviron, readProcFile, readProcStat, stillRunning } from "./proc-read.js";
import { guardGroup, unguardGroup } from "./group-guard.js";
import { monotonicMs } from "../monotonic.js";

/**
 * Process groups of running attempts. Each task's shell leads its own session and group
 * (sid = pgid = pid). Module-level so the CLI can kill everything synchronously on a second
 * Ctrl-C or at exit.
 *
 * A task's processes can leave its group: coreutils `timeout` and a shell's job control
 * (`set -m`) put their children in groups of their own, `setsid` in a session of its own.
 * They are found in /proc by the TASKQ_PID each inherits (see below), never by ids alone:
 * once a task's shell has exited, its pid, and so its session and group ids, may belong to
 * anyone. A task that is stopped (timeout, cancel, shutdown) has its group signalled, and
 * every group of its session holding a process with taskq's TASKQ_PID; what a task that
 * ended left in other groups of its session is stopped by a sweep a second later
 * (SWEEP_AFTER_MS); at the end of a run every process with taskq's TASKQ_PID, daemons
 * included, is stopped as a task is (stopLeftovers), and at exit SIGKILLed if still there.
 *
 * A process that clears its environment (`env -i`) carries no TASKQ_PID. While its task's
 * shell is not reaped, the shell's session is the task's alone (its id is the shell's pid), so
 * a task being stopped then has every group of its session signalled, unmarked ones too; once
 * the shell is reaped, the session's processes are signalled again (the SIGKILL after the
 * grace) and waited for, all of them, for as long as no process has the session's id as its
 * pid: Linux gives no process a pid still in use as a live process's session or group id, so
 * one that has it leads a session made after every process of the task's was gone. But for
 * the shell itself, as a pass over /proc made before Node reaped it shows it: known by its start
 * time (see sessionLeaderStart), it leaves the session the task's. So does a task that ended by itself
 * with members left in its group, while one is (see GroupTerminator.reap). One it left in another group
 * once its own is empty (the sweep, a second later, cannot tell whether the session was empty meanwhile,
 * its id another's since), or in a session of its own, is beyond reach, as for any runner without cgroups.
 */
const liveGroups = new Set<number>();
/** Sessions whose shell has exited, with their kill grace: the next sweep stops what they left in other groups. */
const endedSessions = new Map<number, EndedSession>();

interface EndedSession {
  graceMs: number;
  /** Told how many processes the sweep is stopping (none: not told), for a task that ended by itself. */
  onStopping: ((processes: number) => void) | undefined;
}
let sweepTimer: NodeJS.Timeout | undefined;
let exitHookInstalled = false;

/** How long after a task's shell exits the processes it left in other groups are stopped. */
const SWEEP_AFTER_MS = 1000;

/**
 * The first task's pid: processes started by taskq's tasks have pids from there up, until
 * pids wrap past pid_max (32,768 on some machines: a test suite's worth of forks). From the
 * first sign of a wrap (a task's pid below the one before, or the kernel's last pid below the
 * first task's), every pid is looked at.
 */
let firstTaskPid = Infinity;
let lastTaskPid = 0;
let pidsWrapped = false;

/**
 * The variable every task gets (see shell-handler.ts), with taskq's pid: what a task starts
 * inherits it, in whatever group or session it ends up (most daemons keep their environment).
 * A process that carries it descends from one of taskq's tasks (or, after taskq's pid was
 * used again, from an earlier taskq's: a leftover too), and so do the other members of its
 * group, which no process outside its session can join.
 */
export const TASKQ_PID_VARIABLE = "TASKQ_PID";
const MARKER = Buffer.from(`${TASKQ_PID_VARIABLE}=${process.pid}\0`);

/** The live task groups taskq has sent SIGKILL: a task's shell that dies of it (or exits 137) was killed by taskq, not by the kernel. */
const sigkilledGroups = new Set<number>();

/** Whether taskq has sent SIGKILL to the live task group `pgid` (see sigkilledGroups). */
export function sigkilledByTaskq(pgid: number): boolean {
  return sigkilledGroups.has(pgid);
}

/** A new task group; `killGraceMs` is how a guard stops it should taskq itself be SIGKILLed. */
export function registerProcessGroup(pgid: number, killGraceMs: number): void {
  liveGroups.add(pgid);
  sigkilledGroups.delete(pgid);
  leftNothing = false;
  if (firstTaskPid === Infinity) firstTaskPid = pgid;
  if (pgid < lastTaskPid) pidsWrapped = true;
  lastTaskPid = pgid;
  guardGroup(pgid, killGraceMs);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Belt and braces: whatever ends taskq, no task process outlives it.
    process.on("exit", () => {
      if (!leftNothing) killAllProcessGroups("SIGKILL", true);
    });
  }
}

/**
 * The attempt's shell has exited and its group is empty (reaped): its ids are free for anyone
 * from now on, so the group leaves every list at once; what the task left in other groups of
 * its session goes at the next sweep.
 */
export function unregisterProcessGroup(pgid: number, killGraceMs = 0, onStopping?: (processes: number) => void): void {
  sigkilledGroups.delete(pgid);
  if (!liveGroups.delete(pgid)) return;
  unguardGroup(pgid);
  endedSessions.set(pgid, { graceMs: killGraceMs, onStopping });
  sweepTimer ??= setTimeout(sweepEndedSessions, SWEEP_AFTER_MS).unref();
}

/** True once stopLeftovers found nothing left, until the next task starts: the exit need not look again. */
let leftNothing = false;

/** How often stopLeftovers looks whether what it stopped is gone. */
const LEFTOVER_POLL_MS = 25;

/**
 * At the end of a run (or of a worker): what taskq's tasks left running anywhere (daemons,
 * found by their TASKQ_PID) is stopped as a task is, SIGTERM, then SIGKILL for what is still
 * there after `graceMs`, instead of the exit's SIGKILL without a word. `onFound` hears how
 * many process groups are being stopped (the wait may be long: say why); `signal` cuts the
 * grace short (Ctrl-C while waiting: SIGKILL now), and `onKillNow` then hears how many groups
 * are left to kill, if any. Returns at once when nothing is left,
 * which is the common case (one pass over /proc).
 */
export async function stopLeftovers(
  graceMs: number,
  options: { signal?: AbortSignal; onFound?: (groups: number) => void; onKillNow?: (groups: number) => void } = {},
): Promise<void> {
  // The nested runs' processes a second signal SIGKILLed are waited for meanwhile (see killedNested).
  await Promise.all([stopMarked(graceMs, options), killedNestedGone()]);
}

/** stopLeftovers' stop of the processes with taskq's TASKQ_PID. */
async function stopMarked(
  graceMs: number,
  options: { signal?: AbortSignal; onFound?: (groups: number) => void; onKillNow?: (groups: number) => void },
): Promise<void> {
  const abortedBefore = options.signal?.aborted === true;
  // This stops every marked process, those the sweep would stop a second after their task ended too: not twice, nor said twice.
  clearTimeout(sweepTimer);
  sweepTimer = undefined;
  endedSessions.clear();
  const groups = markedGroups(undefined);
  if (groups.length === 0) {
    leftNothing = liveGroups.size === 0;
    return;
  }
  options.onFound?.(groups.length);
  for (const pgid of groups) terminateProcessGroup(pgid);
  const until = monotonicMs() + graceMs;
  while (monotonicMs() < until && options.signal?.aborted !== true) {
    await new Promise((resolve) => setTimeout(resolve, LEFTOVER_POLL_MS));
    if (markedGroups(undefined).length === 0) return;
  }
  // Looked up again: a group gone meanwhile may have had its id used again.
  const left = markedGroups(undefined);
  // `signal` cut the grace short: said only where something is left to kill (what was stopped may have gone since the last look).
  if (options.signal?.aborted === true && !abortedBefore && left.length > 0) options.onKillNow?.(left.length);
  for (const pgid of left) signalProcessGroup(pgid, "SIGKILL");
  // A SIGKILL is sent, not done: each process ends when the kernel next runs it, a while later on a loaded machine.
  // What was killed is waited for (KILLED_WAIT_MS at most), so that it is gone once taskq has exited: a CI runner's
  // look for leftover processes just after, or the next step's, found a `sleep` a Ctrl-C had killed still there.
  const killedBy = monotonicMs() + KILLED_WAIT_MS;
  while (left.length > 0 && monotonicMs() < killedBy) {
    await new Promise((resolve) => setTimeout(resolve, LEFTOVER_POLL_MS));
    if (markedGroups(undefined).length === 0) return;
  }
}

/** How long stopLeftovers waits at most for the processes it SIGKILLed to be gone (one in uninterruptible sleep may take longer). */
const KILLED_WAIT_MS = 1_000;

/**
 * The processes of the nested runs' groups that killAllProcessGroups has SIGKILLed (a second signal), by pid, with their
 * start times (a pid used again is another process's): stopLeftovers waits for them to be gone as for its own, KILLED_WAIT_MS
 * at most. They carry a nested taskq's pid as their TASKQ_PID, not this one's, and once that taskq is gone no pass over /proc
 * tells them from anyone's: the outer exited while they were still there (a process with much to tear down, thousands of
 * mappings, stays in /proc a tenth of a second or more after its SIGKILL, not yet a zombie).
 */
const killedNested = new Map<number, string>();

/** Waits, KILLED_WAIT_MS at most, until every process in killedNested is gone (a zombie counts as gone). */
async function killedNestedGone(): Promise<void> {
  const until = monotonicMs() + KILLED_WAIT_MS;
  for (;;) {
    for (const [pid, start] of killedNested) if (!stillRunning(pid, start)) killedNested.delete(pid);
    if (killedNested.size === 0 || monotonicMs() >= until) break;
    await new Promise((resolve) => setTimeout(resolve, LEFTOVER_POLL_MS));
  }
  killedNested.clear();
}

/** How many task process groups are alive (attempts not yet settled). */
export function activeProcessGroups(): number {
  return liveGroups.size;
}

/** A task's own way to signal every group of its session (its GroupTerminator, which knows while the session is the task's alone). */
export interface SessionSignaller {
  signalAll(signal: NodeJS.Signals): void;
}

/** The sessions of the tasks whose attempts have not ended: see killAllProcessGroups. */
const taskSessions = new Set<SessionSignaller>();

/** From a task's spawn to the end of its attempt, `session` is signalled with the others by killAllProcessGroups. */
export function watchSession(session: SessionSignaller): void {
  taskSessions.add(session);
}

export function unwatchSession(session: SessionSignaller): void {
  taskSessions.delete(session);
}

/**
 * Sends `signal` to every live task process group and to the groups of the processes its
 * tasks left elsewhere (with taskq's TASKQ_PID): in their sessions, or, with `everywhere`
 * (at exit), in any session, daemons included; and, through each running task's own
 * terminator, to every group of a session that is still the task's alone, where a process that
 * cleared its environment (`env -i`) in a group of its own is too (a second Ctrl-C's SIGKILL
 * missed it, which then waited out the kill grace). Synchronous, never throws.
 */
export function killAllProcessGroups(signal: NodeJS.Signals, everywhere = false): void {
  if (!everywhere && liveGroups.size === 0 && endedSessions.size === 0 && taskSessions.size === 0) return;
  // Looked for before any of them is signalled: a nested taskq SIGKILLed first is gone from /proc, and its tasks with it from the chain.
  const { groups: nested, members } = nestedRunGroups();
  if (signal === "SIGKILL") for (const [pid, start] of members) killedNested.set(pid, start);
  for (const session of taskSessions) session.signalAll(signal);
  for (const pgid of liveGroups) signalProcessGroup(pgid, signal);
  if (!everywhere && liveGroups.size === 0 && endedSessions.size === 0) {
    for (const pgid of nested) signalProcessGroup(pgid, signal);
    return;
  }
  const sessions = everywhere ? undefined : new Set([...liveGroups, ...endedSessions.keys()]);
  for (const pgid of markedGroups(sessions)) signalProcessGroup(pgid, signal);
  for (const pgid of nested) signalProcessGroup(pgid, signal);
}

const TASKQ_PID_PREFIX = Buffer.from(`${TASKQ_PID_VARIABLE}=`);

/**
 * The process groups of the runs nested in this one's tasks (`run: taskq run inner.yaml`), at any depth: each nested
 * taskq gives its own tasks its own pid as their TASKQ_PID, and they lead sessions of their own, which no signal to this
 * taskq's task groups reaches. A second Ctrl-C SIGKILLed the inner taskq alone; its guard then gave its tasks a SIGTERM
 * and its kill grace (rounded up to whole seconds) before their SIGKILL, seconds after the outer had said `killing every
 * task now` and exited; a Ctrl-Z stopped the inner taskq and not its tasks. Found in one pass over /proc: a process
 * whose TASKQ_PID is this taskq's descends from its tasks, and one whose TASKQ_PID is such a process's, started after
 * it (not a leftover of another process that had its pid before), from a nested run's. With the groups, every live process
 * in them (with or without a TASKQ_PID), by pid, with its start time. Synchronous, never throws.
 */
function nestedRunGroups(): { groups: number[]; members: Map<number, string> } {
  let names: string[] = [];
  const members = new Map<number, string>();
  try {
    if (firstTaskPid !== Infinity) names = readdirSync("/proc");
  } catch {
    return { groups: [], members };
  }
  const from = lowestPidToRead();
  const processes: { pid: number; pgrp: number; start: number; taskq: number }[] = [];
  const starts = new Map<number, number>();
  const live: { pid: number; pgrp: number; start: string }[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!(pid >= from) || pid === process.pid) continue;
    const stat = readProcStat(name);
    if (stat === undefined || stat.pgrp <= 1 || stat.session === 0 || lastStatEnded(stat.state)) continue;
    const startTime = lastStatStartTime();
    if (startTime !== undefined) live.push({ pid, pgrp: stat.pgrp, start: startTime });
    const start = Number(startTime);
    const taskq = taskqPidIn(readProcFile(name, "environ"));
    if (taskq === undefined) continue;
    processes.push({ pid, pgrp: stat.pgrp, start, taskq });
    starts.set(pid, start);
  }
  // This taskq, then each process that descends from its tasks: a nested taskq is one of them, its tasks' TASKQ_PID its pid.
  const ours = new Set([process.pid]);
  const groups = new Set<number>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const found of processes) {
      if (ours.has(found.pid) || !ours.has(found.taskq)) continue;
      if (found.taskq !== process.pid && !(found.start >= (starts.get(found.taskq) ?? Infinity))) continue;
      ours.add(found.pid);
      grew = true;
      if (found.taskq !== process.pid) groups.add(found.pgrp);
    }
  }
  for (const found of live) if (groups.has(found.pgrp)) members.set(found.pid, found.start);
  return { groups: [...groups], members };
}

/** The TASKQ_PID in the environment readProcFile just read (`length` bytes of the shared buffer), or undefined. */
function taskqPidIn(length: number): number | undefined {
  if (length <= 0) return undefined;
  const environ = procBuffer().subarray(0, length);
  for (let at = environ.indexOf(TASKQ_PID_PREFIX); at !== -1; at = environ.indexOf(TASKQ_PID_PREFIX, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue;
    const from = at + TASKQ_PID_PREFIX.length;
    const end = environ.indexOf(0, from);
    const value = environ.toString("latin1", from, end === -1 ? length : end);
    return /^\d{1,10}$/.test(value) ? Number(value) : undefined;
  }
  return undefined;
}

/**
 * Signals a task's processes: its group by its id while its shell runs (`shellAlive`: the id
 * is the task's until the shell is reaped), and every group of its session that holds a
 * process with taskq's TASKQ_PID, from the pass over /proc of this turn of the event loop
 * (a shutdown stopping 200 tasks makes one pass, not 200: with a pass each, they took 5 s).
 * A process started since the pass is not signalled by it: the SIGKILL after the grace, the
 * wait for the session to empty (GroupTerminator.reap) and the sweep look again. False when
 * there was nothing to signal.
 */
export function signalSession(sid: number, signal: NodeJS.Signals, shellAlive: boolean, wholeSession = shellAlive, shellStart?: string): boolean {
  let found = shellAlive && signalProcessGroup(sid, signal);
  const inSession = markedProcesses(true).get(sid);
  if (inSession === undefined) return found;
  // While the shell is not reaped the session is the task's alone; after, with `wholeSession` (a
  // task stopped while its shell ran), for as long as no process but that shell (started at
  // `shellStart`) has taken its id (see the top of this file): every group in it, those of
  // processes that cleared their environment too.
  const groups = ownSession(inSession, shellAlive || wholeSession, shellAlive, shellStart) ? inSession.allGroups : inSession.groups;
  // The task's own group is among the session's: signalled once, not twice (a shell's SIGTERM
  // trap ran twice when the second came while it ran).
  for (const pgid of groups) if (!(shellAlive && pgid === sid)) found = signalProcessGroup(pgid, signal) || found;
  return found;
}

/**
 * Whether every process of the session is the task's: `whole` (its shell not reaped, or a task
 * stopped while it ran), and its leader is the task's shell, not yet reaped (`shellAlive`), or
 * no process has the session's id as its pid but the shell, started at `shellStart`, in a pass
 * made before Node reaped it (see the top of this file).
 */
function ownSession(inSession: SessionProcesses, whole: boolean, shellAlive = false, shellStart?: string): boolean {
  return whole && (shellAlive || !inSession.leaderAlive || (shellStart !== undefined && inSession.leaderStart === shellStart));
}

/** Whether a process with taskq's TASKQ_PID (or, with `wholeSession`, any: see signalSession) is left in the task's session (its shell has exited); `shared` as for markedGroups, `shellStart` as for signalSession. */
export function sessionHasProcesses(sid: number, shared = false, wholeSession = false, shellStart?: string): boolean {
  return sessionProcessCount(sid, shared, wholeSession, shellStart) > 0;
}

/** How many processes with taskq's TASKQ_PID (or, with `wholeSession`, all: see signalSession) are in the task's session; `shared` as for markedGroups, `shellStart` as for signalSession. */
export function sessionProcessCount(sid: number, shared = false, wholeSession = false, shellStart?: string): number {
  const inSession = markedProcesses(shared).get(sid);
  if (inSession === undefined) return 0;
  return ownSession(inSession, wholeSession, false, shellStart) ? inSession.allProcesses : inSession.processes;
}

/** The pids sessionProcessCount counts, from the same pass: what a SIGTERM to the session is about to reach. */
export function sessionPids(sid: number, shared = false, wholeSession = false, shellStart?: string): readonly number[] {
  const inSession = markedProcesses(shared).get(sid);
  if (inSession === undefined) return [];
  return ownSession(inSession, wholeSession, false, shellStart) ? inSession.allPids : inSession.pids;
}

/**
 * Whether group `pgid` of session `sid` has a member that is not a zombie: an orphan that has exited stays in its
 * group, a zombie, until an init reaps it, which one that does not reap (taskq as a container's PID 1) may never do.
 */
export function groupHasLiveMembers(sid: number, pgid: number): boolean {
  // The pass of this turn, shared (many tasks ending at once leave what they started): where it shows one, there is
  // one, or was as late as that pass, which a wait for it to leave the group looks at again. Where it shows none, it
  // may predate a background job: a pass now, of that session alone, says.
  if (markedProcesses(true).get(sid)?.allGroups.has(pgid) === true) return true;
  return markedProcesses(false, new Set([sid])).get(sid)?.allGroups.has(pgid) === true;
}

/**
 * How much CPU time a member of an ended task's group may have had and still be on its way out of the group
 * (see groupMayBeLeaving): the fork, exec and setsid() of `setsid daemon &` take a millisecond or two.
 */
const LEAVING_CPU_MS = 50;

/**
 * Whether group `pgid` of session `sid` (an ended task's) has a member that may still be on its way out of it
 * (`setsid daemon &`: the shell may exit between the child's fork and its setsid): one waiting for a CPU or
 * running (R), or in a disk read (D), that has had less than LEAVING_CPU_MS of CPU time since it started, and
 * whose parent is no member of the group (the shell that forked it has exited) and that has forked no member. On a loaded machine it may wait
 * long for its turn; one that sleeps (S: `sleep 100 &`, a server waiting for work) or is stopped, or has had its
 * CPU time (a busy loop), is not on its way out; nor is a child a leftover forked (`while :; do check; done &`:
 * each fresh command is runnable with next to no CPU time, and the task's end waited LEAVING_MAX_MS for none
 * that was leaving). A pass over /proc, of the session alone.
 */
export function groupMayBeLeaving(sid: number, pgid: number): boolean {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return false;
  }
  const from = lowestPidToRead();
  const members = new Set<number>();
  const parents = new Set<number>();
  const candidates: { pid: number; ppid: number }[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!(pid >= from) || pid === process.pid) continue;
    const stat = readProcStat(name);
    if (stat === undefined || stat.session !== sid || stat.pgrp !== pgid) continue;
    members.add(pid);
    parents.add(stat.ppid);
    if (stat.state !== "R" && stat.state !== "D") continue;
    const cpuMs = lastStatCpuMs(name);
    if (cpuMs !== undefined && cpuMs < LEAVING_CPU_MS) candidates.push({ pid, ppid: stat.ppid });
  }
  // Forked by a member, or the parent of one (the loop itself, between its commands): a leftover, not a daemon leaving.
  return candidates.some(({ pid, ppid }) => !members.has(ppid) && !parents.has(pid));
}

/**
 * The start time of the process that leads session `sid` (its pid is `sid`), from the pass over
 * /proc of this turn of the event loop, shared: for a task's shell not yet reaped, what tells it
 * from a process given its pid later (see signalSession). Undefined when the pass did not see it.
 */
export function sessionLeaderStart(sid: number): string | undefined {
  return markedProcesses(true).get(sid)?.leaderStart;
}

/**
 * The processes of a running task's session `sid` (its shell not reaped: the session is the
 * task's alone) that a signal has stopped (SIGSTOP, SIGTSTP; not a debugger's stop), from the
 * pass over /proc of this turn of the event loop, shared.
 */
export function stoppedProcesses(sid: number): readonly number[] {
  return markedProcesses(true).get(sid)?.stopped ?? [];
}

/**
 * The groups of the live processes that carry taskq's TASKQ_PID, in `sessions` (or in any
 * session), from a pass over /proc made now, or with `shared`, from one made earlier in this
 * turn of the event loop if there is one (see markedProcesses).
 */
function markedGroups(sessions: ReadonlySet<number> | undefined, shared = false): number[] {
  if (sessions?.size === 0) return [];
  const groups = new Set<number>();
  for (const [session, inSession] of markedProcesses(shared, sessions)) {
    if (sessions !== undefined && !sessions.has(session)) continue;
    for (const pgid of inSession.groups) groups.add(pgid);
  }
  return [...groups];
}

/**
 * The last pass over /proc, good until the end of this turn of the event loop, and for
 * SHARED_PASS_MS after it ended at most, or, for a pass that took longer than a fifth of that,
 * for five times its own length: signalling 200 groups takes a while too (a millisecond each
 * on a loaded machine), and a pass over their 400 processes about 20 ms.
 */
let lastScan: Map<number, SessionProcesses> | undefined;
let lastScanEnd = 0;
let lastScanGoodMs = 0;
const SHARED_PASS_MS = 20;
const SHARED_PASS_LENGTHS = 5;

/** The processes of one session: the groups of those with taskq's TASKQ_PID and how many they are, and the same of all of them. */
interface SessionProcesses {
  groups: Set<number>;
  processes: number;
  allGroups: Set<number>;
  allProcesses: number;
  /** The pids of those with taskq's TASKQ_PID (see sessionPids). */
  pids: number[];
  /** The pids of all of them. */
  allPids: number[];
  /** Those another user's, which taskq may not signal (`sudo`, a setuid program), marked or not: in none of the above (see beyondReach). */
  othersPids: number[];
  /** Those stopped by a signal (SIGSTOP, SIGTSTP: state T), for stoppedProcesses. */
  stopped: number[];
  /**
   * A process (a zombie too) has the session's id as its pid: the task's shell not yet reaped
   * (in a pass made before Node reaped it, after too), or, after, a session not the task's.
   */
  leaderAlive: boolean;
  /** That process's start time (see lastStatStartTime), which tells the two apart. */
  leaderStart: string | undefined;
}

/**
 * The live processes that carry taskq's TASKQ_PID, as their groups by session, from one
 * synchronous pass over /proc. With `shared`, a pass made earlier in the same turn of the
 * event loop serves: a shutdown stopping 200 tasks signals and polls 200 sessions at once.
 * Only pids from the first task's up
 * are read while pids have not wrapped (see firstTaskPid): the pass then reads few files.
 * A pass that is not shared looks only at the processes in `sessions` (all, when undefined):
 * the sweep a second after tasks end, each second of a run, reads every other process's stat
 * but not its environment, often kilobytes (on a machine busy with other work, the pids
 * above the first task's are mostly other programs').
 */
function markedProcesses(shared: boolean, sessions?: ReadonlySet<number>): Map<number, SessionProcesses> {
  const only = shared ? undefined : sessions;
  // A pass made in the check phase is cleared only in the next loop's: the age bounds it too.
  const start = monotonicMs();
  if (shared && lastScan !== undefined && start - lastScanEnd < lastScanGoodMs) return lastScan;
  const found = new Map<number, SessionProcesses>();
  let names: string[] = [];
  try {
    if (firstTaskPid !== Infinity) names = readdirSync("/proc");
  } catch {
    // no /proc: only groups whose ids are known can be signalled
  }
  const from = lowestPidToRead();
  for (const name of names) {
    const pid = Number(name);
    if (!(pid >= from) || pid === process.pid) continue; // also skips "self", "net" and the rest
    const stat = readProcStat(name);
    // Session 0: kernel threads, whose environment is always empty.
    if (stat === undefined || stat.pgrp <= 1 || stat.session === 0) continue;
    if (only !== undefined && !only.has(stat.session)) continue;
    let inSession = found.get(stat.session);
    if (inSession === undefined) {
      inSession = { groups: new Set(), processes: 0, pids: [], allGroups: new Set(), allProcesses: 0, allPids: [], othersPids: [], stopped: [], leaderAlive: false, leaderStart: undefined };
      found.set(stat.session, inSession);
    }
    if (pid === stat.session) {
      inSession.leaderAlive = true;
      inSession.leaderStart = lastStatStartTime();
    }
    if (lastStatEnded(stat.state)) continue;
    // Another user's (its environment unreadable, or, to a root without CAP_KILL, read: TASKQ_PID and all): no signal of
    // taskq's reaches it, so nothing waits for it (a kill grace spent on it) or counts it as stopped; beyondReach names it.
    if (!maySignal(pid)) {
      inSession.othersPids.push(pid);
      continue;
    }
    inSession.allGroups.add(stat.pgrp);
    inSession.allProcesses++;
    inSession.allPids.push(pid);
    if (stat.state === "T") inSession.stopped.push(pid);
    // Its main thread ended, others running (see lastStatEnded): its environment is read from one of them.
    if (!isMarked(name, stat.state === "Z" || stat.state === "X")) continue;
    inSession.groups.add(stat.pgrp);
    inSession.processes++;
    inSession.pids.push(pid);
  }
  // Of some sessions only: no pass for anyone else to share.
  if (only !== undefined) return found;
  if (lastScan === undefined) setImmediate(() => (lastScan = undefined)).unref();
  lastScan = found;
  // Aged from the pass's end: aged from its start, a pass longer than SHARED_PASS_MS was never
  // shared (200 tasks stopped at once made 200 passes of 22 ms again, 7 s, on a loaded machine).
  lastScanEnd = monotonicMs();
  lastScanGoodMs = Math.max(SHARED_PASS_MS, SHARED_PASS_LENGTHS * (lastScanEnd - start));
  return found;
}

/** The first task's pid, or 0 once pids have wrapped since (see firstTaskPid). */
function lowestPidToRead(): number {
  if (!pidsWrapped) {
    try {
      if (Number(readFileSync("/proc/sys/kernel/ns_last_pid", "latin1")) < firstTaskPid) pidsWrapped = true;
    } catch {
      // not there (an older kernel): a task's pid below the one before still tells
    }
  }
  return pidsWrapped ? 0 : firstTaskPid;
}

/** Reads of an empty environment: a process in the middle of execve shows none for a moment. */
const EXEC_RETRIES = 3;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Whether the process's environment holds taskq's TASKQ_PID. A process that is replacing
 * itself (execve, as `sleep 1000 &` does right after its fork) shows an empty environment for
 * a moment: it is read again, a millisecond apart, before it counts as unmarked.
 */
function isMarked(pid: string, threadsOnly = false): boolean {
  let length = threadsOnly ? readProcEnviron(pid) : readProcFile(pid, "environ");
  for (let attempt = 1; length === 0 && attempt <= EXEC_RETRIES; attempt++) {
    Atomics.wait(pause, 0, 0, 1);
    length = readProcFile(pid, "environ");
  }
  if (length < 0) return false; // gone, or not ours to read
  // Read in the shared buffer (see proc-read.ts): only its first `length` bytes are this environment.
  const environ = procBuffer().subarray(0, length);
  for (let at = environ.indexOf(MARKER); at !== -1; at = environ.indexOf(MARKER, at + 1)) if (at === 0 || environ[at - 1] === 0) return true;
  return false;
}

/**
 * Stops what ended tasks left in other groups of their sessions: SIGTERM, then SIGKILL after
 * the longest kill grace among them, for the groups still there then (at exit, whatever is left).
 */
function sweepEndedSessions(): void {
  sweepTimer = undefined;
  if (endedSessions.size === 0) return;
  const sessions = new Map(endedSessions);
  endedSessions.clear();
  const found = markedProcesses(false, new Set(sessions.keys()));
  const groups = new Set<number>();
  for (const [sid, inSession] of found) {
    if (!sessions.has(sid) || inSession.processes === 0) continue;
    for (const pgid of inSession.groups) groups.add(pgid);
    // Said, as what a task left in its own group is (see GroupTerminator.reap), or the user never learns of it.
    try {
      sessions.get(sid)?.onStopping?.(inSession.processes);
    } catch {
      // a failing renderer must not keep them running
    }
  }
  if (groups.size === 0) return;
  for (const pgid of groups) terminateProcessGroup(pgid);
  let graceMs = 0;
  for (const session of sessions.values()) graceMs = Math.max(graceMs, session.graceMs);
  // Looked up again: a group gone meanwhile may have had its id used again.
  new LongTimer(
    () => {
      for (const pgid of markedGroups(new Set(sessions.keys()))) signalProcessGroup(pgid, "SIGKILL");
    },
    graceMs,
    { unref: true },
  );
}

/**
 * Whether a child of ours has exited by itself (not by a signal: taskq's second Ctrl-C, the OOM
 * killer) and waits to be reaped, a zombie: Node reaps it, and tells of its exit, only when the
 * event loop gets to SIGCHLD, which a loaded or stopped (SIGSTOP) taskq may do after a timer due
 * meanwhile. Its pid cannot be anyone else's until then. False without /proc (or once reaped).
 */
export function exitedByItself(pid: number): boolean {
  const fields = procStatFields(pid);
  // exit_code, field 52 (Linux 3.5), is as waitpid gives it: no signal in its low 7 bits.
  const status = Number(fields?.[52 - 3]);
  // A command whose main thread ended while other threads run on (num_threads, field 20, above 1) shows as a zombie too,
  // exit code 0: it has not exited, and a stop (its timeout, a Ctrl-C's) must still stop it.
  return fields?.[0] === "Z" && !(Number(fields[20 - 3]) > 1) && Number.isInteger(status) && (status & 0x7f) === 0;
}

/** Processes taskq may not signal, and the users they run as (see beyondReach). */
export interface BeyondReach {
  count: number;
  /** Their users' names ("root"), or uids where /etc/passwd does not name them, sorted. */
  users: string[];
}

/**
 * What is left of an ended task's session (its shell reaped) that taskq may not signal: its
 * processes that run as another user (`sudo`, a setuid program), which no SIGTERM or SIGKILL of
 * taskq's, nor its guard's, reaches, so they run on after the task and after taskq. Only looked
 * for while the task's group still has members (kill(0) says so, EPERM included): the common
 * case costs one syscall. Undefined when there are none. Never throws.
 */
export function beyondReach(sid: number): BeyondReach | undefined {
  if (!signalProcessGroup(sid, 0)) return undefined;
  // The pass of this turn, shared with every other task ending in it (500 stopped at once made
  // a pass each here, a second of the stop's time): a process another user's runs on, in it.
  const inSession = markedProcesses(true).get(sid);
  if (inSession === undefined) return undefined;
  let count = 0;
  const uids = new Set<number>();
  // The pass may be a few milliseconds old: one gone since runs on no more.
  for (const pid of inSession.othersPids) {
    if (maySignal(pid)) continue;
    count++;
    try {
      uids.add(statSync(`/proc/${pid}`).uid);
    } catch {
      // gone meanwhile: counted all the same
    }
  }
  return count === 0 ? undefined : { count, users: [...uids].map(userName).sort() };
}

/**
 * Whether taskq may signal process `pid`: false where kill(0) answers EPERM, another user's (root too may not, without
 * CAP_KILL, as in a container that drops it); true where it has gone meanwhile (ESRCH). Never throws.
 */
function maySignal(pid: number): boolean {
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // ESRCH: gone since the pass read it, as any process that has just ended.
    return (error as NodeJS.ErrnoException).code !== "EPERM";
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** A uid's name from /etc/passwd ("root"), else "uid N". */
function userName(uid: number): string {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (name !== undefined && name !== "" && id === String(uid)) return name;
    }
  } catch {
    // no /etc/passwd
  }
  return `uid ${uid}`;
}

/**
 * SIGTERM to a group, then SIGCONT: a stopped process (SIGSTOP, a debugger) would hold the
 * SIGTERM pending until the SIGKILL after the grace, its clean-up never run (coreutils timeout
 * does the same).
 */
function terminateProcessGroup(pgid: number): void {
  if (signalProcessGroup(pgid, "SIGTERM")) signalProcessGroup(pgid, "SIGCONT");
}

/** Signals a whole group; false when the group no longer exists. Never throws. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  // ESRCH is the common answer (every attempt asks once its shell exits): skip the stack trace.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-pgid, signal);
    if (signal === "SIGKILL" && liveGroups.has(pgid)) sigkilledGroups.add(pgid);
    return true;
  } catch (error) {
    // EPERM: a member exists but changed its user; the group is still there.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}
