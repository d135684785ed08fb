import { shown, TaskqError } from "../errors.js";
import type { ShutdownOptions, ShutdownResult } from "./options.js";
import { LongTimer } from "./long-timer.js";
import { dateTime, EPOCH_LIKE_MS } from "./task-spec.js";

/** What cut a drain short: the deadline passed, or the signal aborted. */
export type StopCause = "deadline" | "signal";

/**
 * The promise every shutdown() call returns, and the deadline timers and signal
 * listeners that may cut the drain short: all of them are removed when it settles.
 */
export class ShutdownControl {
  readonly promise: Promise<ShutdownResult>;
  #resolve!: (result: ShutdownResult) => void;
  readonly #cleanups: (() => void)[] = [];
  /** The signals an abort listener watches already. */
  readonly #watched = new Set<AbortSignal>();

  constructor() {
    this.promise = new Promise<ShutdownResult>((resolve) => (this.#resolve = resolve));
  }

  /**
   * Arms `hardStop` for when `options.deadline` passes or `options.signal` aborts, telling it
   * which (and the signal's reason). Returns which has happened already, arming nothing: the caller stops at once.
   * Throws INVALID_OPTION for a deadline that is not a time (NaN, an invalid Date).
   */
  watch(options: ShutdownOptions, calledAt: number | undefined, hardStop: (cause: StopCause, signalReason?: unknown) => void): StopCause | undefined {
    // A Date is read against the clock now; ms from now, from when shutdown() was called (`calledAt`, performance.now()).
    const ms = deadlineMs(options.deadline) - (calledAt === undefined ? 0 : performance.now() - calledAt);
    const { signal } = options;
    if (signal?.aborted === true) return "signal";
    if (ms <= 0) return "deadline";
    if (ms !== Infinity) {
      const timer = new LongTimer(() => hardStop("deadline"), ms);
      this.#cleanups.push(() => timer.clear());
    }
    // A signal watched already (shutdown({ signal }) called again, to escalate or from each of a program's paths) is not
    // watched twice: a listener per call, past 10 of them, had Node print a MaxListenersExceededWarning on stderr.
    if (signal !== undefined && signal !== null && !this.#watched.has(signal)) {
      this.#watched.add(signal);
      const onAbort = (): void => hardStop("signal", signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#cleanups.push(() => signal.removeEventListener("abort", onAbort));
    }
    return undefined;
  }

  /** Removes every timer and listener, then resolves the promise. */
  finish(result: ShutdownResult): void {
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    this.#resolve(result);
  }
}

/** The options shutdown() takes: a misspelt one (`deadLine`) would otherwise be ignored, and a drain wait forever. */
const OPTION_NAMES: ReadonlySet<string> = new Set<keyof ShutdownOptions>(["drain", "deadline", "signal", "abortGraceMs"]);

/**
 * What the types refuse, refused before shutdown changes anything, for JavaScript callers: an
 * option the queue does not know, `drain: "false"` (which would drain), a grace that is not a
 * number of 0 or more, a signal that is not one, and a deadline that is not a time.
 */
export function checkShutdownOptions(options: unknown): asserts options is ShutdownOptions | null {
  // null is no options, as for wait(id, null): a JavaScript caller's `shutdown(options ?? null)`.
  if (options === null) return;
  if (typeof options !== "object") {
    // Shown as other options' values are: "x" quoted as a string, where it read as `got x`; a number or a boolean is likely the deadline or the drain meant.
    const hint = typeof options === "number" ? `: for a deadline, pass shutdown({ deadline: ${options} })` : typeof options === "boolean" ? `: for the drain, pass shutdown({ drain: ${options} })` : "";
    throw new TaskqError("INVALID_OPTION", `shutdown options must be an object, got ${shown(options)}${hint}`);
  }
  // It has no keys of its own: taken for no options, the signal would be ignored and the drain wait on.
  if (isAbortSignal(options)) throw new TaskqError("INVALID_OPTION", "shutdown options must be an object, got an AbortSignal: pass it as shutdown({ signal })");
  const unknown = Object.keys(options).filter((name) => !OPTION_NAMES.has(name));
  if (unknown.length > 0) {
    throw new TaskqError("INVALID_OPTION", `unknown shutdown option ${unknown.map((name) => JSON.stringify(name)).join(", ")}: the options are ${[...OPTION_NAMES].join(", ")}`);
  }
  const { drain, signal, abortGraceMs, deadline } = options as Record<keyof ShutdownOptions, unknown>;
  // null, for each, is the option not given.
  if (drain !== undefined && drain !== null && typeof drain !== "boolean") {
    throw new TaskqError("INVALID_OPTION", `shutdown drain must be true or false, got ${shown(drain)}`);
  }
  if (abortGraceMs !== undefined && abortGraceMs !== null && (typeof abortGraceMs !== "number" || Number.isNaN(abortGraceMs))) {
    throw new TaskqError("INVALID_OPTION", `shutdown abortGraceMs must be a number of ms, got ${shown(abortGraceMs)}`);
  }
  // Infinity would wait forever for a handler that ignores its signal: shutdown would never return.
  if (abortGraceMs === Infinity || abortGraceMs === -Infinity) {
    throw new TaskqError("INVALID_OPTION", `shutdown abortGraceMs must be a finite number of ms, got ${abortGraceMs}: a handler that ignores its signal would keep shutdown from ever returning`);
  }
  // A grace below 0 means nothing: taken as 0, a caller's mistake (a sign, a subtraction) would pass unseen.
  if (typeof abortGraceMs === "number" && abortGraceMs < 0) {
    throw new TaskqError("INVALID_OPTION", `shutdown abortGraceMs must be 0 or more ms, got ${abortGraceMs}`);
  }
  if (signal !== undefined && signal !== null && !isAbortSignal(signal)) {
    throw new TaskqError("INVALID_OPTION", `shutdown signal must be an AbortSignal, got ${notASignal(signal)}`);
  }
  deadlineMs(deadline as ShutdownOptions["deadline"] | null);
}

/** A value given for a signal, as a message shows it: an AbortController (its signal meant) says so. */
export function notASignal(value: unknown): string {
  try {
    const { signal, abort } = value as Partial<AbortController>;
    if (isAbortSignal(signal) && typeof abort === "function") return "an AbortController: pass its signal (controller.signal)";
  } catch {
    // A getter or a Proxy that throws: not a controller.
  }
  return shown(value);
}

/** By shape, not instanceof: a signal of another realm (a vm context, a polyfill) is one too. */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== "object" || value === null) return false;
  const { aborted, addEventListener } = value as Partial<AbortSignal>;
  return typeof aborted === "boolean" && typeof addEventListener === "function";
}

const YEAR_MS = 365.25 * 24 * 3_600_000;

/** Milliseconds from now to `deadline` (Infinity for none, undefined or null); throws INVALID_OPTION for one that is not a time. */
export function deadlineMs(deadline: number | Date | null | undefined): number {
  if (deadline === undefined || deadline === null) return Infinity;
  const date = dateTime(deadline);
  const ms = date !== undefined ? date - Date.now() : deadline;
  if (typeof ms !== "number" || Number.isNaN(ms)) {
    const given = date !== undefined ? "an invalid Date" : shown(deadline);
    throw new TaskqError("INVALID_OPTION", `shutdown deadline must be a number of ms or a valid Date, got ${given}`);
  }
  // A time in epoch ms (Date.now() + 30_000, as a task's runAt is written): as a duration, decades
  // that no drain would reach. Infinity stays "no deadline".
  if (typeof deadline === "number" && deadline >= EPOCH_LIKE_MS && deadline !== Infinity) {
    const years = Math.round(deadline / YEAR_MS);
    throw new TaskqError("INVALID_OPTION", `shutdown deadline is ms from now, and ${deadline} ms is ${years} years: for a time, pass a Date (new Date(${deadline}))`);
  }
  return ms;
}
