import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, runIds, startCli, workspace } from "../helpers/cli.js";

/** Resolves once `test` holds for what the CLI wrote to stdout so far, looked at as it comes. */
function whenStdout(stdout: () => string, test: (text: string) => boolean, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const look = (): void => {
      const text = stdout();
      if (test(text)) resolve(text);
      else if (Date.now() - started > timeoutMs) reject(new Error(`stdout never matched; it holds:\n${text}`));
      else setTimeout(look, 20);
    };
    look();
  });
}

describe("plain output of a line a task has not ended yet", () => {
  it("shows `waiting...` on stdout while the task still waits, before `done`; the log has the line whole", async () => {
    const ws = await workspace(`tasks:\n  db:\n    run: printf 'waiting...'; sleep 3; echo done\n`);
    const cli = startCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir });
    const early = await whenStdout(cli.stdout, (text) => text.includes("db | waiting...\n") || text.includes("done"), 30_000);
    expect(early).toContain("db | waiting...\n");
    expect(early).not.toContain("done");
    const result = await cli.done;
    expect(result.code).toBe(0);
    // The rest of the line, on a line of its own, once it came; no empty line for its newline.
    expect(result.stdout).toContain("db | waiting...\ndb | done\n");
    const [runId] = await runIds(ws.logs);
    expect(await readFile(path.join(ws.logs, runId as string, "db.log"), "utf8")).toBe("waiting...done\n");
  });

  it("gives a failed task's summary each part once, as shown", async () => {
    const ws = await workspace(`tasks:\n  t:\n    run: echo before; printf 'waiting...'; sleep 2; echo failed-now; exit 1\n`);
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toMatch(/last 3 lines:\n {6}before\n {6}waiting\.\.\.\n {6}failed-now\n/);
    expect(result.stdout.split("waiting...")).toHaveLength(3); // its line, and its line in the summary
  });

  it("shows no empty line for a `\\r` alone that comes after the part shown, nor for the newline after it", async () => {
    const ws = await workspace(`tasks:\n  c:\n    run: printf 'x'; sleep 2; printf '\\r'; sleep 2; echo; echo after\n`);
    const result = await runCli(["run", ws.file, "--output", "plain", "--log-dir", ws.logs], { cwd: ws.dir, env: { CI: "true" } });
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n").filter((line) => line.startsWith("c |"))).toEqual(["c | x", "c | after"]);
  });

  it("in JSON output, gives the line whole, in one record", async () => {
    const ws = await workspace(`tasks:\n  db:\n    run: printf 'waiting...'; sleep 2; echo done\n`);
    const result = await runCli(["run", ws.file, "--output", "json", "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(0);
    const texts = result.stdout
      .split("\n")
      .filter((line) => line.includes('"event":"output"'))
      .map((line) => (JSON.parse(line) as { text: string }).text);
    expect(texts).toEqual(["waiting...done"]);
  });
});
