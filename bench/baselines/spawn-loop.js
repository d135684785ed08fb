// The raw baselines for per-task overhead: spawn `sh -c true` N times with P in flight.
//   node bench/baselines/spawn-loop.js N P              stdio ignored, nothing else
//   node bench/baselines/spawn-loop.js N P --keep-output
// --keep-output also does the least a runner that keeps every task's output must do: the
// task leads its own process group (to be killable as a whole), sees its id in its
// environment, and its stdout and stderr are piped into a log file of its own.
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";

const count = Number(process.argv[2] ?? 1000);
const parallel = Number(process.argv[3] ?? 2);
const keepOutput = process.argv.includes("--keep-output");
const logDir = join(process.cwd(), `spawn-loop-logs-${process.pid}`);
if (keepOutput) mkdirSync(logDir, { recursive: true });
const baseEnv = { ...process.env };
let started = 0;
let finished = 0;

function runOne(index) {
  if (!keepOutput) return spawn("sh", ["-c", "true"], { stdio: "ignore" });
  const child = spawn("sh", ["-c", "true"], { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...baseEnv, TASK_ID: `t${index}` } });
  const log = createWriteStream(join(logDir, `t${index}.log`));
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  child.once("close", () => log.end());
  return child;
}

await new Promise((resolve, reject) => {
  const next = () => {
    if (started === count) {
      if (finished === count) resolve();
      return;
    }
    const child = runOne(started++);
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`sh -c true exited with ${code}`));
      finished++;
      next();
    });
  };
  for (let i = 0; i < parallel; i++) next();
});
