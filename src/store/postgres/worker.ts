import { setTimeout as sleep } from "node:timers/promises";
import type { Server } from "node:http";
import { Attempt, cancelledAs } from "./attempt.js";
import { Deadline } from "./long-timer.js";
import { serveMetrics } from "./metrics-server.js";
import type { PostgresStore } from "./store.js";
import { SWEEP_BATCH } from "./sweep.js";
import type { CompletionResult, LeasedTask, Outcome } from "./types.js";
import { isDatabaseGone, isNeverConnected, isRefusal, serverWords, unusableStoreState } from "./transient.js";
import { Wakeup } from "./wakeup.js";
import { newWorkerId } from "./worker-id.js";
import { WorkerMetrics } from "./worker-metrics.js";
import { DEFAULT_LEASE_MS, type StopReason, type TaskHandler, type WorkerEvent } from "./worker-types.js";

/** A successful attempt waiting for the lease loop to record it. */
interface PendingSuccess {
  task: LeasedTask;
  outcome: Extract<Outcome, { kind: "success" }>;
  resolve: (result: CompletionResult | false) => void;
  reject: (error: unknown) => void;
}

/**
 * How long `stop` waits for the leases of stuck handlers to be given back, and for the releases of
 * aborted attempts (the database may not answer).
 */
const RELEASE_WAIT_MS = 2_000;

/**
 * How long a stopping worker that leaves leases asks whether a statement of its own still waits on a lock (see
 * PostgresStore.waitingOnLock): the database reached and slow, not cut off. A database that does not answer is not
 * waited for longer.
 */
const LOCK_LOOKUP_MS = 1_000;

/** How long a stopping worker waits for an ended attempt's record before saying it is still trying. */
const RECORD_NEWS_MS = 1_000;

/**
 * How often the sweeper looks at when the earliest lease of any worker runs out (see #sweepLoop): a lease
 * taken since its last look, as short as 2 s, is seen before it runs out.
 */
const PEEK_MS = 2_000;

/** How long after a lease's expiry the sweeper looks again: its worker's last renewal may be on its way. */
const EXPIRY_MARGIN_MS = 100;

/** The shortest wait between two looks at the leases. */
const PEEK_FLOOR_MS = 250;

/**
 * How long the database must stay missing (3D000 met again that much later, and no operation answered meanwhile) before a
 * worker takes it for gone, at most: an administrator who renamed it and renamed it back (ALTER DATABASE ... RENAME, which
 * first needs every session ended) has it back within moments, and its runs and leases with it. Never longer than a
 * heartbeat's interval: a short lease would run out first, and its task be stopped as one taken over.
 */
const GONE_CONFIRM_MS = 5_000;

/** Why a task was stopped where the store's database no longer exists (see #goneDatabase), in its log and its line. */
const DATABASE_GONE_WORDS = "the store's database no longer exists (dropped or renamed while the worker ran)";

/** Default of `abortGraceMs`: the shell handler's default kill grace (5 s), and a margin. */
const ABORT_GRACE_MS = 7_000;

export interface PostgresWorkerOptions {
  store: PostgresStore;
  /** Attempts run at once by this worker. */
  concurrency: number;
  handler: TaskHandler;
  /** Lease length (default 30 s); renewed every `heartbeatMs` (default a third of it). */
  leaseMs?: number;
  heartbeatMs?: number;
  /**
   * Default: host name, process id and a random suffix. Must be unique among the running workers:
   * after a lost reply, a worker gives back the leases in its name that it did not start.
   */
  workerId?: string;
  /**
   * Backstop poll while idle and listening for notifications, in case one was missed (default 30 s):
   * a notification, or the nearest delayed task, wakes the worker sooner.
   */
  pollMs?: number;
  /** The poll while the listening connection is down, when no notification comes (default 2 s; never above `pollMs`). */
  unlistenedPollMs?: number;
  /** Orphan sweep period (default half the lease); between, a sweep also follows the earliest lease of any worker that runs out. */
  sweepMs?: number;
  /** Lease only this run's tasks (`taskq run --store`); default: every run's. */
  runId?: string;
  /**
   * How long `stop`, once it has aborted the running attempts, waits for their handlers to end
   * before giving the leases back regardless (default 7 s). Until a handler has ended its task may
   * still run, so this must outlast the handler's own kill grace (the CLI: --kill-grace plus 2 s):
   * given back sooner, another worker would run the task beside it.
   */
  abortGraceMs?: number;
  /** Observes what the worker does; a throwing listener is ignored. */
  onEvent?: (event: WorkerEvent) => void;
}

/**
 * Pulls tasks from a PostgresStore and runs them with `handler`, up to
 * `concurrency` at once. Idle, it sleeps until a NOTIFY, the nearest
 * not-before, or the poll backstop (seldom while notifications arrive, often
 * while their connection is down). It also sweeps expired leases.
 */
