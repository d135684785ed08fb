import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseWorkflow, WorkflowError } from "../../src/loaders/index.js";
import { readYaml } from "../../src/loaders/read-yaml.js";
import { Locator } from "../../src/loaders/locator.js";
import { readSimpleYaml, readSimpleYamlWithPlaces } from "../../src/loaders/simple-yaml.js";
import { toPlain } from "../../src/loaders/to-plain.js";
import { mutate, mutationOf } from "./helpers.js";

/** Property runs per test; `SIMPLE_YAML_RUNS=100000` for a long soak. */
const RUNS = Number(process.env.SIMPLE_YAML_RUNS ?? 3000);
/** A property's time limit: the mutated workflows' took 13-16 s at load 8-11 on two cores, half the default limit. */
const PROPERTY_TIMEOUT_MS = Math.max(120_000, RUNS * 40);

/** What the full path (yaml's parser and composer, then toPlain) makes of a text: data, or "problems". */
function fullRead(text: string): unknown {
  const parsed = readYaml(text, "f.yaml");
  if (!("document" in parsed) || parsed.problems.size > 0) return "problems";
  const plain = toPlain(parsed.document, parsed.problems);
  return parsed.problems.size > 0 ? "problems" : plain.value;
}

/** A form that tells a Map from an object, a null-prototype object from a plain one, 1 from "1" and -0 from 0. */
function canonical(value: unknown): unknown {
  if (value instanceof Map) return { map: [...(value as Map<unknown, unknown>)].map(([key, item]) => [key, canonical(item)]) };
  if (Array.isArray(value)) return { list: (value as unknown[]).map(canonical) };
  if (typeof value === "object" && value !== null) {
    return { object: Object.keys(value).map((key) => [key, canonical((value as Record<string, unknown>)[key])]), nullPrototype: Object.getPrototypeOf(value) === null };
  }
  if (typeof value === "number") return { number: Object.is(value, -0) ? "-0" : value };
  return { [typeof value]: value };
}

/**
 * The fast reader either declines, or returns exactly what the full path returns for a file it accepts
 * without problems; and its places (readSimpleYamlWithPlaces) point where yaml's Locator does.
 */
function expectAgreement(text: string): "simple" | "declined" {
  const simple = readSimpleYaml(text);
  if (simple === undefined) return "declined";
  const full = fullRead(text);
  expect(full, `the fast reader accepted a text the full path rejects:\n${text}`).not.toBe("problems");
  expect(canonical(simple), text).toEqual(canonical(full));
  // A file with a merge key is read fast only when it has nothing to report: its problems and notes are yaml's to place.
  if (readSimpleYamlWithPlaces(text) === undefined && /<<: \*/.test(text)) return "simple";
  expectSamePlaces(text);
  return "simple";
}

/** For every path into the data, and a missing key or item under each: offsetOf (value and key), endsAtComment, commentInsteadOf and plainSourceOf as yaml's Locator gives them. */
function expectSamePlaces(text: string): void {
  const parsed = readYaml(text, "f.yaml");
  if (!("document" in parsed)) throw new Error("read by the fast reader, refused by yaml");
  const plain = toPlain(parsed.document, parsed.problems, text);
  const yamlLocator = new Locator(parsed.document, plain.aliasTargets, text);
  const placed = readSimpleYamlWithPlaces(text);
  if (placed === undefined) throw new Error("read by the fast reader, but not with places");
  const paths: PropertyKey[][] = [];
  const walk = (value: unknown, path: PropertyKey[]) => {
    paths.push(path, [...path, "missing"], [...path, 99]);
    if (value instanceof Map) for (const [key, item] of value as Map<string, unknown>) walk(item, [...path, key]);
    else if (Array.isArray(value)) value.forEach((item, index) => walk(item, [...path, index]));
    else if (typeof value === "object" && value !== null) for (const key of Object.keys(value)) walk((value as Record<string, unknown>)[key], [...path, key]);
  };
  walk(placed.data, []);
  for (const path of paths) {
    const where = `${JSON.stringify(path.map(String))} in\n${text}`;
    expect(placed.locator.offsetOf(path), where).toBe(yamlLocator.offsetOf(path));
    expect(placed.locator.offsetOf(path, "key"), where).toBe(yamlLocator.offsetOf(path, "key"));
    expect(placed.locator.endsAtComment(path), where).toBe(yamlLocator.endsAtComment(path));
    expect(placed.locator.commentInsteadOf(path), where).toBe(yamlLocator.commentInsteadOf(path));
    expect(placed.locator.plainSourceOf(path), where).toBe(yamlLocator.plainSourceOf(path));
  }
}

