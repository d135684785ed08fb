import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { closeSync, constants } from "node:fs";
import { access, stat } from "../fs-async.js";
import { makeDirectory } from "../make-directory.js";
import { AttemptOutput, LATE_PIPES_MAX, type StreamName } from "./attempt-output.js";
import { closeEnds, fifoPool, type PipeEnds } from "./fifo-pool.js";
import { messageOf } from "../errors.js";
import { formatSetMs, TaskCancelledError } from "../engine/errors.js";
import { describeFailure, endedFirstOf, LeaseLapsedError, LogWriteError, NotSpawnedError, TaskFailedError, withSigkillWords, type TaskqKill } from "./errors.js";
import { guardLease, guardProblem, leaseLapsed } from "./group-guard.js";
import { Tail } from "./line-splitter.js";
import { attemptLine, closeLogFile, logPathsIn, openLogFile, openLogFileAsync, type LogFile } from "./log-file.js";
import { beyondReach, exitedByItself, registerProcessGroup, sigkilledByTaskq, TASKQ_PID_VARIABLE, unregisterProcessGroup, type BeyondReach } from "./process-groups.js";
import { formatDuration } from "./format-duration.js";
import { diedBeforeCommand } from "./proc-read.js";
import { OpenTimes } from "./open-times.js";
import { GroupTerminator, type Leftovers } from "./terminate-group.js";
import type { AttemptContext, AttemptResult, OutputSink, ShellHandler, ShellHandlerOptions, ShellTask } from "./types.js";
import { monotonicMs } from "../monotonic.js";
import { startTurn, type TurnsAhead } from "./start-turn.js";
import { STOPPED_NOTE_AFTER_MS, unwatchStopped, watchStopped } from "./stopped-watch.js";
import { tempRootMoveNotes, tempRootNote } from "./temp-root.js";

/** After the task's processes are gone, how long the pipes may stay silent before we stop reading. */
const DRAIN_IDLE_MS = 150;
/**
 * ...and the most we wait for them in all. The task's processes are gone by then, so what its
 * pipes bring past this is from processes it left running (a daemon it started in a session of
 * its own, writing without pause): late output (see AttemptOutput), not a reason to hold the task
 * and its dependents up. The last look at the deadline still reads what the task itself wrote.
 */
const DRAIN_MAX_MS = 500;
/**
 * Creating a task's log file on taskq's main thread blocks every other task's start and
 * end meanwhile. Where it takes longer than this (the median of the last few, see
 * OpenTimes), logs are opened in libuv's thread pool instead, the command starting once its
 * log is open. A round trip through the pool costs more than a cheap create: on tmpfs
 * (~10 us) 1,000 `true` tasks took ~11% longer that way; where ext4 took ~600 us per create
 * (right after thousands of files were deleted), ~12% less (one pool thread, see
 * thread-pool.ts). On another VM, with creates at 0.2-1 ms, within the noise either way.
 */
const SLOW_OPEN_MS = 0.25;
/** While logs are opened in the pool, one in this many is opened here, timed, to notice a disk fast again. */
const PROBE_OPEN_EVERY = 32;
/**
 * A task's FIFOs get a stream (live output, backpressure) once it has run this long; a
 * task that exits sooner has its output read in one go when it exits (see readNow). Its
 * pipe holds 64 KiB meanwhile: a louder task waits for the stream, at most this long.
 */
const STREAM_AFTER_MS = 10;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * The `shell` task type: runs one attempt of `task.run` with `<shell> -c`, in its own
 * process group, streaming output to the sink and to `<logDir>/<taskId>.log`. Its stdout
 * and stderr are FIFOs where they can be made (see FifoPool), so it can reopen them by name;
 * with `mergeOutput`, one FIFO serves as both, so the log keeps the order the task wrote in.
 * Resolves with the result on exit code 0; rejects with TaskFailedError otherwise,
 * or LogWriteError when the log cannot be written. A task's environment is taskq's
 * environment as it was when the handler was created, plus `task.env` and TASKQ_*.
 *
 * Spawns with node:child_process rather than execa: the handler needs the raw 'exit'
 * event (execa settles on pipe close), its own group kill and its own stream handling,
 * so execa would add only its per-spawn cost. Measured (`sh -c true`, 2 in flight,
 * taskq CPU per task): raw spawn 1x, this handler ~1.1x, execa with buffer:false ~1.4x.
 */