export class PostgresWorker {
  readonly workerId: string;
  readonly metrics: WorkerMetrics;
  readonly #options: Required<Omit<PostgresWorkerOptions, "onEvent" | "workerId" | "runId" | "abortGraceMs">>;
  /** Set by cancelWhatIsGivenBack: a lease given back is cancelled as its run's shutdown, not queued again. */
  #givenBackCancelled = false;
  readonly #runId: string | undefined;
  readonly #abortGraceMs: number;
  readonly #onEvent: ((event: WorkerEvent) => void) | undefined;
  /**
   * The running attempts, by lease token: not by task, as one task may have two here, the attempt found stale as it
   * ended (this worker stalled past its lease) and the next, leased again by the round trip that found it so.
   */
  readonly #running = new Map<string, Attempt>();
  /** Successes the next lease round trip records; their slots are free for that lease. */
  #pending: PendingSuccess[] = [];
  /** Lease tokens of running attempts whose handler succeeded: recorded or being recorded, their slot is free. */
  readonly #succeeded = new Set<string>();
  /**
   * Lease tokens of the attempts this worker started, until the database has answered for their
   * end (see Attempt.settled): never given back as strays, since an attempt that ran is counted.
   */
  readonly #started = new Set<string>();
  /** A lease round trip failed after it may have committed: the database may hold leases this worker never heard of. */
  #strays = false;
  /**
   * A lease round trip that asks for tasks is on its way, unanswered: one still so as the stop ends (its statement waiting on a
   * lock, a database that stopped answering) may lease in this worker's name once it is answered, with no one to give it back.
   */
  #leasing = false;
  /** The database operations whose last try failed (`db-error`), told `db-recovered` when one succeeds. */
  readonly #failing = new Set<string>();
  readonly #wakeup = new Wakeup();
  readonly #stopController = new AbortController();
  #loop: Promise<void> | undefined;
  #sweeper: Promise<void> | undefined;
  #unsubscribe: (() => void) | undefined;
  #stopReason: StopReason | undefined;
  /** Set once a lease round trip has been answered: an error no retry fixes stops the worker only before. */
  #leasedOnce = false;
  readonly #stopDeadline = new Deadline();
  /** Until when a stop waits for its aborted handlers (see abortGraceMs). */
  readonly #abortGrace = new Deadline({ grace: true });
  #stopping: Promise<void> | undefined;
  /** Tasks leased as the worker stopped whose leases could not be given back (see #giveBack). */
  readonly #leftBehind: LeasedTask[] = [];
  /** Set once `stop` has returned: a record still retried in the background is no news any more. */
  #stopped = false;
  /** Aborted by giveUpRecords: the stop no longer waits for the records of attempts that ended (see #awaitRecords). */
  readonly #recordsGivenUp = new AbortController();
  /** Settles once #recordsGivenUp is aborted: one listener, however many records are waited for. */
  #givenUp: Promise<void> | undefined;
  /** The stop's one look for a statement of the worker's waiting on a lock, shared by the records it waits for (see #awaitRecords). */
  #lockLookup: Promise<boolean | undefined> | undefined;
  /** Set while the stop waits for a record the database does not take ("recording"). */
  #recordsAwaited = 0;
  /** What the server answered the last operation that failed, where it refused it (see "leases-left"'s `refusedWith`). */
  #refusedWith: string | undefined;
  /** Set once "stopped" was told: nothing is told after it. */
  #silent = false;
  /** Set once an operation met the database gone (see isDatabaseGone): the worker stops, and says so once. */
  #databaseGone = false;
  /** When an operation first met the database missing, since the last that was answered (see GONE_CONFIRM_MS). */
  #missingSince: number | undefined;
  /**
   * The attempts the database's going aborted (see #goneDatabase), before any stop: one whose handler ended at once has
   * left #running by the time the stop looks, its lease not given back, and is named as it stops all the same.
   */
  #goneAborted: Attempt[] = [];

