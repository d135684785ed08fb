import path from "node:path";
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import pg from "pg";
import { FIXTURES, startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { startFreezableProxy } from "../helpers/tcp-proxy.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { DATABASE_URL } from "../store/helpers.js";
import { useDurableWorkspace } from "./durable-harness.js";

// What a stopping worker says of the records and leases it is left with: what the database answered, and when the leases run out.
const durable = useDurableWorkspace("taskq_e2e_stop_words");
const { SCHEMA, workflowFile, submit, startWorker } = durable;

/** A task that waits for the file `go`, to end when the test has set the database up. */
const waiting = (go: string): string => `tasks:\n  done: { run: 'echo waiting; while [ ! -e ${go} ]; do sleep 0.05; done' }\n`;

/** Lets `role` use the test's store, as a worker does (a role of the test's own: a superuser has no connection limit). */
async function grantStore(role: string): Promise<void> {
  const pool = durable.store.pool;
  await pool.query(`GRANT USAGE, CREATE ON SCHEMA "${SCHEMA}" TO "${role}"`);
  await pool.query(`GRANT ALL ON ALL TABLES IN SCHEMA "${SCHEMA}" TO "${role}"`);
  await pool.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA "${SCHEMA}" TO "${role}"`);
  await pool.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA "${SCHEMA}" TO "${role}"`);
}

/**
 * A role of the test's own that may use its store (a superuser has no connection limit), reached through a proxy: `url`
 * connects as it; `refuse` makes the server answer each new connection of the role with a refusal (too many connections
 * for it), the open ones dropped; `drop` closes the proxy and removes the role.
 */
async function refusingRole(suffix: string): Promise<{ role: string; url: string; refuse: () => Promise<void>; drop: () => Promise<void> }> {
  const target = new URL(DATABASE_URL);
  const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const role = `${SCHEMA}_${suffix}`;
  const pool = durable.store.pool;
  const drop = async (): Promise<void> => {
    await proxy.close();
    await pool.query(`DROP OWNED BY "${role}"`);
    await pool.query(`DROP ROLE "${role}"`);
  };
  await pool.query(`CREATE ROLE "${role}" LOGIN`);
  try {
    await grantStore(role);
  } catch (error) {
    await drop();
    throw error;
  }
  const url = new URL(proxy.url(durable.SECRET_URL));
  url.username = role;
  const refuse = async (): Promise<void> => {
    await pool.query(`ALTER ROLE "${role}" CONNECTION LIMIT 0`);
    proxy.refuse();
    proxy.accept();
  };
  return { role, url: url.toString(), refuse, drop };
}

describe("a stopping worker whose database refuses it", () => {
  it("says what the database answered a record it refuses, not that it does not answer", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-refused");
    const file = await workflowFile("refused", waiting(go));
    // A role of the test's own, which the worker connects as.
    const { role, url, refuse, drop } = await refusingRole("worker");
    try {
      // Its task ends before the stop: the record line comes a second after the signal, whatever the time to finish.
      const worker = await startWorker(["--lease", "10m", "-j", "1", "--shutdown-timeout", "1s"], { TASKQ_STORE: url });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`), 15_000)).toBe(true);
      // The server answers each new connection of the role with a refusal: too many connections for it.
      await refuse();
      await writeFile(go, "");
      expect(await eventually(() => worker.stdout().includes("db      complete failed: "), 15_000)).toBe(true);
      const line = await recordLineOnSigint(worker, runId);
      // Before: "the database does not answer: trying to record it".
      expect(line).toContain(`it succeeded (exit 0); the database refuses it (too many connections for role "${role}"): trying to record it until its lease runs out`);
      // One at a time: two signals sent at once may reach it as one.
      worker.cli.child.kill("SIGINT");
      expect(await eventually(() => worker.stdout().includes("killing every task now"), 10_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      expect(await eventually(() => worker.cli.child.exitCode !== null, 20_000)).toBe(true);
      const left = worker.stdout().split("\n").find((text) => text.includes(`left    ${runId}/done`)) ?? "";
      // Before: "its lease was not given back (the database could not be reached)".
      expect(left).toContain(`its lease was not given back (the database refused the worker: too many connections for role "${role}")`);
    } finally {
      await drop();
    }
  });

  it("says a lease the stop waited out has run out, not that it runs out within the whole lease", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-ran-out");
    const file = await workflowFile("ran-out", waiting(go));
    const target = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      // A short lease (3 s, renewed up to the refusal): its task ended, the stop tries to record it until the lease runs out,
      // whatever the time to finish, and then says the lease has run out: not that it runs out within a second, as where the
      // stop's timer for the lease's end fired a moment early by performance.now().
      const worker = await startWorker(["--lease", "3s", "-j", "1", "--shutdown-timeout", "5s"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`), 15_000)).toBe(true);
      proxy.refuse();
      await writeFile(go, "");
      // The stop tries to record the success until its lease runs out: then the lease is gone by.
      worker.cli.child.kill("SIGINT");
      const { stdout } = await worker.cli.done;
      const line = stdout.split("\n").find((text) => text.includes(`left    ${runId}/done`)) ?? "";
      expect(line).toContain("it succeeded (exit 0) but could not be recorded");
      // Before: "It runs out within 3s (--lease)", the whole lease, of a lease that had run out as it was said.
      expect(line).not.toContain("It runs out within 3s");
      // The refusal drops the open connections too: a renewal on its way then lost its reply, which the database may have
      // taken, and the line says so after what this worker's clock says (then within up to a lease, 3s).
      const doubt = "(?: on this worker's clock, unless a renewal whose reply was lost went through: then within [1-3]s)?";
      expect(line, line).toMatch(new RegExp(`\\. It has run out already${doubt} \\(--lease\\); (then )?a worker `));
    } finally {
      await proxy.close();
    }
  });
});

