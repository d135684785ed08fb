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
  const d = new Date(ms);
  const pad = (n: number, w = 2): string => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function formatDelay(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return formatMs(Math.round(ms / 100) * 100);
}
