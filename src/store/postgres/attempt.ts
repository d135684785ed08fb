import { formatMs, isShutdownStop } from "../../engine/errors.js";
import { TaskqError } from "../../errors.js";
import { killOf, LeaseLapsedError, NotSpawnedError, sigkillWords } from "../../handlers/errors.js";
import type { ReleaseEnd } from "./complete.js";
import { RenewalLockedError, RENEWAL_LOCKED_ANSWER_MS, RENEWAL_LOCKED_RETRY_MS } from "./lock-wait.js";
import { LongTimer } from "./long-timer.js";
import { RenewalUnsentError } from "./renewal-unsent.js";
import { ABORTED_BY_SHUTDOWN, REQUESTED } from "./shutdown-cancel.js";
import { abortCode, failureOutcome } from "./outcome.js";
import type { PostgresStore } from "./store.js";
import { causes, isMomentaryRefusal, isRefusal, isTransientError, serverWords, withRetry } from "./transient.js";
import { POOL_FULL, QUERY_READ_TIMEOUT } from "./timeouts.js";
import type { CompletionResult, LeasedTask, Outcome } from "./types.js";
import type { WorkerMetrics } from "./worker-metrics.js";
import type { AbortCode, LeaseLost, TaskHandler, WorkerEvent } from "./worker-types.js";

/** How long a refused record's worker waits to learn what became of the task, to say it in the attempt's log. */
const TASK_NOW_MS = 2_000;

export interface AttemptOptions {
  store: PostgresStore;
  handler: TaskHandler;
  leaseMs: number;
  heartbeatMs: number;
  /** Records the outcome (the worker batches successes with its next lease); false when the lease was lost. */
  complete: (task: LeasedTask, outcome: Outcome) => Promise<CompletionResult | false>;
  metrics: WorkerMetrics;
  emit: (event: WorkerEvent) => void;
  /** Called once when this attempt's lease was found taken over (by a renewal, or by a record refused). */
  onLeaseLost: () => void;
  /** When (performance.now()) the request that leased the task was sent: the lease runs from no earlier. */
  leasedAt: number;
  /** True once a lease given back is to be cancelled as its run's shutdown, not queued again (see PostgresWorker.cancelWhatIsGivenBack). */
  givenBackCancelled: () => boolean;
}

/**
 * One leased attempt: runs the handler with its own AbortController, renews
 * the lease every `heartbeatMs`, aborts on timeout, cancel request or lost
 * lease, and records the outcome guarded by the lease token.
 *
 * The lease is lost when a renewal finds the task taken, and also when the
 * lease runs out on this machine's clock without a renewal, whatever the
 * heartbeat is waiting for (a database that stopped answering, or this process
 * stalled): from then on another worker may run the task, so this attempt must
 * not run on beside it. In that second case no one may have taken the task
 * either, so its outcome is still offered to the database, which takes it only
 * while the lease token is still this attempt's.
 */
