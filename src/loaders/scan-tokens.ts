import type { CST } from "yaml";
import { tooManyTasksMessage } from "./count-tasks.js";
import { MAX_NESTING_DEPTH, MAX_TASKS } from "./limits.js";
import type { ProblemList } from "./problem-list.js";

/**
 * Cheap checks on the concrete syntax tree, before the costly document tree is
 * built: one document only (a second one is told, and the first still checked
 * and read: see readYaml), nesting within MAX_NESTING_DEPTH (block nesting
 * too, not only brackets), and at most MAX_TASKS tasks. Iterative, so hostile
 * nesting cannot overflow the stack. Returns false when parsing must stop.
 */
export function scanTokens(tokens: CST.Token[], problems: ProblemList, tooDeep: (offset: number, flow?: boolean) => void = (offset) => problems.atOffset(offset, `nesting is deeper than ${MAX_NESTING_DEPTH} levels; a workflow needs only a few`)): boolean {
  const documents = tokens.filter((token): token is CST.Document => token.type === "document");
  const second = documents[1];
  if (second !== undefined) {
    // Text after a `...` (the end of a document) starts a second one with no `---` of its own.
    const end = second.start.some((token) => token.type === "doc-start") ? undefined : tokens.findLast((token) => token.type === "doc-end" && token.offset < second.offset);
    const message =
      end === undefined
        ? "the file holds more than one YAML document (a second `---`); put the whole workflow in one document"
        : `the file goes on after the \`...\` at ${problems.lineCol(end.offset)}, which ends its YAML document: what follows it is a second document; put the whole workflow in one document (remove the \`...\`, or what follows it)`;
    // Told, and the first document still read: its problems were hidden behind this one, to be met only once the rest was removed.
    // An empty first one (`---` then `---`, the workflow in the second): its nothing is all that is checked, which "only the first
    // document is checked" left unsaid, the workflow seeming checked.
    const firstStart = documents[0]!.value === undefined ? documents[0]!.start.find((token) => token.type === "doc-start") : undefined;
    const checked =
      end === undefined && firstStart !== undefined
        ? `; the first document is empty, and the workflow after it is not checked: remove the first \`---\`, at ${problems.lineCol(firstStart.offset)}`
        : "; only the first document is checked";
    problems.atOffset(second.offset, `${message}${checked}`);
  }
  const root = documents[0]?.value;
  if (root === undefined) return true;
  return checkDepth(root, tooDeep) && checkTaskCount(root, problems);
}

/** Whether `root` nests within MAX_NESTING_DEPTH; `tooDeep` is told where it first does not, and whether a bracket's nesting (`flow`) goes past it. */
function checkDepth(root: CST.Token, tooDeep: (offset: number, flow?: boolean) => void): boolean {
  const stack: Array<[CST.Token, number]> = [[root, 0]];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [token, depth] = entry;
    if (token.type !== "block-map" && token.type !== "block-seq" && token.type !== "flow-collection") continue;
    if (depth + 1 > MAX_NESTING_DEPTH) {
      tooDeep(token.offset, token.type === "flow-collection");
      return false;
    }
    for (const item of token.items as CST.CollectionItem[]) {
      if (item.key) stack.push([item.key, depth + 1]);
      if (item.value) stack.push([item.value, depth + 1]);
    }
  }
  return true;
}

const tasksKeys = new Set(["tasks", "'tasks'", '"tasks"']);

function checkTaskCount(root: CST.Token, problems: ProblemList): boolean {
  if (root.type !== "block-map" && root.type !== "flow-collection") return true;
  for (const item of root.items as CST.CollectionItem[]) {
    const key = item.key;
    if (!key || !("source" in key) || !tasksKeys.has(key.source)) continue;
    const value = item.value;
    if (value?.type !== "block-map" && value?.type !== "flow-collection") return true;
    const past = value.items[MAX_TASKS];
    if (past !== undefined) {
      // At the task past the limit, as the count before parsing says it (count-tasks.ts).
      const pastKey = past.key;
      const id = pastKey && "source" in pastKey ? pastKey.source : undefined;
      problems.atOffset(pastKey?.offset ?? past.start[0]?.offset ?? value.offset, tooManyTasksMessage(id));
      return false;
    }
  }
  return true;
}
