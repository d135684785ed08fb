import { isAlias, isMap, isScalar, isSeq, type Alias, type Document, type Node, type Pair, type Scalar, type YAMLMap, type YAMLSeq } from "yaml";
import { DURATION_FIELDS, INTEGER_RANGES, MAX_ALIAS_EXPANSION, MAX_NESTING_DEPTH } from "./limits.js";
import { parseDuration, secondsInDigits } from "./duration.js";
import { formatMs } from "../engine/errors.js";
import type { ProblemList } from "./problem-list.js";
import { describeValue, quote, readsAsNull } from "./report-issues.js";
import { isTaskId, TASK_ID_EXPECTED } from "../task-id.js";

/** A plain scalar YAML's core schema reads as a number: an integer (decimal, 0o, 0x) or a float, not .inf or .nan. */
const CORE_NUMBER = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$/;

/** Plain data from a YAML document, plus where each alias pointed (for error positions). */
export interface PlainDocument {
  value: unknown;
  aliasTargets: Map<Alias, Node>;
}

/**
 * The text of a mapping key: strings as is, plain numbers, booleans and nulls as written
 * (`1:` is "1", `1.0:` "1.0", `null:` "null"); undefined otherwise (an empty key, a mapping).
 */
export function keyText(key: unknown): string | undefined {
  return isScalar(key) ? scalarText(key) : undefined;
}

/** A scalar as text: a string as is, a plain number, boolean or null as written; undefined for an empty or binary one. */
function scalarText(node: Scalar): string | undefined {
  const value = node.value;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return node.source ?? String(value);
  if (value === null && typeof node.source === "string" && node.source !== "") return node.source;
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
export function toPlain(document: Document.Parsed, problems: ProblemList, text = ""): PlainDocument {
  const builder = new PlainBuilder(problems, text);
  return { value: builder.convert(document.contents, 0, undefined), aliasTargets: builder.aliasTargets };
}

/**
 * What a node is, where that changes how it is read: the top-level `tasks` mapping, a task
 * in it, ids (a task's `dependsOn`), whose numbers and booleans are read as written, as
 * task ids are as keys (`dependsOn: [1]` names the task `1:`, `[1.0]` the task `1.0:`),
 * `defaults`, and an `env` mapping (see #checkEnvValue).
 */
type Role = "tasks" | "task" | "ids" | "defaults" | "env" | "backoff" | undefined;

/**
 * A `dependsOn` entry: a number or boolean YAML would write otherwise (`1.0`, `0x1`, `True`)
 * as its text; others as they are, as the fast reader gives them (the schema makes them text).
 */
function idValue(node: Scalar): unknown {
  const value = node.value;
  if (typeof value !== "number" && typeof value !== "boolean") return value;
  return node.source !== undefined && node.source !== String(value) ? node.source : value;
}

/** The role of the value of `key` in a mapping of role `role` at `depth`. */
function roleOf(key: string | undefined, depth: number, role: Role): Role {
  if (depth === 0) return key === "tasks" ? "tasks" : key === "defaults" ? "defaults" : key === "env" ? "env" : undefined;
  if (role === "tasks") return "task";
  if (role === "task" && key === "dependsOn") return "ids";
  if ((role === "task" || role === "defaults") && key === "backoff") return "backoff";
  return (role === "task" || role === "defaults") && key === "env" ? "env" : undefined;
}

/**
 * What a field's value must be, where the advice on a `!` before it (YAML's tag for text, which
 * it drops) depends on it: a command (`run`, where the `!` may be a shell's "not"), text (`name`,
 * `cwd`), an env value (text, or an integer or true/false as written), a task id (`dependsOn`),
 * or "asIs" (another field of the format: a number, a duration, a word, which the value without
 * the `!` is, or is wrong as either way). Undefined for a key the format does not have.
 */
export type Takes = "command" | "text" | "env" | "id" | "asIs" | undefined;

/** An integer as a number field writes it: digits alone. */
const DIGITS = /^[0-9]+$/;

/** Whether `key` is one of `keys`. */
function isOneOf(key: string | undefined, keys: readonly string[]): boolean {
  return key !== undefined && keys.includes(key);
}

/** A number of seconds as a duration writes it (see DURATION_PATTERN): digits, with a point and digits after it if need be. */
const PLAIN_SECONDS = /^[0-9]+(?:\.[0-9]+)?$/;

/** The fields of a task, and of `defaults`, that take other than text or a command (see Takes). */
const AS_IS_FIELDS = new Set(["type", "priority", "retries", "retryOn", "backoff", "timeout", "runAt", "delay", "env", "dependsOn"]);

/**
 * What to say of a value where the field takes a mapping (`tasks`, a task, `defaults`, `env`,
 * `backoff`), as the schema words it: the field and the mapping it takes. A `!` before a scalar
 * there is neither a shell's "not" nor to be dropped: the value is wrong with it or without it.
 */
function mappingOf(key: string | undefined, depth: number, role: Role, taskId: string | undefined): { field: string; mapping: string } | undefined {
  if (key === undefined) return undefined;
  if (depth === 0) {
    if (key === "tasks") return { field: "`tasks`", mapping: "a mapping of task id to task" };
    if (key === "defaults") return { field: "`defaults`", mapping: "a mapping of task fields" };
    return key === "env" ? { field: "`env`", mapping: "a mapping of variable names to values" } : undefined;
  }
  if (role === "tasks") return { field: `task ${quote(key)}`, mapping: "a mapping with at least `run`" };
  if (role !== "task" && role !== "defaults") return undefined;
  const field = role === "task" ? `\`${key}\` of task ${quote(taskId ?? "")}` : `\`defaults.${key}\``;
  if (key === "env") return { field, mapping: "a mapping of variable names to values" };
  return key === "backoff" ? { field, mapping: "a mapping with `base` and/or `max`" } : undefined;
}

/** What the value of `key` in a mapping of role `role` at `depth` takes (see Takes). */
function takesOf(key: string | undefined, depth: number, role: Role): Takes {
  if (key === undefined) return undefined;
  if (role === "env") return "env";
  if (depth === 0) return key === "name" ? "text" : key === "concurrency" || key === "failFast" || key === "env" || key === "defaults" ? "asIs" : undefined;
  if (role === "task" && key === "run") return "command";
  if (role === "task" || role === "defaults") return key === "cwd" ? "text" : AS_IS_FIELDS.has(key) ? "asIs" : undefined;
  // `backoff: { base: ! 5 }`.
  return key === "base" || key === "max" ? "asIs" : undefined;
}

/**
 * How YAML's core schema reads a plain scalar written `text`, when it is not text: "a number",
 * "the number 16" (written 0x10), "a boolean", "null (no value)"; undefined for text.
 */
function plainReading(text: string): string | undefined {
  if (readsAsNull(text)) return "null (no value)";
  if (/^(?:true|True|TRUE|false|False|FALSE)$/.test(text)) return "a boolean";
  if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(text)) return "a number";
  if (!CORE_NUMBER.test(text)) return undefined;
  const rewritten = numberRewritten(text);
  return rewritten === undefined ? "a number" : `the number ${rewritten}`;
}

