// A/B of the output flood against another build: this build's and the other build's `taskq run`
// of the flood section's workload (one task writing 300 MB, or eight writing 20 MB each, 100-byte
// lines), ROUNDS times, alternating (the order flips each round), each run's logs in the scratch
// folder as the section keeps them and removed after it; prints each one's median, its range,
// their ratio and each one's peak RSS. Build both first; OTHER is the other checkout's
// bin/taskq.cjs. OUTPUT is `plain` (the section's first table) or `json` (its second).
//   node bench/ab-flood.js /path/to/other/bin/taskq.cjs [ROUNDS, default 10] [1|8, default 8] [plain|json]
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { measure, median, requireBuilt, scratch, TASKQ } from "./lib.js";

const MB = 1_000_000;
const [other, roundsArg = "10", tasksArg = "8", output = "plain"] = process.argv.slice(2);
const rounds = Number(roundsArg);
const workloads = { 1: [1, 300], 8: [8, 20] };
if (other === undefined || !Number.isInteger(rounds) || rounds < 1 || !(tasksArg in workloads) || !["plain", "json"].includes(output)) {
  console.error("usage: node bench/ab-flood.js OTHER_BIN_TASKQ [ROUNDS] [1|8] [plain|json]");
  process.exit(2);
}
requireBuilt(TASKQ, other);
const [tasks, mb] = workloads[tasksArg];
const work = scratch("ab-flood");
work.remove(); // at exit
const file = join(work.dir, "flood.yaml");
const lines = ["tasks:"];
for (let i = 0; i < tasks; i++) lines.push(`  f${i}: { run: ${JSON.stringify(`yes ${"x".repeat(99)} | head -c ${mb * MB}`)} }`);
writeFileSync(file, `${lines.join("\n")}\n`);
const builds = [
  ["this", TASKQ],
  ["other", other],
];
const results = new Map(builds.map(([name]) => [name, []]));
for (let round = 0; round < rounds; round++) {
  for (const [name, bin] of round % 2 === 0 ? builds : [...builds].reverse()) {
    const logs = join(work.dir, `logs-${name}-${round}`);
    results.get(name).push(await measure([bin, "run", file, "-j", String(tasks), "--output", output, "--log-dir", logs], { cwd: work.dir }));
    rmSync(logs, { recursive: true, force: true });
  }
}
const base = median(results.get("other").map((r) => r.ms));
console.log(`${tasks} task${tasks === 1 ? "" : "s"} x ${mb} MB, --output ${output}, ${rounds} rounds, alternating; median wall time`);
for (const [name, runs] of results) {
  const ms = runs.map((r) => r.ms);
  const rss = runs.map((r) => r.rssKb ?? 0);
  console.log(`${name.padEnd(6)} ${median(ms).toFixed(0).padStart(6)} ms (${Math.min(...ms).toFixed(0)}-${Math.max(...ms).toFixed(0)})  ${(median(ms) / base).toFixed(3)}x of other  peak RSS ${(Math.max(...rss) / 1024).toFixed(0)} MiB`);
}
