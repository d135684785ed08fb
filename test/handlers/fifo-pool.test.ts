import { spawnSync } from "node:child_process";
import { closeSync, existsSync, readdirSync, readlinkSync, readSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FifoPool, closeEnds, type PipeEnds } from "../../src/handlers/fifo-pool.js";
import { setTimeout as delay } from "node:timers/promises";
import { eventually } from "../helpers/processes.js";

const roots: string[] = [];
const pools: FifoPool[] = [];
/** This process's PID namespace, which taskq's names in the temp root carry after the pid. */
const namespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))![1]!;

afterEach(async () => {
  for (const pool of pools.splice(0)) pool.dispose();
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })));
});

async function setup(): Promise<{ root: string; pool: FifoPool }> {
  const root = await mkdtemp(path.join(tmpdir(), "taskq-fifo-test-"));
  roots.push(root);
  const pool = new FifoPool(root);
  pools.push(pool);
  return { root, pool };
}

/** How many file descriptors this process has open. */
function openFds(): number {
  return readdirSync("/proc/self/fd").length;
}

/** What a child writing to `ends.write` would send, as taskq reads it. */
function roundTrip(ends: PipeEnds, text: string): string {
  writeSync(ends.write, text);
  const buffer = Buffer.alloc(64);
  return buffer.toString("utf8", 0, readSync(ends.read, buffer));
}

