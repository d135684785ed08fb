import { Composer, LineCounter, Lexer, Parser, type CST, type Document, type YAMLError } from "yaml";
import { MAX_NESTING_DEPTH } from "./limits.js";
import { ProblemList } from "./problem-list.js";
import { scanTokens } from "./scan-tokens.js";

/** A parsed YAML document with its line index; both are dropped once the workflow is built. */
export interface ParsedYaml {
  document: Document.Parsed;
  lineCounter: LineCounter;
  problems: ProblemList;
}

const deepMessage = `nesting is deeper than ${MAX_NESTING_DEPTH} levels; a workflow needs only a few`;

/**
 * Parses YAML text into one Document, or reports why it cannot. The lexer is
 * driven by hand so that absurd flow nesting (`[[[[...`) stops after
 * MAX_NESTING_DEPTH levels: yaml's composer recurses and would overflow the stack.
 * The core schema keeps `2026-12-01T02:00:00Z` a string even under `%YAML 1.1`;
 * uniqueKeys is off because its check is quadratic (duplicates are found later).
 */
export function readYaml(text: string, file: string): ParsedYaml | { problems: ProblemList } {
  const lineCounter = new LineCounter();
  const problems = new ProblemList(file, lineCounter, text.length);
  const tokens = tokenize(text, lineCounter, problems);
  if (tokens === undefined || !scanTokens(tokens, problems)) return { problems };
  let document: Document.Parsed | undefined;
  try {
    const composer = new Composer({ schema: "core", uniqueKeys: false, merge: false });
    for (const composed of composer.compose(tokens, true, text.length)) document ??= composed;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    problems.atOffset(0, deepMessage);
    return { problems };
  }
  if (document === undefined) return { problems };
  reportYamlErrors([...document.errors, ...document.warnings], problems);
  if (document.errors.length > 0) return { problems };
  return { document, lineCounter, problems };
}

const openers = new Set(["[", "{"]);
const closers = new Set(["]", "}"]);
const SCALAR_MARK = "\x1f";

/** Beyond this many, YAML syntax errors are mostly echoes of the first ones. */
const MAX_YAML_ERRORS = 10;

/** Reports yaml's errors and warnings: one per line, at most MAX_YAML_ERRORS, then a count of the rest. */
function reportYamlErrors(errors: YAMLError[], problems: ProblemList): void {
  const lines = new Set<string>();
  let shown = 0;
  for (const [index, error] of errors.entries()) {
    const line = problems.lineCol(error.pos[0]).split(":")[0]!;
    if (lines.has(line)) continue;
    lines.add(line);
    if (shown++ === MAX_YAML_ERRORS) {
      problems.atOffset(error.pos[0], `... and up to ${errors.length - index} more YAML errors from here on; fix the ones above first`);
      return;
    }
    problems.atOffset(error.pos[0], error.message.split("\n")[0] ?? error.message);
  }
}

/** Line starts straight from the text: the parser skips some newlines while recovering from errors. */
function countLines(text: string, lineCounter: LineCounter): void {
  lineCounter.addNewLine(0);
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) lineCounter.addNewLine(index + 1);
}

function tokenize(text: string, lineCounter: LineCounter, problems: ProblemList): CST.Token[] | undefined {
  const parser = new Parser();
  const tokens: CST.Token[] = [];
  countLines(text, lineCounter);
  let depth = 0;
  let afterScalarMark = false;
  for (const lexeme of new Lexer().lex(text)) {
    // The lexeme after a scalar mark is scalar text, never a bracket indicator.
    if (!afterScalarMark && openers.has(lexeme) && ++depth > MAX_NESTING_DEPTH) {
      problems.atOffset(parser.offset, deepMessage);
      return undefined;
    }
    if (!afterScalarMark && closers.has(lexeme)) depth = Math.max(0, depth - 1);
    afterScalarMark = lexeme === SCALAR_MARK;
    for (const token of parser.next(lexeme)) tokens.push(token);
  }
  for (const token of parser.end()) tokens.push(token);
  return tokens;
}