export function createShellHandler(options: ShellHandlerOptions): ShellHandler {
  const shell = options.shell ?? "/bin/sh";
  const tailLines = options.tailLines ?? 20;
  const merge = options.mergeOutput === true;
  // Read once: spreading process.env (a C++-backed object) costs ~1 ms per spawn. No
  // prototype, so a variable named __proto__ is a variable like any other.
  const baseEnv: NodeJS.ProcessEnv = Object.assign(Object.create(null) as NodeJS.ProcessEnv, process.env);
  for (const name of options.hiddenEnv ?? []) delete baseEnv[name];
  // What every task starts inherits it: taskq stops what carries it at exit, its guard if taskq is SIGKILLed.
  baseEnv[TASKQ_PID_VARIABLE] = TASKQ_PID;
  // How long a task has after its SIGTERM: a taskq the task runs fits its own stop into it (see cli/outer-grace.ts).
  const killGrace = String(options.killGraceMs);
  const logPathOf = logPathsIn(options.logDir);
  let logDirReady = false;
  // mkdir -p once per handler (synchronously, as the log files are opened); a failure is
  // not remembered, so a later attempt tries again.
  const ensureLogDir = (): void => {
    if (logDirReady) return;
    makeDirectory(options.logDir);
    logDirReady = true;
  };

  // The log folder removed during the run (by a clean-up step, say) is made again, once,
  // rather than every later task failing for want of it; the logs it held are gone: say so.
  const remakeLogDir = (): void => {
    makeDirectory(options.logDir);
    options.onLogDirRemade?.();
    options.sink.note?.(`the log folder ${options.logDir} was deleted during the run (by a task?) and is made again: what was written to it before is lost`);
  };
  const openLogNow = (logPath: string, attempt: number): LogFile => {
    try {
      return openLogFile(logPath, attempt);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      remakeLogDir();
      return openLogFile(logPath, attempt);
    }
  };
  const openLogLater = (logPath: string, attempt: number): Promise<LogFile> =>
    openLogFileAsync(logPath, attempt).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      remakeLogDir();
      return openLogFileAsync(logPath, attempt);
    });
  // A log file is made on this thread, where that is cheap; where the disk makes it slow, in
  // the thread pool while this thread starts and reaps the other tasks (see SLOW_OPEN_MS).
  const slowOpenMs = options.slowLogOpenMs ?? SLOW_OPEN_MS;
  const openTimes = new OpenTimes();
  let openedLater = 0;
  /** Whether a command was spawned yet: before the first, what holds a start up is the setting up of the run. */
  let spawnedAny = false;
  const openLog = (logPath: string, attempt: number): LogFile | Promise<LogFile> => {
    if (openTimes.median() > slowOpenMs && ++openedLater % PROBE_OPEN_EVERY !== 0) return openLogLater(logPath, attempt);
    const start = monotonicMs();
    const log = openLogNow(logPath, attempt);
    openTimes.add(monotonicMs() - start);
    return log;
  };

  return async (task: ShellTask, ctx: AttemptContext): Promise<AttemptResult> => {
    // When the attempt's timeout began: a timeout that runs out before the spawn says what took the time.
    const calledAt = monotonicMs();
    // Out of the call stack that ended the last attempt, one start per turn of the event loop (see startTurn).
    const turnsAhead = await startTurn(task.id);
    /** How long its turn took to come: the tasks ahead of it held it up only where that was most of its wait. */
    const turnMs = monotonicMs() - calledAt;
    const logPath = logPathOf(task.id);
    const startedAt = monotonicMs();
    // Under GitHub Actions (a sink keeping lines whole for its runner), a long line is cut after a whole word.
    const tail = new Tail(tailLines, { words: options.sink.wholeLines === true });
    ctx.watchTail?.(() => tail.lines());
    const result = (exit: Exit, abortReason: unknown): AttemptResult => {
      const timedOut = reasonCode(abortReason) === "TIMEOUT";
      return {
        exitCode: exit.code,
        signal: exit.signal,
        timedOut,
        cancelled: abortReason !== undefined && !timedOut,
        durationMs: Math.round(monotonicMs() - startedAt),
        tail: tail.lines(),
      };
    };

    let opened: LogFile | Promise<LogFile>;
    /** How long opening the log file took (making its folder too; from startedAt, just before), on this thread or in the thread pool meanwhile. */
    let logOpenMs = 0;
    try {
      ensureLogDir();
      opened = openLog(logPath, ctx.attempt);
    } catch (error) {
      throw new LogWriteError(logPath, error);
    }
    if (opened instanceof Promise) {
      opened = opened.then((log) => {
        logOpenMs = monotonicMs() - startedAt;
        return log;
      });
      // Handled now: it may fail while take() waits, before it is awaited.
      opened.catch(() => {});
    } else {
      logOpenMs = monotonicMs() - startedAt;
    }

    // Real pipes (FIFOs) where the machine can make them, so the task can reopen its
    // output by name; otherwise Node's sockets. May wait for mkfifo: check the signal after.
    // Merged: one FIFO is both stdout and stderr, so their order is kept byte for byte.
    const movedRoot = tempRootNote();
    if (movedRoot !== undefined) noteOnce("temp-root", options.sink, () => movedRoot);
    const pipesAsked = monotonicMs();
    const pipes = await fifoPool().take(merge ? 1 : 2);
    /** How long the pipes took: a mkfifo's batch, where none were made ahead (the run's first tasks, on a slow machine). */
    const pipesMs = monotonicMs() - pipesAsked;
    sayTempRootMoves(options.sink);
    if (pipes === undefined) noteOnce("fifo", options.sink, () => `no FIFOs for tasks' output (${fifoPool().problem ?? "unknown"}): tasks get sockets, which cannot be reopened by name (a task's \`> /dev/stderr\` fails with ENXIO)`);
    let log: LogFile;
    try {
      log = opened instanceof Promise ? await opened : opened;
    } catch (error) {
      // The command never starts without its log.
      if (pipes !== undefined) for (const ends of pipes) closeEnds(ends);
      throw new LogWriteError(logPath, error);
    }
    if (ctx.signal.aborted) {
      if (pipes !== undefined) for (const ends of pipes) closeEnds(ends);
      const reason: unknown = ctx.signal.reason;
      const stopped = result({ code: null, signal: null }, reason);
      // A timeout before the spawn (shorter than the wait for its turn among many tasks started at once, or than a
      // slow disk's open of its log file) says so, and what took the time: "timed out after 100ms" alone tells of
      // a command that ran, and left no output.
      const failure = stopped.timedOut
        ? new TaskFailedError(`${describeFailure(task, stopped)} before its command started (${preSpawnWait({ logOpenMs, pipesMs, turnsAhead, turnMs, firstStart: !spawnedAny }, monotonicMs() - calledAt)})`, stopped, { permanent: false, cause: reason })
        : TaskFailedError.fromResult(task, stopped, reason);
      log.writeLine(attemptLine(ctx.attempt, stopped.timedOut ? failure.message : ending(task, stopped, reason, {})));
      await closeLogFile(log);
      throw failure;
    }

    // The task's own variables on top of baseEnv, which is their prototype: spawn() takes
    // inherited variables too (node's child_process reads the env with for...in), and
    // copying baseEnv's ~35 variables into a new object for each task cost ~14 µs.
    const env = taskEnv(baseEnv, task.env, {
      TASKQ_RUN_ID: options.runId,
      TASKQ_TASK_ID: task.id,
      TASKQ_ATTEMPT: String(ctx.attempt),
      TASKQ_KILL_GRACE_MS: killGrace,
      // Over the file's env too: a task's processes are found by it (see process-groups.ts).
      [TASKQ_PID_VARIABLE]: TASKQ_PID,
    });
    // A shutdown signal came while this attempt got ready: its command does not start (nothing awaited from here to the spawn).
    if (options.shutdownSignals?.stopping() === true) {
      if (pipes !== undefined) for (const ends of pipes) closeEnds(ends);
      const stopped = new NotSpawnedError();
      log.writeLine(attemptLine(ctx.attempt, "stopped by the shutdown before its command started"));
      await closeLogFile(log);
      throw stopped;
    }
    const stdio: StdioOptions = pipes === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", pipes[0].write, (pipes[1] ?? pipes[0]).write];
    let child: ChildProcess;
    try {
      // detached: the shell leads a new process group, so the whole tree can be signalled.
      // "--": a command starting with "-" is a command (`-x: not found`), not the shell's options.
      child = spawn(shell, ["-c", "--", task.run], { cwd: task.cwd, env, stdio, detached: true });
    } catch (error) {
      if (pipes !== undefined) for (const ends of pipes) closeEnds(ends);
      throw await notStarted(log, ctx.attempt, startFailure(task, result({ code: null, signal: null }, undefined), await explainSpawnError(error, task, env)));
    }
    // The task's timeout counts from here: its wait for its turn to spawn (behind the other tasks started
    // at the same moment: at -j 400, a second or more) is taskq's, not the command's.
    ctx.startClock?.();
    spawnedAny = true;
    const exited = waitForExit(child);
    const pid = child.pid;
    // First of all: the guard's list gets the group while the task's shell is still starting (see group-guard.ts).
    if (pid !== undefined) {
      registerProcessGroup(pid, options.killGraceMs);
      // A worker's: the guard stops the task should the worker be stopped as its lease is about to run out.
      ctx.onLeaseEnds?.((endsAt) => guardLease(pid, endsAt));
    }
    sayTempRootMoves(options.sink);
    const noGuard = guardProblem();
    if (noGuard !== undefined) noteOnce("guard", options.sink, () => `no guard against orphans (${noGuard}): should taskq be SIGKILLed, its tasks run on`);
    // The child has its copies: without closing ours, the pipes would never reach EOF.
    if (pipes !== undefined) {
      for (const ends of pipes) closeSync(ends.write);
      fifoPool().openAhead();
    }
    if (pid === undefined) {
      if (pipes !== undefined) for (const ends of pipes) closeSync(ends.read);
      const outcome = await exited;
      throw await notStarted(log, ctx.attempt, startFailure(task, result({ code: null, signal: null }, undefined), await explainSpawnError(outcome.error, task, env)));
    }

    // Dead already, before its command ran: a signal to taskq's process group as the shell started (see shutdownSignals).
    const diedStarting = options.shutdownSignals !== undefined && diedBeforeCommand(pid);
    const terminator = new GroupTerminator(pid, options.killGraceMs);
    /** The log could not be written while the command ran, so taskq stopped it. */
    let stoppedForLog = false;
    let running = true;
    const output = new AttemptOutput({
      log,
      onLine: (stream: StreamName, text: string) => {
        tail.push(text);
        try {
          options.sink.line(task.id, stream, text, ctx.attempt);
        } catch {
          // A failing renderer must not fail the task or lose its log.
        }
      },
      ...(options.sink.lines === undefined
        ? {}
        : {
            linesAsWritten: options.sink.asWritten === true,
            onLines: (stream: StreamName, bytes: Buffer, count: number, ends: Int32Array) => {
              tail.pushBlock(bytes, count, ends);
              try {
                options.sink.lines?.(task.id, stream, bytes, count, ends, ctx.attempt);
              } catch {
                // as above
              }
            },
          }),
      ...(options.sink.droppedStates === undefined
        ? {}
        : {
            onDroppedStates: (stream: StreamName, bytes: Buffer) => {
              try {
                options.sink.droppedStates?.(task.id, stream, bytes, ctx.attempt);
              } catch {
                // as above
              }
            },
          }),
      onLogError: () => {
        stoppedForLog = running;
        terminator.terminate();
      },
      // A daemon the task started (setsid) may hold its pipes open after it ended: they are read on.
      lateLog: { path: logPath, attempt: ctx.attempt },
      // Not said in a shutdown, which stops what the tasks left running before its summary: 60 tasks each leaving a
      // daemon printed 52 such notes just before the note that they were being stopped.
      onLate: (kept) => {
        if (options.shutdownSignals?.stopping() === true) return;
        options.sink.note?.(
          kept
            ? `${task.id}: a process it left running still holds its output; what that writes goes on into ${logPath}`
            : `${task.id}: a process it left running still holds its output; ${LATE_PIPES_MAX} such pipes are kept open already, so this one is closed (its writer may get SIGPIPE)`,
          task.id,
        );
      },
      onLateLost: (error) =>
        options.sink.note?.(`${task.id}: what a process it left running wrote after it ended cannot be written to ${logPath} (${errorCodeOf(error) ?? messageOf(error)}): it is dropped`, task.id),
      ...(options.sink.whenDrained === undefined ? {} : { whenDisplayDrained: () => options.sink.whenDrained?.() }),
      ...(options.sink.lineState === undefined ? {} : { lineState: (text: string) => options.sink.lineState!(text) }),
      ...(options.sink.showOpenLineAfterMs === undefined ? {} : { showOpenLineAfterMs: options.sink.showOpenLineAfterMs }),
      wholeLines: options.sink.wholeLines === true,
      ...(options.sink.openLine === undefined
        ? {}
        : {
            onOpenLine: (stream: StreamName, bytes: Buffer, fresh: boolean) => {
              try {
                options.sink.openLine?.(task.id, stream, bytes, fresh);
              } catch {
                // as above
              }
            },
          }),
    });
    // FIFOs not yet given to a stream: read once the task exits, unless it runs long enough to stream.
    let unread: Array<[PipeEnds, StreamName]> = [];
    let streamTimer: NodeJS.Timeout | undefined;
    if (pipes === undefined) {
      if (child.stdout) output.attach(child.stdout, "stdout");
      if (child.stderr) output.attach(child.stderr, "stderr");
    } else {
      unread = pipes.length === 1 ? [[pipes[0], "output"]] : [[pipes[0], "stdout"], [pipes[1], "stderr"]];
      streamTimer = setTimeout(() => {
        for (const [ends, stream] of unread) output.attachPipe(ends.read, stream);
        unread = [];
      }, STREAM_AFTER_MS);
    }

    let abortReason: unknown;
    let sharedStop: TaskCancelledError | undefined;
    const onAbort = (): void => {
      // The shell ended by itself before the abort (its exit told or not yet: a worker frozen
      // past its lease, a timer due in the same turn on a loaded machine): it ended as it did, not
      // stopped. Told as stopped, a deploy that had succeeded was recorded failed, and run again.
      // Its last output may still wait for a reader of ours that stopped reading (`taskq run |
      // less`, left open): no longer, or the attempt would not end until the queue gave up on it,
      // after the kill grace, and recorded it as stopped after all.
      // (Killed, by a second Ctrl-C say, it was stopped: its output must not wait for a reader.)
      if (!running || exitedByItself(pid)) {
        output.stopWaiting();
        terminator.cutLeaving();
        return;
      }
      abortReason = ctx.signal.reason;
      terminator.terminate();
      // A durable worker's lease lost: another worker may run the task from now on, so no kill
      // grace lets this one run on beside it (a task that ignores SIGTERM would, for the grace).
      if (reasonCode(abortReason) === "LEASE_LOST") terminator.kill();
    };
    ctx.signal.addEventListener("abort", onAbort, { once: true });

    // A process of the task's stopped by a signal holds it up as a hang would, the user not knowing why: said, with the way out.
    watchStopped(pid, (stoppedPid, command) => options.sink.note?.(stoppedNote(task.id, stoppedPid, command), task.id));
    let exit: Exit;
    /**
     * Whether taskq had sent the task's group SIGKILL when its shell ended (a second Ctrl-C, the kill grace): its failure
     * then gives no hint of the out-of-memory killer. With the kill grace, once reaped, where stopping the attempt came to
     * taskq's SIGKILL after it (the shell or what it left ignored SIGTERM); `atOnce` where taskq's SIGKILL came with no
     * grace, as a second Ctrl-C's: "aborted by shutdown" alone would leave the kill unsaid.
     */
    const kill: TaskqKill = {};
    try {
      // The attempt ends when the shell exits, not when its pipes close: a background
      // job may hold them open forever.
      const outcome = await exited;
      // Reaped: a second Ctrl-C from here on (killAllProcessGroups) must not signal its pid's group or session as the task's.
      terminator.shellExited();
      exit = outcome.exit ?? { code: null, signal: null };
      running = false;
      options.onCommandEnded?.(ctx.signal);
      unwatchStopped(pid);
      kill.byTaskq = sigkilledByTaskq(pid);
      // Frozen by the guard, its worker stopped as its lease was about to run out, and killed once it ran out (by the guard, or
      // by the worker's lost lease): whatever its exit status (a task that traps SIGTERM exits 0). Asked before the group
      // leaves the guard's list.
      if ((abortReason === undefined || reasonCode(abortReason) === "LEASE_LOST") && ctx.onLeaseEnds !== undefined && leaseLapsed(pid)) abortReason = new LeaseLapsedError();
      // Killed by the signal that stops taskq (sent to its process group as the shell started, see
      // ShellHandlerOptions.shutdownSignals): stopped with taskq, not failed.
      if (abortReason === undefined && exit.signal !== null && options.shutdownSignals !== undefined && (await options.shutdownSignals.received(exit.signal, diedStarting))) {
        // As it started, the signal to taskq's process group reached it; later, a signal sent to every process did (a container's stop).
        const how = diedStarting ? "a signal to taskq's process group reaches a task as it starts" : "sent to every process, or by the task to itself";
        abortReason = sharedStop = new TaskCancelledError("shutdown", `killed by ${exit.signal}, which stopped taskq too (${how})`);
      }
      // Background jobs left in the group may still write while they are reaped: the
      // timer still gives the pipes a stream if that takes long.
      const leftovers = await terminator.reap();
      // Read again: a second Ctrl-C may have SIGKILLed what the shell left (it died of the SIGTERM) while the reap waited.
      if (terminator.killedAfterGrace) {
        kill.graceMs = options.killGraceMs;
        // Its shell (or the command it became) stopped on the SIGTERM: what the grace's SIGKILL ended was what it started.
        if (exit.signal !== "SIGKILL") kill.othersKilled = terminator.killedAfterShell;
        // With no grace, the SIGKILL came right after the SIGTERM: where the shell had ended first (its trap exited), it is said so.
        if (options.killGraceMs <= 0) kill.endedFirst = endedFirstOf({ exitCode: exit.code, signal: exit.signal });
      } else kill.atOnce = sigkilledByTaskq(pid);
      // Stopped without a word, a leftover would go unnoticed, and one that ignores SIGTERM
      // adds the kill grace to the task's time for no reason the user could see.
      if (leftovers !== undefined) options.sink.note?.(leftoversNote(task.id, leftovers, options.killGraceMs), task.id);
      // Processes it started as another user (`sudo`) outlive every signal of taskq's: said, not left unseen.
      const unreachable = beyondReach(pid);
      if (unreachable !== undefined) options.sink.note?.(beyondReachNote(task.id, unreachable), task.id);
      // The group is empty now: its id is free for anyone, and leaves every list at once (the
      // output may take seconds more to drain).
      terminator.dispose();
      // What it left in other groups of its session is stopped a second later: said then, for a task that ended by itself (not in a shutdown, which says it stops them).
      unregisterProcessGroup(pid, options.killGraceMs, abortReason === undefined ? (count) => sweptNote(task.id, count, options) : undefined);
      // Stopped: its last output must not wait for a reader of ours that may never read again, nor for a daemon it started to fall silent.
      if (abortReason !== undefined) output.stopWaiting();
      clearTimeout(streamTimer);
      for (let next = unread.shift(); next !== undefined; next = unread.shift()) {
        const [ends, stream] = next;
        if (output.readNow(ends.read, stream)) closeSync(ends.read);
        else output.attachPipe(ends.read, stream); // a writer is left (or much is): drain it as a stream
      }
      await output.drain(DRAIN_IDLE_MS, DRAIN_MAX_MS);
      // A log tells how each attempt that did not succeed ended; a successful one's is the task's output alone.
      await output.close(abortReason === undefined && exit.code === 0 ? undefined : attemptLine(ctx.attempt, ending(task, result(exit, abortReason), abortReason, kill)));
    } finally {
      clearTimeout(streamTimer);
      for (const [ends] of unread) closeSync(ends.read);
      ctx.signal.removeEventListener("abort", onAbort);
      unwatchStopped(pid);
      terminator.dispose();
      unregisterProcessGroup(pid, options.killGraceMs);
    }

    // Its ending as the cause: the summary shows a stopped task's last lines as a failed one's.
    if (sharedStop !== undefined) throw new TaskCancelledError("shutdown", sharedStop.message, undefined, { cause: TaskFailedError.fromResult(task, result(exit, sharedStop)) });
    const final = result(exit, abortReason);
    // A cancel stays a cancel (never retried) even if the log also failed.
    if (output.logError !== undefined && !final.cancelled) throw logFailure(task, logPath, output.logError, final, stoppedForLog, kill);
    if (final.timedOut || final.cancelled || exit.code !== 0) throw TaskFailedError.fromResult(task, final, abortReason, kill);
    return final;
  };
}

