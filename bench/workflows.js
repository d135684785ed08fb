// Generated workflow files for the benchmarks.
import { writeFileSync } from "node:fs";

/** `count` independent tasks running `command`. */
export function independentTasks(file, count, command = "true") {
  const lines = ["tasks:"];
  for (let i = 0; i < count; i++) lines.push(`  t${i}: { run: ${JSON.stringify(command)} }`);
  writeFileSync(file, `${lines.join("\n")}\n`);
}

/**
 * `count` tasks, each after the first three depending on 1-3 earlier ones (deterministic
 * pseudo-random picks), written in block style with a few other fields, like a real file.
 */
export function layeredTasks(file, count, command = "true") {
  let state = 42;
  const random = (n) => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state % n;
  };
  const priorities = ["low", "normal", "high", "critical"];
  const lines = ["name: generated", "defaults:", "  retries: 0", "  timeout: 10m", "tasks:"];
  for (let i = 0; i < count; i++) {
    lines.push(`  task-${i}:`, `    run: ${JSON.stringify(command)}`);
    if (i % 7 === 0) lines.push(`    priority: ${priorities[random(4)]}`);
    if (i >= 3) {
      const deps = new Set();
      const want = 1 + random(3);
      while (deps.size < want) deps.add(`task-${random(i)}`);
      lines.push(`    dependsOn: [${[...deps].join(", ")}]`);
    }
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
}

/** A command writing exactly `mb` megabytes (10^6 bytes) of 100-byte lines to stdout, as fast as a pipe takes them. */
export function floodCommand(mb) {
  return `yes ${"x".repeat(99)} | head -c ${mb * 1_000_000}`;
}

/** One task per command, `flood-0`, `flood-1`, ..., no dependencies. */
export function floodTasks(file, commands) {
  writeFileSync(file, `tasks:\n${commands.map((command, i) => `  flood-${i}: { run: ${JSON.stringify(command)} }`).join("\n")}\n`);
}
