import { describe, expect, it } from "vitest";
import { PermanentError, TaskqError, UsageError } from "../../src/errors.js";
import { AttemptTimeoutError, HandlerError, Queue, QueueClosedError, TaskCancelledError, TaskNotFoundError, UnknownDependencyError, UnknownHandlerError } from "../../src/engine/index.js";

describe("the library's errors", () => {
  it("an engine error a caller catches carries no exitCode: the exit code is the CLI's to choose", async () => {
    const queue = new Queue({ handlers: { echo: (payload: unknown) => Promise.resolve(payload) } });
    const thrown: unknown[] = [];
    for (const act of [() => queue.submit({ type: "ecoh" }), () => queue.submit({ id: "a", type: "echo", dependsOn: ["b"] }), () => queue.cancel("nope")]) {
      try {
        act();
      } catch (error) {
        thrown.push(error);
      }
    }
    await queue.shutdown();
    try {
      queue.submit({ type: "echo" });
    } catch (error) {
      thrown.push(error);
    }
    expect(thrown.map((error) => (error as TaskqError).code)).toEqual(["UNKNOWN_HANDLER", "UNKNOWN_DEPENDENCY", "TASK_NOT_FOUND", "QUEUE_CLOSED"]);
    for (const error of thrown) {
      expect(error).toBeInstanceOf(TaskqError);
      expect(error).not.toHaveProperty("exitCode");
    }
  });

  it.each([
    ["TaskqError", new TaskqError("X", "x")],
    ["PermanentError", new PermanentError("x")],
    ["UnknownHandlerError", new UnknownHandlerError("x")],
    ["UnknownDependencyError", new UnknownDependencyError("a", "b")],
    ["TaskNotFoundError", new TaskNotFoundError("a")],
    ["QueueClosedError", new QueueClosedError()],
    ["AttemptTimeoutError", new AttemptTimeoutError(50)],
    ["TaskCancelledError", new TaskCancelledError("cancel", "x")],
    ["HandlerError", new HandlerError("x")],
  ])("a %s has no exitCode, not even undefined, so a JSON dump of a task's error shows none", (_name, error) => {
    expect(Object.hasOwn(error, "exitCode")).toBe(false);
    expect(error.exitCode).toBeUndefined();
    expect(JSON.parse(JSON.stringify({ ...error }))).not.toHaveProperty("exitCode");
  });

  it("an exit code given is kept: the CLI's usage errors exit 2", () => {
    expect(new UsageError("bad flag").exitCode).toBe(2);
    expect(new TaskqError("X", "x", { exitCode: 3 }).exitCode).toBe(3);
  });
});
