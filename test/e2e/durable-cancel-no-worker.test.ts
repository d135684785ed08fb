import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/processes.js";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const { SCHEMA, taskq, workflowFile, submit, startWorker } = useDurableWorkspace("taskq_e2e_cancelnw");

/**
 * `cancel` of a task whose worker is gone says a worker's sweep cancels it: where no worker of the store is connected at
 * all, none will until one starts, which it says, as status says the run's tasks wait (before, it said nothing of it).
 */
describe("cancel of a running task says when no worker is connected to sweep it", () => {
  it("not while the task's worker is connected; once it is killed and none is, that nothing sweeps the task until one is", async () => {
    const runId = await submit(await workflowFile("running", "tasks:\n  first: { run: 'echo started; sleep 1000' }\n  second: { run: 'echo started; sleep 1000' }\n"));
    const worker = await startWorker(["-j", "2", "--lease", "3s"]);
    const running = (): boolean => worker.stdout().includes(`${runId}/first | started`) && worker.stdout().includes(`${runId}/second | started`);
    expect(await eventually(() => running() || worker.cli.child.exitCode !== null, 20_000)).toBe(true);
    expect(worker.cli.child.exitCode).toBe(null);

    // Its worker is connected: it stops the task at its next heartbeat, and no more is said.
    const alive = await taskq(["cancel", runId, "first"]);
    expect(alive.code).toBe(0);
    expect(alive.stderr).toMatch(/^note: "first" runs on worker \S+, which stops it at its next heartbeat; if that worker is gone .*\n$/);

    const cancelled = async (): Promise<boolean> => (JSON.parse((await taskq(["status", runId, "--output", "json"])).stdout) as { cancelled: { id: string }[] }).cancelled.some((task) => task.id === "first");
    expect(await eventually(cancelled, 20_000)).toBe(true);

    // The worker killed, its process only (its guard stops the task's processes): the task stays running in the database.
    worker.cli.child.kill("SIGKILL");
    await worker.cli.done;
    const note = `note: no worker is connected to this store (schema "${SCHEMA}"): "second" stays running until one is (taskq worker) and its sweep cancels it\n`;
    // Its sessions end as it exits: the database may list them a moment longer.
    let gone = await taskq(["cancel", runId]);
    await eventually(async () => (gone = await taskq(["cancel", runId])).stderr.endsWith(note), 10_000);
    expect(gone.stderr.split(/(?<=\n)/).at(-1)).toBe(note);
    expect(gone.code).toBe(0);
    expect(JSON.parse(gone.stdout)).toEqual({ cancelled: [], cancelRequested: ["second"] });
    expect(gone.stderr).toMatch(/^note: "second" (runs on worker|on worker) \S+/);
  }, 60_000);
});
