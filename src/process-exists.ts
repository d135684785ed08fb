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
