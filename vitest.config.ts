import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Deletes the e2e workspaces (some hold hundreds of megabytes of logs) after each file.
    setupFiles: ["test/helpers/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // e2e tests spawn real processes, and most of their time is spent waiting on them (a lease to run out, a sleep, a
    // signal's grace): three files at once on two cores, where two took 18 minutes on a VM whose fork costs ~7 ms.
    maxWorkers: 3,
    // One process per test file (vitest's default, named so it stays): test/helpers/timing.ts times ratios on
    // process.cpuUsage(), which counts the whole process, and would count other files' tests run on its threads.
    pool: "forks",
  },
});
