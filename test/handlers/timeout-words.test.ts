import { describe, expect, it } from "vitest";
import { AttemptTimeoutError } from "../../src/engine/index.js";
import { describeFailure, killOf, TaskFailedError, withSigkillWords } from "../../src/handlers/errors.js";
import { failureOutcome } from "../../src/store/postgres/outcome.js";

// One timeout, one wording: a local run, a durable worker and the library each say a timeout of
// 60.5 s as the workflow file writes it ("1m0.5s"), not "1m1s" (rounded up) nor "1m500ms".
describe("a timeout past a minute, in words", () => {
  const result = { exitCode: null, signal: "SIGTERM" as const, timedOut: true, cancelled: false, durationMs: 60_520, tail: [] };

  it.each([
    [60_500, "1m0.5s"],
    [61_250, "1m1.25s"],
    [3_600_500, "1h0.5s"],
    [90_000, "1m30s"],
  ])("%d ms is %s in a shell task's failure, a worker's record and the library's error", (timeoutMs, text) => {
    expect(describeFailure({ id: "t", run: "sleep 100", env: {}, cwd: "/", timeoutMs }, result)).toBe(`timed out after ${text}`);
    const controller = new AbortController();
    controller.abort(new AttemptTimeoutError(timeoutMs));
    expect(failureOutcome(new Error("aborted"), controller.signal, timeoutMs)).toMatchObject({ kind: "failure", timedOut: true, error: `timed out after ${text}` });
    expect(new AttemptTimeoutError(timeoutMs).message).toBe(`timed out after ${text}`);
  });
});

// The handler finds how a task's own process ended before the SIGKILL of a kill grace of 0; what reads its error again
// (a stopped attempt's words, a worker's record) says the same, from the error.
describe("a timeout's SIGKILL with no kill grace, in words, as the error is read again", () => {
  const task = { id: "t", run: "trap 'exit 0' TERM; sleep 30", env: {}, cwd: "/", timeoutMs: 300 };
  const trapped = "its shell exited with code 0 on its SIGTERM, before the SIGKILL sent right after it (the kill grace is 0)";

  it("says how the shell ended where its SIGTERM trap exited before the SIGKILL", () => {
    const error = TaskFailedError.fromResult(task, { exitCode: 0, signal: null, timedOut: true, cancelled: false, durationMs: 300, tail: [] }, undefined, { graceMs: 0, endedFirst: { exitCode: 0, signal: null } });
    expect(error.message).toBe(`timed out after 300ms; ${trapped}`);
    expect(killOf(error)).toEqual({ graceMs: 0, endedFirst: { exitCode: 0, signal: null } });
    expect(withSigkillWords("aborted by shutdown", killOf(error))).toBe(`aborted by shutdown; ${trapped}`);
  });

  it("says the SIGKILL came right after the SIGTERM where it ended the shell", () => {
    const error = TaskFailedError.fromResult(task, { exitCode: null, signal: "SIGKILL", timedOut: true, cancelled: false, durationMs: 300, tail: [] }, undefined, { graceMs: 0 });
    expect(killOf(error)).toEqual({ graceMs: 0 });
    expect(withSigkillWords("aborted by shutdown", killOf(error))).toBe("aborted by shutdown; killed with SIGKILL right after its SIGTERM (the kill grace is 0)");
  });
});
