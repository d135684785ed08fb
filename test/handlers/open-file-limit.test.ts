import { describe, expect, it } from "vitest";
import { fitConcurrencyToOpenFiles } from "../../src/handlers/open-file-limit.js";

describe("fitConcurrencyToOpenFiles", () => {
  it("keeps a concurrency the open-file limit allows, and says nothing", () => {
    expect(fitConcurrencyToOpenFiles(300, true, 20_000)).toEqual({ concurrency: 300 });
    expect(fitConcurrencyToOpenFiles(300, true, 1024)).toEqual({ concurrency: 300 });
    expect(fitConcurrencyToOpenFiles(4, true, undefined)).toEqual({ concurrency: 4 });
  });

  it("lowers one it does not allow (three descriptors a task, four with stdout and stderr apart), with a note", () => {
    expect(fitConcurrencyToOpenFiles(1000, true, 1024)).toEqual({
      concurrency: 320,
      note: "concurrency 1000 is more than 1024 open files allow (ulimit -n): at most 320 tasks run at once",
    });
    expect(fitConcurrencyToOpenFiles(1000, false, 1024).concurrency).toBe(240);
    expect(fitConcurrencyToOpenFiles(10, true, 32)).toMatchObject({ concurrency: 1 }); // never none
  });
});
