import { randomBytes } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli.js";
import { eventually } from "../helpers/processes.js";
import { useDurableWorkspace } from "./durable-harness.js";

// Durable mode through the real CLI (see durable-harness.ts): `taskq` processes stand in for machines.
const durable = useDurableWorkspace("taskq_e2e_actions");
const { ENV, SCHEMA, SECRET_URL, runIds, taskq, workflowFile, submit, startWorker, waitForRun, workers } = durable;

/** The commands GitHub Actions' runner has (its extensions, and `stop-commands`), which it alone reads. */
const RUNNER_COMMANDS = ["stop-commands", "add-mask", "error", "warning", "notice", "debug", "group", "endgroup", "echo", "set-output", "save-state", "set-env", "add-path", "add-matcher", "remove-matcher"];

/**
 * The workflow commands GitHub Actions' runner reads in `text`, as its ActionCommandManager does: each line, and each part
 * of one after a "\r" (its log splits a line there), is a command where, after white space, it starts with `::NAME` and a
 * later `::`, or where its first `##[` is followed by `NAME]` (or `NAME ` and a `]`), NAME one it has. A
 * `stop-commands` with a token stops every other command until that token comes as a command of its own.
 */
function runnerReads(text: string): { name: string; data: string }[] {
  const read: { name: string; data: string }[] = [];
  const registered = new Set(RUNNER_COMMANDS);
  let stopToken: string | undefined;
  for (const part of text.split(/\r\n|\n|\r/)) {
    const command = parseV2(part, registered) ?? parseLegacy(part, registered);
    if (command === undefined) continue;
    if (stopToken !== undefined) {
      if (command.name === stopToken) {
        registered.delete(stopToken);
        stopToken = undefined;
        read.push(command);
      }
      continue;
    }
    read.push(command);
    if (command.name === "stop-commands") {
      stopToken = command.data.toLowerCase();
      registered.add(stopToken);
    }
  }
  return read;
}

function parseV2(line: string, registered: Set<string>): { name: string; data: string } | undefined {
  const trimmed = line.trimStart();
  if (!trimmed.startsWith("::")) return undefined;
  const end = trimmed.indexOf("::", 2);
  if (end < 0) return undefined;
  const info = trimmed.slice(2, end);
  const name = (info.includes(" ") ? info.slice(0, info.indexOf(" ")) : info).toLowerCase();
  return registered.has(name) ? { name, data: trimmed.slice(end + 2) } : undefined;
}

function parseLegacy(line: string, registered: Set<string>): { name: string; data: string } | undefined {
  const at = line.indexOf("##[");
  if (at < 0) return undefined;
  const close = line.indexOf("]", at);
  if (close < 0) return undefined;
  const info = line.slice(at + 3, close);
  const name = (info.includes(" ") ? info.slice(0, info.indexOf(" ")) : info).toLowerCase();
  return registered.has(name) ? { name, data: line.slice(close + 1) } : undefined;
}

/** The values the runner masks, of the commands it reads in `text`. */
function masked(text: string): string[] {
  return runnerReads(text)
    .filter((command) => command.name === "add-mask")
    .map((command) => command.data);
}

/**
 * The lines of `text` (as the runner reads them, in order) that show `value`: those before the first mask command of it
 * that the runner reads. That command's own line holds it, and is masked from then on.
 */
function shownUnmasked(text: string, value: string): string[] {
  const lines = text.split(/\r\n|\n|\r/);
  const first = lines.findIndex((_, i) => masked(lines.slice(0, i + 1).join("\n")).includes(value));
  return (first === -1 ? lines : lines.slice(0, first)).filter((line) => line.includes(value));
}

/** A `taskq worker` under GitHub Actions, in JSON: started as the harness starts one, which waits for a plain line. */
function jsonWorker(args: string[] = []): ReturnType<typeof startCli> {
  const worker = startCli(["worker", "--log-dir", durable.ws.logs, "--output", "json", ...args], { cwd: durable.ws.dir, env: { ...ENV, GITHUB_ACTIONS: "true" } });
  workers.push(worker);
  return worker;
}

/** Stops a worker (SIGTERM) and gives its whole output. */
async function stopped(worker: ReturnType<typeof startCli>): Promise<{ stdout: string; stderr: string }> {
  worker.child.kill("SIGTERM");
  const result = await worker.done;
  return { stdout: result.stdout, stderr: result.stderr };
}

