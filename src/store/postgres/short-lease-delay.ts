import { completeAndLeaseFunction, type HotPathGeneration } from "./batch-functions.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 16: `complete_and_lease` says how long until the nearest queued task may start (its idle
 * row) whenever it leased fewer tasks than asked, not only when it leased none. A worker with free slots
 * and a delayed task ahead then sleeps exactly until that task is due, while its other slots run: with
 * notifications working it polls only every 30 s, and a task that becomes due wakes nobody. Every
 * generation's functions are replaced, same signatures and results (an earlier worker reads the idle
 * row only when it leased none).
 */
export function shortLeaseDelaySql(names: SchemaNames): string {
  const generations: HotPathGeneration[] = ["first", "v6", "v7"];
  return generations
    .flatMap((generation) => [false, true].map((byRun) => completeAndLeaseFunction(names, byRun, true, generation, true, true, true)))
    .join("\n");
}
