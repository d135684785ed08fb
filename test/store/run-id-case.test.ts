import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/store/postgres/migrations.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { createPool, DATABASE_URL, dropSchema, sql, task, uniqueSchema, useStoreSchema, workflow } from "./helpers.js";

/** The refusal of `id`, a new run id that run `twin`'s is but for case. */
function refusal(id: string, twin: string): string {
  return (
    `run id "${id}" differs from run ${twin}'s only in case: a run's id names its log folder on every worker, and where the file system does not tell case apart (macOS, Windows) the two would share one; ` +
    `nothing was submitted: submit it as ${twin} to add to that run, or under another --run-id`
  );
}

const ids = async (store: PostgresStore): Promise<string[]> => (await sql<{ id: string }>(store, "SELECT id FROM $schema.runs ORDER BY id")).map((row) => row.id);

/**
 * Run ids the same but for case (`Build-1`, `build-1`) were both taken: their log folders are one folder where the file
 * system does not tell case apart (macOS's). A new one is refused now, in the database (migration 23), naming the run.
 */
describe("run ids the same but for case", () => {
  const opened = useStoreSchema();

  it("a new run id that a stored run's is but for case is refused (exit 2), nothing stored; the stored id itself is submitted again", async () => {
    const store = opened.store;
    await store.submitRun(workflow([task("a")]), { runId: "Build-1" });
    await expect(store.submit(workflow([task("a")]), { runId: "build-1" })).rejects.toMatchObject({ code: "STORE_RUN_ID_CASE", exitCode: 2, message: refusal("build-1", "Build-1") });
    // A workflow that needs tasks of a run (submitRun's transaction, not the one-statement insert) is refused as well.
    await expect(store.submit(workflow([task("b", { dependsOn: ["a"] })]), { runId: "BUILD-1" })).rejects.toMatchObject({ code: "STORE_RUN_ID_CASE", message: refusal("BUILD-1", "Build-1") });
    expect(await ids(store)).toEqual(["Build-1"]);
    expect(await store.submit(workflow([task("a"), task("b")]), { runId: "Build-1" })).toMatchObject({ created: false, added: 1, kept: 1 });
  });

  it("a submit does not wait for another session's submit of an id the same but for case, not committed yet: both pass", async () => {
    const store = opened.store;
    const first = new pg.Client({ connectionString: DATABASE_URL });
    await first.connect();
    try {
      await first.query("BEGIN");
      await first.query(`INSERT INTO "${opened.schema}".runs (id) VALUES ('Race-1')`);
      // Waiting for the first's transaction, it would end only at the statement limit (30s), past this test's.
      expect(await store.submit(workflow([task("a")]), { runId: "race-1" })).toMatchObject({ runId: "race-1", created: true });
      await first.query("COMMIT");
      expect(await ids(store)).toEqual(["Race-1", "race-1"]);
    } finally {
      await first.end();
    }
  }, 20_000);
});

describe("migration 23 on a store that has run ids the same but for case", () => {
  const schema = uniqueSchema();
  afterAll(async () => dropSchema(schema));

  it("is applied, and those runs go on as they were: each submitted again; a third such id refused", async () => {
    const store = await PostgresStore.open({ connectionString: DATABASE_URL, schema });
    const pool = createPool(1);
    try {
      // As the store was before migration 23, which took both.
      await sql(store, "DROP TRIGGER runs_id_case ON $schema.runs; DROP FUNCTION $schema.refuse_run_id_case_twin(); DROP INDEX $schema.runs_id_lower");
      await sql(store, "DELETE FROM $schema.migrations WHERE version = 23");
      await store.submitRun(workflow([task("a")]), { runId: "Old-1" });
      await store.submitRun(workflow([task("a")]), { runId: "old-1" });
      expect(await migrate(pool, schema)).toEqual([23]);
      for (const runId of ["Old-1", "old-1"]) expect(await store.submit(workflow([task("a"), task("b")]), { runId })).toMatchObject({ runId, created: false, added: 1, kept: 1 });
      await expect(store.submit(workflow([task("a")]), { runId: "OLD-1" })).rejects.toMatchObject({ code: "STORE_RUN_ID_CASE", message: refusal("OLD-1", "Old-1") });
      expect(await ids(store)).toEqual(["Old-1", "old-1"]);
    } finally {
      await pool.end();
      await store.close();
    }
  });
});
