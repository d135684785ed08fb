import { MAX_ALIAS_EXPANSION, MAX_NESTING_DEPTH, MAX_TASKS } from "./limits.js";
import type { DataPath, SourceLocator } from "./locator.js";

/**
 * A fast reader for the plain subset of YAML that workflow files are written in:
 * block mappings and lists, one-line flow lists and mappings, plain and one-line
 * quoted scalars, literal blocks (`run: |`), comments. It returns what toPlain
 * would make of the same text (null-prototype objects, the top-level `tasks`
 * mapping as a Map, core-schema scalars), or undefined as soon as the text uses
 * anything else (aliases but a merge key's, anchors but a mapping's, tags, folded
 * or multi-line scalars, tabs, CR, a second document, duplicate or unusual keys,
 * numbers other than plain integers) or is not valid YAML. A merge key
 * (`<<: *defaults`, of an anchored mapping read before it) is merged as toPlain
 * merges it; only for a file with nothing to report: readSimpleYamlWithPlaces
 * declines one, so its problems and notes are yaml's to place, as before. Undefined means "read it with yaml": that
 * path stays the only one that reports problems, with their positions, so
 * errors are exactly as before.
 *
 * Why: yaml's lexer, parser and composer build a token stream, a syntax tree
 * and a document tree with positions for every node, and that is ~3/4 of
 * `taskq validate` on a 10,000-task file. A valid file needs no positions at all.
 * Most of the scanning here is done by regular expressions, which V8 runs as
 * machine code even before the JavaScript around them is optimised.
 */
export function readSimpleYaml(text: string): unknown {
  return readSimpleYamlPlaced(text, undefined)?.data;
}

/**
 * As readSimpleYaml, with where each value is in the text: a locator that finds what yaml's
 * Locator finds for the same text. For a file with something to report, whose problems need
 * positions: yaml's document tree for a 60 MB file took over 4 GB, and taskq ran out of memory.
 */
export function readSimpleYamlWithPlaces(text: string): { data: unknown; locator: SourceLocator } | undefined {
  const places: Places = new Map();
  const read = readSimpleYamlPlaced(text, places);
  return read === undefined ? undefined : { data: read.data, locator: new SimpleLocator(text, read.data, read.root, places) };
}

function readSimpleYamlPlaced(text: string, places: Places | undefined): { data: unknown; root: number } | undefined {
  if (UNSUPPORTED_TEXT.test(text)) return undefined;
  const reader = new SimpleReader(text, places);
  try {
    return { data: reader.document(), root: reader.rootOffset };
  } catch {
    // NOT_SIMPLE, or a RangeError (e.g. `\U` past U+10FFFF): either way, yaml decides.
    return undefined;
  }
}

/** Where an entry of a mapping or list is: its key (of a mapping's), its value, and the end of a plain scalar value. */
interface Place {
  key: number;
  value: number;
  /** A value with no text of its own (`key:` or `-` with nothing after it), which yaml reads as null. */
  empty: boolean;
  /** After a plain scalar value; -1 for any other value. */
  plainEnd: number;
}

/** Written to in place of an entry's place when places are not kept: no object per entry then. */
const UNKEPT: Place = { key: -1, value: -1, empty: false, plainEnd: -1 };

/** The places of each mapping's entries (by key) and each list's items, by the mapping or list read. */
type Places = Map<object, Map<string, Place> | Place[]>;

/** `entries`, kept in `places` as those of `collection`'s entries. */
function keepPlaces<T extends Map<string, Place> | Place[]>(places: Places, collection: object, entries: T): T {
  places.set(collection, entries);
  return entries;
}

/** offsetOf, endsAtComment, commentInsteadOf, plainSourceOf, foldedSourceOf and textAt as Locator (locator.ts) answers them for yaml's tree of the same text, from the places the reader kept. */
class SimpleLocator implements SourceLocator {
  readonly #text: string;
  readonly #data: unknown;
  /** Where the document's content starts (yaml's range of its root). */
  readonly #root: number;
  readonly #places: Places;

  constructor(text: string, data: unknown, root: number, places: Places) {
    this.#text = text;
    this.#data = data;
    this.#root = root;
    this.#places = places;
  }

