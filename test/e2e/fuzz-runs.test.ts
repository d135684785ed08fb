import fc from "fast-check";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES } from "../helpers/cli.js";
import { checkAllClean, delay, jsonEvents, readLedger, startRun, terminalEvents, waitForOutput } from "./reliability-harness.js";

/** One task of a random DAG; every kind is a fixture that writes to the ledger. */
interface PlannedTask {
  id: string;
  kind: "exit" | "flaky" | "timeout" | "lines";
  /** exit: the exit code; flaky: the call that first succeeds. */
  value: number;
  retries: number;
  dependsOn: string[];
}

const taskArbitrary = (index: number, earlier: number) =>
  fc.record({
    kind: fc.constantFrom("exit", "exit", "flaky", "timeout", "lines"),
    value: fc.integer({ min: 0, max: 3 }),
    retries: fc.integer({ min: 0, max: 2 }),
    dependsOn: fc.subarray(Array.from({ length: earlier }, (_, i) => `t${i}`), { maxLength: Math.min(2, earlier) }),
  }).map((task): PlannedTask => ({ id: `t${index}`, ...task, dependsOn: [...task.dependsOn], value: task.kind === "flaky" ? task.value + 1 : task.value }));

const dagArbitrary = fc
  .integer({ min: 2, max: 6 })
  .chain((size) => fc.tuple(...Array.from({ length: size }, (_, index) => taskArbitrary(index, index))));

const scenarioArbitrary = fc.record({
  tasks: dagArbitrary,
  concurrency: fc.integer({ min: 1, max: 4 }),
  /** ms after the run starts to send SIGINT to the group, or none. */
  interruptAfterMs: fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined }),
});

function commandOf(task: PlannedTask): string {
  switch (task.kind) {
    case "exit":
      // By path: a bare `exit` is the shell's builtin, which writes no ledger line.
      return `${path.join(FIXTURES, "exit")} ${task.value}`;
    case "flaky":
      return `flaky ${task.value} state-${task.id}`;
    case "timeout":
      return "forever";
    case "lines":
      return "print-lines 50";
  }
}

function workflowOf(tasks: PlannedTask[]): string {
  const lines = ["defaults: { backoff: { base: 10ms, max: 50ms } }", "tasks:"];
  for (const task of tasks) {
    const timeout = task.kind === "timeout" ? ", timeout: 200ms" : "";
    lines.push(`  ${task.id}: { run: "${commandOf(task)}", retries: ${task.retries}${timeout}, dependsOn: [${task.dependsOn.join(", ")}] }`);
  }
  return `${lines.join("\n")}\n`;
}

/** The status each task ends with when nothing interrupts the run. */
function expectedStatuses(tasks: PlannedTask[]): Map<string, string> {
  const status = new Map<string, string>();
  for (const task of tasks) {
    if (task.dependsOn.some((dependency) => status.get(dependency) !== "succeeded")) status.set(task.id, "cancelled");
    else if (task.kind === "exit") status.set(task.id, task.value === 0 ? "succeeded" : "failed");
    else if (task.kind === "flaky") status.set(task.id, task.value <= task.retries + 1 ? "succeeded" : "failed");
    else if (task.kind === "timeout") status.set(task.id, "failed");
    else status.set(task.id, "succeeded");
  }
  return status;
}

type Scenario = typeof scenarioArbitrary extends fc.Arbitrary<infer T> ? T : never;

async function checkScenario(scenario: Scenario): Promise<void> {
  const { tasks } = scenario;
  const run = await startRun(workflowOf(tasks), ["--output", "json", "-j", String(scenario.concurrency), "--shutdown-timeout", "200ms", "--kill-grace", "300ms"]);
  if (scenario.interruptAfterMs !== undefined) {
    // The "run" event is printed after the signal handlers are in place.
    await waitForOutput(run, /"event":"run"/);
    await delay(scenario.interruptAfterMs);
    if (run.child.exitCode === null) run.signalGroup("SIGINT");
  }
  const { result } = await run.exited;
  const events = jsonEvents(result.stdout);
  const terminal = terminalEvents(result.stdout);
  const ledger = await readLedger(run.ledger);

  // Every task has exactly one terminal status.
  for (const task of tasks) expect(terminal.get(task.id), `terminal events of ${task.id}`).toHaveLength(1);
  const statusOf = (id: string): string => terminal.get(id)![0]!;

  for (const task of tasks) {
    // attempts <= retries + 1: numbered 1..n in the events; in the ledger, a subset in order
    // (an attempt killed by a timeout or Ctrl-C before its fixture ran leaves no line).
    const attempts = events.filter((e) => e.event === "started" && e.id === task.id).map((e) => e.attempt);
    expect(attempts).toEqual(Array.from({ length: attempts.length }, (_, i) => i + 1));
    expect(attempts.length).toBeLessThanOrEqual(task.retries + 1);
    const starts = ledger.filter((e) => e.event === "start" && e.task === task.id).map((e) => e.attempt);
    expect(starts.every((attempt, i) => attempt >= 1 && attempt <= attempts.length && (i === 0 || attempt > starts[i - 1]!))).toBe(true);
    // No task starts before its dependencies succeeded: in the ledger (real time) and in the events.
    ledger.forEach((entry, index) => {
      if (entry.event !== "start" || entry.task !== task.id) return;
      for (const dependency of task.dependsOn) {
        expect(statusOf(dependency)).toBe("succeeded");
        expect(ledger.slice(0, index).some((e) => e.event === "end" && e.task === dependency)).toBe(true);
      }
    });
    const firstStart = events.findIndex((e) => e.event === "started" && e.id === task.id);
    for (const dependency of task.dependsOn) {
      if (firstStart === -1) continue;
      expect(events.findIndex((e) => e.event === "succeeded" && e.id === dependency)).toBeLessThan(firstStart);
    }
  }

  const summary = events.at(-1) as { event: string; interrupted?: string; exitCode: number; deadLetters: Array<{ id: string }> };
  // Killed by the SIGINT (its default action) only where it landed after the run had ended, its handlers
  // removed: its summary is out, and says nothing of the signal. One before the handlers were in place would have none.
  expect(summary.event).toBe("summary");
  if (result.signal === "SIGINT") expect(summary.interrupted).toBeUndefined();
  // The dead letters are exactly the failed tasks.
  const failed = tasks.filter((task) => statusOf(task.id) === "failed").map((task) => task.id);
  expect(summary.deadLetters.map((dead) => dead.id).sort()).toEqual(failed.sort());
  if (summary.interrupted !== undefined) {
    expect(summary.interrupted).toBe("SIGINT");
    expect(result.code).toBe(130);
  } else {
    const expected = expectedStatuses(tasks);
    for (const task of tasks) expect(statusOf(task.id), task.id).toBe(expected.get(task.id));
    expect(result.signal === "SIGINT" ? summary.exitCode : result.code).toBe([...expected.values()].every((status) => status === "succeeded") ? 0 : 1);
  }
}

describe("random DAGs through the real CLI", () => {
  it("one terminal status each, dependencies first, bounded attempts, dead letters = failures, nothing left running", { timeout: 170_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        try {
          await checkScenario(scenario);
        } finally {
          await checkAllClean();
        }
      }),
      { numRuns: Number(process.env.TASKQ_FUZZ_RUNS ?? 15), endOnFailure: true },
    );
  });
});
