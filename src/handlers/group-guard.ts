import { spawn } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Writable } from "node:stream";
import { GroupList, unlinkQuietly } from "./group-list.js";
import { errorCode, failedRoots, makeInTempRoot, noRoom, noteTempRootMove, ownerTag, tempRoot, tempRoots } from "./temp-root.js";

/**
 * What the guard runs (POSIX sh): $1 is taskq's pid (for `ps`), $2 the grace in whole
 * seconds, $3 the list file, which taskq also hands it as descriptor 3. It waits for the end
 * of its input, which comes when taskq is gone, however it ended, SIGKILL included; taskq
 * never writes to it, so the guard sleeps until then. It reads the list through its
 * descriptor, reopened as /proc/<its pid>/fd/3 (from the start, not where taskq's last write
 * left the shared offset; /dev/fd may be missing where /proc is not): a task may have
 * deleted the name (`rm -rf "$TMPDIR"/*`, TMPDIR being taskq's), not the file. Only
 * without /proc, by name. A taskq that ends as it should empties the list (or removes it):
 * nothing to do. Else the list's "+PGID" and "-PGID" lines, replayed, leave the groups that
 * were running (anything else, or a PGID of 0 or 1, which kill would take as "its own group"
 * or "every process", is ignored), each kept only while its task's shell (pid = pgid) is there with
 * TASKQ_PID=<taskq's pid> in its environment: a group whose shell has gone may have had its id
 * used again by the time the guard looks (its "-PGID" was still on its way when taskq died).
 * Those groups get their SIGTERM at once, before the passes over /proc that follow (each a few ms a hundred
 * processes on a loaded machine). Then every group of those shells' sessions (field 6 of /proc/<pid>/stat, the group field 5):
 * while its shell is there, the session is the task's alone, a process in it that cleared its
 * environment (`env -i timeout ...`, in a group of its own) too. Then the groups of every process whose environment holds
 * TASKQ_PID=<taskq's pid> (see process-groups.ts), wherever it is: what tasks put in other
 * groups (`timeout`, job control) or sessions (`setsid`), what ended tasks left, and a task
 * whose spawn had not returned when taskq died (not listed yet). Never a group by an id
 * alone but a running task's: a task that ended gave its ids back. Each group gets SIGTERM
 * (with a SIGCONT, for a stopped process to get it) and, when some member is still there after
 * the grace, SIGKILL. dash's kill takes `-SIG
 * -PGID`, not `-s SIG`. Last (trap EXIT), taskq's FIFO folder, where taskq left it (a taskq that exits as it should
 * renames it first, see FifoPool): the guard's list's name with `taskq-fifo-` for `taskq-guard-` and no random
 * part, in the list's folder or in any of the temp folders $4... (taskq's FIFOs and its list may be in different ones,
 * for want of room: see nextTempRoot); removed once taskq's pid is a zombie or gone, never while it is another process's
 * (a start time other than the one read as the guard started), nor without /proc, nor where no PID namespace was known (a folder
 * named `<pid>-n-` may be another namespace's, as the next taskq's tidy-up judges it). Else the next taskq removes it.
 *
 * A worker's guard (TASKQ_GUARD_LEASE_CS, its lease in centiseconds) also watches its tasks' leases meanwhile, in a subshell
 * (see guardLease): every sixteenth of the lease (a `sleep` it waits for, so that a TERM ends both at once; 0.1 s at least,
 * 1 s at most) it reads taskq's state in /proc/<pid>/stat (t, traced, counts as stopped only when read twice in a row: a
 * tracer's syscall stops show it in a worker that runs), and only while taskq is stopped the list's `-leases` file ("PGID
 * DEADLINE" lines, in centiseconds of /proc/uptime). A group whose shell still has TASKQ_PID=<taskq's pid> and less than a
 * quarter of the lease left is frozen (SIGSTOP), with the other groups of its session, noted first as "PGID DEADLINE
 * GROUPS..." in the list's `-frozen` file, for taskq to continue them once a renewal keeps the lease; the guard continues
 * them too once the file gives the group a later deadline (the lease renewed). Only as the deadline comes (a tenth of a
 * second before it, the nap shortened to look then), the worker still stopped, the group still listed with it and still
 * taskq's, does it SIGKILL them, before the database's lease (which counts from later) lets another worker start the task
 * again; a group no longer listed is forgotten. It ends when taskq is gone (or another process has its pid), when the guard is, and when the guard's input ends.
 */
