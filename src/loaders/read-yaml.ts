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
  reportYamlErrors([...document.errors, ...document.warnings], problems, tokens, text);
  if (document.errors.length > 0) return { problems };
  return { document, lineCounter, problems };
}

const openers = new Set(["[", "{"]);
const closers = new Set(["]", "}"]);
const SCALAR_MARK = "\x1f";

/** Beyond this many, YAML syntax errors are mostly echoes of the first ones. */
const MAX_YAML_ERRORS = 10;

/** Reports yaml's errors and warnings: one per line, at most MAX_YAML_ERRORS, then a count of the rest. */
function reportYamlErrors(errors: YAMLError[], problems: ProblemList, tokens: CST.Token[], text: string): void {
  const lines = new Set<string>();
  let shown = 0;
  for (const [index, error] of errors.entries()) {
    // Where the mistake was made, when yaml names where it gave up (the end of the file, often).
    const unclosed = unclosedOpener(error, tokens, problems, text);
    const at = unclosed?.offset ?? lineContentStart(error.pos[0], text);
    const line = problems.lineCol(at).split(":")[0]!;
    if (lines.has(line)) continue;
    lines.add(line);
    if (shown++ === MAX_YAML_ERRORS) {
      problems.atOffset(at, `... and up to ${errors.length - index} more YAML errors from here on; fix the ones above first`);
      return;
    }
    // yaml's error at a closing bracket it did not take is an echo of this one.
    if (unclosed?.closedAt !== undefined) lines.add(problems.lineCol(unclosed.closedAt).split(":")[0]!);
    problems.atOffset(at, unclosed?.message ?? withHint(error.message.split("\n")[0] ?? error.message, text, error.pos[0], tokens));
  }
}

/** yaml's words for a token it found out of place, with the token's text quoted as JSON. */
const STRAY_TOKEN = /^(Unexpected [\w-]+ token in YAML stream: )(".*")$/;

/** yaml's words for a plain value with ": " in it (`run: echo a: b`), which it reads as a mapping inside a mapping. */
const COLON_IN_VALUE = /^(Nested mappings are not allowed in compact mappings|Block collections are not allowed within flow collections)/;

