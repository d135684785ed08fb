import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { activeProcessGroups, TaskFailedError } from "../../src/handlers/index.js";
import { findLeftovers } from "../helpers/processes.js";
import { abortWith, createHarness, fixture, type Harness } from "./harness.js";

let harness: Harness;

afterEach(async () => {
  expect(await findLeftovers(harness.runId)).toEqual([]);
  expect(activeProcessGroups()).toBe(0);
  await harness.cleanup();
});

describe("shell handler: many attempts at once", () => {
  it("keeps each task's output and processes apart", async () => {
    harness = await createHarness({ killGraceMs: 200 });
    const controller = new AbortController();
    const kinds = ["lines", "exit", "background", "cancelled"] as const;
    const attempts = Array.from({ length: 24 }, (_, index) => {
      const kind = kinds[index % kinds.length]!;
      const id = `t${index}`;
      const command = {
        lines: `${fixture("print-lines")} 200 ${id}-`,
        exit: `${fixture("exit")} ${index}`,
        background: `sleep 1000 & echo ${id}`,
        cancelled: `exec ${fixture("ignore-sigterm")}`,
      }[kind];
      const signal = kind === "cancelled" ? controller.signal : new AbortController().signal;
      return harness.run(command, { id, signal }).then(
        (result) => ({ id, kind, result, error: undefined }),
        (error: unknown) => ({ id, kind, result: undefined, error: error as TaskFailedError }),
      );
    });
    await harness.waitForLine("ready");
    abortWith(controller, "CANCELLED");
    for (const outcome of await Promise.all(attempts)) {
      const log = await readFile(harness.logPath(outcome.id), "utf8");
      if (outcome.kind === "lines") {
        expect(log.split("\n")).toHaveLength(201);
        expect(log.startsWith(`${outcome.id}-1\n`)).toBe(true);
      } else if (outcome.kind === "background") {
        expect(log).toBe(`${outcome.id}\n`);
      } else if (outcome.kind === "cancelled") {
        expect(outcome.error?.result.cancelled).toBe(true);
      } else {
        // Each exits with its own index (1, 5, 9...): a failure, with that code, not another task's.
        expect(outcome.error?.result.exitCode).toBe(Number(outcome.id.slice(1)));
      }
    }
  });
});
