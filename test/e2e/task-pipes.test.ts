import { spawn, spawnSync } from "node:child_process";
import { existsSync, readlinkSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, runCli, workspace } from "../helpers/cli.js";

const REOPENING = 'tasks:\n  loud: { run: "echo to-stderr > /dev/stderr; echo to-stdout > /dev/stdout; echo teed | tee /dev/stderr" }\n';

async function fifoFolders(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith("taskq-fifo-"));
}

describe("tasks' stdout and stderr are pipes", () => {
  it("a task that writes to /dev/stderr by name succeeds; unused FIFOs are kept in one spare folder for the next run", async () => {
    const ws = await workspace(REOPENING);
    const tmp = path.join(ws.dir, "tmp");
    await mkdir(tmp);
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { env: { TMPDIR: tmp } });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("loud | to-stderr\n");
    expect(result.stdout).toContain("loud | to-stdout\n");
    expect(result.stdout.split("loud | teed\n")).toHaveLength(3);
    const spares = async (): Promise<number[]> => {
      const folders = await fifoFolders(tmp);
      expect(folders.every((name) => name.startsWith("taskq-fifo-spare-"))).toBe(true);
      return Promise.all(folders.map(async (name) => (await readdir(path.join(tmp, name))).length));
    };
    // The first batch made 8 FIFOs; the task took 1 (plain output: stdout and stderr share it).
    expect(await spares()).toEqual([7]);
    const again = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { env: { TMPDIR: tmp } });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("loud | to-stderr\n");
    // The second run took its FIFOs from the spare folder and kept the rest there.
    expect(await spares()).toEqual([6]);
  });

  it("the FIFO folder a killed taskq left is removed by the next run; a live process's is kept", async () => {
    const ws = await workspace('tasks:\n  one: { run: "echo ok" }\n');
    const tmp = path.join(ws.dir, "tmp");
    const deadPid = spawnSync("true").pid;
    const namespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))![1]!;
    const stale = path.join(tmp, `taskq-fifo-${deadPid}-n${namespace}-AbCdEf`);
    const live = path.join(tmp, `taskq-fifo-${process.pid}-n${namespace}-AbCdEf`);
    await mkdir(stale, { recursive: true });
    await mkdir(live);
    await writeFile(path.join(stale, "0"), "");
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { env: { TMPDIR: tmp } });
    expect(result.code).toBe(0);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });

  it("a TMPDIR that is not there (a CI's, missing on this runner): FIFOs and the guard's list go in /tmp, and the run says so once", async () => {
    const ws = await workspace(`tasks:
  one: { run: "echo fine; echo also > /dev/stderr" }
  two: { run: 'ls -d /tmp/taskq-guard-"$TASKQ_PID"-* >/dev/null && echo guarded', dependsOn: [one] }
`);
    const missing = path.join(ws.dir, "missing");
    const result = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"], { env: { TMPDIR: missing } });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("one | fine\n");
    // `> /dev/stderr` works on a FIFO only (a socket gives ENXIO).
    expect(result.stdout).toContain("one | also\n");
    expect(result.stdout).toContain("two | guarded\n");
    const notes = result.stdout.split("\n").filter((line) => / note {4}/.test(line)).map((line) => line.replace(/^\S+ note {4}/, ""));
    expect(notes).toEqual([`TMPDIR ${missing} is not a folder taskq can write (ENOENT): its FIFOs and orphan guard's list go in /tmp`]);
  });

  // A file system with no room (ENOSPC) that access() calls writable: a tmpfs of one inode, or one whose pages are all taken,
  // mounted in a mount namespace of the run's own (root only). The task checks that its stderr reopens by name (a FIFO: a socket
  // gives ENXIO) and that the guard's list is in /tmp.
  const noRoom = async (
    yaml: string,
    fill: string,
    env: (full: string) => Record<string, string | undefined>,
    run = 'exec "$@"',
  ): Promise<{ full: string; code: number | null; stdout: string; stderr: string; notes: string[] }> => {
    const ws = await workspace(yaml);
    // A folder of the workspace's, for a TMPDIR: the mount is the namespace's alone, gone with it.
    const full = path.join(ws.dir, "full");
    await mkdir(full);
    // From the workspace, by relative paths: a tmpfs mounted on /tmp (where the workspace may be) then hides none of it.
    const script = `cd "$1" && shift && { ${fill.replace("FULL", full)}; } || exit 1\n${run}`;
    const child = spawn("unshare", ["-m", "sh", "-c", script, "sh", ws.dir, process.execPath, BIN, "run", path.basename(ws.file), "--log-dir", "logs", "--output", "plain"], {
      env: { ...process.env, CI: "true", NO_COLOR: "1", TASKQ_KILL_GRACE_MS: undefined, GITHUB_ACTIONS: undefined, ...env(full) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    const notes = stdout.split("\n").filter((line) => / note {4}/.test(line)).map((line) => line.replace(/^\S+ note {4}/, ""));
    return { full, code, stdout, stderr, notes };
  };
  const REOPEN_AND_GUARD = `tasks:
  one: { run: "echo fine; echo also > /dev/stderr; readlink /proc/$$/fd/2" }
  two: { run: 'ls -d /tmp/taskq-guard-"$TASKQ_PID"-* >/dev/null && echo guarded', dependsOn: [one] }
`;
  /** Task one's stderr, by `readlink /proc/$$/fd/2`: a FIFO of taskq's in /tmp (unlinked once the task has started). */
  const FIFO_IN_TMP = /^one \| \/tmp\/taskq-fifo-\d+-n\d+-\w+\/\d+( \(deleted\))?$/m;
  const canMount = process.getuid?.() === 0 && existsSync("/usr/bin/unshare") && spawnSync("unshare", ["-m", "true"]).status === 0;

  it.skipIf(!canMount)("a TMPDIR with no room left (ENOSPC: its disk full): FIFOs and the guard's list go in /tmp, and the run says so once", async () => {
    const result = await noRoom(REOPEN_AND_GUARD, "mount -t tmpfs -o size=4k,nr_inodes=1 tmpfs FULL", (full) => ({ TMPDIR: full }));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("one | fine\n");
    expect(result.stdout).toContain("one | also\n");
    expect(result.stdout).toContain("two | guarded\n");
    expect(result.stdout).toMatch(FIFO_IN_TMP);
    expect(result.notes.sort()).toEqual([
      `cannot make a folder for tasks' FIFOs in ${result.full} (ENOSPC): they are made in /tmp instead`,
      `cannot make the orphan guard's list in ${result.full} (ENOSPC): it is in /tmp instead`,
    ]);
  });

  it.skipIf(!canMount)("a TMPDIR with room for a folder but no FIFO (ENOSPC from mkfifo): the FIFOs go in /tmp too, and the run says so once", async () => {
    // Two inodes: the tmpfs's root and taskq's FIFO folder; the FIFOs, and the guard's list, find none.
    const result = await noRoom(REOPEN_AND_GUARD, "mount -t tmpfs -o size=4k,nr_inodes=2 tmpfs FULL", (full) => ({ TMPDIR: full }));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("one | also\n");
    expect(result.stdout).toContain("two | guarded\n");
    expect(result.stdout).toMatch(FIFO_IN_TMP);
    expect(result.notes.sort()).toEqual([
      `cannot make FIFOs for tasks' output in ${result.full} (ENOSPC): they are made in /tmp instead`,
      `cannot make the orphan guard's list in ${result.full} (ENOSPC): it is in /tmp instead`,
    ]);
  });

  it.skipIf(!canMount || !existsSync("/dev/shm"))("a /dev/shm full (a container's 64 MB, filled): the guard's list goes in /tmp, and the run says so once", async () => {
    const fill = "mount -t tmpfs -o size=64k tmpfs /dev/shm && { dd if=/dev/zero of=/dev/shm/fill bs=4k count=64 2>/dev/null; true; }";
    const result = await noRoom(REOPEN_AND_GUARD, fill, () => ({ TMPDIR: undefined }));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("one | also\n");
    expect(result.stdout).toContain("two | guarded\n");
    // A FIFO takes an inode, no page: a tmpfs full by size still makes them.
    expect(result.stdout).toMatch(/^one \| \/dev\/shm\/taskq-fifo-\d+-n\d+-\w+\/\d+( \(deleted\))?$/m);
    expect(result.notes).toEqual(["cannot make the orphan guard's list in /dev/shm (ENOSPC): it is in /tmp instead"]);
  });

  it.skipIf(!canMount || !existsSync("/dev/shm"))("a /dev/shm full, taskq SIGKILLed: its guard, in /tmp, stops the task and removes the FIFO folder in /dev/shm", { timeout: 60_000 }, async () => {
    const fill = "mount -t tmpfs -o size=64k tmpfs /dev/shm && { dd if=/dev/zero of=/dev/shm/fill bs=4k count=64 2>/dev/null; true; }";
    // taskq in the background; once its task has started, SIGKILLed; then what is left of it, up to 20 s later.
    const run = `"$@" & taskq=$!
i=0; while [ ! -s started ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
ls -d /tmp/taskq-guard-$taskq-* >/dev/null 2>&1 && echo "list in /tmp"
ls -d /dev/shm/taskq-fifo-$taskq-* >/dev/null 2>&1 && echo "fifos in /dev/shm"
kill -KILL $taskq; wait $taskq
i=0; while [ $i -lt 200 ]; do
  tasks=$(grep -l -z -x -F "TASKQ_PID=$taskq" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/||; s|/environ$||')
  fifos=$(ls -d /dev/shm/taskq-fifo-$taskq-* /tmp/taskq-fifo-$taskq-* 2>/dev/null)
  [ -z "$tasks$fifos" ] && break
  sleep 0.1; i=$((i + 1))
done
echo "waited: $i"; echo "tasks left: [$(echo $tasks)]"; echo "FIFO folders left: [$(echo $fifos)]"
for pid in $tasks; do kill -KILL $pid 2>/dev/null; done
true`;
    const result = await noRoom('tasks:\n  long: { run: "echo $$ > started; sleep 300" }\n', fill, () => ({ TMPDIR: undefined }), run);
    expect(result.stdout).toContain("list in /tmp\n");
    expect(result.stdout).toContain("fifos in /dev/shm\n");
    expect(result.stdout).toContain("tasks left: []\n");
    expect(result.stdout).toContain("FIFO folders left: []\n");
  });

  /**
   * Shell words that mount a tmpfs (`options`) on /tmp, then bind the workspace and taskq's checkout, where they are in /tmp
   * (a CI's clean checkout may be), again where they were in the new one (made before it is full: a folder takes no page):
   * the workspace by the shell's cwd, the checkout by a descriptor opened on it before the mount hid it.
   */
  const tmpfsOnTmp = (options: string): string => {
    const checkout = JSON.stringify(path.dirname(path.dirname(BIN)));
    return [
      `exec 9<${checkout}`,
      `mount -t tmpfs -o ${options} tmpfs /tmp`,
      'mkdir -p "$PWD" && mount --no-canonicalize --bind . "$PWD" && cd "$PWD"',
      `case ${checkout} in /tmp/*) mkdir -p ${checkout} && mount --no-canonicalize --bind /proc/self/fd/9 ${checkout} ;; esac`,
      "exec 9<&-",
    ].join(" && ");
  };

  it.skipIf(!canMount || !existsSync("/dev/shm"))("a /dev/shm and a /tmp both full: no guard, and no note that anything moved", async () => {
    const fill = [
      "mount -t tmpfs -o size=64k tmpfs /dev/shm",
      tmpfsOnTmp("size=64k"),
      "for dir in /dev/shm /tmp; do dd if=/dev/zero of=$dir/fill bs=4k count=64 2>/dev/null; done; true",
    ].join(" && ");
    const result = await noRoom('tasks:\n  one: { run: "echo also > /dev/stderr" }\n', fill, () => ({ TMPDIR: undefined }));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("one | also\n");
    expect(result.notes).toEqual(["no guard against orphans (cannot make its list in /dev/shm (ENOSPC), nor in /tmp (ENOSPC)): should taskq be SIGKILLed, its tasks run on"]);
  });

  it.skipIf(!canMount || !existsSync("/dev/shm"))("a TMPDIR with no room, then a /tmp that fills up during the run: the FIFOs move on to /dev/shm, and each move is said where it went", { timeout: 120_000 }, async () => {
    // /tmp of few inodes, which a task fills once the FIFOs are in it, and each task after it fills again as the inodes of
    // FIFOs used up are freed. TMPDIR full after the binds: a bind carries no mount below it.
    const fill = [tmpfsOnTmp("size=1m,nr_inodes=64"), "mount -t tmpfs -o size=4k,nr_inodes=1 tmpfs FULL"].join(" && ");
    const ids = Array.from({ length: 200 }, (_, i) => `t${i}`);
    const yaml = `tasks:
  fill: { run: 'i=0; while touch /tmp/fill-$i 2>/dev/null; do i=$((i + 1)); done; echo filled' }
${ids.map((id) => `  ${id}: { run: 'i=0; while touch /tmp/fill-$$-$i 2>/dev/null; do i=$((i + 1)); done', dependsOn: [fill] }\n`).join("")}  check:
    run: "readlink /proc/$$/fd/2"
    dependsOn: [${ids.join(", ")}]
`;
    const result = await noRoom(yaml, fill, (full) => ({ TMPDIR: full }));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("fill | filled\n");
    expect(result.stdout).toMatch(/^check \| \/dev\/shm\/taskq-fifo-\d+-n\d+-\w+\/\d+( \(deleted\))?$/m);
    expect(result.notes).toEqual([
      `cannot make the orphan guard's list in ${result.full} (ENOSPC): it is in /tmp instead`,
      `cannot make a folder for tasks' FIFOs in ${result.full} (ENOSPC): they are made in /tmp instead`,
      `cannot make a folder for tasks' FIFOs in ${result.full} (ENOSPC), nor in /tmp (ENOSPC): they are made in /dev/shm instead`,
    ]);
  });

  it.skipIf(!canMount || !existsSync("/dev/shm"))("a /dev/shm that fills up during the run: the guard goes on with its list in /tmp, and the run says so once", { timeout: 120_000 }, async () => {
    // One page left for the list: its lines of 600 task starts and ends (+PGID, -PGID) fill it halfway through the run.
    const ids = Array.from({ length: 600 }, (_, i) => `t${i}`);
    const yaml = `tasks:\n${ids.map((id) => `  ${id}: { run: "true" }\n`).join("")}  check:
    run: 'ls -d /dev/shm/taskq-guard-"$TASKQ_PID"-* /tmp/taskq-guard-"$TASKQ_PID"-* 2>/dev/null | sed "s/-n[0-9]*-.*//"; true'
    dependsOn: [${ids.join(", ")}]
`;
    const fill = "mount -t tmpfs -o size=8k tmpfs /dev/shm && { dd if=/dev/zero of=/dev/shm/fill bs=4k count=1 2>/dev/null; true; }";
    const result = await noRoom(yaml, fill, () => ({ TMPDIR: undefined }));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^check \| \/tmp\/taskq-guard-\d+$/m);
    expect(result.notes).toEqual(["cannot write the orphan guard's list in /dev/shm (ENOSPC): it is in /tmp instead"]);
  });

  it("a plain run logs and shows stdout and stderr in the order the task wrote them; JSON labels each line's stream", async () => {
    const ws = await workspace('tasks:\n  mix: { run: "for i in $(seq 1 300); do echo out$i; echo err$i >&2; done" }\n');
    const expected = Array.from({ length: 300 }, (_, i) => [`out${i + 1}`, `err${i + 1}`]).flat();
    const plain = await runCli(["run", ws.file, "--log-dir", ws.logs, "--output", "plain"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.split("\n").filter((line) => line.startsWith("mix | ")).map((line) => line.slice(6))).toEqual(expected);
    const [runId] = await readdir(ws.logs);
    expect(await readFile(path.join(ws.logs, runId!, "mix.log"), "utf8")).toBe(expected.map((line) => `${line}\n`).join(""));

    const json = await runCli(["run", ws.file, "--log-dir", path.join(ws.dir, "json-logs"), "--output", "json"]);
    expect(json.code).toBe(0);
    const output = json.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { event: string; stream?: string; text?: string })
      .filter((event) => event.event === "output");
    expect(output.filter((event) => event.stream === "stdout").map((event) => event.text)).toEqual(expected.filter((line) => line.startsWith("out")));
    expect(output.filter((event) => event.stream === "stderr").map((event) => event.text)).toEqual(expected.filter((line) => line.startsWith("err")));
  });
});
