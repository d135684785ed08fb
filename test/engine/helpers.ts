import { expect, vi } from "vitest";
import { Queue, type QueueEventMap, type QueueEventName, type QueueOptions } from "../../src/engine/index.js";
import type { AttemptContext, Handler } from "../../src/engine/types.js";

/** Every event the queue emitted, in order, as [name, payload]. */
export type EventLog = [QueueEventName, unknown][];

const EVENT_NAMES: QueueEventName[] = [
  "submitted",
  "scheduled",
  "ready",
  "started",
  "retrying",
  "succeeded",
  "failed",
  "cancelled",
  "drained",
  "listener-error",
];

/** Subscribes to every event and records it. */
export function recordEvents(queue: Queue): EventLog {
  const log: EventLog = [];
  for (const name of EVENT_NAMES) queue.on(name, (event) => log.push([name, event]));
  return log;
}

/** The payloads of one event kind, in order. */
export function eventsOf<E extends QueueEventName>(log: EventLog, name: E): QueueEventMap[E][] {
  return log.filter(([n]) => n === name).map(([, e]) => e as QueueEventMap[E]);
}

/** The event names that concern task `id`, in order. */
export function trail(log: EventLog, id: string): string[] {
  return log.filter(([, e]) => (e as { id?: string }).id === id).map(([n]) => n);
}

/**
 * Every task submitted got exactly one terminal event (succeeded, failed or cancelled), the one of the status it ended
 * with, with that status's error (the same object) and, for a cancel, its reason and dependency: none missing, none
 * told twice or told otherwise. A task forgotten since (Queue.forget, by a listener) is skipped: the queue no longer
 * has its result to compare with.
 */
export function expectOneTerminalEventEach(queue: Queue, log: EventLog): void {
  const ids = eventsOf(log, "submitted").map((e) => e.id);
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) {
    const result = queue.get(id);
    if (result === undefined) continue;
    const terminal = log.filter(([name, e]) => (name === "succeeded" || name === "failed" || name === "cancelled") && (e as { id: string }).id === id);
    expect(terminal.map(([name]) => name), `terminal events of ${id}`).toEqual([result.status.toLowerCase()]);
    if (result.status === "SUCCEEDED") continue;
    const event = terminal[0]![1] as QueueEventMap["failed"] | QueueEventMap["cancelled"];
    expect(event.error, `error of the terminal event of ${id}`).toBe(result.error);
    if (result.status === "CANCELLED") {
      const cancelled = event as QueueEventMap["cancelled"];
      expect({ reason: cancelled.reason, dependency: cancelled.dependency }, `cancelled event of ${id}`).toEqual({ reason: result.cancelReason, dependency: result.dependency });
    }
  }
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Settles when the attempt's signal aborts, rejecting with its reason: a handler that honours its signal. */
export function untilAborted(context: AttemptContext): Promise<never> {
  return new Promise<never>((_, reject) => {
    const { signal } = context;
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
  });
}

/** A handler that runs until its signal aborts. */
export const hang: Handler = (_payload, context) => untilAborted(context);

/** A handler that succeeds at once with its payload. */
export const echo: Handler = (payload) => payload;

/** Lets every pending microtask and promise continuation run (timers untouched). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** A queue with deterministic zero-jitter-free backoff by default (a fixed delay), started unless asked not to. */
export function makeQueue(options: Partial<QueueOptions> & { start?: boolean } = {}): { queue: Queue; log: EventLog } {
  const { start = true, ...rest } = options;
  const queue = new Queue({
    concurrency: 2,
    backoff: () => 100,
    ...rest,
    handlers: { echo, hang, ...rest.handlers },
  });
  const log = recordEvents(queue);
  if (start) queue.start();
  return { queue, log };
}

/** Fake timers including Date; microtasks stay real. */
export function useFakeTime(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "Date", "performance"] });
  vi.setSystemTime(1_000_000);
}

type AbortListener = (event: Event) => void;

/** Counts a signal's live listeners by wrapping addEventListener/removeEventListener. */
export function countListeners(signal: AbortSignal): { readonly live: number } {
  let live = 0;
  const wrapped = new Map<AbortListener, AbortListener>();
  const patched = signal as unknown as {
    addEventListener: (type: string, listener: AbortListener, options?: { once?: boolean }) => void;
    removeEventListener: (type: string, listener: AbortListener) => void;
  };
  const add = patched.addEventListener.bind(patched);
  const remove = patched.removeEventListener.bind(patched);
  patched.addEventListener = (type, listener, options) => {
    live++;
    const actual: AbortListener =
      options?.once === true
        ? (event) => {
            live--;
            wrapped.delete(listener);
            listener(event);
          }
        : listener;
    wrapped.set(listener, actual);
    add(type, actual, options);
  };
  patched.removeEventListener = (type, listener) => {
    const actual = wrapped.get(listener);
    if (actual === undefined) return;
    live--;
    wrapped.delete(listener);
    remove(type, actual);
  };
  return {
    get live() {
      return live;
    },
  };
}

/** What drainsLongSyncRun needs of a queue: one loaded anew by a test (vi.resetModules) is of another class. */
interface DrainedQueue {
  submit: (spec: { type: string; payload?: unknown }) => unknown;
  shutdown: () => Promise<unknown>;
  stats: () => { byStatus: { SUCCEEDED: number } };
}

/**
 * Submits tasks of `type` (whose handler settles without I/O) for over 10 ms of the real clock, the queue's own, so it
 * takes a turn, and at least 3,000; then checks its shutdown drains them all, told apart from a stall by a real timer
 * (`realTimeout`, setTimeout as it was before fake timers) well after a drain takes (tens of ms).
 */
export async function drainsLongSyncRun(queue: DrainedQueue, realTimeout: typeof setTimeout, type = "sync"): Promise<void> {
  const started = performance.now();
  let submitted = 0;
  while (performance.now() - started < 30 || submitted < 3000) for (let i = 0; i < 100; i++, submitted++) queue.submit({ type, payload: submitted });
  const stalled = new Promise((resolve) => realTimeout(() => resolve("stalled"), 5_000).unref());
  expect(await Promise.race([queue.shutdown(), stalled])).toEqual({ hardStopped: false });
  expect(queue.stats().byStatus.SUCCEEDED).toBe(submitted);
}
