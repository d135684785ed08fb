// The raw baseline for per-task overhead: spawn `sh -c true` N times with P in flight,
// stdio ignored, nothing else.   node bench/baselines/spawn-loop.js N P
import { spawn } from "node:child_process";

const count = Number(process.argv[2] ?? 1000);
const parallel = Number(process.argv[3] ?? 2);
let started = 0;
let finished = 0;
await new Promise((resolve, reject) => {
  const next = () => {
    if (started === count) {
      if (finished === count) resolve();
      return;
    }
    started++;
    const child = spawn("sh", ["-c", "true"], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`sh -c true exited with ${code}`));
      finished++;
      next();
    });
  };
  for (let i = 0; i < parallel; i++) next();
});