/** The number YAML's core schema reads in `text`, as JavaScript writes it (`0x10`: "16", `2.0`: "2"), where that is not `text`; undefined for text or a number so written. */
export function numberRewritten(text: string): string | undefined {
  if (!CORE_NUMBER.test(text)) return undefined;
  const number = Number(text);
  return Number.isNaN(number) || String(number) === text ? undefined : String(number);
}

/** Whether a field that takes `takes` takes the plain scalar written `text` as it would be read without a `!` before it. */
function takesPlain(takes: Takes, text: string): boolean {
  const reading = plainReading(text);
  if (reading === undefined || takes === undefined || takes === "asIs") return true;
  if (takes === "id") return !reading.startsWith("null");
  // An env value: an integer or true/false as written (see #checkEnvValue).
  if (takes === "env") return text === "true" || text === "false" || (reading === "a number" && Number.isSafeInteger(Number(text)));
  return false;
}

/** What a field that takes `takes` expects, for a message (see #refuseBareTag). */
const EXPECTED: Record<"command" | "text" | "env" | "id", string> = {
  command: "a command string",
  text: "text",
  env: "an env value (text, or an integer or true/false as written)",
  id: "a task id",
};

/**
 * Where a field that takes `takes` would not take the plain scalar written `text` as YAML reads it
 * (`run: 2`, `cwd: true`, an env value `1.10`): what to say of it once quoted advice is given
 * (`unquoted, YAML reads 2 as a number, where a command string is expected`); undefined where it would.
 */
export function misreadUnquoted(takes: Takes, text: string): string | undefined {
  if (takes === undefined || takes === "asIs" || takesPlain(takes, text)) return undefined;
  return `unquoted, YAML reads ${text} as ${plainReading(text)!}, where ${EXPECTED[takes]} is expected`;
}

