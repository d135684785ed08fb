import { Composer, isMap, isPair, isScalar, isSeq, LineCounter, Lexer, Parser, visit, type CST, type Document, type YAMLError } from "yaml";
import { isTaskId, TASK_ID_EXPECTED } from "../task-id.js";
import { MAX_NESTING_DEPTH } from "./limits.js";
import { ProblemList } from "./problem-list.js";
import { scanTokens } from "./scan-tokens.js";
import type { DataPath } from "./locator.js";
import { isEnvVariablePath, quote, refusalOf } from "./report-issues.js";
import { secondsInDigits } from "./duration.js";
import { keyText, misreadUnquoted, numberRewritten, type Takes } from "./to-plain.js";
import { KEY_LINE, lineAt, visitTokens, withHint, type YamlHint } from "./yaml-error-hints.js";

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
 * uniqueKeys is off because its check is quadratic (duplicates are found later). A plain `<<`
 * key is YAML 1.1's merge key, as in docker compose and GitLab CI files: toPlain merges it.
 */
export function readYaml(text: string, file: string): ParsedYaml | { problems: ProblemList } {
  const lineCounter = new LineCounter();
  const problems = new ProblemList(file, lineCounter, text.length);
  const tokens = tokenize(text, lineCounter, (offset, flow, outermost, read) => reportTooDeep(offset, text, problems, { flow, outermost, tokens: read }));
  if (tokens === undefined || !scanTokens(tokens, problems, (offset, flow = false) => reportTooDeep(offset, text, problems, { flow, tokens }))) return { problems };
  // Only the first document is read: a second one is refused (see scanTokens), and the first's problems are told with it.
  const first = tokens.findIndex((token) => token.type === "document");
  const second = first === -1 ? -1 : tokens.findIndex((token, index) => index > first && token.type === "document");
  const read = second === -1 ? tokens : tokens.slice(0, second);
  let document: Document.Parsed | undefined;
  try {
    const composer = new Composer({ schema: "core", uniqueKeys: false, merge: true });
    for (const composed of composer.compose(read, true, second === -1 ? text.length : tokens[second]!.offset)) document ??= composed;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    problems.atOffset(0, deepMessage);
    return { problems };
  }
  if (document === undefined) return { problems };
  reportYamlErrors([...document.errors, ...document.warnings], problems, read, text, document);
  if (document.errors.length > 0) return { problems };
  // A first document of nothing (`---` twice, or comments then `---`) before the second: its "got nothing" follows from the second `---`.
  if (second !== -1 && (document.contents === null || (isScalar(document.contents) && document.contents.source === ""))) return { problems };
  return { document, lineCounter, problems };
}

