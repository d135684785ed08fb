import { statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeDirectory } from "../src/make-directory.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "taskq-mkdir-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("makeDirectory", () => {
  it("makes a folder and every one missing above it; one already there is fine", () => {
    const deep = path.join(root, "a", "b", "c");
    makeDirectory(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    makeDirectory(deep);
    makeDirectory(path.join(root, "a"));
    expect(statSync(deep).isDirectory()).toBe(true);
  });

  it("refuses a file in the way, as ENOTDIR, whether it is the folder itself or above it", () => {
    const file = path.join(root, "file");
    writeFileSync(file, "");
    expect(() => makeDirectory(file)).toThrow(expect.objectContaining({ code: "ENOTDIR" }));
    expect(() => makeDirectory(path.join(file, "below"))).toThrow(expect.objectContaining({ code: "ENOTDIR" }));
  });
});
