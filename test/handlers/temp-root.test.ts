import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { failedRoots, makeInTempRoot, nextTempRoot } from "../../src/handlers/temp-root.js";

/** An fs error with `code`, as mkdtemp or an open throws it. */
const fsError = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });

// One loop for what taskq makes in its temp folders (the guard's list, the FIFOs' folder): on to the next folder for want
// of room only, each folder once, what it could not be made in told in order.
describe("makeInTempRoot", () => {
  it("makes it in the root given where that takes it", () => {
    expect(makeInTempRoot((root) => `${root}/made`, "/given")).toEqual({ made: "/given/made", root: "/given", failed: [] });
  });

  it.skipIf(nextTempRoot(["/nowhere"]) === undefined)("moves on to the next temp folder for want of room, and says where it could not", () => {
    const next = nextTempRoot(["/nowhere"])!;
    const made = makeInTempRoot((root) => {
      if (root === "/nowhere") throw fsError("ENOSPC");
      return root;
    }, "/nowhere");
    expect(made).toEqual({ made: next, root: next, failed: [{ root: "/nowhere", code: "ENOSPC" }] });
    expect(failedRoots(made.failed)).toBe("/nowhere (ENOSPC)");
  });

  it("stops at an error that is not for want of room, and gives it", () => {
    const error = fsError("EACCES");
    const made = makeInTempRoot(() => {
      throw error;
    }, "/denied");
    expect(made).toEqual({ failed: [{ root: "/denied", code: "EACCES" }], error });
  });

  it.skipIf(!existsSync("/tmp"))("tries each folder once, none already given up, and where none has room gives every one tried", () => {
    const tried: string[] = [];
    const made = makeInTempRoot(
      (root) => {
        tried.push(root);
        throw fsError("EDQUOT");
      },
      undefined,
      [{ root: "/full", code: "ENOSPC" }],
    );
    expect(made.made).toBeUndefined();
    expect(new Set(tried).size).toBe(tried.length);
    expect(tried).not.toContain("/full");
    expect(made.failed).toEqual([{ root: "/full", code: "ENOSPC" }, ...tried.map((root) => ({ root, code: "EDQUOT" }))]);
    expect(failedRoots(made.failed)).toBe(["/full (ENOSPC)", ...tried.map((root) => `${root} (EDQUOT)`)].join(", nor in "));
  });
});
