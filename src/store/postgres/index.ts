/**
 * The durable mode's store: runs, tasks and dependencies in PostgreSQL, leased
 * to workers on any number of machines.
 *
 * - `PostgresStore` is the queue (submit, lease, heartbeat, complete, release,
 *   sweep, cancel, redrive, status); every time comes from the database clock.
 * - `PostgresWorker` pulls from it and runs a handler per attempt, with
 *   heartbeats, timeouts, cancellation, orphan sweeps and Prometheus metrics.
 *
 * Semantics follow the engine's (seeds/go-task-queue-design.txt) and the GCS
 * workqueue's (queued / in-progress / dead-letter, leases, dedup on key).
 */
export { backoffDelay, type BackoffPolicy } from "./backoff.js";
export type { CancelResult, NotRetried, RunningTarget, ShutdownCancel } from "./cancel.js";
export type { ReleaseEnd, StopCancel } from "./complete.js";
export type { CompleteAndLeaseResult, EndedAttempt } from "./complete-and-lease.js";
export { serveMetrics, metricsPort } from "./metrics-server.js";
export { migrate, LATEST_MIGRATION } from "./migrations.js";
export type { PruneResult } from "./prune.js";
export { redactConnectionString } from "./redact.js";
export type { RedriveResult } from "./redrive.js";
export type { SweptTask } from "./sweep.js";
export { PostgresStore, type PostgresStoreOptions } from "./store.js";
export type { StoreErrorCode } from "./store-error.js";
export { generateRunId, type ChangedTask, type SubmitResult } from "./submit.js";
export { isTransientError } from "./transient.js";
export * from "./types.js";
export { PostgresWorker, type PostgresWorkerOptions } from "./worker.js";
export { workerHostAndPid } from "./worker-id.js";
export { WorkerMetrics } from "./worker-metrics.js";
export type { AbortCode, AttemptContext, LeaseLost, TaskHandler, WorkerEvent } from "./worker-types.js";
