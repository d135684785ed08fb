import type { ShellHandler } from "../handlers/index.js";

/** A run's shell handler, and how many of the run's tasks are using it. */
interface Entry {
  handler: ShellHandler;
  tasks: number;
  /** Drops the handler once the run has had no task here for `lingerMs`. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * The shell handlers of the runs a durable worker serves, one per run. A long-lived worker
 * serves many runs, and each handler holds a copy of the environment and its closures (~5 KB):
 * a run's goes once none of its tasks has been here for `lingerMs`. Not at once: a run's
 * tasks often come one after the other (a chain, `-j 1`), and a new handler costs a copy of
 * the environment and a mkdir.
 */
export class RunHandlers {
  readonly #entries = new Map<string, Entry>();

  constructor(
    readonly create: (runId: string) => ShellHandler,
    readonly lingerMs: number,
  ) {}

  /** Runs kept now (for tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** The run's handler for one task; call `release` once the handler has settled (its output drained). */
  hold(runId: string): { handler: ShellHandler; release: () => void } {
    let entry = this.#entries.get(runId);
    if (entry === undefined) this.#entries.set(runId, (entry = { handler: this.create(runId), tasks: 0, timer: undefined }));
    clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.tasks++;
    const held = entry;
    let released = false;
    return {
      handler: held.handler,
      release: () => {
        if (released) return;
        released = true;
        if (--held.tasks > 0) return;
        held.timer = setTimeout(() => {
          if (held.tasks === 0 && this.#entries.get(runId) === held) this.#entries.delete(runId);
        }, this.lingerMs).unref();
      },
    };
  }
}