export const GUARD_SCRIPT = `
taskq=$1 grace=$2 list=$3
shift 3
session_groups() {
  sid=$1 found=" "
  for stat in /proc/[0-9]*/stat; do
    read -r fields 2>/dev/null < "$stat" || continue
    set -f
    set -- \${fields##*) }
    set +f
    [ "$4" = "$sid" ] || continue
    case $3 in ''|0|1|*[!0-9]*) continue ;; esac
    case $found in *" $3 "*) ;; *) found="$found$3 " ;; esac
  done
  echo $found
}
watch_leases() {
  freeze=$(($1 / 4)) every=$(($1 / 16))
  [ "$every" -ge 10 ] || every=10
  [ "$every" -le 100 ] || every=100
  whole=
  sleep 0.01 2>/dev/null || whole=1
  guard=$$ frozen=" " traced= napper= wake=$every
  trap 'kill $napper 2>/dev/null; exit 0' TERM
  while :; do
    nap=$((wake / 100)).$((wake % 100 / 10))$((wake % 10))
    [ -z "$whole" ] || nap=1
    sleep "$nap" & napper=$!
    wait "$napper"
    napper= wake=$every
    kill -0 "$guard" 2>/dev/null || exit 0
    read -r fields 2>/dev/null < "/proc/$taskq/stat" || exit 0
    set -f
    set -- \${fields##*) }
    set +f
    [ "\${20}" = "$start" ] || exit 0
    stopped=
    case $1 in
      T) stopped=1 traced= ;;
      t) [ -z "$traced" ] || stopped=1; traced=1 ;;
      *) traced= ;;
    esac
    [ -n "$stopped" ] || [ "$frozen" != " " ] || continue
    [ -s "$list-leases" ] || { frozen=" "; continue; }
    read -r up _ < /proc/uptime || continue
    case $up in *[0-9].[0-9][0-9]) ;; *) continue ;; esac
    now=\${up%.*}\${up#*.}
    while case $now in 0?*) true ;; *) false ;; esac; do now=\${now#0}; done
    kept=" "
    while read -r pg due; do
      case $pg in ''|0|1|*[!0-9]*) continue ;; esac
      case $due in ''|*[!0-9]*) continue ;; esac
      left=$((due - now))
      case $frozen in
        *" $pg:$due "*)
          kept="$kept$pg:$due "
          # Looked at again a tenth of a second before the deadline, when it is killed.
          if [ "$left" -gt 10 ]; then
            [ $((left - 10)) -ge "$wake" ] || wake=$((left - 10))
            continue
          fi
          [ -n "$stopped" ] || continue
          grep -q -z -x -F "TASKQ_PID=$taskq" "/proc/$pg/environ" 2>/dev/null || continue
          groups=
          while read -r fpg fdue more; do [ "$fpg $fdue" != "$pg $due" ] || groups="$groups $more"; done < "$list-frozen"
          for pgid in $pg $groups; do kill -KILL -$pgid 2>/dev/null; done
          for pgid in $(session_groups "$pg"); do kill -KILL -$pgid 2>/dev/null; done
          continue ;;
        *" $pg:"*)
          # Renewed since it was frozen: the worker holds the lease (and continues them too).
          for pgid in $pg $(session_groups "$pg"); do kill -CONT -$pgid 2>/dev/null; done
          continue ;;
      esac
      [ -n "$stopped" ] && [ "$left" -lt "$freeze" ] || continue
      grep -q -z -x -F "TASKQ_PID=$taskq" "/proc/$pg/environ" 2>/dev/null || continue
      groups=$(session_groups "$pg")
      echo "$pg $due $pg $groups" >> "$list-frozen"
      kept="$kept$pg:$due "
      for pgid in $pg $groups; do kill -STOP -$pgid 2>/dev/null; done
      [ "$left" -gt 10 ] || left=11
      [ $((left - 10)) -ge "$wake" ] || wake=$((left - 10))
    done < "$list-leases"
    frozen=$kept
  done
}
name=\${list##*/}
roots=\${list%"$name"}
for root in "$@"; do roots="$roots
$root/"; done
start=
if read -r fields 2>/dev/null < "/proc/$taskq/stat"; then
  set -f
  set -- \${fields##*) }
  set +f
  start=\${20}
fi
watcher=
case \${TASKQ_GUARD_LEASE_CS:-} in ''|0|*[!0-9]*) ;; *) watch_leases "$TASKQ_GUARD_LEASE_CS" </dev/null & watcher=$! ;; esac
while read -r _; do :; done
[ -z "$watcher" ] || kill "$watcher" 2>/dev/null
rm -f "$list-leases" "$list-leases.new" "$list-frozen"
fifos=taskq-fifo-\${name#taskq-guard-}
fifos=\${fifos%-*}-
# No PID namespace known (\`<pid>-n-\`): a folder so named may be another namespace's taskq of the same pid.
case $fifos in *-n-) start= ;; esac
tidy() {
  [ -n "$start" ] || return 0
  set -f
  IFS='
'
  for root in $roots; do
  unset IFS
  set +f
  for dir in "$root$fifos"*; do
    [ -d "$dir" ] || continue
    tries=0
    while read -r fields 2>/dev/null < "/proc/$taskq/stat"; do
      set -f
      set -- \${fields##*) }
      set +f
      [ "\${20}" = "$start" ] || return 0
      [ "$1" = Z ] && break
      tries=$((tries + 1))
      [ "$tries" -le 50 ] || return 0
      sleep 0.1 2>/dev/null || sleep 1
    done
    rm -rf -- "$dir"
  done
  done
}
trap tidy EXIT
from=/proc/$$/fd/3
[ -f "$from" ] || from=$list
[ -s "$from" ] || exit 0
live=" "
while read -r line; do
  pg=\${line#?}
  case $pg in ''|0|1|*[!0-9]*) continue ;; esac
  case $line in
    +*) live="$live$pg " ;;
    -*) case $live in *" $pg "*) live="\${live%% $pg *} \${live#* $pg }" ;; esac ;;
  esac
done < "$from"
rm -f "$list"
groups=" "
for pg in $live; do
  grep -q -z -x -F "TASKQ_PID=$taskq" "/proc/$pg/environ" 2>/dev/null && groups="$groups$pg "
done
shells=$groups
for pg in $shells; do kill -TERM -$pg 2>/dev/null && kill -CONT -$pg 2>/dev/null; done
[ "$shells" = " " ] || for stat in /proc/[0-9]*/stat; do
  read -r fields 2>/dev/null < "$stat" || continue
  set -f
  set -- \${fields##*) }
  set +f
  case $shells in *" $4 "*) ;; *) continue ;; esac
  case $3 in ''|0|1|*[!0-9]*) continue ;; esac
  case $groups in *" $3 "*) ;; *) groups="$groups$3 " ;; esac
done
for pid in $(grep -l -z -x -F "TASKQ_PID=$taskq" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/||; s|/environ$||'); do
  read -r fields 2>/dev/null < "/proc/$pid/stat" || continue
  set -f
  set -- \${fields##*) }
  set +f
  case $3 in ''|0|1|*[!0-9]*) continue ;; esac
  case $groups in *" $3 "*) ;; *) groups="$groups$3 " ;; esac
done
[ "$groups" = " " ] && exit 0
for pg in $groups; do
  case $shells in *" $pg "*) ;; *) kill -TERM -$pg 2>/dev/null && kill -CONT -$pg 2>/dev/null ;; esac
done
waited=0
while [ "$waited" -lt "$grace" ]; do
  left=
  for pg in $groups; do kill -0 -$pg 2>/dev/null && left=1; done
  [ -z "$left" ] && exit 0
  sleep 1
  waited=$((waited + 1))
done
for pg in $groups; do kill -KILL -$pg 2>/dev/null; done
exit 0
`;