class PlainBuilder {
  readonly aliasTargets = new Map<Alias, Node>();
  readonly #anchors = new Map<string, Node>();
  readonly #inProgress = new Set<Node>();
  /** Each anchored node once converted: its value in `role`, the role of its first use. */
  readonly #done = new Map<Node, { value: unknown; size: number; height: number; role: Role; unused: boolean }>();
  readonly #problems: ProblemList;
  readonly #keyIndexes = new Map<YAMLMap, Map<string, Node>>();
  /** The id of the task being converted, and the label of the env mapping being converted (for messages). */
  #taskId: string | undefined;
  #envField = "`env";
  /** The label of the backoff mapping being converted (for messages). */
  #backoffField = "`backoff";
  /** What the value being converted takes, from the key it is the value of (see Takes). */
  #takes: Takes;
  /** Whether the value being converted is an item of a list (`dependsOn: [! null]`), not a key's value itself (`dependsOn: ! null`). */
  #listItem = false;
  /** The mapping the value being converted must be, from the key it is the value of (see mappingOf). */
  #mapping: { field: string; mapping: string } | undefined;
  /** Where the key of the value being converted starts, when it is a mapping's value of a field the format has: where the schema tells of that value left empty. */
  #fieldKey: number | undefined;
  #expanded = 0;
  #bombed = false;
  #size = 0;
  /** Height of the subtree converted last; lets aliases enforce the depth limit. */
  #height = 0;
  /** The keys a mapping merged in next gives to none: written in the mapping it is merged into, or given by a mapping merged before. */
  #overridden: ReadonlySet<string> | undefined;
  /** Whether the value being converted is merged in under such a key, its number not used: not told to be written in digits. */
  #unused = false;

  /** The document's text, where a tag's `!` is found (yaml's ranges start at the value). */
  readonly #text: string;

  constructor(problems: ProblemList, text: string) {
    this.#problems = problems;
    this.#text = text;
  }

  convert(node: unknown, depth: number, role: Role): unknown {
    this.#height = 0;
    if (isAlias(node)) return this.#expand(node, depth, role);
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return null;
    const anchored = node.anchor ? node : undefined;
    const sizeBefore = this.#size;
    // Converted in part unused (see #overridden), its numbers are checked again where an alias uses it.
    const unused = this.#unused || (this.#overridden !== undefined && isMap(node));
    if (anchored?.anchor) {
      this.#anchors.set(anchored.anchor, anchored);
      this.#inProgress.add(anchored);
    }
    const value = this.#convertNode(node, depth, role);
    if (anchored) {
      this.#inProgress.delete(anchored);
      this.#done.set(anchored, { value, size: this.#size - sizeBefore, height: this.#height, role, unused });
    }
    return value;
  }

  #convertNode(node: Scalar | YAMLMap | YAMLSeq, depth: number, role: Role): unknown {
    this.#size++;
    if (isScalar(node)) {
      if (node.tag === "!" && role !== "ids" && this.#mapping !== undefined) this.#refuseBareTagForMapping(node, this.#mapping);
      else if (node.tag === "!") this.#refuseBareTag(node, role === "ids" ? "id" : this.#takes);
      return role === "ids" ? idValue(node) : node.value;
    }
    if (isMap(node)) return this.#convertMap(node, depth, role);
    return this.#convertList(node.items, depth, role === "ids" ? "ids" : undefined);
  }

  #convertList(items: unknown[], depth: number, role: Role): unknown[] {
    let height = 0;
    // Each item takes what the list's key takes its items to be (`retryOn: [! 1]`), whatever an item before it held.
    const takes = this.#takes;
    this.#mapping = undefined;
    this.#fieldKey = undefined;
    const list = items.map((item) => {
      this.#takes = takes;
      this.#listItem = true;
      const value = this.convert(item, depth + 1, role);
      height = Math.max(height, this.#height);
      return value;
    });
    this.#height = height + 1;
    return list;
  }

