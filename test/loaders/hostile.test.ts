import { describe, expect, it } from "vitest";
import { MAX_FILE_BYTES, MAX_TASKS, WorkflowError } from "../../src/loaders/index.js";
import { findTaskPastLimit } from "../../src/loaders/count-tasks.js";
import { parse, problemsOf, yaml } from "./helpers.js";

/** Runs `action` and returns how long it took, in ms. */
function timed(action: () => void): number {
  const start = performance.now();
  action();
  return performance.now() - start;
}

describe("hostile input", () => {
  it("reports an empty file and a lone BOM as empty, and a file of comments as one that has only comments", () => {
    for (const text of ["", "\uFEFF", Buffer.alloc(0), "\n\n  \n", "---\n"]) {
      expect(problemsOf(text)).toEqual(["1:1: file is empty; a workflow needs a `tasks` mapping"]);
    }
    // Before, told it was empty: its reader would look for the file's text, not at its comments.
    // A directive (`%YAML 1.2`) before the `---` is no content either (before, told empty).
    for (const text of ["# nothing here\n", "\uFEFF# a\n\n  # tasks:\n  #   a: { run: x }\n", "#", yaml("---", "# a", "..."), yaml("%YAML 1.2", "---", "# a")]) {
      expect(problemsOf(text)).toEqual(["1:1: file has only comments; a workflow needs a `tasks` mapping"]);
    }
  });

  it("reports a file of a null alone (`~`, `null`) at the null, as a top level that is not a mapping, not as empty", () => {
    // Before, told it was empty: its reader would look for text the file has.
    expect(problemsOf("~\n")).toEqual(["1:1: the top level must be a mapping with a `tasks` key, got nothing (null)"]);
    expect(problemsOf(yaml("# the workflow", "null # for now"))).toEqual(["2:1: the top level must be a mapping with a `tasks` key, got nothing (null)"]);
    expect(problemsOf(yaml("%YAML 1.2", "---", "~"))).toEqual(["3:1: the top level must be a mapping with a `tasks` key, got nothing (null)"]);
  });

  it("rejects a file holding several YAML documents, at the second one", () => {
    expect(problemsOf(yaml("tasks: { a: { run: x } }", "---", "tasks: { b: { run: y } }"))).toEqual([
      "2:1: the file holds more than one YAML document (a second `---`); put the whole workflow in one document; only the first document is checked",
    ]);
    // Text after a `...` is a second document with no `---`: told where the first one was ended.
    expect(problemsOf(yaml("tasks:", "  a: { run: x }", "...", "foo: bar"))).toEqual([
      "4:1: the file goes on after the `...` at 3:1, which ends its YAML document: what follows it is a second document; put the whole workflow in one document (remove the `...`, or what follows it); only the first document is checked",
    ]);
    // A `...` then a `---` is the second document's own start.
    expect(problemsOf(yaml("tasks:", "  a: { run: x }", "...", "---", "foo: bar"))).toEqual([
      "4:1: the file holds more than one YAML document (a second `---`); put the whole workflow in one document; only the first document is checked",
    ]);
    // A `...` that ends the file is no second document.
    expect(problemsOf(yaml("tasks:", "  a: { run: 42 }", "..."))).toEqual(['2:13: task "a": `run` must be a non-empty command string, got 42']);
  });

  it("reports the line and column of the first invalid UTF-8 byte", () => {
    const bytes = Buffer.concat([Buffer.from("tasks:\n  a: { run: é"), Buffer.from([0xff]), Buffer.from(" }\n")]);
    expect(problemsOf(bytes)).toEqual(["2:14: the file is not valid UTF-8 (byte 0xff at byte offset 21); save it as UTF-8"]);
    const truncated = Buffer.concat([Buffer.from("\uFEFFtasks: €"), Buffer.from([0xe2, 0x82])]);
    expect(problemsOf(truncated)).toEqual(["1:9: the file is not valid UTF-8 (byte 0xe2 at byte offset 13); save it as UTF-8"]);
    const surrogate = Buffer.from([0x61, 0x3a, 0x20, 0xed, 0xa0, 0x80]);
    expect(problemsOf(surrogate)).toEqual(["1:4: the file is not valid UTF-8 (byte 0xed at byte offset 3); save it as UTF-8"]);
  });

  it("names a file saved as UTF-16, with or without its byte order mark, instead of quoting its NUL bytes", () => {
    const text = "tasks:\n  a:\n    run: echo é\n";
    const le = Buffer.from(text, "utf16le");
    const be = Buffer.from(le).swap16();
    const expected = (order: string) => [`1:1: the file is UTF-16 (${order}), not UTF-8; save it as UTF-8`];
    expect(problemsOf(le)).toEqual(expected("little-endian"));
    expect(problemsOf(be)).toEqual(expected("big-endian"));
    expect(problemsOf(Buffer.concat([Buffer.from([0xff, 0xfe]), le]))).toEqual(expected("little-endian, with a byte order mark"));
    expect(problemsOf(Buffer.concat([Buffer.from([0xfe, 0xff]), be]))).toEqual(expected("big-endian, with a byte order mark"));
  });

  it("counts lines right with CRLF endings and a UTF-8 BOM", () => {
    const text = "\uFEFFtasks:\r\n  a:\r\n    run: 1\r\n  b:\r\n    run: ok\r\n";
    expect(problemsOf(text)).toEqual(['3:10: task "a": `run` must be a non-empty command string, got 1']);
    expect(problemsOf(Buffer.from(text))).toEqual(['3:10: task "a": `run` must be a non-empty command string, got 1']);
    expect(parse(text.replace("run: 1", "run: echo")).tasks.map((task) => task.run)).toEqual(["echo", "ok"]);
  });

  it("stops an alias bomb (billion laughs) quickly, at the alias that crosses the limit", () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [index, name] of [..."bcdefghi"].entries()) {
      const previous = "abcdefghi"[index]!;
      lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(",")}]`);
    }
    lines.push("tasks: { t: { run: x, env: *i } }");
    let problems: string[] = [];
    const text = `${lines.join("\n")}\n`;
    const ms = timed(() => (problems = problemsOf(text)));
    expect(problems).toContain("7:8: aliases expand to more than 1,000,000 nodes (an alias bomb?)");
    expect(ms).toBeLessThan(5000);
  });

  it("rejects 50,000 nested brackets cleanly: at the first one, never closed, naming where they nest too deep", () => {
    for (const [open, close] of [["[", "]"], ["{", "}"]] as const) {
      let problems: string[] = [];
      const ms = timed(() => (problems = problemsOf(open.repeat(50_000))));
      expect(problems).toEqual([`1:1: this ${open} is never closed with ${close}; the brackets opened after it nest deeper than 128 levels at 1:129, where yaml stopped reading`]);
      expect(ms).toBeLessThan(5000);
    }
  });

  it("tells the first of 200 { never closed where it is, not only that they nest too deep; closed, they are told too deep", () => {
    // Before, only `4:522: nesting is deeper than 128 levels`, far from the `{` left open.
    const open = yaml("tasks:", "  a:", "    run: x", `    env: ${"{a: ".repeat(200)}`);
    expect(problemsOf(open)).toEqual(["4:10: this { is never closed with }; the brackets opened after it nest deeper than 128 levels at 4:522, where yaml stopped reading"]);
    // Inside a { that is closed, the [ a } passes over is the first one left open.
    const inside = yaml("tasks:", `  a: { run: x, env: ${"[".repeat(200)} }`, "  b: { run: y }");
    expect(problemsOf(inside)).toEqual(["2:21: this [ is never closed with ]; the brackets opened after it nest deeper than 128 levels at 2:148, where yaml stopped reading"]);
    const closed = yaml("tasks:", "  a:", "    run: x", `    env: ${"{a: ".repeat(200)}${"}".repeat(200)}`);
    expect(problemsOf(closed)).toEqual(["4:522: nesting is deeper than 128 levels; a workflow needs only a few"]);
  });

  it("rejects deep block nesting, which needs no brackets", () => {
    const lines = Array.from({ length: 300 }, (_, depth) => `${" ".repeat(depth)}k:`);
    expect(problemsOf(yaml(...lines))).toEqual(["129:129: nesting is deeper than 128 levels; a workflow needs only a few"]);
  });

  it("rejects thousands of levels of block nesting closed at one dedent, at the first level too deep, instead of overflowing the stack", () => {
    // 10 KB of `- - - ...` (or `? ? ? ...`) followed by a line less indented: yaml's parser closed every level at once, recursively.
    for (const mark of ["- ", "? "]) {
      const problems = problemsOf(yaml("x-deep:", `  ${mark.repeat(5_000)}x`, "tasks:", "  a: { run: x }"));
      expect(problems).toEqual(["2:257: nesting is deeper than 128 levels; a workflow needs only a few"]);
    }
  });

  it("tells the tab that makes yaml nest the lines below it ever deeper, not only the nesting far below it", () => {
    // Each task's field indented with a tab: yaml reads each line as nested in the one before, and 129 such tasks were told
    // only as `257:7: nesting is deeper than 128 levels`, with nothing at the tab on line 3.
    const lines = ["tasks:", ...Array.from({ length: 200 }, (_, index) => [`  a${index}:`, "\trun: x"]).flat()];
    expect(problemsOf(yaml(...lines))).toEqual([
      "3:1: Tabs are not allowed as indentation: indent with spaces (an editor set to insert spaces in .yaml files keeps it so); yaml read the lines below it as nested ever deeper, past the limit of 128 levels at 257:7, which may follow from it: fix the tab first",
    ]);
    // A tab after the nesting too deep is not its cause.
    const deep = Array.from({ length: 300 }, (_, depth) => `${" ".repeat(depth)}k:`);
    expect(problemsOf(yaml(...deep, "\tx: 1"))).toEqual(["129:129: nesting is deeper than 128 levels; a workflow needs only a few"]);
  });

  it("does not tell a tab in a | block's text as the cause of brackets nested too deep below it", () => {
    // A `<<-` heredoc's lines start with a tab, as it needs, in a | block, where YAML takes it: brackets nested too deep in
    // another task were told as "Tabs are not allowed as indentation" at that tab, which no fix of the tab would clear.
    const heredoc = ["tasks:", "  a:", "    run: |", "      cat <<-EOF", "      \thello", "      EOF", "  b:", "    run: x", "    env:"];
    expect(problemsOf(yaml(...heredoc, `      X: ${"[".repeat(130)}${"]".repeat(130)}`))).toEqual(["10:138: nesting is deeper than 128 levels; a workflow needs only a few"]);
    expect(problemsOf(yaml(...heredoc, `      X: ${"{a: ".repeat(130)}${"}".repeat(130)}`))).toEqual(["10:522: nesting is deeper than 128 levels; a workflow needs only a few"]);
  });

  it("does not tell a tab in a | block's text as the cause of block nesting too deep below it, but a tab below the block that is indentation", () => {
    // Before, told as "Tabs are not allowed as indentation" at the heredoc's tab, for keys nested 200 deep, or `- - -` 300 or 5,000 deep.
    const heredoc = ["tasks:", "  a:", "    run: |", "      cat <<-EOF", "      \thello", "      EOF", "x-deep:"];
    const keys = Array.from({ length: 200 }, (_, depth) => `${" ".repeat(depth + 2)}k:`);
    expect(problemsOf(yaml(...heredoc, ...keys))).toEqual(["135:130: nesting is deeper than 128 levels; a workflow needs only a few"]);
    for (const count of [300, 5_000]) {
      expect(problemsOf(yaml(...heredoc, `  ${"- ".repeat(count)}x`, "x-more: 1"))).toEqual(["8:257: nesting is deeper than 128 levels; a workflow needs only a few"]);
    }
    // A tab that is indentation, below the block, is still told.
    expect(problemsOf(yaml(...heredoc, "  k:", "\tj: 1", ...keys))).toEqual([
      "9:1: Tabs are not allowed as indentation: indent with spaces (an editor set to insert spaces in .yaml files keeps it so); yaml read the lines below it as nested ever deeper, past the limit of 128 levels at 137:130, which may follow from it: fix the tab first",
    ]);
  });

  it("rejects deep nesting built from aliases", () => {
    const lines = [`a: &a ${"[".repeat(100)}1${"]".repeat(100)}`, `b: &b ${"[".repeat(100)}*a${"]".repeat(100)}`, "tasks: { t: { run: x, env: *b } }"];
    expect(problemsOf(yaml(...lines))).toContain("2:107: alias *a nests deeper than 128 levels");
  });

  it("holds a chain of merge keys to the nesting limit, each merge a level, and counts what merges bring against the alias limit", () => {
    const chain = ["x-0: &a0 { retries: 1 }", ...Array.from({ length: 5000 }, (_, index) => `x-${index + 1}: &a${index + 1} { <<: *a${index} }`), "tasks: { t: { <<: *a5000, run: x } }"];
    let problems: string[] = [];
    const ms = timed(() => (problems = problemsOf(yaml(...chain))));
    expect(problems[0]).toBe("129:20: alias *a127 nests deeper than 128 levels");
    // A bound only against a blow-up (each merge copied again at every level takes minutes), far over the 1-2 s it takes on a
    // loaded machine: it once took 5 s with two test files and five other processes beside it.
    expect(ms).toBeLessThan(30_000);
    const keys = Array.from({ length: 1000 }, (_, index) => `k${index}: 1`).join(", ");
    const bomb = [`x-a: &a { ${keys} }`, ...Array.from({ length: 2000 }, (_, index) => `x-${index}: { <<: *a }`), "tasks: { t: { run: x } }"];
    expect(problemsOf(yaml(...bomb))).toEqual(["1001:14: aliases expand to more than 1,000,000 nodes (an alias bomb?)"]);
  });

  // 15 s at load 13 on two cores, half the default limit: given 120 s.
  it("rejects more tasks than MAX_TASKS before building the document, at the task past the limit", () => {
    const entries = Array.from({ length: MAX_TASKS + 1 }, (_, index) => `t${index}: 0`);
    const text = `tasks: {${entries.join(", ")}}\n`;
    expect(problemsOf(text)).toEqual([`1:${text.indexOf(" t200000:") + 2}: too many tasks: "t200000" is task 200,001, and the limit is 200,000; split the workflow into several files`]);
  }, 120_000);

  it("rejects more tasks than MAX_TASKS in block style by a count before any reading: at once, at the task past the limit", () => {
    // Written as generators write them: a few fields each, comments, a literal block.
    const lines = ["# generated", "name: big", "tasks:", "  # first", "  t0:", "    run: |", "      echo one", "", "      echo two"];
    for (let index = 1; index <= MAX_TASKS; index++) lines.push(`  t${index}:`, `    run: echo ${index}`);
    lines.push("  'quoted-last': { run: x }");
    let problems: string[] = [];
    const text = `${lines.join("\n")}\n`;
    const ms = timed(() => (problems = problemsOf(text)));
    expect(problems).toEqual([`${lines.indexOf("  t200000:") + 1}:3: too many tasks: "t200000" is task 200,001, and the limit is 200,000; split the workflow into several files`]);
    // Read and parsed, the same file takes 6-16 s to be refused.
    expect(ms).toBeLessThan(2000);
  });

  it("counts before reading only what is surely a task: exactly MAX_TASKS pass, and it stops at what it cannot tell", () => {
    const lines = ["tasks:", "  t0:", "    run: |1", "     t-in-a-block: x", "  # t-comment:", "  t1: { run: x }"];
    for (let index = 2; index < MAX_TASKS; index++) lines.push(`  t${index}: { run: x }`);
    lines.push("defaults:", "  retries: 1", "  t-other: 1");
    expect(findTaskPastLimit(`${lines.join("\n")}\n`)).toBeUndefined();
    // One more task, but behind a `? key` the count cannot tell: left to the check after parsing.
    const over = ["tasks:", "  ? t0", "  : { run: x }", ...lines.slice(5, -3), "  t200000: { run: x }"];
    expect(findTaskPastLimit(`${over.join("\n")}\n`)).toBeUndefined();
    expect(findTaskPastLimit(`${[...lines.slice(0, -3), "  'quoted': {}"].join("\n")}\n`)).toEqual({ offset: expect.any(Number) as number, id: "'quoted'" });
  });

  it("rejects text longer than MAX_FILE_BYTES without parsing it", () => {
    const text = " ".repeat(MAX_FILE_BYTES + 1);
    let problems: string[] = [];
    const ms = timed(() => (problems = problemsOf(text)));
    expect(problems).toEqual(["1:1: the file is 67,108,865 bytes; the limit is 67,108,864 bytes (64 MiB)"]);
    expect(ms).toBeLessThan(3000); // parsing 64 MiB would take far longer; the size check is one comparison
  });

  it("keeps an unquoted runAt a string even under a %YAML 1.1 directive", () => {
    const workflow = parse(yaml("%YAML 1.1", "---", "tasks: { a: { run: x, runAt: 2026-01-15T02:00:00Z } }"));
    expect(workflow.tasks[0]!.runAt).toBe(Date.parse("2026-01-15T02:00:00Z"));
  });

  it("says at a core tag that does not fit its value (!!float 2, !!int 2.0) what the tag reads and to write the value without it, once: the value read as text in its place is not refused again as text tagged so", () => {
    // Before, "Unresolved tag: tag:yaml.org,2002:float", then `retries` refused at 4:22 as "a number tagged !!float is text", which it is not.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", "    retries: !!float 2", "    retryOn: [!!int 2.0, !!bool &c 3]"))).toEqual([
      "4:14: the tag !!float does not fit 2: it reads only a number written with a dot or an exponent (2.0, 1e3), or .inf or .nan; write the value without the tag: 2",
      "5:15: the tag !!int does not fit 2.0: it reads only an integer written as one (2, 0x1F, 0o17); write the value without the tag, in digits: 2",
      "5:26: the tag !!bool does not fit 3: it reads only true or false; write the value without the tag: 3",
    ]);
    expect(problemsOf(yaml("tasks:", "  a: { run: x, retries: !!null 3 }"))).toEqual(["2:25: the tag !!null does not fit 3: it reads only null, ~ or nothing; write the value without the tag: 3"]);
    // Tags that fit are read as YAML reads them.
    expect(parse(yaml("tasks:", "  a: { run: x, retries: !!float 2.0, timeout: !!int 5 }")).tasks[0]!.retries).toBe(2);
  });

  it("tells at a tag that does not fit its value, in every field, what makes a valid file: the value quoted where the field takes text and YAML would read it otherwise (run: !!float 2), as it is elsewhere", () => {
    /** The advice in `problem` applied to `line`: the tag and its value replaced by what it says to write. */
    const follow = (line: string, problem: string) => {
      const advice = /write the value without (?:the tag|it)(?:, quoted \(("[^"]*")\)|, in digits: ([^,]+)|: ([^,]+))/.exec(problem);
      expect(advice, problem).not.toBeNull();
      return line.replace(/!\S+ [^\s,}\]]+/, advice![1] ?? advice![2] ?? advice![3]!);
    };
    const cases = [
      ["name: !!float 2", "tasks:", "  a: { run: x }"],
      ["tasks:", "  a: { run: !!float 2 }"],
      ["tasks:", "  a: { run: !!int 2.0 }"],
      ["tasks:", "  a: { run: !!bool 1 }"],
      ["tasks:", "  a: { run: !!null true }"],
      ["tasks:", "  a: { run: !Ref 2 }"],
      ["tasks:", "  a: { run: !!null x }"],
      ["tasks:", "  a: { run: x, cwd: !!int 0x1.5 }"],
      ["tasks:", "  a: { run: x, cwd: !!float 2 }"],
      ["defaults: { cwd: !!bool 0 }", "tasks:", "  a: { run: x }"],
      ["env: { A: !!int 1.0 }", "tasks:", "  a: { run: x }"],
      ["defaults: { env: { A: !!float 0x10 } }", "tasks:", "  a: { run: x }"],
      ["tasks:", "  a: { run: x, env: { A: !!int 2.5 } }"],
      ["tasks:", "  a: { run: x, env: { A: !!float 2 } }"],
      ["tasks:", "  a: { run: x, retries: !!float 2 }"],
      // A number the tag does not fit, in a field that refuses it written other than in digits: in digits.
      ["tasks:", "  a: { run: x, retries: !!int 1e1 }"],
      ["tasks:", "  a: { run: x, delay: !!bool +5 }"],
      ["tasks:", "  a: { run: x, retryOn: [!!int 2.0] }"],
      ["tasks:", "  a: { run: x, timeout: !!float 5s }"],
      ["tasks:", "  a: { run: x, dependsOn: [!!float 2] }", '  "2": { run: x }'],
      // A task id is read as written: the task "1e1", not 10 (which named no task), as `dependsOn: [1e1]` is.
      ["tasks:", "  a: { run: x, dependsOn: [!!int 1e1] }", '  "1e1": { run: x }'],
      ["tasks:", "  a: { run: x, dependsOn: !!float 0x10 }", '  "0x10": { run: x }', '  "1e1": { run: x }'],
      ["tasks:", "  a: { run: x, runAt: !!float 2026-01-15T02:00:00Z }"],
      ["tasks:", "  a: { run: x, priority: !!int high }"],
      // In digits, not as JavaScript writes it (1e-9), which a duration refuses as it refuses 1e3.
      ["tasks:", "  a: { run: x, delay: !!bool 1e-9 }"],
    ];
    for (const lines of cases) {
      const problems = problemsOf(yaml(...lines));
      expect(problems, lines.join("\n")).toHaveLength(1);
      const fixed = lines.map((line) => (/![!A-Za-z]/.test(line) ? follow(line, problems[0]!) : line));
      expect(() => parse(yaml(...fixed)), fixed.join("\n")).not.toThrow();
    }
    // Where the value without the tag is refused too (`runAt: !!float 2` was told to write `runAt: 2`; `retries: !!int 1e21`, to write
    // 1e+21, out of range as it is): no advice to write it, but the field's refusal of it, the number as written, in the one problem.
    const refused = [
      [["tasks:", "  a: { run: x, runAt: !!float 2 }"], "without the tag, 2 is refused too: `runAt` must be a real date and time, ISO 8601 with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00, got 2"],
      [["tasks:", "  a: { run: x, runAt: !Ref 2 }"], "without it, 2 is refused too: `runAt` must be a real date and time, ISO 8601 with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00, got 2"],
      [["tasks:", "  a: { run: x, retries: !!int 1e21 }"], "without the tag, 1e21 is refused too: `retries` must be an integer from 0 to 100, got 1e21"],
      [["tasks:", "  a: { run: x, retries: !!float 200 }"], "without the tag, 200 is refused too: `retries` must be an integer from 0 to 100, got 200"],
      [["tasks:", "  a: { run: x, retryOn: [1, !!bool 0x100] }"], "without the tag, 0x100 is refused too: `retryOn[1]` must be an exit code, an integer from 1 to 255, got 0x100"],
      [["concurrency: !!bool 0", "tasks:", "  a: { run: x }"], "without the tag, 0 is refused too: `concurrency` must be an integer from 1 to 10000, got 0"],
      [["tasks:", "  a: { run: x, priority: !!float 2 }"], "without the tag, 2 is refused too: `priority` must be one of: low, normal, high, critical, got 2"],
      [["defaults: { timeout: !!bool 0 }", "tasks:", "  a: { run: x }"], "without the tag, 0 is refused too: `defaults.timeout` must be at least 1ms (a duration is rounded to whole milliseconds), got 0"],
      [["tasks:", "  a: { run: x, delay: !!bool 1e9 }"], "without the tag, 1e9 is refused too: `delay` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days, got 1e9; longer than the maximum of 30 days (720h)"],
      // A task id no task can have: before, `dependsOn: [!!int ~]` was told to write "~", refused then as no valid id.
      [["tasks:", "  a: { run: x, dependsOn: [!!int ~] }", "  b: { run: x }"], 'without the tag, ~ is refused too, quoted or not: "~" is not a valid task id: ids match'],
      [["tasks:", "  a: { run: x, dependsOn: [!!bool .] }", "  b: { run: x }"], 'without the tag, . is refused too: "." is not a valid task id: ids match'],
      // Quoted, the same: it was told to write "~" (and "a b"), refused then as no valid id.
      [["tasks:", '  a: { run: x, dependsOn: [!!int "~"] }', "  b: { run: x }"], 'without the tag, "~" is refused too: "~" is not a valid task id: ids match'],
      [["tasks:", "  a: { run: x, dependsOn: !!int 'a b' }", "  b: { run: x }"], 'without the tag, \'a b\' is refused too: "a b" is not a valid task id: ids match'],
    ] as const;
    for (const [lines, words] of refused) {
      const problems = problemsOf(yaml(...lines));
      expect(problems, lines.join("\n")).toHaveLength(1);
      expect(problems[0], lines.join("\n")).toContain(words);
      expect(problems[0]).not.toMatch(/write the value without/);
      // Written without the tag, as before it was told to, the file is refused indeed.
      expect(() => parse(yaml(...lines.map((line) => line.replace(/![!A-Za-z]+ /, "")))), lines.join("\n")).toThrow(WorkflowError);
    }
    // Quoted, as it was told to be written before, "~" is refused too.
    expect(problemsOf(yaml("tasks:", '  a: { run: x, dependsOn: ["~"] }', "  b: { run: x }"))[0]).toMatch(/depends on "~", which is not a valid task id/);
    // A task id in digits only where that is the task the file has (10), and the one as written (1e1) is none.
    expect(problemsOf(yaml("tasks:", "  a: { run: x, dependsOn: [!!int 1e1] }", '  "10": { run: x }'))[0]).toMatch(/write the value without the tag, in digits: 10$/);
    // An empty value tagged: one problem, at the tag, not also the field's refusal of it as empty at its key.
    expect(problemsOf(yaml("tasks:", "  a: { run: !!float }", "  b:", "    run: x", "    retries: !!int", "    priority: high"))).toEqual([
      "2:13: the tag !!float does not fit an empty value: it reads only a number written with a dot or an exponent (2.0, 1e3), or .inf or .nan; write the value in its place, without the tag",
      "5:14: the tag !!int does not fit an empty value: it reads only an integer written as one (2, 0x1F, 0o17); write the value in its place, without the tag",
    ]);
    // The tagged empty value on a task's first line, where its mapping starts too: the task's missing `run` is still told.
    // Before, only the tag was: written as told (retries: 1), the file was refused for its missing `run`.
    expect(problemsOf(yaml("tasks:", "  a:", "    retries: !!int", "  b:", "    cwd: !!str", "    timeout: !!int", "    run: x"))).toEqual([
      '2:3: task "a": `run` is missing; it must be a non-empty command string',
      "3:14: the tag !!int does not fit an empty value: it reads only an integer written as one (2, 0x1F, 0o17); write the value in its place, without the tag",
      '5:5: task "b": `cwd` must not be empty, got an empty string',
      "6:14: the tag !!int does not fit an empty value: it reads only an integer written as one (2, 0x1F, 0o17); write the value in its place, without the tag",
    ]);
    // The top level tagged and empty (`!!map` alone, read as an empty string): the tag, not also a top level that is no mapping.
    expect(problemsOf("!!map\n")).toEqual(["1:1: the tag !!map does not fit an empty value; write the value in its place, without the tag"]);
    expect(problemsOf("# the workflow\n!!seq\n")).toEqual(["2:1: the tag !!seq does not fit an empty value; write the value in its place, without the tag"]);
    // Before, `run: !!float 2` was told to write `run: 2`, which `run` refuses as a number.
    expect(problemsOf(yaml("tasks:", "  a: { run: !!float 2 }"))).toEqual([
      '2:13: the tag !!float does not fit 2: it reads only a number written with a dot or an exponent (2.0, 1e3), or .inf or .nan; write the value without the tag, quoted ("2"): unquoted, YAML reads 2 as a number, where a command string is expected',
    ]);
    expect(problemsOf(yaml("tasks:", "  a: { run: !Ref 2 }"))).toEqual([
      `2:13: unknown tag !Ref: taskq reads plain YAML, without other tools' tags (as CloudFormation's !Ref or !Sub); write the value without it, quoted ("2"): unquoted, YAML reads 2 as a number, where a command string is expected; or quote the whole value if the \`!\` is part of it: "!Ref 2"`,
    ]);
  });

  it("reports an unknown tag before a byte order mark and an alias (!Sub \\uFEFF*x) as any other: working out its advice crashed on the alias, which names no anchor", () => {
    expect(problemsOf(yaml("tasks:", "  a:", "    run: !Sub \uFEFF*x"))).toEqual([
      `3:10: unknown tag !Sub: taskq reads plain YAML, without other tools' tags (as CloudFormation's !Ref or !Sub); write the value without it: \uFEFF*x, or quote the whole value if the \`!\` is part of it: "!Sub \uFEFF*x"`,
    ]);
    expect(problemsOf("!a\uFEFF*a")[0]).toMatch(/^1:1: unknown tag !a: /);
  });

  it("reports tags it cannot resolve instead of guessing", () => {
    // Before, yaml's bare "Unresolved tag: !shell".
    expect(problemsOf(yaml("tasks:", "  a: { run: !shell x }"))).toEqual([
      `2:13: unknown tag !shell: taskq reads plain YAML, without other tools' tags (as CloudFormation's !Ref or !Sub); write the value without it: x, or quote the whole value if the \`!\` is part of it: "!shell x"`,
    ]);
    // A quoted value whole, its `${` and `,` too: before, `write the value without it: "arn:$`, which left a quote open.
    const sub = `unknown tag !Sub: taskq reads plain YAML, without other tools' tags (as CloudFormation's !Ref or !Sub); write the value without it`;
    expect(problemsOf(yaml("tasks:", "  a:", "    run: x", '    env: { A: !Sub "arn:${AWS::Region}, b" }'))).toEqual([
      `4:15: ${sub}: "arn:\${AWS::Region}, b", or quote the whole value if the \`!\` is part of it: "!Sub \\"arn:\${AWS::Region}, b\\""`,
    ]);
    expect(problemsOf(yaml("tasks:", "  a:", "    run: !Sub 'echo {a,b}' # c"))).toEqual([
      `3:10: ${sub}: 'echo {a,b}', or quote the whole value if the \`!\` is part of it: "!Sub 'echo {a,b}'"`,
    ]);
    // A plain value whole where it is not in a flow collection, its `{` too: before, `write the value without it: echo $`.
    expect(problemsOf(yaml("tasks:", "  a:", "    run: !Sub echo ${AWS::Region}-x, y # c"))).toEqual([
      `3:10: ${sub}: echo \${AWS::Region}-x, y, or quote the whole value if the \`!\` is part of it: "!Sub echo \${AWS::Region}-x, y"`,
    ]);
    expect(parse(yaml("tasks:", "  a:", "    run: echo ${AWS::Region}-x, y # c")).tasks[0]!.run).toBe("echo ${AWS::Region}-x, y");
    // Written so, the value is valid.
    expect(parse(yaml("tasks:", "  a:", "    run: x", '    env: { A: "arn:${AWS::Region}, b" }')).tasks[0]!.env).toEqual({ A: "arn:${AWS::Region}, b" });
    expect(parse(yaml("tasks:", "  a:", "    run: 'echo {a,b}' # c")).tasks[0]!.run).toBe("echo {a,b}");
    expect(problemsOf(yaml("tasks: !foo", "  a: { run: x }"))).toEqual(["1:8: unknown tag !foo: taskq reads plain YAML, without other tools' tags (as CloudFormation's !Ref or !Sub); remove it"]);
    expect(problemsOf(yaml("tasks:", "  a: { run: !!binary aGk= }"))).toEqual(['2:22: task "a": `run` must be a non-empty command string, got binary data']);
    // A time YAML 1.1's tag makes a date: named so, not "a mapping".
    expect(problemsOf(yaml("tasks:", "  a: { run: x, runAt: !!timestamp 2026-12-01T02:00:00Z }"))).toEqual([
      '2:35: task "a": `runAt` must be a real date and time, ISO 8601 with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00, got a YAML timestamp (!!timestamp): write the time without the tag',
    ]);
  });
});