/** The guard's name in `ps`, followed by taskq's pid. */
export const GUARD_NAME = "taskq-guard";

/** The list file's name: `taskq-guard-<pid>-n<PID namespace>-<random>` (see ownerTag), in the temp root (tmpfs where there is one), or the next that had room (see nextTempRoot). */
export const GUARD_LIST_PREFIX = "taskq-guard-";

interface Guard {
  /** The guard process's stdin: it ends when taskq does. */
  input: Writable | undefined;
  list: GroupList;
  killGraceMs: number;
  /** A worker's lease, where the guard watches the running groups' leases (see guardLease); undefined for a local run's. */
  leaseMs: number | undefined;
  /** Guards started again after one was killed (see spawnGuard). */
  restarts: number;
}

/** Guards started again at most, should someone keep killing them. */
const MAX_RESTARTS = 3;

let guard: Guard | undefined;
let failed = false;
/** Why the guard could not start, for the note a run prints; undefined while it could. */
let problem: string | undefined;
let exitHookInstalled = false;

/**
 * A task process group that must not outlive taskq. taskq kills its groups itself on every
 * exit it sees (signals, errors, `process.exit`); a taskq that is SIGKILLed (a CI runner's
 * hard stop, the OOM killer) sees none, and its tasks would run on as orphans, in a
 * durable run alongside the retry another worker starts. So a guard watches them: a small
 * `sh` in its own session that holds a pipe from taskq and reads, once that pipe closes,
 * the list of groups taskq keeps in a file (see GroupList: an append as each task starts,
 * which wakes no one); it stops them as --kill-grace does. Never throws: without a guard
 * (no /bin/sh, no writable temp dir), tasks run as before.
 */