  #convertMap(map: YAMLMap, depth: number, role: Role): unknown {
    const isTasks = role === "tasks";
    const overridden = this.#overridden;
    this.#overridden = undefined;
    const result: Mapping = isTasks ? new Map<string, unknown>() : (Object.create(null) as Record<string, unknown>);
    /** The keys written in this mapping, apart once a `<<` merges others in: only these can be duplicates. */
    let written: Set<string> | undefined;
    const has = (key: string) => written?.has(key) ?? hasKey(result, key);
    let height = 0;
    /** Some `<<` merged in nothing of what it named, with a problem said there (`<<: *nope`, `<<: 3`). */
    let mergeRefused = false;
    for (const pair of map.items) {
      if (isMergeKey(pair.key)) {
        written ??= new Set(result instanceof Map ? result.keys() : Object.keys(result));
        this.#takes = undefined;
        this.#mapping = undefined;
        const merged = this.#merge(pair, result, depth, role, map);
        height = Math.max(height, merged.height);
        mergeRefused ||= merged.refused;
        continue;
      }
      const key = this.#checkKey(pair, map, has, isTasks);
      const unused = this.#unused;
      this.#unused ||= key !== undefined && overridden?.has(key) === true;
      const valueRole = roleOf(key, depth, role);
      if (isTasks) this.#taskId = key;
      if (valueRole === "backoff") this.#backoffField = role === "task" ? `task ${quote(this.#taskId ?? "")}: \`backoff` : "`defaults.backoff";
      if (valueRole === "env") this.#envField = role === "task" ? `task ${quote(this.#taskId ?? "")}: \`env` : role === "defaults" ? "`defaults.env" : "`env";
      this.#takes = takesOf(key, depth, role);
      this.#listItem = false;
      this.#mapping = mappingOf(key, depth, role, this.#taskId);
      this.#fieldKey = this.#takes !== undefined || this.#mapping !== undefined ? ((pair.key as Node | null)?.range?.[0] ?? undefined) : undefined;
      if (role === "env" && key !== undefined) this.#checkEnvValue(isAlias(pair.value) ? this.#anchors.get(pair.value.source) : pair.value, key);
      const duration =
        (role === "task" || role === "defaults") && isOneOf(key, DURATION_FIELDS.task)
          ? role === "task"
            ? `task ${quote(this.#taskId ?? "")}: \`${key}\``
            : `\`defaults.${key}\``
          : role === "backoff" && isOneOf(key, DURATION_FIELDS.backoff)
            ? `${this.#backoffField}.${key}\``
            : undefined;
      if (duration !== undefined) this.#checkDurationNumber(isAlias(pair.value) ? this.#anchors.get(pair.value.source) : pair.value, duration, key === "timeout");
      const integer = depth === 0 && key === "concurrency" ? "`concurrency`" : (role === "task" || role === "defaults") && (key === "retries" || key === "retryOn") ? (role === "task" ? `task ${quote(this.#taskId ?? "")}: \`${key}\`` : `\`defaults.${key}\``) : undefined;
      if (integer !== undefined) {
        const value = isAlias(pair.value) ? this.#anchors.get(pair.value.source) : pair.value;
        // retryOn's exit codes, each.
        const [min, max] = INTEGER_RANGES[key as keyof typeof INTEGER_RANGES];
        const items = isSeq(value) ? value.items : [value];
        for (const [index, item] of items.entries()) this.#checkIntegerNumber(isAlias(item) ? this.#anchors.get(item.source) : item, isSeq(value) ? `${integer.slice(0, -1)}[${index}]\`` : integer, min, max);
      }
      const value = this.convert(pair.value, depth + 1, valueRole);
      this.#unused = unused;
      height = Math.max(height, this.#height);
      if (key === undefined) continue;
      if (written !== undefined) {
        written.add(key);
        // A task merged in and written too takes the place it is written at.
        if (result instanceof Map) result.delete(key);
      }
      setKey(result, key, value);
    }
    this.#height = height + 1;
    // Every key refused, each with its problem, or a merge whose problem was said: the mapping is not "empty" to its
    // reader (`tasks: { <<: *nope }` was told both). One that merged nothing in without one (`<<: *empty`) is.
    if (map.items.length > 0 && (written === undefined || mergeRefused) && (result instanceof Map ? result.size === 0 : Object.keys(result).length === 0)) this.#problems.explained(map.range?.[0] ?? 0);
    // Beside other keys too, a refused merge may have been meant to bring what is missing (`run`): said once, as the merge.
    else if (mergeRefused) this.#problems.missingExplained(map.range?.[0] ?? 0);
    return result;
  }

