import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { chmod, chown, mkdir, readdir, rename, symlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, runCli, startCli, workspace } from "../helpers/cli.js";
import { eventually, findLeftovers } from "../helpers/processes.js";
import { DATABASE_URL, dropSchema } from "../store/helpers.js";

const DAY_MS = 86_400_000;
const ENV = { TASKQ_STORE: "" };
/** What taskq writes into every run folder it makes (see log-folders.ts). */
const STAMP = ".taskq-run";
const STAMP_TEXT = "taskq run folder: taskq prune --logs deletes it once old\n";

/** Makes `dir` with `files` (name -> text), everything in it last written `ageMs` ago. */
async function folder(dir: string, files: Record<string, string>, ageMs: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  const when = new Date(Date.now() - ageMs);
  for (const [name, text] of Object.entries(files)) {
    await writeFile(path.join(dir, name), text);
    await utimes(path.join(dir, name), when, when);
  }
  await utimes(dir, when, when);
}

/** Makes everything in `dir` (made by taskq) last written `ageMs` ago. */
async function age(dir: string, ageMs: number): Promise<void> {
  const when = new Date(Date.now() - ageMs);
  for (const name of await readdir(dir)) await utimes(path.join(dir, name), when, when);
  await utimes(dir, when, when);
}

/** A run whose one task is silent for ever, started: its CLI, and its run folder. */
async function startSilentRun() {
  const ws = await workspace(`tasks:\n  quiet: { run: 'echo started > "$WITNESS"; sleep 1000' }\n`);
  const witness = path.join(ws.dir, "started");
  const cli = startCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir, env: { WITNESS: witness } });
  expect(await eventually(() => existsSync(witness), 15_000)).toBe(true);
  // A run of one task starts its guard just after the task: a SIGKILL before it is up would leave the task running.
  expect(await eventually(() => guardIsUp(cli.child.pid!), 15_000)).toBe(true);
  const [runId] = (await entries(ws.logs))!;
  return { ws, cli, runId: runId!, runDir: path.join(ws.logs, runId!) };
}

