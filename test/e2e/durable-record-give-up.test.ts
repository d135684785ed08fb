import path from "node:path";
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/processes.js";
import { startFreezableProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL } from "../store/helpers.js";
import { useDurableWorkspace } from "./durable-harness.js";

// A stopping worker that tries to record a task's end the database does not take: until the lease runs out, or a third signal.
const durable = useDurableWorkspace("taskq_e2e_give_up");
const { workflowFile, submit, startWorker } = durable;

describe("a worker stopped while its database refuses connections, a task's success not recorded", () => {
  it("gives the record up at a third signal and stops, rather than try until its lease runs out", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go");
    // Eleven records waited for at once: one listener for the give-up, not one each (Node warned past ten).
    const ended = ["done", ...Array.from({ length: 10 }, (_, index) => `also-${index + 1}`)];
    const waits = ended.map((id) => `  ${id}: { run: 'echo waiting; while [ ! -e ${go} ]; do sleep 0.05; done' }\n`).join("");
    const file = await workflowFile("give-up", `tasks:\n${waits}  long: { run: 'echo long; sleep 1000' }\n`);
    const target = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      // A long lease: the record would be tried for 10 minutes.
      const worker = await startWorker(["--lease", "10m", "-j", "12"], { TASKQ_STORE: proxy.url(durable.SECRET_URL) });
      const runId = await submit(file);
      expect(await eventually(() => ended.every((id) => worker.stdout().includes(`${runId}/${id} | waiting`)) && worker.stdout().includes(`${runId}/long | long`), 30_000)).toBe(true);
      proxy.refuse();
      await writeFile(go, "");
      // The task has succeeded: its record is refused.
      expect(await eventually(() => worker.stdout().includes("db      complete failed: "), 15_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      expect(await eventually(() => worker.stdout().includes("SIGINT received: "), 10_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      expect(await eventually(() => worker.stdout().includes(`record  ${runId}/done: it succeeded (exit 0)`), 20_000)).toBe(true);
      worker.cli.child.kill("SIGINT");
      // Before: the third signal did nothing, and the worker tried for the rest of the lease.
      const exited = await eventually(() => worker.cli.child.exitCode !== null, 20_000);
      if (!exited) worker.cli.child.kill("SIGKILL");
      const result = await worker.cli.done;
      expect(exited).toBe(true);
      expect(result.code).toBe(130);
      expect(result.stdout).toContain("note    SIGINT received again: giving up the records of the tasks that ended, which the database does not take; stopping now\n");
      expect(result.stdout).toMatch(new RegExp(`left    .*${runId}/done \\(it succeeded \\(exit 0\\) but could not be recorded\\)`));
      expect(result.stdout).toContain("stopped (requested)");
      expect(result.stderr).not.toContain("MaxListenersExceededWarning");
    } finally {
      await proxy.close();
    }
  });
});
