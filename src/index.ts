/**
 * taskq's library API: the in-process queue engine, usable without the CLI.
 * @example
 *   import { Queue } from "taskq";
 *   const queue = new Queue({ concurrency: 2, handlers: { echo: async (text: string) => text } });
 */
export * from "./engine/index.js";
export { TaskqError, PermanentError, UsageError, isPermanent } from "./errors.js";
