import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { runCli, startCli, workspace, type CliOptions, type RunningCli } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { DATABASE_URL, dropSchema } from "../store/helpers.js";

/**
 * `status` of a run still running says when no worker of its store is connected to the database. Workers of other
 * stores (other schemas of the same database, as other test files' are, concurrently) must not count.
 */
describe("status says when no worker is connected to the run's store", () => {
  let ws: { dir: string; file: string; logs: string };
  const schemas: string[] = [];
  const workers: RunningCli[] = [];

  beforeAll(async () => {
    // A task not due for an hour: the run stays running, its worker idle, connected all the while.
    ws = await workspace("tasks:\n  a: { run: echo a, delay: 1h }\n");
  });

  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
      await worker.done;
    }
  });

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  function newSchema(length = 17): string {
    const schema = `noworker_${randomBytes(4).toString("hex")}`.padEnd(length, "_x");
    schemas.push(schema);
    return schema;
  }

  const options = (schema: string): CliOptions => ({ cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } });

  const note = (schema: string) => `note: no worker is connected to this store (schema "${schema}"): the run's tasks wait until one is (taskq worker)\n`;

  /** A run submitted to `schema` (its store made by the submit). */
  async function submitted(schema: string): Promise<string> {
    const result = await runCli(["submit", ws.file], options(schema));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    return result.stdout.trim();
  }

  /** `taskq status`: its exit code (1: the run is still running) and stderr. */
  async function status(schema: string, runId: string): Promise<{ code: number | null; stderr: string }> {
    const result = await runCli(["status", runId], options(schema));
    expect(result.stdout).toContain("1 unfinished (1 scheduled)");
    return { code: result.code, stderr: result.stderr };
  }

  /** A worker of `schema`'s store, once its first line is out (its store open, its sessions connected). */
  async function worker(schema: string): Promise<RunningCli> {
    const cli = startCli(["worker", "-j", "1", "--log-dir", ws.logs], options(schema));
    workers.push(cli);
    expect(await eventually(() => / worker \S+: /.test(cli.stdout()) || cli.child.exitCode !== null, 15_000)).toBe(true);
    expect(cli.child.exitCode).toBe(null);
    return cli;
  }

  async function stopped(cli: RunningCli): Promise<void> {
    cli.child.kill("SIGINT");
    expect((await cli.done).code).toBe(130);
  }

  for (const [kind, length] of [
    ["a short schema name, named whole in the sessions' names", 17],
    ["a schema name of 48 characters, named by a digest of it", 48],
  ] as const) {
    it(`only when none of its own is: a worker of another store in the same database does not count (${kind})`, async () => {
      const schema = newSchema(length);
      const other = newSchema(length);
      const runId = await submitted(schema);
      expect(await status(schema, runId)).toEqual({ code: 1, stderr: note(schema) });

      // A worker of another store of this database, with a run of its own: not this store's.
      await submitted(other);
      const elsewhere = await worker(other);
      expect(await status(schema, runId)).toEqual({ code: 1, stderr: note(schema) });

      const own = await worker(schema);
      expect(await status(schema, runId)).toEqual({ code: 1, stderr: "" });
      expect(await status(other, (await submitted(other)))).toEqual({ code: 1, stderr: "" });
      await stopped(own);
      // Its sessions end as it exits: the database may list them a moment longer.
      let last = await status(schema, runId);
      expect(await eventually(async () => (last = await status(schema, runId)).stderr !== "", 10_000)).toBe(true);
      expect(last).toEqual({ code: 1, stderr: note(schema) });
      await stopped(elsewhere);
    }, 60_000);
  }

  it("with --output json, as a note record on stderr (code NO_WORKER), stdout the one summary record as ever", async () => {
    const schema = newSchema();
    const runId = await submitted(schema);
    const result = await runCli(["status", runId, "--output", "json"], options(schema));
    expect({ code: result.code, state: (JSON.parse(result.stdout) as { state: string }).state }).toEqual({ code: 1, state: "running" });
    const { ts, ...record } = JSON.parse(result.stderr) as Record<string, unknown>;
    expect(typeof ts).toBe("string");
    expect(record).toEqual({ event: "note", code: "NO_WORKER", message: note(schema).replace(/^note: /, "").trimEnd(), schema });
  }, 30_000);

  it("not where a session of an earlier taskq's worker, whose name does not say its store, is connected to the database", async () => {
    const schema = newSchema();
    const runId = await submitted(schema);
    const earlier = new pg.Client({ connectionString: DATABASE_URL, application_name: `taskq worker oldhost-4242-${randomBytes(3).toString("hex")}` });
    await earlier.connect();
    try {
      expect(await status(schema, runId)).toEqual({ code: 1, stderr: "" });
    } finally {
      await earlier.end();
    }
    let last = await status(schema, runId);
    expect(await eventually(async () => (last = await status(schema, runId)).stderr !== "", 10_000)).toBe(true);
    expect(last).toEqual({ code: 1, stderr: note(schema) });
  }, 30_000);

  it("a `run --store` counts for its own run only: it leases no other run's tasks, of its store or an earlier taskq's", async () => {
    const schema = newSchema();
    const waiting = await submitted(schema);
    const long = await workspace("tasks:\n  s: { run: 'echo started; sleep 1000' }\n");
    const ownId = `own-${randomBytes(4).toString("hex")}`;
    const run = startCli(["run", "--store", DATABASE_URL, "--run-id", ownId, "-j", "1", "--log-dir", long.logs, "--shutdown-timeout", "0.5s", "--kill-grace", "1s", long.file], options(schema));
    workers.push(run);
    expect(await eventually(() => run.stdout().includes(`${ownId}/s | started`) || run.child.exitCode !== null, 15_000)).toBe(true);
    // Its own run has a worker: no note.
    const own = await runCli(["status", ownId], options(schema));
    expect({ code: own.code, stderr: own.stderr }).toEqual({ code: 1, stderr: "" });
    // The other run's tasks wait for a worker all the same: the run --store never leases them.
    expect(await status(schema, waiting)).toEqual({ code: 1, stderr: note(schema) });
    // Nor does an earlier taskq's run --store of another run (its session's name says no store) keep the note back.
    const earlier = new pg.Client({ connectionString: DATABASE_URL, application_name: `taskq run r-earlier-${randomBytes(4).toString("hex")}` });
    await earlier.connect();
    try {
      expect(await status(schema, waiting)).toEqual({ code: 1, stderr: note(schema) });
    } finally {
      await earlier.end();
    }
    // An earlier taskq's run --store of this very run id may be serving it (its store not known): nothing is said.
    const earlierOfThisRun = new pg.Client({ connectionString: DATABASE_URL, application_name: `taskq run ${waiting}` });
    await earlierOfThisRun.connect();
    try {
      expect(await status(schema, waiting)).toEqual({ code: 1, stderr: "" });
    } finally {
      await earlierOfThisRun.end();
    }
    run.child.kill("SIGINT");
    expect((await run.done).code).toBe(130);
  }, 60_000);

  it("--watch says it once, as the watch starts, and not where a worker of the store is connected", async () => {
    const schema = newSchema();
    const runId = await submitted(schema);
    /** A watch's output once its second line is out (a second after its first), then stopped. */
    const watched = async (): Promise<{ stdout: string; stderr: string }> => {
      const watch = startCli(["status", runId, "--watch"], options(schema));
      workers.push(watch);
      expect(await eventually(() => watch.stdout().split("\n").length > 2 || watch.child.exitCode !== null, 15_000)).toBe(true);
      watch.child.kill("SIGINT");
      await watch.done;
      return { stdout: watch.stdout(), stderr: watch.stderr() };
    };
    // Before: nothing, a watch of a run that never moves for want of a worker.
    const alone = await watched();
    expect(alone.stdout).toContain(`${runId}: 0 succeeded, 0 failed, 0 cancelled, 1 unfinished (1 scheduled)\n`);
    expect(alone.stderr).toBe(`note: no worker is connected to this store (schema "${schema}") (as the watch started): the run's tasks wait until one is (taskq worker)\n`);
    await worker(schema);
    expect((await watched()).stderr).toBe("");
  }, 60_000);

  it("not of a run that has ended", async () => {
    const schema = newSchema();
    const runId = await submitted(schema);
    expect((await runCli(["cancel", runId], options(schema))).code).toBe(0);
    const result = await runCli(["status", runId], options(schema));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr: "" });
    expect(result.stdout).toContain("1 cancelled");
  });
});
