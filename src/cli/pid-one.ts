/**
 * The note a run or a worker starts with when taskq is PID 1 (a container started without an
 * init): what the tasks leave behind (`cmd &`, a double fork) is reparented to PID 1, and Node
 * reaps only its own children, so those stay as zombies until taskq exits, each holding a pid
 * (a container's pids.max counts them). Undefined elsewhere.
 */
export function pidOneNote(pid = process.pid): string | undefined {
  if (pid !== 1) return undefined;
  return "taskq is PID 1 (a container without an init): processes the tasks leave behind stay as zombies (<defunct>) until it exits; give it an init (docker run --init, tini, dumb-init)";
}
