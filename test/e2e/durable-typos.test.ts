import { describe, expect, it } from "vitest";
import { dropSchema } from "../store/helpers.js";
import { useDurableWorkspace } from "./durable-harness.js";

// A run id or task id mistyped on the command line (the durable commands take them from a person or a CI variable).
const durable = useDurableWorkspace("taskq_e2e_typos");
const { SCHEMA, taskq, workflowFile, submit } = durable;

const WORKFLOW = `tasks:
  build: { run: "true", delay: 1h }
  deploy: { run: "true", dependsOn: [build] }
  shard-1: { run: "true", dependsOn: [build] }
  shard-2: { run: "true", dependsOn: [build] }
`;

describe("a task id no task of the run has", () => {
  it("names the run's task meant, where one is named almost so", async () => {
    const runId = await submit(await workflowFile("tasks", WORKFLOW), ["--run-id", "typo-tasks"]);
    const cancel = await taskq(["cancel", runId, "biuld"]);
    expect({ code: cancel.code, stdout: cancel.stdout, stderr: cancel.stderr }).toEqual({
      code: 1,
      stdout: "",
      stderr: `taskq: no task "biuld" in run "${runId}"; did you mean "build"?\n`,
    });
    const redrive = await taskq(["redrive", runId, "Deploy"]);
    expect({ code: redrive.code, stderr: redrive.stderr }).toEqual({ code: 1, stderr: `taskq: no task "Deploy" in run "${runId}"; did you mean "deploy"?\n` });
    // One named like none of them is not given a guess, nor one named as a task but for its number (another of a series).
    for (const task of ["lint", "shard-9"]) {
      const far = await taskq(["cancel", runId, task]);
      expect({ code: far.code, stderr: far.stderr }).toEqual({ code: 1, stderr: `taskq: no task "${task}" in run "${runId}"\n` });
    }
  });
});

describe("a run id no run has", () => {
  it("names the run meant, where one is named almost so, in every command that takes a run", async () => {
    const runId = await submit(await workflowFile("runs", WORKFLOW), ["--run-id", "nightly-1234"]);
    const where = `in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA)`;
    for (const args of [["status", "nigthly-1234"], ["cancel", "nigthly-1234"], ["dead-letters", "nigthly-1234"], ["redrive", "nigthly-1234", "build"], ["status", "Nightly-1234"]]) {
      const result = await taskq(args);
      expect({ args, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        args,
        code: 1,
        stdout: "",
        stderr: `taskq: no run "${args[1]!}" ${where}; did you mean "${runId}"?\n`,
      });
    }
    const json = await taskq(["status", "nigthly-1234", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ event: "error", code: "STORE_NOT_FOUND", message: `no run "nigthly-1234" ${where}; did you mean "${runId}"?` });
    // One named like no run is not given a guess, nor one named as a run but for its number: another run of a series,
    // not submitted yet or pruned, is no typo of the one next to it.
    for (const other of ["weekly", "nightly-1235"]) {
      const far = await taskq(["status", other]);
      expect({ code: far.code, stderr: far.stderr }).toEqual({ code: 1, stderr: `taskq: no run "${other}" ${where}\n` });
    }
  });
});

describe("a run id no run has, in a store of many runs", () => {
  it("names the run just submitted, not only among the oldest runs", async () => {
    // 100,001 older runs named as long as the one meant: the first 100,000 read, in the table's order, are those.
    await durable.store.pool.query(
      `INSERT INTO "${SCHEMA}".runs (id, state, created_at) SELECT 'old-' || lpad(g::text, 6, '0'), 'succeeded', now() - interval '1 day' FROM generate_series(1, 100001) g`,
    );
    try {
      const runId = await submit(await workflowFile("many", WORKFLOW), ["--run-id", "release-77"]);
      const result = await taskq(["status", "releaes-77"]);
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 1,
        stderr: `taskq: no run "releaes-77" in schema "${SCHEMA}" (given by TASKQ_STORE_SCHEMA); did you mean "${runId}"?\n`,
      });
    } finally {
      await durable.store.pool.query(`DELETE FROM "${SCHEMA}".runs WHERE id LIKE 'old-%'`);
    }
  });
});