/** A task that stops the runner reading commands, writes commands meant as text, resumes, then masks a value. */
const STOPPING = [
  "echo ::add-mask::s3cret",
  "echo token s3cret",
  "echo ::stop-commands::tok9",
  "echo '::error::as text while stopped'",
  "echo ::add-mask::held",
  "echo ::tok9::",
  "echo ::add-mask::after",
];

/** A workflow of a task `stopper` running STOPPING, and a task `other` after it that masks a value of its own. */
function stoppingWorkflow(): string {
  const lines = (commands: string[]) => commands.map((command) => `      ${command}\n`).join("");
  return `tasks:\n  stopper:\n    run: |\n${lines(STOPPING)}  other:\n    dependsOn: stopper\n    run: |\n${lines(["echo ::add-mask::other-secret", "echo other-secret"])}`;
}

describe("taskq worker under GitHub Actions, plain output", () => {
  it("writes a task's `::add-mask::` bare, keeps its own `::stop-commands::` and what it meant as text behind the prefix, so the runner masks another task's value after it", async () => {
    // Last, an `::add-mask::` written in pieces two seconds apart: shown once it ends, whole (in pieces, `sec` was masked alone).
    const pieces = "  pieces:\n    dependsOn: other\n    run: printf '::add-mask::sec'; sleep 2; echo ret\n";
    const file = await workflowFile(`stop-${randomBytes(3).toString("hex")}`, `${stoppingWorkflow()}${pieces}`);
    const worker = await startWorker(["-j", "1"], { GITHUB_ACTIONS: "true" });
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("succeeded");
    expect(await eventually(() => worker.stdout().includes(`ok      ${runId}/pieces`), 10_000)).toBe(true);
    const { stdout, stderr } = await stopped(worker.cli);
    const lines = stdout.split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        "::add-mask::s3cret",
        `${runId}/stopper | token s3cret`,
        `${runId}/stopper | ::stop-commands::tok9`,
        `${runId}/stopper | ::error::as text while stopped`,
        `${runId}/stopper | ::add-mask::held`,
        `${runId}/stopper | ::tok9::`,
        "::add-mask::after",
        "::add-mask::other-secret",
        `${runId}/other | other-secret`,
        "::add-mask::secret",
      ]),
    );
    // What the runner reads: every value masked but the one the task quoted in its stop, and no stop.
    expect(masked(stdout)).toEqual(["s3cret", "after", "other-secret", "secret"]);
    expect(runnerReads(`${stdout}\n${stderr}`).map((command) => command.name)).not.toContain("stop-commands");
  }, 60_000);

  it("keeps a running task's own stop from another task running beside it: the other's `::add-mask::`, written while the stop is open, goes bare", async () => {
    const id = randomBytes(3).toString("hex");
    const [a, b] = [path.join(durable.ws.dir, `a-${id}`), path.join(durable.ws.dir, `b-${id}`)];
    // Each waits for the other's file at most 10 s (200 x 50 ms).
    const wait = (file: string) => `i=0; while [ ! -f ${file} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done`;
    const yaml = `tasks:\n  stopper:\n    run: |\n      echo ::stop-commands::tokA\n      touch ${a}\n      ${wait(b)}\n      echo ::tokA::\n  masker:\n    run: |\n      ${wait(a)}\n      echo ::add-mask::b-secret\n      echo b-secret\n      touch ${b}\n`;
    const file = await workflowFile(`beside-${id}`, yaml);
    const worker = await startWorker(["-j", "2"], { GITHUB_ACTIONS: "true" });
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("succeeded");
    expect(await eventually(() => worker.stdout().includes(`ok      ${runId}/stopper`) && worker.stdout().includes(`ok      ${runId}/masker`), 10_000)).toBe(true);
    const { stdout } = await stopped(worker.cli);
    expect(stdout.split("\n")).toEqual(expect.arrayContaining([`${runId}/stopper | ::stop-commands::tokA`, "::add-mask::b-secret", `${runId}/masker | b-secret`, `${runId}/stopper | ::tokA::`]));
    expect(masked(stdout)).toEqual(["b-secret"]);
  }, 60_000);

  it("starts a retry with no stop in force: the first attempt's `::stop-commands::` does not hold the second's `::add-mask::` behind the prefix", async () => {
    const marker = `first-${randomBytes(3).toString("hex")}`;
    const run = `if [ -f ${marker} ]; then echo ::add-mask::s3cretA; echo token=s3cretA; else touch ${marker}; echo ::stop-commands::tok1; exit 1; fi`;
    const file = await workflowFile(`retry-${randomBytes(3).toString("hex")}`, `tasks:\n  lint:\n    run: ${JSON.stringify(run)}\n    retries: 1\n    backoff: { base: 50ms, max: 50ms }\n`);
    const worker = await startWorker(["-j", "1"], { GITHUB_ACTIONS: "true" });
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("succeeded");
    expect(await eventually(() => worker.stdout().includes(`ok      ${runId}/lint`), 10_000)).toBe(true);
    const { stdout } = await stopped(worker.cli);
    const lines = stdout.split("\n");
    expect(lines).toContain(`${runId}/lint | ::stop-commands::tok1`);
    expect(lines).toContain("::add-mask::s3cretA");
    expect(lines).toContain(`${runId}/lint | token=s3cretA`);
    expect(masked(stdout)).toEqual(["s3cretA"]);
  }, 60_000);

  it("ends a group a task's attempt left open before the line that says how it ended: the runner folds nothing of taskq's, nor the next task's lines, into it", async () => {
    // A script under `set -e` that fails between its `::group::` and its `::endgroup::`; then one that ends its own.
    const yaml = "tasks:\n  install:\n    run: \"set -e; echo '::group::npm ci'; echo installing; false; echo '::endgroup::'\"\n  lint:\n    run: \"sleep 0.3; echo '::group::lint'; echo linting; echo '::endgroup::'\"\n";
    const file = await workflowFile(`group-${randomBytes(3).toString("hex")}`, yaml);
    const worker = await startWorker(["-j", "1"], { GITHUB_ACTIONS: "true" });
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("failed");
    expect(await eventually(() => worker.stdout().includes(`${runId}/install: `) && worker.stdout().includes(`${runId}/lint`), 10_000)).toBe(true);
    const { stdout } = await stopped(worker.cli);
    const lines = stdout.split("\n");
    const opened = lines.indexOf("::group::npm ci");
    const failed = lines.findIndex((line) => line.includes(`FAILED  ${runId}/install: `));
    expect(opened).toBeGreaterThanOrEqual(0);
    expect(failed).toBeGreaterThan(opened);
    // Before: no `::endgroup::` until lint's own, and the FAILED line was inside the group.
    expect(lines.slice(opened + 1, failed)).toEqual([`${runId}/install | installing`, "::endgroup::"]);
    // Every group the runner reads ends, once: lint's own `::endgroup::` gets none of taskq's beside it.
    const groups = runnerReads(stdout).filter((command) => command.name === "group" || command.name === "endgroup").map((command) => command.name);
    expect(groups).toEqual(["group", "endgroup", "group", "endgroup"]);
  }, 60_000);

  it("ends a group a task's attempt left open before the line that says a stop gave the task back", async () => {
    const file = await workflowFile(`group-stop-${randomBytes(3).toString("hex")}`, "tasks:\n  deploy:\n    run: \"echo '::group::deploy'; echo working; sleep 60\"\n");
    const worker = await startWorker(["-j", "1", "--shutdown-timeout", "1s", "--kill-grace", "1s"], { GITHUB_ACTIONS: "true" });
    const runId = await submit(file);
    expect(await eventually(() => worker.stdout().includes(`${runId}/deploy | working`), 15_000)).toBe(true);
    const { stdout } = await stopped(worker.cli);
    // Given back, the task is queued again: cancelled, so that no later test's worker runs it.
    await taskq(["cancel", runId]);
    expect((await waitForRun(runId)).state).toBe("cancelled");
    const lines = stdout.split("\n");
    const opened = lines.indexOf("::group::deploy");
    const released = lines.findIndex((line) => line.includes(`release ${runId}/deploy: `));
    expect(opened).toBeGreaterThanOrEqual(0);
    expect(released).toBeGreaterThan(opened);
    // Before: taskq's `::endgroup::` came only before the worker's last lines, after the release line, folded into the group.
    expect(lines.slice(opened + 1, released).filter((line) => line === "::endgroup::")).toHaveLength(1);
    const groups = runnerReads(stdout).filter((command) => command.name === "group" || command.name === "endgroup").map((command) => command.name);
    expect(groups).toEqual(["group", "endgroup"]);
  }, 60_000);
});

