import { setImmediate as nextTurn, setTimeout as delay } from "node:timers/promises";
import { LongTimer } from "../engine/long-timer.js";
import { readSignalState, stillRunning } from "./proc-read.js";
import { groupHasLiveMembers, groupMayBeLeaving, sessionHasProcesses, sessionLeaderStart, sessionPids, sessionProcessCount, signalProcessGroup, signalSession, unwatchSession, watchSession, type SessionSignaller } from "./process-groups.js";
import { monotonicMs } from "../monotonic.js";

/** How often a lingering group is checked while it is being terminated. */
const POLL_MS = 25;
/** How long the members left in an ended task's group get to leave it (setsid) before they are stopped. */
const LEAVING_MS = 100;
/**
 * How long, at most, a member still on its way out of the group (groupMayBeLeaving: runnable, next to no CPU time,
 * forked by the task's shell and forking none) is waited for past LEAVING_MS: on a loaded machine its turn may come later than that.
 */
const LEAVING_MAX_MS = 5000;
const LEAVING_POLL_MS = 10;
/**
 * How long SIGKILLed processes get to disappear before the attempt stops waiting (a process in
 * uninterruptible sleep, another user's that taskq may not signal). Shorter than the 2 s past the
 * kill grace that a stopping run or worker waits for its stopped tasks' handlers: a handler given
 * up on at the same moment would never say what it left running (see shell-handler.ts).
 */
const KILL_SETTLE_MS = 1500;

/** What reap() stopped of a task that ended by itself: the processes it left running. */
export interface Leftovers {
  /** How many taskq's signals ended: those still there when they got SIGTERM that did not ignore it, and those its SIGKILL found. */
  stopped: number;
  /** How many were still there after the kill grace, and got SIGKILL. */
  killed: number;
  /** How many were there at the SIGTERM, ignored it, and ended by themselves before any SIGKILL: not stopped by taskq. */
  endedByThemselves: number;
  /** The SIGKILL of those `killed` came at once (a second Ctrl-C: killAllProcessGroups), not after the kill grace. */
  killedAtOnce: boolean;
}

/** A process a leftovers' SIGTERM reached (see GroupTerminator.reap). */
interface Signalled {
  start: string;
  ignoresTerm: boolean;
  /** Still there when taskq sent SIGKILL: that ended it, whatever it did with the SIGTERM. */
  killed: boolean;
}

/**
 * SIGTERM to the whole group, then SIGKILL after the grace period: the escalation
 * execa applies to one child, applied to the task's process group, and to the other
 * groups of its session (see process-groups.ts).
 */
export class GroupTerminator implements SessionSignaller {
  readonly #pgid: number;
  readonly #graceMs: number;
  /** A LongTimer: a kill grace may be longer than setTimeout's 24.8 days. */
  #killTimer: LongTimer | undefined;
  #terminating = false;
  #killed = false;
  /** Set when the SIGKILL came from the grace's timer. */
  #graceRanOut = false;
  /** Set when the SIGKILL came at once, from signalAll (a second Ctrl-C), not after the grace. */
  #killedAtOnce = false;
  /** Set by cutLeaving. */
  #leavingCut = false;
  /** Until the shell is reaped (see reap), the group's id is the task's. */
  #shellAlive = true;
  /** How many processes the SIGKILL found, once the shell was reaped. */
  #killedCount = 0;
  /**
   * Stopped while its shell ran, or ended by itself leaving members in its group (see reap): after the shell is reaped,
   * every process of its session is still the task's, `env -i` ones too (see signalSession).
   */
  #stoppedWhileAlive = false;
  /**
   * The shell's start time, seen as it was stopped: a pass over /proc made before Node reaped it,
   * shared with the reap, shows it still there, which is no process that took its id since. Taken
   * for one, the session was no longer the task's, and what in it had cleared its environment
   * (`env -i`) and ignored the SIGTERM was never SIGKILLed: it outlived taskq.
   */
  #shellStart: string | undefined;
  /**
   * The processes an ended task left running, as its SIGTERM reached them (see reap): a process that
   * ignored it and then ended by itself before any SIGKILL was not stopped by taskq, nor one that had
   * ended before the SIGTERM went.
   */
  #signalled: Map<number, Signalled> | undefined;

  constructor(pgid: number, graceMs: number) {
    this.#pgid = pgid;
    this.#graceMs = graceMs;
    watchSession(this);
  }

