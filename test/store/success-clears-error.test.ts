import { describe, expect, it } from "vitest";
import { leaseAll, sql, task, useStoreSchema, workflow } from "./helpers.js";

describe("a task that failed, then succeeded on its retry", () => {
  const own = useStoreSchema();

  /** Fails the first attempt of each task of a new run (retries 1), and leases them again, their backoff cut short. */
  async function retried(runId: string, keys: string[]) {
    const { store } = own;
    await store.submitRun(workflow(keys.map((key) => task(key, { retries: 1 }))), { runId });
    for (const first of await leaseAll(store)) {
      expect(await store.complete(first.leaseToken, { kind: "failure", error: "exited with code 3", exitCode: 3, tail: ["boom"] })).toMatchObject({ state: "queued" });
    }
    await sql(store, "UPDATE $schema.tasks SET not_before = now() WHERE run_id = $1", [runId]);
    const second = await leaseAll(store);
    expect(second.map((leased) => [leased.key, leased.attempt])).toEqual(keys.map((key) => [key, 2]));
    return second;
  }

  /** What a user is shown of each task of the run: its stored error, status's, and what a stalled worker's `taskNow` says of it. */
  async function errorsShown(runId: string) {
    const { store } = own;
    const rows = await sql<{ id: string; key: string; last_error: string | null }>(store, "SELECT id, key, last_error FROM $schema.tasks WHERE run_id = $1 ORDER BY seq", [runId]);
    const status = await store.runStatus(runId);
    return Promise.all(
      rows.map(async (row, i) => ({
        key: row.key,
        stored: row.last_error,
        status: [status.tasks[i]!.state, status.tasks[i]!.lastError],
        taskNow: await store.taskNow(row.id, 10_000),
      })),
    );
  }

  it("holds no error once it succeeded, recorded alone or with the next lease: not in its row, its status, nor what a stalled worker is told", async () => {
    const { store } = own;
    const [alone, batched] = await retried("cleared", ["alone", "batched"]);
    expect(await store.complete(alone!.leaseToken, { kind: "success", exitCode: 0, tail: ["ok"] })).toMatchObject({ state: "succeeded" });
    const { completed } = await store.completeAndLease([{ token: batched!.leaseToken, outcome: { kind: "success", exitCode: 0, tail: ["ok"] } }], "w1", 0, 30_000);
    expect(completed).toHaveLength(1);
    expect(await errorsShown("cleared")).toEqual(
      ["alone", "batched"].map((key) => ({ key, stored: null, status: ["succeeded", null], taskNow: { state: "succeeded", workerId: "w1", error: null } })),
    );
  });

  it("a success recorded before the store cleared errors (its row still holds the failed attempt's) is shown without it", async () => {
    const { store } = own;
    const [only] = await retried("older", ["older"]);
    await store.complete(only!.leaseToken, { kind: "success" });
    // As a store of version 18 left it: the success kept the error of the attempt before.
    await sql(store, "UPDATE $schema.tasks SET last_error = 'exited with code 3' WHERE run_id = 'older'");
    expect((await errorsShown("older")).map(({ status, taskNow }) => ({ status, taskNow }))).toEqual([
      { status: ["succeeded", null], taskNow: { state: "succeeded", workerId: "w1", error: null } },
    ]);
  });
});
