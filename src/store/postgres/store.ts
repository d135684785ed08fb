import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { storeApplicationName } from "./application-name.js";
import { TaskqError } from "../../errors.js";
import { isRunId, RUN_ID_EXPECTED } from "../../run-id.js";
import { closestMatch } from "../../loaders/suggest.js";
import { cancelSeveral, cancelTasks, type CancelResult, type RunningTarget, type ShutdownCancel, type TargetCancel } from "./cancel.js";
import { completeAttempt, completeSuccess, readRecordedEnd, releaseLease, releaseStrays, type ReleaseEnd, type StopCancel } from "./complete.js";
import { completeAndLease, type CompleteAndLeaseResult, type EndedAttempt } from "./complete-and-lease.js";
import { refreshRunState, settleRuns } from "./graph.js";
import { leaseTasks, nextLeaseExpiry, nextRunnableDelay, renewLease } from "./lease.js";
import { NotificationListener } from "./listener.js";
import { isLockNotAvailable, RenewalLockedError, renewalLockedError, RENEWAL_LOCK_WAIT_MS, retryLockWaits } from "./lock-wait.js";
import { FIRST_MIGRATION_VERSION, LATEST_MIGRATION, migrate, migrateStore, notUsable } from "./migrations.js";
import { schemaNames, type SchemaNames } from "./names.js";
import { pruneRuns, type PruneResult } from "./prune.js";
import { redactConnectionString } from "./redact.js";
import { redriveSeveral, redriveTask, type RedriveResult } from "./redrive.js";
import { runIdCaseError } from "./run-id-case.js";
import { RenewalUnsentError } from "./renewal-unsent.js";
import { closestRunId, markWorkersWaiting, readDeadLetters, readRunStatus, slipsOf, workersConnected } from "./status.js";
import { generateRunId, submitNewRun, submitRun, type SubmitResult } from "./submit.js";
import { RunNotFoundError, toStoreError } from "./store-error.js";
import { withLibpqSslModes } from "./ssl-mode.js";
import { SWEEP_BATCH, sweepExpiredLeases, type SweptTask } from "./sweep.js";
import { storableOutcome, storableText } from "./text.js";
import { connectTimeoutOf, DEFAULT_CONNECT_TIMEOUT_MS, describeTimeout, DEFAULT_QUERY_TIMEOUT_MS, LONG_QUERY_TIMEOUT_MS, serverTimeoutMs, timedQuery, type Timeouts } from "./timeouts.js";
import { failedAfterCommitSent, inTransaction, isConflict, retryConflicts, stoppedBeforeSending, transactionOnce } from "./transaction.js";
import { isConnectionLost, isNeverConnected, isTerminatedByServer, isTransientError, serverWords, withRetry } from "./transient.js";
import type { CompletionResult, DeadLetter, HeartbeatStatus, LeasedTask, LeaseRenewal, Outcome, RunStatus, TaskNow, TaskState, Workflow } from "./types.js";

const ignoreError = (): void => undefined;

/**
 * pg-pool's `onConnect`, which it awaits before handing a new client out (its types say it returns nothing):
 * the session's `statement_timeout`, unless `ms` is 0 (no limit), and its `idle_in_transaction_session_timeout`
 * as long: a transaction whose client went away in a network that stopped (it gave up waiting for a reply;
 * the server never heard of it) would otherwise hold the rows it locked until the server's TCP keepalive
 * noticed, two hours by default, and its tasks could be neither swept nor cancelled. The store's transactions
 * send each statement as soon as the reply to the one before is read, so no live one is idle that long.
 *
 * And its `application_name`, `name` (see PostgresStoreOptions.applicationName, as storeApplicationName makes it), over any the URL or PGAPPNAME
 * gives: taskq tells its own sessions by it (a lock one holds is waited out for 30 s, another's for 5 s; `status`
 * finds a worker still waiting on the database), which a name of the user's, the same for every command, hid.
 * Set here, as the startup parameter of the URL's would win over one of taskq's; in the same round trip.
 */
function sessionHook(ms: number, name: string | undefined, lockTimeoutMs?: number): { onConnect?: (client: pg.ClientBase) => Promise<void> } {
  const settings = [
    ...(ms <= 0 ? [] : [`SET statement_timeout = ${ms}`, `SET idle_in_transaction_session_timeout = ${ms}`]),
    ...(name === undefined ? [] : [`SET application_name = ${pg.escapeLiteral(name)}`]),
    ...(lockTimeoutMs === undefined ? [] : [`SET lock_timeout = ${lockTimeoutMs}`]),
  ];
  if (settings.length === 0) return {};
  const text = settings.join("; ");
  return {
    onConnect: async (client) => {
      await client.query(text);
    },
  };
}

/**
 * A foreign key violation (23503) in a submit: the rows it refers to went away while it ran,
 * which only a prune does (submit checks every dependency first). Submitting again then makes
 * the run anew.
 */
function isPrunedMeanwhile(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "23503";
}

export interface PostgresStoreOptions {
  /** An existing pool (not closed by `close()`), or... */
  pool?: pg.Pool;
  /** ...a connection string for a pool the store owns. */
  connectionString?: string;
  /** Size of an owned pool (default 10); lease renewals have a pool of their own besides (RENEWAL_POOL_SIZE). */
  poolSize?: number;
  /** Schema holding the tables (default "taskq"). */
  schema?: string;
  /** Connection errors the store recovers from (idle clients, the listener); default: ignored. */
  onError?: (error: unknown) => void;
  /** Random source for retry jitter, injectable for exact tests. */
  random?: () => number;
  /**
   * For an owned pool: how long opening a connection may take (default: the connection
   * string's `connect_timeout`, as libpq reads it, else 10 s; 0 waits for ever).
   */
  connectTimeoutMs?: number;
  /** For an owned pool: how long a statement may go unanswered before it fails and its connection is closed (default 30 s). */
  queryTimeoutMs?: number;
  /**
   * How long the one-shot operations (submit, runStatus, runState, deadLetters, cancelRun, redrive,
   * pruneRuns) go on trying through connections refused or dropped (a database restarting, a
   * backend terminated), where the database cannot have done half of them: not past a COMMIT
   * sent (but for submit, which is idempotent on its run id), nor past a time limit. Default 0: the first such error is thrown, for a caller that
   * retries for itself (`status --watch`).
   */
  retryDroppedMs?: number;
  /**
   * For an owned pool: what `pg_stat_activity` names its connections (`taskq worker <id>`), followed by the
   * store's schema (`taskq worker <id> in ci`, see storeApplicationName) and cut to PostgreSQL's 63 bytes, over
   * any `application_name` the connection string or PGAPPNAME gives (see sessionHook).
   */
  applicationName?: string;
}

