import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { holdLogFolder, pruneLogFolders } from "../../src/cli/log-folders.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function root(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "taskq-log-folders-"));
  dirs.push(dir);
  return dir;
}

describe("holdLogFolder", () => {
  it("marks the folder while any holder holds it (a worker's tasks of one run overlap); each release counts once", () => {
    const runDir = path.join(root(), "nightly-1");
    const marker = path.join(runDir, `.taskq-active-${process.pid}`);
    const first = holdLogFolder(runDir); // makes the folder, as a worker's first task of a run needs
    // The host's name, then this process's start time (a pid alone may be another process's by the time prune looks).
    expect(readFileSync(marker, "utf8")).toMatch(new RegExp(`^${hostname()}\\n\\d+\\n$`));
    writeFileSync(path.join(runDir, "build.log"), "output\n");
    const second = holdLogFolder(runDir);
    first();
    first(); // a second call of the same release does not take the other holder's
    expect(existsSync(marker)).toBe(true);
    expect(pruneLogFolders(path.dirname(runDir), 0, { dryRun: true, now: Date.now() + 60_000 }).runs).toEqual([]);
    second();
    expect(existsSync(marker)).toBe(false);
    expect(pruneLogFolders(path.dirname(runDir), 0, { dryRun: true, now: Date.now() + 60_000 }).runs).toEqual(["nightly-1"]);
  });

  it("with a linger, keeps the marker a while after the last release, and a hold meanwhile keeps it for good", async () => {
    const runDir = path.join(root(), "nightly-2");
    const marker = path.join(runDir, `.taskq-active-${process.pid}`);
    holdLogFolder(runDir, 100)();
    expect(existsSync(marker)).toBe(true);
    const again = holdLogFolder(runDir, 100);
    await delay(250);
    expect(existsSync(marker)).toBe(true); // held again before the linger ended
    again();
    expect(existsSync(marker)).toBe(true);
    await delay(250);
    expect(existsSync(marker)).toBe(false);
  });

  it("neither holding nor releasing throws where the folder cannot be made (the task's log open then fails, saying why)", () => {
    const file = path.join(root(), "a-file");
    writeFileSync(file, "");
    let release = (): void => undefined;
    expect(() => (release = holdLogFolder(path.join(file, "run")))).not.toThrow();
    expect(() => release()).not.toThrow();
    expect(existsSync(path.join(file, "run"))).toBe(false);
  });
});
