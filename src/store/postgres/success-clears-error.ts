import { completeAndLeaseFunction, completeSuccessFunction, type HotPathGeneration } from "./batch-functions.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 19: a success clears `last_error`, as it already replaced the exit code, signal, timeout and
 * last lines an earlier attempt left. A task that failed once and succeeded on its retry kept the failed
 * attempt's error, and read as a succeeded task with an error (a stalled worker's `taskNow`, the stored row).
 * Every generation's success functions are replaced, same signatures and results: a worker of an earlier
 * version calls them too. Rows that succeeded before keep theirs, which the store's readers leave out.
 */
export function successClearsErrorSql(names: SchemaNames): string {
  const generations: HotPathGeneration[] = ["first", "v6", "v7"];
  return [
    completeSuccessFunction(names, true, true, true, true),
    ...generations.flatMap((generation) => [false, true].map((byRun) => completeAndLeaseFunction(names, byRun, true, generation, true, true, true, true, true))),
  ].join("\n");
}
