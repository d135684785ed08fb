import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, runIds, workspace } from "../helpers/cli.js";

/** What `|| true` advice an option to let a task fail is told. */
const ALLOWED_FAILURE =
  "taskq has no such option: a task that fails fails the run (exit 1) and cancels its dependents; to let a command fail without that, end the task's run with || true (the task then succeeds whatever the command's exit code)";

/**
 * Through the real CLI, what a newcomer's slip in a workflow file is told: at file:line:column,
 * in words that say what to write, with nothing run.
 */
describe("validation messages", () => {
  it("points other tools' keys for a retry's wait and for letting a task fail at taskq's, and a top-level desc at name; run runs nothing", { timeout: 30_000 }, async () => {
    const ws = await workspace(
      ["desc: the pipeline", "defaults:", "  retry-delay: 2s", "tasks:", "  a:", "    run: touch ran", "    retries: 2", "    retryDelay: 5s", "    retry_delay: 5s", "    ignore_errors: true", "    continue_on_error: true", ""].join("\n"),
    );
    const backoff = (key: string): string =>
      `did you mean "backoff"? It takes a mapping: \`base\`, the wait before the first retry, doubled at each retry after it up to \`max\`; each wait is anywhere from 0 to that (full jitter), so \`${key}: 5s\` is nearest \`backoff: { base: 5s, max: 5s }\``;
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr.split("\n")).toEqual([
      `${ws.file}:1:1: unknown key "desc" at the top level; a workflow is named by its \`name\` (name: ci); to keep a description beside it, write it in a YAML comment, or under a key that starts with x- (x-description: ...), which taskq ignores`,
      `${ws.file}:3:3: unknown key "retry-delay" in \`defaults\`; ${backoff("retry-delay")}`,
      `${ws.file}:8:5: task "a": unknown key "retryDelay"; ${backoff("retryDelay")}`,
      `${ws.file}:9:5: task "a": unknown key "retry_delay"; ${backoff("retry_delay")}`,
      `${ws.file}:10:5: task "a": unknown key "ignore_errors"; ${ALLOWED_FAILURE}`,
      `${ws.file}:11:5: task "a": unknown key "continue_on_error"; ${ALLOWED_FAILURE}`,
      "6 problems; nothing was run",
      "",
    ]);
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
    expect(await runIds(ws.logs)).toEqual([]);
  });

  it("tells every dependency cycle in one run: one dependency of each told removed leaves none for the next run", { timeout: 30_000 }, async () => {
    // a -> c -> b -> a was told only once a -> b and c -> a, one dependency of each cycle told, were removed.
    const cycles = await workspace(["tasks:", "  a:", "    run: echo a", "    dependsOn: [b, c]", "  b:", "    run: echo b", "    dependsOn: [a]", "  c:", "    run: echo c", "    dependsOn: [a, b]", ""].join("\n"));
    expect(await runCli(["validate", cycles.file], { cwd: cycles.dir })).toMatchObject({
      code: 2,
      stderr: `${cycles.file}:4:17: dependency cycles a -> b -> a, a -> c -> a and a -> c -> b -> a, which share a dependency (a -> b at 4:17, b -> a at 7:17, a -> c at 4:20, c -> a at 10:17, c -> b at 10:20); remove one dependency of each; one they share ends every cycle through it\n1 problem\n`,
    });
    // Without a -> b, c -> a and b -> a, one of each told.
    await writeFile(cycles.file, ["tasks:", "  a:", "    run: echo a", "    dependsOn: [c]", "  b:", "    run: echo b", "  c:", "    run: echo c", "    dependsOn: [b]", ""].join("\n"));
    expect(await runCli(["validate", cycles.file], { cwd: cycles.dir })).toMatchObject({ code: 0, stdout: `${cycles.file}: ok, 3 tasks\n` });
  });

  it("tells every key indented past the value above it in one run: each moved as told leaves nothing for the next run", { timeout: 30_000 }, async () => {
    // timeout was told only once retries was moved.
    const deeper = await workspace(["tasks:", "  a:", "    run: echo hi", "      retries: 2", "      timeout: 5s", ""].join("\n"));
    const told = (key: string, line: number) => `${deeper.file}:${line}:7: Nested mappings are not allowed in compact mappings: ${key} is indented more than run above it (line 3), so yaml reads it as more of the value of run; start it at column 5, as run is`;
    expect(await runCli(["validate", deeper.file], { cwd: deeper.dir })).toMatchObject({ code: 2, stderr: `${told("retries", 4)}\n${told("timeout", 5)}\n2 problems\n` });
    await writeFile(deeper.file, ["tasks:", "  a:", "    run: echo hi", "    retries: 2", "    timeout: 5s", ""].join("\n"));
    expect(await runCli(["validate", deeper.file], { cwd: deeper.dir })).toMatchObject({ code: 0, stdout: `${deeper.file}: ok, 1 task\n` });
  });

  it("counts each key indented past the value above it as one of the YAML errors told, ten at most: a file of many such tasks is told ten and a count, not every one", { timeout: 30_000 }, async () => {
    // 60 tasks, each with three keys indented under run: 180 problems were told (the 50 printed, then `... and 0 more problems`).
    const lines = ["tasks:"];
    for (let task = 0; task < 60; task++) lines.push(`  t${task}:`, "    run: echo hi", "      retries: 2", "      timeout: 5s", "      priority: high");
    const ws = await workspace(`${lines.join("\n")}\n`);
    const result = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(result.code).toBe(2);
    const told = result.stderr.trimEnd().split("\n");
    expect(told).toHaveLength(12);
    expect(told.slice(0, 3)).toEqual(["retries", "timeout", "priority"].map((key, index) => `${ws.file}:${4 + index}:7: Nested mappings are not allowed in compact mappings: ${key} is indented more than run above it (line 3), so yaml reads it as more of the value of run; start it at column 5, as run is`));
    expect(told[9]).toMatch(/:19:7: Nested mappings .*: retries is indented more than run above it \(line 18\)/);
    expect(told[10]).toMatch(new RegExp(`^${ws.file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:20:7: \\.\\.\\. and up to \\d+ more YAML errors from here on; fix the ones above first$`));
    expect(told[11]).toBe("10 problems, and more YAML errors after them");
  });

  it("with a YAML syntax error, tells only the syntax errors, as README says; the file's other problems on the run after they are fixed", { timeout: 30_000 }, async () => {
    const ws = await workspace(["tasks:", "  a:", '    run: "echo hi', "    comand: x", "  b: { run: x, dependsOn: [zz] }", ""].join("\n"));
    expect(await runCli(["validate", ws.file], { cwd: ws.dir })).toMatchObject({
      code: 2,
      stderr: `${ws.file}:3:10: this " is never closed: the string runs on to 6:1, where yaml gave up; close it (a " inside is written \\")\n1 problem\n`,
    });
    await writeFile(ws.file, ["tasks:", "  a:", '    run: "echo hi"', "    comand: x", "  b: { run: x, dependsOn: [zz] }", ""].join("\n"));
    const told = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(told.code).toBe(2);
    expect(told.stderr).toMatch(/:4:5: .*comand.*\n.*:5:28: .*zz.*\n2 problems\n$/);
  });

  it("points a top level that is a tag alone (`!!null`) at the tag, not past it, for validate and run", { timeout: 30_000 }, async () => {
    const said = "the top level must be a mapping with a `tasks` key, got nothing (null)";
    for (const [text, at] of [["!!null\n", "1:1"], ["!!null", "1:1"], ["# ci\n\n  !!null  # nothing yet\n", "3:3"], ["--- &a !!null\n", "1:5"]] as const) {
      const ws = await workspace(text);
      for (const args of [["validate", ws.file], ["run", ws.file, "--log-dir", ws.logs]]) {
        const result = await runCli(args, { cwd: ws.dir });
        expect(result.code, text).toBe(2);
        expect(result.stderr.split("\n")[0], text).toBe(`${ws.file}:${at}: ${said}`);
      }
      expect(await runIds(ws.logs)).toEqual([]);
    }
  });

  it("takes no arithmetic shift (`$((1 << 2))`) in a > block for a heredoc: the line break kept after it is still told, and one after a real heredoc is not", { timeout: 30_000 }, async () => {
    const kept =
      "run is a > block, whose lines YAML joins with spaces, but it keeps the line break before a line indented more than the block's first, such as this one, so the shell runs it as a command of its own, not as more of the one before: it gets docker run and then, on a line of its own, --rm alpine; indent this line as the block's first line to join it to the command before, or write run: | with a backslash at the end of the line before";
    for (const first of ["echo $((1 << 2)) &&", "echo $(( (1+1) << 2 )) &&", "echo $((1<<2)) &&"]) {
      const ws = await workspace(["tasks:", "  a:", "    run: >", `      ${first}`, "      docker run", "        --rm alpine", ""].join("\n"));
      const result = await runCli(["validate", ws.file], { cwd: ws.dir });
      expect(result, first).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 1 task\nnote: ${ws.file}:6:9: task "a": ${kept}\n` });
    }
    // A heredoc's lines are the shell's to read as written: nothing to tell.
    const heredoc = await workspace(["tasks:", "  a:", "    run: >", "      cat <<EOF", "        kept as written", "      EOF", ""].join("\n"));
    expect(await runCli(["validate", heredoc.file], { cwd: heredoc.dir })).toMatchObject({ code: 0, stdout: `${heredoc.file}: ok, 1 task\n` });
  });

  it("quotes no comment of the file in yaml's words for text out of place: the text's first line alone, at its line and column", { timeout: 30_000 }, async () => {
    const ws = await workspace(["- run: echo", "|x # my note", "run: echo hi # my note", "  # another note", ""].join("\n"));
    for (const args of [["validate", ws.file], ["run", ws.file, "--log-dir", ws.logs]]) {
      const result = await runCli(args, { cwd: ws.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${ws.file}:3:1: Unexpected scalar token in YAML stream: "run: echo hi"\n`);
      expect(result.stderr).not.toContain("note");
    }
    expect(await runIds(ws.logs)).toEqual([]);
  });

  it("takes no shift for a heredoc in an arithmetic expansion whose parentheses nest deeper: a > block's kept line break after it is still told", { timeout: 30_000 }, async () => {
    for (const first of ["echo $(( ((1)) << 2 )) &&", "echo $(( (1+(2)) << 2 )) $((3<<1)) &&"]) {
      const ws = await workspace(["tasks:", "  a:", "    run: >", `      ${first}`, "      docker run", "        --rm alpine", ""].join("\n"));
      const result = await runCli(["validate", ws.file], { cwd: ws.dir });
      expect(result.code, first).toBe(0);
      expect(result.stdout, first).toContain(`note: ${ws.file}:6:9: task "a": run is a > block`);
      expect(result.stdout, first).toContain("it gets docker run and then, on a line of its own, --rm alpine;");
    }
  });

  it("takes no << inside quotes for a heredoc in a > block (`echo \"a<<b\"`): a kept line break after it is still told, and a quoted delimiter's heredoc still is one", { timeout: 30_000 }, async () => {
    const block = (first: string) => ["tasks:", "  a:", "    run: >", `      ${first}`, "      docker run", "        --rm alpine", ""].join("\n");
    for (const first of ['echo "a<<b" &&', "echo 'x <<y' &&"]) {
      const ws = await workspace(block(first));
      const result = await runCli(["validate", ws.file], { cwd: ws.dir });
      expect(result.stdout, first).toContain(`note: ${ws.file}:6:9: task "a": run is a > block`);
    }
    for (const first of ["cat <<'EOF' && echo 'x'", 'cat <<"EOF" && echo "x"']) {
      const ws = await workspace(block(first));
      expect(await runCli(["validate", ws.file], { cwd: ws.dir }), first).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 1 task\n` });
    }
  });

  it("keeps a # inside quotes in yaml's words for text out of place: only a comment is left out, not the rest of a quoted string", { timeout: 30_000 }, async () => {
    const ws = await workspace(["  s: x", "tasks:", "  b:", "    run: |", '      echo "a # b" && echo \'c # d\' # my note', ""].join("\n"));
    const result = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${ws.file}:5:7: Unexpected scalar token in YAML stream: ${JSON.stringify("echo \"a # b\" && echo 'c # d'")}\n`);
    expect(result.stderr).not.toContain("my note");
  });

  it("cuts a long line it quotes at 60 characters without splitting an emoji in two, in text and in JSON", { timeout: 30_000 }, async () => {
    // Cut at 57 UTF-16 units, each of these lines ended in half an emoji: U+FFFD in the text, `\ud83d` in JSON.
    const stray = `echo ${"x".repeat(51)}${"\u{1f600}".repeat(10)}`;
    const folded = `echo ${"\u{1f600}".repeat(30)}`;
    const ws = await workspace(["  s: x", "tasks:", "  b:", "    run: |", `      ${stray}`, ""].join("\n"));
    const kept = await workspace(["tasks:", "  a:", "    run: >", `      ${folded}`, "        --rm", ""].join("\n"));
    const text = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(text.stderr).toContain(`${ws.file}:5:7: Unexpected scalar token in YAML stream: "echo ${"x".repeat(51)}..."\n`);
    const note = await runCli(["validate", kept.file], { cwd: kept.dir });
    expect(note.stdout).toContain(`it gets ...${"\u{1f600}".repeat(28)} and then, on a line of its own, --rm;`);
    for (const [dir, file] of [[ws.dir, ws.file], [kept.dir, kept.file]] as const) {
      const json = await runCli(["validate", "--output", "json", file], { cwd: dir });
      expect(json.stdout).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i);
      expect(json.stdout).not.toContain("\ufffd");
    }
    expect(`${text.stderr}${note.stdout}`).not.toContain("\ufffd");
    // A value quoted in a problem, as each of the others.
    const value = await workspace(["tasks:", "  a:", "    run: echo", `    priority: "${"x".repeat(56)}${"\u{1f600}".repeat(5)}"`, ""].join("\n"));
    expect((await runCli(["validate", value.file], { cwd: value.dir })).stderr).toContain(`got "${"x".repeat(56)}..."\n`);
  });

  it("ends an invalid file's problems with words that fit the command: run's that nothing was run, submit's that nothing was submitted, validate's, list's and graph's with the count alone", { timeout: 30_000 }, async () => {
    const ws = await workspace(["tasks:", "  a:", "    run: touch ran", "    retries: -1", ""].join("\n"));
    const problem = `${ws.file}:4:14: task "a": \`retries\` must be an integer from 0 to 100, got -1\n`;
    const verdicts: Array<[string[], string]> = [
      [["validate", ws.file], "1 problem\n"],
      [["list", ws.file], "1 problem\n"],
      [["graph", ws.file], "1 problem\n"],
      [["run", ws.file, "--log-dir", ws.logs], "1 problem; nothing was run\n"],
      // Refused before the store is opened (nothing listens on port 1).
      [["submit", ws.file, "--store", "postgres://postgres@127.0.0.1:1/none"], "1 problem; nothing was submitted\n"],
    ];
    for (const [args, verdict] of verdicts) expect(await runCli(args, { cwd: ws.dir }), args[0]).toMatchObject({ code: 2, stdout: "", stderr: `${problem}${verdict}` });
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
    expect(await runIds(ws.logs)).toEqual([]);
  });

  it("list and graph give the notes validate gives, on stderr, their stdout the table or graph alone", { timeout: 30_000 }, async () => {
    const ws = await workspace(["tasks:", "  a:", "    run: >", "      docker run", "        --rm alpine", ""].join("\n"));
    const validated = await runCli(["validate", ws.file], { cwd: ws.dir });
    expect(validated.code).toBe(0);
    const note = validated.stdout.split("\n")[1]!;
    expect(note).toMatch(new RegExp(`^note: ${ws.file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:5:9: task "a": run is a > block`));
    const listed = await runCli(["list", ws.file], { cwd: ws.dir });
    expect(listed).toMatchObject({ code: 0, stdout: "ID\tPRIORITY\tRETRIES\tDEPENDS ON\tRUN\na\tnormal\t0\t-\tdocker run\\n  --rm alpine\n", stderr: `${note}\n` });
    const graphed = await runCli(["graph", ws.file], { cwd: ws.dir });
    expect(graphed).toMatchObject({ code: 0, stdout: 'graph LR\n  t0["a"]\n', stderr: `${note}\n` });
  });

  it("tells tasks written as a list of ids (`- build:`, as steps are) to drop the \"- \", naming them as they would be written", { timeout: 30_000 }, async () => {
    const ws = await workspace(["tasks:", "  - build:", "      run: touch ran", "  - test:", "      run: touch ran", "      dependsOn: build", ""].join("\n"));
    for (const args of [["validate", ws.file], ["run", ws.file, "--log-dir", ws.logs]]) {
      const result = await runCli(args, { cwd: ws.dir });
      expect(result.code).toBe(2);
      expect(result.stderr.split("\n")[0]).toBe(
        `${ws.file}:2:3: \`tasks\` must be a mapping of task id to task, got a list; remove the "- " before each task's id: a task is a key of \`tasks\`, not an item of a list (tasks: { build: { run: ... }, test: { run: ... } })`,
      );
    }
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
    expect(await runIds(ws.logs)).toEqual([]);
  });
});
