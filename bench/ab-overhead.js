// A/B of the per-task overhead against another build: this build's and the other build's `taskq run`
// of TASKS independent `true` tasks at -j 2, ROUNDS times, alternating (the order flips each round),
// logs on tmpfs where there is one (each run's removed after it: tmpfs has no slow creates after
// deletions, as an ext4 scratch folder has), and prints each one's median and their ratio. Build
// both first; OTHER is the other checkout's bin/taskq.cjs.
//   node bench/ab-overhead.js /path/to/other/bin/taskq.cjs [ROUNDS, default 16] [TASKS, default 1000]
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { abRounds, measure, printAB, requireBuilt, scratch, TASKQ } from "./lib.js";
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
let results;
try {
  results = await abRounds(other, rounds, async (bin, name, round) => {
    const runLogs = join(logs, `${name}-${round}`);
    const result = await measure([bin, "run", file, "-j", "2", "--output", "plain", "--log-dir", runLogs], { rss: false });
    rmSync(runLogs, { recursive: true, force: true });
    return result;
  });
} finally {
  rmSync(logs, { recursive: true, force: true });
}
console.log(`${tasks} independent \`true\` tasks at -j 2, ${rounds} rounds, alternating; median wall time`);
printAB(results);
