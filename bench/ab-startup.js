// A/B of start-up against another build: alternates `node -e ''` with this build's and the other build's
// `taskq validate` (3 tasks) and `taskq run` (1 `true` task), ROUNDS times, and prints each one's median
// and its ratio to bare node. Build both first; OTHER is the other checkout's bin/taskq.cjs.
//   node bench/ab-startup.js /path/to/other/bin/taskq.cjs [ROUNDS, default 40]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
// BENCH_ENV: node from PATH is the one running this (as the baseline), without NODE_EXTRA_CA_CERTS or NODE_OPTIONS.
import { BENCH_ENV, median, requireBuilt } from "./lib.js";

const [other, roundsArg = "40"] = process.argv.slice(2);
const rounds = Number(roundsArg);
if (other === undefined || !Number.isInteger(rounds) || rounds < 1) {
  console.error("usage: node bench/ab-startup.js OTHER_BIN_TASKQ [ROUNDS]");
  process.exit(2);
}
const here = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "bin", "taskq.cjs");
requireBuilt(here, other);
const dir = mkdtempSync(path.join(tmpdir(), "taskq-ab-startup-"));
const one = path.join(dir, "one.yaml");
const three = path.join(dir, "three.yaml");
writeFileSync(one, 'tasks:\n  a: { run: "true" }\n');
writeFileSync(three, 'tasks:\n  a: { run: "true" }\n  b: { run: "true", dependsOn: a }\n  c: { run: "true", dependsOn: [a, b] }\n');
const commands = [["node -e ''", process.execPath, ["-e", ""]]];
for (const [name, bin] of [["this", here], ["other", other]]) {
  commands.push([`validate (${name})`, bin, ["validate", three]]);
  commands.push([`run (${name})`, bin, ["run", one, "--output", "plain", "--log-dir", path.join(dir, "logs")]]);
}
const times = new Map(commands.map(([name]) => [name, []]));
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, bin, args] of commands) {
      const start = process.hrtime.bigint();
      const result = spawnSync(bin, args, { stdio: "ignore", env: BENCH_ENV });
      if (result.status !== 0) throw new Error(`${name} exited ${result.status ?? result.signal}`);
      times.get(name).push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const node = median(times.get("node -e ''"));
console.log(`${rounds} rounds, alternating; median wall time`);
for (const [name, values] of times) console.log(`${name.padEnd(18)} ${median(values).toFixed(1).padStart(7)} ms  ${(median(values) / node).toFixed(2)}x`);
