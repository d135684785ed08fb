import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { startCli, type CliResult } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { startFreezableProxy, type FreezableProxy } from "../helpers/tcp-proxy.js";
import { useDurableWorkspace } from "./durable-harness.js";
import { DATABASE_URL } from "../store/helpers.js";

// The one-shot commands (status, cancel, dead-letters, redrive, prune) when their connection is dropped mid-command.
const durable = useDurableWorkspace("taskq_e2e_outage");
const { SCHEMA, ENV, taskq, workflowFile, submit } = durable;

/**
 * Runs a taskq command whose connection is terminated (pg_terminate_backend) while its statement
 * waits for a lock on the tasks table this test holds: inside the command's work, before any COMMIT.
 * Returns how it ended and how many of its backends were terminated.
 */
async function terminatedMidCommand(args: string[]): Promise<CliResult & { terminated: number }> {
  return await durable.withTasksLocked(async (locker) => {
    const cli = startCli(args, { cwd: durable.ws.dir, env: ENV });
    let terminated = 0;
    const waiting = await eventually(async () => {
      const { rows } = await durable.store.pool.query<{ ended: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE $1`,
        [`%"${SCHEMA}"%`],
      );
      terminated += rows.filter((row) => row.ended).length;
      return terminated > 0 || cli.child.exitCode !== null;
    }, 20_000);
    expect(waiting).toBe(true);
    await locker.query("COMMIT");
    const result = await cli.done;
    durable.outputs.push(result.stdout, result.stderr);
    return { ...result, terminated };
  });
}


/**
 * Waits until the worker's only connection is its listener's: its pool closes a connection idle for 10 s. A round
 * trip that takes an idle pooled connection the proxy has just dropped, before the worker has read that it was
 * closed, sends its request, and its reply is lost: the worker rightly says a lease may be left then (on a loaded
 * machine, now and then: the drop wakes the worker, through its listener, in the same moment). With the listener's
 * connection alone, every round trip after the drop makes a connection of its own, which fails as it is made.
 */
async function onlyListenerLeft(proxy: FreezableProxy): Promise<void> {
  await proxy.quiet(1_000);
  expect(await eventually(() => proxy.connections() === 1, 30_000)).toBe(true);
}

/** Runs `work` with a proxy to the test database (see tcp-proxy.ts), closed afterwards. */
async function throughProxy(work: (proxy: FreezableProxy) => Promise<void>): Promise<void> {
  const target = new URL(DATABASE_URL);
  const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
  try {
    await work(proxy);
  } finally {
    await proxy.close();
  }
}

describe("one-shot commands whose connection is dropped", () => {
  it("a connection terminated mid-command, before its COMMIT: cancel, status, dead-letters, redrive and prune connect again and do it (exit as usual)", async () => {
    // A run whose task failed, and one still queued (no worker runs it).
    const failing = await workflowFile("outage-fails", "tasks:\n  bad: { run: 'echo oops; exit 3' }\n  after: { run: echo after, dependsOn: bad }\n");
    const failed = await taskq(["run", failing, "--log-dir", durable.ws.logs]);
    expect(failed.code).toBe(1);
    const failedRun = /run (\S+) submitted/.exec(failed.stdout)![1]!;
    durable.runIds.push(failedRun);
    const queuedRun = await submit(await workflowFile("outage-queued", "tasks:\n  wait: { run: echo wait, delay: 1h }\n  next: { run: echo next, dependsOn: wait }\n"));

    const status = await terminatedMidCommand(["status", failedRun, "--output", "json"]);
    expect([status.terminated, status.code, status.stderr]).toEqual([1, 1, ""]);
    expect(JSON.parse(status.stdout)).toMatchObject({ event: "summary", state: "failed", counts: { FAILED: 1, CANCELLED: 1 } });

    const dead = await terminatedMidCommand(["dead-letters", failedRun]);
    expect([dead.terminated, dead.code, dead.stderr]).toEqual([1, 0, ""]);
    expect(dead.stdout).toMatch(new RegExp(`^${failedRun}/bad: exited with code 3 \\(1 attempt\\)\n`));

    const cancel = await terminatedMidCommand(["cancel", queuedRun]);
    expect([cancel.terminated, cancel.code, cancel.stderr]).toEqual([1, 0, ""]);
    expect(JSON.parse(cancel.stdout)).toEqual({ cancelled: ["wait", "next"], cancelRequested: [] });
    expect((await durable.store.runStatus(queuedRun)).state).toBe("cancelled");

    const redrive = await terminatedMidCommand(["redrive", failedRun, "bad"]);
    expect([redrive.terminated, redrive.code, redrive.stderr]).toEqual([1, 0, ""]);
    expect(JSON.parse(redrive.stdout)).toEqual({ requeued: "bad", reblocked: ["after"] });
    expect((await durable.store.runStatus(failedRun)).state).toBe("running");
    await durable.store.cancelRun(failedRun);

    const prune = await terminatedMidCommand(["prune", "--older-than", "0s", "--output", "json"]);
    expect([prune.terminated, prune.code, prune.stderr]).toEqual([1, 0, ""]);
    expect((JSON.parse(prune.stdout) as { pruned: string[] }).pruned).toEqual(expect.arrayContaining([failedRun, queuedRun]));
    await expect(durable.store.runStatus(queuedRun)).rejects.toThrow(/no run/);
  });

  it("a cancel whose connection is lost once its COMMIT was sent says the cancel may have been made (exit 1), and does not run it again", async () => {
    const runId = await submit(await workflowFile("outage-commit", "tasks:\n  wait: { run: echo wait, delay: 1h }\n"));
    await throughProxy(async (proxy) => {
      const cut = proxy.cutAfterReply("COMMIT");
      const cancel = await taskq(["cancel", runId], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      await cut;
      expect(cancel.code).toBe(1);
      expect(cancel.stdout).toBe("");
      expect(cancel.stderr).toMatch(/^taskq: cancelRun failed: .*\(the connection was lost once the change was sent to be committed: it may have been made\)\n$/);
      // It was: and a cancel run again (as the message leaves the user to) says it has ended.
      expect((await durable.store.runStatus(runId)).state).toBe("cancelled");
      const again = await taskq(["cancel", runId]);
      expect([again.code, again.stderr]).toEqual([0, `note: run ${runId} has already ended (cancelled): nothing to cancel\n`]);
    });
  });

  it("prune --dry-run whose connection is lost once its COMMIT was sent lists the runs all the same (exit 0): it changes nothing, so reading again is safe, and it never says a change may have been made", async () => {
    const runId = await submit(await workflowFile("outage-dry", "tasks:\n  wait: { run: echo wait, delay: 1h }\n"));
    await durable.store.cancelRun(runId);
    await throughProxy(async (proxy) => {
      const cut = proxy.cutAfterReply("COMMIT");
      const dry = await taskq(["prune", "--older-than", "0s", "--dry-run", "--output", "json"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      await cut;
      expect([dry.code, dry.stderr]).toEqual([0, ""]);
      expect((JSON.parse(dry.stdout) as { wouldPrune: string[] }).wouldPrune).toContain(runId);
    });
    expect((await durable.store.runStatus(runId)).state).toBe("cancelled");
  });

  it("a cancel whose connection is lost once it committed, as it settles the run's state, says what it cancelled (exit 0): not 'already ended'", async () => {
    const runId = await submit(await workflowFile("outage-settle", "tasks:\n  wait: { run: echo wait, delay: 1h }\n  next: { run: echo next, dependsOn: wait }\n"));
    await throughProxy(async (proxy) => {
      // The statement that settles the run's state once its tasks have ended (it alone says "r.id = $1 AND r.state").
      const cut = proxy.cutAfterReply("r.id = $1 AND r.state");
      const cancel = await taskq(["cancel", runId], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      await cut;
      expect([cancel.code, cancel.stderr]).toEqual([0, ""]);
      expect(JSON.parse(cancel.stdout)).toEqual({ cancelled: ["wait", "next"], cancelRequested: [] });
      expect((await durable.store.runStatus(runId)).state).toBe("cancelled");
    });
  });

  it("run --store whose connection is cut as it reads the summary of its run, which succeeded, reads it again: the summary, exit 0", async () => {
    const file = await workflowFile("outage-summary", "tasks:\n  one: { run: echo one }\n");
    await throughProxy(async (proxy) => {
      // The summary's read of the run's tasks (and nothing before it) asks for lease_expired_ms.
      const cut = proxy.cutAfterReply("lease_expired_ms");
      const run = await taskq(["run", file, "--log-dir", durable.ws.logs], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      await cut;
      durable.runIds.push(/run (\S+) submitted/.exec(run.stdout)![1]!);
      expect([run.code, run.stderr]).toEqual([0, ""]);
      expect(run.stdout).toMatch(/\nSummary: 1 succeeded, 0 failed, 0 cancelled in /);
    });
  });

  it("status --watch reads the ended run once for its summary: not once more, which a connection dropped just then would fail with exit 1", async () => {
    const runId = await submit(await workflowFile("watch-once", "tasks:\n  wait: { run: echo wait, delay: 1h }\n"));
    await durable.store.cancelRun(runId);
    await throughProxy(async (proxy) => {
      // The read of the run's tasks (and nothing else) asks for lease_expired_ms.
      const reads = proxy.countRequests("lease_expired_ms");
      for (const output of ["plain", "json"]) {
        const before = reads();
        const watched = await taskq(["status", runId, "--watch", "--output", output], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
        expect([watched.code, watched.stderr]).toEqual([1, ""]);
        expect(watched.stdout).toMatch(output === "json" ? /"event":"summary".*"state":"cancelled"/ : /\nSummary: 0 succeeded, 0 failed, 1 cancelled in /);
        expect(reads() - before).toBe(1);
      }
    });
  });

  it("submit whose reply is lost once the database stored the run submits it again under the same id: one run, its id on stdout, exit 0", async () => {
    const file = await workflowFile("outage-submit", "tasks:\n  first: { run: echo first, delay: 1h }\n  second: { run: echo second, dependsOn: first }\n");
    await throughProxy(async (proxy) => {
      // The statement that stores a new run is prepared by that name: it reaches the database, its reply does not.
      const cut = proxy.cutAfterReply("taskq_submit_new_");
      const submitted = await taskq(["submit", file], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      await cut;
      expect([submitted.code, submitted.stderr]).toEqual([0, ""]);
      const runId = submitted.stdout.trim();
      durable.runIds.push(runId);
      // Not a second run (as the CI step run again after an exit 1 made, under a new id): the one stored.
      const { rows } = await durable.store.pool.query<{ id: string }>(`SELECT id FROM "${SCHEMA}".runs WHERE file = $1`, [file]);
      expect(rows.map((row) => row.id)).toEqual([runId]);
      expect((await durable.store.runStatus(runId)).tasks.map((task) => task.key)).toEqual(["first", "second"]);
    });
  });
});

describe("submit --output json stopped by a second signal", () => {
  it("while its run is stored ends stdout with an error record, as any failure in json mode does, naming the run it may leave stored", async () => {
    await throughProxy(async (proxy) => {
      const file = await workflowFile("json-second-signal", "tasks:\n  a: { run: echo a }\n");
      // Its statement held back on its way: the run is being stored, for as long as the test likes.
      const { held, release } = proxy.holdNext("WITH run AS");
      const cli = startCli(["submit", file, "--output", "json"], { cwd: durable.ws.dir, env: { ...ENV, TASKQ_STORE: proxy.url(durable.SECRET_URL) } });
      await held;
      cli.child.kill("SIGINT");
      await sleep(200);
      cli.child.kill("SIGINT");
      const result = await cli.done;
      release();
      durable.outputs.push(result.stdout, result.stderr);
      expect(result.code).toBe(130);
      const named = /run (\S+) may have been stored/.exec(result.stderr)?.[1];
      expect(named).toBeDefined();
      durable.runIds.push(named!);
      const lines = result.stdout.trim().split("\n");
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({
        event: "error",
        code: "INTERRUPTED",
        exitCode: 130,
        runId: named,
        message: `SIGINT received again while the run was being submitted: stopping now; run ${named} may have been stored: see \`taskq status ${named}\`, and cancel it with \`taskq cancel ${named}\``,
      });
      // The second signal's cancel said at once, before taskq waits for the database's answer (held back: 3 s), then what it made of it.
      expect(result.stderr).toBe(
        `taskq: SIGINT received while the run was being submitted: stopping once the database has answered the submit (it waits up to 30s for each statement, and tries again for up to 10s where the connection drops), then its id is printed if it was stored; press Ctrl-C again (or send a second signal) to stop now\n` +
          "taskq: SIGINT received again while the run was being submitted: cancelling its submit: stopping once the database has said whether the run was stored (up to 3s); press Ctrl-C again (or send a third signal) to stop at once\n" +
          `taskq: SIGINT received again while the run was being submitted: stopping now; run ${named} may have been stored: see \`taskq status ${named}\`, and cancel it with \`taskq cancel ${named}\`\n`,
      );
      // Whatever became of it: not left queued for another test's worker.
      await durable.store.cancelRun(named!).catch(() => undefined);
    });
  });
});

