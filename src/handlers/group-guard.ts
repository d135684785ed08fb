import { spawn } from "node:child_process";
import type { Writable } from "node:stream";

/**
 * What the guard runs (POSIX sh). It reads "+PGID" and "-PGID" lines from taskq while
 * taskq lives (anything else, or a PGID of 0 or 1, which kill would take as "its own
 * group" or "every process", is ignored); end of input means taskq is gone, however it
 * ended, SIGKILL included. Every group still listed then gets SIGTERM and, when some
 * member is still there after the grace ($2 whole seconds), SIGKILL. dash's kill takes
 * `-SIG -PGID`, not `-s SIG`.
 */
export const GUARD_SCRIPT = `
live=" "
while read -r line; do
  pg=\${line#?}
  case $pg in ''|0|1|*[!0-9]*) continue ;; esac
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
exit 0
`;

/** The guard's name in `ps`, followed by taskq's pid. */
export const GUARD_NAME = "taskq-guard";

/**
 * A group is told to the guard once its task has run this long, the guard being started
 * then if need be: the many short tasks of a large run cost the guard nothing (told at
 * once, 1,000 `true` tasks woke it ~2,000 times, 220 ms of its CPU), and a run of short
 * tasks never starts one (its spawn took 7-8 ms of a 170 ms one-task run).
 */
const GUARD_AFTER_MS = 20;

let input: Writable | undefined;
let failed = false;
/** Groups not yet told, each with the timer that tells the guard. */
const waiting = new Map<number, NodeJS.Timeout>();
/** Groups told to the guard and not yet gone. */
const told = new Set<number>();

/**
 * A task process group that must not outlive taskq. taskq kills its groups itself on every
 * exit it sees (signals, errors, `process.exit`); a taskq that is SIGKILLed (a CI runner's
 * hard stop, the OOM killer) sees none, and its tasks would run on as orphans, in a
 * durable run alongside the retry another worker starts. So a guard watches them: a small
 * `sh` in its own session that holds a pipe from taskq and is told each group that has run
 * GUARD_AFTER_MS; when the pipe closes with groups still listed, it stops them as
 * --kill-grace does. Never throws: without a guard (no /bin/sh), tasks run as before.
 */
export function guardGroup(pgid: number, killGraceMs: number): void {
  if (failed) return;
  waiting.set(
    pgid,
    setTimeout(() => {
      waiting.delete(pgid);
      startGroupGuard(killGraceMs);
      if (input === undefined) return;
      told.add(pgid);
      // A pipe write goes out at once while the guard keeps reading (it only ever holds a few lines).
      input.write(`+${pgid}\n`);
    }, GUARD_AFTER_MS).unref(),
  );
}

/** The group is gone (or given up on): the guard forgets it, so a reused pgid is safe. */
export function unguardGroup(pgid: number): void {
  const timer = waiting.get(pgid);
  if (timer !== undefined) {
    clearTimeout(timer);
    waiting.delete(pgid);
  } else if (told.delete(pgid)) input?.write(`-${pgid}\n`);
}

/**
 * Starts the guard if it is not running. `taskq run` calls it before the first task of a
 * run of several, `taskq worker` as it starts: its spawn then holds back no timer or task
 * start later on.
 */
export function startGroupGuard(killGraceMs: number): void {
  if (input === undefined && !failed) input = startGuard(killGraceMs);
}

function startGuard(killGraceMs: number): Writable | undefined {
  try {
    const graceSeconds = String(Math.max(1, Math.ceil(killGraceMs / 1000)));
    // The script comes in the environment, so `ps` shows "sh -c ... taskq-guard <taskq pid> <grace>".
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", TASKQ_GUARD_SCRIPT: GUARD_SCRIPT };
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
