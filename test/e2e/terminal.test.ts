import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, hasPython, workspace } from "../helpers/cli.js";

/**
 * Runs taskq on a terminal (python's pty, 80x24), as a shell's foreground job, or as a background
 * one (`taskq run x &`: a process group of its own, not the terminal's foreground group), and
 * returns all it wrote there.
 */
function onTerminal(args: string[], cwd: string, job: "foreground" | "background"): string {
  const driver = [
    "import os, pty, sys, struct, fcntl, termios",
    "pid, fd = pty.fork()",
    "if pid == 0:",
    "    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))",
    "    child = os.fork()",
    "    if child == 0:",
    "        if sys.argv[1] == 'background': os.setpgid(0, 0)",
    "        os.execv(sys.argv[2], sys.argv[2:])",
    "    _, status = os.waitpid(child, 0)",
    "    os._exit(os.waitstatus_to_exitcode(status) & 255)",
    "out = b''",
    "while True:",
    "    try: chunk = os.read(fd, 65536)",
    "    except OSError: break",
    "    if not chunk: break",
    "    out += chunk",
    "os.waitpid(pid, 0)",
    "sys.stdout.buffer.write(out)",
  ].join("\n");
  return execFileSync("python3", ["-c", driver, job, process.execPath, BIN, ...args], { cwd, encoding: "latin1", env: { ...process.env, CI: "", NO_COLOR: "1" }, timeout: 30_000 });
}

describe.skipIf(!hasPython())("on a terminal", () => {
  it("draws the live board as the foreground job, and plain lines as a background job, not a board over the shell's prompt", async () => {
    const ws = await workspace('tasks:\n  a: { run: "sleep 0.5; echo from-a" }\n  b: { run: "echo from-b", dependsOn: [a] }\n');
    const args = ["run", ws.file, "--log-dir", ws.logs];
    const foreground = onTerminal(args, ws.dir, "foreground");
    // The board: the cursor hidden while it is drawn, and lines erased as it is redrawn.
    expect(foreground).toContain("\x1b[?25l");
    expect(foreground).toContain("Summary: 2 succeeded");
    const background = onTerminal(args, ws.dir, "background");
    expect(background).not.toContain("\x1b[");
    expect(background).toMatch(/ok\s+a\r\n/);
    expect(background).toContain("b | from-b");
    expect(background).toContain("Summary: 2 succeeded");
  }, 60_000);

  it("says on the board's totals line that a Ctrl-C's shutdown is under way, with the time left to finish, then that the tasks are stopped", async () => {
    // It ignores SIGTERM (sleep too, inheriting that): the board is up for the kill grace after the time to finish.
    const ws = await workspace("tasks:\n  slow: { run: \"trap '' TERM; echo started; sleep 30\" }\n");
    // Ctrl-C typed on the terminal once the board shows the task's first line: the terminal sends SIGINT to taskq.
    const driver = [
      "import os, pty, sys, struct, fcntl, termios",
      "pid, fd = pty.fork()",
      "if pid == 0:",
      "    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 100, 0, 0))",
      "    os.execv(sys.argv[1], sys.argv[1:])",
      "out = b''",
      "sent = False",
      "while True:",
      "    try: chunk = os.read(fd, 65536)",
      "    except OSError: break",
      "    if not chunk: break",
      "    out += chunk",
      "    if not sent and b'started' in out and b'0/1 done' in out:",
      "        os.write(fd, b'\\x03')",
      "        sent = True",
      "_, status = os.waitpid(pid, 0)",
      "sys.stdout.buffer.write(out)",
    ].join("\n");
    const args = ["run", ws.file, "--log-dir", ws.logs, "--shutdown-timeout", "2s", "--kill-grace", "1s"];
    const output = execFileSync("python3", ["-c", driver, process.execPath, BIN, ...args], { cwd: ws.dir, encoding: "utf8", env: { ...process.env, CI: "", NO_COLOR: "1" }, timeout: 30_000 });
    expect(output).toContain("SIGINT received: no new task starts");
    expect(output).toMatch(/0\/1 done · stopping \(SIGINT\): (1\.\d|2)s left to finish/);
    expect(output).toContain("0/1 done · stopping (SIGINT): stopping the running tasks");
    expect(output).toContain("(interrupted by SIGINT)");
  }, 60_000);
});