export function guardGroup(pgid: number, killGraceMs: number): void {
  if (failed) return;
  // A run of one task starts its guard here, just after the task's own spawn: the guard's
  // fork then runs beside the task instead of before it (started first, it took 7-8 ms of
  // a 170 ms one-task run on a slow VM).
  startGroupGuard(killGraceMs);
  if (guard === undefined) return;
  try {
    guard.list.add(pgid);
  } catch (error) {
    guardElsewhere(error); // the temp dir filled up or went away: the guard would act on a stale list
  }
}

/**
 * The list could not be written (its temp folder filled up, a /dev/shm that tasks fill too): that guard
 * stops (its list emptied), and where it was for want of room (see noRoom), a new one takes over with a
 * list of the running groups in the next temp folder that takes it (see nextTempRoot), so a SIGKILLed
 * taskq's tasks are still stopped; else there is no guard from then on, and the run's note says why (see
 * guardProblem).
 */
function guardElsewhere(error: unknown): void {
  const old = guard;
  if (old === undefined) return;
  const running = [...old.list.groups];
  stopGuarding();
  const root = path.dirname(old.list.file);
  const code = errorCode(error);
  problem = `its list in ${root} could not be written: ${code}`;
  if (!noRoom(code)) return;
  const moved = makeInTempRoot(
    (next) => {
      const list = makeList(next);
      try {
        for (const pgid of running) list.add(pgid);
      } catch (again) {
        list.discard();
        throw again;
      }
      return list;
    },
    undefined,
    [{ root, code }],
  );
  if (moved.failed.length > 1) problem = `its list could not be written in ${failedRoots(moved.failed)}`;
  if (moved.made === undefined) return;
  const started: Guard = { input: undefined, list: moved.made, killGraceMs: old.killGraceMs, leaseMs: old.leaseMs, restarts: 0 };
  if (!spawnGuard(started)) {
    moved.made.discard();
    return;
  }
  guard = started;
  failed = false;
  problem = undefined;
  scheduleLeasesWrite();
  noteTempRootMove(`cannot write the orphan guard's list in ${failedRoots(moved.failed)}: it is in ${moved.root} instead`);
}

/** The group is gone (or given up on): the guard forgets it, so a reused pgid is safe. */
export function unguardGroup(pgid: number): void {
  guard?.list.remove(pgid);
  if (leases.delete(pgid)) scheduleLeasesWrite();
}

/** The file beside the guard's list with each running group's lease deadline (see guardLease), and the guard's record of the groups it froze for theirs. */
const LEASES_SUFFIX = "-leases";
const FROZEN_SUFFIX = "-frozen";

/**
 * The lease deadline of each running group of a worker's (see guardLease), in centiseconds of /proc/uptime (the clock the
 * guard reads, which goes on while the machine sleeps, as the database's does); `since`, the first one given, tells the
 * guard's record of this task's group from that of an earlier one with the same pgid; `thawed`, the latest deadline
 * whose frozen groups a renewal continued.
 */
const leases = new Map<number, { due: number; since: number; thawed: number }>();
let leasesWriteScheduled = false;

/**
 * A durable worker's task group `pgid` holds a lease that runs out at `endsAt` (performance.now()) unless renewed: told as
 * the task starts and at each renewal. A worker stopped alone (SIGSTOP, job control, a debugger: its tasks run on) renews
 * nothing, and once its lease runs out another worker takes the task and runs it again, beside this one. So the guard,
 * which runs on, looks every sixteenth of the lease (1 s at most) at the worker's state: while it is stopped, a group with
 * less than a quarter of its lease left is frozen (SIGSTOP), its session's other groups too, and SIGKILLed as the lease
 * runs out (a tenth of a second before, on the guard's clock; the database's counts from later still): frozen, then gone,
 * it never runs beside the next attempt. A worker woken in time loses nothing: its next renewal lands here, which continues (SIGCONT) the groups the
 * guard froze for the lease just renewed. One woken too late kills the task as any lost lease does (see Attempt), and
 * leaseLapsed says why. Never while the worker runs: a worker that is late or whose renewals fail (a row locked, the
 * database away) decides for itself. Written once per turn of the event loop, whole, under a new name moved over the old
 * (the guard never reads half a line); without /proc/uptime, nothing is watched.
 */
