import { describe, expect, it } from "vitest";
import { whatBecameOf } from "../../src/cli/worker-run.js";

const own = "ci-7-4121-a3f9c2";
const other = "ci-9-5150-0b1c2d";

describe("what a stalled worker says became of a task whose record was refused", () => {
  it("names the end as the database holds it, in its own words: not a sweep's where a user's cancel or this worker's later attempt ended it", () => {
    const cases: Array<[Parameters<typeof whatBecameOf>[0], string]> = [
      [{ state: "running", workerId: other, error: null }, `worker ${other} took the task over`],
      [{ state: "succeeded", workerId: other, error: null }, `worker ${other} took the task over`],
      [{ state: "failed", workerId: own, error: `lease expired (worker ${own}, attempt 1)` }, `the task ended failed: lease expired (worker ${own}, attempt 1); a redrive runs it again`],
      // A cancel the user asked for once a sweep had queued it again: not laid to the sweep.
      [{ state: "cancelled", workerId: null, error: "cancelled by request" }, "the task was cancelled: cancelled by request"],
      [{ state: "queued", workerId: null, error: `lease expired (worker ${own}, attempt 1)` }, "a sweep queued the task again"],
      // Leased again by this same worker after its stall (-j 2 or more): a later attempt, not "taken from this worker".
      [{ state: "running", workerId: own, error: null }, "this worker runs it again, as a later attempt"],
      [{ state: "succeeded", workerId: own, error: null }, "this worker ran it again, as a later attempt (succeeded)"],
      [null, "the task is no longer in the store (its run was pruned)"],
      [undefined, "the task was taken from this worker"],
    ];
    for (const [taskNow, said] of cases) expect(whatBecameOf(taskNow, own), JSON.stringify(taskNow)).toBe(said);
  });
});
