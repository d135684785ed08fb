import { isAlias, isMap, isNode, isScalar, isSeq, visit, type Alias, type Document, type Node, type Pair, type YAMLMap } from "yaml";
import type { FoldedSource } from "./folded-run.js";
import { isMergeKey, keyText } from "./to-plain.js";

/** A path into the workflow data, as zod reports it: keys and list indexes. */
export type DataPath = ReadonlyArray<PropertyKey>;

/** Finds where a data path is in the source, for messages. */
export interface SourceLocator {
  offsetOf(path: DataPath, at?: "value" | "key"): number;
  /** Whether the value at `path` is a plain scalar that a comment (` #`) ends on its line. */
  endsAtComment(path: DataPath): boolean;
  /**
   * The comment that takes the place of the value at `path` (`run: # TODO`: `# TODO`), where that
   * value is a mapping's, left empty, and its key's line goes on with a comment; else undefined.
   */
  commentInsteadOf(path: DataPath): string | undefined;
  /** The text of the value at `path` where that is a plain scalar (`~` for `cwd: ~`); else undefined. */
  plainSourceOf(path: DataPath): string | undefined;
  /** The text of the value at `path` where YAML folds its lines: a plain scalar over several lines, or a `>` block; else undefined. */
  foldedSourceOf(path: DataPath): FoldedSource | undefined;
  /** The text written from `offset`, at most `length` characters (a key's, as quoted). */
  textAt(offset: number, length: number): string;
}

/**
 * Maps a data path (e.g. ["tasks", "test", "retries"]) back to a source offset
 * by walking the YAML node tree. The `tasks` mapping is indexed once, so
 * locating a problem in a 40,000-task file stays O(path length).
 */
export class Locator implements SourceLocator {
  readonly #root: Node | null;
  readonly #aliasTargets: Map<Alias, Node>;
  readonly #tasksMap: YAMLMap | undefined;
  /** The top level's `tasks` pair, found once: a file's top level may hold thousands of keys (`x-` anchors), each path's first step looked at all of them. */
  readonly #tasksPair: Pair | undefined;
  readonly #tasksIndex = new Map<string, Pair>();
  readonly #document: Document.Parsed;
  /** The pair each node is the value of, once an alias's target needs its key (see #pairOfValue). */
  #valuePairs: Map<Node, Pair> | undefined;

  readonly #text: string;

