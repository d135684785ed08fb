import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRunFolder, makeRunId } from "../../src/cli/run-folder.js";

const NOW = Date.UTC(2026, 10, 30, 7, 45, 12);

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "taskq-run-folder-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Math.random's stand-in: these values in turn, then the last one again. */
function randoms(...values: number[]): () => number {
  let index = 0;
  return () => values[Math.min(index++, values.length - 1)] ?? 0;
}

describe("run ids", () => {
  it("are the UTC time to the second and four random characters, even where the random number is short in base 36", () => {
    expect(makeRunId(NOW, () => 0)).toBe("20261130-074512-0000");
    expect(makeRunId(NOW, () => 0.5)).toBe("20261130-074512-i000");
    expect(makeRunId(NOW, () => 0.999999999)).toBe("20261130-074512-zzzz");
    expect(makeRunId(NOW, () => 1 / 36 ** 4)).toBe("20261130-074512-0001");
  });
});

describe("createRunFolder", () => {
  it("makes the log root and the run's folder in it", () => {
    const logRoot = path.join(root, "logs", "deep");
    const folder = createRunFolder(logRoot, NOW, () => 0.25);
    expect(folder).toEqual({ runId: "20261130-074512-9000", logDir: path.join(logRoot, "20261130-074512-9000") });
    expect(statSync(folder.logDir).isDirectory()).toBe(true);
  });

  it("never gives two runs of the same second the same folder, even when their random characters match", () => {
    const first = createRunFolder(root, NOW, randoms(0.25));
    writeFileSync(path.join(first.logDir, "build.log"), "first run's output\n");
    const second = createRunFolder(root, NOW, randoms(0.25, 0.25, 0.75));
    expect(second.runId).toBe("20261130-074512-r000");
    expect(readdirSync(root).sort()).toEqual(["20261130-074512-9000", "20261130-074512-r000"]);
    expect(readdirSync(second.logDir)).toEqual([]);
  });

  it("gives up with the folder's path and the reason, where every id it tries is taken", () => {
    mkdirSync(path.join(root, "20261130-074512-9000"));
    expect(() => createRunFolder(root, NOW, () => 0.25)).toThrow(
      `cannot create the log folder ${path.join(root, "20261130-074512-9000")}: it is there, as were the 31 tried before it (EEXIST)`,
    );
  });

  it("says why the log root cannot be made, in words: a file in the way", () => {
    const file = path.join(root, "file");
    writeFileSync(file, "");
    expect(() => createRunFolder(path.join(file, "logs"), NOW, () => 0.25)).toThrow(
      expect.objectContaining({ code: "LOG_DIR", message: `cannot create the log folder ${path.join(file, "logs", "20261130-074512-9000")}: ${file} is not a folder (ENOTDIR)` }),
    );
  });

  it("says why the log root cannot be made, in words: a symbolic link that leads nowhere (which mkdir calls EEXIST)", () => {
    const link = path.join(root, "logs");
    symlinkSync(path.join(root, "gone", "logs"), link);
    expect(() => createRunFolder(link, NOW, () => 0.25)).toThrow(
      `cannot create the log folder ${path.join(link, "20261130-074512-9000")}: ${link} is a symbolic link to ${path.join(root, "gone", "logs")}, which does not exist (EEXIST)`,
    );
    expect(() => createRunFolder(path.join(link, "deeper"), NOW, () => 0.25)).toThrow(`: ${link} is a symbolic link to ${path.join(root, "gone", "logs")}, which does not exist (EEXIST)`);
  });

  it("says why the log root cannot be made, in words: a read-only file system", (context) => {
    const mountPoint = path.join(root, "ro");
    mkdirSync(mountPoint);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", mountPoint], { stdio: "ignore" });
    } catch {
      context.skip("cannot mount a read-only tmpfs here (needs root and mount rights)");
    }
    try {
      expect(() => createRunFolder(path.join(mountPoint, "logs"), NOW, () => 0.25)).toThrow(
        `cannot create the log folder ${path.join(mountPoint, "logs", "20261130-074512-9000")}: the file system is read-only (EROFS)`,
      );
    } finally {
      execFileSync("umount", [mountPoint], { stdio: "ignore" });
    }
  });
});
