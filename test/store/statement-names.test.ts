import { describe, expect, it } from "vitest";
import { schemaNames } from "../../src/store/postgres/names.js";

describe("prepared statements' names", () => {
  // With the schema's name written whole, PostgreSQL's 63-byte cut made taskq_heartbeat_<48 chars> and
  // taskq_heartbeat_tail_<48 chars> one name: "prepared statement ... already exists", and leases lost.
  it("fit PostgreSQL's 63 bytes and stay apart for the longest schema name taken, and differ between schemas", () => {
    const kinds = ["complete_and_lease_run", "complete_and_lease", "complete", "lease_run", "lease", "heartbeat_tail", "heartbeat", "submit_new"];
    const long = schemaNames("tail_".repeat(9).slice(0, 48));
    const names = kinds.map((kind) => long.statement(kind));
    for (const name of names) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
    expect(new Set(names).size).toBe(kinds.length);
    expect(schemaNames("taskq").statement("heartbeat")).not.toBe(schemaNames("taskq_b").statement("heartbeat"));
  });
});
