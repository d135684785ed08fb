import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

// What a new user copies from the README: it has to work as written.
const ROOT = path.resolve(import.meta.dirname, "../..");
const readme = () => readFile(path.join(ROOT, "README.md"), "utf8");

describe("README", () => {
  it("the systemd unit gives the worker a log folder it can write: --log-dir /var/log/taskq, made by LogsDirectory=taskq", async () => {
    const unit = /```ini\n([\s\S]*?)```/.exec(await readme())?.[1] ?? "";
    expect(unit).toMatch(/^ *ExecStart=\S*taskq worker .*--log-dir \/var\/log\/taskq\b/m);
    expect(unit).toMatch(/^ *LogsDirectory=taskq$/m);
  });

  it("names every dependency and devDependency in a table row that says why it is there", async () => {
    const text = await readme();
    const pkg = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const rows = text.split("\n").filter((line) => /^\| [^-|]/.test(line));
    const unexplained = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)].filter(
      (name) => !rows.some((row) => {
        const [, packages = "", why = ""] = row.split("|").map((cell) => cell.trim());
        return packages.split(/,\s*/).includes(name) && why.length > 10;
      }),
    );
    expect(unexplained).toEqual([]);
  });
});
