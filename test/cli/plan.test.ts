import { describe, expect, it } from "vitest";
import { formatMs } from "../../src/engine/errors.js";

describe("--dry-run durations", () => {
  it("are written as in a workflow, exactly, never as a count of milliseconds past a second", () => {
    expect(formatMs(250)).toBe("250ms");
    expect(formatMs(1500)).toBe("1.5s");
    expect(formatMs(90_000)).toBe("1m30s");
    expect(formatMs(3_723_500)).toBe("1h2m3.5s");
    // Past a day in days, as the run says it (not 720h).
    expect(formatMs(2_592_000_000)).toBe("30d");
    expect(formatMs(131_400_000)).toBe("1d12h30m");
    expect(formatMs(3_600_001)).toBe("1h0.001s");
  });
});
