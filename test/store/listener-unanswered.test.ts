import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { startFreezableProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "./helpers.js";

describe("the sweeper's look at the leases, on the listening connection", () => {
  it("after one went unanswered (a connection gone silent), the next look is answered: the connection is made again, not waited on look after look", { timeout: 60_000 }, async () => {
    const schema = uniqueSchema();
    const url = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const store = await PostgresStore.open({ connectionString: proxy.url(DATABASE_URL), schema, queryTimeoutMs: 1_000 });
    const hold = proxy.holdNext("next_lease_expiry");
    try {
      store.subscribe(() => undefined);
      await store.listening();
      // The first look goes on the listening connection, which sends nothing more from then on.
      await expect(store.nextLeaseExpiry()).rejects.toThrow("the database did not answer within 1s");
      await hold.held;
      // Before, every later look waited behind the unanswered one on that connection, and failed as it: a worker's sweeper,
      // which looks before it sweeps, swept once in the query's time limit (30 s), where it swept every half lease.
      await expect(store.nextLeaseExpiry()).resolves.toBeNull();
    } finally {
      hold.release();
      await store.close();
      await proxy.close();
      await dropSchema(schema);
    }
  });
});