  offsetOf(path: DataPath, at: "value" | "key" = "value"): number {
    const found = this.#find(path, at);
    if (typeof found === "number") return found;
    return found.place === undefined || found.place.empty ? found.fallback : found.place.value;
  }

  endsAtComment(path: DataPath): boolean {
    const found = this.#find(path, "value");
    if (typeof found === "number" || found.place === undefined || found.place.plainEnd === -1) return false;
    COMMENT_AFTER.lastIndex = found.place.plainEnd;
    return COMMENT_AFTER.test(this.#text);
  }

  commentInsteadOf(path: DataPath): string | undefined {
    // A mapping's value left empty (a list's item has a number for its segment); its key is plain, so it ends where its name does.
    const name = path.at(-1);
    const found = this.#find(path, "value");
    if (typeof name !== "string" || typeof found === "number" || found.place === undefined || !found.place.empty) return undefined;
    COMMENT_INSTEAD.lastIndex = found.place.key + name.length;
    return COMMENT_INSTEAD.exec(this.#text)?.[1]?.trimEnd();
  }

  plainSourceOf(path: DataPath): string | undefined {
    const found = this.#find(path, "value");
    if (typeof found === "number" || found.place === undefined || found.place.plainEnd === -1) return undefined;
    return this.#text.slice(found.place.value, found.place.plainEnd);
  }

  textAt(offset: number, length: number): string {
    return this.#text.slice(offset, offset + length);
  }

  /** The fast reader takes no plain value over several lines, nor a `>` block: yaml reads those. */
  foldedSourceOf(): undefined {
    return undefined;
  }

  /** The place of the value at `path`, and where to point if it has no text; or the offset to give at once. */
  #find(path: DataPath, at: "value" | "key"): number | { place: Place | undefined; fallback: number } {
    let node = this.#data;
    let fallback = this.#root;
    let place: Place | undefined;
    for (const [index, segment] of path.entries()) {
      const entries = typeof node === "object" && node !== null ? this.#places.get(node) : undefined;
      if (entries instanceof Map) {
        const name = String(segment);
        place = entries.get(name);
        if (place === undefined) return fallback;
        if (index === path.length - 1 && at === "key") return place.key;
        fallback = place.key;
        node = node instanceof Map ? node.get(name) : (node as Record<string, unknown>)[name];
      } else if (Array.isArray(entries) && typeof segment === "number") {
        place = entries[segment];
        node = (node as unknown[])[segment];
        if (place === undefined) return fallback;
        fallback = place.value;
      } else {
        return fallback;
      }
    }
    return { place, fallback };
  }
}

/** Spaces or tabs, then a comment, on the line where a value ends (as locator.ts looks for it). */
const COMMENT_AFTER = /[ \t]+#/y;
/** After a key, its `:`, then spaces or tabs and a comment where the value would be (as locator.ts looks for it). */
const COMMENT_INSTEAD = /[ \t]*:[ \t]+(#[^\r\n]*)/y;

/** Thrown inside the reader (one instance: no stack to capture); readSimpleYaml turns it into undefined. */
const NOT_SIMPLE = new Error("not simple YAML");

/**
 * Characters that end the fast path at once: tabs, CR and other controls, the
 * byte order mark, NEL and the Unicode line separators (which YAML versions treat
 * differently), and a directive or document marker at the start of a line.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSUPPORTED_TEXT = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]|^(?:---|\.\.\.|%)/mu;

/** yaml rejects an implicit key whose `:` is more than 1024 characters after its start; stay well inside. */
const MAX_KEY_SPAN = 1000;
/** A plain key: letters, digits and `_ . / -`, not starting with `-`; then `:` and a space or the line's end. */
const PLAIN_KEY = /([A-Za-z0-9_./][A-Za-z0-9_./-]*):(?: +|$)/my;
/** The rest of a line after a value: spaces, then nothing or a comment. */
const LINE_REST = / *(?:#.*)?$/my;
/** A plain scalar inside [] or {}: no indicators, no `:` or `#` at all (to stay clear of every corner). */
const FLOW_PLAIN = /[^,[\]{}:#'"\n]*[^,[\]{}:#'" \n]/y;
/** A plain key inside {}: as PLAIN_KEY, then `:` and at least one space. */
const FLOW_KEY = /([A-Za-z0-9_./][A-Za-z0-9_./-]*): +/y;
/** `|` or `|-`, then nothing or a comment. */
const LITERAL_HEADER = /\|(-?)(?: +#.*| *)$/my;
const UNTIL_HASH = /[^#\n]*/y;
/** Characters that cannot start a plain scalar here (or that would start something other than a scalar). */
const NOT_PLAIN_START = /[-?:,[\]{}#&*!|>'"%@`]/;
/** A double-quoted scalar on one line; escapes are checked separately. */
const DOUBLE_QUOTED = /"((?:[^"\\\n]|\\[^\n])*)"/y;
const SINGLE_QUOTED = /'((?:[^'\n]|'')*)'/y;
const ESCAPE = /\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0abtnvfre "/\\N_LP])/g;
const SIMPLE_ESCAPES: Record<string, string> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\x85",
  _: "\xa0",
  L: "\u2028",
  P: "\u2029",
};