const typical = [
  "# CI pipeline",
  "name: ci",
  "concurrency: 4",
  "env: { NODE_ENV: test, EMPTY: '', QUOTED: \"a \\\"b\\\" \\u00e9\\n\" }",
  "",
  "defaults:",
  "  retries: 1   # a comment",
  "  timeout: 10m",
  "  backoff:",
  "    base: 1s",
  "tasks:",
  "  install:",
  "    run: npm ci --prefer-offline && echo done # trailing comment",
  "    priority: high",
  "  test:",
  "    run: 'npm test -- --grep \"it''s\"'",
  "    dependsOn: install",
  "    retryOn: [1, 75]",
  "    backoff: { base: 1s, max: 30s }",
  "",
  "    # an indented comment",
  "  lint: { run: \"eslint . #not a comment\", dependsOn: [install] }",
  "  deploy:",
  "    run: ./deploy.sh --target=prod:eu a#b {x,y} [z]",
  "    dependsOn:",
  "    - test",
  "    - lint",
  "    runAt: 2026-01-15T02:00:00Z",
  "    env:",
  "      TARGET: prod",
  "      EMPTY:",
  "      LATER: # filled in by CI",
  "      FLAG: true",
  "      COUNT: 7",
  "      NOTHING: ~",
  "    cwd: infra",
  "  script:",
  "    run: |",
  "      set -e",
  "",
  "      # a shell comment, kept",
  "        indented: more",
  "      echo done",
  "",
  "",
  "    env:",
  "      STRIPPED: |-",
  "        a",
  "        b",
  "  # a comment after the block",
  "  \"quoted-id\":",
  "    run: echo é ✓ 😀",
  "  '1':",
  "    run: echo one",
  "  2: { run: \"true\" }",
  "  list-in-list:",
  "    run: x",
  "    matrix:",
  "      -",
  "        - [a, 'b', \"c\", [d, e], {f: g}]",
  "      - nested",
  "",
].join("\n");

/** The bench's generated shapes: block style with defaults, and one flow mapping per task. */
const generatedBlock = ["name: generated", "defaults:", "  retries: 0", "  timeout: 10m", "tasks:"]
  .concat(Array.from({ length: 50 }, (_, i) => [`  task-${i}:`, '    run: "true"', ...(i > 2 ? [`    dependsOn: [task-${i - 1}, task-${i - 3}]`] : []), ...(i % 7 === 0 ? ["    priority: normal"] : [])]).flat())
  .join("\n");
const generatedFlow = ["tasks:"].concat(Array.from({ length: 50 }, (_, i) => `  t${i}: { run: "true" }`)).join("\n") + "\n";
/** Tasks that take their fields from an anchored mapping through a merge key, in block and flow style, their own keys before and after it. */
const merged = [
  "x-base: &base",
  "  retries: 2",
  "  env: { A: '1', B: two }",
  "  timeout: 5m",
  "x-flow: &flow { priority: high, retries: 1, env: { C: x } }",
  "defaults: &defaults",
  "  backoff: { base: 1s }",
  "tasks:",
  "  a:",
  "    <<: *base",
  "    run: echo a",
  "    retries: 3",
  "  b: { <<: *flow, run: echo b, dependsOn: [a] }",
  "  c: { run: echo c, <<: *base, priority: low, env: { D: y } }",
  "  d:",
  "    run: echo d",
  "    <<: *flow",
  "    <<: *base",
  "  e: { <<: *defaults, run: x }",
  "",
].join("\n");

