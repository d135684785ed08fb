import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { GroupList } from "../../src/handlers/group-list.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function listFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "taskq-group-list-"));
  dirs.push(dir);
  return path.join(dir, "list");
}

/** The whole file behind `fd`, read from its start, as the guard reads the descriptor it holds. */
function readHeld(fd: number): string {
  const bytes = Buffer.alloc(fstatSync(fd).size);
  for (let done = 0; done < bytes.length; ) done += readSync(fd, bytes, done, bytes.length - done, done);
  return bytes.toString("utf8");
}

/** What the guard makes of the list (a file name or text): the groups whose last line is "+" (see GUARD_SCRIPT). */
function replay(list: string, text = readFileSync(list, "utf8")): number[] {
  const live = new Set<number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("+")) live.add(Number(line.slice(1)));
    else if (line.startsWith("-")) live.delete(Number(line.slice(1)));
  }
  return [...live].sort((a, b) => a - b);
}

describe("GroupList", () => {
  it("lists a group at once and takes it off when gone (with the next group, or by the end of the turn); a pgid used again is listed again", async () => {
    const file = listFile();
    const list = new GroupList(file);
    list.add(100);
    list.add(200);
    expect(readFileSync(file, "utf8")).toBe("#taskq\n+100\n+200\n");
    list.remove(100);
    list.remove(300); // never listed: nothing written
    list.add(100);
    expect(readFileSync(file, "utf8")).toBe("#taskq\n+100\n+200\n-100\n+100\n");
    expect(replay(file)).toEqual([100, 200]);
    list.remove(200);
    list.remove(100);
    await nextTurn();
    expect(readFileSync(file, "utf8")).toBe("#taskq\n+100\n+200\n-100\n+100\n-200\n-100\n");
    expect(replay(file)).toEqual([]);
  });

  it("stays short however many groups came and went (a worker runs for weeks): written again, in place, with only the running ones", async () => {
    const file = listFile();
    const list = new GroupList(file);
    // The guard holds the file from the start: what it reads must be the compacted list, not the one it replaced.
    const held = openSync(file, "r");
    for (let pgid = 1000; pgid < 11_000; pgid++) {
      list.add(pgid);
      if (pgid % 1000 !== 0) list.remove(pgid); // every thousandth runs on
    }
    await nextTurn();
    const lines = readFileSync(file, "utf8").split("\n").length - 1;
    expect(lines).toBeLessThan(4096 + 10);
    expect(replay(file)).toEqual([1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10_000]);
    expect(existsSync(`${file}.new`)).toBe(false);
    expect(readHeld(held)).toBe(readFileSync(file, "utf8"));
    // Appends still go to the file the guard will read.
    list.remove(5000);
    await nextTurn();
    expect(replay(file)).toEqual([1000, 2000, 3000, 4000, 6000, 7000, 8000, 9000, 10_000]);
    expect(replay(file, readHeld(held))).toEqual([1000, 2000, 3000, 4000, 6000, 7000, 8000, 9000, 10_000]);
    closeSync(held);
  });

  it("is not written again at every start and end while more groups run at once than it holds lines between rewrites (-j 6000)", async () => {
    // What this process has written (/proc/self/io's wchar), to count the list's work, not time it.
    const written = () => Number(/^wchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))![1]);
    const file = listFile();
    const list = new GroupList(file);
    const before = written();
    for (let pgid = 10_000; pgid < 16_000; pgid++) list.add(pgid);
    expect(replay(file)).toHaveLength(6000);
    for (let pgid = 10_000; pgid < 16_000; pgid++) {
      list.remove(pgid);
      if (pgid % 100 === 0) await nextTurn(); // tasks end over many turns
    }
    await nextTurn();
    expect(replay(file)).toEqual([]);
    // 12,000 lines of ~7 bytes, and each rewrite at most twice what came since: well under 1 MB. Rewritten
    // at each line past the 4,096th while 4,096 groups or more ran, it wrote 130 MB for these 6,000 tasks.
    expect(written() - before).toBeLessThan(1_000_000);
    list.discard();
  });

  it("goes on being written once its name is deleted (a task's rm -rf \"$TMPDIR\"/*), for the guard that holds it", async () => {
    const file = listFile();
    const list = new GroupList(file);
    const held = openSync(file, "r");
    list.add(100);
    unlinkSync(file);
    list.add(200);
    list.remove(100);
    await nextTurn();
    expect(replay(file, readHeld(held))).toEqual([200]);
    list.discard();
    closeSync(held);
  });

  it("discard() empties the file, for the guard that holds it, and removes it (a guard then stops nothing); never throws, also twice", () => {
    const file = listFile();
    const list = new GroupList(file);
    const held = openSync(file, "r");
    list.add(1);
    list.discard();
    expect(existsSync(file)).toBe(false);
    expect(readHeld(held)).toBe("");
    closeSync(held);
    expect(() => list.discard()).not.toThrow();
    expect(() => list.add(2)).not.toThrow();
    expect(existsSync(file)).toBe(false);
  });

  it("will not take over a file that is there already", () => {
    const file = listFile();
    new GroupList(file);
    expect(() => new GroupList(file)).toThrow(/EEXIST/);
  });
});
