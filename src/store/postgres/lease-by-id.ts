import { leaseTasksFunction } from "./bigint-durations.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 10: a lease updates each task it picked on its own, by its id, through the primary
 * key, whatever the statistics say. Joined to the picked rows instead, the update could be
 * planned, with statistics taken when the store was empty (a prune, then ANALYZE), as a walk of
 * the whole primary key for each lease: every task of the store read to lease one, and a chain
 * of 100,000 tasks ran at some 25 tasks a second. Every generation's lease functions are
 * replaced, same signatures and results: a worker of an earlier version calls its own.
 */
export function leaseByIdSql(names: SchemaNames): string {
  return `
    ${leaseTasksFunction(names, false, "first", true)}
    ${leaseTasksFunction(names, true, "first", true)}
    ${leaseTasksFunction(names, false, "v6", true)}
    ${leaseTasksFunction(names, true, "v6", true)}
    ${leaseTasksFunction(names, false, "v7", true)}
    ${leaseTasksFunction(names, true, "v7", true)}
  `;
}