  constructor(document: Document.Parsed, aliasTargets: Map<Alias, Node>, text = "") {
    this.#document = document;
    this.#aliasTargets = aliasTargets;
    this.#text = text;
    this.#root = this.#resolve(document.contents);
    this.#tasksPair = isMap(this.#root) ? this.#findPair(this.#root, "tasks") : undefined;
    const tasks = this.#resolve(this.#tasksPair?.value);
    if (isMap(tasks)) {
      this.#tasksMap = tasks;
      for (const pair of tasks.items.some((item) => isMergeKey(item.key)) ? this.#pairsOf(tasks) : tasks.items) {
        const id = keyText(pair.key);
        if (id !== undefined && !this.#tasksIndex.has(id)) this.#tasksIndex.set(id, pair);
      }
    }
  }

  /**
   * Offset of the value at `path` (or of its key, with `at: "key"`). When the
   * path does not exist, e.g. a missing field, the offset of the deepest key
   * that does, so the user is pointed at the task that lacks it.
   */
  offsetOf(path: DataPath, at: "value" | "key" = "value"): number {
    let node = this.#root;
    let fallback = node?.range?.[0] ?? 0;
    for (const [index, segment] of path.entries()) {
      if (isMap(node)) {
        const name = String(segment);
        const pair = this.#pairIn(node, name);
        const keyOffset = (pair?.key as Node | null | undefined)?.range?.[0];
        if (pair === undefined || keyOffset === undefined) return fallback;
        if (index === path.length - 1 && at === "key") return keyOffset;
        fallback = keyOffset;
        node = this.#resolve(pair.value);
      } else if (isSeq(node) && typeof segment === "number") {
        node = this.#resolve(node.items[segment]);
        if (node?.range) fallback = node.range[0];
      } else {
        return fallback;
      }
    }
    // An empty value (`run:`) has no text of its own: point at its key instead; the top level, which has none, at its tag or anchor.
    if (!node?.range || (isScalar(node) && node.range[0] === node.range[1])) return path.length === 0 ? this.#rootPropsStart(fallback) : fallback;
    return node.range[0];
  }

  /**
   * Where the document's content starts (its tag or anchor, `!!null`), past its `---` and the
   * comments and blank lines before it: the top level's empty value starts after them, at the
   * end of its line (`!!null` alone was told at its column 7). `end`, the value's, where nothing
   * comes before it.
   */
  #rootPropsStart(end: number): number {
    const start = this.#document.range?.[0] ?? 0;
    DOCUMENT_LEAD.lastIndex = start;
    const lead = DOCUMENT_LEAD.exec(this.#text)?.[0].length ?? 0;
    return Math.min(start + lead, end);
  }

  endsAtComment(path: DataPath): boolean {
    const node = this.#nodeAt(path);
    if (!isScalar(node) || node.type !== "PLAIN" || node.range === undefined || node.range === null) return false;
    COMMENT_AFTER.lastIndex = node.range[1];
    return COMMENT_AFTER.test(this.#text);
  }

  /** The node at `path`, through aliases, and the pair whose value it is (where the last step is a mapping's key); undefined where there is none. */
  #pairAt(path: DataPath): { node: Node | null; pair: Pair | undefined } | undefined {
    let node = this.#root;
    let pair: Pair | undefined;
    for (const segment of path) {
      pair = undefined;
      if (isMap(node)) {
        pair = this.#pairIn(node, String(segment));
        node = this.#resolve(pair?.value);
      } else if (isSeq(node) && typeof segment === "number") node = this.#resolve(node.items[segment]);
      else return undefined;
    }
    return { node, pair };
  }

  commentInsteadOf(path: DataPath): string | undefined {
    const found = this.#pairAt(path);
    if (found === undefined) return undefined;
    const { node, pair } = found;
    const keyEnd = (pair?.key as Node | null | undefined)?.range?.[1];
    // The value left empty: a null with no text of its own (not `~` or `null` written out).
    if (keyEnd === undefined || !isScalar(node) || node.value !== null || node.range?.[0] !== node.range?.[1]) return undefined;
    COMMENT_INSTEAD.lastIndex = keyEnd;
    return COMMENT_INSTEAD.exec(this.#text)?.[1]?.trimEnd();
  }

  plainSourceOf(path: DataPath): string | undefined {
    const node = this.#nodeAt(path);
    // An empty value (`cwd:`) has no text of its own.
    if (!isScalar(node) || node.type !== "PLAIN" || node.range === undefined || node.range === null || node.range[0] === node.range[1]) return undefined;
    return this.#text.slice(node.range[0], node.range[1]);
  }

  foldedSourceOf(path: DataPath): FoldedSource | undefined {
    const { node = null, pair } = this.#pairAt(path) ?? {};
    if (!isScalar(node) || (node.type !== "PLAIN" && node.type !== "BLOCK_FOLDED") || node.range === undefined || node.range === null) return undefined;
    const source = this.#text.slice(node.range[0], node.range[1]);
    // A plain value on one line has nothing to fold.
    if (node.type === "PLAIN" && !source.includes("\n")) return undefined;
    // A `>2` block's lines are indented 2 more than its key (the mapping it is in): where it is written, so through an
    // alias the key of its anchor's pair (`x-cmd: &cmd >2`). One that is no mapping's value (`- &cmd >2`) has none here.
    const keyPair = node.type !== "BLOCK_FOLDED" ? undefined : isAlias(pair?.value) ? this.#pairOfValue(node) : pair;
    const keyStart = (keyPair?.key as Node | null | undefined)?.range?.[0];
    const keyColumn = keyStart === undefined ? undefined : keyStart - (this.#text.lastIndexOf("\n", keyStart - 1) + 1);
    return { offset: node.range[0], source, block: node.type === "BLOCK_FOLDED", ...(keyColumn === undefined ? {} : { keyColumn }) };
  }

  textAt(offset: number, length: number): string {
    return this.#text.slice(offset, offset + length);
  }

  /** The pair whose value `node` is, anywhere in the document; the first call indexes every pair (only an alias's `>2` block asks). */
  #pairOfValue(node: Node): Pair | undefined {
    if (this.#valuePairs === undefined) {
      const pairs = new Map<Node, Pair>();
      visit(this.#document, {
        Pair: (_, pair) => {
          if (isNode(pair.value) && !pairs.has(pair.value)) pairs.set(pair.value, pair);
        },
      });
      this.#valuePairs = pairs;
    }
    return this.#valuePairs.get(node);
  }

  /** The node at `path`, through aliases; null where there is none. */
  #nodeAt(path: DataPath): Node | null {
    return this.#pairAt(path)?.node ?? null;
  }

  /** #findPair, through the indexes of the top level's `tasks` and of the tasks. */
  #pairIn(map: YAMLMap, name: string): Pair | undefined {
    if (map === this.#tasksMap) return this.#tasksIndex.get(name);
    if (map === this.#root && name === "tasks") return this.#tasksPair;
    return this.#findPair(map, name);
  }

  /** The pair that gives `name` its value in `map`: its own, else the first a merge key (`<<`) brings, as toPlain merges them. */
  #findPair(map: YAMLMap, name: string): Pair | undefined {
    const own = map.items.find((pair) => keyText(pair.key) === name);
    if (own !== undefined || !map.items.some((pair) => isMergeKey(pair.key))) return own;
    for (const pair of this.#pairsOf(map)) if (keyText(pair.key) === name) return pair;
    return undefined;
  }

  /**
   * The pairs of `map`, its own first, then those of each mapping its merge keys name, in the
   * order they are merged: the first pair of each key is the one that gives its value. A chain
   * of merges is as deep as toPlain let it be (MAX_NESTING_DEPTH), and an alias it refused has
   * no target here, so none is followed.
   */
  *#pairsOf(map: YAMLMap): Generator<Pair> {
    yield* map.items;
    for (const pair of map.items) {
      if (!isMergeKey(pair.key)) continue;
      const value = this.#resolve(pair.value);
      for (const item of isSeq(value) ? value.items : [value]) {
        const source = this.#resolve(item);
        if (isMap(source)) yield* this.#pairsOf(source);
      }
    }
  }

  #resolve(node: unknown): Node | null {
    if (isAlias(node)) return this.#aliasTargets.get(node) ?? node;
    return isScalar(node) || isMap(node) || isSeq(node) ? node : null;
  }
}

/** Spaces or tabs, then a comment, on the line where a value ends. */
const COMMENT_AFTER = /[ \t]+#/y;

/** After a key, its `:`, then spaces or tabs and a comment where the value would be. */
const COMMENT_INSTEAD = /[ \t]*:[ \t]+(#[^\r\n]*)/y;

/** A document's start before its content: its `---`, then blank space, line breaks and whole comments (a BOM too). */
const DOCUMENT_LEAD = /(?:---(?=[ \t\r\n]|$))?(?:[ \t\r\n\uFEFF]|#[^\r\n]*)*/y;
