import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Deletes the e2e workspaces (some hold hundreds of megabytes of logs) after each file.
    setupFiles: ["test/helpers/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // e2e tests spawn real processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // One process per test file (vitest's default, named so it stays): test/helpers/timing.ts times ratios on
    // process.cpuUsage(), which counts the whole process, and would count other files' tests run on its threads.
    pool: "forks",
  },
});