export class Attempt {
  readonly task: LeasedTask;
  readonly done: Promise<void>;
  readonly #controller = new AbortController();
  readonly #options: AttemptOptions;
  #heartbeat: NodeJS.Timeout | undefined;
  /** When (performance.now()) the renewal `#heartbeat` sends is due. */
  #heartbeatDue = 0;
  /** When the lease runs out unless renewed: counted from when the request that set it was sent (the database's count starts later). */
  #leaseEnds: number;
  #leaseWatch: NodeJS.Timeout | undefined;
  /** Why the lease was lost, once it was, and when (performance.now()). */
  #lost: LeaseLost | undefined;
  /** Set when a timer of this attempt fired only after the lease had run out: this process was stalled (SIGSTOP, a paused VM). */
  #stalled = false;
  /** Where the last renewal was refused the task's row, held by another session: the row and that session, in words (RenewalLockedError). */
  #lockedBy: string | undefined;
  /** When (performance.now()) the statement of the renewal waiting for its answer was sent, if one is (see RenewOptions.onSent). */
  #renewalSentAt: number | undefined;
  /** When (performance.now()) the renewal on its way was asked for (before it waited for a connection of the renewals' pool), if one is. */
  #renewalAskedAt: number | undefined;
  /** Where the lease ran out while its renewal waited for a connection behind renewals refused for a lock: whose lock (see #whyRanOut). */
  #queuedBehind: string | undefined;
  /** What the server answered the last renewal, where it refused it (too many connections, its table dropped): not a database that did not answer. */
  #refusedWith: string | undefined;
  /** The last renewal failed (`db-error`): the next that succeeds says `db-recovered`. */
  #heartbeatFailed = false;
  #lostAt = 0;
  #settled = false;
  /** Settles once the handler has ended (its processes are gone): from then on only its record is awaited. */
  readonly #handlerEnded: Promise<void>;
  /** Settles once the attempt's end is offered to the database (see endOffered). */
  readonly #endOffered: Promise<void>;
  #offerEnd = (): void => undefined;
  #endHandler = (): void => undefined;
  #handlerDone = false;
  #commandDone = false;
  /**
   * The answer of the renewal last sent while the handler ran, which waits for its row's lock: the end's record waits
   * for it before it locks that row. Sent before the end but reaching the database after the record had locked the row
   * (held up on the network, or waiting for a connection of the renewals' pool, which every task renews on), it waited
   * there for as long as the record did (on another row: a cascade to dependents another session holds), holding one of
   * the pool's connections that other tasks' leases need.
   */
  #waitingRenewal: Promise<unknown> | undefined;
  /** Set where the handler said the stop kept its command from spawning (see NotSpawnedError). */
  #notSpawned = false;
  /** How the attempt ended, while its end is being recorded (not for an attempt given back or stale). */
  #recording: Outcome | undefined;
  /** What the server answered the last try to record the attempt's end, where it refused it (too many connections): not a database that did not answer. */
  #recordRefusedWith: string | undefined;
  /** Set once the record of the attempt's end was given up on (record-lost): `recording` still says how it ended. */
  #recordGivenUp = false;
  /** Set once a try to record the attempt's end has failed (an error tried again): not only slow to be answered. */
  #recordTryFailed = false;
  /** Where a renewal was sent and its reply lost (it may have been taken): the latest its lease may run out then (see leaseMayRunMs). */
  #renewalReplyLost: number | undefined;
  /** True while a renewal's statement is sent and unanswered (see leaseMayRunMs). */
  #renewalOnItsWay = false;
  /** Reads the attempt's last lines so far, once the handler gave a way (see AttemptContext.watchTail). */
  #readTail: (() => string[]) | undefined;
  /** How taskq's SIGKILL ended the attempt, in the handler's words, once it has ended so (a second Ctrl-C): told with its release. */
  #killed: string | undefined;
  /** The last lines the last renewal stored, as JSON: sent again only when they changed. */
  #storedTail = "[]";
  /** Told when the lease runs out, after each renewal (see AttemptContext.onLeaseEnds). */
  #leaseListener: ((endsAt: number) => void) | undefined;

  constructor(task: LeasedTask, options: AttemptOptions) {
    this.task = task;
    this.#options = options;
    this.#leaseEnds = options.leasedAt + options.leaseMs;
    this.#handlerEnded = new Promise((resolve) => (this.#endHandler = resolve));
    this.#endOffered = new Promise((resolve) => (this.#offerEnd = resolve));
    this.done = this.#run();
  }

  /**
   * True once the database has answered for this attempt's end (recorded, released, or found
   * stale): its lease token owns nothing any more. Until then the task may still be running in
   * the database under this attempt's token (a lost lease not yet swept, a record given up on).
   */
  get settled(): boolean {
    return this.#settled;
  }

  /** Settles once the handler has ended (for the shell handler: the task's processes are gone). */
  get handlerEnded(): Promise<void> {
    return this.#handlerEnded;
  }

  /**
   * Settles once the handler has ended and the attempt's end is offered to the database (recorded, or given back): from
   * then on `recording` says which it is. Not as the handler ends: a renewal still on its way is waited for first.
   */
  get endOffered(): Promise<void> {
    return this.#endOffered;
  }

  /** True once the handler has ended. */
  get handlerDone(): boolean {
    return this.#handlerDone;
  }

  /** True once the attempt was aborted (a timeout, a cancel, a lost lease, the worker stopping). */
  get aborted(): boolean {
    return this.#controller.signal.aborted;
  }

  /** True once the task's command ended by itself (before any abort): what is left of the attempt is taskq's (see commandEnded). */
  get commandDone(): boolean {
    return this.#commandDone;
  }

