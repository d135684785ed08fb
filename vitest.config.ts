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
  },
});
