import { setTimeout as delay } from "node:timers/promises";
import { hasSessionStragglers, isProcessGroupAlive, signalSession } from "./process-groups.js";

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

  constructor(pgid: number, graceMs: number) {
    this.#pgid = pgid;
    this.#graceMs = graceMs;
  }

  /** Starts the escalation once; later calls do nothing. */
  terminate(): void {
    if (this.#terminating) return;
    this.#terminating = true;
    if (!signalSession(this.#pgid, "SIGTERM")) return;
    this.#killTimer = setTimeout(() => this.kill(), this.#graceMs);
  }

  kill(): void {
    clearTimeout(this.#killTimer);
    this.#terminating = true;
    this.#killed = true;
    signalSession(this.#pgid, "SIGKILL");
  }

  /**
   * Called once the shell has exited: whatever is left of its group (background jobs)
   * is terminated, and this returns when the group is gone (and, for a task being stopped,
   * its session's other groups), or SIGKILLed and given time to die.
   */
  async reap(): Promise<void> {
    // A task stopped (timeout, cancel, shutdown) ends when its whole session is gone; one that
    // exited leaves what is not in its group to the next sweep (see process-groups.ts).
    const alive = async (): Promise<boolean> => (await isProcessGroupAlive(this.#pgid)) || (this.#terminating && hasSessionStragglers(this.#pgid));
    if (!(await alive())) return;
    this.terminate();
    let killedAt: number | undefined;
    while (await alive()) {
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
