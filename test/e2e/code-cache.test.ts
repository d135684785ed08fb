import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

/**
 * bin/taskq.cjs loads dist/bundle/cli.cjs with V8's code cache (cli.cjs.cache). These tests
 * run a copy of the installed layout (bin, dist/bundle, package.json) so they can break its
 * cache without touching the build the other tests use.
 */
let install: string;
let bin: string;
let cache: string;
let workflow: string;

/** `nodeArgs`: node flags before the script, as `node --expose-gc bin/taskq.cjs` takes them. */
function taskq(args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []) {
  const result = spawnSync(process.execPath, [...nodeArgs, bin, ...args], {
    cwd: install,
    encoding: "utf8",
    // No NODE_OPTIONS but a test's: they are node flags too, with a cache of their own.
    env: { ...process.env, CI: "true", NO_COLOR: "1", NODE_OPTIONS: "", ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  install = mkdtempSync(path.join(tmpdir(), "taskq-code-cache-"));
  mkdirSync(path.join(install, "bin"));
  mkdirSync(path.join(install, "dist/bundle"), { recursive: true });
  cpSync(path.join(ROOT, "bin/taskq.cjs"), path.join(install, "bin/taskq.cjs"));
  cpSync(path.join(ROOT, "package.json"), path.join(install, "package.json"));
  cpSync(path.join(ROOT, "dist/bundle/cli.cjs"), path.join(install, "dist/bundle/cli.cjs"));
  symlinkSync(path.join(ROOT, "node_modules"), path.join(install, "node_modules"));
  bin = path.join(install, "bin/taskq.cjs");
  cache = path.join(install, "dist/bundle/cli.cjs.cache");
  workflow = path.join(install, "workflow.yaml");
  writeFileSync(workflow, 'tasks:\n  a: { run: "echo hello" }\n  b: { run: "true", dependsOn: a }\n');
});

afterAll(() => rmSync(install, { recursive: true, force: true }));

/** Puts the cache's mtime in the past (the bundle's further back), so a rewrite shows. */
function age(file: string): number {
  const bundlePast = new Date(Date.now() - 7_200_000);
  utimesSync(path.join(install, "dist/bundle/cli.cjs"), bundlePast, bundlePast);
  const past = new Date(Date.now() - 3_600_000);
  utimesSync(file, past, past);
  return statSync(file).mtimeMs;
}

describe("the code cache", () => {
  it("is written by the first run when missing, and then used as it is", () => {
    rmSync(cache, { force: true });
    expect(taskq(["validate", workflow])).toEqual({ code: 0, stdout: `${workflow}: ok, 2 tasks\n`, stderr: "" });
    expect(statSync(cache).size).toBeGreaterThan(10_000);
    const written = age(cache);
    expect(taskq(["validate", workflow]).code).toBe(0);
    // V8 accepted it: nothing was rewritten.
    expect(statSync(cache).mtimeMs).toBe(written);
  });

  // spawnSync: a timeout is only seen once a call returns; five calls on a loaded machine.
  it("from another Node (or garbage) is ignored without a word, and replaced", { timeout: 90_000 }, () => {
    writeFileSync(cache, Buffer.alloc(4096, 7));
    const result = taskq(["run", workflow, "--output", "plain", "--log-dir", path.join(install, "logs")]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("a | hello");
    expect(result.stdout).toContain("2 succeeded");
    const replaced = readFileSync(cache);
    expect(replaced.equals(Buffer.alloc(4096, 7))).toBe(false);
    const written = age(cache);
    expect(taskq(["validate", workflow]).code).toBe(0);
    expect(statSync(cache).mtimeMs).toBe(written);
    // `run` of a file over 4 KiB changes V8 flags as it starts (src/cli/small-heap.ts): the
    // cache it then writes must still fit the next start. The size is what counts: a long
    // comment, not 200 tasks (200 spawns, up to 18 s on a loaded machine).
    const many = path.join(install, "many.yaml");
    writeFileSync(many, `${"# padding\n".repeat(600)}tasks:\n  one: { run: "true" }\n  two: { run: "true" }\n`);
    writeFileSync(cache, Buffer.alloc(4096, 7));
    expect(taskq(["run", many, "--output", "plain", "--log-dir", path.join(install, "logs")]).code).toBe(0);
    expect(readFileSync(cache).equals(Buffer.alloc(4096, 7))).toBe(false);
    const rewritten = age(cache);
    expect(taskq(["validate", workflow]).code).toBe(0);
    expect(statSync(cache).mtimeMs).toBe(rewritten);
  });

  it("written by another command (validate) is written again by the next run that runs its tasks, and then used as it is", () => {
    rmSync(cache, { force: true });
    const logs = path.join(install, "logs");
    expect(taskq(["validate", workflow]).code).toBe(0);
    const byValidate = statSync(cache).size;
    let written = age(cache);
    // A run stopped by its file's problems (exit 2) and a dry run run no task: they leave it.
    const bad = path.join(install, "bad.yaml");
    writeFileSync(bad, "tasks:\n  a: { run: x, retires: 1 }\n");
    expect(taskq(["run", bad]).code).toBe(2);
    expect(taskq(["run", workflow, "--dry-run"]).code).toBe(0);
    expect(statSync(cache).mtimeMs).toBe(written);
    // The engine, the shell handler and the renderer: what validate never compiled.
    expect(taskq(["run", workflow, "--output", "plain", "--log-dir", logs]).code).toBe(0);
    expect(statSync(cache).mtimeMs).toBeGreaterThan(written);
    expect(statSync(cache).size).toBeGreaterThan(byValidate);
    written = age(cache);
    expect(taskq(["run", workflow, "--output", "plain", "--log-dir", logs]).code).toBe(0);
    expect(taskq(["validate", workflow]).code).toBe(0);
    expect(statSync(cache).mtimeMs).toBe(written);
  });

  it("of a run under node flags of its own is kept beside the build's, which stays as it is for runs without them", () => {
    const bundleDir = path.join(install, "dist/bundle");
    const ownCaches = (): string[] => readdirSync(bundleDir).filter((name) => name.startsWith("cli.cjs.cache-"));
    for (const name of ownCaches()) rmSync(path.join(bundleDir, name));
    rmSync(cache, { force: true });
    expect(taskq(["validate", workflow]).code).toBe(0);
    const before = readFileSync(cache);
    const written = age(cache);
    // --max-old-space-size is a V8 flag: V8 rejects the build's cache under it.
    const flagged = taskq(["run", workflow, "--output", "plain", "--log-dir", path.join(install, "logs")], {}, ["--max-old-space-size=200"]);
    expect(flagged.code).toBe(0);
    expect(flagged.stdout).toContain("2 succeeded");
    expect(readFileSync(cache).equals(before)).toBe(true);
    expect(statSync(cache).mtimeMs).toBe(written);
    expect(ownCaches()).toHaveLength(1);
    // Each is used as it is by the runs it is for: none is written again.
    const own = path.join(bundleDir, ownCaches()[0]!);
    const ownWritten = age(own);
    expect(taskq(["validate", workflow], {}, ["--max-old-space-size=200"]).code).toBe(0);
    expect(taskq(["validate", workflow]).code).toBe(0);
    expect(statSync(own).mtimeMs).toBe(ownWritten);
    expect(statSync(cache).mtimeMs).toBe(written);
    // Flags in NODE_OPTIONS count too; --v8-pool-size, which bin/taskq.cjs gives node itself, does not.
    expect(taskq(["validate", workflow], { NODE_OPTIONS: "--max-old-space-size=300" }).code).toBe(0);
    expect(ownCaches()).toHaveLength(2);
    expect(taskq(["validate", workflow], {}, ["--v8-pool-size=1"]).code).toBe(0);
    expect(ownCaches()).toHaveLength(2);
    expect(statSync(cache).mtimeMs).toBe(written);
    expect(readFileSync(cache).equals(before)).toBe(true);
    for (const name of ownCaches()) rmSync(path.join(bundleDir, name));
  });

  it("older than the bundle but made from it (as npm installs them) is used as it is", () => {
    taskq(["validate", workflow]);
    const made = age(cache);
    // npm gives installed files their install time, in no set order: the bundle may be newer.
    const now = new Date();
    utimesSync(path.join(install, "dist/bundle/cli.cjs"), now, now);
    const before = readFileSync(cache);
    expect(taskq(["validate", workflow])).toEqual({ code: 0, stdout: `${workflow}: ok, 2 tasks\n`, stderr: "" });
    // Used, not rewritten; only its time moves past the bundle's, so later runs skip the hash.
    expect(readFileSync(cache).equals(before)).toBe(true);
    expect(statSync(cache).mtimeMs).toBeGreaterThan(made);
    expect(statSync(cache).mtimeMs).toBeGreaterThanOrEqual(statSync(path.join(install, "dist/bundle/cli.cjs")).mtimeMs);
  });

  it("of other code (an edited or half-updated dist/) is not used, and is replaced", () => {
    taskq(["validate", workflow]);
    const stale = age(cache);
    const bundle = path.join(install, "dist/bundle/cli.cjs");
    // Same length, different code: V8 alone would take the cache for this source.
    const source = readFileSync(bundle, "utf8");
    // esbuild cuts long lines, inside a string too (a backslash and a line break), wherever the line's length falls.
    const edited = source.replace(/file is empty; (\\\n)?a workflow needs/, (text) => text.replace("empty", "EMPTY"));
    expect(edited).not.toBe(source);
    expect(edited.length).toBe(source.length);
    writeFileSync(bundle, edited);
    try {
      writeFileSync(path.join(install, "empty.yaml"), "");
      const result = taskq(["validate", path.join(install, "empty.yaml")]);
      expect(result.stderr).toContain("file is EMPTY");
      expect(statSync(cache).mtimeMs).toBeGreaterThan(stale);
    } finally {
      writeFileSync(bundle, source);
    }
  });

  // Run as root here (as CI is): another user cannot write the install, as after `sudo npm i -g`.
  it.skipIf(process.getuid?.() !== 0)("in an install the user cannot write: works, says nothing, writes nothing", () => {
    rmSync(cache, { force: true });
    for (const entry of [install, path.join(install, "bin"), path.join(install, "dist"), path.join(install, "dist/bundle")]) chmodSync(entry, 0o755);
    for (const entry of [bin, workflow, path.join(install, "package.json"), path.join(install, "dist/bundle/cli.cjs")]) chmodSync(entry, 0o644);
    const result = spawnSync(process.execPath, [bin, "validate", workflow], { cwd: tmpdir(), encoding: "utf8", uid: 65534, gid: 65534, env: { ...process.env, CI: "true" } });
    expect({ code: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: `${workflow}: ok, 2 tasks\n`, stderr: "" });
    expect(readdirSync(path.join(install, "dist/bundle"))).toEqual(["cli.cjs"]);
  });

  // Run as root here (as CI is): root rewrites a rejected cache (after a Node upgrade, say) under a umask of 077.
  it.skipIf(process.getuid?.() !== 0)("rewritten under a strict umask, is as readable as the bundle: other users of the install still start with it", () => {
    for (const entry of [install, path.join(install, "bin"), path.join(install, "dist"), path.join(install, "dist/bundle")]) chmodSync(entry, 0o755);
    for (const entry of [bin, workflow, path.join(install, "package.json"), path.join(install, "dist/bundle/cli.cjs")]) chmodSync(entry, 0o644);
    writeFileSync(cache, Buffer.alloc(4096, 7));
    chmodSync(cache, 0o644);
    const result = spawnSync("/bin/sh", ["-c", 'umask 077; exec "$0" "$@"', process.execPath, bin, "validate", workflow], { cwd: install, encoding: "utf8", env: { ...process.env, CI: "true" } });
    expect({ code: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: `${workflow}: ok, 2 tasks\n`, stderr: "" });
    expect(readFileSync(cache).equals(Buffer.alloc(4096, 7))).toBe(false);
    expect(statSync(cache).mode & 0o777).toBe(0o644);
    const read = spawnSync(process.execPath, ["-e", "require('node:fs').readFileSync(process.argv[1])", cache], { uid: 65534, gid: 65534, encoding: "utf8" });
    expect(read.stderr).toBe("");
    expect(read.status).toBe(0);
  });

  it("is neither read nor written with TASKQ_CODE_CACHE=0", () => {
    rmSync(cache, { force: true });
    expect(taskq(["validate", workflow], { TASKQ_CODE_CACHE: "0" }).code).toBe(0);
    expect(existsSync(cache)).toBe(false);
  });

  it("keeps the lazily loaded modules working: colours (chalk) from a cached bundle", () => {
    taskq(["validate", workflow]);
    expect(existsSync(cache)).toBe(true);
    const result = taskq(["run", workflow, "--output", "plain", "--log-dir", path.join(install, "logs")], { NO_COLOR: "", FORCE_COLOR: "1" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("\u001b[");
  });

  it("a missing bundle is a clear error", () => {
    const moved = path.join(install, "dist/bundle/cli.cjs.moved");
    cpSync(path.join(install, "dist/bundle/cli.cjs"), moved);
    rmSync(path.join(install, "dist/bundle/cli.cjs"));
    try {
      const result = taskq(["validate", workflow]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/cannot read .*cli\.cjs \(ENOENT\); build it with: npm run build/);
    } finally {
      cpSync(moved, path.join(install, "dist/bundle/cli.cjs"));
    }
  });
});