describe("run --store stopped while its database refuses connections", () => {
  it("says what the database answered where it gave up on its summary, not that it did not answer", { timeout: 60_000 }, async () => {
    const file = await workflowFile("run-refused", "tasks:\n  long: { run: 'echo long; sleep 1000' }\n  after: { run: echo after, dependsOn: long }\n");
    const role = `${SCHEMA}_run`;
    const pool = durable.store.pool;
    await pool.query(`CREATE ROLE "${role}" LOGIN`);
    try {
      await grantStore(role);
      const url = new URL(durable.SECRET_URL);
      url.username = role;
      const run = startCli(["run", file, "--log-dir", durable.ws.logs, "--shutdown-timeout", "1s", "--kill-grace", "1s"], {
        cwd: durable.ws.dir,
        env: { TASKQ_STORE: url.toString(), TASKQ_STORE_SCHEMA: SCHEMA },
      });
      // Ended after the test if it fails before, and its output looked through for the password, as a worker's.
      durable.workers.push(run);
      expect(await eventually(() => run.stdout().includes("long | long"), 15_000)).toBe(true);
      // Its sessions ended, each new one is refused by the server: too many connections for its role.
      await pool.query(`ALTER ROLE "${role}" CONNECTION LIMIT 0`);
      await pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [role]);
      expect(await eventually(() => run.stdout().includes(`too many connections for role "${role}"`), 15_000)).toBe(true);
      run.child.kill("SIGINT");
      const exited = await eventually(() => run.child.exitCode !== null, 30_000);
      if (!exited) run.child.kill("SIGKILL");
      const { code, stderr } = await run.done;
      expect(code).toBe(130);
      // Before: "may still be live (the database did not answer within 3s)", and "no summary of run ...: the database did not answer within 3s".
      expect(stderr).toMatch(new RegExp(`may still be live \\(the database refused it for 3s: too many connections for role "${role}"\\)`));
      expect(stderr).toContain(`: the database refused it for 3s: too many connections for role "${role}"\n`);
      expect(stderr).not.toContain("did not answer");
    } finally {
      await pool.query(`DROP OWNED BY "${role}"`);
      await pool.query(`DROP ROLE "${role}"`);
    }
  });
});

