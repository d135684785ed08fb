import fc from "fast-check";
import { homedir } from "node:os";
import { describe, expect, it } from "vitest";
import { WorkflowError, parseWorkflow } from "../../src/loaders/index.js";
import { readSimpleYaml } from "../../src/loaders/simple-yaml.js";
import { durationFlag } from "../../src/cli/flags.js";
import { bestOfAlternating } from "../helpers/timing.js";
import { parse, problemsOf, yaml } from "./helpers.js";

/** What a null env value is told. */
const unsetNote = (name: string): string =>
  `has no value (null): env sets variables and cannot unset one (from \`defaults.env\`, the file's \`env\` or taskq's own environment); write ${name}: "" for an empty value, or unset it in the command (\`unset ${name}; ...\`)`;

describe("parseWorkflow problems, each with its exact line:col", () => {
  it("reports every problem of a file at once, sorted by position, and formats them file:line:col", () => {
    let thrown: unknown;
    try {
      parseWorkflow(yaml("concurency: 4", "tasks:", "  a:", "    run: 42", "    retires: 2"), "ci.yaml");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WorkflowError);
    const error = thrown as WorkflowError;
    expect(error.code).toBe("INVALID_WORKFLOW");
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(
      [
        'ci.yaml:1:1: unknown key "concurency" at the top level; did you mean "concurrency"?',
        'ci.yaml:4:10: task "a": `run` must be a non-empty command string, got 42',
        'ci.yaml:5:5: task "a": unknown key "retires"; did you mean "retries"?',
      ].join("\n"),
    );
  });

  it("reports what only building a task finds (a runAt too far ahead, a backslash YAML folds, a backoff against defaults') beside the schema's and the dependencies' problems, not after they are fixed", () => {
    const file = yaml(
      "defaults:",
      "  backoff: { base: 10s }",
      "tasks:",
      "  a:",
      "    run: touch ran-a",
      "    runAt: 2099-01-01T00:00:00Z",
      "  b:",
      "    run: make \\",
      "      all",
      "  c:",
      "    run: touch ran-c",
      "    backoff: { max: 1s }",
      "  d:",
      "    run: touch ran-d",
      "    priority: urgent",
      "    dependsOn: [zzz]",
    );
    const problems = problemsOf(file);
    // Before, only d's two were told; the other three showed once those were fixed.
    expect(problems.map((problem) => problem.split(": ")[0])).toEqual(["6:12", "8:15", "12:21", "15:15", "16:17"]);
    expect(problems[0]).toContain('task "a": `runAt` 2099-01-01T00:00:00Z is');
    expect(problems[1]).toContain('task "b": `run` has a line that ends in a backslash');
    expect(problems[2]).toBe('12:21: task "c": `backoff.max` must not be shorter than `defaults.backoff.base` (10s), got 1s');
    // With defaults that have problems of their own, a task's own fields are still looked at.
    expect(problemsOf(yaml("defaults:", "  retries: many", "tasks:", "  a:", "    run: x", "    runAt: 2099-01-01T00:00:00Z"))).toEqual([
      expect.stringMatching(/^2:12: `defaults.retries`|^2:12: .*retries/),
      expect.stringMatching(/^6:12: task "a": `runAt` 2099-01-01T00:00:00Z is .* past the limit of 30 days ahead/),
    ]);
  });

  it("reports YAML syntax errors with yaml's position; a quote, [ or { never closed where it was opened, not where yaml gave up", () => {
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a", "    retryOn: [1, 2", "  b: { run: echo b }"))).toEqual(["4:14: this [ is never closed with ]: yaml read on to 5:3 looking for it"]);
    expect(problemsOf(yaml("tasks:", "  a: { run: echo a", "  b: { run: echo b }"))).toEqual(["2:6: this { is never closed with }: yaml read on to 3:3 looking for it"]);
    // Closed on a line indented too little (JSON's way): yaml gave up at the closing bracket, and that is what to mend; its echo is not told.
    const bracket = (open: string, close: string, at: string, key: string) =>
      `this ${open} is closed at ${at}, but yaml did not take that ${close}: the lines of a ${open} ... ${close} value must be indented at least as far as its key, ${key}`;
    expect(problemsOf(yaml("tasks:", "  a: {", "    run: x,", "    retries: 1", "}"))).toEqual([`2:6: ${bracket("{", "}", "5:1", "a (column 3)")}`]);
    expect(problemsOf(yaml("tasks:", "  - run: x", "    dependsOn: [", "      b", "   ]"))).toEqual([`3:16: ${bracket("[", "]", "5:4", "dependsOn (column 5)")}`]);
    expect(parse(yaml("tasks:", "  a: {", "    run: x,", "    retries: 1", "  }")).tasks[0]?.retries).toBe(1);
    // Closed further on, yaml having given up at a line inside indented no more than the key: not "never closed", and no echoes below.
    const inside = (open: string, close: string, at: string, stopped: string, key: string) =>
      `this ${open} is closed at ${at}, but yaml stopped reading it at ${stopped}: the lines inside a ${open} ... ${close} value must be indented more than its key, ${key}`;
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    dependsOn: [", "    b, c", "    ]", "  b: { run: x }", "  c: { run: x }"))).toEqual([
      `4:16: ${inside("[", "]", "6:5", "5:5", "dependsOn (column 5)")}`,
    ]);
    // Brackets and quotes inside strings are not counted.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    env: {A: 'it''s {',", '    B: "x\\"}"}'))).toEqual([`4:10: ${inside("{", "}", "5:14", "5:5", "env (column 5)")}`]);
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "echo', "  b:", "    run: echo b"))).toEqual(['3:10: this " is never closed: the string runs on to 6:1, where yaml gave up; close it (a " inside is written \\")']);
    // Closed on a line indented too little: yaml ended the string on the line before, and that is what to mend.
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "x', '    y"'))[0]).toBe(
      "3:10: this \" is closed at 4:6, but yaml ended the string at 3:12: a quoted string's lines after its first must be indented more than the line it starts on",
    );
    expect(problemsOf(yaml("tasks:", "  a:", "    run: 'it''s", "    y' # why"))[0]).toBe(
      "3:10: this ' is closed at 4:6, but yaml ended the string at 3:16: a quoted string's lines after its first must be indented more than the line it starts on",
    );
    expect(problemsOf(yaml("tasks:", "  a:", "    run: 'it''s", "  b: { run: echo b }"))).toEqual(["3:10: this ' is never closed: the string runs on to 5:1, where yaml gave up; close it (a ' inside is written '')"]);
    // Other errors keep yaml's own words and position.
    expect(problemsOf(yaml("tasks:", "  a: { run: x }", "   b: { run: y }"))).toEqual([expect.stringMatching(/^3:4: /)]);
  });

  it("says a [ or { inside another must have its lines indented more than the block key the outer one is under, not at least as far as it, nor than the flow key", () => {
    const closed = (open: string, close: string, at: string) =>
      `this ${open} is closed at ${at}, but yaml did not take that ${close}: the lines of a ${open} ... ${close} value must be indented more than the key it is under, a (column 3), as it is inside another {`;
    // Before, "at least as far as its key, a (column 3)", of a } at column 3.
    expect(problemsOf(yaml("tasks:", "  b: {run: x}", "  a: {run: x, env: {", "    A: 1", "  }}"))).toEqual([`3:20: ${closed("{", "}", "5:3")}`]);
    expect(problemsOf(yaml("tasks:", "  b: {run: x}", "  a: {run: x, dependsOn: [", "    b", "  ]}"))).toEqual([`3:26: ${closed("[", "]", "5:3")}`]);
    // Before, "its key, env (column 5)": env is a key of the flow mapping, and lines at column 4 are taken.
    expect(problemsOf(yaml("tasks:", "  b: {run: x}", "  a: {run: x,", "    env: {", "    A: 1", "}}"))).toEqual([`4:10: ${closed("{", "}", "6:1")}`]);
    expect(problemsOf(yaml("tasks:", "  b: {run: x}", "  a: {run: x,", "    env: {", "  A: 1 }}"))).toEqual([
      "4:10: this { is closed at 5:8, but yaml stopped reading it at 5:3: the lines inside a { ... } value must be indented more than the key it is under, a (column 3)",
    ]);
    expect(parse(yaml("tasks:", "  b: {run: x}", "  a: {run: x,", "    env: {", "   A: 1", "   }}")).tasks[1]?.env).toEqual({ A: "1" });
  });

  it("reports a YAML error yaml places at the start of an indented line at the line's first character", () => {
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo", "   - x"))).toEqual(["4:4: A block sequence may not be used as an implicit map key"]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "  - b"))).toEqual(["4:3: A block sequence may not be used as an implicit map key"]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", " retries: 1"))).toEqual(["4:2: All mapping items must start at the same column: line 4 starts at column 2, and a above it at column 3; start it at column 3, as a is"]);
  });

  it("offers to indent a mapping's first key less where it alone is indented further than the key below it, which sits a usual step in", () => {
    // `run` indented too far, `dependsOn` where it belongs: before, told only to move `dependsOn` to run's column.
    expect(problemsOf(yaml("tasks:", "  test:", "      run: echo test", "    dependsOn: install", "  install: { run: x }"))).toEqual([
      "4:5: All mapping items must start at the same column: line 4 starts at column 5, and run above it at column 7; start it at column 7, as run is (or, if run is the one indented too far, start run at column 5)",
    ]);
    // Not where several keys above share the column (this line is the odd one), nor where this line is off the usual steps.
    expect(problemsOf(yaml("tasks:", "  a:", "      run: x", "      retries: 1", "    dependsOn: b", "  b: { run: y }"))).toEqual([
      "5:5: All mapping items must start at the same column: line 5 starts at column 5, and retries above it at column 7; start it at column 7, as retries is",
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "   dependsOn: b", "  b: { run: y }"))).toEqual([
      "4:4: All mapping items must start at the same column: line 4 starts at column 4, and run above it at column 5; start it at column 5, as run is",
    ]);
  });

  it("reports a YAML error yaml places on a line of spaces only at the next line with text, where the mistake is", () => {
    // yaml reads the spaces as the next line's indentation, and told the error at column 1 of the line of spaces.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "      ", "   retries: 1"))).toEqual(["5:4: All mapping items must start at the same column: line 5 starts at column 4, and run above it at column 5; start it at column 5, as run is"]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    ", "", "    ", "   retries: 1"))).toEqual(["7:4: All mapping items must start at the same column: line 7 starts at column 4, and run above it at column 5; start it at column 5, as run is"]);
    expect(problemsOf(yaml("tasks:", "  a: { run: x }", "      ", "    b: { run: y }"))).toEqual(["4:5: All mapping items must start at the same column: line 4 starts at column 5, and a above it at column 3; start it at column 3, as a is"]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    ", "  - b"))).toEqual(["5:3: A block sequence may not be used as an implicit map key"]);
    expect(problemsOf("tasks:\r\n  a:\r\n    run: x\r\n    \r\n   retries: 1\r\n")).toEqual(["5:4: All mapping items must start at the same column: line 5 starts at column 4, and run above it at column 5; start it at column 5, as run is"]);
  });

  it("reports a YAML error yaml places on a line of only a comment at the next line with text, where the mistake is, past blank lines and more comments", () => {
    // yaml reads the comment's indentation as the next line's, and told the error at the comment.
    const unaligned = (line: number) => `${line}:4: All mapping items must start at the same column: line ${line} starts at column 4, and run above it at column 5; start it at column 5, as run is`;
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "   # comment", "", "   dependsOn: b", "  b: {run: y}"))).toEqual([unaligned(6)]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "   # one", "      ", "# two", "   retries: 1"))).toEqual([unaligned(7)]);
    expect(problemsOf("tasks:\r\n  a:\r\n    run: x\r\n   # why\r\n   retries: 1\r\n")).toEqual([unaligned(5)]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    # the end", "  - b"))).toEqual(["5:3: A block sequence may not be used as an implicit map key"]);
  });

  it("says to quote a command with \": \" in it, which YAML reads as a mapping, block or flow style; not where the line has no second \": \"", () => {
    const hint = ': a value with ": " in it must be quoted (run: "echo a: b", not run: echo a: b)';
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a: b"))).toEqual([`3:10: Nested mappings are not allowed in compact mappings${hint}`]);
    expect(problemsOf(yaml("tasks:", "  b: { run: echo x: y }"))).toEqual([`2:13: Block collections are not allowed within flow collections${hint}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a:"))).toEqual(['3:10: Nested mappings are not allowed in compact mappings: a value with ": " in it must be quoted (run: "echo a:", not run: echo a:)']);
    expect(problemsOf(yaml("tasks:", "  a: { run: [ - x ] }"))[0]).not.toContain("quoted");
    // The value and key written, not run's example, for another key (before, `(run: "echo a: b", not run: echo a: b)` for an env value), a comment left out.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    env:", "      FOO: bar baz: qux  # why"))).toEqual([
      '5:12: Nested mappings are not allowed in compact mappings: a value with ": " in it must be quoted (FOO: "bar baz: qux", not FOO: bar baz: qux)',
    ]);
    // An anchor or a tag before the value is YAML's, not the value's: left before the quotes (before, `run: "&build echo a: b"`, a command named &build).
    expect(problemsOf(yaml("tasks:", "  a:", "    run: &build echo a: b"))).toEqual([
      '3:10: Nested mappings are not allowed in compact mappings: a value with ": " in it must be quoted (run: &build "echo a: b", not run: &build echo a: b)',
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: !!str echo a: b"))).toEqual([
      '3:10: Nested mappings are not allowed in compact mappings: a value with ": " in it must be quoted (run: !!str "echo a: b", not run: !!str echo a: b)',
    ]);
  });

  it("says to quote a value that is - alone or starts with \"- \", which YAML reads as a list's item, flow or block style; not that a value with \": \" must be quoted", () => {
    const alone = (key: string) => `a value that is - alone must be quoted, as YAML reads it as a list's item (${key}: "-")`;
    // Before, a flow mapping with two keys on the line was told its value had a ": " in it, and a block mapping's - got yaml's words alone.
    expect(problemsOf(yaml("tasks:", "  a: {run: x, env: {OUT: -}}"))).toEqual([`2:26: Block collections are not allowed within flow collections: ${alone("OUT")}`]);
    expect(problemsOf(yaml("tasks:", "  a: {run: x, env: {OUT: -, B: 1}}  # why"))).toEqual([`2:26: Block collections are not allowed within flow collections: ${alone("OUT")}`]);
    expect(problemsOf(yaml("tasks:", "  a: {run: - x}"))).toEqual([
      `2:12: Block collections are not allowed within flow collections: a value that starts with "- " must be quoted, as YAML reads it as a list's item (run: "- x"); a list there is written [x]`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    env:", "      OUT: -  # stdout"))).toEqual([`5:12: Unexpected block-seq-ind on same line with key: ${alone("OUT")}`]);
    expect(problemsOf(yaml("tasks:", "  - run: -"))).toEqual([`2:10: Unexpected block-seq-ind on same line with key: ${alone("run")}`]);
    // A block mapping's - with an item after it was meant as a list: told so, as before.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    dependsOn: - b"))[0]).toContain("a list's - cannot start on its key's line; write dependsOn: [b]");
  });

  it("tells a - alone as a list field's value (dependsOn: -, retryOn: -) as a list begun, not text to quote, and one with items on the lines below as the list meant, told once", () => {
    const seq = "Unexpected block-seq-ind on same line with key";
    const none = (key: string, example: string, item: string, rest: string) =>
      `a list's - cannot start on its key's line, and this one has no item; write ${key}: ${example}, or each item on a line of its own below ${key} (${item}); ${rest}`;
    // Before, each was told to quote it (dependsOn: "-"), which names no task.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "  b:", "    run: y", "    dependsOn: -"))).toEqual([`6:16: ${seq}: ${none("dependsOn", "[lint, test]", "- lint", "with no dependencies, remove dependsOn")}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retryOn: -  # which?", "    retries: 2"))).toEqual([
      `4:14: ${seq}: ${none("retryOn", "[1, 75]", "- 1", "to retry any failure, remove retryOn or write retryOn: any")}`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a: {run: x}", "  b: {run: y, dependsOn: -}"))).toEqual([
      "3:26: Block collections are not allowed within flow collections: a list's - cannot start a value inside { }; write dependsOn: [lint, test]; with no dependencies, remove dependsOn",
    ]);
    expect(problemsOf(yaml("tasks:", "  a: {run: x}", "  b: {run: y, dependsOn: - a}"))).toEqual([
      "3:26: Block collections are not allowed within flow collections: a list's - cannot start a value inside { }; write dependsOn: [a]",
    ]);
    // The items below it, at the key's column or indented more, with or without their own -: the list meant, and yaml's errors on those lines not told too.
    const below = (key: string, first: string, list: string) => `a list's - cannot start on its key's line; remove it, and write each item below ${key} on a line of its own (- ${first}), or write ${key}: ${list}`;
    expect(problemsOf(yaml("tasks:", "  a: {run: x}", "  c: {run: z}", "  b:", "    run: y", "    dependsOn: -", "      a"))).toEqual([`6:16: ${seq}: ${below("dependsOn", "a", "[a]")}`]);
    expect(problemsOf(yaml("tasks:", "  a: {run: x}", "  c: {run: z}", "  b:", "    run: y", "    dependsOn: -  # first", "    - a", "", "    # then", "    - c"))).toEqual([
      `6:16: ${seq}: ${below("dependsOn", "a", "[a, c]")}`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: -", "      - npm ci", "      - npm test", "      - npm run lint", "      - npm pack"))).toEqual([`3:10: ${seq}: ${below("run", "npm ci", "[npm ci, npm test, npm run lint, ...]")}`]);
    // A key below, not an item: no list told (an env value's - is still told to be quoted).
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "  b:", "    run: y", "    dependsOn: -", "    retries: 1"))).toEqual([`6:16: ${seq}: ${none("dependsOn", "[lint, test]", "- lint", "with no dependencies, remove dependsOn")}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    env:", "      OUT: -", "      B: 1"))).toEqual([`5:12: ${seq}: a value that is - alone must be quoted, as YAML reads it as a list's item (OUT: "-")`]);
  });

  it("still tells a mistake of its own on an item's line below dependsOn: - (a quote never closed, an invalid escape, a value starting with @), which mending the - leaves", () => {
    const seq = "Unexpected block-seq-ind on same line with key";
    const below = (list: string) => `${seq}: a list's - cannot start on its key's line; remove it, and write each item below dependsOn on a line of its own (- a), or write dependsOn: ${list}`;
    const head = ["tasks:", "  a: {run: x}", "  c: {run: z}", "  b:", "    run: y", "    dependsOn: -", "      - a"];
    // Each was hidden with yaml's echoes on those lines (only the - told), and told only once the - was mended.
    expect(problemsOf(yaml(...head, '      - "c'))).toEqual([`6:16: ${below('[a, "c]')}`, `8:9: this " is never closed: the string runs on to 9:1, where yaml gave up; close it (a " inside is written \\")`]);
    expect(problemsOf(yaml(...head, '      - "c\\q"'))).toEqual([
      `6:16: ${below('[a, "c\\q"]')}`,
      "8:11: Invalid escape sequence \\q: in a value quoted with \" a backslash starts an escape; write one as text as \\\\",
    ]);
    expect(problemsOf(yaml(...head, "      - @c", "      - c"))).toEqual([`6:16: ${below("[a, @c, c]")}`, "8:9: Plain value cannot start with reserved character @"]);
    // Once the - is mended, the same mistake is told at the same place.
    expect(problemsOf(yaml("tasks:", "  a: {run: x}", "  c: {run: z}", "  b:", "    run: y", "    dependsOn:", "      - a", "      - @c", "      - c"))).toEqual(["8:9: Plain value cannot start with reserved character @"]);
  });

  it("says a line indented more than the key before it is read as more of that key's value, where yaml says only that mappings cannot nest, at that line, where the mistake is (yaml tells the value above it)", () => {
    const hint = (deeper: string, key: string, line: number, col: number) => `: ${deeper} is indented more than ${key} above it (line ${line}), so yaml reads it as more of the value of ${key}; start it at column ${col}, as ${key} is`;
    expect(problemsOf(yaml("tasks:", "  a:", "    run: make", "      retries: 1"))).toEqual([`4:7: Nested mappings are not allowed in compact mappings${hint("retries", "run", 3, 5)}`]);
    // One column more is enough, in each task, and under any key (an env's variable too).
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "     timeout: 5m", "  b:", "    run: y", "     timeout: 5m"))).toEqual([
      `4:6: Nested mappings are not allowed in compact mappings${hint("timeout", "run", 3, 5)}`,
      `7:6: Nested mappings are not allowed in compact mappings${hint("timeout", "run", 6, 5)}`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    env:", "      A: b", "        B: c"))).toEqual([`6:9: Nested mappings are not allowed in compact mappings${hint("B", "A", 5, 7)}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    retries: 1", "", "      run: make"))).toEqual([`5:7: Nested mappings are not allowed in compact mappings${hint("run", "retries", 3, 5)}`]);
    // A comment between ends the value: yaml then says the key is out of line, where it is.
    expect(problemsOf(yaml("tasks:", "  a:", "    retries: 1", "      # why", "      run: make"))).toEqual(["5:7: All mapping items must start at the same column: line 5 starts at column 7, and retries above it at column 5; start it at column 5, as retries is"]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: make", "      all", "      dependsOn: [b]", "  b:", "    run: y"))).toEqual([`5:7: Nested mappings are not allowed in compact mappings${hint("dependsOn", "run", 3, 5)}`]);
    expect(problemsOf(yaml("tasks:", "  - run: make", "      retries: 1"))).toEqual([`3:7: Nested mappings are not allowed in compact mappings${hint("retries", "run", 2, 5)}`]);
    // Two keys indented so, each at its line: the second was told on the next run, once the first was moved. A key's own
    // value indented more still (`base` under `backoff`) moves with it and is not told.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo hi", "      retries: 2", "      timeout: 5s", "  b:", "    run: y"))).toEqual([
      `4:7: Nested mappings are not allowed in compact mappings${hint("retries", "run", 3, 5)}`,
      `5:7: Nested mappings are not allowed in compact mappings${hint("timeout", "run", 3, 5)}`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo hi", "      retries: 2", "      backoff:", "        base: 1s", "     timeout: 5s"))).toEqual([
      `4:7: Nested mappings are not allowed in compact mappings${hint("retries", "run", 3, 5)}`,
      `5:7: Nested mappings are not allowed in compact mappings${hint("backoff", "run", 3, 5)}`,
      `7:6: Nested mappings are not allowed in compact mappings${hint("timeout", "run", 3, 5)}`,
    ]);
    // A plain value's lines indented more, with no key among them, are one value, as YAML reads them: no error.
    expect(parse(yaml("tasks:", "  a:", "    run: make", "      all", "  b:", "    run: y")).tasks[0]?.run).toBe("make all");
  });

  it("says the lines of a | or > block must be indented more than its key, where yaml reads them as keys", () => {
    const hint = (sign: string, key: string, col: number) => `: the lines of a ${sign} block must be indented more than its key, ${key} (column ${col})`;
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "    echo a"))).toEqual([`4:5: Implicit map keys need to be followed by map values${hint("|", "run", 5)}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |-  # the build", "", "    make build", "    retries: 1"))).toEqual([`5:5: Implicit keys need to be on a single line${hint("|", "run", 5)}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: >", "    echo a", "    echo b"))).toEqual([`4:5: Implicit keys need to be on a single line${hint(">", "run", 5)}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "  echo a"))).toEqual([`4:3: Implicit map keys need to be followed by map values${hint("|", "run", 5)}`]);
    // Indented enough, it is a block: no error.
    expect(parse(yaml("tasks:", "  a:", "    run: >", "     echo a", "     echo b")).tasks[0]?.run).toBe("echo a echo b\n");
  });

  it("says a key's colon must be followed by a space (retries:2), where yaml reads the line as a key alone or the task as one string", () => {
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries:2"))).toEqual(["4:5: Implicit map keys need to be followed by map values: a key's colon must be followed by a space (retries: 2)"]);
    expect(problemsOf(yaml("tasks:", "  - run: x", "    timeout:5m"))).toEqual(["3:5: Implicit map keys need to be followed by map values: a key's colon must be followed by a space (timeout: 5m)"]);
    // A comment after it is not written into the value: before, `(retries: 2 # flaky)`.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries:2 # flaky"))).toEqual(["4:5: Implicit map keys need to be followed by map values: a key's colon must be followed by a space (retries: 2)"]);
    // With a key below it, yaml tells that key out of line (the comment ends the glued line as the task's value): told at the glued key.
    expect(problemsOf(yaml("tasks:", "  a:", "    retries:2 # flaky", "    run: x"))).toEqual([
      "3:5: a key's colon must be followed by a space (retries: 2); without one, yaml reads retries:2 as text, and the key on line 4 below it as out of line",
    ]);
    // A line of a plain value's text begun on the key's line above it (`run: docker run` then `node:18 # lts`) is no key: the key
    // below it is indented as that text, where the mistake is, as without the comment (before, told to write `node: 18`).
    const deeper = "All mapping items must start at the same column: line 5 starts at column 7, and run above it at column 5; start it at column 5, as run is";
    expect(problemsOf(yaml("tasks:", "  a:", "    run: docker run", "      node:18 # lts", "      retries: 1"))).toEqual([`5:7: ${deeper}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: docker run", "      node:18", "      retries: 1"))).toEqual([
      "5:7: Nested mappings are not allowed in compact mappings: retries is indented more than run above it (line 3), so yaml reads it as more of the value of run; start it at column 5, as run is",
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run:echo hi"))).toEqual(['3:5: task "a": the task must be a mapping with at least `run`, got "run:echo hi"; a key\'s colon must be followed by a space (run: echo hi)']);
    // Each field on its own line glued so (YAML joins them into the one string): each line's fix, not `run: echo retries:1`, which would run `echo retries:1`.
    expect(problemsOf(yaml("tasks:", "  a:", "    run:echo hi", "    retries:1", "  b:", "    run:echo", "      more"))).toEqual([
      '3:5: task "a": the task must be a mapping with at least `run`, got "run:echo hi retries:1"; a key\'s colon must be followed by a space, on each of its lines (run: echo hi; retries: 1)',
      '6:5: task "b": the task must be a mapping with at least `run`, got "run:echo more"; a key\'s colon must be followed by a space (run: echo more)',
    ]);
    // Fields apart with "; ", a value's ", " kept in it; a line that is no field on the value above it, not an item of its own.
    expect(problemsOf(yaml("tasks:", "  a:", "    run:echo a, b", "    more words", "    timeout:5s"))).toEqual([
      '3:5: task "a": the task must be a mapping with at least `run`, got "run:echo a, b more words timeout:5s"; a key\'s colon must be followed by a space, on each of its lines (run: echo a, b more words; timeout: 5s)',
    ]);
    // A URL is no key glued to its value.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: curl", "    https://example.com"))).toEqual(["4:5: Implicit map keys need to be followed by map values"]);
    // A command with a colon in it is no key.
    expect(problemsOf(yaml("tasks:", "  a: docker:latest"))).toEqual(['2:6: task "a": the task must be a mapping with at least `run`, got "docker:latest"']);
  });

  it("names a no-break space (U+00A0) where a space was meant, at its line:column, as yaml's error or in the key it made: after a key's colon, in a line's indentation, after a list's dash", () => {
    const nbsp = (at: string) => `there is a no-break space (U+00A0) at ${at}, which YAML reads as text, not as a space; replace it with a space`;
    // Before, yaml's words alone: JavaScript's \s takes U+00A0 for a space, so the glued-key hint missed it.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries:\u00a01"))).toEqual([`4:5: Implicit map keys need to be followed by map values: ${nbsp("4:13")}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    dependsOn:", "    -\u00a0b", "  b: { run: y }"))).toEqual([`5:5: Implicit map keys need to be followed by map values: ${nbsp("5:6")}`]);
    // Not one yaml did not stumble on, in a quoted value or in a value after its key's ": ": yaml's error there is told as before.
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "grep \\d Total:\u00a05 f"'))).toEqual([
      "3:16: Invalid escape sequence \\d: in a value quoted with \" a backslash starts an escape; write one as text as \\\\, or quote the value with ' (run: 'grep \\d Total:\u00a05 f')",
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "echo Total:\u00a05" extra'))).toEqual([
      `3:26: Unexpected scalar at node end: a value that starts with a quote, [ or { ends where that closes; to write more after it, quote the whole value (run: '"echo" foo', run: "[ -f x ] && make")`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a:\u00a0b: c"))).toEqual([
      '3:10: Nested mappings are not allowed in compact mappings: a value with ": " in it must be quoted (run: "echo a: b", not run: echo a: b)',
    ]);
    for (const simple of [true, false]) {
      // Before, an invalid task id "\u00a0 retries", and that task's lack of a mapping too.
      expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "  \u00a0 retries: 1"), "wf.yaml", { simple })).toEqual([
        `4:3: invalid task id "\\u00a0 retries": ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."; ${nbsp("4:3")}`,
      ]);
      // A key with one in it: no "did you mean" the key it is with a space for it, and no `run` missing where it was meant as run.
      expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    \u00a0retries: 1"), "wf.yaml", { simple })).toEqual([`4:5: task "a": unknown key "\\u00a0retries"; ${nbsp("4:5")}`]);
      expect(problemsOf(yaml("tasks:", "  a:", "    retries\u00a0: 1", "    \u00a0run: x"), "wf.yaml", { simple })).toEqual([
        `3:5: task "a": unknown key "retries\\u00a0"; ${nbsp("3:12")}`,
        `4:5: task "a": unknown key "\\u00a0run"; ${nbsp("4:5")}`,
      ]);
      // In a quoted key, at the character, past the quote; an escape of one, at the escape.
      expect(problemsOf(yaml("tasks:", '  "build\u00a0":', "    run: x"), "wf.yaml", { simple })).toEqual([
        `2:3: invalid task id "build\\u00a0": ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."; ${nbsp("2:9")}`,
      ]);
      expect(problemsOf(yaml("tasks:", "  a:", "    run: x", '    "\u00a0retries": 1', "    'it''s\u00a0': 2"), "wf.yaml", { simple })).toEqual([
        `4:5: task "a": unknown key "\\u00a0retries"; ${nbsp("4:6")}`,
        `5:5: task "a": unknown key "it's\\u00a0"; ${nbsp("5:11")}`,
      ]);
      expect(problemsOf(yaml("tasks:", "  a:", "    run: x", '    "\\u00a0retries": 1'), "wf.yaml", { simple })).toEqual([
        `4:5: task "a": unknown key "\\u00a0retries"; ${nbsp("4:6").replace("(U+00A0)", "(U+00A0), written \\u00a0,")}`,
      ]);
    }
  });

  it("says the top level's keys must start where the first one does, where the file's first line is indented (pasted so)", () => {
    const hint = (col: number) => `: this line is indented less than the file's first line, whose key starts at column ${col}: the top level's keys must all start at the same column`;
    expect(problemsOf(yaml("  name: ci", "tasks:", "  a:", "    run: x"))[0]).toBe(`2:1: Unexpected scalar at node end${hint(3)}`);
    expect(problemsOf(yaml("# ci", "", "    concurrency: 2", "tasks:", "  a:", "    run: x"))[0]).toBe(`4:1: Unexpected scalar at node end${hint(5)}`);
    expect(problemsOf(yaml("  tasks:", "    a:", "      run: x", "env: { A: b }"))).toEqual([`4:1: Unexpected scalar at node end${hint(3)}`]);
  });

  it("says to quote a whole command that starts with a quote, [ or { and goes on after it closes (\"echo\" foo, [ -f x ] && make)", () => {
    const hint = ": a value that starts with a quote, [ or { ends where that closes; to write more after it, quote the whole value (run: '\"echo\" foo', run: \"[ -f x ] && make\")";
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "echo" foo'))).toEqual([`3:17: Unexpected scalar at node end${hint}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: 'it''s' x"))).toEqual([`3:18: Unexpected scalar at node end${hint}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: [ -f x ] && make"))).toEqual([`3:19: Unexpected anchor at node end${hint}`]);
    expect(problemsOf(yaml("tasks:", "  a: { run: x, env: {A: b} c }"))).toEqual([`2:28: Unexpected scalar at node end${hint}`]);
  });

  it("says how to write a quote inside a quoted command, which ends it ('it's', \"say \"hi\"\"), or, where the command's own quotes start it (\"a b\" && \"c\"), to quote the whole value", () => {
    const ends = (line: number, col: number, quote: string, what = "scalar") => `${line}:${col}: Unexpected ${what} at node end: a ${quote} inside a value quoted with ${quote} ends it`;
    // The first quote inside opens a word: only those inside are the shell's.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: 'echo it's done'"))).toEqual([`${ends(3, 19, "'")}; write each one inside as '' (run: 'echo it''s done')`]);
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "grep "foo bar" /etc/hostname"'))).toEqual([`${ends(3, 17, '"')}; write each one inside as \\" (run: "grep \\"foo bar\\" /etc/hostname")`]);
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "echo \\"a\\" "b""'))).toEqual([`${ends(3, 23, '"')}; write each one inside as \\" (run: "echo \\"a\\" \\"b\\"")`]);
    expect(problemsOf(yaml("tasks:", "  a:", `    run: 'it's "x"'`))).toEqual([`${ends(3, 14, "'")}; write each one inside as '' (run: 'it''s "x"')`]);
    // It closes one (a space after it): the value's first quote is the shell's too, and so is its last.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: 'a' && 'b'   # why"))).toEqual([`${ends(3, 14, "'", "anchor")}: to keep the quotes for the shell, quote the whole value with " (run: "'a' && 'b'")`]);
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "a b" && "c d"'))).toEqual([`${ends(3, 16, '"', "anchor")}: to keep the quotes for the shell, quote the whole value with ' (run: '"a b" && "c d"')`]);
    // No other quote to offer where the value has one (or a backslash, which ' would keep, and " read as an escape): each written inside, those around it too.
    expect(problemsOf(yaml("tasks:", "  a:", `    run: "it's" && "x"`))).toEqual([`${ends(3, 17, '"', "anchor")}: to keep the quotes for the shell, write each one inside as \\", those around it too (run: "\\"it's\\" && \\"x\\"")`]);
  });

  it("says a backslash in a double-quoted command starts an escape, and how to write it as text", () => {
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "grep \\d+ file"'))).toEqual([`3:16: Invalid escape sequence \\d: in a value quoted with " a backslash starts an escape; write one as text as \\\\, or quote the value with ' (run: 'grep \\d+ file')`]);
    expect(problemsOf(yaml("tasks:", "  b: { run: \"dir C:\\Users\" }"))).toEqual([`2:20: Invalid escape sequence \\Users": in a value quoted with " a backslash starts an escape; write one as text as \\\\, or quote the value with ' (run: 'dir C:\\Users')`]);
  });

  it("says a list cannot start on its key's line (dependsOn: - a), with the flow list meant", () => {
    const hint = (key: string, list: string) => `: a list's - cannot start on its key's line; write ${key}: ${list}, or each - item on a line of its own below ${key}`;
    expect(problemsOf(yaml("tasks:", "  a: { run: x }", "  b:", "    run: y", "    dependsOn: - a"))).toEqual([`5:16: Unexpected block-seq-ind on same line with key${hint("dependsOn", "[a]")}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retryOn: - 1  # flaky"))).toEqual([`4:14: Unexpected block-seq-ind on same line with key${hint("retryOn", "[1]")}`]);
  });

  it("says to quote a command that starts with an indicator a plain value may not start with (@, `, %, |, >, &)", () => {
    expect(problemsOf(yaml("tasks:", "  a:", "    run: @foo bar"))).toEqual(['3:10: Plain value cannot start with reserved character @: a value that starts with @ must be quoted (run: "@foo bar")']);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: `date`"))).toEqual(['3:10: Plain value cannot start with reserved character `: a value that starts with ` must be quoted (run: "`date`")']);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: %s x"))).toEqual(['3:10: Plain value cannot start with directive indicator character %: a value that starts with % must be quoted (run: "%s x")']);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: > out.txt"))).toEqual(['3:12: Not a YAML token: out.txt: a value that starts with > must be quoted (run: "> out.txt")']);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: & echo"))).toEqual(['3:10: Anchor cannot be an empty string: a value that starts with & must be quoted (run: "& echo")']);
    // A comment after the value stays out of the quotes (before, `run: "@foo bar # note"`); a # with no space before it is the value's.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: @foo bar # note"))).toEqual(['3:10: Plain value cannot start with reserved character @: a value that starts with @ must be quoted (run: "@foo bar")']);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: > out.txt#1 # note"))).toEqual(['3:12: Not a YAML token: out.txt#1 # note: a value that starts with > must be quoted (run: "> out.txt#1")']);
    // A " #" inside the command's own quotes is its text, kept in the quotes written (before, `run: "@echo \"issue"`, a quote left open); one after them is a comment.
    expect(problemsOf(yaml("tasks:", "  a:", '    run: @echo "issue # 42"'))).toEqual(['3:10: Plain value cannot start with reserved character @: a value that starts with @ must be quoted (run: "@echo \\"issue # 42\\"")']);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: @echo 'a # b' it's # note"))).toEqual([`3:10: Plain value cannot start with reserved character @: a value that starts with @ must be quoted (run: "@echo 'a # b' it's")`]);
    // An anchor or a tag before the value stays before the quotes (before, `run: "&x @foo"`, told as a value that starts with &).
    expect(problemsOf(yaml("tasks:", "  a:", "    run: &x @foo"))).toEqual(['3:13: Plain value cannot start with reserved character @: a value that starts with @ must be quoted (run: &x "@foo")']);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: !!str @foo"))).toEqual(['3:16: Plain value cannot start with reserved character @: a value that starts with @ must be quoted (run: !!str "@foo")']);
    // A block scalar written as one is no error.
    expect(parse(yaml("tasks:", "  a:", "    run: |", "      echo a")).tasks[0]?.run).toBe("echo a\n");
  });

  it("quotes only the first line of the text yaml found out of place, at most 60 characters of it, not a whole block of script", () => {
    const script = Array.from({ length: 20 }, (_, index) => `      echo step ${index}`);
    const problems = problemsOf(yaml("  s: x", "tasks:", "  b:", "    run: |", ...script));
    expect(problems).toContain('3:3: Unexpected scalar token in YAML stream: "b"');
    expect(problems).toContain('5:7: Unexpected scalar token in YAML stream: "echo step 0"');
    const long = `echo ${"x".repeat(80)}`;
    expect(problemsOf(yaml("  s: x", "tasks:", "  b:", "    run: |", `      ${long}`))).toContain(`5:7: Unexpected scalar token in YAML stream: ${JSON.stringify(`${long.slice(0, 57)}...`)}`);
  });

  it("keeps line numbers right after a syntax error, and caps the echoes that follow it", () => {
    const lines = ["defaults: ]", ...Array.from({ length: 30 }, (_, index) => `  k${index}: 1`)];
    const problems = problemsOf(yaml(...lines));
    expect(problems.slice(0, 3)).toEqual(['1:11: Unexpected flow-seq-end token in YAML stream: "]"', '2:3: Unexpected scalar token in YAML stream: "k0"', '3:3: Unexpected scalar token in YAML stream: "k1"']);
    expect(problems).toHaveLength(11);
    expect(problems[10]).toMatch(/^11:3: \.\.\. and up to \d+ more YAML errors from here on; fix the ones above first$/);
  });

  it("says a file's line endings are CR only (classic Mac), and reports its other problems on the lines its editor shows", () => {
    const cr = "line endings are CR only (classic Mac): convert them to LF";
    expect(problemsOf("tasks:\r  a:\r    run: x\r    retries: y\r")).toEqual([`1:7: ${cr}`, '4:14: task "a": `retries` must be an integer from 0 to 100, got "y"']);
    // Nothing runs, even when CR-only is the file's only problem; a one-line file ending in CR is one too.
    expect(problemsOf("tasks:\r  a:\r    run: echo hi\r")).toEqual([`1:7: ${cr}`]);
    expect(problemsOf("tasks: { a: { run: x } }\r")).toEqual([`1:25: ${cr}`]);
    // A byte that is not UTF-8 is placed on those lines too.
    expect(problemsOf(Buffer.from("tasks:\r  a:\r    run: \xff\r", "latin1"))).toEqual(["3:10: the file is not valid UTF-8 (byte 0xff at byte offset 21); save it as UTF-8"]);
    // CRLF is a line break yaml takes: not reported.
    expect(problemsOf("tasks:\r\n  a:\r\n    run: x\r\n    retries: y\r\n")).toEqual(['4:14: task "a": `retries` must be an integer from 0 to 100, got "y"']);
  });

  it("says where a line ends in CR alone among lines that end in LF or CRLF, with the other problems on the lines an editor shows", () => {
    const mixed = "this line ends in CR alone (classic Mac), as lines before or after it do not: convert the line endings to LF";
    // yaml read the first two lines as one, and told of a nested mapping with a hint to quote ": ".
    expect(problemsOf("tasks:\r  a:\r    run: x\n    retries: y\n")).toEqual([`1:7: ${mixed}`, '4:14: task "a": `retries` must be an integer from 0 to 100, got "y"']);
    expect(problemsOf("tasks:\r\n  a:\r\n    run: x\r  b:\r\n    run: y\r\n")).toEqual([`3:11: ${mixed}`]);
    expect(problemsOf(Buffer.from("tasks:\r\n  a:\r    run: \xff\n", "latin1"))).toEqual(["3:10: the file is not valid UTF-8 (byte 0xff at byte offset 22); save it as UTF-8"]);
  });

  it("reports tabs used as indentation, saying to indent with spaces", () => {
    expect(problemsOf("tasks:\n\ta: { run: x }\n")).toEqual(["2:1: Tabs are not allowed as indentation: indent with spaces (an editor set to insert spaces in .yaml files keeps it so)"]);
  });

  it("says a line of a block scalar (run: |) is indented with a tab, as a Makefile's would be, where yaml words it as a block's indentation", () => {
    const hint = "this line is indented with a tab, which YAML does not count as indentation; indent the block's lines with spaces (an editor set to insert spaces in .yaml files keeps it so)";
    expect(problemsOf("tasks:\n  build:\n    run: |\n\tmake\n")).toEqual([`4:1: Block scalars with more-indented leading empty lines must use an explicit indentation indicator: ${hint}`]);
    expect(problemsOf("tasks:\n  build:\n    run: |\n      make\n\tmore\n")).toEqual([`5:1: Block scalar lines must not be less indented than their first line: ${hint}`]);
    // Without a tab, no word of one.
    expect(problemsOf("tasks:\n  build:\n    run: |\n      make\n     more\n").join("\n")).not.toContain("tab");
  });

  it("tells only the tabs after a tab used as indentation, not the correct lines below it that yaml then misreads, and says how many it left out", () => {
    const tab = "Tabs are not allowed as indentation: indent with spaces (an editor set to insert spaces in .yaml files keeps it so)";
    // yaml reads `b`, `c` and `d` as keys out of line after the tab, and said "start it at column 5" of each.
    expect(problemsOf("tasks:\n  a:\n    run: x\n\tpriority: high\n  b:\n    run: y\n  c:\n    run: z\n  d:\n    run: z\n")).toEqual([
      `4:1: ${tab}; yaml then found 2 errors below it, which may follow from it and are not shown: fix the tab first`,
    ]);
    // Every tab is told; an error above the first tab still is.
    expect(problemsOf("tasks:\n  a:\n    run: 'x\n     y'\n    retries: 1\n   priority: high\n  b:\n\trun: y\n  c:\n\trun: z\n")).toEqual([
      "6:4: All mapping items must start at the same column: line 6 starts at column 4, and retries above it at column 5; start it at column 5, as retries is",
      `8:1: ${tab}`,
      `10:1: ${tab}`,
    ]);
    // In a large file, one tab is one problem, not hundreds of echoes.
    const lines = ["tasks:"];
    for (let index = 0; index < 3000; index++) lines.push(`  t${index}:`, `    run: echo ${index}`);
    lines.splice(2001, 0, "\tretries: 1");
    const problems = problemsOf(`${lines.join("\n")}\n`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^2002:1: Tabs are not allowed as indentation: .*; yaml then found \d+ errors below it/);
  });

  it("says where a key out of line with its mapping's keys should start: at the column of the key above it", () => {
    const hint = (line: number, own: number, key: string, col: number) => `All mapping items must start at the same column: line ${line} starts at column ${own}, and ${key} above it at column ${col}; start it at column ${col}, as ${key} is`;
    // One space short of its sibling, under a task and under env.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "   dependsOn: b", "  b: { run: y }"))).toEqual([`4:4: ${hint(4, 4, "run", 5)}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    env:", "      A: 1", "     B: 2"))).toEqual([`6:6: ${hint(6, 6, "A", 7)}`]);
    // A task id one space short: its sibling is the task above, not that task's fields.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", " b:", "    run: y"))).toEqual([`4:2: ${hint(4, 2, "a", 3)}`]);
    // CRLF line endings: the same columns.
    expect(problemsOf("tasks:\r\n  a:\r\n    run: x\r\n   dependsOn: b\r\n  b: { run: y }\r\n")).toEqual([`4:4: ${hint(4, 4, "run", 5)}`]);
  });

  it("says where a | or > block's line indented left of the block's other lines should start: at their column, not at the block's key's, also for one at its key's column or left of it", () => {
    const hint = (line: number, own: number, key: string, indicator: string, col: number) =>
      `All mapping items must start at the same column: line ${line} starts at column ${own}, left of the other lines of ${key}'s ${indicator} block, at column ${col}, so yaml ends the block above it and reads it as a key; start it at column ${col}, as the block's lines are`;
    // Before, it said to start it at column 5, as run is: that made `echo y` a key of the task.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo x", "     echo y", "  b:", "    run: y"))).toEqual([`5:6: ${hint(5, 6, "run", "|", 7)}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: >-", "        make", "", "        all", "      clean", "  b:", "    run: y"))).toEqual([`7:7: ${hint(7, 7, "run", ">", 9)}`]);
    // A key's line under the block was meant beside the block's key: told so, as before.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo x", "     retries: 1", "  b:", "    run: y"))).toEqual([
      "5:6: All mapping items must start at the same column: line 5 starts at column 6, and run above it at column 5; start it at column 5, as run is",
    ]);
    // At the block's key's column or left of it, after the block's first line: before, "start it at column 5, as run is", or yaml's words alone.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo one", "   echo two"))).toEqual([`5:4: ${hint(5, 4, "run", "|", 7)}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo one", "    echo two"))).toEqual([`5:5: ${hint(5, 5, "run", "|", 7).replace("All mapping items must start at the same column", "Implicit map keys need to be followed by map values")}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      if true; then", "    echo two", "      fi"))).toEqual([`5:5: ${hint(5, 5, "run", "|", 7).replace("All mapping items must start at the same column", "Implicit keys need to be on a single line")}`]);
    expect(problemsOf(yaml("tasks:", "  - id: a", "    run: >", "      make", "        all", "  clean"))).toEqual([`6:3: ${hint(6, 3, "run", ">", 7)}`]);
    // A key glued to its value at the block's key's column is still told as that.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo one", "    retries:2"))).toEqual(["5:5: Implicit map keys need to be followed by map values: a key's colon must be followed by a space (retries: 2)"]);
    // A key of any characters a key may hold, quoted or a flow mapping, under the block is a key out of line, told so; not a block's line.
    const fetch = ["tasks:", "  01-fetch:", "    run: |", "      curl -O https://example.com/data.tgz", "      tar xzf data.tgz"];
    const key = (own: number, name: string, col: number) => `6:${own}: All mapping items must start at the same column: line 6 starts at column ${own}, and ${name} above it at column ${col}; start it at column ${col}, as ${name} is`;
    expect(problemsOf(yaml(...fetch, "   02-build:", "    run: make"))).toEqual([key(4, "run", 5)]);
    expect(problemsOf(yaml(...fetch, " 02-build:", "    run: make"))).toEqual([key(2, "01-fetch", 3)]);
    for (const line of ["   my key: 1", '   "my key": 1', "   {a: - }"]) expect(problemsOf(yaml(...fetch, line))[0]).toMatch(/^6:4: All mapping items must start at the same column: line 6 starts at column 4, and run above it at column 5/);
    // A block's line with a colon that starts no key (a URL, or in a comment) is still a block's line.
    // So is one whose ": " follows a shell's quote, option or variable: a script's words, not a key's.
    const scripts = ['     curl -H "Accept: application/json" https://x/y', '     echo "Status: ok"', "     docker run -e A: b", "     echo $X: ok"];
    for (const line of ["     curl https://x.org/y", "     make # see: docs", ...scripts]) expect(problemsOf(yaml(...fetch, line))).toEqual([`6:6: ${hint(6, 6, "run", "|", 7)}`]);
  });

  it("says that a comment left of a | or > block's lines ends the block, at the comment, not at the block's line below it that yaml tells", () => {
    const hint = (key: string, indicator: string, col: number, line: number) =>
      `this comment is left of the lines of ${key}'s ${indicator} block (column ${col}), so it ends the block, and yaml reads line ${line} as a key; indent the comment to column ${col} to keep it in the block, or remove it`;
    // Before, it said to start line 6 at column 5, as run is: that made `echo three` a key of the task.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo one", "# echo two", "      echo three"), "cc.yaml")).toEqual([`5:1: ${hint("run", "|", 7, 6)}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo one", "  # echo two", "      echo three", "  b: { run: y }"))).toEqual([`5:3: ${hint("run", "|", 7, 6)}`]);
    // Past blank lines and more comments, the first comment left of the block's lines; a > block in a list of tasks; CRLF line endings.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo one", "", "# one", "     # two", "", "      echo three"))).toEqual([`6:1: ${hint("run", "|", 7, 9)}`]);
    expect(problemsOf("tasks:\r\n  - id: a\r\n    run: >\r\n        make\r\n      # all\r\n        all\r\n")).toEqual([`5:7: ${hint("run", ">", 9, 6)}`]);
    // A comment indented with a tab: one problem on its line, the tab's (before, the tab's and this one at 5:2 too).
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo one", "\t# c", "      echo two"))).toEqual([
      "5:1: Block scalar lines must not be less indented than their first line: this line is indented with a tab, which YAML does not count as indentation; indent the block's lines with spaces (an editor set to insert spaces in .yaml files keeps it so)",
    ]);
    // A comment above a key out of line (a task id that starts with a digit): the key is told, not the comment.
    expect(problemsOf(yaml("tasks:", "  01-fetch:", "    run: |", "      curl -O https://example.com/data.tgz", "      tar xzf data.tgz", "", "# ---- build ----", " 02-build:", "    run: make"))).toEqual([
      "8:2: All mapping items must start at the same column: line 8 starts at column 2, and 01-fetch above it at column 3; start it at column 3, as 01-fetch is",
    ]);
    // A comment at the block's column is a line of the block: no error.
    expect(parse(yaml("tasks:", "  a:", "    run: |", "      echo one", "      # echo two", "      echo three")).tasks[0]?.run).toBe("echo one\n# echo two\necho three\n");
  });

  it("says where a list item out of line with the item above it should start: at that item's column, where yaml says only that a list cannot be a key", () => {
    const hint = (line: number, own: number, item: string, col: number) =>
      `A block sequence may not be used as an implicit map key: line ${line}'s - is at column ${own}, and that of the item above it, ${item}, at column ${col}; start it at column ${col}, as ${item} is`;
    expect(problemsOf(yaml("tasks:", "  a:", "    dependsOn:", "      - b", "     - c", "    run: x", "  b: { run: y }", "  c: { run: z }"))).toEqual([`5:6: ${hint(5, 6, "- b", 7)}`]);
    // Items at their key's column are allowed, and one space short of those too is out of line.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retryOn:", "    - 1", "   - 2"))).toEqual([`6:4: ${hint(6, 4, "- 1", 5)}`]);
    // Past a comment and a blank line; a list of tasks, the item shown as written, its comment left out.
    expect(problemsOf(yaml("tasks:", "  a:", "    dependsOn:", "      - b  # first", "      # then", "", "     - c", "    run: x"))).toEqual([`7:6: ${hint(7, 6, "- b", 7)}`]);
    expect(problemsOf(yaml("tasks:", "  - id: a", "    run: x", " - id: b", "   run: y"))).toEqual([`4:2: ${hint(4, 2, "- id: a", 3)}`]);
  });

  it("reports a duplicate task id at the second definition, naming the first", () => {
    expect(problemsOf(yaml("tasks:", "  a: { run: x }", "  b: { run: x }", "  a: { run: y }"))).toEqual(['4:3: duplicate task id "a" (first defined at 2:3); each must appear once']);
  });

  it("refuses task ids that differ only in case (Build, build) at the later one, naming the first: one log file where case is ignored (macOS)", () => {
    const sameLog = (id: string, first: string, at: string) =>
      `task id "${id}" differs from "${first}" (defined at ${at}) only in case: their logs, ${id}.log and ${first}.log, are one file on a file system that ignores case (macOS's and Windows' by default), where the two tasks' output would mix; rename one`;
    for (const simple of [true, false]) {
      // Before, the file was valid, and on a Mac both tasks appended to one log.
      expect(problemsOf(yaml("tasks:", "  Build: { run: x }", "  lint: { run: y, dependsOn: [Build] }", "  build: { run: z }"), "wf.yaml", { simple })).toEqual([`4:3: ${sameLog("build", "Build", "2:3")}`]);
      // Each later one names the first; a duplicate is told as one, and with another case as well.
      expect(problemsOf(yaml("tasks:", "  deploy-A:", "    run: x", "  deploy-a: { run: y }", "  DEPLOY-A: { run: z }", "  deploy-a: { run: w }"), "wf.yaml", { simple })).toEqual([
        `4:3: ${sameLog("deploy-a", "deploy-A", "2:3")}`,
        `5:3: ${sameLog("DEPLOY-A", "deploy-A", "2:3")}`,
        '6:3: duplicate task id "deploy-a" (first defined at 4:3); each must appear once',
      ]);
    }
    // Ids that differ otherwise, or a task id's case beside a field's (run, Run as an id), are taken.
    expect(parse(yaml("tasks:", "  build1: { run: x }", "  build_1: { run: y }", "  Run: { run: z }")).tasks.map((task) => task.id)).toEqual(["build1", "build_1", "Run"]);
  });

  it("reports duplicate keys inside a task", () => {
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    run: y"))).toEqual(['4:5: duplicate key "run" (first defined at 3:5); each must appear once']);
  });

  it("reports wrong types for run: number, list, null, empty, missing", () => {
    const text = yaml("tasks:", "  a: { run: 1 }", "  b: { run: [x] }", "  c:", "    run:", "  d: { run: '  ' }", "  e: { retries: 1 }");
    expect(problemsOf(text)).toEqual([
      '2:13: task "a": `run` must be a non-empty command string, got 1',
      '3:13: task "b": `run` must be a non-empty command string, got a list; write the command as a string, not a list (run: x)',
      '5:5: task "c": `run` must be a non-empty command string, got nothing (null)',
      '6:13: task "d": `run` must be a non-empty command string, got "  "',
      '7:3: task "e": `run` is missing; it must be a non-empty command string',
    ]);
  });

  // `run: # TODO` was "got nothing (null)", the comment on that very line unsaid: YAML reads the
  // value as empty, and a user reads the line as holding something.
  it("says that a comment took the place of an empty value (run: # TODO), at the key, for any field; not for ~ or null written out", () => {
    const text = yaml(
      "tasks:",
      "  a:",
      "    run: # TODO",
      "    timeout:\t#   later  ",
      "    env:",
      "      FOO: # set in CI",
      "    dependsOn:  # none yet",
      "  b:",
      "    run: ~ # on purpose",
      "  c: { run: echo c, retries: # 3",
      "    }",
      "  d:",
      "    run:",
      "  # a comment on a line of its own",
    );
    const comment = (text: string): string => `: the rest of its line, "${text}", is a YAML comment (a # after a space starts one), not its value`;
    expect(problemsOf(text)).toEqual([
      `3:5: task "a": \`run\` must be a non-empty command string, got nothing (null)${comment("# TODO")}`,
      `4:5: task "a": \`timeout\` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit), got nothing (null)${comment("#   later")}`,
      expect.stringMatching(/^6:7: task "a": `env.FOO` has no value \(null\): the rest of its line, "# set in CI", is a YAML comment \(a # after a space starts one\), not its value; env sets variables and cannot unset one /),
      `7:5: task "a": \`dependsOn\` must be a task id or a list of task ids, got nothing (null)${comment("# none yet")}`,
      '9:10: task "b": `run` must be a non-empty command string, got nothing (null)',
      `10:21: task "c": \`retries\` must be an integer from 0 to 100, got nothing (null)${comment("# 3")}`,
      '13:5: task "d": `run` must be a non-empty command string, got nothing (null)',
    ]);
  });

  // `cwd: ~` was "got nothing (null)": the ~ meant as the home folder is YAML's null, and taskq would not expand it anyway.
  it("says that cwd: ~ is YAML's null, not the home folder, which taskq does not expand either; not for cwd: null or an empty cwd", () => {
    const text = yaml("defaults:", "  cwd: ~ # home", "tasks:", "  a:", "    run: x", "    cwd: ~", "  b: { run: x, cwd: ~ }", "  c:", "    run: x", "    cwd: null", "  d:", "    run: x", "    cwd:");
    const hint = `: ~ alone is YAML's null, not the home folder, and taskq does not expand ~ or $HOME in a cwd as a shell does; write the folder's path out (cwd: ${JSON.stringify(homedir())})`;
    const expected = [
      `2:8: \`defaults.cwd\` must be a folder path, relative to the workflow file, got nothing (null)${hint}`,
      `6:10: task "a": \`cwd\` must be a folder path, relative to the workflow file, got nothing (null)${hint}`,
      `7:21: task "b": \`cwd\` must be a folder path, relative to the workflow file, got nothing (null)${hint}`,
      '10:10: task "c": `cwd` must be a folder path, relative to the workflow file, got nothing (null)',
      '13:5: task "d": `cwd` must be a folder path, relative to the workflow file, got nothing (null)',
    ];
    expect(problemsOf(text)).toEqual(expected);
    expect(problemsOf(text, "wf.yaml", { simple: false })).toEqual(expected);
  });

  it("reports bad durations, dates, enums and numbers", () => {
    const text = yaml(
      "tasks:",
      "  a:",
      "    run: x",
      "    timeout: 5 minutes",
      "    delay: -1s",
      "    priority: urgent",
      "    retries: 101",
      "    retryOn: [0]",
      "  b:",
      "    run: x",
      "    runAt: 2026-02-30T00:00:00Z",
      "    backoff: { base: 1e400 }",
      "  c:",
      "    run: x",
      "    runAt: 2026-03-01T00:00:00",
      "    timeout: 0",
    );
    const duration = "must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days";
    // A timeout's range starts at 1ms, and its message says so.
    const timeout = "must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit)";
    const date = "must be a real date and time, ISO 8601 with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00";
    expect(problemsOf(text)).toEqual([
      `4:14: task "a": \`timeout\` ${timeout}, got "5 minutes" (write it without spaces, with the units d, h, m, s and ms: 5m)`,
      `5:12: task "a": \`delay\` ${duration}, got "-1s" (a duration cannot be negative)`,
      '6:15: task "a": `priority` must be one of: low, normal, high, critical, got "urgent"',
      '7:14: task "a": `retries` must be an integer from 0 to 100, got 101',
      '8:15: task "a": `retryOn[0]` must be an exit code, an integer from 1 to 255, got 0',
      `11:12: task "b": \`runAt\` ${date}, got "2026-02-30T00:00:00Z" (February 2026 has 28 days)`,
      // A number as written, not as JavaScript writes it (Infinity).
      `12:22: task "b": \`backoff.base\` ${duration}, got 1e400`,
      `15:12: task "c": \`runAt\` ${date}, got "2026-03-01T00:00:00" (add a timezone, Z for UTC or an offset like +01:00, as in 2026-03-01T00:00:00Z)`,
      '16:14: task "c": `timeout` must be at least 1ms (a duration is rounded to whole milliseconds), got 0',
    ]);
  });

  it("tells a timeout its own range, from 1ms, and quotes a zero or sub-millisecond timeout as written", () => {
    const text = yaml("defaults: { timeout: 0s }", "tasks:", "  a: { run: x, timeout: 0.3ms }", "  b: { run: x, timeout: 0.0004 }", "  c: { run: x, timeout: -1 }", "  d: { run: x, timeout: 0h0m }");
    const atLeast = "must be at least 1ms (a duration is rounded to whole milliseconds)";
    expect(problemsOf(text)).toEqual([
      `1:22: \`defaults.timeout\` ${atLeast}, got "0s"`,
      `3:25: task "a": \`timeout\` ${atLeast}, got "0.3ms"`,
      `4:25: task "b": \`timeout\` ${atLeast}, got 0.0004`,
      '5:25: task "c": `timeout` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit), got -1',
      `6:25: task "d": \`timeout\` ${atLeast}, got "0h0m"`,
    ]);
  });

  it("says what to write for a backoff given as a word or a duration (backoff: exponential, backoff: 5s), as other tools take it", () => {
    const mapping = "must be a mapping with `base` and/or `max`";
    expect(problemsOf(yaml("defaults:", "  backoff: 5s", "tasks:", "  a:", "    run: x", "    backoff: exponential", "  b: { run: x, backoff: later }"))).toEqual([
      `2:12: \`defaults.backoff\` ${mapping}, got "5s" (for waits of up to 5s each, write backoff: { base: 5s, max: 5s })`,
      `6:14: task "a": \`backoff\` ${mapping}, got "exponential" (taskq's backoff is always exponential, with full jitter: give the wait before the first retry and the longest wait, as backoff: { base: 1s, max: 30s })`,
      `7:25: task "b": \`backoff\` ${mapping}, got "later"`,
    ]);
  });

  it("says what to write for a backoff given as a number of seconds (backoff: 10), as for one given as a duration: it said only that it takes a mapping", () => {
    const mapping = "must be a mapping with `base` and/or `max`";
    expect(problemsOf(yaml("defaults:", "  backoff: 1.5", "tasks:", "  a: { run: x, backoff: 10 }", "  b: { run: x, backoff: -1 }"))).toEqual([
      `2:12: \`defaults.backoff\` ${mapping}, got 1.5 (for waits of up to 1.5s each, write backoff: { base: 1.5s, max: 1.5s })`,
      `4:25: task "a": \`backoff\` ${mapping}, got 10 (for waits of up to 10s each, write backoff: { base: 10s, max: 10s })`,
      `5:25: task "b": \`backoff\` ${mapping}, got -1`,
    ]);
    // None at all, as a number or a duration: retries one after another, not "waits of up to 0ms each".
    expect(problemsOf(yaml("tasks:", "  a: { run: x, backoff: 0 }", "  b: { run: x, backoff: 0s }"))).toEqual([
      `2:25: task "a": \`backoff\` ${mapping}, got 0 (for retries with no wait between them, write backoff: { base: 0s, max: 0s })`,
      `3:25: task "b": \`backoff\` ${mapping}, got "0s" (for retries with no wait between them, write backoff: { base: 0s, max: 0s })`,
    ]);
  });

  it("says what is wrong with a duration written almost right: units out of order or twice, other unit names, spaces, a last number without its unit, a point without a digit on each side, a decimal comma", () => {
    const text = yaml(
      "defaults: { timeout: 30s1m }",
      "tasks:",
      "  a: { run: x, delay: 1m 30s }",
      "  b: { run: x, timeout: 1h1h }",
      "  c: { run: x, backoff: { base: 90sec, max: 5 minutes } }",
      "  d: { run: x, delay: 1m30 }",
      "  e: { run: x, delay: -5s }",
      "  f: { run: x, delay: 5M }",
      "  g: { run: x, delay: soon }",
      "  h: { run: x, delay: .5s, timeout: 1.m }",
      "  i:",
      "    run: x",
      "    delay: 1,5s",
    );
    const duration = "must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days";
    const timeout = "must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit)";
    expect(problemsOf(text)).toEqual([
      `1:22: \`defaults.timeout\` ${timeout}, got "30s1m" (write it with its units in the order d, h, m, s, ms: 1m30s)`,
      `3:23: task "a": \`delay\` ${duration}, got "1m 30s" (write it without spaces: 1m30s)`,
      `4:25: task "b": \`timeout\` ${timeout}, got "1h1h" (each unit at most once: h is given twice)`,
      `5:33: task "c": \`backoff.base\` ${duration}, got "90sec" (write it with the units d, h, m, s and ms: 90s)`,
      `5:45: task "c": \`backoff.max\` ${duration}, got "5 minutes" (write it without spaces, with the units d, h, m, s and ms: 5m)`,
      `6:23: task "d": \`delay\` ${duration}, got "1m30" (the last number, 30, has no unit: write 1m30s for seconds)`,
      `7:23: task "e": \`delay\` ${duration}, got "-5s" (a duration cannot be negative)`,
      `8:23: task "f": \`delay\` ${duration}, got "5M" ("M" is not a unit: the units are d, h, m, s and ms)`,
      `9:23: task "g": \`delay\` ${duration}, got "soon"`,
      `10:23: task "h": \`delay\` ${duration}, got ".5s" (write 0.5s: a number's point needs a digit on each side)`,
      `10:37: task "h": \`timeout\` ${timeout}, got "1.m" (write 1m: a number's point needs a digit on each side)`,
      `13:12: task "i": \`delay\` ${duration}, got "1,5s" (write 1.5s: a number's decimal mark is a point)`,
    ]);
    // No fix offered that is refused in turn: "1e3s", "0x10s", "5m30s10s" are no durations either.
    expect(problemsOf(yaml("tasks:", '  a: { run: x, delay: "1e3" }', '  b: { run: x, delay: "0x10" }', "  c: { run: x, delay: 5m30s10 }"))).toEqual([
      `2:23: task "a": \`delay\` ${duration}, got "1e3"`,
      `3:23: task "b": \`delay\` ${duration}, got "0x10"`,
      `4:23: task "c": \`delay\` ${duration}, got "5m30s10"`,
    ]);
    // The number left without a unit is in the unit after the one before it: 1h30 is an hour and a half. None is guessed after seconds.
    const last = yaml("tasks:", "  a: { run: x, timeout: 1h30 }", "  b: { run: x, delay: 2d5 }", "  c: { run: x, delay: 1s500 }", "  d: { run: x, delay: 5ms3 }");
    expect(problemsOf(last)).toEqual([
      `2:25: task "a": \`timeout\` ${timeout}, got "1h30" (the last number, 30, has no unit: write 1h30m for minutes)`,
      `3:23: task "b": \`delay\` ${duration}, got "2d5" (the last number, 5, has no unit: write 2d5h for hours)`,
      `4:23: task "c": \`delay\` ${duration}, got "1s500"`,
      `5:23: task "d": \`delay\` ${duration}, got "5ms3"`,
    ]);
    // More of it than the unit before holds (30 hours, over a day) is not likely in the next unit: the units it may be in are named.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, timeout: 1d30 }", "  b: { run: x, delay: 1h90 }", "  c: { run: x, delay: 1d23 }"))).toEqual([
      `2:25: task "a": \`timeout\` ${timeout}, got "1d30" (the last number, 30, has no unit: write the one meant, 1d30h for hours, 1d30m for minutes or 1d30s for seconds)`,
      `3:23: task "b": \`delay\` ${duration}, got "1h90" (the last number, 90, has no unit: write the one meant, 1h90m for minutes or 1h90s for seconds)`,
      `4:23: task "c": \`delay\` ${duration}, got "1d23" (the last number, 23, has no unit: write 1d23h for hours)`,
    ]);
    // Not a unit that makes it longer than 30 days, which the next run refuses: 29d30h is 30 days and 6 hours.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, timeout: 29d30 }", "  b: { run: x, delay: 1d30000 }"))).toEqual([
      `2:25: task "a": \`timeout\` ${timeout}, got "29d30" (the last number, 30, has no unit: write the one meant, 29d30m for minutes or 29d30s for seconds)`,
      `3:23: task "b": \`delay\` ${duration}, got "1d30000" (the last number, 30000, has no unit: write the one meant, 1d30000m for minutes or 1d30000s for seconds)`,
    ]);
  });

  it("says what is wrong with a runAt written in a near-ISO form, and the form meant: a space for the T, no timezone, no seconds, an offset without its colon", () => {
    const text = yaml(
      "tasks:",
      "  a: { run: x, runAt: 2026-12-03 10:00:00Z }",
      "  b: { run: x, runAt: 2026-12-03 10:00 }",
      "  c: { run: x, runAt: 2026-12-03 }",
      "  d: { run: x, runAt: 2026-12-03T10:00:00+0200 }",
      "  e: { run: x, runAt: 2026-12-03t10:00:00z }",
      '  f: { run: x, runAt: "2026-12-03T10:00:00 +02:00" }',
      "  g: { run: x, runAt: 2026-02-30 10:00:00Z }",
      "  h: { run: x, runAt: tomorrow }",
    );
    const date = "must be a real date and time, ISO 8601 with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00";
    const zone = "add a timezone, Z for UTC or an offset like +01:00";
    expect(problemsOf(text)).toEqual([
      `2:23: task "a": \`runAt\` ${date}, got "2026-12-03 10:00:00Z" (write T between the date and the time, not a space, as in 2026-12-03T10:00:00Z)`,
      `3:23: task "b": \`runAt\` ${date}, got "2026-12-03 10:00" (write T between the date and the time, not a space; add the seconds; ${zone}, as in 2026-12-03T10:00:00Z)`,
      `4:23: task "c": \`runAt\` ${date}, got "2026-12-03" (add a time after a T; ${zone}, as in 2026-12-03T00:00:00Z)`,
      `5:23: task "d": \`runAt\` ${date}, got "2026-12-03T10:00:00+0200" (write the offset with its minutes after a colon, as in 2026-12-03T10:00:00+02:00)`,
      `6:23: task "e": \`runAt\` ${date}, got "2026-12-03t10:00:00z" (write T and Z in upper case, as in 2026-12-03T10:00:00Z)`,
      `7:23: task "f": \`runAt\` ${date}, got "2026-12-03T10:00:00 +02:00" (leave no space before the timezone, as in 2026-12-03T10:00:00+02:00)`,
      // Not a real date once written right: what to write differently, and what is not real, but no date that is not one.
      `8:23: task "g": \`runAt\` ${date}, got "2026-02-30 10:00:00Z" (write T between the date and the time, not a space; February 2026 has 28 days)`,
      `9:23: task "h": \`runAt\` ${date}, got "tomorrow"`,
    ]);
  });

  it("names the part of a runAt that no calendar or clock has: the day past the month's last, hour 24, second 60, month 13, an offset past 23:59", () => {
    const text = yaml(
      "defaults: { runAt: 2026-13-01T10:00:00Z }",
      "tasks:",
      "  a: { run: x, runAt: 2026-02-30T10:00:00Z }",
      "  b: { run: x, runAt: 2028-02-30T10:00:00Z }",
      "  c: { run: x, runAt: 2026-04-31T10:00:00Z }",
      "  d: { run: x, runAt: 2026-01-00T10:00:00Z }",
      "  e: { run: x, runAt: 2026-01-01T24:00:00Z }",
      "  f: { run: x, runAt: 2026-01-01T23:59:60Z }",
      "  g: { run: x, runAt: 2026-01-01T10:60:00+01:00 }",
      "  h: { run: x, runAt: 2026-01-01T10:00:00+25:00 }",
      "  i: { run: x, runAt: 2026-00-00T25:00:00Z }",
    );
    const date = "must be a real date and time, ISO 8601 with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00";
    expect(problemsOf(text)).toEqual([
      `1:20: \`defaults.runAt\` ${date}, got "2026-13-01T10:00:00Z" (month 13: months go from 01 to 12)`,
      `3:23: task "a": \`runAt\` ${date}, got "2026-02-30T10:00:00Z" (February 2026 has 28 days)`,
      `4:23: task "b": \`runAt\` ${date}, got "2028-02-30T10:00:00Z" (February 2028 has 29 days)`,
      `5:23: task "c": \`runAt\` ${date}, got "2026-04-31T10:00:00Z" (April has 30 days)`,
      `6:23: task "d": \`runAt\` ${date}, got "2026-01-00T10:00:00Z" (day 00: days start at 01)`,
      `7:23: task "e": \`runAt\` ${date}, got "2026-01-01T24:00:00Z" (hour 24: hours go from 00 to 23, midnight at a day's end being T00:00:00 of the next day)`,
      `8:23: task "f": \`runAt\` ${date}, got "2026-01-01T23:59:60Z" (second 60: seconds go from 00 to 59, with no leap second)`,
      `9:23: task "g": \`runAt\` ${date}, got "2026-01-01T10:60:00+01:00" (minute 60: minutes go from 00 to 59)`,
      `10:23: task "h": \`runAt\` ${date}, got "2026-01-01T10:00:00+25:00" (offset +25:00: offsets go from -23:59 to +23:59)`,
      `11:23: task "i": \`runAt\` ${date}, got "2026-00-00T25:00:00Z" (month 00: months go from 01 to 12; day 00: days start at 01; hour 25: hours go from 00 to 23)`,
    ]);
  });

  it("says to quote `run: true` and `run: false`, which YAML reads as booleans", () => {
    expect(problemsOf(yaml("tasks:", "  a: { run: true }", "  b: { run: false, dependsOn: a }"))).toEqual([
      '2:13: task "a": `run` must be a command string (YAML reads an unquoted true as a boolean: write "true"), got true',
      '3:13: task "b": `run` must be a command string (YAML reads an unquoted false as a boolean: write "false"), got false',
    ]);
  });

  it("rejects durations over 30 days, saying that is what is wrong with them, runAt together with delay, and backoff.max below base", () => {
    const text = yaml("defaults: { timeout: 721h }", "tasks:", "  a: { run: x, runAt: 2026-02-01T00:00:00Z, delay: 1s, backoff: { base: 5s, max: 1s } }");
    const over = "; longer than the maximum of 30 days (720h)";
    expect(problemsOf(text)).toEqual([
      `1:22: \`defaults.timeout\` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit), got "721h"${over}`,
      '3:52: task "a": `delay` cannot be set together with `runAt`; keep one',
      '3:82: task "a": `backoff.max` must not be shorter than `backoff.base` (5s), got 1s',
    ]);
    // In seconds too; and a max past the range is not also called shorter than the base (the text "40d" compared with 1000 ms was).
    expect(problemsOf(yaml("tasks:", "  a: { run: x, timeout: 2600000, backoff: { base: 1s, max: 40d } }"))).toEqual([
      `2:25: task "a": \`timeout\` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit), got 2600000${over}`,
      `2:60: task "a": \`backoff.max\` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days, got "40d"${over}`,
    ]);
  });

  it("refuses a runAt more than 30 days after the file is checked (delay's limit), naming it and how far ahead it is, in tasks and defaults", () => {
    // NOW is 2026-01-01T00:00:00Z: 30 days ahead, to the second, is taken; a wrong year is not.
    const text = yaml(
      "tasks:",
      "  a: { run: x, runAt: 2027-01-01T00:00:00Z }",
      "  b: { run: x, runAt: 2026-01-31T00:00:00Z }",
      "  c: { run: x, runAt: 2026-01-31T00:00:01Z }",
      "  d: { run: x, runAt: '2026-02-15T08:00:00+02:00' }",
      // 31 days ahead less the seconds since it was worked out ($(date -d '+31 days')): to the nearest hour, not cut to 30 days 23 hours.
      "  e: { run: x, runAt: 2026-01-31T23:59:30Z }",
      "  f: { run: x, runAt: 2026-01-31T00:20:00Z }",
      "  g: { run: x, runAt: 2026-04-10T12:00:00Z }",
    );
    const limit = "past the limit of 30 days ahead (delay has the same limit): check the date, the year most of all";
    expect(problemsOf(text)).toEqual([
      `2:23: task "a": \`runAt\` 2027-01-01T00:00:00Z is 365 days from now, ${limit}`,
      `4:23: task "c": \`runAt\` 2026-01-31T00:00:01Z is over 30 days from now, ${limit}`,
      `5:23: task "d": \`runAt\` 2026-02-15T08:00:00+02:00 is 45 days 6 hours from now, ${limit}`,
      `6:23: task "e": \`runAt\` 2026-01-31T23:59:30Z is 31 days from now, ${limit}`,
      `7:23: task "f": \`runAt\` 2026-01-31T00:20:00Z is over 30 days from now, ${limit}`,
      // 99 days 12 hours: 100 days, to the day, not "99 days 12 hours".
      `8:23: task "g": \`runAt\` 2026-04-10T12:00:00Z is 100 days from now, ${limit}`,
    ]);
    // From defaults: once, where it is written, for every task that takes it.
    expect(problemsOf(yaml("defaults: { runAt: 2036-01-01T00:00:00Z }", "tasks:", "  a: { run: x }", "  b: { run: x }"))).toEqual([
      `1:20: \`defaults.runAt\` 2036-01-01T00:00:00Z is 3,652 days from now, ${limit}`,
    ]);
    expect(parse(yaml("tasks:", "  b: { run: x, runAt: 2026-01-31T00:00:00Z }")).tasks[0]!.runAt).toBe(Date.parse("2026-01-31T00:00:00Z"));
  });

  it("refuses a run whose line ends in a backslash that YAML's folding turns into an escaped space (make \\ then all), plain or >, at the backslash", () => {
    const text = yaml(
      "tasks:",
      "  a:",
      "    run: make \\",
      "      all",
      "  b:",
      "    run: >",
      "      docker build \\",
      "        -t app .",
      "      docker push app \\",
      "      --all-tags",
      "  c:",
      "    run: |",
      "      make \\",
      "      all",
      "  d:",
      "    run: echo a\\\\",
      "      b",
      "  e:",
      "    run: make \\",
      "",
      "      all",
      "  f: { run: make \\ }",
    );
    const fix = "the backslash escapes that space, and does not continue the line; write run: | (a literal block keeps the line break, which the backslash then continues), or drop the backslash";
    // c keeps its line break (| block), d's backslash is escaped itself, e has a blank line between (a line break is kept), f has one line: no problem for them.
    // In b, the line indented more keeps its break; the last one's is folded.
    expect(problemsOf(text)).toEqual([
      `3:15: task "a": \`run\` has a line that ends in a backslash, but YAML joins a plain value's lines with a space, so the shell gets make \\ all: ${fix}`,
      `9:23: task "b": \`run\` has a line that ends in a backslash, but YAML joins a > block's lines with a space, so the shell gets docker push app \\ --all-tags: ${fix}`,
    ]);
  });

  it("reads a > block whose header gives its indentation (>2, >-1, >1+) from its key's column, so its line that ends in a backslash is refused too", () => {
    const text = yaml(
      "tasks:",
      "  a:",
      "    run: >2",
      "        make \\",
      "      all",
      "  b:",
      "    run: >-1",
      "     make \\",
      "      kept",
      "     x",
      "  f:",
      "    dependsOn: []",
      "    run: >1",
      "     make \\",
      "     all",
    );
    const fix = "the backslash escapes that space, and does not continue the line; write run: | (a literal block keeps the line break, which the backslash then continues), or drop the backslash";
    const problems = problemsOf(text);
    // a's first line is indented more than the block (2 past its key): kept with its break, no join. b's backslash line is followed
    // by one indented more: kept. (A block reached through an alias: the next test.)
    expect(problems).toEqual([`14:11: task "f": \`run\` has a line that ends in a backslash, but YAML joins a > block's lines with a space, so the shell gets make \\ all: ${fix}`]);
  });

  it("reads a >2 block reached through an alias from its anchor's key, as the same block written in place, so its joined backslash line is refused", () => {
    const text = yaml(
      "x-cmd: &cmd >2",
      "  make \\",
      "  all",
      "tasks:",
      "  a:",
      "    run: &own >2",
      "      docker build \\",
      "      -t app .",
      "  b:",
      "    run: *own",
      "  e:",
      "    run: *cmd",
      "  g:",
      "    run: &kept >2",
      "        make \\",
      "      all",
      "  h:",
      "    run: *kept",
    );
    const fix = "the backslash escapes that space, and does not continue the line; write run: | (a literal block keeps the line break, which the backslash then continues), or drop the backslash";
    const said = (at: string, tasks: string, command: string): string =>
      `${at}: ${tasks}: \`run\` has a line that ends in a backslash, but YAML joins a > block's lines with a space, so the shell gets ${command}: ${fix}`;
    // Through an alias a problem points at the block's own lines, where a plain > block's does too. g's first line is indented
    // more than its block: kept with its break, through the alias h too.
    expect(problemsOf(text)).toEqual([said("2:8", 'task "e"', "make \\ all"), said("7:20", 'tasks "a" and "b"', "docker build \\ -t app .")]);
    // The same blocks written in place are refused alike.
    const inPlace = yaml("tasks:", "  b:", "    run: >2", "      docker build \\", "      -t app .", "  e:", "    run: >2", "      make \\", "      all");
    expect(problemsOf(inPlace)).toEqual([said("4:20", 'task "b"', "docker build \\ -t app ."), said("8:12", 'task "e"', "make \\ all")]);
  });

  it("reports unknown dependencies with a suggestion, and self-dependencies", () => {
    const text = yaml("tasks:", "  test: { run: x }", "  deploy:", "    run: x", "    dependsOn: [tset, deploy]", "  other: { run: x, dependsOn: nothing-like-it }");
    expect(problemsOf(text)).toEqual([
      '5:17: task "deploy" depends on "tset", which is not defined; did you mean "test"?',
      '5:23: task "deploy" depends on itself, and would wait for its own end forever; remove "deploy" from its dependsOn',
      '6:31: task "other" depends on "nothing-like-it", which is not defined',
    ]);
    // The nearest id may be the task's own: a task never depends on itself, so another is suggested, or none.
    const own = yaml("tasks:", "  a2: { run: x, dependsOn: [a2x] }", "  deploy1: { run: x, dependsOn: [deploy9] }", "  deploy2: { run: x }");
    expect(problemsOf(own)).toEqual([
      '2:29: task "a2" depends on "a2x", which is not defined',
      '3:34: task "deploy1" depends on "deploy9", which is not defined; did you mean "deploy2"?',
    ]);
    // Nor one it lists already: before, `[lint, lnit]` was told "did you mean "lint"?", which it would then list twice.
    expect(problemsOf(yaml("tasks:", "  lint: { run: x }", "  list: { run: x }", "  test: { run: x, dependsOn: [lint, lnit] }", "  doc: { run: x, dependsOn: [lint, lnt] }"))).toEqual([
      '4:37: task "test" depends on "lnit", which is not defined; did you mean "list"?',
      '5:36: task "doc" depends on "lnt", which is not defined',
    ]);
    // A one-letter id: not another one-letter id, which keeps none of its characters (before, "z" was told "did you mean "b"?", and
    // "y" "did you mean "1"?"), but one in another case, or one a letter longer or shorter, is still suggested.
    const short = yaml("tasks:", "  b: { run: x }", "  c: { run: x, dependsOn: [z] }", '  "1": { run: x, dependsOn: [y, B, bb] }', "  dd: { run: x }", "  e: { run: x, dependsOn: [d] }");
    expect(problemsOf(short)).toEqual([
      '3:28: task "c" depends on "z", which is not defined',
      '4:30: task "1" depends on "y", which is not defined',
      '4:33: task "1" depends on "B", which is not defined; did you mean "b"?',
      '4:36: task "1" depends on "bb", which is not defined; did you mean "b"?',
      '6:28: task "e" depends on "d", which is not defined; did you mean "dd"?',
    ]);
  });

  it("says to write a list for a dependsOn string that names several defined tasks (\"lint, test\", lint test)", () => {
    const text = yaml("tasks:", "  lint: { run: x }", "  test: { run: x }", '  a: { run: x, dependsOn: "lint, test" }', "  b:", "    run: x", "    dependsOn: lint test", "  c: { run: x, dependsOn: [lint test, lint] }", '  d: { run: x, dependsOn: "lint, tset" }');
    const hint = "; to depend on several tasks, list them: dependsOn: [lint, test]";
    expect(problemsOf(text)).toEqual([
      `4:27: task "a" depends on "lint, test", which is not defined${hint}`,
      `7:16: task "b" depends on "lint test", which is not defined${hint}`,
      `8:28: task "c" depends on "lint test", which is not defined${hint}`,
      // Not all of them tasks: no such hint.
      // Nor an id a task could have.
      '9:27: task "d" depends on "lint, tset", which is not a valid task id: ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."',
    ]);
  });

  it("says a dependsOn item written with no space after its dash (dependsOn: -b, or -b on a line of its own) needs one, with the list meant", () => {
    const ids = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    // Before, "-b" was told no valid task id, with "did you mean "b"?" (or nothing, for "-b -c").
    expect(problemsOf(yaml("tasks:", "  b: { run: y }", "  c: { run: y }", "  a:", "    run: x", "    dependsOn: -b", "  d:", "    run: x", "    dependsOn:", "      -b", "      -c"))).toEqual([
      `6:16: task "a" depends on "-b", which is not a valid task id: ${ids}; a list item needs a space after its -: write - b on a line of its own below dependsOn, or dependsOn: [b]`,
      `10:7: task "d" depends on "-b -c", which is not a valid task id: ${ids}; a list item needs a space after its -: write - b, - c on lines of their own below dependsOn, or dependsOn: [b, c]`,
    ]);
    // Before, yaml's bare "Implicit map keys need to be followed by map values", for a -b in line with the task's keys.
    expect(problemsOf(yaml("tasks:", "  b: { run: y }", "  a:", "    run: x", "    dependsOn:", "    -b"))).toEqual([
      "6:5: Implicit map keys need to be followed by map values: a list item needs a space after its - (- b); -b is read as text",
    ]);
    // With a comment after it too (before, yaml's words alone).
    expect(problemsOf(yaml("tasks:", "  b: { run: y }", "  a:", "    run: x", "    dependsOn: # upstream", "    -b # the build"))).toEqual([
      "6:5: Implicit map keys need to be followed by map values: a list item needs a space after its - (- b); -b is read as text",
    ]);
  });

  it("tells a quoted dependsOn id that starts with a dash (\"-a\", '-a') the usual problem, not that a list item needs a space: the quotes make it the text meant", () => {
    const ids = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    // Before, "a list item needs a space after its -: write - a on a line of its own below dependsOn, ...".
    expect(problemsOf(yaml("tasks:", "  a: { run: y }", "  b:", "    run: x", '    dependsOn: "-a"', "  c:", "    run: x", "    dependsOn: '-a'"))).toEqual([
      `5:16: task "b" depends on "-a", which is not a valid task id: ${ids}; did you mean "a"?`,
      `8:16: task "c" depends on "-a", which is not a valid task id: ${ids}; did you mean "a"?`,
    ]);
  });

  it("tells a dependsOn id glued to its dash the usual problem, not to write it as a list item, when that would name no task other than its own (-x, -a -x, -d in d)", () => {
    const ids = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    // Before, "write - x on a line of its own below dependsOn, or dependsOn: [x]", which then failed: "x" is not defined.
    expect(problemsOf(yaml("tasks:", "  a: { run: y }", "  b:", "    run: x", "    dependsOn: -x", "  c:", "    run: x", "    dependsOn: -a -x", "  d:", "    run: x", "    dependsOn: -d"))).toEqual([
      `5:16: task "b" depends on "-x", which is not a valid task id: ${ids}`,
      `8:16: task "c" depends on "-a -x", which is not a valid task id: ${ids}`,
      `11:16: task "d" depends on "-d", which is not a valid task id: ${ids}`,
    ]);
  });

  it("says an unknown top-level key that holds an anchor (base: &base) is kept so under an x- name, not that another key was meant", () => {
    // Before, `unknown key "base" at the top level; did you mean "name"?`.
    const hint = '; a top-level key kept for its anchor is named with x- (x-base), which taskq ignores';
    expect(problemsOf(yaml("base: &b", "  retries: 2", "tasks:", "  a:", "    <<: *b", "    run: x"))).toEqual([`1:1: unknown key "base" at the top level${hint}`]);
    expect(problemsOf(yaml("base:   &b { retries: 2 }", "tasks:", "  a: { <<: *b, run: x }"))).toEqual([`1:1: unknown key "base" at the top level${hint}`]);
    // Without an anchor, the key meant.
    expect(problemsOf(yaml("nme: x", "tasks:", "  a: { run: x }"))).toEqual(['1:1: unknown key "nme" at the top level; did you mean "name"?']);
    // A key holding a mapping misspelt is that key, anchored or not: renamed x-defualts, its retries would be dropped without a word.
    expect(problemsOf(yaml("defualts: &d", "  retries: 2", "tasks:", "  a: { run: x }"))).toEqual(['1:1: unknown key "defualts" at the top level; did you mean "defaults"?']);
    expect(problemsOf(yaml("tasks: { a: { run: x } }", "envs: &e { A: b }"))).toEqual(['2:1: unknown key "envs" at the top level; did you mean "env"?']);
    // Unless the file has that key too: kept for its anchor.
    expect(problemsOf(yaml("task: &t", "  retries: 2", "tasks:", "  b: { <<: *t, run: y }"))).toEqual([
      '1:1: unknown key "task" at the top level; a top-level key kept for its anchor is named with x- (x-task), which taskq ignores',
    ]);
    expect(problemsOf(yaml("defaults: { retries: 1 }", "defualts: &d { retries: 2 }", "tasks: { a: { <<: *d, run: x } }"))).toEqual([
      '2:1: unknown key "defualts" at the top level; a top-level key kept for its anchor is named with x- (x-defualts), which taskq ignores',
    ]);
    // The key the file has, quoted too: before, `"defaults":` was not seen, and `defualts: &d` told "did you mean "defaults"?".
    for (const written of ['"defaults"', "'defaults'", "defaults "]) {
      expect(problemsOf(yaml(`${written}: { retries: 1 }`, "defualts: &d { retries: 2 }", "tasks: { a: { <<: *d, run: x } }"))).toEqual([
        '2:1: unknown key "defualts" at the top level; a top-level key kept for its anchor is named with x- (x-defualts), which taskq ignores',
      ]);
    }
    expect(problemsOf(yaml("task: &t { retries: 2 }", '"tasks": { b: { <<: *t, run: y } }'))).toEqual([
      '1:1: unknown key "task" at the top level; a top-level key kept for its anchor is named with x- (x-task), which taskq ignores',
    ]);
  });

  it("reports each dependsOn item that is not a task id at its own position, and still checks the other items", () => {
    const nullHint = '; to name a task called null, quote it: "null"';
    // Block style: the empty item is on line 8; `c` (line 9) is still found undefined.
    const block = yaml("tasks:", "  a:", "    run: echo n", "  z:", "    run: echo z", "    dependsOn:", "      - a", "      -", "      - c", "      - ~");
    expect(problemsOf(block)).toEqual([
      `8:8: task "z": \`dependsOn[1]\` must be a task id, got nothing (null)${nullHint}`,
      '9:9: task "z" depends on "c", which is not defined',
      `10:9: task "z": \`dependsOn[3]\` must be a task id, got nothing (null)${nullHint}`,
    ]);
    const flow = yaml("tasks:", "  a: { run: x }", "  z: { run: x, dependsOn: [a, ~, c, null, [c], { a: 1 }, ''] }", "  y: { run: x, dependsOn: [null] }");
    expect(problemsOf(flow)).toEqual([
      `3:31: task "z": \`dependsOn[1]\` must be a task id, got nothing (null)${nullHint}`,
      // Not "did you mean "y"?", as it was: a one-letter id is one edit from every other, and no slip of it.
      '3:34: task "z" depends on "c", which is not defined',
      `3:37: task "z": \`dependsOn[3]\` must be a task id, got nothing (null)${nullHint}`,
      '3:43: task "z": `dependsOn[4]` must be a task id, got a list; a list inside the list (`- - c` has a dash too many): list the ids themselves (dependsOn: [c])',
      '3:48: task "z": `dependsOn[5]` must be a task id, got a mapping',
      '3:58: task "z": `dependsOn[6]` must be a task id, got an empty string',
      `4:28: task "y": \`dependsOn[0]\` must be a task id, got nothing (null)${nullHint}`,
    ]);
    // Both readers (the fast one reads these files, then leaves the reporting to yaml) say the same.
    for (const text of [block, flow]) {
      expect(readSimpleYaml(text), "the fast reader reads it").toBeDefined();
      expect(problemsOf(text, "wf.yaml", { simple: false })).toEqual(problemsOf(text));
    }
    // The whole value wrong is still told as such; a quoted "null" is an id.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, dependsOn: ~ }"))).toEqual(['2:27: task "a": `dependsOn` must be a task id or a list of task ids, got nothing (null)']);
    expect(parse(yaml("tasks:", "  'null': { run: x }", "  a: { run: x, dependsOn: ['null', \"null\"] }")).tasks.map((task) => task.dependsOn)).toEqual([[], ["null"]]);
  });

  it("reports a cycle with its path and the position of every edge", () => {
    const text = yaml("tasks:", "  a:", "    run: x", "    dependsOn: [b]", "  b:", "    run: x", "    dependsOn: c", "  c:", "    run: x", "    dependsOn: [z, a]", "  z: { run: x }");
    expect(problemsOf(text)).toEqual(["4:17: dependency cycle: a -> b -> c -> a (a -> b at 4:17, b -> c at 7:16, c -> a at 10:20); remove one of these dependencies"]);
  });

  it("names each place a dependency of a cycle is written twice: removed at the one place told, the other kept the cycle for the next run", () => {
    expect(problemsOf(yaml("tasks:", "  a: { run: x, dependsOn: [b, b] }", "  b: { run: x, dependsOn: [a] }"))).toEqual([
      "2:28: dependency cycle: a -> b -> a (a -> b at 2:28 and 2:31, b -> a at 3:28); remove one of these dependencies",
    ]);
    // And in a tangle's dependencies to remove.
    const ids = Array.from({ length: 6 }, (_, index) => `t${index}`);
    const tangle = problemsOf(yaml("tasks:", ...ids.map((id, index) => `  ${id}: { run: x, dependsOn: [${[...ids.filter((other) => other !== id), index === 0 ? "t1" : ""].filter(Boolean).join(", ")}] }`)));
    expect(tangle[0]).toMatch(/dependency cycles among 6 tasks .*: t0 -> t1 at 2:29 and 2:49, t0 -> t2 at 2:33,/);
  });

  it("reports every cycle of tasks tangled in more than one, not only the first: removing one dependency would leave the others", () => {
    // a <-> b <-> c: breaking a -> b (or b -> a) still leaves b <-> c.
    const chain = yaml("tasks:", "  a: { run: x, dependsOn: [b] }", "  b: { run: x, dependsOn: [a, c] }", "  c: { run: x, dependsOn: [b] }");
    expect(problemsOf(chain)).toEqual([
      "2:28: dependency cycle: a -> b -> a (a -> b at 2:28, b -> a at 3:28); remove one of these dependencies",
      "3:31: dependency cycle: b -> c -> b (b -> c at 3:31, c -> b at 4:28); remove one of these dependencies",
    ]);
    // Two cycles through the same task.
    const star = yaml("tasks:", "  a: { run: x, dependsOn: [b, c] }", "  b: { run: x, dependsOn: a }", "  c: { run: x, dependsOn: a }");
    expect(problemsOf(star)).toEqual([
      "2:28: dependency cycle: a -> b -> a (a -> b at 2:28, b -> a at 3:27); remove one of these dependencies",
      "2:31: dependency cycle: a -> c -> a (a -> c at 2:31, c -> a at 4:27); remove one of these dependencies",
    ]);
    // a -> b -> a, a -> c -> a and a -> c -> b -> a: the third was not told, and removing a -> b and c -> a, one of each told, left it.
    const third = yaml("tasks:", "  a: { run: x, dependsOn: [b, c] }", "  b: { run: x, dependsOn: [a] }", "  c: { run: x, dependsOn: [a, b] }");
    expect(problemsOf(third)).toEqual([
      "2:28: dependency cycles a -> b -> a, a -> c -> a and a -> c -> b -> a, which share a dependency (a -> b at 2:28, b -> a at 3:28, a -> c at 2:31, c -> a at 4:28, c -> b at 4:31); remove one dependency of each; one they share ends every cycle through it",
    ]);
  });

  it("tells tasks tangled in more cycles than are told one by one as one problem, naming dependencies whose removal ends them all: told by their first cycles, removing one dependency of each left others for the next run", () => {
    // 40 tasks that all depend on each other: one problem, quickly, whose removals leave a file that loads.
    const ids = Array.from({ length: 40 }, (_, index) => `t${index}`);
    const tangle = yaml("tasks:", ...ids.map((id) => `  ${id}: { run: x, dependsOn: [${ids.filter((other) => other !== id).join(", ")}] }`));
    const shown = ids.slice(1, 11).map((id, index) => `t0 -> ${id} at 2:${29 + 4 * index}`);
    expect(problemsOf(tangle)).toEqual([
      `2:29: dependency cycles among 40 tasks (${ids.slice(0, 10).join(", ")} and 30 more), more than are told one by one, such as t0 -> t1 -> t0, t0 -> t1 -> t2 -> t0 and t0 -> t1 -> t2 -> t3 -> t0; remove from each of these tasks its dependencies on those below it in the file, which ends every cycle: ${shown.join(", ")} and 770 more`,
    ]);
    const kept = yaml("tasks:", ...ids.map((id, index) => `  ${id}: { run: x, dependsOn: [${ids.slice(0, index).join(", ")}] }`));
    expect(parse(kept).tasks).toHaveLength(40);
    // Fewer dependencies on those above: those are named, at the first of them.
    const back = yaml("tasks:", ...ids.slice(0, 6).map((id, index) => `  ${id}: { run: x, dependsOn: [${[...ids.slice(index + 1, 6), ...(index === 5 ? ["t0"] : [])].join(", ")}] }`));
    expect(problemsOf(back)[0]).toMatch(/^7:29: dependency cycles among 6 tasks \(t0, t1, t2, t3, t4 and t5\), more than are told one by one, such as t0 -> t5 -> t0, .*; remove from each of these tasks its dependencies on those above it in the file, which ends every cycle: t5 -> t0 at 7:29$/);
  });

  it("tells a tangle of 2,000 tasks, each depending on the next three, in about the time the same file takes without its cycles: the look for every cycle stops at its budget", () => {
    const ids = Array.from({ length: 2000 }, (_, index) => `t${index}`);
    const fileOf = (next: (index: number, step: number) => number) => yaml("tasks:", ...ids.map((id, index) => `  ${id}: { run: x, retries: x, dependsOn: [${[1, 2, 3].flatMap((step) => ids[next(index, step)] ?? []).join(", ")}] }`));
    const tangle = fileOf((index, step) => (index + step) % ids.length);
    // As many dependencies, on the three before instead (but for the first three tasks): no cycle.
    const flat = fileOf((index, step) => index - step);
    expect(problemsOf(tangle).find((problem) => problem.includes("cycle"))).toMatch(/^1999:\d+: dependency cycles among 2,000 tasks \(t0, t1, .* and 1,990 more\), more than are told one by one, .*; remove from each of these tasks its dependencies on those above it in the file, which ends every cycle: t1997 -> t0 at /);
    expect(problemsOf(flat).some((problem) => problem.includes("cycle"))).toBe(false);
    const [tangleMs, flatMs] = bestOfAlternating(1, () => problemsOf(tangle), () => problemsOf(flat), 3);
    expect(tangleMs).toBeLessThan(3 * flatMs);
  }, 60_000);

  it("tells every cycle of a file, or dependencies whose removal ends them all, so that removing what is told leaves none for the next run", () => {
    const ids = ["a", "b", "c", "d", "e", "f"];
    const graph = fc.integer({ min: 3, max: 6 }).chain((count) => fc.array(fc.subarray(ids.slice(0, count)), { minLength: count, maxLength: count }));
    const fileOf = (dependsOn: string[][]) => yaml("tasks:", ...dependsOn.map((targets, index) => `  ${ids[index]!}: { run: x, dependsOn: [${targets.filter((target) => target !== ids[index]).join(", ")}] }`));
    fc.assert(
      fc.property(graph, fc.infiniteStream(fc.nat()), (dependsOn, picks) => {
        let told: string[];
        try {
          told = problemsOf(fileOf(dependsOn));
        } catch {
          return; // no cycle: the file loads
        }
        const left = dependsOn.map((targets) => new Set(targets));
        const remove = (from: string, to: string) => left[ids.indexOf(from)]!.delete(to);
        for (const problem of told) {
          const tangle = /dependency cycles among \d+ tasks \(([^)]*)\).* on those (below|above) it in the file/.exec(problem);
          if (tangle !== null) {
            const members = tangle[1]!.split(/, | and /);
            for (const from of members) for (const to of members) if ((tangle[2] === "below") === (ids.indexOf(to) > ids.indexOf(from))) remove(from, to);
            continue;
          }
          // One dependency of each cycle told, whichever.
          const cycles = /^\d+:\d+: dependency (?:cycle: |cycles )(.*?)(?: \(|, which share)/.exec(problem)![1]!.split(/, | and /);
          for (const cycle of cycles) {
            const steps = cycle.split(" -> ");
            const step = picks.next().value % (steps.length - 1);
            remove(steps[step]!, steps[step + 1]!);
          }
        }
        expect(parse(fileOf(left.map((targets) => [...targets]))).tasks.length).toBe(dependsOn.length);
      }),
      { numRuns: 500 },
    );
  });

  it("tells cycles that share a dependency once, naming each cycle and the dependency they all go through: told apart, that one was named in each, and a cycle through the first's first dependency went untold", () => {
    // a -> b -> c -> a and b -> c -> d -> b: both go through b -> c.
    const through = yaml("tasks:", "  a: { run: x, dependsOn: [b] }", "  b: { run: x, dependsOn: [c] }", "  c: { run: x, dependsOn: [a, d] }", "  d: { run: x, dependsOn: [b] }");
    expect(problemsOf(through)).toEqual([
      "3:28: dependency cycles a -> b -> c -> a and b -> c -> d -> b, which share a dependency (a -> b at 2:28, b -> c at 3:28, c -> a at 4:28, c -> d at 4:31, d -> b at 5:28); remove b -> c, which both go through, or one other dependency of each",
    ]);
    // a -> b -> a and a -> b -> c -> a: removing b -> a, as "remove one of these dependencies" said of the first alone, left the second.
    const behind = yaml("tasks:", "  a: { run: x, dependsOn: [b] }", "  b: { run: x, dependsOn: [c, a] }", "  c: { run: x, dependsOn: [a] }");
    expect(problemsOf(behind)).toEqual([
      "2:28: dependency cycles a -> b -> a and a -> b -> c -> a, which share a dependency (a -> b at 2:28, b -> a at 3:31, b -> c at 3:28, c -> a at 4:28); remove a -> b, which both go through, or one other dependency of each",
    ]);
    // a -> b -> a and a -> c -> b -> a: the second goes through the first's last dependency, b -> a; taking that one out to look for more hid it.
    const before = yaml("tasks:", "  a: { run: x, dependsOn: [b, c] }", "  b: { run: x, dependsOn: [a] }", "  c: { run: x, dependsOn: [b] }");
    expect(problemsOf(before)).toEqual([
      "3:28: dependency cycles a -> b -> a and a -> c -> b -> a, which share a dependency (a -> b at 2:28, b -> a at 3:28, a -> c at 2:31, c -> b at 4:28); remove b -> a, which both go through, or one other dependency of each",
    ]);
    // Joined through a third, with no dependency all three share: a -> b -> a, b -> c -> b, and a -> b -> c -> a sharing a -> b with the one and b -> c with the other.
    const chained = yaml("tasks:", "  a: { run: x, dependsOn: [b] }", "  b: { run: x, dependsOn: [a, c] }", "  c: { run: x, dependsOn: [a, b] }");
    expect(problemsOf(chained)).toEqual([
      "2:28: dependency cycles a -> b -> a, a -> b -> c -> a and b -> c -> b, which share a dependency (a -> b at 2:28, b -> a at 3:28, b -> c at 3:31, c -> a at 4:28, c -> b at 4:31); remove one dependency of each; one they share ends every cycle through it",
    ]);
    // Many shared: the first three and how many more (a long ring's thousands made a line of megabytes).
    const ids = Array.from({ length: 9 }, (_, index) => `t${index}`);
    const ring = yaml("tasks:", ...ids.map((id, index) => `  ${id}: { run: x, dependsOn: [${[ids[(index + 1) % 9], ...(index === 8 ? ["t3"] : [])].join(", ")}] }`));
    expect(problemsOf(ring)[0]).toMatch(/^5:29: dependency cycles t0 -> .* and t3 -> t4 -> t5 -> t6 -> t7 -> t8 -> t3, .*; remove one of t3 -> t4, t4 -> t5, t5 -> t6 and 2 more, which both go through, or one other dependency of each$/);
  });

  it("checks dependencies even of tasks that have other problems", () => {
    const text = yaml("tasks:", "  a: { run: 1, dependsOn: [b] }", "  b: { run: x, dependsOn: [a] }");
    expect(problemsOf(text)).toEqual([
      '2:13: task "a": `run` must be a non-empty command string, got 1',
      "2:28: dependency cycle: a -> b -> a (a -> b at 2:28, b -> a at 3:28); remove one of these dependencies",
    ]);
  });

  it("rejects ids outside the documented pattern, quoting the pattern", () => {
    const long = "x".repeat(300);
    const text = yaml("tasks:", "  ../../x: { run: x }", "  a/b: { run: x }", "  '..': { run: x }", `  ${long}: { run: x }`);
    const rule = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    expect(problemsOf(text)).toEqual([
      `2:3: invalid task id "../../x": ${rule}`,
      `3:3: invalid task id "a/b": ${rule}`,
      `4:3: invalid task id "..": ${rule}`,
      `5:3: invalid task id "${"x".repeat(57)}...": ${rule}`,
    ]);
  });

  it("says a dependency no task could have is not a valid task id, not that it is not defined", () => {
    const text = yaml("tasks:", "  x: { run: x }", '  a: { run: x, dependsOn: ["../x", build/] }', "  b:", "    run: x", "    dependsOn: ..", "  ../../x: { run: x }", "  c: { run: x, dependsOn: [../../x] }");
    const rule = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    expect(problemsOf(text)).toEqual([
      `3:28: task "a" depends on "../x", which is not a valid task id: ${rule}`,
      `3:36: task "a" depends on "build/", which is not a valid task id: ${rule}`,
      `6:16: task "b" depends on "..", which is not a valid task id: ${rule}`,
      // A task with such an id is reported itself, once: not again at each dependency on it.
      `7:3: invalid task id "../../x": ${rule}`,
    ]);
  });

  it("reports unknown keys everywhere, with hints, and run/dependsOn in defaults", () => {
    const text = yaml("defaults: { run: x, retris: 1 }", "tasks:", "  a: { run: x, backoff: { bse: 1s }, enV: {} }");
    expect(problemsOf(text)).toEqual([
      "1:13: `defaults` cannot set `run`; set it on each task",
      '1:21: unknown key "retris" in `defaults`; did you mean "retries"?',
      '3:27: task "a": unknown key "bse" in `backoff`; did you mean "base"?',
      '3:38: task "a": unknown key "enV"; did you mean "env"?',
    ]);
  });

  it("reports bad env names and values, and refuses __proto__ as a key", () => {
    const text = yaml("env: { 'A-B': x, V: 1.10, N: null }", "tasks:", "  a: { run: x, env: { __proto__: x } }");
    expect(problemsOf(text)).toEqual([
      '1:8: `env` name "A-B" is not valid; names must match ^[A-Za-z_][A-Za-z0-9_]*$',
      '1:21: `env.V` must be a string, an integer or true/false (quote other values, e.g. "1.10", which YAML would read as 1.1), got 1.10',
      `1:30: \`env.N\` ${unsetNote("N")}`,
      '3:23: the key "__proto__" is not allowed',
    ]);
  });

  it("says to write env as a mapping where it is written NAME=value, as a list (docker compose's way) or one string, with the mapping meant", () => {
    const expected = "must be a mapping of variable names to values";
    expect(problemsOf(yaml("env: [NODE_ENV=test, CI=1]", "tasks:", "  a:", "    run: x", "    env:", "      - TARGET=prod", "      - 'LABEL=a: b'", "      - EMPTY=", "  b:", "    run: y", "    env: DEBUG = 1"))).toEqual([
      `1:6: \`env\` ${expected}, got a list; write each variable as NAME: value (env: { NODE_ENV: test, CI: 1 })`,
      `6:7: task "a": \`env\` ${expected}, got a list; write each variable as NAME: value (env: { TARGET: prod, LABEL: "a: b", EMPTY: "" })`,
      `11:10: task "b": \`env\` ${expected}, got "DEBUG = 1"; write each variable as NAME: value (env: { DEBUG: 1 })`,
    ]);
    expect(problemsOf(yaml("defaults:", "  env: [A=1, B]", "tasks:", "  a: { run: x }"))).toEqual([`2:8: \`defaults.env\` ${expected}, got a list`]);
    expect(problemsOf(yaml("tasks:", "  a: { run: x, env: [A=1, B=2, C=3, D=4, E=5, F=6] }"))[0]).toContain("(env: { A: 1, B: 2, C: 3, D: 4, E: 5, ... })");
    // Quoted where YAML would read the value otherwise, as env would refuse it.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, env: [V=1.10, N=null, T=True, P=./bin, Z=007] }"))[0]).toContain('(env: { V: "1.10", N: "null", T: "True", P: ./bin, Z: "007" })');
  });

  it("says a key's colon is a full-width one (U+FF1A, a CJK input method's), where yaml reads the line as text, and where it reads the task as one string", () => {
    const words = (key: string) => `the colon after ${key} is a full-width one, \uff1a (U+FF1A, as a Chinese or Japanese input method types it), which YAML reads as text, not as a key's colon; write ${key}: with the ASCII colon`;
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries\uff1a 2"))).toEqual([`4:5: Implicit map keys need to be followed by map values: ${words("retries")}`]);
    expect(problemsOf(yaml("tasks\uff1a", "  a:", "    run: x"))).toEqual([`1:1: Implicit keys need to be on a single line: ${words("tasks")}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run\uff1a x"))).toEqual([`3:5: task "a": the task must be a mapping with at least \`run\`, got "run\uff1a x"; ${words("run")}`]);
    // CJK text with a full-width colon in it, meant as text, not as a key: the slip yaml's error is of is told, not the colon.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: |", "      echo 1", "      echo 2", "     \u8bf4\u660e\uff1a\u8fd9\u884c"))).toEqual([
      "6:6: All mapping items must start at the same column: line 6 starts at column 6, left of the other lines of run's | block, at column 7, so yaml ends the block above it and reads it as a key; start it at column 7, as the block's lines are",
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    dependsOn:", "      - b", "     - \u6b65\u9aa4\uff1a\u6d4b\u8bd5"))).toEqual([
      "6:6: A block sequence may not be used as an implicit map key: line 6's - is at column 6, and that of the item above it, - b, at column 7; start it at column 7, as - b is",
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "\t\u8bf4\u660e\uff1a\u8fd9\u884c"))).toEqual([
      "4:1: Tabs are not allowed as indentation: indent with spaces (an editor set to insert spaces in .yaml files keeps it so)",
    ]);
  });

  it("says a number in a | or > block is text, not that it is in quotes (retries: | with 3 below it), through either reader", () => {
    for (const simple of [true, false]) {
      expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries: |", "      3"), "wf.yaml", { simple })).toEqual([
        `4:14: task "a": \`retries\` must be an integer from 0 to 100, got "3\\n" (a number in a | block is text: write it in place of the |, 3)`,
      ]);
    }
    // A duration, likewise: its line break, not spaces, is what the field refuses.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    timeout: |", "      5s"))).toEqual([
      `4:14: task "a": \`timeout\` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit), got "5s\\n" (a | block keeps its line break, which no duration takes: write it in place of the |, 5s)`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    timeout: !!str |+", "      5s"))).toEqual([
      `4:20: task "a": \`timeout\` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit), got "5s\\n" (a | block keeps its line break, which no duration takes: write it in place of the !!str |+, 5s)`,
    ]);
    expect(problemsOf(yaml("concurrency: >-", "  4", "tasks:", "  a:", "    run: x", "    retryOn:", "      - |-", "        2"))).toEqual([
      `1:14: \`concurrency\` must be an integer from 1 to 10000, got "4" (a number in a > block is text: write it in place of the >-, 4)`,
      `7:9: task "a": \`retryOn[0]\` must be an exit code, an integer from 1 to 255, got "2" (a number in a | block is text: write it in place of the |-, 2)`,
    ]);
    // The whole header, which the number replaces: its indentation indicator and a tag before it too, not `retries: 32` or `retries: !!str 3`.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries: |2", "      3", "  b:", "    run: x", "    retries: !!str >", "      3"))).toEqual([
      `4:14: task "a": \`retries\` must be an integer from 0 to 100, got "3\\n" (a number in a | block is text: write it in place of the |2, 3)`,
      `8:20: task "b": \`retries\` must be an integer from 0 to 100, got "3\\n" (a number in a > block is text: write it in place of the !!str >, 3)`,
    ]);
  });

  it("says a number in quotes is text, for the integer fields (retries: \"3\", concurrency: '4', retryOn: [\"1\"]), and one tagged !!str, but only the range for one out of it (retries: \"300\")", () => {
    expect(problemsOf(yaml("concurrency: '4'", "tasks:", "  a:", "    run: x", '    retries: "3"', '    retryOn: ["1", 75]'))).toEqual([
      `1:14: \`concurrency\` must be an integer from 1 to 10000, got "4" (a number in quotes is text: write it without them, 4)`,
      `5:14: task "a": \`retries\` must be an integer from 0 to 100, got "3" (a number in quotes is text: write it without them, 3)`,
      `6:15: task "a": \`retryOn[0]\` must be an exit code, an integer from 1 to 255, got "1" (a number in quotes is text: write it without them, 1)`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries: two"))).toEqual([`4:14: task "a": \`retries\` must be an integer from 0 to 100, got "two"`]);
    // Tagged text, not quoted: said so. Before, "a number in quotes is text" of `!!str 3`.
    for (const simple of [true, false]) {
      expect(problemsOf(yaml("concurrency: !!str 2", "tasks:", "  a:", "    run: x", "    retries: !!str 3", "    retryOn: [!!str 1]"), "wf.yaml", { simple })).toEqual([
        `1:20: \`concurrency\` must be an integer from 1 to 10000, got "2" (a number tagged !!str is text: write it without the tag, 2)`,
        `5:20: task "a": \`retries\` must be an integer from 0 to 100, got "3" (a number tagged !!str is text: write it without the tag, 3)`,
        `6:21: task "a": \`retryOn[0]\` must be an exit code, an integer from 1 to 255, got "1" (a number tagged !!str is text: write it without the tag, 1)`,
      ]);
      expect(problemsOf(yaml("tasks:", "  a:", "    run: x", '    retries: "3"'), "wf.yaml", { simple })).toEqual([`4:14: task "a": \`retries\` must be an integer from 0 to 100, got "3" (a number in quotes is text: write it without them, 3)`]);
      // The tag named as written: a verbatim one, one beside an anchor. A number's `!` is no shell's "not": not told to quote it, and said once, at the `!` (the value as text, which the field refuses, follows from it).
      const bang = (value: string) => `this \`!\` is YAML's tag for text, which it drops: the value is read as the text "${value}", not the number ${value}; write it without the \`!\`: ${value}`;
      expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries: ! 3", "    retryOn: [!<tag:yaml.org,2002:str> 1, &c ! 2]", "  b: {run: ! false, retries: !!str &r 4}"), "wf.yaml", { simple })).toEqual([
        `4:14: ${bang("3")}`,
        `5:40: task "a": \`retryOn[0]\` must be an exit code, an integer from 1 to 255, got "1" (a number tagged !<tag:yaml.org,2002:str> is text: write it without the tag, 1)`,
        `5:46: ${bang("2")}`,
        `6:12: this \`!\` is YAML's tag for text, which it drops: the value is read as "false"; to keep the \`!\` (a shell's "not"), quote the whole value: "! false"; without the \`!\`, quote it too ("false"): unquoted, YAML reads false as a boolean, where a command string is expected`,
        `6:39: task "b": \`retries\` must be an integer from 0 to 100, got "4" (a number tagged !!str is text: write it without the tag, 4)`,
      ]);
    }
    // Leading zeros: the number meant, as YAML reads 007 unquoted, not the digits as quoted.
    expect(problemsOf(yaml("concurrency: ' 04'", "tasks:", "  a:", "    run: x", '    retries: "007"', '    retryOn: ["001"]'))).toEqual([
      `1:14: \`concurrency\` must be an integer from 1 to 10000, got " 04" (a number in quotes is text: write it without them, 4)`,
      `5:14: task "a": \`retries\` must be an integer from 0 to 100, got "007" (a number in quotes is text: write it without them, 7)`,
      `6:15: task "a": \`retryOn[0]\` must be an exit code, an integer from 1 to 255, got "001" (a number in quotes is text: write it without them, 1)`,
    ]);
    // Out of range, written without quotes it is refused all the same: the range alone is said, once.
    const outOfRange = yaml("concurrency: '0'", "tasks:", "  a:", "    run: x", '    retries: "300"', '    retryOn: ["256", "0"]');
    const expected = [
      `1:14: \`concurrency\` must be an integer from 1 to 10000, got "0"`,
      `5:14: task "a": \`retries\` must be an integer from 0 to 100, got "300"`,
      `6:15: task "a": \`retryOn[0]\` must be an exit code, an integer from 1 to 255, got "256"`,
      `6:22: task "a": \`retryOn[1]\` must be an exit code, an integer from 1 to 255, got "0"`,
    ];
    expect(problemsOf(outOfRange)).toEqual(expected);
    expect(problemsOf(outOfRange, "wf.yaml", { simple: false })).toEqual(expected);
  });

  it("says at a bare `!` what the field takes without it, in one problem: quoted where YAML would read the value as other than the text wanted (run: ! 1, cwd: ! true, an env value ! 1.10), as it is elsewhere, with no shell's \"not\" but in a command", () => {
    const said = "this `!` is YAML's tag for text, which it drops: the value is read as";
    const command = "where a command string is expected";
    // Before, `run: ! 1` was told to drop the `!` ("write it without the `!`: 1"), and `run: 1` then refused as a number.
    expect(problemsOf(yaml("name: ! 1", "tasks:", "  a: { run: ! 1 }", "  b: { run: ! 1.5 }", "  c: { run: ! true }", "  d: { run: ! null }", "  e: { run: ! grep -q x f }"))).toEqual([
      `1:7: ${said} "1"; to keep the \`!\`, quote the whole value: "! 1"; without the \`!\`, quote it too ("1"): unquoted, YAML reads 1 as a number, where text is expected`,
      `3:13: ${said} "1"; to keep the \`!\` (a shell's "not"), quote the whole value: "! 1"; without the \`!\`, quote it too ("1"): unquoted, YAML reads 1 as a number, ${command}`,
      `4:13: ${said} "1.5"; to keep the \`!\` (a shell's "not"), quote the whole value: "! 1.5"; without the \`!\`, quote it too ("1.5"): unquoted, YAML reads 1.5 as a number, ${command}`,
      `5:13: ${said} "true"; to keep the \`!\` (a shell's "not"), quote the whole value: "! true"; without the \`!\`, quote it too ("true"): unquoted, YAML reads true as a boolean, ${command}`,
      `6:13: ${said} "null"; to keep the \`!\` (a shell's "not"), quote the whole value: "! null"; without the \`!\`, quote it too ("null"): unquoted, YAML reads null as null (no value), ${command}`,
      `7:13: ${said} "grep -q x f"; to keep the \`!\` (a shell's "not"), quote the whole value: "! grep -q x f"`,
    ]);
    // A folder, an env value: the `!` may be a character of the text; the value without it, quoted where YAML would read it otherwise.
    const env = "where an env value (text, or an integer or true/false as written) is expected";
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    cwd: ! true", "    env: { A: ! 1.10, B: ! 0x10, C: ! True, D: ! 1, E: ! true, F: ! x }", "  b: { run: x, cwd: ! build }"))).toEqual([
      `4:10: ${said} "true"; to keep the \`!\`, quote the whole value: "! true"; without the \`!\`, quote it too ("true"): unquoted, YAML reads true as a boolean, where text is expected`,
      `5:15: ${said} "1.10"; to keep the \`!\`, quote the whole value: "! 1.10"; without the \`!\`, quote it too ("1.10"): unquoted, YAML reads 1.10 as the number 1.1, ${env}`,
      `5:26: ${said} "0x10"; to keep the \`!\`, quote the whole value: "! 0x10"; without the \`!\`, quote it too ("0x10"): unquoted, YAML reads 0x10 as the number 16, ${env}`,
      `5:37: ${said} "True"; to keep the \`!\`, quote the whole value: "! True"; without the \`!\`, quote it too ("True"): unquoted, YAML reads True as a boolean, ${env}`,
      `5:48: ${said} "1"; to keep the \`!\`, quote the whole value: "! 1", or write it without the \`!\`: 1`,
      `5:56: ${said} "true"; to keep the \`!\`, quote the whole value: "! true", or write it without the \`!\`: true`,
      `5:67: ${said} "x"; to keep the \`!\`, quote the whole value: "! x", or write it without the \`!\`: x`,
      `6:21: ${said} "build"; to keep the \`!\`, quote the whole value: "! build", or write it without the \`!\`: build`,
    ]);
    // A word, a duration, a number, an id, in a list too: the value without the `!` (before, a word was told to keep it as a shell's "not").
    expect(problemsOf(yaml("concurrency: ! 2", "tasks:", "  x: { run: x }", "  a:", "    run: x", "    priority: ! high", "    timeout: ! 5s", "    retryOn: ! any", "    backoff: { base: ! 2s }", "    dependsOn: [! x, ! null]"))).toEqual([
      `1:14: ${said} the text "2", not the number 2; write it without the \`!\`: 2`,
      `6:15: ${said} "high"; write it without the \`!\`: high`,
      `7:14: ${said} "5s"; write it without the \`!\`: 5s`,
      `8:14: ${said} "any"; write it without the \`!\`: any`,
      `9:22: ${said} "2s"; write it without the \`!\`: 2s`,
      `10:17: ${said} "x"; write it without the \`!\`: x`,
      `10:22: ${said} the text "null", and without the \`!\` YAML reads null as null (no value), which dependsOn does not take: write the id of a task it waits for (quoted, "null", for a task of that name), or leave the item out`,
    ]);
  });

  it("says at a bare `!` before a scalar where a mapping is expected (tasks, a task, defaults, env, backoff) what the field takes, in one problem: neither to keep the `!` as a shell's \"not\" nor to drop it, which leaves the value wrong", () => {
    const said = "this `!` is YAML's tag for text, which it drops: the value is read as the text";
    // Before, `tasks: ! x` was told to quote "! x" as a shell's "not", then refused as "x" at 1:10; `env: ! x` to write it without the `!`, as `env: x`, which is refused too.
    expect(problemsOf(yaml("tasks: ! x"))).toEqual([`1:8: ${said} "x", but \`tasks\` must be a mapping of task id to task, with or without the \`!\``]);
    expect(problemsOf(yaml("env: ! x", "defaults: ! x", "tasks:", "  a:", "    run: x", "    env: ! x", "    backoff: ! 5s", "  b: ! make"))).toEqual([
      `1:6: ${said} "x", but \`env\` must be a mapping of variable names to values, with or without the \`!\``,
      `2:11: ${said} "x", but \`defaults\` must be a mapping of task fields, with or without the \`!\``,
      `6:10: ${said} "x", but \`env\` of task "a" must be a mapping of variable names to values, with or without the \`!\``,
      `7:14: ${said} "5s", but \`backoff\` of task "a" must be a mapping with \`base\` and/or \`max\`, with or without the \`!\``,
      `8:6: ${said} "make", but task "b" must be a mapping with at least \`run\`, with or without the \`!\``,
    ]);
    expect(problemsOf(yaml("defaults: { env: ! 1 }", "tasks:", "  a: { run: x }"))).toEqual([`1:18: ${said} "1", but \`defaults.env\` must be a mapping of variable names to values, with or without the \`!\``]);
    // An env value, a run: still told the `!` may be kept.
    expect(problemsOf(yaml("tasks:", "  a: { run: ! x, env: { A: ! x } }"))).toEqual([
      `2:13: this \`!\` is YAML's tag for text, which it drops: the value is read as "x"; to keep the \`!\` (a shell's "not"), quote the whole value: "! x"`,
      `2:28: this \`!\` is YAML's tag for text, which it drops: the value is read as "x"; to keep the \`!\`, quote the whole value: "! x", or write it without the \`!\`: x`,
    ]);
  });

  it("says at a bare `!` with no value after it that the value is empty, once, at the `!`: not to quote \"! \" or to write nothing in its place, nor again at the key", () => {
    // Before, `retries: !` was refused at the key as an empty string, and told at the `!` to write it without the `!`: (nothing).
    expect(problemsOf(yaml("tasks: !"))).toEqual(["1:8: this `!` is YAML's tag for text, with no value after it: the value is read as an empty string, but `tasks` must be a mapping of task id to task"]);
    const empty = "this `!` is YAML's tag for text, with no value after it: the value is read as an empty string; write the value in its place, without the `!`";
    expect(problemsOf(yaml("tasks:", "  a:", "    run: !", "    retries: !", "    env: !", "    dependsOn: [!]"))).toEqual([
      `3:10: ${empty}`,
      `4:14: ${empty}`,
      "5:10: this `!` is YAML's tag for text, with no value after it: the value is read as an empty string, but `env` of task \"a\" must be a mapping of variable names to values",
      `6:17: ${empty}`,
    ]);
    // An unknown key is still said, beside it.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retrys: !"))).toEqual(['4:5: task "a": unknown key "retrys"; did you mean "retries"?', `4:13: ${empty}`]);
  });

  it("says at a bare `!` before what is no task id in dependsOn (! ~, ! a/b) that it is none with the `!` or without it, once: not to quote \"~\", an id no task can have", () => {
    const ids = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    // Before, told to quote it ("~"), then refused again at 4:18 as no valid task id.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    dependsOn: ! ~"))).toEqual([
      `4:16: this \`!\` is YAML's tag for text, which it drops: the value is read as the text "~", which is not a valid task id, and without the \`!\` YAML reads ~ as null (no value), which dependsOn does not take: list the ids of the tasks it waits for, or leave dependsOn out; ${ids}`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    dependsOn: [b, ! a/b]", "  b: { run: y }"))).toEqual([
      `4:20: this \`!\` is YAML's tag for text, which it drops: the value is read as the text "a/b", which is not a valid task id, with or without the \`!\`: ${ids}`,
    ]);
    // Without a `!`, the id is still refused where it is written.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", '    dependsOn: "~"'))).toEqual([`4:16: task "a" depends on "~", which is not a valid task id: ${ids}`]);
  });

  it("says at a bare `!` before a null word as dependsOn's value (! null, ! Null, ! NULL) that it is no list of ids either way, once, as for ! ~: not to quote it, which names no task", () => {
    // Before, told to quote it ("null"), then refused again at 4:18 as "null", which is not defined: quoting it left that one.
    for (const word of ["null", "Null", "NULL"]) {
      expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a", `    dependsOn: ! ${word}`))).toEqual([
        `4:16: this \`!\` is YAML's tag for text, which it drops: the value is read as the text "${word}", and without the \`!\` YAML reads ${word} as null (no value), which dependsOn does not take: list the ids of the tasks it waits for (quoted, "${word}", for a task of that name), or leave dependsOn out`,
      ]);
    }
    // Quoted, without a `!`, it is an id, refused where it is written when no task has it.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a", '    dependsOn: "null"'))).toEqual(['4:16: task "a" depends on "null", which is not defined']);
  });

  it("says at a bare `!` before a null word or ~ as a dependsOn item ([! null], - ! Null, [! ~]) that it is no task id either way, once, at the `!`, as for the value itself: not to quote it and then that \"null\" is not defined", () => {
    const said = "this `!` is YAML's tag for text, which it drops: the value is read as the text";
    // Before, told to quote it ("null"), then refused again at the value as "null", which is not defined: two problems for one `!`.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a", "    dependsOn: [b, ! null]", "  b: { run: echo b }"))).toEqual([
      `4:20: ${said} "null", and without the \`!\` YAML reads null as null (no value), which dependsOn does not take: write the id of a task it waits for (quoted, "null", for a task of that name), or leave the item out`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a", "    dependsOn:", "      - ! Null"))).toEqual([
      `5:9: ${said} "Null", and without the \`!\` YAML reads Null as null (no value), which dependsOn does not take: write the id of a task it waits for (quoted, "Null", for a task of that name), or leave the item out`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a", "    dependsOn: [! ~]"))[0]).toContain("which dependsOn does not take: write the id of a task it waits for, or leave the item out; ids match");
    // Quoted, as a list item, it is an id, refused where it is written when no task has it; a task so named is waited for.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo a", '    dependsOn: ["null"]'))).toEqual(['4:17: task "a" depends on "null", which is not defined']);
    expect(parse(yaml("tasks:", "  a:", "    run: echo a", '    dependsOn: ["null"]', '  "null": { run: echo b }')).tasks.map((task) => task.id)).toEqual(["null", "a"]);
  });

  it("refuses a duration written as a number other than in digits (1e3, 0x10, .5, +5), at each, with the seconds and the duration it was read as: quoted, or as a flag, the same text is no duration, and 0x10 is no 16 seconds to mean", () => {
    const digits = "a duration's number of seconds is written in digits, with a point if need be";
    // Before, taken silently: 1e3 as 1000 seconds, 0x10 as 16, where `timeout: "1e3"` and `--shutdown-timeout 1e3` are refused.
    const text = yaml("defaults:", "  delay: .5", "  backoff: { base: 0o17 }", "tasks:", "  a:", "    run: x", "    timeout: 1e3", "    delay: +5", "    backoff: { max: 0x10 }", "  b:", "    run: x", "    backoff: { <<: { base: 1.5e2 } }");
    expect(problemsOf(text)).toEqual([
      `2:10: \`defaults.delay\` is .5, which YAML reads as the number 0.5: ${digits}; write 0.5, or 500ms`,
      `3:20: \`defaults.backoff.base\` is 0o17, which YAML reads as the number 15: ${digits}; write 15, or 15s`,
      `7:14: task "a": \`timeout\` is 1e3, which YAML reads as the number 1000: ${digits}; write 1000, or 16m40s`,
      `8:12: task "a": \`delay\` is +5, which YAML reads as the number 5: ${digits}; write 5, or 5s`,
      `9:21: task "a": \`backoff.max\` is 0x10, which YAML reads as the number 16: ${digits}; write 16, or 16s`,
      `12:28: task "b": \`backoff.base\` is 1.5e2, which YAML reads as the number 150: ${digits}; write 150, or 2m30s`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a: { run: x, timeout: \"1e3\" }"))[0]).toContain('`timeout` must be a duration like 250ms');
    // Written in digits, a number is seconds, as README says; past the range, the schema says so.
    const workflow = parse(yaml("defaults: { delay: 1.5 }", "tasks:", "  a: { run: x, timeout: 1000, backoff: { base: 2, max: 60 } }"));
    expect(workflow.tasks[0]).toMatchObject({ timeoutMs: 1_000_000, delayMs: 1500, backoff: { baseMs: 2000, maxMs: 60_000 } });
    // The number as written: before, "got 5000000", which the file does not hold.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, timeout: 5e6 }"))[0]).toContain("got 5e6; longer than the maximum of 30 days");
    expect(problemsOf(yaml("tasks:", "  a: { run: x, retries: 5e6, retryOn: [1e3] }"))).toEqual([
      '2:25: task "a": `retries` must be an integer from 0 to 100, got 5e6',
      '2:40: task "a": `retryOn[0]` must be an exit code, an integer from 1 to 255, got 1e3',
    ]);
    // A variable named as a duration field is no duration: no word of the duration's maximum (before, "; longer than the maximum of 30 days").
    expect(problemsOf(yaml("env: { timeout: 99999999.5 }", "tasks:", "  env: { run: x, timeout: 3000000, env: { max: 99999999.5 } }"))).toEqual([
      '1:17: `env.timeout` must be a string, an integer or true/false (quote other values, e.g. "1.10", which YAML would read as 1.1), got 99999999.5',
      '3:27: task "env": `timeout` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit), got 3000000; longer than the maximum of 30 days (720h)',
      '3:48: task "env": `env.max` must be a string, an integer or true/false (quote other values, e.g. "1.10", which YAML would read as 1.1), got 99999999.5',
    ]);
    // Where the field takes no number, "got 1e3" alone would read as the text written: what YAML read it as is said too.
    expect(problemsOf(yaml("name: 1e3", "tasks:", "  a: { run: 0x10, cwd: 1e3, priority: 1e3 }", "  b: { run: x, retries: 2 }"))).toEqual([
      "1:7: `name` must be a string, got 1e3, which YAML reads as the number 1000",
      '3:13: task "a": `run` must be a non-empty command string, got 0x10, which YAML reads as the number 16',
      '3:24: task "a": `cwd` must be a folder path, relative to the workflow file, got 1e3, which YAML reads as the number 1000',
      '3:39: task "a": `priority` must be one of: low, normal, high, critical, got 1e3, which YAML reads as the number 1000',
    ]);
  });

  it("refuses an integer (concurrency, retries, a retryOn exit code) written as a number other than in digits (0x10, 1e1, 2.0, +3), at each, with the integer it was read as, as -j refuses it", () => {
    const digits = "an integer is written in digits";
    // Before, taken silently: 0x10 as 16 tasks at once, 0x4b as exit code 75.
    const text = yaml("concurrency: 0x10", "defaults: { retries: 2.0 }", "tasks:", "  a: { run: x, retries: 1e1, retryOn: [0x4b, 75, +3] }");
    expect(problemsOf(text)).toEqual([
      `1:14: \`concurrency\` is 0x10, which YAML reads as the number 16: ${digits}; write 16`,
      `2:22: \`defaults.retries\` is 2.0, which YAML reads as the number 2: ${digits}; write 2`,
      `4:25: task "a": \`retries\` is 1e1, which YAML reads as the number 10: ${digits}; write 10`,
      `4:40: task "a": \`retryOn[0]\` is 0x4b, which YAML reads as the number 75: ${digits}; write 75`,
      `4:50: task "a": \`retryOn[2]\` is +3, which YAML reads as the number 3: ${digits}; write 3`,
    ]);
    // Out of the field's range, or no integer, the schema says so, as for any number.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, retries: 1.5, retryOn: [0x0] }"))).toEqual([
      '2:25: task "a": `retries` must be an integer from 0 to 100, got 1.5',
      '2:40: task "a": `retryOn[0]` must be an exit code, an integer from 1 to 255, got 0x0',
    ]);
    expect(parse(yaml("concurrency: 16", "tasks:", "  a: { run: x, retries: 10, retryOn: [75] }")).tasks[0]).toMatchObject({ retries: 10, retryOn: [75] });
    // A tag written says the number is meant so: read as YAML reads it, a duration's too.
    expect(parse(yaml("tasks:", "  a: { run: x, retries: !!float 2.0, timeout: !!float 1e3 }")).tasks[0]).toMatchObject({ retries: 2, timeoutMs: 1_000_000 });
  });

  it("refuses a zero duration written other than in digits (0x0, +0, .0, 0e0) where the field takes zero (delay, a backoff bound), as retries: 0x0 is; timeout: 0x0 is told its minimum", () => {
    const digits = "a duration's number of seconds is written in digits, with a point if need be";
    // Before, taken silently as no delay, where `delay: 0x10` is refused.
    const text = yaml("defaults:", "  delay: 0x0", "tasks:", "  a:", "    run: x", "    delay: +0", "    backoff: { base: .0, max: 0e0 }");
    expect(problemsOf(text)).toEqual([
      `2:10: \`defaults.delay\` is 0x0, which YAML reads as the number 0: ${digits}; write 0, or 0ms`,
      `6:12: task "a": \`delay\` is +0, which YAML reads as the number 0: ${digits}; write 0, or 0ms`,
      `7:22: task "a": \`backoff.base\` is .0, which YAML reads as the number 0: ${digits}; write 0, or 0ms`,
      `7:31: task "a": \`backoff.max\` is 0e0, which YAML reads as the number 0: ${digits}; write 0, or 0ms`,
    ]);
    expect(parse(yaml("defaults: { delay: 0 }", "tasks:", "  a: { run: x, delay: 0.0, backoff: { base: 0, max: 0 } }")).tasks[0]).toMatchObject({ delayMs: 0, backoff: { baseMs: 0, maxMs: 0 } });
    expect(problemsOf(yaml("tasks:", "  a: { run: x, timeout: 0x0 }"))).toEqual(['2:25: task "a": `timeout` must be at least 1ms (a duration is rounded to whole milliseconds), got 0x0']);
  });

  it("refuses a sub-millisecond duration written with an exponent (1e-9), as 1e3 is and as a flag refuses the text, saying it in digits and that it rounds to 0ms; -0 as 0; tagged, it is read as YAML reads it and rounded", () => {
    const digits = "a duration's number of seconds is written in digits, with a point if need be";
    // Before, `delay: 1e-9` was taken as no delay, unsaid: JavaScript writes 1e-9 with its exponent, which the check took for no number of seconds.
    const text = yaml("tasks:", "  a:", "    run: x", "    delay: 1e-9", "    backoff: { base: 1.5E-7, max: 1e-4 }", "  b: { run: x, delay: -0 }");
    expect(problemsOf(text)).toEqual([
      `4:12: task "a": \`delay\` is 1e-9, which YAML reads as the number 0.000000001: ${digits}; write 0.000000001, or 0ms, to which it is rounded (a duration is whole milliseconds)`,
      `5:22: task "a": \`backoff.base\` is 1.5E-7, which YAML reads as the number 0.00000015: ${digits}; write 0.00000015, or 0ms, to which it is rounded (a duration is whole milliseconds)`,
      `5:35: task "a": \`backoff.max\` is 1e-4, which YAML reads as the number 0.0001: ${digits}; write 0.0001, or 0ms, to which it is rounded (a duration is whole milliseconds)`,
      `6:23: task "b": \`delay\` is -0, which YAML reads as the number 0: ${digits}; write 0, or 0ms`,
    ]);
    // Written as told, it is taken, rounded as a duration written so is (as a flag's `--kill-grace 0.000000001` is).
    expect(parse(yaml("tasks:", "  a: { run: x, delay: 0.000000001, backoff: { base: 0.00000015, max: 0.0001 } }")).tasks[0]).toMatchObject({ delayMs: 0, backoff: { baseMs: 0, maxMs: 0 } });
    // A tag says the number is meant so: read as YAML reads it, and rounded.
    expect(parse(yaml("tasks:", "  a: { run: x, delay: !!float 1e-9, backoff: { base: !!int -0, max: !!float 1e-3 } }")).tasks[0]).toMatchObject({ delayMs: 0, backoff: { baseMs: 0, maxMs: 1 } });
    // The flag refuses the same text as no duration, saying it in digits as the file's is (before, with no hint, where 1e-3 had one), and -0 as negative.
    expect(() => durationFlag("--kill-grace", "1e-9")).toThrow(
      '--kill-grace: "1e-9" is not a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days (a number of seconds is written in digits, with a point if need be: write 0.000000001, or 0ms, to which it is rounded (a duration is whole milliseconds))',
    );
    expect(() => durationFlag("--kill-grace", "1.5E-7")).toThrow(/: write 0\.00000015, or 0ms, to which it is rounded/);
    expect(() => durationFlag("--kill-grace", "1e-3")).toThrow(/: write 0\.001, or 1ms\)$/);
    expect(() => durationFlag("--kill-grace", "-0")).toThrow(/a duration cannot be negative/);
  });

  it("does not refuse a number written other than in digits that a merge key brings in only to be replaced (<<: *t, timeout: 5), as the schema does not: where it is used, it is refused", () => {
    const digits = "a duration's number of seconds is written in digits, with a point if need be";
    // Before, `timeout: 0x10` and `retries: 0x2` were refused for task "a", which runs with 5 and 1.
    const text = yaml("x-t: &t { timeout: 0x10, retries: 0x2, backoff: { base: 0x1 } }", "x-u: &u { backoff: { max: 5 } }", "tasks:", "  a: { run: x, <<: [*u, *t], timeout: 5, retries: 1 }");
    expect(parse(text).tasks[0]).toMatchObject({ timeoutMs: 5000, retries: 1, backoff: { maxMs: 5000 } });
    expect(problemsOf(yaml("tasks:", "  a: { run: x, <<: &t { timeout: 0x10, retries: 0x2 }, timeout: 5 }", "  b: { run: x, <<: *t, retries: 2 }"))).toEqual([
      `2:34: task "b": \`timeout\` is 0x10, which YAML reads as the number 16: ${digits}; write 16, or 16s`,
      '2:49: task "a": `retries` is 0x2, which YAML reads as the number 2: an integer is written in digits; write 2',
    ]);
  });

  it("does not tell to quote an env value written other than in digits that a merge key brings in only to be replaced (<<: *t, env: { A: x }), as for timeout: where it is passed, it is", () => {
    // Before, `env.A` is 0x10 was refused for task "a", whose A is "x".
    const text = yaml("x-t: &t { env: { A: 0x10 } }", "tasks:", "  a: { <<: *t, run: echo, env: { A: x } }");
    expect(parse(text).tasks[0]).toMatchObject({ env: { A: "x" } });
    // Within an env, the key written beside the merge replaces it; the one not replaced is still told, as where another task uses it.
    expect(problemsOf(yaml("x-e: &e { A: 0x10, B: 0x20 }", "tasks:", "  a: { run: x, env: { <<: *e, A: x } }", "  b: { run: y, env: { <<: *e, A: z, B: w } }"))).toEqual([
      '1:23: task "a": `env.B` is 0x20, which YAML reads as 32; quote it ("0x20") to pass it as written',
    ]);
  });

  it("tells a problem in a value many tasks share (a merge key's defaults, an alias) once at that value, naming the first tasks and how many more, not once per task", () => {
    // Before, 200 lines at 1:31, one per task, the same but for its name.
    const lines = ["x-d: &d { run: echo, retries: 0x2, priority: bogus }", "x-t: &t 0x10", "x-e: &e { A: 0x10 }", "x-n: &n [buidl]", "tasks:", "  build: { run: make }"];
    for (let index = 1; index <= 200; index++) lines.push(`  t${index}: { <<: *d }`);
    lines.push("  a: { run: x, timeout: *t, env: *e, dependsOn: *n }", "  b: { run: x, timeout: *t, env: { <<: *e }, dependsOn: *n }");
    expect(problemsOf(yaml(...lines))).toEqual([
      '1:31: tasks "t1", "t2", "t3" and 197 more: `retries` is 0x2, which YAML reads as the number 2: an integer is written in digits; write 2',
      '1:46: tasks "t1", "t2", "t3" and 197 more: `priority` must be one of: low, normal, high, critical, got "bogus"',
      "2:9: tasks \"a\" and \"b\": `timeout` is 0x10, which YAML reads as the number 16: a duration's number of seconds is written in digits, with a point if need be; write 16, or 16s",
      '3:14: tasks "a" and "b": `env.A` is 0x10, which YAML reads as 16; quote it ("0x10") to pass it as written',
      '4:10: tasks "a" and "b" depend on "buidl", which is not defined; did you mean "build"?',
    ]);
    // Up to four are all named; a task's own problem at its own place is its alone.
    const four = yaml("x-d: &d { run: echo, retries: -1 }", "tasks:", "  a: { <<: *d }", "  b: { <<: *d }", "  c: { <<: *d }", "  d: { <<: *d }", "  e: { <<: *d, retries: -2 }");
    expect(problemsOf(four)).toEqual(['1:31: tasks "a", "b", "c" and "d": `retries` must be an integer from 0 to 100, got -1', '7:25: task "e": `retries` must be an integer from 0 to 100, got -2']);
  });

  it("tells an unknown dependency in a list more tasks share than get suggestions once, with its suggestion, not twice", () => {
    // Past the first 50 tasks the hint was left off, so the rest were told again at the same place without it.
    const lines = ["x-n: &n [buidl]", "tasks:", "  build: { run: make }"];
    for (let index = 1; index <= 60; index++) lines.push(`  t${index}: { run: x, dependsOn: *n }`);
    expect(problemsOf(yaml(...lines))).toEqual(['1:10: tasks "t1", "t2", "t3" and 57 more depend on "buidl", which is not defined; did you mean "build"?']);
  });

  it("says the word meant for a priority or type written in other letters or almost so (High, HIGH, hgih, Shell)", () => {
    const priority = "`priority` must be one of: low, normal, high, critical";
    expect(problemsOf(yaml("defaults: { priority: High }", "tasks:", "  a: { run: x, priority: hgih, type: Shell }", "  b: { run: x, priority: urgent }"))).toEqual([
      `1:23: \`defaults.${priority.slice(1)}, got "High" (did you mean high?)`,
      `3:26: task "a": ${priority}, got "hgih" (did you mean high?)`,
      '3:38: task "a": `type` must be one of: shell, got "Shell" (did you mean shell?)',
      `4:26: task "b": ${priority}, got "urgent"`,
    ]);
  });

  it("says to list the exit codes of a retryOn written as one string (retryOn: 1, 75)", () => {
    const expected = "`retryOn` must be a list of exit codes, integers from 1 to 255, or any (every failure is retried)";
    expect(problemsOf(yaml("defaults:", "  retryOn: 1, 75", "tasks:", "  a:", "    run: x", "    retryOn: 1 2 3"))).toEqual([
      `2:12: \`defaults.${expected.slice(1)}, got "1, 75" (list them: retryOn: [1, 75])`,
      `6:14: task "a": ${expected}, got "1 2 3" (list them: retryOn: [1, 2, 3])`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retryOn: all"))).toEqual([`4:14: task "a": ${expected}, got "all"`]);
    // A code out of range, quoted or among others: no list would take it, and none is written out.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, retryOn: '300' }", "  b: { run: x, retryOn: '0' }", "  c: { run: x, retryOn: '1, 300' }"))).toEqual([
      `2:25: task "a": ${expected}, got "300"`,
      `3:25: task "b": ${expected}, got "0"`,
      `4:25: task "c": ${expected}, got "1, 300"`,
    ]);
  });

  it("says to list one exit code given alone (retryOn: 75, or \"75\"), and that any is written alone, not in the list (retryOn: [1, any])", () => {
    const expected = "`retryOn` must be a list of exit codes, integers from 1 to 255, or any (every failure is retried)";
    const item = (index: number) => `\`retryOn[${String(index)}]\` must be an exit code, an integer from 1 to 255`;
    const anyAlone = "any is written alone, not in a list: retryOn: any retries every failure";
    const text = yaml("defaults: { retryOn: 75 }", "tasks:", "  a: { run: x, retryOn: '3' }", "  b: { run: x, retryOn: [1, any] }", "  c: { run: x, retryOn: [ANY] }", "  d: { run: x, retryOn: 300 }", "  e: { run: x, env: { retryOn: 1.5 } }");
    expect(problemsOf(text)).toEqual([
      `1:22: \`defaults.${expected.slice(1)}, got 75 (list it: retryOn: [75])`,
      `3:25: task "a": ${expected}, got "3" (list it: retryOn: [3])`,
      `4:29: task "b": ${item(1)}, got "any" (${anyAlone})`,
      `5:26: task "c": ${item(0)}, got "ANY" (${anyAlone})`,
      // Out of range: no list would take it either.
      `6:25: task "d": ${expected}, got 300`,
      // A variable named so is no exit code.
      '7:32: task "e": `env.retryOn` must be a string, an integer or true/false (quote other values, e.g. "1.10", which YAML would read as 1.1), got 1.5',
    ]);
  });

  it("says that env cannot unset a variable, where a null value (null, ~ or nothing) asks it to, in defaults and tasks too, not only that null is not a string", () => {
    const text = yaml("defaults: { env: { FOO: ~ } }", "tasks:", "  env:", "    run: x", "    env: { FOO: null, BAR: }", "  b: { run: null }");
    expect(problemsOf(text)).toEqual([
      `1:25: \`defaults.env.FOO\` ${unsetNote("FOO")}`,
      `5:17: task "env": \`env.FOO\` ${unsetNote("FOO")}`,
      `5:23: task "env": \`env.BAR\` ${unsetNote("BAR")}`,
      // Only env's values: a task named env keeps the message of its other fields.
      '6:13: task "b": `run` must be a non-empty command string, got nothing (null)',
    ]);
  });

  it("refuses env values YAML reads as an integer or boolean other than as written, at each, saying how to keep them", () => {
    const text = yaml("env: { A: 1.0, B: 0x10, C: 01234, D: 1e3, E: +5, F: True, OK: 12, YES: true }", "defaults: { env: { G: 07 } }", "tasks:", "  a: { run: x, env: { H: FALSE } }");
    expect(problemsOf(text)).toEqual([
      '1:11: `env.A` is 1.0, which YAML reads as 1; quote it ("1.0") to pass it as written',
      '1:19: `env.B` is 0x10, which YAML reads as 16; quote it ("0x10") to pass it as written',
      '1:28: `env.C` is 01234, which YAML reads as 1234; quote it ("01234") to pass it as written',
      '1:38: `env.D` is 1e3, which YAML reads as 1000; quote it ("1e3") to pass it as written',
      '1:46: `env.E` is +5, which YAML reads as 5; quote it ("+5") to pass it as written',
      '1:53: `env.F` is True, which YAML reads as true; quote it ("True") to pass it as written',
      '2:23: `defaults.env.G` is 07, which YAML reads as 7; quote it ("07") to pass it as written',
      '4:26: task "a": `env.H` is FALSE, which YAML reads as false; quote it ("FALSE") to pass it as written',
    ]);
  });

  it("refuses an env integer too large to be read exactly with one problem that says to quote it, not a second one in zod's words", () => {
    const text = yaml("env: { A: 9007199254740992, B: 100000000000000000000, C: -9007199254740993, D: 12345678901234567890, OK: 9007199254740991 }", "tasks:", "  a: { run: x }");
    expect(problemsOf(text)).toEqual([
      '1:11: `env.A` is 9007199254740992, an integer too large to be read exactly; quote it ("9007199254740992") to pass it as written',
      '1:32: `env.B` is 100000000000000000000, an integer too large to be read exactly; quote it ("100000000000000000000") to pass it as written',
      '1:58: `env.C` is -9007199254740993, which YAML reads as -9007199254740992; quote it ("-9007199254740993") to pass it as written',
      '1:80: `env.D` is 12345678901234567890, which YAML reads as 12345678901234567000; quote it ("12345678901234567890") to pass it as written',
    ]);
    // 2^53 alone, which JavaScript writes as it is written: the fast reader took it, and zod said "Invalid input".
    expect(problemsOf(yaml("tasks:", "  a:", '    run: "true"', "    env:", "      B: 9007199254740992"))).toEqual([
      '5:10: task "a": `env.B` is 9007199254740992, an integer too large to be read exactly; quote it ("9007199254740992") to pass it as written',
    ]);
  });

  it("reports runAt with delay even when the task or defaults has other problems too", () => {
    const text = yaml("defaults: { runAt: 2026-01-02T00:00:00Z, delay: 1s, retries: x }", "tasks:", "  a: { run: x, runAt: 2026-01-02T00:00:00Z, delay: 1s, retries: x }");
    expect(problemsOf(text)).toEqual([
      "1:49: `defaults.delay` cannot be set together with `runAt`; keep one",
      '1:62: `defaults.retries` must be an integer from 0 to 100, got "x"',
      '3:52: task "a": `delay` cannot be set together with `runAt`; keep one',
      '3:65: task "a": `retries` must be an integer from 0 to 100, got "x"',
    ]);
  });

  it("says the values of a backoff whose max is under its base, each read as a duration, however written", () => {
    expect(problemsOf(yaml("defaults: { backoff: { base: 10s, max: 2.5 } }", "tasks:", "  a: { run: x, backoff: { base: 2m, max: 90 } }", "  b: { run: x, backoff: { base: 1d12h, max: 250ms } }"))).toEqual([
      "1:40: `defaults.backoff.max` must not be shorter than `backoff.base` (10s), got 2.5s",
      '3:42: task "a": `backoff.max` must not be shorter than `backoff.base` (2m), got 1m30s',
      '4:45: task "b": `backoff.max` must not be shorter than `backoff.base` (1d12h), got 250ms',
    ]);
  });

  it("reports a backoff whose max, from the task or from defaults, is under its base from the other", () => {
    expect(problemsOf(yaml("defaults: { backoff: { base: 1m } }", "tasks:", "  a: { run: x, backoff: { max: 10s } }", "  b: { run: x }"))).toEqual([
      '3:32: task "a": `backoff.max` must not be shorter than `defaults.backoff.base` (1m), got 10s',
    ]);
    expect(problemsOf(yaml("defaults: { backoff: { max: 10s } }", "tasks:", "  a: { run: x, backoff: { base: 1m } }", "  b: { run: x, backoff: { base: 2s } }"))).toEqual([
      '3:33: task "a": `backoff.base` must not be longer than `defaults.backoff.max` (10s), got 1m',
    ]);
    // With another field of defaults wrong (a value, an unknown key), the bound is still checked against its valid fields: every problem at once.
    expect(problemsOf(yaml("defaults: { backoff: { max: 1s }, retries: 500 }", "tasks: { w: { run: x, backoff: { base: 2s } } }"))).toEqual([
      "1:44: `defaults.retries` must be an integer from 0 to 100, got 500",
      '2:40: task "w": `backoff.base` must not be longer than `defaults.backoff.max` (1s), got 2s',
    ]);
    expect(problemsOf(yaml("defaults: { backoff: { base: 1m }, retry: 2 }", "tasks: { w: { run: x, backoff: { max: 10s } } }"))).toEqual([
      '1:36: unknown key "retry" in `defaults`; did you mean "retries"?',
      '2:39: task "w": `backoff.max` must not be shorter than `defaults.backoff.base` (1m), got 10s',
    ]);
  });

  it("names a long dependency cycle by its first ten steps and its length", () => {
    const tasks = Array.from({ length: 12 }, (_, index) => `  t${index}: { run: x, dependsOn: t${(index + 1) % 12} }`);
    const steps = Array.from({ length: 9 }, (_, index) => `t${index} -> t${index + 1} at ${index + 2}:${index < 9 ? 28 : 29}`);
    expect(problemsOf(yaml("tasks:", ...tasks))).toEqual([
      `2:28: dependency cycle: t0 -> t1 -> t2 -> t3 -> t4 -> t5 -> t6 -> t7 -> t8 -> t9 -> ... (12 tasks in all) -> t0 (${steps.join(", ")}, ...); remove one of these dependencies`,
    ]);
  });

  // One mistake, one problem: `run` missing, as the key meant for it was not read as it, was told too.
  it("suggests the field other tools call by another name, and does not also say the field meant is missing", () => {
    expect(problemsOf(yaml("jobs: {}", "tasks:", "  a: { cmd: x, needs: [b] }", "  b: { run: x }"))).toEqual([
      '1:1: unknown key "jobs" at the top level; did you mean "tasks"?',
      '3:8: task "a": unknown key "cmd"; did you mean "run"?',
      '3:16: task "a": unknown key "needs"; did you mean "dependsOn"?',
    ]);
  });

  it("tells a misspelt or renamed tasks at the top level once, as the unknown key with tasks meant, not also as tasks missing, as a misspelt run is told in a task", () => {
    expect(problemsOf(yaml("taks:", "  a:", "    run: x"), "cc.yaml")).toEqual(['1:1: unknown key "taks" at the top level; did you mean "tasks"?']);
    expect(problemsOf(yaml("name: ci", "Tasks:", "  a: { run: x }"))).toEqual(['2:1: unknown key "Tasks" at the top level; did you mean "tasks"?']);
    expect(problemsOf(yaml("tasks:", "  a:", "    rnu: x"))).toEqual(['3:5: task "a": unknown key "rnu"; did you mean "run"?']);
    // No key meant as tasks: tasks is missing, as before.
    expect(problemsOf(yaml("name: ci", "concurency: 2"))).toEqual(["1:1: `tasks` is missing; add a `tasks` mapping with at least one task", '2:1: unknown key "concurency" at the top level; did you mean "concurrency"?']);
  });

  it("says what taskq does instead of GitHub Actions' on, steps, if, runs-on and uses, and a job with steps is a task under tasks:", () => {
    expect(problemsOf(yaml("on: push", "jobs:", "  build:", "    runs-on: ubuntu-latest", "    steps:", "      - run: make"))).toEqual([
      '1:1: unknown key "on" at the top level; taskq has no triggers: a workflow runs when `taskq run` is given it, so call that from what starts it (a CI job, a git hook, cron)',
      '2:1: unknown key "jobs" at the top level; did you mean "tasks"? A GitHub Actions job is a task here, under `tasks:`: its steps\' commands go in the task\'s one `run` (joined with &&, or one a line in a | block whose first line is set -e), needs is dependsOn, and runs-on has no place: tasks run where taskq does',
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    steps: [{ run: make }]", "    if: github.ref == 'refs/heads/main'", "    runs-on: ubuntu-latest", "    uses: actions/checkout@v4"))).toEqual([
      '4:5: task "a": unknown key "steps"; a task runs one command, its `run`: write the steps\' commands there, joined with && (run: npm ci && npm test), or one a line in a | block whose first line is set -e; or make each step a task that dependsOn the one before',
      '5:5: task "a": unknown key "if"; taskq has no conditions on a task: test in its run, and exit 0 to skip the rest (run: \'[ "$BRANCH" = main ] || exit 0; ./deploy.sh\')',
      '6:5: task "a": unknown key "runs-on"; there is no runner to choose: tasks run on the machine taskq runs on (with run --store, on the worker that leases them); remove it',
      '7:5: task "a": unknown key "uses"; taskq runs shell commands, not actions: write in `run` the command that does what the action did',
    ]);
  });

  it("says concurrency written in a task or in defaults (taskq's top-level key, or GitHub Actions' job-level one) is the run's, set at the top level: it was told only that the key is unknown", () => {
    const note = "concurrency is the whole run's, how many tasks run at once: set it at the top level (concurrency: 4) or give run -j, not per task; a task has no limit of its own, and dependsOn orders tasks that must not run together";
    expect(problemsOf(yaml("defaults:", "  concurrency: 2", "tasks:", "  a: { run: x, concurrency: 3 }"))).toEqual([
      `2:3: unknown key "concurrency" in \`defaults\`; ${note}`,
      `4:16: task "a": unknown key "concurrency"; ${note}`,
    ]);
  });

  it("refuses a failFast that is not true or false at its value, and says the boolean meant for one written as text (\"true\", !!str, yes, on)", () => {
    for (const simple of [true, false]) {
      const of = (value: string) => problemsOf(yaml(`failFast: ${value}`, "tasks:", "  a: { run: x }"), "wf.yaml", { simple });
      expect(of("yes-please")).toEqual(['1:11: `failFast` must be true or false, got "yes-please"']);
      expect(of("1")).toEqual(["1:11: `failFast` must be true or false, got 1"]);
      expect(of("'true'")).toEqual(['1:11: `failFast` must be true or false, got "true" (written as text: write true, without quotes or a tag)']);
      expect(of("!!str false")).toEqual(['1:17: `failFast` must be true or false, got "false" (written as text: write false, without quotes or a tag)']);
      expect(of("yes")).toEqual(['1:11: `failFast` must be true or false, got "yes" (yes is text here, not a boolean: write true)']);
      expect(of("Off")).toEqual(['1:11: `failFast` must be true or false, got "Off" (Off is text here, not a boolean: write false)']);
      // At its key, as an empty concurrency is told.
      expect(of("")).toEqual(["1:1: `failFast` must be true or false, got nothing (null)"]);
    }
    // In JSON too, where nothing says YAML.
    expect(problemsOf('{"failFast": "yes", "tasks": {"a": {"run": "x"}}}', "wf.json")).toEqual(['1:14: `failFast` must be true or false, got "yes" (yes is text here, not a boolean: write true)']);
  });

  it("tells fail-fast as GitHub Actions' strategy writes it, and other spellings, the top-level failFast; in a task or defaults, that it is the run's; strategy, that there is no matrix", () => {
    const actions = "GitHub Actions' strategy.fail-fast is written so here, at the top level: `failFast: true` stops the run at the first task that fails for good; without it (the default), a failure cancels its dependents only";
    for (const key of ["fail-fast", "fail_fast", "Fail-Fast"]) {
      expect(problemsOf(yaml(`${key}: true`, "tasks:", "  a: { run: x }"))).toEqual([`1:1: unknown key "${key}" at the top level; did you mean "failFast"? ${actions}`]);
    }
    // taskq's own key misspelt: the "did you mean" alone.
    for (const key of ["failfast", "FailFast", "failFats"]) {
      expect(problemsOf(yaml(`${key}: true`, "tasks:", "  a: { run: x }"))).toEqual([`1:1: unknown key "${key}" at the top level; did you mean "failFast"?`]);
    }
    const perTask = "fail-fast is the whole run's: set it at the top level (failFast: true) or give run --fail-fast, not per task; without it, a task that fails cancels its dependents only";
    const strategy = "taskq has no matrix: write each combination as a task of its own; GitHub Actions' strategy.fail-fast is the top-level failFast here (failFast: true), which is false unless set";
    expect(problemsOf(yaml("strategy:", "  fail-fast: true", "defaults:", "  failFast: true", "tasks:", "  a: { run: x, fail-fast: true }", "  b: { run: x, strategy: { fail-fast: false } }"))).toEqual([
      `1:1: unknown key "strategy" at the top level; ${strategy}`,
      `4:3: unknown key "failFast" in \`defaults\`; ${perTask}`,
      `6:16: task "a": unknown key "fail-fast"; ${perTask}`,
      `7:16: task "b": unknown key "strategy"; ${strategy}`,
    ]);
  });

  it("says what taskq does instead of GitHub Actions' continue-on-error and shell, and GitLab CI's allow_failure, and takes docker compose's working_dir for cwd", () => {
    const allowed = "taskq has no such option: a task that fails fails the run (exit 1) and cancels its dependents; to let a command fail without that, end the task's run with || true (the task then succeeds whatever the command's exit code)";
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    continue-on-error: true", "    shell: bash", "    allow_failure: true", "    working_dir: sub", "    workingDirectory: sub"))).toEqual([
      `4:5: task "a": unknown key "continue-on-error"; ${allowed}`,
      "5:5: task \"a\": unknown key \"shell\"; every task's run is run by /bin/sh -c, and a task has no shell to choose: for bash, write run: bash -c '...', or run a script file that begins with #!/bin/bash",
      `6:5: task "a": unknown key "allow_failure"; ${allowed}`,
      '7:5: task "a": unknown key "working_dir"; did you mean "cwd"?',
      '8:5: task "a": unknown key "workingDirectory"; did you mean "cwd"?',
    ]);
  });

  // GitHub Actions sets a shell for every job in `defaults: run: shell: bash`: told to set `run` on each task, a command it never meant.
  it("says what taskq does instead of GitHub Actions' defaults.run and shell, continue-on-error or allow_failure in defaults, and a defaults.run command is still set on each task", () => {
    const allowed = "taskq has no such option: a task that fails fails the run (exit 1) and cancels its dependents; to let a command fail without that, end the task's run with || true (the task then succeeds whatever the command's exit code)";
    expect(
      problemsOf(yaml("defaults:", "  run:", "    shell: bash", "    working-directory: sub", "  shell: bash", "  continue-on-error: true", "  allow_failure: true", "tasks:", "  a:", "    run: x")),
    ).toEqual([
      "2:3: `defaults` cannot set `run`; GitHub Actions' defaults.run has no place here: every task's run is run by /bin/sh -c (for bash, write run: bash -c '...' in the task), and the folder every task runs in is defaults.cwd",
      "5:3: unknown key \"shell\" in `defaults`; every task's run is run by /bin/sh -c, and a task has no shell to choose: for bash, write run: bash -c '...', or run a script file that begins with #!/bin/bash",
      `6:3: unknown key "continue-on-error" in \`defaults\`; ${allowed}`,
      `7:3: unknown key "allow_failure" in \`defaults\`; ${allowed}`,
    ]);
    expect(problemsOf(yaml("defaults:", "  run: make", "tasks:", "  a:", "    run: x"))).toEqual(["2:3: `defaults` cannot set `run`; set it on each task"]);
  });

  it("tells a task's name or description that the id names it, and the file's description that its name does, and that a comment or an x- key keeps more, but takes the file's own name and an x- key", () => {
    const said = "a task is named by its id, its key under tasks:, which its log file and the run's lines name it by; to keep a longer name or a description beside it, write it in a YAML comment, or under a key that starts with x- (x-description: ...), which taskq ignores";
    expect(problemsOf(yaml("name: ci", "tasks:", "  lint:", "    run: x", "    name: Lint the code", "    description: eslint over src", "    x-description: kept"))).toEqual([
      `5:5: task "lint": unknown key "name"; ${said}`,
      `6:5: task "lint": unknown key "description"; ${said}`,
    ]);
    // The file's own description: before, told only that it is an unknown key, where a task's was told what to do.
    expect(problemsOf(yaml("name: ci", "description: lint and test", "x-description: kept", "tasks:", "  lint:", "    run: x"))).toEqual([
      '2:1: unknown key "description" at the top level; a workflow is named by its `name` (name: ci); to keep a description beside it, write it in a YAML comment, or under a key that starts with x- (x-description: ...), which taskq ignores',
    ]);
  });

  it("suggests the field for another tool's name for it misspelt (comand, scrpt, enviroment), which is too far from the field's own name in spelling", () => {
    expect(problemsOf(yaml("tasks:", "  a: { comand: x }", "  b: { scrpt: x, enviroment: { A: b } }", "  c: { run: x, cmd: y }"))).toEqual([
      '2:8: task "a": unknown key "comand"; did you mean "run"?',
      '3:8: task "b": unknown key "scrpt"; did you mean "run"?',
      '3:18: task "b": unknown key "enviroment"; did you mean "env"?',
      '4:16: task "c": unknown key "cmd"; did you mean "run"?',
    ]);
    // A key as near a field of its own is told that field (retires is retries, not retry's).
    expect(problemsOf(yaml("tasks:", "  a: { run: x, retires: 1 }"))).toEqual(['2:16: task "a": unknown key "retires"; did you mean "retries"?']);
  });

  it("tells a Taskfile's task fields what they are here: cmds is run (not cwd, nearer in spelling, and run not told missing too), desc a description (not dependsOn), ignore_error as continue-on-error", () => {
    const failing = "taskq has no such option: a task that fails fails the run (exit 1) and cancels its dependents; to let a command fail without that, end the task's run with || true (the task then succeeds whatever the command's exit code)";
    const named = "a task is named by its id, its key under tasks:, which its log file and the run's lines name it by; to keep a longer name or a description beside it, write it in a YAML comment, or under a key that starts with x- (x-description: ...), which taskq ignores";
    expect(problemsOf(yaml("tasks:", "  build:", "    desc: builds the app", "    cmds: [npm run build]", "    ignore_error: true", "  test:", "    run: x", "    timeout_seconds: 30", "    continueOnError: true"))).toEqual([
      `3:5: task "build": unknown key "desc"; ${named}`,
      '4:5: task "build": unknown key "cmds"; did you mean "run"?',
      `5:5: task "build": unknown key "ignore_error"; ${failing}`,
      '8:5: task "test": unknown key "timeout_seconds"; did you mean "timeout"? It takes a duration, or a number of seconds: `timeout_seconds: 30` is `timeout: 30` (30s)',
      `9:5: task "test": unknown key "continueOnError"; ${failing}`,
    ]);
  });

  it("does not take a task's Desc or DESC, capitalised, for dependsOn misspelt, as it does not desc", () => {
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    Desc: builds the app", "    DESC: the same"))).toEqual(['4:5: task "a": unknown key "Desc"', '5:5: task "a": unknown key "DESC"']);
  });

  it("points a problem in a value a `<<` merged in at that value, in the mapping merged, once, naming the tasks it came to", () => {
    const text = yaml(
      "x-base: &base { retries: -1, timeout: 5m, bogus: 1 }",
      "x-env: &env { A: 01 }",
      "defaults: { <<: { priority: urgent } }",
      "tasks:",
      "  build: { <<: *base, run: make }",
      "  test:",
      "    <<: [{ cwd: 3 }, *base]",
      "    run: make test",
      "    env: { <<: *env }",
      "  ok: { <<: *base, retries: 1, bogus: 2, run: x }",
    );
    const problems = [
      '1:26: tasks "build" and "test": `retries` must be an integer from 0 to 100, got -1',
      '1:43: tasks "build" and "test": unknown key "bogus"',
      '2:18: task "test": `env.A` is 01, which YAML reads as 1; quote it ("01") to pass it as written',
      '3:29: `defaults.priority` must be one of: low, normal, high, critical, got "urgent"',
      '7:17: task "test": `cwd` must be a folder path, relative to the workflow file, got 3',
      '10:32: task "ok": unknown key "bogus"',
    ];
    expect(problemsOf(text)).toEqual(problems);
    expect(problemsOf(text, "wf.yaml", { simple: false })).toEqual(problems);
  });

  it("refuses a `<<` that names anything but mappings, at what it names", () => {
    const text = yaml(
      "x-name: &name make",
      "x-list: &list [a, b]",
      "tasks:",
      "  a: { <<: *name, run: x }",
      "  b: { <<: [{ retries: 1 }, 3, *list], run: x }",
      "  c:",
      "    <<:",
      "    run: x",
      "  d: { <<: *nope, run: x }",
      "  e: { <<: [[]], run: x }",
      "  f: { <<: *list, run: x }",
    );
    const takes = "a merge key `<<` takes a mapping, an alias of one (<<: *base) or a list of them (<<: [*a, *b]); got";
    expect(problemsOf(text)).toEqual([
      `2:16: ${takes} "a", an item of *list`,
      `2:19: ${takes} "b", an item of *list`,
      `4:12: ${takes} *name, which is "make"`,
      `5:29: ${takes} 3`,
      `5:32: ${takes} *list, which is a list`,
      `7:5: ${takes} nothing (null)`,
      '9:12: unknown alias *nope; define &nope before using it, or quote the value if it is text ("*nope")',
      `10:13: ${takes} an empty list`,

    ]);
  });

  it("calls `tasks` empty when a `<<` merges no task into it", () => {
    expect(problemsOf(yaml("x-none: &none {}", "tasks: { <<: *none }"))).toEqual(["2:8: `tasks` is empty; define at least one task"]);
  });

  it("a dependsOn item that is a list itself (a dash too many, `- - b`, or [[b, c]]) is told to list the ids themselves", () => {
    const nested = (at: string, ids: string) => `${at}: task "a": \`dependsOn[0]\` must be a task id, got a list; a list inside the list (\`- - b\` has a dash too many): list the ids themselves (dependsOn: [${ids}])`;
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    dependsOn:", "      - - b", "  b: { run: x }"))).toEqual([nested("5:9", "b")]);
    expect(problemsOf(yaml("tasks:", "  a: { run: x, dependsOn: [[b, c]] }", "  b: { run: x }", "  c: { run: x }"))).toEqual([nested("2:28", "b, c")]);
  });

  // One mistake, one problem: `tasks` was told empty, and the task that `run` is missing, besides the merge's own problem.
  it("does not call a mapping empty, nor its fields missing, when a `<<` in it names nothing it could merge, and says so", () => {
    const unknown = (name: string, at: string) => `${at}: unknown alias *${name}; define &${name} before using it, or quote the value if it is text ("*${name}")`;
    expect(problemsOf(yaml("tasks:", "  <<: *nope"))).toEqual([unknown("nope", "2:7")]);
    expect(problemsOf(yaml("tasks:", "  a:", "    <<: *nope"))).toEqual([unknown("nope", "3:9")]);
    expect(problemsOf(yaml("tasks:", "  a:", "    <<: 3"))).toEqual(["3:9: a merge key `<<` takes a mapping, an alias of one (<<: *base) or a list of them (<<: [*a, *b]); got 3"]);
    // Something else written beside it: `run`, not written, was for the merge to bring; its missing is not said twice.
    expect(problemsOf(yaml("tasks:", "  a:", "    <<: *nope", "    retries: 2"))).toEqual([unknown("nope", "3:9")]);
    expect(problemsOf(yaml("tasks:", "  a:", "    <<: 5", "    timeout: 10s"))).toEqual(["3:9: a merge key `<<` takes a mapping, an alias of one (<<: *base) or a list of them (<<: [*a, *b]); got 5"]);
    // The mapping's other faults are still said, and so is `run` missing from a task with no `<<`.
    expect(problemsOf(yaml("tasks:", "  a:", "    <<: *nope", "    retries: -1", "  b:", "    timeout: 10s"))).toEqual([
      unknown("nope", "3:9"),
      '4:14: task "a": `retries` must be an integer from 0 to 100, got -1',
      '5:3: task "b": `run` is missing; it must be a non-empty command string',
    ]);
    // A merge that worked beside one that did not: what is missing is still not said (the refused one may have held it).
    expect(problemsOf(yaml("x-base: &base { retries: 1 }", "tasks:", "  a:", "    <<: [*base, *nope]"))).toEqual([unknown("nope", "4:17")]);
  });

  it("calls a key written twice in a mapping a duplicate, but not one written once and merged in too, nor a task id written and merged", () => {
    const text = yaml(
      "x-base: &base { run: merged, retries: 1 }",
      "x-more: &more { a: { run: y } }",
      "tasks:",
      "  <<: *more",
      "  a: { <<: *base, run: x, retries: 2 }",
      "  b: { <<: *base, run: x, run: y }",
      "  c: { run: x }",
      "  c: { run: y }",
    );
    expect(problemsOf(text)).toEqual(['6:27: duplicate key "run" (first defined at 6:19); each must appear once', '8:3: duplicate task id "c" (first defined at 7:3); each must appear once']);
  });

  it("suggests the field for CircleCI's requires, GitHub's timeout-minutes and max-parallel, GitLab's variables, not the field nearest in spelling (requires is not retries)", () => {
    expect(problemsOf(yaml("tasks:", "  b: { run: x }", "  a: { run: x, requires: [b], timeout-minutes: 10 }", "  c: { commands: x, not_before: 2026-12-01T02:00:00Z }"))).toEqual([
      '3:16: task "a": unknown key "requires"; did you mean "dependsOn"?',
      '3:31: task "a": unknown key "timeout-minutes"; did you mean "timeout"? It takes a duration: `timeout-minutes: 10` is `timeout: 10m`',
      '4:8: task "c": unknown key "commands"; did you mean "run"?',
      '4:21: task "c": unknown key "not_before"; did you mean "runAt"?',
    ]);
    expect(problemsOf(yaml("variables: { A: b }", "max-parallel: 2", "tasks:", "  a: { run: x, variables: { A: b } }"))).toEqual([
      '1:1: unknown key "variables" at the top level; did you mean "env"?',
      '2:1: unknown key "max-parallel" at the top level; did you mean "concurrency"?',
      '4:16: task "a": unknown key "variables"; did you mean "env"?',
    ]);
  });

  it("says only that tasks written at the top level, with no tasks key, go under tasks:, not also that tasks is missing", () => {
    expect(problemsOf(yaml("build:", "  run: make", "test:", "  run: make test", "  dependsOn: build"))).toEqual([
      '1:1: unknown key "build" at the top level; to make it a task, indent it under `tasks:` (tasks: { build: { run: ... } })',
      '3:1: unknown key "test" at the top level; to make it a task, indent it under `tasks:` (tasks: { test: { run: ... } })',
    ]);
    // A block kept for its anchor, or a field misspelt, says nothing of tasks: that they are missing is still told.
    expect(problemsOf(yaml("base: &b", "  retries: 2"))).toEqual([
      '1:1: unknown key "base" at the top level; a top-level key kept for its anchor is named with x- (x-base), which taskq ignores',
      "1:1: `tasks` is missing; add a `tasks` mapping with at least one task",
    ]);
    expect(problemsOf(yaml("defualts:", "  retries: 2"))).toEqual(['1:1: unknown key "defualts" at the top level; did you mean "defaults"?', "1:1: `tasks` is missing; add a `tasks` mapping with at least one task"]);
  });

  it("says a top-level key written as a task (a GitLab CI job) goes under tasks:, and that taskq has no stages; not for a key of another kind", () => {
    expect(problemsOf(yaml("stages: [build]", "build:", "  stage: build", "  script: make", "tasks:", "  a: { run: x }", "lint: { run: y, dependsOn: a }", "other: { A: b }", "defualts: { retries: 1 }", "my job: { run: y }"))).toEqual([
      '1:1: unknown key "stages" at the top level; taskq has no stages: a task waits for those it lists in `dependsOn`',
      '2:1: unknown key "build" at the top level; to make it a task, indent it under `tasks:` (tasks: { build: { run: ... } })',
      '7:1: unknown key "lint" at the top level; to make it a task, indent it under `tasks:` (tasks: { lint: { run: ... } })',
      '8:1: unknown key "other" at the top level',
      // A name spelt like a field is told that field, not that it could be a task; one no task could have, no more.
      '9:1: unknown key "defualts" at the top level; did you mean "defaults"?',
      '10:1: unknown key "my job" at the top level',
    ]);
  });

  it("says how to write a run given as a list (GitLab CI's script, a Dockerfile's exec form): the commands joined with &&, or one command and its arguments", () => {
    const several = (joined: string) => `for several commands, join them with && (run: ${joined}), which stops at the first that fails, or write them one a line in a | block whose first line is set -e`;
    expect(problemsOf(yaml("tasks:", "  a:", "    run:", "      - npm ci", "      - npm test", "  b: { run: [make, all] }", "  c: { run: ['echo a: b', '[ -f x ]', x, y] }", "  d: { run: [] }"))).toEqual([
      `4:7: task "a": \`run\` must be a non-empty command string, got a list; ${several("npm ci && npm test")}`,
      `6:13: task "b": \`run\` must be a non-empty command string, got a list; for one command and its arguments, write them as the shell reads them (run: make all); ${several("make && all")}`,
      // Quoted where YAML would not read it back as written.
      `7:13: task "c": \`run\` must be a non-empty command string, got a list; ${several('"echo a: b && [ -f x ] && x && ..."')}`,
      '8:13: task "d": `run` must be a non-empty command string, got an empty list',
    ]);
  });

  it("refuses maxAttempts (0 or any) at its place, saying how retries counts attempts", () => {
    const hint = "It counts the attempts after the first: 3 attempts in all is `retries: 2`, and 1 (no retry) is `retries: 0`, the default";
    expect(problemsOf(yaml("defaults: { max_attempts: 3 }", "tasks:", "  a: { run: x, maxAttempts: 0 }"))).toEqual([
      `1:13: unknown key "max_attempts" in \`defaults\`; did you mean "retries"? ${hint}`,
      `3:16: task "a": unknown key "maxAttempts"; did you mean "retries"? ${hint}`,
    ]);
  });

  it("says a task's field written at a task id's indentation is read as a task, and to indent it under the task above", () => {
    const hint = (field: string, task: string) => `${field} is a task's field, written here as a task id: indent it under ${task}, as that task's other fields`;
    // A task left empty with its fields below it at its own indentation: one mistake, told once where it is made, not also as
    // the empty task and as each field a task of its own.
    expect(problemsOf(yaml("tasks:", "  build:", "  run: make", "  dependsOn: [lint]", "  lint:", "    run: x"))).toEqual([
      '3:3: task "build" is left empty, and run and dependsOn below it, a task\'s fields, are at a task id\'s indentation, so each is read as a task of that name: indent them under "build", further than its id',
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "  run: x"))).toEqual([
      '3:3: task "a" is left empty, and run below it, a task\'s field, is at a task id\'s indentation, so it is read as a task named "run": indent run under "a", further than its id',
    ]);
    // A mapping below is a task of its own (a task may be named env): the empty task is told as such.
    expect(problemsOf(yaml("tasks:", "  a:", "  env:", "    run: x"))).toEqual(['2:3: task "a": the task must be a mapping with at least `run`, got nothing (null)']);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "  dependsOn: [b]", "  b:", "    run: y"))).toEqual([
      `4:3: task "dependsOn": the task must be a mapping with at least \`run\`, got a list; ${hint("dependsOn", '"a"')}`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "  retries: 2"))).toEqual([`4:3: task "retries": the task must be a mapping with at least \`run\`, got 2; ${hint("retries", '"a"')}`]);
    expect(problemsOf(yaml("tasks:", "  run: make"))).toEqual([
      '2:3: task "run": the task must be a mapping with at least `run`, got "make"; run is a task\'s field, written here as a task id: write the task\'s id above it (build:), and indent its fields under that',
    ]);
    // A task named as a field is a task like any other.
    expect(parse(yaml("tasks:", "  env:", "    run: printenv")).tasks.map((task) => task.id)).toEqual(["env"]);
    expect(problemsOf(yaml("tasks:", "  deploy: ./deploy.sh"))).toEqual(['2:11: task "deploy": the task must be a mapping with at least `run`, got "./deploy.sh"']);
  });

  it("names the first definition of each of many duplicate ids", () => {
    const ids = Array.from({ length: 3 }, (_, index) => `t${index}`);
    const text = yaml("tasks:", ...ids.map((id) => `  ${id}: { run: x }`), ...ids.map((id) => `  ${id}: { run: y }`));
    expect(problemsOf(text)).toEqual(ids.map((id, index) => `${index + 5}:3: duplicate task id "${id}" (first defined at ${index + 2}:3); each must appear once`));
  });

  it("reports a NUL character in run, env and cwd, which no command can be given", () => {
    const text = yaml('env: { G: "g\\0" }', "tasks:", '  a: { run: "echo \\0", env: { X: "a\\0b" }, cwd: "d\\0" }');
    expect(problemsOf(text)).toEqual([
      '1:11: `env.G` must not contain a NUL character, got "g\\u0000"',
      '3:13: task "a": `run` must not contain a NUL character, got "echo \\u0000"',
      '3:34: task "a": `env.X` must not contain a NUL character, got "a\\u0000b"',
      '3:49: task "a": `cwd` must not contain a NUL character, got "d\\u0000"',
    ]);
  });

  it("reports a top level that is not a mapping, missing or empty tasks", () => {
    expect(problemsOf("- a\n- b\n")).toEqual(["1:1: the top level must be a mapping with a `tasks` key, got a list"]);
    // The top level written as a list's item (`- tasks:`): told to drop the dash, as tasks written as a list are.
    const listed = "1:1: the top level must be a mapping with a `tasks` key, got a list; remove the \"- \" before";
    expect(problemsOf(yaml("- tasks:", "    a:", "      run: x"))).toEqual([`${listed} tasks: the top level is one mapping, not a list (tasks: { build: { run: ... } })`]);
    expect(problemsOf(yaml("- concurrency: 2", "- tasks:", "    a:", "      run: x"))).toEqual([`${listed} each item's keys: the top level is one mapping, not a list (tasks: { build: { run: ... } })`]);
    expect(problemsOf("name: x\n")).toEqual(["1:1: `tasks` is missing; add a `tasks` mapping with at least one task"]);
    expect(problemsOf("tasks: {}\n")).toEqual(["1:8: `tasks` is empty; define at least one task"]);
    expect(problemsOf("tasks:\n")).toEqual(["1:1: `tasks` must be a mapping of task id to task, got nothing (null)"]);
    expect(problemsOf("tasks: [a]\n")).toEqual(["1:8: `tasks` must be a mapping of task id to task, got a list"]);
  });

  it("says to key each task by its id where tasks is a list of tasks with an id or name (- id: build)", () => {
    const expected = "`tasks` must be a mapping of task id to task, got a list";
    expect(problemsOf(yaml("tasks:", "  - id: build", "    run: make", "  - name: test", "    run: make test"))).toEqual([
      `2:3: ${expected}; write each task under its id, with its fields indented below it (tasks: { build: { run: ... }, test: { run: ... } })`,
    ]);
    expect(problemsOf(yaml("tasks:", "  - name: Build step", "    run: make"))).toEqual([`2:3: ${expected}; write each task under its id, with its fields indented below it (tasks: { build: { run: ... } })`]);
    expect(problemsOf(yaml("tasks:", "  - run: make"))).toEqual([`2:3: ${expected}`]);
  });

  it("says to drop the \"- \" where tasks is a list of ids whose task is a command (- build: make) or that holds two ids in one item", () => {
    const expected = "`tasks` must be a mapping of task id to task, got a list";
    const hint = (shown: string) => `; remove the "- " before each task's id: a task is a key of \`tasks\`, not an item of a list (tasks: { ${shown} })`;
    // Only `- build:` with the task's fields below it was told this.
    expect(problemsOf(yaml("tasks:", "  - build: make", "  - test: make test"))).toEqual([`2:3: ${expected}${hint("build: { run: ... }, test: { run: ... }")}`]);
    expect(problemsOf(yaml("tasks:", "  - build: { run: make }", "    test: { run: make test }"))).toEqual([`2:3: ${expected}${hint("build: { run: ... }, test: { run: ... }")}`]);
    expect(problemsOf(yaml("tasks:", "  - build:", "      run: make", "    test:", "      run: make test", "    lint:", "    docs: make docs"))).toEqual([
      `2:3: ${expected}${hint("build: { run: ... }, test: { run: ... }, lint: { run: ... }, ...")}`,
    ]);
    // A task's own fields in an item are a task written as a step, not ids.
    expect(problemsOf(yaml("tasks:", "  - run: make", "    timeout: 5m"))).toEqual([`2:3: ${expected}`]);
    expect(problemsOf(yaml("tasks:", "  - build: make", "    retries: 2"))).toEqual([`2:3: ${expected}`]);
  });

  it("escapes the characters that show as nothing or as a space in a quoted key or value: a byte order mark from files joined with cat, a no-break space, a zero-width space", () => {
    // With what it is and what to do: the escape alone left the user to look up U+FEFF.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "\ufeff  b:", "    run: y"))).toEqual([
      '4:1: unknown key "\\ufeff  b" at the top level; it starts with a byte order mark (U+FEFF), which most editors do not show, left where another file was joined to this one (cat a.yaml b.yaml): delete it',
    ]);
    const rule = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    expect(problemsOf(yaml("tasks:", "  b\u00a0c:", "    run: y", "  d\u200b:", "    run: z"))).toEqual([
      `2:3: invalid task id "b\\u00a0c": ${rule}`,
      // Which character, and where: the escape alone left the user to find it in an id that looks like "d".
      `4:3: invalid task id "d\\u200b": ${rule}; it holds an invisible character, U+200B (zero-width space), at 4:4, which editors do not show: delete it, leaving "d"`,
    ]);
  });

  it("says to delete the invisible characters a quoted key holds as themselves, leaving one it writes as an escape", () => {
    const rule = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    expect(problemsOf(yaml("tasks:", '  "d\\u200b\u200bx":', "    run: z"))).toEqual([
      `2:3: invalid task id "d\\u200b\\u200bx": ${rule}; it holds an invisible character, U+200B (zero-width space), at 2:11, which editors do not show: delete it, leaving "d\\u200bx"`,
    ]);
  });

  it("reports keys that are not text, and reads null keys as written", () => {
    const text = yaml("tasks:", "  ? [a, b]", "  : { run: x }", "  : { run: x }", "  ~: { run: x }", "  null: { run: x }", "  ok: { run: x, dependsOn: 'null' }");
    expect(problemsOf(text)).toEqual([
      "2:5: a key must be plain text, not a mapping or list",
      "4:3: a key must be plain text, not empty",
      '5:3: invalid task id "~": ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."',
    ]);
  });

  it("reports unknown and self-containing aliases", () => {
    expect(problemsOf(yaml("tasks:", "  a: { run: *nope }"))).toContain("2:13: unknown alias *nope; define &nope before using it, or quote the value if it is text (\"*nope\")");
    const inside = (name: string) =>
      `alias *${name} refers to a node that contains it: it stands inside the value anchored &${name}, which would then hold itself without end; anchor only a part that does not contain *${name}, or write out here what it should hold`;
    expect(problemsOf(yaml("tasks:", "  a: &x { run: y, env: *x }"))).toContain(`2:24: ${inside("x")}`);
  });

  it("says what to do about an alias inside the value it names (x-a: &a [*a], a merge of its own mapping), at the alias: yaml's words alone gave no advice", () => {
    expect(problemsOf(yaml("x-a: &a [*a]", "x-b: &b { <<: *b, c: 1 }", "tasks:", "  a: &t", "    run: x", "    env: *t"))).toEqual([
      "1:10: alias *a refers to a node that contains it: it stands inside the value anchored &a, which would then hold itself without end; anchor only a part that does not contain *a, or write out here what it should hold",
      "2:15: alias *b refers to a node that contains it: it stands inside the value anchored &b, which would then hold itself without end; anchor only a part that does not contain *b, or write out here what it should hold",
      "6:10: alias *t refers to a node that contains it: it stands inside the value anchored &t, which would then hold itself without end; anchor only a part that does not contain *t, or write out here what it should hold",
    ]);
  });

  it("says nothing more of a value an unknown alias left empty, nor calls a mapping whose every key was refused empty", () => {
    expect(problemsOf(yaml("tasks:", "  a:", "    run: *nope"))).toEqual(["3:10: unknown alias *nope; define &nope before using it, or quote the value if it is text (\"*nope\")"]);
    expect(problemsOf(yaml("tasks:", "  b: { run: x }", "  t: { run: y, dependsOn: [*c] }"))).toEqual(["3:28: unknown alias *c; define &c before using it, or quote the value if it is text (\"*c\")"]);
    // A glob written as a command reads as an alias: the message says how to keep it as text.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: *.txt"))).toEqual(['3:10: unknown alias *.txt; define &.txt before using it, or quote the value if it is text ("*.txt")']);
    expect(problemsOf(yaml("tasks:", "  ? [a]", "  : { run: y }"))).toEqual(["2:5: a key must be plain text, not a mapping or list"]);
    expect(problemsOf(yaml("tasks:", "  :", "    run: y"))).toEqual(["2:3: a key must be plain text, not empty"]);
    // After other keys too, at its colon, not at the start of its line.
    expect(problemsOf(yaml("tasks:", "  a: { run: x }", "  :", "    run: y"))).toEqual(["3:3: a key must be plain text, not empty"]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    : y"))).toEqual(["4:5: a key must be plain text, not empty"]);
  });

  it("reads an alias in the place it is used: an anchored key names its task, an env value is checked, an id is read as written", () => {
    expect(parse(yaml("tasks:", "  &b build: { run: make }", "  test: { run: t, dependsOn: [*b] }")).tasks.find((task) => task.id === "test")?.dependsOn).toEqual(["build"]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: echo $A", "    timeout: &v 0x10", "    env: { A: *v }"))).toEqual([
      // A duration is written in digits too (see durations written as YAML's other numbers).
      "4:17: task \"a\": `timeout` is 0x10, which YAML reads as the number 16: a duration's number of seconds is written in digits, with a point if need be; write 16, or 16s",
      '4:17: task "a": `env.A` is 0x10, which YAML reads as 16; quote it ("0x10") to pass it as written',
    ]);
    // An env mapping first used elsewhere is checked where it is an env.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, backoff: &e { A: 0x10 } }", "  b: { run: y, env: *e }"))).toContain(
      '2:33: task "b": `env.A` is 0x10, which YAML reads as 16; quote it ("0x10") to pass it as written',
    );
    // `1.0` names the task "1.0" in dependsOn, wherever its anchor stands (a timeout reads it as 1 s).
    const workflow = parse(yaml("tasks:", '  "1.0": { run: x }', '  "1": { run: x1 }', "  b: { run: y, timeout: &t 1.0, dependsOn: [*t] }"));
    expect(workflow.tasks.find((task) => task.id === "b")?.dependsOn).toEqual(["1.0"]);
    expect(workflow.tasks.find((task) => task.id === "b")?.timeoutMs).toBe(1000);
  });

  it("says a // or /* comment (JavaScript's, JSONC's) is none in YAML or JSON, wherever it is read: a key's text, an id's, a line yaml cannot read", () => {
    // Before, `tasks` was told missing and the key unknown with no word of why; elsewhere yaml's bare words, or a did-you-mean of the key after the //.
    // The advice fits the file's kind: a .yaml file's reader was told what to do in a .json file, and not what to do in its own.
    const words = "starts no comment in JSON, which has none: remove it";
    const yamlWords = "starts no comment in YAML: a comment starts with # (at a line's start, or after a space); write # in its place";
    expect(problemsOf('{\n  // the jobs\n  "tasks": {"a": {"run": "x"}}\n}\n', "ci.json")).toEqual([`2:3: unknown key "// the jobs \\"tasks\\"" at the top level; // ${words}`]);
    expect(problemsOf('{\n  "tasks": {\n    /* build */\n    "a": {"run": "x"}\n  }\n}\n', "ci.json")).toEqual([
      `3:5: invalid task id "/* build */ \\"a\\"": ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."; /* ${words}`,
    ]);
    expect(problemsOf('{\n  "tasks": {\n    "a": {"run": "x"} // build\n  }\n}\n', "ci.json")).toEqual([`3:23: Unexpected scalar at node end: // ${words}`]);
    expect(problemsOf(yaml("// ci", "tasks:", "  a:", "    run: x"))).toEqual([`1:1: Implicit keys need to be on a single line: // ${yamlWords}`]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    // retries: 2"))).toEqual([`4:5: task "a": unknown key "// retries"; // ${yamlWords}`]);
    expect(problemsOf(yaml("tasks:", "  /* build */ a:", "    run: x"))).toEqual([
      `2:3: invalid task id "/* build */ a": ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."; /* ${yamlWords}, and drop the */`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    // retries: 2"), "ci.YML")).toEqual([`4:5: task "a": unknown key "// retries"; // ${yamlWords}`]);
    // A // in a value is text, as YAML reads it (a URL).
    expect(parse(yaml("tasks:", "  a: { run: curl http://x//y }")).tasks[0]!.run).toBe("curl http://x//y");
  });

  it("counts each task sharing a problem whose ids are shortened alike in messages (past 60 characters), not the first of them alone", () => {
    // Before, `tasks "aaa..." and "c"` for three tasks: the second long id's message read as the first's, and was dropped as told already.
    const long = "a".repeat(60);
    const shown = `"${"a".repeat(57)}..."`;
    expect(problemsOf(yaml("x-b: &b { run: x, retries: 500 }", "tasks:", `  ${long}1: { <<: *b }`, `  ${long}2: { <<: *b }`, "  c: { <<: *b }"))).toEqual([
      `1:28: tasks ${shown}, ${shown} and "c": \`retries\` must be an integer from 0 to 100, got 500`,
    ]);
    expect(problemsOf(yaml("x-d: &d [nope]", "tasks:", `  ${long}1: { run: x, dependsOn: *d }`, `  ${long}2: { run: x, dependsOn: *d }`))).toEqual([`1:10: tasks ${shown} and ${shown} depend on "nope", which is not defined`]);
  });

  it("follows aliases, and points at the anchored value when it is wrong", () => {
    expect(problemsOf(yaml("x: &r 5", "tasks:", "  a: { run: *r }"))).toEqual(['1:1: unknown key "x" at the top level; a top-level key kept for its anchor is named with x- (x-x), which taskq ignores', '1:7: task "a": `run` must be a non-empty command string, got 5']);
  });

  // 9-19 s at load 13-18 on two cores, and past the default 30 s once at more: given 120 s.
  it("places the problems of many tasks after thousands of top-level keys in about the time it does before them", () => {
    // Each problem's place was looked up from the top level, whose keys were read one by one to `tasks`: with 4,000
    // `x-` keys before it, 400 tasks' problems took seconds, tens of times the same file with those keys after it.
    const keys = Array.from({ length: 4000 }, (_, index) => `x-${index}: ${index}`);
    const tasks = ["tasks:", "  t: { run: &r echo }", ...Array.from({ length: 400 }, (_, index) => `  t${index}: { run: *r, retries: -1, timeout: 0, priority: x, delay: x, cwd: 3, type: x, backoff: 1 }`)];
    const before = yaml(...keys, ...tasks);
    const after = yaml(...tasks, ...keys);
    const problems = problemsOf(before);
    expect(problems).toHaveLength(2800);
    expect(problems[0]).toBe('4003:27: task "t0": `retries` must be an integer from 0 to 100, got -1');
    expect(problemsOf(after)[0]).toBe('3:27: task "t0": `retries` must be an integer from 0 to 100, got -1');
    // Side by side, best of three rounds alternating: about the same now, tens of times before.
    const [beforeMs, afterMs] = bestOfAlternating(1, () => problemsOf(before), () => problemsOf(after), 3);
    expect(beforeMs).toBeLessThan(2 * afterMs);
  }, 120_000);

  it("tells a !!binary or !!timestamp where a mapping is expected as that, not its bytes and methods as keys or tasks", () => {
    // A Buffer was read as a mapping: `task "a": unknown key "0"`, ... `unknown key "writeUintBE"`, 100 problems.
    expect(problemsOf(yaml("tasks:", "  a: !!binary aGVsbG8="))).toEqual(['2:15: task "a": the task must be a mapping with at least `run`, got binary data']);
    // Not told to write the time without the tag, which is no mapping either.
    expect(problemsOf(yaml("tasks:", "  a: !!timestamp 2026-01-01"))).toEqual(['2:18: task "a": the task must be a mapping with at least `run`, got a YAML timestamp (!!timestamp)']);
    expect(problemsOf(yaml("defaults: !!timestamp 2026-01-01", "tasks:", "  a: { run: x }"))).toEqual(["1:23: `defaults` must be a mapping of task fields, got a YAML timestamp (!!timestamp)"]);
    expect(problemsOf(yaml("tasks: !!timestamp 2026-01-01"))).toEqual(["1:20: `tasks` must be a mapping of task id to task, got a YAML timestamp (!!timestamp)"]);
    expect(problemsOf(yaml("!!timestamp 2026-01-01"))).toEqual(["1:13: the top level must be a mapping with a `tasks` key, got a YAML timestamp (!!timestamp)"]);
    // Nor where a task's field or a merge key takes a mapping (before, both were told "write the time without the tag");
    // a backoff so written was taken as an empty mapping, the default backoff, unsaid.
    expect(problemsOf(yaml("defaults:", "  backoff: !!binary aGVsbG8=", "tasks:", "  a:", "    run: x", "    env: !!timestamp 2001-12-14", "    backoff: !!timestamp 2001-12-14"))).toEqual([
      "2:21: `defaults.backoff` must be a mapping with `base` and/or `max`, got binary data",
      '6:22: task "a": `env` must be a mapping of variable names to values, got a YAML timestamp (!!timestamp)',
      '7:26: task "a": `backoff` must be a mapping with `base` and/or `max`, got a YAML timestamp (!!timestamp)',
    ]);
    expect(problemsOf(yaml("x-t: &t !!timestamp 2001-12-14", "tasks:", "  a:", "    <<: !!timestamp 2001-12-14", "    run: x", "  b: { <<: *t, run: x }"))).toEqual([
      "4:21: a merge key `<<` takes a mapping, an alias of one (<<: *base) or a list of them (<<: [*a, *b]); got a YAML timestamp (!!timestamp)",
      "6:12: a merge key `<<` takes a mapping, an alias of one (<<: *base) or a list of them (<<: [*a, *b]); got *t, which is a YAML timestamp (!!timestamp)",
    ]);
    // Where a time is what is expected, it is still told to drop the tag.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: !!timestamp 2026-01-01"))).toEqual(['3:22: task "a": `run` must be a non-empty command string, got a YAML timestamp (!!timestamp): write the time without the tag']);
    expect(problemsOf(yaml("defaults: !!binary aGVsbG8=", "tasks:", "  a: { run: x }"))).toEqual(["1:20: `defaults` must be a mapping of task fields, got binary data"]);
    expect(problemsOf(yaml("tasks: !!binary aGVsbG8="))).toEqual(["1:17: `tasks` must be a mapping of task id to task, got binary data"]);
    expect(problemsOf(yaml("!!binary aGVsbG8="))).toEqual(["1:10: the top level must be a mapping with a `tasks` key, got binary data"]);
  });
});
