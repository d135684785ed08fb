import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, runCli, startCli } from "../helpers/cli.js";
import { bestOfAlternating, wallTime } from "../helpers/timing.js";
import { findLeftovers, isAlive } from "../helpers/processes.js";
import { SLACK_MS, checkAllClean, delay, jsonEvents, readLedger, runToEnd, singleRunId, startRun, tasksYaml, waitForOutput, waitUntil } from "./reliability-harness.js";

afterEach(() => checkAllClean());

/** The notes of a run's JSON records, each as [its task's id, its message], sorted. */
function taskNotes(stdout: string): unknown[][] {
  return jsonEvents(stdout)
    .filter((e) => e.event === "note")
    .map((e) => [e.id, e.message])
    .sort();
}

/** The processes whose command line (its NULs as they are) `matches`. */
async function withCommandLine(matches: (cmdline: string) => boolean): Promise<number[]> {
  const found: number[] = [];
  for (const name of (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry))) {
    if (matches(await readFile(`/proc/${name}/cmdline`, "latin1").catch(() => ""))) found.push(Number(name));
  }
  return found;
}

/** The run's processes running `sleep 1000`. */
async function sleeping1000(runId: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await findLeftovers(runId)) if ((await readFile(`/proc/${pid}/cmdline`, "latin1").catch(() => "")) === "sleep\x001000\x00") found.push(pid);
  return found;
}

/** ms between a task's "started" event and its terminal event, by taskq's own timestamps. */
function attemptSpan(stdout: string, id: string, terminal: string): number {
  const events = jsonEvents(stdout);
  const start = events.find((e) => e.event === "started" && e.id === id);
  const end = events.find((e) => e.event === terminal && e.id === id);
  expect(start, `started ${id}`).toBeDefined();
  expect(end, `${terminal} ${id}`).toBeDefined();
  return Date.parse(end!.ts as string) - Date.parse(start!.ts as string);
}

/** Whether this process may start a PID namespace of its own (root, util-linux unshare): taskq as a container's PID 1. */
const canBePidOne = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" }).status === 0;

/** Whether python3 with ctypes is here: to end a process's main thread while another runs on (pthread_exit). */
const canEndMainThread = spawnSync("python3", ["-c", "import ctypes, threading"], { stdio: "ignore" }).status === 0;

