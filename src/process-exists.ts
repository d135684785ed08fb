import { readFileSync } from "node:fs";

/**
 * Whether a process with this pid exists (a zombie included): kill(pid, 0) succeeds, or
 * fails with EPERM (it is there, another user's). Never throws.
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The fields of /proc/<pid>/stat from the third on (state, ppid, pgrp, session, ...: field N
 * is at index N - 3), or undefined without /proc or such a process. The command name before
 * them may hold spaces and parentheses: they start after its last ")". With `count`, only the
 * first `count` (a pass over every process needs four).
 */
export function procStatFields(pid: number | string, count?: number): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined; // gone, or no /proc
  }
  return text.slice(text.lastIndexOf(")") + 2).split(" ", count);
}