describe("a run id or task id with white space around it", () => {
  it("is a usage error that gives the id meant, before the store is opened", async () => {
    const expected = 'is not a run id: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit (write it without spaces: build-42)';
    // A store no command can reach: the id is refused first.
    const store = ["--store", "postgres://nobody@127.0.0.1:1/none"];
    // A Windows line's \r kept by `RUN=$(cat run-id.txt)`, a space a CI variable kept.
    for (const [runId, shown] of [["build-42\r", '"build-42\\r"'], [" build-42", '" build-42"']] as const) {
      for (const args of [["status", runId], ["cancel", runId], ["dead-letters", runId], ["redrive", runId, "a"]]) {
        const result = await taskq([...args, ...store]);
        expect({ args, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ args, code: 2, stdout: "", stderr: `taskq: ${shown} ${expected}\n` });
      }
    }
    const file = await workflowFile("spaced", WORKFLOW);
    const submitted = await taskq(["submit", file, "--run-id", "build-42 ", ...store]);
    expect({ code: submitted.code, stderr: submitted.stderr }).toEqual({ code: 2, stderr: `taskq: --run-id: "build-42 " ${expected}\n` });
    for (const args of [["cancel", "build-42", "deploy\r"], ["redrive", "build-42", "deploy\r"]]) {
      const result = await taskq([...args, ...store]);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 2,
        stderr: 'taskq: "deploy\\r" is not a task id: ids match ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ (letters, digits, _ . -, at most 128 characters) and are not "." or ".." (write it without spaces: deploy)\n',
      });
    }
    // White space inside an id is no slip of one: no id is given.
    const inside = await taskq(["status", "build 42", ...store]);
    expect(inside.stderr).toBe('taskq: "build 42" is not a run id: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit\n');
  });
});

describe("a schema that holds no store", () => {
  it("names the schema of the database holding one that is named almost so, and makes none", async () => {
    await submit(await workflowFile("schema", WORKFLOW));
    // The workspace's schema with its last character left out, as TASKQ_STORE_SCHEMA, then as --store-schema.
    const typo = SCHEMA.slice(0, -1);
    const message = (source: string) =>
      `taskq: ${durable.SECRET_URL.replace(durable.PASSWORD, "***")}: no taskq store in schema "${typo}" (${source}): nothing was ever submitted there (schema "${SCHEMA}" holds one: did you mean it?); submit, worker and run --store make one\n`;
    const byVariable = await taskq(["status", "r"], { TASKQ_STORE_SCHEMA: typo });
    expect({ code: byVariable.code, stdout: byVariable.stdout, stderr: byVariable.stderr }).toEqual({ code: 1, stdout: "", stderr: message("given by TASKQ_STORE_SCHEMA") });
    for (const args of [["cancel", "r"], ["dead-letters"], ["prune", "--older-than", "1d"], ["redrive", "r", "a"]]) {
      const result = await taskq([...args, "--store-schema", typo]);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 1, stderr: message("given by --store-schema") });
    }
    const made = await durable.store.pool.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [typo]);
    expect(made.rows).toEqual([]);
  });
});

