import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, expect } from "vitest";
import { GUARD_NAME } from "../../src/handlers/group-guard.js";
import { runIds } from "./cli.js";

/**
 * Live processes whose environment carries TASKQ_RUN_ID=<runId>: a task process that
 * outlived its attempt. Zombies are dead (and have no readable environment), so they
 * are not leftovers; see findZombies.
 */
export async function findLeftovers(runId: string): Promise<number[]> {
  return findWithEntry(`TASKQ_RUN_ID=${runId}`);
}

/** Live processes (not zombies) whose environment holds `entry` ("NAME=value"), but this one. */
export async function findWithEntry(entry: string): Promise<number[]> {
  const needle = Buffer.from(`${entry}\0`);
  const found: number[] = [];
  await Promise.all(
    (await listPids()).map(async (pid) => {
      if (pid === process.pid) return;
      const environ = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
      if (environ === undefined || !containsEntry(environ, needle)) return;
      const stat = await readStat(pid);
      if (stat !== undefined && stat.state !== "Z" && stat.state !== "X") found.push(pid);
    }),
  );
  return found.sort((a, b) => a - b);
}

/**
 * Zombie processes in the given process groups (a task's pgid is its shell's pid, e.g.
 * from `echo $$`). Not a leak: they are dead, waiting for PID 1 to reap them, which
 * some container inits do late or never.
 */
export async function findZombies(processGroupIds: number[]): Promise<number[]> {
  const groups = new Set(processGroupIds);
  const found: number[] = [];
  await Promise.all(
    (await listPids()).map(async (pid) => {
      const stat = await readStat(pid);
      if (stat !== undefined && stat.state === "Z" && groups.has(stat.pgrp)) found.push(pid);
    }),
  );
  return found.sort((a, b) => a - b);
}

/**
 * Live guard processes of the taskq with this pid (their argv names it: see group-guard.ts). Not a worker's guard's lease
 * watch, a subshell of the guard's with the same argv (see guardLease): one guard, not two.
 */
export async function findGuards(taskqPid: number): Promise<number[]> {
  const needle = Buffer.from(`\0${GUARD_NAME}\0${taskqPid}\0`);
  const found = new Map<number, number>();
  await Promise.all(
    (await listPids()).map(async (pid) => {
      const cmdline = await readFile(`/proc/${pid}/cmdline`).catch(() => undefined);
      if (cmdline === undefined || cmdline.indexOf(needle) < 0) return;
      const stat = await readStat(pid);
      if (stat !== undefined && (await isAlive(pid))) found.set(pid, stat.ppid);
    }),
  );
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid).sort((a, b) => a - b);
}

/** True while the process exists and is not a zombie. */
export async function isAlive(pid: number): Promise<boolean> {
  const stat = await readStat(pid);
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
}

/** Polls until `check` returns true or `timeoutMs` passes; returns the last answer. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await delay(20);
  }
}

async function listPids(): Promise<number[]> {
  return (await readdir("/proc")).filter((name) => /^\d+$/.test(name)).map(Number);
}

async function readStat(pid: number): Promise<{ state: string; ppid: number; pgrp: number } | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  // "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]) };
}

/** The environment is NUL-separated; match a whole entry, not a suffix of another one. */
function containsEntry(environ: Buffer, entry: Buffer): boolean {
  if (environ.subarray(0, entry.length).equals(entry)) return true;
  return environ.includes(Buffer.concat([Buffer.from("\0"), entry]));
}

/**
 * A python3 script that prints `pid <its pid>` once it holds thousands of mappings (no two adjacent alike, so never
 * merged), then sleeps: after a SIGKILL the kernel takes a tenth of a second or so to tear them down, during which the
 * process is still in /proc, not yet a zombie (a `sleep`'s window is a few milliseconds, where it is waiting for a CPU).
 */
export const SLOW_TO_TEAR_DOWN_PY = [
  "import mmap, os, time",
  "maps = [mmap.mmap(-1, 4096, prot=mmap.PROT_READ | (mmap.PROT_WRITE if i % 2 else 0)) for i in range(12000)]",
  "for m in maps[1::2]: m[0] = 1",
  'print("pid", os.getpid(), flush=True)',
  "time.sleep(300)",
  "",
].join("\n");

/**
 * The state of process `pid` (/proc/<pid>/stat) while it is there, else undefined: gone, or a zombie with no thread left.
 * Synchronous: read in an `exit` handler, the moment a process has exited.
 */
export function liveState(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0] ?? "";
  return (state === "Z" || state === "X") && !(Number(fields[17]) > 1) ? undefined : state;
}

/**
 * The log folders of a test file's runs, each test's checked after it for task processes left behind (every e2e run must
 * leave none) and then emptied: push a run's log folder into it.
 */
export function leftoversCheckedAfterEach(): string[] {
  const logRoots: string[] = [];
  afterEach(async () => {
    for (const logs of logRoots.splice(0)) for (const runId of await runIds(logs)) expect(await findLeftovers(runId)).toEqual([]);
  });
  return logRoots;
}