describe("a worker whose store's schema is dropped under it", () => {
  it("does not promise a sweep of the attempt whose end it could not record", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-dropped");
    const file = await workflowFile("dropped", waiting(go));
    const worker = await startWorker(["--lease", "30s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`), 15_000)).toBe(true);
    await durable.store.pool.query(`DROP SCHEMA "${SCHEMA}" CASCADE`);
    await writeFile(go, "");
    expect(await eventually(() => worker.stdout().includes(`lost    ${runId}/done: `), 15_000)).toBe(true);
    const line = worker.stdout().split("\n").find((text) => text.includes(`lost    ${runId}/done: `)) ?? "";
    // Before: "once its lease runs out, a sweep counts the attempt as lost", of tables no sweep can reach.
    expect(line).toContain("it succeeded (exit 0) but could not be recorded");
    expect(line).toContain("the store's tables are not there, so no sweep can count the attempt as lost until they are back");
    expect(line).not.toContain("a sweep counts");
  });
});

describe("a worker whose store's recording function is dropped under it", () => {
  it("says a sweep counts the attempt it could not record, its tables being there, and names the function", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-no-function");
    const file = await workflowFile("no-function", waiting(go));
    // A short lease: the sweep it promises comes within the test.
    const worker = await startWorker(["--lease", "3s", "-j", "1"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`), 15_000)).toBe(true);
    // From the drop on, whatever fails: the store is made anew after it (see finally).
    try {
      // Every overload of the function a success is recorded with (SQLSTATE 42883 then): the tables stay.
      await durable.store.pool.query(
        `DO $$ DECLARE f regprocedure; BEGIN FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = '${SCHEMA}' AND p.proname = 'complete_and_lease_v7' LOOP EXECUTE 'DROP FUNCTION ' || f; END LOOP; END $$`,
      );
      await writeFile(go, "");
      expect(await eventually(() => worker.stdout().includes(`lost    ${runId}/done: `), 15_000)).toBe(true);
      const line = worker.stdout().split("\n").find((text) => text.includes(`lost    ${runId}/done: `)) ?? "";
      expect(line).toContain("it succeeded (exit 0) but could not be recorded");
      expect(line).toContain("complete_and_lease_v7");
      // Before: "the store's tables are not there, so no sweep can count the attempt as lost until they are back", of
      // tables that are there: a sweep (a statement on them, no function of the store's) counts it once its lease runs out.
      expect(line).not.toContain("tables are not there");
      expect(line).toContain("once its lease runs out, a sweep counts the attempt as lost");
      // And it does: this worker's own sweep, as the lease runs out.
      expect(await eventually(() => worker.stdout().includes(`sweep   ${runId}/done: lease expired`), 20_000)).toBe(true);
    } finally {
      // No migration makes the function again: the store is made anew, for the tests after.
      worker.cli.child.kill("SIGKILL");
      await worker.cli.done;
      await durable.store.pool.query(`DROP SCHEMA "${SCHEMA}" CASCADE`);
      await (await PostgresStore.open({ connectionString: DATABASE_URL, schema: SCHEMA })).close();
    }
  });
});

describe("a stopping worker --output json whose database refuses it", () => {
  it("gives what the server answered as refusedWith, and when the lease runs out as withinMs, in its recording and leases-left records", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-refused-json");
    const file = await workflowFile("refused-json", waiting(go));
    const { role, url, refuse, drop } = await refusingRole("json");
    try {
      const cli = startCli(["worker", "--log-dir", durable.ws.logs, "--lease", "10m", "-j", "1", "--shutdown-timeout", "1s", "--output", "json"], {
        cwd: durable.ws.dir,
        env: { TASKQ_STORE: url, TASKQ_STORE_SCHEMA: SCHEMA },
      });
      durable.workers.push(cli);
      type JsonRecord = { event: string; runId?: string; id?: string; text?: string; [field: string]: unknown };
      const records = (): JsonRecord[] =>
        cli
          .stdout()
          .split("\n")
          .filter((line) => line.startsWith("{") && line.endsWith("}"))
          .map((line) => JSON.parse(line) as JsonRecord);
      const find = (event: string): JsonRecord | undefined => records().find((record) => record.event === event);
      const runId = await submit(file);
      expect(await eventually(() => records().some((record) => record.event === "output" && record.runId === runId && record.text === "waiting"), 15_000)).toBe(true);
      await refuse();
      await writeFile(go, "");
      expect(await eventually(() => records().some((record) => record.event === "db-error" && record.operation === "complete"), 15_000)).toBe(true);
      cli.child.kill("SIGINT");
      expect(await eventually(() => find("recording") !== undefined, 20_000)).toBe(true);
      const recording: JsonRecord = find("recording") ?? { event: "none" };
      const refusedWith = `too many connections for role "${role}"`;
      expect(recording).toMatchObject({ runId, id: "done", ended: "succeeded", exitCode: 0, refusedWith });
      // Until the attempt's lease runs out: a 10m lease renewed as the task started, not the whole lease, nor none.
      const recordingWithin = recording.withinMs as number;
      expect(Number.isInteger(recordingWithin)).toBe(true);
      expect(recordingWithin).toBeGreaterThan(600_000 / 2);
      expect(recordingWithin).toBeLessThanOrEqual(600_000);
      cli.child.kill("SIGINT");
      expect(await eventually(() => records().some((record) => record.event === "note" && String(record.message).includes("SIGINT received again")), 10_000)).toBe(true);
      cli.child.kill("SIGINT");
      expect(await eventually(() => cli.child.exitCode !== null, 20_000)).toBe(true);
      const left: JsonRecord = find("leases-left") ?? { event: "none" };
      expect(left).toMatchObject({ tasks: [{ runId, id: "done", ended: "succeeded", exitCode: 0 }], strays: false, leaseMs: 600_000, refusedWith });
      // The same lease, a moment later: it runs out no later than the record said.
      const leftWithin = left.withinMs as number;
      expect(Number.isInteger(leftWithin)).toBe(true);
      expect(leftWithin).toBeGreaterThan(600_000 / 2);
      expect(leftWithin).toBeLessThanOrEqual(recordingWithin);
      expect(left).not.toHaveProperty("lockWait");
    } finally {
      await drop();
    }
  });
});

describe("a third Ctrl-C to a worker whose database does not take a record", () => {
  it("gives the record up also before the `record` line has been said", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-third");
    // One task ends, its record not taken; the other runs on, so the stop waits for it (the time to finish) until a second signal.
    const file = await workflowFile("third", `${waiting(go)}  long: { run: 'echo long; sleep 1000' }\n`);
    const target = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      // A long lease: the record would be tried for 10 minutes. A long time to finish: the record line comes only once a
      // second signal has ended that time. The third signal is sent by the worker to itself as it says the second's note,
      // a second before the record line would come: not by the test once it has read that note, which a loaded machine
      // may let come after the record line.
      const worker = await durable.awaitWorker(
        startCli(["worker", "--log-dir", durable.ws.logs, "--lease", "10m", "-j", "2", "--shutdown-timeout", "60s"], {
          cwd: durable.ws.dir,
          env: { ...durable.ENV, TASKQ_STORE: proxy.url(durable.SECRET_URL), TASKQ_TEST_SIGNAL_AT_OUTPUT: "SIGINT", TASKQ_TEST_SIGNAL_AT_OUTPUT_TEXT: "killing every task now" },
          nodeArgs: ["--require", path.join(FIXTURES, "signal-at-output.cjs")],
        }),
      );
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`) && worker.stdout().includes(`${runId}/long | long`), 15_000)).toBe(true);
      proxy.refuse();
      await writeFile(go, "");
      expect(await eventually(() => worker.stdout().includes("db      complete failed: "), 15_000)).toBe(true);
      // One at a time: two signals sent at once may reach it as one.
      worker.cli.child.kill("SIGINT");
      expect(await eventually(() => worker.stdout().includes("SIGINT received: "), 10_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      // The stop says it tries to record the attempt a moment after the second signal: the third comes before, as its note is said.
      expect(await eventually(() => worker.stdout().includes("killing every task now"), 10_000)).toBe(true);
      // Before: nothing, and the worker went on trying to record it for the lease's 10 minutes, until a fourth signal.
      expect(await eventually(() => worker.cli.child.exitCode !== null, 20_000)).toBe(true);
      const out = worker.stdout();
      expect(out).toContain("SIGINT received again: giving up the records of the tasks that ended, which the database does not take; stopping now");
      // Given up before it was said: not said after.
      expect(out).not.toContain(`record  ${runId}/done: `);
      const left = out.split("\n").find((text) => text.includes("left    ")) ?? "";
      expect(left).toContain(`${runId}/done (it succeeded (exit 0) but could not be recorded)`);
      expect(worker.cli.child.exitCode).toBe(130);
    } finally {
      await proxy.close();
    }
  });
});