export function guardLease(pgid: number, endsAt: number): void {
  const current = guard;
  if (current?.leaseMs === undefined || !current.list.groups.has(pgid)) return;
  const now = uptimeCs();
  if (now === undefined) return;
  const due = now + Math.floor((endsAt - performance.now()) / 10);
  const old = leases.get(pgid);
  const lease = { due, since: old?.since ?? due, thawed: old?.thawed ?? -1 };
  leases.set(pgid, lease);
  // Renewed: what the guard froze for an earlier deadline of this task's runs on (the guard, looking later, would too).
  // A task just started has had nothing frozen.
  for (const frozen of old === undefined ? [] : frozenFor(pgid, lease.since)) {
    if (frozen.due >= due || frozen.due <= lease.thawed) continue;
    for (const group of frozen.groups) signalQuietly(group, "SIGCONT");
    lease.thawed = Math.max(lease.thawed, frozen.due);
  }
  scheduleLeasesWrite();
}

/**
 * Whether the guard froze group `pgid` (still listed: asked before it is unguarded) because its worker was stopped as its
 * lease was about to run out, and no renewal kept the lease since (see guardLease): the task was then killed, by the guard
 * or by the worker for its lost lease, whatever its exit status says (a task that traps SIGTERM and exits 0). The shell
 * handler's word for why its task ended.
 */
export function leaseLapsed(pgid: number): boolean {
  const lease = leases.get(pgid);
  if (lease === undefined) return false;
  return frozenFor(pgid, lease.since).some((frozen) => frozen.due >= lease.due);
}

/** The guard's `-frozen` lines for group `pgid` with a deadline from `since` on (this task's, not an earlier one's of the same pgid). */
function frozenFor(pgid: number, since: number): { due: number; groups: number[] }[] {
  const current = guard;
  const file = `${current?.list.file}${FROZEN_SUFFIX}`;
  // Asked at every renewal and task end: a look (no error made and thrown) where the guard has frozen nothing, as most often.
  if (current === undefined || !existsSync(file)) return [];
  let text: string;
  try {
    text = readFileSync(file, "latin1");
  } catch {
    return [];
  }
  const found: { due: number; groups: number[] }[] = [];
  for (const line of text.split("\n")) {
    const [group, due, ...groups] = line.split(" ").map(Number);
    if (group !== pgid || due === undefined || !(due >= since)) continue;
    found.push({ due, groups: groups.filter((other) => Number.isInteger(other) && other > 1) });
  }
  return found;
}

function signalQuietly(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // gone
  }
}

function scheduleLeasesWrite(): void {
  if (leasesWriteScheduled || guard?.leaseMs === undefined) return;
  leasesWriteScheduled = true;
  setImmediate(writeLeases).unref();
}

function writeLeases(): void {
  leasesWriteScheduled = false;
  const current = guard;
  if (current?.leaseMs === undefined) return;
  const file = `${current.list.file}${LEASES_SUFFIX}`;
  try {
    writeFileSync(`${file}.new`, [...leases].map(([pgid, { due }]) => `${pgid} ${due}\n`).join(""), { mode: 0o600 });
    renameSync(`${file}.new`, file);
  } catch {
    // Not written (a full temp folder): none is better than an old deadline, which would stop a task its worker renewed.
    unlinkQuietly(file);
  }
}

