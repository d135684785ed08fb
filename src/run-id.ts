/**
 * A durable run's id names a folder of logs on every worker (`<log-dir>/<run-id>`) and is
 * typed into commands, so it is a plain name: no "/" or "..", which would put the logs
 * elsewhere; not empty (an unset CI variable), not starting with "-" or ".".
 */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** What a run id may be, for error messages. */
export const RUN_ID_EXPECTED = '1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit';

export function isRunId(id: string): boolean {
  return RUN_ID.test(id);
}
