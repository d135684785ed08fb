import { TaskqError } from "../../errors.js";
import { abortCode, failureOutcome } from "./outcome.js";
import type { PostgresStore } from "./store.js";
import { withRetry } from "./transient.js";
import type { CompletionResult, LeasedTask, Outcome } from "./types.js";
import type { WorkerMetrics } from "./worker-metrics.js";
import type { AbortCode, TaskHandler, WorkerEvent } from "./worker-types.js";

export interface AttemptOptions {
  store: PostgresStore;
  handler: TaskHandler;
  leaseMs: number;
  heartbeatMs: number;
  /** Records the outcome (the worker batches successes with its next lease); false when the lease was lost. */
  complete: (task: LeasedTask, outcome: Outcome) => Promise<CompletionResult | false>;
  metrics: WorkerMetrics;
  emit: (event: WorkerEvent) => void;
  /** Called once when this attempt's lease is gone (taken over, or the database unreachable too long). */
  onLeaseLost: () => void;
  /** When (performance.now()) the request that leased the task was sent: the lease runs from no earlier. */
  leasedAt: number;
}

/**
 * One leased attempt: runs the handler with its own AbortController, renews
 * the lease every `heartbeatMs`, aborts on timeout, cancel request or lost
 * lease, and records the outcome guarded by the lease token.
 *
 * The lease is lost when a renewal finds the task taken, and also when the
 * lease runs out on this machine's clock without a renewal, whatever the
 * heartbeat is waiting for (a database that stopped answering): from then on
 * another worker may run the task, so this attempt must not run on beside it.
 */
export class Attempt {
  readonly task: LeasedTask;
  readonly done: Promise<void>;
  readonly #controller = new AbortController();
  readonly #options: AttemptOptions;
  #heartbeat: NodeJS.Timeout | undefined;
  /** When the lease runs out unless renewed: counted from when the request that set it was sent (the database's count starts later). */
  #leaseEnds: number;
  #leaseWatch: NodeJS.Timeout | undefined;
  #settled = false;

  constructor(task: LeasedTask, options: AttemptOptions) {
    this.task = task;
    this.#options = options;
    this.#leaseEnds = options.leasedAt + options.leaseMs;
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

  /** Aborts the handler; the reason code decides what is recorded. */
  abort(code: AbortCode, message: string): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(new TaskqError(code, message));
  }

  /** Gives the lease back now, for a handler that ignored its abort; its later outcome is then stale. */
  async releaseNow(): Promise<void> {
    try {
      if (await this.#options.store.release(this.task.leaseToken)) this.#options.emit({ type: "released", task: this.task });
    } catch (error) {
      this.#options.emit({ type: "db-error", operation: "release", error });
    }
  }

  async #run(): Promise<void> {
    const { task } = this;
    const { metrics, emit } = this.#options;
    const signal = this.#controller.signal;
    const timeout =
      task.timeoutMs !== null && task.timeoutMs > 0
        ? setTimeout(() => this.abort("TIMEOUT", `timed out after ${task.timeoutMs} ms`), task.timeoutMs)
        : undefined;
    this.#scheduleHeartbeat();
    this.#watchLease();
    metrics.attempts.inc();
    metrics.queueWait.observe(task.queueWaitMs / 1000);
    emit({ type: "started", task });
    const started = performance.now();
    let outcome: Outcome;
    try {
      await this.#options.handler(task, { signal, attempt: task.attempt, taskId: task.taskId });
      outcome = { kind: "success" };
    } catch (error) {
      outcome = failureOutcome(error, signal, task.timeoutMs);
    } finally {
      clearTimeout(timeout);
      clearTimeout(this.#heartbeat);
      clearTimeout(this.#leaseWatch);
      this.#heartbeat = undefined;
    }
    const durationMs = performance.now() - started;
    await this.#record(outcome, durationMs);
  }

  async #record(outcome: Outcome, durationMs: number): Promise<void> {
    const { store, complete, metrics, emit, leaseMs } = this.#options;
    const code = abortCode(this.#controller.signal);
    const retry = { maxElapsedMs: 2 * leaseMs + 5_000, onRetry: (error: unknown) => emit({ type: "db-error", operation: "complete", error }) };
    try {
      if (code === "LEASE_LOST") {
        // The task is another worker's now, or the sweeper's: so is what is recorded of it.
        metrics.completions.inc({ outcome: "stale" });
        metrics.runTime.observe({ outcome: "stale" }, durationMs / 1000);
        emit({ type: "finished", task: this.task, outcome, result: false, durationMs });
        return;
      }
      if (code === "SHUTDOWN" && outcome.kind !== "success") {
        await withRetry(() => store.release(this.task.leaseToken), retry);
        this.#settled = true;
        metrics.completions.inc({ outcome: "released" });
        emit({ type: "released", task: this.task });
        return;
      }
      let result = await withRetry(() => complete(this.task, outcome), retry);
      // The token owns nothing: the lease was lost, or a try whose reply was lost had recorded this very end.
      if (result === false) result = await withRetry(() => store.recordedEnd(this.task.taskId, this.task.leaseToken), retry);
      this.#settled = true;
      const label = result === false ? "stale" : result.state === "queued" ? "retried" : result.state;
      metrics.completions.inc({ outcome: label });
      metrics.runTime.observe({ outcome: label }, durationMs / 1000);
      if (label === "retried") metrics.retries.inc();
      emit({ type: "finished", task: this.task, outcome, result, durationMs });
    } catch (error) {
      // The sweeper recovers the task once its lease expires.
      emit({ type: "db-error", operation: "complete", error });
    }
  }

  #scheduleHeartbeat(): void {
    this.#heartbeat = setTimeout(() => void this.#renew(), this.#options.heartbeatMs);
  }

  /** Loses the lease when it runs out before a renewal moves its end (see #renew). */
  #watchLease(): void {
    clearTimeout(this.#leaseWatch);
    this.#leaseWatch = setTimeout(() => this.#lose("unreachable"), Math.max(this.#leaseEnds - performance.now(), 0));
  }

  async #renew(): Promise<void> {
    const { store, leaseMs, metrics, emit } = this.#options;
    const { task } = this;
    const sentAt = performance.now();
    try {
      // An answer after the lease ran out is of no use; waiting on, the connection would stay taken.
      const status = await store.heartbeat(task.taskId, task.leaseToken, leaseMs, { timeoutMs: Math.max(this.#leaseEnds - sentAt, 1) });
      if (this.#controller.signal.aborted && abortCode(this.#controller.signal) === "LEASE_LOST") return;
      if (status === "lost") return this.#lose("taken");
      this.#leaseEnds = sentAt + leaseMs;
      if (this.#heartbeat !== undefined) this.#watchLease();
      metrics.leaseRenewals.inc();
      if (status === "cancel-requested" && !this.#controller.signal.aborted) {
        emit({ type: "cancel-requested", task });
        this.abort("CANCELLED", "cancelled by request");
      }
    } catch (error) {
      emit({ type: "db-error", operation: "heartbeat", error });
    }
    if (this.#heartbeat !== undefined) this.#scheduleHeartbeat();
  }

  #lose(why: "taken" | "unreachable"): void {
    if (this.#controller.signal.aborted) return;
    this.#options.metrics.leasesLost.inc();
    this.#options.emit({ type: "lease-lost", task: this.task, why });
    this.abort("LEASE_LOST", why === "taken" ? "the lease was taken over" : "the lease ran out without a renewal (the database did not answer)");
    this.#options.onLeaseLost();
  }
}