describe("taskq worker under GitHub Actions, plain output, and the older form `##[stop-commands]` (README's known gap)", () => {
  it("writes the task's line as it is, which the runner reads behind the prefix too; the task's own `::TOKEN::` goes bare, and ends that stop", async () => {
    const file = await workflowFile(
      `legacy-${randomBytes(3).toString("hex")}`,
      "tasks:\n  stopper:\n    run: |\n      echo 'x ##[stop-commands]leg'\n      echo ::add-mask::during\n      echo ::leg::\n      echo ::add-mask::after\n",
    );
    const worker = await startWorker(["-j", "1"], { GITHUB_ACTIONS: "true" });
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("succeeded");
    expect(await eventually(() => worker.stdout().includes(`ok      ${runId}/stopper`), 10_000)).toBe(true);
    const { stdout } = await stopped(worker.cli);
    expect(stdout.split("\n")).toEqual(expect.arrayContaining([`${runId}/stopper | x ##[stop-commands]leg`, "::add-mask::during", "::leg::", "::add-mask::after"]));
    // The stop read behind the prefix holds the mask after it back, until the task's token.
    expect(runnerReads(stdout).map((command) => `${command.name} ${command.data}`)).toEqual(["stop-commands leg", "leg ", "add-mask after"]);
  }, 60_000);
});

