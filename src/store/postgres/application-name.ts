/** The longest `application_name` PostgreSQL keeps (NAMEDATALEN - 1 bytes); a longer one is cut. */
const APPLICATION_NAME_BYTES = 63;

/**
 * `words` as the `application_name` that `pg_stat_activity` shows (`taskq worker <id>`): PostgreSQL
 * turns what is not printable ASCII into `?`, done here so that bytes are characters, and cuts it at
 * 63 bytes. A longer one keeps its start (the command) and its end (a worker id's pid and suffix, a
 * run id's random part), with `..` for the middle.
 */
export function applicationName(words: string): string {
  const printable = words.replace(/[^\x20-\x7e]/g, "?");
  if (printable.length <= APPLICATION_NAME_BYTES) return printable;
  const head = Math.floor((APPLICATION_NAME_BYTES - 2) / 2);
  return `${printable.slice(0, head)}..${printable.slice(printable.length - (APPLICATION_NAME_BYTES - 2 - head))}`;
}