/**
 * "build: stopped 2 processes it left running; 1 did not stop on SIGTERM and was killed after the kill grace
 * (5s); `wait` for them in the script, or start them with `setsid` to leave them running on purpose".
 * What to do either way: a leftover is most often a background job the script forgot to wait for.
 * Those that ignored the SIGTERM and ended by themselves within the grace are told apart: taskq did not
 * stop them, but the task's end waited for them ("build: 1 process it left running ignored SIGTERM and
 * ended by itself within the kill grace (5s), which the task's end waited for; ...").
 */
function leftoversNote(taskId: string, { stopped, killed, endedByThemselves, killedAtOnce }: Leftovers, killGraceMs: number): string {
  const all = stopped + endedByThemselves;
  const them = all === 1 ? "it" : "them";
  const advice = `\`wait\` for ${them} in the script, or start ${them} with \`setsid\` to leave ${them} running on purpose`;
  const ended = (count: number, more: string): string =>
    `${count}${more} ${count === 1 ? "process it left running ignored SIGTERM and ended by itself" : "processes it left running ignored SIGTERM and ended by themselves"} within the kill grace (${formatSetMs(killGraceMs)}), which the task's end waited for`;
  if (stopped === 0) return `${taskId}: ${ended(endedByThemselves, "")}; ${advice}`;
  const note = `${taskId}: stopped ${stopped} ${stopped === 1 ? "process" : "processes"} it left running`;
  const also = endedByThemselves === 0 ? "" : `; ${ended(endedByThemselves, " more")}`;
  if (killed === 0) return also === "" ? `${note} (${advice})` : `${note}${also}; ${advice}`;
  // A second Ctrl-C's SIGKILL ended them: said so, not that they were stopped as a SIGTERM stops them.
  if (killedAtOnce) {
    const howMany = `${killed} ${killed === 1 ? "process" : "processes"} it left running`;
    const atOnce = `with SIGKILL at once, not after the kill grace`;
    if (killed === stopped) return `${taskId}: killed ${howMany} ${atOnce}${also}; ${advice}`;
    return `${note}; ${killed === 1 ? "1 was" : `${killed} were`} killed ${atOnce}${also}; ${advice}`;
  }
  if (killGraceMs <= 0) return `${note}, with SIGKILL beside its SIGTERM (the kill grace is 0)${also}; ${advice}`;
  const who = killed === 1 ? (stopped === 1 ? "it did not stop on SIGTERM and was" : "1 did not stop on SIGTERM and was") : `${killed} did not stop on SIGTERM and were`;
  return `${note}; ${who} killed after the kill grace (${formatSetMs(killGraceMs)})${also}; ${advice}`;
}

