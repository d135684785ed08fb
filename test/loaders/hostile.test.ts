import { describe, expect, it } from "vitest";
import { MAX_FILE_BYTES, MAX_TASKS } from "../../src/loaders/index.js";
import { parse, problemsOf, yaml } from "./helpers.js";

/** Runs `action` and returns how long it took, in ms. */
function timed(action: () => void): number {
  const start = performance.now();
  action();
  return performance.now() - start;
}

describe("hostile input", () => {
  it("reports an empty file, a comment-only file and a lone BOM as empty", () => {
    for (const text of ["", "# nothing here\n", "\uFEFF", Buffer.alloc(0), "\n\n  \n"]) {
      expect(problemsOf(text)).toEqual(["1:1: file is empty; a workflow needs a `tasks` mapping"]);
    }
  });

  it("rejects a file holding several YAML documents, at the second one", () => {
    expect(problemsOf(yaml("tasks: { a: { run: x } }", "---", "tasks: { b: { run: y } }"))).toEqual([
      "2:1: the file holds more than one YAML document (a second `---`); put the whole workflow in one document",
    ]);
  });

  it("reports the line and column of the first invalid UTF-8 byte", () => {
    const bytes = Buffer.concat([Buffer.from("tasks:\n  a: { run: é"), Buffer.from([0xff]), Buffer.from(" }\n")]);
    expect(problemsOf(bytes)).toEqual(["2:14: the file is not valid UTF-8 (byte 0xff at byte offset 21); save it as UTF-8"]);
    const truncated = Buffer.concat([Buffer.from("\uFEFFtasks: €"), Buffer.from([0xe2, 0x82])]);
    expect(problemsOf(truncated)).toEqual(["1:9: the file is not valid UTF-8 (byte 0xe2 at byte offset 13); save it as UTF-8"]);
    const surrogate = Buffer.from([0x61, 0x3a, 0x20, 0xed, 0xa0, 0x80]);
    expect(problemsOf(surrogate)).toEqual(["1:4: the file is not valid UTF-8 (byte 0xed at byte offset 3); save it as UTF-8"]);
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
    const ms = timed(() => (problems = problemsOf(yaml(...lines))));
    expect(problems).toContain("7:8: aliases expand to more than 1,000,000 nodes (an alias bomb?)");
    expect(ms).toBeLessThan(5000);
  });

  it("rejects 50,000 nested brackets cleanly, at the first one too deep", () => {
    for (const bracket of ["[", "{"]) {
      let problems: string[] = [];
      const ms = timed(() => (problems = problemsOf(bracket.repeat(50_000))));
      expect(problems).toEqual(["1:129: nesting is deeper than 128 levels; a workflow needs only a few"]);
      expect(ms).toBeLessThan(5000);
    }
  });

  it("rejects deep block nesting, which needs no brackets", () => {
    const lines = Array.from({ length: 300 }, (_, depth) => `${" ".repeat(depth)}k:`);
    expect(problemsOf(yaml(...lines))).toEqual(["129:129: nesting is deeper than 128 levels; a workflow needs only a few"]);
  });

  it("rejects deep nesting built from aliases", () => {
    const lines = [`a: &a ${"[".repeat(100)}1${"]".repeat(100)}`, `b: &b ${"[".repeat(100)}*a${"]".repeat(100)}`, "tasks: { t: { run: x, env: *b } }"];
    expect(problemsOf(yaml(...lines))).toContain("2:107: alias *a nests deeper than 128 levels");
  });

  it("rejects more tasks than MAX_TASKS before building the document", () => {
    const entries = Array.from({ length: MAX_TASKS + 1 }, (_, index) => `t${index}: 0`);
    expect(problemsOf(`tasks: {${entries.join(", ")}}\n`)).toEqual(["1:8: too many tasks (200,001); the limit is 200,000"]);
  });

  it("rejects text longer than MAX_FILE_BYTES without parsing it", () => {
    const text = " ".repeat(MAX_FILE_BYTES + 1);
    let problems: string[] = [];
    const ms = timed(() => (problems = problemsOf(text)));
    expect(problems).toEqual(["1:1: the file is 67,108,865 bytes; the limit is 67,108,864 bytes (64 MiB)"]);
    expect(ms).toBeLessThan(3000); // parsing 64 MiB would take far longer; the size check is one comparison
  });

  it("keeps an unquoted runAt a string even under a %YAML 1.1 directive", () => {
    const workflow = parse(yaml("%YAML 1.1", "---", "tasks: { a: { run: x, runAt: 2026-12-01T02:00:00Z } }"));
    expect(workflow.tasks[0]!.runAt).toBe(Date.parse("2026-12-01T02:00:00Z"));
  });

  it("reports tags it cannot resolve instead of guessing", () => {
    expect(problemsOf(yaml("tasks:", "  a: { run: !shell x }"))).toEqual(["2:13: Unresolved tag: !shell"]);
    expect(problemsOf(yaml("tasks:", "  a: { run: !!binary aGk= }"))).toEqual(['2:22: task "a": `run` must be a non-empty command string, got binary data']);
  });
});
