// A/B of the per-task overhead against another build: alternates this build's and the other build's
// `taskq run` of TASKS independent `true` tasks at -j 2 (the order flips each round), ROUNDS times,
// logs on tmpfs where there is one (each run's folder removed after it, so neither build meets the
// other's deletions on a slower disk), and prints each one's median and their ratio. Build both
// first; OTHER is the other checkout's bin/taskq.cjs.
//   node bench/ab-overhead.js /path/to/other/bin/taskq.cjs [ROUNDS, default 16] [TASKS, default 1000]
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { independentTasks } from "./workflows.js";

const [other, roundsArg = "16", tasksArg = "1000"] = process.argv.slice(2);
const rounds = Number(roundsArg);
const tasks = Number(tasksArg);
if (other === undefined || !Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(tasks) || tasks < 1) {
  console.error("usage: node bench/ab-overhead.js OTHER_BIN_TASKQ [ROUNDS] [TASKS]");
  process.exit(2);
}
const here = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "bin", "taskq.cjs");
const dir = mkdtempSync(path.join(tmpdir(), "taskq-ab-overhead-"));
const logs = mkdtempSync(path.join(existsSync("/dev/shm") ? "/dev/shm" : dir, "taskq-ab-logs-"));
const file = path.join(dir, "tasks.yaml");
independentTasks(file, tasks);
// bin/taskq.cjs runs the first node on PATH: make it this one.
const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}` };
const builds = [
  ["this", here],
  ["other", other],
];
const times = new Map(builds.map(([name]) => [name, []]));
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, bin] of round % 2 === 0 ? builds : [...builds].reverse()) {
      const runLogs = path.join(logs, `${name}-${round}`);
      const start = process.hrtime.bigint();
      const result = spawnSync(bin, ["run", file, "-j", "2", "--output", "plain", "--log-dir", runLogs], { stdio: "ignore", env });
      if (result.status !== 0) throw new Error(`${name} exited ${result.status ?? result.signal}`);
      times.get(name).push(Number(process.hrtime.bigint() - start) / 1e6);
      rmSync(runLogs, { recursive: true, force: true });
    }
  }
} finally {
  rmSync(logs, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const base = median(times.get("other"));
console.log(`${tasks} independent \`true\` tasks at -j 2, ${rounds} rounds, alternating; median wall time`);
for (const [name, values] of times) {
  const [low, high] = [Math.min(...values), Math.max(...values)];
  console.log(`${name.padEnd(6)} ${median(values).toFixed(0).padStart(6)} ms (${low.toFixed(0)}-${high.toFixed(0)})  ${(median(values) / base).toFixed(3)}x of other`);
}