/**
 * "build: stopping 1 process it left running in another process group of its session (job control, coreutils
 * `timeout`): SIGTERM, then SIGKILL after the kill grace (5s); ...": what the sweep a second after the task ended stops.
 * Not said in a shutdown, which stops what the tasks left running with a note of its own.
 */
function sweptNote(taskId: string, count: number, options: ShellHandlerOptions): void {
  if (options.shutdownSignals?.stopping() === true) return;
  const them = count === 1 ? "it" : "them";
  const what = `${count} ${count === 1 ? "process" : "processes"} it left running in another process group of its session (job control, coreutils \`timeout\`)`;
  const how = options.killGraceMs > 0 ? `SIGTERM, then SIGKILL after the kill grace (${formatSetMs(options.killGraceMs)})` : "SIGTERM, then SIGKILL (the kill grace is 0)";
  options.sink.note?.(`${taskId}: stopping ${what}: ${how}; \`wait\` for ${them} in the script, or start ${them} with \`setsid\` to leave ${them} running on purpose`, taskId);
}

/** "build: process 4242 (sleep) has been stopped for at least 10s (SIGSTOP or SIGTSTP), and the task waits for it: `kill -CONT 4242` resumes it". */
function stoppedNote(taskId: string, pid: number, command: string): string {
  const which = command === "" ? `process ${pid}` : `process ${pid} (${command})`;
  return `${taskId}: ${which} has been stopped for at least ${formatDuration(STOPPED_NOTE_AFTER_MS)} (SIGSTOP or SIGTSTP), and the task waits for it: \`kill -CONT ${pid}\` resumes it`;
}

