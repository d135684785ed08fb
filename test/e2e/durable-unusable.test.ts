import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { migrate } from "../../src/store/postgres/migrations.js";
import { FIXTURES, startCli, workspace } from "../helpers/cli.js";
import { createPool, DATABASE_URL, dropSchema, uniqueSchema, urlAs } from "../store/helpers.js";

describe("taskq worker and run --store on a store they cannot use", () => {
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
    const result = await workerExit(urlAs(role), schema);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.stderr).toContain(`taskq: the worker cannot lease from the store in schema "${schema}": completeAndLease failed: permission denied`);
    expect(result.stderr).toContain("an administrator grants it USAGE on the schema");
  }, 40_000);

  /** A role of its own on a new store: `grants` are what it is given (it is denied the rest). */
  async function roleOn(schema: string, grants: string): Promise<string> {
    const role = `taskq_denied_${randomBytes(4).toString("hex")}`;
    roles.push(role);
    await admin.query(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA "${schema}" TO ${role}; ${grants.replaceAll("ROLE", role)}`);
    return role;
  }

  /** A role with every right on the store's tables, none on its functions: its leases are refused (42501), a cancel is not. */
  function leaseDenied(schema: string): Promise<string> {
    return roleOn(
      schema,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO ROLE; GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${schema}" TO ROLE;
       REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA "${schema}" FROM PUBLIC`,
    );
  }

  /** `run --store` of a two-task workflow as `role` (with `args`), which must end well before a minute (its worker used to try for ever). */
  async function runStoreExit(role: string, schema: string, args: string[] = [], more: { env?: Record<string, string>; nodeArgs?: string[] } = {}) {
    const run = await workspace("tasks:\n  a:\n    run: echo a\n  b:\n    run: echo b\n    dependsOn: a\n");
    const cli = startCli(["run", run.file, "--log-dir", run.logs, ...args], {
      cwd: run.dir,
      env: { TASKQ_STORE: urlAs(role), TASKQ_STORE_SCHEMA: schema, ...more.env },
      ...(more.nodeArgs === undefined ? {} : { nodeArgs: more.nodeArgs }),
    });
    const timer = setTimeout(() => cli.child.kill("SIGKILL"), 30_000);
    const result = await cli.done;
    clearTimeout(timer);
    const runId = /run (\S+) (?:submitted to|already submitted to)/.exec(result.stdout)?.[1];
    const states = await admin.query<{ key: string; state: string }>(`SELECT key, state FROM "${schema}".tasks WHERE run_id = $1 ORDER BY key`, [runId]);
    return { ...result, runId, states: states.rows.map(({ key, state }) => `${key} ${state}`) };
  }

  it("run --store as a role that may submit but not lease: says its run is still queued, and how to cancel or run it", async () => {
    const schema = await storeSchema();
    // What a submitter is given (it may add runs), not what a worker needs: every lease is refused, and so is a cancel.
    const role = await roleOn(schema, `GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA "${schema}" TO ROLE; GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${schema}" TO ROLE`);
    const result = await runStoreExit(role, schema);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.states).toEqual(["a queued", "b blocked"]);
    expect(result.stderr).toContain(`taskq: the worker cannot lease from the store in schema "${schema}": completeAndLease failed: permission denied`);
    expect(result.stderr).toContain(
      `; run ${result.runId}, which this command submitted, is still queued (its cancel was refused too, SQLSTATE 42501), and a worker with those rights would run it: ` +
        `cancel it with \`taskq cancel ${result.runId}\`, or run it with \`taskq worker\`, either as a role with those rights (the same --store and --store-schema)\n`,
    );
  }, 40_000);

  it("run --store as a role that may not lease but may cancel: cancels the run it submitted, so no worker runs it after the command failed", async () => {
    const schema = await storeSchema();
    const role = await leaseDenied(schema);
    const result = await runStoreExit(role, schema);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.states).toEqual(["a cancelled", "b cancelled"]);
    expect(result.stderr).toContain(`completeAndLease failed: permission denied for function`);
    expect(result.stderr).toContain(
      `; run ${result.runId}, which this command submitted, is cancelled (2 tasks that had not started), so that no worker runs it after this command failed; ` +
        "once the role has the rights, run the workflow again (under a new --run-id, if you gave one)\n",
    );
  }, 40_000);

  it("run --store that joined a run submitted before it (--run-id), its leases refused: leaves that run as it was, for the workers that run it", async () => {
    const schema = await storeSchema();
    const role = await leaseDenied(schema);
    // Submitted first, with every right (an earlier step of the pipeline), for workers elsewhere to run.
    const runId = `joined-${randomBytes(3).toString("hex")}`;
    const first = await workspace("tasks:\n  a:\n    run: echo a\n  b:\n    run: echo b\n    dependsOn: a\n");
    const submitted = await startCli(["submit", first.file, "--run-id", runId], { cwd: first.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } }).done;
    expect(submitted.code).toBe(0);
    const result = await runStoreExit(role, schema, ["--run-id", runId]);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.runId).toBe(runId);
    // Not cancelled: the run is not this command's to end.
    expect(result.states).toEqual(["a queued", "b blocked"]);
    expect(result.stderr).toContain(`completeAndLease failed: permission denied for function`);
    expect(result.stderr).toContain(`; run ${runId} existed before this command, and is left as it was for the workers that run it\n`);
  }, 40_000);

  it("run --store whose leases were refused, a SIGTERM as it closes the store: the error is said and its exit code stands, not a silent death by the signal", async () => {
    const schema = await storeSchema();
    const role = await leaseDenied(schema);
    const runId = `joined-${randomBytes(3).toString("hex")}`;
    const first = await workspace("tasks:\n  a:\n    run: echo a\n  b:\n    run: echo b\n    dependsOn: a\n");
    expect((await startCli(["submit", first.file, "--run-id", runId], { cwd: first.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } }).done).code).toBe(0);
    // The signal lands as the store's connections are closed, the worker's listeners gone: the last step before the error is said.
    const result = await runStoreExit(role, schema, ["--run-id", runId], {
      env: { TASKQ_TEST_SIGNAL_AT_POOL_END: "SIGTERM" },
      nodeArgs: ["--require", path.join(FIXTURES, "signal-at-pool-end.cjs")],
    });
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    expect(result.stderr).toContain(`taskq: the worker cannot lease from the store in schema "${schema}": completeAndLease failed: permission denied for function`);
    expect(result.stderr).toContain(`; run ${runId} existed before this command, and is left as it was for the workers that run it\n`);
    expect(result.states).toEqual(["a queued", "b blocked"]);
  }, 40_000);
});
