import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { migrate } from "../../src/store/postgres/migrations.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { PostgresWorker } from "../../src/store/postgres/worker.js";
import type { WorkerEvent } from "../../src/store/postgres/worker-types.js";
import { createPool, uniqueSchema, until, urlAs } from "./helpers.js";

describe("PostgresWorker on a database that refuses its leases", () => {
  it("gives back no strays after a lease the database refused (it committed nothing): only the lease is tried again", async () => {
    // A role that may use the store until its rights on the tasks are taken: every lease is then refused (42501), and so is every release.
    const role = `taskq_refused_${randomBytes(4).toString("hex")}`;
    const schema = uniqueSchema();
    const admin = createPool(1);
    const url = urlAs(role);
    let store: PostgresStore | undefined;
    let worker: PostgresWorker | undefined;
    try {
      await migrate(admin, schema);
      await admin.query(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role};
        GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role}`);
      store = await PostgresStore.open({ connectionString: url, schema });
      const events: WorkerEvent[] = [];
      worker = new PostgresWorker({ store, concurrency: 1, leaseMs: 5_000, pollMs: 200, handler: async () => undefined, onEvent: (event) => events.push(event) });
      await worker.start();
      // Leasing (nothing to lease) every 200 ms: once it has, a refusal is no longer one of a store it could never use, which stops it.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await admin.query(`REVOKE ALL ON ${schema}.tasks FROM ${role}`);
      const failed = (operation: string) => events.filter((event) => event.type === "db-error" && event.operation === operation);
      await until(() => failed("lease").length >= 4, 15_000);
      expect(failed("lease")[0]).toMatchObject({ retrying: true, error: { message: expect.stringContaining("permission denied") } });
      // Before, each refusal was taken for a reply lost, and a release of what it might have leased was tried, and refused, before every lease.
      expect(failed("release")).toEqual([]);
    } finally {
      await worker?.stop({ deadlineMs: 1_000 });
      await store?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });
});
