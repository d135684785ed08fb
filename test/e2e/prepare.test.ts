import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

const run = promisify(execFile);

// `npm install` builds a checkout (package.json's `prepare`); so does the first `npx taskq` in it, which
// installs the checkout into npm's npx cache. The second build is skipped when nothing it reads changed.
describe("npm install's build of a checkout (prepare)", () => {
  it("is skipped where dist/ was built from the same sources, and builds again once a source changed: the CLI then says what the source says, and the benchmarks refuse the stale build until then", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-prepare-"));
    try {
      for (const entry of ["src", "scripts", "bench", "bin", "dist", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"]) {
        await cp(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
      }
      await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
      const bundle = path.join(dir, "dist/bundle/cli.cjs");
      const copied = (await stat(bundle)).mtimeMs;
      const skipped = await run("npm", ["run", "prepare"], { cwd: dir });
      expect(skipped.stderr).toContain("taskq: dist/ is built from these sources already; `npm run build` builds it again");
      expect((await stat(bundle)).mtimeMs).toBe(copied);

      const program = path.join(dir, "src/cli/program.ts");
      const source = await readFile(program, "utf8");
      expect(source).toContain('"Run a DAG of shell tasks described in a YAML file."');
      await writeFile(program, source.replace('"Run a DAG of shell tasks described in a YAML file."', '"Runs an edited DAG."'));
      // A benchmark of this dist/ would measure code the checkout no longer holds: refused, nothing measured.
      const bin = path.join(dir, "bin/taskq.cjs");
      const refused = await run(process.execPath, ["bench/ab-startup.js", bin, "1"], { cwd: dir }).then(
        () => undefined,
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(refused?.code).toBe(2);
      expect(refused?.stderr).toContain(`bench: ${path.join(dir, "dist")} is not built from the sources in ${dir}`);
      expect(refused?.stdout).toBe("");
      const built = await run("npm", ["run", "prepare"], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
      expect(built.stderr).not.toContain("built from these sources already");
      const help = await run(process.execPath, ["bin/taskq.cjs", "--help"], { cwd: dir });
      expect(help.stdout).toContain("Runs an edited DAG.");
      // Built again, it is measured.
      const measured = await run(process.execPath, ["bench/ab-startup.js", bin, "1"], { cwd: dir });
      expect(measured.stdout).toMatch(/^run \(this\) .* ms/m);

      // Built, it is up to date again.
      const again = await run("npm", ["run", "prepare"], { cwd: dir });
      expect(again.stderr).toContain("built from these sources already");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
