import { completeAndLeaseFunction, type HotPathGeneration } from "./batch-functions.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 17: a success that frees a dependent wakes the workers only when that dependent is still
 * queued once the call has leased: a worker whose success freed the next task of a chain leases it in
 * the same call, and every other idle worker, woken for it, would make a lease round trip for nothing.
 * Every generation's `complete_and_lease` is replaced, same signatures and results.
 */
export function leasedFreedQuietSql(names: SchemaNames): string {
  const generations: HotPathGeneration[] = ["first", "v6", "v7"];
  return generations
    .flatMap((generation) => [false, true].map((byRun) => completeAndLeaseFunction(names, byRun, true, generation, true, true, true, true)))
    .join("\n");
}
