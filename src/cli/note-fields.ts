/**
 * A note's JSON fields: its message, and where it names a place in the workflow file
 * (`ci.yaml:4:12: task "a": ...`), that place as `file`, `line` and `col` too, as an
 * `invalid` record gives each problem's.
 */
export function noteFields(message: string, file: string | undefined): { message: string; file?: string; line?: number; col?: number } {
  if (file === undefined || !message.startsWith(`${file}:`)) return { message };
  const place = /^:(\d+):(\d+): /.exec(message.slice(file.length));
  // The message without the place, as a problem's in an `invalid` record: the place is in its own fields.
  return place === null ? { message } : { message: message.slice(file.length + place[0].length), file, line: Number(place[1]), col: Number(place[2]) };
}