/** Ways to put one piece of random text into an otherwise valid workflow. */
const randomTextPositions: Array<(text: string) => string> = [
  (text) => `tasks:\n  ${text}:\n    run: x\n`,
  (text) => `tasks:\n  a:\n    run: ${text}\n    retries: 1\n`,
  (text) => `tasks:\n  a: { run: ${text} }\n`,
  (text) => `tasks:\n  a: { run: x, env: { ${text}: v } }\n`,
  (text) => `tasks:\n  a:\n    run: x\n    dependsOn: [${text}]\n`,
  (text) => `tasks:\n  a:\n    run: x\n    dependsOn:\n    - ${text}\n`,
  (text) => `tasks:\n  a:\n    run: "${text}"\n`,
  (text) => `tasks:\n  a:\n    run: '${text}'\n`,
  (text) => `tasks:\n  a:\n    run: |\n      ${text}\n    retries: 1\n`,
];

describe("readSimpleYaml", () => {
  it("reads typical workflows exactly as the full path does", () => {
    for (const text of [typical, generatedBlock, generatedFlow, `${typical.trimEnd()}`, "tasks:\n  a: {run: x}", "- a\n- b\n"]) {
      expect(expectAgreement(text)).toBe("simple");
    }
  });

  it("reads tasks that merge an anchored mapping (<<: *defaults) exactly as the full path does", () => {
    // Before, any anchor or merge key sent the file to yaml: 10,000 tasks each with `<<: *defaults` took 2-2.5 s to validate, a plain file 0.5 s.
    expect(expectAgreement(merged)).toBe("simple");
    const many = ["x-defaults: &defaults", "  retries: 1", "  timeout: 5m", "tasks:", ...Array.from({ length: 200 }, (_, i) => [`  t${i}:`, "    <<: *defaults", `    run: echo ${i}`]).flat(), ""].join("\n");
    expect(expectAgreement(many)).toBe("simple");
    // What the fast path leaves to yaml: an alias but a merge's, an anchor on other than a mapping, a merge of what is not read yet, a key
    // written twice after a merge, a merge in the tasks mapping, an anchored mapping with a merge in it, `*a}`, a merge key with nothing
    // after it, an anchor defined twice, once inside the other (yaml's alias names the inner one, the later to be seen).
    for (const text of [
      "x: &a { retries: 1 }\ntasks:\n  t: { run: x, env: *a }\n",
      "x: &a 1\ntasks:\n  t: { run: x }\n",
      "tasks:\n  t: { <<: *a, run: x }\nx: &a { retries: 1 }\n",
      "x: &a { retries: 1 }\ntasks:\n  t:\n    <<: *a\n    run: x\n    run: y\n",
      "x: &a { t: { run: x } }\ntasks:\n  <<: *a\n",
      "x: &a { retries: 1 }\ny: &b { <<: *a }\ntasks:\n  t: { <<: *b, run: x }\n",
      "x: &a { retries: 1 }\ntasks:\n  t: { run: x, <<: *a}\n",
      "x: &a { retries: 1 }\ntasks:\n  t:\n    <<:\n    run: x\n",
      "x: &a { retries: 1 }\nx2: &a { retries: 2 }\ntasks:\n  t: { <<: *a, run: x }\n",
      "x: &a\n y: &a\n  retries: 1\ntasks:\n  t: { <<: *a, run: x }\n",
      "x: &a { y: &a { retries: 1 } }\ntasks:\n  t: { <<: *a, run: x }\n",
    ]) {
      expect(readSimpleYaml(text), text).toBeUndefined();
    }
  });

  it("leaves a file with a merge key and something to report to yaml, which tells it as before", () => {
    const text = merged.replace("    retries: 3", "    retries: 300").replace("  timeout: 5m", "  timeout: 5 min");
    expect(readSimpleYaml(text)).toBeDefined();
    expect(readSimpleYamlWithPlaces(text)).toBeUndefined();
    const problemsOf = (simple: boolean) => {
      try {
        return parseWorkflow(text, "f.yaml", { simple });
      } catch (error) {
        return (error as WorkflowError).problems;
      }
    };
    expect(problemsOf(true)).toEqual(problemsOf(false));
    expect(problemsOf(true)).toHaveLength(2);
  });

  it("takes `&base#` for an anchor named base#, as yaml does, not base and a comment: a merge of *base names nothing", () => {
    for (const text of ["x-base: &base#\n  retries: 2\ntasks:\n  a:\n    <<: *base\n    run: echo a\n", "x-base: &base# note\n  retries: 2\ntasks:\n  a: { <<: *base, run: echo a }\n"]) {
      expect(readSimpleYaml(text), text).toBeUndefined();
      expect(() => parseWorkflow(text, "f.yaml"), text).toThrow(WorkflowError);
    }
  });

  it("reads the workflows shipped in workflows/ exactly as the full path does", () => {
    for (const name of ["demo.yaml", "failures.yaml"]) {
      expect(expectAgreement(readFileSync(fileURLToPath(new URL(`../../workflows/${name}`, import.meta.url)), "utf8")), name).toBe("simple");
    }
  });

  it("gives the top-level tasks mapping as a Map and every other mapping without a prototype", () => {
    const data = readSimpleYaml("tasks:\n  __proto__: { run: x }\n  b: { run: y, env: { A: '1' } }\n") as Record<string, unknown>;
    expect(Object.getPrototypeOf(data)).toBeNull();
    const tasks = data.tasks as Map<string, Record<string, unknown>>;
    expect([...tasks.keys()]).toEqual(["__proto__", "b"]);
    expect(Object.getPrototypeOf(tasks.get("b")!.env)).toBeNull();
  });

  it.each([
    ["an anchor", "tasks:\n  a: &x { run: x }\n  b: *x\n"],
    ["a tag", "tasks:\n  a: { run: !!str 1 }\n"],
    ["a literal block kept with its trailing lines", "tasks:\n  a:\n    run: |+\n      echo hi\n\n"],
    ["a literal block with an explicit indent", "tasks:\n  a:\n    run: |2\n       echo hi\n"],
    ["a literal block with a line of spaces", "tasks:\n  a:\n    run: |\n      echo hi\n   \n      echo there\n"],
    ["a literal block that ends the file without a line break", "tasks:\n  a:\n    run: |\n      echo hi"],
    ["a literal block in a list", "tasks:\n  a:\n    run: x\n    m:\n      - |\n        echo hi\n"],
    ["an empty literal block", "tasks:\n  a:\n    run: |\n    retries: 1\n"],
    ["a folded scalar", "tasks:\n  a:\n    run: >-\n      echo hi\n"],
    ["a multi-line plain scalar", "tasks:\n  a:\n    run: echo\n      hi\n"],
    ["a multi-line quoted scalar", 'tasks:\n  a:\n    run: "echo\n      hi"\n'],
    ["a multi-line flow list", "tasks:\n  a:\n    run: x\n    dependsOn: [b,\n      c]\n"],
    ["a scalar on the line after its key", "tasks:\n  a:\n    run:\n      echo hi\n"],
    ["a duplicate key", "tasks:\n  a: { run: x }\n  a: { run: y }\n"],
    ["a duplicate key spelt two ways", "tasks:\n  a:\n    run: x\n    'run': y\n"],
    ["__proto__ outside tasks", "env:\n  __proto__: x\ntasks:\n  a: { run: x }\n"],
    ["a null key", "tasks:\n  ~: { run: x }\n"],
    ["a tab", "tasks:\n  a: { run: \"echo\tx\" }\n"],
    ["CRLF line ends", "tasks:\r\n  a: { run: x }\r\n"],
    ["a document marker", "---\ntasks:\n  a: { run: x }\n"],
    ["a second document", "tasks:\n  a: { run: x }\n---\ntasks: {}\n"],
    ["a directive", "%YAML 1.2\n---\ntasks:\n  a: { run: x }\n"],
    ["a float", "tasks:\n  a: { run: x, retries: 1.5 }\n"],
    ["an exponent", "tasks:\n  a: { run: x, retries: 1e3 }\n"],
    ["a hex int", "tasks:\n  a: { run: x, retries: 0x10 }\n"],
    ["an int with a leading zero", "tasks:\n  a: { run: x, env: { A: 01 } }\n"],
    ["an int with a plus sign", "tasks:\n  a: { run: x, env: { A: +1 } }\n"],
    ["an int past 2^53", "tasks:\n  a: { run: x, env: { A: 12345678901234567890 } }\n"],
    ["a boolean not in lower case", "tasks:\n  a: { run: x, env: { A: True } }\n"],
    ["a negative number", "tasks:\n  a: { run: x, retries: -1 }\n"],
    ["a mapping inside a list item", "tasks:\n  a:\n    run: x\n    matrix:\n      - os: linux\n"],
    ["a trailing comma", "tasks:\n  a: { run: x, dependsOn: [b, ] }\n"],
    ["an unknown escape", 'tasks:\n  a: { run: "\\q" }\n'],
    ["a code point past U+10FFFF", 'tasks:\n  a: { run: "\\UFFFFFFFF" }\n'],
    ["a nested mapping on one line", "tasks:\n  a: run: x\n"],
    ["a comment without a space before it", 'tasks:\n  a: { run: "x"}# c\n'],
    ["a key with a space before its colon", "tasks:\n  a :\n    run: x\n"],
    ["a key over 1,000 characters", `tasks:\n  a:\n    run: x\n    env:\n      ${"K".repeat(1001)}: v\n`],
    ["a bad indent", "tasks:\n    a: { run: x }\n  b: { run: y }\n"],
    ["a list inside a list item on one line", "tasks:\n  a:\n    run: x\n    m:\n      - - b\n"],
    ["an empty file", ""],
    ["only comments", "# nothing\n"],
    ["a byte order mark inside", "tasks:\n  a: { run: \"\ufeff\" }\n"],
  ])("declines %s", (_name, text) => {
    expect(readSimpleYaml(text)).toBeUndefined();
  });

  it("agrees with the full path on thousands of mutated workflows (or declines them)", () => {
    // Mostly harmless characters, so that many mutants stay readable by the fast path; some that matter to YAML.
    const yamlChar = fc.oneof(
      { arbitrary: fc.constantFrom(..."abc xyz019-\n".split("")), weight: 3 },
      { arbitrary: fc.constantFrom(..."-_:{}[],&*!|>'\"#%@`?~ \t\n\\01.é".split("")), weight: 1 },
    );
    const mutation = mutationOf(yamlChar, 6);
    const counts = { simple: 0, declined: 0 };
    fc.assert(
      fc.property(fc.constantFrom(typical, generatedBlock.slice(0, 900), generatedFlow.slice(0, 400), merged), fc.array(mutation, { minLength: 1, maxLength: 3 }), (base, changes) => {
        const text = mutate(base, changes);
        counts[expectAgreement(text)]++;
      }),
      { numRuns: RUNS },
    );
    // The property must exercise both outcomes, or it proves little.
    expect(counts.simple).toBeGreaterThan(RUNS / 30);
    expect(counts.declined).toBeGreaterThan(RUNS / 10);
    if (process.env.SIMPLE_YAML_RUNS) console.log("mutated", counts);
  }, PROPERTY_TIMEOUT_MS);

  it("agrees with the full path on random text in every value and key position (or declines it)", () => {
    const unit = fc.oneof(
      { arbitrary: fc.constantFrom(..."ab z09-_.:#'\"[]{},|>&*!?%@`~\\ ".split("")), weight: 4 },
      { arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }), weight: 1 },
    );
    const piece = fc.string({ unit, maxLength: 12 });
    const counts = { simple: 0, declined: 0 };
    fc.assert(
      fc.property(fc.constantFrom(...randomTextPositions), piece, (place, text) => {
        counts[expectAgreement(place(text))]++;
      }),
      { numRuns: RUNS },
    );
    expect(counts.simple).toBeGreaterThan(RUNS / 5);
    expect(counts.declined).toBeGreaterThan(RUNS / 5);
    if (process.env.SIMPLE_YAML_RUNS) console.log("random text", counts);
  }, PROPERTY_TIMEOUT_MS);

  it("agrees with the full path on thousands of generated documents (or declines them)", () => {
    const counts = { simple: 0, declined: 0 };
    let readLiterals = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...keyTexts), tree), { minLength: 1, maxLength: 4 }), fc.constantFrom(1, 2, 4), (entries, step) => {
        const lines: string[] = [];
        block({ kind: "map", entries }, 0, step, lines);
        const text = `${lines.join("\n")}\n`;
        const outcome = expectAgreement(text);
        counts[outcome]++;
        if (outcome === "simple" && /: \|-?\n/.test(text)) readLiterals++;
      }),
      { numRuns: RUNS },
    );
    // ~11% are read by the fast path (300-370 of 3,000): one with a note to give (a dependency
    // listed twice, say) goes to the full path, for the note's position.
    expect(counts.simple).toBeGreaterThan(RUNS / 15);
    expect(counts.declined).toBeGreaterThan(RUNS / 10);
    expect(readLiterals).toBeGreaterThan(RUNS / 100);
    if (process.env.SIMPLE_YAML_RUNS) console.log("generated", counts, "with literal blocks read", readLiterals);
  }, PROPERTY_TIMEOUT_MS);
});

