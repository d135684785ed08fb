import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The store's error codes are listed in one place, StoreErrorCode and the comment above it, for those who branch on them.
const STORE = path.resolve(import.meta.dirname, "../../src/store/postgres");

describe("the store's error codes", () => {
  // LEASE_RAN_OUT (a renewal not sent, its lease run out as it waited for a connection) was thrown by the store and listed nowhere.
  it("each code an error of the store is made with is a StoreErrorCode, and the comment above the type says what it means", async () => {
    const listing = await readFile(path.join(STORE, "store-error.ts"), "utf8");
    const union = /export type StoreErrorCode =([^;]*);/.exec(listing)?.[1] ?? "";
    const listed = new Set([...union.matchAll(/"([A-Z_]+)"/g)].map((match) => match[1]!));
    const comment = /\/\*\*\n \* Codes of the errors the store throws:\n([\s\S]*?) \*\/\nexport type StoreErrorCode/.exec(listing)?.[1] ?? "";
    const thrown = new Set<string>();
    for (const name of (await readdir(STORE)).filter((file) => file.endsWith(".ts"))) {
      const text = await readFile(path.join(STORE, name), "utf8");
      for (const match of text.matchAll(/(?:new TaskqError|super)\(\s*"([A-Z_]+)"/g)) thrown.add(match[1]!);
    }
    expect(thrown.size).toBeGreaterThan(5);
    expect([...thrown].filter((code) => !listed.has(code))).toEqual([]);
    expect([...listed].filter((code) => !comment.includes(code))).toEqual([]);
  });
});