/** yaml's words for text after a quoted or bracketed value has closed (`run: "echo" foo`, `run: [ -f x ] && make`). */
const TEXT_AFTER_VALUE = /^Unexpected (scalar|anchor|alias|tag) at node end/;
/** yaml's words for a value that starts with an indicator a plain value may not start with (`run: @foo`, `run: > out.txt`). */
const INDICATOR_START = /^(Plain value cannot start with|Not a YAML token|Anchor cannot be an empty string)/;
/** A block mapping's key and its value on the line, which starts with one of those indicators. */
const INDICATOR_VALUE = /^\s*(?:- +)?([^\s"'[{#][^:]*):\s+([@`%|>&])(.*)$/;

/** A block mapping's value that starts and ends with the same quote, with more of that quote inside (`run: 'it's'`): its key, quote and text between. */
const QUOTED_VALUE = /^\s*(?:- +)?([^\s"'[{#][^:]*):\s+(["'])(.*)\2\s*(?:#.*)?$/;

/** yaml's words for a list item on its key's line (`dependsOn: - a`). */
const LIST_ON_KEY_LINE = /^Unexpected block-seq-ind on same line with key/;
/** A block mapping's key, then `- item` on its line (a comment after it left out). */
const LIST_ITEM_AFTER_KEY = /^\s*(?:- +)?([^\s"'[{#][^:]*):\s+-\s+([^#]*?)\s*(?:#.*)?$/;

/** yaml's words for a backslash in a double-quoted value that starts no escape (`"grep \d"`, `"C:\Users"`). */
const BAD_ESCAPE = /^Invalid escape sequence/;

/** A block mapping's value that starts with a quote, `[` or `{`, on its key's line. */
const OPENED_VALUE = /^\s*(?:- +)?[^\s"'[{#][^:]*:\s+["'[{]/;

/** yaml's words for a line it read as a key, which a block scalar's line indented no more than its key is (`run: |` then `echo a` under `run`). */
const LINE_AS_KEY = /^Implicit (map keys need to be followed by map values|keys need to be on a single line)/;

/** A key glued to its value (`retries:2`, not a URL's `https://`), which YAML reads as one plain scalar. */
const GLUED_KEY = /^\s*(?:- +)?([A-Za-z_][A-Za-z0-9_]*):([^\s:/].*)$/;

/** A block mapping's key whose value is a `|` or `>` block: the key's indent, name and indicator. */
const BLOCK_SCALAR_HEADER = /^( *(?:- +)?)([^\s"'[{#][^:]*):\s+([|>])[-+0-9]*\s*(?:#.*)?$/;

/** A block mapping's key, with its indent, on a line. */
const KEY_LINE = /^( *(?:- +)?)([^\s"'[{#-][^:]*):(?:\s|$)/;

/**
 * yaml's message, with what to do where its own words do not say it: for one of COLON_IN_VALUE,
 * where the line has a second ": ", or where a line below it is indented more than its key;
 * for LINE_AS_KEY, where the line is one of a block scalar's, not indented more than its key, or a key glued to its value;
 * for LIST_ON_KEY_LINE, the flow list meant; for BAD_ESCAPE, what a backslash is there;
 * for TEXT_AFTER_VALUE, where a block value opens with a quote or bracket (and ends with that quote: one inside it ended it).
 */
function withHint(message: string, text: string, offset: number, tokens: readonly CST.Token[]): string {
  const stray = STRAY_TOKEN.exec(message);
  // yaml quotes the whole text it found out of place: a block of script made one problem of hundreds of characters.
  if (stray !== null) {
    const found = parseQuoted(stray[2]!);
    return found !== undefined && found.length > 60 ? `${stray[1]!}${JSON.stringify(`${found.slice(0, 57)}...`)}` : message;
  }
  const line = lineAt(text, offset);
  if (COLON_IN_VALUE.test(message) && /:\s.*:(\s|$)/.test(line)) return `${message}: a value with ": " in it must be quoted (run: "echo a: b", not run: echo a: b)`;
  if (COLON_IN_VALUE.test(message)) {
    const deeper = keyIndentedUnder(text, offset);
    if (deeper !== undefined) return `${message}: line ${deeper.line} is indented more than ${deeper.key}, so yaml reads it as more of the value of ${deeper.key}; start it at column ${deeper.col}, as ${deeper.key} is`;
  }
  if (LINE_AS_KEY.test(message)) {
    const block = blockScalarAbove(text, offset);
    if (block !== undefined) return `${message}: the lines of a ${block.indicator} block must be indented more than its key, ${block.key} (column ${block.col})`;
    const glued = GLUED_KEY.exec(line);
    if (glued !== null) return `${message}: a key's colon must be followed by a space (${glued[1]!}: ${glued[2]!.trim()})`;
  }
  const indicator = INDICATOR_START.test(message) ? INDICATOR_VALUE.exec(line) : null;
  if (indicator !== null) return `${message}: a value that starts with ${indicator[2]} must be quoted (${indicator[1]}: ${JSON.stringify(`${indicator[2]!}${indicator[3]!}`.trim())})`;
  const listOnKeyLine = LIST_ON_KEY_LINE.test(message) ? LIST_ITEM_AFTER_KEY.exec(line) : null;
  if (listOnKeyLine !== null) {
    const [, key, item] = listOnKeyLine as unknown as [string, string, string];
    return `${message}: a list's - cannot start on its key's line; write ${key.trimEnd()}: [${item.trim()}], or each - item on a line of its own below ${key.trimEnd()}`;
  }
  if (BAD_ESCAPE.test(message)) return `${message}${escapeHint(text, offset, tokens)}`;
  const first = TEXT_AFTER_VALUE.test(message) ? firstLineIndentedMore(text, offset) : undefined;
  if (first !== undefined) return `${message}: this line is indented less than the file's first line, whose key starts at column ${first}: the top level's keys must all start at the same column`;
  const quoted = TEXT_AFTER_VALUE.test(message) ? QUOTED_VALUE.exec(line) : null;
  if (quoted !== null) {
    const [, key, quote, inner] = quoted as unknown as [string, string, string, string];
    const fixed = quote === "'" ? inner.replace(/''|'/g, "''") : inner.replace(/\\.|"/g, (written) => (written === '"' ? '\\"' : written));
    const name = key.trimEnd();
    const other = quote === "'" ? '"' : "'";
    // Quotes the command itself needs (`run: "a" && "b"`) are kept whole in the other quote, where the value has none of it, nor a backslash (read otherwise there).
    const whole = `${quote}${inner}${quote}`;
    const kept = whole.includes(other) || whole.includes("\\") ? "" : `, or, to keep them for the shell, quote the whole value with ${other} (${name}: ${other}${whole}${other})`;
    return `${message}: a ${quote} inside a value quoted with ${quote} ends it; write each one inside as ${quote === "'" ? "''" : '\\"'} (${name}: ${quote}${fixed}${quote})${kept}`;
  }
  if (TEXT_AFTER_VALUE.test(message) && OPENED_VALUE.test(line)) {
    return `${message}: a value that starts with a quote, [ or { ends where that closes; to write more after it, quote the whole value (run: '"echo" foo', run: "[ -f x ] && make")`;
  }
  return message;
}

/**
 * For an invalid escape in a double-quoted value: that a backslash starts an escape there, and
 * the value quoted with ' instead, where that reads the same (one line, no ' and no other escape).
 */
function escapeHint(text: string, offset: number, tokens: readonly CST.Token[]): string {
  let found: CST.FlowScalar | undefined;
  visitTokens(tokens, (token) => {
    if (token.type === "double-quoted-scalar" && token.offset <= offset && offset < token.offset + token.source.length) found = token;
  });
  const hint = `: in a value quoted with " a backslash starts an escape; write one as text as \\\\`;
  if (found === undefined) return hint;
  const inner = found.source.slice(1, found.source.endsWith('"') ? -1 : undefined);
  const key = /([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:\s*$/.exec(text.slice(text.lastIndexOf("\n", found.offset - 1) + 1, found.offset))?.[1];
  if (key === undefined || /['\n]|\\["\\]/.test(inner)) return hint;
  return `${hint}, or quote the value with ' (${key}: '${inner}')`;
}

/**
 * For an error at the start of a line's text: the column of the file's first line of content,
 * where that is indented more than this line (`  name: ci` then `tasks:`), as YAML then reads
 * the top level at the first line's indentation. Undefined otherwise.
 */
function firstLineIndentedMore(text: string, offset: number): number | undefined {
  const line = lineAt(text, offset);
  const indent = line.length - line.trimStart().length;
  if (offset !== text.lastIndexOf("\n", offset - 1) + 1 + indent) return undefined;
  const first = /^(?:[ \t]*(?:#.*)?\r?\n)*( *)[^\s#]/.exec(text);
  return first !== null && first[1]!.length > indent ? first[1]!.length + 1 : undefined;
}

/** The text of a JSON string as yaml quotes a token's source, or undefined if it is not one. */
function parseQuoted(json: string): string | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The lines of `text` after the one holding `offset`, each with its 1-based number, skipping blank and comment lines. */
function* linesAfter(text: string, offset: number): Generator<{ number: number; line: string }> {
  let number = 1;
  for (let index = text.indexOf("\n"); index !== -1 && index < offset; index = text.indexOf("\n", index + 1)) number++;
  for (let start = text.indexOf("\n", offset) + 1; start > 0 && start < text.length; ) {
    const end = text.indexOf("\n", start);
    const line = text.slice(start, end === -1 ? text.length : end).replace(/\r$/, "");
    number++;
    if (!/^\s*(#.*)?$/.test(line)) yield { number, line };
    start = end + 1;
  }
}

/**
 * For a value yaml read as a mapping inside a mapping's value, with no second ": " on its line:
 * the key line below, indented more than the value's key, that made it so (`run: make` then
 * `  retries: 1` under it): yaml reads a more indented line as more of the value above it.
 */
function keyIndentedUnder(text: string, offset: number): { line: number; key: string; col: number } | undefined {
  const own = KEY_LINE.exec(lineAt(text, offset));
  if (own === null) return undefined;
  const indent = own[1]!.length;
  for (const { number, line } of linesAfter(text, offset)) {
    if (line.length - line.trimStart().length <= indent) return undefined;
    if (/^\s*[^\s"'[{#-][^:]*:(\s|$)/.test(line)) return { line: number, key: own[2]!.trimEnd(), col: indent + 1 };
  }
  return undefined;
}

/** For a line yaml read as a key: the `|` or `>` block header above it whose key is indented as much or more (`run: |` then `echo a` under `run`). */
function blockScalarAbove(text: string, offset: number): { key: string; indicator: string; col: number } | undefined {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const own = lineAt(text, offset);
  const indent = own.length - own.trimStart().length;
  for (let end = lineStart - 1; end > 0; ) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end).replace(/\r$/, "");
    end = start - 1;
    if (/^\s*(#.*)?$/.test(line)) continue;
    const header = BLOCK_SCALAR_HEADER.exec(line);
    return header !== null && indent <= header[1]!.length ? { key: header[2]!.trimEnd(), indicator: header[3]!, col: header[1]!.length + 1 } : undefined;
  }
  return undefined;
}

/** The line of `text` that holds `offset`. */
function lineAt(text: string, offset: number): string {
  const end = text.indexOf("\n", offset);
  return text.slice(text.lastIndexOf("\n", offset - 1) + 1, end === -1 ? text.length : end);
}

/**
 * For a quote, `[` or `{` never closed, yaml reports where it gave up reading, at the end of
 * the file or of the block: the quoted string or flow collection that holds that place (the
 * last one opened before it, for a collection) is where the mistake is. Undefined for other errors.
 */
function unclosedOpener(error: YAMLError, tokens: CST.Token[], problems: ProblemList, text: string): { offset: number; message: string; closedAt?: number } | undefined {
  const quote = error.code === "MISSING_CHAR" ? /^Missing closing (["'])quote/.exec(error.message)?.[1] : undefined;
  const flow = error.code === "BAD_INDENT" ? /^Flow (sequence|map) in block collection must be sufficiently indented and end with a ([\]}])/.exec(error.message) : null;
  if (quote === undefined && flow === null) return undefined;
  const gaveUp = error.pos[0];
  let found: CST.Token | undefined;
  visitTokens(tokens, (token) => {
    if (token.offset > gaveUp) return;
    if (quote !== undefined && token.type === (quote === '"' ? "double-quoted-scalar" : "single-quoted-scalar") && token.offset + token.source.length >= gaveUp) found = token;
    if (flow !== null && token.type === "flow-collection" && token.end.length === 0 && (found === undefined || token.offset > found.offset)) found = token;
  });
  if (found === undefined) return undefined;
  const until = problems.lineCol(gaveUp);
  const closedAt = quote === undefined ? undefined : closingQuoteAfter(text, gaveUp, quote);
  if (closedAt !== undefined) {
    return {
      offset: found.offset,
      message: `this ${quote} is closed at ${problems.lineCol(closedAt)}, but yaml ended the string at ${until}: a quoted string's lines after its first must be indented more than the line it starts on`,
    };
  }
  if (quote !== undefined) return { offset: found.offset, message: `this ${quote} is never closed: the string runs on to ${until}, where yaml gave up; close it (a ${quote} inside is written ${quote === '"' ? '\\"' : "''"})` };
  const [open, close] = flow![1] === "sequence" ? ["[", "]"] : ["{", "}"];
  // Given up at a closing bracket on a line indented too little (`}` at column 1, as JSON is written): closed, but not taken.
  let bracket = gaveUp;
  while (text[bracket] === " ") bracket++;
  if (text[bracket] === close) {
    const key = KEY_LINE.exec(lineAt(text, found.offset));
    const far = key === null ? "as far as the line it starts on" : `as far as its key, ${key[2]!.trimEnd()} (column ${key[1]!.length + 1})`;
    return {
      offset: found.offset,
      message: `this ${open} is closed at ${problems.lineCol(bracket)}, but yaml did not take that ${close}: the lines of a ${open} ... ${close} value must be indented at least ${far}`,
      closedAt: bracket,
    };
  }
  return { offset: found.offset, message: `this ${open} is never closed with ${close}: yaml read on to ${until} looking for it` };
}

/**
 * Where a string yaml ended at `gaveUp` (the end of a line) is closed after all: the next
 * `quote` in the text, if it ends its line (a comment may follow), as a closing quote does,
 * and is on the next line that is not blank: yaml stopped at a line indented no more than
 * the string's own. Undefined otherwise (a string never closed, whose next quote opens
 * another one).
 */
function closingQuoteAfter(text: string, gaveUp: number, quote: string): number | undefined {
  const lineEnd = text.indexOf("\n", gaveUp);
  if (lineEnd === -1) return undefined;
  let next = lineEnd + 1;
  while (/^[ \t]*\r?\n/.test(text.slice(next, next + 200))) next = text.indexOf("\n", next) + 1;
  const nextEnd = text.indexOf("\n", next);
  const line = text.slice(next, nextEnd === -1 ? text.length : nextEnd);
  const escaped = quote === '"' ? /(?:^|[^\\])(?:\\\\)*"/g : /'(?!')/g;
  let match: RegExpExecArray | null;
  let at = -1;
  while ((match = escaped.exec(line)) !== null) {
    if (quote === "'" && line[match.index - 1] === "'") continue; // the second of a doubled ''
    at = match.index + match[0].length - 1;
    break;
  }
  if (at === -1 || !/^[ \t]*(#.*)?\r?$/.test(line.slice(at + 1))) return undefined;
  return next + at;
}

/**
 * Where yaml tells an error at the start of an indented line (a key out of line, a stray list
 * item), the line's first character: that is where its text, and the mistake, starts.
 */
function lineContentStart(offset: number, text: string): number {
  if (offset !== 0 && text[offset - 1] !== "\n") return offset;
  let at = offset;
  while (text[at] === " ") at++;
  return at === text.length || text[at] === "\n" || text[at] === "\r" ? offset : at;
}

/** Calls `visit` on every token, nested ones too. */
function visitTokens(tokens: readonly CST.Token[], visit: (token: CST.Token) => void): void {
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    const token = value as CST.Token & Record<string, unknown>;
    if (typeof token.type === "string" && typeof token.offset === "number") visit(token);
    for (const key of ["items", "start", "key", "sep", "value", "end", "props"]) walk(token[key]);
  };
  walk(tokens);
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
