import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PostgresStore } from "./store.js";
import type { TaskState } from "./types.js";

const SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 1800];

/**
 * Prometheus metrics of one worker process, in a registry of its own (never
 * the global default, so several workers or stores can live in one process).
 * Queue sizes are read from the database when scraped.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly attempts: Counter;
  readonly retries: Counter;
  readonly completions: Counter<"outcome">;
  readonly queueWait: Histogram;
  readonly runTime: Histogram<"outcome">;
  readonly leaseRenewals: Counter;
  readonly leasesLost: Counter;
  readonly orphansRecovered: Counter;

  constructor(store: PostgresStore) {
    const registers = [this.registry];
    new Gauge({
      name: "taskq_tasks",
      help: "Tasks in the store by state (all runs), read from the database on scrape",
      labelNames: ["state"],
      registers,
      async collect() {
        let counts: Record<TaskState, number>;
        try {
          counts = await store.countByState();
        } catch {
          return; // a scrape during an outage keeps the last values
        }
        for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
      },
    });
    this.attempts = new Counter({ name: "taskq_attempts_total", help: "Attempts started by this worker", registers });
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
