import { describe, expect, it } from "vitest";
import { fitConcurrencyToOpenFiles, pipesOpenedAhead } from "../../src/handlers/open-file-limit.js";

describe("fitConcurrencyToOpenFiles", () => {
  it("keeps a concurrency the open-file limit allows, and says nothing", () => {
    expect(fitConcurrencyToOpenFiles(300, true, 20_000)).toEqual({ concurrency: 300 });
    expect(fitConcurrencyToOpenFiles(300, true, 1024, { held: 20 })).toEqual({ concurrency: 300 });
    expect(fitConcurrencyToOpenFiles(4, true, undefined)).toEqual({ concurrency: 4 });
  });

  it("lowers one it does not allow to what is left beyond the files taskq holds (three a task, five with stdout and stderr apart), with a note", () => {
    // 1024 - 20 held - 6 opened later - 8 for daemons' pipes - 8 for pipes opened ahead - 16 for a worker's database connections.
    expect(fitConcurrencyToOpenFiles(1000, true, 1024, { held: 20 })).toEqual({
      concurrency: 322,
      note: "concurrency 1000 is more than 1024 open files allow (ulimit -n): at most 322 tasks run at once",
    });
    // A local run opens no database connection.
    expect(fitConcurrencyToOpenFiles(1000, true, 1024, { held: 20, others: 0 }).concurrency).toBe(327);
    expect(fitConcurrencyToOpenFiles(1000, false, 1024, { held: 20, others: 0 }).concurrency).toBe(196);
  });

  it("at 64 open files, runs several tasks at once: taskq holds a few (no pipe is opened ahead under a low limit)", () => {
    expect(pipesOpenedAhead(64)).toBe(0);
    expect(pipesOpenedAhead(4096)).toBe(4);
    expect(fitConcurrencyToOpenFiles(50, true, 64, { held: 16, others: 0 })).toEqual({
      concurrency: 11,
      note: "concurrency 50 is more than 64 open files allow (ulimit -n): at most 11 tasks run at once",
    });
  });

  it("says 1 task, not 1 tasks", () => {
    expect(fitConcurrencyToOpenFiles(50, true, 36, { held: 19, others: 0 })).toEqual({
      concurrency: 1,
      note: "concurrency 50 is more than 36 open files allow (ulimit -n): at most 1 task runs at once",
    });
  });

  it("where not even one task fits, throws an error that names ulimit -n and what would do (exit 1), rather than run tasks that fail with EMFILE", () => {
    let thrown: unknown;
    try {
      fitConcurrencyToOpenFiles(4, true, 24, { held: 19, others: 0 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: "OPEN_FILE_LIMIT",
      exitCode: 1,
      message: "the open-file limit (ulimit -n) is 24, too low to run a task: taskq holds 19 files and needs 17 more for one; raise it to 36 at least (ulimit -n 1024, say)",
    });
  });

  it("counts the files this process holds where it has to", () => {
    // This test process holds some, well under 1,000: 20 tasks fit in 1,200 whatever they are; 400 do not.
    expect(fitConcurrencyToOpenFiles(20, true, 1200).concurrency).toBe(20);
    expect(fitConcurrencyToOpenFiles(400, true, 1200).concurrency).toBeLessThan(400);
  });
});