/**
 * How long opening the store goes on trying through sessions ended under it (see isConnectionLost): a worker
 * started as a backend is terminated rides it out, as it does once running, rather than exit 1.
 */
const OPEN_RETRY_MS = 10_000;

/**
 * The sessions of `busy` that are taskq's own (`name`, see storeApplicationName) and run a statement now: not a
 * pid a pooler (PgBouncer) made up, which may be another session's.
 */
const OWN_ACTIVE_SQL = `SELECT pid, wait_event_type = 'Lock' AS locked FROM pg_stat_activity
                         WHERE pid = ANY($1::int[]) AND application_name = $2 AND state = 'active'`;

/** How many pids of connections given back with an error a store keeps, for cancelStatements (see PostgresStore.#orphans). */
const ORPHANS_KEPT = 64;

/** How long `close` waits for connections still busy: one whose statement the database does not answer is left to its timeout. */
const CLOSE_WAIT_MS = 1_000;

/**
 * Connections of an owned store's pool kept for lease renewals (see #renewals): each renewal is one short
 * UPDATE of its own task's row, so two keep up with a worker's many tasks, one renewal waiting on its row.
 */
const RENEWAL_POOL_SIZE = 2;

/**
 * The durable queue on PostgreSQL: runs, tasks and their dependencies, leased
 * to workers on several machines. Every method is one short transaction and
 * uses the database clock.
 */
export class PostgresStore {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** Where the store connects, with any password replaced by `***`. */
  readonly description: string;
  readonly #names: SchemaNames;
  readonly #ownsPool: boolean;
  /**
   * Where leases are renewed: an owned pool of its own (RENEWAL_POOL_SIZE), so that a worker's other work
   * waiting (records of attempts' ends each waiting on a lock, holding every connection of the main pool)
   * never keeps a running task's renewal from a connection. A pool given to the store serves both.
   */
  readonly #renewals: pg.Pool;
  /** The last renewal refused its task's row: by whose lock (RenewalLockedError.by), and when (performance.now()). */
  #renewalRefused: { by: string; at: number } | undefined;
  readonly #random: () => number;
  readonly #onError: (error: unknown) => void;
  readonly #timeouts: Timeouts;
  readonly #retryDroppedMs: number;
  /** What its own sessions are called (see storeApplicationName): how they are told from others in pg_stat_activity. */
  readonly #name: string | undefined;
  /** The connections of an owned store's pools handed out now: those whose statements are running or queued. */
  readonly #busy = new Set<pg.PoolClient>();
  /**
   * The backend pids of connections given back with an error (a connection dropped mid-statement, a client-side timeout): the
   * server may still run their statement, its client gone, one waiting on a lock included, until it next answers. The last
   * ORPHANS_KEPT only.
   */
  readonly #orphans = new Set<number>();
  #listener: NotificationListener | undefined;
  /** Whether `open` found no store in the schema and made one (a worker and a submit say so: its schema may be mistyped). */
  made = false;
  /** Where `open` made the store: the schema of the database holding another one named almost so (`taskq` for `taskk`), if one does. */
  madeBeside: string | undefined;
  /**
   * Set by `open` where a newer taskq migrated the store past the migrations this code knows (a rolling upgrade):
   * the newest the store records, and the newest this code knows. The store is used all the same (the CLI says so).
   */
  newer: { migration: number; known: number } | undefined;

