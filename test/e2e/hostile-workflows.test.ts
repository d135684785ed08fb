import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, readdir, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, runCli, runIds, workspace } from "../helpers/cli.js";
import { findLeftovers } from "../helpers/processes.js";

/**
 * The real CLI on hostile workflow files (the loader's unit tests cover the details):
 * exit 2, every problem as file:line:col, and nothing spawned: the `touch ran`
 * marker is absent and no run folder was created.
 */
async function rejects(content: string | Buffer, expected: string[], options: { exact?: boolean } = {}): Promise<number> {
  const ws = await workspace("");
  await writeFile(ws.file, content);
  const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
  expect(result.code).toBe(2);
  for (const line of expected) expect(result.stderr).toContain(`${ws.file}:${line}\n`);
  // Every line is file:line:col or the verdict: nothing like a stack trace or a V8 abort.
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines.at(-1)).toMatch(/^\d+ problems?; nothing was run$/);
  for (const line of lines.slice(0, -1)) expect(line.startsWith(`${ws.file}:`)).toBe(true);
  if (options.exact !== false) expect(lines).toHaveLength(expected.length + 1);
  expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  expect(await runIds(ws.logs)).toEqual([]);
  return result.durationMs;
}

// Each case is one short CLI run that spawns no task, so they can share the two cores.
describe.concurrent("hostile workflow files: exit 2, file:line:col, nothing spawned", () => {
  it("cycles (with the path), self-dependency, unknown dependency and duplicate ids, all at once (case 20)", async () => {
    await rejects(
      [
        "tasks:",
        "  a: { run: touch ran, dependsOn: c }",
        "  b: { run: touch ran, dependsOn: a }",
        "  c: { run: touch ran, dependsOn: [b] }",
        "  self: { run: touch ran, dependsOn: self }",
        "  lost: { run: touch ran, dependsOn: [a, nowhere] }",
        "  a: { run: touch ran }",
        "",
      ].join("\n"),
      [
        "2:35: dependency cycle: a -> c -> b -> a (a -> c at 2:35, c -> b at 4:36, b -> a at 3:35); remove one of these dependencies",
        '5:38: task "self" depends on itself, and would wait for its own end forever; remove its dependsOn',
        '6:42: task "lost" depends on "nowhere", which is not defined',
        '7:3: duplicate task id "a" (first defined at 2:3); each must appear once',
      ],
    );
  });

  it("an alias bomb is stopped at the alias that crosses the limit (case 21)", async () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [index, name] of [..."bcdefghi"].entries()) lines.push(`${name}: &${name} [${Array(9).fill(`*${"abcdefghi"[index]}`).join(",")}]`);
    lines.push("tasks: { t: { run: touch ran, env: *i } }");
    // The anchors are also unknown top-level keys; those problems are reported too.
    const ms = await rejects(`${lines.join("\n")}\n`, ["7:8: aliases expand to more than 1,000,000 nodes (an alias bomb?)"], { exact: false });
    expect(ms).toBeLessThan(15_000);
  });

  it("50,000 nested [ is exit 2 with a message, never a V8 abort (case 21)", async () => {
    await rejects(`tasks:\n  a: { run: touch ran, env: ${"[".repeat(50_000)} }\n`, ["2:29: this [ is never closed with ]; the brackets opened after it nest deeper than 128 levels at 2:156, where yaml stopped reading"]);
    await rejects("{".repeat(50_000), ["1:1: this { is never closed with }; the brackets opened after it nest deeper than 128 levels at 1:129, where yaml stopped reading"]);
  });

  it("a file over the size limit is rejected from its size alone (case 21)", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran }\n");
    await truncate(ws.file, 64 * 1024 * 1024 + 1); // sparse: no 64 MiB written, none read
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`${ws.file}:1:1: the file is 67,108,865 bytes; the limit is 67,108,864 bytes (64 MiB)\n1 problem; nothing was run\n`);
    expect(await runIds(ws.logs)).toEqual([]);
  });

  it("a workflow from a pipe is read to its end and its tasks run in the current folder; an endless device is refused at the size limit", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran-a }\n");
    // A pipe (as `taskq run <(generate)` or `generate | taskq run /dev/stdin` give) has no size to check first.
    const piped = spawnSync("sh", ["-c", 'cat "$1" | "$2" "$3" run /dev/stdin --log-dir "$4" --output plain', "sh", ws.file, process.execPath, BIN, ws.logs], {
      cwd: ws.dir,
      encoding: "utf8",
      env: { ...process.env, CI: "true", NO_COLOR: "1" },
    });
    expect(piped.stderr).toBe("");
    expect(piped.status).toBe(0);
    // In the folder taskq was started in, not in the pipe's (/dev/fd).
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(true);
    // Not read until memory runs out: refused once past the limit.
    const result = await runCli(["validate", "/dev/zero"], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("/dev/zero:1:1: the file is larger than the limit of 67,108,864 bytes (64 MiB)\n1 problem\n");
  });

  it("/dev/stdin given a file (`taskq run /dev/stdin < ci.yaml`) runs its tasks in the current folder, not in /dev", async () => {
    const ws = await workspace("tasks:\n  a: { run: pwd > where }\n");
    const result = spawnSync("sh", ["-c", '"$1" "$2" run /dev/stdin --log-dir "$3" --output plain < "$4"', "sh", process.execPath, BIN, ws.logs, ws.file], {
      cwd: ws.dir,
      encoding: "utf8",
      env: { ...process.env, CI: "true", NO_COLOR: "1" },
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(readFileSync(path.join(ws.dir, "where"), "utf8").trim()).toBe(realpathSync(ws.dir));
  });

  it("`-` reads the workflow from standard input: problems name <stdin>, tasks run in the current folder", async () => {
    const ws = await workspace("");
    const env = { ...process.env, CI: "true", NO_COLOR: "1" };
    const valid = spawnSync(process.execPath, [BIN, "validate", "-"], { cwd: ws.dir, input: "tasks:\n  a: { run: touch ran-a }\n", encoding: "utf8", env });
    expect(valid.stdout).toBe("<stdin>: ok, 1 task\n");
    expect(valid.status).toBe(0);
    const invalid = spawnSync(process.execPath, [BIN, "run", "-", "--log-dir", ws.logs], { cwd: ws.dir, input: "tasks:\n  a: { run: 1 }\n", encoding: "utf8", env });
    expect(invalid.stderr).toBe("<stdin>:2:13: task \"a\": `run` must be a non-empty command string, got 1\n1 problem; nothing was run\n");
    expect(invalid.status).toBe(2);
    const ran = spawnSync(process.execPath, [BIN, "run", "-", "--log-dir", ws.logs], { cwd: ws.dir, input: "tasks:\n  a: { run: touch ran-a }\n", encoding: "utf8", env });
    expect(ran.status).toBe(0);
    expect(existsSync(path.join(ws.dir, "ran-a"))).toBe(true);
    // A large file named "-" in the current folder is not what `-` means, even where a large file is read apart.
    await writeFile(path.join(ws.dir, "-"), "#".repeat(300_000));
    const anchored = spawnSync(process.execPath, [BIN, "run", "-", "--log-dir", ws.logs], { cwd: ws.dir, input: "x: &a 1\ntasks:\n  a: { run: touch ran-b }\n", encoding: "utf8", env });
    expect(anchored.stderr).toBe('<stdin>:1:1: unknown key "x" at the top level; a top-level key kept for its anchor is named with x- (x-x), which taskq ignores\n1 problem; nothing was run\n');
  });

  it("`-` with standard input /dev/null or closed is told so, not as an empty file; an empty pipe is an empty file; nothing runs", async () => {
    const ws = await workspace("");
    const env = { ...process.env, CI: "true", NO_COLOR: "1" };
    const told = "<stdin>:1:1: standard input is /dev/null (or was closed): there is no workflow to read; redirect one in (`- < ci.yaml`), or give the file's path instead of -\n";
    const devNull = spawnSync(process.execPath, [BIN, "run", "-", "--log-dir", ws.logs], { cwd: ws.dir, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", env });
    expect(devNull.stderr).toBe(`${told}1 problem; nothing was run\n`);
    expect(devNull.status).toBe(2);
    const closed = spawnSync("sh", ["-c", '"$1" "$2" validate - <&-', "sh", process.execPath, BIN], { cwd: ws.dir, encoding: "utf8", env });
    expect(closed.stderr).toBe(`${told}1 problem\n`);
    expect(closed.status).toBe(2);
    // /dev/stdin, standard input by its path: named so.
    const alias = spawnSync(process.execPath, [BIN, "validate", "/dev/stdin"], { cwd: ws.dir, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", env });
    expect(alias.stderr).toBe("/dev/stdin:1:1: standard input is /dev/null (or was closed): there is no workflow to read; redirect one in (`/dev/stdin < ci.yaml`), or give the file's path instead of /dev/stdin\n1 problem\n");
    // /dev/null given as the file is an empty file.
    expect(spawnSync(process.execPath, [BIN, "validate", "/dev/null"], { cwd: ws.dir, encoding: "utf8", env }).stderr).toBe("/dev/null:1:1: file is empty; a workflow needs a `tasks` mapping\n1 problem\n");
    const emptyPipe = spawnSync(process.execPath, [BIN, "validate", "-"], { cwd: ws.dir, input: "", encoding: "utf8", env });
    expect(emptyPipe.stderr).toBe("<stdin>:1:1: file is empty; a workflow needs a `tasks` mapping\n1 problem\n");
    expect(existsSync(ws.logs)).toBe(false);
  });

  it("ids `../../x`, `a/b`, 300 bytes, `.`, `..` are rejected by the documented pattern (case 22)", async () => {
    const pattern = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    await rejects(
      ["tasks:", "  ../../x: { run: touch ran }", "  a/b: { run: touch ran }", `  ${"i".repeat(300)}: { run: touch ran }`, "  '..': { run: touch ran }", "  ok: { run: touch ran }", ""].join("\n"),
      [
        `2:3: invalid task id "../../x": ids match ${pattern}`,
        `3:3: invalid task id "a/b": ids match ${pattern}`,
        `4:3: invalid task id "${"i".repeat(57)}...": ids match ${pattern}`,
        `5:3: invalid task id "..": ids match ${pattern}`,
      ],
    );
  });

  it("ids that differ only in case (Build, build), whose logs are one file where case is ignored, are refused at the later one by run, validate, and run --store and submit before the store is opened", async () => {
    const file = ["tasks:", "  Build: { run: touch ran }", "  build: { run: touch ran, dependsOn: Build }", ""].join("\n");
    const said = `3:3: task id "build" differs from "Build" (defined at 2:3) only in case: their logs, build.log and Build.log, are one file on a file system that ignores case (macOS's and Windows' by default), where the two tasks' output would mix; rename one`;
    await rejects(file, [said]);
    const ws = await workspace(file);
    const refused = { code: 2, stdout: "", stderr: `${ws.file}:${said}\n1 problem; nothing was run\n` };
    expect(await runCli(["validate", ws.file], { cwd: ws.dir })).toMatchObject({ ...refused, stderr: `${ws.file}:${said}\n1 problem\n` });
    // A durable run stores ids as its workers log them: refused the same, before connecting (nothing listens on port 1).
    const store = "postgres://postgres@127.0.0.1:1/none";
    expect(await runCli(["run", ws.file, "--store", store, "--log-dir", ws.logs], { cwd: ws.dir })).toMatchObject(refused);
    expect(await runCli(["submit", ws.file, "--store", store], { cwd: ws.dir })).toMatchObject({ ...refused, stderr: `${ws.file}:${said}\n1 problem; nothing was submitted\n` });
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  it("ids `__proto__` and `constructor` are stored safely, their logs inside the run folder (case 22)", async () => {
    const ws = await workspace('tasks:\n  __proto__: { run: "echo proto > ran-proto" }\n  constructor: { run: "echo ctor > ran-ctor", dependsOn: __proto__ }\n  toString: { run: "echo str" }\n');
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Summary: 3 succeeded, 0 failed, 0 cancelled/);
    const [runId] = await runIds(ws.logs);
    expect((await readdir(path.join(ws.logs, runId!))).sort()).toEqual([".taskq-run", "__proto__.log", "constructor.log", "toString.log"]);
    expect((await readdir(ws.logs)).length).toBe(1);
    expect(existsSync(path.join(ws.dir, "ran-proto")) && existsSync(path.join(ws.dir, "ran-ctor"))).toBe(true);
    expect(await findLeftovers(runId!)).toEqual([]);
  });

  it("wrong types and values: run, retries, timeout, impossible dates, runAt without a timezone (case 23)", async () => {
    const timeout = "must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit)";
    const iso = "must be a real date and time, ISO 8601 with a timezone, like 2026-12-01T02:00:00Z or 2026-12-01T03:00:00+01:00";
    await rejects(
      [
        "tasks:",
        "  a: { run: 5 }",
        "  b: { run: [touch, ran] }",
        "  c: { run: null }",
        "  d: { run: touch ran, retries: -1 }",
        "  e: { run: touch ran, retries: 1.5 }",
        "  f: { run: touch ran, retries: 1e400 }",
        '  g: { run: touch ran, timeout: "5 minutes" }',
        "  h: { run: touch ran, timeout: -1s }",
        '  i: { run: touch ran, runAt: "2026-02-30T00:00:00Z" }',
        "  j: { run: touch ran, runAt: 2026-12-01T02:00:00 }",
        "",
      ].join("\n"),
      [
        '2:13: task "a": `run` must be a non-empty command string, got 5',
        '3:13: task "b": `run` must be a non-empty command string, got a list; for one command and its arguments, write them as the shell reads them (run: touch ran); for several commands, join them with && (run: touch && ran), which stops at the first that fails, or write them one a line in a | block whose first line is set -e',
        '4:13: task "c": `run` must be a non-empty command string, got nothing (null)',
        '5:33: task "d": `retries` must be an integer from 0 to 100, got -1',
        '6:33: task "e": `retries` must be an integer from 0 to 100, got 1.5',
        '7:33: task "f": `retries` must be an integer from 0 to 100, got 1e400', // as written, not as JavaScript writes the number read (Infinity)
        `8:33: task "g": \`timeout\` ${timeout}, got "5 minutes" (write it without spaces, with the units d, h, m, s and ms: 5m)`,
        `9:33: task "h": \`timeout\` ${timeout}, got "-1s" (a duration cannot be negative)`,
        `10:31: task "i": \`runAt\` ${iso}, got "2026-02-30T00:00:00Z" (February 2026 has 28 days)`,
        `11:31: task "j": \`runAt\` ${iso}, got "2026-12-01T02:00:00" (add a timezone, Z for UTC or an offset like +01:00, as in 2026-12-01T02:00:00Z)`,
      ],
    );
  });

  it("a command, or a variable, longer than Linux starts a process with (32 pages: 128 KiB) is an error at its place, not a task that fails to start once others ran; a byte shorter runs", async () => {
    const limit = 32 * Number(spawnSync("getconf", ["PAGESIZE"], { encoding: "utf8" }).stdout.trim());
    const kib = limit / 1024;
    // With its terminating NUL, one byte over: `run` holds `limit` bytes, `X=<value>` as many.
    const command = `: ${"x".repeat(limit - 2)}`;
    const value = "v".repeat(limit - 2);
    await rejects(["tasks:", "  first: { run: touch ran }", `  long: { run: "${command}", dependsOn: first }`, `  big: { run: "true", env: { X: ${value} }, dependsOn: first }`, ""].join("\n"), [
      `3:16: task "long": \`run\` is ${limit.toLocaleString("en-US")} bytes: Linux starts no process with an argument over ${kib} KiB (E2BIG), so the task could never start: put the command in a script file, got "${command.slice(0, 57)}..."`,
      `4:33: task "big": \`env.X\` is ${(limit - 2).toLocaleString("en-US")} bytes: Linux starts no process with a variable (its name, = and value) over ${kib} KiB (E2BIG), so no task given it could start`,
    ]);
    // A byte shorter each, both start (and the same in the workflow's env and defaults).
    const ws = await workspace(
      ["env: { A: " + "a".repeat(limit - 3) + " }", "defaults: { env: { B: " + "b".repeat(limit - 3) + " } }", "tasks:", `  long: { run: "${command.slice(0, -1)}" }`, `  big: { run: 'test \${#X} -eq ${limit - 3}', env: { X: ${value.slice(1)} } }`, ""].join("\n"),
    );
    expect(await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir })).toMatchObject({ code: 0 });
  });

  it("a value after `! ` (YAML's tag for text, which it drops) is an error at the `!`, not `run: ! grep -q x f` run as `grep -q x f`, its result the other way round", async () => {
    const said = (value: string) => `this \`!\` is YAML's tag for text, which it drops: the value is read as "${value}"; to keep the \`!\` (a shell's "not"), quote the whole value: "! ${value}"`;
    await rejects(
      ["tasks:", "  first: { run: touch ran }", "  check:", "    run: ! grep -q TODO notes.txt", "    dependsOn: first", "  other: { run: ! false, env: { A: !  x }, dependsOn: [first] }", ""].join("\n"),
      [
        `4:10: ${said("grep -q TODO notes.txt")}`,
        `6:17: ${said("false")}; without the \`!\`, quote it too ("false"): unquoted, YAML reads false as a boolean, where a command string is expected`,
        // An env value's `!` is no shell's "not".
        "6:36: this `!` is YAML's tag for text, which it drops: the value is read as \"x\"; to keep the `!`, quote the whole value: \"! x\", or write it without the `!`: x",
      ],
    );
    // Quoted, the `!` is the command's.
    const ws = await workspace('tasks:\n  a: { run: "! false" }\n  b:\n    run: \'! grep -q x /dev/null\'\n');
    expect(await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir })).toMatchObject({ code: 0 });
  });

  it("a runAt in the past runs now, with a note at its position (case 23)", async () => {
    const ws = await workspace('tasks:\n  a: { run: "touch ran", runAt: "2001-01-01T00:00:00Z" }\n');
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`note    ${ws.file}:2:33: task "a": runAt 2001-01-01T00:00:00Z is in the past; the task runs now`);
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(true);
    const [runId] = await runIds(ws.logs);
    expect(await findLeftovers(runId!)).toEqual([]);
  });

  it("a runAt more than 30 days ahead (a wrong year) is refused by run and validate at its position, with how far ahead; one 29 days ahead is taken", async () => {
    const ahead = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
    const far = ahead(400);
    const refused = `2:33: task "a": \`runAt\` ${far} is 400 days from now, past the limit of 30 days ahead (delay has the same limit): check the date, the year most of all`;
    await rejects(`tasks:\n  a: { run: "touch ran", runAt: "${far}" }\n`, [refused]);
    const ws = await workspace(`tasks:\n  a: { run: "touch ran", runAt: "${far}" }\n  b: { run: "touch ran", runAt: "${ahead(29)}" }\n`);
    expect(await runCli(["validate", ws.file], { cwd: ws.dir })).toMatchObject({ code: 2, stdout: "", stderr: `${ws.file}:${refused}\n1 problem\n` });
    await writeFile(ws.file, `tasks:\n  b: { run: "touch ran", runAt: "${ahead(29)}" }\n`);
    expect(await runCli(["validate", ws.file], { cwd: ws.dir })).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 1 task\n`, stderr: "" });
  });

  // validate said ok, and the shell then refused the task's whole command.
  // `( echo in; : <<EOF`, and `: <<EOF` under a `(` on a line above, were said to end the task, as `: <<EOF` outside a subshell does.
  it("a bad substitution in the body of a special builtin's here-document in a subshell is noted by validate and run as ending that subshell; the task goes on, as sh runs it", async () => {
    const ws = await workspace(
      "tasks:\n  a:\n    run: |\n      ( echo in; : <<EOF\n      ${a[0]}\n      EOF\n      echo sub-after\n      )\n      touch after-a\n  b:\n    run: |\n      (\n        : <<EOF\n      ${a[0]}\n      EOF\n        echo sub-after\n      )\n      touch after-b\n",
    );
    const note = (place: string, task: string, line: number): string =>
      `${ws.file}:${place}: task "${task}": run has \${a[0]} (its line ${line}), an array, which /bin/sh (dash) here does not have ("Bad substitution"): a run is run by /bin/sh -c, not bash, so the subshell it is in exits 2 there and runs nothing after it (the here-document is :'s, a special builtin, whose failed redirection ends the subshell); the task goes on (under set -e, it ends there); to write it as text, quote the here-document's delimiter (<<'EOF') or escape it (\\\${, \\$(, a \\ before a backquote)`;
    const notes = [note("3:10", "a", 2), note("11:10", "b", 3)];
    const dash = realpathSync("/bin/sh").endsWith("/dash");
    const validated = await runCli(["validate", ws.file], { cwd: ws.dir });
    if (dash) expect(validated).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 2 tasks\n${notes.map((line) => `note: ${line}\n`).join("")}` });
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(result.code).toBe(0);
    if (dash) for (const line of notes) expect(result.stdout).toContain(`note    ${line}\n`);
    expect(result.stdout).not.toContain("sub-after");
    expect(existsSync(path.join(ws.dir, "after-a")) && existsSync(path.join(ws.dir, "after-b"))).toBe(true);
  });

  it("a run that leaves a quote open is noted by validate at the run, naming the quote; the shell does refuse it, and a run with its quotes closed gets no note", async () => {
    const ws = await workspace('tasks:\n  a:\n    run: echo "unterminated\n  b:\n    run: touch ran "$(echo \'"\')"\n');
    const note = `${ws.file}:3:10: task "a": run leaves a " open, at "unterminated: the shell refuses the whole command (a syntax error: unterminated quoted string) and runs none of it; close it, or write a " meant as text as \\" (or inside '...')`;
    expect(await runCli(["validate", ws.file], { cwd: ws.dir })).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 2 tasks\nnote: ${note}\n` });
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toContain(`note    ${note}\n`);
    expect(result.stdout).toMatch(/Unterminated quoted string/);
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(true);
  });

  it("a plain run over two lines that look like two commands is noted by validate and run at the second line; YAML's one command runs", async () => {
    const ws = await workspace("tasks:\n  a:\n    run: echo one\n      echo two\n  b:\n    run: echo three\n      --four\n");
    const note = `${ws.file}:4:7: task "a": run's lines are joined with spaces into one command, as YAML joins a plain value's lines, so this line is more of the command before it: the shell gets echo one echo two; for one command per line, write run: |, or, to join them on purpose, run: > (no note then)`;
    expect(await runCli(["validate", ws.file], { cwd: ws.dir })).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 2 tasks\nnote: ${note}\n` });
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(result.code).toBe(0);
    // Noted once, for a, not for b, whose second line is an option.
    expect(result.stdout.split("\n").filter((line) => line.includes(" note "))).toEqual([expect.stringMatching(/^\S+ note {4}/)]);
    expect(result.stdout).toContain(`note    ${note}\n`);
    expect(result.stdout).toContain("a | one echo two\n");
    expect(result.stdout).toContain("b | three --four\n");
    const [runId] = await runIds(ws.logs);
    expect(await findLeftovers(runId!)).toEqual([]);
  });

  it("a > run with a line indented more than its first, whose line break YAML keeps, is noted by validate and run at that line; the shell runs it as a command of its own", async () => {
    const ws = await workspace("tasks:\n  a:\n    run: >\n      echo one\n        --two\n");
    const note = `${ws.file}:5:9: task "a": run is a > block, whose lines YAML joins with spaces, but it keeps the line break before a line indented more than the block's first, such as this one, so the shell runs it as a command of its own, not as more of the one before: it gets echo one and then, on a line of its own, --two; indent this line as the block's first line to join it to the command before, or write run: | with a backslash at the end of the line before`;
    expect(await runCli(["validate", ws.file], { cwd: ws.dir })).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 1 task\nnote: ${note}\n` });
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { cwd: ws.dir });
    expect(result.stdout).toContain(`note    ${note}\n`);
    expect(result.stdout).toContain("a | one\n");
    expect(result.stdout).toMatch(/--two: not found/);
  });

  it("a plain or > run with a line that ends in a backslash, which folding makes an escaped space, is refused at the backslash", async () => {
    const fix = "the backslash escapes that space, and does not continue the line; write run: | (a literal block keeps the line break, which the backslash then continues), or drop the backslash";
    await rejects("tasks:\n  a:\n    run: touch \\\n      ran\n  b:\n    run: >\n      touch \\\n      ran\n", [
      `3:16: task "a": \`run\` has a line that ends in a backslash, but YAML joins a plain value's lines with a space, so the shell gets touch \\ ran: ${fix}`,
      `7:13: task "b": \`run\` has a line that ends in a backslash, but YAML joins a > block's lines with a space, so the shell gets touch \\ ran: ${fix}`,
    ]);
  });

  it("a second YAML document is refused at its `---` with the first document's problems, which it hid; an empty first document's nothing is not told", async () => {
    const second = "the file holds more than one YAML document (a second `---`); put the whole workflow in one document; only the first document is checked";
    // Before, the second `---` was all that was told: the first document's problems were met only once it was removed.
    await rejects("tasks:\n  a: { run: touch ran, retries: -1 }\n  b: { run: touch ran, dependsOn: zz }\n---\ntasks:\n  c: { run: touch ran }\n", [
      '2:33: task "a": `retries` must be an integer from 0 to 100, got -1',
      '3:35: task "b" depends on "zz", which is not defined',
      `4:1: ${second}`,
    ]);
    // A YAML error in the first document too; the second document's own is not read.
    await rejects("tasks:\n  a: { run: touch ran\n...\nfoo: [\n", [
      "2:6: this { is never closed with }: yaml read on to 3:1 looking for it",
      "4:1: the file goes on after the `...` at 3:1, which ends its YAML document: what follows it is a second document; put the whole workflow in one document (remove the `...`, or what follows it); only the first document is checked",
    ]);
    // An empty first document, the workflow in the second: it was said that only the first is checked, as if the workflow were.
    const empty = (at: string): string => `the file holds more than one YAML document (a second \`---\`); put the whole workflow in one document; the first document is empty, and the workflow after it is not checked: remove the first \`---\`, at ${at}`;
    await rejects("# generated\n---\n---\ntasks:\n  a: { run: touch ran }\n", [`3:1: ${empty("2:1")}`]);
    await rejects("---\n# nothing\n---\ntasks:\n  a: { run: touch ran, retries: -1 }\n", [`3:1: ${empty("1:1")}`]);
  });

  it("an invisible character in a field name, a task id, an env name or an id in dependsOn is named, with its line and column, and the key it leaves", async () => {
    // Before, the key was quoted with its \u200b and told as unknown beside the one it looks just like ("did you mean "retries"?"): which character, and where, was left to find.
    const words = (code: string, name: string, at: string, leaving: string): string => `it holds an invisible character, ${code} (${name}), at ${at}, which editors do not show: delete it, leaving "${leaving}"`;
    await rejects("tasks:\n  build:\n    run: touch ran\n    ret\u200bries: 2\n    env:\n      F\u200cOO: 1\n  b\u2060t: { run: touch ran }\n  c: { run: touch ran, dependsOn: [bu\ufeffild] }\ntas\u200dks: {}\n", [
      `4:5: task "build": unknown key "ret\\u200bries"; ${words("U+200B", "zero-width space", "4:8", "retries")}`,
      `6:7: task "build": \`env\` name "F\\u200cOO" is not valid; names must match ^[A-Za-z_][A-Za-z0-9_]*$; ${words("U+200C", "zero-width non-joiner", "6:8", "FOO")}`,
      `7:3: invalid task id "b\\u2060t": ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."; ${words("U+2060", "word joiner", "7:4", "bt")}`,
      `8:36: task "c" depends on "bu\\ufeffild", which is not a valid task id: ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."; ${words("U+FEFF", "zero-width no-break space, or byte order mark", "8:38", "build")}`,
      `9:1: unknown key "tas\\u200dks" at the top level; ${words("U+200D", "zero-width joiner", "9:4", "tasks")}`,
    ]);
  });

  it("a bidirectional control, U+180E, U+3164 or U+034F in a key is named, a byte order mark that starts a task id, an id in dependsOn or an env name too, and a duplicate key quotes one", async () => {
    // Before, these were printed raw (`unknown key "ret\u180eries"` showed as "retries"), a leading U+FEFF of an id or a name was not named, and a duplicate key printed its own raw.
    const words = (code: string, name: string, at: string, leaving: string, others = ""): string => `it holds an invisible character, ${code} (${name}), at ${at}${others}, which editors do not show: delete it, leaving "${leaving}"`;
    const rule = 'ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."';
    await rejects("tasks:\n  \ufeffa:\n    run: touch ran\n    env:\n      \ufeffA: 1\n  b:\n    run: touch ran\n    dependsOn: [\ufeffc]\n    env:\n      \u202eB: 1\n  c: { run: touch ran, ret\u3164ries: 1, t\u034fimeout: 1s, \u2066x\u2069: 2, r\u180eun: x }\n", [
      `2:3: invalid task id "\\ufeffa": ${rule}; ${words("U+FEFF", "zero-width no-break space, or byte order mark", "2:3", "a")}`,
      `5:7: task "\\ufeffa": \`env\` name "\\ufeffA" is not valid; names must match ^[A-Za-z_][A-Za-z0-9_]*$; ${words("U+FEFF", "zero-width no-break space, or byte order mark", "5:7", "A")}`,
      `8:17: task "b" depends on "\\ufeffc", which is not a valid task id: ${rule}; ${words("U+FEFF", "zero-width no-break space, or byte order mark", "8:17", "c")}`,
      `10:7: task "b": \`env\` name "\\u202eB" is not valid; names must match ^[A-Za-z_][A-Za-z0-9_]*$; ${words("U+202E", "right-to-left override", "10:7", "B")}`,
      `11:24: task "c": unknown key "ret\\u3164ries"; ${words("U+3164", "Hangul filler", "11:27", "retries")}`,
      `11:37: task "c": unknown key "t\\u034fimeout"; ${words("U+034F", "combining grapheme joiner", "11:38", "timeout")}`,
      `11:51: task "c": unknown key "\\u2066x\\u2069"; ${words("U+2066", "left-to-right isolate", "11:51", "x", " (and 1 more such character)")}`,
      `11:59: task "c": unknown key "r\\u180eun"; ${words("U+180E", "Mongolian vowel separator", "11:60", "run")}`,
    ]);
    const duplicate = (at: string, first: string): string => `${at}: duplicate key "ret\\u200bries" (first defined at ${first}); each must appear once`;
    await rejects("tasks:\n  a:\n    run: touch ran\n    ret\u200bries: 1\n    ret\u200bries: 2\n", [`4:5: task "a": unknown key "ret\\u200bries"; ${words("U+200B", "zero-width space", "4:8", "retries")}`, duplicate("5:5", "4:5")]);
    await rejects('{"tasks": {"a": {"run": "touch ran", "ret\u200bries": 1, "ret\u200bries": 2}}}', [`1:38: task "a": unknown key "ret\\u200bries"; ${words("U+200B", "zero-width space", "1:42", "retries")}`, duplicate("1:53", "1:38")]);
  });

  it("an invisible character written as an escape in a quoted key is not told; one written as itself is, at its place in the key, past no closing quote", async () => {
    // Before, `"a\\u200bb"` was told to hold one at 5:16, in the next line's value, and a key's escaped ones were counted with its literal ones,
    // and deleted with them in what it leaves.
    const words = (code: string, name: string, at: string, others: string, leaving: string): string => `it holds an invisible character, ${code} (${name}), at ${at}${others}, which editors do not show: delete it, leaving "${leaving}"`;
    await rejects('tasks:\n  build:\n    run: touch ran\n    "a\\u200bb": 1\n    run2: echo \u200b hi\n', ['4:5: task "build": unknown key "a\\u200bb"', '5:5: task "build": unknown key "run2"; did you mean "run"?']);
    await rejects('tasks:\n  build:\n    run: touch ran\n    "a\\u200bb\u200cc\u200d": 1\n    \'x\'\'\u2060y\': 2\n', [
      `4:5: task "build": unknown key "a\\u200bb\\u200cc\\u200d"; ${words("U+200C", "zero-width non-joiner", "4:14", " (and 1 more such character)", "a\\u200bbc")}`,
      `5:5: task "build": unknown key "x'\\u2060y"; ${words("U+2060", "word joiner", "5:9", "", "x'y")}`,
    ]);
  });

  it("a full-width colon after a key that is not a plain name (01-fetch, CJK), in a list's item, or in a value read as text, is told as the colon meant", async () => {
    const words = (key: string): string => `the colon after ${key} is a full-width one, \uff1a (U+FF1A, as a Chinese or Japanese input method types it), which YAML reads as text, not as a key's colon; write ${key}: with the ASCII colon`;
    const outOfDependsOn = (key: string): string =>
      `the colon after ${key} is a full-width one, \uff1a (U+FF1A, as a Chinese or Japanese input method types it), which YAML reads as text, not as a key's colon; ${key} is a task's field, not an item of dependsOn: move it out of dependsOn, written ${key}: with the ASCII colon`;
    // Before, each was told without it: "Implicit keys need to be on a single line", "got a list", an unknown key "retries\uff1a 2" meant to be "retries".
    await rejects("tasks:\n  01-fetch\uff1a\n    run: touch ran\n", [`2:3: Implicit keys need to be on a single line: ${words("01-fetch")}`]);
    await rejects("tasks:\n  \u53d6\u5f97\uff1a\n    run: touch ran\n", [`2:3: Implicit keys need to be on a single line: ${words("\u53d6\u5f97")}`]);
    await rejects("tasks:\n  build:\n    - retries\uff1a 2\n", [`3:5: task "build": the task must be a mapping with at least \`run\`, got a list; ${words("retries")}`]);
    await rejects("tasks:\n  a: { run: touch ran, retries\uff1a 2 }\n  b:\n    run: touch ran\n    env:\n      A\uff1a 1\n  c:\n    run: touch ran\n    dependsOn:\n      - retries\uff1a 2\n", [
      `2:24: task "a": unknown key "retries\uff1a 2"; ${words("retries")}`,
      `6:7: task "b": \`env\` must be a mapping of variable names to values, got "A\uff1a 1"; ${words("A")}`,
      `10:9: task "c" depends on "retries\uff1a 2", which is not a valid task id: ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".."; ${outOfDependsOn("retries")}`,
    ]);
    // Where following it would still be wrong, it is not told: a value's text before one that is no key of the mapping its field takes
    // (`timeout: \u65f6\u95f4\uff1a 5m` was told to write \u65f6\u95f4:), an id's in dependsOn that is no task field (`- b\uff1a c`, told to write b:, a mapping there).
    const invalidId = "which is not a valid task id: ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not \".\" or \"..\"";
    await rejects("tasks:\n  a:\n    run: touch ran\n    timeout: \u65f6\u95f4\uff1a 5m\n    backoff:\n      max\uff1a 5s\n    env:\n      \u65f6\u95f4\uff1a 1\n  c:\n    run: touch ran\n    dependsOn:\n      - b\uff1a c\n", [
      '4:14: task "a": `timeout` must be a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 1ms to 30 days, or none (no limit), got "\u65f6\u95f4\uff1a 5m"',
      `6:7: task "a": \`backoff\` must be a mapping with \`base\` and/or \`max\`, got "max\uff1a 5s"; ${words("max")}`,
      '8:7: task "a": `env` must be a mapping of variable names to values, got "\u65f6\u95f4\uff1a 1"',
      `12:9: task "c" depends on "b\uff1a c", ${invalidId}`,
    ]);
    // A value that ends in one is no key: told as the value it is.
    await rejects("tasks:\n  a:\n    run: touch ran\n    retries: 2\uff1a\n", ['4:14: task "a": `retries` must be an integer from 0 to 100, got "2\uff1a"']);
  });

  it("an empty file, several documents, non-string keys, tabs (case 24)", async () => {
    await rejects("", ["1:1: file is empty; a workflow needs a `tasks` mapping"]);
    await rejects("tasks:\n  a: { run: touch ran }\n---\ntasks:\n  b: { run: touch ran }\n", [
      "3:1: the file holds more than one YAML document (a second `---`); put the whole workflow in one document; only the first document is checked",
    ]);
    await rejects("tasks:\n  [a]: { run: touch ran }\n  ok: { run: touch ran }\n", ["2:3: a key must be plain text, not a mapping or list"]);
    await rejects("tasks:\n  ? {x: 1}\n  : { run: touch ran }\n  ok: { run: touch ran }\n", ["2:5: a key must be plain text, not a mapping or list"]);
    await rejects("tasks:\n  a:\n\trun: touch ran\n", ["3:1: Tabs are not allowed as indentation: indent with spaces (an editor set to insert spaces in .yaml files keeps it so)"]);
    await rejects("tasks:\n  a:\n    run: touch ran\n   dependsOn: b\n  b: { run: touch ran }\n", [
      "4:4: All mapping items must start at the same column: line 4 starts at column 4, and run above it at column 5; start it at column 5, as run is",
    ]);
    await rejects("tasks:\n  a:\n    dependsOn:\n      - b\n     - c\n    run: touch ran\n  b: { run: touch ran }\n  c: { run: touch ran }\n", [
      "5:6: A block sequence may not be used as an implicit map key: line 5's - is at column 6, and that of the item above it, - b, at column 7; start it at column 7, as - b is",
    ]);
    // Under a comment, told at the key out of line, not at the comment yaml read its indentation from.
    await rejects("tasks:\n  a:\n    run: touch ran\n   # comment\n\n   dependsOn: b\n  b: { run: touch ran }\n", [
      "6:4: All mapping items must start at the same column: line 6 starts at column 4, and run above it at column 5; start it at column 5, as run is",
    ]);
  });

  // A GitLab CI habit: jobs at the top level, each told only that it was an unknown key.
  it("a task written at the top level, as a GitLab CI job is, is told to go under tasks:, and stages that taskq has none", async () => {
    await rejects("stages: [build, test]\nbuild:\n  stage: build\n  script: touch ran\ntest:\n  run: touch ran\n  needs: [build]\n", [
      "1:1: unknown key \"stages\" at the top level; taskq has no stages: a task waits for those it lists in `dependsOn`",
      "2:1: unknown key \"build\" at the top level; to make it a task, indent it under `tasks:` (tasks: { build: { run: ... } })",
      "5:1: unknown key \"test\" at the top level; to make it a task, indent it under `tasks:` (tasks: { test: { run: ... } })",
    ]);
  });

  // A GitHub Actions job's continue-on-error and shell, GitLab CI's allow_failure and docker compose's
  // working_dir were told only that they were unknown keys, with no word of what to write.
  it("GitHub Actions' continue-on-error and shell, GitLab CI's allow_failure and docker compose's working_dir are told what taskq does instead, and nothing runs", async () => {
    await rejects("tasks:\n  lint:\n    run: touch ran\n    continue-on-error: true\n    shell: bash\n    allow_failure: true\n    working_dir: .\n", [
      "4:5: task \"lint\": unknown key \"continue-on-error\"; taskq has no such option: a task that fails fails the run (exit 1) and cancels its dependents; to let a command fail without that, end the task's run with || true (the task then succeeds whatever the command's exit code)",
      "5:5: task \"lint\": unknown key \"shell\"; every task's run is run by /bin/sh -c, and a task has no shell to choose: for bash, write run: bash -c '...', or run a script file that begins with #!/bin/bash",
      "6:5: task \"lint\": unknown key \"allow_failure\"; taskq has no such option: a task that fails fails the run (exit 1) and cancels its dependents; to let a command fail without that, end the task's run with || true (the task then succeeds whatever the command's exit code)",
      '7:5: task "lint": unknown key "working_dir"; did you mean "cwd"?',
    ]);
  });

  // A GitHub Actions step's name, or a description, in a task was told only that it was an unknown key.
  it("a task's name or description is told that the id names the task, and that a comment or an x- key keeps more, and nothing runs", async () => {
    const said = "a task is named by its id, its key under tasks:, which its log file and the run's lines name it by; to keep a longer name or a description beside it, write it in a YAML comment, or under a key that starts with x- (x-description: ...), which taskq ignores";
    await rejects("name: ci\ntasks:\n  lint:\n    name: Lint the code\n    run: touch ran\n    description: eslint\n", [`4:5: task "lint": unknown key "name"; ${said}`, `6:5: task "lint": unknown key "description"; ${said}`]);
  });

  // GitHub Actions habits, each told only that it was an unknown key, and a misspelt command that it was.
  it("GitHub Actions' on, runs-on and steps are told what taskq does instead, and a run misspelt comand is told it means run", async () => {
    await rejects("on: push\ntasks:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: touch ran\n  test:\n    comand: touch ran\n", [
      '1:1: unknown key "on" at the top level; taskq has no triggers: a workflow runs when `taskq run` is given it, so call that from what starts it (a CI job, a git hook, cron)',
      '3:3: task "build": `run` is missing; it must be a non-empty command string',
      '4:5: task "build": unknown key "runs-on"; there is no runner to choose: tasks run on the machine taskq runs on (with run --store, on the worker that leases them); remove it',
      '5:5: task "build": unknown key "steps"; a task runs one command, its `run`: write the steps\' commands there, joined with && (run: npm ci && npm test), or one a line in a | block whose first line is set -e; or make each step a task that dependsOn the one before',
      '8:5: task "test": unknown key "comand"; did you mean "run"?',
    ]);
  });

  // GitLab CI's script is a list of commands: `run` given one was told only "got a list".
  it("a run written as a list of commands, as GitLab CI's script is, is told to join them with && or write them in a | block", async () => {
    await rejects("tasks:\n  test:\n    run:\n      - touch ran\n      - npm test\n", [
      '4:7: task "test": `run` must be a non-empty command string, got a list; for several commands, join them with && (run: touch ran && npm test), which stops at the first that fails, or write them one a line in a | block whose first line is set -e',
    ]);
  });

  // `taskq run ci.yaml` where the file is ci.yml said only "ENOENT (no such file)".
  it("a workflow file that is not there names the YAML file of its folder named almost so (ci.yml for ci.yaml), or says its folder is not there either", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran }\n", "ci.yml");
    await mkdir(path.join(ws.dir, "deploy"));
    await writeFile(path.join(ws.dir, "deploy", "Pipeline.yaml"), "tasks:\n  a: { run: touch ran }\n");
    for (const [given, said] of [
      ["ci.yaml", "; did you mean ci.yml?"],
      ["./ci.yaml", "; did you mean ./ci.yml?"],
      ["deploy/pipline.yaml", "; did you mean deploy/Pipeline.yaml?"],
      [path.join(ws.dir, "ci.yaml"), `; did you mean ${path.join(ws.dir, "ci.yml")}?`],
      ["build/ci.yaml", "; its folder, build, does not exist either"],
      // Quoted, or from a CI variable: no shell expanded the ~ (it said only that a folder "~" does not exist).
      ["~/ci.yml", `; its folder, ~, does not exist either: a ~ no shell expanded (quoted, or from a variable) is not the home folder; give its path, ${path.join(ws.dir, "ci.yml")}`],
      ["~/deploy/Pipeline.yaml", `; its folder, ~/deploy, does not exist either: a ~ no shell expanded (quoted, or from a variable) is not the home folder; give its path, ${path.join(ws.dir, "deploy", "Pipeline.yaml")}`],
      // Nothing named near it: nothing suggested.
      ["release.yaml", ""],
    ] as const) {
      const result = await runCli(["run", given, "--log-dir", ws.logs], { cwd: ws.dir, env: { HOME: ws.dir } });
      expect(result, given).toMatchObject({ code: 2, stdout: "", stderr: `${given}:1:1: cannot read file: no such file (ENOENT)${said}\n1 problem; nothing was run\n` });
    }
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
    expect(await runIds(ws.logs)).toEqual([]);
  });

  // `taskq run workflows/` was told only that it is a directory.
  it("a folder given as the workflow file names the YAML files in it to give instead", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran }\n", "ci.yml");
    for (const name of ["b.yaml", "c.yaml", "d.yaml"]) await writeFile(path.join(ws.dir, name), "tasks:\n  a: { run: touch ran }\n");
    await mkdir(path.join(ws.dir, "empty"));
    for (const [given, said] of [
      ["empty", "; give a workflow file, not a folder"],
      [".", "; give one of its workflow files: b.yaml, c.yaml, ci.yml (and 1 more)"],
      [ws.dir, `; give one of its workflow files: ${["b.yaml", "c.yaml", "ci.yml"].map((name) => path.join(ws.dir, name)).join(", ")} (and 1 more)`],
    ] as const) {
      const result = await runCli(["run", given, "--log-dir", ws.logs], { cwd: ws.dir });
      expect(result, given).toMatchObject({ code: 2, stdout: "", stderr: `${given}:1:1: cannot read file: it is a directory${said}\n1 problem; nothing was run\n` });
    }
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
    expect(await runIds(ws.logs)).toEqual([]);
  });

  it("file and folder names taskq adds to an error (a file meant, a folder's files, a --log-dir) have their control characters written out, not obeyed", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran }\n", "ok.yaml");
    const folder = path.join(ws.dir, "d");
    await mkdir(folder);
    // A bell, and a bidi override that would show the rest of the line reversed.
    for (const name of ["ci\u0007.yml", "\u202eci.yml"]) await writeFile(path.join(folder, name), "tasks:\n  a: { run: touch ran }\n");
    // eslint-disable-next-line no-control-regex -- control characters are what is checked
    const noControls = (text: string) => expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u202a-\u202e]/);
    const meant = await runCli(["validate", "d/ci.yaml"], { cwd: ws.dir });
    expect(meant).toMatchObject({ code: 2, stderr: "d/ci.yaml:1:1: cannot read file: no such file (ENOENT); did you mean d/ci\\u0007.yml?\n1 problem\n" });
    const files = await runCli(["run", "d", "--log-dir", ws.logs], { cwd: ws.dir });
    expect(files).toMatchObject({ code: 2, stderr: "d:1:1: cannot read file: it is a directory; give one of its workflow files: d/ci\\u0007.yml, d/\\u202eci.yml\n1 problem; nothing was run\n" });
    // Among several files, each told in turn.
    const several = await runCli(["validate", "d/ci.yaml", "ok.yaml", "\u001b[31mred/x.yaml"], { cwd: ws.dir });
    expect(several.code).toBe(2);
    noControls(several.stderr);
    expect(several.stderr).toContain("its folder, \\u001b[31mred, does not exist either\n");
    const logDir = await runCli(["run", "ok.yaml", "--log-dir", "/proc/\u001b[2Jx"], { cwd: ws.dir });
    expect(logDir.code).toBe(1);
    noControls(logDir.stderr);
    expect(logDir.stderr).toMatch(/^taskq: cannot create the log folder \/proc\/\\u001b\[2Jx\//);
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  it("invalid UTF-8, a BOM, CRLF line endings: line numbers still right (case 24)", async () => {
    const bad = Buffer.concat([Buffer.from("tasks:\n  a: { run: touch ran\u00e9"), Buffer.from([0xff]), Buffer.from(" }\n")]);
    await rejects(bad, ["2:23: the file is not valid UTF-8 (byte 0xff at byte offset 30); save it as UTF-8"]);
    await rejects("\uFEFFtasks:\r\n  a:\r\n    run: touch ran\r\n  b:\r\n    run: touch ran\r\n    retries: many\r\n", [
      '6:14: task "b": `retries` must be an integer from 0 to 100, got "many"',
    ]);
    await rejects("\uFEFFtasks: { a: { run: 1 } }\r\n", ['1:20: task "a": `run` must be a non-empty command string, got 1']);
  });
});
