import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_DURATION_MS } from "../../src/loaders/limits.js";
import { LATEST_MIGRATION, migrate } from "../../src/store/postgres/migrations.js";
import { schemaNames } from "../../src/store/postgres/names.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { taskEndsSql } from "../../src/store/postgres/task-ends.js";
import { createPool, DATABASE_URL, dropSchema, sql, task, uniqueSchema, until, urlAs, workflow } from "./helpers.js";


describe("migrate", () => {
  const schema = uniqueSchema();
  afterAll(async () => dropSchema(schema));

  it("applies each migration once when several processes start at once", async () => {
    const pools = Array.from({ length: 6 }, () => createPool(2));
    try {
      const applied = await Promise.all(pools.map((pool) => migrate(pool, schema)));
      const all = Array.from({ length: LATEST_MIGRATION }, (_, i) => i + 1);
      // Exactly one process applied them all, in order; the others found nothing to do.
      expect(applied.filter((versions) => versions.length > 0)).toEqual([all]);
      const again = await migrate(pools[0]!, schema);
      expect(again).toEqual([]);
      const rows = await pools[0]!.query<{ version: number }>(`SELECT version FROM "${schema}".migrations ORDER BY version`);
      expect(rows.rows.map((row) => row.version)).toEqual(all);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it("a role that owns its schema but may not create in the database migrates it; one that may only use it works, and is told who can migrate", async () => {
    const suffix = randomBytes(4).toString("hex");
    const [owner, user] = [`taskq_owner_${suffix}`, `taskq_user_${suffix}`];
    const owned = uniqueSchema();
    const admin = createPool(1);
    try {
      await admin.query(`CREATE ROLE ${owner} LOGIN; CREATE ROLE ${user} LOGIN; CREATE SCHEMA ${owned} AUTHORIZATION ${owner}`);
      const rights = await admin.query<{ create: boolean }>(
        "SELECT has_database_privilege(r, current_database(), 'CREATE') AS create FROM unnest($1::text[]) r",
        [[owner, user]],
      );
      expect(rights.rows.map((row) => row.create)).toEqual([false, false]);

      const ownerPool = new pg.Pool({ connectionString: urlAs(owner), max: 1 });
      try {
        expect(await migrate(ownerPool, owned)).toEqual(Array.from({ length: LATEST_MIGRATION }, (_, i) => i + 1));
        await ownerPool.query(`GRANT USAGE ON SCHEMA ${owned} TO ${user};
          GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${owned} TO ${user};
          GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${owned} TO ${user}`);
      } finally {
        await ownerPool.end();
      }

      // Nothing to apply: a role that may only use the schema opens the store, submits, reads a run's status.
      const used = await PostgresStore.open({ connectionString: urlAs(user), schema: owned });
      try {
        const runId = await used.submitRun(workflow([task("a")]));
        expect((await used.runStatus(runId)).counts.queued).toBe(1);
      } finally {
        await used.close();
      }
      // A newer taskq's migration pending: it cannot apply it, and says who can.
      await admin.query(`DELETE FROM ${owned}.migrations WHERE version = $1`, [LATEST_MIGRATION]);
      await expect(PostgresStore.open({ connectionString: urlAs(user), schema: owned })).rejects.toThrow(
        new RegExp(`^migrate failed: .*permission denied.* \\(schema "${owned}" needs migration ${LATEST_MIGRATION}, which this database role may not apply: run any taskq command once as a role that may, such as the schema's owner\\)$`),
      );
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${owned} CASCADE`);
      await admin.query(`DROP OWNED BY ${owner}, ${user}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${owner}; DROP ROLE IF EXISTS ${user}`);
      await admin.end();
    }
  });

  it("a role that may not make the store in a schema without one says how to give it one, not to run any command as another role", async () => {
    const role = `taskq_user_${randomBytes(4).toString("hex")}`;
    const [absent, foreign] = [uniqueSchema(), uniqueSchema()];
    const admin = createPool(1);
    try {
      // A schema someone else owns, which the role may use but not create in.
      await admin.query(`CREATE ROLE ${role} LOGIN; CREATE SCHEMA ${foreign}; GRANT USAGE ON SCHEMA ${foreign} TO ${role}`);
      const rights = await admin.query<{ create: boolean }>("SELECT has_database_privilege($1, current_database(), 'CREATE') AS create", [role]);
      expect(rights.rows[0]?.create).toBe(false);
      // `status` and the other commands that only use a store never make one: naming them would send the administrator nowhere.
      await expect(PostgresStore.open({ connectionString: urlAs(role), schema: absent })).rejects.toThrow(
        new RegExp(
          `^migrate failed: permission denied for database \\S+ \\(schema "${absent}" holds no taskq store yet, which this database role may not make: ` +
            `have an administrator create the schema for it \\(CREATE SCHEMA ${absent} AUTHORIZATION "${role}"\\), or run taskq submit, worker or run --store once as a role that may\\)$`,
        ),
      );
      await expect(PostgresStore.open({ connectionString: urlAs(role), schema: foreign })).rejects.toThrow(
        new RegExp(`^migrate failed: permission denied for schema ${foreign} \\(.* have an administrator give it the schema \\(ALTER SCHEMA ${foreign} OWNER TO "${role}"\\), or run`),
      );
      // Made for the role as said, the schema takes the store.
      await admin.query(`CREATE SCHEMA ${absent} AUTHORIZATION ${role}`);
      const store = await PostgresStore.open({ connectionString: urlAs(role), schema: absent });
      await store.close();
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${absent} CASCADE; DROP SCHEMA IF EXISTS ${foreign} CASCADE`);
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it("a role kept from a store's schema is told what an administrator grants it, by the commands that read a store as by those that make one; not that it could not connect", async () => {
    const role = `taskq_user_${randomBytes(4).toString("hex")}`;
    const kept = uniqueSchema();
    const admin = createPool(1);
    try {
      await migrate(admin, kept);
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      const expected = new RegExp(
        `^(open|migrate) failed: permission denied for schema ${kept}: this database role may not use the store in schema "${kept}"; ` +
          "an administrator grants it USAGE on the schema, SELECT, INSERT, UPDATE and DELETE on its tables and USAGE on its sequences \\(or runs taskq as the schema's owner\\)$",
      );
      // status, cancel, dead-letters, prune and redrive (create: false); submit, worker and run --store.
      await expect(PostgresStore.open({ connectionString: urlAs(role), schema: kept, create: false })).rejects.toThrow(expected);
      await expect(PostgresStore.open({ connectionString: urlAs(role), schema: kept })).rejects.toThrow(expected);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${kept} CASCADE`);
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it("a role given the schema but not all of its tables' and sequences' rights is told what an administrator grants it, by each operation it may not do", async () => {
    const [reader, writer] = [`taskq_reader_${randomBytes(4).toString("hex")}`, `taskq_writer_${randomBytes(4).toString("hex")}`];
    const partial = uniqueSchema();
    const admin = createPool(1);
    const stores: PostgresStore[] = [];
    try {
      await migrate(admin, partial);
      const owned = await PostgresStore.open({ connectionString: DATABASE_URL, schema: partial });
      stores.push(owned);
      const runId = await owned.submitRun(workflow([task("a")]));
      // A read-only role (a dashboard's), and one whose administrator forgot the sequences.
      await admin.query(`CREATE ROLE ${reader} LOGIN; CREATE ROLE ${writer} LOGIN;
        GRANT USAGE ON SCHEMA ${partial} TO ${reader}, ${writer};
        GRANT SELECT ON ALL TABLES IN SCHEMA ${partial} TO ${reader};
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${partial} TO ${writer}`);
      const told = (operation: string, what: string) =>
        new RegExp(
          `^${operation} failed: permission denied for ${what}: this database role may not use the store in schema "${partial}"; ` +
            "an administrator grants it USAGE on the schema, SELECT, INSERT, UPDATE and DELETE on its tables and USAGE on its sequences \\(or runs taskq as the schema's owner\\)$",
        );
      const read = await PostgresStore.open({ connectionString: urlAs(reader), schema: partial, create: false });
      stores.push(read);
      await expect(read.runStatus(runId)).rejects.toThrow(told("runStatus", "table runs"));
      await expect(read.completeAndLease([], "w1", 1, 30_000)).rejects.toThrow(told("completeAndLease", "table tasks"));
      const write = await PostgresStore.open({ connectionString: urlAs(writer), schema: partial });
      stores.push(write);
      await expect(write.submitRun(workflow([task("b")]))).rejects.toThrow(told("submitRun", "sequence tasks_\\w+"));
      // What it may do, it does.
      expect((await write.runStatus(runId)).counts.queued).toBe(1);
      // A database it may not connect to is no grant on the store's schema: said as the server says it.
      await admin.query(`CREATE DATABASE ${partial}`);
      await admin.query(`REVOKE CONNECT ON DATABASE ${partial} FROM PUBLIC`);
      const url = new URL(urlAs(writer));
      url.pathname = `/${partial}`;
      const refused = PostgresStore.open({ connectionString: url.toString(), schema: partial });
      await expect(refused).rejects.toThrow(new RegExp(`^connect failed: permission denied for database "?${partial}"?$`));
      // A database that keeps functions from PUBLIC: the worker's hot path is one, which the role must be given too.
      await admin.query(`REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA ${partial} FROM PUBLIC`);
      await expect(write.completeAndLease([], "w1", 1, 30_000)).rejects.toThrow(
        new RegExp(
          `^completeAndLease failed: permission denied for function complete_and_lease\\w*: this database role may not use the store in schema "${partial}"; ` +
            "an administrator grants it USAGE on the schema, SELECT, INSERT, UPDATE and DELETE on its tables, USAGE on its sequences and EXECUTE on its functions \\(or runs taskq as the schema's owner\\)$",
        ),
      );
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await admin.query(`DROP SCHEMA IF EXISTS ${partial} CASCADE`);
      await admin.query(`DROP DATABASE IF EXISTS ${partial}`);
      await admin.query(`DROP OWNED BY ${reader}, ${writer}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${reader}; DROP ROLE IF EXISTS ${writer}`);
      await admin.end();
    }
  });

  it("a migration that waits for a lock another session holds gives up, tried again, rather than holding every worker's lease renewal behind it", async () => {
    const older = uniqueSchema();
    const blocker = new pg.Client({ connectionString: DATABASE_URL, application_name: "psql" });
    const pool = createPool(2);
    try {
      const store = await PostgresStore.open({ connectionString: DATABASE_URL, schema: older });
      try {
        await store.submitRun(workflow([task("running"), task("other", { dependsOn: ["running"] })]), { runId: "upgraded" });
        const [leased] = await store.lease("w1", 1, 30_000);
        // As the store was before migration 22, which a newer taskq (any command of it) applies as workers run tasks.
        await sql(store, "DROP TRIGGER tasks_attempts_reset ON $schema.tasks; DROP FUNCTION $schema.forget_workers_of_uncounted_attempts()");
        await sql(store, "DELETE FROM $schema.migrations WHERE version = 22");
        // A transaction left open in psql, holding a task's row (of another run, as it may be).
        await blocker.connect();
        await blocker.query("BEGIN");
        await blocker.query(`UPDATE "${older}".tasks SET priority = priority WHERE key = 'other'`);
        const { pid } = (await blocker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!;

        const events: string[] = [];
        const migrating = migrate(pool, older).then(
          () => events.push("migrated"),
          (error: unknown) => {
            events.push("refused");
            return error;
          },
        );
        await new Promise((resolve) => setTimeout(resolve, 500));
        const renewing = store.renew(leased!.taskId, leased!.leaseToken, 30_000).then((renewal) => {
          events.push("renewed");
          return renewal;
        });
        // The blocking transaction ends once the migration gave up, or after 15 s (before the fix: it waited for it, and so did the renewal).
        await Promise.race([migrating, new Promise((resolve) => setTimeout(resolve, 15_000))]);
        events.push("released");
        await blocker.query("COMMIT");
        expect(await renewing).toEqual({ status: "renewed" });
        const refusal = await migrating;
        expect(events.indexOf("renewed")).toBeLessThan(events.indexOf("released"));
        expect(events.slice(0, 2).sort()).toEqual(["refused", "renewed"]);
        expect(refusal).toMatchObject({ code: "STORE_LOCKED" });
        expect((refusal as Error).message).toMatch(
          // The session named, as for a row's lock: the table's lock names no row, and was looked up while the migration waited for it.
          new RegExp(
            `^migrate failed: a lock it needs on table "?${older}"?\\.tasks is held by another session \\(pid ${pid}, application_name "psql", client [^,()]+, its transaction open for \\S+\\); ` +
              `each of 8 tries over .* no migration was applied \\(schema "${older}" needs migration 22\\); try again once that session's transaction has ended$`,
          ),
        );
        // Once that transaction has ended, it is applied.
        expect(await migrate(pool, older)).toEqual([22]);
      } finally {
        await store.close();
      }
    } finally {
      await blocker.end().catch(() => undefined);
      await pool.end();
      await dropSchema(older);
    }
  });

  it("a migration refused for a table's lock names the session holding it, not a session of its own role waiting behind it, where the holder is another role's", async () => {
    const owner = `taskq_owner_${randomBytes(4).toString("hex")}`;
    const owned = uniqueSchema();
    const admin = createPool(1);
    // A transaction left open by another role (a superuser's psql), holding a running task's row.
    const blocker = new pg.Client({ connectionString: DATABASE_URL, application_name: "psql" });
    await admin.query(`CREATE ROLE ${owner} LOGIN; CREATE SCHEMA ${owned} AUTHORIZATION ${owner}`);
    const pool = createPool(2, urlAs(owner));
    try {
      const store = await PostgresStore.open({ connectionString: urlAs(owner), schema: owned });
      try {
        await store.submitRun(workflow([task("running")]), { runId: "upgraded" });
        const [leased] = await store.lease("w1", 1, 30_000);
        await sql(store, "DROP TRIGGER tasks_attempts_reset ON $schema.tasks; DROP FUNCTION $schema.forget_workers_of_uncounted_attempts()");
        await sql(store, "DELETE FROM $schema.migrations WHERE version = 22");
        await blocker.connect();
        await blocker.query("BEGIN");
        await blocker.query(`UPDATE "${owned}".tasks SET priority = priority WHERE key = 'running'`);
        const { pid } = (await blocker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!;
        // The worker's renewal of that task waits for the row, holding the table in a lesser mode, its transaction opened later:
        // this role sees when it began, and not when the other role's did.
        const renewing = store.renew(leased!.taskId, leased!.leaseToken, 30_000).catch((error: unknown) => error);
        await until(async () => (await admin.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE%' AND pid <> $1", [pid])).rows.length > 0);
        const refusal = await migrate(pool, owned).catch((error: unknown) => error);
        await blocker.query("COMMIT");
        await renewing;
        expect(refusal).toMatchObject({ code: "STORE_LOCKED" });
        expect((refusal as Error).message).toMatch(new RegExp(`^migrate failed: a lock it needs on table "?${owned}"?\\.tasks is held by another session \\(pid ${pid}[,)]`));
      } finally {
        await store.close();
      }
    } finally {
      await blocker.end().catch(() => undefined);
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS ${owned} CASCADE`);
      await admin.query(`DROP OWNED BY ${owner}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${owner}`);
      await admin.end();
    }
  });

  it("migration 22 forgets the workers of the attempts before a redrive an earlier version made, of a task not leased since", async () => {
    const older = uniqueSchema();
    try {
      const before = await PostgresStore.open({ connectionString: DATABASE_URL, schema: older });
      try {
        await before.submitRun(workflow([task("t", { retries: 1, backoff: { baseMs: 60_000, maxMs: 60_000 } })]), { runId: "redriven" });
        const [leased] = await before.lease("worker-a", 1, 30_000);
        await before.complete(leased!.leaseToken, { kind: "failure", error: "exited with code 1", exitCode: 1, tail: ["from a"] });
        // As version 19 left the store, redriven by it (which knew neither failed_worker_id nor tail_worker_id).
        await sql(before, "DROP TRIGGER tasks_attempts_reset ON $schema.tasks; DROP FUNCTION $schema.forget_workers_of_uncounted_attempts()");
        await sql(before, "DELETE FROM $schema.migrations WHERE version = 22");
        await sql(before, "UPDATE $schema.tasks SET state = 'queued', attempts = 0, tail = '{}', tail_attempt = NULL, worker_id = NULL, last_error = NULL WHERE run_id = 'redriven'");
      } finally {
        await before.close();
      }
      const after = await PostgresStore.open({ connectionString: DATABASE_URL, schema: older });
      try {
        expect(await sql(after, "SELECT failed_worker_id, failed_attempt, tail_worker_id, tail_worker_attempt FROM $schema.tasks WHERE run_id = 'redriven'")).toEqual([
          { failed_worker_id: null, failed_attempt: null, tail_worker_id: null, tail_worker_attempt: null },
        ]);
      } finally {
        await after.close();
      }
    } finally {
      await dropSchema(older);
    }
  });

  it("keeps the functions a worker of an earlier version calls, prepared: same results, a timeout past int's range cut to its top", async () => {
    const store = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
    try {
      await store.submitRun(workflow([task("long", { timeoutMs: MAX_DURATION_MS, retryOn: [75] }), task("short", { timeoutMs: 5_000 })]), { runId: "earlier" });
      const leased = await store.pool.query({
        name: "earlier_lease",
        text: `SELECT key, timeout_ms FROM "${schema}".lease_tasks($1, $2, $3, $4::text)`,
        values: ["earlier", 1, 30_000, "earlier"],
      });
      expect(leased.rows).toEqual([{ key: "long", timeout_ms: 2 ** 31 - 1 }]);
      const batch = await store.pool.query({
        name: "earlier_complete_and_lease",
        text: `SELECT kind, key, timeout_ms FROM "${schema}".complete_and_lease($1, $2, $3, $4)`,
        values: ["[]", "earlier", 1, 30_000],
      });
      expect(batch.rows).toEqual([{ kind: "leased", key: "short", timeout_ms: 5_000 }]);
      // Version 6's: the same columns as it knew them, without migration 7's retry_on.
      await sql(store, "UPDATE $schema.tasks SET state = 'queued', attempts = 0 WHERE run_id = 'earlier'");
      const v6 = await store.pool.query({ name: "earlier_lease_v6", text: `SELECT * FROM "${schema}".lease_tasks_v6($1, $2, $3, $4::text)`, values: ["earlier", 1, 30_000, "earlier"] });
      expect(v6.fields.map((field) => field.name).at(-1)).toBe("queue_wait_ms");
      expect(v6.rows.map((row: { key: string; timeout_ms: string }) => [row.key, row.timeout_ms])).toEqual([["long", String(MAX_DURATION_MS)]]);
      // This version's functions: the whole timeout, and the task's retryOn.
      await sql(store, "UPDATE $schema.tasks SET state = 'queued', attempts = 0 WHERE run_id = 'earlier'");
      expect((await store.lease("current", 2, 30_000)).map((row) => [row.key, row.timeoutMs, row.retryOn])).toEqual([
        ["long", MAX_DURATION_MS, [75]],
        ["short", 5_000, []],
      ]);
    } finally {
      await store.close();
    }
  });

  it("a store of version 12 takes migrations 13 on with its tasks as they were: their lines of no known attempt, cancels by request, their counts by state", async () => {
    const older = uniqueSchema();
    try {
      const before = await PostgresStore.open({ connectionString: DATABASE_URL, schema: older });
      try {
        await before.submitRun(workflow([task("failing", { retries: 1, backoff: { baseMs: 1, maxMs: 1 } }), task("waiting", { dependsOn: ["failing"] }), task("free")]), { runId: "older" });
        // As version 12 left a store: without the columns 13 and 14 add (nor 22's trigger, which reads tail_attempt).
        await sql(before, "DROP TRIGGER tasks_attempts_reset ON $schema.tasks; DROP FUNCTION $schema.forget_workers_of_uncounted_attempts()");
        await sql(before, "ALTER TABLE $schema.tasks DROP COLUMN tail_attempt, DROP COLUMN cancel_kind, DROP COLUMN cancelled_running");
        await sql(before, "DELETE FROM $schema.migrations WHERE version >= 13");
        // Nor what 15 and 18 add.
        await sql(
          before,
          `DROP TRIGGER tasks_added ON $schema.tasks; DROP TRIGGER tasks_changed ON $schema.tasks; DROP TRIGGER tasks_removed ON $schema.tasks;
           DROP FUNCTION $schema.record_task_end_changes(), $schema.fold_task_ends(), $schema.count_tasks(); DROP TABLE $schema.task_ends, $schema.task_end_changes`,
        );
        // Attempt 1 failed with lines, as version 12 stored them; the run cancelled by request.
        await sql(before, "UPDATE $schema.tasks SET state = 'queued', attempts = 1, last_error = 'exited with code 3', tail = '{earlier}' WHERE key = 'failing'");
        await sql(before, "UPDATE $schema.tasks SET state = 'cancelled', cancel_reason = 'cancelled by request', finished_at = now() WHERE key = 'free'");
      } finally {
        await before.close();
      }
      const after = await PostgresStore.open({ connectionString: DATABASE_URL, schema: older });
      try {
        const applied = await sql<{ version: number }>(after, "SELECT version FROM $schema.migrations WHERE version >= 13 ORDER BY version");
        expect(applied.map((row) => row.version)).toEqual(Array.from({ length: LATEST_MIGRATION - 12 }, (_, i) => 13 + i));
        // Migration 15 counts the tasks the store held.
        expect(await after.countByState()).toEqual({ blocked: 1, queued: 1, running: 0, succeeded: 0, failed: 0, cancelled: 1 });
        const free = (await after.runStatus("older")).tasks.find((row) => row.key === "free")!;
        expect(free).toMatchObject({ state: "cancelled", cancelReason: "cancelled by request" });
        expect(free).not.toHaveProperty("cancelKind");
        expect(free).not.toHaveProperty("cancelledRunning");
        // Lines of no known attempt are replaced by a last attempt that left none, as they were before.
        const [failing] = await after.lease("w1", 1, 30_000);
        await after.complete(failing!.leaseToken, { kind: "failure", error: "exited with code 4", exitCode: 4, tail: [] });
        const [dead] = await after.deadLetters("older");
        expect(dead).toMatchObject({ key: "failing", attempts: 2, tail: [] });
        expect(dead).not.toHaveProperty("tailAttempt");
      } finally {
        await after.close();
      }
    } finally {
      await dropSchema(older);
    }
  });

  it("a store of version 17 takes migration 18 with its changes of state not yet folded, one row each: its counts stay exact, and a statement's changes are one row then", async () => {
    const older = uniqueSchema();
    try {
      const before = await PostgresStore.open({ connectionString: DATABASE_URL, schema: older });
      try {
        // As version 17 left a store: migration 15's counts, a row for each task's change of state.
        await sql(
          before,
          `DROP TRIGGER tasks_added ON $schema.tasks; DROP TRIGGER tasks_changed ON $schema.tasks; DROP TRIGGER tasks_removed ON $schema.tasks;
           DROP FUNCTION $schema.record_task_end_changes(), $schema.fold_task_ends(), $schema.count_tasks(); DROP TABLE $schema.task_ends, $schema.task_end_changes`,
        );
        await sql(before, taskEndsSql(schemaNames(older)));
        await sql(before, "DELETE FROM $schema.migrations WHERE version >= 18");
        await before.submitRun(workflow(Array.from({ length: 20 }, (_, i) => task(`t${i}`, i < 5 ? {} : { dependsOn: ["t0"] }))), { runId: "older" });
        await before.sweepOrphans();
        expect(await before.lease("w1", 3, 30_000)).toHaveLength(3);
        expect(await sql(before, "SELECT count(*)::int AS n FROM $schema.task_end_changes")).toEqual([{ n: 3 }]);
      } finally {
        await before.close();
      }
      const after = await PostgresStore.open({ connectionString: DATABASE_URL, schema: older });
      try {
        expect(await sql(after, "SELECT version FROM $schema.migrations WHERE version = 18")).toEqual([{ version: 18 }]);
        const expected = { blocked: 15, queued: 2, running: 3, succeeded: 0, failed: 0, cancelled: 0 };
        expect(await after.countByState()).toEqual(expected);
        await after.cancelRun("older");
        // The 3 rows from before, of one change each, and the cancel's 17 changes in a row for each pair of states of each statement.
        const [pending] = await sql<{ rows: number; changes: number }>(after, "SELECT count(*)::int AS rows, sum(n)::int AS changes FROM $schema.task_end_changes");
        expect(pending!.changes).toBe(20);
        expect(pending!.rows).toBeLessThanOrEqual(3 + 4);
        expect(await after.countByState()).toEqual({ ...expected, blocked: 0, queued: 0, cancelled: 17 });
        await after.sweepOrphans();
        expect(await sql(after, "SELECT count(*)::int AS n FROM $schema.task_end_changes")).toEqual([{ n: 0 }]);
        expect(await after.countByState()).toEqual({ ...expected, blocked: 0, queued: 0, cancelled: 17 });
      } finally {
        await after.close();
      }
    } finally {
      await dropSchema(older);
    }
  });

  it("rejects a schema name that is not a plain identifier", async () => {
    const pool = createPool(1);
    try {
      await expect(migrate(pool, 'x"; DROP TABLE y; --')).rejects.toMatchObject({ code: "STORE_BAD_SCHEMA" });
    } finally {
      await pool.end();
    }
  });
});
