import { messageOf, shown, TaskqError } from "../errors.js";
import type { CancelReason, Priority, TaskStatus } from "./types.js";

/** Every state change the queue reports, by event name. */
export interface QueueEventMap {
  submitted: { id: string; type: string; priority: Priority; status: TaskStatus; runAt?: number; dependsOn: readonly string[] };
  /** BLOCKED -> READY or SCHEDULED -> READY. */
  ready: { id: string; from: TaskStatus };
  /** BLOCKED -> SCHEDULED: the dependencies are done and the task waits for its runAt. */
  scheduled: { id: string; runAt: number };
  started: { id: string; attempt: number; maxAttempts: number };
  /** RUNNING -> SCHEDULED: the attempt failed and another one is due at runAt. */
  retrying: { id: string; attempt: number; maxAttempts: number; delayMs: number; runAt: number; error: unknown };
  succeeded: { id: string; attempts: number; value: unknown };
  failed: { id: string; attempts: number; error: unknown };
  cancelled: { id: string; attempts: number; reason: CancelReason; dependency?: string; error: unknown };
  /** Shutdown finished: nothing is left to run. */
  drained: { hardStopped: boolean };
  /**
   * A listener threw; the queue carried on. `event` is the queue event it listened for, or "abort"
   * for a listener a handler added to its attempt's signal, with the task's `id` and the `attempt`.
   */
  "listener-error": { event: string; error: unknown; id?: string; attempt?: number };
}

export type QueueEventName = keyof QueueEventMap;
/** Every event name, to refuse a misspelt one (`on("finished")` would wait for ever). */
const EVENT_NAMES: ReadonlySet<string> = new Set<QueueEventName>(["submitted", "ready", "scheduled", "started", "retrying", "succeeded", "failed", "cancelled", "drained", "listener-error"]);
/** A listener may be async: its rejection is reported as listener-error, as a throw is. */
type Listener<E extends QueueEventName> = (event: QueueEventMap[E]) => unknown;

/**
 * A tiny typed emitter. `emit` isolates listeners: one that throws is reported
 * as "listener-error" and never breaks the queue or the other listeners.
 */
export class QueueEvents {
  readonly #listeners = new Map<QueueEventName, Listener<never>[]>();

  /** Subscribes; returns the function that unsubscribes. */
  on<E extends QueueEventName>(name: E, listener: Listener<E>): () => void {
    if (!EVENT_NAMES.has(name)) {
      throw new TaskqError("INVALID_OPTION", `unknown event ${shown(name)}: the events are ${[...EVENT_NAMES].join(", ")}`);
    }
    if (typeof listener !== "function") throw new TaskqError("INVALID_OPTION", `the listener for "${name}" must be a function, got ${shown(listener)}`);
    const list = this.#listeners.get(name) ?? [];
    // Copy on write, so a listener that unsubscribes during emit is safe.
    this.#listeners.set(name, [...list, listener]);
    // Each call's own: a function subscribed twice stays subscribed once when one of them ends,
    // and calling it again does nothing.
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const current = this.#listeners.get(name) ?? [];
      const index = current.indexOf(listener);
      if (index === -1) return;
      const next = [...current.slice(0, index), ...current.slice(index + 1)];
      if (next.length === 0) this.#listeners.delete(name);
      else this.#listeners.set(name, next);
    };
  }

  /** Cheap check so the queue builds event objects only when someone listens. */
  has(name: QueueEventName): boolean {
    return this.#listeners.has(name);
  }

  emit<E extends QueueEventName>(name: E, event: QueueEventMap[E]): void {
    const list = this.#listeners.get(name) as Listener<E>[] | undefined;
    if (list === undefined) return;
    for (const listener of list) {
      try {
        this.#onRejection(listener(event), name);
      } catch (error) {
        this.#report(name, error);
      }
    }
  }

  /**
   * An async listener's throw is a rejection of what it returned: reported as a synchronous
   * throw is, not left an unhandled rejection, which ends the process.
   */
  #onRejection(returned: unknown, name: QueueEventName): void {
    if (typeof returned !== "object" || returned === null) return;
    const { then } = returned as { then?: unknown };
    if (typeof then === "function") (then as PromiseLike<unknown>["then"]).call(returned, undefined, (error: unknown) => this.#report(name, error));
  }

  removeAll(): void {
    this.#listeners.clear();
  }

  /**
   * Reports what an abort listener of a handler's threw (see containListeners): as listener-error,
   * or, with no one listening for that, a process warning naming the task and the attempt.
   */
  reportAbortListener(id: string, attempt: number, error: unknown): void {
    this.#report("abort", error, { id, attempt });
  }

  #report(name: QueueEventName | "abort", error: unknown, task?: { id: string; attempt: number }): void {
    const list = this.#listeners.get("listener-error") as Listener<"listener-error">[] | undefined;
    if (name === "listener-error" || list === undefined) {
      // Nobody to tell inside the program: a process warning is the last resort.
      const which = task === undefined ? `a "${name}" listener` : `task ${JSON.stringify(task.id)}: an "abort" listener on attempt ${task.attempt}'s signal`;
      process.emitWarning(`taskq: ${which} threw: ${messageOf(error)}`, "TaskqListenerWarning");
      return;
    }
    for (const listener of list) {
      try {
        this.#onRejection(listener(task === undefined ? { event: name, error } : { event: name, error, ...task }), "listener-error");
      } catch (inner) {
        this.#report("listener-error", inner);
      }
    }
  }
}
