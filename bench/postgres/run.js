// Benchmark: no-op tasks through taskq's PostgresStore and through
// graphile-worker 0.17 on the same database, same worker counts and concurrency.
// Build first (npm run build), then: node bench/postgres/run.js [--runs N]
// Env: DATABASE_URL, BENCH_TASKS (throughput batch, default 2000), BENCH_LATENCY_TASKS (default 200),
//      BENCH_RUNS (default 5; --runs N wins), BENCH_CONCURRENCY (per worker, default 8), BENCH_WORKERS (default "1,2,4"),
//      BENCH_POOL (connections per worker, both systems, default 10: graphile-worker's default),
//      BENCH_GRAPHILE_BATCHED (default 1: also run graphile-worker with its opt-in batching),
//      BENCH_TASKQ_BASELINE (another build's dist directory, run as "taskq (baseline)" alongside).
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { graphileSystem, taskqSystem } from "./systems.js";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const batchSize = Number(process.env.BENCH_TASKS ?? 2000);
const latencyTasks = Number(process.env.BENCH_LATENCY_TASKS ?? 200);
const runsFlag = process.argv.indexOf("--runs");
const runs = Number(runsFlag === -1 ? (process.env.BENCH_RUNS ?? 5) : process.argv[runsFlag + 1]);
if (!Number.isInteger(runs) || runs < 1) {
  console.error("bench/postgres/run.js: --runs (or BENCH_RUNS) must be a whole number of runs, 1 or more");
  process.exit(2);
}
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const workerCounts = (process.env.BENCH_WORKERS ?? "1,2,4").split(",").map(Number);
const poolSize = Number(process.env.BENCH_POOL ?? 10);
const withBatchedGraphile = process.env.BENCH_GRAPHILE_BATCHED !== "0";
const load = () => loadavg().map((value) => value.toFixed(1)).join(" / ");

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Records when each task key first started; `waitFor(keys)` resolves when all have. */
function tracker() {
  const started = new Map();
  const waiters = [];
  return {
    started,
    onStart(key) {
      if (started.has(key)) return;
      started.set(key, performance.now());
      for (const waiter of waiters) if (waiter.keys.every((k) => started.has(k))) waiter.resolve();
    },
    waitFor(keys) {
      if (keys.every((k) => started.has(k))) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ keys, resolve }));
    },
  };
}

async function runOnce(system, workers, round) {
  await system.reset();
  const track = tracker();
  const running = await system.start(workers, concurrency, (key) => track.onStart(key));
  await sleep(300); // let LISTEN connections settle
  // Throughput: one batch submitted at once; time until the last task started (no-op tasks end at once).
  const keys = Array.from({ length: batchSize }, (_, i) => `b${round}-${i}`);
  const t0 = performance.now();
  await running.submitBatch(keys);
  await track.waitFor(keys);
  const throughput = keys.length / ((Math.max(...keys.map((k) => track.started.get(k))) - t0) / 1000);
  // Latency: single submits, 10 ms apart, to idle workers.
  const submitted = new Map();
  for (let i = 0; i < latencyTasks; i++) {
    const key = `l${round}-${i}`;
    submitted.set(key, performance.now());
    await running.submitOne(key);
    await sleep(10);
  }
  await track.waitFor([...submitted.keys()]);
  await running.stop();
  const latencies = [...submitted].map(([key, at]) => track.started.get(key) - at);
  return { throughput, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

const baseline = process.env.BENCH_TASKQ_BASELINE;
// Schemas of this process's own, so that a second run at the same time cannot drop them midway.
const suffix = process.pid;
const systems = [
  taskqSystem(url, `taskq_bench_${suffix}`, poolSize),
  ...(baseline ? [taskqSystem(url, `taskq_bench_baseline_${suffix}`, poolSize, { dist: baseline, name: "taskq (baseline)" })] : []),
  graphileSystem(url, `graphile_bench_${suffix}`, poolSize),
  ...(withBatchedGraphile ? [graphileSystem(url, `graphile_bench_${suffix}`, poolSize, { batched: true })] : []),
];
const loadBefore = load();
let peakRss = 0;
const rssSampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 100);
rssSampler.unref();
const rows = [];
for (const workers of workerCounts) {
  // Rounds interleave the systems, each round in a rotated order, so that background load hits all alike.
  const results = systems.map(() => []);
  for (let round = 0; round < runs; round++) {
    for (let j = 0; j < systems.length; j++) {
      const i = (round + j) % systems.length;
      results[i].push(await runOnce(systems[i], workers, round));
    }
  }
  for (const [i, system] of systems.entries()) {
    const values = (k) => results[i].map((r) => r[k]);
    const cell = (k, digits) => `${quantile(values(k), 0.5).toFixed(digits)} (${Math.min(...values(k)).toFixed(digits)}-${Math.max(...values(k)).toFixed(digits)})`;
    rows.push({ system: system.name, workers, throughput: cell("throughput", 0), p50: cell("p50", 1), p99: cell("p99", 1) });
  }
  console.error(`done: ${workers} worker(s)`);
}
for (const system of systems) await system.drop();
console.log(
  `\nNo-op tasks, ${concurrency} concurrent per worker, ${poolSize} connections per worker; throughput over a batch of ${batchSize}; ` +
    `latency over ${latencyTasks} single submits; medians of ${runs} runs.`,
);
console.log(`Load average (1/5/15 min) before: ${loadBefore}; after: ${load()}.`);
console.log(
  `Both systems run their workers in this one process, so RSS is not told apart: its peak was ${Math.round(peakRss / 2 ** 20)} MiB over the whole run.\n`,
);
console.log("| system | workers | tasks/s, median (min-max) | submit-to-start p50 (ms) | p99 (ms) |");
console.log("|---|---:|---:|---:|---:|");
for (const row of rows) {
  console.log(`| ${row.system} | ${row.workers} | ${row.throughput} | ${row.p50} | ${row.p99} |`);
}
