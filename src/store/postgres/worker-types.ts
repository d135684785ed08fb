import type { CompletionResult, LeasedTask, Outcome, TaskNow } from "./types.js";
import type { SweptTask } from "./sweep.js";

/** A worker's lease when none is given (`--lease`): renewed every third of it. */
export const DEFAULT_LEASE_MS = 30_000;

/** What a handler gets besides the task: the attempt's only cancellation token. */
export interface AttemptContext {
  /** Aborted on timeout, cancel, lost lease or shutdown; `signal.reason` is a TaskqError saying which. */
  signal: AbortSignal;
  attempt: number;
  taskId: string;
  /**
   * Gives the worker a way to read the attempt's last lines of output while it runs: each
   * heartbeat stores them when they changed, so that if this worker dies mid-task, the dead
   * letter of the attempt still shows what it last printed.
   */
  watchTail(read: () => string[]): void;
  /**
   * Starts the attempt's timeout again from now, for a handler whose work begins after a wait of
   * its own (the shell handler's turn to spawn): that wait then does not count against the timeout.
   */
  startClock(): void;
  /**
   * Tells `listener` when the attempt's lease runs out unless renewed (performance.now()): at once, and after each
   * renewal while the handler runs. The shell handler hands it to the orphan guard, which stops the task should the
   * worker be stopped as its lease is about to run out (see guardLease).
   */
  onLeaseEnds(listener: (endsAt: number) => void): void;
}

/**
 * Runs one attempt. Resolve on success; throw on failure. An error with
 * `permanent: true` is never retried; its `result` field may carry
 * `{ exitCode, signal, timedOut, tail }` to record. The handler applies the
 * task's `retryOn` (a failure whose exit code it does not list is permanent): the store does not.
 */
export type TaskHandler = (task: LeasedTask, context: AttemptContext) => Promise<unknown>;

/**
 * Why an attempt's lease was lost: `taken`, a renewal found the task taken over; `stalled`, it ran out
 * while this process did not run (SIGSTOP, a paused VM), so no renewal was even sent; `locked`, it ran out
 * while renewals were refused the task's row, which another session held (a psql transaction); `queued`, it ran
 * out while its renewal waited for a connection of the worker's renewals, every one taken by other tasks' renewals
 * each refused a row another session held (that session's lock is why, whether or not it held this task's row); `unreachable`,
 * it ran out while renewals got no answer (the database did not answer in time).
 */
export type LeaseLost = "taken" | "stalled" | "locked" | "queued" | "unreachable";

/** Abort reasons, as `TaskqError.code` on `signal.reason`. */
export type AbortCode = "TIMEOUT" | "CANCELLED" | "LEASE_LOST" | "SHUTDOWN";

