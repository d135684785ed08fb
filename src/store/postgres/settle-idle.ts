import { completeAndLeaseFunction, completeSuccessFunction } from "./batch-functions.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 12: a success looks for its run's active tasks, to settle the run, only when none of the
 * dependents it found is active. A dependent it found blocked is one, and stays one (its row is locked
 * until the success commits): the run cannot have ended. The look reads the run's entries in the partial
 * index of active tasks (tasks_active), where every version a task leaves behind stays until a vacuum, in
 * lists of one run's entries that PostgreSQL cannot mark dead while one of them lives: a chain read some
 * 40 of them for each success, seven times what the rest of the success and the lease read. Every
 * generation's success functions are replaced, same signatures and results: a worker of an earlier
 * version calls its own.
 */
export function settleIdleSql(names: SchemaNames): string {
  return `
    ${completeSuccessFunction(names, true, true, true)}
    ${completeAndLeaseFunction(names, false, true, "first", true, true)}
    ${completeAndLeaseFunction(names, true, true, "first", true, true)}
    ${completeAndLeaseFunction(names, false, true, "v6", true, true)}
    ${completeAndLeaseFunction(names, true, true, "v6", true, true)}
    ${completeAndLeaseFunction(names, false, true, "v7", true, true)}
    ${completeAndLeaseFunction(names, true, true, "v7", true, true)}
  `;
}
