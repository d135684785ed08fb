import { writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { startCli, type RunningCli } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { startFreezableProxy, startPidRewritingProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL } from "../store/helpers.js";
import { useDurableWorkspace } from "./durable-harness.js";

// A signal to `run --store` or `submit` while the run's submit waits on a lock another session holds on the tasks table
// (a migration's, a VACUUM FULL's, a psql session's): it said nothing until the database's 30s ran out, then only that
// the submit had failed, and exited 1, not by the signal.
const durable = useDurableWorkspace("taskq_e2e_submitsig");
const { SCHEMA, ENV } = durable;

const ACK =
  /^taskq: SIGINT received while the run was being submitted: stopping once the database has answered the submit \(it waits up to 30s for each statement, and tries again for up to 10s where the connection drops\), then (a run it stored is cancelled before any of its tasks runs here|its id is printed if it was stored); press Ctrl-C again \(or send a second signal\) to stop now$/m;

/** What a second signal says at once, before it waits (up to 3 s) for the database to answer its cancel. */
const CANCELLING =
  "taskq: SIGINT received again while the run was being submitted: cancelling its submit: stopping once the database has said whether the run was stored (up to 3s); press Ctrl-C again (or send a third signal) to stop at once\n";

/** The first signal's line, as ACK matches it, for a whole stderr. */
function ackLine(command: string): string {
  const then = command === "run --store" ? "a run it stored is cancelled before any of its tasks runs here" : "its id is printed if it was stored";
  return `taskq: SIGINT received while the run was being submitted: stopping once the database has answered the submit (it waits up to 30s for each statement, and tries again for up to 10s where the connection drops), then ${then}; press Ctrl-C again (or send a second signal) to stop now\n`;
}

/**
 * Starts `args` (a submit) while this test holds the tasks table locked, waits for its statement to wait on that lock
 * (pg_stat_activity), sends SIGINT, and waits for taskq to say it heard it, the lock still held. `then` runs with the
 * command and the submit's backend pid, the lock still held; the lock is let go after it.
 */
async function signalledWhileLocked(args: string[], then: (cli: RunningCli, pid: number) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  await durable.withTasksLocked(async () => {
    const cli = startCli(args, { cwd: durable.ws.dir, env: { ...ENV, ...env } });
    durable.workers.push(cli);
    let pid: number | undefined;
    const waiting = await eventually(async () => {
      const { rows } = await durable.store.pool.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1",
        [`%"${SCHEMA}"%`],
      );
      pid = rows[0]?.pid;
      return pid !== undefined || cli.child.exitCode !== null;
    }, 20_000);
    expect(waiting && pid !== undefined, `${cli.stdout()}${cli.stderr()}`).toBe(true);
    cli.child.kill("SIGINT");
    // Heard at once: said while the submit still waits on the lock.
    expect(await eventually(() => ACK.test(cli.stderr()) || cli.child.exitCode !== null, 10_000)).toBe(true);
    expect(cli.stderr()).toMatch(ACK);
    expect(cli.child.exitCode).toBe(null);
    await then(cli, pid as number);
  });
}

/** The submit's statement ended by the database (as its statement_timeout would end it): the submit fails, nothing stored. */
async function cancelStatement(pid: number): Promise<void> {
  await durable.store.pool.query("SELECT pg_cancel_backend($1)", [pid]);
}

async function storedTasks(runId: string): Promise<number> {
  const { rows } = await durable.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${SCHEMA}".tasks WHERE run_id = $1`, [runId]);
  return rows[0]?.n ?? 0;
}

/**
 * The run's stored tasks once no statement on the schema runs any more (the lock let go: none of the submit's goes on to
 * store it); a run found stored is cancelled, so that no worker of a later test runs it.
 */
async function storedOnceIdle(runId: string, timeoutMs = 20_000): Promise<number> {
  const idle = async () => (await durable.store.pool.query("SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1", [`%"${SCHEMA}"%`])).rows.length === 0;
  expect(await eventually(idle, timeoutMs)).toBe(true);
  const stored = await storedTasks(runId);
  if (stored > 0) await durable.store.cancelRun(runId);
  return stored;
}