/** "deploy: 2 processes it left running are another user's (root), which taskq may not signal: they run on". */
function beyondReachNote(taskId: string, { count, users }: BeyondReach): string {
  const whose = `another user's (${users.join(", ")})`;
  return count === 1
    ? `${taskId}: 1 process it left running is ${whose}, which taskq may not signal: it runs on`
    : `${taskId}: ${count} processes it left running are ${whose}, which taskq may not signal: they run on`;
}

/** `base`'s variables, then `own`'s, then `taskq`'s, each over the one before. */
function taskEnv(base: NodeJS.ProcessEnv, own: Record<string, string>, taskq: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.create(base) as NodeJS.ProcessEnv;
  for (const name in own) env[name] = own[name];
  for (const name in taskq) env[name] = taskq[name];
  return env;
}

/** Settles on 'exit' (with code and signal) or on a spawn 'error' (with no pid). */
function waitForExit(child: ChildProcess): Promise<{ exit?: Exit; error?: unknown }> {
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve({ exit: { code, signal } }));
    // After a successful spawn, 'error' can only come from a failed kill(): nothing to do.
    child.on("error", (error) => {
      if (child.pid === undefined) resolve({ error });
    });
  });
}

/** An fs error's code ("ENOSPC", "EISDIR"): its message repeats the path the note names already. */
function errorCodeOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** What an attempt's start waited on before its spawn (see preSpawnWait). */
interface PreSpawnWait {
  /** Opening its log file, on this thread or in the thread pool. */
  logOpenMs: number;
  /** Taking its pipes (waiting for a mkfifo where none were made yet). */
  pipesMs: number;
  /** Attempts waiting for their turn to start ahead of it (see startTurn)... */
  turnsAhead: TurnsAhead;
  /** ...and how long its turn took to come. */
  turnMs: number;
  /** No command was spawned yet: taskq was still setting up the run. */
  firstStart: boolean;
}

