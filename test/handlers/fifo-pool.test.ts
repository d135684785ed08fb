import { closeSync, existsSync, readSync, writeSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FifoPool, closeEnds, type PipeEnds } from "../../src/handlers/fifo-pool.js";

const roots: string[] = [];
const pools: FifoPool[] = [];

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
    expect(roundTrip(stdout, "out")).toBe("out");
    expect(roundTrip(stderr, "err")).toBe("err");
    const folders = await readdir(root);
    expect(folders).toHaveLength(1);
    expect(folders[0]).toMatch(new RegExp(`^taskq-fifo-${process.pid}-`));
    // Eight made by the first batch, two taken and unlinked.
    expect(await readdir(path.join(root, folders[0]!))).toHaveLength(6);
    for (const ends of pipes!) closeEnds(ends);
    pool.dispose();
    expect(await readdir(root)).toEqual([]);
  });

  it("many takes at once share the batches and each gets its own pipes", async () => {
    const { pool } = await setup();
    const all = await Promise.all(Array.from({ length: 40 }, () => pool.take()));
    const fds = new Set(all.flatMap((pipes) => pipes!.flatMap((ends) => [ends.read, ends.write])));
    expect(fds.size).toBe(160);
    all.forEach((pipes, i) => expect(roundTrip(pipes![0], `task ${i}`)).toBe(`task ${i}`));
    for (const pipes of all) for (const ends of pipes!) closeEnds(ends);
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

  it("a write end closed by every holder gives EOF to the reader", async () => {
    const { pool } = await setup();
    const [stdout, stderr] = (await pool.take())!;
    closeSync(stdout.write);
    expect(readSync(stdout.read, Buffer.alloc(8))).toBe(0);
    closeSync(stdout.read);
    closeEnds(stderr);
  });
});
