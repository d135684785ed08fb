import { formatMs } from "../../engine/index.js";

/** A one-line description of why an attempt or task failed. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The attempt result a shell failure carries, if any. */
export function attemptResultOf(error: unknown): { exitCode: number | null; signal: string | null; timedOut: boolean; tail: string[] } | undefined {
  const result = (error as { result?: unknown } | null)?.result as
    | { exitCode?: number | null; signal?: string | null; timedOut?: boolean; tail?: string[] }
    | undefined;
  if (result === undefined || typeof result !== "object") return undefined;
  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    timedOut: result.timedOut ?? false,
    tail: Array.isArray(result.tail) ? result.tail : [],
  };
}

/** "12:04:05.123" in local time. */
export function clock(ms: number = Date.now()): string {
  // Local time's offset from UTC is whole minutes and changes only on a minute boundary, so
  // the hour and minute (a Date and two time-zone lookups, ~10 µs) are worked out once a
  // minute; every start and end line of a run asks for the time.
  const minute = ms - (((ms % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
  if (minute !== clockMinute) {
    const d = new Date(minute);
    clockMinute = minute;
    clockPrefix = `${pad2(d.getHours())}:${pad2(d.getMinutes())}:`;
  }
  const inMinute = Math.floor(ms - minute);
  const milliseconds = inMinute % 1000;
  return `${clockPrefix}${pad2((inMinute - milliseconds) / 1000)}.${milliseconds < 10 ? "00" : milliseconds < 100 ? "0" : ""}${milliseconds}`;
}

const MINUTE_MS = 60_000;
/** clock()'s minute, and its "HH:MM:". */
let clockMinute = Number.NaN;
let clockPrefix = "";

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

export function formatDelay(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return formatMs(Math.round(ms / 100) * 100);
}
