// A/B of the output flood against another build: this build's and the other build's `taskq run`
// of the flood section's workload (one task writing 300 MB, or eight writing 20 MB each, 100-byte
// lines), ROUNDS times, alternating (the order flips each round), each run's logs in the scratch
// folder as the section keeps them and removed after it; prints each one's median, its range,
// their ratio and each one's peak RSS. Build both first; OTHER is the other checkout's
// bin/taskq.cjs. OUTPUT is `plain` (the section's first table) or `json` (its second).
//   node bench/ab-flood.js /path/to/other/bin/taskq.cjs [ROUNDS, default 10] [1|8, default 8] [plain|json]
import { rmSync } from "node:fs";
import { join } from "node:path";
import { abRounds, measure, printAB, requireBuilt, scratch, TASKQ } from "./lib.js";
import { floodCommand, floodTasks } from "./workflows.js";

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
floodTasks(file, Array.from({ length: tasks }, () => floodCommand(mb)));
const results = await abRounds(other, rounds, async (bin, name, round) => {
  const logs = join(work.dir, `logs-${name}-${round}`);
  const result = await measure([bin, "run", file, "-j", String(tasks), "--output", output, "--log-dir", logs], { cwd: work.dir });
  rmSync(logs, { recursive: true, force: true });
  return result;
});
console.log(`${tasks} task${tasks === 1 ? "" : "s"} x ${mb} MB, --output ${output}, ${rounds} rounds, alternating; median wall time`);
printAB(results);
