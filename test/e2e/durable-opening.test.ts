import { randomBytes } from "node:crypto";
import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { startCli, workspace } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { createPool, DATABASE_URL, dropSchema } from "../store/helpers.js";

/** A TCP port on 127.0.0.1 that nothing listens on now: the system's pick, let go. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The first key of the advisory lock a migration takes (see migrations.ts): held here, a store being made waits for it. */
const MIGRATION_LOCK_CLASS = 0x7461_736b;

describe("a signal while submit, run --store or a worker opens the store", () => {
  let pool: pg.Pool;
  let ws: { dir: string; file: string; logs: string };
  const schemas: string[] = [];

  beforeAll(async () => {
    pool = createPool(4);
    ws = await workspace("tasks:\n  a: { run: echo a }\n");
  });

  afterAll(async () => {
    await pool.end();
    for (const schema of schemas) await dropSchema(schema);
  });

  /**
   * Starts `args` on a schema with no store yet while this test holds the lock its migration takes, so that the
   * command is still opening the store when it is sent `signal`; returns what it did and whether a run was stored.
   */
  async function stopWhileOpening(args: string[], signal: NodeJS.Signals) {
    const schema = `opening_${randomBytes(4).toString("hex")}`;
    schemas.push(schema);
    const holder = await pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [MIGRATION_LOCK_CLASS, schema]);
      const cli = startCli(args, { cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } });
      // Its migration waits for the lock: the command is opening the store, and stays there until told otherwise.
      const waiting = async () =>
        // Its own schema's lock, in this database: another test file's migration waiting must not count.
        (
          await pool.query(
            `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1 AND objsubid = 2
               AND objid::bigint = (hashtext($2)::bigint + 4294967296) % 4294967296
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            [MIGRATION_LOCK_CLASS, schema],
          )
        ).rows.length > 0;
      // What it said, should it never wait there (it stopped before it opened the store).
      expect(await eventually(waiting, 20_000), cli.stderr()).toBe(true);
      cli.child.kill(signal);
      const result = await cli.done;
      await holder.query("COMMIT");
      // Its migration was rolled back with its connection: no store, so no run, in the schema.
      const tables = await pool.query<{ runs: string | null }>("SELECT to_regclass($1) AS runs", [`"${schema}".runs`]);
      const runs = tables.rows[0]?.runs === null ? 0 : Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".runs`)).rows[0]?.n);
      return { result, runs };
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      holder.release();
    }
  }

  it("submit stopped by SIGINT says so, exits 130 and submits nothing", async () => {
    const { result, runs } = await stopWhileOpening(["submit", "workflow.yaml"], "SIGINT");
    expect({ code: result.code, signal: result.signal, stdout: result.stdout }).toEqual({ code: 130, signal: null, stdout: "" });
    expect(result.stderr).toBe("taskq: SIGINT received while the store was being opened: stopped; nothing was submitted\n");
    expect(runs).toBe(0);
  });

  it("run --store stopped by SIGTERM says so, exits 143 and submits nothing", async () => {
    const { result, runs } = await stopWhileOpening(["run", "workflow.yaml", "--store", DATABASE_URL, "--log-dir", ws.logs], "SIGTERM");
    expect({ code: result.code, signal: result.signal, stdout: result.stdout }).toEqual({ code: 143, signal: null, stdout: "" });
    expect(result.stderr).toBe("taskq: SIGTERM received while the store was being opened: stopped; nothing was submitted\n");
    expect(runs).toBe(0);
  });

  it("a worker stopped by SIGTERM or SIGINT says so and exits 143 or 130 (its metrics port taken already), leasing nothing (JSON: an error record)", async () => {
    // A port free now, not a random one: one in use (an outgoing connection's, in the ephemeral range) stopped the worker
    // before it opened the store (`--metrics-port N is already in use`), and the wait for its migration timed out.
    const port = await freePort();
    const term = await stopWhileOpening(["worker", "--log-dir", ws.logs, "--metrics-port", String(port)], "SIGTERM");
    expect({ code: term.result.code, signal: term.result.signal, stdout: term.result.stdout }).toEqual({ code: 143, signal: null, stdout: "" });
    expect(term.result.stderr).toBe("taskq: SIGTERM received while the store was being opened: stopped; nothing was leased\n");
    const int = await stopWhileOpening(["worker", "--log-dir", ws.logs, "--metrics-port", String(port), "--output", "json"], "SIGINT");
    expect(int.result.code).toBe(130);
    expect(JSON.parse(int.result.stdout)).toMatchObject({ event: "error", code: "INTERRUPTED", exitCode: 130, message: "SIGINT received while the store was being opened: stopped; nothing was leased" });
  });

  it("submit --output json stopped by SIGTERM writes an error record", async () => {
    const { result, runs } = await stopWhileOpening(["submit", "workflow.yaml", "--output", "json"], "SIGTERM");
    expect(result.code).toBe(143);
    expect(JSON.parse(result.stdout)).toMatchObject({ event: "error", code: "INTERRUPTED", exitCode: 143, message: "SIGTERM received while the store was being opened: stopped; nothing was submitted" });
    expect(runs).toBe(0);
  });
});

describe("a session terminated while a worker opens the store", () => {
  let pool: pg.Pool;
  let ws: { dir: string; file: string; logs: string };
  const schema = `opening_${randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    pool = createPool(4);
    ws = await workspace("tasks:\n  a: { run: echo a }\n");
  });

  afterAll(async () => {
    await pool.end();
    await dropSchema(schema);
  });

  /** The backend of a migration waiting for the lock this test holds on `schema`'s migrations, if one is. */
  async function waitingMigration(): Promise<number | undefined> {
    const found = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1 AND objsubid = 2
         AND objid::bigint = (hashtext($2)::bigint + 4294967296) % 4294967296
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [MIGRATION_LOCK_CLASS, schema],
    );
    return found.rows[0]?.pid;
  }

  it("a worker whose migration's session is terminated migrates on a new one and runs, rather than exit 1", async () => {
    const holder = await pool.connect();
    const cli = startCli(["worker", "-j", "1", "--log-dir", ws.logs], { cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } });
    const exited = (): boolean => cli.child.exitCode !== null || cli.child.signalCode !== null;
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [MIGRATION_LOCK_CLASS, schema]);
      // Its migration waits for the lock: its session is ended there, as pg_terminate_backend (or a pooler) ends one.
      let first: number | undefined;
      expect(await eventually(async () => (first = await waitingMigration()) !== undefined, 20_000)).toBe(true);
      await pool.query("SELECT pg_terminate_backend($1)", [first]);
      // On a new session, it waits for the lock again; it did not give up.
      let again: number | undefined;
      expect(await eventually(async () => exited() || ((again = await waitingMigration()) !== undefined && again !== first), 20_000)).toBe(true);
      expect({ exited: exited(), stderr: cli.stderr() }).toEqual({ exited: false, stderr: "" });
      await holder.query("COMMIT");
      expect(await eventually(() => exited() || / worker \S+: /.test(cli.stdout()), 20_000)).toBe(true);
      expect(cli.stdout()).toMatch(/made an empty one|worker \S+: /);
      cli.child.kill("SIGINT");
      const result = await cli.done;
      // Stopped by its SIGINT, as any worker is: 130.
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 130, stderr: "" });
      expect(result.stdout).toMatch(/stopped \(requested\)/);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      holder.release();
      if (!exited()) cli.child.kill("SIGKILL");
      await cli.done;
    }
  }, 60_000);
});
