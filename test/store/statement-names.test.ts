import { afterEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { DATABASE_URL, dropSchema, leaseAll, task, workflow } from "./helpers.js";

// Prepared statements were named taskq_<kind>_<schema>, and PostgreSQL cuts names at 63 bytes: with a schema name of
// 48 characters (the longest taken), a renewal with the task's last lines and one without were one name, and the
// second failed ("prepared statement ... already exists"): renewals failing, healthy tasks losing their leases.
describe("a schema name as long as taken (48 characters)", () => {
  const schema = "tail_".repeat(10).slice(0, 48);
  const opened: PostgresStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await dropSchema(schema);
  });

  it("submits, leases and renews, with and without the task's last lines, on the same connections", async () => {
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args.join(" "));
    try {
      const store = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
      opened.push(store);
      const runId = await store.submitRun(workflow([task("a"), task("b")]));
      const leased = await leaseAll(store);
      expect(leased.map((row) => row.key).sort()).toEqual(["a", "b"]);
      for (let round = 0; round < 5; round++) {
        for (const row of leased) {
          expect(await store.heartbeat(row.taskId, row.leaseToken, 30_000)).toBe("renewed");
          expect(await store.heartbeat(row.taskId, row.leaseToken, 30_000, { tail: [`line ${round}`] })).toBe("renewed");
        }
      }
      expect((await store.runStatus(runId)).state).toBe("running");
    } finally {
      console.warn = warn;
    }
    // The driver warned of names it had to cut (schema names of 35 to 48 characters).
    expect(warnings.filter((line) => line.includes("63 characters"))).toEqual([]);
  });
});
