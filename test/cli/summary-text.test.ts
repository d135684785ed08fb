import { describe, expect, it } from "vitest";
import { createColors } from "../../src/cli/render/colors.js";
import { formatSummary, tailMaskCommands } from "../../src/cli/render/summary-text.js";
import type { DeadLetterLine, RunSummary } from "../../src/cli/render/types.js";

const dead = (i: number): DeadLetterLine => ({
  id: `d${i}`,
  attempts: 1,
  error: "exited with code 3",
  exitCode: 3,
  signal: null,
  timedOut: false,
  logPath: `/logs/run/d${i}.log`,
  logFile: `run/d${i}.log`,
  tail: [`last of d${i}`],
});

function summary(deadLetters: DeadLetterLine[], cancelled: RunSummary["cancelled"]): RunSummary {
  return {
    runId: "run",
    file: "ci.yaml",
    logDir: "/logs/run",
    wallMs: 1200,
    counts: { BLOCKED: 0, SCHEDULED: 0, READY: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: deadLetters.length, CANCELLED: cancelled.length },
    deadLetters,
    cancelled,
    exitCode: 1,
  };
}

describe("formatSummary", () => {
  it("shows the first 20 dead letters with their log and last lines, the others a line each; what each cancelled", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const letters = Array.from({ length: 25 }, (_, i) => dead(i));
    const cancelled: RunSummary["cancelled"] = [
      { id: "after-d0", reason: "dependency", dependency: "d0", message: "dependency d0 failed" },
      { id: "after-d24", reason: "dependency", dependency: "d24", message: "dependency d24 failed" },
      { id: "also-d24", reason: "dependency", dependency: "d24", message: "dependency d24 failed" },
      { id: "stopped", reason: "shutdown", message: "shutdown: not started" },
    ];
    const text = formatSummary(summary(letters, cancelled), colors);
    expect(text).toContain("Dead letters (25):\n  ✗ d0: exited with code 3 (1 attempt)\n    log: /logs/run/d0.log\n    last line:\n      last of d0\n    cancelled because of it: after-d0\n");
    expect(text).toContain("  ✗ d19: exited with code 3 (1 attempt)\n    log: /logs/run/d19.log\n");
    expect(text).toContain("  ✗ d20: exited with code 3 (1 attempt)\n  ✗ d21:");
    expect(text).toContain("  ✗ d24: exited with code 3 (1 attempt)\n    cancelled because of it: after-d24, also-d24\n  (the last 5 without their last lines: see <id>.log in /logs/run)\n");
    expect(text).not.toContain("last of d20");
    expect(text).toContain("Cancelled (1):\n  - stopped: shutdown: not started\n");
  });

  it("formats 10,000 dead letters, each with the task it cancelled", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const letters = Array.from({ length: 10_000 }, (_, i) => dead(i));
    const cancelled = letters.map((letter) => ({ id: `after-${letter.id}`, reason: "dependency" as const, dependency: letter.id, message: "" }));
    const text = formatSummary(summary(letters, cancelled), colors);
    expect(text.match(/cancelled because of it: after-d\d+\n/g)).toHaveLength(10_000);
  });

  it("names the first 50 tasks a dead letter cancelled and counts the rest, not a line of 60,000 names", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const cancelled = Array.from({ length: 60_000 }, (_, i) => ({ id: `t${i + 1}`, reason: "dependency" as const, dependency: "d0", message: "" }));
    const text = formatSummary(summary([dead(0)], cancelled), colors);
    const names = Array.from({ length: 50 }, (_, i) => `t${i + 1}`).join(", ");
    expect(text).toContain(`    cancelled because of it: ${names}, ... and 59,950 more\n`);
    expect(text.length).toBeLessThan(2000);
  });

  it("lists a durable run's running tasks, longest running first as given, with attempt, worker and time; past 50, a count", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const running: NonNullable<RunSummary["running"]> = Array.from({ length: 52 }, (_, i) => ({
      id: `r${i}`,
      attempt: 2,
      maxAttempts: 3,
      workerId: i === 1 ? null : "host-a:123",
      runningMs: (60 - i) * 1000,
    }));
    const text = formatSummary({ ...summary([], []), counts: { ...summary([], []).counts, RUNNING: 52 }, running }, colors);
    expect(text).toContain("Summary: 0 succeeded, 0 failed, 0 cancelled, 52 unfinished (52 running) in 1.2s\n\nRunning (52):\n  ▶ r0: attempt 2/3 on host-a:123, for 1m\n  ▶ r1: attempt 2/3, for 59s\n");
    expect(text).toContain("  ▶ r49: attempt 2/3 on host-a:123, for 11s\n  ... and 2 more\n");
    expect(text).not.toContain("r50");
    // A summary without running tasks (every local run's) has no such section.
    expect(formatSummary(summary([], []), colors)).not.toContain("Running");
  });

  it("under GitHub Actions, writes the mask commands of every task's lines the summary holds first, shown or not: a value one task masked shows in no line before its mask", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    // A running task whose mask is in a line past the last three shown, a dead letter past the first 20 (shown without lines),
    // and a dead letter quoted before the one that masks its value.
    const running: NonNullable<RunSummary["running"]> = [{ id: "r", attempt: 1, maxAttempts: 1, workerId: null, runningMs: 1000, lastLines: ["::add-mask::run-secret", "a", "b", "using run-secret"] }];
    const letters = Array.from({ length: 22 }, (_, i) => dead(i));
    letters[0] = { ...dead(0), tail: ["key=deploy-secret"] };
    letters[1] = { ...dead(1), tail: ["::add-mask::deploy-secret"] };
    letters[21] = { ...dead(21), tail: ["::add-mask::late-secret"] };
    const text = formatSummary({ ...summary(letters, []), running }, colors, false, { commandsRead: true });
    const lines = text.split("\n");
    expect(lines.slice(0, 3)).toEqual(["::add-mask::run-secret", "::add-mask::deploy-secret", "::add-mask::late-secret"]);
    // Before: run-secret and late-secret were masked nowhere, and deploy-secret only after d0's line showed it.
    expect(lines.findIndex((line) => line.includes("using run-secret"))).toBeGreaterThan(2);
    expect(lines.findIndex((line) => line.includes("key=deploy-secret"))).toBeGreaterThan(2);
    // Outside GitHub Actions, none.
    expect(formatSummary({ ...summary(letters, []), running }, colors)).not.toContain("::add-mask::run-secret\n");
  });

  it("says of a running task whose lease ran out what a sweep does with it: queued again, or cancelled where a cancel was asked for or its run was stopped", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const base = { attempt: 1, maxAttempts: 3, workerId: "host-a:123", runningMs: 7_500, leaseExpiredMs: 2_500 };
    const running: NonNullable<RunSummary["running"]> = [
      { id: "plain", ...base },
      { id: "asked", ...base, cancelRequested: true },
      { id: "stopped", ...base, runStopped: true },
    ];
    const text = formatSummary({ ...summary([], []), counts: { ...summary([], []).counts, RUNNING: 3 }, running }, colors);
    const gone = "its lease ran out 2.5s ago (the worker is gone, stalled or cut off from the database): a worker's sweep";
    expect(text).toContain(`  ▶ plain: attempt 1/3 on host-a:123, for 7.5s; ${gone} queues it again\n`);
    expect(text).toContain(`  ▶ asked: attempt 1/3 on host-a:123, for 7.5s, cancel requested; ${gone} cancels it\n`);
    expect(text).toContain(`  ▶ stopped: attempt 1/3 on host-a:123, for 7.5s, its run stopped; ${gone} cancels it\n`);
  });

  it("says of a task whose lease ran out while its worker still waits on the database that its record may still go through, not that the worker is gone", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const running: NonNullable<RunSummary["running"]> = [{ id: "deploy", attempt: 1, maxAttempts: 2, workerId: "host-a:123", runningMs: 7_500, leaseExpiredMs: 2_500, workerWaitingMs: 4_000 }];
    const text = formatSummary({ ...summary([], []), counts: { ...summary([], []).counts, RUNNING: 1 }, running }, colors);
    expect(text).toContain(
      "  ▶ deploy: attempt 1/2 on host-a:123, for 7.5s; its lease ran out 2.5s ago while its worker waits on the database (a statement of its, for 4s: " +
        "a renewal, or the record of how the attempt ended, which may still go through); if it does not, a worker's sweep queues it again\n",
    );
    expect(text).not.toContain("gone");
  });

  it("says a wall time past a minute in minutes, whole seconds or not (not 512s beside 8m30.6s)", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const wall = (wallMs: number): string => /Summary: .* in (\S+)\n/.exec(formatSummary({ ...summary([], []), wallMs }, colors))?.[1] ?? "";
    expect([450, 1200, 59_960, 60_000, 510_600, 512_000, 512_049, 3_600_000, 5_400_000, 5_412_300].map(wall)).toEqual([
      "450ms",
      "1.2s",
      "1m",
      "1m",
      "8m30.6s",
      "8m32s",
      "8m32s",
      "1h",
      "1h30m",
      // Past an hour to the minute, as the live board counts a running task's time.
      "1h30m",
    ]);
  });

  it("says a wall time past a minute whose seconds are under one in tenths of a second, as the live board says it (1m0.3s, not 1m300ms)", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const wall = (wallMs: number): string => /Summary: .* in (\S+)\n/.exec(formatSummary({ ...summary([], []), wallMs }, colors))?.[1] ?? "";
    expect([60_300, 120_949].map(wall)).toEqual(["1m0.3s", "2m0.9s"]);
    // Past an hour to the minute, as the live board says it: not "1h0.3s", "1h1m0.5s" nor "1h30s" beside the board's "1h".
    expect([3_600_300, 3_660_500, 3_601_000, 3_630_000].map(wall)).toEqual(["1h", "1h1m", "1h", "1h1m"]);
    // Past a day, in days and hours, as every other duration (not "26h3m0.3s").
    expect([26 * 3_600_000 + 180_300, 25 * 86_400_000].map(wall)).toEqual(["1d2h", "25d"]);
    // Rounded to the minute: a run under a minute short of a day took 1d, not 24h nor "23h59m59.9s".
    expect([86_399_960, 86_399_940].map(wall)).toEqual(["1d", "1d"]);
    // A running task's time in a durable run's status, and a lease run out, in the same words.
    const status: RunSummary = {
      ...summary([], []),
      counts: { ...summary([], []).counts, RUNNING: 1 },
      running: [{ id: "job", attempt: 1, maxAttempts: 1, workerId: "w-1", runningMs: 60_400, leaseExpiredMs: 60_200 }],
    };
    const text = formatSummary(status, colors);
    expect(text).toContain("job: attempt 1/1 on w-1, for 1m0.4s; its lease ran out 1m0.2s ago");
    expect(text).not.toMatch(/\dm\d+ms/);
  });
});

