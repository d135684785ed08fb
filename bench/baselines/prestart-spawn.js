// The floor for scheduling precision with each process started ahead of its time: a bare
// Node process that, LEAD_MS before each task's time, spawns the task's shell held on a pipe
// (`read` from descriptor 3), and at its time writes the line that lets it exec `sh -c true`.
// The fork no longer happens when the task falls due; only a write does. Prints the lateness
// of each release in whole ms and the time spent inside spawn() in all, as JSON, as
// timer-spawn.js does for spawning at each time.
//   node bench/baselines/prestart-spawn.js TASKS SPREAD_MS LEAD_MS
import { spawn } from "node:child_process";

const tasks = Number(process.argv[2] ?? 200);
const spread = Number(process.argv[3] ?? 2000);
const lead = Number(process.argv[4] ?? 200);
// The held shell waits for its line, closes the pipe and becomes the task's shell (same pid,
// same group); an early end of the pipe (this process gone) ends it without running anything.
const HELD = 'IFS= read -r _ <&3 || exit 125; exec 3<&-; exec /bin/sh -c -- "$1"';
const start = Date.now();
const lateness = [];
let spawnMs = 0;
for (let i = 0; i < tasks; i++) {
  const delay = Math.round(((i + 1) * spread) / tasks);
  setTimeout(
    () => {
      const before = performance.now();
      const child = spawn("/bin/sh", ["-c", HELD, "sh", "true"], { stdio: ["ignore", "pipe", "pipe", "pipe"], detached: true });
      spawnMs += performance.now() - before;
      child.stdout.resume();
      child.stderr.resume();
      child.on("exit", (code) => {
        if (code !== 0) throw new Error(`the held sh -c true exited with ${code}`);
      });
      setTimeout(() => {
        lateness.push(Date.now() - (start + delay));
        child.stdio[3].end("\n");
      }, start + delay - Date.now());
    },
    Math.max(0, delay - lead),
  );
}
process.on("exit", () => process.stdout.write(`${JSON.stringify({ lateness, spawnMs: Math.round(spawnMs) })}\n`));