describe("a stopping worker whose every task has ended, a record the database does not take", () => {
  it("says it tries to record it as soon as every task has ended, not once the time to finish has passed", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-ended");
    const file = await workflowFile("ended", waiting(go));
    const target = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      // A time to finish of a minute, of which the stop has nothing left to wait for: its one task has ended.
      const worker = await startWorker(["--lease", "10m", "-j", "1", "--shutdown-timeout", "60s"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`), 15_000)).toBe(true);
      proxy.refuse();
      await writeFile(go, "");
      expect(await eventually(() => worker.stdout().includes("db      complete failed: "), 15_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      // Before: the record line came once the whole minute had passed. Now a moment after the signal: within a third of it.
      expect(await eventually(() => worker.stdout().includes(`record  ${runId}/done: `), 20_000)).toBe(true);
      const out = worker.stdout();
      expect(out).toContain(`record  ${runId}/done: it succeeded (exit 0); the database does not answer: trying to record it until its lease runs out`);
      // Nothing was stopped: no note that the time to finish has passed, nor a second signal's.
      expect(out).not.toContain("to finish have passed");
      expect(out).not.toContain("killing every task now");
      // The record comes through once the database is back, and the worker stops, its lease not left.
      proxy.accept();
      expect(await eventually(() => worker.cli.child.exitCode !== null, 20_000)).toBe(true);
      expect(worker.cli.child.exitCode).toBe(130);
      expect(worker.stdout()).toContain(`ok      ${runId}/done`);
      expect(worker.stdout()).not.toContain(`left    ${runId}/done`);
    } finally {
      await proxy.close();
    }
  });
});

describe("a stopping worker whose record waits on a row lock another session holds", () => {
  it("says the record waits on a lock, not that the database does not answer, where no try has failed", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-row-lock");
    const file = await workflowFile("row-lock", `tasks:\n  done: { run: 'echo waiting; while [ ! -e ${go} ]; do sleep 0.05; done; exit 1' }\n`);
    // A long lease: no renewal comes while the row is held, only the record waits on it.
    const worker = await startWorker(["--lease", "10m", "-j", "1", "--shutdown-timeout", "60s"]);
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`), 15_000)).toBe(true);
    // A psql session's transaction holds the task's row: the record's statement waits for it, answered once it is let go.
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query(`SELECT 1 FROM "${SCHEMA}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
      await writeFile(go, "");
      // The task has ended, and its record waits on the row.
      expect(await eventually(workerWaitsOnLock, 15_000)).toBe(true);
      const line = await recordLineOnSigint(worker, runId);
      // Before: "the database does not answer", of a record no try of which had failed, waiting on the row.
      expect(line).toContain(`record  ${runId}/done: it failed (exited with code 1); ${WAITS_ON_A_LOCK}`);
      expect(line).not.toContain("does not answer");
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
    }
    // Let go, the record goes through and the worker stops, its lease not left.
    expect(await eventually(() => worker.cli.child.exitCode !== null, 20_000)).toBe(true);
    expect(worker.cli.child.exitCode).toBe(130);
    expect(worker.stdout()).toContain(`FAILED  ${runId}/done`);
    expect(worker.stdout()).not.toContain(`left    ${runId}/done`);
  });
});

/** The record line's words for a record whose statement waits on a row another session holds. */
const WAITS_ON_A_LOCK = "the database was reached, but a statement of this worker's waits on a lock another session holds: trying to record it until its lease runs out";

/** Stops a worker with SIGINT and gives its `record` line of task `done` of `runId`, once it is out. */
async function recordLineOnSigint(worker: Awaited<ReturnType<typeof startWorker>>, runId: string): Promise<string> {
  worker.cli.child.kill("SIGINT");
  expect(await eventually(() => worker.stdout().includes(`record  ${runId}/done: `), 20_000)).toBe(true);
  return worker.stdout().split("\n").find((text) => text.includes(`record  ${runId}/done: `)) ?? "";
}

/** Whether a statement of a taskq worker on this test's schema waits on a lock (a record waiting on a row another session holds). */
async function workerWaitsOnLock(): Promise<boolean> {
  const waiting = await durable.store.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name LIKE 'taskq worker %' AND query LIKE $1",
    [`%"${SCHEMA}".%`],
  );
  return waiting.rows[0]?.n !== 0;
}

describe("a stopping worker whose record, a try of which failed, now waits on a row lock another session holds", () => {
  it("says the record waits on a lock, not that the database does not answer", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-row-lock-after-failure");
    const file = await workflowFile("row-lock-after-failure", `tasks:\n  done: { run: 'echo waiting; while [ ! -e ${go} ]; do sleep 0.05; done; exit 1' }\n`);
    const target = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    await locker.connect();
    try {
      // A long lease: no renewal comes meanwhile, only the record's tries.
      const worker = await startWorker(["--lease", "10m", "-j", "1", "--shutdown-timeout", "60s"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`), 15_000)).toBe(true);
      // A psql session's transaction holds the task's row (not through the proxy), and the worker's connections are refused.
      await locker.query("BEGIN");
      await locker.query(`SELECT 1 FROM "${SCHEMA}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
      proxy.refuse();
      await writeFile(go, "");
      // The record's first try fails; the next, once the connections are let through, waits on the row.
      expect(await eventually(() => worker.stdout().includes("db      complete failed: "), 15_000)).toBe(true);
      proxy.accept();
      expect(await eventually(workerWaitsOnLock, 15_000)).toBe(true);
      const line = await recordLineOnSigint(worker, runId);
      // Before: "the database does not answer", of a record whose try on its way waited on the row, a try before it having failed.
      expect(line).toContain(`record  ${runId}/done: it failed (exited with code 1); ${WAITS_ON_A_LOCK}`);
      expect(line).not.toContain("does not answer");
      await locker.query("ROLLBACK");
      // Let go, the record goes through and the worker stops, its lease not left.
      expect(await eventually(() => worker.cli.child.exitCode !== null, 20_000)).toBe(true);
      expect(worker.cli.child.exitCode).toBe(130);
      expect(worker.stdout()).toContain(`FAILED  ${runId}/done`);
      expect(worker.stdout()).not.toContain(`left    ${runId}/done`);
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
      await proxy.close();
    }
  });
});

describe("a stopping worker whose lease renewal's reply was lost", () => {
  it("does not say the lease has run out already, as the database may have taken the renewal", { timeout: 90_000 }, async () => {
    const file = await workflowFile("reply-lost", "tasks:\n  long: { run: 'echo long; sleep 1000' }\n");
    const target = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    let runId: string | undefined;
    try {
      const worker = await startWorker(["--lease", "12s", "-j", "1", "--shutdown-timeout", "1s"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/long | long`), 15_000)).toBe(true);
      // A renewal has gone through: the renewals' connection is made, and the next one is sent on it as it is.
      const leaseEnd = async (): Promise<number> =>
        Number((await durable.store.pool.query<{ ms: string }>(`SELECT extract(epoch FROM lease_expires_at) * 1000 AS ms FROM "${SCHEMA}".tasks WHERE run_id = $1`, [runId])).rows[0]?.ms);
      const leased = await leaseEnd();
      expect(await eventually(async () => (await leaseEnd()) > leased + 1000, 15_000)).toBe(true);
      // The next renewal is sent, and its reply never comes: the database may have taken it.
      proxy.freeze();
      expect(await eventually(() => worker.stdout().includes(`LOST    ${runId}/long: `), 30_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      if (!(await eventually(() => worker.cli.child.exitCode !== null, 20_000))) worker.cli.child.kill("SIGINT");
      expect(await eventually(() => worker.cli.child.exitCode !== null, 20_000)).toBe(true);
      const left = worker.stdout().split("\n").find((text) => text.includes(`left    ${runId}/long`)) ?? "";
      // Before: "It has run out already (--lease)", of a lease the database may hold for up to one more lease.
      expect(left).toMatch(/It has run out already on this worker's clock, unless a renewal whose reply was lost went through: then within (\d+)s \(--lease\); then a worker /);
      const within = Number(/then within (\d+)s/.exec(left)?.[1]);
      expect(within).toBeGreaterThan(0);
      expect(within).toBeLessThanOrEqual(12);
    } finally {
      await proxy.close();
      // Its lease left in the database: ended, so that no later test's worker runs it again.
      if (runId !== undefined) await durable.cancelStrandedRun(runId);
    }
  });
});
