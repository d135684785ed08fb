import { TaskCancelledError } from "../../engine/index.js";
import { killOf, withSigkillWords } from "../../handlers/errors.js";

/**
 * A one-line description of why an attempt or task failed. A cancel that cut an attempt short whose stop came
 * to SIGKILL says how, as a timeout's words do: after the kill grace (it ignored SIGTERM), "aborted by shutdown;
 * killed with SIGKILL after the kill grace (5s): it did not stop on SIGTERM"; with none (a second Ctrl-C), "aborted by
 * shutdown; killed with SIGKILL at once, not after the kill grace".
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // The shell handler's error, which the cancel carries as its cause, tells how the attempt it cut short ended;
  // not twice where the cancel quotes that error already ("not retried (attempt 1 failed: ...)").
  if (!(error instanceof TaskCancelledError)) return error.message;
  const cause = causeOf(error);
  return quotes(error.message, cause) ? error.message : withSigkillWords(error.message, killOf(cause));
}

/** Whether `message` quotes the error `cause`'s; false where reading it throws (a Proxy of a handler's). */
function quotes(message: string, cause: unknown): boolean {
  try {
    return cause instanceof Error && message.includes(cause.message);
  } catch {
    return false;
  }
}

/** An error's cause; undefined where reading it throws (a Proxy of a handler's). */
function causeOf(error: Error): unknown {
  try {
    return error.cause;
  } catch {
    return undefined;
  }
}

/** The attempt result a shell failure carries, if any. */
export function attemptResultOf(error: unknown): { exitCode: number | null; signal: string | null; timedOut: boolean; cancelled: boolean; tail: string[] } | undefined {
  const result = (error as { result?: unknown } | null)?.result as
    | { exitCode?: number | null; signal?: string | null; timedOut?: boolean; cancelled?: boolean; tail?: string[] }
    | undefined;
  if (result === undefined || typeof result !== "object") return undefined;
  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    timedOut: result.timedOut ?? false,
    cancelled: result.cancelled ?? false,
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

/**
 * The local time's offset from UTC at `ms`, as `UTC+05:30`; undefined where it is UTC. A run's first plain line says it:
 * its clock and every line's after it are local time, where its run id's time is UTC (`21:17:15.754 run 20261207-201715-...`
 * read as an hour apart), and a CI log read in another zone told no zone.
 */
export function clockZone(ms: number = Date.now()): string | undefined {
  const offset = -new Date(ms).getTimezoneOffset();
  if (offset === 0) return undefined;
  const minutes = Math.abs(offset);
  return `UTC${offset < 0 ? "-" : "+"}${pad2(Math.floor(minutes / 60))}:${pad2(minutes % 60)}`;
}

/** A moment as clock() gives it, after its date (YYYY-MM-DD) when that is not today's. */
export function clockWithDate(ms: number): string {
  const at = new Date(ms);
  const today = new Date();
  if (at.getFullYear() === today.getFullYear() && at.getMonth() === today.getMonth() && at.getDate() === today.getDate()) return clock(ms);
  return `${at.getFullYear()}-${pad2(at.getMonth() + 1)}-${pad2(at.getDate())} ${clock(ms)}`;
}