export type WorkerEvent =
  | { type: "started"; task: LeasedTask }
  /**
   * `taskNow`: where the database refused the attempt's record (its lease had run out and was swept), what
   * became of the task, as the database said then: taken over by another worker, or ended by a sweep
   * (null: the task is gone, pruned; absent: not asked, or no answer).
   */
  | { type: "finished"; task: LeasedTask; outcome: Outcome; result: CompletionResult | false; durationMs: number; taskNow?: TaskNow | null }
  /**
   * Given back as the worker stopped, the attempt not counted. `tail`: where an attempt the stop cut short was given
   * back, the last lines it wrote (none where it wrote none); absent for a lease never started, or one whose command the
   * stop kept from spawning (the handler threw NotSpawnedError). `killed`: how taskq's
   * SIGKILL ended that attempt, in words, where it did (a second Ctrl-C's: "killed with SIGKILL at once, ...").
   * `cancelled`: not queued again but cancelled, as its cancel asked ("requested") or as its run was stopped
   * ("run-stopped": by its own `run --store`, see PostgresWorker.cancelWhatIsGivenBack, or marked by one).
   */
  | { type: "released"; task: LeasedTask; tail?: string[]; killed?: string; cancelled?: "requested" | "run-stopped" }
  /**
   * Leased by a round trip whose answer came only once the lease had run out on this machine's clock
   * (`roundTripMs` >= `leaseMs`: this process stalled, or the statement waited on the database): not
   * started, as another worker may have swept the task and run it meanwhile. `released`: given back,
   * the attempt not counted; false where the task was no longer this worker's (swept, or ended).
   */
  | { type: "late-lease"; task: LeasedTask; roundTripMs: number; leaseMs: number; released: boolean }
  /** Leased to this worker by a round trip whose reply was lost, so never started: given back, the attempt not counted. */
  | { type: "stray-released"; runId: string; key: string }
  | { type: "lease-lost"; task: LeasedTask; why: LeaseLost }
  /** `runStopped`: the cancel was asked by a stopped `run --store` of the task's run (recorded as "aborted by shutdown"), not by `taskq cancel`. */
  | { type: "cancel-requested"; task: LeasedTask; runStopped?: true }
  /** Tasks this worker's sweep took from workers whose leases expired, each with what became of it. */
  | { type: "orphans-recovered"; count: number; tasks: SweptTask[] }
  /**
   * `retrying`: whether the worker tries again (false: it gave up, e.g. giving a lease back while it stops). `strays`: a
   * `release` of what a round trip whose reply was lost may have leased, which the worker gives back before it leases again:
   * while it fails, no lease is tried.
   */
  | { type: "db-error"; operation: string; error: unknown; retrying: boolean; strays?: true }
  /** An operation that had failed (`db-error`) succeeded again. */
  | { type: "db-recovered"; operation: string }
  /**
   * The stop ended with leases in the database that this worker could not give back or record an end
   * for (the database could not be reached): `tasks`, and with `strays`, leases of a round trip whose reply
   * was lost. Each runs out within `withinMs` (0: they have run out), at most `leaseMs`; a worker's sweep then recovers its task (see sweep.ts).
   * `outcomes`, aligned with `tasks`: how each attempt ended where its end could not be recorded (a success
   * has happened, though the sweep counts the attempt as lost), null where it was not known to have ended.
   */
  | {
      type: "leases-left";
      tasks: LeasedTask[];
      outcomes: Array<Outcome | null>;
      strays: boolean;
      leaseMs: number;
      withinMs: number;
      databaseGone?: true;
      /**
       * Where the database was reached as the worker stopped and a statement of its own still ran there: whether one waited on
       * a lock another session holds (true), or all were only slow (false). Not set where it could not be asked (not reached).
       */
      lockWait?: boolean;
      /** Where it was not asked so, and the server answered the worker's last failed operation with a refusal: its words (too many connections). */
      refusedWith?: string;
      /**
       * Where a renewal of one of them was sent and its reply lost (or not come yet): the database may have taken it, and
       * then holds that lease longer than `withinMs` says, up to `mayHoldMs` from now (a lease from when the loss was seen).
       * Set only where it is a later second than `withinMs`, each rounded up to whole seconds (as the `left` line says them).
       */
      mayHoldMs?: number;
    }
  /**
   * A stopping worker has an attempt that ended (`outcome`) whose end the database has not taken yet (it
   * does not answer, or refuses with `refusedWith`, the server's words: too many connections): it tries on until the
   * attempt's lease runs out on its clock, within `withinMs`. `lockWait`: true where a statement of the worker's waits on
   * a lock another session holds (a psql session's, a migration's), also where a try before failed (then no `refusedWith`);
   * false where no try has failed yet, the first only waiting for its answer, and the database has only not answered yet;
   * absent where a try has failed and none waits on a lock.
   */
  | { type: "recording"; task: LeasedTask; outcome: Outcome; withinMs: number; refusedWith?: string; lockWait?: boolean }
  /**
   * An attempt's end that could not be recorded, given up on while the worker runs on (the database did not
   * answer for as long as its lease held, or refused it): what the sweep then records of the task, once its
   * lease runs out (a lost attempt, run again or FAILED "lease expired"), does not say how it ended.
   */
  | { type: "record-lost"; task: LeasedTask; outcome: Outcome; error: unknown; databaseGone?: true }
  /**
   * The worker leases no more: `stop` was called, or a lease was taken over (then its owner calls `stop`, which
   * lets the other running attempts finish). Events of the running attempts follow, and `stopped` last.
   */
  | { type: "stopping"; reason: StopReason }
  /** A stop's deadline has passed with `running` tasks still running: they are stopped now (their leases then given back). */
  | { type: "deadline-passed"; running: number }
  /** The worker's last event, once `stop` has ended: its attempts ended or were given back (or left: `leases-left`). */
  | { type: "stopped"; reason: StopReason }
  /**
   * The worker's first leases were refused for a reason no retry fixes (permission denied, a schema, table or
   * function not there: see unusableStoreState): it stops, with `error`, rather than try for ever.
   */
  | { type: "store-unusable"; error: unknown }
  /**
   * The store's database no longer exists (dropped or renamed: see isDatabaseGone): the worker stops, its running
   * attempts aborted at once, as nothing they do can be recorded. Its later events of the database carry `databaseGone`.
   */
  | { type: "database-gone"; error: unknown };

/**
 * Why a worker stops: `stop` was called, a lease was taken over, the store could not be used from the start, or its
 * database no longer exists.
 */
export type StopReason = "requested" | "lease-lost" | "store-unusable" | "database-gone";