  /**
   * The handler says the command of the attempt with `signal` has ended (its shell exited; see ShellHandlerOptions.onCommandEnded):
   * a stop of the worker's tasks would not stop it. Not once the attempt was aborted: it ended as it was stopped.
   */
  commandEnded(signal: AbortSignal): boolean {
    if (signal !== this.#controller.signal) return false;
    if (!signal.aborted) this.#commandDone = true;
    return true;
  }

  /**
   * How the attempt ended, while that is being recorded (the handler ended and its outcome is offered
   * to the database): undefined before, and for an attempt being given back or found stale.
   */
  get recording(): Outcome | undefined {
    return this.#settled ? undefined : this.#recording;
  }

  /**
   * True while the attempt's end is being recorded and still tried: not once the database has taken it, nor once it was
   * given up on (its tries ran out, or refused for good), where `recording` still says how the attempt ended.
   */
  get recordPending(): boolean {
    return this.recording !== undefined && !this.#recordGivenUp;
  }

  /** What the server answered the last try to record the attempt's end, where it refused it; undefined where it did not answer. */
  get recordRefusedWith(): string | undefined {
    return this.#recordRefusedWith;
  }

  /**
   * True once a try to record the attempt's end has failed (the database did not answer it, or refused it): false while
   * the first is only waiting for its answer (on a row's lock another session holds, or a slow server).
   */
  get recordTryFailed(): boolean {
    return this.#recordTryFailed;
  }

  /** When (performance.now()) the lease runs out on this machine's clock, unless renewed. */
  get leaseEndsAt(): number {
    return this.#leaseEnds;
  }

  /**
   * Within how long from `now` (performance.now()) the lease may run out in the database at the latest: later than
   * leaseEndsAt where a renewal was sent and its reply lost, or is still on its way, which the database may have taken (a
   * lease from then on: from when the loss was seen, or from `now`, as the latest it may have been taken). `now` is the
   * caller's: one read here, a moment after the caller's, made a lease ending with the one just renewed seem to end a
   * moment later. A renewal on its way gives the lease's length itself: `now + leaseMs - now` may come out a hair longer
   * in floating point, a millisecond more once rounded up (and then a second more in the `left` line).
   */
  leaseMayRunMs(now: number): number {
    const onItsWay = this.#renewalOnItsWay ? this.#options.leaseMs : -Infinity;
    return Math.max(this.#leaseEnds - now, (this.#renewalReplyLost ?? -Infinity) - now, onItsWay);
  }

  /**
   * True while the lease has run out on this machine's clock and the database has not answered
   * for this attempt since: the worker's own sweep would take its own task (see PostgresWorker).
   * For as long as its record may be retried, at most: a handler that ignores its abort must not
   * stop the sweeps for ever.
   */
  get leaseInDoubt(): boolean {
    const now = performance.now();
    return !this.#settled && now >= this.#leaseEnds && (this.#lost === undefined || now - this.#lostAt < this.#recordWindowMs());
  }

  /** How long a record is retried while the database does not answer. */
  #recordWindowMs(): number {
    return 2 * this.#options.leaseMs + 5_000;
  }

  /** Aborts the handler; the reason code decides what is recorded. */
  abort(code: AbortCode, message: string): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(new TaskqError(code, message));
  }