  constructor(options: PostgresWorkerOptions) {
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#options = {
      store: options.store,
      concurrency: Math.max(1, Math.floor(options.concurrency)),
      handler: options.handler,
      leaseMs,
      heartbeatMs: options.heartbeatMs ?? Math.floor(leaseMs / 3),
      pollMs: options.pollMs ?? 30_000,
      unlistenedPollMs: Math.min(options.unlistenedPollMs ?? 2_000, options.pollMs ?? 30_000),
      sweepMs: options.sweepMs ?? Math.floor(leaseMs / 2),
    };
    this.workerId = options.workerId ?? newWorkerId();
    this.#onEvent = options.onEvent;
    this.#runId = options.runId;
    this.#abortGraceMs = options.abortGraceMs ?? ABORT_GRACE_MS;
    this.metrics = new WorkerMetrics(options.store);
  }

  /** Starts leasing; resolves once listening for notifications. */
  async start(): Promise<void> {
    if (this.#loop !== undefined) return;
    this.#unsubscribe = this.#options.store.subscribe(() => this.#wakeup.notify());
    await this.#options.store.listening();
    this.#loop = this.#leaseLoop();
    this.#sweeper = this.#sweepLoop();
  }

  /** Prometheus text of this worker's registry. */
  async metricsText(): Promise<string> {
    return this.metrics.text();
  }

  /** Keys of the attempts running now. */
  get runningTasks(): string[] {
    return [...this.#running.values()].map((attempt) => `${attempt.task.runId}/${attempt.task.key}`);
  }

  /** The handler says the command of the attempt with `signal` has ended by itself: the stop's note does not count it. */
  commandEnded(signal: AbortSignal): void {
    for (const attempt of this.#running.values()) if (attempt.commandEnded(signal)) return;
  }

  /**
   * Aborts every running attempt now (reason SHUTDOWN): each one's lease is given
   * back when its handler settles, and the attempt is not counted. For a second
   * Ctrl-C during a graceful stop. `graceMs`: how long `stop` then waits for the
   * handlers before giving their leases back regardless, where it is shorter than
   * `abortGraceMs` (a second Ctrl-C SIGKILLs the tasks: no kill grace to wait for).
   */
  abortRunning(graceMs?: number): void {
    if (graceMs !== undefined) this.#abortGrace.within(graceMs);
    this.#abortAll("the worker is stopping");
  }

  /**
   * Stops waiting for the records of attempts that ended, which a stop otherwise tries until their leases run out (up to
   * `--lease`, a long one hours): for a further Ctrl-C after the second, whether the stop has said it waits for them
   * ("recording") yet or not: one that came before that line did nothing, and a fourth was needed. A record the database
   * takes in a moment is still kept (a storm of signals as the stop begins): each is given that moment (RECORD_NEWS_MS)
   * before it is given up. Their ends are told as left ("leases-left"). Returns whether an end was being recorded as
   * they were given up (false where none was, or they were given up already: an end whose record was lost before, an
   * attempt the database's going aborted, is no record pending).
   */
  giveUpRecords(): boolean {
    if (this.#recordsGivenUp.signal.aborted) return false;
    this.#recordsGivenUp.abort();
    return this.#recordsAwaited > 0 || [...this.#goneAborted, ...this.#running.values()].some((attempt) => attempt.recordPending);
  }

  /** Aborts every running attempt (reason SHUTDOWN) in `words`: what its task's log and line say it was stopped for. */
  #abortAll(words: string): void {
    for (const attempt of this.#running.values()) attempt.abort("SHUTDOWN", words);
  }

  /**
   * Graceful stop: no new leases; running attempts may finish until
   * `deadlineMs` (default 10 s), then are aborted and their leases released
   * (the interrupted attempt is not counted). Always returns, also when the
   * database does not answer: nothing is waited for much past the deadline.
   * Called again while stopping, it brings the deadline forward (a second
   * Ctrl-C: `stop({ deadlineMs: 0 })`) and returns the same promise.
   */
  stop(options: { deadlineMs?: number } = {}): Promise<void> {
    this.#stopDeadline.within(options.deadlineMs ?? 10_000);
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const deadline = this.#stopDeadline.reached;
    this.#halt("requested");
    // The lease loop and the sweeper end at their next turn. One waiting on a database that does not
    // answer is not waited for past the deadline (what it leases then is given back: see #leaseLoop).
    await Promise.race([Promise.all([this.#loop, this.#sweeper]), deadline]);
    const running = [...new Set([...this.#goneAborted, ...this.#running.values()])];
    const settled = Promise.all(running.map((attempt) => attempt.done)).then(() => "settled" as const);
    // Every task has ended, each end recorded or being recorded: the time to finish has nothing left to wait for. A
    // record the database does not take is waited for (and said) from now, as once the time had passed: the stop waited
    // it out first (10 s, a --shutdown-timeout of minutes) before the `record` line, for tasks that had all ended. A lease
    // being given back (or found stale) is waited for as before: its end is no record that a task's work was done.
    const ended = Promise.all(running.map((attempt) => attempt.endOffered.then(() => (attempt.recording === undefined ? attempt.done : undefined)))).then(() => "ended" as const);
    const first = await Promise.race([settled, ended, deadline]);
    if (first === "deadline") {
      // Those still running that no second signal has stopped already: the user is told why they get SIGTERM now.
      // Nor those whose command has ended by itself: taskq waits out what it left running, on its own clock.
      const stopped = running.filter((attempt) => !attempt.handlerDone && !attempt.aborted && !attempt.commandDone).length;
      if (stopped > 0) this.#emit({ type: "deadline-passed", running: stopped });
      this.abortRunning(this.#abortGraceMs);
      // Each handler ends once its task's processes are gone (SIGTERM, then SIGKILL after the kill grace): only
      // then may its lease go back, or another worker would run the task beside it. One that ignores its signal
      // cannot be stopped, nor a release be waited for that the database does not answer: its lease is given
      // back after the abort grace regardless, the releases waited for a little, and the stop goes on anyway.
      const handlers = Promise.all(running.map((attempt) => attempt.handlerEnded)).then(() => "ended" as const);
      if ((await Promise.race([handlers, this.#abortGrace.reached])) === "deadline") {
        await Promise.race([Promise.all(running.filter((attempt) => !attempt.handlerDone).map((attempt) => attempt.releaseNow())), this.#pause(RELEASE_WAIT_MS)]);
      }
    }
    if (first !== "settled") await this.#awaitRecords(running);
    for (const pause of this.#pauses) pause.abort();
    this.#stopDeadline.dispose();
    this.#abortGrace.dispose();
    this.#unsubscribe?.();
    this.#stopped = true;
    // What the database still holds in this worker's name: its last words say what becomes of it, and how
    // each attempt whose end could not be recorded ended (a deploy that succeeded has happened).
    const unsettled = running.filter((attempt) => !attempt.settled);
    const left = [...unsettled.map((attempt) => attempt.task), ...this.#leftBehind];
    const outcomes = [...unsettled.map((attempt) => attempt.recording ?? null), ...this.#leftBehind.map(() => null)];
    const gone = this.#databaseGone ? { databaseGone: true as const } : {};
    // A lease round trip still unanswered (past the deadline, the stop did not wait for it) is one whose reply is lost too.
    const strays = this.#strays || this.#leasing;
    if (left.length > 0 || strays) {
      // Whether the database was reached, a statement of this worker's waiting on a lock another session holds (a migration's, a
      // psql session's), or slow: "could not be reached" was said of those too.
      const waiting = this.#databaseGone ? undefined : await this.#options.store.waitingOnLock(LOCK_LOOKUP_MS);
      // When the last of them runs out, on this machine's clock: one leased as the worker stopped, or by a round trip whose reply was lost, a whole lease from now.
      const now = performance.now();
      const ends = [...unsettled.map((attempt) => attempt.leaseEndsAt - now), ...(this.#leftBehind.length > 0 || strays ? [this.#options.leaseMs] : [])];
      const withinMs = Math.max(Math.ceil(Math.max(...ends)), 0);
      // A renewal whose reply was lost (or is still on its way) may have been taken: the database may hold the lease longer.
      // Said only where it changes what the line says, in whole seconds up: a doubt a millisecond long was "within 30s, unless
      // a renewal whose reply was lost went through: then within 31s".
      const mayHold = Math.ceil(Math.max(...unsettled.map((attempt) => attempt.leaseMayRunMs(now)), 0));
      const doubt = Math.ceil(mayHold / 1000) > Math.ceil(withinMs / 1000) ? { mayHoldMs: mayHold } : {};
      this.#emit({ type: "leases-left", tasks: left, outcomes, strays, leaseMs: this.#options.leaseMs, withinMs, ...doubt, ...gone, ...(waiting === undefined ? {} : { lockWait: waiting }), ...(this.#refusedWith === undefined || waiting !== undefined ? {} : { refusedWith: this.#refusedWith }) });
    }
    // Told once everything above is: a supervisor reading "stopped" knows the worker holds nothing more.
    this.#emit({ type: "stopped", reason: this.#stopReason ?? "requested" });
    this.#silent = true;
  }

  /**
   * Waits for the ends of the attempts whose handlers have ended to be recorded: a record that the database
   * does not answer is tried again for as long as its lease can still be honoured (until it runs out on this
   * machine's clock), and said so; then the stop goes on without it ("leases-left" tells how it ended). An
   * aborted attempt's release is waited for a little only: its lease running out costs no more than the attempt.
   */
  async #awaitRecords(attempts: Attempt[]): Promise<void> {
    const waits = attempts
      .filter((attempt) => attempt.handlerDone && !attempt.settled)
      .map(async (attempt) => {
        const outcome = attempt.recording;
        const leftMs = attempt.leaseEndsAt - performance.now();
        if (outcome === undefined) {
          // Given back as it ended (SHUTDOWN): a last try, which says it is the last, once the tries on their own did not get through.
          await Promise.race([attempt.done, this.#pause(RELEASE_WAIT_MS)]);
          if (!attempt.settled) await Promise.race([attempt.releaseNow(), this.#pause(RELEASE_WAIT_MS)]);
          return;
        }
        // Given up on already (its tries ran out, or a refusal for good): the `lost` line said so, and nothing is tried.
        if (!attempt.recordPending) return;
        if (leftMs <= RELEASE_WAIT_MS) return Promise.race([attempt.done, this.#pause(RELEASE_WAIT_MS)]);
        const givenUp = (this.#givenUp ??= new Promise<void>((resolve) => this.#recordsGivenUp.signal.addEventListener("abort", () => resolve(), { once: true })));
        // No longer to be said: taken, given up on by its tries, or by a third signal (which stops the stop's waits at once).
        const noNews = (): boolean => !attempt.recordPending || this.#recordsGivenUp.signal.aborted;
        // Said only when the record is not there in a moment: one on its way is no news.
        await Promise.race([attempt.done, this.#pause(RECORD_NEWS_MS), givenUp]);
        if (noNews()) return;
        // A try on its way may wait on a row's lock another session holds (a psql session's transaction), which the line names
        // as the `left` line does. Else "does not answer" once a try has failed; a first one still waiting for its answer, the
        // database has not answered it yet. Also where a try failed before (its connection dropped): the one on its way now
        // may wait on such a lock, which is what keeps it, not a database that does not answer. Asked briefly, once for the
        // whole stop (a connection of its own: not one per record), and not of a database that is gone.
        let lockWait: boolean | undefined;
        if (!this.#databaseGone) {
          this.#lockLookup ??= this.#options.store.waitingOnLock(LOCK_LOOKUP_MS);
          const waiting = (await Promise.race([this.#lockLookup, givenUp])) ?? false;
          lockWait = waiting || !attempt.recordTryFailed ? waiting : undefined;
        }
        if (noNews()) return;
        const withinMs = attempt.leaseEndsAt - performance.now();
        // A refusal of a try before is no longer the story where the try on its way waits on a lock: the database took its connection.
        const refusedWith = lockWait === true ? undefined : attempt.recordRefusedWith;
        this.#emit({ type: "recording", task: attempt.task, outcome, withinMs: Math.max(Math.ceil(withinMs), 0), ...(refusedWith === undefined ? {} : { refusedWith }), ...(lockWait === undefined ? {} : { lockWait }) });
        this.#recordsAwaited++;
        await Promise.race([attempt.done, this.#pause(withinMs), givenUp]).finally(() => this.#recordsAwaited--);
      });
    await Promise.all(waits);
  }

  /** Timers of the stop's waits, cleared once it ends (a pending one would hold the process). */
  readonly #pauses = new Set<AbortController>();

  /**
   * Resolves "paused" once `ms` have passed on performance.now(), or at the end of the stop. A timer may fire up to a
   * millisecond before its time by that clock (it counts whole milliseconds): a stop that waited for a record until its
   * lease ran out then said the lease "runs out within 1s", of one it had waited out. Slept again for what is left.
   */
  #pause(ms: number): Promise<"paused"> {
    const controller = new AbortController();
    this.#pauses.add(controller);
    const until = performance.now() + ms;
    const wait = async (): Promise<"paused"> => {
      for (let left = ms; left > 0; left = until - performance.now()) await sleep(left, undefined, { signal: controller.signal });
      return "paused";
    };
    return wait()
      .catch(() => "paused" as const)
      .finally(() => this.#pauses.delete(controller));
  }

  /** Serves this worker's metrics on `GET /metrics` (port 0 picks a free port). */
  async serveMetrics(port: number, host?: string): Promise<Server> {
    return serveMetrics(this.metrics.registry, port, host);
  }

  #emit(event: WorkerEvent): void {
    // A success whose record the missing database refused is lost at once: it is told as the database's going, not as a task a sweep runs again.
    if (event.type === "record-lost" && isDatabaseGone(event.error)) this.#goneDatabase(event.error);
    if (event.type === "db-error" && isDatabaseGone(event.error)) this.#databaseMissing(event.error);
    if (event.type === "db-recovered") this.#missingSince = undefined;
    // The latest failure's: what the server answered, where it refused (too many connections); undefined where it did not answer.
    if (event.type === "db-error") this.#refusedWith = serverWords(event.error);
    if (event.type === "db-recovered") this.#refusedWith = undefined;
    if (this.#databaseGone) {
      // "database-gone" said why each try fails now: not once more for each operation.
      if (event.type === "db-error") return;
      if (event.type === "record-lost") event = { ...event, databaseGone: true };
    }
    // Stopped, the worker has said what becomes of the leases it still holds ("leases-left"); and
    // "stopped" is its last word, also when a handler that ignored its signal ends later.
    if ((this.#stopped && (event.type === "db-error" || event.type === "db-recovered")) || this.#silent) return;
    try {
      this.#onEvent?.(event);
    } catch {
      // A listener's failure must not stop the worker.
    }
  }

  /** An operation met the database missing: taken for gone once it has stayed so for GONE_CONFIRM_MS. */
  #databaseMissing(error: unknown): void {
    const now = performance.now();
    this.#missingSince ??= now;
    if (now - this.#missingSince >= Math.min(GONE_CONFIRM_MS, this.#options.heartbeatMs)) this.#goneDatabase(error);
  }

  /**
   * The database no longer exists (dropped or renamed): no try will reach it again, and no lease held in it is anyone's.
   * Said once; the worker stops, and its running attempts are aborted now (their processes stopped as a stop stops them):
   * what they would do from now on could not be recorded, nor could any other worker take their tasks.
   */
  #goneDatabase(error: unknown): void {
    if (this.#databaseGone) return;
    this.#databaseGone = true;
    this.#emit({ type: "database-gone", error });
    this.#halt("database-gone");
    this.#goneAborted = [...this.#running.values()];
    // Why, in each task's log and line: not "the worker is stopping", as if someone had stopped it.
    this.#abortAll(DATABASE_GONE_WORDS);
  }

  /** An operation on the database failed: told, and remembered until it succeeds again (see #dbAnswered). */
  #dbError(operation: string, error: unknown, retrying: boolean, strays = false): void {
    this.#failing.add(operation);
    this.#emit({ type: "db-error", operation, error, retrying, ...(strays ? { strays: true as const } : {}) });
  }

  /** An operation on the database succeeded: after failures of it, `db-recovered` says so. */
  #dbAnswered(operation: string): void {
    // The database is there: a later "does not exist" starts a new wait (see GONE_CONFIRM_MS).
    this.#missingSince = undefined;
    if (this.#failing.delete(operation)) this.#emit({ type: "db-recovered", operation });
  }

  #halt(reason: StopReason): void {
    if (this.#stopReason !== undefined) return;
    this.#stopReason = reason;
    this.#stopController.abort();
    this.#wakeup.notify();
    // Not "stopped" yet: the running attempts have yet to end, or be given back (see #stop).
    this.#emit({ type: "stopping", reason });
  }

  /**
   * One round trip per turn: records the successes that ended since the last
   * turn and fills the free slots (theirs included) in the same commit. While
   * a turn is in flight, further successes gather for the next one.
   */
  async #leaseLoop(): Promise<void> {
    const { store, concurrency, leaseMs, pollMs, unlistenedPollMs } = this.#options;
    const signal = this.#stopController.signal;
    let failures = 0;
    // A database that did not answer is tried again with a backoff up to the short poll.
    const backoff = (): number => Math.min(100 * 2 ** failures++, unlistenedPollMs);
    while (!signal.aborted) {
      this.#wakeup.clear();
      // Before leasing more: a lease whose reply was lost must not wait for its expiry to be counted.
      if (this.#strays && !(await this.#giveBackStrays())) {
        await this.#wakeup.wait(backoff(), signal);
        continue;
      }
      const free = concurrency - this.#running.size + this.#succeeded.size;
      const batch = this.#pending;
      // Notifications missed while the LISTEN is down (the listener wakes the loop as it drops): poll often meanwhile.
      let waitMs = store.notificationsConnected ? pollMs : unlistenedPollMs;
      if (free > 0 || batch.length > 0) {
        this.#pending = [];
        try {
          const ended = batch.map(({ task, outcome }) => ({ token: task.leaseToken, outcome }));
          const sentAt = performance.now();
          this.#leasing = free > 0;
          const { completed, leased, nextDelayMs } = await store.completeAndLease(ended, this.workerId, free, leaseMs, { runId: this.#runId }).finally(() => (this.#leasing = false));
          failures = 0;
          this.#leasedOnce = true;
          this.#dbAnswered("lease");
          batch.forEach((entry, i) => entry.resolve(completed[i] ?? false));
          // Each end this round trip recorded is told (its `finished` event) before a task it leased starts:
          // a dependent it unblocked, leased in the same commit, would otherwise be told started first.
          const told = batch.flatMap(({ task }, i) => (completed[i] ? [this.#running.get(task.leaseToken)?.done ?? Promise.resolve()] : []));
          if (told.length > 0) await Promise.all(told);
          if (signal.aborted) {
            // Stopped while this round trip was on its way: what it leased starts nowhere, and goes back at once.
            await Promise.all(leased.map((task) => this.#giveBack(task)));
            break;
          }
          const roundTripMs = performance.now() - sentAt;
          if (leased.length > 0 && roundTripMs >= leaseMs) {
            // The leases ran out on this machine's clock before their tasks could start: another worker may have
            // swept them and run them meanwhile, so none starts here; each goes back, uncounted, where it is still ours.
            await Promise.all(leased.map((task) => this.#giveBackLate(task, roundTripMs)));
            continue;
          }
          for (const task of leased) this.#launch(task, sentAt);
          if (free > 0 && leased.length === free) continue; // there may be more: fill the freed slots first
          // Slots left free: sleep no longer than the nearest delayed task. (A completion wakes the loop too.)
          if (leased.length < free && nextDelayMs !== null) waitMs = Math.min(waitMs, nextDelayMs);
        } catch (error) {
          // Each attempt retries its own record (see Attempt); the lease waits for the backoff. The round trip
          // may have committed, its reply lost: what it leased is given back once the database answers again.
          // Not one the database refused, which committed nothing: a release would only be refused in its turn. Nor one that
          // could lease nothing: it asked for none (its slots full, it only recorded), or its connection was never made.
          if (!isRefusal(error) && free > 0 && !isNeverConnected(error)) this.#strays = true;
          for (const entry of batch) entry.reject(error);
          // Refused from the first lease on, as no retry fixes (a role without rights, a store not whole): said, and the worker
          // stops, rather than try every few seconds for ever, idle, while the runs wait for a worker that works.
          if (!this.#leasedOnce && unusableStoreState(error) !== undefined) {
            this.#emit({ type: "store-unusable", error });
            this.#halt("store-unusable");
            break;
          }
          this.#dbError("lease", error, true);
          waitMs = backoff();
        }
      }
      await this.#wakeup.wait(waitMs, signal);
    }
    // Stopped: successes still waiting are recorded on their own, with no lease.
    for (const entry of this.#pending.splice(0)) this.#completeNow(entry);
    if (this.#strays) await this.#giveBackStrays();
  }

  /**
   * Gives back the tasks the database says this worker holds but that it never started (leased
   * by a round trip whose reply was lost): queued again at once, the attempt not counted. True
   * once done; false when the database did not answer (the next turn tries again).
   */
  async #giveBackStrays(): Promise<boolean> {
    try {
      const released = await this.#options.store.releaseStrays(this.workerId, [...this.#started]);
      this.#strays = false;
      this.#dbAnswered("release");
      for (const { runId, key } of released) this.#emit({ type: "stray-released", runId, key });
      return true;
    } catch (error) {
      // Stopped, the loop makes its last try: no other comes. Said as what it is for: while it fails, no lease is tried.
      this.#dbError("release", error, !this.#stopController.signal.aborted, true);
      return false;
    }
  }

  /** Records an attempt's outcome: a success with the next lease round trip, anything else at once. */
  #complete(task: LeasedTask, outcome: Outcome): Promise<CompletionResult | false> {
    if (outcome.kind !== "success" || this.#stopController.signal.aborted) return this.#options.store.complete(task.leaseToken, outcome);
    return new Promise((resolve, reject) => {
      this.#succeeded.add(task.leaseToken);
      this.#pending.push({ task, outcome, resolve, reject });
      this.#wakeup.notify();
    });
  }

  #completeNow({ task, outcome, resolve, reject }: PendingSuccess): void {
    this.#options.store.complete(task.leaseToken, outcome).then(resolve, reject);
  }

  /**
   * From now on, a lease this worker gives back as it stops is not queued again for another worker but cancelled
   * as its run's shutdown (the attempt not counted): for `run --store` stopped by a signal, whose run ends with it,
   * so that no other worker starts again what the user asked to stop (see StopCancel).
   */
  cancelWhatIsGivenBack(): void {
    this.#givenBackCancelled = true;
  }

  /** Releases a lease never started: the task is queued again at once, its attempt not counted (or cancelled: see cancelWhatIsGivenBack). */
  async #giveBack(task: LeasedTask): Promise<void> {
    try {
      // Never started: of a run stopped meanwhile, it is cancelled as not started, not as cut short as it ran.
      const ended = await this.#options.store.releaseAs(task.leaseToken, this.#givenBackCancelled ? { attempt: "not-started" } : undefined, { neverStarted: true });
      this.#dbAnswered("release");
      if (ended !== false) this.#emit({ type: "released", task, ...cancelledAs(ended) });
    } catch (error) {
      this.#dbError("release", error, false);
      this.#leftBehind.push(task);
    }
  }

  /** Gives back a lease that ran out before its task could start (see WorkerEvent "late-lease"). */
  async #giveBackLate(task: LeasedTask, roundTripMs: number): Promise<void> {
    const { leaseMs } = this.#options;
    try {
      const released = (await this.#options.store.releaseAs(task.leaseToken, undefined, { neverStarted: true })) !== false;
      this.#dbAnswered("release");
      this.#emit({ type: "late-lease", task, roundTripMs, leaseMs, released });
    } catch (error) {
      // Not given back: it runs out (it has already, on this clock) and the sweep recovers it, as any lost lease.
      this.#dbError("release", error, false);
    }
  }

  /** Runs an attempt of `task`, leased by a request sent at `leasedAt` (performance.now()). */
  #launch(task: LeasedTask, leasedAt: number): void {
    const attempt = new Attempt(task, {
      ...this.#options,
      leasedAt,
      complete: (leased, outcome) => this.#complete(leased, outcome),
      metrics: this.metrics,
      emit: (event) => this.#emit(event),
      // A task taken over means this worker stalled past its lease: its work is someone else's, stop taking it.
      onLeaseLost: () => this.#halt("lease-lost"),
      givenBackCancelled: () => this.#givenBackCancelled,
    });
    this.#running.set(task.leaseToken, attempt);
    this.#started.add(task.leaseToken);
    void attempt.done.finally(() => {
      this.#running.delete(task.leaseToken);
      if (attempt.settled) this.#started.delete(task.leaseToken);
      // A success freed its slot already, for the round trip that recorded it.
      if (!this.#succeeded.delete(task.leaseToken)) this.#wakeup.notify();
    });
  }

  /**
   * Sweeps as it starts and every `sweepMs` (half its own lease); between, it looks every PEEK_MS at when the
   * earliest lease of any worker runs out, and sweeps as soon as one has. The leases of a fleet may differ:
   * a task whose worker died is back soon after the lease that worker took ran out, not at the next sweep
   * of a worker whose lease is ten times as long. A look reads one row of an index; a sweep settles runs too.
   */
  async #sweepLoop(): Promise<void> {
    const signal = this.#stopController.signal;
    const { sweepMs } = this.#options;
    // The first sweep at once: leases that ran out while no worker was up (a fleet restarted) are not
    // left for half of this worker's lease, which may be far longer than the one that ran out.
    let sweptAt = -Infinity;
    while (!signal.aborted) {
      const dueAt = sweptAt + sweepMs;
      // Before its period is out, a sweep only once a lease has run out.
      let expiry = dueAt > performance.now() ? await this.#leaseExpiry() : null;
      if (signal.aborted) return;
      // Right after this process stalled, the expired leases are its own, whose results are on their way.
      const inDoubt = [...this.#running.values()].some((attempt) => attempt.leaseInDoubt);
      if (!inDoubt && (dueAt <= performance.now() || (expiry !== null && expiry <= 0))) {
        try {
          // Told as soon as the sweep is committed: what ends a dead worker's log comes before a next attempt's start.
          const tasks = await this.#options.store.recoverOrphans(SWEEP_BATCH, (swept) => {
            if (swept.length === 0) return;
            this.metrics.orphansRecovered.inc(swept.length);
            this.#emit({ type: "orphans-recovered", count: swept.length, tasks: swept });
          });
          // At once again after a sweep that took all it takes at a time: more may be waiting.
          sweptAt = tasks.length === SWEEP_BATCH ? -Infinity : performance.now();
          this.#dbAnswered("sweep");
        } catch (error) {
          sweptAt = performance.now();
          this.#dbError("sweep", error, true);
        }
        if (sweptAt === -Infinity) continue;
        expiry = await this.#leaseExpiry();
      } else if (dueAt <= performance.now()) {
        // In doubt: not swept, and not again before its period.
        sweptAt = performance.now();
      }
      // Until the next lease runs out (a little after, for its last renewal to land), looking again within PEEK_MS for
      // leases taken since; one run out that the sweep left (its row locked, or this worker's own in doubt) after PEEK_MS.
      const untilExpiry = expiry === null ? Infinity : expiry > 0 ? Math.max(expiry + EXPIRY_MARGIN_MS, PEEK_FLOOR_MS) : PEEK_MS;
      const waitMs = Math.max(Math.min(sweptAt + sweepMs - performance.now(), PEEK_MS, untilExpiry), 0);
      await sleep(waitMs, undefined, { signal }).catch(() => undefined);
    }
  }

  /**
   * Milliseconds until the earliest lease runs out (see nextLeaseExpiry); null when nothing runs, or the database did not answer
   * (the sweep says so). A database gone is taken into account (see #databaseMissing), an answer too: a worker whose every slot
   * runs a long task leases nothing, and renews and sweeps only every third and half of its lease (for a lease of 10 minutes,
   * minutes apart), while it looks here every PEEK_MS. Its tasks were left running that long on a database that no longer exists.
   */
  async #leaseExpiry(): Promise<number | null> {
    try {
      const expiry = await this.#options.store.nextLeaseExpiry();
      // The database is there: a later "does not exist" starts a new wait (see GONE_CONFIRM_MS).
      this.#missingSince = undefined;
      return expiry;
    } catch (error) {
      if (isDatabaseGone(error)) this.#databaseMissing(error);
      return null;
    }
  }
}
