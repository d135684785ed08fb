import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { LATEST_MIGRATION, migrate } from "../../src/store/postgres/migrations.js";
import { redactConnectionString } from "../../src/store/postgres/redact.js";
import { runCli, startCli, workspace, type CliOptions } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { createPool, DATABASE_URL, dropSchema } from "../store/helpers.js";

/**
 * A rolling upgrade: a newer taskq has migrated the store, and this one (an older worker, say) still runs
 * against it. Simulated by recording a migration past the newest this build knows, as `migrate` records one.
 */
describe("a store a newer taskq migrated", () => {
  let admin: pg.Pool;
  let ws: { dir: string; file: string; logs: string };
  const schemas: string[] = [];

  beforeAll(async () => {
    admin = createPool(2);
    ws = await workspace("tasks:\n  a: { run: echo a }\n  b: { run: echo b, dependsOn: [a] }\n");
  });

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
    await admin.end();
  });

  /** A store made by this build, in a schema of its own: at exactly its newest migration, or `ahead` past it. */
  async function storeSchema(ahead: number): Promise<string> {
    const schema = `newer_${randomBytes(4).toString("hex")}`;
    schemas.push(schema);
    await migrate(admin, schema);
    for (let version = LATEST_MIGRATION + 1; version <= LATEST_MIGRATION + ahead; version++) {
      await admin.query(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, $2)`, [version, `a later taskq's migration ${version}`]);
    }
    return schema;
  }

  const options = (schema: string): CliOptions => ({ cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } });

  function warning(schema: string, migration: number): string {
    return `taskq: the store ${redactConnectionString(DATABASE_URL)} (schema "${schema}") was migrated by a newer taskq (migration ${migration}; this taskq knows up to ${LATEST_MIGRATION}): upgrade taskq on this machine\n`;
  }

  /** A worker of this build (with `flags`) run until run `runId` has succeeded, then stopped with SIGINT: what it printed. */
  async function workUntilSucceeded(schema: string, runId: string, flags: string[] = []): Promise<Awaited<ReturnType<typeof startCli>["done"]>> {
    const worker = startCli(["worker", "-j", "2", "--log-dir", ws.logs, ...flags], options(schema));
    try {
      const succeeded = async () => (await admin.query<{ state: string }>(`SELECT state FROM "${schema}".runs WHERE id = $1`, [runId])).rows[0]?.state === "succeeded";
      expect(await eventually(succeeded, 20_000)).toBe(true);
    } finally {
      worker.child.kill("SIGINT");
    }
    return worker.done;
  }

  it("every command says so in one line on stderr (with plain output), and goes on working: submit, a worker running the run, status, dead-letters, run --store", async () => {
    const schema = await storeSchema(2);
    const newest = LATEST_MIGRATION + 2;

    const submitted = await runCli(["submit", ws.file], options(schema));
    expect({ code: submitted.code, stderr: submitted.stderr }).toEqual({ code: 0, stderr: warning(schema, newest) });
    const runId = submitted.stdout.trim();

    // A worker of this build leases and runs the run's tasks all the same.
    const stopped = await workUntilSucceeded(schema, runId);
    expect({ code: stopped.code, stderr: stopped.stderr }).toEqual({ code: 130, stderr: warning(schema, newest) });

    const status = await runCli(["status", runId], options(schema));
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: warning(schema, newest) });
    expect(status.stdout).toContain("2 succeeded, 0 failed, 0 cancelled");

    const deadLetters = await runCli(["dead-letters", runId], options(schema));
    expect({ code: deadLetters.code, stderr: deadLetters.stderr }).toEqual({ code: 0, stderr: warning(schema, newest) });

    const run = await runCli(["run", "--store", DATABASE_URL, "--log-dir", ws.logs, ws.file], options(schema));
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: warning(schema, newest) });
    expect(run.stdout).toContain("2 succeeded, 0 failed, 0 cancelled");

    // Nothing was changed in what the store records of its migrations.
    const versions = await admin.query<{ version: number }>(`SELECT max(version) AS version FROM "${schema}".migrations`);
    expect(versions.rows[0]?.version).toBe(newest);
  }, 90_000);

  it("with --output json, submit, worker and run --store give it as a note record among theirs (code STORE_NEWER), not as text on stderr", async () => {
    const schema = await storeSchema(2);
    const newest = LATEST_MIGRATION + 2;
    const note = { event: "note", code: "STORE_NEWER", message: warning(schema, newest).replace(/^taskq: /, "").trimEnd(), migration: newest, knownMigration: LATEST_MIGRATION };
    const records = (stdout: string) => stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const withoutTs = ({ ts: _ts, ...rest }: Record<string, unknown>) => rest;

    const submitted = await runCli(["submit", ws.file, "--output", "json"], options(schema));
    expect({ code: submitted.code, stderr: submitted.stderr }).toEqual({ code: 0, stderr: "" });
    const submitRecords = records(submitted.stdout);
    // The run record first, as ever (`submit --output json | head -1`), then the note.
    expect(submitRecords[0]?.event).toBe("run");
    expect(submitRecords.slice(1).map(withoutTs)).toEqual([note]);
    const runId = submitRecords[0]!.runId as string;

    const stopped = await workUntilSucceeded(schema, runId, ["--output", "json"]);
    expect({ code: stopped.code, stderr: stopped.stderr }).toEqual({ code: 130, stderr: "" });
    const workerRecords = records(stopped.stdout);
    expect(workerRecords[0]?.event).toBe("worker");
    expect(workerRecords.filter((record) => record.code === "STORE_NEWER").map(withoutTs)).toEqual([note]);

    const run = await runCli(["run", "--store", DATABASE_URL, "--log-dir", ws.logs, "--output", "json", ws.file], options(schema));
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const runRecords = records(run.stdout);
    expect(runRecords[0]?.event).toBe("run");
    expect(runRecords.filter((record) => record.code === "STORE_NEWER").map(withoutTs)).toEqual([note]);
    expect(runRecords.at(-1)?.event).toBe("summary");
  }, 90_000);

  it("with --output json, status, dead-letters and prune give it as a note record (code STORE_NEWER) on stderr, their stdout the one JSON document or the rows as ever", async () => {
    const schema = await storeSchema(1);
    const newest = LATEST_MIGRATION + 1;
    const note = { event: "note", code: "STORE_NEWER", message: warning(schema, newest).replace(/^taskq: /, "").trimEnd(), migration: newest, knownMigration: LATEST_MIGRATION };
    const noteRecords = (stderr: string) => stderr.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>).map(({ ts: _ts, ...rest }) => rest);
    const submitted = await runCli(["submit", ws.file], options(schema));
    const runId = submitted.stdout.trim();
    const stopped = await workUntilSucceeded(schema, runId);
    expect(stopped.code).toBe(130);

    const status = await runCli(["status", runId, "--output", "json"], options(schema));
    expect({ code: status.code, state: (JSON.parse(status.stdout) as { state: string }).state, notes: noteRecords(status.stderr) }).toEqual({ code: 0, state: "succeeded", notes: [note] });

    const deadLetters = await runCli(["dead-letters", runId, "--output", "json"], options(schema));
    expect({ code: deadLetters.code, stdout: deadLetters.stdout, notes: noteRecords(deadLetters.stderr) }).toEqual({ code: 0, stdout: "", notes: [note] });

    const prune = await runCli(["prune", "--older-than", "1d", "--dry-run", "--output", "json"], options(schema));
    expect({ code: prune.code, wouldPrune: (JSON.parse(prune.stdout) as { wouldPrune: unknown }).wouldPrune, notes: noteRecords(prune.stderr) }).toEqual({ code: 0, wouldPrune: [], notes: [note] });
  }, 60_000);

  it("with --output json, submit and run --store whose submit fails give it as a note record before the error record, not never", async () => {
    const schema = await storeSchema(1);
    const note = { event: "note", code: "STORE_NEWER", message: warning(schema, LATEST_MIGRATION + 1).replace(/^taskq: /, "").trimEnd(), migration: LATEST_MIGRATION + 1, knownMigration: LATEST_MIGRATION };
    const records = (stdout: string) => stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const runId = `newer-${randomBytes(3).toString("hex")}`;
    expect((await runCli(["submit", ws.file, "--run-id", runId], options(schema))).code).toBe(0);
    // Another file under its run id: refused (STORE_OTHER_FILE) once the store is open, before any record of the run.
    const other = path.join(ws.dir, `other-${randomBytes(3).toString("hex")}.yaml`);
    await writeFile(other, "tasks:\n  c: { run: echo c }\n");
    for (const args of [["submit", other], ["run", "--store", DATABASE_URL, "--log-dir", ws.logs, other]]) {
      const refused = await runCli([...args, "--run-id", runId, "--output", "json"], options(schema));
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^taskq: run \S+ was submitted from .*\n$/);
      expect(records(refused.stdout).map(({ ts: _ts, ...rest }) => ({ ...rest, ...(rest.event === "error" ? { message: "" } : {}) }))).toEqual([
        note,
        { event: "error", code: "STORE_OTHER_FILE", exitCode: 2, message: "" },
      ]);
    }
  }, 60_000);

  it("a store at exactly this build's newest migration: no warning", async () => {
    const schema = await storeSchema(0);
    const run = await runCli(["run", "--store", DATABASE_URL, "--log-dir", ws.logs, ws.file], options(schema));
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const runId = /run (\S+) submitted/.exec(run.stdout)?.[1];
    expect(runId).toBeDefined();
    const status = await runCli(["status", runId!], options(schema));
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: "" });
    const submitted = await runCli(["submit", ws.file], options(schema));
    expect({ code: submitted.code, stderr: submitted.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);

  it("a store a newer taskq migrated with one more migration names it", async () => {
    const schema = await storeSchema(1);
    const submitted = await runCli(["submit", ws.file], options(schema));
    expect({ code: submitted.code, stderr: submitted.stderr }).toEqual({ code: 0, stderr: warning(schema, LATEST_MIGRATION + 1) });
  }, 30_000);
});
