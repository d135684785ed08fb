/**
 * The lifecycle contract every backend honours, written once against this
 * small interface: the in-memory engine and the PostgreSQL store each provide
 * an adapter (engine-adapter.ts, postgres-adapter.ts).
 */

export type ContractPriority = "low" | "normal" | "high" | "critical";

/** A task as the contract cases describe it; each adapter maps it to its own spec. */
export interface ContractTask {
  id: string;
  priority?: ContractPriority;
  /** Attempts in all, the first included. Default 1. */
  maxAttempts?: number;
  /** Per-attempt timeout; none by default. */
  timeoutMs?: number;
  /** Not before now + delayMs. */
  delayMs?: number;
  dependsOn?: string[];
}

/** What a handler gets: the attempt number (1 for the first) and the attempt's only cancellation token. */
export interface ContractContext {
  attempt: number;
  signal: AbortSignal;
}

/** Runs one attempt of task `id`: resolve to succeed, throw to fail (a PermanentError is never retried). */
export type ContractHandler = (id: string, context: ContractContext) => Promise<void>;

export type ContractStatus = "succeeded" | "failed" | "cancelled";

/** A finished task, the same shape for every backend. */
export interface ContractResult {
  status: ContractStatus;
  attempts: number;
  /** For a task cancelled because a dependency did not succeed: the task that started the cascade. */
  cancelledBy?: string;
  /** For such a task, why, in words: naming that task, and the dependency the cascade came through where it is another. */
  reason?: string;
}

/** One queue (engine) or one run (store) with its workers, driven by a case. */
export interface Harness {
  /** Submits tasks, in dependency order; submitting an id again changes nothing. */
  submit(tasks: ContractTask[]): Promise<void>;
  /** Starts dispatching (workers begin leasing). */
  start(): Promise<void>;
  /** Cancels one task that has not finished. */
  cancel(id: string): Promise<void>;
  /** Resolves once every submitted task is terminal; results by id. */
  settle(): Promise<Record<string, ContractResult>>;
  /** Ids of the dead letters (failed tasks). */
  deadLetters(): Promise<string[]>;
  /** Stops everything; nothing of this harness may run afterwards. */
  close(): Promise<void>;
}

export interface ContractAdapter {
  name: string;
  /** A fresh, isolated harness whose attempts all go to `handler`, at most `concurrency` at once. */
  create(options: { concurrency: number; handler: ContractHandler }): Promise<Harness>;
}
