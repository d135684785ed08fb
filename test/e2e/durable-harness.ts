import { randomBytes } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { PostgresStore } from "../../src/store/postgres/store.js";
import type { RunStatus } from "../../src/store/postgres/types.js";
import { runCli, startCli, workspace, type CliResult, type RunningCli } from "../helpers/cli.js";
import { eventually, findLeftovers } from "../helpers/processes.js";
import { DATABASE_URL, dropSchema } from "../store/helpers.js";

export function withPassword(connectionString: string, password: string): string {
  const url = new URL(connectionString);
  url.password = password;
  return url.toString();
}

/** A `taskq worker` that has started (its first line names it). */
export interface Worker {
  cli: RunningCli;
  id: string;
  stdout: () => string;
}

/**
 * Durable mode through the real CLI: several `taskq` processes stand in for several machines,
 * sharing one PostgreSQL schema of the test file's own (dropped at the end) and one workspace.
 * Every command gets a connection string with a password (trust auth accepts any) that must
 * appear in no output and no log: checked once the file's tests are done. After each test,
 * the workers it left are ended and its runs must have left no process behind.
 */
export function useDurableWorkspace(schemaPrefix: string) {
  const SCHEMA = `${schemaPrefix}_${randomBytes(4).toString("hex")}`;
  const PASSWORD = `pw-${randomBytes(6).toString("hex")}`;
  const SECRET_URL = withPassword(DATABASE_URL, PASSWORD);
  const ENV = { TASKQ_STORE: SECRET_URL, TASKQ_STORE_SCHEMA: SCHEMA };
  /** Every output of every command, checked for the password at the end. */
  const outputs: string[] = [];
  /** Runs whose processes must all be gone after each test. */
  const runIds: string[] = [];
  /** Workers (and `run --store` processes) a test started: ended after it. */
  const workers: RunningCli[] = [];
  const shared = { store: undefined as unknown as PostgresStore, ws: undefined as unknown as { dir: string; logs: string } };

  beforeAll(async () => {
    shared.store = await PostgresStore.open({ connectionString: DATABASE_URL, schema: SCHEMA });
    shared.ws = await workspace("");
  });

  afterEach(async () => {
    // A worker a test left running would take the next test's tasks: end it (frozen ones too), and fail on what it left behind.
    for (const worker of workers.splice(0)) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) {
        worker.child.kill("SIGCONT");
        worker.child.kill("SIGKILL");
      }
      const result = await worker.done;
      outputs.push(result.stdout, result.stderr);
    }
    for (const runId of runIds.splice(0)) expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 5_000)).toBe(true);
  });

  afterAll(async () => {
    // Unset when beforeAll failed (no database): that failure shows alone, nothing was made to drop.
    if (shared.store === undefined) return;
    await shared.store.close();
    await dropSchema(SCHEMA);
    const logs = await readdir(shared.ws.logs, { recursive: true, withFileTypes: true }).catch(() => []);
    const texts = await Promise.all(logs.filter((entry) => entry.isFile()).map((entry) => readFile(path.join(entry.parentPath, entry.name), "utf8")));
    expect([...outputs, ...texts].filter((text) => text.includes(PASSWORD))).toEqual([]);
  });

  /** Runs a taskq command against the store (TASKQ_STORE, TASKQ_STORE_SCHEMA) and keeps its output. */
  async function taskq(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
    const result = await runCli(args, { cwd: shared.ws.dir, env: { ...ENV, ...env } });
    outputs.push(result.stdout, result.stderr);
    return result;
  }

  /** Writes a workflow file into the workspace and returns its path. */
  async function workflowFile(name: string, yaml: string): Promise<string> {
    const file = path.join(shared.ws.dir, `${name}.yaml`);
    await writeFile(file, yaml);
    return file;
  }

  /** `taskq submit`, which must succeed; returns the run id. */
  async function submit(file: string, args: string[] = []): Promise<string> {
    const result = await taskq(["submit", file, ...args]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const runId = result.stdout.trim();
    runIds.push(runId);
    return runId;
  }

  /** Starts `taskq worker` and waits for its first line (it names the worker). */
  async function startWorker(args: string[] = [], env: Record<string, string> = {}): Promise<Worker> {
    return awaitWorker(startCli(["worker", "--log-dir", shared.ws.logs, ...args], { cwd: shared.ws.dir, env: { ...ENV, ...env } }));
  }

  /** Waits for a worker started some other way to name itself. */
  async function awaitWorker(cli: RunningCli): Promise<Worker> {
    workers.push(cli);
    const started = await eventually(() => /worker \S+: /.test(cli.stdout()) || cli.child.exitCode !== null, 15_000);
    const id = /worker (\S+): /.exec(cli.stdout())?.[1];
    if (!started || id === undefined || cli.child.exitCode !== null) throw new Error(`the worker did not start: ${cli.stdout()}${cli.stderr()}`);
    return { cli, id, stdout: cli.stdout };
  }

  /** The run's status once it is no longer running. */
  async function waitForRun(runId: string, timeoutMs = 20_000): Promise<RunStatus> {
    let status = await shared.store.runStatus(runId);
    const ended = await eventually(async () => (status = await shared.store.runStatus(runId)).state !== "running", timeoutMs);
    if (!ended) throw new Error(`run ${runId} still running: ${JSON.stringify(status.counts)}`);
    return status;
  }

  /**
   * Ends a run whose stop the database never heard of (it was frozen): cancelled, its leases
   * run out at once and are swept, so it ends cancelled and leaves nothing for the next test.
   */
  async function cancelStrandedRun(runId: string): Promise<void> {
    const store = shared.store;
    await store.cancelRun(runId);
    await store.pool.query(`UPDATE "${SCHEMA}".tasks SET lease_expires_at = now() WHERE run_id = $1`, [runId]);
    await store.sweepOrphans();
    expect((await store.runStatus(runId)).state).toBe("cancelled");
  }

  /**
   * Runs `work` while a session of its own holds the tasks table locked (ACCESS EXCLUSIVE, in a transaction: as a migration,
   * a VACUUM FULL or a psql session may): every taskq statement on it waits. `work` may COMMIT to let the lock go; else it is
   * rolled back after `work`, which has the locking session to do so.
   */
  async function withTasksLocked<T>(work: (locker: pg.Client) => Promise<T>): Promise<T> {
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    try {
      // Another session looks for taskq's: pg_stat_activity stays as it was first read in a transaction.
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE "${SCHEMA}".tasks IN ACCESS EXCLUSIVE MODE`);
      return await work(locker);
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
    }
  }

  return {
    SCHEMA,
    PASSWORD,
    SECRET_URL,
    ENV,
    outputs,
    runIds,
    workers,
    /** Set before the first test. */
    get store(): PostgresStore {
      return shared.store;
    },
    /** Set before the first test. */
    get ws(): { dir: string; logs: string } {
      return shared.ws;
    },
    taskq,
    workflowFile,
    submit,
    startWorker,
    awaitWorker,
    waitForRun,
    cancelStrandedRun,
    withTasksLocked,
  };
}
