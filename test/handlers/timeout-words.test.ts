import { describe, expect, it } from "vitest";
import { AttemptTimeoutError } from "../../src/engine/index.js";
import { describeFailure } from "../../src/handlers/errors.js";
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
