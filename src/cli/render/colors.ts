import type { ChalkInstance } from "chalk";

/**
 * chalk with the level taskq wants: none under NO_COLOR, FORCE_COLOR=0 or --no-color (chalk
 * does not honour NO_COLOR by itself), FORCE_COLOR as chalk reads it, else
 * colour only on a terminal. Without colour, chalk is not even loaded: in CI
 * and pipes that keeps its import off `taskq run`'s startup.
 */
export async function createColors(options: { color: boolean; isTTY: boolean }): Promise<ChalkInstance> {
  const noColor = !options.color || (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "");
  if (noColor) return noColors;
  const force = process.env.FORCE_COLOR;
  // FORCE_COLOR=0 (or false) means no colour, as Node and chalk read it, on a terminal too.
  if (force === "0" || force === "false") return noColors;
  const forced = force !== undefined && force !== "";
  if (!forced && !options.isTTY) return noColors;
  const { Chalk } = await import("chalk");
  return forced ? new Chalk() : new Chalk({ level: 1 });
}

/** What chalk at level 0 does: every style, however chained, returns its arguments joined by spaces. */
const uncoloured = (...texts: unknown[]): string => (texts.length === 1 ? String(texts[0]) : texts.join(" "));
const noColors: ChalkInstance = new Proxy(uncoloured, {
  get(target, key) {
    if (key === "level") return 0;
    // Not a thenable: this object is returned from an async function.
    if (key === "then" || typeof key !== "string") return Reflect.get(target, key) as unknown;
    return noColors;
  },
}) as unknown as ChalkInstance;
