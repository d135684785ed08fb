import { readYaml } from "./read-yaml.js";
import { CR_MIXED_MESSAGE, CR_ONLY_MESSAGE, crOnlyLineEnding, decodeText } from "./decode-text.js";
import { MAX_FILE_BYTES } from "./limits.js";
import { Locator } from "./locator.js";
import { buildWorkflow, refuseTooManyTasks, simpleWorkflow, sourceOf, tooLargeMessage, type ParseOptions } from "./parse-simple.js";
import { toPlain } from "./to-plain.js";
import type { Workflow } from "./build-workflow.js";
import { WorkflowError } from "./workflow-error.js";

export { parseSimpleWorkflow, tooLargeMessage, type ParseOptions } from "./parse-simple.js";

/**
 * Parses and validates a workflow file's content. `file` is used in messages
 * as given and to resolve each task's `cwd`. Throws a WorkflowError listing
 * every problem found; returns plain data only (no YAML objects stay alive).
 */
export function parseWorkflow(text: string | Buffer, file: string, options: ParseOptions = {}): Workflow {
  const source = sourceOf(file, options);
  // A string's length in UTF-16 units never exceeds its UTF-8 byte count, so this check is safe and O(1).
  if (text.length > MAX_FILE_BYTES) throw new WorkflowError([{ file, line: 1, col: 1, message: tooLargeMessage(text.length) }]);
  const decoded = decodeText(text);
  if (!decoded.ok) throw new WorkflowError([{ file, line: decoded.line, col: decoded.col, message: decoded.message }]);
  // A file with lines that end in CR alone is refused, with its other problems read as its editor shows its lines.
  const crOnly = crOnlyLineEnding(decoded.text);
  const content = crOnly === undefined ? decoded.text : decoded.text.replace(/\r(?!\n)/g, "\n");
  refuseTooManyTasks(content, file);
  if (options.simple !== false && crOnly === undefined) {
    const workflow = simpleWorkflow(content, source);
    if (workflow !== undefined) return workflow;
  }
  const parsed = readYaml(content, file);
  const problems = parsed.problems;
  if (crOnly !== undefined) problems.atOffset(crOnly.offset, crOnly.mixed ? CR_MIXED_MESSAGE : CR_ONLY_MESSAGE);
  if (!("document" in parsed)) throw new WorkflowError(problems.problems);
  const plain = toPlain(parsed.document, problems, content);
  return buildWorkflow(plain.value, { ...source, locator: new Locator(parsed.document, plain.aliasTargets, content), problems });
}
