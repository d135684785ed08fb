// A/B of the per-task overhead against another build: this build's and the other build's `taskq run`
// of TASKS independent `true` tasks at -j 2, ROUNDS times, alternating (the order flips each round),
// logs on tmpfs where there is one (each run's removed after it: tmpfs has no slow creates after
// deletions, as an ext4 scratch folder has), and prints each one's median and their ratio. Build
// both first; OTHER is the other checkout's bin/taskq.cjs.
//   node bench/ab-overhead.js /path/to/other/bin/taskq.cjs [ROUNDS, default 16] [TASKS, default 1000]
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { measure, median, requireBuilt, scratch, TASKQ } from "./lib.js";
import { independentTasks } from "./workflows.js";

const [other, roundsArg = "16", tasksArg = "1000"] = process.argv.slice(2);
const rounds = Number(roundsArg);
const tasks = Number(tasksArg);
if (other === undefined || !Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(tasks) || tasks < 1) {
  console.error("usage: node bench/ab-overhead.js OTHER_BIN_TASKQ [ROUNDS] [TASKS]");
  process.exit(2);
}
requireBuilt(TASKQ, other);
const work = scratch("ab-overhead");
work.remove(); // at exit
const logs = existsSync("/dev/shm") ? mkdtempSync("/dev/shm/taskq-ab-logs-") : join(work.dir, "logs");
const file = join(work.dir, "tasks.yaml");
independentTasks(file, tasks);
const builds = [
  ["this", TASKQ],
  ["other", other],
];
const times = new Map(builds.map(([name]) => [name, []]));
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, bin] of round % 2 === 0 ? builds : [...builds].reverse()) {
      const runLogs = join(logs, `${name}-${round}`);
      const { ms } = await measure([bin, "run", file, "-j", "2", "--output", "plain", "--log-dir", runLogs], { rss: false });
      times.get(name).push(ms);
      rmSync(runLogs, { recursive: true, force: true });
    }
  }
} finally {
  rmSync(logs, { recursive: true, force: true });
}
const base = median(times.get("other"));
console.log(`${tasks} independent \`true\` tasks at -j 2, ${rounds} rounds, alternating; median wall time`);
for (const [name, values] of times) {
  console.log(`${name.padEnd(6)} ${median(values).toFixed(0).padStart(6)} ms (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)})  ${(median(values) / base).toFixed(3)}x of other`);
}
