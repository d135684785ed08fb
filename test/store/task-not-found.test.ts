import pg from "pg";
import { describe, expect, it } from "vitest";
import { schemaNames } from "../../src/store/postgres/names.js";
import { taskNotFound, tasksNotFound } from "../../src/store/postgres/status.js";
import { DATABASE_URL, task, useStoreSchema, workflow } from "./helpers.js";

/** A client on the test database that counts the rows its queries send back. */
async function countingClient(): Promise<{ db: pg.ClientBase; rows: () => number; end: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  let rows = 0;
  const db = {
    query: async (text: string, values?: unknown[]) => {
      const result = await client.query(text, values);
      rows += result.rows.length;
      return result;
    },
  } as unknown as pg.ClientBase;
  return { db, rows: () => rows, end: () => client.end() };
}

/**
 * The error for task ids not found (`cancel RUN a nope`) names the task meant of each. Of several ids it read every key of
 * the run to find them, 100,000 rows sent back for a run of 100,000 tasks on a typo; of one, only keys a few characters
 * longer or shorter, as the database filters them. Both read those only now, in one way.
 */
describe("tasks not found", () => {
  const opened = useStoreSchema();

  it("the keys read for the task meant are only those near the ids missing in length, of one id as of several", async () => {
    const { store, schema } = opened;
    // 3,000 tasks whose ids are far longer than those looked for, and the few a slip may be of.
    const far = Array.from({ length: 3000 }, (_, index) => task(`shard-of-the-nightly-build-${index}`));
    await store.submitRun(workflow([task("build"), task("lint"), ...far]), { runId: "big" });
    const names = schemaNames(schema);

    const several = await countingClient();
    try {
      const error = await tasksNotFound(several.db, names, "big", ["biuld", "zz"], 3, "cancel");
      expect(error.message).toBe('no task "biuld" (did you mean "build"?) or "zz" in run "big": none of the 3 tasks given was cancelled');
      // The run's row, and build and lint: not the 3,000 others.
      expect(several.rows()).toBeLessThanOrEqual(3);
    } finally {
      await several.end();
    }

    const one = await countingClient();
    try {
      const error = await taskNotFound(one.db, names, "big", "biuld", "cancel");
      expect(error.message).toBe('no task "biuld" in run "big"; did you mean "build"?');
      expect(one.rows()).toBeLessThanOrEqual(3);
    } finally {
      await one.end();
    }

    // Of ids of lengths far apart, each is matched among the keys near its own length.
    await expect(tasksNotFound(store.pool, names, "big", ["lnit", "shard-of-the-nightly-bild-7"], 2, "cancel")).resolves.toMatchObject({
      message: 'no task "lnit" (did you mean "lint"?) or "shard-of-the-nightly-bild-7" (did you mean "shard-of-the-nightly-build-7"?) in run "big": none of the 2 tasks given was cancelled',
    });
  }, 60_000);
});
