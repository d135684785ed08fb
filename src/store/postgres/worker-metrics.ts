import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PostgresStore } from "./store.js";

/**
 * How long a scrape waits for each of the database's answers, its `SELECT 1` and its count of tasks
 * (the connection included), read at once: well within Prometheus's default scrape timeout of 10s.
 */
export const SCRAPE_STORE_MS = 3_000;

const SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 1800];

/**
 * Prometheus metrics of one worker process, in a registry of its own (never
 * the global default, so several workers or stores can live in one process).
 * Queue sizes are read from the database when scraped, for at most SCRAPE_STORE_MS.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly attempts: Counter;
  readonly runningTasks: Gauge;
  readonly retries: Counter;
  readonly completions: Counter<"outcome">;
  readonly queueWait: Histogram;
  readonly runTime: Histogram<"outcome">;
  readonly leaseRenewals: Counter;
  readonly leasesLost: Counter;
  readonly orphansRecovered: Counter;

  constructor(store: PostgresStore) {
    const registers = [this.registry];
    // Prometheus gives up on a scrape after 10s by default, the database's statement limit is 30s: a
    // database that does not answer must not cost the worker's own counters. Whether it answers is a
    // `SELECT 1`, never the count: that one may be slow on a large store, which is not a store that is down.
    new Gauge({
      name: "taskq_store_up",
      help: `1 when the database answered this scrape's SELECT 1 within ${SCRAPE_STORE_MS / 1000}s, else 0`,
      registers,
      async collect() {
        this.set((await within(store.ping({ timeoutMs: SCRAPE_STORE_MS }).then(() => true), SCRAPE_STORE_MS)) === true ? 1 : 0);
      },
    });
    new Gauge({
      name: "taskq_tasks",
      help: `Tasks in the store by state (all runs), read from the database on scrape; left out when not read within ${SCRAPE_STORE_MS / 1000}s`,
      labelNames: ["state"],
      registers,
      async collect() {
        const counts = await within(store.countByState({ timeoutMs: SCRAPE_STORE_MS }), SCRAPE_STORE_MS);
        // Without an answer in time the gauge has no value at all: one kept from before would read as today's.
        this.reset();
        if (counts === undefined) return;
        for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
      },
    });
    // Every attempt begun, as its `start` line is: one a graceful stop gives back too (a counter takes back no start a
    // scrape has seen), whose end is taskq_completions_total{outcome="released"}, though the task's own count leaves it out.
    this.attempts = new Counter({
      name: "taskq_attempts_total",
      help: "Attempts started by this worker, those a graceful stop gave back included (completions released), which the task's own count of attempts leaves out",
      registers,
    });
    // This worker's own, beside taskq_tasks{state="running"}, which is the store's (every worker's) on every worker.
    this.runningTasks = new Gauge({
      name: "taskq_worker_running_tasks",
      help: "Tasks this worker runs now (attempts whose command has not ended), of every run",
      registers,
    });
    this.retries = new Counter({ name: "taskq_retries_total", help: "Failed attempts requeued with backoff", registers });
    this.completions = new Counter({
      name: "taskq_completions_total",
      help: "Attempts recorded, by outcome (succeeded, retried, failed, cancelled, stale, released)",
      labelNames: ["outcome"],
      registers,
    });
    this.queueWait = new Histogram({
      name: "taskq_queue_wait_seconds",
      help: "Time from runnable to leased",
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.runTime = new Histogram({
      name: "taskq_run_seconds",
      help: "Duration of an attempt, by outcome",
      labelNames: ["outcome"],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.leaseRenewals = new Counter({ name: "taskq_lease_renewals_total", help: "Lease heartbeats that succeeded", registers });
    this.leasesLost = new Counter({ name: "taskq_leases_lost_total", help: "Attempts aborted because their lease was lost", registers });
    this.orphansRecovered = new Counter({
      name: "taskq_orphans_recovered_total",
      help: "Expired leases recovered by this worker's sweeps",
      registers,
    });
  }

  /** The Prometheus text exposition of every metric. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** What `read` resolves to, or undefined when it failed or took longer than `ms` (connecting included). */
async function within<T>(read: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([read.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
