import { describe, expect, it } from "vitest";
import { TaskqError } from "../../src/errors.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { isTransientError } from "../../src/store/postgres/transient.js";

describe("store errors", () => {
  it("reports an unreachable database as STORE_UNAVAILABLE, without the password", async () => {
    const store = new PostgresStore({ connectionString: "postgres://app:s3cret@127.0.0.1:1/none", schema: "taskq_unreachable" });
    try {
      expect(store.description).toBe("postgres://app:***@127.0.0.1:1/none");
      const error = await store.lease("w", 1, 1000).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TaskqError);
      expect(error).toMatchObject({ code: "STORE_UNAVAILABLE" });
      expect(String((error as Error).message)).not.toContain("s3cret");
      expect(isTransientError(error)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("reports a refused statement as STORE_QUERY_FAILED (here: a schema never migrated)", async () => {
    const store = new PostgresStore({ connectionString: "postgres://postgres@127.0.0.1:5432/test", schema: "taskq_never_migrated" });
    try {
      await expect(store.lease("w", 1, 1000)).rejects.toMatchObject({ code: "STORE_QUERY_FAILED" });
    } finally {
      await store.close();
    }
  });

  it("takes a database refusing connections for a while (55000, ALLOW_CONNECTIONS false) as transient, not the rest of its class", () => {
    expect(isTransientError(Object.assign(new Error('database "ci" is not currently accepting connections'), { code: "55000" }))).toBe(true);
    expect(isTransientError(Object.assign(new Error("currval of sequence \"s\" is not yet defined in this session"), { code: "55000" }))).toBe(false);
  });
});
