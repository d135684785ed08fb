import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, runIds, workspace } from "../helpers/cli.js";
import { leftoversCheckedAfterEach } from "../helpers/processes.js";

// Every e2e run must leave no task process behind.
const logRoots = leftoversCheckedAfterEach();

// A child of the task's shell that crashes leaves only the shell's exit code, 128 + the signal's number.
const WORKFLOW = `tasks:
  seg: { run: 'sh -c "kill -SEGV \\$\\$"' }
  abrt: { run: 'sh -c "kill -ABRT \\$\\$"', retryOn: [1] }
  bus: { run: 'sh -c "kill -BUS \\$\\$"' }
  fpe: { run: 'sh -c "kill -FPE \\$\\$"' }
  ill: { run: 'sh -c "kill -ILL \\$\\$"' }
  pipe: { run: 'sh -c "kill -PIPE \\$\\$"' }
  term: { run: 'sh -c "kill -TERM \\$\\$"' }
  direct: { run: 'kill -SEGV $$' }
  plain: { run: 'exit 3' }
`;

const SEGV = "exited with code 139 (128 + SIGSEGV: a crash, as a shell reports a child killed by a segmentation fault)";
const ABRT = "exited with code 134 (128 + SIGABRT: a crash, as a shell reports a child that aborted, on a failed assertion say; 134 is not in retryOn: not retried)";

async function run(args: string[]) {
  const ws = await workspace(WORKFLOW);
  logRoots.push(ws.logs);
  const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--concurrency", "1", ...args], { cwd: ws.dir });
  const [runId = ""] = await runIds(ws.logs);
  return { ...result, logDir: path.join(ws.logs, runId) };
}

describe("an exit code of 128 + a crash signal's number", () => {
  it("says which signal and that it is a crash, as a shell reports one, in the FAILED line, the summary and the log", async () => {
    const result = await run([]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`FAILED  seg: ${SEGV}\n`);
    expect(result.stdout).toContain(`FAILED  abrt: ${ABRT}\n`);
    expect(result.stdout).toContain("FAILED  bus: exited with code 135 (128 + SIGBUS: a crash, as a shell reports a child killed by a bus error)\n");
    expect(result.stdout).toContain("FAILED  fpe: exited with code 136 (128 + SIGFPE: a crash, as a shell reports a child killed by an arithmetic error, a division by zero say)\n");
    expect(result.stdout).toContain("FAILED  ill: exited with code 132 (128 + SIGILL: a crash, as a shell reports a child killed by an illegal instruction)\n");
    expect(result.stdout).toContain("FAILED  pipe: exited with code 141 (128 + SIGPIPE, as a shell reports a child killed by that signal: it wrote to a pipe whose reader had gone)\n");
    expect(result.stdout).toContain("FAILED  term: exited with code 143 (128 + SIGTERM, as a shell reports a child killed by that signal: asked to stop, not by taskq)\n");
    // A task the signal ended itself says so already; a plain exit code has nothing to add.
    expect(result.stdout).toContain("FAILED  direct: killed by SIGSEGV\n");
    expect(result.stdout).toContain("FAILED  plain: exited with code 3\n");
    expect(result.stdout).toContain(`  ✗ seg: ${SEGV} (1 attempt)\n`);
    expect(result.stdout).toContain(`  ✗ abrt: ${ABRT} (1 attempt)\n`);
    expect(await readFile(path.join(result.logDir, "seg.log"), "utf8")).toMatch(new RegExp(`--- taskq: attempt 1 ${SEGV.replace(/[()+]/g, "\\$&")} ---\n$`));
  });

  it("says so in the JSON failed event and the summary's dead letters", async () => {
    const result = await run(["--output", "json"]);
    const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; id?: string; error?: { message: string; exitCode: number | null }; deadLetters?: { id: string; error: string; exitCode: number | null }[] });
    const failed = events.find((event) => event.event === "failed" && event.id === "seg");
    expect(failed?.error).toMatchObject({ message: SEGV, exitCode: 139 });
    const summary = events.find((event) => event.event === "summary");
    expect(summary?.deadLetters?.find((letter) => letter.id === "abrt")).toMatchObject({ error: ABRT, exitCode: 134 });
  });
});
