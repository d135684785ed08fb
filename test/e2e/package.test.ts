import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { builtinModules } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// The package as a project that installs it gets it: what `npm pack` ships, what the shipped
// code loads, and the library from ES modules and CommonJS.
const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** The files `npm pack` would put in the tarball (the build is npm test's first step, so nothing is built here). */
async function packedFiles(): Promise<Set<string>> {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return new Set(pack!.files.map((file) => file.path));
}

/** Every file the modules in `entries` reach by relative imports (`from "./x.js"`, `import("./x.js")`), themselves included. */
async function reachable(entries: string[]): Promise<Set<string>> {
  const seen = new Set<string>();
  const todo = [...entries];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await readFile(path.join(ROOT, file), "utf8");
    for (const [, specifier] of text.matchAll(/(?:\bfrom|\bimport\s*\(?)\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      // A declaration file names the module ("./queue.js"): its own declarations are "./queue.d.ts".
      const target = file.endsWith(".d.ts") ? specifier!.replace(/\.js$/, ".d.ts") : specifier!;
      todo.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), target)));
    }
  }
  return seen;
}

describe("the package", () => {
  it("ships every file the library and the CLI load, its licence and schema, and none of tsc's output that nothing loads", async () => {
    const files = await packedFiles();
    const library = await reachable(["dist/index.js", "dist/index.d.ts"]);
    const cli = ["bin/taskq.cjs", "dist/bundle/cli.cjs", "dist/bundle/cli.cjs.cache", "dist/bundle/load-worker.js"];
    const missing = [...library, ...cli, "LICENSE", "README.md", "schema/workflow.schema.json"].filter((file) => !files.has(file));
    expect(missing).toEqual([]);
    expect([...library].length).toBeGreaterThan(10); // the engine's modules: the walk followed its imports
    // Outside the bundle, only tsc's output for the library's modules (code, declarations, maps): not the CLI's (the bundle
    // holds it), nor what an earlier build left of a module since removed or renamed, which nothing loads.
    const module = (file: string) => file.replace(/\.map$/, "").replace(/\.d\.ts$/, ".js");
    const unused = [...files].filter((file) => file.startsWith("dist/") && !file.startsWith("dist/bundle/") && !library.has(module(file)));
    expect(unused).toEqual([]);
  }, 60_000);

  it("ships of dist/bundle the CLI, its code cache, the load worker and their maps alone: not what runs from the checkout left there", async () => {
    // A run given node flags keeps a cache of its own (cli.cjs.cache-<flags>), and one killed while it wrote its cache
    // leaves the temporary file (cli.cjs.cache.<pid>.tmp): neither is for the package.
    const bundle = path.join(ROOT, "dist/bundle");
    const strays = ["cli.cjs.cache-0badf1a9", `cli.cjs.cache.${process.pid}.tmp`, "cli.cjs.cache-0badf1a9.77.tmp"];
    try {
      for (const name of strays) await writeFile(path.join(bundle, name), "left by a run\n");
      const shipped = [...(await packedFiles())].filter((file) => file.startsWith("dist/bundle/")).sort();
      expect(shipped).toEqual(["cli.cjs", "cli.cjs.cache", "cli.cjs.map", "load-worker.js", "load-worker.js.map"].map((name) => `dist/bundle/${name}`));
    } finally {
      for (const name of strays) await rm(path.join(bundle, name), { force: true });
    }
  }, 60_000);

  it("the bundled CLI needs no package but its dependencies: every one it requires is in dependencies", async () => {
    const { dependencies = {}, devDependencies = {} } = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as Record<string, Record<string, string>>;
    const builtins = new Set(builtinModules);
    const required = new Set<string>();
    for (const bundle of ["dist/bundle/cli.cjs", "dist/bundle/load-worker.js"]) {
      const text = await readFile(path.join(ROOT, bundle), "utf8");
      for (const [, name] of text.matchAll(/\brequire\(["']([^"'./][^"']*)["']\)|\bfrom\s*["']([^"'./][^"']*)["']/g)) {
        if (name === undefined || name.startsWith("node:") || builtins.has(name)) continue;
        required.add(name.startsWith("@") ? name.split("/").slice(0, 2).join("/") : name.split("/")[0]!);
      }
    }
    expect([...required].sort()).toEqual(["pg", "prom-client"]);
    for (const name of required) expect(Object.keys(dependencies)).toContain(name);
    // What the bundle holds is only needed to build it.
    for (const name of ["chalk", "commander", "ora", "yaml", "zod"]) expect(Object.keys(devDependencies)).toContain(name);
  });

  it("the bundled CLI is minified, in lines short enough to show in an error: V8 keeps its source, which every task's fork copies", async () => {
    const text = await readFile(path.join(ROOT, "dist/bundle/cli.cjs"), "latin1");
    // Names are kept (below), so it grows with taskq's own code: a bound against a dependency or a copy bundled by mistake
    // (each is tens of KB or more), not against a message or a check more; about 1.0 MB at 1,563 tests, 1.16 MB at 1,994,
    // 1.22 MB at ~2,140 (the loader's messages for invisible characters and full-width colons, GitHub Actions' commands).
    expect(text.length).toBeLessThan(1_300_000);
    const longest = Math.max(...text.split("\n").map((line) => line.length));
    expect(longest).toBeLessThan(1_000);
    // Names are kept: a --verbose stack trace names taskq's own functions.
    expect(text).toContain("function createShellHandler(");
  });

  it("the build is the same wherever it is made: the bundle and its map name no folder of this machine", async () => {
    for (const file of ["dist/bundle/cli.cjs", "dist/bundle/cli.cjs.map", "dist/bundle/load-worker.js", "dist/bundle/load-worker.js.map"]) {
      const text = await readFile(path.join(ROOT, file), "utf8");
      expect({ file, at: text.indexOf(ROOT) }).toEqual({ file, at: -1 });
    }
  });

  it("a copy without node_modules runs workflows, and its durable commands say which package is missing, not that taskq has a bug", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-bare-"));
    try {
      for (const part of ["bin", "package.json", "dist/bundle"]) await cp(path.join(ROOT, part), path.join(dir, part), { recursive: true });
      await writeFile(path.join(dir, "flow.yaml"), "tasks:\n  hello: { run: echo hi }\n");
      const bin = path.join(dir, "bin/taskq.cjs");
      const env = { ...process.env, CI: "true", NO_COLOR: "1", TASKQ_STORE: "" };
      const local = await run(bin, ["run", "flow.yaml", "--log-dir", "logs"], { cwd: dir, env });
      expect(local.stdout).toContain("hello | hi\n");
      const durable = await run(bin, ["status", "r", "--store", "postgres://nobody@127.0.0.1:1/none"], { cwd: dir, env }).catch((error: unknown) => error as { code: number; stdout: string; stderr: string });
      expect(durable).toMatchObject({
        code: 1,
        stdout: "",
        stderr: "taskq: the durable mode needs the package pg, which is not installed where taskq is: run npm install in taskq's folder (or npm install pg)\n",
      });
      // With every package but prom-client: the commands that run tasks (worker, run --store) say so before they open the store.
      await mkdir(path.join(dir, "node_modules"));
      for (const name of await readdir(path.join(ROOT, "node_modules"))) {
        if (name !== "prom-client" && name !== ".bin") await symlink(path.join(ROOT, "node_modules", name), path.join(dir, "node_modules", name));
      }
      const store = ["--store", "postgres://nobody@127.0.0.1:1/none"];
      for (const args of [["worker", ...store], ["run", "flow.yaml", ...store]]) {
        const missing = await run(bin, [...args, "--log-dir", "logs"], { cwd: dir, env }).catch((error: unknown) => error as { code: number; stdout: string; stderr: string });
        expect(missing, args[0]).toMatchObject({
          code: 1,
          stderr: expect.stringContaining("taskq: the durable mode needs the package prom-client, which is not installed where taskq is: run npm install in taskq's folder (or npm install prom-client)\n") as string,
        });
      }
      // One that only reads the store needs no prom-client: it gets as far as the connection.
      const status = await run(bin, ["status", "r", ...store], { cwd: dir, env }).catch((error: unknown) => error as { code: number; stderr: string });
      expect(status.stderr).not.toContain("prom-client");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('import("taskq") and require("taskq") give the engine, which runs a task', async () => {
    const program = (load: string) =>
      `${load}.then(({ Queue }) => { const queue = new Queue({ concurrency: 1, handlers: { double: async (n) => n * 2 } });` +
      ` const id = queue.submit({ type: "double", payload: 21 }); queue.start();` +
      ` return queue.wait(id).then((r) => { console.log(r.status, r.value); return queue.shutdown({ drain: true }); }); })`;
    const esm = await run(process.execPath, ["--input-type=module", "-e", program('import("taskq")')], { cwd: ROOT });
    expect(esm).toMatchObject({ stdout: "SUCCEEDED 42\n", stderr: "" });
    const cjs = await run(process.execPath, ["-e", program('Promise.resolve(require("taskq"))')], { cwd: ROOT });
    expect(cjs).toMatchObject({ stdout: "SUCCEEDED 42\n", stderr: "" });
  });

  it("a strict TypeScript project (exactOptionalPropertyTypes, nodenext) compiles the README's example, and options passed on from optional settings", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-types-"));
    try {
      await mkdir(path.join(dir, "node_modules"));
      await symlink(ROOT, path.join(dir, "node_modules/taskq"));
      const readme = await readFile(path.join(ROOT, "README.md"), "utf8");
      const example = /## The library[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(example).toContain("new Queue(");
      await writeFile(path.join(dir, "readme.ts"), example!);
      await writeFile(
        path.join(dir, "optional.ts"),
        [
          'import { Queue, exponentialBackoff, type ShutdownOptions, type TaskSpec } from "taskq";',
          "interface Settings { id?: string; timeoutMs?: number; runAt?: Date; signal?: AbortSignal; concurrency?: number; baseMs?: number; drain?: boolean }",
          "declare const settings: Settings;",
          "const queue = new Queue({ concurrency: settings.concurrency, backoff: exponentialBackoff({ baseMs: settings.baseMs }), handlers: { echo: async (text: string) => text } });",
          'const spec: TaskSpec<string> = { id: settings.id, type: "echo", payload: "hi", timeoutMs: settings.timeoutMs, runAt: settings.runAt };',
          "const id = queue.submit(spec);",
          "await queue.wait(id, { signal: settings.signal });",
          "const options: ShutdownOptions = { drain: settings.drain, deadline: settings.runAt, signal: settings.signal };",
          "await queue.shutdown(options);",
          "",
        ].join("\n"),
      );
      await writeFile(path.join(dir, "package.json"), '{ "type": "module" }\n');
      const compilerOptions = {
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        target: "ES2022",
        module: "nodenext",
        moduleResolution: "nodenext",
        types: ["node"],
        typeRoots: [path.join(ROOT, "node_modules/@types")],
      };
      await writeFile(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["readme.ts", "optional.ts"] }));
      const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
      const result = await run(process.execPath, [tsc, "-p", dir], { cwd: dir }).catch((error: unknown) => error as { stdout: string });
      expect(result.stdout).toBe("");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("its JSON Schema resolves by the package's name, for tools that validate workflows with it", async () => {
    const resolved = await run(process.execPath, ["-p", 'require.resolve("taskq/schema/workflow.schema.json")'], { cwd: ROOT });
    expect(resolved).toMatchObject({ stdout: `${path.join(ROOT, "schema/workflow.schema.json")}\n`, stderr: "" });
    const program = 'import schema from "taskq/schema/workflow.schema.json" with { type: "json" }; console.log(schema.title);';
    const imported = await run(process.execPath, ["--no-warnings", "--input-type=module", "-e", program], { cwd: ROOT });
    expect(imported).toMatchObject({ stdout: "taskq workflow\n", stderr: "" });
  });
});
