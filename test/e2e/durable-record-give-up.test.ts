import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { startFreezableProxy } from "../helpers/tcp-proxy.js";
import { DATABASE_URL } from "../store/helpers.js";
import { useDurableWorkspace } from "./durable-harness.js";

// A stopping worker that tries to record a task's end the database does not take: until the lease runs out, or a third signal.
const durable = useDurableWorkspace("taskq_e2e_give_up");
const { workflowFile, submit, startWorker, awaitWorker } = durable;

/** A wrapper (perl, no shell) that runs the command after `--` and passes each SIGINT it gets on to it, 20 ms later. */
const FORWARDER = [
  "perl",
  "-e",
  'my $pid; $SIG{INT} = sub { select(undef, undef, undef, 0.02); kill "INT", $pid }; $pid = fork(); if ($pid == 0) { exec @ARGV; exit 127 } while (waitpid($pid, 0) != $pid) {} exit($? & 127 ? 128 + ($? & 127) : $? >> 8);',
  "--",
];

describe("a worker stopped while its database refuses connections, a task's success not recorded", () => {
  it("gives the record up at a third signal and stops, rather than try until its lease runs out", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go");
    // Eleven records waited for at once: one listener for the give-up, not one each (Node warned past ten).
    const ended = ["done", ...Array.from({ length: 10 }, (_, index) => `also-${index + 1}`)];
    const waits = ended.map((id) => `  ${id}: { run: 'echo waiting; while [ ! -e ${go} ]; do sleep 0.05; done; echo ended' }\n`).join("");
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
      // The tasks have succeeded, every one (each saw the file, a loaded machine's 50 ms poll later: one that had not yet
      // was killed by the second signal, given back, and no record of it said), and a record is refused.
      expect(await eventually(() => ended.every((id) => worker.stdout().includes(`${runId}/${id} | ended`)), 15_000)).toBe(true);
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

  it("under a wrapper that passes signals on (as npm does), each Ctrl-C counts once: the second kills the tasks and still tries the record, the third gives it up", { timeout: 60_000 }, async () => {
    const go = path.join(durable.ws.dir, "go-wrapped");
    const file = await workflowFile("give-up-wrapped", `tasks:\n  done: { run: 'echo waiting; while [ ! -e ${go} ]; do sleep 0.05; done' }\n  long: { run: 'echo long; sleep 1000' }\n`);
    const target = new URL(DATABASE_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      // As a shell with job control starts `npm run worker`: the wrapper leads a process group, taskq in it, and a terminal's
      // Ctrl-C reaches both, the wrapper passing its copy on to taskq some ms later (here 20: sent at once, the two may
      // merge into one pending signal).
      const cli = startCli(["worker", "--log-dir", durable.ws.logs, "--lease", "10m", "-j", "2"], { cwd: durable.ws.dir, env: { ...durable.ENV, TASKQ_STORE: proxy.url(durable.SECRET_URL) }, through: FORWARDER });
      const worker = await awaitWorker(cli);
      const ctrlC = (): boolean => process.kill(-cli.child.pid!, "SIGINT");
      const runId = await submit(file);
      expect(await eventually(() => worker.stdout().includes(`${runId}/done | waiting`) && worker.stdout().includes(`${runId}/long | long`), 30_000)).toBe(true);
      proxy.refuse();
      await writeFile(go, "");
      expect(await eventually(() => worker.stdout().includes("db      complete failed: "), 15_000)).toBe(true);
      ctrlC();
      expect(await eventually(() => worker.stdout().includes("SIGINT received: "), 10_000)).toBe(true);
      // A person's second Ctrl-C, well after the first (one within FORWARDED_COPY_MS of it is taken for its copy): it kills the
      // tasks, and the record of the one that succeeded is still tried. Before, its copy was taken for a third signal, which
      // gave the record up at once: the sweep would later count a task that succeeded as lost.
      await sleep(1_000);
      ctrlC();
      expect(await eventually(() => worker.stdout().includes(`record  ${runId}/done: it succeeded (exit 0)`), 20_000)).toBe(true);
      expect(worker.stdout()).toContain("note    SIGINT received again: killing every task now\n");
      expect(worker.stdout()).not.toContain("giving up the records");
      expect(cli.child.exitCode).toBe(null);
      // The third: the record is given up, and the worker stops.
      await sleep(1_000);
      ctrlC();
      const exited = await eventually(() => cli.child.exitCode !== null, 20_000);
      if (!exited) process.kill(-cli.child.pid!, "SIGKILL");
      const result = await cli.done;
      expect(exited).toBe(true);
      expect(result.code).toBe(130);
      expect(result.stdout).toContain("note    SIGINT received again: giving up the records of the tasks that ended, which the database does not take; stopping now\n");
      expect(result.stdout).toMatch(new RegExp(`left    .*${runId}/done \\(it succeeded \\(exit 0\\) but could not be recorded\\)`));
    } finally {
      await proxy.close();
    }
  });
});