  constructor(options: PostgresStoreOptions) {
    this.#names = schemaNames(options.schema ?? "taskq");
    this.schema = this.#names.schema;
    this.#ownsPool = options.pool === undefined;
    const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    const name = options.applicationName === undefined ? undefined : storeApplicationName(options.applicationName, this.schema);
    const ownPool = (max: number, lockTimeoutMs?: number) =>
      new pg.Pool({
        connectionString: options.connectionString === undefined ? undefined : withLibpqSslModes(options.connectionString),
        max,
        // pg itself ignores connect_timeout: without these, a server that never answers is waited for for ever.
        connectionTimeoutMillis: options.connectTimeoutMs ?? connectTimeoutOf(options.connectionString ?? "") ?? DEFAULT_CONNECT_TIMEOUT_MS,
        query_timeout: queryTimeoutMs,
        // Its name from the start (a startup parameter, which a PgBouncer takes), where the URL and PGAPPNAME give none; set again by sessionHook.
        ...(name === undefined ? {} : { fallback_application_name: name }),
        // The server stops a statement the store has given up on (see SERVER_TIMEOUT_MARGIN_MS): set on each new
        // session before the pool hands it out, by SET rather than a startup parameter, which a PgBouncer refuses.
        // And taskq's name for its sessions, whatever the URL or PGAPPNAME says (see sessionHook).
        ...sessionHook(serverTimeoutMs(queryTimeoutMs), name, lockTimeoutMs),
      });
    this.pool = options.pool ?? ownPool(options.poolSize ?? 10);
    // Opens its connections only once a lease is renewed: the commands that run no tasks never do.
    // Its renewals wait at most RENEWAL_LOCK_WAIT_MS for a task's row another session holds (see renew).
    this.#renewals = options.pool === undefined ? ownPool(RENEWAL_POOL_SIZE, RENEWAL_LOCK_WAIT_MS) : options.pool;
    this.#timeouts = { connectMs: this.pool.options.connectionTimeoutMillis ?? 0, queryMs: this.pool.options.query_timeout ?? 0 };
    this.description = redactConnectionString(options.connectionString ?? "(pool)");
    this.#random = options.random ?? Math.random;
    this.#onError = options.onError ?? (() => undefined);
    this.#retryDroppedMs = options.retryDroppedMs ?? 0;
    this.#name = name;
    // The store's pool and the renewals' (one pool where the caller gave its own).
    for (const pool of new Set([this.pool, this.#renewals])) {
      // An idle client whose backend was terminated emits 'error' on the pool; unhandled, it would crash the process.
      pool.on("error", (error) => this.#onError(error));
      // A backend terminated in the same packet burst that completed its connection reaches the client before
      // any caller could listen; a permanent listener keeps that from crashing the process (queries still fail).
      pool.on("connect", (client) => client.on("error", ignoreError));
      if (!this.#ownsPool) continue;
      pool.on("acquire", (client) => this.#busy.add(client));
      pool.on("release", (error: unknown, client: pg.PoolClient) => {
        this.#busy.delete(client);
        const pid = processIdOf(client);
        if (error === undefined || error === null || pid === undefined) return;
        this.#orphans.delete(pid);
        this.#orphans.add(pid);
        if (this.#orphans.size > ORPHANS_KEPT) this.#orphans.delete(this.#orphans.values().next().value as number);
      });
      pool.on("remove", (client) => this.#busy.delete(client));
    }
  }

  /**
   * Creates the store and applies pending migrations. With `create: false` (the commands that
   * only read or change what was submitted), a schema without taskq's tables is not made: it
   * is a STORE_NOT_FOUND error, as a mistyped schema name would otherwise leave a new, empty
   * store behind in the database.
   */
  static async open(options: PostgresStoreOptions & { create?: boolean }): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    try {
      // A session ended under one of these steps (a backend terminated, as a worker running rides it out) is met
      // with a new one: each step only reads, or is a migration that either committed or changed nothing (one
      // whose reply was lost finds itself applied). A connection refused, or a time limit, is not tried again.
      const again =
        <T>(step: () => Promise<T>, retryIf = isConnectionLost): (() => Promise<T>) =>
        () =>
          withRetry(step, { maxElapsedMs: OPEN_RETRY_MS, retryIf });
      // A database that cannot be reached is said so ("connect failed: ..."), by every command: not as
      // the migration or the check that would have come next. The connection stays in the pool, for them.
      // Connecting, only a session the server says it ended is tried again: one closed on it with no word may be
      // no PostgreSQL at all (a proxy with nothing behind it), which a new try would only meet again, 10 s later.
      (await store.#guard("connect", again(() => store.pool.connect(), isTerminatedByServer))).release();
      if (options.create === false && !(await store.#exists(again))) {
        // A mistyped TASKQ_STORE_SCHEMA names the schema meant; only a finer wording, so an error reading the catalog leaves it out.
        const meant = await store.#closestStoreSchema().catch(() => undefined);
        const hint = meant === undefined ? "" : ` (schema "${meant}" holds one: did you mean it?)`;
        throw new TaskqError("STORE_NOT_FOUND", `no taskq store in schema "${store.schema}": nothing was ever submitted there${hint}`);
      }
      const migrated = await store.#guard("migrate", again(() => migrateStore(store.pool, store.schema)));
      store.made = migrated.applied.includes(FIRST_MIGRATION_VERSION);
      // A mistyped TASKQ_STORE_SCHEMA made a store of its own: the one meant, for the note that says so (only a finer wording).
      // Not one numbered as the new one is (`ci_1233` beside `ci_1234`, a schema per pipeline): that one is made on purpose.
      if (store.made) {
        store.madeBeside = await store.#closestStoreSchema({ series: false }).catch(() => undefined);
      }
      if (migrated.newest > LATEST_MIGRATION) store.newer = { migration: migrated.newest, known: LATEST_MIGRATION };
    } catch (error) {
      // Its pool's connections would otherwise stay open, unused.
      await store.close();
      throw error;
    }
    return store;
  }

  /**
   * The schema of this database holding a taskq store (its migrations and task_deps tables) named almost as this
   * store's (`taskk` for `taskq`, `ci_prd` for `ci_prod`), if one is: read from the catalog, which every role may read.
   * `series: false`: not one named as it but for its numbers (see slipsOf).
   */
  async #closestStoreSchema(options: { series: boolean } = { series: true }): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ schema: string }>(
      `SELECT n.nspname AS schema FROM pg_namespace n
        WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'migrations' AND c.relkind = 'r')
          AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'task_deps' AND c.relkind = 'r')`,
    );
    const schemas = rows.map((row) => row.schema);
    return closestMatch(this.schema, options.series ? schemas : slipsOf(this.schema, schemas));
  }

  /** Whether the schema holds taskq's tables (its migrations table). */
  async #exists(again: <T>(step: () => Promise<T>) => () => Promise<T>): Promise<boolean> {
    // Connected already: a role kept from the schema is told what it lacks, not that it could not connect.
    const query = async () => (await this.pool.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [this.#names.migrations])).rows[0]?.found === true;
    return this.#guard("open", () =>
      again(query)().catch((error: unknown) => {
        throw notUsable(error, this.schema, "open") ?? error;
      }),
    );
  }

  /** How long the one-shot operations go on trying through connections refused or dropped (see PostgresStoreOptions.retryDroppedMs). */
  get retryDroppedMs(): number {
    return this.#retryDroppedMs;
  }

  /** Applies pending migrations (idempotent, safe to run concurrently). */
  async migrate(): Promise<number[]> {
    // (Its statements that apply migrations have the long limit; a server that stops answering is met by the first, quick one.)
    return this.#guard("migrate", () => migrate(this.pool, this.schema));
  }

  /** Submits a workflow as a run (idempotent on `runId`); returns the run id. */
  async submitRun(workflow: Workflow, options: { runId?: string } = {}): Promise<string> {
    return (await this.submit(workflow, options)).runId;
  }

  /**
   * As `submitRun`, and says what it did: the tasks added, those the run already had (kept
   * as stored), and which of these the workflow defines otherwise.
   */
  async submit(workflow: Workflow, options: SubmitOptions = {}): Promise<SubmitResult> {
    if (options.runId !== undefined && !isRunId(options.runId)) {
      throw new TaskqError("INVALID_RUN_ID", `${JSON.stringify(options.runId)} is not a run id: ${RUN_ID_EXPECTED}`, { exitCode: 2 });
    }
    return this.#guard("submitRun", async () => {
      const runId = options.runId ?? generateRunId();
      // A new run takes one statement; an existing one (a resubmission) the full transaction. A prune
      // deleting the run between the two, or a deadlock with one, means starting over (see isPrunedMeanwhile).
      // Stopped (`signal`): no try starts after it, the one on its way cancelled by the caller (see cancelStatements).
      // A new run id that an existing run's is but for case is refused by the store's trigger (see runIdCaseSql), told in taskq's words.
      const once = () =>
        retryConflicts(async () => {
          stoppedBeforeSending(options.signal);
          const { settle, ...done } =
            (await submitNewRun(this.pool, this.#names, workflow, runId, options.signal)) ??
            (await transactionOnce(this.pool, (client) => submitRun(client, this.#names, workflow, runId), { shortLockWaits: true, signal: options.signal }));
          options.onStored?.();
          if (settle) await refreshRunState(this.pool, this.#names, runId);
          return { runId, ...done };
        }, (error) => isConflict(error) || isPrunedMeanwhile(error)).catch((error: unknown) => {
          throw runIdCaseError(error, runId) ?? error;
        });
      // A connection refused or dropped is ridden out (see retryDroppedMs), also once the run may have been
      // stored: a submit of the same run id again is idempotent, where a user's second submit (a CI step run
      // again) would make a second run under a new id.
      let retried = false;
      // A resubmit shares the rows of the run's tasks, running ones among them: a lock another session holds is not waited for long.
      const locked = () => this.#shortLockWaits("submitRun", "nothing was submitted", once);
      // A try whose connection failed as it was made sent nothing: it stored nothing, and is not one that may have.
      const result = await withRetry(locked, { maxElapsedMs: this.#retryDroppedMs, retryIf: (error) => this.#dropped(error), onRetry: (error) => {
          if (isNeverConnected(error)) return;
          retried = true;
          options.onRetry?.();
        },
        signal: options.signal,
      });
      // The run found as this workflow stored it, after a try whose reply was lost, is most likely that try's.
      if (retried && !result.created && result.added === 0 && result.changed.length === 0) return { ...result, created: true, added: result.kept, kept: 0 };
      return result;
    });
  }

  /** Leases up to `limit` runnable tasks for `leaseMs`: of every run, or with `runId`, of that run only. */
  async lease(workerId: string, limit: number, leaseMs: number, options: { runId?: string } = {}): Promise<LeasedTask[]> {
    return this.#guard("lease", () => leaseTasks(this.pool, this.#names, workerId, limit, leaseMs, options.runId));
  }

  /**
   * The worker's hot path: records the successful attempts in `ended` and
   * leases up to `limit` tasks (with `runId`, of that run only), in one round
   * trip and one commit.
   */
  async completeAndLease(
    ended: EndedAttempt[],
    workerId: string,
    limit: number,
    leaseMs: number,
    options: { runId?: string } = {},
  ): Promise<CompleteAndLeaseResult> {
    const clean = ended.map((attempt) => ({ ...attempt, outcome: storableOutcome(attempt.outcome) }));
    return this.#guard("completeAndLease", () => completeAndLease(this.pool, this.#names, clean, workerId, limit, leaseMs, options.runId));
  }

  /**
   * Extends a lease; "lost" when another worker or the sweeper owns the task now. With
   * `timeoutMs`, fails when not answered by then (a renewal after the lease ran out is no use).
   * With `tail`, stores the attempt's last lines so far: a sweep of the task, should its worker
   * die, records them as the attempt's (see liveTailSql).
   */
  async heartbeat(taskId: string, token: string, leaseMs: number, options: RenewOptions = {}): Promise<HeartbeatStatus> {
    return (await this.renew(taskId, token, leaseMs, options)).status;
  }

  /** As heartbeat, saying besides whose cancel a "cancel-requested" is: by request, or a stopped run's (see LeaseRenewal). */
  async renew(taskId: string, token: string, leaseMs: number, options: RenewOptions = {}): Promise<LeaseRenewal> {
    const tail = options.tail?.map(storableText);
    const askedAt = performance.now();
    return this.#guard(
      "heartbeat",
      () =>
        keptIfRefused(this.#renewals, async (client) => {
          // Its time counts from when it was asked for, the wait for a connection included: one that got it only once the lease
          // had run out (the renewals' few connections each held by a renewal waiting on a locked row) is not sent. Sent, it took
          // that connection for a lock wait whose answer came too late to be of use, from the renewals queued behind it.
          const waitedMs = performance.now() - askedAt;
          const leftMs = options.timeoutMs === undefined ? undefined : options.timeoutMs - waitedMs;
          if (leftMs !== undefined && leftMs <= 0) throw new RenewalUnsentError(waitedMs);
          // Where its lock waits are cut short (an owned pool's renewals: see RENEWAL_LOCK_WAIT_MS); a pool given may wait them out.
          if (this.#ownsPool) options.onSent?.();
          try {
            return await renewLease(client, this.#names, taskId, token, leaseMs, leftMs, tail, options.skipLocked);
          } catch (error) {
            // Its row held by another session (a psql transaction): STORE_LOCKED, naming it, and the attempt tries again soon (see Attempt).
            // Looked up on the session refused, idle again, before it is given back: not on the main pool, whose every connection may
            // be taken by records waiting on locks; nor queued for another of the renewals' few, behind the other tasks' renewals each
            // waiting its lock wait for a row that session holds (with 24 tasks' rows held, every refusal was told a second or more
            // late, and most leases ran out told as a database that did not answer).
            if (!isLockNotAvailable(error)) throw error;
            const locked = await renewalLockedError(client, this.#names, error);
            this.#renewalRefused = { by: locked.by, at: performance.now() };
            throw locked;
          }
        }),
      options.timeoutMs,
    );
  }

  /**
   * The session whose lock refused a renewal at `since` (performance.now()) or later, in words ("another session (pid 42, ...)"):
   * a renewal that waited that long for a connection of the renewals' few waited behind renewals each held there for their lock
   * wait, which is why it did not get through (see Attempt's lease watch). Undefined where none was refused since.
   */
  renewalRefusedSince(since: number): string | undefined {
    const refused = this.#renewalRefused;
    return refused !== undefined && refused.at >= since ? refused.by : undefined;
  }

  /** Records an attempt's outcome; false when `token` no longer owns the task. */
  async complete(token: string, taskOutcome: Outcome): Promise<CompletionResult | false> {
    // Whatever the task printed is stored: text PostgreSQL refuses would lose the outcome.
    const outcome = storableOutcome(taskOutcome);
    return this.#guard("complete", async () => {
      if (outcome.kind === "success") return completeSuccess(this.pool, this.#names, token, outcome);
      const result = await inTransaction(this.pool, (client) => completeAttempt(client, this.#names, token, outcome, this.#random));
      if (result !== false && result.state !== "queued") await refreshRunState(this.pool, this.#names, result.runId);
      return result;
    });
  }

  /**
   * What the attempt that held `token` on task `taskId` was recorded as; false when its end was
   * not recorded. A completion retried after a lost reply gets false, the token owning nothing
   * any more: this tells whether the lost round trip had recorded it.
   */
  async recordedEnd(taskId: string, token: string): Promise<CompletionResult | false> {
    return this.#guard("recordedEnd", () => readRecordedEnd(this.pool, this.#names, taskId, token));
  }

  /**
   * What became of task `taskId`, as the database says now (for a worker whose record of it was refused):
   * its state, the worker it is leased to or was last run by (null: none, as when queued again), and its
   * last error or cancel reason (none once it succeeded: an earlier attempt's error is no error of a success, and a
   * row that succeeded before migration 19 may still hold one); null when the task is gone (pruned). Waits `timeoutMs` at most: it only words a line.
   */
  async taskNow(taskId: string, timeoutMs: number): Promise<TaskNow | null> {
    return this.#guard(
      "taskNow",
      async () => {
        const text = `SELECT state, worker_id, CASE WHEN state <> 'succeeded' THEN COALESCE(cancel_reason, last_error) END AS error FROM ${this.#names.tasks} WHERE id = $1`;
        const result = await this.pool.query<{ state: TaskState; worker_id: string | null; error: string | null }>(timedQuery({ text, values: [taskId] }, timeoutMs));
        const row = result.rows[0];
        return row === undefined ? null : { state: row.state, workerId: row.worker_id, error: row.error };
      },
      timeoutMs,
    );
  }

  /**
   * Gives back every task leased in `workerId`'s name but for those whose tokens are in `keep`,
   * the attempt not counted (as `release`): for a worker that lost the reply to a lease, which
   * may have leased tasks it never heard of. Returns the tasks given back.
   */
  async releaseStrays(workerId: string, keep: string[]): Promise<{ runId: string; key: string }[]> {
    return this.#guard("releaseStrays", async () => {
      const released = await inTransaction(this.pool, (client) => releaseStrays(client, this.#names, workerId, keep));
      // A task with a cancel request was cancelled instead, which may end its run.
      for (const runId of new Set(released.map((task) => task.runId))) await refreshRunState(this.pool, this.#names, runId);
      return released;
    });
  }

  /**
   * Requeues a leased task at once without counting the attempt (graceful worker stop); with `stop`, cancels
   * it as its run's shutdown instead (see StopCancel).
   */
  async release(token: string, stop?: StopCancel): Promise<boolean> {
    return (await this.releaseAs(token, stop)) !== false;
  }

  /**
   * As release does, saying what became of the task (see ReleaseEnd); false when the token owned nothing. `tail`: the
   * attempt's last lines so far, stored where the task is cancelled (by request, or as its run was stopped), not queued again.
   * `neverStarted`: a lease its worker never started; `notSpawned`: an attempt started whose command never spawned. Either,
   * cancelled, is not among the tasks cut short as they ran.
   */
  async releaseAs(token: string, stop?: StopCancel, options: { tail?: string[]; neverStarted?: boolean; notSpawned?: boolean } = {}): Promise<ReleaseEnd | false> {
    // The attempt's last lines so far: kept where it is cancelled as it gives the lease back (cut short), as status shows them.
    const tail = options.tail?.map(storableText);
    return this.#guard("release", async () => {
      const released = await inTransaction(this.pool, (client) => releaseLease(client, this.#names, token, undefined, stop, tail, options.neverStarted === true, options.notSpawned === true));
      if (released !== undefined) await refreshRunState(this.pool, this.#names, released.runId);
      return released?.ended ?? false;
    });
  }

  /**
   * Recovers tasks whose lease expired; returns how many. Also settles runs
   * whose last tasks ended at the same moment (see `complete_success`).
   */
  async sweepOrphans(limit = SWEEP_BATCH): Promise<number> {
    return (await this.recoverOrphans(limit)).length;
  }

  /**
   * As sweepOrphans, returning each task swept and what became of it. `onSwept` hears of them as soon as
   * the sweep is committed, before the runs are settled and the totals folded: a worker ends a dead
   * worker's log there, before a task swept may start again (its next attempt is leased at once).
   */
  async recoverOrphans(limit = SWEEP_BATCH, onSwept?: (swept: SweptTask[]) => void): Promise<SweptTask[]> {
    return this.#guard("sweepOrphans", async () => {
      const swept = await inTransaction(this.pool, (client) => sweepExpiredLeases(client, this.#names, limit));
      onSwept?.(swept);
      await settleRuns(this.pool, this.#names);
      // The changes of state since the last sweep go into the totals: what count_tasks reads stays small.
      await this.pool.query(`SELECT ${this.#names.quoted}.fold_task_ends()`);
      return swept;
    });
  }

  /**
   * Cancels a run, or one task: queued/blocked at once, running at the next heartbeat. With `shutdown`
   * (a whole run's only), as a stopped `run --store` ends its run: every task the shutdown's own.
   */
  async cancelRun(runId: string, taskKey?: string, options: { shutdown?: ShutdownCancel } = {}): Promise<CancelResult> {
    return this.#cancel(runId, (client) => cancelTasks(client, this.#names, runId, taskKey, options.shutdown), (result) => result.running);
  }

  /**
   * Cancels several tasks of a run in one transaction, as cancelRun cancels one: each key once (`given`, as typed: a key given
   * twice is cancelled once), in the order given; a key the run has not fails it before anything is cancelled (see cancelSeveral).
   * One result per key.
   */
  async cancelTasks(runId: string, given: readonly string[]): Promise<TargetCancel[]> {
    return this.#cancel(runId, (client) => cancelSeveral(client, this.#names, runId, given), (results) => results.flatMap((result) => result.running));
  }

  /** A cancel (`work`, in one transaction) of cancelRun or cancelSeveral, and what follows it; `running`: the running tasks it asked to stop. */
  async #cancel<T>(runId: string, work: (client: pg.PoolClient) => Promise<T>, running: (result: T) => RunningTarget[]): Promise<T> {
    return this.#oneShot("cancelRun", async () => {
      // It locks the run's rows, running tasks' among them: a lock another session holds is not waited for long (see LOCK_WAIT_MS).
      const result = await this.#shortLockWaits("cancelRun", "nothing was cancelled", () => inTransaction(this.pool, work, { shortLockWaits: true }));
      // The cancel is made: a connection dropped as the run's state is settled must not have it made again (it
      // would find nothing to cancel, and say so). The next look at the run (status, a sweep) settles it.
      await refreshRunState(this.pool, this.#names, runId).catch((error: unknown) => {
        if (!this.#dropped(error)) throw error;
      });
      // Only a finer wording of what becomes of a task whose lease ran out, as status finds it: read after the cancel's
      // commit, outside its transaction, which a failed read must not undo (it leaves the wording out).
      const expired = running(result).filter((target) => target.leaseLeftMs <= 0);
      await markWorkersWaiting(this.pool, this.schema, expired.map((target) => [target, { runId, workerId: target.workerId, leaseExpiredMs: -target.leaseLeftMs }] as const));
      return result;
    });
  }

  /**
   * Whether a worker of this store that may run `runId`'s tasks (`taskq worker`, or that run's `run --store`) is
   * connected to the database; undefined where that cannot be told (see workersConnected). Only a finer wording: an
   * error reading it is undefined too.
   */
  async workersConnected(runId: string): Promise<boolean | undefined> {
    return workersConnected(this.pool, this.schema, runId);
  }

  /** The run id meant by one no run has, where one is named almost so (see closestRunId); undefined where none is. */
  async closestRunId(runId: string): Promise<string | undefined> {
    return this.#oneShot("closestRunId", () => closestRunId(this.pool, this.#names, runId), this.#timeouts.queryMs, false);
  }

  /** Failed tasks, of one run or of all. */
  async deadLetters(runId?: string): Promise<DeadLetter[]> {
    return this.#oneShot("deadLetters", () => readDeadLetters(this.pool, this.#names, runId));
  }

  /** A run's state alone, settled first as runStatus settles it: a cheap look at whether it has ended. */
  async runState(runId: string): Promise<RunStatus["state"]> {
    return this.#oneShot("runState", async () => {
      await refreshRunState(this.pool, this.#names, runId);
      const { rows } = await this.pool.query<{ state: RunStatus["state"] }>(`SELECT state FROM ${this.#names.runs} WHERE id = $1`, [runId]);
      if (rows[0] === undefined) throw new RunNotFoundError(runId);
      return rows[0].state;
    });
  }

  /** A run's tasks and counts. Also settles the run's state, should a worker have died between commit and refresh. */
  async runStatus(runId: string): Promise<RunStatus> {
    return this.#oneShot("runStatus", async () => {
      await refreshRunState(this.pool, this.#names, runId);
      const status = await readRunStatus(this.pool, this.#names, runId);
      // Its last task ended just before the read, the run to be settled in a commit of its own (after a failure's), or
      // between the settle above and the read: read as running, with nothing left to run (status exiting 1 on a run that succeeded).
      // Settled now, and read again, its state goes with its tasks.
      const { blocked, queued, running } = status.counts;
      if (status.state !== "running" || blocked + queued + running > 0) return status;
      await refreshRunState(this.pool, this.#names, runId);
      return readRunStatus(this.pool, this.#names, runId);
    });
  }

  /** Queues a failed task again with fresh attempts and re-blocks the dependents it cancelled. */
  async redrive(runId: string, taskKey: string): Promise<RedriveResult> {
    return this.#oneShot("redrive", () =>
      this.#shortLockWaits("redrive", "nothing was redriven", () =>
        inTransaction(this.pool, (client) => redriveTask(client, this.#names, runId, taskKey), { shortLockWaits: true }),
      ),
    );
  }

  /**
   * Redrives several failed tasks of a run in one transaction, each as redrive does (`given`, as typed: a key given twice is
   * redriven once); one not redrivable, or not in the run, fails it whole (see redriveSeveral).
   */
  async redriveTasks(runId: string, given: readonly string[]): Promise<RedriveResult[]> {
    return this.#oneShot("redrive", () =>
      this.#shortLockWaits("redrive", "nothing was redriven", () =>
        inTransaction(this.pool, (client) => redriveSeveral(client, this.#names, runId, given), { shortLockWaits: true }),
      ),
    );
  }

  /** Deletes the runs that ended more than `olderThanMs` ago (see prune.ts); with `dryRun`, lists them. */
  async pruneRuns(olderThanMs: number, options: { dryRun?: boolean } = {}): Promise<PruneResult> {
    const dryRun = options.dryRun === true;
    // A dry run changes nothing (but run states settled, which it may settle again): a COMMIT whose reply was lost is read again.
    const prune = () => this.#shortLockWaits("pruneRuns", dryRun ? "nothing was listed" : "nothing was pruned", () => pruneRuns(this.pool, this.#names, olderThanMs, dryRun));
    return this.#oneShot("pruneRuns", prune, LONG_QUERY_TIMEOUT_MS, !dryRun);
  }

  /** Milliseconds until the earliest queued task is runnable, or null if none is queued. */
  async nextRunnableDelay(): Promise<number | null> {
    return this.#guard("nextRunnableDelay", () => nextRunnableDelay(this.pool, this.#names));
  }

  /** Milliseconds until the earliest lease of any running task runs out (0 or less: one has), or null when nothing runs. */
  async nextLeaseExpiry(): Promise<number | null> {
    // Every 2 s or so: on the listening connection where there is one, as the pool would otherwise never close its last idle one.
    const query = (config: pg.QueryConfig) => this.#listener?.query<{ delay_ms: number | null }>(config) ?? this.pool.query<{ delay_ms: number | null }>(config);
    return this.#guard("nextLeaseExpiry", () => nextLeaseExpiry(query, this.#names));
  }

  /** Resolves once the database answers a `SELECT 1` (the metrics' taskq_store_up); `timeoutMs` as countByState's. */
  async ping(options: { timeoutMs?: number } = {}): Promise<void> {
    const { timeoutMs } = options;
    const query = { text: "SELECT 1" };
    await this.#guard("ping", () => this.pool.query(timeoutMs === undefined ? query : timedQuery(query, timeoutMs)), timeoutMs);
  }

  /**
   * Number of tasks in each state, across all runs (for the queue-size gauge): exact, read from the totals
   * the sweep keeps and the changes since (see task-ends.ts), never a count of every task. `timeoutMs`: how
   * long the statement may go unanswered, when not the pool's limit (a metrics scrape waits less).
   */
  async countByState(options: { timeoutMs?: number } = {}): Promise<Record<TaskState, number>> {
    const { timeoutMs } = options;
    return this.#guard(
      "countByState",
      async () => {
        const query = { text: `SELECT state, count::int AS count FROM ${this.#names.quoted}.count_tasks()` };
        const result = await this.pool.query<{ state: TaskState; count: number }>(timeoutMs === undefined ? query : timedQuery(query, timeoutMs));
        const counts: Record<TaskState, number> = { blocked: 0, queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
        for (const row of result.rows) counts[row.state] = row.count;
        return counts;
      },
      timeoutMs,
    );
  }

  /**
   * Runs one operation; driver errors become TaskqErrors with a stable code (see store-error.ts).
   * `queryTimeoutMs`: the limit its statements have, when not the pool's, for the message.
   */
  async #guard<T>(operation: string, work: () => Promise<T>, queryTimeoutMs = this.#timeouts.queryMs): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.#storeError(operation, error, { ...this.#timeouts, queryMs: queryTimeoutMs });
    }
  }

  /**
   * toStoreError, but for a role the store's tables or sequences are kept from (an administrator who
   * granted the schema and not all of them, or only SELECT): says what to grant it, as opening says it
   * for a role kept from the schema, rather than the bare "permission denied for table runs". (Not for
   * what is no part of the store, as a database the role may not connect to: the server's words say it.)
   */
  #storeError(operation: string, error: unknown, timeouts: Timeouts): TaskqError {
    const ofTheStore = !(error instanceof TaskqError) && /permission denied for (table|sequence|function|schema) /.test(error instanceof Error ? error.message : "");
    return (ofTheStore ? notUsable(error, this.schema, operation) : undefined) ?? toStoreError(operation, error, timeouts, this.schema);
  }

  /**
   * #guard for an operation a user runs once (`taskq cancel`): its whole work is run again while it
   * fails on a connection refused or dropped (see retryDroppedMs), which each of them may be: their
   * statements outside a transaction only read or settle runs, and a transaction whose connection
   * was lost before its COMMIT was sent was undone. One lost after that, when the change may have
   * been made, is not run again, and its error says so; unless `changes` is false (`prune --dry-run`,
   * whose transaction only reads).
   */
  async #oneShot<T>(operation: string, work: () => Promise<T>, queryTimeoutMs = this.#timeouts.queryMs, changes = true): Promise<T> {
    const timeouts = { ...this.#timeouts, queryMs: queryTimeoutMs };
    // Only a change may have been made by a COMMIT whose reply was lost: what only reads is read again.
    const mayHaveChanged = (error: unknown): boolean => changes && failedAfterCommitSent(error);
    try {
      return await withRetry(work, { maxElapsedMs: this.#retryDroppedMs, retryIf: (error) => this.#dropped(error) && !mayHaveChanged(error) });
    } catch (error) {
      const stored = this.#storeError(operation, error, timeouts);
      if (!mayHaveChanged(error) || !isTransientError(error)) throw stored;
      throw new TaskqError(stored.code, `${stored.message} (the connection was lost once the change was sent to be committed: it may have been made)`, { cause: error });
    }
  }

  /**
   * Runs `work`, whose transactions wait LOCK_WAIT_MS at most for a lock, again while one is cut short (see
   * retryLockWaits): a user's command must not hold running tasks' rows from their workers' renewals while it waits
   * on another session. Gives up with STORE_LOCKED, which says whose lock it was and that `undone`.
   */
  #shortLockWaits<T>(operation: string, undone: string, work: () => Promise<T>): Promise<T> {
    return retryLockWaits(this.pool, this.#names, operation, undone, work, this.#random);
  }

  /**
   * Whether `error` is a connection refused or dropped, which trying again on a new connection may get
   * through: not a time limit reached (trying again would wait as long again, past the limits the user
   * was promised), nor a TaskqError (the store's own answer, "no run", whatever its words).
   */
  #dropped(error: unknown): boolean {
    const dropped = !(error instanceof TaskqError) && isTransientError(error) && describeTimeout(error, this.#timeouts) === undefined;
    // Tried again, a refusal the server answered (too many connections) is kept for a caller that gives up waiting (takeRefusal):
    // the last try's, none where it was not answered so.
    if (dropped) this.#refusedWith = serverWords(error);
    return dropped;
  }

  /** What the server answered the last statement it refused that was tried again (see #dropped), since takeRefusal last took it. */
  #refusedWith: string | undefined;

  /**
   * What the server answered, in its own words, the last statement tried again since the last call (too many connections, a
   * database not accepting connections): for a caller that stops waiting for an operation to say why it did not end, where the
   * database answered, not that it did not answer. Undefined where no such refusal came.
   */
  takeRefusal(): string | undefined {
    const words = this.#refusedWith;
    this.#refusedWith = undefined;
    return words;
  }

  /**
   * Cancels the statements the store's own sessions run now, those whose connection dropped included (see #orphans)
   * (pg_cancel_backend, from a session of its own: the
   * server ends a statement whose client has gone only once it is answered, a lock wait included), within `withinMs`,
   * a database that does not answer included. The number of statements the server was told to cancel; undefined where
   * it could not be asked in time.
   */
  async cancelStatements(withinMs: number): Promise<number | undefined> {
    // Those of connections dropped before too: a try before, whose statement waits on a lock, would otherwise store the run once it is let go.
    return this.#aside(withinMs, [...this.#orphans], async (client, pids) => {
      const { rows } = await client.query<{ cancelled: boolean }>(`SELECT pg_cancel_backend(pid) AS cancelled FROM (${OWN_ACTIVE_SQL}) own`, [pids, this.#name]);
      return rows.filter((row) => row.cancelled).length;
    });
  }

  /**
   * Whether a statement of the store's own sessions waits on a lock now (another session's: a migration, a psql session's
   * transaction), asked within `withinMs`; undefined where the database could not be asked in time, or has no such session.
   */
  async waitingOnLock(withinMs: number): Promise<boolean | undefined> {
    return this.#aside(withinMs, [], async (client, pids) => {
      const { rows } = await client.query<{ locked: boolean }>(OWN_ACTIVE_SQL, [pids, this.#name]);
      return rows.length === 0 ? undefined : rows.some((row) => row.locked);
    });
  }

  /**
   * `work` on a session of its own, beside the pools (each of whose connections may be the one waiting), given the
   * backend pids of the connections handed out now (and `also`); undefined where there are none, or not done within `withinMs`.
   */
  async #aside<T>(withinMs: number, also: number[], work: (client: pg.Client, pids: number[]) => Promise<T>): Promise<T | undefined> {
    const pids = [...new Set([...[...this.#busy].flatMap((client) => processIdOf(client) ?? []), ...also])];
    if (pids.length === 0 || this.#name === undefined) return undefined;
    const { connectionString, ssl } = this.pool.options;
    const client = new pg.Client({ connectionString, ssl, connectionTimeoutMillis: withinMs, query_timeout: withinMs, application_name: this.#name });
    client.on("error", ignoreError);
    const done = (async () => {
      await client.connect();
      return await work(client, pids);
    })().catch(() => undefined);
    try {
      return await Promise.race([done, sleep(withinMs, undefined, { ref: false })]);
    } finally {
      // Not waited for: a server that does not answer would keep its end unanswered too.
      client.end().catch(ignoreError);
    }
  }

  /** Calls `callback` whenever tasks may have become runnable; returns the unsubscribe function. */
  subscribe(callback: () => void): () => void {
    this.#listener ??= new NotificationListener(this.pool, this.#names.channel, this.#onError);
    return this.#listener.subscribe(callback);
  }

  /** True while the notification listener's LISTEN is in place. */
  get notificationsConnected(): boolean {
    return this.#listener?.connected ?? false;
  }

  /** Resolves once the notification listener is connected (for tests and benchmarks). */
  async listening(): Promise<void> {
    await this.#listener?.ready();
  }

  /**
   * Stops listening and, if the store created the pool, closes it. Connections still busy
   * are waited for a moment (CLOSE_WAIT_MS), not for as long as a database that stopped
   * answering takes: a process that ends (a stopping worker) must not hang on them.
   */
  async close(): Promise<void> {
    await this.#listener?.close();
    this.#listener = undefined;
    if (!this.#ownsPool) return;
    const ended = Promise.allSettled([this.pool.end(), this.#renewals.end()]);
    await Promise.race([ended, sleep(CLOSE_WAIT_MS, undefined, { ref: false })]);
  }
}

/** The backend pid of `client`'s session, once it is connected. */
function processIdOf(client: pg.ClientBase): number | undefined {
  const pid = (client as { processID?: unknown }).processID;
  return typeof pid === "number" ? pid : undefined;
}

/** Options of a submit (PostgresStore.submit). */
export interface SubmitOptions {
  runId?: string;
  /** Once aborted, no further try is made (after a dropped connection, a lock wait cut short): the submit fails. */
  signal?: AbortSignal;
  /**
   * Called as a try is made again after a connection dropped with its statement sent: the one before may have stored the
   * run, its reply lost. Not after a connection that failed as it was made (refused, or closed in its start-up): that try sent nothing.
   */
  onRetry?: () => void;
  /** Called once the run is stored (committed), before what may follow (its state settled). */
  onStored?: () => void;
}

/** Options of a lease renewal (PostgresStore.renew). */
export interface RenewOptions {
  /**
   * Fails when not answered by then (a renewal after the lease ran out is no use); counted from the call, and not sent
   * (RenewalUnsentError) where the renewal got its connection only after it.
   */
  timeoutMs?: number;
  /** The attempt's last lines so far, stored with the lease (see liveTailSql). */
  tail?: string[];
  /** Skips the task's row where another session holds it, rather than wait for it. */
  skipLocked?: boolean;
  /**
   * Called as the renewal's statement is sent, once it has a connection: from then on, it is the database that answers
   * (or waits for the task's row, RENEWAL_LOCK_WAIT_MS at most), not the pool's queue.
   */
  onSent?: () => void;
}

/**
 * `use` of a connection of `pool`, given back to it where the database refused the statement for a lock it did not get
 * (lock_timeout: the session is idle again, its prepared statements kept), as after a success. pool.query closes the
 * connection of every query that failed: a renewal refused its task's row (every ~200 ms while a session holds it) made a
 * new connection each time, and the look-up of the holder another. Any other failure (a timeout, a lost connection) closes it.
 */
async function keptIfRefused<T>(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let result: T;
  try {
    result = await use(client);
  } catch (error) {
    // Kept too where the renewal was not sent (RenewalUnsentError): the session was not used.
    client.release(!isLockNotAvailable(error) && !(error instanceof RenewalLockedError && error.sessionIdle) && !(error instanceof RenewalUnsentError));
    throw error;
  }
  client.release();
  return result;
}