/** A line indented with a tab: spaces, if any, then a tab, then text. */
const TAB_INDENTED_LINE = /^ *\t[ \t]*[^\s#]/m;

/**
 * Nesting deeper than MAX_NESTING_DEPTH at `offset`. After a line indented with a tab, yaml reads each line below as
 * nested in the one before it: 129 tasks so written went past the limit, which was all that was told, far below the
 * tab. There, the first such tab before it is told, with the nesting as what may follow from it; not where the nesting is of
 * brackets (`[[[...]]]`, `flow`), which no tab makes: a tab in a `|` block's text (a `<<-` heredoc's) was told as the cause.
 */
function reportTooDeep(offset: number, text: string, problems: ProblemList, { flow, outermost, tokens }: { flow: boolean; outermost?: number; tokens: readonly unknown[] }): void {
  // Brackets opened and never closed (`{a: {a: {a: ...` cut short, a generator's bug): the first of them is the mistake, told where it is.
  const unclosed = outermost === undefined ? undefined : firstUnclosed(text, outermost);
  if (unclosed !== undefined) {
    const [open, close] = text[unclosed] === "[" ? ["[", "]"] : ["{", "}"];
    problems.atOffset(unclosed, `this ${open} is never closed with ${close}; the brackets opened after it nest deeper than ${MAX_NESTING_DEPTH} levels at ${problems.lineCol(offset)}, where yaml stopped reading`);
    return;
  }
  const tab = flow ? undefined : tabIndentBefore(text, offset, tokens);
  if (tab === undefined) {
    problems.atOffset(offset, deepMessage);
    return;
  }
  problems.atOffset(
    tab,
    `Tabs are not allowed as indentation: indent with spaces (an editor set to insert spaces in .yaml files keeps it so); yaml read the lines below it as nested ever deeper, past the limit of ${MAX_NESTING_DEPTH} levels at ${problems.lineCol(offset)}, which may follow from it: fix the tab first`,
  );
}

/**
 * The offset of the first tab where a line's indentation is, before `offset`, that is not in a `|` or `>` block's text
 * (a `<<-` heredoc's lines there start with a tab, which YAML reads as text: deep nesting below it is none of its doing).
 * The blocks are found once in `tokens` (those read so far: the parser's stack too, where it stopped mid-way).
 */
function tabIndentBefore(text: string, offset: number, tokens: readonly unknown[]): number | undefined {
  const before = text.slice(0, offset);
  const tabLine = new RegExp(TAB_INDENTED_LINE.source, "gm");
  let blocks: Array<[number, number]> | undefined;
  // The tabs are found in the order they are written, and the blocks are walked alongside: each is passed once.
  let block = 0;
  for (let found = tabLine.exec(before); found !== null; found = tabLine.exec(before)) {
    const tab = found.index + found[0].indexOf("\t");
    blocks ??= blockScalarRanges(tokens).sort(([a], [b]) => a - b);
    while (block < blocks.length && blocks[block]![1] <= tab) block++;
    if (block === blocks.length || blocks[block]![0] > tab) return tab;
  }
  return undefined;
}

/** Where each `|` or `>` block among `tokens` is, from its header to its text's end. */
function blockScalarRanges(tokens: readonly unknown[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  visitTokens(tokens as CST.Token[], (token) => {
    if (token.type !== "block-scalar") return;
    const last = token.props.at(-1);
    const textStart = last === undefined ? token.offset : last.offset + ("source" in last ? last.source.length : 0);
    ranges.push([token.offset, textStart + token.source.length]);
  });
  return ranges;
}

const openers = new Set(["[", "{"]);
const closers = new Set(["]", "}"]);
const SCALAR_MARK = "\x1f";

/** Beyond this many, YAML syntax errors are mostly echoes of the first ones. */
const MAX_YAML_ERRORS = 10;

/**
 * yaml's errors on the lines of a list's items below a `dependsOn: -` (read as a key on its own
 * line, not a list): echoes of the `-` told. Any other error there (a quote never closed, an
 * invalid escape, a value starting with `@`) is a mistake of its own, still there once the `-`
 * is mended, and is told.
 */
function isListItemEcho(error: YAMLError): boolean {
  if (error.code === "MULTILINE_IMPLICIT_KEY") return true;
  if (error.code === "MISSING_CHAR") return error.message.startsWith("Implicit map keys need to be followed by map values");
  return error.code === "BAD_INDENT" && error.message.startsWith("All mapping items must start at the same column");
}

/**
 * Reports yaml's errors and warnings: one per line, at most MAX_YAML_ERRORS, then a count of the
 * rest. After a tab where indentation is, yaml reads the lines below out of their structure, and
 * tells correct lines as indented wrong: only the tabs are told from there on, the first with
 * how many other errors yaml found after it.
 */
function reportYamlErrors(found: YAMLError[], problems: ProblemList, tokens: CST.Token[], text: string, document: Document.Parsed): void {
  const tab = found.find((error) => error.code === "TAB_AS_INDENT")?.pos[0];
  const tabLineEnd = tab === undefined ? -1 : text.indexOf("\n", tab) === -1 ? text.length : text.indexOf("\n", tab);
  const errors = tab === undefined ? found : found.filter((error) => error.code === "TAB_AS_INDENT" || error.pos[0] <= tabLineEnd);
  /** Errors yaml found after the first tab, other than tabs: said with it, as a count. */
  const afterTab = found.length - errors.length;
  const lines = new Set<string>();
  /** The lines of a list's items below a `dependsOn: -` told: yaml's echoes of it there are not told (see isListItemEcho). */
  const itemLines = new Set<string>();
  let shown = 0;
  for (const [index, error] of errors.entries()) {
    // Where the mistake was made, when yaml names where it gave up (the end of the file, often).
    const unclosed = unclosedOpener(error, tokens, problems, text);
    const from = pastBlankLines(error.pos[0], text);
    const at = unclosed?.offset ?? lineContentStart(from, text);
    const line = problems.lineCol(at).split(":")[0]!;
    if (itemLines.has(line) && unclosed === undefined && isListItemEcho(error)) continue;
    // A tag that does not fit its value is a mistake of its own, another on its line too (`retryOn: [!!int 2.0, !!bool 3]`).
    const tag = unclosed === undefined ? unresolvedTag(error, text, document) : undefined;
    if (lines.has(line) && tag === undefined) continue;
    lines.add(line);
    if (shown === MAX_YAML_ERRORS) {
      problems.atOffset(at, `... and up to ${errors.length - index} more YAML errors from here on; fix the ones above first`);
      return;
    }
    // yaml's errors inside a bracket it did not read to its end, and at that end, are echoes of this one.
    if (unclosed?.closedAt !== undefined) {
      const last = Number(problems.lineCol(unclosed.closedAt).split(":")[0]);
      for (let inside = Number(line) + 1; inside <= last; inside++) lines.add(String(inside));
    }
    // The value read as text in its place, which the field refuses as text, follows from the tag told.
    if (tag !== undefined) problems.explained(tag.value);
    if (tag?.key !== undefined) problems.keyExplained(tag.key);
    const hinted: YamlHint = unclosed ?? tag ?? withHint(error.message.split("\n")[0] ?? error.message, text, from, tokens, problems.json);
    // Told above the line yaml tells (a comment that ended a block): yaml's errors on either line are this one, and
    // one already told on that line (a tab there) is the mistake told: one problem a line.
    if (unclosed === undefined && hinted.offset !== undefined) {
      const moved = problems.lineCol(hinted.offset).split(":")[0]!;
      // (Its own line, moved to, is this problem's: told, not skipped.)
      if (moved !== line && lines.has(moved)) continue;
      lines.add(moved);
    }
    // yaml's errors on the lines the hint tells of (a list's items below `dependsOn: -`) are echoes of this one, but for a mistake of their own.
    if (unclosed === undefined && hinted.echoesThrough !== undefined) {
      const last = Number(problems.lineCol(hinted.echoesThrough).split(":")[0]);
      for (let below = Number(line) + 1; below <= last; below++) itemLines.add(String(below));
    }
    shown++;
    const echoes = error.pos[0] === tab && afterTab > 0 ? `; yaml then found ${afterTab === 1 ? "an error" : `${afterTab} errors`} below it, which may follow from it and are not shown: fix the tab first` : "";
    problems.atOffset(hinted.offset ?? at, `${hinted.message}${echoes}`);
    // Told now, each at its line (`timeout: 5s` below `retries: 2`, both under `run: make`), where yaml told one only: yaml's errors there are this one's.
    // Each counted as yaml's own are: a file of 3,000 tasks each with five such keys got 15,000 problems, not ten and a count.
    const more = unclosed === undefined ? (hinted.more ?? []) : [];
    for (const [moreIndex, { offset, message }] of more.entries()) {
      const moreLine = problems.lineCol(offset).split(":")[0]!;
      if (lines.has(moreLine)) continue;
      lines.add(moreLine);
      if (shown === MAX_YAML_ERRORS) {
        problems.atOffset(offset, `... and up to ${more.length - moreIndex + errors.length - index - 1} more YAML errors from here on; fix the ones above first`);
        return;
      }
      shown++;
      problems.atOffset(offset, message);
    }
  }
}

/** What each of YAML's core tags reads, for a value it cannot read so (see unresolvedTag). */
const CORE_TAG_FORMS: Record<string, string> = {
  int: "an integer written as one (2, 0x1F, 0o17)",
  float: "a number written with a dot or an exponent (2.0, 1e3), or .inf or .nan",
  bool: "true or false",
  null: "null, ~ or nothing",
};

/**
 * `retries: !!float 2`, `run: !Ref build`: a tag yaml cannot read the value with (a core one the
 * value is not written as: !!float takes 2.0, not 2) or does not know (another tool's, as
 * CloudFormation's !Ref): yaml's bare "Unresolved tag: tag:yaml.org,2002:float", then the value
 * read as text, which the field would refuse as text tagged so. Told at the tag, with what to
 * write; `value` is where the value starts, whose refusal follows from it. Undefined for other errors.
 */
function unresolvedTag(error: YAMLError, text: string, document: Document.Parsed): { message: string; value: number; key: number | undefined } | undefined {
  if (error.code !== "TAG_RESOLVE_FAILED") return undefined;
  const at = error.pos[0];
  const written = /^(!<[^>\s]*>|![^\s,[\]{}]*)/.exec(text.slice(at, at + 200))?.[1];
  if (written === undefined) return undefined;
  let value = at + written.length;
  while (text[value] === " " || text[value] === "\t") value++;
  // `!!float &r 2`: the value starts past its anchor.
  const anchor = /^&[^\s,[\]{}]+[ \t]+/.exec(text.slice(value, value + 200))?.[0];
  if (anchor !== undefined) value += anchor.length;
  // A quoted value whole, its `{`, `,` and `#` too (`!Sub "arn:${AWS::Region}"`); a plain one as yaml read it, its `{` too outside
  // a flow collection (`!Sub echo ${AWS::Region}`), or up to what ends it in one.
  const quoted = /^(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')/.exec(text.slice(value, value + 200))?.[0];
  const plainEnd = quoted === undefined ? plainScalarEnd(document, value) : undefined;
  const raw = quoted ?? (plainEnd !== undefined ? text.slice(value, plainEnd) : /^[^\n\r,[\]{}]*/.exec(text.slice(value, value + 200))![0].replace(/\s+#.*$/, "").trimEnd());
  const core = /^(?:!!|!<tag:yaml\.org,2002:)([a-z]+)>?$/.exec(written)?.[1];
  // The field the value is written in (not through a list or a merge, for what it takes), and where its key is.
  const field = fieldAt(document, at + written.length, value);
  // Where the field takes text and YAML reads the value without the tag as other than text (`run: !!float 2`): quoted, as `run: 2` is refused.
  const takes = quoted === undefined && raw !== "" && field !== undefined ? takesAt(field.path) : undefined;
  const unquoted = takes === undefined ? undefined : misreadUnquoted(takes, raw);
  // Where the field takes no text and the value is a number written other than in digits (`retries: !!int 1e1`): in digits, as without
  // the tag it would be refused so (see PlainBuilder's #checkDurationNumber, #checkIntegerNumber).
  const digits = quoted === undefined && raw !== "" && (takes === undefined || (takes === "id" && !hasTask(document, raw))) ? inDigits(raw) : undefined;
  // A task id is read as written (`dependsOn: [1e1]` is the task "1e1"): in digits only where that is the task the file has, and this one not.
  const idDigits = takes === "id" && digits !== undefined && hasTask(document, digits);
  // What the value written as told would be refused as, by the field (`runAt: !!float 2`: 2 is no date; `retries: !!int 1e21`, out of
  // range): that, in place of advice that would not make a valid file. An empty value is told to be written, which is all there is to say.
  const advised = raw === "" || field === undefined ? undefined : idDigits ? { value: digits } : unquoted !== undefined || takes === "id" ? { value: raw } : digits !== undefined ? { value: Number(digits) } : plainValueOf(raw);
  // A task id no task can have (`dependsOn: [!!int ~]`: "~"): refused quoted or not, where the field checks only that it is text.
  // Quoted too (`dependsOn: [!!int "~"]`), where `takes` is not asked: the quotes make it text, which the field takes, and no id still.
  const idField = takes === "id" || (quoted !== undefined && field !== undefined && takesAt(field.path) === "id");
  const badId = idField && typeof advised?.value === "string" && !isTaskId(advised.value) ? `${quote(advised.value)} is not a valid task id: ${TASK_ID_EXPECTED}` : undefined;
  const refused = badId ?? (advised === undefined ? undefined : refusalOf(field!.path, advised.value, raw));
  const without = unquoted !== undefined ? `, quoted (${quote(raw)}): ${unquoted}` : digits !== undefined && (takes !== "id" || idDigits) ? `, in digits: ${digits}` : `: ${raw}`;
  const advice = raw === "" ? "write the value in its place, without the tag" : refused !== undefined ? `without the tag, ${raw} is refused too${badId !== undefined && unquoted !== undefined ? ", quoted or not" : ""}: ${refused}` : `write the value without the tag${without}`;
  const what = raw === "" ? "an empty value" : raw;
  // Left empty, the field's refusal of it, told at its key, follows from the tag too; with no key (the top level, `!!map` alone), at the tag.
  const key = raw === "" ? (field?.key ?? at) : undefined;
  const form = core === undefined ? undefined : CORE_TAG_FORMS[core];
  if (form !== undefined) return { message: `the tag ${written} does not fit ${what}: it reads only ${form}; ${advice}`, value, key };
  if (core !== undefined) return { message: `the tag ${written} does not fit ${what}; ${advice}`, value, key };
  const instead =
    raw === ""
      ? "remove it"
      : refused !== undefined
        ? `without it, ${raw} is refused too: ${refused}`
        : `write the value without it${without}${unquoted === undefined ? "," : ";"} or quote the whole value if the \`!\` is part of it: ${JSON.stringify(`${written} ${raw}`)}`;
  return { message: `unknown tag ${written}: taskq reads plain YAML, without other tools' tags (as CloudFormation's !Ref or !Sub); ${instead}`, value, key };
}

/** Whether the file's `tasks` mapping has a task of id `id`, as written (not through a merge key). */
function hasTask(document: Document.Parsed, id: string): boolean {
  const tasks = document.get("tasks", true);
  return isMap(tasks) && tasks.items.some((pair) => keyText(pair.key) === id);
}

/** A finite number YAML's core schema reads written other than in digits (`1e1`, `0x10`, `.5`, `2.0`, `1e-9`), so (`10`, `0.000000001`); undefined for any other text. */
function inDigits(raw: string): string | undefined {
  const rewritten = numberRewritten(raw) ?? raw;
  // `1e-9`, which JavaScript writes so too: 0.000000001, as a duration is told to be written (see secondsInDigits).
  const digits = /e-/i.test(rewritten) && Number(rewritten) > 0 ? secondsInDigits(Number(rewritten)) : rewritten;
  return digits !== undefined && digits !== raw && Number.isFinite(Number(digits)) ? digits : undefined;
}

/** What YAML's core schema reads a plain scalar written `raw` (on one line) as: a number, a boolean, null or text. */
function plainValueOf(raw: string): { value: unknown } | undefined {
  const node = new Composer({ schema: "core" }).compose(new Parser().parse(raw), true, raw.length).next().value as Document.Parsed | undefined;
  if (node === undefined || node.errors.length > 0) return undefined;
  // An alias (`*a`, as `\uFEFF*a` reads: the parser skips a byte order mark) names no anchor in `raw` alone; toJS throws on it.
  try {
    return { value: node.toJS() as unknown };
  } catch (error) {
    if (error instanceof ReferenceError) return undefined;
    throw error;
  }
}

/** Where the plain scalar that starts at `offset` ends, when it is on one line of at most 200 characters; undefined otherwise. */
function plainScalarEnd(document: Document.Parsed, offset: number): number | undefined {
  let end: number | undefined;
  visit(document, {
    Scalar(_key, node) {
      if (node.range?.[0] !== offset) return undefined;
      if (node.type === "PLAIN" && node.range[1] - offset <= 200 && !node.source?.includes("\n")) end = node.range[1];
      return visit.BREAK;
    },
  });
  return end;
}

/**
 * The path of the field whose scalar value starts from `from` to `to` (after its tag and the spaces
 * after it; an empty one starts where the tag ends), and where its key is; undefined where the
 * value is not a field of the file's own (in an anchored `x-` block, a key that is not text).
 */
function fieldAt(document: Document.Parsed, from: number, to: number): { path: DataPath; key: number | undefined } | undefined {
  let found: { path: DataPath; key: number | undefined } | undefined;
  visit(document, {
    Scalar(_key, node, ancestors) {
      const start = node.range?.[0];
      if (start === undefined || start < from || start > to) return undefined;
      const path: PropertyKey[] = [];
      let key: number | undefined;
      for (const [index, step] of ancestors.entries()) {
        const inner = ancestors[index + 1] ?? node;
        if (isPair(step)) {
          const text = keyText(step.key);
          if (text === undefined || step.value !== inner) return visit.BREAK;
          path.push(text);
          key = (step.key as { range?: [number, number, number] } | null)?.range?.[0];
        } else if (isSeq(step)) {
          path.push(step.items.indexOf(inner));
        }
      }
      found = { path, key };
      return visit.BREAK;
    },
  });
  return found;
}

/**
 * What the field at `path` takes, where that is text (see Takes): `name`, a task's `run` and `cwd`,
 * `defaults.cwd`, an env value, a task id in `dependsOn`; undefined for any other (or an item of another list),
 * whose value is told to be written as it is.
 */
function takesAt(path: DataPath): Takes {
  // A task id in `dependsOn` (or an item of it), which is read as written (`1e1` is the task "1e1", not 10).
  if (path[0] === "tasks" && path[2] === "dependsOn" && (path.length === 3 || (path.length === 4 && typeof path[3] === "number"))) return "id";
  if (path.some((step) => typeof step === "number")) return undefined;
  const [first, second, third] = path;
  if (path.length === 1 && first === "name") return "text";
  if (path.length === 3 && first === "tasks") return third === "run" ? "command" : third === "cwd" ? "text" : undefined;
  if (path.length === 2 && first === "defaults" && second === "cwd") return "text";
  return isEnvVariablePath(path) ? "env" : undefined;
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
  // Inside another [ or { (`a: {run: x, env: {`), its lines must be indented more than the block key the outermost one is the value of (a, not env).
  const outer = outermostFlowHolding(tokens, found);
  const key = KEY_LINE.exec(lineAt(text, (outer ?? found).offset));
  const keyWords = key === null ? undefined : `${key[2]!.trimEnd()} (column ${key[1]!.length + 1})`;
  if (text[bracket] === close) {
    const far = keyWords === undefined ? "at least as far as the line it starts on" : outer === undefined ? `at least as far as its key, ${keyWords}` : `more than the key it is under, ${keyWords}, as it is inside another ${text[outer.offset]}`;
    return {
      offset: found.offset,
      message: `this ${open} is closed at ${problems.lineCol(bracket)}, but yaml did not take that ${close}: the lines of a ${open} ... ${close} value must be indented ${far}`,
      closedAt: bracket,
    };
  }
  // Closed further on, but a line inside it, where yaml gave up, is indented no more than its key (`env: {` then `A: b` at the key's column).
  const closer = matchingCloser(text, found.offset);
  if (closer !== undefined && text[closer] === close) {
    const far = keyWords === undefined ? "the line it starts on" : outer === undefined ? `its key, ${keyWords}` : `the key it is under, ${keyWords}`;
    return {
      offset: found.offset,
      message: `this ${open} is closed at ${problems.lineCol(closer)}, but yaml stopped reading it at ${until}: the lines inside a ${open} ... ${close} value must be indented more than ${far}`,
      closedAt: closer,
    };
  }
  return { offset: found.offset, message: `this ${open} is never closed with ${close}: yaml read on to ${until} looking for it` };
}

/**
 * The first `[` or `{` from `offset` on (where one opens) that is never closed with its own closer, reading on as flow text
 * does (see matchingCloser) to where all opened from there are closed, or to the file's end: one left open there, or one a
 * closer of another kind passes over (`{ env: [[[ }`: the `[`s). Undefined where each is closed. Each bracket is pushed
 * and popped once, and a closer with no opener of its kind open is skipped at once: O(n).
 */
function firstUnclosed(text: string, offset: number): number | undefined {
  const open: number[] = [];
  const counts: Record<string, number> = { "[": 0, "{": 0 };
  let first: number | undefined;
  for (let index = offset; index < text.length; index++) {
    const character = text[index]!;
    if (character === "[" || character === "{") {
      open.push(index);
      counts[character]!++;
    } else if (character === "]" || character === "}") {
      const opener = character === "]" ? "[" : "{";
      if (counts[opener] === 0) continue;
      // Those above its opener are never closed: the lowest of them is the first.
      for (let top = open.pop()!; ; top = open.pop()!) {
        counts[text[top]!]!--;
        if (text[top] === opener) break;
        first = Math.min(first ?? top, top);
      }
      if (open.length === 0) return first;
    } else index = pastStringOrComment(text, index, text.length);
  }
  return open.length === 0 ? first : Math.min(first ?? open[0]!, open[0]!);
}

/** The outermost flow collection (`[` or `{`) that holds `inner`, if any. */
function outermostFlowHolding(tokens: readonly CST.Token[], inner: CST.Token): CST.Token | undefined {
  let holding: CST.Token | undefined;
  let found = false;
  const walk = (value: unknown, outer: CST.Token | undefined): void => {
    if (found) return;
    if (Array.isArray(value)) {
      for (const item of value) walk(item, outer);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    if (value === inner) {
      found = true;
      holding = outer;
      return;
    }
    const token = value as CST.Token & Record<string, unknown>;
    const next = outer ?? (token.type === "flow-collection" ? token : undefined);
    for (const key of ["items", "start", "key", "sep", "value", "end", "props"]) walk(token[key], next);
  };
  walk(tokens, undefined);
  return holding;
}

/** How far matchingCloser looks: a bracket closed further on than this is taken for one never closed. */
const CLOSER_SCAN_BYTES = 64 * 1024;

/**
 * Where the `[` or `{` at `offset` is closed, reading on as flow text does (quoted strings and comments
 * skipped, brackets counted), whatever the lines' indentation: undefined where it is not, or not soon.
 */
function matchingCloser(text: string, offset: number): number | undefined {
  let depth = 0;
  const end = Math.min(text.length, offset + CLOSER_SCAN_BYTES);
  for (let index = offset; index < end; index++) {
    const character = text[index];
    if (character === "[" || character === "{") depth++;
    else if (character === "]" || character === "}") {
      if (--depth === 0) return index;
    } else index = pastStringOrComment(text, index, end);
  }
  return undefined;
}

/**
 * Where flow text read for its brackets goes on from `index` (its last character read): past a quoted string that opens
 * there, to its closing quote, or past a comment, to its line's end; `index` where neither does. A quote opens a string
 * only at a value's start (after a space, a bracket, a comma or a colon), as in `{ run: "a" }`, not in `it's`.
 */
function pastStringOrComment(text: string, index: number, end: number): number {
  const character = text[index];
  if ((character === '"' || character === "'") && /[\s[{,:]/.test(text[index - 1] ?? " ")) {
    // To its closing quote: past `\"` in a "..." string, past `''` in a '...' one.
    for (index++; index < end; index++) {
      if (character === '"' && text[index] === "\\") index++;
      else if (text[index] === character && !(character === "'" && text[index + 1] === "'")) break;
      else if (text[index] === character) index++;
    }
  } else if (character === "#" && /\s/.test(text[index - 1] ?? " ")) {
    while (index < end && text[index] !== "\n") index++;
  }
  return index;
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
 * Where yaml tells an error on a line of spaces only (or none), or at the start of a line that
 * holds only a comment, which it reads as the next line's indentation: the next line's text,
 * where the mistake is (`   retries: 1` indented one space short, under a line of spaces or a
 * `   # comment`). The offset as it is on any other line, or when no line with text follows.
 */
function pastBlankLines(offset: number, text: string): number {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  for (let start = lineStart; ; ) {
    let at = start;
    while (text[at] === " " || text[at] === "\r") at++;
    if (at === text.length) return offset;
    // A comment's line, told at its indentation, not at a place in the comment.
    if (text[at] === "#" && (start !== lineStart || offset <= at)) {
      const end = text.indexOf("\n", at);
      if (end === -1) return offset;
      start = end + 1;
      continue;
    }
    if (text[at] !== "\n") return start === lineStart ? offset : at;
    start = at + 1;
  }
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

/** Line starts straight from the text: the parser skips some newlines while recovering from errors. */
function countLines(text: string, lineCounter: LineCounter): void {
  lineCounter.addNewLine(0);
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) lineCounter.addNewLine(index + 1);
}

/** Far above what MAX_NESTING_DEPTH levels of block nesting take on yaml's parser stack; far below what overflows it (about 3,000). */
const PARSER_STACK_LIMIT = 8 * MAX_NESTING_DEPTH;

function tokenize(text: string, lineCounter: LineCounter, tooDeep: (offset: number, flow: boolean, outermost: number | undefined, read: readonly unknown[]) => void): CST.Token[] | undefined {
  const parser = new Parser();
  const tokens: CST.Token[] = [];
  countLines(text, lineCounter);
  let depth = 0;
  /** Where the outermost bracket still open was opened. */
  let outermost = 0;
  let afterScalarMark = false;
  for (const lexeme of new Lexer().lex(text)) {
    // The lexeme after a scalar mark is scalar text, never a bracket indicator.
    if (!afterScalarMark && openers.has(lexeme) && depth === 0) outermost = parser.offset;
    if (!afterScalarMark && openers.has(lexeme) && ++depth > MAX_NESTING_DEPTH) {
      tooDeep(parser.offset, true, outermost, tokens);
      return undefined;
    }
    if (!afterScalarMark && closers.has(lexeme)) depth = Math.max(0, depth - 1);
    afterScalarMark = lexeme === SCALAR_MARK;
    for (const token of parser.next(lexeme)) tokens.push(token);
    // Block nesting (`- - - x`, `? ? ? x`) has no bracket to count: the parser's own stack grows with it, and
    // closing thousands of levels at one dedent overflows the stack of yaml's recursive pop. The exact depth
    // is checked once parsed (scanTokens, with its place); this only stops what could never pass it.
    if (parser.stack.length > PARSER_STACK_LIMIT) {
      // At the first level too deep, as scanTokens places it: the stack's first entry is the document.
      tooDeep(parser.stack[MAX_NESTING_DEPTH + 1]?.offset ?? parser.offset, false, undefined, [...tokens, ...parser.stack]);
      return undefined;
    }
  }
  for (const token of parser.end()) tokens.push(token);
  return tokens;
}