/** A freezable proxy to the test database, and `args` with the store's URL through it. */
async function throughProxy(args: string[]): Promise<{ proxy: Awaited<ReturnType<typeof startFreezableProxy>>; args: string[] }> {
  const target = new URL(DATABASE_URL);
  const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
  return { proxy, args: args.map((arg) => (arg === durable.SECRET_URL ? proxy.url(durable.SECRET_URL) : arg)) };
}

let next = 0;
function ids(): { runId: string; file: Promise<string> } {
  next += 1;
  const runId = `submitsig-${next}-${process.pid}`;
  return { runId, file: durable.workflowFile(`submitsig-${next}`, "tasks:\n  a: { run: echo a }\n  b: { run: echo b, dependsOn: [a] }\n") };
}

describe.each([
  ["run --store", (file: string, runId: string) => ["run", file, "--store", durable.SECRET_URL, "--run-id", runId, "--log-dir", durable.ws.logs]],
  ["submit", (file: string, runId: string) => ["submit", file, "--run-id", runId]],
])("%s: a signal while the submit waits on a lock another session holds", (name, argsOf) => {
  it("is said at once, and where the submit then fails, taskq exits by the signal with nothing stored", async () => {
    const { runId, file } = ids();
    let result: Awaited<RunningCli["done"]> | undefined;
    await signalledWhileLocked(argsOf(await file, runId), async (cli, pid) => {
      await cancelStatement(pid);
      result = await cli.done;
    });
    expect(result?.code).toBe(130);
    expect(result?.stderr).toMatch(/^taskq: SIGINT received while the run was being submitted, and its submit failed: submitRun failed: .*cancel/m);
    expect(await storedTasks(runId)).toBe(0);
  });

  // Said "(up to 30s)", one statement's limit: a connection dropped meanwhile is tried again, and the wait goes on past it.
  it("says how long it may wait as it is: a statement's limit each, and a dropped connection tried again", async () => {
    const { runId, file } = ids();
    let result: Awaited<RunningCli["done"]> | undefined;
    await signalledWhileLocked(argsOf(await file, runId), async (cli, pid) => {
      // The submit's connection drops (its backend terminated) after the signal: it is tried again, and waits on the lock again.
      await durable.store.pool.query("SELECT pg_terminate_backend($1)", [pid]);
      let again: number | undefined;
      expect(
        await eventually(async () => {
          const { rows } = await durable.store.pool.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1 AND query LIKE $2",
            [pid, `%"${SCHEMA}"%`],
          );
          again = rows[0]?.pid;
          return again !== undefined || cli.child.exitCode !== null;
        }, 20_000),
      ).toBe(true);
      expect(again, cli.stderr()).toBeDefined();
      expect(cli.child.exitCode).toBe(null);
      await cancelStatement(again as number);
      result = await cli.done;
    });
    expect(result?.code).toBe(130);
    expect(result?.stderr).toContain("stopping once the database has answered the submit (it waits up to 30s for each statement, and tries again for up to 10s where the connection drops)");
    expect(await storedTasks(runId)).toBe(0);
  });

  // It exited at once, and its statement went on once the lock was let go: the run was stored after two Ctrl-Cs.
  it("a second signal cancels the submit's statement and stops: nothing is stored, once the lock is let go either", async () => {
    const { runId, file } = ids();
    let result: Awaited<RunningCli["done"]> | undefined;
    // Ended while the lock is still held: it does not wait for the lock.
    await signalledWhileLocked(argsOf(await file, runId), async (cli) => {
      cli.child.kill("SIGINT");
      result = await cli.done;
    });
    expect(result?.code).toBe(130);
    // What it does said at once, then what became of the run.
    expect(result?.stderr).toBe(`${ackLine(name)}${CANCELLING}taskq: SIGINT received again while the run was being submitted: stopped; its submit was cancelled: nothing was submitted\n`);
    // The lock let go, no statement of the submit goes on to store the run.
    expect(await storedOnceIdle(runId)).toBe(0);
  });

  // Before, the second signal cancelled the statement of the try after the drop only: the first try's, still waiting on the
  // lock in the database (it notices its client has gone only once it answers), stored the run once the lock was let go.
  it("a second signal after a dropped connection cancels the statement of the try before too: nothing is stored once the lock is let go", async () => {
    const { runId, file } = ids();
    const { proxy, args } = await throughProxy(argsOf(await file, runId));
    const lockWaits = async (): Promise<number[]> =>
      (
        await durable.store.pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1", [
          `%"${SCHEMA}"%`,
        ])
      ).rows.map((row) => row.pid);
    let result: Awaited<RunningCli["done"]> | undefined;
    try {
      await signalledWhileLocked(args, async (cli, pid) => {
        // The connection drops between taskq and the database; the session it had goes on waiting on the lock.
        proxy.cutSending("submit_new");
        proxy.uncut();
        // Tried again: a second session of the submit waits on the lock beside the first.
        expect(await eventually(async () => (await lockWaits()).length === 2 || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
        expect(await lockWaits()).toContain(pid);
        cli.child.kill("SIGINT");
        result = await cli.done;
      }, { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
    } finally {
      await proxy.close();
    }
    expect(result?.code).toBe(130);
    // The try before may have committed as its connection dropped: not known.
    expect(result?.stderr).toContain(`${CANCELLING}taskq: SIGINT received again while the run was being submitted: stopping now; run ${runId} may have been stored: see \`taskq status ${runId}\``);
    // The lock let go, no statement of the submit goes on to store the run.
    expect(await storedOnceIdle(runId)).toBe(0);
  });

  it("a second signal while the database does not answer at all stops within a few seconds, naming the run it may leave stored", async () => {
    const { runId, file } = ids();
    const { proxy, args } = await throughProxy(argsOf(await file, runId));
    let result: Awaited<RunningCli["done"]> | undefined;
    try {
      await signalledWhileLocked(args, async (cli) => {
        // The network stops: neither the submit's answer nor a session to cancel it gets through.
        proxy.freeze();
        cli.child.kill("SIGINT");
        // Said at once, while taskq waits (3 s) for a database that does not answer: before, nothing was said meanwhile,
        // and two Ctrl-Cs at a terminal looked like a hang.
        expect(await eventually(() => cli.stderr().includes(CANCELLING) || cli.child.exitCode !== null, 10_000)).toBe(true);
        expect(cli.child.exitCode, cli.stderr()).toBe(null);
        result = await cli.done;
      }, { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
    } finally {
      await proxy.close();
    }
    expect(result?.code).toBe(130);
    expect(result?.stderr).toBe(
      `${ackLine(name)}${CANCELLING}taskq: SIGINT received again while the run was being submitted: stopping now; run ${runId} may have been stored: see \`taskq status ${runId}\`, and cancel it with \`taskq cancel ${runId}\`\n`,
    );
    await storedOnceIdle(runId, 40_000);
  });

  // A deadlock undoes the try, which is made again (after a pause of a few ms, too short for a signal to be placed in): a second
  // signal while the next try's connection is being made ends a submit that sent nothing since the try the database undid.
  it("a second signal after a deadlock undid a try, while the next one's connection is being made: nothing was submitted, and it says so", async () => {
    const { runId, file } = ids();
    const { proxy, args } = await throughProxy(argsOf(await file, runId));
    let result: Awaited<RunningCli["done"]> | undefined;
    try {
      await durable.withTasksLocked(async (locker) => {
        // The database looks for a deadlock once per lock wait, deadlock_timeout (1 s) after it began, and undoes the session
        // that finds it. This one never looks (a superuser may set it for its own session), so that the submit is the one undone:
        // its own look, where this session's wait had begun by then. Where it had not (a loaded machine, a short deadlock_timeout),
        // no one undoes the deadlock, and this session's limit on its wait ends the test, saying so.
        await locker.query("SET LOCAL deadlock_timeout = '1h'");
        await locker.query("SET LOCAL lock_timeout = '15s'");
        const cli = startCli(args, { cwd: durable.ws.dir, env: { ...ENV, TASKQ_STORE: proxy.url(durable.SECRET_URL) } });
        durable.workers.push(cli);
        // The submit's statement holds the runs table (RowExclusive), and waits for the tasks table, which this test holds.
        const waiting = async (): Promise<boolean> =>
          (await durable.store.pool.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1", [`%"${SCHEMA}".runs%`])).rows.length > 0;
        expect(await eventually(async () => (await waiting()) || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
        expect(cli.child.exitCode, cli.stderr()).toBe(null);
        // The next try's connection, being made, gets no answer (the one the submit has is made already).
        proxy.holdNew();
        // At once, nothing awaited before it: this session now waits for the runs table, a deadlock, which the database undoes
        // the submit's try for, once the submit's wait has lasted deadlock_timeout; the runs table is then this session's.
        const locked = await locker.query(`LOCK TABLE "${SCHEMA}".runs IN ACCESS EXCLUSIVE MODE`).then(
          () => "taken",
          (error: unknown) => `not taken: ${String(error)} (the submit's look for a deadlock came before this session waited)`,
        );
        expect(locked, cli.stderr()).toBe("taken");
        expect(await eventually(() => proxy.heldConnections() === 1 || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
        expect(cli.child.exitCode, cli.stderr()).toBe(null);
        cli.child.kill("SIGINT");
        expect(await eventually(() => ACK.test(cli.stderr()) || cli.child.exitCode !== null, 10_000), cli.stderr()).toBe(true);
        cli.child.kill("SIGINT");
        expect(await eventually(() => cli.stderr().includes(CANCELLING) || cli.child.exitCode !== null, 10_000), cli.stderr()).toBe(true);
        // The connection being made fails: its try sent nothing.
        proxy.refuse();
        result = await cli.done;
      });
    } finally {
      await proxy.close();
    }
    expect(result?.code).toBe(130);
    expect(result?.stderr).toBe(`${ackLine(name)}${CANCELLING}taskq: SIGINT received again while the run was being submitted: stopped; its submit was cancelled: nothing was submitted\n`);
    expect(await storedOnceIdle(runId)).toBe(0);
  });

  it("where the submit commits once the lock is let go, the run is stored whole and ended as the signal asks", async () => {
    const { runId, file } = ids();
    const args = argsOf(await file, runId);
    let cli: RunningCli | undefined;
    await signalledWhileLocked(args, async (started) => {
      cli = started;
    });
    const result = await (cli as RunningCli).done;
    expect(result.code).toBe(130);
    expect(await storedTasks(runId)).toBe(2);
    if (args[0] === "run") {
      expect((await durable.store.runStatus(runId)).state).toBe("cancelled");
    } else {
      expect(result.stdout).toBe(`${runId}\n`);
      expect(result.stderr).toContain(`SIGINT received while the run was being submitted: run ${runId} was stored whole`);
      await durable.store.cancelRun(runId);
    }
  });
});

describe.each([
  ["run --store", (file: string, runId: string, url: string) => ["run", file, "--store", url, "--run-id", runId, "--log-dir", durable.ws.logs]],
  ["submit", (file: string, runId: string) => ["submit", file, "--run-id", runId]],
])("%s: a second signal between two tries of a submit, each undone by the database", (name, argsOf) => {
  /**
   * Stores run `runId` (tasks a and b), then submits it again with a task c added, through a freezable proxy, while this
   * test holds the run's task rows locked: each try of the resubmit waits on them for 200 ms and is undone (55P03), and
   * another begins after a pause. Sends SIGINT once a try waits, and runs `then` once taskq has said it heard it; the rows
   * are let go after it.
   */
  async function resubmittedWhileRowsLocked(
    then: (cli: RunningCli, proxy: Awaited<ReturnType<typeof startFreezableProxy>>, unlock: () => Promise<void>) => Promise<void>,
  ): Promise<{ runId: string; result: Awaited<RunningCli["done"]> }> {
    const { runId, file } = ids();
    expect(await durable.taskq(["submit", await file, "--run-id", runId])).toMatchObject({ code: 0, stdout: `${runId}\n` });
    // The same file, edited: a task added.
    const again = await file;
    await writeFile(again, "tasks:\n  a: { run: echo a }\n  b: { run: echo b, dependsOn: [a] }\n  c: { run: echo c }\n");
    const target = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const locker = await durable.store.pool.connect();
    try {
      await locker.query("BEGIN");
      await locker.query(`SELECT 1 FROM "${SCHEMA}".tasks WHERE run_id = $1 FOR UPDATE`, [runId]);
      const url = proxy.url(durable.SECRET_URL);
      const cli = startCli(argsOf(again, runId, url), { cwd: durable.ws.dir, env: { ...ENV, TASKQ_STORE: url } });
      durable.workers.push(cli);
      expect(await eventually(async () => (await rowWaits()) > 0 || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
      cli.child.kill("SIGINT");
      expect(await eventually(() => ACK.test(cli.stderr()) || cli.child.exitCode !== null, 10_000)).toBe(true);
      expect(cli.child.exitCode, cli.stderr()).toBe(null);
      await then(cli, proxy, async () => {
        await locker.query("ROLLBACK");
      });
      return { runId, result: await cli.done };
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      locker.release();
      await proxy.close();
    }
  }

  /** How many statements of this schema wait on a row lock now. */
  async function rowWaits(): Promise<number> {
    const { rows } = await durable.store.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1",
      [`%"${SCHEMA}".tasks t WHERE run_id%FOR SHARE%`],
    );
    return rows[0]?.n ?? 0;
  }

  const undone = "taskq: SIGINT received again while the run was being submitted: stopped; its submit was cancelled: nothing was submitted\n";

  // Before, a stop that kept the next try from beginning was taken for one whose end was not known: "may have been stored".
  it("one that keeps the next try from beginning: nothing was submitted, and it says so", async () => {
    const { runId, result } = await resubmittedWhileRowsLocked(async (cli, proxy) => {
      // The try's ROLLBACK held back on its way: the database has undone the try, and taskq does not know it yet.
      const { held, release } = proxy.holdNext("ROLLBACK");
      const heldOrNot = await Promise.race([
        held.then(() => "held"),
        cli.done.then(() => "taskq ended first"),
        sleep(20_000, "no ROLLBACK sent within 20s", { ref: false }),
      ]);
      expect(heldOrNot, cli.stderr()).toBe("held");
      cli.child.kill("SIGINT");
      expect(await eventually(() => cli.stderr().includes(CANCELLING) || cli.child.exitCode !== null, 10_000), cli.stderr()).toBe(true);
      // Its answer let through: the try ends undone, and the stop keeps the next from beginning.
      release();
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toBe(`${ackLine(name)}${CANCELLING}${undone}`);
    expect(await storedOnceIdle(runId)).toBe(2);
  });

  // Before, a connection that failed as it was made counted as a try that may have stored the run, its reply lost.
  it("after a try whose connection failed as it was made: nothing was submitted, and it says so", async () => {
    const { runId, result } = await resubmittedWhileRowsLocked(async (cli, proxy) => {
      // The try's connection closed once it is undone, and the next ones refused as they are made.
      proxy.closeAfterReply("ROLLBACK");
      proxy.refuseNew();
      expect(await eventually(() => proxy.refusedConnections() >= 2 || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
      proxy.accept();
      // Connected again: a try waits on the rows again.
      expect(await eventually(async () => (await rowWaits()) > 0 || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
      expect(cli.child.exitCode, cli.stderr()).toBe(null);
      cli.child.kill("SIGINT");
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toBe(`${ackLine(name)}${CANCELLING}${undone}`);
    expect(await storedOnceIdle(runId)).toBe(2);
  });

  it("one whose next try's connection fails as it is made, after the stop: nothing was submitted, and it says so", async () => {
    const { runId, result } = await resubmittedWhileRowsLocked(async (cli, proxy) => {
      // The try's connection closed once it is undone, and the next try's connection, being made, gets no answer.
      proxy.closeAfterReply("ROLLBACK");
      proxy.holdNew();
      expect(await eventually(() => proxy.heldConnections() === 1 || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
      expect(proxy.connections()).toBe(0);
      cli.child.kill("SIGINT");
      expect(await eventually(() => cli.stderr().includes(CANCELLING) || cli.child.exitCode !== null, 10_000), cli.stderr()).toBe(true);
      // The connection being made fails: its try sent nothing.
      proxy.refuse();
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toBe(`${ackLine(name)}${CANCELLING}${undone}`);
    expect(await storedOnceIdle(runId)).toBe(2);
  });

  // Before, a try whose connection was made after the stop sent its statement all the same: the rows no longer held, it
  // stored the run, said to have been stored whole before its submit could be cancelled.
  it("one whose next try's connection is made after the stop: it sends nothing, nothing was submitted, and it says so", async () => {
    const { runId, result } = await resubmittedWhileRowsLocked(async (cli, proxy, unlock) => {
      // The try's connection closed once it is undone, and the next try's connection, being made, gets no answer.
      proxy.closeAfterReply("ROLLBACK");
      proxy.holdNew();
      expect(await eventually(() => proxy.heldConnections() === 1 || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
      cli.child.kill("SIGINT");
      expect(await eventually(() => cli.stderr().includes(CANCELLING) || cli.child.exitCode !== null, 10_000), cli.stderr()).toBe(true);
      // The rows let go, and the connection being made then made: a statement sent on it would store the task added.
      await unlock();
      proxy.letHeldThrough();
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toBe(`${ackLine(name)}${CANCELLING}${undone}`);
    expect(await storedOnceIdle(runId)).toBe(2);
  });
});

// Before, every submit's sessions had the one name `taskq submit in SCHEMA`: a pid a pooler made up that was that of another
// submit's session (its statement running) was taken for its own, and that other submit's statement was cancelled.
it("submit: a second signal cancels no other submit's statement, a pooler's made-up pid that of its session", async () => {
  const other = ids();
  const mine = ids();
  let otherPid = 0;
  const proxy = await startPidRewritingProxy(new URL(DATABASE_URL), () => otherPid);
  let otherDone: RunningCli["done"] | undefined;
  let result: Awaited<RunningCli["done"]> | undefined;
  try {
    await durable.withTasksLocked(async () => {
      const waiting = async (): Promise<number[]> =>
        (
          await durable.store.pool.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1 ORDER BY backend_start",
            [`%"${SCHEMA}"%`],
          )
        ).rows.map((row) => row.pid);
      // Another submit, straight to the database, waits on the lock.
      const otherCli = startCli(["submit", await other.file, "--run-id", other.runId], { cwd: durable.ws.dir, env: ENV });
      durable.workers.push(otherCli);
      expect(await eventually(async () => (await waiting()).length === 1 || otherCli.child.exitCode !== null, 20_000), otherCli.stderr()).toBe(true);
      otherPid = (await waiting())[0]!;
      // This one, through the pooler, waits too, its sessions said to have the other's pid.
      const cli = startCli(["submit", await mine.file, "--run-id", mine.runId], { cwd: durable.ws.dir, env: { ...ENV, TASKQ_STORE: proxy.url(durable.SECRET_URL) } });
      durable.workers.push(cli);
      expect(await eventually(async () => (await waiting()).length === 2 || cli.child.exitCode !== null, 20_000), cli.stderr()).toBe(true);
      cli.child.kill("SIGINT");
      expect(await eventually(() => ACK.test(cli.stderr()) || cli.child.exitCode !== null, 10_000)).toBe(true);
      cli.child.kill("SIGINT");
      result = await cli.done;
      // The other submit waits on as it did.
      expect(otherCli.child.exitCode, otherCli.stderr()).toBe(null);
      expect(await waiting()).toContain(otherPid);
      otherDone = otherCli.done;
    });
  } finally {
    await proxy.close();
  }
  expect(result?.code).toBe(130);
  // Its own statement the pooler's pid does not name: not known to be cancelled.
  expect(result?.stderr).toContain(`${CANCELLING}taskq: SIGINT received again while the run was being submitted: stopping now; run ${mine.runId} may have been stored`);
  // The other stores its run once the lock is let go.
  expect(await otherDone).toMatchObject({ code: 0, stdout: `${other.runId}\n` });
  expect(await storedTasks(other.runId)).toBe(2);
  await durable.store.cancelRun(other.runId);
  expect(await eventually(async () => (await durable.store.pool.query("SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1", [`%"${SCHEMA}"%`])).rows.length === 0, 20_000)).toBe(true);
  if ((await storedTasks(mine.runId)) > 0) await durable.store.cancelRun(mine.runId);
});
