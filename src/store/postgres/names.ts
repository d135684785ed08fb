import { createHash } from "node:crypto";
import { TaskqError } from "../../errors.js";

/** Schema names are spliced into SQL, so only plain identifiers are accepted. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,47}$/;

/** Qualified, quoted table names for one schema, plus its NOTIFY channel. */
export interface SchemaNames {
  schema: string;
  /** The quoted schema, e.g. `"taskq"`. */
  quoted: string;
  runs: string;
  tasks: string;
  deps: string;
  migrations: string;
  /** Channel woken on submit and requeue; one per schema so schemas never wake each other. */
  channel: string;
  /**
   * A prepared statement's name for this schema (`taskq_heartbeat_<digest>`): PostgreSQL cuts names at
   * 63 bytes, so with the schema's name written whole, a long one (up to 48 characters) made two
   * statements one name ("prepared statement ... already exists") and the driver warn on stderr.
   */
  statement: (kind: string) => string;
}

/** Validates a schema name and derives the names the SQL uses. */
export function schemaNames(schema: string): SchemaNames {
  if (!IDENTIFIER.test(schema)) {
    throw new TaskqError(
      "STORE_BAD_SCHEMA",
      `invalid schema name ${JSON.stringify(schema)}; expected lower-case letters, digits and "_" (at most 48, not starting with a digit)`,
    );
  }
  // PostgreSQL's own: information_schema takes tables (taskq's would sit among the catalog's views), a
  // pg_ name is refused or, as pg_temp, is each session's temporary schema: a store that vanishes.
  if (schema === "information_schema" || schema.startsWith("pg_")) {
    throw new TaskqError("STORE_BAD_SCHEMA", `invalid schema name ${JSON.stringify(schema)}; PostgreSQL reserves it (pg_* and information_schema are its own)`);
  }
  const quoted = `"${schema}"`;
  return {
    schema,
    quoted,
    runs: `${quoted}.runs`,
    tasks: `${quoted}.tasks`,
    deps: `${quoted}.task_deps`,
    migrations: `${quoted}.migrations`,
    channel: `taskq_${schema}`,
    statement: statementNames(schema),
  };
}

/** Prepared statements' names for `schema`: a digest of it stands for it, so every name fits in 63 bytes. */
function statementNames(schema: string): (kind: string) => string {
  const digest = createHash("sha256").update(schema).digest("hex").slice(0, 16);
  return (kind) => `taskq_${kind}_${digest}`;
}