describe("taskq worker under GitHub Actions, --output json", () => {
  it("writes every `::add-mask::` of a task to stderr, whatever stop it wrote, its older form `##[add-mask]` too, and no record the runner reads a command in", async () => {
    const file = await workflowFile(
      `json-${randomBytes(3).toString("hex")}`,
      `${stoppingWorkflow()}  legacy:\n    dependsOn: other\n    run: |\n      echo 'x ##[stop-commands]leg'\n      echo '##[add-mask]legacy-secret'\n      echo '##[error]no annotation'\n`,
    );
    const worker = jsonWorker(["-j", "1"]);
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("succeeded");
    expect(await eventually(() => worker.stdout().includes(`"event":"finished","runId":"${runId}","id":"legacy"`), 10_000)).toBe(true);
    const { stdout, stderr } = await stopped(worker);
    // Each record's text as the task wrote it.
    const texts = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; runId?: string; text?: string })
      .filter((record) => record.event === "output" && record.runId === runId)
      .map((record) => record.text);
    expect(texts).toEqual([...STOPPING.map((command) => command.replace(/^echo '?|'$/g, "")), "::add-mask::other-secret", "other-secret", "x ##[stop-commands]leg", "##[add-mask]legacy-secret", "##[error]no annotation"]);
    // On stderr, every value to mask, the one held by the task's own stop too: the runner never sees that stop, inside a record.
    expect(stderr.split("\n").filter((line) => line.startsWith("::"))).toEqual(["::add-mask::s3cret", "::add-mask::held", "::add-mask::after", "::add-mask::other-secret", "::add-mask::legacy-secret"]);
    // In stdout, the runner reads nothing: no stop, no annotation.
    expect(runnerReads(stdout)).toEqual([]);
    expect(masked(stderr)).toEqual(["s3cret", "held", "after", "other-secret", "legacy-secret"]);
  }, 60_000);

  it("starts a retry with no stop in force: the second attempt's `::add-mask::` goes to stderr", async () => {
    const marker = `first-${randomBytes(3).toString("hex")}`;
    const run = `if [ -f ${marker} ]; then echo ::add-mask::s3cretB; echo token=s3cretB; else touch ${marker}; echo ::stop-commands::tok2; exit 1; fi`;
    const file = await workflowFile(`retry-json-${randomBytes(3).toString("hex")}`, `tasks:\n  lint:\n    run: ${JSON.stringify(run)}\n    retries: 1\n    backoff: { base: 50ms, max: 50ms }\n`);
    const worker = jsonWorker(["-j", "1"]);
    const runId = await submit(file);
    expect((await waitForRun(runId)).state).toBe("succeeded");
    expect(await eventually(() => worker.stdout().includes(`"event":"finished","runId":"${runId}","id":"lint","attempt":2`), 10_000)).toBe(true);
    const { stderr } = await stopped(worker);
    expect(stderr.split("\n").filter((line) => line.startsWith("::"))).toEqual(["::add-mask::s3cretB"]);
  }, 60_000);
});

