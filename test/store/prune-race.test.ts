import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import { createPool, openTestStore, sql, task, until, workflow } from "./helpers.js";

// `prune` and `submit` of the same run id at the same moment. The interleavings are made
// exact with a gate: a trigger holds every insert of a task until the test lets it through.
const GATE = 0x7461_7465; // an advisory lock key of this file's own

describe("prune racing submit of the same run", () => {
  let store: PostgresStore;
  let schema: string;
  /** Unset when beforeAll failed (no database): the teardown then skips it, and that failure shows alone. */
  let close: (() => Promise<void>) | undefined;
  let admin: pg.Pool;
  let gate: pg.PoolClient | undefined;

  beforeAll(async () => {
    ({ store, schema, close } = await openTestStore());
    admin = createPool(2);
    // Waited for as long as the test keeps it closed: not cut short by the lock_timeout of a submit's transaction
    // (see LOCK_WAIT_MS), which would have the submit give way at the gate, where in earnest it never waits.
    await sql(
      store,
      `CREATE FUNCTION $schema.gate() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $fn$
       BEGIN PERFORM pg_advisory_xact_lock_shared(${GATE}); RETURN NEW; END $fn$`,
    );
    await sql(store, "CREATE TRIGGER gate BEFORE INSERT ON $schema.tasks FOR EACH ROW EXECUTE FUNCTION $schema.gate()");
  });
  afterEach(async () => openGate());
  afterAll(async () => {
    await admin?.end();
    await close?.();
  });

  async function closeGate(): Promise<void> {
    gate = await admin.connect();
    await gate.query("SELECT pg_advisory_lock($1)", [GATE]);
  }

  async function openGate(): Promise<void> {
    if (gate === undefined) return;
    await gate.query("SELECT pg_advisory_unlock($1)", [GATE]);
    gate.release();
    gate = undefined;
  }

  /** Resolves once a statement of this schema that starts with `start` waits for a lock. */
  async function waitingOnLock(start: string): Promise<void> {
    await until(async () => {
      const rows = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND ltrim(query) LIKE $1 AND position($2 in query) > 0`,
        [`${start}%`, `"${schema}".`],
      );
      return rows.rows[0]!.n > 0;
    });
  }

  /** A run that ended, with one task. */
  async function endedRun(runId: string): Promise<void> {
    await store.submitRun(workflow([task("a")]), { runId });
    await store.cancelRun(runId);
  }

  it("a submit whose run is pruned between its steps submits again: the run is made anew", async () => {
    await endedRun("anew");
    await closeGate();
    // The run exists: the submit reads it, then waits at the gate to insert its new task...
    const submitted = store.submitRun(workflow([task("b")]), { runId: "anew" });
    await waitingOnLock("WITH inserted AS");
    // ...while the run, ended, is pruned.
    expect((await store.pruneRuns(0)).runs).toEqual(["anew"]);
    await openGate();
    expect(await submitted).toBe("anew");
    const status = await store.runStatus("anew");
    expect(status.state).toBe("running");
    expect(status.tasks.map((row) => [row.key, row.state])).toEqual([["b", "queued"]]);
  });

  it("a prune that deadlocks with a submit runs again; the run, running again, is kept", async () => {
    await endedRun("deadlock");
    await closeGate();
    // The submit holds the run's existing task (FOR SHARE) and waits at the gate to insert the new one.
    const submitted = store.submitRun(workflow([task("a"), task("b")]), { runId: "deadlock" });
    await waitingOnLock("WITH inserted AS");
    // The prune holds the run (its DELETE) and waits for that task...
    const pruned = store.pruneRuns(0);
    await waitingOnLock("DELETE FROM");
    // ...and, a moment later, the submit's insert waits for the run: a deadlock, which ends in the prune's session,
    // which has waited longer (its wait cut short by its lock_timeout, see LOCK_WAIT_MS, or PostgreSQL finding it).
    await new Promise((resolve) => setTimeout(resolve, 200));
    await openGate();
    expect(await submitted).toBe("deadlock");
    expect((await pruned).runs).not.toContain("deadlock");
    const status = await store.runStatus("deadlock");
    expect(status.state).toBe("running");
    expect(status.tasks.map((row) => [row.key, row.state])).toEqual([
      ["a", "cancelled"],
      ["b", "queued"],
    ]);
  });
});
