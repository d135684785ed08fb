import { describe, expect, it } from "vitest";
import { fitToOuterGrace, shortenedNote } from "../../src/cli/outer-grace.js";

const defaults = { shutdownTimeoutMs: 10_000, killGraceMs: 5_000 };

describe("fitToOuterGrace: a taskq run by a task of another fits its stop into that one's kill grace", () => {
  it("leaves the times alone outside a task, or where they fit", () => {
    expect(fitToOuterGrace(defaults, {})).toEqual(defaults);
    expect(fitToOuterGrace(defaults, { TASKQ_KILL_GRACE_MS: "60000" })).toEqual(defaults);
    // Not a whole number of ms: not taskq's.
    expect(fitToOuterGrace(defaults, { TASKQ_KILL_GRACE_MS: "3s" })).toEqual(defaults);
  });

  it("shortens both to the grace less a margin (a fifth, at least 0.5s), the kill grace at most half of it", () => {
    expect(fitToOuterGrace(defaults, { TASKQ_KILL_GRACE_MS: "5000" })).toEqual({ shutdownTimeoutMs: 2000, killGraceMs: 2000, outerGraceMs: 5000 });
    expect(fitToOuterGrace(defaults, { TASKQ_KILL_GRACE_MS: "3000" })).toEqual({ shutdownTimeoutMs: 1200, killGraceMs: 1200, outerGraceMs: 3000 });
    expect(fitToOuterGrace({ shutdownTimeoutMs: 10_000, killGraceMs: 500 }, { TASKQ_KILL_GRACE_MS: "5000" })).toEqual({ shutdownTimeoutMs: 3500, killGraceMs: 500, outerGraceMs: 5000 });
    expect(fitToOuterGrace(defaults, { TASKQ_KILL_GRACE_MS: "0" })).toEqual({ shutdownTimeoutMs: 0, killGraceMs: 0, outerGraceMs: 0 });
  });

  it("says so for flags given, not for defaults", () => {
    const fitted = fitToOuterGrace({ shutdownTimeoutMs: 60_000, killGraceMs: 5_000 }, { TASKQ_KILL_GRACE_MS: "5000" });
    expect(shortenedNote({ shutdownTimeoutMs: 60_000, killGraceMs: 5_000 }, fitted, { shutdownTimeout: true, killGrace: false })).toBe(
      "--shutdown-timeout 1m is shortened to 2s: the taskq running this one kills it 5s after its SIGTERM (TASKQ_KILL_GRACE_MS), and this run's stop must end, summary written, within that",
    );
    expect(shortenedNote(defaults, fitted, { shutdownTimeout: false, killGrace: false })).toBeUndefined();
  });
});
