/** How often a database error that goes on is said again: "still failing after 30s". */
export const DB_ERROR_REMINDER_MS = 30_000;

/** What to say of a database error: nothing (a repeat), or its line; said again, how long its operation has failed and in how many tries. */
export type DbErrorSaying = { say: false } | { say: true; again?: { failingForMs: number; tries: number } };

/** An operation failing since `since` (monotonic): its tries, those not said, and when each error was last said. */
interface Failing {
  since: number;
  tries: number;
  hidden: number;
  saidAt: Map<string, number>;
}

/**
 * A worker's database errors, one line per error rather than one per try: during an outage a worker
 * tries every 2 s or so, and its output would be nothing else. An error its operation already met since
 * it last succeeded is said again only every DB_ERROR_REMINDER_MS, with how long the operation has failed
 * (a dropped connection may alternate between two errors: neither is said each time); an error not met
 * yet is said at once, and so is a try given up on. Once the operation succeeds again after tries that
 * were not said, `recovered` says how long it failed.
 */
export class DbErrorLines {
  readonly #failing = new Map<string, Failing>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  failed(operation: string, message: string, retrying: boolean): DbErrorSaying {
    const now = this.#now();
    let failing = this.#failing.get(operation);
    if (failing === undefined) this.#failing.set(operation, (failing = { since: now, tries: 0, hidden: 0, saidAt: new Map() }));
    failing.tries++;
    // A try given up on is the last: said, as what follows it (the worker's last words) refers to it.
    if (!retrying) return { say: true };
    const saidAt = failing.saidAt.get(message);
    if (saidAt !== undefined && now - saidAt < DB_ERROR_REMINDER_MS) {
      failing.hidden++;
      return { say: false };
    }
    failing.saidAt.set(message, now);
    return saidAt === undefined ? { say: true } : { say: true, again: { failingForMs: now - failing.since, tries: failing.tries } };
  }

  /** The operation succeeded again: how long it failed and in how many tries, when some were not said (else nothing to add). */
  recovered(operation: string): { failedForMs: number; tries: number } | undefined {
    const failing = this.#failing.get(operation);
    this.#failing.delete(operation);
    if (failing === undefined || failing.hidden === 0) return undefined;
    return { failedForMs: this.#now() - failing.since, tries: failing.tries };
  }
}
