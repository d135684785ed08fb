import { spawn } from "node:child_process";
import type { Writable } from "node:stream";

/**
 * What the guard runs (POSIX sh). It reads "+PGID" and "-PGID" lines from taskq while
 * taskq lives; end of input means taskq is gone, however it ended, SIGKILL included.
 * Every group still listed then gets SIGTERM and, when some member is still there after
 * the grace ($2 whole seconds), SIGKILL. dash's kill takes `-SIG -PGID`, not `-s SIG`.
 */
const SCRIPT = `
live=" "
while read -r line; do
  pg=\${line#?}
  case $line in
    +*) live="$live$pg " ;;
    -*) case $live in *" $pg "*) live="\${live%% $pg *} \${live#* $pg }" ;; esac ;;
  esac
done
[ "$live" = " " ] && exit 0
for pg in $live; do kill -TERM -$pg 2>/dev/null; done
waited=0
while [ "$waited" -lt "$2" ]; do
  left=
  for pg in $live; do kill -0 -$pg 2>/dev/null && left=1; done
  [ -z "$left" ] && exit 0
  sleep 1
  waited=$((waited + 1))
done
for pg in $live; do kill -KILL -$pg 2>/dev/null; done
`;

/** The guard's name in `ps`, followed by taskq's pid. */
export const GUARD_NAME = "taskq-guard";

/**
 * The guard starts once a task has run this long: runs of short tasks (a one-task `true`
 * run, where its spawn was 7-8 ms of ~170 ms here) never pay for it.
 */
const GUARD_AFTER_MS = 20;

let input: Writable | undefined;
let failed = false;
/** Groups not yet told to the guard (it has not started), with the timer that starts it. */
const waiting = new Map<number, NodeJS.Timeout>();

/**
 * A task process group that must not outlive taskq. taskq kills its groups itself on every
 * exit it sees (signals, errors, `process.exit`); a taskq that is SIGKILLed (a CI runner's
 * hard stop, the OOM killer) sees none, and its tasks would run on as orphans, in a
 * durable run alongside the retry another worker starts. So once a task has run
 * GUARD_AFTER_MS, taskq starts a guard: a small `sh` in its own session that holds a pipe
 * from taskq and knows the live groups; when the pipe closes with groups still listed, it
 * stops them as --kill-grace does. From then on each new group is told at its start.
 * Never throws: without a guard (no /bin/sh, no process left), tasks run as before.
 */
export function guardGroup(pgid: number, killGraceMs: number): void {
  if (input !== undefined) input.write(`+${pgid}\n`);
  else if (!failed) waiting.set(pgid, setTimeout(() => startGroupGuard(killGraceMs), GUARD_AFTER_MS).unref());
}

/** The group is gone (or given up on): the guard forgets it, so a reused pgid is safe. */
export function unguardGroup(pgid: number): void {
  const timer = waiting.get(pgid);
  if (timer !== undefined) {
    clearTimeout(timer);
    waiting.delete(pgid);
  } else input?.write(`-${pgid}\n`);
}

/** Starts the guard, if it is not running, and tells it every group waiting for it. */
function startGroupGuard(killGraceMs: number): void {
  if (input === undefined && !failed) input = startGuard(killGraceMs);
  // A pipe write goes out at once while the guard keeps reading (it only ever holds a few lines).
  for (const [pgid, timer] of waiting) {
    clearTimeout(timer);
    input?.write(`+${pgid}\n`);
  }
  waiting.clear();
}

function startGuard(killGraceMs: number): Writable | undefined {
  try {
    const graceSeconds = String(Math.max(1, Math.ceil(killGraceMs / 1000)));
    // The script comes in the environment, so `ps` shows "sh -c ... taskq-guard <taskq pid> <grace>".
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", TASKQ_GUARD_SCRIPT: SCRIPT };
    const child = spawn("/bin/sh", ["-c", 'eval "$TASKQ_GUARD_SCRIPT"', GUARD_NAME, String(process.pid), graceSeconds], {
      env,
      stdio: ["pipe", "ignore", "ignore"],
      // Its own session: Ctrl-C to taskq's terminal group, or a runner's signal to it, must not end the guard first.
      detached: true,
    });
    const giveUp = (): void => {
      failed = true;
      input = undefined;
    };
    // Listened to first: a guard that cannot start reports that as an 'error' event.
    child.on("error", giveUp);
    child.on("exit", giveUp);
    const stdin = child.stdin;
    if (child.pid === undefined || stdin === null) {
      failed = true;
      return undefined;
    }
    stdin.on("error", giveUp);
    // Neither keeps taskq's event loop alive; taskq's exit closes the pipe, which ends the guard.
    child.unref();
    (stdin as Writable & { unref?: () => void }).unref?.();
    return stdin;
  } catch {
    failed = true;
    return undefined;
  }
}
