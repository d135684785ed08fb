import { readFileSync } from "node:fs";

/**
 * Whether this process is in a background process group of its terminal: its group is not the
 * terminal's foreground group (fields 5 and 8 of /proc/self/stat, after the command's name).
 * False where that cannot be read (not Linux).
 */
export function inBackground(): boolean {
  try {
    const stat = readFileSync("/proc/self/stat", "latin1");
    const [, , group, , , foreground] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(foreground) > 0 && foreground !== group;
  } catch {
    return false;
  }
}