describe("a task's last lines in the summary", () => {
  it("stay dimmed after the task's own colour sequences: its \\e[0m no longer ends the dimming for the rest of the line", async () => {
    const previous = process.env.FORCE_COLOR;
    process.env.FORCE_COLOR = "1";
    try {
      const colors = await createColors({ color: true, isTTY: true });
      const letter = { ...dead(0), tail: ["\x1b[31mred\x1b[0m and the rest", "plain"] };
      const text = formatSummary(summary([letter], []), colors, true);
      expect(text).toContain("\x1b[2m      \x1b[31m\x1b[2mred\x1b[0m\x1b[2m and the rest\x1b[22m\n");
      expect(text).toContain("\x1b[2m      plain\x1b[22m\n");
      const cancelled = formatSummary(summary([], [{ id: "cut", reason: "shutdown", message: "aborted by shutdown", running: true, logPath: "/logs/run/cut.log", logFile: "run/cut.log", tail: ["\x1b[1mbold\x1b[0m after"] }]), colors, true);
      expect(cancelled).toContain("\x1b[2m      \x1b[1m\x1b[2mbold\x1b[0m\x1b[2m after\x1b[22m\n");
    } finally {
      if (previous === undefined) delete process.env.FORCE_COLOR;
      else process.env.FORCE_COLOR = previous;
    }
  });

  it("says no output under a cancelled task's log where its attempts left no lines, as under a dead letter's", async () => {
    const colors = await createColors({ color: false, isTTY: false });
    const cancelled: RunSummary["cancelled"] = [
      { id: "silent", reason: "shutdown", message: "shutdown: not retried (attempt 1 failed: exited with code 75)", logPath: "/logs/run/silent.log", logFile: "run/silent.log", tail: [] },
      { id: "talks", reason: "shutdown", message: "aborted by shutdown", running: true, logPath: "/logs/run/talks.log", logFile: "run/talks.log", tail: ["working"] },
    ];
    const text = formatSummary(summary([], cancelled), colors, false);
    expect(text).toContain(
      "Cancelled (2):\n  - talks: aborted by shutdown\n    log: /logs/run/talks.log\n    last line:\n      working\n  - silent: shutdown: not retried (attempt 1 failed: exited with code 75)\n    log: /logs/run/silent.log\n    no output\n",
    );
  });
});