/** What a worker's db line says a release is for, where it gives back what a round trip whose reply was lost may have leased. */
const STRAYS_WORDS = "(giving back what a round trip whose reply was lost may have leased, before leasing again)";

describe("a worker cut off from its database", () => {
  /** The worker's `db` lines, without their time. */
  const dbLines = (stdout: string): string[] => stdout.split("\n").flatMap((line) => (/^[\d:.]+ db {6}/.test(line) ? [line.replace(/^[\d:.]+ /, "")] : []));

  it("says each error its tries meet once, not at every try, then that the database answers again; a different error is said at once", async () => {
    await throughProxy(async (proxy) => {
      const worker = await durable.startWorker(["-j", "1"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      proxy.refuse();
      // It tries again every 2 s at most: some six tries, each failing as one before did.
      await sleep(12_000);
      const refused = dbLines(worker.stdout());
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.filter((line) => !line.endsWith("; retrying"))).toEqual([]);
      expect(new Set(refused).size).toBe(refused.length);
      proxy.accept();
      const answers = /^db {6}(\w+): the database answers again \(it failed for [\d.]+s, \d+ tries\)$/;
      expect(await eventually(() => dbLines(worker.stdout()).some((line) => answers.test(line)), 15_000)).toBe(true);
      // Gone altogether: connections refused, a new error, said at once, and once.
      await proxy.close();
      const refusedNow = /^db {6}(\w+) failed: .*connect ECONNREFUSED [\d.:]+; retrying$/;
      expect(await eventually(() => dbLines(worker.stdout()).some((line) => refusedNow.test(line)), 15_000)).toBe(true);
      await sleep(6_000);
      const closed = dbLines(worker.stdout()).filter((line) => refusedNow.test(line));
      expect(new Set(closed).size).toBe(closed.length);
      worker.cli.child.kill("SIGTERM");
      expect((await worker.cli.done).code).toBe(143);
    });
  });

  it("stopped while its database refuses connections, none of its round trips having reached it: it says no tasks were left leased", async () => {
    await throughProxy(async (proxy) => {
      const worker = await durable.startWorker(["-j", "1"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      await onlyListenerLeft(proxy);
      // Its connections dropped as they are made: each lease round trip fails while connecting, before its statement is sent.
      proxy.refuse();
      expect(await eventually(() => dbLines(worker.stdout()).some((line) => line.startsWith("db      lease failed: ")), 15_000)).toBe(true);
      // Several tries, each failing as it connects (every 2 s at most).
      await sleep(4_000);
      worker.cli.child.kill("SIGINT");
      const result = await worker.cli.done;
      expect(result.code).toBe(130);
      // Before, in most runs: "left    any tasks a round trip whose reply was lost may have leased: ...", of round trips that never reached the database.
      expect(result.stdout).not.toContain(" left    ");
      expect(result.stdout).toContain("stopped (requested)");
      proxy.accept();
    });
  });

  it("stopped while nothing listens where its database was (connection refused): it says no tasks were left leased", async () => {
    await throughProxy(async (proxy) => {
      const worker = await durable.startWorker(["-j", "1"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      await onlyListenerLeft(proxy);
      await proxy.close();
      expect(await eventually(() => dbLines(worker.stdout()).some((line) => /^db {6}lease failed: .*ECONNREFUSED/.test(line)), 15_000)).toBe(true);
      await sleep(2_000);
      worker.cli.child.kill("SIGINT");
      const result = await worker.cli.done;
      expect(result.code).toBe(130);
      expect(result.stdout).not.toContain(" left    ");
      expect(result.stdout).toContain("stopped (requested)");
    });
  });

  it("says once which operation failed in its db lines: `lease failed: ...`, not `lease failed: completeAndLease failed: ...`", async () => {
    await throughProxy(async (proxy) => {
      const worker = await durable.startWorker(["-j", "1"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      // Idle first: closed while its first sweep and lease were under way, it gave back what that lease may have leased
      // before leasing again, and its words were "release failed: ...", no lease's, for as long as the test looked.
      await onlyListenerLeft(proxy);
      await proxy.close();
      expect(await eventually(() => dbLines(worker.stdout()).some((line) => /^db {6}lease failed: .*ECONNREFUSED/.test(line)), 15_000)).toBe(true);
      // After it, the database's words: no operation's name, the worker's or the store's, again.
      expect(dbLines(worker.stdout()).filter((line) => /^db {6}\w+ failed: \w+ failed: /.test(line))).toEqual([]);
      worker.cli.child.kill("SIGINT");
      expect((await worker.cli.done).code).toBe(130);
    });
  });

  // It said "stopped (requested)" alone, and the lease it had asked for, waiting on the lock, was made once the lock was let
  // go: the task running in the name of a worker that was gone, until its lease ran out and a sweep counted the attempt.
  it("stopped while its lease round trip waits on a lock another session holds on the tasks table: it says the tasks that round trip may lease are left", async () => {
    const runId = await submit(await workflowFile("lease-locked", "tasks:\n  only: { run: echo ran }\n"));
    await durable.withTasksLocked(async (locker) => {
      const worker = await durable.startWorker(["-j", "1", "--shutdown-timeout", "1s"]);
      // Its lease statement waits for the lock (a migration's, a VACUUM FULL's, a psql session's).
      const waiting = await eventually(async () => {
        const { rows } = await durable.store.pool.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name LIKE $1 AND wait_event_type = 'Lock' AND query LIKE '%complete_and_lease%'",
          [`taskq worker ${worker.id}%`],
        );
        return rows.length > 0;
      }, 20_000);
      expect(waiting).toBe(true);
      worker.cli.child.kill("SIGINT");
      const result = await worker.cli.done;
      expect(result.code).toBe(130);
      // The database was reached, its answer held up by the lock: not "the database could not be reached", which sent the reader to the network.
      expect(result.stdout).toMatch(
        / left {4}any tasks a round trip whose reply was lost may have leased: any such leases were not given back \(the database was reached, but a statement of this worker's waits on a lock another session holds\)\. Each runs out within 30s/,
      );
      expect(result.stdout).not.toContain("could not be reached");
      expect(result.stdout).toContain("stopped (requested)");
      await locker.query("COMMIT");
      // What the line is for: the statement goes on once the lock is let go, and leases the task to the worker that is gone.
      expect(await eventually(async () => (await durable.store.runStatus(runId)).tasks[0]?.state === "running", 15_000)).toBe(true);
    });
    await durable.cancelStrandedRun(runId);
  });

  // Said "release failed: ...; retrying" alone, try after try, for as long as the database was cut off: not why no lease was tried.
  it("while it cannot give back what a lease round trip whose reply was lost may have leased, says once that this is what it does before it leases again", async () => {
    await throughProxy(async (proxy) => {
      const worker = await durable.startWorker(["-j", "1"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      // Its give-back (releaseStrays' query) never gets through, and no lease is tried after the lost reply until it has.
      proxy.cutSending("NOT (lease_token = ANY");
      const releases = proxy.countRequests("NOT (lease_token = ANY");
      const cut = proxy.cutAfterReply("complete_and_lease");
      const runId = await submit(await workflowFile("outage-strays-why", "tasks:\n  wait: { run: echo wait, delay: 1h }\n"));
      await cut;
      const leases = proxy.countRequests("complete_and_lease");
      // Several tries of the give-back, each cut as the one before: one line says them, and what they are for.
      const said = (): string[] => dbLines(worker.stdout()).filter((line) => line.startsWith("db      release failed"));
      expect(await eventually(() => said().length > 0, 15_000)).toBe(true);
      const tried = releases();
      expect(await eventually(() => releases() >= tried + 3, 30_000)).toBe(true);
      expect(said()).toHaveLength(1);
      expect(said()[0]).toMatch(/; retrying$/);
      expect(said()[0]!.startsWith(`db      release failed ${STRAYS_WORDS}: `)).toBe(true);
      expect(leases()).toBe(0);
      worker.cli.child.kill("SIGINT");
      expect((await worker.cli.done).code).toBe(130);
      expect((await durable.store.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", workerId: null });
      await durable.store.cancelRun(runId);
    });
  });

  it("--output json: a give-back of what a lease round trip whose reply was lost may have leased that fails is a db-error record with strays: true", async () => {
    await throughProxy(async (proxy) => {
      const cli = startCli(["worker", "--log-dir", durable.ws.logs, "-j", "1", "--output", "json"], { cwd: durable.ws.dir, env: { ...ENV, TASKQ_STORE: proxy.url(durable.SECRET_URL) } });
      durable.workers.push(cli);
      expect(await eventually(() => cli.stdout().includes(`"event":"worker"`), 15_000)).toBe(true);
      proxy.cutSending("NOT (lease_token = ANY");
      const cut = proxy.cutAfterReply("complete_and_lease");
      const runId = await submit(await workflowFile("outage-strays-json", "tasks:\n  wait: { run: echo wait, delay: 1h }\n"));
      await cut;
      const records = (): Array<Record<string, unknown>> => cli.stdout().split("\n").flatMap((line) => (line.startsWith("{") ? [JSON.parse(line) as Record<string, unknown>] : []));
      expect(await eventually(() => records().some((record) => record.event === "db-error" && record.operation === "release"), 15_000)).toBe(true);
      expect(records().find((record) => record.event === "db-error" && record.operation === "release")).toMatchObject({ retrying: true, strays: true });
      cli.child.kill("SIGINT");
      expect((await cli.done).code).toBe(130);
      await durable.store.cancelRun(runId);
    });
  });

  it("stopped once a lease round trip that found nothing to lease lost its reply, its give-back failing since: it says the tasks that round trip may have leased, not that it leased some", async () => {
    await throughProxy(async (proxy) => {
      const worker = await durable.startWorker(["-j", "1"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      // Its give-back of what that round trip may have leased (releaseStrays' query) never gets through.
      proxy.cutSending("NOT (lease_token = ANY");
      // A run with nothing runnable for an hour: its submit wakes the worker, whose round trip commits, leasing nothing, and loses its reply.
      const cut = proxy.cutAfterReply("complete_and_lease");
      const runId = await submit(await workflowFile("outage-strays", "tasks:\n  wait: { run: echo wait, delay: 1h }\n"));
      await cut;
      expect(await eventually(() => dbLines(worker.stdout()).some((line) => line.startsWith(`db      release failed ${STRAYS_WORDS}: `)), 15_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      const result = await worker.cli.done;
      expect(result.code).toBe(130);
      // Before: "left    the tasks leased by a round trip whose reply was lost: their leases were not given back", though it leased none.
      expect(result.stdout).toMatch(/ left {4}any tasks a round trip whose reply was lost may have leased: any such leases were not given back \(the database could not be reached\)\. Each runs out within 30s/);
      expect(result.stdout).not.toContain("the tasks leased by");
      expect((await durable.store.runStatus(runId)).tasks[0]).toMatchObject({ state: "queued", workerId: null });
      await durable.store.cancelRun(runId);
    });
  });
});