/** Whether taskq `pid` has its guard running (`sh -c ... taskq-guard <pid> ...`). */
function guardIsUp(pid: number): boolean {
  return readdirSync("/proc").some((name) => {
    try {
      return /^\d+$/.test(name) && readFileSync(`/proc/${name}/cmdline`, "latin1").includes(`\0taskq-guard\0${pid}\0`);
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** A pid no process has: a child's, once it has exited and been reaped. */
function deadPid(): number {
  const child = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

/** The folder's entries, sorted, or undefined when it is gone. */
async function entries(dir: string): Promise<string[] | undefined> {
  return existsSync(dir) ? (await readdir(dir)).sort() : undefined;
}


/** A log root users share, as /tmp (mode 1777: each user may delete only their own), in a workspace others may enter. */
async function sharedLogRoot() {
  const ws = await workspace("tasks: {}\n");
  await chmod(ws.dir, 0o755);
  await mkdir(ws.logs);
  await chmod(ws.logs, 0o1777);
  return { ws, root: ws.logs };
}

describe("taskq prune --logs", () => {
  it("deletes the run folders last written before the age given; leaves alone folders in use and anything not a run folder", async () => {
    const ws = await workspace("");
    const root = ws.logs;
    const old = 10 * DAY_MS;
    await folder(path.join(root, "20261101-080000-aaaa"), { "build.log": "old\n", "test.log": "old\n" }, old);
    await folder(path.join(root, "20261130-080000-bbbb"), { "build.log": "recent\n" }, DAY_MS);
    // A durable run's folder (any id, stamped) with one log written yesterday: its newest log counts.
    await folder(path.join(root, "nightly-42"), { "a.log": "old\n", [STAMP]: STAMP_TEXT }, old);
    await utimes(path.join(root, "nightly-42", "a.log"), new Date(Date.now() - DAY_MS), new Date(Date.now() - DAY_MS));
    // Held by a live process of this host (this test's), by a process of another host, and by a process gone.
    await folder(path.join(root, "20261101-090000-live"), { "a.log": "x\n", [`.taskq-active-${process.pid}`]: `${hostname()}\n` }, old);
    await folder(path.join(root, "20261101-090000-else"), { "a.log": "x\n", ".taskq-active-4242": "some-other-host\n" }, old);
    await folder(path.join(root, "20261101-090000-dead"), { "a.log": "x\n", [`.taskq-active-${deadPid()}`]: `${hostname()}\n` }, old);
    // Not taskq's: a folder with another file, a folder holding a folder, an empty folder not named like a run.
    await folder(path.join(root, "20261101-100000-note"), { "a.log": "x\n", "notes.txt": "mine\n" }, old);
    await folder(path.join(root, "photos", "2019"), { "a.log": "x\n" }, old);
    await folder(path.join(root, "photos"), {}, old);
    await folder(path.join(root, "empty-folder"), {}, old);
    // An empty run folder (a run that wrote no log), a plain file, and a link to an old run folder.
    await folder(path.join(root, "20261101-110000-none"), {}, old);
    await writeFile(path.join(root, "README.log"), "not a folder\n");
    await folder(path.join(ws.dir, "elsewhere", "20261101-080000-link"), { "a.log": "x\n" }, old);
    await symlink(path.join(ws.dir, "elsewhere", "20261101-080000-link"), path.join(root, "20261101-080000-link"));
    const prunable = ["20261101-080000-aaaa", "20261101-090000-dead", "20261101-110000-none"];

    const before = (await entries(root))!;
    const dry = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "7d", "--dry-run", "--output", "json"], { env: ENV });
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    const listed = JSON.parse(dry.stdout) as { before: string; logDir: string; wouldPrune: string[] };
    expect(listed.wouldPrune).toEqual(prunable);
    expect(listed.logDir).toBe(root);
    expect(Math.abs(Date.parse(listed.before) - (Date.now() - 7 * DAY_MS))).toBeLessThan(60_000);
    expect(await entries(root)).toEqual(before);

    const pruned = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "7d"], { env: ENV });
    expect(pruned.code).toBe(0);
    // The two held (by a live process here, by one on another host) are said to be kept, as old as they are.
    const held = ["20261101-090000-else", "20261101-090000-live"].map((id) => `  ${path.join(root, id)}\n`).join("");
    expect(pruned.stdout).toMatch(
      new RegExp(`^pruned 3 run folders last written before \\S+:\n${prunable.map((id) => `  ${path.join(root, id)}\n`).join("")}kept 2 run folders last written before \\S+, in use \\(a run or worker holds them\\):\n${held}$`),
    );
    expect((JSON.parse(dry.stdout) as { inUse: string[] }).inUse).toEqual(["20261101-090000-else", "20261101-090000-live"]);
    expect(await entries(root)).toEqual(before.filter((name) => !prunable.includes(name)));
    expect(await entries(path.join(root, "20261101-090000-live"))).toEqual([`.taskq-active-${process.pid}`, "a.log"]);
    expect(await entries(path.join(ws.dir, "elsewhere", "20261101-080000-link"))).toEqual(["a.log"]);

    // Nothing older than a year.
    expect((await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "365d"], { env: ENV })).stdout).toMatch(
      new RegExp(`^no run folder in ${root} last written before \\S+\n$`),
    );
    // A root that does not exist (a mistyped --log-dir, a cron job in another folder) is an error that
    // names it, exit 1, as one that is not a folder is: it was "no run folder in ...", exit 0.
    const noSuch = path.join(ws.dir, "no-such");
    for (const args of [[], ["--dry-run"]]) {
      const missing = await runCli(["prune", "--logs", "--log-dir", noSuch, "--older-than", "1d", ...args], { env: ENV });
      expect(missing, args.join(" ")).toMatchObject({ code: 1, stdout: "", stderr: `taskq: cannot read the log folder ${noSuch}: no such file or directory (ENOENT)\n` });
    }
    const missingJson = await runCli(["prune", "--logs", "--older-than", "1d", "--output", "json"], { env: ENV, cwd: ws.dir });
    expect(missingJson).toMatchObject({ code: 1, stderr: "taskq: cannot read the log folder .taskq/logs: no such file or directory (ENOENT)\n" });
    expect(JSON.parse(missingJson.stdout)).toMatchObject({ event: "error", code: "LOG_DIR", exitCode: 1, message: "cannot read the log folder .taskq/logs: no such file or directory (ENOENT)" });
    const file = path.join(ws.dir, "a-file");
    await writeFile(file, "");
    expect(await runCli(["prune", "--logs", "--log-dir", file, "--older-than", "1d"], { env: ENV })).toMatchObject({ code: 1, stderr: `taskq: cannot read the log folder ${file}: ${file} is not a folder (ENOTDIR)\n` });
    // Without --logs, prune means the durable runs: with no store, the error says where to look.
    const noStore = await runCli(["prune", "--older-than", "1d"], { env: ENV });
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toBe("taskq: no store: pass --store postgres://user@host/db or set TASKQ_STORE (prune --logs prunes this machine's log folders)\n");
    const logDirAlone = await runCli(["prune", "--log-dir", root, "--older-than", "1d"], { env: { TASKQ_STORE: "postgres://nobody@127.0.0.1:1/none" } });
    expect(logDirAlone.code).toBe(2);
    expect(logDirAlone.stderr).toBe("taskq: --log-dir goes with --logs (prune this machine's log folders); without it, prune deletes the store's runs\n");
    // --logs prunes no store: a store named with it would be left as it was, the runs it holds kept.
    for (const [flag, value] of [["--store", "postgres://nobody@127.0.0.1:1/none"], ["--store-schema", "ci"]]) {
      const withStore = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "1d", flag!, value!], { env: ENV });
      expect(withStore).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${flag} goes without --logs (prune the store's runs); with it, prune deletes this machine's log folders only\n` });
    }
    const badAge = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "soon"], { env: ENV });
    expect(badAge.code).toBe(2);
    expect(badAge.stderr).toBe('taskq: --older-than: "soon" is not an age like 7d, 12h or 30m\n');
    // One written almost right says what is wrong, and the age meant.
    const unordered = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "12h1d"], { env: ENV });
    expect(unordered).toMatchObject({ code: 2, stderr: 'taskq: --older-than: "12h1d" is not an age like 7d, 12h or 30m (write it with its units in the order d, h, m, s: 1d12h)\n' });
  });

  it("never deletes the folder of a run in progress, however silent its task; deletes it once the run ended, and after taskq was SIGKILLed", async () => {
    const { ws, cli, runId, runDir } = await startSilentRun();
    const prune = (args: string[] = []) => runCli(["prune", "--logs", "--log-dir", ws.logs, "--older-than", "0s", ...args], { env: ENV });
    expect(await entries(runDir)).toEqual([`.taskq-active-${cli.child.pid}`, STAMP, "quiet.log"]);
    // Its log was last written long ago as far as prune can tell (an age of 0s): still kept.
    await utimes(path.join(runDir, "quiet.log"), new Date(Date.now() - DAY_MS), new Date(Date.now() - DAY_MS));
    const whileRunning = await prune();
    expect(whileRunning.code).toBe(0);
    // Not "no run folder ... last written before": it is one, and kept.
    expect(whileRunning.stdout).toBe(`kept 1 run folder last written before ${/before (\S+),/.exec(whileRunning.stdout)?.[1]}, in use (a run or worker holds it):\n  ${runDir}\n`);
    expect(await entries(runDir)).toEqual([`.taskq-active-${cli.child.pid}`, STAMP, "quiet.log"]);

    // SIGKILLed: no exit hook runs, the marker stays, and names a process that is gone.
    cli.child.kill("SIGKILL");
    await cli.done;
    expect(await entries(runDir)).toEqual([`.taskq-active-${cli.child.pid}`, STAMP, "quiet.log"]);
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 20_000)).toBe(true);
    const afterKill = await prune();
    expect(afterKill.stdout).toBe(`pruned 1 run folder last written before ${/before (\S+):/.exec(afterKill.stdout)?.[1]}:\n  ${runDir}\n`);
    expect(await entries(ws.logs)).toEqual([]);

    // A run that ends takes its marker away.
    const quick = await workspace("tasks:\n  hello: { run: echo hello }\n");
    expect((await runCli(["run", quick.file, "--log-dir", ws.logs], { cwd: quick.dir })).code).toBe(0);
    const [finished] = (await entries(ws.logs))!;
    expect(await entries(path.join(ws.logs, finished!))).toEqual([STAMP, "hello.log"]);
    expect((await prune()).stdout).toMatch(new RegExp(`^pruned 1 run folder last written before \\S+:\n  ${path.join(ws.logs, finished!)}\n$`));
  });

  it("deletes only folders taskq can tell it made: stamped by the run or worker that wrote them, or named like its run ids; never another program's logs", async () => {
    const ws = await workspace("tasks:\n  hello: { run: echo hello }\n");
    const root = ws.logs;
    const old = 100 * DAY_MS;
    // A durable run of a chosen id, its logs written by this machine's worker (`run --store`).
    const schema = `taskq_e2e_prune_${randomBytes(4).toString("hex")}`;
    try {
      const durable = await runCli(["run", ws.file, "--log-dir", root, "--run-id", "build-1234"], { cwd: ws.dir, env: { TASKQ_STORE: DATABASE_URL, TASKQ_STORE_SCHEMA: schema } });
      expect(durable.code).toBe(0);
    } finally {
      await dropSchema(schema);
    }
    expect(await entries(path.join(root, "build-1234"))).toEqual([STAMP, "hello.log"]);
    // A local run.
    expect((await runCli(["run", ws.file, "--log-dir", root], { cwd: ws.dir, env: ENV })).code).toBe(0);
    const [local] = (await entries(root))!.filter((name) => name !== "build-1234");
    expect(await entries(path.join(root, local!))).toEqual([STAMP, "hello.log"]);
    await age(path.join(root, "build-1234"), old);
    await age(path.join(root, local!), old);
    // Other programs' logs, as in /var/log given as --log-dir by mistake; a file named like the stamp that is not taskq's.
    await folder(path.join(root, "mysql"), { "error.log": "mine\n" }, old);
    await folder(path.join(root, "target"), { "precious.log": "mine\n" }, old);
    await folder(path.join(root, "notes"), { "a.log": "mine\n", [STAMP]: "my own\n" }, old);
    // Made by earlier versions of taskq (no stamp), named like a local run's id or a durable run's default id; a stamped folder with no log.
    await folder(path.join(root, "20261101-080000-aaaa"), { "a.log": "x\n" }, old);
    await folder(path.join(root, "r-mf3k2j1a-0badc0de"), { "a.log": "x\n" }, old);
    await folder(path.join(root, "nightly-7"), { [STAMP]: STAMP_TEXT }, old);
    const prunable = ["20261101-080000-aaaa", local!, "build-1234", "nightly-7", "r-mf3k2j1a-0badc0de"].sort();

    const pruned = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "30d"], { env: ENV });
    expect(pruned.stderr).toBe("");
    expect(pruned.stdout).toMatch(new RegExp(`^pruned 5 run folders last written before \\S+:\n${prunable.map((id) => `  ${path.join(root, id)}\n`).join("")}$`));
    expect(await entries(root)).toEqual(["mysql", "notes", "target"]);
    expect(await entries(path.join(root, "target"))).toEqual(["precious.log"]);
  });

  // Run as root here (as CI is): the folders of two users in one log root, pruned by one of them (nobody, 65534).
  it.skipIf(process.getuid?.() !== 0)("in a log root users share, a folder another user's cannot be deleted: said, exit 1, and the user's own after it are pruned all the same", async () => {
    const { ws, root } = await sharedLogRoot();
    const old = 100 * DAY_MS;
    const theirs = path.join(root, "20261101-080000-aaaa");
    const mine = ["20261101-080000-bbbb", "20261102-080000-cccc"];
    await folder(theirs, { [STAMP]: STAMP_TEXT, "a.log": "theirs\n" }, old);
    for (const name of mine) {
      await folder(path.join(root, name), { [STAMP]: STAMP_TEXT, "a.log": "mine\n" }, old);
      for (const entry of [name, `${name}/${STAMP}`, `${name}/a.log`]) await chown(path.join(root, entry), 65534, 65534);
    }
    const asNobody = { env: ENV, cwd: ws.dir, uid: 65534, gid: 65534 };

    const pruned = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "30d"], asNobody);
    expect(pruned.stderr).toBe(`taskq: cannot delete ${theirs}: permission denied (EACCES)\n`);
    expect(pruned.stdout).toMatch(new RegExp(`^pruned 2 run folders last written before \\S+:\n${mine.map((id) => `  ${path.join(root, id)}\n`).join("")}$`));
    expect(pruned.code).toBe(1);
    expect(await entries(root)).toEqual(["20261101-080000-aaaa"]);
    expect(await entries(theirs)).toEqual([STAMP, "a.log"]);

    const json = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "30d", "--output", "json"], asNobody);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ before: expect.any(String), logDir: root, pruned: [], failed: [{ run: "20261101-080000-aaaa", error: "permission denied (EACCES)" }] });
    expect(json.stderr).toBe(`taskq: cannot delete ${theirs}: permission denied (EACCES)\n`);
  });

  // Run as root here: root's own run folder, mode 700, in a root shared with nobody (65534).
  it.skipIf(process.getuid?.() !== 0)("in a log root users share, a run folder another user's that cannot even be read (mode 700) is said, exit 1, not passed over in silence", async () => {
    const { ws, root } = await sharedLogRoot();
    const theirs = path.join(root, "20261101-080000-aaaa");
    const private_ = path.join(root, "private"); // not named as taskq names its runs: any program's, passed over
    const mine = path.join(root, "20261102-080000-bbbb");
    await folder(theirs, { [STAMP]: STAMP_TEXT, "a.log": "theirs\n" }, 100 * DAY_MS);
    await folder(private_, { "a.log": "theirs\n" }, 100 * DAY_MS);
    for (const dir of [theirs, private_]) await chmod(dir, 0o700);
    await folder(mine, { [STAMP]: STAMP_TEXT, "a.log": "mine\n" }, 100 * DAY_MS);
    for (const entry of [mine, `${mine}/${STAMP}`, `${mine}/a.log`]) await chown(entry, 65534, 65534);
    const asNobody = { env: ENV, cwd: ws.dir, uid: 65534, gid: 65534 };

    const dry = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "30d", "--dry-run"], asNobody);
    expect(dry.stderr).toBe(`taskq: cannot read ${theirs}: permission denied (EACCES)\n`);
    expect(dry.code).toBe(1);
    const pruned = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "30d", "--output", "json"], asNobody);
    expect(pruned.stderr).toBe(`taskq: cannot read ${theirs}: permission denied (EACCES)\n`);
    expect(JSON.parse(pruned.stdout)).toEqual({ before: expect.any(String), logDir: root, pruned: ["20261102-080000-bbbb"], failed: [{ run: "20261101-080000-aaaa", error: "cannot read: permission denied (EACCES)" }] });
    expect(pruned.code).toBe(1);
    expect(await entries(root)).toEqual(["20261101-080000-aaaa", "private"]);
    expect(await entries(theirs)).toEqual([STAMP, "a.log"]);
  });

  it.skipIf(!existsSync("/dev/full"))("a prune whose stdout cannot be written (a full disk) exits 1 and says on stderr that it pruned, and how many, in one line", async () => {
    const ws = await workspace("tasks: {}\n");
    await folder(path.join(ws.logs, "20261101-080000-aaaa"), { [STAMP]: STAMP_TEXT, "a.log": "x\n" }, 100 * DAY_MS);
    await folder(path.join(ws.logs, "20261101-080000-bbbb"), { [STAMP]: STAMP_TEXT, "a.log": "x\n" }, 100 * DAY_MS);
    const full = openSync("/dev/full", "w");
    try {
      const pruned = spawnSync(BIN, ["prune", "--logs", "--log-dir", ws.logs, "--older-than", "30d"], { env: { ...process.env, ...ENV }, stdio: ["ignore", full, "pipe"], encoding: "utf8" });
      expect(pruned.status).toBe(1);
      expect(pruned.stderr).toMatch(new RegExp(`^taskq: pruned 2 run folders last written before \\S+ in ${ws.logs}, but that could not be written to stdout \\(ENOSPC\\)\n$`));
      expect(await entries(ws.logs)).toEqual([]);
    } finally {
      closeSync(full);
    }
  });

  // A log in a folder with the sticky bit (or made append-only, chattr +a) cannot be unlinked by
  // another user: EPERM on a file, which Node's recursive delete took for a folder to empty.
  it.skipIf(process.getuid?.() !== 0)("a log that may not be deleted (EPERM) is said to be not permitted, not 'a part of the path is not a folder'", async () => {
    const { ws, root } = await sharedLogRoot();
    const theirs = path.join(root, "20261101-080000-aaaa");
    await folder(theirs, { [STAMP]: STAMP_TEXT, "a.log": "theirs\n" }, 100 * DAY_MS);
    await chmod(theirs, 0o1777); // anyone may add a file; each file only its owner may delete
    const when = new Date(Date.now() - 100 * DAY_MS);
    await utimes(theirs, when, when);

    const pruned = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "30d"], { env: ENV, cwd: ws.dir, uid: 65534, gid: 65534 });
    expect(pruned.stderr).toBe(`taskq: cannot delete ${theirs}: not permitted (EPERM)\n`);
    expect(pruned.code).toBe(1);
    expect(await entries(theirs)).toEqual([STAMP, "a.log"]);
  });

  it("names a log folder whose name holds a newline or an escape as escaped text, not as lines or terminal codes", async () => {
    const ws = await workspace("");
    const root = path.join(ws.dir, "lo\ngs\u001b[2J");
    const shown = path.join(ws.dir, "lo\\ngs\\u001b[2J");
    await folder(path.join(root, "20261101-080000-aaaa"), { "a.log": "old\n" }, 10 * DAY_MS);
    const dry = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "7d", "--dry-run"], { env: ENV });
    expect(dry).toMatchObject({ code: 0, stderr: "" });
    expect(dry.stdout).toMatch(/^would prune 1 run folder last written before \S+:\n {2}\S+\n$/);
    expect(dry.stdout).toContain(`  ${shown}/20261101-080000-aaaa\n`);
    const pruned = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "7d"], { env: ENV });
    expect(pruned.stdout).toContain(`  ${shown}/20261101-080000-aaaa\n`);
    const none = await runCli(["prune", "--logs", "--log-dir", root, "--older-than", "7d"], { env: ENV });
    expect(none.stdout).toMatch(/^no run folder in \S+ last written before \S+\n$/);
    expect(none.stdout).toContain(`no run folder in ${shown} last`);
    const missing = await runCli(["prune", "--logs", "--log-dir", `${root}x`, "--older-than", "7d"], { env: ENV });
    expect(missing).toMatchObject({ code: 1, stdout: "", stderr: `taskq: cannot read the log folder ${shown}x: no such file or directory (ENOENT)\n` });
  });

  it("refuses an age without a unit, and says what to write; a task's timeout in seconds is as it was", async () => {
    const ws = await workspace("tasks:\n  slow: { run: 'sleep 30', timeout: 1 }\n");
    // Last written a minute ago: `--older-than 30` read as seconds would delete it.
    await folder(path.join(ws.logs, "20261101-080000-aaaa"), { "a.log": "x\n" }, 60_000);
    for (const prune of [["prune", "--logs", "--log-dir", ws.logs], ["prune"]]) {
      const bare = await runCli([...prune, "--older-than", "30"], { env: ENV });
      expect(bare.stderr).toBe('taskq: --older-than: "30" needs a unit: 30d, 30h, 30m or 30s\n');
      expect(bare.code).toBe(2);
      const decimal = await runCli([...prune, "--older-than", "1.5"], { env: ENV });
      expect(decimal.stderr).toBe('taskq: --older-than: "1.5" is not an age like 7d, 12h or 30m\n');
      expect(decimal.code).toBe(2);
    }
    expect(await entries(ws.logs)).toEqual(["20261101-080000-aaaa"]);
    expect((await runCli(["prune", "--logs", "--log-dir", ws.logs, "--older-than", "30s"], { env: ENV })).stdout).toMatch(/^pruned 1 run folder /);

    // In a workflow file a bare number is seconds, as documented.
    const run = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir, env: ENV });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("FAILED  slow: timed out after 1s\n");
  });

  it("an age past its range says the range: whole days up to 99999d, any other unit up to 30 days", async () => {
    const ws = await workspace("tasks: {}\n");
    for (const prune of [["prune", "--logs", "--log-dir", ws.logs], ["prune"]]) {
      const cases: Array<[string, string]> = [
        ["99999999d", '"99999999d" is more than the maximum of 99999d'],
        ["100000d", '"100000d" is more than the maximum of 99999d'],
        ["800h", '"800h" is more than 30 days: write a longer age in whole days, up to 99999d'],
        ["45.5d", '"45.5d" is more than 30 days: write a longer age in whole days, up to 99999d'],
      ];
      for (const [age, said] of cases) {
        expect(await runCli([...prune, "--older-than", age], { env: ENV })).toMatchObject({ code: 2, stdout: "", stderr: `taskq: --older-than: ${said}\n` });
      }
    }
    await mkdir(ws.logs, { recursive: true });
    for (const age of ["99999d", "720h"]) expect((await runCli(["prune", "--logs", "--log-dir", ws.logs, "--older-than", age], { env: ENV })).code).toBe(0);
  });

  // `500ms` and `0.5s` were taken, and pruned what had ended a moment before: an age is 0s, all that ended, or 1s and more.
  it("refuses an age in milliseconds, or under a second, saying what an age is; 0s prunes all that ended, as it says", async () => {
    const ws = await workspace("tasks: {}\n");
    // Last written a moment ago: any of these would have deleted it.
    await folder(path.join(ws.logs, "20261101-080000-aaaa"), { "a.log": "x\n" }, 2_000);
    for (const prune of [["prune", "--logs", "--log-dir", ws.logs], ["prune"]]) {
      const cases: Array<[string, string]> = [
        ["500ms", '"500ms" is not an age like 7d, 12h or 30m (an age\'s units are d, h, m and s, not ms)'],
        ["1m30s500ms", '"1m30s500ms" is not an age like 7d, 12h or 30m (an age\'s units are d, h, m and s, not ms)'],
        ["0.5s", '"0.5s" is under a second: give 1s or more, or 0s for all that ended'],
        // Under half a millisecond: no milliseconds at all once rounded, and no 0s either.
        ["0.0004s", '"0.0004s" is under a second: give 1s or more, or 0s for all that ended'],
        ["5msec", '"5msec" is not an age like 7d, 12h or 30m ("msec" is not a unit: the units are d, h, m and s)'],
      ];
      for (const [age, said] of cases) {
        expect(await runCli([...prune, "--older-than", age], { env: ENV })).toMatchObject({ code: 2, stdout: "", stderr: `taskq: --older-than: ${said}\n` });
      }
    }
    expect(await entries(ws.logs)).toEqual(["20261101-080000-aaaa"]);
    expect(await runCli(["prune", "--logs", "--log-dir", ws.logs, "--older-than", "0s"], { env: ENV })).toMatchObject({ code: 0, stdout: expect.stringMatching(/^pruned 1 run folder /) });
    expect(await entries(ws.logs)).toEqual([]);
  });

  it("a marker left by a SIGKILLed taskq holds nothing once its pid is another process's", async () => {
    const { ws, cli, runId, runDir } = await startSilentRun();
    cli.child.kill("SIGKILL");
    await cli.done;
    expect(await eventually(async () => (await findLeftovers(runId)).length === 0, 20_000)).toBe(true);
    // On a busy machine the pid is soon another process's (32,768 pids, counting threads): here, this test's.
    await rename(path.join(runDir, `.taskq-active-${cli.child.pid}`), path.join(runDir, `.taskq-active-${process.pid}`));
    await age(runDir, DAY_MS);

    const pruned = await runCli(["prune", "--logs", "--log-dir", ws.logs, "--older-than", "1h"], { env: ENV });
    expect(pruned.stdout).toMatch(new RegExp(`^pruned 1 run folder last written before \\S+:\n  ${runDir}\n$`));
    expect(await entries(ws.logs)).toEqual([]);
  });
});
