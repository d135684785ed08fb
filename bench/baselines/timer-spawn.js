// The floor for scheduling precision: a bare Node process that sets one timer per task,
// with the same delays as the benchmark's workflow, and at each timer spawns `sh -c true`
// the way a runner must (own process group, stdout and stderr piped and read). Prints the
// lateness of each timer in whole ms and the time spent inside spawn() in all, as JSON:
// spawn() forks on the main thread (and waits there for the child's exec), so every spawn
// holds back the timers that fall due meanwhile.
//   node bench/baselines/timer-spawn.js TASKS SPREAD_MS
import { spawn } from "node:child_process";

const tasks = Number(process.argv[2] ?? 200);
const spread = Number(process.argv[3] ?? 2000);
const start = Date.now();
const lateness = [];
let spawnMs = 0;
for (let i = 0; i < tasks; i++) {
  const delay = Math.round(((i + 1) * spread) / tasks);
  setTimeout(() => {
    lateness.push(Date.now() - (start + delay));
    const before = performance.now();
    const child = spawn("sh", ["-c", "true"], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    spawnMs += performance.now() - before;
    child.stdout.resume();
    child.stderr.resume();
    child.on("exit", (code) => {
      if (code !== 0) throw new Error(`sh -c true exited with ${code}`);
    });
  }, delay);
}
process.on("exit", () => process.stdout.write(`${JSON.stringify({ lateness, spawnMs: Math.round(spawnMs) })}\n`));
