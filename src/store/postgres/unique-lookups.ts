import { completeAndLeaseFunction, completeSuccessFunction, nextDelayFunction } from "./batch-functions.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 9: a success finds its task (by lease token) and each dependent (by run and key)
 * through unique indexes, whatever the statistics say. PostgreSQL could plan both lookups as a
 * read of the partial index of active tasks when its statistics predated the run (autovacuum
 * off, or a run submitted in the last minute): each success read every active task, twice, and a
 * chain of 100,000 tasks ran at a few dozen tasks a second (see `blockedDependentSql`). Every
 * generation's success functions are replaced, same signatures and results: a worker of an
 * earlier version calls its own, and gets the same lookups.
 */
export function uniqueLookupsSql(names: SchemaNames): string {
  return `
    ${nextDelayFunction(names)}
    ${completeSuccessFunction(names, true, true)}
    ${completeAndLeaseFunction(names, false, true, "first", true)}
    ${completeAndLeaseFunction(names, true, true, "first", true)}
    ${completeAndLeaseFunction(names, false, true, "v6", true)}
    ${completeAndLeaseFunction(names, true, true, "v6", true)}
    ${completeAndLeaseFunction(names, false, true, "v7", true)}
    ${completeAndLeaseFunction(names, true, true, "v7", true)}
  `;
}