/** Random documents built from YAML's pieces: scalars of every kind in block and flow collections, at various indents. */
type Tree = { kind: "scalar"; text: string } | { kind: "literal"; header: string; lines: string[] } | { kind: "map" | "flowMap"; entries: Array<[string, Tree]> } | { kind: "seq" | "flowSeq"; items: Tree[] };

/** Scalars the fast path reads, and scalars it must leave to yaml (or that are errors). */
const simpleScalars = ["x", "run", "echo hi && ls", "true", "False", "TRUE", "null", "Null", "~", "007", "+5", "a b", "a#b", "a #c", "a:b", "é ✓", "10m", "2026-12-01T02:00:00Z", "x[0]", "'q'", "'it''s'", "''", '""', '"d\\n"', '"\\x41\\u00e9\\U0001F600"', '"a \\" b"'];
const otherScalars = ["-3", "1.5", ".inf", "0x1F", "0o17", "1e3", "a: b", "a:", "-a", "{b}", '"\\q"', "&a x", "*a", "!t x", "|", ">", "? x", "@x", "`x`", "%x"];
const scalarText = fc.oneof({ arbitrary: fc.constantFrom(...simpleScalars), weight: 12 }, { arbitrary: fc.constantFrom(...otherScalars), weight: 1 });
const keyTexts = ["a", "b", "c", "d", "run", "tasks", "env", "__proto__", "1", "true", "null", "~", "'q k'", '"x"', "a.b", "k-1", "a b", "-k", "'a'"];