/**
 * What held up the spawn of an attempt whose timeout ran out before it: opening its log file, where that took most
 * of the wait (a slow or hung disk), else making its pipes, where that did, else its turn of taskq's thread: behind
 * the tasks started at the same moment where there were any and its turn took most of the wait (a task ahead of it
 * whose turn came at once did not hold it up: a retry's attempt, say, behind a task whose start line is long out),
 * else behind the run's own setting up (before the run's first spawn) or other work of taskq's.
 */
function preSpawnWait(wait: PreSpawnWait, waitedMs: number): string {
  if (wait.logOpenMs * 2 >= waitedMs) return `opening its log file took ${formatDuration(wait.logOpenMs)}`;
  if (wait.pipesMs * 2 >= waitedMs) return `making its pipes took ${formatDuration(wait.pipesMs)}`;
  if (wait.turnsAhead.count > 0 && wait.turnMs * 2 >= waitedMs) return `taskq was still starting ${aheadWords(wait.turnsAhead)} ahead of it`;
  return wait.firstStart ? "taskq was still setting up the run" : "taskq was busy with other work";
}

/**
 * The tasks whose starts came first, by id: their start lines may be long out (a retry's attempt behind a task
 * that took its turn after it), so "the tasks ahead of it" alone would leave the user looking for them.
 */
