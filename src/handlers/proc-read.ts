import { closeSync, openSync, readdirSync, readSync } from "node:fs";

/**
 * Reads of /proc files into one buffer, reused: a pass over /proc reads two files for each of
 * a thousand processes, and readFileSync's own buffer, fstat and options for each cost more
 * than the read itself (stopping 500 tasks at once spent a third of its time there, and in
 * collecting the garbage). Synchronous and single-threaded: what a read returns is good until
 * the next read.
 */
let buffer = Buffer.allocUnsafe(16 * 1024);

/**
 * The whole of `/proc/<pid>/<name>` in the shared buffer (bytes 0 to the returned length), or
 * -1 when it cannot be read (the process is gone, not ours to read, no /proc). Never throws.
 */
export function readProcFile(pid: number | string, name: string): number {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/${name}`, "r");
  } catch {
    return -1;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        // A large environment: the buffer grows, and stays grown for the next one.
        const larger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) return length;
      length += read;
    }
  } catch {
    return -1; // gone while being read (ESRCH)
  } finally {
    closeSync(fd);
  }
}

/** The buffer readProcFile filled: read it before the next read. */
export function procBuffer(): Buffer {
  return buffer;
}

/**
 * State, parent, group and session of a process, from /proc/<pid>/stat (fields 3 to 6, after the
 * command name, which may hold spaces and parentheses: they start after its last ")");
 * undefined once it is gone.
 */
export function readProcStat(pid: number | string): { state: string; ppid: number; pgrp: number; session: number } | undefined {
  const length = readProcFile(pid, "stat");
  lastStat = undefined;
  if (length < 0) return undefined;
  const end = buffer.lastIndexOf(0x29, length - 1); // ")"
  if (end === -1) return undefined;
  lastStat = { from: end + 2, to: length };
  const fields = buffer.toString("latin1", end + 2, Math.min(length, end + 2 + 64)).split(" ", 4);
  return { state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]), session: Number(fields[3]) };
}

/** Where in the buffer the fields after the command name of the stat readProcStat read last are. */
let lastStat: { from: number; to: number } | undefined;

/**
 * The start time of the process whose stat readProcStat read last (field 22, in clock ticks since
 * boot), which with its pid names it: a pid used again is another process's, started later. Read
 * before the next read of any /proc file; undefined when that stat could not be read.
 */
export function lastStatStartTime(): string | undefined {
  if (lastStat === undefined) return undefined;
  return buffer.toString("latin1", lastStat.from, lastStat.to).split(" ", 20)[19];
}

/**
 * Whether the process whose stat readProcStat read last, in `state`, has ended: a zombie (or dying) with no
 * thread left. A process whose main thread has ended (`pthread_exit` in main) while others run shows as a
 * zombie too, its threads counted (field 20, num_threads): it runs on, and a signal to it or its group still
 * reaches it (a SIGTERM ends it, as any other process), where one taken for gone outlived its task, and taskq.
 */
export function lastStatEnded(state: string): boolean {
  if (state !== "Z" && state !== "X") return false;
  if (lastStat === undefined) return true;
  return !(Number(buffer.toString("latin1", lastStat.from, lastStat.to).split(" ", 18)[17]) > 1);
}

/**
 * `/proc/<pid>/environ` into the shared buffer, as readProcFile; of a process whose main thread has ended
 * (see lastStatEnded), whose own reads fail, that of one of its threads still running. -1 when none can be read.
 */
export function readProcEnviron(pid: number | string): number {
  const length = readProcFile(pid, "environ");
  if (length >= 0) return length;
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return -1;
  }
  for (const tid of threads) {
    if (tid === String(pid)) continue;
    const read = readProcFile(`${pid}/task/${tid}`, "environ");
    if (read >= 0) return read;
  }
  return -1;
}

/** SIGTERM's bit in /proc/<pid>/status's signal masks (signal 15: bit 14). */
const SIGTERM_BIT = 1n << 14n;
/** The masks of the signals a process ignores, and of those it has a handler for, in /proc/<pid>/status. */
const SIG_IGN = /^SigIgn:\s*([0-9a-f]+)$/m;
const SIG_CGT = /^SigCgt:\s*([0-9a-f]+)$/m;

/**
 * A live process as a signal is about to reach it: its start time (which, with its pid, names it:
 * see lastStatStartTime) and whether it ignores SIGTERM (SIG_IGN, `trap '' TERM`: /proc/<pid>/status's
 * SigIgn; or, the first process of a PID namespace of its own, it has no handler for it), so a SIGTERM
 * cannot be what ends it. Undefined once it is gone, or a zombie. Never throws.
 */
export function readSignalState(pid: number): { start: string; ignoresTerm: boolean } | undefined {
  const stat = readProcStat(pid);
  const start = lastStatStartTime();
  if (stat === undefined || start === undefined || lastStatEnded(stat.state)) return undefined;
  const length = readProcFile(pid, "status");
  if (length < 0) return undefined;
  const status = buffer.toString("latin1", 0, length);
  const has = (mask: RegExp): boolean => {
    const bits = mask.exec(status)?.[1];
    return bits !== undefined && (BigInt(`0x${bits}`) & SIGTERM_BIT) !== 0n;
  };
  // The first process of a PID namespace of its own (`unshare --pid --fork`, a container's entrypoint: its last NSpid is
  // 1) gets no SIGTERM from taskq's namespace unless it handles it: with the default action, the kernel drops it.
  const nsPids = /^NSpid:\s*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
  const namespaceInit = nsPids !== undefined && nsPids.length > 1 && nsPids[nsPids.length - 1] === "1";
  return { start, ignoresTerm: has(SIG_IGN) || (namespaceInit && !has(SIG_CGT)) };
}

/**
 * The CPU time the process whose stat readProcStat read last has had, in ms: /proc/<pid>/schedstat's
 * first field (ns on a CPU), or, without it, its stat's utime and stime (fields 14 and 15, in clock ticks,
 * taken as 10 ms: USER_HZ is 100 on Linux). Reads the schedstat of `pid`, the same process. Undefined once gone.
 */
export function lastStatCpuMs(pid: number | string): number | undefined {
  if (lastStat === undefined) return undefined;
  const fields = buffer.toString("latin1", lastStat.from, lastStat.to).split(" ", 13);
  const ticks = Number(fields[11]) + Number(fields[12]);
  const length = readProcFile(pid, "schedstat");
  if (length > 0) {
    const ns = Number(buffer.toString("latin1", 0, length).split(" ", 1)[0]);
    if (Number.isFinite(ns)) return ns / 1e6;
  }
  return Number.isFinite(ticks) ? ticks * 10 : undefined;
}

/** Whether the process `pid` started at `start` (see readSignalState) is still there, a zombie not counted. */
export function stillRunning(pid: number, start: string): boolean {
  const stat = readProcStat(pid);
  return stat !== undefined && !lastStatEnded(stat.state) && lastStatStartTime() === start;
}

/** taskq's own command name, read once (see diedBeforeCommand). */
let ownCommand: string | undefined;

/** A process's command name, /proc/<pid>/stat's second field ("sh"), or undefined without /proc or such a process. */
export function readProcCommand(pid: number | string): string | undefined {
  const length = readProcFile(pid, "stat");
  if (length < 0) return undefined;
  const end = buffer.lastIndexOf(0x29, length - 1); // ")"
  const start = buffer.indexOf(0x28); // "("
  return start === -1 || end === -1 ? undefined : buffer.toString("latin1", start + 1, end);
}

/**
 * Whether a child that spawn() has just returned died before its command ran: it still has
 * taskq's command name, which its exec would have changed (spawn returns once the child has
 * exec'd or died). Only a signal to taskq's process group, while the child was still in it,
 * does that (see ShellHandlerOptions.shutdownSignals). True where /proc cannot tell.
 */
export function diedBeforeCommand(pid: number): boolean {
  ownCommand ??= readProcCommand("self");
  const command = readProcCommand(pid);
  return command === undefined || ownCommand === undefined || command === ownCommand;
}
