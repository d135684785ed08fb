import { isAlias, isMap, isScalar, isSeq, type Alias, type Document, type Node, type Pair, type YAMLMap } from "yaml";
import { MAX_ALIAS_EXPANSION, MAX_NESTING_DEPTH } from "./limits.js";
import type { ProblemList } from "./problem-list.js";

/** Plain data from a YAML document, plus where each alias pointed (for error positions). */
export interface PlainDocument {
  value: unknown;
  aliasTargets: Map<Alias, Node>;
}

/** The text of a mapping key: strings as is, plain numbers and booleans as written (`1:` is "1"); undefined otherwise. */
export function keyText(key: unknown): string | undefined {
  if (!isScalar(key)) return undefined;
  if (typeof key.value === "string") return key.value;
  if (typeof key.value === "number" || typeof key.value === "boolean") return key.source ?? String(key.value);
  return undefined;
}

/**
 * Converts a YAML document into plain data, reporting duplicate keys (O(1) per
 * key; yaml's own check is quadratic), keys that are not text, unknown or
 * self-containing aliases, and alias expansion past MAX_ALIAS_EXPANSION
 * ("billion laughs"). Mappings become null-prototype objects, so a key such as
 * `constructor` is just data; the top-level `tasks` mapping becomes a Map, which
 * keeps file order even for numeric ids.
 */
export function toPlain(document: Document.Parsed, problems: ProblemList): PlainDocument {
  const builder = new PlainBuilder(problems);
  return { value: builder.convert(document.contents, 0, false), aliasTargets: builder.aliasTargets };
}

class PlainBuilder {
  readonly aliasTargets = new Map<Alias, Node>();
  readonly #anchors = new Map<string, Node>();
  readonly #inProgress = new Set<Node>();
  readonly #done = new Map<Node, { value: unknown; size: number; height: number }>();
  readonly #problems: ProblemList;
  #expanded = 0;
  #bombed = false;
  #size = 0;
  /** Height of the subtree converted last; lets aliases enforce the depth limit. */
  #height = 0;

  constructor(problems: ProblemList) {
    this.#problems = problems;
  }

  convert(node: unknown, depth: number, isTasks: boolean): unknown {
    this.#height = 0;
    if (isAlias(node)) return this.#expand(node, depth);
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return null;
    const anchored = node.anchor ? node : undefined;
    const sizeBefore = this.#size;
    if (anchored?.anchor) {
      this.#anchors.set(anchored.anchor, anchored);
      this.#inProgress.add(anchored);
    }
    this.#size++;
    let value: unknown;
    if (isScalar(node)) value = node.value;
    else if (isMap(node)) value = this.#convertMap(node, depth, isTasks);
    else value = this.#convertList(node.items, depth);
    if (anchored) {
      this.#inProgress.delete(anchored);
      this.#done.set(anchored, { value, size: this.#size - sizeBefore, height: this.#height });
    }
    return value;
  }

  #convertList(items: unknown[], depth: number): unknown[] {
    let height = 0;
    const list = items.map((item) => {
      const value = this.convert(item, depth + 1, false);
      height = Math.max(height, this.#height);
      return value;
    });
    this.#height = height + 1;
    return list;
  }

  #convertMap(map: YAMLMap, depth: number, isTasks: boolean): unknown {
    const result = isTasks ? new Map<string, unknown>() : (Object.create(null) as Record<string, unknown>);
    const has = (key: string) => (result instanceof Map ? result.has(key) : Object.hasOwn(result, key));
    let height = 0;
    for (const pair of map.items) {
      const key = this.#checkKey(pair, map, has, isTasks);
      const value = this.convert(pair.value, depth + 1, depth === 0 && key === "tasks");
      height = Math.max(height, this.#height);
      if (key === undefined) continue;
      if (result instanceof Map) result.set(key, value);
      else result[key] = value;
    }
    this.#height = height + 1;
    return result;
  }

  #checkKey(pair: Pair, map: YAMLMap, has: (key: string) => boolean, isTasks: boolean): string | undefined {
    const keyNode = pair.key as Node | null;
    const offset = keyNode?.range?.[0] ?? (pair.value as Node | null)?.range?.[0] ?? map.range?.[0] ?? 0;
    const key = keyText(keyNode);
    if (key === undefined) {
      const what = isMap(keyNode) || isSeq(keyNode) ? "a mapping or list" : isAlias(keyNode) ? "an alias" : "empty";
      this.#problems.atOffset(offset, `a key must be plain text, not ${what}`);
      return undefined;
    }
    if (!isTasks && key === "__proto__") {
      this.#problems.atOffset(offset, 'the key "__proto__" is not allowed');
      return undefined;
    }
    if (has(key)) {
      const first = map.items.find((other) => keyText(other.key) === key)?.key as Node | undefined;
      const where = first?.range ? ` (first defined at ${this.#problems.lineCol(first.range[0])})` : "";
      this.#problems.atOffset(offset, `duplicate ${isTasks ? "task id" : "key"} "${key}"${where}; each must appear once`);
      return undefined;
    }
    return key;
  }

  #expand(alias: Alias, depth: number): unknown {
    if (this.#bombed) return null;
    const offset = alias.range?.[0] ?? 0;
    const target = this.#anchors.get(alias.source);
    if (target === undefined) {
      this.#problems.atOffset(offset, `unknown alias *${alias.source}; define &${alias.source} before using it`);
      return null;
    }
    const done = this.#done.get(target);
    if (done === undefined || this.#inProgress.has(target)) {
      this.#problems.atOffset(offset, `alias *${alias.source} refers to a node that contains it`);
      return null;
    }
    this.#expanded += done.size;
    if (this.#expanded > MAX_ALIAS_EXPANSION) {
      this.#problems.atOffset(offset, `aliases expand to more than ${MAX_ALIAS_EXPANSION.toLocaleString("en-US")} nodes (an alias bomb?)`);
      // One report is enough: later aliases are skipped silently.
      this.#bombed = true;
      return null;
    }
    if (depth + done.height > MAX_NESTING_DEPTH) {
      this.#problems.atOffset(offset, `alias *${alias.source} nests deeper than ${MAX_NESTING_DEPTH} levels`);
      return null;
    }
    this.aliasTargets.set(alias, target);
    this.#size += done.size;
    this.#height = done.height;
    // Shared, not copied: the value is never mutated, and sharing keeps expansion O(1).
    return done.value;
  }
}
