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
});
