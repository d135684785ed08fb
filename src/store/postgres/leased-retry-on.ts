import { completeAndLeaseFunction } from "./batch-functions.js";
import { leaseTasksFunction } from "./bigint-durations.js";
import type { SchemaNames } from "./names.js";

/**
 * Migration 7: a leased task carries its `retry_on`, through `lease_tasks_v7` and
 * `complete_and_lease_v7`. The worker's shell handler needs it to decide, as a local run's does,
 * whether an attempt that failed may be retried, and to say why not in the log's last line and
 * the task's error ("1 is not in retryOn: not retried"); without it, a signal was retried whatever
 * retryOn listed. New names, as in migration 6: the v6 functions stay for a worker of version 6.
 */
export function leasedRetryOnSql(names: SchemaNames): string {
  return `
    ${leaseTasksFunction(names, false, "v7")}
    ${leaseTasksFunction(names, true, "v7")}
    ${completeAndLeaseFunction(names, false, true, "v7")}
    ${completeAndLeaseFunction(names, true, true, "v7")}
  `;
}
