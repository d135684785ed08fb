import { Chalk, type ChalkInstance } from "chalk";

/**
 * chalk with the level taskq wants: none under NO_COLOR or --no-color (chalk
 * does not honour NO_COLOR by itself), FORCE_COLOR as chalk reads it, else
 * colour only on a terminal.
 */
export function createColors(options: { color: boolean; isTTY: boolean }): ChalkInstance {
  const noColor = !options.color || (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "");
  if (noColor) return new Chalk({ level: 0 });
  const force = process.env.FORCE_COLOR;
  if (force !== undefined && force !== "" && force !== "0" && force !== "false") return new Chalk();
  return new Chalk({ level: options.isTTY ? 1 : 0 });
}
