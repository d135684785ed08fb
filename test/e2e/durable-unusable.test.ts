import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { migrate } from "../../src/store/postgres/migrations.js";
import { startCli, workspace } from "../helpers/cli.js";
import { createPool, DATABASE_URL, dropSchema, uniqueSchema } from "../store/helpers.js";

describe("taskq worker on a store it cannot use", () => {
  let admin: pg.Pool;
  let ws: { dir: string; logs: string };
  const schemas: string[] = [];
  const roles: string[] = [];

  beforeAll(async () => {
    admin = createPool(2);
    ws = await workspace("");
  });

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
    for (const role of roles) {
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
    }
    await admin.end();
  });

  async function storeSchema(): Promise<string> {
    const schema = uniqueSchema();
    schemas.push(schema);
    await migrate(admin, schema);
    return schema;
  }

  /** Starts a worker and waits for its exit, which must come well before a minute (it used to try for ever). */
  async function workerExit(url: string, schema: string) {
    const cli = startCli(["worker", "-j", "1", "--log-dir", ws.logs], { cwd: ws.dir, env: { TASKQ_STORE: url, TASKQ_STORE_SCHEMA: schema } });
    const timer = setTimeout(() => cli.child.kill("SIGKILL"), 30_000);
    const result = await cli.done;
    clearTimeout(timer);
    return result;
  }

  it("a table missing from its schema: the worker says so and exits 1 instead of retrying every few seconds for ever", async () => {
    const schema = await storeSchema();
    await admin.query(`DROP TABLE "${schema}".tasks CASCADE`);
    const result = await workerExit(DATABASE_URL, schema);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.stderr).toMatch(new RegExp(`^taskq: the worker cannot lease from the store in schema "${schema}": .*relation "${schema}\\.tasks" does not exist \\(schema "${schema}" no longer holds a whole taskq store: .*\\); it stops rather than try again, as no retry fixes that\\n$`));
  }, 40_000);

  it("a table missing from a store that was made: status says the schema no longer holds a whole taskq store, and what to do", async () => {
    const schema = await storeSchema();
    await admin.query(`DROP TABLE "${schema}".runs CASCADE`);
    const cli = startCli(["status", "some-run"], { cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } });
    const result = await cli.done;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`relation "${schema}.runs" does not exist (schema "${schema}" no longer holds a whole taskq store: part or all of it was dropped after it was made`);
    expect(result.stderr).toContain(`drop it (DROP SCHEMA "${schema}" CASCADE, its runs lost) for submit, worker or run --store to make a new one)`);
  });

  it("a role denied the store's tables: the worker says what to grant and exits 1", async () => {
    const schema = await storeSchema();
    const role = `taskq_denied_${randomBytes(4).toString("hex")}`;
    roles.push(role);
    // It may read which migrations the store has (so it opens), and nothing else.
    await admin.query(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA "${schema}" TO ${role}; GRANT SELECT ON "${schema}".migrations TO ${role}`);
    const url = new URL(DATABASE_URL);
    url.username = role;
    url.password = "";
    const result = await workerExit(url.toString(), schema);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.stderr).toContain(`taskq: the worker cannot lease from the store in schema "${schema}": completeAndLease failed: permission denied`);
    expect(result.stderr).toContain("an administrator grants it USAGE on the schema");
  }, 40_000);
});