  /**
   * A merge key (`<<: *base`, `<<: [*a, *b]`, `<<: { retries: 2 }`), as YAML 1.1 merges: each
   * mapping it names is read in the role of the mapping it is merged into (a task's fields, the
   * tasks, an `env`) and its keys added where that mapping does not have them yet, so the keys
   * written in the mapping win (those below the `<<` replace what it merged), and of the mappings
   * merged, the first to give a key wins; what a mapping merged gives to none is not used, and its
   * numbers not told to be written in digits (see #overridden). Anything else it names is refused at its place. Returns
   * the height of what was merged, which the mapping adds one to: each merge counts as a level of
   * nesting, so a chain of merges is held to MAX_NESTING_DEPTH as one of mappings is (reading it
   * again in another role, or finding a key's place through it, recurses); and whether something
   * it names was refused, its problem said.
   */
  #merge(pair: Pair, result: Mapping, depth: number, role: Role, into: YAMLMap): { height: number; refused: boolean } {
    const value = pair.value;
    let items: unknown[] = [value];
    /** The alias of a list of mappings (`<<: *sources`), whose items are merged. */
    let list: Alias | undefined;
    if (isSeq(value)) items = value.items;
    else if (isAlias(value) && isSeq(this.#anchors.get(value.source))) {
      const target = this.#reach(value, depth);
      if (target === undefined) return { height: 0, refused: true };
      list = value;
      items = (target as YAMLSeq).items;
    }
    let height = 0;
    let refused = false;
    const written = into.items.filter((written) => !isMergeKey(written.key)).map((written) => keyText(written.key));
    for (const item of items) {
      this.#overridden = new Set([...written.filter((key) => key !== undefined), ...(result instanceof Map ? result.keys() : Object.keys(result))]);
      const merged = this.convert(item, depth, role);
      this.#overridden = undefined;
      height = Math.max(height, this.#height);
      // A mapping read here is a Map (the tasks) or an object with no prototype; a list, a Date (!!timestamp) or binary data is none.
      if (merged instanceof Map || (typeof merged === "object" && merged !== null && Object.getPrototypeOf(merged) === null)) {
        const entries: Iterable<[string, unknown]> = merged instanceof Map ? (merged as Map<string, unknown>).entries() : Object.entries(merged as Record<string, unknown>);
        for (const [key, entry] of entries) if (!hasKey(result, key)) setKey(result, key, entry);
        continue;
      }
      const node = item as Node | null;
      const empty = node === null || node.range === undefined || node.range === null || (isScalar(node) && node.range[0] === node.range[1]);
      const offset = empty ? ((pair.key as Node).range?.[0] ?? 0) : node.range![0];
      // A mapping is what `<<` takes: a time without its tag is none either.
      const got = isAlias(item) ? `*${item.source}, which is ${describeValue(merged, true)}` : describeValue(merged, true);
      this.#problems.followOn(offset, `a merge key \`<<\` takes a mapping, an alias of one (<<: *base) or a list of them (<<: [*a, *b]); got ${got}${list === undefined ? "" : `, an item of *${list.source}`}`);
      refused = true;
    }
    return { height, refused };
  }

  /**
   * `run: ! grep -q TODO src`: a `!` and a space start YAML's non-specific tag, which makes the
   * value text and is dropped, so the task would run `grep -q TODO src`, its success and failure
   * the other way round. Never what a workflow means: said where the `!` is, with what to write
   * instead, as the field takes it (see Takes): the quoting that keeps the `!` in a command (or
   * one of unknown use); the value without the `!` where the field takes it so; the value quoted
   * where YAML would read it otherwise without the `!` (`run: ! 1`, `cwd: ! true`, an env value
   * `! 1.10`), in one message, not a second one once the `!` is dropped.
   */
  #refuseBareTag(node: Scalar, takes: Takes): void {
    const start = node.range?.[0] ?? 0;
    const offset = this.#bangBefore(start);
    if (this.#leftEmpty(node, offset, "the value is read as an empty string; write the value in its place, without the `!`")) return;
    const value = typeof node.value === "string" ? node.value : String(node.value);
    const plain = node.type === "PLAIN";
    // Where YAML would read the value without the `!` as other than the text the field takes (`run: ! 1`, `cwd: ! true`, an env
    // value `! 1.10`): said at once, with the quotes it needs, not in a second problem once the `!` is dropped.
    const unquoted = plain ? misreadUnquoted(takes, value) : undefined;
    let message: string;
    if (takes === "command" || takes === "text" || takes === "env" || (takes === undefined && !(plain && CORE_NUMBER.test(value)))) {
      // The `!` may be meant: a shell's "not" in a command (`run: ! grep -q TODO src`), a character of a text.
      const keep = `the value is read as ${quote(value)}; to keep the \`!\`${takes === "text" || takes === "env" ? "" : ` (a shell's "not")`}, quote the whole value: ${quote(`! ${value}`)}`;
      // Without it: a command as it is would run the other way round, unsaid; the value quoted where YAML would read it otherwise.
      if (unquoted !== undefined) message = `${keep}; without the \`!\`, quote it too (${quote(value)}): ${unquoted}`;
      else if (takes === "text" || takes === "env") message = `${keep}, or write it without the \`!\`: ${plain ? value : quote(value)}`;
      else message = keep;
    } else if (takes === "id" && plain && !isTaskId(value)) {
      // `dependsOn: ! ~`: no task id with the `!` or without it (null), nor quoted; the id's refusal at the value follows from it.
      const reading = plainReading(value);
      message =
        reading === undefined
          ? `the value is read as the text ${quote(value)}, which is not a valid task id, with or without the \`!\`: ${TASK_ID_EXPECTED}`
          : `the value is read as the text ${quote(value)}, which is not a valid task id, and without the \`!\` YAML reads ${value} as ${reading}, which dependsOn does not take: ${this.#listItem ? "write the id of a task it waits for, or leave the item out" : "list the ids of the tasks it waits for, or leave dependsOn out"}; ${TASK_ID_EXPECTED}`;
    } else if (takes === "id" && plain && readsAsNull(value)) {
      // `dependsOn: ! null`, `[! null]`: as `! ~`, no task id either way (quoted, the id of a task so named), in one problem; the id's refusal at the value follows from it.
      const instead = this.#listItem ? `write the id of a task it waits for (quoted, ${quote(value)}, for a task of that name), or leave the item out` : `list the ids of the tasks it waits for (quoted, ${quote(value)}, for a task of that name), or leave dependsOn out`;
      message = `the value is read as the text ${quote(value)}, and without the \`!\` YAML reads ${value} as null (no value), which dependsOn does not take: ${instead}`;
    } else if (plain && CORE_NUMBER.test(value)) {
      // `retries: ! 3`: a number made text, where no shell's "not" is meant.
      message = `the value is read as the text ${quote(value)}, not the number ${value}; write it without the \`!\`: ${value}`;
    } else {
      // `priority: ! high`: a field other than a command or a text, which cannot mean the `!`.
      message = `the value is read as ${quote(value)}; write it without the \`!\`: ${plain ? value : quote(value)}`;
    }
    this.#problems.atOffset(offset, `this \`!\` is YAML's tag for text, which it drops: ${message}`);
    this.#problems.explained(offset);
    // The value as text, which the field refuses (`retries: ! 3` got "3"), follows from the `!` said: not a second problem.
    this.#problems.explained(start);
  }

  /**
   * `env: ! x`, `tasks: ! x`, `a: ! make`: a `!` before a scalar where a mapping is expected. The
   * value is wrong with the `!` or without it, so neither keeping it (quoted) nor dropping it is
   * the advice: one problem, at the `!`, saying what the field takes; the field's refusal of the
   * text at the value follows from it, and is not said again.
   */
  #refuseBareTagForMapping(node: Scalar, { field, mapping }: { field: string; mapping: string }): void {
    const start = node.range?.[0] ?? 0;
    const offset = this.#bangBefore(start);
    const value = typeof node.value === "string" ? node.value : String(node.value);
    if (this.#leftEmpty(node, offset, `the value is read as an empty string, but ${field} must be ${mapping}`)) return;
    this.#problems.atOffset(offset, `this \`!\` is YAML's tag for text, which it drops: the value is read as the text ${quote(value)}, but ${field} must be ${mapping}, with or without the \`!\``);
    this.#problems.explained(offset);
    this.#problems.explained(start);
  }

  /**
   * `retries: !`, `env: !`: a `!` with no value after it, which YAML reads as an empty string.
   * Neither keeping it nor dropping it gives a value: one problem at the `!` saying so (`said`:
   * what the field makes of it), where the schema's refusal of the empty value, at the key, would
   * follow from it. Whether the value is so.
   */
  #leftEmpty(node: Scalar, offset: number, said: string): boolean {
    if (node.range === undefined || node.range === null || node.range[0] !== node.range[1]) return false;
    this.#problems.atOffset(offset, `this \`!\` is YAML's tag for text, with no value after it: ${said}`);
    this.#problems.explained(offset);
    this.#problems.explained(node.range[0]);
    if (this.#fieldKey !== undefined) this.#problems.explained(this.#fieldKey);
    return true;
  }

  /** The offset of the `!` before the value at `start` (yaml's ranges start at the value), or `start` if none is found. */
  #bangBefore(start: number): number {
    let at = start - 1;
    while (at > 0 && /\s/.test(this.#text[at] ?? "")) at--;
    return this.#text[at] === "!" ? at : start;
  }

  /**
   * An env value that YAML reads as an integer or a boolean other than as written (`01234`,
   * `0x10`, `1.0`, `1e3`, `+5`, `True`): the schema takes integers and booleans as text, which
   * would silently pass 1234 for 01234. An integer past 2^53, which a number cannot hold exactly
   * (the schema refuses it), likewise. Other numbers the schema refuses itself. The value is then
   * explained: the schema's own words for it would only repeat the problem, less clearly.
   */
  #checkEnvValue(node: unknown, name: string): void {
    // A value a merge key brings in only to be replaced (see #overridden) is never passed: not told to be quoted.
    if (this.#unused || !isScalar(node) || node.source === undefined) return;
    const value = node.value;
    if (typeof value !== "boolean" && !(typeof value === "number" && Number.isInteger(value))) return;
    const read = node.source !== String(value) ? `which YAML reads as ${String(value)}` : typeof value === "number" && !Number.isSafeInteger(value) ? "an integer too large to be read exactly" : undefined;
    if (read === undefined) return;
    const offset = node.range?.[0] ?? 0;
    this.#problems.atOffset(offset, `${this.#envField}.${name}\` is ${node.source}, ${read}; quote it (${quote(node.source)}) to pass it as written`);
    this.#problems.explained(offset);
  }

  /**
   * A duration written as a number other than in digits (`1e3`, `0x10`, `.5`, `+5`): YAML reads it as
   * a number, which would be taken as seconds, where the same text quoted, or given to a flag
   * (`--shutdown-timeout 1e3`), is no duration. Refused, saying the number of seconds it was read
   * as and the duration, so it is not taken silently (0x10 as 16 seconds). A number out of range is
   * left to the schema, which says so, as is zero where the field refuses it (`timeout: 0x0`, at
   * least 1ms); where it takes it (`delay: 0x0`, a backoff bound), zero is refused here too.
   */
  #checkDurationNumber(node: unknown, field: string, refusesZero: boolean): void {
    if (!this.#numberNotWrittenAs(node, PLAIN_SECONDS)) return;
    const ms = parseDuration(node.value);
    const seconds = secondsInDigits(node.value);
    if (ms === undefined || (ms === 0 && refusesZero) || seconds === undefined) return;
    const offset = node.range?.[0] ?? 0;
    this.#problems.atOffset(offset, `${field} is ${node.source}, which YAML reads as the number ${seconds}: a duration's number of seconds is written in digits, with a point if need be; write ${seconds}, or ${formatMs(ms)}${ms === 0 && node.value !== 0 ? ", to which it is rounded (a duration is whole milliseconds)" : ""}`);
    this.#problems.explained(offset);
  }

  /**
   * An integer (concurrency, retries, an exit code of retryOn) written as a number other than in
   * digits (`0x10`, `1e1`, `2.0`, `+3`): refused as a flag's is (`-j 0x10`), saying the integer it was
   * read as, not taken silently. Others, and one out of the field's range, the schema refuses itself (`1.5`, `-1`, `0x0` for an exit code).
   */
  #checkIntegerNumber(node: unknown, field: string, min: number, max: number): void {
    if (!this.#numberNotWrittenAs(node, DIGITS) || !Number.isInteger(node.value) || node.value < min || node.value > max) return;
    const offset = node.range?.[0] ?? 0;
    this.#problems.atOffset(offset, `${field} is ${node.source}, which YAML reads as the number ${String(node.value)}: an integer is written in digits; write ${String(node.value)}`);
    this.#problems.explained(offset);
  }

  /**
   * Whether `node` is a number written other than as `written` (a number field's form: DIGITS, PLAIN_SECONDS), where it
   * is used (not merged in only to be replaced, see #overridden) and no tag says it is meant so (`!!float 1e3`: read as YAML reads it).
   */
  #numberNotWrittenAs(node: unknown, written: RegExp): node is Scalar & { value: number; source: string } {
    return !this.#unused && isScalar(node) && typeof node.value === "number" && node.source !== undefined && node.tag === undefined && !written.test(node.source);
  }

  #checkKey(pair: Pair, map: YAMLMap, has: (key: string) => boolean, isTasks: boolean): string | undefined {
    const keyNode = pair.key as Node | null;
    const offset = keyNode?.range?.[0] ?? (pair.value as Node | null)?.range?.[0] ?? map.range?.[0] ?? 0;
    const key = keyText(keyNode);
    // An anchored key (`&b build:`) names its text for an alias (`dependsOn: [*b]`), as yaml reads it.
    if (isScalar(keyNode) && keyNode.anchor) {
      this.#anchors.set(keyNode.anchor, keyNode);
      this.#done.set(keyNode, { value: keyNode.value, size: 1, height: 0, role: undefined, unused: false });
    }
    if (key === undefined) {
      const what = isMap(keyNode) || isSeq(keyNode) ? "a mapping or list" : isAlias(keyNode) ? "an alias" : "empty";
      // An empty key after other keys starts where the line before ended: point at its `:`.
      let at = offset;
      if (what === "empty") while (this.#text[at] === " " || this.#text[at] === "\n" || this.#text[at] === "\r") at++;
      this.#problems.atOffset(this.#text[at] === ":" ? at : offset, `a key must be plain text, not ${what}`);
      return undefined;
    }
    if (!isTasks && key === "__proto__") {
      this.#problems.atOffset(offset, 'the key "__proto__" is not allowed');
      return undefined;
    }
    if (has(key)) {
      const first = this.#firstKeys(map).get(key);
      const where = first?.range ? ` (first defined at ${this.#problems.lineCol(first.range[0])})` : "";
      this.#problems.atOffset(offset, `duplicate ${isTasks ? "task id" : "key"} ${quote(key)}${where}; each must appear once`);
      return undefined;
    }
    return key;
  }

  /** Each key of `map` and the node of its first occurrence: built at the map's first duplicate, so reporting many duplicates stays O(n). */
  #firstKeys(map: YAMLMap): Map<string, Node> {
    let index = this.#keyIndexes.get(map);
    if (index === undefined) {
      index = new Map();
      for (const pair of map.items) {
        const text = keyText(pair.key);
        if (text !== undefined && !index.has(text)) index.set(text, pair.key as Node);
      }
      this.#keyIndexes.set(map, index);
    }
    return index;
  }

  /**
   * The anchored node's value, read in the alias's role: a scalar as the role reads it (in
   * `dependsOn`, `1.0` names the task "1.0" wherever its anchor stands), a mapping or list
   * first converted in another role converted again in this one (an `env` reached through an
   * alias gets its values checked; a `dependsOn` its ids read as written).
   */
  #expand(alias: Alias, depth: number, role: Role): unknown {
    const target = this.#reach(alias, depth);
    if (target === undefined) return null;
    if (isScalar(target)) {
      this.#size++;
      return role === "ids" ? idValue(target) : target.value;
    }
    const done = this.#done.get(target)!;
    if ((done.role !== role || done.unused) && (isMap(target) || isSeq(target))) return this.#convertNode(target, depth, role);
    this.#size += done.size;
    this.#height = done.height;
    // Shared, not copied: the value is never mutated, and sharing keeps expansion O(1).
    return done.value;
  }

