import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadWorkflow, MAX_FILE_BYTES, parseWorkflow, WorkflowError } from "../../src/loaders/index.js";
import { ROOT } from "../helpers/cli.js";
import { bestOfAlternating } from "../helpers/timing.js";

const folder = mkdtempSync(join(tmpdir(), "taskq-loader-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function problemsOfFile(file: string): Promise<string[]> {
  const error: unknown = await loadWorkflow(file).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(WorkflowError);
  expect((error as WorkflowError).exitCode).toBe(2);
  return (error as WorkflowError).message.split("\n");
}

describe("loadWorkflow", () => {
  it("reads a file, resolving cwd against the file's folder while messages keep the path as given", async () => {
    mkdirSync(join(folder, "ci"));
    writeFileSync(join(folder, "ci", "pipeline.yaml"), "tasks:\n  build: { run: make, cwd: src }\n  bad: { run: make, retries: -1 }\n");
    const given = relative(process.cwd(), join(folder, "ci", "pipeline.yaml"));
    expect(await problemsOfFile(given)).toEqual([`${given}:3:30: task "bad": \`retries\` must be an integer from 0 to 100, got -1`]);
    writeFileSync(join(folder, "ci", "pipeline.yaml"), "tasks:\n  build: { run: make, cwd: src }\n");
    const workflow = await loadWorkflow(given);
    expect(workflow.file).toBe(given);
    expect(workflow.tasks[0]!.cwd).toBe(join(folder, "ci", "src"));
  });

  it("reports a missing file at 1:1 with exit code 2", async () => {
    expect(await problemsOfFile(join(folder, "nope.yaml"))).toEqual([`${join(folder, "nope.yaml")}:1:1: cannot read file: no such file (ENOENT)`]);
  });

  it("reports a directory", async () => {
    const empty = join(folder, "no-workflows");
    mkdirSync(empty);
    expect(await problemsOfFile(empty)).toEqual([`${empty}:1:1: cannot read file: it is a directory; give a workflow file, not a folder`]);
  });

  it("says why a path cannot be read in the system's words, once, and names a socket as one", async () => {
    const loop = join(folder, "loop.yaml");
    symlinkSync(loop, loop);
    expect(await problemsOfFile(loop)).toEqual([`${loop}:1:1: cannot read file: too many symbolic links encountered (ELOOP)`]);
    const socket = join(folder, "taskq.sock");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(await problemsOfFile(socket)).toEqual([`${socket}:1:1: cannot read file: it is a socket`]);
    } finally {
      server.close();
    }
  });

  it("rejects a file over the size limit from its size alone, without reading it", async () => {
    const huge = join(folder, "huge.yaml");
    writeFileSync(huge, "");
    truncateSync(huge, MAX_FILE_BYTES + 1); // sparse: costs no disk space
    // Bytes this process read (its test file runs alone in it): a sparse file reads fast, so time could not tell.
    const bytesRead = (): number => Number(/^rchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "latin1"))![1]);
    const before = bytesRead();
    expect(await problemsOfFile(huge)).toEqual([`${huge}:1:1: the file is 67,108,865 bytes; the limit is 67,108,864 bytes (64 MiB)`]);
    expect(bytesRead() - before).toBeLessThan(1024 * 1024);
  });
});

