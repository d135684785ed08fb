import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { durationFlag } from "../../src/cli/flags.js";
import { formatMs } from "../../src/engine/errors.js";
import { parseWorkflow } from "../../src/loaders/index.js";
import { NOW, parse, problemsOf, yaml } from "./helpers.js";

const example = yaml(
  "name: ci",
  "concurrency: 4",
  "env: { NODE_ENV: test }",
  "defaults:",
  "  retries: 1",
  "  timeout: 10m",
  "tasks:",
  "  install:",
  "    run: npm ci",
  "    priority: high",
  "  lint:",
  "    run: npm run lint",
  "    dependsOn: [install]",
  "  test:",
  "    run: npm test",
  "    dependsOn: install",
  "    retries: 2",
  "    retryOn: [1, 75]",
  "    backoff: { base: 1s, max: 30s }",
  "    timeout: 5m",
  "  deploy:",
  "    run: ./deploy.sh",
  "    dependsOn: [lint, test]",
  "    runAt: 2026-01-15T02:00:00Z",
  "    env: { TARGET: prod }",
  "    cwd: infra",
  "    type: shell",
);

describe("parseWorkflow on a valid file", () => {
  /** The notes of a workflow whose one task runs `run`. */
  const notesOf = (run: string) => parseWorkflow(yaml("tasks:", "  a:", `    run: ${JSON.stringify(run)}`), "/work/wf/ci.yaml", { now: NOW }).notes;
  /** How /bin/sh ends `run`, and whether it said it found no command named `npm<U+00A0>test`. */
  const sh = (run: string) => {
    const result = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", cwd: tmpdir() });
    return { status: result.status, notFound: /npm\u00a0test.{0,3}(: not found|: No such file or directory)/.test(result.stderr) };
  };
  it("returns the documented example as an engine-ready Workflow", () => {
    const workflow = parse(example);
    expect(workflow).toEqual({
      file: "/work/wf/ci.yaml",
      folder: "/work/wf",
      name: "ci",
      concurrency: 4,
      notes: [],
      tasks: [
        { id: "install", type: "shell", run: "npm ci", priority: "high", retries: 1, timeoutMs: 600_000, backoff: { baseMs: 1000, maxMs: 30_000 }, env: { NODE_ENV: "test" }, cwd: "/work/wf", dependsOn: [] },
        { id: "lint", type: "shell", run: "npm run lint", priority: "normal", retries: 1, timeoutMs: 600_000, backoff: { baseMs: 1000, maxMs: 30_000 }, env: { NODE_ENV: "test" }, cwd: "/work/wf", dependsOn: ["install"] },
        { id: "test", type: "shell", run: "npm test", priority: "normal", retries: 2, retryOn: [1, 75], timeoutMs: 300_000, backoff: { baseMs: 1000, maxMs: 30_000 }, env: { NODE_ENV: "test" }, cwd: "/work/wf", dependsOn: ["install"] },
        {
          id: "deploy", type: "shell", run: "./deploy.sh", priority: "normal", retries: 1, timeoutMs: 600_000, backoff: { baseMs: 1000, maxMs: 30_000 },
          runAt: Date.parse("2026-01-15T02:00:00Z"), env: { NODE_ENV: "test", TARGET: "prod" }, cwd: "/work/wf/infra", dependsOn: ["lint", "test"],
        },
      ],
    });
  });

  // As docker compose's: `x-` keys hold anchors the fields below use.
  it("ignores keys that start with x- at the top level, in defaults and in a task, so they can hold YAML anchors; a task id x-... is still a task", () => {
    const text = yaml(
      "x-env: &env { STAGE: ci }",
      "x-build: &build make -j4",
      "defaults:",
      "  x-retries: &retries 2",
      "  retries: *retries",
      "tasks:",
      "  a:",
      "    x-owner: [me, { team: ci }]",
      "    run: *build",
      "    env: *env",
      "  x-deploy: { run: x, dependsOn: a, x-note: later }",
    );
    const plain = yaml("x-note: this file is CI's", "defaults: { x-note: n, retries: 2 }", "tasks:", "  a:", "    x-owner: me", "    run: make -j4", "    env: { STAGE: ci }", "  x-deploy: { run: x, dependsOn: a, x-note: later }");
    for (const [written, simple] of [[text, true], [text, false], [plain, true], [plain, false]] as const) {
      const workflow = parseWorkflow(written, "/work/wf/ci.yaml", { now: NOW, simple });
      expect(workflow.tasks.map((task) => [task.id, task.run, task.retries, task.env, task.dependsOn])).toEqual([
        ["a", "make -j4", 2, { STAGE: "ci" }, []],
        ["x-deploy", "x", 2, {}, ["a"]],
      ]);
      expect(workflow.notes).toEqual([]);
    }
    // Only x-: other unknown keys (and x- in backoff or env) are still errors, at their place.
    const wrong = yaml("x-a: 1", "tasks:", "  a: { run: x, x_b: 1, backoff: { x-c: 1 } }");
    const problems = ['3:16: task "a": unknown key "x_b"', '3:35: task "a": unknown key "x-c" in `backoff`'];
    expect(problemsOf(wrong)).toEqual(problems);
    expect(problemsOf(wrong, "wf.yaml", { simple: false })).toEqual(problems);
  });

  // YAML 1.1's merge keys, as docker compose and GitLab CI files use them; the fast reader declines them, so yaml reads each file.
  it("merges the mappings a `<<` names, as YAML 1.1 does: the mapping's own keys win, wherever they stand, then the first mapping merged", () => {
    const text = yaml(
      "x-defaults: &base { retries: 2, timeout: 5m, priority: low }",
      "x-fast: &fast { retries: 0, timeout: 1m, priority: high, cwd: src }",
      "x-env: &env { STAGE: ci, LEVEL: 1 }",
      "x-both: &both [*fast, *base]",
      "defaults: { <<: { retries: 1 } }",
      "tasks:",
      "  build: { <<: *base, run: make }",
      "  test:",
      "    retries: 3",
      "    <<: [*fast, *base]",
      "    run: make test",
      "    priority: normal",
      "    env: { <<: *env, LEVEL: 2 }",
      "  lint:",
      "    <<: *fast",
      "    <<: *base",
      "    run: eslint",
      "  plain: { run: x }",
      "  deploy: { <<: *both, run: ./deploy }",
    );
    for (const simple of [true, false]) {
      const workflow = parseWorkflow(text, "/work/wf/ci.yaml", { now: NOW, simple });
      expect(workflow.tasks.map((task) => [task.id, task.run, task.retries, task.timeoutMs, task.priority, task.cwd, task.env])).toEqual([
        ["build", "make", 2, 300_000, "low", "/work/wf", {}],
        ["test", "make test", 3, 60_000, "normal", "/work/wf/src", { STAGE: "ci", LEVEL: "2" }],
        ["lint", "eslint", 0, 60_000, "high", "/work/wf/src", {}],
        ["plain", "x", 1, undefined, "normal", "/work/wf", {}],
        ["deploy", "./deploy", 0, 60_000, "high", "/work/wf/src", {}],
      ]);
      expect(workflow.notes).toEqual([]);
    }
  });

  it("merges tasks into `tasks` with `<<`: a task written there too is the one written, at its place; ids merged keep the `<<`'s place in file order", () => {
    const text = yaml(
      "x-more: &more",
      "  lint: { run: eslint }",
      "  build: { run: merged }",
      "tasks:",
      "  setup: { run: ./setup }",
      "  <<: *more",
      "  build: { run: make }",
    );
    const workflow = parseWorkflow(text, "/work/wf/ci.yaml", { now: NOW });
    expect(workflow.tasks.map((task) => [task.id, task.run])).toEqual([
      ["setup", "./setup"],
      ["lint", "eslint"],
      ["build", "make"],
    ]);
  });

  it("reads a quoted \"<<\" as a key like any other, not a merge key, as YAML 1.1 does", () => {
    const text = yaml("x-base: &base { retries: 2 }", "tasks:", '  a: { "<<": *base, run: x }');
    const problem = ['3:8: task "a": unknown key "<<"; quoted, it is a key like any other: write it unquoted (<<: *base) to merge a mapping into this one'];
    expect(problemsOf(text)).toEqual(problem);
    expect(problemsOf(yaml("tasks:", '  a: { "<<": 1, run: x }'))).toEqual(['2:8: task "a": unknown key "<<"; quoted, it is a key like any other: write it unquoted (<<: *base) to merge a mapping into this one']);
  });

  it("reads the top-level failFast, true or false, by the fast reader and by yaml alike; without it the workflow has none (the run's default: off)", () => {
    for (const simple of [true, false]) {
      const of = (...lines: string[]) => parseWorkflow(yaml(...lines, "tasks:", "  a: { run: x }"), "/work/wf/ci.yaml", { now: NOW, simple });
      expect(of("failFast: true").failFast).toBe(true);
      expect(of("failFast: false").failFast).toBe(false);
      expect(of("concurrency: 2").failFast).toBeUndefined();
      expect(of("failFast: True", "concurrency: 2")).toMatchObject({ failFast: true, concurrency: 2 });
    }
    expect(parseWorkflow('{"failFast": true, "tasks": {"a": {"run": "x"}}}', "/work/wf/ci.json", { now: NOW }).failFast).toBe(true);
  });

  it("orders tasks topologically, breaking ties by file order", () => {
    const workflow = parse(yaml("tasks:", "  c: { run: x, dependsOn: [b] }", "  b: { run: x }", "  a: { run: x }", "  d: { run: x, dependsOn: [a] }"));
    expect(workflow.tasks.map((task) => task.id)).toEqual(["b", "c", "a", "d"]);
  });

  it("keeps file order for numeric ids, which YAML reads as numbers", () => {
    const workflow = parse(yaml("tasks:", "  b: { run: x }", "  2: { run: x }", "  1: { run: x }", "  0x1F: { run: x }"));
    expect(workflow.tasks.map((task) => task.id)).toEqual(["b", "2", "1", "0x1F"]);
  });

  it("reads numbers and booleans in dependsOn as written, as ids are as keys", () => {
    const workflow = parse(yaml("tasks:", "  1: { run: x }", "  true: { run: x }", "  1.0: { run: x }", "  null: { run: x }", "  a: { run: x, dependsOn: [1, true, 1.0, 'null'] }", "  b: { run: x, dependsOn: 1.0 }"));
    expect(workflow.tasks.map((task) => [task.id, task.dependsOn])).toEqual([
      ["1", []],
      ["true", []],
      ["1.0", []],
      ["null", []],
      ["a", ["1", "true", "1.0", "null"]],
      ["b", ["1.0"]],
    ]);
    // A number that is not an integer, as written: `1.5:` is the id "1.5", so `1.5` names it too, in a list or alone.
    const decimal = parse(yaml("tasks:", "  1.5: { run: x }", "  2.25: { run: x }", "  a: { run: x, dependsOn: [1.5, 2.25] }", "  b: { run: x, dependsOn: 1.5 }"));
    expect(decimal.tasks.map((task) => [task.id, task.dependsOn])).toEqual([
      ["1.5", []],
      ["2.25", []],
      ["a", ["1.5", "2.25"]],
      ["b", ["1.5"]],
    ]);
  });

  it("takes a base over the default max as the max too, where nothing sets max", () => {
    const workflow = parse(yaml("defaults: { backoff: { base: 1m } }", "tasks:", "  a: { run: x }", "  b: { run: x, backoff: { base: 10ms } }"));
    expect(workflow.tasks.map((task) => task.backoff)).toEqual([
      { baseMs: 60_000, maxMs: 60_000 },
      { baseMs: 10, maxMs: 30_000 },
    ]);
  });

  it("notes a cwd with ~ or a $VARIABLE, which is taken as written, not expanded as a shell would, once per place it is written, whether or not the task depends on others", () => {
    const workflow = parse(yaml("defaults: { cwd: $HOME/app }", "tasks:", "  a: { run: x }", "  b: { run: x, cwd: ~/src, dependsOn: [a] }", "  c: { run: x, cwd: ~ci/x }", "  d: { run: x, cwd: 'a~b$' }"));
    expect(workflow.tasks.map((task) => task.cwd)).toEqual(["/work/wf/$HOME/app", "/work/wf/~/src", "/work/wf/~ci/x", "/work/wf/a~b$"]);
    const note = (where: string, owner: string, written: string, example: string) =>
      `/work/wf/ci.yaml:${where}: ${owner}: cwd "${written}" is taken as written, not expanded as a shell would expand ~ and $VARIABLES: it names the folder /work/wf/${written}; write the folder's path, or change to it in the run (run: cd ${example} && ...)`;
    expect(workflow.notes).toEqual([note("1:18", "defaults", "$HOME/app", '"$HOME/app"'), note("4:21", 'task "b"', "~/src", "~/src"), note("5:21", 'task "c"', "~ci/x", "~ci/x")]);
  });

  it("notes a retryOn that lists 126 or 127, which are never retried, once per place it is written", () => {
    const workflow = parse(yaml("defaults: { retries: 1, retryOn: [1, 127] }", "tasks:", "  a: { run: x }", "  b: { run: x }", "  c: { run: x, retryOn: [126, 127, 75] }", "  d: { run: x, retryOn: [1] }"));
    expect(workflow.tasks.map((task) => task.retryOn)).toEqual([[1, 127], [1, 127], [126, 127, 75], [1]]);
    expect(workflow.notes).toEqual([
      "/work/wf/ci.yaml:1:34: defaults: retryOn lists 127: exit codes 126 and 127 (not executable, not found) are never retried",
      '/work/wf/ci.yaml:5:25: task "c": retryOn lists 126 and 127: exit codes 126 and 127 (not executable, not found) are never retried',
    ]);
  });

  it("notes a task's retryOn or backoff where no retries are set, its own or in defaults: its one attempt is never retried", () => {
    const workflow = parse(
      yaml(
        "tasks:",
        "  a: { run: x, retryOn: [75] }",
        "  b: { run: x, backoff: { base: 5s }, retryOn: [1] }",
        "  c: { run: x, retries: 0, retryOn: [75] }",
        "  d: { run: x, retries: 2, retryOn: [75] }",
        "  e: { run: x, retryOn: any }",
      ),
    );
    expect(workflow.tasks.map((task) => [task.id, task.retries])).toEqual([["a", 0], ["b", 0], ["c", 0], ["d", 2], ["e", 0]]);
    const note = (where: string, id: string, key: string) =>
      `/work/wf/ci.yaml:${where}: task "${id}": ${key} does nothing without retries (which default to 0): the task makes one attempt, never retried; add retries: N for up to N more attempts`;
    // c's retries: 0 is written: a retry turned off on purpose, not forgotten.
    expect(workflow.notes).toEqual([note("2:25", "a", "retryOn"), note("3:25", "b", "backoff"), note("3:48", "b", "retryOn")]);
    // retries set in defaults: nothing to note.
    expect(parse(yaml("defaults: { retries: 1 }", "tasks:", "  a: { run: x, retryOn: [75], backoff: { base: 5s } }")).notes).toEqual([]);
  });

  it("notes a retryOn or backoff of defaults where neither defaults nor any task that takes it sets retries: each of those tasks makes one attempt", () => {
    const note = (where: string, key: string) =>
      `/work/wf/ci.yaml:${where}: defaults: ${key} does nothing without retries (which default to 0): the tasks that take it make one attempt each, never retried; add retries: N to defaults for up to N more attempts`;
    // Before, no word: every task failed once, never retried.
    const workflow = parse(yaml("defaults: { retryOn: [75], backoff: { base: 5s } }", "tasks:", "  a: { run: x }", "  b: { run: x }"));
    expect(workflow.tasks.map((task) => [task.retries, task.retryOn])).toEqual([
      [0, [75]],
      [0, [75]],
    ]);
    expect(workflow.notes).toEqual([note("1:22", "retryOn"), note("1:37", "backoff")]);
    expect(workflow.taskNotes?.map((taskNote) => taskNote.tasks)).toEqual([
      ["a", "b"],
      ["a", "b"],
    ]);
    // Said of the tasks that take it: one with its own retryOn (any too) takes no part in defaults', nor one with its own
    // backoff of both bounds in defaults' backoff; those of them that set retries leave the note as it is.
    const own = parse(
      yaml(
        "defaults: { retryOn: [75], backoff: { max: 1m } }",
        "tasks:",
        "  a: { run: x }",
        "  b: { run: x, retries: 2, retryOn: [1], backoff: { base: 1s, max: 5s } }",
        "  c: { run: x, retryOn: any }",
      ),
    );
    expect(own.notes).toEqual([note("1:22", "retryOn"), note("1:37", "backoff")]);
    expect(own.taskNotes?.map((taskNote) => [taskNote.owner, taskNote.tasks])).toEqual([
      ["defaults", ["a"]],
      ["defaults", ["a", "c"]],
    ]);
    // retries in defaults, or in a task that takes the value (its own backoff with one bound takes defaults' other): it does
    // something, and the value is one for the tasks that retry (retryOn as their filter), which the others take as meant.
    for (const file of [
      yaml("defaults: { retries: 1, retryOn: [75], backoff: { base: 5s } }", "tasks:", "  a: { run: x }"),
      yaml("defaults: { retries: 0, retryOn: [75] }", "tasks:", "  a: { run: x }"),
      yaml("defaults: { retryOn: [75] }", "tasks:", "  a: { run: x }", "  b: { run: x, retries: 1 }"),
      yaml("defaults: { backoff: { max: 1m } }", "tasks:", "  a: { run: x }", "  b: { run: x, retries: 1, backoff: { base: 2s } }"),
      // `any`, every failure, is told as a task's own is: not at all.
      yaml("defaults: { retryOn: any }", "tasks:", "  a: { run: x }"),
    ]) {
      expect(parse(file).notes).toEqual([]);
    }
    // A task whose own backoff sets the one bound defaults' sets takes none of it: its retries leave defaults' note as it is.
    expect(parse(yaml("defaults: { backoff: { max: 1m } }", "tasks:", "  a: { run: x }", "  b: { run: x, retries: 1, backoff: { max: 5s } }")).notes).toEqual([note("1:22", "backoff")]);
    // No task takes it: each task's own retryOn is noted, not defaults'.
    expect(parse(yaml("defaults: { retryOn: [75] }", "tasks:", "  a: { run: x, retryOn: [1] }")).notes).toEqual([
      '/work/wf/ci.yaml:3:25: task "a": retryOn does nothing without retries (which default to 0): the task makes one attempt, never retried; add retries: N for up to N more attempts',
    ]);
    // After a note building adds at the same place, as before.
    expect(parse(yaml("defaults: { retryOn: [127] }", "tasks:", "  a: { run: x }")).notes).toEqual([
      "/work/wf/ci.yaml:1:22: defaults: retryOn lists 127: exit codes 126 and 127 (not executable, not found) are never retried",
      note("1:22", "retryOn"),
    ]);
  });

  // 2000 tasks of long runs, read with the note in 0.2-0.5 s: given 120 s.
  it("finds the note on defaults' retryOn before building the tasks: a file with it is built once, as one with a note found before building", async () => {
    const { bestOfAlternating } = await import("../helpers/timing.js");
    const run = Array.from({ length: 20 }, (_, step) => `echo "step ${step}" && test -f out-${step}.txt`).join(" && ");
    const tasks = Array.from({ length: 2000 }, (_, index) => `  t${index}:\n    run: ${run} && make build-${index}\n`).join("");
    // The note's place is asked for once the tasks are known; on the fast reader's path that sends the file to be read
    // with positions. Before, it was asked for after every task was built, and the tasks were built again: 1.4-2x.
    const defaults = `defaults: { retryOn: [75] }\ntasks:\n${tasks}`;
    // A note on env, found before any task is built: the same reading twice, the same building once.
    const env = `env: { TASKQ_RUN_ID: x }\ndefaults: { retryOn: [75], retries: 1 }\ntasks:\n${tasks}`;
    const read = (text: string) => parseWorkflow(text, "/work/wf/ci.yaml", { now: NOW });
    expect(read(defaults).notes).toEqual([expect.stringContaining("/work/wf/ci.yaml:1:22: defaults: retryOn does nothing without retries")]);
    expect(read(env).notes).toEqual([expect.stringContaining("/work/wf/ci.yaml:1:22: env: TASKQ_RUN_ID is set by taskq")]);
    // Side by side, best of seven rounds alternating: 0.95-1.05x now, 1.7-2x before.
    const [defaultsMs, envMs] = bestOfAlternating(1, () => read(defaults), () => read(env), 7);
    expect(defaultsMs).toBeLessThan(1.35 * envMs);
  }, 120_000);

  it("takes a max under the default base as the base too, where nothing sets base", () => {
    const workflow = parse(yaml("defaults: { backoff: { max: 100ms } }", "tasks:", "  a: { run: x }", "  b: { run: x, backoff: { max: 5s } }", "  c: { run: x, backoff: { base: 50ms } }"));
    expect(workflow.tasks.map((task) => task.backoff)).toEqual([
      { baseMs: 100, maxMs: 100 },
      { baseMs: 1000, maxMs: 5000 },
      { baseMs: 50, maxMs: 100 },
    ]);
  });

  it("stores ids like __proto__ and constructor as plain data", () => {
    const workflow = parse(yaml("tasks:", "  __proto__: { run: a }", "  constructor: { run: b, dependsOn: __proto__ }"));
    expect(workflow.tasks.map((task) => [task.id, task.run, task.dependsOn])).toEqual([["__proto__", "a", []], ["constructor", "b", ["__proto__"]]]);
    expect(({} as Record<string, unknown>).run).toBeUndefined();
  });

  it("merges env (workflow, then defaults, then task) and converts integers and booleans to strings", () => {
    const workflow = parse(yaml("env: { A: 1, B: top, C: top }", "defaults: { env: { B: defaults, FLAG: true } }", "tasks:", "  t: { run: x, env: { C: task } }"));
    expect({ ...workflow.tasks[0]!.env }).toEqual({ A: "1", B: "defaults", C: "task", FLAG: "true" });
  });

  it("lets a task override defaults field by field, backoff included", () => {
    const workflow = parse(yaml("defaults: { priority: low, backoff: { base: 2s, max: 1m }, retryOn: [3], cwd: sub }", "tasks:", "  t: { run: x, backoff: { max: 90s } }"));
    expect(workflow.tasks[0]).toMatchObject({ priority: "low", backoff: { baseMs: 2000, maxMs: 90_000 }, retryOn: [3], cwd: "/work/wf/sub" });
  });

  it("gives its notes in the file's order, as its problems, not in the order the tasks start", () => {
    const workflow = parse(yaml("defaults: { retryOn: [127], env: { TASKQ_RUN_ID: x }, retries: 1 }", "tasks:", "  b: { run: x, dependsOn: [a, a] }", "  a: { run: x, dependsOn: [c, c] }", "  c: { run: x }"));
    expect(workflow.tasks.map((task) => task.id)).toEqual(["c", "a", "b"]);
    expect(workflow.notes.map((note) => /^\/work\/wf\/ci\.yaml:(\d+:\d+):/.exec(note)?.[1])).toEqual(["1:22", "1:50", "3:31", "4:31"]);
  });

  it("lets a task undo the limit and the list defaults set: timeout: none, retryOn: any; defaults' are kept by the others", () => {
    const workflow = parse(yaml("defaults: { timeout: 10m, retryOn: [3, 127], retries: 1 }", "tasks:", "  a: { run: x }", "  b: { run: x, timeout: none, retryOn: any }", "  c: { run: x, timeout: 5s }"));
    expect(workflow.tasks.map((task) => [task.id, task.timeoutMs, task.retryOn])).toEqual([
      ["a", 600_000, [3, 127]],
      ["b", undefined, undefined],
      ["c", 5000, [3, 127]],
    ]);
    // The 127 of defaults is noted once, where it is written, and b takes no part in it.
    expect(workflow.notes).toEqual(["/work/wf/ci.yaml:1:36: defaults: retryOn lists 127: exit codes 126 and 127 (not executable, not found) are never retried"]);
  });

  it("keeps a delay for the run's start to resolve, and a task's runAt replaces a delay from defaults", () => {
    const workflow = parse(yaml("defaults: { delay: 1h30m }", "tasks:", "  a: { run: x }", "  b: { run: x, runAt: '2026-01-20T12:00:00+02:00' }"));
    expect(workflow.tasks.map((task) => [task.runAt, task.delayMs])).toEqual([
      [undefined, 5_400_000],
      [Date.parse("2026-01-20T10:00:00Z"), undefined],
    ]);
  });

  it("notes a no-break space (U+00A0) in a run's command name, which the shell reads as part of the name (exit 127): at it, or at a block with its line; not one the shell reads as text or in an argument", () => {
    const note = (at: string, after: string, line = "") =>
      `/work/wf/ci.yaml:${at}: task "a": run holds a no-break space (U+00A0) after "${after}"${line}, in a command's name: the shell reads it as part of the name, not as a space between words, and finds no such command (exit 127); replace it with a space`;
    for (const simple of [true, false]) {
      const options = { now: NOW, simple };
      // Before, validate said ok without a word, and the task failed with 127.
      expect(parseWorkflow(yaml("tasks:", "  a:", "    run: make\u00a0&&\u00a0make test"), "/work/wf/ci.yaml", options).notes).toEqual([note("3:14", "make")]);
      expect(parseWorkflow(yaml("tasks:", "  a:", "    run: |", '      echo "5\u00a0eur"  # a\u00a0b', "      make\u00a0all"), "/work/wf/ci.yaml", options).notes).toEqual([note("3:10", "make", " (its line 2)")]);
      expect(parseWorkflow(yaml("tasks:", "  a:", "    run: echo '5\u00a0eur'"), "/work/wf/ci.yaml", options).notes).toEqual([]);
      // A command's name after ;, |, a line's start, an assignment or a redirection.
      expect(parseWorkflow(yaml("tasks:", "  a:", "    run: cd x; npm\u00a0test"), "/work/wf/ci.yaml", options).notes).toEqual([note("3:19", "cd x; npm")]);
      expect(parseWorkflow(yaml("tasks:", "  a:", "    run: |", "      make", "      FOO=1 >log npm\u00a0test | tee out"), "/work/wf/ci.yaml", options).notes).toEqual([note("3:10", "FOO=1 >log npm", " (its line 2)")]);
    }
    // Before, each was noted, though each runs as written: a here-document's body, quotes after a backquote or inside ${...:-'...'}, a comment after ;, an argument.
    const valid = [
      ["run: |", "  cat > p.txt <<EOF", "  Price: 5\u00a0EUR", "  EOF", "  make"],
      ["run: |", "  cat > p.txt <<'EOF'", "  Price: 5\u00a0EUR", "  EOF"],
      ["run: |", "  cat <<-EOF", "  \tPrice: 5\u00a0EUR", "  \tEOF"],
      ["run: x=`printf \"5\u00a0EUR\"` && echo \"$x\""],
      ["run: echo \"${X:-'a'} 5\u00a0EUR\""],
      ["run: make;# all\u00a0done"],
      ["run: echo 5\u00a0EUR"],
      ["run: FOO=5\u00a0EUR"],
      ["run: if true; then\u00a0make; fi"],
      ["run: |", "  case $x in", "    a\u00a0b) make ;;", "  esac"],
      ["run: |", "  cat <<EOF", "  npm\u00a0test"],
    ];
    for (const lines of valid) {
      const text = yaml("tasks:", "  a:", ...lines.map((line) => `    ${line}`));
      expect(parseWorkflow(text, "/work/wf/ci.yaml", { now: NOW }).notes, text).toEqual([]);
    }
  });

  it("notes a no-break space in a command's name after then, do, else or elif that follows a ( ), { } or loop, and after a leading redirection (2>&1 npm\u00a0test): each one /bin/sh runs and fails with 127 on; not in quotes, an argument, after an assignment's reserved word or in a syntax error", () => {
    const note = (after: string) =>
      `/work/wf/ci.yaml:3:10: task "a": run holds a no-break space (U+00A0) after "${after}", in a command's name: the shell reads it as part of the name, not as a space between words, and finds no such command (exit 127); replace it with a space`;
    /** Whether sh ran a command whose name holds the no-break space, and did not find it. */
    const shNotFound = (run: string) => {
      const result = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", cwd: tmpdir() });
      return result.status === 127 && /\u00a0[^\n]*not found/.test(`${result.stdout}${result.stderr}`);
    };
    // Before, none of these had a note: `then` after a `)` or `}` was read as an argument, and the 2 of 2>&1 as the command's name.
    const noted = [
      "if (true) then npm\u00a0test; fi",
      "if { true; } then npm\u00a0test; fi",
      "if (false) then :; elif (true) then npm\u00a0test; fi",
      "while (true) do npm\u00a0test; exit; done",
      "if false; then (true) else npm\u00a0test; fi",
      "if while false; do :; done then npm\u00a0test; fi",
      "2>&1 npm\u00a0test",
      "x=1 2>&1 npm\u00a0test",
      "true && 1>/dev/null npm\u00a0test",
      "if true; then 2>&1 npm\u00a0test; fi",
      // After a redirection, then is no reserved word: the command's name.
      "2>&1 then\u00a0x",
    ];
    for (const run of noted) {
      // At the value (quoted), naming the 20 characters before the no-break space.
      const index = run.indexOf("\u00a0");
      expect(notesOf(run), run).toEqual([note(run.slice(Math.max(0, index - 20), index))]);
      expect(shNotFound(run), run).toBe(true);
    }
    // The word in quotes or an argument, a reserved word after an assignment or a redirection (a command named then),
    // a ( after a word, a redirection between ) and then, 12> (dash runs a command named 12): no note, and sh finds no such command named so.
    const quiet = [
      'echo "then\u00a0x"',
      "echo then\u00a0x",
      "echo 'if (a) then b\u00a0c'",
      "echo fi then b\u00a0c",
      "echo a 2>&1 b\u00a0c",
      "echo (a) then b\u00a0c",
      "x=1 (true) then b\u00a0c",
      "if (true) 2>/dev/null then npm\u00a0test; fi",
      "x=$(true) then b\u00a0c",
      ">/dev/null then b\u00a0c",
      "12>/dev/null npm\u00a0test",
      "(true) then\u00a0x",
    ];
    for (const run of quiet) {
      expect(notesOf(run), run).toEqual([]);
      expect(shNotFound(run), run).toBe(false);
    }
  });

  it("notes a no-break space in the name of the command env, exec, command, time or nohup runs, and in a $(...): each one /bin/sh runs and fails with 127 on; not after an option not followed (command -v, env -C), sudo, or in an argument", () => {
    const note = (after: string) =>
      `/work/wf/ci.yaml:3:10: task "a": run holds a no-break space (U+00A0) after ${JSON.stringify(after)}, in a command's name: the shell reads it as part of the name, not as a space between words, and finds no such command (exit 127); replace it with a space`;
    /** sh's exit status, and whether it said the name with the no-break space was not found (env, time and nohup: "No such file or directory"). */
    // Before, none of these had a note.
    const noted = [
      "env npm\u00a0test",
      "env CI=1 NODE_ENV=test npm\u00a0test",
      "env -i -u HOME -- npm\u00a0test",
      "exec npm\u00a0test",
      "command npm\u00a0test",
      "command -p npm\u00a0test",
      "x=1 time -p npm\u00a0test",
      "nohup npm\u00a0test >/dev/null",
      "x=$(npm\u00a0test)",
      'x="$(npm\u00a0test)"',
      "$(npm\u00a0test)",
      "x=$(cd / && $(npm\u00a0test))",
      "true && out=$(cd /tmp; npm\u00a0test) || exit $?",
    ];
    for (const run of noted) {
      const index = run.indexOf("\u00a0");
      expect(notesOf(run), run).toEqual([note(run.slice(Math.max(0, index - 20), index))]);
      expect(sh(run), run).toEqual({ status: 127, notFound: true });
    }
    // An option not followed (env -C DIR), what command -v only looks up: unsure, so unsaid.
    // After env's assignment, a `-i` is the command's name (env runs `-i`): unsure, unsaid too.
    for (const run of ["env -C /tmp npm\u00a0test", "command -v npm\u00a0test", "sudo npm\u00a0test", "env X=1 -i npm\u00a0test"]) expect(notesOf(run), run).toEqual([]);
    // An argument, in or out of a $(...) or $((...)), in single quotes: no note, and sh finds no command missing.
    const quiet = ["x=$(echo npm\u00a0test)", "echo '$(npm\u00a0test)'", "echo $((1\u00a0+ 1))", "env echo npm\u00a0test", "nohup echo npm\u00a0test >/dev/null"];
    for (const run of quiet) {
      expect(notesOf(run), run).toEqual([]);
      expect(sh(run).notFound, run).toBe(false);
    }
  });

  it("notes a no-break space in a command's name in a case's body or after its esac, each one /bin/sh runs and fails with 127 on; not in a pattern, an argument, or a case never closed", () => {
    const note = (after: string, line = "") =>
      `/work/wf/ci.yaml:3:10: task "a": run holds a no-break space (U+00A0) after ${JSON.stringify(after)}${line}, in a command's name: the shell reads it as part of the name, not as a space between words, and finds no such command (exit 127); replace it with a space`;
    // Before, a `case` anywhere in a run gave no note at all.
    const noted = [
      "case a in a) npm\u00a0test;; esac",
      "case a in (b|a) npm\u00a0test;; esac",
      "case x in esac; npm\u00a0test",
      "case $0 in *) case y in y) npm\u00a0test;; esac;; esac",
      "case a in a) (cd /; npm\u00a0test);; esac",
      "case a in a) x=1;; esac; npm\u00a0test",
    ];
    for (const run of noted) {
      expect(notesOf(run), run).toEqual([note(run.slice(Math.max(0, run.indexOf("\u00a0") - 20), run.indexOf("\u00a0")))]);
      expect(sh(run), run).toEqual({ status: 127, notFound: true });
    }
    // The last body needs no `;;` before an esac on its own line.
    expect(notesOf("case a in b) :;; *) npm\u00a0test\nesac")).toEqual([note("e a in b) :;; *) npm", " (its line 1)")]);
    expect(sh("case a in b) :;; *) npm\u00a0test\nesac")).toEqual({ status: 127, notFound: true });
    // In a pattern, an argument: none, and sh finds no command missing.
    for (const run of ["case a in a\u00a0b) :;; esac", "case a in a) echo npm\u00a0test;; esac", "case npm\u00a0test in *) :;; esac"]) {
      expect(notesOf(run), run).toEqual([]);
      expect(sh(run), run).toEqual({ status: 0, notFound: false });
    }
    // An esac that is an argument leaves the case open: a syntax error (exit 2), not 127. In a $(...): unsure, unsaid.
    expect(notesOf("case a in *) npm\u00a0test esac")).toEqual([]);
    expect(sh("case a in *) npm\u00a0test esac").status).toBe(2);
    expect(notesOf("x=$(case a in a) npm\u00a0test;; esac)")).toEqual([]);
  });

  it("gives no no-break-space note in a case's pattern after a (esac), which is a pattern, not the case's end", () => {
    const run = "case a in (esac) :;; npm\u00a0test) :;; esac";
    expect(notesOf(run)).toEqual([]);
    expect(sh(run)).toEqual({ status: 0, notFound: false });
    // After it, a body's command is still noted.
    expect(notesOf("case a in (esac) :;; *) npm\u00a0test;; esac")).toHaveLength(1);
    expect(sh("case a in (esac) :;; *) npm\u00a0test;; esac")).toEqual({ status: 127, notFound: true });
  });

  it("gives no no-break-space note after env, nohup or exec then exec or command: they run a program by that name, not found (127 for it, not for the name after it)", () => {
    for (const run of ["env exec npm\u00a0test", "env -- command npm\u00a0test", "nohup exec npm\u00a0test", "exec command npm\u00a0test"]) {
      expect(notesOf(run), run).toEqual([]);
      expect(sh(run), run).toEqual({ status: 127, notFound: false });
    }
    // command runs sh's own exec: still noted, as sh fails with 127 on that name.
    expect(notesOf("command exec npm\u00a0test")).toHaveLength(1);
    expect(sh("command exec npm\u00a0test")).toEqual({ status: 127, notFound: true });
  });

  it("reads time as dash does, a program that runs the next word by its name: no no-break-space note after time !, time { or time if (a program named so), and one in time\u00a0npm, a command named so", () => {
    const sh = (run: string) => {
      const result = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", cwd: tmpdir() });
      return { status: result.status, notFound: /(npm\u00a0test|time\u00a0npm).{0,3}(: not found|: No such file or directory)/.test(result.stderr) };
    };
    // Before, each was noted: time was read as bash's reserved word, and `!`, `{` or `if` after it as sh's grammar.
    for (const run of ["time ! npm\u00a0test", "time { npm\u00a0test; }", "time if npm\u00a0test; then :; fi"]) {
      expect(notesOf(run), run).toEqual([]);
      expect(sh(run).notFound, run).toBe(false);
    }
    // Before, none: `time` glued to the name was taken for a reserved word glued to the next one.
    expect(notesOf("time\u00a0npm test")).toEqual([
      '/work/wf/ci.yaml:3:10: task "a": run holds a no-break space (U+00A0) after "time", in a command\'s name: the shell reads it as part of the name, not as a space between words, and finds no such command (exit 127); replace it with a space',
    ]);
    expect(sh("time\u00a0npm test")).toEqual({ status: 127, notFound: true });
    // What time runs is still a command's name.
    expect(notesOf("time -p npm\u00a0test")).toHaveLength(1);
    expect(sh("time -p npm\u00a0test")).toEqual({ status: 127, notFound: true });
  });

  it("gives no no-break-space note after a ( that follows a word (echo (npm test), cat <(npm test)) or a redirection with no word (echo >; npm test): dash refuses the whole run (a syntax error, exit 2)", () => {
    // Before, each was noted as a command not found (exit 127).
    for (const run of ["echo (npm\u00a0test)", "echo (x); npm\u00a0test", "cat <(npm\u00a0test)", "<(npm\u00a0test)", "x=1 (npm\u00a0test)", "echo >; npm\u00a0test"]) {
      expect(notesOf(run), run).toEqual([]);
      const result = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", cwd: tmpdir() });
      expect([result.status, /Syntax error/.test(result.stderr)], run).toEqual([2, true]);
    }
    // The same in a $(...), of a word or in "...", nested too: dash refuses the whole run, the command after it never runs.
    for (const run of ["x=$(echo (a)); npm\u00a0test", 'echo "$(ls >)"; npm\u00a0test', "echo $(echo $(echo (a))); npm\u00a0test"]) {
      expect(notesOf(run), run).toEqual([]);
      const result = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", cwd: tmpdir() });
      expect([result.status, /Syntax error/.test(result.stderr)], run).toEqual([2, true]);
    }
    // A subshell, and a command after a function's definition, are still noted, in a $(...) and after one too.
    for (const run of ["(npm\u00a0test)", "f() { :; }; npm\u00a0test", "x=$( (true) ); npm\u00a0test", "x=$(f() { :; }; npm\u00a0test)"]) {
      expect(notesOf(run), run).toHaveLength(1);
      expect(spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", cwd: tmpdir() }).status, run).toBe(127);
    }
  });

  it("notes a no-break space in a command's name in a run with both a case and a $(...), unless the case is inside the $(...), whose patterns' ) would end it as read", () => {
    // Before, none: a case anywhere beside a $( or backquote gave up the whole run.
    for (const run of ["case a in a) :;; esac; x=$(npm\u00a0test)", "case a in a) x=$(npm\u00a0test);; esac", "x=$(true); case a in a) npm\u00a0test;; esac", "case a in a) :;; esac; echo `true`; npm\u00a0test"]) {
      expect(notesOf(run), run).toHaveLength(1);
      expect(sh(run), run).toEqual({ status: 127, notFound: true });
    }
    // A case inside the $(...): unsure, unsaid.
    for (const run of ["x=$(case a in a) npm\u00a0test;; esac)", 'echo "$(case a in a) :;; esac)"; npm\u00a0test']) expect(notesOf(run), run).toEqual([]);
  });

  it("gives no no-break-space note in a here-document's lines inside a $(...), a `)` in them too, nor in a here-document's delimiter, which is not expanded", () => {
    const inside = "x=$(cat <<EOF\n1) npm\u00a0test\nEOF\n)";
    expect(notesOf(inside)).toEqual([]);
    expect(sh(inside)).toEqual({ status: 0, notFound: false });
    // sh refuses `<<$(`: a syntax error (exit 2), running nothing.
    const delimiter = "cat <<$(npm\u00a0test)\nx\n$(npm\u00a0test)";
    expect(notesOf(delimiter)).toEqual([]);
    expect(sh(delimiter)).toEqual({ status: 2, notFound: false });
  });

  it("gives no no-break-space note after a syntax error in a $(...) or backquoted command of a here-document's body, its delimiter unquoted, or of a word in backquotes: dash refuses the whole run (exit 2)", () => {
    // Before, each was noted as a command not found (exit 127): the body was passed over as text, backquotes not read.
    for (const run of ["cat <<EOF\n$(echo (a))\nEOF\nnpm\u00a0test", "cat <<EOF\n`echo (a)`\nEOF\nnpm\u00a0test", "cat <<-EOF\n\t\"$(ls >)\n\tEOF\nnpm\u00a0test", "cat <<A; cat <<B\n'$(echo (a))\nA\nok\nB\nnpm\u00a0test", "echo `echo (a)`; npm\u00a0test"]) {
      expect(notesOf(run), run).toEqual([]);
      expect(sh(run), run).toEqual({ status: 2, notFound: false });
    }
    // Its delimiter quoted, or the `$` escaped, the body is text; a $(...) there that parses, or arithmetic, is no error: still noted.
    for (const run of ["cat <<'EOF'\n$(echo (a))\nEOF\nnpm\u00a0test", "cat <<E\\OF\n$(echo (a))\nEOF\nnpm\u00a0test", "cat <<EOF\n\\$(echo (a))\nEOF\nnpm\u00a0test", "cat <<EOF\n$(echo a) $((1+(2)))\nEOF\nnpm\u00a0test", "echo `echo a`; npm\u00a0test"]) {
      expect(notesOf(run), run).toHaveLength(1);
      expect(sh(run), run).toEqual({ status: 127, notFound: true });
    }
  });

  it("gives no no-break-space note after a then, do, else or elif that follows a ( ), { }, fi or done with no if or loop open for it: sh refuses the whole run (a syntax error, exit 2), and finds no command missing", () => {
    const refused = [
      "(true) then npm\u00a0test",
      "(cd /tmp) do npm\u00a0test",
      "{ true; } else npm\u00a0test",
      "if true; then :; fi then npm\u00a0test",
      "for x in 1; do :; done do npm\u00a0test",
      "! (true) then npm\u00a0test",
      "(true) && (true) then npm\u00a0test",
      "while (true) then npm\u00a0test; done",
    ];
    for (const run of refused) {
      // Before, each was noted as a command sh finds no such one of (exit 127).
      expect(notesOf(run), run).toEqual([]);
      const result = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", cwd: tmpdir() });
      expect(result.status, run).toBe(2);
      expect(result.stderr, run).toMatch(/Syntax error/);
    }
    // With the if or loop open, still noted.
    expect(notesOf("if (true) then (true) else (true) fi; npm\u00a0test")).toHaveLength(1);
    expect(notesOf("if true; then (true) elif (true) then npm\u00a0test; fi")).toHaveLength(1);
  });

  it("reads a long run with no-break spaces in its quotes in linear time", () => {
    const run = `echo "${"\u00a0".repeat(40000)}"`;
    const started = performance.now();
    expect(parseWorkflow(yaml("tasks:", "  a:", `    run: '${run}'`), "/work/wf/ci.yaml", { now: NOW }).notes).toEqual([]);
    // Read again from the start at each one, 40,000 took seconds; once, a few ms. A generous bound for a loaded machine.
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("runs a task with a past runAt now, with one note pointing at the runAt", () => {
    const workflow = parse(yaml("tasks:", "  a:", "    run: x", "    runAt: 2020-01-01T00:00:00Z"), "old.yaml");
    expect(workflow.tasks[0]!.runAt).toBe(Date.parse("2020-01-01T00:00:00Z"));
    expect(workflow.notes).toEqual(['old.yaml:4:12: task "a": runAt 2020-01-01T00:00:00Z is in the past; the task runs now']);
  });

  it("says a task with a past runAt that depends on others runs once they are done, not now; and defaults' for the tasks that take it", () => {
    const workflow = parse(yaml("tasks:", "  test: { run: x }", "  deploy: { run: x, dependsOn: test, runAt: 2020-01-01T00:00:00Z }"), "old.yaml");
    expect(workflow.notes).toEqual(['old.yaml:3:45: task "deploy": runAt 2020-01-01T00:00:00Z is in the past; the task runs once its dependencies are done']);
    const shared = parse(yaml("defaults: { runAt: 2020-01-01T00:00:00Z }", "tasks:", "  a: { run: x }", "  b: { run: x, dependsOn: a }"), "old.yaml");
    expect(shared.notes).toEqual(["old.yaml:1:20: defaults: runAt 2020-01-01T00:00:00Z is in the past; the tasks that take it run now, or once their dependencies are done"]);
  });

  it("notes a TASKQ_ variable taskq sets itself, where the file sets it (env, defaults or a task), which no task would see", () => {
    const workflow = parse(
      yaml("env: { TASKQ_RUN_ID: mine, A: x }", "defaults: { env: { TASKQ_PID: '1' } }", "tasks:", "  a: { run: x, env: { TASKQ_ATTEMPT: '9', TASKQ_OTHER: y } }", "  b: { run: x }"),
      "e.yaml",
    );
    expect(workflow.notes).toEqual([
      "e.yaml:1:22: env: TASKQ_RUN_ID is set by taskq for each task (to the run's id): the value given here is never seen",
      "e.yaml:2:31: defaults: TASKQ_PID is set by taskq for each task (to taskq's pid): the value given here is never seen",
      'e.yaml:4:38: task "a": TASKQ_ATTEMPT is set by taskq for each task (to the attempt\'s number): the value given here is never seen',
    ]);
  });

  it("notes a value several tasks share (env: *e, <<: *base) once, naming the tasks that share it as a shared problem does, not the first task alone", () => {
    // Before, `task "a": TASKQ_ATTEMPT ...`: the other four tasks given the value went unsaid.
    const lines = ["x-env: &e { TASKQ_ATTEMPT: '3' }", "x-base: &base { run: x, env: { PATH: $PATH:/opt } }", "tasks:"];
    for (const id of ["a", "b", "c", "d", "e"]) lines.push(`  ${id}: { run: x, env: *e }`);
    lines.push("  f: { <<: *base }", "  g: { <<: *base }", "  h: { run: x, env: { TASKQ_ATTEMPT: '1' } }");
    const expected = [
      'e.yaml:1:28: tasks "a", "b", "c" and 2 more: TASKQ_ATTEMPT is set by taskq for each task (to the attempt\'s number): the value given here is never seen',
      'e.yaml:2:38: tasks "f" and "g": the value of PATH holds $PATH, which is not expanded: the task gets those characters as written, not taskq\'s own PATH with more added; set it at the start of the run instead, where the shell expands it (export PATH="...")',
      'e.yaml:11:38: task "h": TASKQ_ATTEMPT is set by taskq for each task (to the attempt\'s number): the value given here is never seen',
    ];
    expect(parse(yaml(...lines), "e.yaml").notes).toEqual(expected);
    // Four are all named, as a shared problem's tasks are.
    expect(parse(yaml(...lines.slice(0, 7)), "e.yaml").notes).toEqual([expected[0]!.replace('"c" and 2 more', '"c" and "d"')]);
  });

  it("names the tasks sharing a noted value in the file's order, as a problem they share names them, not in the order they start", () => {
    // Before, `tasks "e", "d", "c" and 2 more`: the tasks were named as they were built, which is the order they start in.
    const lines = ["x-env: &e { TASKQ_ATTEMPT: '3' }", "tasks:"];
    for (const [id, after] of [["a", "b"], ["b", "c"], ["c", "d"], ["d", "e"], ["e", undefined]] as const) lines.push(`  ${id}: { run: x, env: *e${after === undefined ? "" : `, dependsOn: [${after}]`} }`);
    expect(parse(yaml(...lines), "e.yaml").notes).toEqual([
      'e.yaml:1:28: tasks "a", "b", "c" and 2 more: TASKQ_ATTEMPT is set by taskq for each task (to the attempt\'s number): the value given here is never seen',
    ]);
    // The same place with a problem in it names the same tasks.
    const problem = problemsOf(yaml(...lines.map((line) => line.replace("'3' }", "'3', 'A-B': x }"))))[0];
    expect(problem).toMatch(/^1:\d+: tasks "a", "b", "c" and 2 more: /);
  });

  it("notes a past runAt several tasks share in the words right for each: those with dependencies and those without", () => {
    // Before, the first task's note alone: `task "a": ... the task runs now`, and nothing for b, which waits for a.
    const alias = parse(yaml("x-when: &when 2020-01-01T00:00:00Z", "tasks:", "  a: { run: x, runAt: *when }", "  b: { run: x, dependsOn: [a], runAt: *when }"), "old.yaml");
    expect(alias.notes).toEqual([
      'old.yaml:1:15: task "a": runAt 2020-01-01T00:00:00Z is in the past; the task runs now',
      'old.yaml:1:15: task "b": runAt 2020-01-01T00:00:00Z is in the past; the task runs once its dependencies are done',
    ]);
    // Through a merge key, the task first in the file first, whichever starts first; each wording names all its tasks.
    const lines = ["x-base: &base { runAt: 2020-01-01T00:00:00Z }", "tasks:", "  d: { <<: *base, run: x, dependsOn: [a] }", "  a: { <<: *base, run: x }", "  c: { <<: *base, run: x }", "  e: { <<: *base, run: x, dependsOn: [c] }"];
    expect(parse(yaml(...lines), "old.yaml").notes).toEqual([
      'old.yaml:1:24: tasks "d" and "e": runAt 2020-01-01T00:00:00Z is in the past; the task runs once its dependencies are done',
      'old.yaml:1:24: tasks "a" and "c": runAt 2020-01-01T00:00:00Z is in the past; the task runs now',
    ]);
  });

  it("notes a variable whose value names the variable itself ($PATH in PATH), which is passed as written, not expanded", () => {
    const lines = [
      'env: { PATH: "/opt/tools/bin:$PATH", GOPATH: $HOME/go, SECRET: "pa$$word" }',
      "defaults: { env: { PYTHONPATH: '${PYTHONPATH}:src', PATHS: $PATH } }",
      "tasks:",
      '  a: { run: x, env: { CFLAGS: "$CFLAGS -O2", LD: $LDX } }',
      "  b: { run: x }",
    ];
    const expected = [
      'e.yaml:1:14: env: the value of PATH holds $PATH, which is not expanded: the task gets those characters as written, not taskq\'s own PATH with more added; set it at the start of the run instead, where the shell expands it (export PATH="...")',
      'e.yaml:2:32: defaults: the value of PYTHONPATH holds ${PYTHONPATH}, which is not expanded: the task gets those characters as written, not taskq\'s own PYTHONPATH with more added; set it at the start of the run instead, where the shell expands it (export PYTHONPATH="...")',
      'e.yaml:4:31: task "a": the value of CFLAGS holds $CFLAGS, which is not expanded: the task gets those characters as written, not taskq\'s own CFLAGS with more added; set it at the start of the run instead, where the shell expands it (export CFLAGS="...")',
    ];
    const workflow = parse(yaml(...lines), "e.yaml");
    expect(workflow.tasks.find((task) => task.id === "a")!.env).toMatchObject({ PATH: "/opt/tools/bin:$PATH", CFLAGS: "$CFLAGS -O2" });
    expect(workflow.notes).toEqual(expected);
    // The full YAML parser (a document marker is outside the plain subset) says the same.
    expect(parse(yaml("---", ...lines), "e.yaml").notes).toEqual(expected.map((note) => note.replace(/^e\.yaml:(\d+)/, (_, line: string) => `e.yaml:${Number(line) + 1}`)));
  });

  it("notes a run that a comment cut inside a quote (run: echo \"issue #42\"), which the shell would refuse, and no other comment", () => {
    const workflow = parse(
      yaml(
        "tasks:",
        '  a:',
        '    run: echo "issue #42 fixed"',
        "  b:",
        "    run: echo it's #1",
        "  c:",
        '    run: echo "x" # a comment, as meant',
        "  d:",
        '    run: echo \\"x #not closed by the shell either way',
        "  e:",
        "    run: echo \"a",
        "      b #c\"",
        "  f:",
        "    run: 'echo \"a #b\"'",
      ),
      "h.yaml",
    );
    expect(workflow.tasks.find((task) => task.id === "a")!.run).toBe('echo "issue');
    expect(workflow.notes).toEqual([
      'h.yaml:3:10: task "a": run is cut where " #" begins, which YAML reads as a comment: the shell gets echo "issue, with a " never closed (a syntax error); quote the whole value, or write it in a | block',
      "h.yaml:5:10: task \"b\": run is cut where \" #\" begins, which YAML reads as a comment: the shell gets echo it's, with a ' never closed (a syntax error); quote the whole value, or write it in a | block",
      'h.yaml:11:10: task "e": run is cut where " #" begins, which YAML reads as a comment: the shell gets echo "a b, with a " never closed (a syntax error); quote the whole value, or write it in a | block',
    ]);
  });

  it("notes a run that leaves a quote open, which the shell would refuse whole, naming the quote and where it opens; not for quotes sh reads as closed, in a here-document's body, or a case", () => {
    const note = (at: string, quote: string, where = "") =>
      `task "${at.split(":")[0]!}": run leaves a ${quote} open, at ${at.slice(at.indexOf(":") + 1)}${where}: ${where === "" || where === " (its line 1)" ? "the shell refuses the whole command (a syntax error: unterminated quoted string) and runs none of it" : "the shell runs the commands complete before its line, then refuses the rest (a syntax error: unterminated quoted string)"}; close it, or write a ${quote} meant as text as ${quote === '"' ? `\\" (or inside '...')` : `\\' (or inside "...")`}`;
    const workflow = parse(
      yaml(
        "tasks:",
        '  a: { run: echo "unterminated }',
        "  b:",
        "    run: echo it's done",
        "  c:",
        "    run: |",
        "      set -e",
        '      printf "%s\\n" "it\'s',
        "  d:",
        "    run: echo $'it\\'s'",
        // Closed as sh reads them: an escaped quote, quotes inside $( ) inside quotes, a backquoted command, a comment, $'...' as $ then '...'.
        "  e:",
        '    run: echo don\\\'t "a\\"b" "$(echo \'"\')" `echo "x"` ok;#it\'s',
        "  f:",
        "    run: echo $'a' \"${x:-don't}\"",
        // A here-document's lines are text; a case's patterns end in ).
        "  g:",
        "    run: |",
        "      cat <<EOF",
        "      it's",
        "      EOF",
        "  h:",
        "    run: case $x in a) echo \"it's\";; esac",
        // A line after a here-document is sh's: its quote left open is told (it was not, for the `<<` in the run).
        "  i:",
        "    run: |",
        "      cat <<EOF",
        "      it's",
        "      EOF",
        '      echo "done',
      ),
      "q.yaml",
    );
    expect(workflow.notes).toEqual([
      `q.yaml:2:13: ${note('a:"unterminated', '"')}`,
      `q.yaml:4:10: ${note("b:'s done", "'")}`,
      `q.yaml:6:10: ${note('c:"it\'s', '"', " (its line 2)")}`,
      `q.yaml:10:10: ${note("d:'", "'")}`,
      `q.yaml:23:10: ${note('i:"done', '"', " (its line 4)")}`,
    ]);
  });

  it("notes a run that begins with #! naming another shell than sh: /bin/sh runs it, the line being a comment to it", () => {
    const workflow = parse(
      yaml(
        "tasks:",
        "  a:",
        "    run: |",
        "      #!/bin/bash",
        "      set -euo pipefail",
        "  b:",
        "    run: |",
        "      #!/usr/bin/env -S python3 -u",
        "      print(1)",
        "  c:",
        "    run: |",
        "      #!/bin/sh -e",
        "      echo c",
        "  d:",
        "    run: |",
        "      #!/usr/bin/env sh",
        "      echo d",
        "  e:",
        '    run: "#! just a comment"',
      ),
      "s.yaml",
    );
    expect(workflow.notes).toEqual([
      's.yaml:3:10: task "a": run begins with #!/bin/bash, a comment to /bin/sh, which runs the command (not bash); to run it with bash, put it in a script file that begins so, and run that file',
      's.yaml:7:10: task "b": run begins with #!/usr/bin/env -S python3 -u, a comment to /bin/sh, which runs the command (not python3); to run it with python3, put it in a script file that begins so, and run that file',
    ]);
  });

  it("notes a plain run over several lines whose next line looks like a command of its own: YAML joins the lines with spaces into one command", () => {
    const workflow = parse(
      yaml(
        "tasks:",
        "  a:",
        "    run: echo one",
        "      echo two",
        "  long:",
        "    run: npm test",
        "      --coverage",
        "      2> errors.txt",
        "  piped:",
        "    run: curl -fsSL https://example.com/install.sh |",
        "      sh",
        "  chained:",
        "    run: make build &&",
        "      make test",
        "  loop:",
        "    run: for x in a b; do",
        "      echo $x; done",
        "  folded:",
        "    run: >",
        "      echo one",
        "      echo two",
        "  paragraphs:",
        "    run: echo one",
        "",
        "      echo two",
        "  quoted:",
        '    run: echo "one',
        '      two"',
        "  later:",
        "    run: cp a.txt",
        "      --force",
        "      b.txt",
        // An argument no shell would run as a command: `.` alone, a folder's path.
        "  context:",
        "    run: docker build -t app",
        "      .",
        "  folder:",
        "    run: rsync -a build/",
        "      dist/ --delete",
        "  sourced:",
        "    run: true",
        "      ./run.sh",
      ),
      "j.yaml",
    );
    expect(workflow.tasks.find((task) => task.id === "a")!.run).toBe("echo one echo two");
    // A blank line between keeps a line break: two commands, as meant.
    expect(workflow.tasks.find((task) => task.id === "paragraphs")!.run).toBe("echo one\necho two");
    const said = "run's lines are joined with spaces into one command, as YAML joins a plain value's lines, so this line is more of the command before it: the shell gets";
    const fix = "for one command per line, write run: |, or, to join them on purpose, run: > (no note then)";
    // `./run.sh` is a command: noted.
    expect(workflow.notes).toEqual([
      `j.yaml:4:7: task "a": ${said} echo one echo two; ${fix}`,
      `j.yaml:32:7: task "later": ${said} --force b.txt; ${fix}`,
      `j.yaml:41:7: task "sourced": ${said} true ./run.sh; ${fix}`,
    ]);
  });

  it("notes a plain run's line that starts with \"- \", a list's item written under the value, which YAML joins to it: taken for an option, it got no note, and the shell got npm ci - npm test", () => {
    const workflow = parse(yaml("tasks:", "  a:", "    run: npm ci", "      - npm test", "  option:", "    run: tar xf", "      - < x.tar", "  stdin:", "    run: curl -s https://x | tar -xzf", "      - -C /opt"), "l.yaml");
    // `-` then an option is a file, stdin, and more of the command: no list's item starts with an option.
    expect(workflow.tasks.find((task) => task.id === "stdin")!.run).toBe("curl -s https://x | tar -xzf - -C /opt");
    expect(workflow.tasks.find((task) => task.id === "a")!.run).toBe("npm ci - npm test");
    // A `-` before a redirection is an argument (stdin), as is `-` alone: more of the command, not noted.
    expect(workflow.notes).toEqual([
      'l.yaml:4:7: task "a": this line starts with "- ", as a YAML list\'s item does, but it is indented under run\'s value, so YAML joins it to that value with a space into one command: the shell gets npm ci - npm test; for one command per line, write run: | and each command on a line of its own, without the "- "',
    ]);
  });

  // `run: >` then `docker run` and `  --rm` indented more: YAML keeps that line break, and the shell ran
  // `--rm` as a command of its own (`--rm: not found`), with no word, the > saying the lines were joined.
  it("notes a > block's line indented more than its first, whose line break YAML keeps, but after an operator, a backslash, a blank line or in a quote", () => {
    const workflow = parse(
      yaml(
        "tasks:",
        "  a:",
        "    run: >",
        "      docker run",
        "        --rm",
        "        image",
        "  loop:",
        "    run: >",
        "      for f in a b; do",
        "        echo $f;",
        "      done",
        "  amp:",
        "    run: >",
        "      make build &&",
        "        make test",
        "  backslash:",
        "    run: >",
        "      echo one \\",
        "        two",
        "  blank:",
        "    run: >",
        "      echo one",
        "",
        "        echo two",
        "  quoted:",
        "    run: >",
        '      echo "one',
        '        two"',
        "  joined:",
        "    run: >",
        "      echo one",
        "      two",
      ),
      "k.yaml",
    );
    expect(workflow.tasks.find((task) => task.id === "a")!.run).toBe("docker run\n  --rm\n  image\n");
    expect(workflow.notes).toEqual([
      "k.yaml:5:9: task \"a\": run is a > block, whose lines YAML joins with spaces, but it keeps the line break before a line indented more than the block's first, such as this one, so the shell runs it as a command of its own, not as more of the one before: it gets docker run and then, on a line of its own, --rm; indent this line as the block's first line to join it to the command before, or write run: | with a backslash at the end of the line before",
    ]);
  });

  // A case's patterns indented below its `case x in`, a `do` on a line of its own, a heredoc's lines, a command under a
  // comment: the shell reads each kept line break as meant (dash runs them), and joining the lines, as the note said to, breaks them.
  it("does not note a > block's more-indented line where the shell reads its kept line break as meant: case patterns, do or then, a heredoc, after a comment", () => {
    const workflow = parse(
      yaml(
        "tasks:",
        "  case:",
        "    run: >",
        '      case "$BRANCH" in',
        "        main) echo deploy ;;",
        "        *) echo skip ;;",
        "      esac",
        "  branch:",
        "    run: >",
        '      case "$1" in',
        "      main)",
        "        echo deploy;;",
        "      esac",
        "  do:",
        "    run: >",
        "      while read -r line",
        '        do echo "$line"; done < list.txt',
        "  then:",
        "    run: >",
        "      if [ -f x ]",
        "        then echo y; fi",
        "  heredoc:",
        "    run: >",
        "      cat <<EOF > config.json",
        '        {"a": 1}',
        "      EOF",
        "  comment:",
        "    run: >",
        "      # build the image",
        "        docker build .",
        "  still:",
        "    run: >",
        "      docker run $(cat image.txt) logged in",
        "        --rm",
      ),
      "m.yaml",
    );
    expect(workflow.tasks.find((task) => task.id === "branch")!.run).toBe('case "$1" in main)\n  echo deploy;;\nesac\n');
    expect(workflow.notes).toEqual([
      "m.yaml:34:9: task \"still\": run is a > block, whose lines YAML joins with spaces, but it keeps the line break before a line indented more than the block's first, such as this one, so the shell runs it as a command of its own, not as more of the one before: it gets docker run $(cat image.txt) logged in and then, on a line of its own, --rm; indent this line as the block's first line to join it to the command before, or write run: | with a backslash at the end of the line before",
    ]);
  });

  // Before, no note for either: only a kept line right after one at the block's indentation was looked at.
  it("notes a > block's line indented more than a kept line above it (a loop's body), and the line after a >2 block's first line indented more than the 2 says", () => {
    const workflow = parse(
      yaml(
        "tasks:",
        "  nested:",
        "    run: >",
        "      for f in *.tar; do",
        "        docker load -i",
        '          "$f"',
        "      done",
        "  body:",
        "    run: >",
        "      for f in *.tar; do",
        '        docker load -i "$f"',
        '        rm "$f"',
        "      done",
        "  over:",
        "    run: >2",
        "        docker run",
        "        --rm image",
        "  under:",
        "    run: >2",
        "        docker run",
        "      --rm image",
        "  given:",
        "    run: >2",
        "      docker run",
        "        --rm image",
      ),
      "k.yaml",
    );
    expect(workflow.tasks.find((task) => task.id === "nested")!.run).toBe('for f in *.tar; do\n  docker load -i\n    "$f"\ndone\n');
    expect(workflow.tasks.find((task) => task.id === "over")!.run).toBe("  docker run\n  --rm image\n");
    const firstIndented = (at: string) =>
      `k.yaml:${at}: task "${at.startsWith("17") ? "over" : "under"}": run is a >2 block, whose lines are indented 2 spaces more than its key (at column 7), but its first line is indented more than that, and YAML keeps the line break after a line indented more than the block's, so the shell runs this line as a command of its own, not as more of the one before: it gets docker run and then, on a line of its own, --rm image; start the block's lines at column 7, or write run: > without the 2, so that its first line sets the block's indentation`;
    expect(workflow.notes).toEqual([
      `k.yaml:6:11: task "nested": run is a > block, whose lines YAML joins with spaces, but it keeps the line breaks around a line indented more than the block's first, so this line, indented more than the one before it, is a command of its own to the shell, not more of the one before: it gets docker load -i and then, on a line of its own, "$f"; write the command on one line, or write run: | with a backslash at the end of the line before (a > block joins only the lines at its first line's indentation)`,
      firstIndented("17:9"),
      firstIndented("21:7"),
      "k.yaml:25:9: task \"given\": run is a > block, whose lines YAML joins with spaces, but it keeps the line break before a line indented more than the block's first, such as this one, so the shell runs it as a command of its own, not as more of the one before: it gets docker run and then, on a line of its own, --rm image; indent this line as the block's first line to join it to the command before, or write run: | with a backslash at the end of the line before",
    ]);
  });

  // A delimiter with its quotes removed as sh removes them: `<<\\EOF` ends at `EOF`. Taken as `\\EOF`, the body never ended, and
  // the block's lines after it were read as its text, their notes lost.
  it("notes a > block's more-indented line after a here-document whose delimiter is quoted or escaped (<<\\EOF, <<E\"O\"F), as after <<EOF", () => {
    for (const operator of ["<<EOF", "<<\\EOF", "<<'EOF'", '<<E"O"F']) {
      const workflow = parse(yaml("tasks:", "  a:", "    run: >", `      cat ${operator}`, "        hi", "      EOF", "      docker run", "        --rm"), "k.yaml");
      expect(workflow.notes, operator).toEqual([expect.stringMatching(/^k\.yaml:8:9: task "a": run is a > block, .* it gets docker run and then, on a line of its own, --rm;/)]);
    }
  });

  // A heredoc's lines indented as its text needs (a values file, a <<- heredoc's tabs), and a comment after a `do`, `then` or a case's
  // pattern: the shell reads each kept line break as meant, where the notes said to write the lines as one command, which breaks them.
  it("does not note a > block's line indented more than the one before inside a heredoc, nor after a do, then or case pattern with a comment", () => {
    const workflow = parse(
      yaml(
        "tasks:",
        "  values:",
        "    run: >",
        "      cat > values.yaml <<EOF",
        "        image:",
        "          tag: 1",
        "      EOF",
        "  tabs:",
        "    run: >",
        "      cat <<-EOF",
        "      \thello",
        "      \t\tworld",
        "      \tEOF",
        "  pattern:",
        "    run: >",
        "      for x in a b; do",
        "        case $x in",
        "          a) # the first",
        "            echo a",
        "            ;;",
        "        esac",
        "      done",
        "  do:",
        "    run: >",
        "      for f in *; do # each file",
        '        echo "$f"',
        "      done",
        "  then:",
        "    run: >",
        '      if [ -n "$CI" ]; then # in CI',
        "        echo ci",
        "      fi",
        "  after:",
        "    run: >",
        "      for f in *; do # each file",
        "        docker load -i",
        '          "$f"',
        "      done",
      ),
      "k.yaml",
    );
    expect(workflow.tasks.find((task) => task.id === "tabs")!.run).toBe("cat <<-EOF\n\thello\n\t\tworld\n\tEOF\n");
    expect(workflow.tasks.find((task) => task.id === "values")!.run).toBe("cat > values.yaml <<EOF\n  image:\n    tag: 1\nEOF\n");
    expect(workflow.notes).toEqual([
      `k.yaml:37:11: task "after": run is a > block, whose lines YAML joins with spaces, but it keeps the line breaks around a line indented more than the block's first, so this line, indented more than the one before it, is a command of its own to the shell, not more of the one before: it gets docker load -i and then, on a line of its own, "$f"; write the command on one line, or write run: | with a backslash at the end of the line before (a > block joins only the lines at its first line's indentation)`,
    ]);
  });

  it("notes a > block's line indented more than the one before after a whole-line comment that mentions a heredoc (# cat <<EOF), which opens none", () => {
    // The comment's `<<EOF` was taken for a heredoc's: every line after it was the heredoc's, and nothing was noted.
    const workflow = parse(yaml("tasks:", "  a:", "    run: >", "      # cat <<EOF", "", "      docker run", "        --rm alpine"), "k.yaml");
    expect(workflow.notes).toEqual([
      "k.yaml:7:9: task \"a\": run is a > block, whose lines YAML joins with spaces, but it keeps the line break before a line indented more than the block's first, such as this one, so the shell runs it as a command of its own, not as more of the one before: it gets docker run and then, on a line of its own, --rm alpine; indent this line as the block's first line to join it to the command before, or write run: | with a backslash at the end of the line before",
    ]);
  });

  it("reads a plain run of many lines inside a quote in about ten times what a tenth of them takes, with no note", async () => {
    // Each line's text before it was read from the value's start for its quotes: 3,000 lines inside an open quote took 2.8 s to validate, 100x 300 of them.
    const { bestOfAlternating } = await import("../helpers/timing.js");
    const file = (count: number): string => yaml("tasks:", "  t:", '    run: echo "start', ...Array.from({ length: count }, (_, index) => `      line ${index}`), '      end"');
    const short = file(400);
    const long = file(4000);
    expect(parse(long).notes).toEqual([]);
    expect(parse(long).tasks[0]!.run).toMatch(/^echo "start line 0 line 1 .* line 3999 end"$/);
    // Side by side, best of five rounds alternating: 10-13x now.
    const [longMs, shortMs] = bestOfAlternating(3, () => parse(long), () => parse(short));
    expect(longMs).toBeLessThan(40 * shortMs);
  });

  it("reads durations in every documented form", () => {
    const forms = ["250ms", "30s", "5m", "1h", "1h30m", "1h2m3s4ms", "1.5", "0", "2592000", "2d", "1d12h", "30d", "1.5s", "0.5h", "2.25m", "1.5d", "1h0.5m", "1.6ms", "0.0004s"];
    const workflow = parse(yaml("tasks:", ...forms.map((form, index) => `  t${index}: { run: x, delay: ${form} }`)));
    expect(workflow.tasks.map((task) => task.delayMs)).toEqual([
      250, 30_000, 300_000, 3_600_000, 5_400_000, 3_723_004, 1500, 0, 2_592_000_000, 172_800_000, 129_600_000, 2_592_000_000, 1500, 1_800_000, 135_000, 129_600_000, 3_630_000, 2, 0,
    ]);
  });

  // Kept as taken since durations were first read, as Go's time.ParseDuration and systemd take them: refusing them now would
  // break files that run. A flag takes the same, and taskq says each back in its own form (2h, 2m30s).
  it("takes a unit's number past the next unit's size (90m, 1h60m, 1m90s, 1d24h), in a file and a flag alike", () => {
    const forms = ["90m", "1h60m", "1m90s", "1d24h", "0h90m", "1s1000ms"];
    const workflow = parse(yaml("tasks:", ...forms.map((form, index) => `  t${index}: { run: x, timeout: ${form} }`)));
    const ms = [5_400_000, 7_200_000, 150_000, 172_800_000, 5_400_000, 2000];
    expect(workflow.tasks.map((task) => task.timeoutMs)).toEqual(ms);
    expect(forms.map((form) => durationFlag("--kill-grace", form))).toEqual(ms);
    expect(ms.map((each) => formatMs(each))).toEqual(["1h30m", "2h", "2m30s", "2d", "1h30m", "2s"]);
  });

  it("keeps the default backoff and no timeout when nothing sets them", () => {
    const task = parse(yaml("tasks:", "  t: { run: x }")).tasks[0]!;
    expect(task).toEqual({ id: "t", type: "shell", run: "x", priority: "normal", retries: 0, backoff: { baseMs: 1000, maxMs: 30_000 }, env: {}, cwd: "/work/wf", dependsOn: [] });
  });

  it("counts a repeated dependency once, and notes it where it is repeated: likely a slip for another id", () => {
    const workflow = parse(yaml("tasks:", "  a: { run: x }", "  c: { run: x }", "  b: { run: x, dependsOn: [a, a, c, a] }"));
    expect(workflow.tasks.find((task) => task.id === "b")!.dependsOn).toEqual(["a", "c"]);
    expect(workflow.notes).toEqual([
      '/work/wf/ci.yaml:4:31: task "b": dependsOn lists "a" more than once; it counts once',
      '/work/wf/ci.yaml:4:37: task "b": dependsOn lists "a" more than once; it counts once',
    ]);
  });

  it("counts a repeated exit code of retryOn once, and notes it where it is repeated, as a repeated dependency; of defaults' once, at defaults", () => {
    const workflow = parse(yaml("defaults:", "  retryOn: [1, 1]", "tasks:", "  a: { run: x, retries: 2, retryOn: [3, 75, 3, 3] }", "  b: { run: x, retries: 1 }", "  c: { run: x, retries: 1 }"));
    expect(workflow.tasks.find((task) => task.id === "a")!.retryOn).toEqual([3, 75]);
    expect(workflow.tasks.find((task) => task.id === "b")!.retryOn).toEqual([1]);
    expect(workflow.notes).toEqual([
      "/work/wf/ci.yaml:2:16: defaults: retryOn lists 1 more than once; it counts once",
      '/work/wf/ci.yaml:4:45: task "a": retryOn lists 3 more than once; it counts once',
      '/work/wf/ci.yaml:4:48: task "a": retryOn lists 3 more than once; it counts once',
    ]);
    expect(parse(yaml("tasks:", "  a: { run: x, retries: 2, retryOn: [3, 75] }")).notes).toEqual([]);
  });
});