function aheadWords({ count, ids }: TurnsAhead): string {
  const names = ids.map((id) => JSON.stringify(id));
  if (count === 1) return `task ${names[0] ?? ""}`;
  return `the ${count} tasks ${names.join(", ")}${count > names.length ? ` and ${count - names.length} more` : ""}`;
}

function reasonCode(reason: unknown): unknown {
  return typeof reason === "object" && reason !== null ? (reason as { code?: unknown }).code : undefined;
}

const TASKQ_PID = String(process.pid);

/** Why a spawn can fail for a moment: out of processes, open files or memory. Retrying may help. */
const PASSING_SPAWN_ERRORS = new Set(["EAGAIN", "EMFILE", "ENFILE", "ENOMEM"]);

/** How an attempt that did not succeed ended, for its log's last line: its failure in words, or why taskq stopped it. */
function ending(task: ShellTask, result: AttemptResult, abortReason: unknown, kill: TaskqKill): string {
  // A stop that took the SIGKILL after the kill grace says so, as a timeout does: the stop's time is otherwise unexplained.
  if (result.cancelled) return withSigkillWords(`stopped: ${messageOf(abortReason)}`, kill);
  return describeFailure(task, result, kill);
}

/** Ends the log of an attempt whose command could not start with why, and returns the failure to throw. */
async function notStarted(log: LogFile, attempt: number, failure: TaskFailedError): Promise<TaskFailedError> {
  log.writeLine(attemptLine(attempt, failure.message));
  await closeLogFile(log);
  return failure;
}

/**
 * The command could not start: permanent (a missing cwd or shell), unless the machine was short of
 * something for a moment. A permanent one says so (`; never retried`), as an exit code 127 does:
 * a task with retries left would otherwise end after one attempt with no word of why.
 */
function startFailure(task: ShellTask, result: AttemptResult, cause: unknown): TaskFailedError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const code = ((cause as { cause?: unknown } | undefined)?.cause ?? cause) as NodeJS.ErrnoException | undefined;
  const permanent = !PASSING_SPAWN_ERRORS.has(String(code?.code));
  return new TaskFailedError(`could not start: ${reason}${permanent ? "; never retried" : ""}`, result, { permanent, cause });
}