describe("process trees and timeouts", () => {
  it.skipIf(!canBePidOne)("as PID 1 of a container without an init, a run says what its tasks leave behind stays as zombies and names an init; elsewhere it says nothing of it", async () => {
    // Before, nothing said so: the zombies piled up in silence, each holding a pid of the container's pids.max.
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-pid-one-"));
    try {
      await writeFile(path.join(dir, "orphans.yaml"), tasksYaml([["orphan", '{ run: "(sleep 0.1 &); echo left" }']]));
      const args = [BIN, "run", "orphans.yaml", "--log-dir", "logs"];
      const options = { cwd: dir, encoding: "utf8" as const, env: { ...process.env, NO_COLOR: "1" }, timeout: 60_000 };
      const note = "taskq is PID 1 (a container without an init): processes the tasks leave behind stay as zombies (<defunct>) until it exits; give it an init (docker run --init, tini, dumb-init)";
      const asPidOne = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", process.execPath, ...args], options);
      expect(asPidOne.stderr).toBe("");
      expect(asPidOne.status).toBe(0);
      expect(asPidOne.stdout).toContain(`note    ${note}`);
      const plain = spawnSync(process.execPath, args, options);
      expect(plain.status).toBe(0);
      expect(plain.stdout).not.toContain("PID 1");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!canBePidOne)("where no init reaps orphans (taskq as PID 1), a task whose background job has exited ends as soon as one that started none: its zombie is not waited for", { timeout: 120_000 }, async () => {
    // Before, each such task waited the 0.1 s given a process on its way out of the group (setsid) for the zombie.
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-zombies-"));
    try {
      const tasks = (run: string): string => tasksYaml(Array.from({ length: 10 }, (_, index): [string, string] => [`t${index}`, `{ run: "${run}" }`]));
      await writeFile(path.join(dir, "orphans.yaml"), tasks("(true &); sleep 0.02"));
      await writeFile(path.join(dir, "plain.yaml"), tasks("true; true; sleep 0.02"));
      const options = { cwd: dir, encoding: "utf8" as const, env: { ...process.env, NO_COLOR: "1" }, timeout: 60_000 };
      const asPidOne = (file: string) => (): void => {
        const result = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", process.execPath, BIN, "run", file, "-j", "1", "--log-dir", "logs"], options);
        expect(result.status, result.stdout + result.stderr).toBe(0);
      };
      const [orphans, plain] = bestOfAlternating(1, asPidOne("orphans.yaml"), asPidOne("plain.yaml"), 3, wallTime);
      expect(orphans).toBeLessThan(plain * 1.5);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("says what a task that ended left running and taskq stopped, and when one ignored SIGTERM cost the kill grace; nothing of a task that left nothing", async () => {
    const yaml = tasksYaml([
      ["bg", '{ run: "sleep 1000 & echo started" }'],
      // Ignored before the exec: the sleep ignores SIGTERM too. The task ends once it does.
      ["stubborn", `{ run: 'sh -c ''trap "" TERM; touch ready; exec sleep 1000'' & until [ -f ready ]; do sleep 0.01; done; echo started' }`],
      ["two", '{ run: "sleep 1000 & sleep 1000 & echo started" }'],
      ["clean", '{ run: "echo started" }'],
    ]);
    const json = await runToEnd(yaml, ["-j", "4", "--kill-grace", "500ms", "--output", "json"]);
    expect(json.code).toBe(0);
    // Each names its task in `id`, as every other record of a task does: a script need not parse the message.
    const notes = taskNotes(json.stdout);
    expect(notes).toEqual([
      ["bg", "bg: stopped 1 process it left running (`wait` for it in the script, or start it with `setsid` to leave it running on purpose)"],
      [
        "stubborn",
        "stubborn: stopped 1 process it left running; it did not stop on SIGTERM and was killed after the kill grace (500ms); `wait` for it in the script, or start it with `setsid` to leave it running on purpose",
      ],
      ["two", "two: stopped 2 processes it left running (`wait` for them in the script, or start them with `setsid` to leave them running on purpose)"],
    ]);
    // The kill grace is in the stubborn task's time, as the note says.
    expect(attemptSpan(json.stdout, "stubborn", "succeeded")).toBeGreaterThanOrEqual(500);
    // Plain lines tell it too.
    const plain = await runToEnd(tasksYaml([["bg", '{ run: "sleep 1000 & echo started" }'], ["clean", '{ run: "echo started" }']]), ["--output", "plain"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.match(/ note +.*/g)).toEqual([" note    bg: stopped 1 process it left running (`wait` for it in the script, or start it with `setsid` to leave it running on purpose)"]);
  });

  it("a process left running that ignores SIGTERM and then ends by itself within the kill grace is not said to be stopped by taskq", { timeout: 60_000 }, async () => {
    // Ignored before the exec: the sleep ignores SIGTERM too, and ends by itself after a second, well within the grace.
    const ignoring = (ready: string, seconds: string): string => `sh -c ''trap "" TERM; touch ${ready}; exec sleep ${seconds}'' & until [ -f ${ready} ]; do sleep 0.01; done`;
    const yaml = tasksYaml([
      ["alone", `{ run: '${ignoring("ready-a", "1")}; echo started' }`],
      ["beside", `{ run: 'sleep 1000 & ${ignoring("ready-b", "1")}; echo started' }`],
    ]);
    const json = await runToEnd(yaml, ["-j", "2", "--kill-grace", "20s", "--output", "json"]);
    expect(json.code).toBe(0);
    const notes = taskNotes(json.stdout);
    // Before: "alone: stopped 1 process it left running" and "beside: stopped 2 processes it left running", though taskq's
    // SIGTERM stopped none of the ignoring ones: each ended by itself, its task's end waiting for it.
    expect(notes).toEqual([
      ["alone", "alone: 1 process it left running ignored SIGTERM and ended by itself within the kill grace (20s), which the task's end waited for; `wait` for it in the script, or start it with `setsid` to leave it running on purpose"],
      [
        "beside",
        "beside: stopped 1 process it left running; 1 more process it left running ignored SIGTERM and ended by itself within the kill grace (20s), which the task's end waited for; `wait` for them in the script, or start them with `setsid` to leave them running on purpose",
      ],
    ]);
    // Within the grace: no SIGKILL was needed.
    for (const id of ["alone", "beside"]) expect(attemptSpan(json.stdout, id, "succeeded")).toBeLessThan(20_000);
  });

  it.skipIf(!canEndMainThread)("a process left running whose main thread has ended, its other threads running on (a zombie to /proc's stat), is stopped with its note, not left behind", { timeout: 60_000 }, async () => {
    // pthread_exit in main: /proc/<pid>/stat says Z, with 2 threads, and its own environ cannot be read. Taken for gone, it
    // was never signalled, and outlived its task and taskq: a zombie to ps, its thread sleeping on.
    const threads = "import threading, time, ctypes; threading.Thread(target=time.sleep, args=(1000,)).start(); open(''ready'', ''w''); ctypes.CDLL(None).pthread_exit(None)";
    const yaml = tasksYaml([["threads", `{ run: 'python3 -c "${threads}" & echo $! > pid; until [ -f ready ]; do sleep 0.01; done; sleep 0.2; echo started' }`]]);
    const json = await runToEnd(yaml, ["--kill-grace", "500ms", "--output", "json"]);
    expect(json.code).toBe(0);
    const pid = Number(await readFile(path.join(json.run.dir, "pid"), "latin1"));
    // Its thread still running: the process is there, whatever its main thread's state says.
    const running = async (): Promise<boolean> => Number((await readFile(`/proc/${pid}/stat`, "latin1").catch(() => "")).split(") ")[1]?.split(" ")[17] ?? 0) > 1;
    const left = await running();
    if (left) process.kill(pid, "SIGKILL");
    expect(left, "the process whose main thread ended still runs after taskq exited").toBe(false);
    const notes = jsonEvents(json.stdout)
      .filter((e) => e.event === "note")
      .map((e) => e.message);
    expect(notes).toEqual(["threads: stopped 1 process it left running (`wait` for it in the script, or start it with `setsid` to leave it running on purpose)"]);
  });

  it.skipIf(!canBePidOne)("a process left running that leads a PID namespace of its own, and so gets no SIGTERM it has no handler for, is not said to be stopped when it ends by itself", { timeout: 60_000 }, async () => {
    // The kernel drops a SIGTERM from taskq's namespace to a namespace's first process that does not handle it: the
    // sleep ran its second and ended, within the grace, and the note said taskq had stopped it.
    const yaml = tasksYaml([["ns", `{ run: 'unshare --pid --fork sleep 1 & until [ "$(cat /proc/$!/task/$!/children 2>/dev/null)" ]; do sleep 0.01; done; echo started' }`]]);
    const json = await runToEnd(yaml, ["--kill-grace", "20s", "--output", "json"]);
    expect(json.code).toBe(0);
    const notes = jsonEvents(json.stdout)
      .filter((e) => e.event === "note")
      .map((e) => e.message as string);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("process it left running ignored SIGTERM and ended by itself within the kill grace (20s)");
  });

  it("what a task that ended left in other process groups of its session (job control, coreutils timeout) is stopped with a note naming the task, as what it left in its own group is", { timeout: 60_000 }, async () => {
    const yaml = tasksYaml([
      ["jobs", "{ run: \"bash -c 'set -m; sleep 1000 & echo bg'\" }"],
      ["wrapped", "{ run: \"timeout 100 sh -c 'sleep 1000 & sleep 1000 & echo inner'\" }"],
      // Keeps the run going past the stop a second after those tasks end.
      ["after", '{ run: "sleep 3", dependsOn: [jobs, wrapped] }'],
    ]);
    const json = await runToEnd(yaml, ["-j", "2", "--kill-grace", "500ms", "--output", "json"]);
    expect(json.code).toBe(0);
    const notes = taskNotes(json.stdout).filter(([, message]) => !String(message).includes("still holds its output"));
    // Before: nothing; they were stopped without a word.
    expect(notes).toEqual([
      ["jobs", "jobs: stopping 1 process it left running in another process group of its session (job control, coreutils `timeout`): SIGTERM, then SIGKILL after the kill grace (500ms); `wait` for it in the script, or start it with `setsid` to leave it running on purpose"],
      ["wrapped", "wrapped: stopping 2 processes it left running in another process group of its session (job control, coreutils `timeout`): SIGTERM, then SIGKILL after the kill grace (500ms); `wait` for them in the script, or start them with `setsid` to leave them running on purpose"],
    ]);
    expect(await sleeping1000(json.runId)).toEqual([]);
  });

  it("what the last task left in another process group, ignoring SIGTERM, is stopped once, by the run's end, with its one note", { timeout: 60_000 }, async () => {
    const yaml = tasksYaml([["jobs", "{ run: \"bash -c 'set -m; trap \\\"\\\" TERM; sleep 1000 & echo bg'\" }"]]);
    const plain = await runToEnd(yaml, ["--kill-grace", "3s", "--output", "plain"]);
    expect(plain.code).toBe(0);
    // Before, the task's note came too, a second after the run's, while the run's end waited out the kill grace.
    expect(plain.stdout.match(/ note +.*/g)).toEqual([
      expect.stringMatching(/^ note {4}jobs: a process it left running still holds its output/),
      " note    stopping the process group the tasks left running (SIGTERM, then SIGKILL 3s later; Ctrl-C or SIGTERM kills it now)",
    ]);
  });

  it.skipIf(!canEndMainThread)("a command whose main thread has ended while its other threads run on still times out: it is not taken for one that exited", { timeout: 60_000 }, async () => {
    // /proc/<pid>/stat says Z (exit code 0) for the command: taken for a shell that had exited by itself, its timeout's
    // abort stopped nothing, and the task ran on past it, to succeed when its thread ended.
    const threads = "import threading, time, ctypes; threading.Thread(target=time.sleep, args=(20,)).start(); ctypes.CDLL(None).pthread_exit(None)";
    const yaml = tasksYaml([["threads", `{ run: 'exec python3 -c "${threads}"', timeout: 1s }`]]);
    const result = await runToEnd(yaml, ["--kill-grace", "500ms", "--output", "json"]);
    expect(result.code).toBe(1);
    const failed = jsonEvents(result.stdout).find((e) => e.event === "failed" && e.id === "threads");
    expect(failed?.error).toMatchObject({ timedOut: true, message: "timed out after 1s" });
  });

  it("times out `sleep 1000` and `sleep 1000 & sleep 1000` within timeout + grace + 0.5 s, and the sleeps are gone (case 9)", async () => {
    const yaml = tasksYaml([
      ["one", '{ run: "echo pgid $$; sleep 1000", timeout: 300ms }'],
      ["two", '{ run: "echo pgid $$; sleep 1000 & sleep 1000", timeout: 300ms }'],
    ]);
    const result = await runToEnd(yaml, ["--kill-grace", "500ms", "--output", "json"]);
    expect(result.code).toBe(1);
    for (const id of ["one", "two"]) {
      const failed = jsonEvents(result.stdout).find((e) => e.event === "failed" && e.id === id);
      expect(failed?.error).toMatchObject({ timedOut: true, message: "timed out after 300ms" });
      expect(attemptSpan(result.stdout, id, "failed")).toBeLessThan(300 + 500 + 500 + SLACK_MS);
    }
    // Stopped whole for its timeout: nothing it "left running" to tell of.
    expect(jsonEvents(result.stdout).filter((e) => e.event === "note")).toEqual([]);
  });

  it("stops the groups a task made in its own session (coreutils timeout, job control) when it times out, and what a task that ended left in them", async () => {
    const yaml = tasksYaml([
      // `timeout` and `set -m` put their children in process groups of their own, outside the task's.
      ["wrapped", '{ run: "echo pgid $$; timeout 100 sleep 1000; echo never", timeout: 300ms }'],
      ["jobs", "{ run: \"echo pgid $$; bash -c 'set -m; sleep 1000 & sleep 1000'\", timeout: 300ms }"],
      // Succeeds at once, leaving a sleeper in timeout's group.
      ["left", "{ run: \"timeout 100 sh -c 'sleep 1000 & echo inner'\" }"],
    ]);
    const result = await runToEnd(yaml, ["-j", "3", "--kill-grace", "500ms", "--output", "json"]);
    expect(result.code).toBe(1);
    for (const id of ["wrapped", "jobs"]) {
      const failed = jsonEvents(result.stdout).find((e) => e.event === "failed" && e.id === id);
      expect(failed?.error).toMatchObject({ timedOut: true });
      expect(attemptSpan(result.stdout, id, "failed")).toBeLessThan(300 + 500 + 500 + SLACK_MS);
    }
    expect(jsonEvents(result.stdout).find((e) => e.event === "succeeded" && e.id === "left")).toBeDefined();
    // Nothing of the run is left once taskq has exited (checkAllClean would allow 3 s more).
    expect(await findLeftovers(result.runId)).toEqual([]);
  });

  it("a task stopped by SIGSTOP for 10 s gets a note naming the process and `kill -CONT PID`, and runs to its end once continued", async () => {
    const yaml = tasksYaml([["paused", `{ run: "echo started; kill -STOP $$; echo resumed" }`]]);
    const run = await startRun(yaml, ["--output", "json"]);
    const stoppedAt = Date.now();
    await waitForOutput(run, /"event":"note"/, 1, 10_000 + 2500 + 20_000);
    // Not before the 10 s it names (the look every 2.5 s may come up to that much later).
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(10_000);
    const notes = jsonEvents(run.stdout()).filter((e) => e.event === "note");
    expect(notes).toHaveLength(1);
    const pid = Number(/process (\d+) /.exec(String(notes[0]?.message))?.[1]);
    expect(notes[0]).toMatchObject({ id: "paused", message: `paused: process ${pid} (sh) has been stopped for at least 10s (SIGSTOP or SIGTSTP), and the task waits for it: \`kill -CONT ${pid}\` resumes it` });
    process.kill(pid, "SIGCONT");
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(jsonEvents(result.stdout).filter((e) => e.event === "note")).toHaveLength(1);
    expect(await readFile(path.join(run.logs, await singleRunId(run.logs), "paused.log"), "utf8")).toBe("started\nresumed\n");
  }, 60_000);

  it("stops what a task left in groups of its own a second after the task ended, while the run goes on", async () => {
    const yaml = tasksYaml([
      ["left", "{ run: \"timeout 100 sh -c 'sleep 1000 & echo inner'\" }"],
      ["later", '{ run: "sleep 5", dependsOn: left }'],
    ]);
    const run = await startRun(yaml, ["--output", "json"]);
    await waitForOutput(run, /"event":"succeeded","id":"left"/);
    const runId = await singleRunId(run.logs);
    const sleepers = () => sleeping1000(runId); // the one `left` left behind
    // Gone a second after `left` ended, while `later` still runs (not at the run's end, 5 s on).
    await waitUntil("the sleeper gone", async () => (await sleepers()).length === 0, 1000 + SLACK_MS);
    expect(run.child.exitCode).toBe(null);
    expect((await run.done).code).toBe(0);
  });

  it("a daemon a task started in a session of its own (setsid) runs until the run ends, then is stopped with SIGTERM first", async () => {
    const yaml = tasksYaml([
      // A daemon that says when it gets SIGTERM; the wait: setsid has run when the shell exits.
      ["daemon", `{ run: "setsid sh -c 'trap \\"echo term > $TASKQ_LEDGER.daemon; exit 0\\" TERM; sleep 1000 & wait' & sleep 0.3; echo started" }`],
      // Runs until the test has looked at the daemon (the gate), however slow the machine.
      ["later", '{ run: "until [ -f $TASKQ_LEDGER.gate ]; do sleep 0.05; done", dependsOn: daemon }'],
    ]);
    const run = await startRun(yaml, ["--output", "json"]);
    await waitForOutput(run, /"event":"started","id":"later"/);
    const runId = await singleRunId(run.logs);
    const daemons = () => sleeping1000(runId);
    // Out of the task's session, so not stopped with it (nor by the sweep a second after it
    // ended): a service for the tasks after it.
    await delay(1500);
    expect(await daemons()).toHaveLength(1);
    await writeFile(`${run.ledger}.gate`, "");
    expect((await run.done).code).toBe(0);
    expect(await daemons()).toEqual([]);
    // Stopped as a task is: SIGTERM first (its trap ran), not the exit's SIGKILL.
    expect(await readFile(`${run.ledger}.daemon`, "utf8")).toBe("term\n");
  });

  it("a daemon started last (`setsid daemon &`) on a loaded machine, whose way out of the task's group waits long for a CPU, is not taken for a leftover", { timeout: 60_000 }, async () => {
    // Two busy loops on CPU 0, and the daemon's way to its setsid (a few ms of CPU) at nice 13 there (its session's
    // autogroup too, where the kernel has them: each session is scheduled as a whole, and nice alone counts within it):
    // its turn comes hundreds of ms after the task's shell exits, as on a loaded machine, where 0.1 s of waiting for it
    // took it for a leftover. (At nice 19 it came 2 to 3 s after, with other work on the machine: too near the 5 s that
    // such a member is waited for at most.)
    const burners = [0, 1].map(() => spawn("taskset", ["-c", "0", "sh", "-c", "while :; do :; done"], { stdio: "ignore" }));
    try {
      const yaml = tasksYaml([
        [
          "start",
          `{ run: "echo 13 > /proc/self/autogroup 2> /dev/null; nice -n 13 taskset -c 0 sh -c 'i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; exec setsid sh -c \\"echo \\\\$\\\\$ > $TASKQ_LEDGER.daemon; exec sleep 1000\\"' > /dev/null 2>&1 &" }`,
        ],
        // The daemon is there for the task after it.
        ["use", `{ run: "timeout 30 sh -c 'until [ -s $TASKQ_LEDGER.daemon ]; do sleep 0.05; done'; kill -0 $(cat $TASKQ_LEDGER.daemon) && echo alive", dependsOn: start }`],
      ]);
      const { code, stdout } = await runToEnd(yaml, ["--output", "plain"]);
      expect(stdout).not.toContain("it left running (");
      expect(stdout).toContain("use | alive");
      expect(code).toBe(0);
    } finally {
      for (const burner of burners) burner.kill("SIGKILL");
    }
  });

  it("a task that leaves a loop forking short commands ends as soon as one that leaves a sleep: the loop's fresh commands are not taken for daemons on their way out of the group", { timeout: 120_000 }, async () => {
    // Each command the loop forks is runnable with next to no CPU time, as a daemon on its way to its setsid is (here
    // for long: SCHED_IDLE, on the CPU of a busy loop the task left too): the task's end waited 5 s for one to leave.
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-forking-"));
    try {
      const burner = "taskset -c 0 sh -c 'while :; do :; done' &";
      const forking = "while :; do taskset -c 0 chrt --idle 0 sh -c 'i=0; while [ $i -lt 100 ]; do i=$((i+1)); done'; done &";
      await writeFile(path.join(dir, "forking.yaml"), tasksYaml([["t", `{ run: "${burner} ${forking} sleep 0.5; echo started" }`]]));
      await writeFile(path.join(dir, "sleeping.yaml"), tasksYaml([["t", `{ run: "${burner} sleep 1000 & sleep 0.5; echo started" }`]]));
      const options = { cwd: dir, encoding: "utf8" as const, env: { ...process.env, NO_COLOR: "1" }, timeout: 60_000 };
      const run = (file: string) => (): void => {
        const result = spawnSync(process.execPath, [BIN, "run", file, "--log-dir", "logs", "--kill-grace", "2s"], options);
        expect(result.status, result.stdout + result.stderr).toBe(0);
        expect(result.stdout).toContain("t: stopped ");
      };
      const [forkingMs, sleepingMs] = bestOfAlternating(1, run("forking.yaml"), run("sleeping.yaml"), 3, wallTime);
      expect(forkingMs).toBeLessThan(sleepingMs * 2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("with --kill-grace 0, the note that the daemons the tasks left are stopped says the grace is 0, with or without a signal, not that a time passed since an undefined signal", async () => {
    const yaml = tasksYaml([["daemon", `{ run: "setsid sleep 1000 > /dev/null 2>&1 & echo started" }`]]);
    const { code, stdout } = await runToEnd(yaml, ["--output", "plain", "--kill-grace", "0"]);
    expect(code).toBe(0);
    expect(stdout).toContain("note    stopping the process group the tasks left running: SIGTERM, then SIGKILL right after it (the kill grace is 0)\n");
    expect(stdout).not.toContain("undefined");
  });

  it("a daemon that is stopped (SIGSTOP) when the run ends gets its SIGTERM with a SIGCONT: its trap runs, and the run does not wait the kill grace", async () => {
    // Before: the SIGTERM stayed pending on the stopped daemon, its trap never ran, and the run waited the 20 s grace for the SIGKILL.
    const yaml = tasksYaml([["daemon", `{ run: "setsid sh -c 'trap \\"echo term > $TASKQ_LEDGER.daemon; exit 0\\" TERM; kill -STOP $$; sleep 1000' & sleep 0.3; echo started" }`]]);
    const run = await startRun(yaml, ["--output", "json", "--kill-grace", "20s"]);
    const started = performance.now();
    expect((await run.done).code).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await readFile(`${run.ledger}.daemon`, "utf8")).toBe("term\n");
  });

  it("a task stopped while its shell runs: what cleared its environment (env -i) in groups of its own goes too, SIGKILLed after the grace if it ignores SIGTERM", async () => {
    // A duration no other process has: these carry no TASKQ_PID or TASKQ_RUN_ID to be found by.
    const mark = `${4000 + (process.pid % 1000)}.${Date.now() % 1000}`;
    const stubborn = path.join(await mkdtemp(path.join(tmpdir(), "taskq-envi-")), "stubborn.sh");
    await writeFile(stubborn, `trap "" TERM\nexec /bin/sleep ${mark}\n`);
    const yaml = tasksYaml([
      ["plain", `{ run: "bash -c 'set -m; env -i /bin/sleep ${mark} & env -i /bin/sleep ${mark} & echo started; wait'" }`],
      ["stubborn", `{ run: "bash -c 'set -m; env -i /bin/sh ${stubborn} & echo started; wait'" }`],
    ]);
    const sleepers = (): Promise<number[]> => withCommandLine((cmdline) => cmdline === `/bin/sleep\x00${mark}\x00`);
    // Stopped by a shutdown with no time to finish: both tasks' shells are running then.
    const run = await startRun(yaml, ["-j", "2", "--shutdown-timeout", "1ms", "--kill-grace", "500ms", "--output", "json"]);
    await waitUntil("the three sleepers started", async () => (await sleepers()).length === 3);
    run.signalTaskq("SIGTERM");
    const { result } = await run.exited;
    expect(result.code).toBe(143);
    const cancelled = jsonEvents(result.stdout).filter((e) => e.event === "cancelled" || e.event === "failed");
    expect(cancelled.map((e) => e.id).sort()).toEqual(["plain", "stubborn"]);
    // Gone when taskq is: nothing waited for a sweep or the guard.
    expect(await sleepers()).toEqual([]);
    await rm(path.dirname(stubborn), { recursive: true, force: true });
  });

  it("what a task that ended left in its own group is stopped though it shows no TASKQ_PID: a process title written over its environment (Perl's $0), env -i", async () => {
    // Before, neither was found once the shell had ended: both outlived taskq, without a note.
    const mark = `${4000 + (process.pid % 1000)}.${Date.now() % 1000}`;
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-title-"));
    const titled = path.join(dir, "titled.pl");
    // A title longer than the command line and the environment together: Perl writes it over every byte of the
    // environment, as setproctitle does, so no TASKQ_PID is left to find it by.
    await writeFile(titled, `$0 = "taskq-title-${mark} " . ("x" x 1000000); open(my $f, ">", "${dir}/ready"); close($f); sleep 1000;\n`);
    const yaml = tasksYaml([
      ["titled", `{ run: "perl ${titled} & until [ -f ${dir}/ready ]; do sleep 0.01; done; echo started" }`],
      ["cleared", `{ run: "env -i /bin/sleep ${mark} & sleep 0.2; echo started" }`],
    ]);
    const left = (): Promise<number[]> => withCommandLine((cmdline) => cmdline.startsWith(`taskq-title-${mark} `) || cmdline === `/bin/sleep\x00${mark}\x00`);
    try {
      const json = await runToEnd(yaml, ["-j", "2", "--output", "json"]);
      expect(json.code).toBe(0);
      expect(taskNotes(json.stdout)).toEqual([
        ["cleared", "cleared: stopped 1 process it left running (`wait` for it in the script, or start it with `setsid` to leave it running on purpose)"],
        ["titled", "titled: stopped 1 process it left running (`wait` for it in the script, or start it with `setsid` to leave it running on purpose)"],
      ]);
      expect(await left()).toEqual([]);
    } finally {
      for (const pid of await left()) process.kill(pid, "SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("what a task that ended left in another group of its session is stopped though it shows no TASKQ_PID, while its own group has a process left", async () => {
    // Before, an `env -i` process in a group of its own (job control) outlived taskq once its task had ended by itself.
    // A duration no other test file's processes have (three files run at once).
    const mark = `${7000 + (process.pid % 1000)}.${String(Date.now() % 1000).padStart(3, "0")}`;
    const left = (): Promise<number[]> => withCommandLine((cmdline) => cmdline === `/bin/sleep\x00${mark}1\x00` || cmdline === `/bin/sleep\x00${mark}2\x00`);
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-apart-"));
    try {
      // In its own group before the task ends: the task waits for it to say so.
      const apart = `perl -e 'setpgrp(0, 0); open(my $f, q(>), q(${dir}/ready)); close($f); exec @ARGV' env -i /bin/sleep ${mark}2 >/dev/null 2>&1`;
      const run = `{ run: "/bin/sleep ${mark}1 >/dev/null 2>&1 & ${apart} & until [ -f ${dir}/ready ]; do sleep 0.01; done; echo started" }`;
      const json = await runToEnd(tasksYaml([["both", run]]), ["--output", "json"]);
      expect(json.code).toBe(0);
      expect(taskNotes(json.stdout)).toEqual([["both", "both: stopped 2 processes it left running (`wait` for them in the script, or start them with `setsid` to leave them running on purpose)"]]);
      expect(await left()).toEqual([]);
    } finally {
      for (const pid of await left()) process.kill(pid, "SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a daemon that ignores SIGTERM at the run's end: taskq says it is stopping it, and a Ctrl-C then kills it at once, the summary still last and the run's result kept", async () => {
    const yaml = tasksYaml([["daemon", `{ run: "setsid sh -c 'trap \\"\\" TERM; sleep 1000 & wait' & sleep 0.3; echo started" }`]]);
    // A kill grace far longer than the test waits: only the signal can end the wait.
    const run = await startRun(yaml, ["--kill-grace", "120s", "--output", "json"]);
    await waitForOutput(run, /"event":"note","message":"stopping the process group the tasks left running/);
    const runId = await singleRunId(run.logs);
    expect(await sleeping1000(runId)).toHaveLength(1);
    run.signalTaskq("SIGINT");
    const { result, sinceSignalMs } = await run.exited;
    expect(sinceSignalMs).toBeLessThan(30_000);
    expect(result.code).toBe(0);
    expect(await sleeping1000(runId)).toEqual([]);
    const events = jsonEvents(result.stdout);
    expect(events.filter((e) => e.event === "note").map((e) => e.message)).toEqual([
      expect.stringMatching(/^daemon: a process it left running still holds its output/),
      "stopping the process group the tasks left running (SIGTERM, then SIGKILL 2m later; Ctrl-C or SIGTERM kills it now)",
      "SIGINT received: every task has ended; killing what they left running now",
    ]);
    expect(events.at(-1)?.event).toBe("summary");
  });

  it("a Ctrl-C after what the tasks left running is gone, before taskq has looked again: no note of killing what is left, as nothing is", async () => {
    const yaml = tasksYaml([["daemon", `{ run: "setsid sh -c 'trap \\"\\" TERM; sleep 1000 & wait' & sleep 0.3; echo started" }`]]);
    const run = await startRun(yaml, ["--kill-grace", "120s", "--output", "json"]);
    await waitForOutput(run, /"event":"note","message":"stopping the process group the tasks left running/);
    const daemon = await findLeftovers(await singleRunId(run.logs));
    expect(daemon).toHaveLength(2);
    // Killed by someone else, and the Ctrl-C sent in the same breath: taskq, which looks every 25 ms, has not seen them go.
    for (const pid of daemon) process.kill(pid, "SIGKILL");
    run.signalTaskq("SIGINT");
    const { result } = await run.exited;
    expect(result.code).toBe(0);
    const events = jsonEvents(result.stdout);
    // Before: "SIGINT received: every task has ended; killing what they left running now", with nothing left.
    expect(events.filter((e) => e.event === "note").map((e) => e.message)).toEqual([
      expect.stringMatching(/^daemon: a process it left running still holds its output/),
      "stopping the process group the tasks left running (SIGTERM, then SIGKILL 2m later; Ctrl-C or SIGTERM kills it now)",
    ]);
    expect(events.at(-1)?.event).toBe("summary");
  });

  it("the summary's wall time counts the wait for what the tasks left running to stop", async () => {
    const yaml = tasksYaml([["daemon", `{ run: "setsid sh -c 'trap \\"\\" TERM; sleep 1000 & wait' & echo started" }`]]);
    const started = Date.now();
    const { code, stdout } = await runToEnd(yaml, ["--kill-grace", "2s", "--output", "json"]);
    const took = Date.now() - started;
    expect(code).toBe(0);
    const summary = jsonEvents(stdout).at(-1)!;
    expect(summary.event).toBe("summary");
    // Before, it was taken before that wait: ~0.1 s of a run that took more than the 2 s kill grace.
    expect(summary.wallMs).toBeGreaterThanOrEqual(2000);
    expect(summary.wallMs).toBeLessThanOrEqual(took);
  });

  it("a daemon's output after its task ended goes on into the task's log: it is not killed by SIGPIPE or cut off", async () => {
    const yaml = tasksYaml([
      // Writes every 0.2 s; with SIGPIPE ignored, a failed write ends its loop and leaves a mark.
      ["start", `{ run: "setsid sh -c 'trap \\"\\" PIPE; i=0; while echo tick $i; do i=$((i+1)); sleep 0.2; done; echo died > $TASKQ_LEDGER.died' & sleep 0.3; echo started" }`],
      // Runs until the daemon has written 15 ticks (3 s, long after its task ended), however slow the machine.
      ["use", '{ run: "until [ $(grep -c ^tick logs/$TASKQ_RUN_ID/start.log) -ge 15 ] || [ -f $TASKQ_LEDGER.died ]; do sleep 0.1; done; test ! -f $TASKQ_LEDGER.died", dependsOn: start }'],
    ]);
    const run = await startRun(yaml, ["--output", "plain"]); // tasks run in the workspace: its logs are logs/
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(existsSync(`${run.ledger}.died`)).toBe(false);
    expect(result.stdout).toMatch(/note +start: a process it left running still holds its output; what that writes goes on into \S+start\.log/);
    const runId = await singleRunId(run.logs);
    const log = await readFile(path.join(run.logs, runId, "start.log"), "utf8");
    expect(log).toMatch(/^(tick \d+\n)*started\n(tick \d+\n)*--- taskq: written after attempt 1 ended, by processes it left running ---\n(tick \d+\n){2,}/);
  });

  it("a daemon's output after its task ended that cannot be written to the task's log is noted once, not dropped without a word", async () => {
    const yaml = tasksYaml([
      // Writes a tick every 0.1 s for 3 s, from 0.5 s after its task ended.
      ["start", `{ run: "setsid sh -c 'trap \\"\\" PIPE; sleep 0.5; i=0; while [ $i -lt 30 ]; do echo tick; i=$((i+1)); sleep 0.1; done' & echo started" }`],
      // The log made a folder: every append to it fails (EISDIR), root or not.
      ["break", '{ run: "rm logs/$TASKQ_RUN_ID/start.log && mkdir logs/$TASKQ_RUN_ID/start.log && sleep 2", dependsOn: start }'],
    ]);
    const run = await startRun(yaml, ["--output", "plain"]);
    const result = await run.done;
    expect(result.code).toBe(0);
    const notes = result.stdout.split("\n").filter((line) => line.includes("cannot be written to"));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/note +start: what a process it left running wrote after it ended cannot be written to \S+start\.log \(EISDIR\): it is dropped$/);
  });

  it("a task that started a daemon (setsid) writing to its output without pause ends when its shell does: its dependents do not wait seconds for the daemon to fall silent", async () => {
    // The daemon writes every 20 ms, never silent for long. Before, taskq read the task's pipe
    // on for 5 s after its shell had exited, counting the daemon's lines as the attempt's:
    // the task ended, and its dependent started, 5 s late.
    const yaml = tasksYaml([
      ["server", `{ run: "setsid sh -c 'while :; do echo tick; sleep 0.02; done' & echo up; date +%s%N > server-ended" }`],
      ["client", '{ run: "date +%s%N > client-started", dependsOn: server }'],
    ]);
    const run = await startRun(yaml, ["--output", "plain"]);
    const result = await run.done;
    expect(result.code).toBe(0);
    const nanos = async (name: string): Promise<bigint> => BigInt((await readFile(path.join(run.dir, name), "utf8")).trim());
    const waitedMs = Number(((await nanos("client-started")) - (await nanos("server-ended"))) / 1_000_000n);
    expect(waitedMs).toBeLessThan(1000 + SLACK_MS);
    // The daemon's lines after that come under the late heading, the task's own before it. (None may
    // come: on a loaded machine the run can end, and stop the daemon, before it writes again.)
    const log = await readFile(path.join(run.logs, await singleRunId(run.logs), "server.log"), "utf8");
    expect(log).toMatch(/^(tick\n)*up\n(tick\n)*(--- taskq: written after attempt 1 ended, by processes it left running ---\n(tick\n)*)?$/);
  });

  it("a daemon an attempt left writes while the next attempt runs: each line in the log under its own attempt's heading", async () => {
    // Lines in a set order, by gates: attempt 2's first line, the daemon's line, attempt 2's second line.
    const yaml = tasksYaml([
      [
        "d",
        `{ run: "if [ $TASKQ_ATTEMPT = 1 ]; then setsid sh -c 'until [ -f $TASKQ_LEDGER.go ]; do sleep 0.02; done; echo daemon line; touch $TASKQ_LEDGER.done; sleep 2; echo daemon late' & exit 1; fi; echo attempt2 line 1; touch $TASKQ_LEDGER.go; until [ -f $TASKQ_LEDGER.done ]; do sleep 0.02; done; sleep 0.5; echo attempt2 line 2", retries: 1, backoff: { base: 10ms } }`,
      ],
      // Keeps the run going until the daemon's last line is in, however slow the machine.
      ["w", '{ run: "until grep -q \'^daemon late\' logs/$TASKQ_RUN_ID/d.log 2>/dev/null; do sleep 0.05; done" }'],
    ]);
    const run = await startRun(yaml, ["--output", "plain"]);
    const result = await run.done;
    expect(result.code).toBe(0);
    const log = await readFile(path.join(run.logs, await singleRunId(run.logs), "d.log"), "utf8");
    // Each line under the heading above it. Two pipes are read in the order taskq gets to them,
    // which may not be the order they were written in: attempt 2's first line and the daemon's
    // may come either way round, each under its own heading.
    const sections: Array<[string, string]> = [];
    let heading = "attempt 1";
    for (const line of log.split("\n").slice(0, -1)) {
      const marker = /^--- taskq: (.*) ---$/.exec(line)?.[1];
      if (marker === undefined) sections.push([heading, line]);
      else if (marker === "attempt 2" || marker === "attempt 2 goes on") heading = "attempt 2";
      else if (marker === "written after attempt 1 ended, by processes it left running") heading = "late";
      else expect(marker).toBe("attempt 1 exited with code 1");
    }
    expect(sections).toEqual(
      expect.arrayContaining([
        ["attempt 2", "attempt2 line 1"],
        ["late", "daemon line"],
        ["attempt 2", "attempt2 line 2"],
        ["late", "daemon late"],
      ]),
    );
    expect(sections).toHaveLength(4);
    // The daemon's line came between attempt 2's two: its heading, then attempt 2's again.
    expect(log).toMatch(/--- taskq: written after attempt 1 ended, by processes it left running ---\ndaemon line\n--- taskq: attempt 2 goes on ---\n/);
  });

  it("a daemon that floods its output after its task ended: 16 MiB go into the log, then it waits, neither killed nor filling the disk", async () => {
    const yaml = tasksYaml([
      // Starts writing once its task is over (after the task's own output has drained).
      ["start", `{ run: "setsid sh -c 'sleep 1; echo flooding > $TASKQ_LEDGER.flood; yes late-line' & echo started" }`],
      ["use", '{ run: "until grep -q \\"the rest is not read\\" logs/$TASKQ_RUN_ID/start.log; do sleep 0.1; done; sleep 0.5; pgrep -x yes > $TASKQ_LEDGER.alive", dependsOn: start }'],
    ]);
    const run = await startRun(yaml, ["--output", "plain"]);
    expect((await run.done).code).toBe(0);
    expect(existsSync(`${run.ledger}.flood`)).toBe(true);
    // Still there, waiting on its full pipe, long after the cap (stopped with the run).
    expect((await readFile(`${run.ledger}.alive`, "utf8")).trim()).toMatch(/^\d+/);
    const log = await readFile(path.join(run.logs, await singleRunId(run.logs), "start.log"), "latin1");
    expect(log.length).toBeLessThan(16 * 1024 * 1024 + 4096);
    expect(log.length).toBeGreaterThan(16 * 1024 * 1024);
    expect(log).toMatch(/\n--- taskq: 16 MiB written after the task ended: the rest is not read \(its writer waits\) ---\n$/);
  });

  it("daemons started as their tasks' last command (setsid server &) are not mistaken for leftovers: all of them run", async () => {
    const ids = Array.from({ length: 30 }, (_, index) => `d${index}`);
    const yaml = tasksYaml([
      ...ids.map((id): [string, string] => [id, `{ run: "setsid sh -c 'echo ok > $TASKQ_LEDGER.$TASKQ_TASK_ID; exec sleep 1000' & echo started" }`]),
      // Waits (boundedly) for every daemon's first command, however slow the machine.
      ["check", `{ run: "for i in $(seq 200); do [ $(ls $TASKQ_LEDGER.d* 2>/dev/null | wc -l) -ge 30 ] && exit 0; sleep 0.05; done; exit 1", dependsOn: [${ids.join(", ")}] }`],
    ]);
    // One at a time: each task is reaped the moment its shell exits, as a lone task is.
    const run = await startRun(yaml, ["-j", "1", "--output", "plain", "--kill-grace", "1s"]);
    const result = await run.done;
    const ran = ids.filter((id) => existsSync(`${run.ledger}.${id}`));
    expect(ran).toEqual(ids);
    expect(result.code).toBe(0);
    expect(await sleeping1000(await singleRunId(run.logs))).toEqual([]);
  });

  it("a workflow's env cannot hide a task's processes from taskq: TASKQ_PID is taskq's whatever the file sets", async () => {
    const yaml = tasksYaml([["d", '{ run: "setsid sleep 1000 & echo pid=$TASKQ_PID", env: { TASKQ_PID: "1" } }']], 'env: { TASKQ_PID: "0" }\n');
    const run = await startRun(yaml, ["--output", "plain"]);
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`d | pid=${run.child.pid}`);
    expect(await sleeping1000(await singleRunId(run.logs))).toEqual([]);
  });

  // Run as root here (as CI is): taskq runs as nobody (65534), and its tasks start processes as root through a
  // setuid copy of setpriv (as `sudo` would), which taskq may not signal.
  const asNobody = { uid: 65534, gid: 65534 };
  const otherUser = process.getuid?.() !== 0 || !existsSync("/usr/bin/setpriv");

  /** A folder nobody can use, and the command that runs `sleep 1000` there as root, ignoring SIGTERM; undefined where setuid does not work. */
  async function rootSleeper(dir: string): Promise<string | undefined> {
    await chmod(dir, 0o755);
    await mkdir(path.join(dir, "logs"));
    await chmod(path.join(dir, "logs"), 0o777);
    const becomeRoot = path.join(dir, "become-root");
    await copyFile("/usr/bin/setpriv", becomeRoot);
    await chmod(becomeRoot, 0o4755);
    const probe = spawnSync(becomeRoot, ["--reuid=0", "--regid=0", "--clear-groups", "id", "-u"], { ...asNobody, encoding: "utf8" });
    if (probe.stdout !== "0\n") return undefined; // a file system mounted nosuid
    return `${becomeRoot} --reuid=0 --regid=0 --clear-groups sh -c 'trap \\"\\" TERM; exec sleep 1000'`;
  }

  /** The notes about processes of another user. */
  function otherUserNotes(stdout: string): unknown[] {
    return jsonEvents(stdout)
      .filter((e) => e.event === "note" && / another user's /.test(String(e.message)))
      .map((e) => e.message)
      .sort();
  }

  it.skipIf(otherUser)(
    "processes a task started as another user (sudo) outlive every signal of taskq's: a note says so, for a task stopped and for one that ended",
    { timeout: 60_000 },
    async (ctx) => {
      const dir = await mkdtemp(path.join(tmpdir(), "taskq-other-user-"));
      let runId: string | undefined;
      try {
        const asRoot = await rootSleeper(dir);
        if (asRoot === undefined) return ctx.skip();
        const file = path.join(dir, "workflow.yaml");
        await writeFile(
          file,
          tasksYaml([
            ["stopped", `{ run: "${asRoot}", timeout: 300ms }`],
            ["ended", `{ run: "${asRoot} & sleep 0.3; echo started" }`],
          ]),
        );
        const result = await runCli(["run", file, "-j", "2", "--kill-grace", "500ms", "--output", "json", "--log-dir", path.join(dir, "logs")], { ...asNobody, cwd: dir });
        [runId] = await readdir(path.join(dir, "logs"));
        expect(result.code).toBe(1);
        expect(otherUserNotes(result.stdout)).toEqual([
          "ended: 1 process it left running is another user's (root), which taskq may not signal: it runs on",
          "stopped: 1 process it left running is another user's (root), which taskq may not signal: it runs on",
        ]);
        // Nor said to be stopped, or waited for past the kill grace: no signal of taskq's reaches it.
        expect(taskNotes(result.stdout).filter(([task, message]) => task === "ended" && /\b(stopped|killed)\b/.test(String(message)))).toEqual([]);
        // As the notes say: still running after taskq.
        expect(await sleeping1000(runId!)).toHaveLength(2);
      } finally {
        if (runId !== undefined) for (const pid of await findLeftovers(runId)) process.kill(pid, "SIGKILL");
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it.skipIf(otherUser)("a task stopped by a shutdown says so too: its handler is not given up on before it can", { timeout: 60_000 }, async (ctx) => {
    const dir = await mkdtemp(path.join(tmpdir(), "taskq-other-user-"));
    let runId: string | undefined;
    try {
      const asRoot = await rootSleeper(dir);
      if (asRoot === undefined) return ctx.skip();
      const file = path.join(dir, "workflow.yaml");
      await writeFile(file, tasksYaml([["deploy", `{ run: "${asRoot}" }`]]));
      const cli = startCli(["run", file, "--shutdown-timeout", "1ms", "--kill-grace", "500ms", "--output", "json", "--log-dir", path.join(dir, "logs")], { ...asNobody, cwd: dir });
      await waitUntil("the root sleeper started", async () => {
        [runId] = await readdir(path.join(dir, "logs")).catch(() => []);
        return runId !== undefined && (await sleeping1000(runId)).length === 1;
      });
      cli.child.kill("SIGTERM");
      const result = await cli.done;
      expect(result.code).toBe(143);
      expect(otherUserNotes(result.stdout)).toEqual(["deploy: 1 process it left running is another user's (root), which taskq may not signal: it runs on"]);
    } finally {
      if (runId !== undefined) for (const pid of await findLeftovers(runId)) process.kill(pid, "SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Root without CAP_KILL (a container may drop it): root's signals then reach another user's processes no more than
  // nobody's do. taskq runs here through setpriv, which drops the capability; its task starts `sleep 1000` as nobody.
  const dropCapKill = ["setpriv", "--bounding-set=-kill", "--inh-caps=-kill", "--"];
  /** Whether dropCapKill works here, as root: the process it starts has no CAP_KILL (bit 5) in its effective set. */
  function capKillDropped(): boolean {
    if (process.getuid?.() !== 0 || !existsSync("/usr/bin/setpriv")) return false;
    const status = spawnSync(dropCapKill[0]!, [...dropCapKill.slice(1), "cat", "/proc/self/status"], { encoding: "utf8" });
    const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(status.stdout ?? "")?.[1];
    return status.status === 0 && effective !== undefined && (BigInt(`0x${effective}`) & (1n << 5n)) === 0n;
  }

  it.skipIf(!capKillDropped())(
    "root without CAP_KILL: what a task leaves running as another user is named, neither stopped nor waited for, and runs on",
    { timeout: 60_000 },
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), "taskq-no-cap-kill-"));
      let runId: string | undefined;
      try {
        const asNobody = `setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'trap \\"\\" TERM; exec sleep 1000'`;
        const file = path.join(dir, "workflow.yaml");
        await writeFile(file, tasksYaml([["ended", `{ run: "${asNobody} & sleep 0.3; echo started" }`]]));
        const result = await runCli(["run", file, "--kill-grace", "500ms", "--output", "json", "--log-dir", path.join(dir, "logs")], { cwd: dir, through: dropCapKill });
        [runId] = await readdir(path.join(dir, "logs"));
        expect(result.code).toBe(0);
        expect(otherUserNotes(result.stdout)).toEqual(["ended: 1 process it left running is another user's (nobody), which taskq may not signal: it runs on"]);
        expect(taskNotes(result.stdout).filter(([, message]) => /\b(stopped|killed|stopping)\b/.test(String(message)))).toEqual([]);
        expect(await sleeping1000(runId!)).toHaveLength(1);
      } finally {
        if (runId !== undefined) for (const pid of await findLeftovers(runId)) process.kill(pid, "SIGKILL");
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it("SIGKILLs the group when a grandchild ignores SIGTERM, after the grace (case 10)", async () => {
    const yaml = tasksYaml([["tree", '{ run: "echo pgid $$; spawn-grandchild", timeout: 300ms }']]);
    const result = await runToEnd(yaml, ["--kill-grace", "700ms", "--output", "json"]);
    expect(result.code).toBe(1);
    const grandchild = (await readLedger(result.run.ledger)).find((e) => e.event === "grandchild");
    expect(grandchild).toBeDefined();
    expect(await isAlive(grandchild!.pid)).toBe(false);
    // The grandchild survives SIGTERM, so the attempt cannot settle before the grace is over.
    const span = attemptSpan(result.stdout, "tree", "failed");
    expect(span).toBeGreaterThanOrEqual(300 + 700 - 50);
    expect(span).toBeLessThan(300 + 700 + 500 + SLACK_MS);
  });

  it("cascades a failure: dependents CANCELLED without starting, the independent task succeeds, the summary names the cause (case 12)", async () => {
    const yaml = tasksYaml([
      ["A", '{ run: "exit 3" }'],
      ["B", '{ run: "touch ran-B", dependsOn: A }'],
      ["C", '{ run: "touch ran-C", dependsOn: [A] }'],
      ["D", '{ run: "touch ran-D" }'],
    ]);
    const result = await runToEnd(yaml);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toMatch(/start\s+[BC] /);
    expect(result.stdout).toMatch(/cancel\s+B: dependency "A" failed/);
    expect(result.stdout).toMatch(/cancel\s+C: dependency "A" failed/);
    expect(result.stdout).toMatch(/ok\s+D/);
    expect(result.stdout).toMatch(/Summary: 1 succeeded, 1 failed, 2 cancelled/);
    expect(result.stdout).toMatch(/✗ A: exited with code 3 \(1 attempt\)[\s\S]*cancelled because of it: (B, C|C, B)/);
    expect(existsSync(path.join(result.run.dir, "ran-D"))).toBe(true);
    expect(existsSync(path.join(result.run.dir, "ran-B"))).toBe(false);
    expect(existsSync(path.join(result.run.dir, "ran-C"))).toBe(false);
  });
});
