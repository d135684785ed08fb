export { createShellHandler } from "./shell-handler.js";
export { expectTaskPipes, prepareTaskPipes } from "./fifo-pool.js";
export { TaskFailedError, LogWriteError } from "./errors.js";
export { appendToLogFile, attemptLine, InvalidTaskIdError, logPathsIn } from "./log-file.js";
export { activeProcessGroups, killAllProcessGroups, stopLeftovers } from "./process-groups.js";
export { startGroupGuard } from "./group-guard.js";
export { formatDuration } from "./format-duration.js";
export type { AttemptContext, AttemptResult, OutputSink, ShellHandler, ShellHandlerOptions, ShellTask, StreamName } from "./types.js";
export { fitConcurrencyToOpenFiles, type FittedConcurrency } from "./open-file-limit.js";
