import { describe, expect, it } from "vitest";
import { DB_ERROR_REMINDER_MS, DbErrorLines } from "../../src/cli/db-error-lines.js";

describe("DbErrorLines", () => {
  it("says an error once, again every 30 s with how long and how many tries, and the recovery after tries not said", () => {
    let now = 0;
    const lines = new DbErrorLines(() => now);
    expect(lines.failed("lease", "connect ECONNREFUSED", true)).toEqual({ say: true });
    for (now = 2_000; now < DB_ERROR_REMINDER_MS; now += 2_000) expect(lines.failed("lease", "connect ECONNREFUSED", true)).toEqual({ say: false });
    expect(lines.failed("lease", "connect ECONNREFUSED", true)).toEqual({ say: true, again: { failingForMs: 30_000, tries: 16 } });
    now += 2_000;
    expect(lines.failed("lease", "connect ECONNREFUSED", true)).toEqual({ say: false });
    now += 1_000;
    expect(lines.recovered("lease")).toEqual({ failedForMs: 33_000, tries: 17 });
    // Failing anew after it recovered: said at once.
    expect(lines.failed("lease", "connect ECONNREFUSED", true)).toEqual({ say: true });
  });

  it("says a different error at once, even one another operation met, and a try given up on always; alternating errors are each said once", () => {
    let now = 0;
    const lines = new DbErrorLines(() => now);
    expect(lines.failed("release", "Connection terminated unexpectedly", true)).toEqual({ say: true });
    now = 100;
    expect(lines.failed("release", "read ECONNRESET", true)).toEqual({ say: true });
    expect(lines.failed("sweep", "read ECONNRESET", true)).toEqual({ say: true });
    now = 2_000;
    expect(lines.failed("release", "Connection terminated unexpectedly", true)).toEqual({ say: false });
    expect(lines.failed("release", "read ECONNRESET", true)).toEqual({ say: false });
    expect(lines.failed("release", "read ECONNRESET", false)).toEqual({ say: true });
    expect(lines.recovered("sweep")).toBeUndefined();
  });

  it("a single error that recovers adds nothing: its one line said all", () => {
    const lines = new DbErrorLines(() => 0);
    expect(lines.failed("lease", "timeout", true)).toEqual({ say: true });
    expect(lines.recovered("lease")).toBeUndefined();
    expect(lines.recovered("never-failed")).toBeUndefined();
  });
});