const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ kind: fc.constant("scalar" as const), text: scalarText }),
    fc.record({
      kind: fc.constant("literal" as const),
      header: fc.constantFrom("|", "|", "|-", "|-", "| # c", "|+", "|2", "|x"),
      lines: fc.array(fc.constantFrom("echo hi", "echo hi", 'if [ "$A" ]; then exit 1; fi', "  indented more", "", "", "# not a comment", "a: b", "- x", "   "), { maxLength: 5 }),
    }),
    fc.record({ kind: fc.constantFrom("map" as const, "flowMap" as const), entries: fc.array(fc.tuple(fc.constantFrom(...keyTexts), tie("tree")), { maxLength: 4 }) }),
    fc.record({ kind: fc.constantFrom("seq" as const, "flowSeq" as const), items: fc.array(tie("tree"), { maxLength: 4 }) }),
  ),
})).tree;

function inline(node: Tree): string {
  if (node.kind === "scalar") return node.text;
  if (node.kind === "literal") return '"a literal in flow"';
  if ("entries" in node) return `{ ${node.entries.map(([key, value]) => `${key}: ${inline(value)}`).join(", ")} }`;
  return `[${node.items.map(inline).join(", ")}]`;
}

/** A non-empty block collection (an empty one is written `{}` or `[]`). */
function isBlock(node: Tree): boolean {
  return ("entries" in node && node.kind === "map" && node.entries.length > 0) || ("items" in node && node.kind === "seq" && node.items.length > 0);
}