describe("tailMaskCommands", () => {
  it("gives each mask command of a task's last lines once, the older form as `::add-mask::`; none of white space only, nor the last of a line cut at 1,000 characters, whose value was cut", () => {
    expect(tailMaskCommands(["plain", "::add-mask::a1", "  ::add-mask::a1", "x ##[add-mask]b2", "::add-mask::", "::add-mask::   ", "::add-mask::%0D%0A"])).toEqual(["::add-mask::a1", "::add-mask::b2"]);
    expect(tailMaskCommands(["no command here"])).toBeUndefined();
    // A value across the cut: not masked in part, down to its first character, which the runner would then mask everywhere
    // in the rest of the job's log (before: `::add-mask::s` of `0...0##[add-mask]s3cret-token`, cut after its `s`).
    const token = `${"0".repeat(987)}##[add-mask]s3cret-token-XYZ`;
    expect(tailMaskCommands([`${token.slice(0, 1000)}… (${token.length} bytes)`])).toBeUndefined();
    const words = `::add-mask::x ${"y".repeat(1100)}`;
    expect(tailMaskCommands([`${words.slice(0, 1000)}… (${words.length} bytes)`])).toBeUndefined();
    // Nor its words shown (tailLineInWords): a certificate's `-----BEGIN` would be masked wherever it stood.
    const pem = `::add-mask::-----BEGIN CERTIFICATE-----%0A${"A".repeat(1500)}`;
    expect(tailMaskCommands([`${pem.slice(0, 1000)}… (${pem.length} bytes)`])).toBeUndefined();
    // A part a `\r` ended before the cut is whole, and masked.
    const parts = `::add-mask::whole-one\r${"z".repeat(1100)}`;
    expect(tailMaskCommands([`${parts.slice(0, 1000)}… (${parts.length} bytes)`])).toEqual(["::add-mask::whole-one"]);
  });
});
