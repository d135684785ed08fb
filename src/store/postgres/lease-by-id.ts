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
  return everyLeaseFunction(names, "each");
}

/**
 * Migration 11: a lease updates the tasks it picked in one statement, by the array of their ids,
 * with sequential scans switched off inside, so that only the primary key can answer it, whatever
 * the statistics say (bitmap scans are off too, and no other index is walked for an update with no
 * condition on its columns). An empty pick updates nothing: with no id to match, PostgreSQL may
 * take any partial index for one that holds every match, and read it whole. Migration 10's update
 * of one task at a time cost a statement a leased task, some 15 us of the database's time each;
 * and it too could read every task: with statistics taken by a VACUUM after a prune that kept a
 * small run (a few rows in the pages the pruned runs filled), PostgreSQL priced one lookup in the
 * primary key above reading the whole table, which it then did for each task leased.
 * Same signatures and results.
 */
export function leaseByIdsSql(names: SchemaNames): string {
  return everyLeaseFunction(names, "all");
}

/** Every generation's lease functions (`first`, `v6`, `v7`; each with and without a run to keep to), updating as `update` says. */
function everyLeaseFunction(names: SchemaNames, update: "each" | "all"): string {
  return (["first", "v6", "v7"] as const).flatMap((generation) => [false, true].map((byRun) => leaseTasksFunction(names, byRun, generation, update))).join("\n");
}