/** A literal block's lines at `indent`; an empty line stays empty. */
function literalLines(lines: string[], indent: number): string[] {
  return lines.map((line) => (line === "" ? "" : `${" ".repeat(indent)}${line}`));
}

function block(node: Tree, indent: number, step: number, lines: string[]): void {
  const pad = " ".repeat(indent);
  if ("entries" in node) {
    for (const [key, value] of node.entries) {
      if (value.kind === "literal") {
        lines.push(`${pad}${key}: ${value.header}`, ...literalLines(value.lines, indent + step));
      } else if (!isBlock(value)) lines.push(`${pad}${key}: ${inline(value)}${lines.length % 3 === 0 ? " # note" : ""}`);
      else {
        lines.push(`${pad}${key}:`);
        block(value, value.kind === "seq" && lines.length % 2 === 0 ? indent : indent + step, step, lines);
      }
    }
  } else if ("items" in node) {
    for (const item of node.items) {
      if (item.kind === "literal") {
        lines.push(`${pad}- ${item.header}`, ...literalLines(item.lines, indent + 2 + step));
      } else if (!isBlock(item)) lines.push(`${pad}- ${inline(item)}`);
      else {
        lines.push(`${pad}-`);
        block(item, indent + 2, step, lines);
      }
    }
  }
}