describe("loading yaml", () => {
  /**
   * The packages `taskq <args>` loads, seen by a resolve hook on the unbundled build
   * (dist/cli/main.js), whose lazy imports are the bundle's (see bench/startup.js).
   */
  function packagesLoaded(args: string[]): { code: number | null; stdout: string; packages: string[] } {
    const hook = `export async function resolve(s, c, n) { const r = await n(s, c); process._rawDebug("LOADED " + r.url); return r; }`;
    const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
    const result = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(register)}`, join(ROOT, "dist/cli/main.js"), ...args], { cwd: folder, encoding: "utf8" });
    const packages = new Set<string>();
    for (const line of result.stderr.split("\n")) {
      const match = /^LOADED file:\/\/.*?\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
      if (match) packages.add(match[1]!);
    }
    return { code: result.status, stdout: result.stdout, packages: [...packages].sort() };
  }

  // Five runs of the CLI: 12 s at load 13 on two cores, a third of the default limit: given 120 s.
  it("waits for a file the fast reader declines: a run or validate of a plain file does without it", () => {
    writeFileSync(join(folder, "plain.yaml"), 'tasks:\n  a: { run: "true" }\n  b: { run: "true", dependsOn: a }\n');
    writeFileSync(join(folder, "anchor.yaml"), 'tasks:\n  a: { run: "true", env: &e { A: "1" } }\n  b: { run: "true", dependsOn: a, env: *e }\n');
    writeFileSync(join(folder, "merge.yaml"), 'x-base: &base { retries: 1 }\ntasks:\n  a: { <<: *base, run: "true" }\n  b:\n    <<: *base\n    run: "true"\n');
    writeFileSync(join(folder, "wrong.yaml"), 'tasks:\n  a: { run: "true", retries: -1 }\n');
    const plain = packagesLoaded(["validate", "plain.yaml"]);
    expect(plain).toMatchObject({ code: 0, stdout: "plain.yaml: ok, 2 tasks\n" });
    expect(plain.packages).not.toContain("yaml");
    expect(plain.packages).toContain("zod");
    const run = packagesLoaded(["run", "plain.yaml", "--output", "plain", "--log-dir", join(folder, "logs")]);
    expect(run.code).toBe(0);
    expect(run.packages).not.toContain("yaml");
    // A merge key of an anchored mapping (<<: *base) is read without it too.
    expect(packagesLoaded(["validate", "merge.yaml"])).toMatchObject({ code: 0, stdout: "merge.yaml: ok, 2 tasks\n", packages: expect.not.arrayContaining(["yaml"]) });
    // An alias other than a merge key's (the fast reader declines it) and a problem (its position comes from yaml's document) load it.
    expect(packagesLoaded(["validate", "anchor.yaml"])).toMatchObject({ code: 0, stdout: "anchor.yaml: ok, 2 tasks\n", packages: expect.arrayContaining(["yaml"]) });
    expect(packagesLoaded(["validate", "wrong.yaml"])).toMatchObject({ code: 2, packages: expect.arrayContaining(["yaml"]) });
  }, 120_000);
});

describe("notes on what this machine's /bin/sh refuses", () => {
  const refusesDoubleBracket = spawnSync("/bin/sh", ["-c", "[[ 1 ]]"], { stdio: "ignore" }).status !== 0;

  // 8.5 s at load 13 on two cores, a third of the default limit: given 120 s.
  it.skipIf(!refusesDoubleBracket)("gives a note on bash's [[ in each of many tasks in about the time of another note on each", () => {
    // Each note resolved /bin/sh's link again for its name, `/bin/sh (dash)`: 10,000 such notes took a third of validating the file.
    const tasks = (run: string): string => `tasks:\n${Array.from({ length: 3000 }, (_, index) => `  t${index}:\n    run: ${run}\n`).join("")}`;
    const bashism = tasks("echo a && [[ -f x ]]");
    const comment = tasks('echo "issue #42 fixed"');
    const parse = (text: string) => parseWorkflow(text, join(folder, "notes.yaml"), { checkShell: true });
    expect(parse(bashism).notes).toHaveLength(3000);
    expect(parse(bashism).notes[0]).toMatch(/:3:10: task "t0": run has \[\[ -f x \]\], bash's test syntax, which \/bin\/sh.* here does not have/);
    expect(parse(comment).notes).toHaveLength(3000);
    // Side by side, best of five rounds alternating: 1.1-1.3x now, 3-4x before.
    const [bashismMs, commentMs] = bestOfAlternating(1, () => parse(bashism), () => parse(comment));
    expect(bashismMs).toBeLessThan(2 * commentMs);
  }, 120_000);

  it.skipIf(spawnSync("/bin/sh", ["-c", ": <<< x"], { stdio: "ignore" }).status === 0)("gives a note on bash's here-string (<<<), which this machine's /bin/sh refuses, at the run", () => {
    const parsed = parseWorkflow("tasks:\n  t:\n    run: tee /dev/stderr <<< z\n", join(folder, "here-string.yaml"), { checkShell: true });
    expect(parsed.notes).toHaveLength(1);
    expect(parsed.notes[0]).toMatch(/here-string\.yaml:3:10: task "t": run has <<< z, bash's here-string, which \/bin\/sh.* here refuses \(a syntax error: "redirection unexpected"\)/);
  });
});
