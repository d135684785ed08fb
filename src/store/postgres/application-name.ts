import { createHash } from "node:crypto";

/** The longest `application_name` PostgreSQL keeps (NAMEDATALEN - 1 bytes); a longer one is cut. */
const APPLICATION_NAME_BYTES = 63;

/**
 * `words` as the `application_name` that `pg_stat_activity` shows (`taskq worker <id>`): PostgreSQL
 * turns what is not printable ASCII into `?`, done here so that bytes are characters, and cuts it at
 * 63 bytes. A longer one keeps its start (the command) and its end (a worker id's pid and suffix, a
 * run id's random part), with `..` for the middle.
 */
export function applicationName(words: string): string {
  return fitted(words.replace(/[^\x20-\x7e]/g, "?"), APPLICATION_NAME_BYTES);
}

/** `printable` cut to `bytes`, its start and end kept with `..` for the middle. */
function fitted(printable: string, bytes: number): string {
  if (printable.length <= bytes) return printable;
  const head = Math.floor((bytes - 2) / 2);
  return `${printable.slice(0, head)}..${printable.slice(printable.length - (bytes - 2 - head))}`;
}

/** The longest schema named whole at the end of a session's name that its words do not fit beside; a longer one is named by a digest of it. */
const SCHEMA_IN_NAME = 24;

/**
 * The two ways the name of a session of the store in `schema` may end: ` in <schema>`, or ` in #<16 hex digits of
 * its SHA-256>`. A schema's name holds no space, `#` or `.`: either end tells its store apart from every other's.
 */
export function storeNameEnds(schema: string): [whole: string, digest: string] {
  return [` in ${schema}`, ` in #${createHash("sha256").update(schema).digest("hex").slice(0, 16)}`];
}

/**
 * `words` as the `application_name` of a session of the store in `schema`: `taskq worker <id> in <schema>` where
 * that fits in PostgreSQL's 63 bytes, else the words cut in their middle (as applicationName cuts them) before an end
 * that never is: ` in <schema>`, or for a schema longer than 24 characters (48 may be), ` in #<digest>` (see storeNameEnds).
 */
export function storeApplicationName(words: string, schema: string): string {
  const printable = words.replace(/[^\x20-\x7e]/g, "?");
  const [whole, digest] = storeNameEnds(schema);
  if (printable.length + whole.length <= APPLICATION_NAME_BYTES) return `${printable}${whole}`;
  const end = schema.length <= SCHEMA_IN_NAME ? whole : digest;
  return `${fitted(printable, APPLICATION_NAME_BYTES - end.length)}${end}`;
}
