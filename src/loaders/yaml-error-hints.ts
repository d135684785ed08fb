import type { CST } from "yaml";
import { fullWidthColonKey, fullWidthColonWords, noBreakSpaceWords, slashCommentWords } from "./report-issues.js";
import { shortened } from "../shorten.js";

/**
 * What to change, added to yaml's own words for the syntax errors a common slip causes (a
 * `: ` in a plain value, a quote inside a quoted one, a key or a block's lines indented wrong),
 * found from the error's line and the lines around it. read-yaml.ts reports the errors.
 */

/** yaml's words for a token it found out of place, with the token's text quoted as JSON. */
const STRAY_TOKEN = /^(Unexpected ([\w-]+) token in YAML (?:stream|document))(?:: (".*"))?$/;

/** yaml's words for a plain value with ": " in it (`run: echo a: b`), which it reads as a mapping inside a mapping. */
const COLON_IN_VALUE = /^(Nested mappings are not allowed in compact mappings|Block collections are not allowed within flow collections)/;

/** yaml's words for text after a quoted or bracketed value has closed (`run: "echo" foo`, `run: [ -f x ] && make`). */
const TEXT_AFTER_VALUE = /^Unexpected (scalar|anchor|alias|tag) at node end/;
/** yaml's words for a value that starts with an indicator a plain value may not start with (`run: @foo`, `run: > out.txt`). */
const INDICATOR_START = /^(Plain value cannot start with|Not a YAML token|Anchor cannot be an empty string)/;
/** A block mapping's key and its value on the line, which starts with one of those indicators, after an anchor or a tag if any (`&x @foo`). */
const INDICATOR_VALUE = /^\s*(?:- +)?([^\s"'[{#][^:]*):\s+((?:[&!]\S*[ \t]+)*)([@`%|>&])(.*)$/;

/** A block mapping's value that starts and ends with the same quote, with more of that quote inside (`run: 'it's'`): its key, quote and text between. */
const QUOTED_VALUE = /^\s*(?:- +)?([^\s"'[{#][^:]*):\s+(["'])(.*)\2\s*(?:#.*)?$/;

/** yaml's words for a tab where a line's indentation is (an editor that inserts tabs). */
const TAB_INDENT = /^Tabs are not allowed as indentation/;
/** A no-break space (U+00A0, pasted from a web page or a chat) where a line's text starts: in its indentation, or after a list's dash. */
const LEADING_NBSP = /^[ \u00a0]*\u00a0|^ *(?:- +)*-\u00a0/;
/**
 * One beside the colon of the line's first key, written plain (`retries:\u00a01`): up to it, no
 * quote, bracket or indicator that starts the line's text, no ": " (after which it is in a value),
 * no " #". JavaScript's \s takes U+00A0 for a space: [ \t] is written for YAML's.
 */
const KEY_COLON_NBSP = /^ *(?:- +)*(?:[^\s"'[\]{}#&*!|>%@`,?:-]|[-?:][^\s])(?:[^:#\n]|:(?![ \t\u00a0]|$)|(?<![ \t])#)*?(?::\u00a0|\u00a0:(?=[ \t\u00a0]|$))/;

/** yaml's words for a block scalar's line indented less than it should be, or more than its first. */
const BLOCK_INDENT = /^Block scalar(?:s with more-indented leading empty lines must use an explicit indentation indicator| lines must not be less indented than their first line)/;

/** yaml's words for a key indented otherwise than the keys above it in its mapping. */
const UNALIGNED_KEY = /^All mapping items must start at the same column/;

/** yaml's words for a list item indented less than the one above it (or under a key's value), which it reads as a key of the mapping around the list. */
const UNALIGNED_ITEM = /^A block sequence may not be used as an implicit map key/;

/** A list item's line: its indent, and the item's text. */
const ITEM_LINE = /^( *)- +(.*)$/;

/** yaml's words for a list item on its key's line (`dependsOn: - a`). */
const LIST_ON_KEY_LINE = /^Unexpected block-seq-ind on same line with key/;
/** A block mapping's key, then `- item` on its line (a comment after it left out). */
const LIST_ITEM_AFTER_KEY = /^\s*(?:- +)?([^\s"'[{#][^:]*):\s+-\s+([^#]*?)\s*(?:#.*)?$/;

/** A mapping's key, then a `-` that starts its value, up to the `-` (a flow mapping's `{` or `,` before the key, or the line's start). */
const KEY_BEFORE_DASH = /(?:^|[{,])\s*(?:- +)?([^\s"'[\]{},#][^:,{}[\]]*?|"[^"]*"|'[^']*')\s*:\s+$/;

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
export const KEY_LINE = /^( *(?:- +)?)([^\s"'[{#-][^:]*):(?:\s|$)/;

/**
 * `// a note`, `/* a note` (comments of JavaScript and JSONC) where yaml tells an error: at its place, or starting its line.
 * The two characters written; undefined where there are none.
 */
function slashCommentAt(text: string, offset: number): string | undefined {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const at = /^\/[/*]/.test(text.slice(offset, offset + 2)) ? offset : lineStart + (/^[ ]*/.exec(text.slice(lineStart, lineStart + 200))?.[0].length ?? 0);
  const written = text.slice(at, at + 2);
  return written === "//" || written === "/*" ? written : undefined;
}

/** A yaml error's words with what to do, and where they are told where that is not yaml's place (see withHint). */
export interface YamlHint {
  message: string;
  offset?: number;
  echoesThrough?: number;
  /** Mistakes like it that yaml's error stands for too, each told at its own place. */
  more?: Array<{ message: string; offset: number }>;
}

/**
 * yaml's message, with what to do where its own words do not say it: for one of COLON_IN_VALUE,
 * where the value has a ": ", or where a line below it is indented more than its key;
 * for COLON_IN_VALUE and LIST_ON_KEY_LINE, where the value is `-` or starts with `- ` (a list's item to YAML);
 * for LINE_AS_KEY, where the line is one of a block scalar's, not indented as much as the block's lines, or a key glued to its value or followed by a full-width colon;
 * for LIST_ON_KEY_LINE, the flow list meant; for BAD_ESCAPE, what a backslash is there;
 * for TEXT_AFTER_VALUE, where a block value opens with a quote or bracket (and ends with that quote: one inside it ended it).
 * With the offset to tell it at, where that is not yaml's (a comment that ended a block above the line yaml tells, a key
 * indented more than the one above it, below the value yaml tells), and the mistakes like it that yaml's error stands for
 * too (the other keys indented as far below that value), each at its own line.
 */
export function withHint(message: string, text: string, offset: number, tokens: readonly CST.Token[], json = false): YamlHint {
  // A comment left of a block's lines ends the block: the mistake is the comment's, above where yaml tells it.
  const comment = UNALIGNED_KEY.test(message) || LINE_AS_KEY.test(message) ? commentEndingBlock(text, offset) : undefined;
  if (comment !== undefined) return comment;
  const glued = UNALIGNED_KEY.test(message) ? gluedKeyAbove(text, offset) : undefined;
  if (glued !== undefined) return glued;
  const hint = hintFor(message, text, offset, tokens, json);
  return typeof hint === "string" ? { message: hint } : hint;
}

/**
 * yaml's message, with what to do (see withHint), told where yaml tells it, or at the offset given (a key
 * indented more than the one above it); with the offset up to which yaml's errors on the lines below are
 * this one's echoes, where the hint tells of those lines (a list's items below a `dependsOn: -`).
 */
function hintFor(message: string, text: string, offset: number, tokens: readonly CST.Token[], json: boolean): string | YamlHint {
  const stray = STRAY_TOKEN.exec(message);
  if (stray !== null) return strayTokenWords(stray[1]!, stray[2]!, stray[3]);
  const noBreak = noBreakSpaceAt(text, offset);
  if (noBreak !== undefined) return `${message}: ${noBreak}`;
  const slashes = slashCommentAt(text, offset);
  if (slashes !== undefined) return `${message}: ${slashCommentWords(slashes, json)}`;
  if (TAB_INDENT.test(message)) return `${message}: indent with spaces (an editor set to insert spaces in .yaml files keeps it so)`;
  // Inside a block scalar (`run: |`, a Makefile's habit) yaml takes a tab for text, and words it as a block's indentation.
  if (BLOCK_INDENT.test(message) && /^ *\t/.test(text.slice(text.lastIndexOf("\n", offset - 1) + 1, offset + 1))) {
    return `${message}: this line is indented with a tab, which YAML does not count as indentation; indent the block's lines with spaces (an editor set to insert spaces in .yaml files keeps it so)`;
  }
  if (UNALIGNED_KEY.test(message)) {
    const block = blockLineShort(text, offset);
    if (block !== undefined) {
      return `${message}: ${blockLineWords(block)}`;
    }
    const sibling = keyAlignedAbove(text, offset);
    if (sibling !== undefined) {
      const or = sibling.firstTooFar ? ` (or, if ${sibling.key} is the one indented too far, start ${sibling.key} at column ${sibling.own})` : "";
      return `${message}: line ${sibling.line} starts at column ${sibling.own}, and ${sibling.key} above it at column ${sibling.col}; start it at column ${sibling.col}, as ${sibling.key} is${or}`;
    }
  }
  if (UNALIGNED_ITEM.test(message)) {
    const item = itemAlignedAbove(text, offset);
    if (item !== undefined) return `${message}: line ${item.line}'s - is at column ${item.own}, and that of the item above it, ${item.item}, at column ${item.col}; start it at column ${item.col}, as ${item.item} is`;
  }
  const line = lineAt(text, offset);
  const dash = COLON_IN_VALUE.test(message) || LIST_ON_KEY_LINE.test(message) ? dashValue(text, offset) : undefined;
  if (dash !== undefined) return dash.through === undefined ? `${message}: ${dash.words}` : { message: `${message}: ${dash.words}`, echoesThrough: dash.through };
  // The value yaml read as a mapping, from where it starts to the line's end, has a ": " (not one of the keys before it on a flow mapping's line).
  if (COLON_IN_VALUE.test(message) && /:(\s|$)/.test(line.slice(offset - (text.lastIndexOf("\n", offset - 1) + 1)))) {
    return `${message}: a value with ": " in it must be quoted (${colonValueQuoted(line, offset - (text.lastIndexOf("\n", offset - 1) + 1)) ?? 'run: "echo a: b", not run: echo a: b'})`;
  }
  if (COLON_IN_VALUE.test(message)) {
    const deeper = keyIndentedUnder(text, offset);
    // Told at that line, where the mistake is, not at the value above it that yaml tells.
    if (deeper !== undefined) {
      const words = (key: string) => `${message}: ${key} is indented more than ${deeper.key} above it (line ${lineNumberAt(text, offset)}), so yaml reads it as more of the value of ${deeper.key}; start it at column ${deeper.col}, as ${deeper.key} is`;
      return { message: words(deeper.deeper), offset: deeper.offset, more: deeper.more.map((key) => ({ message: words(key.deeper), offset: key.offset })) };
    }
  }
  if (LINE_AS_KEY.test(message)) {
    const block = blockScalarAbove(text, offset);
    if (block !== undefined) return `${message}: the lines of a ${block.indicator} block must be indented more than its key, ${block.key} (column ${block.col})`;
    const short = blockLineShort(text, offset);
    if (short !== undefined) return `${message}: ${blockLineWords(short)}`;
    const fullWidth = fullWidthColonKey(line);
    if (fullWidth !== undefined) return `${message}: ${fullWidthColonWords(fullWidth)}`;
    const glued = GLUED_KEY.exec(line);
    if (glued !== null) return `${message}: a key's colon must be followed by a space (${glued[1]!}: ${withoutComment(glued[2]!)})`;
    // `-b` below `dependsOn:`, in line with the task's keys: text, where a list's item was meant.
    const item = /^\s*-([A-Za-z0-9_][^\s:#]*)\s*(?:#.*)?$/.exec(line);
    if (item !== null) return `${message}: a list item needs a space after its - (- ${item[1]!}); -${item[1]!} is read as text`;
  }
  const indicator = INDICATOR_START.test(message) ? INDICATOR_VALUE.exec(line) : null;
  // An anchor or a tag before it is YAML's, not the value's: it stays before the quotes (run: &x "@foo").
  if (indicator !== null) return `${message}: a value that starts with ${indicator[3]} must be quoted (${indicator[1]}: ${indicator[2]}${JSON.stringify(withoutComment(`${indicator[3]!}${indicator[4]!}`))})`;
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
    const inside = (value: string): string => (quote === "'" ? value.replace(/''|'/g, "''") : value.replace(/\\.|"/g, (written) => (written === '"' ? '\\"' : written)));
    const name = key.trimEnd();
    const written = `write each one inside as ${quote === "'" ? "''" : '\\"'}`;
    const ends = `${message}: a ${quote} inside a value quoted with ${quote} ends it`;
    // The first quote inside closes a word (`run: "a b" && "c d"`: a space after it): the value's first quote is
    // the shell's too, and the value as meant is the whole line. Else (`run: "grep "a b" f"`: it opens one) only those inside are.
    const first = inner.indexOf(quote);
    if (!/^[\s&|;)<>]?$/.test(inner[first + 1] ?? "")) return `${ends}; ${written} (${name}: ${quote}${inside(inner)}${quote})`;
    const whole = `${quote}${inner}${quote}`;
    const other = quote === "'" ? '"' : "'";
    // Kept as it is in the other quote, where the value has none of it, nor a backslash (read otherwise there).
    if (!whole.includes(other) && !whole.includes("\\")) return `${ends}: to keep the quotes for the shell, quote the whole value with ${other} (${name}: ${other}${whole}${other})`;
    return `${ends}: to keep the quotes for the shell, ${written}, those around it too (${name}: ${quote}${inside(whole)}${quote})`;
  }
  if (TEXT_AFTER_VALUE.test(message) && OPENED_VALUE.test(line)) {
    return `${message}: a value that starts with a quote, [ or { ends where that closes; to write more after it, quote the whole value (run: '"echo" foo', run: "[ -f x ] && make")`;
  }
  return message;
}

/**
 * For an error on a line with a no-break space (U+00A0) where YAML looks for a space (see
 * LEADING_NBSP and KEY_COLON_NBSP): that it is one, at its line:column, which YAML reads as text,
 * as it does not a tab. Undefined for a line with none there: one in a quoted value, or in a
 * value after its key's ": " (`run: echo a:\u00a0b: c`), is text, and not what yaml stumbled on.
 */
function noBreakSpaceAt(text: string, offset: number): string | undefined {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  const line = lineAt(text, offset);
  const leading = LEADING_NBSP.exec(line);
  const key = leading === null ? KEY_COLON_NBSP.exec(line) : null;
  if (leading === null && key === null) return undefined;
  // The first in the indentation; the one beside the colon, which ends the key's match.
  const column = leading !== null ? leading.index + leading[0].indexOf("\u00a0") + 1 : key!.index + key![0].lastIndexOf("\u00a0") + 1;
  return noBreakSpaceWords(`${lineNumberAt(text, start)}:${column}`);
}

/** The fields whose value is a list, with what their items are: a `-` alone as their value is a list begun, not text. */
const LIST_FIELDS: Readonly<Record<string, { example: string; item: string; none: string }>> = {
  dependsOn: { example: "[lint, test]", item: "- lint", none: "with no dependencies, remove dependsOn" },
  retryOn: { example: "[1, 75]", item: "- 1", none: "to retry any failure, remove retryOn or write retryOn: any" },
};

/**
 * For a value that is `-` or starts with `- ` (`OUT: -`, `{run: - x}`), which YAML reads as a
 * list's item: that it must be quoted, with the value quoted; or, where a list was meant (a `-`
 * alone as the value of a field that holds a list, `dependsOn: -`, or one with items on the lines
 * below it, `run: -` then `  - npm ci`), how to write that list. Undefined where the `-` at
 * `offset` is no mapping's value, or, on a block mapping's line, is followed by an item (told as a
 * list meant).
 */
function dashValue(text: string, offset: number): { words: string; through?: number } | undefined {
  if (text[offset] !== "-") return undefined;
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  const key = KEY_BEFORE_DASH.exec(text.slice(start, offset));
  if (key === null) return undefined;
  const lineEnd = text.indexOf("\n", offset);
  const rest = text.slice(offset + 1, lineEnd === -1 ? text.length : lineEnd).replace(/\r$/, "");
  // In a flow mapping (a { before the key), the value ends at a , } or ]; in a block one, at the line's end. A comment ends either.
  const flow = /^[{,]/.test(key[0]);
  const after = (flow ? /^[^,}\]#]*/.exec(rest)![0] : rest.replace(/(^|\s)#.*$/, "")).trim();
  if (after !== "" && !flow) return undefined;
  const name = key[1]!.trimEnd();
  const field = LIST_FIELDS[name.replace(/^(["'])(.*)\1$/, "$2")];
  const below = flow || after !== "" ? undefined : itemsBelow(text, offset, key.index + key[0].indexOf(key[1]!));
  if (below !== undefined) {
    const { items, through } = below;
    const shown = items.slice(0, 3);
    const list = `[${shown.join(", ")}${items.length > shown.length ? ", ..." : ""}]`;
    return { words: `a list's - cannot start on its key's line; remove it, and write each item below ${name} on a line of its own (- ${items[0]!}), or write ${name}: ${list}`, through };
  }
  if (field !== undefined) {
    if (flow) return { words: `a list's - cannot start a value inside { }; write ${name}: ${after === "" ? `${field.example}; ${field.none}` : `[${after}]`}` };
    return { words: `a list's - cannot start on its key's line, and this one has no item; write ${name}: ${field.example}, or each item on a line of its own below ${name} (${field.item}); ${field.none}` };
  }
  const value = JSON.stringify(after === "" ? "-" : `- ${after}`);
  return {
    words: after === "" ? `a value that is - alone must be quoted, as YAML reads it as a list's item (${name}: "-")` : `a value that starts with "- " must be quoted, as YAML reads it as a list's item (${name}: ${value}); a list there is written [${after}]`,
  };
}

/**
 * The items of the list written on the lines below a key whose value is a `-` alone (`dependsOn: -`
 * then `      a`, or `    - a` at the key's column, where YAML takes a list too): each line's
 * text, less its `- ` and comment, up to a line left of the key (or at its column, and no
 * list's item). Empty where there is none, or where a line holds a key (`: `) or a flow
 * collection: no list's item.
 */
function itemsBelow(text: string, offset: number, keyCol: number): { items: string[]; through: number } | undefined {
  const items: string[] = [];
  let through = offset;
  for (const { line, end } of linesAfter(text, offset)) {
    const indent = line.length - line.trimStart().length;
    const item = /^\s*-(?:\s+|$)/.exec(line);
    if (indent < keyCol || (indent === keyCol && item === null) || items.length === 20) break;
    const words = line.slice(item === null ? indent : item[0].length).replace(/(^|\s)#.*$/, "").trim();
    if (words === "" || /:(\s|$)|^[[{]/.test(words)) return undefined;
    items.push(words);
    through = end;
  }
  return items.length === 0 ? undefined : { items, through };
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

/**
 * yaml's words for a token out of place, with the text it found there as the file's line holds it: yaml quotes the whole
 * token, the lines after it and their comments too (`"run: echo # my note\n"`, a block of script made one problem of
 * hundreds of characters), so only its first line is shown, without a comment after it, at most 60 characters.
 */
function strayTokenWords(words: string, type: string, quoted: string | undefined): string {
  const found = quoted === undefined ? undefined : parseQuoted(quoted);
  if (found === undefined) return quoted === undefined ? words : `${words}: ${quoted}`;
  // A block's text comes with its indentation.
  const line = found.trimStart().split(/\r?\n/)[0]!;
  // A quoted scalar's `#` is its text; elsewhere, one starting the line, or after a space outside quotes (not `echo "a # b"`'s), starts a comment.
  const code = /quoted-scalar$/.test(type) ? line.trimEnd() : line.startsWith("#") ? "" : withoutComment(line);
  if (code === "") return words;
  return `${words}: ${JSON.stringify(shortened(code))}`;
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

/**
 * For a block mapping's value at `column` of its line with ": " in it (`FOO: bar baz: qux`, an env value): that value quoted,
 * and as written (`FOO: "bar baz: qux", not FOO: bar baz: qux`), a comment after it left out. Undefined where the value
 * is not the line's first key's (a flow mapping's, `{ run: echo x: y }`), or has a quote or backslash a hint would have to escape,
 * or a no-break space.
 */
function colonValueQuoted(line: string, column: number): string | undefined {
  const key = KEY_LINE.exec(line);
  if (key === null || !/^:[ \t]+$/.test(line.slice(key[1]!.length + key[2]!.length, column))) return undefined;
  const name = key[2]!.trimEnd();
  const value = withoutComment(line.slice(column));
  // An anchor or a tag (`&build`, `!!str`) is YAML's, not the value's: it stays before the quotes.
  const [, properties, text] = /^((?:[&!][^\s]*[ \t]+)*)(.*)$/.exec(value) as unknown as [string, string, string];
  // A no-break space (`a:\u00a0b`) would be written unseen: run's example then.
  return /["\\\u00a0]/.test(value) || text === "" ? undefined : `${name}: ${properties}"${text}", not ${name}: ${value}`;
}

/**
 * A plain value's text as written on its line, without the comment after it (` # note`, which YAML
 * reads as a comment, not as more of the value) and the spaces around it, for a hint that writes the value.
 * A ` #` inside the value's own quotes (`@echo "issue # 42"`), which a word starts (not `it's`), is its text,
 * which the quotes the hint writes keep: cut there, the command would leave its quote open.
 */
function withoutComment(value: string): string {
  let quote: string | undefined;
  for (let index = 0; index < value.length; index++) {
    const character = value[index]!;
    if (quote !== undefined) {
      if (character === quote) quote = undefined;
    } else if ((character === '"' || character === "'") && /^$|[\s=]/.test(value[index - 1] ?? "")) {
      quote = character;
    } else if (character === "#" && /[ \t]/.test(value[index - 1] ?? "")) {
      return value.slice(0, index).trim();
    }
  }
  return value.trim();
}

/** The 1-based number of the line of `text` holding `offset`. */
function lineNumberAt(text: string, offset: number): number {
  let number = 1;
  for (let index = text.indexOf("\n"); index !== -1 && index < offset; index = text.indexOf("\n", index + 1)) number++;
  return number;
}

/** The lines of `text` after the one holding `offset`, each with its 1-based number and the offset of its end, skipping blank and comment lines. */
function* linesAfter(text: string, offset: number): Generator<{ number: number; line: string; start: number; end: number }> {
  let number = lineNumberAt(text, offset);
  for (let start = text.indexOf("\n", offset) + 1; start > 0 && start < text.length; ) {
    const end = text.indexOf("\n", start);
    const line = text.slice(start, end === -1 ? text.length : end).replace(/\r$/, "");
    number++;
    if (!/^\s*(#.*)?$/.test(line)) yield { number, line, start, end: end === -1 ? text.length : end };
    start = end + 1;
  }
}

/**
 * For a value yaml read as a mapping inside a mapping's value, with no second ": " on its line:
 * the key line below, indented more than the value's key, that made it so (`run: make` then
 * `  retries: 1` under it): yaml reads a more indented line as more of the value above it.
 */
function keyIndentedUnder(text: string, offset: number): { line: number; key: string; col: number; deeper: string; offset: number; more: Array<{ deeper: string; offset: number }> } | undefined {
  const own = KEY_LINE.exec(lineAt(text, offset));
  if (own === null) return undefined;
  const indent = own[1]!.length;
  let found: { line: number; key: string; col: number; deeper: string; offset: number; more: Array<{ deeper: string; offset: number }> } | undefined;
  /** The first such key's indentation: a line indented more than it is its value's (`backoff:` then `  base: 1s`), moved with it. */
  let first = Infinity;
  for (const { number, line, start } of linesAfter(text, offset)) {
    const depth = line.length - line.trimStart().length;
    if (depth <= indent) break;
    if (depth > first) continue;
    const deeper = /^\s*([^\s"'[{#-][^:]*):(\s|$)/.exec(line);
    // The keys below the first indented as far or less, but more than the value's key (`timeout: 5s` after `retries: 2`):
    // read into the value too, told with it, not one a run.
    if (deeper !== null && found !== undefined) found.more.push({ deeper: deeper[1]!.trimEnd(), offset: start + depth });
    else if (deeper !== null) [found, first] = [{ line: number, key: own[2]!.trimEnd(), col: indent + 1, deeper: deeper[1]!.trimEnd(), offset: start + depth, more: [] }, depth];
    else if (found !== undefined) break;
  }
  return found;
}

/**
 * For a key yaml found indented otherwise than its mapping's: the line of text at `offset` (or
 * the next, where yaml points at a blank or comment line before it), and of the key lines above
 * it, up to one indented less, the least indented of those indented more (`run` over a
 * `dependsOn` one space short of it; `a` over a task id `b` one space short of it), else that
 * one, where its value is on its line (`retries: 1` over a `run` indented more).
 */
function keyAlignedAbove(text: string, offset: number): { line: number; own: number; key: string; col: number; firstTooFar: boolean } | undefined {
  const { lines, index, indent } = textLineFrom(text, offset) ?? {};
  if (lines === undefined || index === undefined || indent === undefined) return undefined;
  let found: { key: string; indent: number } | undefined;
  /** Keys above at found's column, and the indentation of the key whose mapping they are in. */
  let keysThere = 0;
  let parent: number | undefined;
  for (let above = index - 1; above >= 0; above--) {
    const line = lines[above]!;
    if (!isTextLine(line)) continue;
    const key = KEY_LINE.exec(line);
    const depth = line.length - line.trimStart().length;
    // A key with its value on its line (`retries: 1`) has no mapping under it: one indented more (`  run: make`) meant to be its sibling.
    if (depth < indent && found === undefined && key !== null && !/:\s*(#.*)?$/.test(line)) found = { key: key[2]!.trimEnd(), indent: depth };
    if (depth < indent) {
      if (key !== null && /:\s*(#.*)?$/.test(line)) parent = depth;
      break;
    }
    if (key !== null && depth > indent && (found === undefined || key[1]!.length < found.indent)) {
      found = { key: key[2]!.trimEnd(), indent: key[1]!.length };
      keysThere = 0;
    }
    if (key !== null && found !== undefined && key[1]!.length === found.indent) keysThere++;
  }
  if (found === undefined) return undefined;
  // The mapping's one key above, indented further than this line, which sits a usual step (2 or 4 columns) in from the key
  // whose mapping it is (`test:` then `      run: x`, then `    dependsOn: a`): that key may be the one indented too far.
  const step = parent === undefined ? undefined : indent - parent;
  const firstTooFar = keysThere === 1 && found.indent > indent && (step === 2 || step === 4);
  return { line: index + 1, own: indent + 1, key: found.key, col: found.indent + 1, firstTooFar };
}

/**
 * A key's line, which was meant as a key, not as a block's line: a plain key of any characters a
 * plain key may hold (`retries: 1`, `01-fetch:`, `my key: 1`, `- id: b`), before a comment;
 * a quoted one (`"a b": 1`); a flow mapping (`{a: 1}`); a name glued to its value (`retries:2`).
 */
function isKeyLike(line: string): boolean {
  const rest = line.replace(/^[ \t]*(?:-[ \t]+)*/, "");
  if (/^(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')[ \t]*:/.test(rest) || /^\{.*:(?:[ \t,}]|$)/.test(rest) || /^[A-Za-z_][\w.-]*:(?![/:])/.test(rest)) return true;
  // A plain scalar starts with no indicator (a -, ? or : before a character other than a space may start one), and a key's ends at ": ".
  if (!/^(?:[^\s\-?:,[\]{}#&*!|>'"%@`]|[-?:][^\s])/.test(rest)) return false;
  const colon = /:(?:[ \t]|$)/.exec(rest);
  if (colon === null) return false;
  const key = rest.slice(0, colon.index);
  // Not one in a comment (` #` ends the scalar), nor one after a shell's quote, option or variable: `curl -H "Accept: x"`
  // and `echo "Status: ok"` are a script's lines, whose words a task id, `my key`, `01-fetch`, hold none of.
  return !/[ \t]#/.test(key) && !/["'`$]|(?:^|[ \t])-/.test(key);
}

/**
 * For a line yaml found out of line with a mapping's keys (no key's line: one of a block's
 * lines, as meant), under a `|` or `>` block's lines: the block's key, indicator, key's
 * column and its lines' column, and the first comment line between this line and the block's
 * lines that is left of those, if any (`# echo two` at column 1 between two lines at column 7):
 * YAML ends a block at a comment left of its lines, where a shell script's comment would not.
 * Undefined otherwise.
 */
function blockAbove(text: string, offset: number): { index: number; indent: number; key: string; indicator: string; col: number; comment?: { index: number; depth: number } } | undefined {
  const { lines, index, indent } = textLineFrom(text, offset) ?? {};
  if (lines === undefined || index === undefined || indent === undefined || isKeyLike(lines[index]!)) return undefined;
  let above = index - 1;
  /** The comment lines between this line and the text above it, nearest first. */
  const comments: { index: number; depth: number }[] = [];
  for (; above >= 0; above--) {
    const line = lines[above]!;
    if (line.trim() === "") continue;
    if (!isTextLine(line)) comments.push({ index: above, depth: line.length - line.trimStart().length });
    else break;
  }
  /** The least indent of the lines above so far, and the indent of the one nearest the header (the block's first line, which sets its indentation). */
  let least = Infinity;
  let blockIndent: number | undefined;
  for (; above >= 0; above--) {
    const line = lines[above]!;
    if (!isTextLine(line)) continue;
    const depth = line.length - line.trimStart().length;
    if (depth < least) {
      // A line less indented than all below it: the header of the block they are the lines of, or no block's line at all.
      const header = BLOCK_SCALAR_HEADER.exec(line);
      if (header !== null) {
        if (blockIndent === undefined) return undefined;
        const comment = comments.reverse().find((found) => found.depth < blockIndent!);
        return { index, indent, key: header[2]!.trimEnd(), indicator: header[3]!, col: blockIndent + 1, ...(comment === undefined ? {} : { comment }) };
      }
      if (depth === 0) return undefined;
      least = depth;
    }
    blockIndent = depth;
  }
  return undefined;
}

/**
 * For a key yaml found out of line with its mapping's: where the text line above it, indented as much, is a key glued to
 * its value with a comment after it (`retries:2 # flaky` then `run: x`): the comment ends that line as one plain value, the
 * value of the key above it, so the key below is out of line. Told at the glued key, what to write. Undefined otherwise.
 */
function gluedKeyAbove(text: string, offset: number): { message: string; offset: number } | undefined {
  const { lines, index, indent } = textLineFrom(text, offset) ?? {};
  if (lines === undefined || index === undefined || indent === undefined) return undefined;
  let above = index - 1;
  while (above >= 0 && !isTextLine(lines[above]!)) above--;
  const line = lines[above];
  if (line === undefined || line.length - line.trimStart().length !== indent || !/[ \t]#/.test(line)) return undefined;
  // It starts a value (its key's line above it, less indented, ends with `:`): one below a key with a value on its line
  // (`run: docker run` then `node:18 # lts`) is more of that value's text, and the key below it indented as that text is the mistake.
  let over = above - 1;
  while (over >= 0 && !isTextLine(lines[over]!)) over--;
  const key = lines[over];
  if (key !== undefined && key.length - key.trimStart().length < indent && !/:$/.test(key.replace(/[ \t]#.*$/, "").trimEnd())) return undefined;
  const glued = GLUED_KEY.exec(line.replace(/[ \t]+#.*$/, ""));
  if (glued === null) return undefined;
  return {
    offset: lineStart(text, above) + indent,
    message: `a key's colon must be followed by a space (${glued[1]!}: ${withoutComment(glued[2]!)}); without one, yaml reads ${glued[1]!}:${withoutComment(glued[2]!)} as text, and the key on line ${index + 1} below it as out of line`,
  };
}

/** What blockLineShort found, told. */
function blockLineWords(block: { line: number; own: number; key: string; indicator: string; col: number }): string {
  return `line ${block.line} starts at column ${block.own}, left of the other lines of ${block.key}'s ${block.indicator} block, at column ${block.col}, so yaml ends the block above it and reads it as a key; start it at column ${block.col}, as the block's lines are`;
}

/** The offset where the `index`th line (from 0) of `text` starts. */
function lineStart(text: string, index: number): number {
  let start = 0;
  for (let line = 0; line < index && start !== -1; line++) start = text.indexOf("\n", start) + 1;
  return start;
}

/**
 * For a line yaml found out of line with a mapping's keys, or read as a key, under a `|` or `>`
 * block's lines, where a comment left of those lines ended the block above it (`# echo two` at
 * column 1 in a run's script): that comment, and what to do with it. Undefined otherwise.
 */
function commentEndingBlock(text: string, offset: number): { message: string; offset: number } | undefined {
  const block = blockAbove(text, offset);
  if (block?.comment === undefined) return undefined;
  return {
    offset: lineStart(text, block.comment.index) + block.comment.depth,
    message: `this comment is left of the lines of ${block.key}'s ${block.indicator} block (column ${block.col}), so it ends the block, and yaml reads line ${block.index + 1} as a key; indent the comment to column ${block.col} to keep it in the block, or remove it`,
  };
}

/**
 * For a line yaml found out of line with a mapping's keys, or read as a key: where it is a `|` or
 * `>` block's line, after its first, indented less than the block's lines above it (`run: |`, two
 * lines at column 7, then one at column 6, or at run's column or left of it): the block's key,
 * indicator and its lines' column. Undefined otherwise (a key out of line with its siblings,
 * told by keyAlignedAbove; a key's line, meant beside the block's key).
 */
function blockLineShort(text: string, offset: number): { line: number; own: number; key: string; indicator: string; col: number } | undefined {
  const block = blockAbove(text, offset);
  if (block === undefined || block.indent + 1 >= block.col) return undefined;
  return { line: block.index + 1, own: block.indent + 1, key: block.key, indicator: block.indicator, col: block.col };
}

/**
 * For a list item yaml found indented less than the item above it (`- c` one space short of
 * `- b`): the line of text at `offset` (or the next), and the least indented of the items above
 * it indented more, up to a line indented as much or less (the list's key), shown as `- b`.
 * Undefined for a line that is no list item, or with no such item above it.
 */
function itemAlignedAbove(text: string, offset: number): { line: number; own: number; item: string; col: number } | undefined {
  const { lines, index, indent } = textLineFrom(text, offset) ?? {};
  if (lines === undefined || index === undefined || indent === undefined || !ITEM_LINE.test(lines[index]!)) return undefined;
  let found: { item: string; indent: number } | undefined;
  for (let above = index - 1; above >= 0; above--) {
    const line = lines[above]!;
    if (!isTextLine(line)) continue;
    const depth = line.length - line.trimStart().length;
    if (depth <= indent) break;
    const item = ITEM_LINE.exec(line);
    if (item !== null && (found === undefined || depth < found.indent)) {
      const words = item[2]!.replace(/\s+#.*$/, "").trim();
      found = { item: `- ${shortened(words, 30)}`.trimEnd(), indent: depth };
    }
  }
  return found === undefined ? undefined : { line: index + 1, own: indent + 1, item: found.item, col: found.indent + 1 };
}

/** A line with text: not blank, nor only a comment. */
function isTextLine(line: string): boolean {
  return !/^\s*(#.*)?$/.test(line);
}

/** The lines of `text`, and the index and indent of the line at `offset`, or of the next line with text, where yaml points at a blank or comment line before it. */
function textLineFrom(text: string, offset: number): { lines: string[]; index: number; indent: number } | undefined {
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""));
  let index = text.slice(0, offset).split("\n").length - 1;
  while (index < lines.length && !isTextLine(lines[index]!)) index++;
  const own = lines[index];
  return own === undefined ? undefined : { lines, index, indent: own.length - own.trimStart().length };
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
export function lineAt(text: string, offset: number): string {
  const end = text.indexOf("\n", offset);
  return text.slice(text.lastIndexOf("\n", offset - 1) + 1, end === -1 ? text.length : end);
}

/** Calls `visit` on every token, nested ones too. */
export function visitTokens(tokens: readonly CST.Token[], visit: (token: CST.Token) => void): void {
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
