// Engine throughput: taskq's Queue against p-queue on no-op tasks.
// Every run is a fresh child process, so peak RSS is per run.
//   node bench/engine/run.js [--write] [--runs N] [--quick]
// TASKQ_DIST points at the compiled library (default: ../../dist).
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const TASKQ_PRIORITIES = ["low", "normal", "high", "critical"];

/** Deterministic priorities, identical for both libraries. */
function priorities(count, levels) {
  const out = new Uint8Array(count);
  if (levels <= 1) return out;
  let state = 12345;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    out[i] = state % levels;
  }
  return out;
}

async function child(lib, count, levels, concurrency) {
  const prio = priorities(count, levels);
  let elapsed;
  if (lib === "taskq") {
    const dist = process.env.TASKQ_DIST ? resolve(process.env.TASKQ_DIST) : resolve(here, "../../dist");
    const { Queue } = await import(pathToFileURL(resolve(dist, "index.js")).href);
    const queue = new Queue({ concurrency, handlers: { noop: () => undefined } });
    const names = levels === 10 ? prio.map((p) => Math.floor((p * 4) / 10)) : prio;
    const t0 = performance.now();
    queue.start();
    for (let i = 0; i < count; i++) queue.submit({ type: "noop", priority: TASKQ_PRIORITIES[levels <= 1 ? 1 : names[i]] });
    await queue.shutdown();
    elapsed = performance.now() - t0;
    const { byStatus } = queue.stats();
    if (byStatus.SUCCEEDED !== count) throw new Error(`taskq ran ${byStatus.SUCCEEDED} of ${count}`);
  } else {
    const { default: PQueue } = await import("p-queue");
    const queue = new PQueue({ concurrency });
    let done = 0;
    const noop = async () => {
      done++;
    };
    const t0 = performance.now();
    for (let i = 0; i < count; i++) void queue.add(noop, levels <= 1 ? undefined : { priority: prio[i] });
    await queue.onIdle();
    elapsed = performance.now() - t0;
    if (done !== count) throw new Error(`p-queue ran ${done} of ${count}`);
  }
  process.stdout.write(JSON.stringify({ ms: elapsed, maxRssKb: process.resourceUsage().maxRSS }));
}

function runChild(lib, count, levels, concurrency) {
  const result = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", lib, count, levels, concurrency], {
    encoding: "utf8",
    env: process.env,
    maxBuffer: 1 << 20,
  });
  if (result.status !== 0) throw new Error(`${lib} ${count}/${levels}/${concurrency} failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const rate = (count, ms) => (count / ms) * 1000;
const fmt = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : `${Math.round(n / 1e3)}k`);
const mib = (kb) => `${Math.round(kb / 1024)} MiB`;

async function main(args) {
  const write = args.includes("--write");
  const quick = args.includes("--quick");
  const runsArg = args.indexOf("--runs");
  const runs = runsArg >= 0 ? Number(args[runsArg + 1]) : 5;
  const sizes = quick ? [100_000] : [100_000, 1_000_000];
  const shapes = [
    { name: "equal priority", levels: 1 },
    { name: "random priority (4 levels)", levels: 4 },
    { name: "random priority (10 levels; taskq folds to 4)", levels: 10 },
  ];
  const rows = [];
  const notes = [];
  const taskqMs = new Map();
  for (const count of sizes) {
    for (const shape of shapes) {
      for (const concurrency of [4, 64]) {
        // p-queue inserts by priority into a sorted array (O(n) splice): 1M prioritised tasks take minutes.
        const pqRuns = count >= 1_000_000 && shape.levels > 1 ? 0 : runs;
        const t = [];
        const p = [];
        for (let r = 0; r < Math.max(runs, pqRuns); r++) {
          if (r < runs) t.push(runChild("taskq", count, shape.levels, concurrency));
          if (r < pqRuns) p.push(runChild("p-queue", count, shape.levels, concurrency));
        }
        const tRates = t.map((x) => rate(count, x.ms));
        const pRates = p.map((x) => rate(count, x.ms));
        const workload = `${fmt(count)} tasks, ${shape.name}, concurrency ${concurrency}`;
        const cell = (xs) => (xs.length ? `${fmt(median(xs))}/s (${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))})` : "skipped*");
        const ratio = pRates.length ? `${(median(tRates) / median(pRates)).toFixed(2)}x` : "n/a";
        const rss = Math.max(...t.map((x) => x.maxRssKb));
        rows.push(`| ${workload} | ${cell(tRates)} | ${cell(pRates)} | ${ratio} | ${mib(rss)} |`);
        taskqMs.set(`${count}/${shape.levels}/${concurrency}`, { ms: median(t.map((x) => x.ms)), rss });
        process.stderr.write(`done: ${workload}\n`);
      }
    }
  }
  if (!quick) notes.push("*p-queue skipped for 1M prioritised tasks: its sorted-array insert makes one such run take ~3 minutes.");
  const lines = [
    `Node ${process.version}, ${runs} runs per configuration (each a fresh process, taskq and p-queue alternating); median (min-max).`,
    "",
    "| workload | taskq tasks/s | p-queue tasks/s | taskq / p-queue | taskq peak RSS |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    ...notes,
  ];
  if (!quick) {
    lines.push("", "| taskq scaling | 1M / 100k time | peak RSS at 1M |", "|---|---|---|");
    for (const shape of shapes) {
      for (const concurrency of [4, 64]) {
        const small = taskqMs.get(`100000/${shape.levels}/${concurrency}`);
        const big = taskqMs.get(`1000000/${shape.levels}/${concurrency}`);
        lines.push(`| ${shape.name}, concurrency ${concurrency} | ${(big.ms / small.ms).toFixed(1)}x | ${mib(big.rss)} |`);
      }
    }
  }
  const text = lines.join("\n") + "\n";
  process.stdout.write(text);
  if (write) {
    const target = resolve(here, "../results/engine.md");
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, `# Engine benchmark\n\nCommand: \`node bench/engine/run.js --write\`\n\n${text}`);
  }
}

const args = process.argv.slice(2);
if (args[0] === "--child") await child(args[1], Number(args[2]), Number(args[3]), Number(args[4]));
else await main(args);
