import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, realpath, rm, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isPermanent } from "../../src/errors.js";
import { InvalidTaskIdError, LogWriteError, TaskFailedError } from "../../src/handlers/index.js";
import { eventually, findLeftovers } from "../helpers/processes.js";
import { abortWith, createHarness, fixture, rejection, type Harness } from "./harness.js";

let harness: Harness;

afterEach(async () => {
  expect(await findLeftovers(harness.runId)).toEqual([]);
  await harness.cleanup();
});

async function attemptFailure(attempt: Promise<unknown>): Promise<TaskFailedError> {
  const error = await rejection(attempt);
  expect(error).toBeInstanceOf(TaskFailedError);
  return error as TaskFailedError;
}

async function failure(command: string, options: Parameters<Harness["run"]>[1] = {}): Promise<TaskFailedError> {
  const error = await rejection(harness.run(command, options));
  expect(error).toBeInstanceOf(TaskFailedError);
  return error as TaskFailedError;
}

describe("shell handler: success", () => {
  it("streams lines to the sink and the bytes to the log", async () => {
    harness = await createHarness();
    const result = await harness.run("echo one; echo two >&2; sleep 0.2; printf three");
    expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false, cancelled: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(150);
    expect(harness.lines.filter((line) => line.stream === "stdout").map((line) => line.text)).toEqual(["one", "three"]);
    expect(harness.lines.filter((line) => line.stream === "stderr").map((line) => line.text)).toEqual(["two"]);
    expect([...result.tail].sort()).toEqual(["one", "three", "two"]);
    const log = await readFile(harness.logPath(), "utf8");
    expect(log).toHaveLength("one\ntwo\nthree".length);
    expect(log).toContain("one\n");
    expect(log).toContain("two\n");
    expect(log).toContain("three");
  });

  it("a task may reopen its output by name: /dev/stdout, /dev/stderr, tee, 2>/dev/stdout", async () => {
    harness = await createHarness();
    const result = await harness.run("echo out > /dev/stdout; echo err > /dev/stderr; echo both | tee /dev/stderr; ls /nonexistent-x 2>/dev/stdout | sed 's/.*/listed/'");
    expect(result.exitCode).toBe(0);
    const of = (stream: string): string[] => harness.lines.filter((line) => line.stream === stream).map((line) => line.text);
    expect(of("stdout")).toEqual(["out", "both", "listed"]);
    expect(of("stderr")).toEqual(["err", "both"]);
    const log = await readFile(harness.logPath(), "utf8");
    for (const text of ["out\n", "err\n", "listed\n"]) expect(log).toContain(text);
    expect(log.split("both\n")).toHaveLength(3);
  });

  it("with mergeOutput, stdout and stderr share one pipe: log and lines in the exact order written", async () => {
    harness = await createHarness({ mergeOutput: true });
    const result = await harness.run('for i in $(seq 1 500); do echo "out $i"; echo "err $i" >&2; done; echo named > /dev/stderr');
    expect(result.exitCode).toBe(0);
    const expected = [...Array.from({ length: 500 }, (_, i) => [`out ${i + 1}`, `err ${i + 1}`]).flat(), "named"];
    expect(harness.lines.map((line) => line.text)).toEqual(expected);
    expect(new Set(harness.lines.map((line) => line.stream))).toEqual(new Set(["output"]));
    expect(await readFile(harness.logPath(), "utf8")).toBe(expected.map((line) => `${line}\n`).join(""));
  });

  it("keeps every line in order and the last tailLines for the summary", async () => {
    harness = await createHarness({ tailLines: 5 });
    const result = await harness.run(`${fixture("print-lines")} 2000`);
    const expected = Array.from({ length: 2000 }, (_, index) => `line ${index + 1}`);
    expect(harness.lines.map((line) => line.text)).toEqual(expected);
    expect(result.tail).toEqual(expected.slice(-5));
    expect(await readFile(harness.logPath(), "utf8")).toBe(expected.map((line) => `${line}\n`).join(""));
  });

  it("passes the environment: taskq's own, the task's, and TASKQ_* ids", async () => {
    harness = await createHarness();
    await harness.run('echo "$TASKQ_RUN_ID|$TASKQ_TASK_ID|$TASKQ_ATTEMPT|$GREETING|${HOME:+home}"', {
      id: "env-task",
      attempt: 3,
      env: { GREETING: "hello world" },
    });
    expect(harness.lines.map((line) => line.text)).toEqual([`${harness.runId}|env-task|3|hello world|home`]);
  });

  it("a task's variables win over taskq's own, TASKQ_* win over the task's, and any name works (even __proto__)", async () => {
    harness = await createHarness();
    // JSON.parse makes "__proto__" an own key, as the workflow reader does.
    const env = JSON.parse('{"HOME": "/task-home", "TASKQ_TASK_ID": "spoofed", "__proto__": "kept"}') as Record<string, string>;
    await harness.run('echo "$HOME|$TASKQ_TASK_ID|${__proto__}"; env | grep -c "^HOME="', { id: "env-order", env });
    expect(harness.lines.map((line) => line.text)).toEqual(["/task-home|env-order|kept", "1"]);
  });

  it("runs in the task's cwd", async () => {
    harness = await createHarness();
    await harness.run("pwd -P");
    expect(harness.lines.map((line) => line.text)).toEqual([await realpath(harness.dir)]);
  });

  it("gives stdin EOF at once", async () => {
    harness = await createHarness();
    await harness.run("read x; echo got $?; cat; echo cat done");
    expect(harness.lines.map((line) => line.text)).toEqual(["got 1", "cat done"]);
  });

  it("appends later attempts to the log after a marker, on a line of its own", async () => {
    harness = await createHarness();
    await harness.run("echo first");
    await harness.run("echo second", { attempt: 2 });
    expect(await readFile(harness.logPath(), "utf8")).toBe("first\n--- taskq: attempt 2 ---\nsecond\n");
    // Output without its newline (a durable task run again): the marker still starts a line.
    await harness.run("printf third", { attempt: 3 });
    await harness.run("echo again");
    expect(await readFile(harness.logPath(), "utf8")).toBe("first\n--- taskq: attempt 2 ---\nsecond\n--- taskq: attempt 3 ---\nthird\n--- taskq: attempt 1 ---\nagain\n");
  });

  it("a successful attempt's log is the task's output alone, byte for byte", async () => {
    harness = await createHarness();
    await harness.run("printf 'one\\ntwo, no newline'");
    expect(await readFile(harness.logPath(), "utf8")).toBe("one\ntwo, no newline");
  });

  it("survives a sink that throws", async () => {
    harness = await createHarness({
      sink: {
        line: () => {
          throw new Error("renderer bug");
        },
      },
    });
    const result = await harness.run("echo fine");
    expect(result.tail).toEqual(["fine"]);
    expect(await readFile(harness.logPath(), "utf8")).toBe("fine\n");
  });
});