/** The core schema's scalars, as yaml resolves them (yaml/dist/schema/core). */
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
/** Octal and hex ints and every float form: left to yaml. */
const OTHER_NUMBER = /^(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$/;

/** An anchored mapping (`x-defaults: &defaults`), for a merge key to name: its value, and its size and height as toPlain counts them. */
interface Anchored {
  value: Record<string, unknown>;
  size: number;
  height: number;
}

/** An anchor's or an alias's name: left to yaml, any other. */
const ANCHOR_NAME = /[A-Za-z0-9_-]+/y;

class SimpleReader {
  readonly #text: string;
  /** The anchored mappings read so far, by name (see #anchored). */
  readonly #anchors = new Map<string, Anchored>();
  /** Every anchor name seen, from where it was seen: an anchor inside a mapping anchored by the same name is met before the outer one is kept. */
  readonly #anchorNames = new Set<string>();
  /** The nodes the merge keys read so far brought in, as toPlain counts them against MAX_ALIAS_EXPANSION. */
  #expanded = 0;
  /** How many merge keys were read: a mapping anchored with one in it is yaml's (toPlain counts such a merge as a level of nesting). */
  #merges = 0;
  /** Where each entry is, when asked for (see readSimpleYamlWithPlaces). */
  readonly #places: Places | undefined;
  /** Content lines only (blank and comment-only lines are skipped): start of content, end of line, indent. */
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];
  readonly #indents: number[] = [];
  #line = 0;

  constructor(text: string, places: Places | undefined) {
    this.#text = text;
    this.#places = places;
    const length = text.length;
    for (let start = 0; start <= length; ) {
      let end = text.indexOf("\n", start);
      if (end === -1) end = length;
      let content = start;
      while (content < end && text.charCodeAt(content) === 0x20) content++;
      if (content < end && text.charCodeAt(content) !== 0x23 /* # */) {
        this.#starts.push(content);
        this.#ends.push(end);
        this.#indents.push(content - start);
      }
      start = end + 1;
    }
  }

  /** Where the document's content starts: its first key, or its first `-`. */
  get rootOffset(): number {
    return this.#starts[0] ?? 0;
  }

  document(): unknown {
    if (this.#starts.length === 0 || this.#indents[0] !== 0) fail();
    const root = this.#block(0, 0);
    if (this.#line < this.#starts.length) fail();
    return root;
  }

  /** The block collection whose entries start at `indent` on the current line. */
  #block(indent: number, depth: number, isTasks = false): unknown {
    if (depth >= MAX_NESTING_DEPTH) fail();
    return this.#isSequenceEntry(this.#line) ? this.#sequence(indent, depth) : this.#mapping(indent, depth, isTasks);
  }

  #mapping(indent: number, depth: number, isTasks: boolean): unknown {
    const text = this.#text;
    const result = newMapping(isTasks);
    const places = this.#places === undefined ? undefined : keepPlaces(this.#places, result, new Map<string, Place>());
    /** The keys written in this mapping, apart once a `<<` merges others in: only these can be duplicates (as toPlain). */
    let written: Set<string> | undefined;
    while (this.#line < this.#starts.length && this.#indents[this.#line] === indent) {
      const line = this.#line;
      const start = this.#starts[line]!;
      let key: string;
      let after: number;
      if (isMergeKeyAt(text, start)) {
        written ??= new Set(Object.keys(result));
        const end = this.#merge(result, skipSpaces(text, start + 3), depth);
        if (end < this.#ends[line]! && text.charCodeAt(end) !== 0x20) fail();
        LINE_REST.lastIndex = end;
        if (!LINE_REST.test(text)) fail();
        this.#line++;
        this.#expectNotDeeper(indent);
        continue;
      }
      if (text.charCodeAt(start) === 0x22 /* " */ || text.charCodeAt(start) === 0x27 /* ' */) {
        const quoted = this.#quoted(start);
        key = quoted.value;
        if (text.charCodeAt(quoted.end) !== 0x3a /* : */ || quoted.end - start > MAX_KEY_SPAN) fail();
        after = quoted.end + 1;
        if (after < this.#ends[line]! && text.charCodeAt(after) !== 0x20) fail();
        after = skipSpaces(text, after);
      } else {
        ({ key, end: after } = plainKey(PLAIN_KEY, text, start));
      }
      checkNewKey(result, key, written);
      const childIsTasks = depth === 0 && key === "tasks";
      let value: unknown;
      const place = places === undefined ? UNKEPT : { key: start, value: after, empty: false, plainEnd: -1 };
      if (text.charCodeAt(after) === 0x26 /* & */) {
        value = this.#anchored(after, indent, depth, childIsTasks);
      } else if (after >= this.#ends[line]! || text.charCodeAt(after) === 0x23 /* # */) {
        // `key:` alone: a nested block (more indented, or a list at the same indent), or null.
        this.#line++;
        const next = this.#line;
        place.value = this.#starts[next] ?? after;
        if (next < this.#starts.length && this.#indents[next]! > indent) value = this.#block(this.#indents[next]!, depth + 1, childIsTasks);
        else if (next < this.#starts.length && this.#indents[next] === indent && this.#isSequenceEntry(next)) value = this.#sequence(indent, depth + 1);
        else {
          value = null;
          place.empty = true;
        }
      } else if (text.charCodeAt(after) === 0x7c /* | */ && !childIsTasks) {
        value = this.#literal(after, indent);
      } else {
        value = this.#inlineValue(after, this.#ends[line]!, depth + 1, childIsTasks, place);
        this.#line++;
        this.#expectNotDeeper(indent);
      }
      setEntry(result, key, value);
      places?.set(key, place);
    }
    this.#expectNotDeeper(indent);
    return result;
  }

  /**
   * `key: &name` and a block mapping below, or `key: &name { ... }`: the mapping, kept for a merge key
   * to name. Any other anchored value, one on the tasks or a second anchor of a name, is yaml's; and
   * so is any anchor where places are kept (see readSimpleYamlWithPlaces).
   */
  #anchored(at: number, indent: number, depth: number, isTasks: boolean): Record<string, unknown> {
    const text = this.#text;
    if (this.#places !== undefined || isTasks) fail();
    ANCHOR_NAME.lastIndex = at + 1;
    const name = ANCHOR_NAME.exec(text)?.[0];
    if (name === undefined || this.#anchorNames.has(name)) fail();
    this.#anchorNames.add(name);
    const line = this.#line;
    const after = at + 1 + name.length;
    // A name runs to a space or the line's end: `&a#` names `a#`, not `a` and a comment. Anything else is yaml's.
    if (after < this.#ends[line]! && text.charCodeAt(after) !== 0x20) fail();
    const merges = this.#merges;
    let value: unknown;
    LINE_REST.lastIndex = after;
    if (LINE_REST.test(text)) {
      this.#line++;
      const next = this.#line;
      if (next >= this.#starts.length || this.#indents[next]! <= indent || this.#isSequenceEntry(next)) fail();
      value = this.#block(this.#indents[next]!, depth + 1);
    } else {
      const start = skipSpaces(text, after);
      if (start === after || text.charCodeAt(start) !== 0x7b /* { */) fail();
      value = this.#inlineValue(start, this.#ends[line]!, depth + 1, false, UNKEPT);
      this.#line++;
      this.#expectNotDeeper(indent);
    }
    if (this.#merges !== merges || typeof value !== "object" || value === null || Array.isArray(value)) fail();
    const { size, height } = measure(value);
    this.#anchors.set(name, { value: value as Record<string, unknown>, size, height });
    return value as Record<string, unknown>;
  }

  /**
   * A merge key's alias at `at` (`<<: *defaults`), into `result`, a mapping at `depth`: the keys of the
   * mapping it names that `result` does not have yet, as toPlain merges them; returns the offset after
   * the alias. An alias of anything else, or of a mapping not read before, or past toPlain's limits, is yaml's.
   */
  #merge(result: Mapping, at: number, depth: number): number {
    const text = this.#text;
    if (this.#places !== undefined || result instanceof Map || text.charCodeAt(at) !== 0x2a /* * */) fail();
    ANCHOR_NAME.lastIndex = at + 1;
    const name = ANCHOR_NAME.exec(text)?.[0];
    const anchored = name === undefined ? undefined : this.#anchors.get(name);
    if (anchored === undefined) fail();
    this.#merges++;
    this.#expanded += anchored.size;
    // Within toPlain's limits by a margin: nearer them, yaml reads the file and says what it says.
    if (this.#expanded > MAX_ALIAS_EXPANSION || depth + anchored.height + 2 > MAX_NESTING_DEPTH) fail();
    for (const key of Object.keys(anchored.value)) if (!Object.hasOwn(result, key)) result[key] = anchored.value[key];
    return at + 1 + name!.length;
  }

  #sequence(indent: number, depth: number): unknown[] {
    const text = this.#text;
    const list: unknown[] = [];
    const places = this.#places === undefined ? undefined : keepPlaces(this.#places, list, [] as Place[]);
    while (this.#line < this.#starts.length && this.#indents[this.#line] === indent && this.#isSequenceEntry(this.#line)) {
      const line = this.#line;
      const item = skipSpaces(text, this.#starts[line]! + 1);
      const place = places === undefined ? UNKEPT : { key: -1, value: item, empty: false, plainEnd: -1 };
      places?.push(place);
      if (item >= this.#ends[line]! || text.charCodeAt(item) === 0x23 /* # */) {
        this.#line++;
        const next = this.#line;
        const nested = next < this.#starts.length && this.#indents[next]! > indent;
        // An item with nothing after its `-` is yaml's empty scalar, just past the `-` and its spaces.
        if (nested) place.value = this.#starts[next]!;
        else place.empty = true;
        list.push(nested ? this.#block(this.#indents[next]!, depth + 1) : null);
        continue;
      }
      // `- key: value` (a mapping in the list) and `- - x` are left to yaml.
      if (this.#isSequenceEntryAt(item)) fail();
      PLAIN_KEY.lastIndex = item;
      if (PLAIN_KEY.test(text)) fail();
      list.push(this.#inlineValue(item, this.#ends[line]!, depth + 1, false, place));
      this.#line++;
      this.#expectNotDeeper(indent);
    }
    return list;
  }

  /**
   * A literal block scalar (`|` or `|-`) as a mapping value, whose key is at `parentIndent`:
   * the lines below that are indented more, less the first one's indentation. Left to yaml:
   * `|+`, an explicit indentation, a line of spaces only, and a block that ends the file
   * without a line break.
   */
  #literal(header: number, parentIndent: number): string {
    const text = this.#text;
    LITERAL_HEADER.lastIndex = header;
    const match = LITERAL_HEADER.exec(text);
    if (match === null) fail();
    const strip = match[1] === "-";
    const lines: string[] = [];
    let contentIndent = -1;
    let lastContent = -1;
    let start = text.indexOf("\n", header) + 1;
    if (start === 0) fail();
    while (start < text.length) {
      const end = text.indexOf("\n", start);
      if (end === -1) fail(); // the block's last line has no line break
      if (end === start) {
        lines.push("");
        start = end + 1;
        continue;
      }
      let spaces = start;
      while (text.charCodeAt(spaces) === 0x20) spaces++;
      if (spaces === end) fail();
      const lineIndent = spaces - start;
      if (contentIndent === -1) {
        if (lineIndent <= parentIndent) fail(); // an empty block
        contentIndent = lineIndent;
      }
      if (lineIndent < contentIndent) {
        // The block ends here; a comment more indented than its key is yaml's to judge.
        if (text.charCodeAt(spaces) === 0x23 /* # */ && lineIndent > parentIndent) fail();
        break;
      }
      lines.push(text.slice(start + contentIndent, end));
      lastContent = lines.length;
      start = end + 1;
    }
    if (lastContent === -1) fail();
    // Past the block in the table of content lines (which skipped its `#` lines and blank ones).
    while (this.#line < this.#starts.length && this.#starts[this.#line]! < start) this.#line++;
    this.#expectNotDeeper(parentIndent);
    lines.length = lastContent;
    return strip ? lines.join("\n") : `${lines.join("\n")}\n`;
  }

  /** A value that starts on the key's (or the list item's) line and must end on it. */
  #inlineValue(start: number, end: number, depth: number, isTasks: boolean, place: Place): unknown {
    const text = this.#text;
    const first = text.charCodeAt(start);
    let value: unknown;
    let stop: number;
    if (first === 0x5b /* [ */ || first === 0x7b /* { */) {
      const flow = this.#flow(start, depth, isTasks);
      value = flow.value;
      stop = flow.end;
    } else if (first === 0x22 /* " */ || first === 0x27 /* ' */) {
      const quoted = this.#quoted(start);
      value = quoted.value;
      stop = quoted.end;
    } else {
      if (isTasks || NOT_PLAIN_START.test(text[start]!)) fail();
      // A plain scalar in block context runs to a comment (` #`) or the line's end, less trailing spaces.
      stop = start;
      for (;;) {
        UNTIL_HASH.lastIndex = stop;
        UNTIL_HASH.test(text);
        stop = UNTIL_HASH.lastIndex;
        if (stop >= end || text.charCodeAt(stop - 1) === 0x20) break;
        stop++; // a `#` inside the scalar, as in `a#b`
      }
      while (stop > start && text.charCodeAt(stop - 1) === 0x20) stop--;
      const source = text.slice(start, stop);
      // `a: b: c` is an error and `a: b:` a nested mapping: both are yaml's to judge.
      if (source.includes(": ") || source.endsWith(":")) fail();
      value = plainScalar(source);
      place.plainEnd = stop;
    }
    if (stop < end && text.charCodeAt(stop) !== 0x20) fail();
    LINE_REST.lastIndex = stop;
    if (!LINE_REST.test(text)) fail();
    return value;
  }

  /** A flow list or mapping that closes on the same line; returns its value and the offset after it. */
  #flow(start: number, depth: number, isTasks: boolean): { value: unknown; end: number } {
    if (depth >= MAX_NESTING_DEPTH) fail();
    const text = this.#text;
    const isList = text.charCodeAt(start) === 0x5b;
    const close = isList ? 0x5d /* ] */ : 0x7d; /* } */
    const list: unknown[] = [];
    const map = newMapping(isTasks);
    if (isList && isTasks) fail();
    const listPlaces = isList && this.#places !== undefined ? keepPlaces(this.#places, list, [] as Place[]) : undefined;
    const mapPlaces = !isList && this.#places !== undefined ? keepPlaces(this.#places, map, new Map<string, Place>()) : undefined;
    let at = skipSpaces(text, start + 1);
    if (text.charCodeAt(at) === close) return { value: isList ? list : map, end: at + 1 };
    /** As #mapping's `written`. */
    let flowWritten: Set<string> | undefined;
    for (;;) {
      if (isList) {
        const item = this.#flowValue(at, depth + 1);
        list.push(item.value);
        listPlaces?.push({ key: -1, value: at, empty: false, plainEnd: item.plainEnd ?? -1 });
        at = item.end;
      } else {
        const keyAt = at;
        let key: string;
        if (isMergeKeyAt(text, at)) {
          flowWritten ??= new Set(Object.keys(map));
          at = this.#merge(map, skipSpaces(text, at + 3), depth);
          // `*a}` is left to yaml.
          if (text.charCodeAt(at) !== 0x20 && text.charCodeAt(at) !== 0x2c) fail();
          at = skipSpaces(text, at);
          const next = text.charCodeAt(at);
          if (next === close) return { value: map, end: at + 1 };
          if (next !== 0x2c /* , */) fail();
          at = skipSpaces(text, at + 1);
          if (text.charCodeAt(at) === close) fail();
          continue;
        }
        if (text.charCodeAt(at) === 0x22 || text.charCodeAt(at) === 0x27) {
          const quoted = this.#quoted(at);
          key = quoted.value;
          if (text.charCodeAt(quoted.end) !== 0x3a || text.charCodeAt(quoted.end + 1) !== 0x20 || quoted.end - at > MAX_KEY_SPAN) fail();
          at = skipSpaces(text, quoted.end + 1);
        } else {
          ({ key, end: at } = plainKey(FLOW_KEY, text, at));
        }
        checkNewKey(map, key, flowWritten);
        const item = this.#flowValue(at, depth + 1);
        setEntry(map, key, item.value);
        mapPlaces?.set(key, { key: keyAt, value: at, empty: false, plainEnd: item.plainEnd ?? -1 });
        at = item.end;
      }
      at = skipSpaces(text, at);
      const next = text.charCodeAt(at);
      if (next === close) return { value: isList ? list : map, end: at + 1 };
      if (next !== 0x2c /* , */) fail();
      at = skipSpaces(text, at + 1);
      // A trailing comma, `[a, ]`, is yaml's to judge.
      if (text.charCodeAt(at) === close) fail();
    }
  }

  #flowValue(start: number, depth: number): { value: unknown; end: number; plainEnd?: number } {
    const text = this.#text;
    const first = text.charCodeAt(start);
    if (first === 0x5b || first === 0x7b) return this.#flow(start, depth, false);
    if (first === 0x22 || first === 0x27) return this.#quoted(start);
    if (NOT_PLAIN_START.test(text[start] ?? "-")) fail();
    FLOW_PLAIN.lastIndex = start;
    const match = FLOW_PLAIN.exec(text);
    if (match === null) fail();
    return { value: plainScalar(match[0]), end: FLOW_PLAIN.lastIndex, plainEnd: FLOW_PLAIN.lastIndex };
  }

  /** A single- or double-quoted scalar that closes on its line. */
  #quoted(start: number): { value: string; end: number } {
    const text = this.#text;
    const pattern = text.charCodeAt(start) === 0x22 ? DOUBLE_QUOTED : SINGLE_QUOTED;
    pattern.lastIndex = start;
    const match = pattern.exec(text);
    if (match === null) fail();
    const body = match[1]!;
    let value: string;
    if (pattern === SINGLE_QUOTED) value = body.includes("''") ? body.replaceAll("''", "'") : body;
    else if (!body.includes("\\")) value = body;
    else {
      // Every backslash must start a known escape; anything else is yaml's to judge.
      let known = 0;
      value = body.replace(ESCAPE, (_, code: string) => {
        known++;
        return code.length === 1 ? SIMPLE_ESCAPES[code]! : String.fromCodePoint(Number.parseInt(code.slice(1), 16));
      });
      if (known !== countBackslashEscapes(body)) fail();
    }
    return { value, end: pattern.lastIndex };
  }

  #isSequenceEntry(line: number): boolean {
    return this.#isSequenceEntryAt(this.#starts[line]!);
  }

  /** `-` followed by a space or the line's end. */
  #isSequenceEntryAt(offset: number): boolean {
    const text = this.#text;
    if (text.charCodeAt(offset) !== 0x2d /* - */) return false;
    const next = text.charCodeAt(offset + 1);
    return next === 0x20 || next === 0x0a || Number.isNaN(next);
  }

  /** After a complete entry, a more indented line would continue a scalar or be an error: yaml's to judge. */
  #expectNotDeeper(indent: number): void {
    if (this.#line < this.#starts.length && this.#indents[this.#line]! > indent) fail();
  }
}

/** toPlain's shapes: the top-level `tasks` mapping is a Map (file order, any id), every other one a null-prototype object. */
type Mapping = Map<string, unknown> | Record<string, unknown>;

function newMapping(isTasks: boolean): Mapping {
  return isTasks ? new Map<string, unknown>() : (Object.create(null) as Record<string, unknown>);
}

/**
 * A key that yaml or toPlain would report (a repeat, `__proto__` as data, one task too many) is theirs to report.
 * Once a merge key has merged keys in, `written` holds the keys written: one merged and written too is no repeat.
 */
function checkNewKey(mapping: Mapping, key: string, written?: Set<string>): void {
  if (mapping instanceof Map) {
    if (mapping.has(key) || mapping.size >= MAX_TASKS) fail();
  } else if ((written === undefined ? Object.hasOwn(mapping, key) : written.has(key)) || key === "__proto__") {
    fail();
  }
  written?.add(key);
}

/** `<<: ` (or `<<:` ending its line, which is yaml's to read): a merge key, written plain, with its space. */
function isMergeKeyAt(text: string, at: number): boolean {
  return text.charCodeAt(at) === 0x3c && text.charCodeAt(at + 1) === 0x3c && text.charCodeAt(at + 2) === 0x3a && text.charCodeAt(at + 3) === 0x20;
}

/** A value's size and height as toPlain counts them (see its #done): each mapping, list and scalar is a node; a scalar's height is 0. */
function measure(value: unknown): { size: number; height: number } {
  if (typeof value !== "object" || value === null) return { size: 1, height: 0 };
  let size = 1;
  let height = 0;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    const inner = measure(item);
    size += inner.size;
    height = Math.max(height, inner.height);
  }
  return { size, height: height + 1 };
}

function setEntry(mapping: Mapping, key: string, value: unknown): void {
  if (mapping instanceof Map) mapping.set(key, value);
  else mapping[key] = value;
}

/** A plain key at `at` (PLAIN_KEY or FLOW_KEY), and the offset after its `:` and spaces. A null key is yaml's to report. */
function plainKey(pattern: RegExp, text: string, at: number): { key: string; end: number } {
  pattern.lastIndex = at;
  const match = pattern.exec(text);
  if (match === null) fail();
  const key = match[1]!;
  if (NULL.test(key) || key.length > MAX_KEY_SPAN) fail();
  return { key, end: pattern.lastIndex };
}

function fail(): never {
  throw NOT_SIMPLE;
}

function skipSpaces(text: string, at: number): number {
  while (text.charCodeAt(at) === 0x20) at++;
  return at;
}

/** How many escapes a double-quoted body holds (`\\` counts once). */
function countBackslashEscapes(body: string): number {
  let count = 0;
  for (let index = body.indexOf("\\"); index !== -1; index = body.indexOf("\\", index + 2)) count++;
  return count;
}

/** A plain scalar's value under the core schema; forms other than null, `true`, `false`, a decimal int as JavaScript writes it, and text are left to yaml. */
function plainScalar(source: string): unknown {
  const first = source.charCodeAt(0);
  // Only these can start a null, a bool or a number.
  if (first === 0x7e || first === 0x6e || first === 0x4e || first === 0x74 || first === 0x54 || first === 0x66 || first === 0x46 || first <= 0x39) {
    if (NULL.test(source)) return null;
    // Only as written: `True`, `+1`, `01` or an integer past 2^53 is yaml's to read (toPlain keeps an id's text as written; env refuses them).
    if (BOOL.test(source)) {
      if (source !== "true" && source !== "false") fail();
      return first === 0x74;
    }
    if (INT.test(source)) {
      const value = Number.parseInt(source, 10);
      if (!Number.isSafeInteger(value) || String(value) !== source) fail();
      return value;
    }
    if (OTHER_NUMBER.test(source)) fail();
  }
  return source;
}