describe("a submit to a schema that holds no store", () => {
  it("makes one and says so, naming the schema of the database holding one that is named almost so: its run waits for a worker of that schema alone (a worker too)", async () => {
    await submit(await workflowFile("made", WORKFLOW));
    // The workspace's schema with its last character mistyped as a letter, as TASKQ_STORE_SCHEMA (a CI variable mistyped).
    const typo = `${SCHEMA.slice(0, -1)}${SCHEMA.endsWith("z") ? "y" : "z"}`;
    try {
      const note = `note: schema "${typo}" had no taskq store: this submit made one; its runs are run only by workers given that schema (TASKQ_STORE_SCHEMA or --store-schema, as this submit was) (schema "${SCHEMA}" holds one: did you mean it? then stop this run with \`taskq cancel made-1 --store-schema ${typo}\` and submit it there)\n`;
      const first = await taskq(["submit", await workflowFile("made", WORKFLOW), "--run-id", "made-1"], { TASKQ_STORE_SCHEMA: typo });
      // Before, nothing on stderr: exit 0, and the run waited in a store no worker serves.
      expect({ code: first.code, stdout: first.stdout, stderr: first.stderr }).toEqual({ code: 0, stdout: "made-1\n", stderr: note });
      // The store is there now: a submit to it again says nothing of it.
      const again = await taskq(["submit", await workflowFile("made", WORKFLOW), "--run-id", "made-2"], { TASKQ_STORE_SCHEMA: typo });
      expect({ code: again.code, stdout: again.stdout, stderr: again.stderr }).toEqual({ code: 0, stdout: "made-2\n", stderr: "" });
    } finally {
      await dropSchema(typo);
    }
    // With --output json, a note record after the run record, nothing on stderr.
    try {
      const json = await taskq(["submit", await workflowFile("made", WORKFLOW), "--run-id", "made-3", "--output", "json", "--store-schema", typo]);
      expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: "" });
      const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records.map((record) => record.event)).toEqual(["run", "note"]);
      expect(records[1]?.message).toBe(
        `schema "${typo}" had no taskq store: this submit made one; its runs are run only by workers given that schema (TASKQ_STORE_SCHEMA or --store-schema, as this submit was) (schema "${SCHEMA}" holds one: did you mean it? then stop this run with \`taskq cancel made-3 --store-schema ${typo}\` and submit it there)`,
      );
    } finally {
      await dropSchema(typo);
    }
    // A worker that makes it names the schema meant too.
    try {
      const worker = await durable.startWorker(["-j", "1"], { TASKQ_STORE_SCHEMA: typo });
      worker.cli.child.kill("SIGTERM");
      expect((await worker.cli.done).code).toBe(143);
      expect(worker.stdout()).toContain(
        `note    schema "${typo}" had no taskq store: this worker made an empty one; it runs only what is submitted to that schema (TASKQ_STORE_SCHEMA or --store-schema, as submit was given) (schema "${SCHEMA}" holds one: did you mean it?)\n`,
      );
    } finally {
      await dropSchema(typo);
    }
  });
});

describe("a submit that makes a store on purpose", () => {
  it("says nothing where the new schema is one of a numbered series (a schema per pipeline) or named like no store", async () => {
    const series = [`${SCHEMA}_1233`, `${SCHEMA}_1234`];
    const far = `far_${SCHEMA.split("_").pop() ?? ""}_q`;
    try {
      // The first of the series is named like no store (5 edits from the workspace's schema); the next is one edit from the
      // first, which holds a store then, and numbered as it is: not a mistype either.
      const first = await taskq(["submit", await workflowFile("series", WORKFLOW), "--run-id", "s-1", "--store-schema", series[0]!]);
      expect({ code: first.code, stdout: first.stdout, stderr: first.stderr }).toEqual({ code: 0, stdout: "s-1\n", stderr: "" });
      const next = await taskq(["submit", await workflowFile("series", WORKFLOW), "--run-id", "s-2", "--store-schema", series[1]!]);
      expect({ code: next.code, stdout: next.stdout, stderr: next.stderr }).toEqual({ code: 0, stdout: "s-2\n", stderr: "" });
      const alone = await taskq(["submit", await workflowFile("series", WORKFLOW), "--run-id", "s-3", "--store-schema", far]);
      expect({ code: alone.code, stdout: alone.stdout, stderr: alone.stderr }).toEqual({ code: 0, stdout: "s-3\n", stderr: "" });
    } finally {
      for (const schema of [...series, far]) await dropSchema(schema);
    }
  });
});
