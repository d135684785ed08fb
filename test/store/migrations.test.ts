import { afterAll, describe, expect, it } from "vitest";
import { LATEST_MIGRATION, migrate } from "../../src/store/postgres/migrations.js";
import { createPool, dropSchema, uniqueSchema } from "./helpers.js";

describe("migrate", () => {
  const schema = uniqueSchema();
  afterAll(async () => dropSchema(schema));

  it("applies each migration once when several processes start at once", async () => {
    const pools = Array.from({ length: 6 }, () => createPool(2));
    try {
      const applied = await Promise.all(pools.map((pool) => migrate(pool, schema)));
      const all = Array.from({ length: LATEST_MIGRATION }, (_, i) => i + 1);
      // Exactly one process applied them all, in order; the others found nothing to do.
      expect(applied.filter((versions) => versions.length > 0)).toEqual([all]);
      const again = await migrate(pools[0]!, schema);
      expect(again).toEqual([]);
      const rows = await pools[0]!.query<{ version: number }>(`SELECT version FROM "${schema}".migrations ORDER BY version`);
      expect(rows.rows.map((row) => row.version)).toEqual(all);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it("rejects a schema name that is not a plain identifier", async () => {
    const pool = createPool(1);
    try {
      await expect(migrate(pool, 'x"; DROP TABLE y; --')).rejects.toMatchObject({ code: "STORE_BAD_SCHEMA" });
    } finally {
      await pool.end();
    }
  });
});
