import { describe, expect, it } from "vitest";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_severaltasks");
const { SCHEMA, taskq, workflowFile, submit, startWorker, waitForRun } = durable;

/** Each task of the run and its state, in submission order. */
async function states(runId: string): Promise<Record<string, string>> {
  const { rows } = await durable.store.pool.query<{ key: string; state: string }>(`SELECT key, state FROM "${SCHEMA}".tasks WHERE run_id = $1 ORDER BY seq`, [runId]);
  return Object.fromEntries(rows.map((row) => [row.key, row.state]));
}

const lines = (stdout: string): unknown[] => stdout.trim().split("\n").map((line) => JSON.parse(line) as unknown);

/**
 * `cancel RUN a b` and `redrive RUN a b` were refused ("too many arguments for 'cancel'. Expected 2 arguments but got 3"):
 * each took one task. They take several now, each acted on in the order given, in one transaction: an id not in the run
 * (each named) or, for redrive, a task that did not fail, changes nothing. One id, or none for cancel, is as before.
 */
describe("cancel and redrive of several tasks", () => {
  it("cancel checks every id first, then cancels each, a JSON line for each", async () => {
    const file = await workflowFile("several-cancel", 'tasks:\n  a: { run: "true", delay: 1h }\n  b: { run: "true", delay: 1h }\n  c: { run: "true", dependsOn: a }\n  d: { run: "true", delay: 1h }\n');
    const runId = await submit(file, ["--run-id", "several-cancel"]);

    // An id the run has not: named, with the one meant, and nothing cancelled (not even the ids given before it).
    const unknown = await taskq(["cancel", runId, "a", "nope", "bb"]);
    expect({ code: unknown.code, stdout: unknown.stdout, stderr: unknown.stderr }).toEqual({
      code: 1,
      stdout: "",
      stderr: `taskq: no task "nope" or "bb" (did you mean "b"?) in run "${runId}": none of the 3 tasks given was cancelled\n`,
    });
    // The ids given are counted as given, an id given twice twice: it said "none of the 2 tasks given" of the three ids typed.
    const repeated = await taskq(["cancel", runId, "a", "nope", "nope"]);
    expect({ code: repeated.code, stdout: repeated.stdout, stderr: repeated.stderr }).toEqual({
      code: 1,
      stdout: "",
      stderr: `taskq: no task "nope" in run "${runId}": none of the 3 tasks given was cancelled\n`,
    });
    expect(await states(runId)).toEqual({ a: "queued", b: "queued", c: "blocked", d: "queued" });

    // c is cancelled with a, given before it: said so, not cancelled twice.
    const cancelled = await taskq(["cancel", runId, "a", "c", "b"]);
    expect({ code: cancelled.code, stderr: cancelled.stderr }).toEqual({ code: 0, stderr: `note: task "c" of run ${runId} was cancelled with "a", given before it, which it depends on\n` });
    expect(lines(cancelled.stdout)).toEqual([
      { task: "a", cancelled: ["a", "c"], cancelRequested: [] },
      { task: "c", cancelled: [], cancelRequested: [], cancelledWith: "a" },
      { task: "b", cancelled: ["b"], cancelRequested: [] },
    ]);
    expect(await states(runId)).toEqual({ a: "cancelled", b: "cancelled", c: "cancelled", d: "queued" });

    // One that has ended already is no error, as for one task: said for that task, the others cancelled.
    const again = await taskq(["cancel", runId, "a", "d"]);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: `note: task "a" of run ${runId} has already ended (cancelled): nothing to cancel\n` });
    expect(lines(again.stdout)).toEqual([
      { task: "a", cancelled: [], cancelRequested: [], ended: "cancelled" },
      { task: "d", cancelled: ["d"], cancelRequested: [] },
    ]);

    // An id given twice is several ids given, of one task: acted on once, its one line with its `task`, as the README says of
    // several ids (it printed the one-task object, with no `task`, which a script reading lines of several ids cannot place).
    const twice = await taskq(["cancel", runId, "d", "d"]);
    expect({ code: twice.code, stdout: twice.stdout, stderr: twice.stderr }).toEqual({
      code: 0,
      stdout: '{"task":"d","cancelled":[],"cancelRequested":[],"ended":"cancelled"}\n',
      stderr: `note: task "d" of run ${runId} has already ended (cancelled): nothing to cancel\n`,
    });
  }, 30_000);

  it("redrive checks every id first (in the run, failed), then redrives each, a JSON line for each", async () => {
    const file = await workflowFile("several-redrive", 'tasks:\n  f1: { run: "exit 1" }\n  f2: { run: "exit 1" }\n  ok: { run: "true" }\n  dep: { run: "true", dependsOn: f1 }\n');
    const runId = await submit(file, ["--run-id", "several-redrive"]);
    const worker = await startWorker();
    await waitForRun(runId);
    worker.cli.child.kill("SIGTERM");
    await worker.cli.done;
    const ended = { f1: "failed", f2: "failed", ok: "succeeded", dep: "cancelled" };
    expect(await states(runId)).toEqual(ended);

    const unknown = await taskq(["redrive", runId, "f1", "nope"]);
    expect({ code: unknown.code, stdout: unknown.stdout, stderr: unknown.stderr }).toEqual({ code: 1, stdout: "", stderr: `taskq: no task "nope" in run "${runId}": none of the 2 tasks given was redriven\n` });
    const repeated = await taskq(["redrive", runId, "f1", "nope", "nope"]);
    expect({ code: repeated.code, stderr: repeated.stderr }).toEqual({ code: 1, stderr: `taskq: no task "nope" in run "${runId}": none of the 3 tasks given was redriven\n` });
    const twiceOk = await taskq(["redrive", runId, "f1", "ok", "ok"]);
    expect({ code: twiceOk.code, stderr: twiceOk.stderr }).toEqual({ code: 1, stderr: 'taskq: task "ok" succeeded: only failed tasks can be redriven (none of the 3 tasks given was redriven)\n' });
    const succeeded = await taskq(["redrive", runId, "f1", "ok"]);
    expect({ code: succeeded.code, stderr: succeeded.stderr }).toEqual({ code: 1, stderr: 'taskq: task "ok" succeeded: only failed tasks can be redriven (none of the 2 tasks given was redriven)\n' });
    // A dependent the redrive of a task given too brings back: said so.
    const dependent = await taskq(["redrive", runId, "dep", "f1"]);
    expect({ code: dependent.code, stderr: dependent.stderr }).toEqual({
      code: 1,
      stderr: 'taskq: task "dep" was cancelled (dependency "f1" failed): only failed tasks can be redriven; the redrive of "f1", given too, brings it back: leave "dep" out (none of the 2 tasks given was redriven)\n',
    });
    expect(await states(runId)).toEqual(ended);

    const redriven = await taskq(["redrive", runId, "f1", "f2"]);
    expect({ code: redriven.code, stderr: redriven.stderr }).toEqual({ code: 0, stderr: "" });
    expect(lines(redriven.stdout)).toEqual([
      { requeued: "f1", reblocked: ["dep"] },
      { requeued: "f2", reblocked: [] },
    ]);
    expect(await states(runId)).toEqual({ f1: "queued", f2: "queued", ok: "succeeded", dep: "blocked" });

    // An id given twice is several ids given, of one task: its error says none of those given was redriven, as for several.
    const twice = await taskq(["redrive", runId, "ok", "ok"]);
    expect({ code: twice.code, stdout: twice.stdout, stderr: twice.stderr }).toEqual({
      code: 1,
      stdout: "",
      stderr: 'taskq: task "ok" succeeded: only failed tasks can be redriven (none of the 2 tasks given was redriven)\n',
    });
    await durable.store.cancelRun(runId);
  }, 40_000);
  it("a task id that is a stored run's is told that cancel and redrive take one run", async () => {
    // `cancel build-1 build-2 build-3`, meant as three runs, said only that build-1 had no such tasks.
    const file = await workflowFile("several-runs", 'tasks:\n  a: { run: "true", delay: 1h }\n');
    for (const runId of ["build-1", "build-2", "build-3"]) await submit(file, ["--run-id", runId]);

    const cancel = await taskq(["cancel", "build-1", "build-2", "build-3", "a"]);
    expect({ code: cancel.code, stdout: cancel.stdout, stderr: cancel.stderr }).toEqual({
      code: 1,
      stdout: "",
      stderr: 'taskq: no task "build-2" or "build-3" in run "build-1": none of the 3 tasks given was cancelled (build-2 and build-3 are runs: cancel takes one run and its tasks; cancel each run on its own)\n',
    });
    const redrive = await taskq(["redrive", "build-1", "build-2", "nope"]);
    expect({ code: redrive.code, stderr: redrive.stderr }).toEqual({
      code: 1,
      stderr: 'taskq: no task "build-2" or "nope" in run "build-1": none of the 2 tasks given was redriven (build-2 is a run: redrive takes one run and its tasks; redrive each run on its own)\n',
    });
    // One id, as well.
    const one = await taskq(["cancel", "build-1", "build-3"]);
    expect({ code: one.code, stderr: one.stderr }).toEqual({
      code: 1,
      stderr: 'taskq: no task "build-3" in run "build-1" (build-3 is a run: cancel takes one run and its tasks; cancel each run on its own)\n',
    });
    const oneRedrive = await taskq(["redrive", "build-1", "build-2"]);
    expect({ code: oneRedrive.code, stderr: oneRedrive.stderr }).toEqual({
      code: 1,
      stderr: 'taskq: no task "build-2" in run "build-1" (build-2 is a run: redrive takes one run and its tasks; redrive each run on its own)\n',
    });
    // Nothing was cancelled.
    for (const runId of ["build-1", "build-2", "build-3"]) expect(await states(runId)).toEqual({ a: "queued" });
  }, 30_000);
});
