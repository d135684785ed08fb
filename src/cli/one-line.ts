/** A command on one line of one column: a multi-line `run: |` block's line breaks and tabs written as `\n`, `\r`, `\t`. */
export function oneLine(command: string): string {
  return command.replace(/\n$/, "").replace(/[\t\r\n]/g, (character) => (character === "\n" ? "\\n" : character === "\t" ? "\\t" : "\\r"));
}
