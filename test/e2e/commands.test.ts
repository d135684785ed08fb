import { spawn } from "node:child_process";
import { chmod, chown, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { closeSync, existsSync, openSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BIN, ROOT, runCli, workspace } from "../helpers/cli.js";

describe("taskq commands", () => {
  it("--version prints the package version", async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    const result = await runCli(["--version"]);
    expect(result).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  // The fast path of bin/taskq.cjs wrote with no 'error' listener: a stack trace, exit 1, both
  // on a full disk and on a reader that had gone.
  it("--version to a full disk says so in one line, exit 1; to a reader that has gone (EPIPE), nothing, exit 0: never a stack trace", async () => {
    if (existsSync("/dev/full")) {
      const full = openSync("/dev/full", "w");
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(BIN, ["--version"], { stdio: ["ignore", full, "pipe"] });
        let stderr = "";
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stderr }));
      }).finally(() => closeSync(full));
      expect(result).toEqual({ code: 1, stderr: "taskq: cannot write to stdout (ENOSPC)\n" });
    }
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      // The reader closes its end before taskq writes.
      const child = spawn("bash", ["-c", '"$0" --version | { exec 0<&-; sleep 0.5; }; exit "${PIPESTATUS[0]}"', BIN], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(result).toEqual({ code: 0, stderr: "" });
  });

  // What these commands print is what they are for (a script's `taskq schema > schema.json`):
  // output lost to a full disk exited 0, with a warning that "the run goes on".
  it.skipIf(!existsSync("/dev/full"))("a command whose stdout cannot be written (a full disk) says so and exits 1; a run goes on, as before", async () => {
    const ws = await workspace("tasks:\n  a: { run: echo a }\n");
    const commands = [["--help"], ["help", "run"], ["schema"], ["list", ws.file], ["graph", ws.file], ["validate", ws.file], ["validate", ws.file, "--output", "json"], ["run", ws.file, "--dry-run"], ["run", "--help"], ["run", ws.file, "-h"], ["worker", "--help"], ["run", "--version"], ["run", ws.file, "--log-dir", ws.logs]];
    for (const args of commands) {
      const full = openSync("/dev/full", "w");
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(BIN, args, { cwd: ws.dir, env: { ...process.env, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", full, "pipe"] });
        let stderr = "";
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stderr }));
      }).finally(() => closeSync(full));
      const expected = args.includes("--log-dir")
        ? { code: 0, stderr: "taskq: cannot write to stdout (ENOSPC); the run goes on, and each task's output is in its log\n" }
        : { code: 1, stderr: "taskq: cannot write to stdout (ENOSPC)\n" };
      expect({ args, ...result }).toEqual({ args, ...expected });
    }
  });

  // Closed from the start (`taskq graph ci.yaml >&-`), stdout is /dev/null to node, which opens it in its
  // place: every write succeeded, and these commands exited 0 having shown nothing. As on a full disk,
  // exit 1 and a line on stderr; a run goes on, its code the tasks', and says so (and its tasks never see the launcher's mark).
  it("a command whose stdout is closed (>&-) says so and exits 1; a run says so and goes on, its code its tasks'; >/dev/null is no error", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'echo \"${TASKQ_STDOUT_CLOSED-unset}\" > mark.txt' }\n");
    const commands = [["--version"], ["--help"], ["schema"], ["list", ws.file], ["graph", ws.file], ["graph", ws.file, "--format", "dot"], ["validate", ws.file], ["validate", ws.file, "--output", "json"], ["run", ws.file, "--dry-run"], ["run", ws.file, "--log-dir", ws.logs]];
    const launch = (args: string[], redirect: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        // As a shell runs it: the executable itself (sh reads its first line), stdout redirected.
        const child = spawn("sh", ["-c", `exec "$0" "$@" ${redirect}`, BIN, ...args], { cwd: ws.dir, env: { ...process.env, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stderr }));
      });
    for (const args of commands) {
      const running = args.includes("--log-dir");
      const closed = await launch(args, ">&-");
      // A run goes on, its code its tasks', and says so as a full disk's run does (before: nothing said, where README promises a warning).
      const said = running ? "; the run goes on, and each task's output is in its log" : "";
      expect({ args, ...closed }).toEqual({ args, code: running ? 0 : 1, stderr: `taskq: cannot write to stdout (EBADF: it is closed)${said}\n` });
      if (running) expect(await readFile(path.join(ws.dir, "mark.txt"), "utf8")).toBe("unset\n");
      expect({ args, ...(await launch(args, ">/dev/null")) }).toEqual({ args, code: 0, stderr: "" });
    }
    // The mark already in the environment (a user's export, a task's own taskq) says nothing of this stdout: no false word of it.
    const marked = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(BIN, ["list", ws.file], { cwd: ws.dir, env: { ...process.env, CI: "true", NO_COLOR: "1", TASKQ_STDOUT_CLOSED: "1" }, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect([marked.code, marked.stderr, marked.stdout.includes("a")]).toEqual([0, "", true]);
    // An error alone, on stderr, lost nothing: no word of stdout.
    expect(await launch(["validate", "missing.yaml"], ">&-")).toEqual({ code: 2, stderr: "missing.yaml:1:1: cannot read file: no such file (ENOENT)\n1 problem\n" });
  });

  // A CI step's status is its tasks': a run whose output nobody reads any more (`taskq run ci.yaml | head`, a log
  // collector that died, a closed stdout) is not stopped by that, nor made to succeed.
  it("a run whose stdout goes away (its reader gone mid-run, or closed from the start) runs every task to its end, each log whole, and exits with the tasks' result", async () => {
    const flood = "sleep 0.5; for i in $(seq 1 5000); do echo \"line $i of a long output\"; done; echo end";
    for (const last of ["exit 0", "exit 3"]) {
      const ws = await workspace(`tasks:\n  a: { run: '${flood}' }\n  b: { run: 'echo last; ${last}', dependsOn: a }\n  c: { run: 'sleep 0.3; echo other' }\n`);
      const expected = last === "exit 0" ? 0 : 1;
      // Its reader gone after the first bytes, as `| head -c1`'s is: every later write of taskq's gets EPIPE.
      const gone = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, "run", ws.file, "--log-dir", path.join(ws.logs, "gone"), "--output", "plain"], { cwd: ws.dir, env: { ...process.env, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
        child.stdout.once("data", () => child.stdout.destroy());
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stderr }));
      });
      // Closed before taskq starts (`>&-`): Node gives it /dev/null in its place.
      const closed = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn("sh", ["-c", 'exec "$0" "$@" >&-', process.execPath, BIN, "run", ws.file, "--log-dir", path.join(ws.logs, "closed"), "--output", "plain"], { cwd: ws.dir, env: { ...process.env, CI: "true", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stderr }));
      });
      for (const [how, result] of [["gone", gone], ["closed", closed]] as const) {
        expect({ how, last, ...result }).toEqual({ how, last, code: expected, stderr: "" });
        const [runId] = await readdir(path.join(ws.logs, how));
        const log = (id: string) => readFile(path.join(ws.logs, how, runId!, `${id}.log`), "utf8");
        const a = await log("a");
        expect(a.split("\n").filter((line) => line.startsWith("line "))).toHaveLength(5000);
        expect(a.endsWith("line 5000 of a long output\nend\n")).toBe(true);
        expect(await log("b")).toBe(last === "exit 0" ? "last\n" : "last\n--- taskq: attempt 1 exited with code 3 ---\n");
        expect(await log("c")).toBe("other\n");
      }
    }
  });

  it("--help lists the commands", async () => {
    const result = await runCli(["--help"]);
    expect(result.code).toBe(0);
    for (const command of ["run", "validate", "graph", "list", "schema"]) expect(result.stdout).toContain(command);
  });

  // `worker --help` showed (default: "30s") and `run --help` (default: 30s) for the same --lease.
  it("help shows each duration's default and the log folder's as written, the same in every command: (default: 30s), never quoted", async () => {
    for (const [command, defaults] of [
      ["run", ["10s", "5s", "30s", ".taskq/logs"]],
      ["worker", ["10s", "5s", "30s", ".taskq/logs"]],
      ["prune", [".taskq/logs"]],
    ] as const) {
      const help = await runCli([command, "--help"]);
      expect(help.code).toBe(0);
      const text = help.stdout.replace(/\s+/g, " ");
      for (const value of defaults) expect(text).toContain(`default: ${value})`);
      expect(text).not.toMatch(/default: "(\d|\.taskq)/);
    }
  });

  it("-j's help gives its default: the CPU count or the container's CPU limit (a container's --cpus, a Kubernetes limit)", async () => {
    for (const [command, before] of [["run", "the file's, else "], ["worker", ""]] as const) {
      const help = await runCli([command, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout.replace(/\s+/g, " ")).toContain(`-j, --concurrency <n> tasks running at once (default: ${before}the CPU count or the container's CPU limit)`);
    }
  });

  // It said "(0.0.0.0: every interface)", and a Prometheus scraping over IPv6 found nothing listening.
  it("worker --help says that --metrics-host 0.0.0.0 listens on every IPv4 interface, and :: on every interface", async () => {
    const help = await runCli(["worker", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, " ")).toContain("--metrics-host <address> the address the metrics listen on instead (0.0.0.0: every IPv4 interface; ::, every interface)");
    // A closed terminal's SIGHUP stops a worker as gracefully (exit 129): before, the help named SIGINT and SIGTERM only.
    expect(help.stdout.replace(/\s+/g, " ")).toContain("--shutdown-timeout <duration> on SIGINT, SIGTERM or SIGHUP, how long running tasks may finish");
  });

  it("run --help ends with the exit codes a CI script branches on, as the run gives them", async () => {
    const help = await runCli(["run", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("\nExit codes:\n  0              every task succeeded\n  1              a task failed or was cancelled, or the run could not start (its log folder, its store, a limit)\n");
    expect(help.stdout).toContain("  2              bad usage, an invalid workflow file, or with --store a run id given again with another file (nothing ran)\n  130, 143, 129  interrupted by SIGINT, SIGTERM, SIGHUP\n");
    // As `taskq help run` gives it too.
    expect((await runCli(["help", "run"])).stdout).toBe(help.stdout);
  });

  it("run exits as its --help says where it could not start: 1 for a store it cannot open, 2 for a workflow file that is not there", async () => {
    const ws = await workspace("tasks:\n  a: { run: \"true\" }\n");
    // Nothing listens on port 1: the store cannot be opened, and the run never starts.
    const store = await runCli(["run", ws.file, "--log-dir", ws.logs, "--store", "postgres://nobody@127.0.0.1:1/none"], { cwd: ws.dir });
    expect({ code: store.code, stderr: store.stderr }).toMatchObject({ code: 1, stderr: expect.stringContaining("taskq: cannot open the store") });
    const missing = await runCli(["run", path.join(ws.dir, "missing.yaml"), "--log-dir", ws.logs], { cwd: ws.dir });
    expect(missing.code).toBe(2);
    const help = (await runCli(["run", "--help"])).stdout;
    expect(help).toMatch(/\n {2}1 +[^\n]*could not start \([^)]*its store/);
    expect(help).toMatch(/\n {2}2 +[^\n]*invalid workflow file/);
  });

  it("prune --help says --older-than applies with --logs too, to when each run folder was last written", async () => {
    const help = await runCli(["prune", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, " ")).toContain("--older-than <age> ended more than this long ago: 7d, 12h, 30m... (with --logs, it applies too: run folders last written this long ago)");
  });

  it("help COMMAND describes that command; an unknown one is said to be unknown, as `taskq nope` says it, not answered with the whole help", async () => {
    const run = await runCli(["help", "run"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^Usage: taskq run \[options\] <file> \[tasks\.\.\.\]\n/);
    // --verbose, which every command takes, is in each command's help too, not only in taskq --help.
    for (const command of ["run", "validate", "worker", "schema"]) {
      expect((await runCli(["help", command])).stdout).toMatch(/\nGlobal Options:\n(?:.*\n)*? {2}--verbose +on an error, print its stack trace too\n/);
    }
    expect((await runCli(["help"])).stdout).toContain("help [command]");
    for (const [args, said] of [
      [["help", "nope"], "taskq: unknown command 'nope'\n"],
      [["help", "rn"], "taskq: unknown command 'rn'\n(Did you mean run?)\n"],
      [["nope"], "taskq: unknown command 'nope'\n"],
      // A name other programs give a command of taskq's points to it, not to one spelt alike (check: schema).
      [["check", "ci.yaml"], "taskq: unknown command 'check'\n(Did you mean validate?)\n"],
      [["help", "lint"], "taskq: unknown command 'lint'\n(Did you mean validate?)\n"],
      [["version"], "taskq: unknown command 'version'\n(Did you mean taskq --version?)\n"],
      [["constructor"], "taskq: unknown command 'constructor'\n"],
      // Quoted as given, its escape sequences written out: a title set, a screen cleared by a mistyped argument.
      [["\x1b]0;T\x07"], "taskq: unknown command '\\u001b]0;T\\u0007'\n"],
      [["run", "x.yaml", "--o\x1b[2Jx"], "taskq: unknown option '--o\\u001b[2Jx'\n"],
    ] as const) {
      expect(await runCli([...args])).toMatchObject({ code: 2, stdout: "", stderr: said });
    }
  });

  // `taskq ci.yaml`, as make and just are started, was "unknown command 'ci.yaml'" and no more.
  it("a workflow file given where the command goes is pointed to taskq run FILE and taskq validate FILE", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n", "ci");
    // The run suggested keeps the flags given (`--dry-run`: pasted without it, the file would run).
    for (const [args, name, run] of [
      [["ci.yml"], "ci.yml", "ci.yml"],
      [["pipeline.YAML", "-j", "2", "--dry-run"], "pipeline.YAML", "pipeline.YAML -j 2 --dry-run"],
      // A file that is there, whatever its name.
      [[ws.file], ws.file, ws.file],
      [[path.join(ws.dir, "my ci.yaml")], `'${path.join(ws.dir, "my ci.yaml")}'`, `'${path.join(ws.dir, "my ci.yaml")}'`],
    ] as const) {
      const given = args[0];
      expect(await runCli([...args])).toMatchObject({
        code: 2,
        stdout: "",
        stderr: `taskq: unknown command '${given}': a workflow file goes after a command\n(Did you mean taskq run ${run}? Or taskq validate ${name}?)\n`,
      });
    }
    expect(await runCli(["README"])).toMatchObject({ code: 2, stderr: "taskq: unknown command 'README'\n" });
  });

  // commander's own said "Expected 1 argument but got 2": `taskq validate workflows/*.yaml` named neither.
  it("a command taking one workflow file, given several (a glob), says it takes one and how to check each; a word after a flag that takes no value is named", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const said = async (args: string[]): Promise<string> => {
      const result = await runCli(args, { cwd: ws.dir });
      expect(result, args.join(" ")).toMatchObject({ code: 2, stdout: "" });
      return result.stderr;
    };
    expect(await said(["run", "a.yaml", "b.yml"])).toBe(`taskq: too many arguments for 'run': it takes one workflow file, and got 2 (a.yaml, b.yml); for each in turn: for f in a.yaml b.yml; do taskq run "$f"; done\n`);
    expect(await said(["list", "a.yaml", "b.yaml", "c.yaml", "d.yaml", "e.yaml"])).toBe(
      `taskq: too many arguments for 'list': it takes one workflow file, and got 5 (a.yaml, b.yaml, c.yaml and 2 more); for each in turn: for f in a.yaml b.yaml c.yaml ...; do taskq list "$f"; done\n`,
    );
    // `run` takes task ids after its file: the word is no task of it, and was meant for the flag.
    expect(await said(["run", "workflow.yaml", "--dry-run", "yes"])).toBe('taskq: workflow.yaml has no task "yes": nothing was run (taskq list workflow.yaml lists its tasks); --dry-run takes no value: give it alone\n');
    // Before the file too: not taken for a second workflow, to loop over.
    expect(await said(["run", "--dry-run", "yes", "workflow.yaml"])).toBe("taskq: too many arguments for 'run': it takes one workflow file (workflow.yaml), and got 'yes' besides; --dry-run takes no value: give it alone\n");
    expect(await said(["list", "--verbose", "x", "workflow.yaml"])).toBe("taskq: too many arguments for 'list': it takes one workflow file (workflow.yaml), and got 'x' besides; --verbose takes no value: give it alone\n");
    expect(await runCli(["run", "workflow.yaml", "--dry-run"], { cwd: ws.dir })).toMatchObject({ code: 0 });
    // The loop keeps the flags given, --dry-run above all (without it, pasted, each file would run), in their place.
    expect(await said(["run", "-j", "4", "--dry-run", "a.yaml", "b.yaml", "c.yaml"])).toBe(
      `taskq: too many arguments for 'run': it takes one workflow file, and got 3 (a.yaml, b.yaml, c.yaml); for each in turn: for f in a.yaml b.yaml c.yaml; do taskq run -j 4 --dry-run "$f"; done\n`,
    );
    // Two files after a flag that takes no value (a glob of two): neither is taken for the flag's value.
    expect(await said(["run", "--dry-run", "a.yaml", "b.yaml"])).toBe(
      `taskq: too many arguments for 'run': it takes one workflow file, and got 2 (a.yaml, b.yaml); for each in turn: for f in a.yaml b.yaml; do taskq run --dry-run "$f"; done\n`,
    );
    // A file name with a control character, as bash writes it ($'...', its bytes: \u would depend on the locale): pasted, it names that file.
    expect(await said(["--verbose", "graph", "--format", "dot", "a.yaml", "e\u001bsc.yaml", "it's.yaml", "r\u202el.yaml"])).toBe(
      `taskq: too many arguments for 'graph': it takes one workflow file, and got 4 (a.yaml, e\\u001bsc.yaml, it's.yaml, r\\u202el.yaml); for each in turn: for f in a.yaml $'e\\x1bsc.yaml' 'it'\\''s.yaml' $'r\\xe2\\x80\\xael.yaml'; do taskq --verbose graph --format dot "$f"; done\n`,
    );
  });

  // The suggestion matched its words by value: `--log-dir a.yaml a.yaml b.yaml` looped with `--log-dir "$f" a.yaml`.
  it("the loop over several files, and the word given besides, are read by their place: a flag's value that names a file stays the flag's value", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const said = async (args: string[]): Promise<string> => {
      const result = await runCli(args, { cwd: ws.dir });
      expect(result, args.join(" ")).toMatchObject({ code: 2, stdout: "" });
      return result.stderr;
    };
    expect(await said(["run", "--dry-run", "--log-dir", "a.yaml", "a.yaml", "b.yaml"])).toBe(
      `taskq: too many arguments for 'run': it takes one workflow file, and got 2 (a.yaml, b.yaml); for each in turn: for f in a.yaml b.yaml; do taskq run --dry-run --log-dir a.yaml "$f"; done\n`,
    );
    expect(await said(["run", "--log-dir=b.yaml", "-j2", "--dry-run", "b.yaml", "a.yaml"])).toBe(
      `taskq: too many arguments for 'run': it takes one workflow file, and got 2 (b.yaml, a.yaml); for each in turn: for f in b.yaml a.yaml; do taskq run --log-dir=b.yaml -j2 --dry-run "$f"; done\n`,
    );
    // The word after --dry-run, not the flag's value spelt the same before it.
    expect(await said(["run", "--log-dir", "yes", "--dry-run", "yes", "workflow.yaml"])).toBe(
      "taskq: too many arguments for 'run': it takes one workflow file (workflow.yaml), and got 'yes' besides; --dry-run takes no value: give it alone\n",
    );
  });

  // The loop over several files repeated the command line as typed, --store's password with it.
  it("a message that repeats the command line (the loop over several files, the run meant, Graphviz's command) or a word of it shows a store's URL with its password hidden, as every message does", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const url = "postgres://u:s3cret@127.0.0.1:1/none";
    const said = async (args: string[]): Promise<string> => {
      const result = await runCli(args, { cwd: ws.dir, env: { TASKQ_STORE: "" } });
      expect(result, args.join(" ")).toMatchObject({ code: 2 });
      expect(`${result.stdout}${result.stderr}`, args.join(" ")).not.toContain("s3cret");
      return `${result.stdout}${result.stderr}`;
    };
    expect(await said(["run", "a.yaml", "b.yaml", "--store", url])).toBe(
      "taskq: too many arguments for 'run': it takes one workflow file, and got 2 (a.yaml, b.yaml); for each in turn: for f in a.yaml b.yaml; do taskq run \"$f\" --store 'postgres://u:***@127.0.0.1:1/none'; done\n",
    );
    expect(await said(["submit", "a.yaml", "b.yaml", `--store=${url}`])).toBe(
      "taskq: too many arguments for 'submit': it takes one workflow file, and got 2 (a.yaml, b.yaml); for each in turn: for f in a.yaml b.yaml; do taskq submit \"$f\" '--store=postgres://u:***@127.0.0.1:1/none'; done\n",
    );
    // A password= parameter, as the store's own messages hide it; a URL without a password, as typed.
    expect(await said(["run", "a.yaml", "b.yaml", "--store", "postgres://127.0.0.1:1/none?password=s3cret"])).toContain("--store 'postgres://127.0.0.1:1/none?password=***'; done\n");
    expect(await said(["run", "a.yaml", "b.yaml", "--store", "postgres://u@127.0.0.1:1/none"])).toContain("--store postgres://u@127.0.0.1:1/none; done\n");
    expect(await said(["workflow.yaml", "--store", url])).toBe(
      "taskq: unknown command 'workflow.yaml': a workflow file goes after a command\n(Did you mean taskq run workflow.yaml --store 'postgres://u:***@127.0.0.1:1/none'? Or taskq validate workflow.yaml?)\n",
    );
    expect(await said(["graph", "workflow.yaml", `--store=${url}`, "--format", "svg"])).toContain("(taskq graph workflow.yaml '--store=postgres://u:***@127.0.0.1:1/none' --format dot | dot -Tsvg -o graph.svg)\n");
    // Given where a task or a file goes (--store left out): said as a word given besides, or no task, its password hidden too.
    expect(await said(["run", "--dry-run", url, "workflow.yaml"])).toBe(
      "taskq: too many arguments for 'run': it takes one workflow file (workflow.yaml), and got 'postgres://u:***@127.0.0.1:1/none' besides; --dry-run takes no value: give it alone\n",
    );
    expect(await said(["run", "workflow.yaml", url])).toContain('taskq: workflow.yaml has no task "postgres://u:***@127.0.0.1:1/none" (not a task id');
    expect(await said(["run", "workflow.yaml", url, "--store", url])).toContain("taskq: selecting tasks (postgres://u:***@127.0.0.1:1/none) is for a local run");
    expect(await said(["submit", "workflow.yaml", url, "--store", url])).toContain("and got 'postgres://u:***@127.0.0.1:1/none' besides");
    // As an error record (--output json), the same.
    expect(await said(["run", "--output", "json", "a.yaml", "b.yaml", "--store", url])).toContain("--store 'postgres://u:***@127.0.0.1:1/none'; done");
    // Where the file goes, in its folder's words too, as text and as a record; as another flag's value, a run id, a command.
    const hidden = "postgres://u:***@127.0.0.1:1/none";
    expect(await said(["run", url])).toContain(`${hidden}:1:1: cannot read file: no such file (ENOENT); its folder, postgres://u:***@127.0.0.1:1, does not exist either`);
    expect(await said(["validate", "--output", "json", url])).toContain(`"file":"${hidden}"`);
    expect(await said(["submit", url, "workflow.yaml"])).toContain(`(${hidden}, workflow.yaml)`);
    expect(await said(["run", "workflow.yaml", "--output", url])).toContain(`--output: "${hidden}" is not one of`);
    expect(await said(["run", "workflow.yaml", "--run-id", url, "--store", url])).toContain(hidden);
    expect(await said(["status", url, "--store", url])).toContain(`"${hidden}" is not a run id`);
    expect(await said([url])).toContain(`unknown command '${hidden}'`);
    expect(await said(["run", "workflow.yaml", "--output", "json", "-j", url])).toContain(hidden);
  });

  it("a store that cannot be opened, its password given as password= in its URL, is named with the password hidden and the words after it whole", async () => {
    const ws = await workspace("");
    for (const [args, stderr] of [
      [["status", "r"], "taskq: cannot open the store postgres://u@127.0.0.1:1/none?password=***: connect failed: connect ECONNREFUSED 127.0.0.1:1\n"],
      [["status", "r", "--output", "json"], "taskq: cannot open the store postgres://u@127.0.0.1:1/none?password=***: connect failed: connect ECONNREFUSED 127.0.0.1:1\n"],
    ] as const) {
      const result = await runCli([...args, "--store", "postgres://u@127.0.0.1:1/none?password=s3cret"], { cwd: ws.dir, env: { TASKQ_STORE: "" } });
      // Before: "...?password=*** connect failed: ...", the colon after the URL taken as the password's.
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr });
      expect(result.stdout).not.toContain("s3cret");
      if ((args as readonly string[]).includes("json")) expect((JSON.parse(result.stdout) as { message: string }).message).toBe(stderr.slice("taskq: ".length, -1));
    }
  });

  it("a bad -j names the flag as it was typed: -j, or --concurrency", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const said = async (...args: string[]): Promise<string> => {
      const result = await runCli(["run", ws.file, ...args]);
      expect(result.code).toBe(2);
      return result.stderr;
    };
    expect(await said("-j", "0")).toBe('taskq: -j: "0" is not a whole number from 1 to 10000\n');
    expect(await said("-j0")).toBe('taskq: -j: "0" is not a whole number from 1 to 10000\n');
    expect(await said("--concurrency", "0")).toBe('taskq: --concurrency: "0" is not a whole number from 1 to 10000\n');
    expect(await said("--concurrency=0")).toBe('taskq: --concurrency: "0" is not a whole number from 1 to 10000\n');
    expect(await said("-j=4")).toBe('taskq: -j: "=4" is not a whole number from 1 to 10000 (write -j 4 or --concurrency=4: a short flag takes no =)\n');
    // The last one given is the one whose value is used: it is the one named.
    expect(await said("--concurrency", "2", "-j", "x")).toBe('taskq: -j: "x" is not a whole number from 1 to 10000\n');
    expect(await said("-j", "2", "--concurrency", "x")).toBe('taskq: --concurrency: "x" is not a whole number from 1 to 10000\n');
  });

  it("exits 2 on bad usage", async () => {
    expect((await runCli(["frobnicate"])).code).toBe(2);
    expect((await runCli(["run"])).code).toBe(2);
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const bad = await runCli(["run", ws.file, "-j", "zero"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('-j: "zero"');
    // Checked before the file is read, as the other flags are: said first, not after the file's problems.
    const invalid = await workspace("tasks:\n  a: { run: 'true', needs: [] }\n");
    expect(await runCli(["run", invalid.file, "-j", "0"])).toMatchObject({ code: 2, stdout: "", stderr: 'taskq: -j: "0" is not a whole number from 1 to 10000\n' });
    // A misspelt flag gets its suggestion whether its value follows it or is joined by "=".
    for (const args of [["--ouput", "json"], ["--ouput=json"]]) {
      expect(await runCli(["run", ws.file, ...args])).toMatchObject({ code: 2, stderr: "taskq: unknown option '--ouput'\n(Did you mean --output?)\n" });
    }
    // A flag of other commands, as written or in another form (--runid, --run_id), is said to be theirs, not only unknown.
    for (const [args, said] of [
      [["worker", "--run-id", "x"], "'worker' takes no --run-id, an option of 'run' and 'submit'"],
      [["worker", "--run_id=x"], "'worker' takes no --run-id, an option of 'run' and 'submit'"],
      [["submit", ws.file, "--lease", "3s"], "'submit' takes no --lease, an option of 'run' and 'worker'"],
      [["validate", ws.file, "-j", "2"], "'validate' takes no -j, an option of 'run' and 'worker'"],
      // cancel and redrive print JSON lines of their own, but take no --output: the refusal is text alone, no record on stdout.
      [["cancel", "r1", "--json"], "'cancel' takes no --json, an option of 'run', 'validate', 'submit', 'worker', 'status', 'dead-letters' and 'prune'"],
      [["redrive", "r1", "b", "--output", "json"], "'redrive' takes no --output, an option of 'run', 'validate', 'submit', 'worker', 'status', 'dead-letters' and 'prune'"],
    ] as const) {
      const flag = args.find((arg) => arg.startsWith("-"))!.replace(/=.*/, "");
      expect(await runCli([...args])).toMatchObject({ code: 2, stdout: "", stderr: `taskq: unknown option '${flag}': ${said} (see taskq help ${args[0]})\n` });
    }
    // A command's flag before the command's name, where only taskq's own are read, says where it goes.
    for (const [args, said] of [
      [["-j", "2", "run", ws.file], "an option of 'run' and 'worker', which goes after the command's name (taskq run -j ...)"],
      [["--store", "postgres://x@h/d", "status", "r1"], "an option of 'run', 'submit', 'worker', 'status', 'cancel', 'dead-letters', 'prune' and 'redrive', which goes after the command's name (taskq status --store ...)"],
      [["--dry-run", "run", ws.file], "an option of 'run' and 'prune', which goes after the command's name (taskq run --dry-run ...)"],
    ] as const) {
      expect(await runCli([...args])).toMatchObject({ code: 2, stdout: "", stderr: `taskq: unknown option '${args[0]}': ${said}\n` });
    }
    expect(await runCli(["--bogus", "run", ws.file])).toMatchObject({ code: 2, stdout: "", stderr: "taskq: unknown option '--bogus'\n" });
    // -v, which many programs take for their version, points to -V and --verbose.
    for (const args of [["-v"], ["run", ws.file, "-v"]]) {
      expect(await runCli(args)).toMatchObject({ code: 2, stdout: "", stderr: "taskq: unknown option '-v'\n(Did you mean -V, --version? Or --verbose?)\n" });
    }
    // A short flag with its value joined (-j2) is named as the flag, with the same help.
    expect(await runCli(["-j2", "run", ws.file])).toMatchObject({ code: 2, stdout: "", stderr: "taskq: unknown option '-j': an option of 'run' and 'worker', which goes after the command's name (taskq run -j ...)\n" });
    expect(await runCli(["validate", ws.file, "-j2"])).toMatchObject({ code: 2, stdout: "", stderr: "taskq: unknown option '-j': 'validate' takes no -j, an option of 'run' and 'worker' (see taskq help validate)\n" });
    // A flag of the command's own in another form keeps commander's suggestion.
    expect(await runCli(["worker", "--log_dir", "x"])).toMatchObject({ code: 2, stderr: "taskq: unknown option '--log_dir'\n(Did you mean --log-dir?)\n" });
    // A flag that takes no value, given one with "=", is said to take none: not an unknown option whose suggestion is itself.
    const valued: Array<[string, string]> = [["--dry-run=yes", "--dry-run"], ["--no-color=1", "--no-color"], ["--verbose=true", "--verbose"], ["--help=run", "--help"]];
    for (const [flag, name] of valued) {
      const result = await runCli(["run", ws.file, flag, "--log-dir", ws.logs]);
      expect(result).toMatchObject({ code: 2, stdout: "", stderr: `taskq: option '${name}' takes no value: give it as ${name}, not ${flag}\n` });
    }
    expect(existsSync(ws.logs)).toBe(false);
    // A duration flag says which flag, what it got (quoted as typed) and what it takes; nothing runs.
    const grace = await runCli(["run", ws.file, "--kill-grace", "5 s", "--log-dir", ws.logs]);
    expect(grace).toMatchObject({ code: 2, stderr: 'taskq: --kill-grace: "5 s" is not a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days (write it without spaces: 5s)\n' });
    // A last number without its unit is in the unit after the one before it: 1h30 is an hour and a half, not 1h30s.
    const hours = await runCli(["run", ws.file, "--kill-grace", "1h30", "--log-dir", ws.logs]);
    expect(hours).toMatchObject({ code: 2, stderr: 'taskq: --kill-grace: "1h30" is not a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days (the last number, 30, has no unit: write 1h30m for minutes)\n' });
    // More of it than the unit before holds (30 hours, over a day) is not told to be hours: each unit it may be in is named.
    const day = await runCli(["run", ws.file, "--kill-grace", "1d30", "--log-dir", ws.logs]);
    expect(day).toMatchObject({ code: 2, stderr: 'taskq: --kill-grace: "1d30" is not a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days (the last number, 30, has no unit: write the one meant, 1d30h for hours, 1d30m for minutes or 1d30s for seconds)\n' });
    expect(existsSync(ws.logs)).toBe(false);
  });

  // A negative duration said why it was refused; one over 30 days got the forms alone, as if it were written wrong.
  it("a duration flag over 30 days is refused saying it is longer than the maximum, of run and worker alike, and nothing runs", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran }\n");
    for (const [args, flag, value] of [
      [["run", ws.file], "--shutdown-timeout", "31d"],
      [["run", ws.file], "--kill-grace", "721h"],
      [["run", ws.file], "--kill-grace", "2592001"],
      [["worker", "--store", "postgres://u@127.0.0.1:1/x"], "--shutdown-timeout", "31d"],
    ] as const) {
      const result = await runCli([...args, flag, value, "--log-dir", ws.logs], { cwd: ws.dir });
      expect(result, `${flag} ${value}`).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${flag}: ${JSON.stringify(value)} is longer than the maximum of 30 days (720h)\n` });
    }
    expect(await runCli(["run", ws.file, "--shutdown-timeout", "30d", "--dry-run"], { cwd: ws.dir })).toMatchObject({ code: 0 });
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  // mkdir in /proc answers ENOENT: `--log-dir /proc/x` was told "no such file or directory" of the folder it asked for.
  it.skipIf(!existsSync("/proc/self/mountinfo"))("a log folder that cannot be made in /proc says so, and why, and nothing runs; a missing workflow file's error gives words, then the code, as the folder's do", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran }\n");
    const result = await runCli(["run", ws.file, "--log-dir", "/proc/taskq-logs/ci"], { cwd: ws.dir });
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^taskq: cannot create the log folder \/proc\/taskq-logs\/ci\/[\w-]+: \/proc\/taskq-logs cannot be made in \/proc, a proc file system, whose entries only the kernel makes \(ENOENT\): give --log-dir a folder elsewhere\n$/);
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
    expect(await runCli(["validate", "missing.yaml"], { cwd: ws.dir })).toMatchObject({ code: 2, stderr: "missing.yaml:1:1: cannot read file: no such file (ENOENT)\n1 problem\n" });
  });

  it("every duration flag refuses spaces around its value, naming the duration meant; --older-than no longer trims them without a word", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const durations = "a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days";
    for (const [flag, value, meant] of [
      ["--kill-grace", " 5s", "5s"],
      ["--shutdown-timeout", "10s ", "10s"],
      ["--kill-grace", " 30", "30"],
    ] as const) {
      expect(await runCli(["run", ws.file, flag, value, "--log-dir", ws.logs])).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${flag}: ${JSON.stringify(value)} is not ${durations} (write it without spaces: ${meant})\n` });
    }
    const lease = await runCli(["worker", "--store", "postgres://u@127.0.0.1:1/x", "--lease", " 30s", "--log-dir", ws.logs]);
    expect(lease).toMatchObject({ code: 2, stderr: 'taskq: --lease: " 30s" is not a duration like 30s, 5m or 1h, from 1s to 24h (write it without spaces: 30s)\n' });
    for (const [value, meant] of [[" 7d", ": 7d"], ["12h ", ": 12h"], [" 400d", ": 400d"], [" 7", ""]] as const) {
      const prune = await runCli(["prune", "--logs", "--log-dir", ws.logs, "--older-than", value]);
      expect(prune, value).toMatchObject({ code: 2, stdout: "", stderr: `taskq: --older-than: ${JSON.stringify(value)} is not an age like 7d, 12h or 30m (write it without spaces${meant})\n` });
    }
    expect(existsSync(ws.logs)).toBe(false);
  });

  // `-j ' 2'` ran at 2 where `-j +2` was refused: every integer flag takes digits alone, and a value
  // off by a space or a sign is refused naming the flag, the value and the number meant; nothing runs.
  // `timeout: 1e3` in a file is told `write 1000, or 16m40s`; the same number given to a flag was
  // refused with no word of what to write.
  it("a duration flag written as a number in another form than digits (1e3, 0x10, +5) is refused naming the seconds and the duration meant, and nothing runs", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const durations = "a duration like 250ms, 1.5s, 5m, 1h30m or 2d, or a number of seconds, from 0 to 30 days";
    for (const [flag, value, seconds, duration] of [
      ["--kill-grace", "1e3", "1000", "16m40s"],
      ["--shutdown-timeout", "0x10", "16", "16s"],
      ["--kill-grace", "+5", "5", "5s"],
      ["--shutdown-timeout", "5e-1", "0.5", "500ms"],
    ] as const) {
      expect(await runCli(["run", ws.file, flag, value, "--log-dir", ws.logs]), value).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${flag}: ${JSON.stringify(value)} is not ${durations} (a number of seconds is written in digits, with a point if need be: write ${seconds}, or ${duration})\n` });
    }
    const lease = await runCli(["worker", "--store", "postgres://u@127.0.0.1:1/x", "--lease", "1e2", "--log-dir", ws.logs]);
    expect(lease).toMatchObject({ code: 2, stderr: 'taskq: --lease: "1e2" is not a duration like 30s, 5m or 1h, from 1s to 24h (a number of seconds is written in digits, with a point if need be: write 100, or 1m40s)\n' });
    // Past the range, or too small for digits to write short: refused as before, with no number to write.
    expect(await runCli(["run", ws.file, "--kill-grace", "1e9", "--log-dir", ws.logs])).toMatchObject({ code: 2, stderr: `taskq: --kill-grace: "1e9" is not ${durations}\n` });
    expect(existsSync(ws.logs)).toBe(false);
  });

  it("the integer flags (-j, --metrics-port) take digits alone, by one rule: a space, a sign or another way of writing a number is a usage error naming the flag, the value and the number meant", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    for (const value of [" 2", "2 ", "+2", " +2"]) {
      const run = await runCli(["run", ws.file, "-j", value, "--log-dir", ws.logs]);
      expect(run, value).toMatchObject({ code: 2, stdout: "", stderr: `taskq: -j: ${JSON.stringify(value)} is not a whole number from 1 to 10000 (digits alone, without a space or a sign: 2)\n` });
      const worker = await runCli(["worker", "-j", value, "--store", "postgres://u@127.0.0.1:1/x", "--log-dir", ws.logs]);
      expect(worker, value).toMatchObject({ code: 2, stderr: `taskq: -j: ${JSON.stringify(value)} is not a whole number from 1 to 10000 (digits alone, without a space or a sign: 2)\n` });
    }
    for (const value of [" 9464", "+9464"]) {
      const port = await runCli(["worker", "--metrics-port", value, "--store", "postgres://u@127.0.0.1:1/x", "--log-dir", ws.logs]);
      expect(port, value).toMatchObject({ code: 2, stderr: `taskq: --metrics-port: ${JSON.stringify(value)} is not a port number from 0 to 65535 (digits alone, without a space or a sign: 9464)\n` });
    }
    // A number JavaScript reads (4.0, 1e1, 0x10) is refused as ever, naming the integer it is.
    for (const value of ["2.0", "2e0", "0x2"]) {
      const run = await runCli(["run", ws.file, "-j", value, "--log-dir", ws.logs]);
      expect(run, value).toMatchObject({ code: 2, stdout: "", stderr: `taskq: -j: ${JSON.stringify(value)} is not a whole number from 1 to 10000 (digits alone: 2)\n` });
    }
    const port = await runCli(["worker", "--metrics-port", "9.464e3", "--store", "postgres://u@127.0.0.1:1/x", "--log-dir", ws.logs]);
    expect(port).toMatchObject({ code: 2, stderr: 'taskq: --metrics-port: "9.464e3" is not a port number from 0 to 65535 (digits alone: 9464)\n' });
    expect(existsSync(ws.logs)).toBe(false);
    // Digits alone, leading zeros too, as ever.
    expect(await runCli(["run", ws.file, "-j", "02", "--log-dir", ws.logs, "--dry-run"])).toMatchObject({ code: 0, stdout: expect.stringContaining("concurrency 2") });
  });

  it("an empty --log-dir (an unset $LOG_DIR) is a usage error of every command taking it, before anything runs or is written", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const commands = [
      ["run", ws.file, "--output", "plain"],
      ["run", ws.file, "--dry-run"],
      // Checked before the store is opened: nothing listens on port 1.
      ["run", ws.file, "--store", "postgres://u@127.0.0.1:1/x"],
      ["worker", "--store", "postgres://u@127.0.0.1:1/x"],
      ["prune", "--logs", "--older-than", "1d"],
    ];
    for (const args of commands) {
      for (const empty of [["--log-dir", ""], ["--log-dir="]]) {
        const result = await runCli([...args, ...empty], { cwd: ws.dir, env: { TASKQ_STORE: "" } });
        expect(result, args.join(" ")).toMatchObject({ code: 2, stdout: "", stderr: 'taskq: --log-dir: an empty folder name (for the current folder, give ".")\n' });
      }
    }
    // No run folder straight in the current folder.
    expect(await readdir(ws.dir)).toEqual(["workflow.yaml"]);
  });

  it("a --log-dir that starts with - (an unset, unquoted $LOG_DIR before --dry-run) is a usage error, before anything runs or is written; ./-x names such a folder", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'touch ran' }\n");
    const commands = [
      ["run", "--log-dir", "--dry-run", ws.file],
      ["run", ws.file, "--log-dir", "--no-color"],
      ["worker", "--store", "postgres://u@127.0.0.1:1/x", "--log-dir", "-logs"],
      ["prune", "--logs", "--log-dir", "--dry-run", "--older-than", "1d"],
    ];
    for (const args of commands) {
      const value = args[args.indexOf("--log-dir") + 1]!;
      const result = await runCli(args, { cwd: ws.dir, env: { TASKQ_STORE: "" } });
      expect(result, args.join(" ")).toMatchObject({ code: 2, stderr: `taskq: --log-dir: "${value}" looks like a flag, not a folder (was the value before it left out?); for a folder of that name, give ./${value}\n` });
    }
    expect(await readdir(ws.dir)).toEqual(["workflow.yaml"]);
    const named = await runCli(["run", ws.file, "--log-dir", "./-logs", "--output", "plain"], { cwd: ws.dir });
    expect(named.code).toBe(0);
    expect((await readdir(ws.dir)).sort()).toEqual(["-logs", "ran", "workflow.yaml"]);
  });

  it("a --log-dir that starts with ~ (quoted, from a CI variable, or after --log-dir=: no shell expanded it) is a usage error naming the home folder's path, before anything runs or is written; ./~ names such a folder", async () => {
    // Before, the run made a folder "~" in the current folder and said "logs in ~/logs/<run>", which reads as the home folder's.
    const ws = await workspace("tasks:\n  a: { run: 'touch ran' }\n");
    const home = path.join(ws.dir, "home");
    await mkdir(home);
    const commands = [
      ["run", ws.file, "--log-dir", "~/logs", "--output", "plain"],
      // Unquoted, as a shell leaves it: not "it was quoted, or came from a variable", which it was not.
      ["run", ws.file, "--log-dir=~", "--dry-run"],
      ["worker", "--store", "postgres://u@127.0.0.1:1/x", "--log-dir", "~/ci logs"],
      ["prune", "--logs", "--log-dir", "~/logs", "--older-than", "1d"],
    ];
    for (const args of commands) {
      const joined = args.find((arg) => arg.startsWith("--log-dir="));
      const value = joined !== undefined ? joined.slice("--log-dir=".length) : args[args.indexOf("--log-dir") + 1]!;
      const result = await runCli(args, { cwd: ws.dir, env: { TASKQ_STORE: "", HOME: home } });
      expect(result, args.join(" ")).toMatchObject({
        code: 2,
        stdout: "",
        stderr: `taskq: --log-dir: "${value}" starts with ~, which no shell expanded (it was quoted, came from a variable, or followed --log-dir=, after which a shell leaves a ~ as it is) and taskq does not: it would name a folder "~" in the current folder; give the home folder's path (${path.join(home, value.slice(1))}), or ./${value} for a folder of that name\n`,
      });
    }
    // A user's home folder, `~ci/logs`: the shell alone knows it.
    const user = await runCli(["run", ws.file, "--log-dir", "~ci/logs", "--output", "plain"], { cwd: ws.dir, env: { TASKQ_STORE: "" } });
    expect(user).toMatchObject({
      code: 2,
      stdout: "",
      stderr: `taskq: --log-dir: "~ci/logs" starts with ~, which no shell expanded (it was quoted, came from a variable, or followed --log-dir=, after which a shell leaves a ~ as it is) and taskq does not: it would name a folder "~ci" in the current folder; give the full path of ~ci's home folder, or ./~ci/logs for a folder of that name\n`,
    });
    expect((await readdir(ws.dir)).sort()).toEqual(["home", "workflow.yaml"]);
    const named = await runCli(["run", ws.file, "--log-dir", "./~/logs", "--output", "plain"], { cwd: ws.dir });
    expect(named.code).toBe(0);
    expect((await readdir(ws.dir)).sort()).toEqual(["home", "ran", "workflow.yaml", "~"]);
  });

  it("--dry-run refuses the store flags a run would refuse; --store-schema without a store is a usage error, as --lease and --run-id are", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const cases: Array<[string[], Record<string, string>, string]> = [
      [["--store", "mysql://u@127.0.0.1:1/x"], {}, "taskq: the store mysql://u@127.0.0.1:1/x is not a PostgreSQL URL: it must start with postgres:// or postgresql://\n"],
      // Its postgres:// left out: URL reads `app:` as the scheme, and the password is still hidden.
      [[], { TASKQ_STORE: "app:s3cret@127.0.0.1:1/x" }, "taskq: the store app:***@127.0.0.1:1/x is not a PostgreSQL URL: it must start with postgres:// or postgresql://\n"],
      // Whitespace before the scheme (a value pasted with it), which the URL as shown does not show: said, not "must start with postgres://".
      [[], { TASKQ_STORE: " postgres://u:s3cret@127.0.0.1:1/x" }, 'taskq: the store postgres://u:***@127.0.0.1:1/x is not a PostgreSQL URL: it starts with whitespace (" ") before its postgres://; remove it\n'],
      [["--store", "\tpostgresql://u@127.0.0.1:1/x"], {}, 'taskq: the store postgresql://u@127.0.0.1:1/x is not a PostgreSQL URL: it starts with whitespace ("\\t") before its postgresql://; remove it\n'],
      // URLs the driver cannot read: a `[` never closed, a port out of range.
      [["--store", "postgres://u:s3cret@[::1:5432/x"], {}, "taskq: --store: postgres://u:***@[::1:5432/x is not a valid URL\n"],
      [[], { TASKQ_STORE: "postgres://u@127.0.0.1:99999/x" }, "taskq: TASKQ_STORE: postgres://u@127.0.0.1:99999/x is not a valid URL\n"],
      [[], { TASKQ_STORE: "postgres://u@127.0.0.1:1/x?connect_timeout=abc" }, "taskq: TASKQ_STORE: connect_timeout=abc in the connection string is not a whole number of seconds (at least 2, or 0 for no limit)\n"],
      [["--store", "postgres://u@127.0.0.1:1/x", "--store-schema", "Bad"], {}, 'taskq: --store-schema: invalid schema name "Bad"; expected lower-case letters, digits and "_" (at most 48, not starting with a digit)\n'],
      // Of the letters, digits and "_" the message names, but starting with a digit: the message says that is why.
      [["--store", "postgres://u@127.0.0.1:1/x", "--store-schema", "2024_ci"], {}, 'taskq: --store-schema: invalid schema name "2024_ci"; expected lower-case letters, digits and "_" (at most 48, not starting with a digit)\n'],
      [["--store-schema", "ci"], {}, "taskq: --store-schema needs a store (--store or TASKQ_STORE): a local run keeps nothing in PostgreSQL\n"],
      [["--store", "", "--store-schema", "ci"], { TASKQ_STORE: "postgres://u@127.0.0.1:1/x" }, "taskq: --store-schema needs a store (--store or TASKQ_STORE): a local run keeps nothing in PostgreSQL\n"],
    ];
    for (const [flags, env, said] of cases) {
      for (const dryRun of [["--dry-run"], []]) {
        const args = ["run", ws.file, "--log-dir", ws.logs, ...flags, ...dryRun];
        const result = await runCli(args, { env: { TASKQ_STORE: "", TASKQ_STORE_SCHEMA: "", ...env } });
        expect(result, args.join(" ")).toMatchObject({ code: 2, stdout: "", stderr: said });
      }
    }
    expect(existsSync(ws.logs)).toBe(false);
    // TASKQ_STORE_SCHEMA, set for the durable commands, is not a local run's concern.
    expect(await runCli(["run", ws.file, "--dry-run"], { env: { TASKQ_STORE: "", TASKQ_STORE_SCHEMA: "Bad" } })).toMatchObject({ code: 0 });
  });

  it("an empty FILE (an unset variable) is a usage error of every command taking a workflow file, not a file without a name that cannot be read", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const said = "taskq: an empty file name: give a workflow file, or - for standard input\n";
    for (const args of [["validate"], ["list"], ["graph"], ["run", "--log-dir", ws.logs], ["run", "--dry-run"], ["submit", "--store", "postgres://u@127.0.0.1:1/x"]]) {
      const result = await runCli([...args, ""], { cwd: ws.dir, env: { TASKQ_STORE: "" } });
      expect(result, args.join(" ")).toMatchObject({ code: 2, stdout: "", stderr: said });
    }
    expect(existsSync(ws.logs)).toBe(false);
    // Among several files validate checks, the empty one named as such.
    expect(await runCli(["validate", ws.file, ""], { cwd: ws.dir })).toMatchObject({
      code: 2,
      stderr: "taskq: '': an empty file name: give a workflow file, or - for standard input\n1 of 2 files has problems\n",
    });
  });

  it("--verbose adds the stack trace of an error that stops taskq, before or after the command's name; without it, the message alone", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const message = "taskq: --run-id needs a store (--store or TASKQ_STORE): a local run's id is made from the time\n";
    const plain = await runCli(["run", ws.file, "--run-id", "x"], { env: { TASKQ_STORE: "" } });
    expect(plain).toMatchObject({ code: 2, stderr: message });
    for (const args of [["--verbose", "run", ws.file, "--run-id", "x"], ["run", ws.file, "--run-id", "x", "--verbose"]]) {
      const verbose = await runCli(args, { env: { TASKQ_STORE: "" } });
      expect(verbose.code).toBe(2);
      expect(verbose.stderr).toMatch(new RegExp(`^${message.replace(/[()]/g, "\\$&")}UsageError: --run-id needs a store.*\n {4}at `));
    }
  });

  // Errors began "taskq: " (taskq's own) or "error: " (those commander finds): one form now, taskq's.
  it("every usage error starts as taskq's other errors do, \"taskq: \", those commander finds too (a missing argument, a bad choice, too many arguments)", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const cases: Array<[string[], string]> = [
      [["run"], "missing required argument 'file'"],
      [["run", ws.file, "--output", "xml"], '--output: "xml" is not one of auto, tty, plain, json'],
      [["list", ws.file, "extra"], `too many arguments for 'list': it takes one workflow file (${ws.file}), and got 'extra' besides`],
      [["schema", "extra"], "too many arguments for 'schema'. Expected 0 arguments but got 1."],
      [["prune", "--logs"], "required option '--older-than <age>' not specified"],
      [["run", ws.file, "--log-dir"], "option '--log-dir <dir>' argument missing"],
      [["run", ws.file, "-j", "0"], 'taskq: -j: "0" is not a whole number from 1 to 10000'.slice("taskq: ".length)],
    ];
    for (const [args, message] of cases) {
      expect(await runCli(args), args.join(" ")).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${message}\n` });
    }
  });

  it("a workflow file taken as the value of a flag before it (run --log-dir ci.yaml) is named with that flag, not said to be missing alone; nothing runs", async () => {
    // commander said "missing required argument 'file'" alone, the file given all the same.
    const ws = await workspace("tasks:\n  a: { run: 'echo ran > ran.txt' }\n", "ci.yaml");
    for (const flag of ["--log-dir", "--run-id"]) {
      const result = await runCli(["run", flag, "ci.yaml"], { cwd: ws.dir });
      expect(result, flag).toMatchObject({
        code: 2,
        stdout: "",
        stderr: `taskq: missing required argument 'file': ${flag} took ci.yaml as its value; give ${flag} its own value, before the workflow file\n`,
      });
    }
    expect(existsSync(path.join(ws.dir, "ran.txt"))).toBe(false);
    // A value that names no workflow file: commander's words, as before.
    expect(await runCli(["run", "--log-dir", "logs"], { cwd: ws.dir })).toMatchObject({ code: 2, stderr: "taskq: missing required argument 'file'\n" });
  });

  // commander's own said "option '--output <mode>' argument 'xml' is invalid. Allowed choices are ...", unlike every other flag error of taskq's.
  it("a bad choice of --output or --format is said as taskq's other flag errors are, with the choice meant where one is close (a picture's format: how Graphviz draws one), and nothing runs", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran }\n");
    const cases: Array<[string[], string]> = [
      [["run", ws.file, "--output", "xml"], '--output: "xml" is not one of auto, tty, plain, json'],
      [["run", ws.file, "--output=jsno"], '--output: "jsno" is not one of auto, tty, plain, json; did you mean "json"?'],
      [["validate", ws.file, "--output", "JSON"], '--output: "JSON" is not one of plain, json; did you mean "json"?'],
      // A picture: taskq writes its source, which Graphviz draws (the command given, with --format dot).
      [["graph", ws.file, "--format", "svg"], `--format: "svg" is not one of mermaid, dot; taskq writes the graph's source, not a picture: for SVG, have Graphviz draw it (taskq graph ${ws.file} --format dot | dot -Tsvg -o graph.svg)`],
      [["graph", "--format=PNG", ws.file], `--format: "PNG" is not one of mermaid, dot; taskq writes the graph's source, not a picture: for PNG, have Graphviz draw it (taskq graph --format dot ${ws.file} | dot -Tpng -o graph.png)`],
      [["graph", ws.file, "--format", "dto"], '--format: "dto" is not one of mermaid, dot; did you mean "dot"?'],
    ];
    for (const [args, message] of cases) {
      expect(await runCli(args, { cwd: ws.dir }), args.join(" ")).toMatchObject({ code: 2, stdout: "", stderr: `taskq: ${message}\n` });
    }
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  it("--json is --output json on each command that has that choice; given with another --output it is a usage error, and nothing runs", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran }\n");
    const run = await runCli(["run", "--json", ws.file, "--log-dir", path.join(ws.dir, "logs")], { cwd: ws.dir });
    expect(run.code).toBe(0);
    const records = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as { event: string });
    expect(records[0]!.event).toBe("run");
    expect(records.at(-1)!.event).toBe("summary");
    expect(JSON.parse((await runCli(["validate", ws.file, "--json"])).stdout)).toMatchObject({ event: "valid", tasks: 1 });
    await rm(path.join(ws.dir, "ran"));
    for (const other of ["plain", "tty"]) {
      const result = await runCli(["run", "--json", "--output", other, ws.file], { cwd: ws.dir });
      const message = `--json is --output json, and --output ${other} was given too: give one`;
      expect(result).toMatchObject({ code: 2, stderr: `taskq: ${message}\n` });
      // --json asked for records: the usage error is one, whatever --output said besides.
      expect(JSON.parse(result.stdout)).toMatchObject({ event: "error", code: "USAGE", exitCode: 2, message });
    }
    // A mistyped --output with --json: told as a record too.
    const mistyped = await runCli(["run", "--json", "--output", "jsno", ws.file], { cwd: ws.dir });
    expect(mistyped).toMatchObject({ code: 2, stderr: 'taskq: --output: "jsno" is not one of auto, tty, plain, json; did you mean "json"?\n' });
    expect(JSON.parse(mistyped.stdout)).toMatchObject({ event: "error", code: "USAGE", exitCode: 2, message: '--output: "jsno" is not one of auto, tty, plain, json; did you mean "json"?' });
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
    // A usage error found before the command runs is a record on stdout, as with --output json.
    expect(JSON.parse((await runCli(["run", "--json", "--bogus", ws.file], { cwd: ws.dir })).stdout)).toMatchObject({ event: "error", code: "USAGE", message: "unknown option '--bogus'" });
    // A command with no --output has no --json either.
    expect((await runCli(["list", "--json", ws.file])).code).toBe(2);
  });

  it("with --output json, a usage error commander finds is an error record on stdout too", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true' }\n");
    const cases: Array<[string[], string]> = [
      [["run", "--output", "json"], "missing required argument 'file'"],
      [["run", "--output=json", "--bogus", ws.file], "unknown option '--bogus'"],
      [["run", "--output", "json", ws.file, "extra.yaml"], `too many arguments for 'run': it takes one workflow file, and got 2 (${ws.file}, extra.yaml); for each in turn: for f in ${ws.file} extra.yaml; do taskq run --output json "$f"; done`],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`taskq: ${message}\n`);
      expect(JSON.parse(result.stdout)).toMatchObject({ event: "error", code: "USAGE", exitCode: 2, message });
    }
    expect((await runCli(["run", "--bogus", ws.file])).stdout).toBe("");
    // The last --output wins, as it does for a run: a plain one writes no record.
    for (const args of [["run", ws.file, "--output", "json", "--output", "plain", "-j", "0"], ["run", ws.file, "--output=json", "--output=plain", "--bogus"]]) {
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
    }
    expect(JSON.parse((await runCli(["run", ws.file, "--output", "plain", "--output", "json", "-j", "0"])).stdout)).toMatchObject({ event: "error", code: "USAGE" });
    // list, graph and schema have no --output: it is an unknown flag there, said in text alone.
    for (const command of ["list", "graph"]) {
      const result = await runCli([command, ws.file, "--output", "json"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("unknown option '--output'");
      expect(result.stdout).toBe("");
    }
  });

  it("the last --output given wins for an error as for the run: an invalid file with `--output json --output plain` prints no JSON record, and the other way round one", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true', bogus: 1 }\n");
    const plain = await runCli(["run", ws.file, "--output", "json", "--output", "plain"]);
    expect(plain).toMatchObject({ code: 2, stdout: "" });
    expect(plain.stderr).toContain('unknown key "bogus"');
    const json = await runCli(["validate", ws.file, "--output=plain", "--output=json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ event: "invalid", exitCode: 2 });
  });

  it("--output json: one invalid file's record names its file, as each of several files' does (validate and run alike)", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true', bogus: 1 }\n");
    for (const command of ["validate", "run"]) {
      const result = await runCli([command, ws.file, "--output", "json"], { cwd: ws.dir });
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stdout)).toMatchObject({ event: "invalid", file: ws.file, code: "INVALID_WORKFLOW", problems: [{ file: ws.file, line: 2 }] });
    }
  });

  it("list and --dry-run show a multi-line command on its one line, its line breaks and tabs as \n and \t", async () => {
    // YAML's "\n" and "\t" escapes: a real line break and a real tab in the command.
    const ws = await workspace('tasks:\n  a: { run: "echo one\\n\\techo two\\n" }\n');
    const shown = String.raw`echo one\n\techo two`;
    expect((await runCli(["list", ws.file])).stdout).toBe(`ID\tPRIORITY\tRETRIES\tDEPENDS ON\tRUN\na\tnormal\t0\t-\t${shown}\n`);
    expect((await runCli(["run", "--dry-run", ws.file, "-j", "1"])).stdout).toBe(`plan for ${ws.file}: 1 task, concurrency 1; nothing is run\n   1. a: ${shown}  (priority normal)\n`);
  });

  it("list, --dry-run and validate escape a workflow's control characters (BEL, ESC, C1, DEL) as \\u001b, in commands and notes; --output json stays JSON", async () => {
    // YAML's escapes: a real BEL, ESC, CSI (U+009B) and DEL in the command, an ESC in the cwd (which is noted: it does not exist).
    const ws = await workspace('tasks:\n  a:\n    run: "echo a\\tb\\rX\\u0007\\u001b[2J\\u009b2J\\u007f"\n    cwd: "sub\\u001b[2Jx"\n');
    const shown = String.raw`echo a\tb\rX\u0007\u001b[2J\u009b2J\u007f`;
    const note = String.raw`note: ${ws.file}:4:10: task "a": cwd "sub\u001b[2Jx" (${ws.dir}/sub\u001b[2Jx) does not exist now`;
    // Nothing a terminal obeys but the tabs between list's columns and the line breaks between lines.
    // eslint-disable-next-line no-control-regex -- the control characters are the point
    const raw = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
    const list = await runCli(["list", ws.file]);
    expect(list.stdout).toBe(`ID\tPRIORITY\tRETRIES\tDEPENDS ON\tRUN\na\tnormal\t0\t-\t${shown}\n`);
    const plan = await runCli(["run", "--dry-run", ws.file, "-j", "1"]);
    expect(plan.stdout).toContain(`\n   1. a: ${shown}  (priority normal; in sub\\u001b[2Jx)\n${note}`);
    const validate = await runCli(["validate", ws.file]);
    expect(validate.stdout).toContain(`\n${note}`);
    for (const result of [list, plan, validate]) {
      expect(result.code).toBe(0);
      expect(result.stdout).not.toMatch(raw);
    }
    // JSON records hold the text itself, as JSON quotes it: parsed, the command as written.
    const json = await runCli(["run", "--dry-run", ws.file, "--output", "json"]);
    const planned = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; run?: string });
    expect(planned.find((record) => record.event === "planned")?.run).toBe("echo a\tb\rX\u0007\u001b[2J\u009b2J\u007f");
  });

  it("list, --dry-run and validate escape the bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069) as \\u202e, which would reorder the rest of a line", async () => {
    // "Trojan Source": a terminal that orders text both ways shows what follows an override reversed.
    const ws = await workspace('tasks:\n  a:\n    run: "echo \\u202Edesrever \\u2066iso\\u2069"\n    cwd: "sub\\u202Ex"\n  b: { run: "true", priority: "x\\u202Ey" }\n');
    const list = await runCli(["list", ws.file]);
    const plan = await runCli(["run", "--dry-run", ws.file]);
    const validate = await runCli(["validate", ws.file]);
    expect(validate.stderr).toContain(String.raw`got "x\u202ey"`);
    // Fixed, the priority: the rest is listed.
    await writeFile(ws.file, (await readFile(ws.file, "utf8")).replace(/priority: .*? }/, "priority: high }"));
    const listed = await runCli(["list", ws.file]);
    expect(listed.stdout).toContain(String.raw`echo \u202edesrever \u2066iso\u2069`);
    const planned = await runCli(["run", "--dry-run", ws.file]);
    expect(planned.stdout).toContain(String.raw`in sub\u202ex`);
    expect(planned.stdout).toContain(String.raw`cwd "sub\u202ex"`);
    for (const result of [list, plan, validate, listed, planned]) expect(result.stdout + result.stderr).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  });

  it("validate and --dry-run escape the control characters of the file's name in their first line, as in the notes that name it", async () => {
    const ws = await workspace("tasks:\n  a: { run: 'true', runAt: 2020-01-01T00:00:00Z }\n", "ci\n\u001b[2J\u009b2J.yaml");
    const shown = ws.file.replace("\n", "\\n").replace("\u001b", "\\u001b").replace("\u009b", "\\u009b");
    // eslint-disable-next-line no-control-regex -- the control characters are the point
    const raw = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;
    const validate = await runCli(["validate", ws.file]);
    expect(validate).toMatchObject({ code: 0, stdout: `${shown}: ok, 1 task\nnote: ${shown}:2:28: task "a": runAt 2020-01-01T00:00:00Z is in the past; the task runs now\n` });
    const plan = await runCli(["run", "--dry-run", ws.file]);
    expect(plan.code).toBe(0);
    expect(plan.stdout.split("\n")[0]).toMatch(new RegExp(`^plan for ${shown.replace(/[\\[\]$.]/g, "\\$&")}: 1 task, concurrency \\d+; nothing is run$`));
    for (const result of [validate, plan]) expect(result.stdout.replaceAll("\n", "")).not.toMatch(raw);
  });

  // validate, --dry-run and the error records wrote JSON.stringify's text: a C1 control (U+009B,
  // an 8-bit CSI) as its raw bytes, which a terminal showing the NDJSON obeys, where run's records escape it.
  it("validate, --dry-run and error records with --output json write C1 controls escaped (\\u009b), as run's records do", async () => {
    const ws = await workspace('tasks:\n  a:\n    run: "echo \\u009b2J"\n    cwd: "sub\\u009bx"\n    runAt: 2020-01-01T00:00:00Z\n', "ci\u009b2J.yaml");
    const bad = await workspace("tasks:\n  a: { run: 'true', nope: 1 }\n", "bad\u009b2J.yaml");
    const results = [
      await runCli(["validate", ws.file, "--output", "json"]),
      await runCli(["run", "--dry-run", ws.file, "--output", "json"]),
      await runCli(["validate", bad.file, "--output", "json"]),
      await runCli(["run", ws.file, "--output", "json", "-j", "\u009b2J"]),
    ];
    expect(results.map((result) => result.code)).toEqual([0, 0, 2, 2]);
    for (const result of results) {
      expect(result.stdout).not.toMatch(/[\u0080-\u009f]/);
      expect(result.stdout).toContain("\\u009b2J");
    }
    const planned = results[1]!.stdout.trim().split("\n").map((line) => JSON.parse(line) as { event: string; run?: string; cwd?: string; file?: string });
    expect(planned[0]).toMatchObject({ event: "plan", file: ws.file });
    expect(planned[1]).toMatchObject({ event: "planned", run: "echo \u009b2J", cwd: `${ws.dir}/sub\u009bx` });
    expect((JSON.parse(results[2]!.stdout) as { problems: { file: string }[] }).problems[0]?.file).toBe(bad.file);
  });

  it("validate quotes a bad value's DEL and C1 controls (U+009B, an 8-bit CSI) as \\u009b, as it quotes ESC: JSON leaves them raw", async () => {
    const ws = await workspace('tasks:\n  a: { run: "true", priority: "x\\u009b2J\\u001b[2J\\u007f" }\n');
    const result = await runCli(["validate", ws.file]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toBe(`${ws.file}:2:31: task "a": \`priority\` must be one of: low, normal, high, critical, got ${String.raw`"x\u009b2J\u001b[2J\u007f"`}\n1 problem\n`);
  });

  it("--dry-run lists tasks in the order a run at that concurrency starts them: slots filled by priority, delays last", async () => {
    const ws = await workspace(`tasks:
  a: { run: sleep 1, priority: high }
  b: { run: sleep 1, dependsOn: a }
  c: { run: sleep 1 }
  d: { run: sleep 1, priority: low }
  e: { run: "true", priority: critical, delay: 2s }
  f: { run: "true", priority: critical, runAt: "${new Date(Date.now() + 20 * 86_400_000).toISOString()}" }
  g: { run: "true", dependsOn: [e] }
`);
    const order = async (jobs: string): Promise<string[]> => {
      const result = await runCli(["run", "--dry-run", ws.file, "-j", jobs, "--output", "json"]);
      expect(result.code).toBe(0);
      return result.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as { event: string; id?: string })
        .filter((record) => record.event === "planned")
        .map((record) => record.id!);
    };
    // -j 2: a and c start together; b (a is done) before d (low); e when its delay is up, then g; f in 20 days.
    expect(await order("2")).toEqual(["a", "c", "b", "d", "e", "g", "f"]);
    expect(await order("1")).toEqual(["a", "b", "c", "d", "e", "g", "f"]);
    expect(await order("8")).toEqual(["a", "c", "d", "b", "e", "g", "f"]);
  });

  it("validate reports every problem as file:line:col and runs nothing", async () => {
    const ws = await workspace(`tasks:
  a:
    run: touch ran
    dependsOn: [b]
  b:
    run: echo b
    dependsOn: a
  c:
    rn: echo typo
`);
    for (const command of ["validate", "run"]) {
      const result = await runCli([command, ws.file], { cwd: ws.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`${ws.file}:\\d+:\\d+: .*a -> b -> a`));
      expect(result.stderr).toMatch(new RegExp(`${ws.file}:9:5: .*"rn".*did you mean "run"`));
      // The typo told once: not also as \`run\` missing.
      expect(result.stderr).not.toContain("is missing");
      // "nothing was run" where something would have been: not after validate's, which runs nothing anyway.
      expect(result.stderr).toMatch(command === "run" ? /\n2 problems; nothing was run\n$/ : /\n2 problems\n$/);
    }
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  // 50,000 bad tasks printed 50,000 problem lines (6 MB), the count under them.
  it("validate and run print the first 50 problems of a file and how many more, with the count of all, exit 2; --output json lists every one", async () => {
    const tasks = Array.from({ length: 60 }, (_, index) => `  t${index}: { run: x, retries: -1 }`);
    const ws = await workspace(["tasks:", ...tasks, ""].join("\n"));
    const problem = (index: number) => `${ws.file}:${index + 2}:${index < 10 ? 26 : 27}: task "t${index}": \`retries\` must be an integer from 0 to 100, got -1`;
    const shown = Array.from({ length: 50 }, (_, index) => problem(index)).join("\n");
    for (const command of ["validate", "run"]) {
      const result = await runCli([command, ws.file], { cwd: ws.dir });
      expect(result).toMatchObject({ code: 2, stdout: "" });
      expect(result.stderr).toBe(`${shown}\n... and 10 more problems (--output json lists every one)\n60 problems${command === "run" ? "; nothing was run" : ""}\n`);
      const json = await runCli([command, ws.file, "--output", "json"], { cwd: ws.dir });
      expect(json.code).toBe(2);
      expect((JSON.parse(json.stdout.trim().split("\n").at(-1)!) as { problems: unknown[] }).problems).toHaveLength(60);
    }
    // Each of several files as one: its first 50, then its count.
    const several = await runCli(["validate", ws.file, ws.file], { cwd: ws.dir });
    expect(several.code).toBe(2);
    expect(several.stderr).toBe(`${`${shown}\n... and 10 more problems (--output json lists every one)\n${ws.file}: 60 problems\n`.repeat(2)}2 of 2 files have problems\n`);
    // 50 are printed whole.
    await writeFile(ws.file, ["tasks:", ...tasks.slice(0, 50), ""].join("\n"));
    expect((await runCli(["validate", ws.file], { cwd: ws.dir })).stderr).toBe(`${shown}\n50 problems\n`);
  });

  // A problem past the 50th that quoted a key like the line saying YAML errors were cut short was not counted in "N more".
  it("counts every problem past the first 50 in '... and N more', one whose message quotes a value like '... and up to 3 more YAML errors' too", async () => {
    const tasks = Array.from({ length: 55 }, (_, index) => `  t${index}: { run: x, retries: -1 }`);
    const ws = await workspace(["tasks:", ...tasks, '"x: ... and up to 3 more YAML errors": 1', ""].join("\n"));
    for (const files of [[ws.file], [ws.file, ws.file]]) {
      const result = await runCli(["validate", ...files], { cwd: ws.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("\n... and 6 more problems (--output json lists every one)\n");
      expect(result.stderr).toContain(files.length === 1 ? "\n56 problems\n" : `\n${ws.file}: 56 problems\n`);
    }
  });

  // validate took one file: `taskq validate workflows/*.yaml` in a CI was refused, told to loop in the shell.
  it("validate takes several files: each gets its verdict, ok or its problems at file:line:col, and it exits 2 if any has problems; --output json gives a record per file", async () => {
    const ws = await workspace("tasks:\n  a: { run: x }\n  b: { run: y, dependsOn: a }\n");
    await writeFile(path.join(ws.dir, "bad.yaml"), "tasks:\n  a: { run: x, dependsOn: [nope] }\n");
    await writeFile(path.join(ws.dir, "one.yml"), "tasks:\n  a: { run: x }\n");
    const name = path.basename(ws.file);
    const mixed = await runCli(["validate", name, "bad.yaml", "missing.yaml", "one.yml"], { cwd: ws.dir });
    expect(mixed).toMatchObject({
      code: 2,
      stdout: `${name}: ok, 2 tasks\none.yml: ok, 1 task\n`,
      stderr: 'bad.yaml:2:28: task "a" depends on "nope", which is not defined\nbad.yaml: 1 problem\nmissing.yaml:1:1: cannot read file: no such file (ENOENT)\nmissing.yaml: 1 problem\n2 of 4 files have problems\n',
    });
    expect(await runCli(["validate", name, "one.yml"], { cwd: ws.dir })).toMatchObject({ code: 0, stdout: `${name}: ok, 2 tasks\none.yml: ok, 1 task\n`, stderr: "" });
    const json = await runCli(["validate", name, "bad.yaml", "one.yml", "--output", "json"], { cwd: ws.dir });
    expect(json.code).toBe(2);
    expect(json.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      { ts: expect.any(String), event: "valid", file: name, tasks: 2 },
      { ts: expect.any(String), event: "invalid", file: "bad.yaml", code: "INVALID_WORKFLOW", exitCode: 2, problems: [{ file: "bad.yaml", line: 2, col: 28, message: 'task "a" depends on "nope", which is not defined' }] },
      { ts: expect.any(String), event: "valid", file: "one.yml", tasks: 1 },
    ]);
    expect(await runCli(["validate", "-", "-"], { cwd: ws.dir })).toMatchObject({ code: 2, stderr: "taskq: - (standard input) is given more than once, and it can be read only once: give - once\n" });
    // `run - -` likewise, before standard input is read (before: `<stdin> has no task "-"`, and `taskq list -` to list them, the input gone).
    expect(await runCli(["run", "-", "-"], { cwd: ws.dir })).toMatchObject({ code: 2, stdout: "", stderr: "taskq: - (standard input) is given more than once, and it can be read only once: give - once\n" });
    // A file and `-` twice as tasks: no standard input is read, and the file has no task `-`.
    expect((await runCli(["run", name, "-", "-"], { cwd: ws.dir })).stderr).toMatch(/has no task "-"/);
    expect((await runCli(["validate", "--help"])).stdout).toContain("validate [options] <files...>");
  });

  // 200 tasks merging one bad default were told 200 times at the same line:col, in text and in JSON alike.
  it("validate tells a problem in a default many tasks merge in once, at the default, naming the first tasks and how many more, in text and --output json alike", async () => {
    const lines = ["x-d: &d { run: echo, retries: 0x2 }", "tasks:"];
    for (let index = 1; index <= 200; index++) lines.push(`  t${index}: { <<: *d }`);
    const ws = await workspace(`${lines.join("\n")}\n`);
    const name = path.basename(ws.file);
    const message = 'tasks "t1", "t2", "t3" and 197 more: `retries` is 0x2, which YAML reads as the number 2: an integer is written in digits; write 2';
    expect(await runCli(["validate", name], { cwd: ws.dir })).toMatchObject({ code: 2, stderr: `${name}:1:31: ${message}\n1 problem\n` });
    const json = await runCli(["validate", name, "--output", "json"], { cwd: ws.dir });
    expect(JSON.parse(json.stdout) as unknown).toMatchObject({ event: "invalid", problems: [{ file: name, line: 1, col: 31, message }] });
  });

  // The plan's records had no `ts`, unlike a run's, validate's and every error record.
  it("--dry-run --output json gives every record its ts, as a run's records have: the plan, each planned task and each note", async () => {
    const ws = await workspace("tasks:\n  a: { run: touch ran, runAt: 2020-01-01T00:00:00Z }\n  b: { run: y, dependsOn: a }\n");
    const before = Date.now();
    const result = await runCli(["run", ws.file, "--dry-run", "--output", "json"], { cwd: ws.dir });
    expect(result.code).toBe(0);
    const records = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map((record) => record.event)).toEqual(["plan", "planned", "planned", "note"]);
    for (const record of records) {
      expect(record.ts, JSON.stringify(record)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(record.ts as string)).toBeGreaterThanOrEqual(before - 1000);
      expect(Object.keys(record)[0]).toBe("ts");
    }
    expect(existsSync(path.join(ws.dir, "ran"))).toBe(false);
  });

  it("validate --output json: one record for the verdict, valid or invalid with each problem, and one per note", async () => {
    const good = await workspace("tasks:\n  a: { run: x, runAt: 2020-01-01T00:00:00Z }\n  b: { run: y, dependsOn: a }\n");
    const valid = await runCli(["validate", good.file, "--output", "json"]);
    expect(valid.code).toBe(0);
    const records = valid.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toEqual([
      { ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), event: "valid", file: good.file, tasks: 2 },
      // The place a note names, as fields too, as an invalid record gives each problem's.
      { ts: expect.any(String), event: "note", message: `task "a": runAt 2020-01-01T00:00:00Z is in the past; the task runs now`, file: good.file, line: 2, col: 23 },
    ]);
    // A run and its plan give the same record (a run's notes of its own have no place).
    for (const args of [["run", good.file, "--log-dir", good.logs], ["run", good.file, "--dry-run"]]) {
      const run = await runCli([...args, "--output", "json"], { cwd: good.dir });
      const notes = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.event === "note");
      expect(notes).toEqual([expect.objectContaining({ message: expect.stringContaining("is in the past"), file: good.file, line: 2, col: 23 })]);
    }
    const bad = await workspace("tasks:\n  a: { run: x, dependsOn: [nope] }\n");
    const invalid = await runCli(["validate", bad.file, "--output", "json"]);
    expect(invalid.code).toBe(2);
    expect(JSON.parse(invalid.stdout)).toMatchObject({
      event: "invalid",
      exitCode: 2,
      problems: [{ file: bad.file, line: 2, col: 28, message: 'task "a" depends on "nope", which is not defined' }],
    });
    // stderr keeps the text, as for run --output json.
    expect(invalid.stderr).toContain(`${bad.file}:2:28: task "a" depends on "nope"`);
  });

  it("counts the problems it lists, not the line saying that more YAML errors follow", async () => {
    const ws = await workspace(["defaults: ]", ...Array.from({ length: 30 }, (_, index) => `  k${index}: 1`), ""].join("\n"));
    const result = await runCli(["validate", ws.file]);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(11 + 1);
    expect(result.stderr).toMatch(/\.\.\. and up to \d+ more YAML errors from here on; fix the ones above first\n10 problems, and more YAML errors after them\n$/);
  });

  it("runs a workflow whose tasks take fields from an anchor with a merge key, <<, their own winning; a bad value in the anchor is told at it, once, naming the tasks, and nothing runs", async () => {
    const ws = await workspace(`x-base: &base
  retries: 1
  backoff: { base: 1ms }
  env: { GREETING: hello }
tasks:
  flaky:
    <<: *base
    run: 'echo "$GREETING" >> out; test -f marker || { touch marker; exit 3; }'
  after: { <<: *base, env: { GREETING: bye }, run: 'echo "$GREETING" >> out', dependsOn: flaky }
`);
    const run = await runCli(["run", ws.file, "--log-dir", ws.logs], { cwd: ws.dir });
    expect(run.code, run.stderr).toBe(0);
    // flaky failed once and was retried (retries from the anchor); after kept its own env.
    expect(await readFile(path.join(ws.dir, "out"), "utf8")).toBe("hello\nhello\nbye\n");
    const bad = await workspace(`x-base: &base { retries: -1 }
tasks:
  a: { <<: *base, run: touch ran }
  b: { <<: *base, run: touch ran }
`);
    const refused = await runCli(["run", bad.file, "--log-dir", bad.logs], { cwd: bad.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${bad.file}:1:26: tasks "a" and "b": \`retries\` must be an integer from 0 to 100, got -1\n1 problem; nothing was run\n`);
    expect(existsSync(path.join(bad.dir, "ran"))).toBe(false);
  });

  it("validate, list and graph describe a valid file", async () => {
    const ws = await workspace(`tasks:\n  build: { run: make }\n  test: { run: make test, dependsOn: build }\n`);
    expect(await runCli(["validate", ws.file])).toMatchObject({ code: 0, stdout: `${ws.file}: ok, 2 tasks\n` });
    const list = await runCli(["list", ws.file]);
    expect(list.stdout.split("\n")[2]).toBe("test\tnormal\t0\tbuild\tmake test");
    const mermaid = await runCli(["graph", ws.file]);
    expect(mermaid.stdout).toBe('graph LR\n  t0["build"]\n  t1["test"]\n  t0 --> t1\n');
    const dot = await runCli(["graph", ws.file, "--format", "dot"]);
    expect(dot.stdout).toContain('"build" -> "test";');
    // The workflow's name, the one text of the file dot shows, has its control characters written out, bidirectional overrides too.
    const named = await workspace(`name: "ci\\e[2J\\u202e sj\\u0085x"\ntasks:\n  a: { run: make }\n`);
    expect((await runCli(["graph", named.file, "--format", "dot"])).stdout.split("\n")[0]).toBe(String.raw`digraph "ci\u001b[2J\u202e sj\u0085x" {`);
  });

  it("validate notes a cwd that is not a folder now of a task that depends on no other, at file:line:col, and still says ok (a file there as a file); one that depends on others is not noted (one of them may make it)", async () => {
    const ws = await workspace(
      [
        "defaults: { cwd: gone }",
        "tasks:",
        "  make: { run: mkdir -p out, cwd: . }",
        "  use: { run: ls, cwd: out, dependsOn: make }",
        "  file: { run: ls, cwd: workflow.yaml }",
        "  same: { run: ls, cwd: out, dependsOn: make }",
        "  plain: { run: ls }",
        "",
      ].join("\n"),
    );
    const result = await runCli(["validate", ws.file]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const at = (folder: string): string => path.join(ws.dir, folder);
    const fileNote = `note: ${ws.file}:5:25: task "file": cwd "workflow.yaml" (${at("workflow.yaml")}) is a file, not a folder now: the task fails to start unless a folder takes the file's place before then`;
    expect(result.stdout).toBe(
      [
        `${ws.file}: ok, 5 tasks`,
        `note: ${ws.file}:1:18: defaults: cwd "gone" (${at("gone")}) does not exist now: the tasks that use it and depend on no other task fail to start unless something makes that folder before then`,
        fileNote,
        "",
      ].join("\n"),
    );
    await mkdir(at("out"));
    await mkdir(at("gone"));
    const again = await runCli(["validate", ws.file]);
    expect(again.stdout).toBe(`${ws.file}: ok, 5 tasks\n${fileNote}\n`);
  });

  // Run as root here (as CI is): folders mode 700 of root's, which nobody (65534) cannot enter or reach through.
  it.skipIf(process.getuid?.() !== 0)("validate and run note a cwd that is there but this user cannot enter or reach (EACCES) as a matter of permissions, one in a loop of links as a path to mend, not as folders to make; run's task then fails naming the same", async () => {
    const ws = await workspace(["tasks:", "  shut: { run: pwd, cwd: private }", "  above: { run: pwd, cwd: closed/inner }", "  loop: { run: pwd, cwd: loop1 }", "  open: { run: pwd }", ""].join("\n"));
    await chmod(ws.dir, 0o755);
    await chmod(ws.file, 0o644);
    await mkdir(path.join(ws.dir, "private"), { mode: 0o700 });
    await mkdir(path.join(ws.dir, "closed", "inner"), { recursive: true });
    await chmod(path.join(ws.dir, "closed"), 0o700);
    await symlink("loop2", path.join(ws.dir, "loop1"));
    await symlink("loop1", path.join(ws.dir, "loop2"));
    const logs = path.join(ws.dir, "logs");
    await mkdir(logs);
    await chown(logs, 65534, 65534);
    const asNobody = { cwd: ws.dir, uid: 65534, gid: 65534 };
    const at = (folder: string): string => path.join(ws.dir, folder);
    const notes = [
      `${ws.file}:2:26: task "shut": cwd "private" (${at("private")}) cannot be entered by this user: permission denied (EACCES) now: run as this user, the task fails to start unless its permissions (or a parent folder's) change before then`,
      `${ws.file}:3:27: task "above": cwd "closed/inner" (${at("closed/inner")}) cannot be reached by this user: permission denied on a folder above it (EACCES) now: run as this user, the task fails to start unless its permissions (or a parent folder's) change before then`,
      `${ws.file}:4:26: task "loop": cwd "loop1" (${at("loop1")}) cannot be reached: its symbolic links form a loop (ELOOP) now: the task fails to start unless the cwd is mended`,
    ];

    const validated = await runCli(["validate", ws.file], asNobody);
    expect(validated.stderr).toBe("");
    expect(validated.stdout).toBe(`${ws.file}: ok, 4 tasks\n${notes.map((note) => `note: ${note}\n`).join("")}`);
    expect(validated.code).toBe(0);

    const ran = await runCli(["run", ws.file, "--log-dir", logs, "--output", "plain"], asNobody);
    for (const note of notes) expect(ran.stdout).toContain(`note    ${note}\n`);
    // The task's failure in the words of its note.
    expect(ran.stdout).toContain(`✗ shut: could not start: working directory ${at("private")} cannot be entered: permission denied (EACCES)`);
    expect(ran.stdout).toContain(`✗ above: could not start: working directory ${at("closed/inner")} cannot be reached: permission denied on a folder above it (EACCES)`);
    expect(ran.stdout).toContain(`✗ loop: could not start: working directory ${at("loop1")} cannot be reached: its symbolic links form a loop (ELOOP)`);
    expect(ran.stdout).toMatch(/Summary: 1 succeeded, 3 failed, 0 cancelled/);
    expect(ran.code).toBe(1);

    // Root may enter them: the loop alone is noted.
    expect((await runCli(["validate", ws.file])).stdout).toBe(`${ws.file}: ok, 4 tasks\nnote: ${notes[2]}\n`);
  });

  it("schema prints the committed JSON Schema", async () => {
    const result = await runCli(["schema"]);
    const committed = await readFile(path.join(ROOT, "schema/workflow.schema.json"), "utf8");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(JSON.parse(committed));
  });
});