describe("FifoPool", () => {
  it("gives two distinct pipes per task, already unlinked, from a private folder named after the process", async () => {
    const { root, pool } = await setup();
    const pipes = await pool.take();
    expect(pipes).toBeDefined();
    const [stdout, stderr] = pipes!;
    // Written to stdout and not read yet: stderr's reader does not get it.
    writeSync(stdout.write, "out");
    expect(roundTrip(stderr, "err")).toBe("err");
    expect(roundTrip(stdout, "!")).toBe("out!");
    const folders = await readdir(root);
    expect(folders).toHaveLength(1);
    expect(folders[0]).toMatch(new RegExp(`^taskq-fifo-${process.pid}-`));
    // Eight made by the first batch, two taken and unlinked.
    expect(await readdir(path.join(root, folders[0]!))).toHaveLength(6);
    for (const ends of pipes!) closeEnds(ends);
    pool.dispose();
    expect(await readdir(root)).toEqual([]);
  });

  it("gives one pipe when asked for one (stdout and stderr together)", async () => {
    const { root, pool } = await setup();
    const pipes = await pool.take(1);
    expect(pipes).toHaveLength(1);
    expect(roundTrip(pipes![0], "both")).toBe("both");
    closeEnds(pipes![0]);
    const [folder] = await readdir(root);
    expect(await readdir(path.join(root, folder!))).toHaveLength(7);
  });

  it("many takes at once share the batches and each gets its own pipes", async () => {
    const { pool } = await setup();
    const all = await Promise.all(Array.from({ length: 40 }, () => pool.take()));
    const fds = new Set(all.flatMap((pipes) => pipes!.flatMap((ends) => [ends.read, ends.write])));
    expect(fds.size).toBe(160);
    all.forEach((pipes, i) => expect(roundTrip(pipes![0], `task ${i}`)).toBe(`task ${i}`));
    for (const pipes of all) for (const ends of pipes!) closeEnds(ends);
  });

  it("told how many pipes the run needs, makes the rest in one batch right after the first, so no task waits for mkfifo", async () => {
    const { root, pool } = await setup();
    pool.prepare();
    pool.expect(100);
    const fifos = async (): Promise<number> => {
      const [folder] = await readdir(root);
      return folder === undefined ? 0 : (await readdir(path.join(root, folder))).length;
    };
    // The first batch (8) and one more of 92: exactly what was asked, not batches doubling past it.
    expect(await eventually(async () => (await fifos()) === 100)).toBe(true);
    // ...and no more until the tasks have used most of them.
    for (let i = 0; i < 20; i++) for (const ends of (await pool.take())!) closeEnds(ends);
    await delay(200);
    expect(await fifos()).toBe(60);
  });

  it("removes what taskqs that are gone left: their FIFO folders, and guard lists a minute old (a younger one may be about to be read by its guard)", async () => {
    const { root, pool } = await setup();
    const gone = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim();
    const minutesAgo = new Date(Date.now() - 120_000);
    await mkdir(path.join(root, `taskq-fifo-${gone}-n${namespace}-abcdefgh`));
    const lists = [`taskq-guard-${gone}-n${namespace}-old`, `taskq-guard-${gone}-n${namespace}-young`, `taskq-guard-${process.pid}-n${namespace}-mine`];
    for (const name of lists) writeFileSync(path.join(root, name), "+123\n");
    for (const name of [lists[0]!, lists[2]!]) utimesSync(path.join(root, name), minutesAgo, minutesAgo);
    for (const ends of (await pool.take())!) closeEnds(ends);
    const left = (await readdir(root)).filter((name) => !name.startsWith(`taskq-fifo-${process.pid}-`)).sort();
    expect(left).toEqual([lists[2], lists[1]].sort());
  });

  it("removes the folders and lists of a gone taskq named the older way (by pid alone, or with an unknown namespace) once they are an hour old; younger ones stay", async () => {
    const { root, pool } = await setup();
    const gone = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim();
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
    const old = [`taskq-fifo-${gone}-abcdef`, `taskq-fifo-${gone}-n-abcdef`, `taskq-guard-${gone}-abcdefgh`];
    const young = [`taskq-fifo-${gone}-ghijkl`, `taskq-guard-${gone}-ijklmnop`];
    for (const name of [...old, ...young]) {
      if (name.startsWith("taskq-fifo-")) await mkdir(path.join(root, name));
      else writeFileSync(path.join(root, name), "#taskq\n+123\n");
    }
    for (const name of old) utimesSync(path.join(root, name), hoursAgo, hoursAgo);
    for (const ends of (await pool.take())!) closeEnds(ends);
    const left = (await readdir(root)).filter((name) => !name.startsWith(`taskq-fifo-${process.pid}-`)).sort();
    expect(left).toEqual([...young].sort());
  });

  it("leaves alone what it cannot tell is gone: the folders and lists of another PID namespace's taskq (a container sharing the folder), or of a taskq that did not name its namespace", async () => {
    const { root, pool } = await setup();
    // Unused here; in another namespace, a live taskq's.
    const pid = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim();
    const minutesAgo = new Date(Date.now() - 120_000);
    const folders = [`taskq-fifo-${pid}-n${Number(namespace) + 1}-abcdef`, `taskq-fifo-${pid}-abcdef`];
    const lists = [`taskq-guard-${pid}-n${Number(namespace) + 1}-abcdefgh`, `taskq-guard-${pid}-abcdefgh`];
    for (const name of folders) await mkdir(path.join(root, name));
    for (const name of lists) {
      writeFileSync(path.join(root, name), "#taskq\n+123\n");
      utimesSync(path.join(root, name), minutesAgo, minutesAgo);
    }
    for (const ends of (await pool.take())!) closeEnds(ends);
    const left = (await readdir(root)).filter((name) => !name.startsWith(`taskq-fifo-${process.pid}-`)).sort();
    expect(left).toEqual([...folders, ...lists].sort());
  });

  it("a folder removed under it (a temp cleaner) is made again", async () => {
    const { root, pool } = await setup();
    for (const ends of (await pool.take())!) closeEnds(ends);
    const [first] = await readdir(root);
    await rm(path.join(root, first!), { recursive: true });
    const pipes = await pool.take();
    expect(pipes).toBeDefined();
    expect(roundTrip(pipes![1], "again")).toBe("again");
    for (const ends of pipes!) closeEnds(ends);
    const [second] = await readdir(root);
    expect(second).not.toBe(first);
  });

  it("where no FIFO can be made, answers undefined (the handler then uses Node's pipes)", async () => {
    const { root } = await setup();
    const pool = new FifoPool(path.join(root, "missing"));
    pools.push(pool);
    expect(await pool.take()).toBeUndefined();
    expect(await pool.take()).toBeUndefined();
    expect(existsSync(path.join(root, "missing"))).toBe(false);
  });

  it("where mkfifo fails, the problem says why in mkfifo's words, not by its exit code alone", async () => {
    const { root } = await setup();
    // A mkfifo that fails as on a temp folder with no inode left.
    const bin = path.join(root, "bin");
    await mkdir(bin);
    writeFileSync(path.join(bin, "mkfifo"), `#!/bin/sh\necho "mkfifo: cannot create fifo 'x': No space left on device" >&2\nexit 1\n`, { mode: 0o755 });
    const pool = new FifoPool(path.join(root, "fifos"));
    pools.push(pool);
    await mkdir(path.join(root, "fifos"));
    const saved = process.env.PATH;
    process.env.PATH = `${bin}:${saved}`;
    try {
      expect(await pool.take()).toBeUndefined();
    } finally {
      process.env.PATH = saved;
    }
    expect(pool.problem).toMatch(/^mkfifo failed in \S+ \(exit 1: cannot create fifo 'x': No space left on device\)$/);
  });

  it("a write end closed by every holder gives EOF to the reader", async () => {
    const { pool } = await setup();
    const [stdout, stderr] = (await pool.take())!;
    closeSync(stdout.write);
    expect(readSync(stdout.read, Buffer.alloc(8))).toBe(0);
    closeSync(stdout.read);
    closeEnds(stderr);
  });

  it("opens FIFOs ahead, which the next take hands out, unlinked by the next openAhead; dispose closes the ones not taken", async () => {
    const { root, pool } = await setup();
    for (const ends of (await pool.take())!) closeEnds(ends);
    const [folder] = await readdir(root);
    /** What is left of the first batch (0-7; the next one may be being made). */
    const firstBatchLeft = async (): Promise<string[]> => (await readdir(path.join(root, folder!))).filter((name) => Number(name) < 8).sort();
    const fdsBefore = openFds();
    pool.openAhead();
    // 7 and 6 went to the first take; 5 to 2 are open now (8 fds), still in the folder.
    expect(openFds()).toBe(fdsBefore + 8);
    expect(await firstBatchLeft()).toEqual(["0", "1", "2", "3", "4", "5"]);
    const pipes = await pool.take();
    expect(openFds()).toBe(fdsBefore + 8);
    expect(await firstBatchLeft()).toEqual(["0", "1", "2", "3", "4", "5"]);
    // The next openAhead unlinks 3 and 2 (the task has them) and opens 1 and 0.
    pool.openAhead();
    expect(await firstBatchLeft()).toEqual(["0", "1", "4", "5"]);
    expect(openFds()).toBe(fdsBefore + 12);
    expect(roundTrip(pipes![0], "ahead")).toBe("ahead");
    expect(roundTrip(pipes![1], "of time")).toBe("of time");
    for (const ends of pipes!) closeEnds(ends);
    expect(openFds()).toBe(fdsBefore + 8);
    pool.dispose();
    expect(openFds()).toBe(fdsBefore);
    expect(await readdir(root)).toEqual([]);
  });

  it("opens no more pipes ahead than the run is still expected to take: none once a one-task run's task has its pipe; one past them (a retry) is opened when taken", async () => {
    const { pool } = await setup();
    pool.expect(3);
    for (const ends of (await pool.take(1))!) closeEnds(ends);
    const fdsBefore = openFds();
    pool.openAhead();
    // Two pipes are still to come: two opened (4 fds), not the four pipes kept ahead otherwise.
    expect(pool.openedAhead).toBe(2);
    expect(openFds()).toBe(fdsBefore + 4);
    for (let i = 0; i < 2; i++) for (const ends of (await pool.take(1))!) closeEnds(ends);
    pool.openAhead();
    expect(pool.openedAhead).toBe(0);
    expect(openFds()).toBe(fdsBefore);
    const retry = await pool.take(1);
    expect(roundTrip(retry![0], "again")).toBe("again");
    closeEnds(retry![0]);
    pool.openAhead();
    expect(pool.openedAhead).toBe(0);
    pool.dispose();
    expect(openFds()).toBe(fdsBefore);
  });

  it("at exit, FIFOs opened ahead and not taken are kept as spares; those taken are not", async () => {
    const { root, pool } = await setup();
    for (const ends of (await pool.take())!) closeEnds(ends);
    const fdsBefore = openFds();
    pool.openAhead();
    const pipes = await pool.take(1); // 2, not yet unlinked
    pool.retire();
    expect(openFds()).toBe(fdsBefore + 2);
    closeEnds(pipes![0]);
    const [spare] = await readdir(root);
    expect(spare).toMatch(/^taskq-fifo-spare-/);
    expect((await readdir(path.join(root, spare!))).filter((name) => Number(name) < 8).sort()).toEqual(["0", "1", "3", "4", "5"]);
  });

  describe("FIFOs a run did not use", () => {
    /** A spare folder as a retired pool leaves it, with `fifos` FIFOs, and `mode`. */
    async function spare(root: string, name: string, fifos: number, mode = 0o700): Promise<string> {
      const dir = path.join(root, `taskq-fifo-spare-${name}`);
      await mkdir(dir, { mode });
      const names = Array.from({ length: fifos }, (_, i) => path.join(dir, String(i)));
      expect(spawnSync("mkfifo", ["-m", "600", "--", ...names]).status).toBe(0);
      return dir;
    }

    /** Runs `take` with no mkfifo to be found: only FIFOs that exist already can be had. */
    async function takeWithoutMkfifo(pool: FifoPool): Promise<[PipeEnds, PipeEnds] | undefined> {
      const saved = process.env.PATH;
      process.env.PATH = "/nonexistent";
      try {
        return await pool.take();
      } finally {
        process.env.PATH = saved;
      }
    }

    it("are kept at exit for the next pool, which then needs no mkfifo", async () => {
      const { root, pool } = await setup();
      for (const ends of (await pool.take())!) closeEnds(ends);
      pool.retire();
      const [kept, ...others] = await readdir(root);
      expect(others).toEqual([]);
      expect(kept).toMatch(/^taskq-fifo-spare-/);
      expect(await readdir(path.join(root, kept!))).toHaveLength(6);

      const next = new FifoPool(root);
      pools.push(next);
      const pipes = await takeWithoutMkfifo(next);
      expect(pipes).toBeDefined();
      expect(roundTrip(pipes![0], "claimed")).toBe("claimed");
      expect(roundTrip(pipes![1], "too")).toBe("too");
      for (const ends of pipes!) closeEnds(ends);
      // Claimed by renaming: the spare is now the new pool's own folder, two FIFOs fewer.
      const [own, ...rest] = await readdir(root);
      expect(rest).toEqual([]);
      expect(own).toMatch(new RegExp(`^taskq-fifo-${process.pid}-`));
      expect(await readdir(path.join(root, own!))).toHaveLength(4);
    });

    it("at most 64 are kept", async () => {
      const { root, pool } = await setup();
      // 80 tasks' pipes: the batches made ahead (doubling) leave more than 64 unused.
      const all = await Promise.all(Array.from({ length: 40 }, () => pool.take()));
      for (const pipes of all) for (const ends of pipes!) closeEnds(ends);
      for (let i = 0; i < 40; i++) for (const ends of (await pool.take())!) closeEnds(ends);
      const [own] = await readdir(root);
      expect((await readdir(path.join(root, own!))).length).toBeGreaterThan(64);
      pool.retire();
      const [kept] = await readdir(root);
      expect(kept).toMatch(/^taskq-fifo-spare-/);
      expect(await readdir(path.join(root, kept!))).toHaveLength(64);
    });

    it("a pool that used them all leaves no spare folder", async () => {
      const { root } = await setup();
      await spare(root, "two", 2);
      const pool = new FifoPool(root);
      pools.push(pool);
      for (const ends of (await takeWithoutMkfifo(pool))!) closeEnds(ends);
      pool.retire();
      expect(await readdir(root)).toEqual([]);
    });

    it("a spare folder that others may enter is not used", async () => {
      const { root } = await setup();
      const open = await spare(root, "open", 4, 0o755);
      const pool = new FifoPool(root);
      pools.push(pool);
      expect(await takeWithoutMkfifo(pool)).toBeUndefined();
      expect(await readdir(open)).toHaveLength(4);
    });

    it("at most four spare folders are kept", async () => {
      const { root, pool } = await setup();
      for (let i = 0; i < 6; i++) await spare(root, `s${i}`, 2);
      for (const ends of (await pool.take())!) closeEnds(ends);
      expect((await readdir(root)).filter((name) => name.startsWith("taskq-fifo-spare-"))).toHaveLength(3);
    });

    it("at most four spare folders are kept when several pools end at once, each with FIFOs to spare", async () => {
      const { root, pool } = await setup();
      const all = [pool];
      for (let i = 0; i < 5; i++) {
        const next = new FifoPool(root);
        pools.push(next);
        all.push(next);
      }
      // Each made its own folder (none was spare yet), and keeps the FIFOs it did not use.
      for (const each of all) for (const ends of (await each.take())!) closeEnds(ends);
      for (const each of all) each.retire();
      expect((await readdir(root)).filter((name) => name.startsWith("taskq-fifo-spare-"))).toHaveLength(4);
    });
  });
});
