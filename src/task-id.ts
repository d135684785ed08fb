/** Task ids: letters, digits, `_ . -`, not starting with `.` or `-`, at most 128 characters; never `/`, so log file names stay inside their folder. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** What a task id may be, for error messages. */
export const TASK_ID_EXPECTED = `ids match ${TASK_ID_PATTERN.source} (letters, digits, _ . -, at most 128 characters) and are not "." or ".."`;

/** True for an id that is safe as a log file name and matches the documented pattern. */
export function isTaskId(id: string): boolean {
  return TASK_ID_PATTERN.test(id) && id !== "." && id !== "..";
}