  /**
   * For killAllProcessGroups (a second Ctrl-C, a Ctrl-Z): `signal` to every group of the task's
   * session while its shell runs (the session is the task's alone), as a stop does; SIGKILL as kill().
   */
  signalAll(signal: NodeJS.Signals): void {
    if (signal === "SIGKILL") {
      this.#markKilled();
      // At once, not after the grace: what it kills is not counted as what ignored a SIGTERM (see reap's leftovers).
      this.#killTimer?.clear();
      this.#terminating = true;
      if (!this.#killed) this.#killedAtOnce = true;
      this.#killed = true;
      // Stopped while its shell ran, as terminate() marks it: reap waits for the whole session, env -i processes too.
      if (this.#shellAlive) this.#stoppedWhileAlive = true;
    }
    signalSession(this.#pgid, signal, this.#shellAlive, this.#stoppedWhileAlive, this.#shellStart);
    if (this.#shellAlive && signal === "SIGKILL") this.#shellStart ??= sessionLeaderStart(this.#pgid);
  }

  /**
   * The task is being stopped after its shell ended by itself (a shutdown's time to finish passed as it ended): a member
   * of its group that may still be on its way out of it is waited for no longer than LEAVING_MS, as the stop's own
   * wait for the attempt (the kill grace and 2 s) would otherwise give up on it first.
   */
  cutLeaving(): void {
    this.#leavingCut = true;
  }

  /** The shell has exited (Node reaped it): from now on its pid may be anyone's, and nothing is signalled by it alone. */
  shellExited(): void {
    this.#shellAlive = false;
  }

  /**
   * Whether the escalation came to its SIGKILL because the grace ran out (something ignored SIGTERM);
   * not for a kill() at once (a lost lease), which gave nothing a grace to ignore.
   */
  get killedAfterGrace(): boolean {
    return this.#graceRanOut;
  }

  /** How many processes the SIGKILL found once the shell was reaped (0: none, or the shell was not reaped yet, when it is one of them). */
  get killedAfterShell(): number {
    return this.#killedCount;
  }

  /** Starts the escalation once; later calls do nothing. */
  terminate(): void {
    if (this.#terminating) return;
    this.#terminating = true;
    // Nothing signalled while the shell runs: the group is gone, and its id may be anyone's
    // by the time a SIGKILL would go. Once the shell is reaped, the SIGKILL looks for marked
    // processes again, so it is armed even if this pass (maybe one made earlier in this turn
    // of the event loop) found none: reap() waits for what a later pass finds.
    if (this.#shellAlive) this.#stoppedWhileAlive = true;
    const found = signalSession(this.#pgid, "SIGTERM", this.#shellAlive, this.#stoppedWhileAlive, this.#shellStart);
    // The same pass over /proc: the shell, not yet reaped, is in it.
    if (this.#shellAlive) this.#shellStart = sessionLeaderStart(this.#pgid);
    // A stopped process (SIGSTOP, a debugger) would hold the SIGTERM pending until the SIGKILL,
    // its clean-up never run: continued, it gets it now (as coreutils timeout does). The same pass over /proc.
    if (found) signalSession(this.#pgid, "SIGCONT", this.#shellAlive, this.#stoppedWhileAlive, this.#shellStart);
    if (!found && this.#shellAlive) return;
    this.#killTimer = new LongTimer(() => {
      this.#graceRanOut = true;
      this.kill();
    }, this.#graceMs);
  }

  kill(): void {
    this.#killTimer?.clear();
    this.#terminating = true;
    this.#killed = true;
    this.#markKilled();
    // Counted from the pass the signal then uses (shared): what ignored the SIGTERM, for reap's caller.
    if (!this.#shellAlive) this.#killedCount = sessionProcessCount(this.#pgid, true, this.#stoppedWhileAlive, this.#shellStart);
    signalSession(this.#pgid, "SIGKILL", this.#shellAlive, this.#stoppedWhileAlive, this.#shellStart);
  }

  /**
   * Called once the shell has exited: whatever is left of its group (background jobs) is
   * terminated, and this returns when it is gone (for a task being stopped, its whole
   * session), or SIGKILLed and given time to die. From here on the group's id may be anyone's
   * once the group is empty: while a process is left in it, the session is the task's whole, those
   * without taskq's TASKQ_PID too (see process-groups.ts). For a task that ended by itself, resolves with what
   * it left running and this stopped, so the user hears of it (a leftover that ignores
   * SIGTERM adds the kill grace to the task's time); undefined when it left nothing, or
   * when the task was being stopped anyway.
   */
  async reap(): Promise<Leftovers | undefined> {
    this.#shellAlive = false;
    const stoppingTask = this.#terminating;
    // Most tasks leave nothing in their group: one kill(0) says so, with no look into /proc.
    // A task that exited leaves what is in other groups of its session to the next sweep.
    let groupLeft = signalProcessGroup(this.#pgid, 0);
    if (!this.#terminating && !groupLeft) return undefined;
    // Zombies alone (orphans that have exited, which an init that does not reap leaves there): nothing to wait for, or stop.
    if (!this.#terminating && !groupHasLiveMembers(this.#pgid, this.#pgid)) return undefined;
    // A task that ended by itself: a member on its way out of the group is a daemon, not a
    // leftover (`setsid server &` as the last command: the shell may exit between the
    // child's fork and its setsid, and a SIGTERM then killed it about 1 time in 6). Past
    // LEAVING_MS, one that has not had its turn on a CPU yet (a loaded machine) is waited for,
    // as long as the task's shell forked it, it is runnable and has had next to no CPU time (see groupMayBeLeaving), up to
    // LEAVING_MAX_MS: a time window alone took a daemon started on a machine at load 3 for a leftover.
    for (const started = monotonicMs(); groupLeft && !this.#terminating; ) {
      const waited = monotonicMs() - started;
      if (waited >= LEAVING_MS && (this.#leavingCut || waited >= LEAVING_MAX_MS || !groupMayBeLeaving(this.#pgid, this.#pgid))) break;
      await delay(LEAVING_POLL_MS);
      groupLeft = signalProcessGroup(this.#pgid, 0);
    }
    if (!this.#terminating && !groupLeft) return undefined;
    // Its group still has members, so its id, and the session's, are no one else's yet (see process-groups.ts): the
    // session is the task's, as for a task stopped while its shell ran, and what in it does not show taskq's
    // TASKQ_PID is stopped too: a process that cleared its environment (env -i), or wrote its title over it (Perl's
    // `$0 = ...`, setproctitle: gunicorn, nginx, a Ruby server), which a leftover that outlived taskq showed.
    if (groupLeft) this.#stoppedWhileAlive = true;
    // One pass over /proc serves every task reaped in this turn of the event loop (200
    // stopped at once: a few passes, not 200, which took seconds). A pass made earlier in
    // the turn may predate this shell's background jobs: while its group has members (or
    // zombies, which a pass skips), look again in the next turn, with the tasks reaped then.
    // What a pass misses in other groups of the session is the sweep's, a second later.
    // A task that ended by itself, its shell's start time never read: a pass made earlier in this turn may show that shell
    // not yet reaped, as if another process led the session, so this one is made now (and shared for the rest of the turn).
    let stopped = sessionProcessCount(this.#pgid, stoppingTask, this.#stoppedWhileAlive, this.#shellStart);
    if (stopped === 0) {
      if (!groupLeft) return undefined;
      await nextTurn();
      stopped = sessionProcessCount(this.#pgid, true, this.#stoppedWhileAlive, this.#shellStart);
      if (stopped === 0) return undefined;
    }
    // What the SIGTERM reaches, as it goes: what is gone already is not said to be stopped.
    if (!stoppingTask) this.#signalled = signalledNow(sessionPids(this.#pgid, true, this.#stoppedWhileAlive, this.#shellStart));
    // A SIGKILL at once (a second Ctrl-C) came while the reap gave the group's members their time to leave it: it ended them, no SIGTERM.
    if (this.#killed && this.#signalled !== undefined) for (const process of this.#signalled.values()) process.killed = true;
    this.terminate();
    const leftovers = (): Leftovers | undefined => (stoppingTask ? undefined : this.#leftovers());
    let killedAt: number | undefined;
    // Polled with the other tasks being stopped: one pass over /proc per turn for all of them.
    while (sessionHasProcesses(this.#pgid, true, this.#stoppedWhileAlive, this.#shellStart)) {
      if (this.#killed) {
        killedAt ??= monotonicMs();
        // A process stuck in uninterruptible sleep can outlast SIGKILL; do not hang on it.
        if (monotonicMs() - killedAt > KILL_SETTLE_MS) return leftovers();
      }
      await delay(POLL_MS);
    }
    return leftovers();
  }

  /** Before a SIGKILL: the signalled processes still there are ended by it, not by themselves. */
  #markKilled(): void {
    if (this.#signalled === undefined) return;
    for (const [pid, process] of this.#signalled) if (!process.killed && stillRunning(pid, process.start)) process.killed = true;
  }

  /**
   * What taskq stopped of the processes the task left running: those its SIGTERM reached that did not
   * ignore it, and those its SIGKILL found (after the grace, or a second Ctrl-C's); apart, those that
   * ignored the SIGTERM and ended by themselves. Undefined when none was there by the SIGTERM.
   */
  #leftovers(): Leftovers | undefined {
    let stoppedByTerm = 0;
    let killedSignalled = 0;
    let endedByThemselves = 0;
    for (const process of this.#signalled?.values() ?? []) {
      if (process.killed) killedSignalled++;
      else if (process.ignoresTerm) endedByThemselves++;
      else stoppedByTerm++;
    }
    // After the grace, the SIGKILL's own count (processes started since the SIGTERM too); after a SIGKILL at once
    // (a second Ctrl-C), the signalled it found, which it killed, not stopped as the SIGTERM would have.
    const killed = this.#graceRanOut ? Math.max(this.#killedCount, killedSignalled) : this.#killedAtOnce ? killedSignalled : this.#killedCount;
    const stopped = stoppedByTerm + (this.#graceRanOut ? killed : killedSignalled);
    if (stopped === 0 && endedByThemselves === 0) return undefined;
    return { stopped, killed, endedByThemselves, killedAtOnce: this.#killedAtOnce && !this.#graceRanOut };
  }

  /** Stops the pending SIGKILL: the group is gone and its pgid may be reused. */
  dispose(): void {
    this.#killTimer?.clear();
    unwatchSession(this);
  }
}

/** The processes `pids` that are still there, as a signal is about to reach them (see GroupTerminator.reap). */
function signalledNow(pids: readonly number[]): Map<number, Signalled> {
  const signalled = new Map<number, Signalled>();
  for (const pid of pids) {
    const state = readSignalState(pid);
    if (state !== undefined) signalled.set(pid, { ...state, killed: false });
  }
  return signalled;
}
