import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, workspace } from "../helpers/cli.js";

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

  it("its sample workflow is valid and has no runAt that the passing of time makes a past one; its --dry-run row names every field of a planned record", async () => {
    const text = await readme();
    const sample = /## A workflow file\n+```yaml\n([\s\S]*?)```/.exec(text)?.[1] ?? "";
    expect(sample).toContain("tasks:");
    const ws = await workspace(sample);
    const validated = await runCli(["validate", ws.file, "--output", "json"], { cwd: ws.dir });
    expect(validated.code).toBe(0);
    const records = validated.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; message?: string });
    expect(records.filter((record) => record.event === "note" && /runAt/.test(record.message ?? ""))).toEqual([]);
    const plan = await runCli(["run", ws.file, "--dry-run", "--output", "json"], { cwd: ws.dir });
    const fields = new Set(plan.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.event === "planned").flatMap((record) => Object.keys(record)));
    const row = text.split("\n").find((line) => line.startsWith("| `--dry-run` |")) ?? "";
    expect([...fields].filter((field) => field !== "ts" && field !== "event" && !row.includes(`\`${field}\``))).toEqual([]);
  });

  it("every file and folder of the project it names is there, and its layout names every top-level folder", async () => {
    const text = await readme();
    // Paths in the project's folders; bin/sh and the like in commands are the system's, not ours.
    const named = [...text.matchAll(/(?<![\w/.])((?:bin|bench|dist|schema|scripts|src|test|workflows)\/[\w./-]*[\w/])/g)].map((match) => match[1]!);
    const ours = named.filter((name) => !/^bin\/(?:sh|bash|env)$/.test(name) && !name.startsWith("dist/"));
    expect(ours.filter((name) => !existsSync(path.join(ROOT, name)))).toEqual([]);
    const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(text)?.[1] ?? "";
    const folders = (await readdir(ROOT, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith(".") && !["node_modules", "dist", "coverage"].includes(entry.name))
      .map((entry) => `${entry.name}/`);
    expect(folders.filter((folder) => !layout.split("\n").some((line) => line.startsWith(folder)))).toEqual([]);
  });

  it("quotes the words a run says of a task, or a process it left, that only the kill grace's SIGKILL stopped, as the run says them", { timeout: 60_000 }, async () => {
    const ws = await workspace(
      [
        "tasks:",
        "  stubborn: { run: \"trap '' TERM; sleep 30\", timeout: 300ms }",
        "  left: { run: \"sh -c \\\"trap '' TERM; exec sleep 30\\\" & sleep 31 & sleep 0.2\" }",
        "",
      ].join("\n"),
    );
    const result = await runCli(["run", ws.file, "--output", "plain", "--kill-grace", "1s", "--log-dir", ws.logs], { cwd: ws.dir });
    // What follows "after the kill grace (1s)" in the run's words, quoted in the README for the default grace, 5s.
    const timedOut = /timed out after 300ms; killed with SIGKILL after the kill grace \(1s\)(: [^\n(]*)\n/.exec(result.stdout)?.[1];
    const leftover = /left: stopped 2 processes it left running(; 1 [^;]*?) killed after the kill grace \(1s\)/.exec(result.stdout)?.[1];
    expect(timedOut).toBeDefined();
    expect(leftover).toBeDefined();
    const text = (await readme()).replace(/\s*\n\s*/g, " ");
    const timedOutWords = `\`timed out after 1s; killed with SIGKILL after the kill grace (5s)${timedOut}\``;
    expect(text.includes(timedOutWords), timedOutWords).toBe(true);
    // As the README's example: two processes left, one of them stopped by the SIGKILL.
    const leftoverWords = `\`${leftover} killed after the kill grace (5s)\``;
    expect(text.includes(leftoverWords), leftoverWords).toBe(true);
  });

  it("the default log folder is ignored by git here, and the README tells users to ignore it too", async () => {
    expect((await readFile(path.join(ROOT, ".gitignore"), "utf8")).split("\n")).toContain(".taskq/");
    expect(await readme()).toMatch(/add `\.taskq\/` to your\s+project's `\.gitignore`/);
  });
});
