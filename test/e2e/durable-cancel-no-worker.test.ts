import { afterAll, afterEach, describe, expect, it } from "vitest";
import { runCli, startCli, workspace, type RunningCli } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../store/helpers.js";

/**
 * `cancel` of a task whose worker is gone says a worker's sweep cancels it: where no worker of the store is connected at
 * all, none will until one starts, which it says, as status says the run's tasks wait (before, it said nothing of it).
 */
describe("cancel of a running task says when no worker is connected to sweep it", () => {
  const schema = uniqueSchema();
  const workers: RunningCli[] = [];

  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
      await worker.done;
    }
  });
  afterAll(async () => dropSchema(schema));

  it("not while the task's worker is connected; once it is killed and none is, that nothing sweeps the task until one is", async () => {
    const ws = await workspace("tasks:\n  first: { run: 'echo started; sleep 1000' }\n  second: { run: 'echo started; sleep 1000' }\n");
    const options = { cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } };
    const submitted = await runCli(["submit", ws.file], options);
    expect(submitted.code).toBe(0);
    const runId = submitted.stdout.trim();
    const worker = startCli(["worker", "-j", "2", "--lease", "3s", "--log-dir", ws.logs], options);
    workers.push(worker);
    const running = (): boolean => worker.stdout().includes(`${runId}/first | started`) && worker.stdout().includes(`${runId}/second | started`);
    expect(await eventually(() => running() || worker.child.exitCode !== null, 20_000)).toBe(true);
    expect(worker.child.exitCode).toBe(null);

    // Its worker is connected: it stops the task at its next heartbeat, and no more is said.
    const alive = await runCli(["cancel", runId, "first"], options);
    expect(alive.code).toBe(0);
    expect(alive.stderr).toMatch(/^note: "first" runs on worker \S+, which stops it at its next heartbeat; if that worker is gone .*\n$/);

    const cancelled = async (): Promise<boolean> => (JSON.parse((await runCli(["status", runId, "--output", "json"], options)).stdout) as { cancelled: { id: string }[] }).cancelled.some((task) => task.id === "first");
    expect(await eventually(cancelled, 20_000)).toBe(true);

    // The worker killed, its process only (its guard stops the task's processes): the task stays running in the database.
    worker.child.kill("SIGKILL");
    await worker.done;
    const note = `note: no worker is connected to this store (schema "${schema}"): "second" stays running until one is (taskq worker) and its sweep cancels it\n`;
    // Its sessions end as it exits: the database may list them a moment longer.
    let gone = await runCli(["cancel", runId], options);
    await eventually(async () => (gone = await runCli(["cancel", runId], options)).stderr.endsWith(note), 10_000);
    expect(gone.stderr.split(/(?<=\n)/).at(-1)).toBe(note);
    expect(gone.code).toBe(0);
    expect(JSON.parse(gone.stdout)).toEqual({ cancelled: [], cancelRequested: ["second"] });
    expect(gone.stderr).toMatch(/^note: "second" (runs on worker|on worker) \S+/);
  }, 60_000);
});