describe("shell handler: how an attempt that did not succeed ended, last in its log", () => {
  const log = (taskId?: string): Promise<string> => readFile(harness.logPath(taskId), "utf8");

  it("an exit code or a signal, after the output, on a line of its own whether or not the output ended with a newline", async () => {
    harness = await createHarness();
    await failure(`echo oops; ${fixture("exit")} 3`, { id: "code" });
    expect(await log("code")).toBe("oops\n--- taskq: attempt 1 exited with code 3 ---\n");
    await failure("printf 'no newline'; exit 2", { id: "glued", attempt: 2 });
    expect(await log("glued")).toBe("--- taskq: attempt 2 ---\nno newline\n--- taskq: attempt 2 exited with code 2 ---\n");
    await failure("kill -KILL $$", { id: "killed" });
    expect(await log("killed")).toBe("--- taskq: attempt 1 killed by SIGKILL (not by taskq: perhaps the out-of-memory killer) ---\n");
    // The failure's words, as the error has them: why it is not retried too.
    const notFound = await failure("no-such-command-for-taskq", { id: "missing" });
    expect(await log("missing")).toMatch(/not found\n--- taskq: attempt 1 exited with code 127 \(never retried: the shell's code for command not found\) ---\n$/);
    expect(notFound.message).toBe("exited with code 127 (never retried: the shell's code for command not found)");
  });

  it("a retry's marker follows the failed attempt's last line, with no blank line", async () => {
    harness = await createHarness();
    await failure("printf first; exit 1");
    await harness.run("echo second", { attempt: 2 });
    expect(await log()).toBe("first\n--- taskq: attempt 1 exited with code 1 ---\n--- taskq: attempt 2 ---\nsecond\n");
  });

  it("a timeout, with its duration", async () => {
    harness = await createHarness();
    const controller = new AbortController();
    const attempt = attemptFailure(harness.run("echo start; sleep 5", { signal: controller.signal, timeoutMs: 1000 }));
    await harness.waitForLine("start");
    abortWith(controller, "TIMEOUT");
    expect((await attempt).result.timedOut).toBe(true);
    expect(await log()).toBe("start\n--- taskq: attempt 1 timed out after 1s ---\n");
  });

  it("an attempt taskq stopped (a shutdown, a cancel), with the reason it was given", async () => {
    harness = await createHarness();
    const controller = new AbortController();
    const attempt = attemptFailure(harness.run("echo begin; sleep 5", { signal: controller.signal }));
    await harness.waitForLine("begin");
    abortWith(controller, "SHUTDOWN", "aborted by shutdown");
    expect((await attempt).result.cancelled).toBe(true);
    expect(await log()).toBe("begin\n--- taskq: attempt 1 stopped: aborted by shutdown ---\n");
    // Stopped before its command started.
    const before = new AbortController();
    abortWith(before, "CANCELLED", 'task "never" was cancelled');
    await failure("echo never", { id: "never", signal: before.signal });
    expect(await log("never")).toBe('--- taskq: attempt 1 stopped: task "never" was cancelled ---\n');
  });

  it("a command that could not start, with why, on one line without control characters", async () => {
    harness = await createHarness();
    const missing = await failure("echo never", { id: "missing", cwd: path.join("/nonexistent", harness.runId) });
    expect(await log("missing")).toBe(`--- taskq: attempt 1 ${missing.message} ---\n`);
    expect(missing.message).toMatch(/^could not start: working directory .* does not exist/);
    // A folder named with a line break and an escape sequence: written as escapes.
    await failure("echo never", { id: "odd", cwd: "/nonexistent/a\nb\u001b[31mc" });
    expect(await log("odd")).toMatch(/^--- taskq: attempt 1 could not start: working directory \/nonexistent\/a\\nb\\x1b\[31mc does not exist .* ---\n$/);
  });

  // The log is a link to /dev/full: every write fails with ENOSPC, as on a full disk.
  it.skipIf(!existsSync("/dev/full"))("a log that cannot take the line fails nothing more, and waits for nothing", async () => {
    harness = await createHarness();
    await mkdir(harness.logDir, { recursive: true });
    for (const id of ["full-exit", "full-cwd", "full-stopped"]) await symlink("/dev/full", harness.logPath(id));
    // A command that wrote nothing: its failure is its own, not the log's.
    const exited = await failure("exit 3", { id: "full-exit" });
    expect(exited.message).toBe("exited with code 3");
    const notStarted = await failure("echo never", { id: "full-cwd", cwd: path.join("/nonexistent", harness.runId) });
    expect(notStarted.message).toMatch(/^could not start: working directory/);
    const controller = new AbortController();
    abortWith(controller, "SHUTDOWN", "aborted by shutdown");
    expect((await failure("echo never", { id: "full-stopped", signal: controller.signal })).result.cancelled).toBe(true);
  });
});

describe("shell handler: failures", () => {
  // The log is a link to /dev/full: every write fails with ENOSPC, as on a full disk.
  const fullLog = async (taskId: string): Promise<void> => {
    await mkdir(harness.logDir, { recursive: true });
    await symlink("/dev/full", harness.logPath(taskId));
  };

  it.skipIf(!existsSync("/dev/full"))("a command that exited 0 but whose log could not be written is not retried: it would run twice", async () => {
    harness = await createHarness();
    await fullLog("deploy");
    const error = (await rejection(harness.run("echo deployed", { id: "deploy" }))) as LogWriteError;
    expect(error).toBeInstanceOf(LogWriteError);
    expect(error.message).toMatch(/^cannot write log file .*deploy\.log: .*ENOSPC.* \(the command itself exited with code 0; not retried, so it does not run twice\)$/);
    expect(error.result?.exitCode).toBe(0);
    expect(isPermanent(error)).toBe(true);
  });

  it.skipIf(!existsSync("/dev/full"))("one taskq stopped because its output had nowhere to go says so, and may be retried", async () => {
    harness = await createHarness({ killGraceMs: 1000 });
    await fullLog("loud");
    const error = (await rejection(harness.run("while :; do echo more; done", { id: "loud" }))) as LogWriteError;
    expect(error).toBeInstanceOf(LogWriteError);
    expect(error.message).toMatch(/ENOSPC.* \(taskq stopped the command: its output had nowhere to go\)$/);
    expect(error.result?.signal).toBe("SIGTERM");
    expect(isPermanent(error)).toBe(false);
  });

  it("rejects a non-zero exit, retryable by default", async () => {
    harness = await createHarness();
    const error = await failure(`echo oops >&2; ${fixture("exit")} 3`);
    expect(error.code).toBe("TASK_FAILED");
    expect(error.message).toBe("exited with code 3");
    expect(error.result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, cancelled: false, tail: ["oops"] });
    expect(error.permanent).toBe(false);
    expect(isPermanent(error)).toBe(false);
  });

  it("makes 126 (not executable) and 127 (not found) permanent", async () => {
    harness = await createHarness();
    const notFound = await failure("no-such-command-for-taskq");
    expect(notFound.result.exitCode).toBe(127);
    expect(isPermanent(notFound)).toBe(true);
    const notExecutable = await failure(`${fixture("exit")} 126`);
    expect(notExecutable.message).toBe("exited with code 126 (never retried: the shell's code for not executable)");
    expect(isPermanent(notExecutable)).toBe(true);
    expect(notFound.message).toBe("exited with code 127 (never retried: the shell's code for command not found)");
  });

  it("says why a failure is not retried when its exit code is not in retryOn, and says nothing more of one that is", async () => {
    harness = await createHarness();
    const notListed = await failure(`${fixture("exit")} 3`, { retryOn: [75] });
    expect(notListed.message).toBe("exited with code 3 (3 is not in retryOn: not retried)");
    expect(isPermanent(notListed)).toBe(true);
    const listed = await failure(`${fixture("exit")} 75`, { retryOn: [75] });
    expect(listed.message).toBe("exited with code 75");
    expect(isPermanent(listed)).toBe(false);
  });

  it("runs a command that starts with a dash as a command, not as the shell's options", async () => {
    harness = await createHarness();
    const error = await failure("-no-such-command-for-taskq --flag");
    expect(error.result.exitCode).toBe(127);
    expect(error.result.tail.join("\n")).toMatch(/-no-such-command-for-taskq: not found/);
    expect((await harness.run("-true 2>/dev/null || echo ran")).exitCode).toBe(0);
    expect(harness.lines.map((line) => line.text)).toContain("ran");
  });

  it("honours retryOn: listed codes retry, others are permanent", async () => {
    harness = await createHarness();
    expect((await failure("exit 75", { retryOn: [75] })).permanent).toBe(false);
    expect((await failure("exit 1", { retryOn: [75] })).permanent).toBe(true);
    // A signal death counts as 128 + n, as in a shell's $?.
    expect((await failure("kill -KILL $$", { retryOn: [137] })).permanent).toBe(false);
    expect((await failure("kill -KILL $$", { retryOn: [75] })).permanent).toBe(true);
  });

  it("reports a signal death", async () => {
    harness = await createHarness();
    const error = await failure("kill -KILL $$");
    // A SIGKILL taskq did not send: on CI, most often the out-of-memory killer's.
    expect(error.message).toBe("killed by SIGKILL (not by taskq: perhaps the out-of-memory killer)");
    expect(error.result).toMatchObject({ exitCode: null, signal: "SIGKILL", timedOut: false, cancelled: false });
    expect(error.permanent).toBe(false);
    expect((await failure("kill -TERM $$")).message).toBe("killed by SIGTERM");
  });

  it("a shell whose command was SIGKILLed (exit code 137) says what 137 means, and why no retry follows where none does", async () => {
    harness = await createHarness();
    const error = await failure("sh -c 'kill -KILL $$' || exit $?");
    expect(error.message).toBe("exited with code 137 (128 + SIGKILL: killed, not by taskq: perhaps the out-of-memory killer)");
    expect(error.result).toMatchObject({ exitCode: 137, signal: null });
    const unlisted = await failure("sh -c 'kill -KILL $$' || exit $?", { retryOn: [1] });
    expect(unlisted.message).toBe("exited with code 137 (128 + SIGKILL: killed, not by taskq: perhaps the out-of-memory killer; 137 is not in retryOn: not retried)");
    expect((await failure("exit 3")).message).toBe("exited with code 3");
  });

  it("fails permanently, without a shell, when the cwd does not exist", async () => {
    harness = await createHarness();
    const error = await failure("echo never", { cwd: path.join("/nonexistent", harness.runId) });
    expect(error.message).toMatch(/^could not start: working directory .* does not exist \(the task's cwd: make that folder in a task this one depends on, or fix the cwd\); never retried$/);
    expect(error.permanent).toBe(true);
    expect(harness.lines).toEqual([]);
  });

  it("says which is too long when a task cannot start (E2BIG): the command, one variable, or all of them together", async () => {
    harness = await createHarness();
    const longCommand = await failure(`echo ${"x".repeat(200_000)}`);
    expect(longCommand.message).toBe("could not start: the command is 200005 bytes: too long to start a process (E2BIG; Linux takes at most 128 KiB for one argument: put it in a script file); never retried");
    expect(longCommand.permanent).toBe(true);
    const longVariable = await failure("true", { env: { BIG: "y".repeat(200_000) } });
    expect(longVariable.message).toBe("could not start: the variable BIG is 200005 bytes: too long to start a process (E2BIG; Linux takes at most 128 KiB for one variable); never retried");
    // 80 variables of 100 KB: each within the limit, 8 MB together (Linux takes 6 MiB at most, whatever the stack limit).
    const many = Object.fromEntries(Array.from({ length: 80 }, (_, index) => [`V${index}`, "z".repeat(100_000)]));
    const together = await failure("true", { env: many });
    // Every variable the process would have had: taskq's own environment, the task's and the TASKQ_* ids.
    const env = { ...process.env, ...many, TASKQ_PID: String(process.pid), TASKQ_RUN_ID: harness.runId, TASKQ_TASK_ID: "task", TASKQ_ATTEMPT: "1", TASKQ_KILL_GRACE_MS: "300" };
    const envBytes = Object.entries(env).reduce((sum, [name, value]) => sum + Buffer.byteLength(`${name}=${value}`) + 1, 0);
    expect(together.message).toBe(`could not start: the command (4 bytes) and the environment (${envBytes} bytes in ${Object.keys(env).length} variables) are too long together to start a process (E2BIG; Linux takes a quarter of the stack limit, \`ulimit -s\`, for all of them); never retried`);
  });

  it("makes the log folder again when it was removed during the run", async () => {
    harness = await createHarness();
    await harness.run("echo one", { id: "one" });
    await rm(harness.logDir, { recursive: true });
    const result = await harness.run("echo two", { id: "two" });
    expect(result.exitCode).toBe(0);
    expect(await readFile(harness.logPath("two"), "utf8")).toBe("two\n");
  });

  it("says so when the cwd is a file, not a folder", async () => {
    harness = await createHarness();
    const error = await failure("echo never", { cwd: "/etc/hostname" });
    expect(error.message).toBe("could not start: working directory /etc/hostname is not a folder (the task's cwd: make that folder in a task this one depends on, or fix the cwd); never retried");
    expect(error.permanent).toBe(true);
  });

  it("names the cwd when its symbolic links loop (ELOOP), not only the errno", async () => {
    harness = await createHarness();
    const loop = path.join(path.dirname(harness.logDir), "loop-a");
    await symlink(path.join(path.dirname(harness.logDir), "loop-b"), loop);
    await symlink(loop, path.join(path.dirname(harness.logDir), "loop-b"));
    const error = await failure("echo never", { cwd: loop });
    expect(error.message).toBe(`could not start: working directory ${loop} cannot be reached: its symbolic links form a loop (ELOOP) (the task's cwd: fix the cwd or the folder); never retried`);
    expect(error.permanent).toBe(true);
  });

  it("a shell that exited before the abort, its exit not told yet (taskq frozen or loaded), ends as it did, not stopped", async () => {
    harness = await createHarness();
    const controller = new AbortController();
    const pidFile = path.join(harness.dir, "pid");
    const attempt = harness.run(`echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; sleep 0.2`, { signal: controller.signal });
    expect(await eventually(() => existsSync(pidFile), 15_000)).toBe(true);
    const pid = (await readFile(pidFile, "utf8")).trim();
    // The event loop held, as in a frozen worker: the shell exits meanwhile, and stays a zombie until Node reaps it.
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const zombie = (): boolean => /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "latin1"));
    for (const until = Date.now() + 20_000; !zombie() && Date.now() < until; ) Atomics.wait(pause, 0, 0, 50);
    expect(zombie()).toBe(true);
    // The timer due during the stall fires before the exit is told.
    abortWith(controller, "TIMEOUT");
    expect(await attempt).toMatchObject({ exitCode: 0, signal: null, timedOut: false, cancelled: false });
  });

  it("a task that is stopped gets one SIGTERM, not one for its group and one more for its session", async () => {
    harness = await createHarness();
    const controller = new AbortController();
    const terms = path.join(harness.dir, "terms");
    const ready = path.join(harness.dir, "ready");
    // The trap does not exit: every SIGTERM that arrives adds a line, until the SIGKILL after the grace.
    const attempt = harness.run(`trap 'echo term >> ${terms}' TERM; touch ${ready}; while :; do sleep 1 & wait $!; done`, { signal: controller.signal });
    expect(await eventually(() => existsSync(ready), 15_000)).toBe(true);
    abortWith(controller, "CANCELLED");
    expect((await attemptFailure(attempt)).result).toMatchObject({ cancelled: true, signal: "SIGKILL" });
    expect(await readFile(terms, "utf8")).toBe("term\n");
  });

  it("does not start a task whose signal is already aborted", async () => {
    harness = await createHarness();
    const controller = new AbortController();
    abortWith(controller, "CANCELLED");
    const error = await failure("echo never", { signal: controller.signal });
    expect(error.message).toBe("cancelled");
    expect(error.result).toMatchObject({ exitCode: null, signal: null, cancelled: true });
    expect(harness.lines).toEqual([]);
  });

  it("a task cancelled while its pipes are being readied does not start", async () => {
    harness = await createHarness();
    const controller = new AbortController();
    const started = harness.run("touch started; sleep 5", { signal: controller.signal });
    abortWith(controller, "CANCELLED"); // the handler is waiting for its pipes by now
    const error = await rejection(started);
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).result).toMatchObject({ exitCode: null, signal: null, cancelled: true });
    expect(existsSync(path.join(harness.dir, "started"))).toBe(false);
  });

  it("refuses a task id that would put its log outside logDir", async () => {
    harness = await createHarness();
    for (const id of ["../escape", "a/b", "/tmp/abs", ""]) {
      const error = await rejection(harness.run("echo never", { id }));
      expect(error).toBeInstanceOf(InvalidTaskIdError);
      expect(isPermanent(error)).toBe(true);
    }
    expect(harness.lines).toEqual([]);
  });

  it("any other id names a log in logDir, odd ones too", async () => {
    harness = await createHarness();
    const ids = ["..", ".", "a\\b", "..\\up", " spaced ", "\u00fcn\u00ef"];
    for (const id of ids) {
      await harness.run(`printf '%s\\n' '${id}'`, { id });
      expect(await readFile(path.join(harness.logDir, `${id}.log`), "utf8")).toBe(`${id}\n`);
    }
    expect((await readdir(harness.logDir)).sort()).toEqual(ids.map((id) => `${id}.log`).sort());
  });
});