describe("parseWorkflow with the fast reader", () => {
  it("still reports a problem in a simple file at its line and column", () => {
    expect(() => parseWorkflow("tasks:\n  a:\n    run: x\n    retries: lots\n", "f.yaml", { now: 0 })).toThrow(/f\.yaml:4:14: /);
  });

  it("still gives a note with its position for a runAt in the past", () => {
    const workflow = parseWorkflow("tasks:\n  a:\n    run: x\n    runAt: 2020-01-01T00:00:00Z\n", "f.yaml", { now: Date.parse("2026-01-01T00:00:00Z") });
    expect(workflow.notes).toEqual([expect.stringMatching(/^f\.yaml:4:12: task "a": runAt 2020-01-01T00:00:00Z is in the past/)]);
  });

  it("reports a simple file's problems and notes without yaml, at the places yaml gives them, on thousands of mutated workflows", () => {
    const outcome = (text: string, options: { simple?: boolean }) => {
      try {
        const workflow = parseWorkflow(text, "f.yaml", { now: Date.parse("2026-01-01T00:00:00Z"), ...options });
        return { tasks: workflow.tasks.map((task) => task.id), notes: workflow.notes };
      } catch (error) {
        if (!(error instanceof WorkflowError)) throw error;
        return { problems: error.problems };
      }
    };
    const yamlChar = fc.oneof(
      { arbitrary: fc.constantFrom(..."abc xyz019-\n".split("")), weight: 3 },
      { arbitrary: fc.constantFrom(..."-_:{}[],#'\" ".split("")), weight: 1 },
    );
    const mutation = mutationOf(yamlChar, 6);
    let reported = 0;
    fc.assert(
      fc.property(fc.constantFrom(typical, generatedBlock.slice(0, 900), generatedFlow.slice(0, 400)), fc.array(mutation, { minLength: 1, maxLength: 3 }), (base, changes) => {
        const text = mutate(base, changes);
        if (readSimpleYaml(text) === undefined) return;
        const simple = outcome(text, {});
        if ("problems" in simple || simple.notes.length > 0) reported++;
        expect(simple, text).toEqual(outcome(text, { simple: false }));
      }),
      { numRuns: RUNS / 3 },
    );
    expect(reported).toBeGreaterThan(RUNS / 100);
  }, PROPERTY_TIMEOUT_MS);

  it("still gives a note with its position for a dependency listed twice", () => {
    const workflow = parseWorkflow("tasks:\n  a: { run: x }\n  b:\n    run: x\n    dependsOn:\n      - a\n      - a\n", "f.yaml", { now: 0 });
    expect(workflow.notes).toEqual(['f.yaml:7:9: task "b": dependsOn lists "a" more than once; it counts once']);
  });
});