describe("taskq dead-letters under GitHub Actions", () => {
  it("quotes a failed task's last lines that hold a workflow command between `::stop-commands::` and its token, as the summary does: the runner, which trims their indent, made a second annotation and a group of the rest", async () => {
    const file = await workflowFile(
      `dead-${randomBytes(3).toString("hex")}`,
      "tasks:\n  lint:\n    run: |\n      echo '::error file=a.ts,line=3::bad thing'\n      echo '::group::Build'\n      echo 'x ##[warning]legacy'\n      echo hello\n      exit 3\n  quiet:\n    run: echo 'plain words'; exit 2\n",
    );
    const runId = `dl-${SCHEMA}`;
    runIds.push(runId);
    const run = await taskq(["run", "--store", SECRET_URL, "--run-id", runId, "--log-dir", durable.ws.logs, file]);
    expect(run.code).toBe(1);
    const gitHub = await taskq(["dead-letters", runId], { GITHUB_ACTIONS: "true" });
    expect({ code: gitHub.code, stderr: gitHub.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = gitHub.stdout.split("\n");
    const stop = lines.findIndex((line) => line.startsWith("::stop-commands::"));
    const token = /^::stop-commands::(taskq-[0-9a-f]{16})$/.exec(lines[stop] ?? "")?.[1];
    expect(token).toBeDefined();
    expect(lines.slice(stop + 1, stop + 6)).toEqual(["    ::error file=a.ts,line=3::bad thing", "    ::group::Build", "    x ##[warning]legacy", "    hello", `::${token}::`]);
    // One stop only: the task whose lines hold no command is quoted as before.
    expect(lines.filter((line) => line.startsWith("::stop-commands::"))).toHaveLength(1);
    expect(lines).toContain("    plain words");
    // The runner reads the stop and its end, nothing between.
    expect(runnerReads(gitHub.stdout).map((command) => command.name)).toEqual(["stop-commands", token]);
    const outside = await taskq(["dead-letters", runId]);
    expect(outside.stdout).not.toContain("::stop-commands::");
    expect(outside.stdout.split("\n")).toContain("    ::group::Build");
  }, 60_000);
  it("shows a last line that a worker outside GitHub Actions cut within a word cut after a whole one, as the summary does, status's too: the runner masks a value only whole, and showed a token's first part", async () => {
    const token = `ghs_${"T0k3n".repeat(7)}1`;
    const words = "word ".repeat(197);
    const across = `${words}${token} after`;
    const file = await workflowFile(`cut-${randomBytes(3).toString("hex")}`, `tasks:\n  lint:\n    run: echo '${across}'; exit 3\n`);
    const runId = `cut-${SCHEMA}`;
    runIds.push(runId);
    // The worker outside GitHub Actions: the store keeps the line cut at the 1,000th character, within the token.
    const run = await taskq(["run", "--store", SECRET_URL, "--run-id", runId, "--log-dir", durable.ws.logs, file]);
    expect(run.code).toBe(1);
    expect((await durable.store.runStatus(runId)).tasks[0]?.tail).toEqual([`${across.slice(0, 1000)}… (${across.length} bytes)`]);
    const inWords = `${words.trimEnd()}… (${across.length} bytes)`;
    const gitHub = await taskq(["dead-letters", runId], { GITHUB_ACTIONS: "true" });
    expect(gitHub.stdout.split("\n")).toContain(`    ${inWords}`);
    expect(gitHub.stdout).not.toContain(token.slice(0, 10));
    const status = await taskq(["status", runId], { GITHUB_ACTIONS: "true" });
    expect(status.stdout.split("\n")).toContain(`      ${inWords}`);
    expect(status.stdout).not.toContain(token.slice(0, 10));
    // Outside GitHub Actions, as kept.
    expect((await taskq(["dead-letters", runId])).stdout.split("\n")).toContain(`    ${across.slice(0, 1000)}… (${across.length} bytes)`);
    // In JSON too: the record's `tail` as the text shows it, under GitHub Actions only.
    for (const args of [["dead-letters", runId], ["status", runId]]) {
      const json = await taskq([...args, "--output", "json"], { GITHUB_ACTIONS: "true" });
      expect(json.stdout).not.toContain(token.slice(0, 10));
      const record = JSON.parse(json.stdout.trim().split("\n").at(-1) as string) as { tail?: string[]; deadLetters?: { tail: string[] }[] };
      expect(record.tail ?? record.deadLetters?.[0]?.tail).toEqual([inWords]);
      expect((await taskq([...args, "--output", "json"])).stdout).toContain(JSON.stringify(`${across.slice(0, 1000)}… (${across.length} bytes)`));
    }
  }, 60_000);
  it("writes the mask commands of a failed task's last lines (a worker outside GitHub Actions ran it) bare before the stop that quotes them, in dead-letters and status, and to stderr before the record with --output json: inside the stop the runner read none, and the value showed", async () => {
    const value = "s3cr3t-value-123";
    const legacy = `legacy-${value}`;
    const apiEnded = path.join(durable.ws.dir, `api-ended-${randomBytes(3).toString("hex")}`);
    const file = await workflowFile(
      `mask-${randomBytes(3).toString("hex")}`,
      // `api`, which shows the value `deploy` masks, fails first and is quoted first: the masks go before every task's lines.
      `tasks:\n  api:\n    run: |\n      echo "key=${value}"\n      touch ${apiEnded}\n      exit 2\n  deploy:\n    run: |\n      until [ -e ${apiEnded} ]; do sleep 0.05; done; sleep 2\n      T=${value}\n      echo "::add-mask::$T"\n      echo "using $T"\n      echo "x ##[add-mask]legacy-$T"\n      echo "with legacy-$T"\n      exit 3\n`,
    );
    const runId = `mask-${SCHEMA}`;
    runIds.push(runId);
    const run = await taskq(["run", "--store", SECRET_URL, "--run-id", runId, "--log-dir", durable.ws.logs, file]);
    expect(run.code).toBe(1);
    for (const args of [["dead-letters", runId], ["status", runId]]) {
      const text = await taskq(args, { GITHUB_ACTIONS: "true" });
      expect(text.stdout).toContain(`using ${value}`);
      // Before: `api`'s `key=...` came before `deploy`'s masks, shown unmasked (shownUnmasked below). `api` ends first, so is
      // quoted first, as a rule (the lines are in the order their ends were recorded: not asserted, a loaded machine may record late).
      expect(masked(text.stdout)).toEqual(expect.arrayContaining([value, legacy]));
      expect(shownUnmasked(text.stdout, value)).toEqual([]);
      // The quoted lines still go between a stop and its token: the runner reads the masks, the stop and its end.
      expect(runnerReads(text.stdout).map((command) => command.name)).toEqual(["add-mask", "add-mask", "stop-commands", expect.stringMatching(/^taskq-[0-9a-f]{16}$/)]);
      const json = await taskq([...args, "--output", "json"], { GITHUB_ACTIONS: "true" });
      expect(json.stdout).toContain(`using ${value}`);
      expect(runnerReads(json.stdout)).toEqual([]);
      expect(masked(json.stderr)).toEqual(expect.arrayContaining([value, legacy]));
      expect(shownUnmasked(`${json.stderr}\n${json.stdout}`, value)).toEqual([]);
      // Outside GitHub Actions, no command is added.
      const outside = await taskq([...args, "--output", "json"]);
      expect(outside.stderr).not.toContain("::add-mask::");
    }
  }, 60_000);
  it("under GitHub Actions, dead-letters --output json, status --output json and run --store --output json's summary write each `[` after `##` in a task's last lines as `\\u005b`, as a run's records do: the runner read a `##[stop-commands]` there and stopped reading every command after it", async () => {
    const file = await workflowFile(`json-dead-${randomBytes(3).toString("hex")}`, "tasks:\n  lint:\n    run: |\n      echo 'x ##[stop-commands]leg'\n      echo '##[error]no annotation'\n      exit 3\n");
    const runId = `dlj-${SCHEMA}`;
    runIds.push(runId);
    // run --store's own summary record too.
    const run = await taskq(["run", "--store", SECRET_URL, "--run-id", runId, "--log-dir", durable.ws.logs, "--output", "json", file], { GITHUB_ACTIONS: "true" });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain("##[");
    expect(run.stdout.trim().split("\n").at(-1)).toContain('"event":"summary"');
    const tail = ["x ##[stop-commands]leg", "##[error]no annotation"];
    for (const args of [["dead-letters", runId], ["status", runId]]) {
      const gitHub = await taskq([...args, "--output", "json"], { GITHUB_ACTIONS: "true" });
      expect(gitHub.stdout).not.toContain("##[");
      expect(runnerReads(gitHub.stdout)).toEqual([]);
      const record = JSON.parse(gitHub.stdout.trim().split("\n").at(-1) as string) as { tail?: string[]; deadLetters?: { tail: string[] }[] };
      expect(record.tail ?? record.deadLetters?.[0]?.tail).toEqual(tail);
      // Outside GitHub Actions, as before.
      expect((await taskq([...args, "--output", "json"])).stdout).toContain("x ##[stop-commands]leg");
    }
  }, 60_000);
});
