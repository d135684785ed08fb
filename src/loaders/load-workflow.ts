import { readFileSync, statSync } from "node:fs";
import { MAX_FILE_BYTES } from "./limits.js";
import { parseSimpleWorkflow, parseWorkflow, tooLargeMessage, type ParseOptions } from "./parse-workflow.js";
import type { Workflow } from "./build-workflow.js";
import { WorkflowError } from "./workflow-error.js";

/**
 * Reads and parses a workflow file. The size is checked with stat before
 * reading, so a huge file is rejected without loading it. Any problem,
 * including an unreadable file, is a WorkflowError (exit code 2). Read
 * synchronously: parsing blocks far longer anyway, and the CLI's start then
 * needs no round trip through libuv's thread pool (nor its four threads).
 */
export async function loadWorkflow(file: string, options: ParseOptions = {}): Promise<Workflow> {
  return parseWorkflow(readWorkflowFile(file), file, options);
}

/** As loadWorkflow, but only through the fast reader: undefined when it declines the file (see parseSimpleWorkflow). */
export function loadSimpleWorkflow(file: string, options: ParseOptions = {}): Workflow | undefined {
  return parseSimpleWorkflow(readWorkflowFile(file), file, options);
}

function readWorkflowFile(file: string): Buffer {
  try {
    const info = statSync(file);
    if (info.isDirectory()) throw problem(file, "cannot read file: it is a directory");
    if (info.size > MAX_FILE_BYTES) throw problem(file, tooLargeMessage(info.size));
    return readFileSync(file);
  } catch (error) {
    if (error instanceof WorkflowError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? "";
    const detail = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : (error as Error).message;
    throw problem(file, `cannot read file: ${code ? `${code} (${detail})` : detail}`, error);
  }
}

function problem(file: string, message: string, cause?: unknown): WorkflowError {
  return new WorkflowError([{ file, line: 1, col: 1, message }], cause === undefined ? {} : { cause });
}
