import { setTimeout as delay } from "node:timers/promises";
import { sessionHasProcesses, signalProcessGroup, signalSession } from "./process-groups.js";

/** How often a lingering group is checked while it is being terminated. */
const POLL_MS = 25;
/** How long SIGKILLed processes get to disappear before the attempt stops waiting. */
const KILL_SETTLE_MS = 2000;

/**
 * SIGTERM to the whole group, then SIGKILL after the grace period: the escalation
 * execa applies to one child, applied to the task's process group, and to the other
 * groups of its session (see process-groups.ts).
 */
export class GroupTerminator {
  readonly #pgid: number;
  readonly #graceMs: number;
  #killTimer: NodeJS.Timeout | undefined;
  #terminating = false;
  #killed = false;
  /** Until the shell is reaped (see reap), the group's id is the task's. */
  #shellAlive = true;

  constructor(pgid: number, graceMs: number) {
    this.#pgid = pgid;
    this.#graceMs = graceMs;
  }

  /** Starts the escalation once; later calls do nothing. */
  terminate(): void {
    if (this.#terminating) return;
    this.#terminating = true;
    if (!signalSession(this.#pgid, "SIGTERM", this.#shellAlive)) return;
    this.#killTimer = setTimeout(() => this.kill(), this.#graceMs);
  }

  kill(): void {
    clearTimeout(this.#killTimer);
    this.#terminating = true;
    this.#killed = true;
    signalSession(this.#pgid, "SIGKILL", this.#shellAlive);
  }

  /**
   * Called once the shell has exited: whatever is left of its group (background jobs) is
   * terminated, and this returns when it is gone (for a task being stopped, its whole
   * session), or SIGKILLed and given time to die. From here on the group's id may be anyone's
   * once the group is empty: only processes with taskq's TASKQ_PID are looked for and
   * signalled (see process-groups.ts).
   */
  async reap(): Promise<void> {
    this.#shellAlive = false;
    // Most tasks leave nothing in their group: one kill(0) says so, with no look into /proc.
    // A task that exited leaves what is in other groups of its session to the next sweep.
    if (!this.#terminating && !signalProcessGroup(this.#pgid, 0)) return;
    if (!sessionHasProcesses(this.#pgid)) return;
    this.terminate();
    let killedAt: number | undefined;
    // Polled with the other tasks being stopped: one pass over /proc per turn for all of them.
    while (sessionHasProcesses(this.#pgid, true)) {
      if (this.#killed) {
        killedAt ??= performance.now();
        // A process stuck in uninterruptible sleep can outlast SIGKILL; do not hang on it.
        if (performance.now() - killedAt > KILL_SETTLE_MS) return;
      }
      await delay(POLL_MS);
    }
  }

  /** Stops the pending SIGKILL: the group is gone and its pgid may be reused. */
  dispose(): void {
    clearTimeout(this.#killTimer);
  }
}
