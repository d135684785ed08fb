import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeWorkspaces, runCli, workspace } from "../helpers/cli.js";

afterAll(removeWorkspaces);

/**
 * The Node built-in modules `taskq <args>` loads (process.moduleLoadList at exit, written by a
 * --require'd script: not a V8 flag, so the bundle's code cache is used as in any run).
 */
async function builtinsLoaded(args: string[], dir: string): Promise<{ code: number | null; modules: string[] }> {
  const out = path.join(dir, "modules.txt");
  const hook = path.join(dir, "modules.cjs");
  writeFileSync(hook, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`);
  const result = await runCli(args, { cwd: dir, nodeArgs: ["--require", hook] });
  return { code: result.code, modules: readFileSync(out, "utf8").split("\n") };
}

describe("what a run loads", () => {
  it("times its tasks without node:perf_hooks (eight modules, ~1 ms of a one-task run)", async () => {
    const { dir, file, logs } = await workspace('tasks:\n  a: { run: "true" }\n  b: { run: "exit 3", dependsOn: a }\n');
    const { code, modules } = await builtinsLoaded(["run", file, "--output", "plain", "--log-dir", logs], dir);
    expect(code).toBe(1);
    expect(modules).toContain("NativeModule child_process");
    expect(modules).not.toContain("NativeModule perf_hooks");
  });
});

/** The packages from node_modules `taskq <args>` requires (pg, prom-client: the bundle's externals), in the order required. */
async function packagesRequired(args: string[], dir: string): Promise<{ code: number | null; packages: string[] }> {
  const out = path.join(dir, "packages.txt");
  const hook = path.join(dir, "packages.cjs");
  writeFileSync(
    hook,
    `const Module = require("node:module"); const load = Module._load; const seen = [];
Module._load = function (request, ...rest) { if (/^(pg|prom-client)$/.test(request) && !seen.includes(request)) seen.push(request); return load.call(this, request, ...rest); };
process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(out)}, seen.join("\\n")));\n`,
  );
  const result = await runCli(args, { cwd: dir, nodeArgs: ["--require", hook] });
  return { code: result.code, packages: readFileSync(out, "utf8").split("\n").filter(Boolean) };
}

describe("what a durable command loads", () => {
  it("status, cancel, dead-letters and submit load the database client, not the worker's metrics (prom-client)", async () => {
    const { dir, file } = await workspace('tasks:\n  a: { run: "true" }\n');
    // A store that refuses the connection: each loads the client, tries, and fails (exit 1).
    const store = ["--store", "postgres://postgres@127.0.0.1:1/none"];
    for (const args of [["status", "r"], ["cancel", "r"], ["dead-letters"], ["submit", file]]) {
      expect(await packagesRequired([...args, ...store], dir), args[0]).toEqual({ code: 1, packages: ["pg"] });
    }
  });
});