/** The time since boot (CLOCK_BOOTTIME) in centiseconds, as /proc/uptime gives it; undefined without /proc. */
function uptimeCs(): number | undefined {
  try {
    const [seconds, hundredths] = readFileSync("/proc/uptime", "latin1").split(" ")[0]?.split(".") ?? [];
    const cs = Number(seconds) * 100 + Number(hundredths);
    return Number.isFinite(cs) ? cs : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the guard's files beside its list (see guardLease). */
function discardLeases(list: GroupList): void {
  for (const suffix of [LEASES_SUFFIX, `${LEASES_SUFFIX}.new`, FROZEN_SUFFIX]) unlinkQuietly(`${list.file}${suffix}`);
}


/**
 * Starts the guard if it is not running. `taskq run` calls it before the first task of a
 * run of several, `taskq worker` as it starts: its spawn then holds back no timer or task
 * start later on. `leaseMs`: a worker's lease, whose running groups' leases the guard
 * watches as well (see guardLease).
 */
export function startGroupGuard(killGraceMs: number, leaseMs?: number): void {
  if (guard === undefined && !failed) guard = startGuard(killGraceMs, leaseMs);
  if (guard === undefined) failed = true;
}

/** No guard from now on: its list is emptied, so it ends at taskq's exit doing nothing. */
function stopGuarding(): void {
  failed = true;
  const stopped = guard;
  guard = undefined;
  if (stopped === undefined) return;
  stopped.list.discard();
  discardLeases(stopped.list);
}

function startGuard(killGraceMs: number, leaseMs: number | undefined): Guard | undefined {
  // A root with no room (a full /dev/shm): the list goes in the next temp folder that takes it.
  const made = makeInTempRoot(makeList, tempRoot());
  if (made.made === undefined) {
    const [only] = made.failed;
    problem = made.failed.length === 1 ? `cannot make its list in ${only!.root}: ${only!.code}` : `cannot make its list in ${failedRoots(made.failed)}`;
    return undefined;
  }
  const list = made.made;
  const started: Guard = { input: undefined, list, killGraceMs, leaseMs, restarts: 0 };
  if (!spawnGuard(started)) {
    list.discard();
    return undefined;
  }
  if (made.failed.length > 0) noteTempRootMove(`cannot make the orphan guard's list in ${failedRoots(made.failed)}: it is in ${made.root} instead`);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // An exit taskq sees: it has stopped its groups itself, and the guard must not touch a reused pgid.
    process.on("exit", () => {
      if (guard === undefined) return;
      guard.list.discard();
      discardLeases(guard.list);
    });
  }
  return started;
}

/** A new list in `root` (see GroupList): throws what the file system throws. */
function makeList(root: string): GroupList {
  return new GroupList(path.join(root, `${GUARD_LIST_PREFIX}${ownerTag()}${Math.random().toString(36).slice(2, 10)}`), guardElsewhere);
}

/**
 * Starts the guard's process for `current`'s list; false when it cannot start. A guard that
 * ends while taskq lives was killed by someone (it only ever ends once taskq is gone): another
 * takes its place, with the same list, up to MAX_RESTARTS times.
 */
function spawnGuard(current: Guard): boolean {
  try {
    const graceSeconds = String(Math.max(1, Math.ceil(current.killGraceMs / 1000)));
    // The script comes in the environment, so `ps` shows "sh -c ... taskq-guard <taskq pid> <grace> <list> <temp folders>".
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TASKQ_GUARD_SCRIPT: GUARD_SCRIPT,
      ...(current.leaseMs === undefined ? {} : { TASKQ_GUARD_LEASE_CS: String(Math.max(1, Math.floor(current.leaseMs / 10))) }),
    };
    const list = current.list.descriptor;
    if (list === undefined) return false;
    const child = spawn("/bin/sh", ["-c", 'eval "$TASKQ_GUARD_SCRIPT"', GUARD_NAME, String(process.pid), graceSeconds, current.list.file, ...tempRoots()], {
      env,
      // Descriptor 3: the list itself, which the guard reads even once its name is deleted (see GUARD_SCRIPT).
      stdio: ["pipe", "ignore", "ignore", list],
      // Its own session: Ctrl-C to taskq's terminal group, or a runner's signal to it, must not end the guard first.
      detached: true,
    });
    // Listened to first: a guard that cannot start reports that as an 'error' event.
    child.on("error", (error: NodeJS.ErrnoException) => {
      problem ??= `cannot start /bin/sh: ${error.code ?? error.message}`;
      if (guard === current) stopGuarding();
    });
    child.on("exit", () => {
      if (guard !== current || current.input !== stdin) return; // replaced already, or no longer guarding
      if (current.restarts >= MAX_RESTARTS || !spawnGuard(current)) stopGuarding();
      else current.restarts++;
    });
    const stdin = child.stdin;
    if (child.pid === undefined || stdin === null) throw new Error("the guard did not start");
    stdin.on("error", () => undefined); // nothing is ever written; its end is the message
    // Neither keeps taskq's event loop alive; taskq's exit closes the pipe, which wakes the guard.
    child.unref();
    (stdin as Writable & { unref?: () => void }).unref?.();
    current.input = stdin;
    return true;
  } catch (error) {
    problem = `cannot start /bin/sh: ${errorCode(error)}`;
    return false;
  }
}

/** Why there is no guard (it could not start), or undefined. */
export function guardProblem(): string | undefined {
  return problem;
}
