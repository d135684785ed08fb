export { Queue, type QueueOptions, type ShutdownOptions, type ShutdownResult } from "./queue.js";
export { exponentialBackoff, exponentialDelay, type Backoff, type ExponentialBackoffOptions } from "./backoff.js";
export { QueueEvents, type QueueEventMap, type QueueEventName } from "./events.js";
export { IndexedHeap, type HeapItem } from "./heap.js";
export {
  AttemptTimeoutError,
  HandlerError,
  QueueClosedError,
  TaskCancelledError,
  TaskNotFoundError,
  UnknownDependencyError,
  UnknownHandlerError,
  formatMs,
} from "./errors.js";
export * from "./types.js";
