import { describe, expect, it } from "vitest";
import { lockedError } from "../../src/store/postgres/lock-wait.js";
import { describeTimeout, LONG_QUERY_TIMEOUT_MS } from "../../src/store/postgres/timeouts.js";

// The store's time limits and waits past a minute in minutes, as every other duration taskq says:
// a migration's or a prune's statement limit said "did not answer within 600s", and a transaction
// held for two hours "open for 7200.3s".
describe("the store's durations in words", () => {
  it("a statement limit past a minute, and a connect_timeout, in minutes", () => {
    const timeouts = { connectMs: 120_000, queryMs: LONG_QUERY_TIMEOUT_MS };
    expect(describeTimeout(new Error("Query read timeout"), timeouts)).toBe("the database did not answer within 10m");
    expect(describeTimeout(new Error("timeout expired"), timeouts)).toBe("no connection to the database within 2m");
    // Under a minute as before.
    expect(describeTimeout(new Error("Query read timeout"), { connectMs: 10_000, queryMs: 30_000 })).toBe("the database did not answer within 30s");
  });

  // Measured times are rounded: to tenths of a second under an hour, to minutes under a day, to hours past one.
  it("a lock held past a minute, and tries past one, in minutes", () => {
    const error = lockedError("cancel", "nothing was cancelled", { runId: "r1", pid: 42, transactionMs: 7_200_300 }, 8, 61_250, undefined);
    expect(error.message).toContain("(pid 42, its transaction open for 2h)");
    expect(error.message).toContain("each of 8 tries over 1m1.3s gave up after waiting 200ms for it");
  });

  // Under a second as every other duration taskq measures says it (formatDuration): "200ms", where the store said "0.2s".
  it("a wait and a transaction under a second in milliseconds, as the rest of taskq says them", () => {
    const error = lockedError("redrive", "nothing was redriven", { runId: "r1", pid: 42, transactionMs: 850.4 }, 8, 4_630, undefined);
    expect(error.message).toContain("(pid 42, its transaction open for 850ms)");
    expect(error.message).toContain("each of 8 tries over 4.6s gave up after waiting 200ms for it");
  });
});