  /**
   * The node an alias names, once it is known to be defined before, not to contain the alias,
   * and within the limits on expansion and nesting (what it expands to is counted); undefined,
   * with the problem reported, otherwise.
   */
  #reach(alias: Alias, depth: number): Node | undefined {
    const offset = alias.range?.[0] ?? 0;
    if (this.#bombed) {
      this.#problems.explained(offset);
      return undefined;
    }
    const target = this.#anchors.get(alias.source);
    if (target === undefined) {
      // `run: *.txt`, `run: *` (a glob) reads as an alias too: say how to keep it as text.
      this.#problems.atOffset(offset, `unknown alias *${alias.source}; define &${alias.source} before using it, or quote the value if it is text (${JSON.stringify(`*${alias.source}`)})`);
      this.#problems.explained(offset);
      return undefined;
    }
    const done = this.#done.get(target);
    if (done === undefined || this.#inProgress.has(target)) {
      // `x: &a [*a]`: yaml's words alone left the user to work out what holds what, and what to write instead.
      this.#problems.atOffset(
        offset,
        `alias *${alias.source} refers to a node that contains it: it stands inside the value anchored &${alias.source}, which would then hold itself without end; anchor only a part that does not contain *${alias.source}, or write out here what it should hold`,
      );
      this.#problems.explained(offset);
      return undefined;
    }
    this.#expanded += done.size;
    if (this.#expanded > MAX_ALIAS_EXPANSION) {
      this.#problems.atOffset(offset, `aliases expand to more than ${MAX_ALIAS_EXPANSION.toLocaleString("en-US")} nodes (an alias bomb?)`);
      // One report is enough: later aliases are skipped silently.
      this.#bombed = true;
      this.#problems.explained(offset);
      return undefined;
    }
    if (depth + done.height > MAX_NESTING_DEPTH) {
      this.#problems.atOffset(offset, `alias *${alias.source} nests deeper than ${MAX_NESTING_DEPTH} levels`);
      this.#problems.explained(offset);
      return undefined;
    }
    this.aliasTargets.set(alias, target);
    return target;
  }
}

type Mapping = Map<string, unknown> | Record<string, unknown>;

function hasKey(mapping: Mapping, key: string): boolean {
  return mapping instanceof Map ? mapping.has(key) : Object.hasOwn(mapping, key);
}

function setKey(mapping: Mapping, key: string, value: unknown): void {
  if (mapping instanceof Map) mapping.set(key, value);
  else mapping[key] = value;
}

/** A merge key, `<<` written plain (yaml reads it as a symbol; a quoted "<<" is text, a key as any other). */
export function isMergeKey(key: unknown): boolean {
  return isScalar(key) && typeof key.value === "symbol";
}
