import type { ChalkInstance } from "chalk";

/**
 * chalk with the level taskq wants: none under NO_COLOR, FORCE_COLOR=0 or --no-color (chalk
 * does not honour NO_COLOR by itself), FORCE_COLOR as chalk reads it, else
 * colour only on a terminal. Without colour, chalk is not even loaded: in CI
 * and pipes that keeps its import off `taskq run`'s startup.
 */
export async function createColors(options: { color: boolean; isTTY: boolean }): Promise<ChalkInstance> {
  if (coloursRefused(options.color)) return noColors;
  const force = process.env.FORCE_COLOR;
  const forced = force !== undefined && force !== "";
  if (!forced && !options.isTTY) return noColors;
  const { Chalk } = await import("chalk");
  return forced ? new Chalk() : new Chalk({ level: 1 });
}

/**
 * Whether the user asked for no colour: --no-color (`color` false), NO_COLOR set and not empty, or FORCE_COLOR=0 (or
 * false), which means no colour as Node and chalk read it, on a terminal too. Then taskq writes no colour code of its
 * own, not even a task's colour set again after its prefix (see OpenColours).
 */
export function coloursRefused(color: boolean): boolean {
  if (!color || (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "")) return true;
  const force = process.env.FORCE_COLOR;
  return force === "0" || force === "false";
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