/**
 * The log could not be written (a full disk). A command that exited 0 ran to its end: it is
 * not run again (its side effects done twice) for want of its log. One taskq stopped for it
 * may be retried, as may one that failed on its own (as its exit code allows).
 */
function logFailure(task: ShellTask, logPath: string, error: Error, result: AttemptResult, stoppedForLog: boolean, kill: TaskqKill): LogWriteError {
  const ran = stoppedForLog
    ? "taskq stopped the command: its output had nowhere to go"
    : result.exitCode === 0
      ? "the command itself exited with code 0; not retried, so it does not run twice"
      : `the command ${TaskFailedError.fromResult(task, result, undefined, kill).message}`;
  const permanent = stoppedForLog ? false : result.exitCode === 0 || TaskFailedError.fromResult(task, result).permanent;
  return new LogWriteError(logPath, error, result, { detail: ran, permanent });
}

/** Linux's limit for one argument or one variable (MAX_ARG_STRLEN), its terminating NUL included. */
const ONE_ARGUMENT_MAX = 128 * 1024;

/** "spawn /bin/sh ENOENT" usually means a missing working directory, E2BIG a command too long, EAGAIN too many processes: say so. */
async function explainSpawnError(error: unknown, task: ShellTask, env: NodeJS.ProcessEnv): Promise<unknown> {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EAGAIN") {
    // fork's EAGAIN: a limit on processes (threads count too), not a busy resource to wait for.
    return new Error(`${messageOf(error)}: no process can be made, a limit on processes is reached (ulimit -u, a cgroup's pids.max such as a container's --pids-limit, or the system's)`, { cause: error });
  }
  if (code === "E2BIG") {
    const commandBytes = Buffer.byteLength(task.run);
    let envBytes = 0;
    let variables = 0;
    let largest = { name: "", bytes: 0 };
    for (const name in env) {
      // inherited ones too, as spawn() does
      const bytes = Buffer.byteLength(`${name}=${env[name] ?? ""}`) + 1;
      envBytes += bytes;
      variables++;
      if (bytes > largest.bytes) largest = { name, bytes };
    }
    const message =
      commandBytes >= ONE_ARGUMENT_MAX
        ? `the command is ${commandBytes} bytes: too long to start a process (E2BIG; Linux takes at most 128 KiB for one argument: put it in a script file)`
        : largest.bytes >= ONE_ARGUMENT_MAX
          ? `the variable ${largest.name} is ${largest.bytes} bytes: too long to start a process (E2BIG; Linux takes at most 128 KiB for one variable)`
          : `the command (${commandBytes} bytes) and the environment (${envBytes} bytes in ${variables} variables) are too long together to start a process (E2BIG; Linux takes a quarter of the stack limit, \`ulimit -s\`, for all of them)`;
    return new Error(message, { cause: error });
  }
  if (code === undefined || !CWD_ERRORS.has(code)) return error;
  const problem = await stat(task.cwd).then(
    async (info) => {
      if (!info.isDirectory()) return "is not a folder";
      // A folder all the same: one the user may not enter is EACCES from the child's chdir.
      return access(task.cwd, constants.X_OK).then(
        () => undefined,
        () => "cannot be entered: permission denied (EACCES)",
      );
    },
    (statError: NodeJS.ErrnoException) =>
      statError.code === "ELOOP"
        ? "cannot be reached: its symbolic links form a loop (ELOOP)"
        : statError.code === "EACCES"
          ? "cannot be reached: permission denied on a folder above it (EACCES)"
          : statError.code === "ENAMETOOLONG"
            ? "is too long a path (ENAMETOOLONG)"
            : "does not exist",
  );
  if (problem === undefined) return error;
  // What to do: the folder must be there when the task starts; a task it depends on may make it.
  return new Error(`working directory ${task.cwd} ${problem} (the task's cwd: ${problem === "does not exist" || problem === "is not a folder" ? "make that folder in a task this one depends on, or fix the cwd" : "fix the cwd or the folder"})`, { cause: error });
}

/** Errors spawn() gives when the child cannot change to the task's cwd (a missing shell gives ENOENT too: told apart by a look at the cwd). */
const CWD_ERRORS = new Set(["ENOENT", "ENOTDIR", "ELOOP", "EACCES", "ENAMETOOLONG"]);

/** The fallbacks already told of: each once per process, however many handlers and tasks. */
const noted = new Set<string>();

/** What went in another temp folder for want of room (see nextTempRoot): a note each, once. */
function sayTempRootMoves(sink: OutputSink): void {
  for (const moved of tempRootMoveNotes()) noteOnce(`temp-root-moved ${moved}`, sink, () => moved);
}

function noteOnce(what: string, sink: OutputSink, text: () => string): void {
  if (noted.has(what) || sink.note === undefined) return;
  noted.add(what);
  sink.note(text());
}
