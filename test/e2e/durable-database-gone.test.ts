import { randomBytes } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, startCli, workspace } from "../helpers/cli.js";
import { eventually, findLeftovers } from "../helpers/processes.js";
import { DATABASE_URL } from "../store/helpers.js";

// A database of the test's own, dropped under a running worker.
const DATABASE = `taskq_gone_${randomBytes(4).toString("hex")}`;
const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
};

afterAll(async () => {
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`));
});

describe("a worker whose database is dropped under it", () => {
  it("says so, stops its tasks and exits 1, and tells a success it could not record as such, not as a task a sweep will run again", { timeout: 60_000 }, async () => {
    await admin((client) => client.query(`CREATE DATABASE ${DATABASE}`));
    const url = new URL(DATABASE_URL);
    url.pathname = `/${DATABASE}`;
    const env = { TASKQ_STORE: url.toString(), TASKQ_STORE_SCHEMA: "gone" };
    const ws = await workspace("");
    const go = path.join(ws.dir, "go");
    const file = path.join(ws.dir, "gone.yaml");
    await writeFile(file, `tasks:\n  ok: { run: 'echo waiting; while [ ! -e ${go} ]; do sleep 0.05; done; echo done' }\n  long: { run: 'echo long; sleep 1000' }\n  long2: { run: 'echo long2; sleep 1000' }\n`);
    const worker = startCli(["worker", "-j", "3", "--log-dir", ws.logs], { cwd: ws.dir, env });
    expect(await eventually(() => /worker \S+: /.test(worker.stdout()), 15_000)).toBe(true);
    const submitted = await runCli(["submit", file], { cwd: ws.dir, env });
    expect(submitted.code).toBe(0);
    const runId = submitted.stdout.trim();
    expect(await eventually(() => worker.stdout().includes(`${runId}/ok | waiting`) && worker.stdout().includes(`${runId}/long | long`) && worker.stdout().includes(`${runId}/long2 | long2`), 15_000)).toBe(true);
    await admin((client) => client.query(`DROP DATABASE ${DATABASE} WITH (FORCE)`));
    // The task succeeds once its database is gone: its end cannot be recorded.
    await writeFile(go, "");
    // Before: the worker tried for ever, and said a sweep would run the task again.
    const exited = await eventually(() => worker.child.exitCode !== null, 20_000);
    if (!exited) worker.child.kill("SIGKILL");
    const result = await worker.done;
    expect(exited).toBe(true);
    expect(result.code).toBe(1);
    const gone = `the store's database no longer exists (database "${DATABASE}" does not exist: dropped or renamed while the worker ran)`;
    expect(result.stderr).toContain(`taskq: ${gone}: the worker stopped`);
    expect(result.stdout).toContain(`note    ${gone}: no task can be leased or recorded there any more; stopping the running tasks now`);
    expect(result.stdout).toMatch(new RegExp(`lost    ${runId}/ok: it succeeded \\(exit 0\\) but could not be recorded \\(.*\\); the store's database no longer exists\\n`));
    // The error's own words, not the store's name of the statement (`completeAndLease failed: `).
    expect(result.stdout).not.toMatch(/could not be recorded \([a-z][A-Za-z]* failed: /);
    // Two tasks of one run: its run went with the database (before, "the runs", one per task).
    expect(result.stdout).toMatch(new RegExp(`left    .*${runId}/long2?, ${runId}/long2?: not recorded, as the store's database no longer exists, and the run with it\\n`));
    expect(result.stdout).not.toContain("a sweep counts the attempt as lost");
    expect(result.stdout).not.toContain("Each runs out within");
    expect(result.stdout).toContain("stopped (database-gone)");
    // Each long task's log says why it was stopped: its database gone, not a worker stopping on request.
    const logs = await readdir(ws.logs, { recursive: true, withFileTypes: true });
    const longLogs = logs.filter((entry) => entry.isFile() && /^long2?\b/.test(entry.name));
    expect(longLogs.length).toBe(2);
    for (const entry of longLogs) {
      // Before: "attempt 1 stopped: the worker is stopping", as if someone had stopped it.
      expect(await readFile(path.join(entry.parentPath, entry.name), "utf8")).toMatch(/--- taskq: attempt 1 stopped: the store's database no longer exists \(dropped or renamed while the worker ran\) ---\n$/);
    }
    // The long task's processes were stopped with the worker.
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 10_000)).toBe(true);
  });
});