  /** Gives the lease back now, for a handler that ignored its abort; its later outcome is then stale. */
  async releaseNow(): Promise<void> {
    if (this.#settled) return;
    try {
      await this.#release();
    } catch (error) {
      this.#options.emit({ type: "db-error", operation: "release", error, retrying: false });
    }
  }

  /** The release on its way, while one is: asked for again, the lease is not given back twice. */
  #releasing: Promise<boolean> | undefined;

  /**
   * Gives the lease back, once: the worker's release of a stuck handler's lease and the handler's own,
   * as it ends, share one request, whose answer is told once, by the attempt's `done` too (a reply that
   * is slow is waited for by both: the handler's end is not taken for the news of a release still on
   * its way). A request that fails may be sent again.
   */
  #release(): Promise<boolean> {
    const stop = this.#options.givenBackCancelled() ? ({ attempt: this.#notSpawned ? "not-spawned" : "started", killed: this.#killed } as const) : undefined;
    // Its last lines, which the database keeps where the task is cancelled, not queued again (none of a command never spawned).
    const tail = this.#notSpawned ? undefined : this.#lastLines();
    // One whose command never spawned, given back without a stop of this worker's (its run stopped elsewhere, or a cancel
    // asked for): not cut short as it ran either (see releaseLease).
    const spawnless = stop === undefined && this.#notSpawned ? { notSpawned: true } : {};
    this.#releasing ??= this.#options.store.releaseAs(this.task.leaseToken, stop, { ...(tail === undefined ? {} : { tail }), ...spawnless }).then(
      (ended) => {
        const released = ended !== false;
        // Answered: the token owns nothing now (given back, or the task had ended or been taken over).
        this.#settled = true;
        if (released) {
          this.#options.metrics.completions.inc({ outcome: "released" });
          // Where the stop cut the attempt short: its last lines, as a local run's summary gives a task it cut short.
          // One whose command the stop kept from spawning has no lines: it was never cut short.
          const tail = this.#notSpawned ? {} : { tail: this.#lastLines() };
          const killed = this.#killed === undefined ? {} : { killed: this.#killed };
          this.#options.emit({ type: "released", task: this.task, ...tail, ...killed, ...cancelledAs(ended) });
        }
        return released;
      },
      (error: unknown) => {
        this.#releasing = undefined;
        throw error;
      },
    );
    return this.#releasing;
  }

  async #run(): Promise<void> {
    const { task } = this;
    const { metrics, emit } = this.#options;
    const signal = this.#controller.signal;
    const { timeoutMs } = task;
    const timer = (ms: number): LongTimer => new LongTimer(() => this.abort("TIMEOUT", `timed out after ${formatMs(ms)}`), ms);
    let timeout = timeoutMs !== null && timeoutMs > 0 ? timer(timeoutMs) : undefined;
    /** The timeout again from now, once the handler's command is spawned (see AttemptContext.startClock): only while it runs. */
    const startClock = (): void => {
      if (timeout === undefined || timeoutMs === null || signal.aborted || this.#handlerDone) return;
      timeout.clear();
      timeout = timer(timeoutMs);
    };
    // A lease whose round trip was slow has less of it left: the first renewal comes as early as to leave the
    // margin every later one leaves (the lease less a heartbeat's interval), not a whole interval on.
    const { leaseMs, heartbeatMs } = this.#options;
    this.#scheduleHeartbeat(Math.min(heartbeatMs, Math.max(0, this.#leaseEnds - performance.now() - (leaseMs - heartbeatMs))));
    this.#watchLease();
    metrics.attempts.inc();
    metrics.runningTasks.inc();
    metrics.queueWait.observe(task.queueWaitMs / 1000);
    emit({ type: "started", task });
    const started = performance.now();
    let outcome: Outcome;
    try {
      await this.#options.handler(task, {
        signal,
        attempt: task.attempt,
        taskId: task.taskId,
        watchTail: (read) => {
          this.#readTail = read;
        },
        startClock,
        onLeaseEnds: (listener) => {
          this.#leaseListener = listener;
          listener(this.#leaseEnds);
        },
      });
      outcome = { kind: "success" };
    } catch (error) {
      // The handler says the worker's own stop ended it (a shell that died of the signal that stopped the worker, see
      // ShellHandlerOptions.sharedSignal): given back, as an attempt the stop aborts is.
      if (!signal.aborted && isShutdownStop(error)) this.abort("SHUTDOWN", error.message);
      // The orphan guard stopped the task as its lease was about to run out while this worker was stopped (see guardLease):
      // a lost lease, said in those words, where no other stop came first (the lease watch's, as the worker woke, says less).
      const lapsed = leaseLapseOf(error);
      if (lapsed !== undefined && !signal.aborted) this.abort("LEASE_LOST", lapsed);
      this.#notSpawned = error instanceof NotSpawnedError;
      outcome = failureOutcome(error, signal, task.timeoutMs);
      if (lapsed !== undefined && outcome.kind === "failure" && abortCode(signal) === "LEASE_LOST") outcome = { ...outcome, error: lapsed };
      this.#killed = sigkillWords(killOf(error));
    } finally {
      timeout?.clear();
      // The renewals go on until the end is recorded: a record that waits (for a connection of a pool whose others
      // each wait on a lock, for a lease round trip) must not let the lease run out, or a sweep would take the
      // task and replace its end with "lease expired" (a success run again). The lease can no longer be lost here.
      clearTimeout(this.#leaseWatch);
      this.#handlerDone = true;
      metrics.runningTasks.dec();
      this.#endHandler();
    }
    const durationMs = performance.now() - started;
    try {
      await this.#renewalAnswered();
      const recorded = this.#record(outcome, durationMs);
      // #record sets what is recorded before it first waits: told now, the stop finds it set.
      this.#offerEnd();
      await recorded;
    } finally {
      clearTimeout(this.#heartbeat);
      this.#heartbeat = undefined;
    }
  }

  /**
   * Waits for the answer of a renewal sent while the handler ran (see #waitingRenewal), but for a heartbeat's interval
   * at most, and not past one before the lease runs out: one that does not come back (its connection stalled) must not
   * hold the record until the lease has nearly run out, when a record slow to lock its row (a pool busy with others)
   * would lose the task to a sweep, its end replaced by "lease expired".
   */
  async #renewalAnswered(): Promise<void> {
    const renewal = this.#waitingRenewal;
    if (renewal === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const waitMs = Math.max(0, Math.min(this.#options.heartbeatMs, this.#leaseEnds - performance.now() - this.#options.heartbeatMs));
    // (It never rejects: the renewal's error is caught where it is sent.)
    await Promise.race([renewal, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  async #record(outcome: Outcome, durationMs: number): Promise<void> {
    const { store, complete, metrics, emit } = this.#options;
    const code = abortCode(this.#controller.signal);
    const retry = {
      maxElapsedMs: this.#recordWindowMs(),
      // Besides a connection lost: a statement the server refused for a moment, which committed nothing (cancelled
      // by pg_cancel_backend or a timeout, out of disk or memory). Given up on, the end was lost (a success run again
      // by the sweep). Not one refused for what it asks, which every try would meet, holding up the successes
      // recorded with it (see PostgresWorker's lease round trip).
      retryIf: (error: unknown) => isTransientError(error) || isMomentaryRefusal(error),
      onRetry: (error: unknown) => {
        this.#recordTryFailed = true;
        this.#recordRefusedWith = serverWords(error);
        emit({ type: "db-error", operation: code === "SHUTDOWN" && outcome.kind !== "success" ? "release" : "complete", error, retrying: true });
      },
    };
    try {
      if (code === "LEASE_LOST" && this.#lost === "taken") {
        // The task is another worker's now, or the sweeper's: so is what is recorded of it.
        metrics.completions.inc({ outcome: "stale" });
        metrics.runTime.observe({ outcome: "stale" }, durationMs / 1000);
        emit({ type: "finished", task: this.task, outcome, result: false, durationMs });
        return;
      }
      if (code === "SHUTDOWN" && outcome.kind !== "success") {
        if (!this.#settled) await withRetry(() => this.#release(), retry);
        return;
      }
      this.#recording = outcome;
      let result = await withRetry(() => complete(this.task, outcome), retry);
      // The token owns nothing: the lease was lost, or a try whose reply was lost had recorded this very end.
      if (result === false) result = await withRetry(() => store.recordedEnd(this.task.taskId, this.task.leaseToken), retry);
      this.#settled = true;
      const label = result === false ? "stale" : result.state === "queued" ? "retried" : result.state;
      metrics.completions.inc({ outcome: label });
      metrics.runTime.observe({ outcome: label }, durationMs / 1000);
      if (label === "retried") metrics.retries.inc();
      // Refused: whose the task is now, for the attempt's log (one short try: the record is what mattered).
      const taskNow = result === false ? await store.taskNow(this.task.taskId, TASK_NOW_MS).catch(() => undefined) : undefined;
      emit({ type: "finished", task: this.task, outcome, result, durationMs, ...(taskNow === undefined ? {} : { taskNow }) });
      // Refused by the database, the attempt's lease was taken over after all: whether it ran out here (its task
      // killed), or the task ended while this worker stalled past it (the end seen first, see #watchLease), its
      // work is someone else's, as when a renewal finds it taken over. Told after the attempt's end, which says why.
      if (result === false) this.#options.onLeaseLost();
    } catch (error) {
      // The sweeper recovers the task once its lease expires, as a lost attempt: the worker says how it ended.
      this.#recordGivenUp = true;
      if (this.#recording !== undefined && !this.#settled) emit({ type: "record-lost", task: this.task, outcome, error });
      else emit({ type: "db-error", operation: "complete", error, retrying: false });
    }
  }

  #scheduleHeartbeat(delay = this.#options.heartbeatMs): void {
    this.#heartbeatDue = performance.now() + delay;
    this.#heartbeat = setTimeout(() => void this.#renew(), delay);
  }

  /**
   * Loses the lease when it runs out before a renewal moves its end (see #renew). After the
   * I/O already waiting, though: when this process stalled (SIGSTOP, a paused VM), the exit
   * of a task that ended meanwhile is seen first, and the task counts as ended, not killed.
   */
  #watchLease(): void {
    clearTimeout(this.#leaseWatch);
    const delay = Math.max(this.#leaseEnds - performance.now(), 0);
    const due = performance.now() + delay;
    this.#leaseWatch = setTimeout(() => {
      // Fired a heartbeat's interval late or more: no renewal could be sent, as this process did not run.
      if (performance.now() - due >= this.#options.heartbeatMs) this.#stalled = true;
      setImmediate(() => this.#lose(this.#whyRanOut()));
    }, delay);
  }

  /**
   * Why the lease ran out without a renewal: this process stalled; its renewals were refused its row (locked); its renewal
   * waited for a connection all the while other tasks' renewals were refused rows another session locked, each holding one
   * of the renewals' few connections for its lock wait (queued: with many tasks' rows held, most renewals never reached
   * theirs before their leases ran out, and were told as a database that did not answer); or the database did not answer.
   */
  #whyRanOut(): LeaseLost {
    if (this.#stalled) return "stalled";
    if (this.#lockedBy !== undefined && !this.#renewalUnanswered()) return "locked";
    // Its renewal still waits for a connection, or got one only lately and waits for its row (not for longer than a lock wait is answered).
    const askedAt = this.#renewalAskedAt;
    this.#queuedBehind = askedAt === undefined || this.#renewalUnanswered() ? undefined : this.#options.store.renewalRefusedSince(askedAt);
    return this.#queuedBehind === undefined ? "unreachable" : "queued";
  }

  /**
   * Whether the renewal on its way was sent longer ago than a renewal refused its row is answered (RENEWAL_LOCKED_ANSWER_MS):
   * whatever row lock an earlier renewal met, this one waits on a database that does not answer (a frozen connection).
   */
  #renewalUnanswered(): boolean {
    return this.#renewalSentAt !== undefined && performance.now() - this.#renewalSentAt >= RENEWAL_LOCKED_ANSWER_MS;
  }

  async #renew(): Promise<void> {
    const { store, leaseMs, metrics, emit } = this.#options;
    const { task } = this;
    const sentAt = performance.now();
    // Run out already: the lease watch, due now, decides. This process stalled where this renewal comes a heartbeat's
    // interval late or more, as the watch tells a stall; not where it is a retry due just before the lease's end (a row
    // locked is tried again soon) whose timer fired a moment after it: the watch tells why the renewals failed.
    if (sentAt >= this.#leaseEnds) {
      if (sentAt - this.#heartbeatDue >= this.#options.heartbeatMs) this.#stalled = true;
      return;
    }
    // Once the handler has ended, only the lease is renewed: the last lines go with the end.
    const tail = this.#handlerDone ? undefined : this.#changedTail();
    let statementSentAt: number | undefined;
    try {
      // An answer after the lease ran out is of no use; waiting on, the connection would stay taken.
      // Once the handler has ended, a row locked is skipped: its record holds it (a sweep skips it too), waiting on
      // another row; the renewal waiting behind it would hold a connection of the renewals' pool, for others' leases.
      const ended = this.#handlerDone;
      this.#renewalAskedAt = sentAt;
      const onSent = (): void => {
        this.#renewalSentAt = statementSentAt = performance.now();
        this.#renewalOnItsWay = true;
      };
      const renewal = store.renew(task.taskId, task.leaseToken, leaseMs, { timeoutMs: this.#leaseEnds - sentAt, skipLocked: ended, onSent, ...(tail === undefined ? {} : { tail: tail.lines }) });
      if (!ended) this.#waitingRenewal = renewal.catch(() => undefined);
      const { status, cancelKind } = await renewal.finally(() => {
        this.#renewalSentAt = this.#renewalAskedAt = undefined;
        this.#renewalOnItsWay = false;
      });
      if (this.#lost !== undefined) return;
      if (status === "lost") {
        if (!ended) return this.#lose("taken");
        // Recorded meanwhile, or its row locked by the record: the next renewal tells (they end with the record).
        if (this.#heartbeat !== undefined) this.#scheduleHeartbeat();
        return;
      }
      if (tail !== undefined) this.#storedTail = tail.json;
      this.#lockedBy = this.#refusedWith = undefined;
      this.#leaseEnds = sentAt + leaseMs;
      if (this.#heartbeat !== undefined && !this.#handlerDone) {
        this.#watchLease();
        this.#leaseListener?.(this.#leaseEnds);
      }
      metrics.leaseRenewals.inc();
      if (this.#heartbeatFailed) emit({ type: "db-recovered", operation: "heartbeat" });
      this.#heartbeatFailed = false;
      if (status === "cancel-requested" && !this.#controller.signal.aborted && !this.#handlerDone) {
        // Asked by a stopped run: its shutdown's, as it is recorded (see runningCancel), in the task's log too.
        const runStopped = cancelKind === "shutdown";
        emit({ type: "cancel-requested", task, ...(runStopped ? { runStopped } : {}) });
        this.abort("CANCELLED", runStopped ? ABORTED_BY_SHUTDOWN : REQUESTED);
      }
    } catch (error) {
      // Failed as the lease ran out: not sent, as it got its connection only then (RenewalUnsentError), or its statement's time
      // up, which was what was left of the lease. The lease watch, due by now, tells why as of this renewal, as it would have
      // with the renewal still on its way (see #whyRanOut): not as a database that did not answer where it waited behind
      // renewals refused their rows. Not sent, it met no row: whatever lock an earlier one met is still the story.
      // Timed out, it failed as the lease ran out whatever the clock says: its time was what was left of the lease, and the
      // driver's timer may fire up to a millisecond before that end (a loaded machine's lease said as a database that did not answer).
      if (performance.now() >= this.#leaseEnds || statementTimedOut(error)) {
        this.#renewalAskedAt = sentAt;
        this.#renewalSentAt = statementSentAt;
      }
      if (error instanceof RenewalUnsentError) return;
      // Sent, and not refused by the server (which rolls a statement back): the database may have taken it, its reply lost.
      if (statementSentAt !== undefined && !isRefusal(error)) this.#renewalReplyLost = Math.max(this.#renewalReplyLost ?? -Infinity, performance.now() + leaseMs);
      // A renewal whose row another session holds (STORE_LOCKED: its wait cut short) is tried again soon: the lock
      // may be let go before the lease runs out, and the renewal at the next heartbeat could come too late.
      const next = error instanceof TaskqError && error.code === "STORE_LOCKED" ? Math.min(RENEWAL_LOCKED_RETRY_MS, this.#options.heartbeatMs) : this.#options.heartbeatMs;
      // Kept until a renewal goes through: a lease that runs out meanwhile says whose lock it waited for, not that the database did not answer.
      // (A renewal that timed out since most often waited for the same row: the words stay; not where its statement went unanswered
      // for longer than a lock wait and its look-up take, as a lock wait is cut short: the database froze. One that got no
      // connection, or lost it, did not reach the row: the database did not answer, whatever lock an earlier one met, which may have been let go since.)
      const unansweredFor = statementSentAt === undefined ? 0 : performance.now() - statementSentAt;
      if (error instanceof RenewalLockedError) this.#lockedBy = error.held;
      else if (!mayHaveWaitedForLock(error) || unansweredFor >= RENEWAL_LOCKED_ANSWER_MS) this.#lockedBy = undefined;
      this.#refusedWith = error instanceof RenewalLockedError ? undefined : serverWords(error);
      // Told as "retrying" only when a retry comes before the lease runs out (a timeout is what was
      // left of it): otherwise the lease watch tells what happened.
      if (this.#heartbeat === undefined || this.#lost !== undefined || performance.now() + next >= this.#leaseEnds) return;
      this.#heartbeatFailed = true;
      emit({ type: "db-error", operation: "heartbeat", error, retrying: true });
      this.#scheduleHeartbeat(next);
      return;
    }
    if (this.#heartbeat !== undefined) this.#scheduleHeartbeat();
  }

  /** The attempt's last lines so far: none before the handler gave a way to read them, or where reading them failed. */
  #lastLines(): string[] {
    try {
      return this.#readTail?.() ?? [];
    } catch {
      return [];
    }
  }

  /** The attempt's last lines, when they differ from what the last renewal stored. */
  #changedTail(): { lines: string[]; json: string } | undefined {
    if (this.#readTail === undefined) return undefined;
    let lines: string[];
    try {
      lines = this.#readTail();
    } catch {
      return undefined; // a handler's reader that fails costs the lines, never the lease
    }
    const json = JSON.stringify(lines);
    return json === this.#storedTail ? undefined : { lines, json };
  }

  #lose(why: LeaseLost): void {
    if (this.#controller.signal.aborted) return;
    // The handler has ended: its outcome goes to the database, which tells whether the lease held. A renewal
    // that finds no lease then (it reached the database after the end was recorded: a slow network, a
    // reconnect) is no news: the record finds the end recorded, or the lease taken over (see #record).
    if (this.#handlerDone) return;
    this.#lost = why;
    this.#lostAt = performance.now();
    this.#options.metrics.leasesLost.inc();
    this.#options.emit({ type: "lease-lost", task: this.task, why });
    // Refused by the server, and no renewal asked for since (one on its way, for a connection or an answer, is a database that did not answer).
    const refusedWith = why === "unreachable" && this.#renewalAskedAt === undefined ? this.#refusedWith : undefined;
    this.abort("LEASE_LOST", leaseLostWords(why, this.#lockedBy, this.#queuedBehind, refusedWith));
    // Ran out: another worker may have the task now, or no one; the record tells (see #record).
    if (why === "taken") this.#options.onLeaseLost();
  }
}

/**
 * Whether a renewal that failed may have waited for its task's row all the same: its statement timed out (the driver's
 * query_timeout: the lease's end), or it waited for one of the renewals' connections, taken by others waiting on rows.
 * Not one refused a connection, or whose connection was lost: it never reached the row.
 */
function mayHaveWaitedForLock(error: unknown): boolean {
  return statementTimedOut(error) || causedBy(error, POOL_FULL);
}

/** Whether a renewal's statement was ended by its own time (the driver's query_timeout), which is what was left of the lease. */
function statementTimedOut(error: unknown): boolean {
  return causedBy(error, QUERY_READ_TIMEOUT);
}

/** Whether `error`, or one of its causes, has the driver's `message`. */
function causedBy(error: unknown, message: string): boolean {
  for (const cause of causes(error)) if ((cause as { message?: unknown }).message === message) return true;
  return false;
}

/** Why an attempt's lease was lost, in the words of its error. */
function leaseLostWords(why: LeaseLost, lockedBy: string | undefined, queuedBehind: string | undefined, refusedWith: string | undefined): string {
  if (why === "taken") return "the lease was taken over";
  if (why === "locked" && lockedBy !== undefined) return `the lease ran out while its renewals waited for a lock: ${lockedBy}`;
  if (why === "queued" && queuedBehind !== undefined) {
    return `the lease ran out while its renewal waited for a connection, each of the worker's renewal connections taken by another task's renewal waiting for a row locked by ${queuedBehind}`;
  }
  if (refusedWith !== undefined) return `the lease ran out before a renewal: the database refused its renewals (${refusedWith})`;
  return "the lease ran out before a renewal (the worker stalled or the database did not answer)";
}

/** The words of a handler's rejection that says the orphan guard stopped its task for its lease (see LeaseLapsedError), or undefined. */
function leaseLapseOf(error: unknown): string | undefined {
  try {
    for (const cause of causes(error)) if (cause instanceof LeaseLapsedError) return cause.message;
  } catch {
    // a cause that throws as it is read: none
  }
  return undefined;
}

/** The `cancelled` of a `released` event, where the lease given back was cancelled, not queued again. */
export function cancelledAs(ended: ReleaseEnd | false): { cancelled?: Exclude<ReleaseEnd, "queued"> } {
  return ended === false || ended === "queued" ? {} : { cancelled: ended };
}
