import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { TaskqError } from "../../src/errors.js";
import { migrate } from "../../src/store/postgres/migrations.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { causes, isNeverConnected, isRefusal, isTransientError, serverWords } from "../../src/store/postgres/transient.js";
import { DATABASE_URL, createPool, task, uniqueSchema, urlAs, workflow } from "./helpers.js";

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
    const store = new PostgresStore({ connectionString: DATABASE_URL, schema: "taskq_never_migrated" });
    try {
      await expect(store.lease("w", 1, 1000)).rejects.toMatchObject({ code: "STORE_QUERY_FAILED" });
    } finally {
      await store.close();
    }
  });

  it("gives the server's own words where it answered, not a socket's error, with a password in them hidden", async () => {
    const pool = createPool(1);
    try {
      const refused = await pool.query("SELECT * FROM taskq_no_such_table").catch((error: unknown) => error);
      expect(serverWords(new TaskqError("STORE_UNAVAILABLE", "renew failed", { cause: refused }))).toBe('relation "taskq_no_such_table" does not exist');
      const raised = await pool.query("DO $$ BEGIN RAISE EXCEPTION 'pooler: postgres://app:hunter2@db/ci is full'; END $$").catch((error: unknown) => error);
      expect(serverWords(raised)).toBe("pooler: postgres://app:***@db/ci is full");
      // Answers, but no refusals: a statement cancelled (57014), a session ended (57P01).
      const client = await pool.connect();
      try {
        const cancelled = await client.query("SET statement_timeout = 1; SELECT pg_sleep(1)").catch((error: unknown) => error);
        expect(cancelled).toMatchObject({ code: "57014" });
        expect(serverWords(cancelled)).toBeUndefined();
      } finally {
        client.release(true);
      }
      expect(serverWords(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01", severity: "FATAL" }))).toBeUndefined();
    } finally {
      await pool.end();
    }
    // EPIPE has five capitals too, and no severity: the socket's, not the server's.
    expect(serverWords(Object.assign(new Error("write EPIPE"), { code: "EPIPE", errno: -32 }))).toBeUndefined();
  });

  it("takes a database refusing connections for a while (55000, ALLOW_CONNECTIONS false) as transient, not the rest of its class", () => {
    expect(isTransientError(Object.assign(new Error('database "ci" is not currently accepting connections'), { code: "55000" }))).toBe(true);
    expect(isTransientError(Object.assign(new Error("currval of sequence \"s\" is not yet defined in this session"), { code: "55000" }))).toBe(false);
  });

  it("rides out a database that is read-only for a while (25006: a failover's demoted primary, until its clients reach the new one)", async () => {
    expect(isTransientError(Object.assign(new Error("cannot execute UPDATE in a read-only transaction"), { code: "25006" }))).toBe(true);
    const role = `taskq_standby_${randomBytes(4).toString("hex")}`;
    const schema = uniqueSchema();
    const admin = createPool(1);
    const url = urlAs(role);
    let store: PostgresStore | undefined;
    try {
      await migrate(admin, schema);
      await admin.query(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA ${schema} TO ${role};
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role};
        ALTER ROLE ${role} SET default_transaction_read_only = on`);
      // Refused for longer than it rides out: said with what may be wrong, a URL naming a standby.
      const brief = await PostgresStore.open({ connectionString: url, schema, retryDroppedMs: 300 });
      try {
        await expect(brief.runStatus("nope")).rejects.toMatchObject({
          code: "STORE_UNAVAILABLE",
          message:
            "runStatus failed: cannot execute UPDATE in a read-only transaction (the database is read-only: a primary demoted in a failover is, until its clients reach the new one; " +
            "if it goes on, TASKQ_STORE or --store may name a standby, not the primary)",
        });
      } finally {
        await brief.close();
      }
      // Its sessions are read-only, as those of a primary demoted to a standby: the store opens (it only reads), and nothing writes.
      store = await PostgresStore.open({ connectionString: url, schema, retryDroppedMs: 10_000 });
      const submitted = store.submitRun(workflow([task("a")]), { runId: "after-failover" });
      // A second later its clients reach a primary: sessions of their own, which may write.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await admin.query(`ALTER ROLE ${role} RESET default_transaction_read_only`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [role]);
      expect(await submitted).toBe("after-failover");
      expect((await store.runStatus("after-failover")).counts.queued).toBe(1);
    } finally {
      await store?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it("finds the driver's error through the store's wrapping (`cause`), and ends a chain of causes that loops back", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    const rejected = Object.assign(new Error("canceling statement due to lock timeout"), { code: "55P03", severity: "ERROR" });
    const wrapped = (error: Error) => new TaskqError("INTERRUPTED", "submit failed", { cause: new TaskqError("STORE_UNAVAILABLE", "submit failed", { cause: error }) });
    expect([isNeverConnected(wrapped(refused)), isRefusal(wrapped(refused))]).toEqual([true, false]);
    expect([isNeverConnected(wrapped(rejected)), isRefusal(wrapped(rejected))]).toEqual([false, true]);
    const looped = new Error("a cause of its own");
    looped.cause = looped;
    expect([...causes(looped)].length).toBeLessThan(10);
    expect(isNeverConnected(looped)).toBe(false);
    // Deeper than the store's own wrapping (a TaskqError around one around the driver's): four wraps, found.
    const wrappedIn = (error: Error, times: number): Error => (times === 0 ? error : new TaskqError("STORE_UNAVAILABLE", "failed", { cause: wrappedIn(error, times - 1) }));
    expect(isNeverConnected(wrappedIn(refused, 4))).toBe(true);
  });
});
