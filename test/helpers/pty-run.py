"""Runs a command on a real pty, as a terminal would, and keeps every byte it writes there.

  python3 pty-run.py --out FILE --size COLSxROWS [--resize COLSxROWS --when REGEX --count N --then REGEX --touch FILE [--resize-back COLSxROWS --back-after SECONDS]]
                    [--key TEXT --key-when REGEX [--key-gap SECONDS] [--key-lag SECONDS]] [--flush]
                    [--background | --bg-fg SECONDS | --stop-fg COLSxROWS] [--stdin FILE] [--hangup-when REGEX]
                    [--signal NAME --signal-when REGEX] -- CMD...

The command leads its own session with the pty as its terminal. With --resize: once REGEX has
matched N times in the output, and --then matched after the last of those (the board drawn
below them), the pty gets the new size (the kernel sends SIGWINCH to the foreground group), and
FILE is made (tasks may wait for it: the resize then lands while they run); with --resize-back, it
gets that size SECONDS later (`stty cols 0 rows 0`, then a size again). The bytes go to --out; a JSON line on stdout tells the exit
code, the byte offset at which the pty was resized (a replay resizes its screen there), and
whether the terminal echoes what is typed once the command has ended.
With --key: once REGEX matches the output, TEXT is typed on the terminal (Ctrl-C: its line
discipline sends SIGINT to the foreground group); with --key-gap, one character at a time, that
many seconds apart; with --key-lag, after that many seconds of not reading the output (a slow
terminal). The pty has NOFLSH set, so a typed ^C or ^Z discards none of the output not read yet;
--flush keeps the terminal's default, which discards it. With --background: the command runs as a
shell's background job (`cmd &`), in a process group of its own that is not the terminal's
foreground group. With --bg-fg: the command runs as a shell's foreground job; once it stops
(Ctrl-Z, typed with --key), the shell takes the terminal back, prints "$ bg", continues the job in
the background (SIGCONT), and after SECONDS prints "$ fg" and gives the job the terminal again
(as a shell's `fg` of a running job does: no signal). With --stop-fg: the same job, but once it
stops, the shell prints "$ stty cols C rows R", gives the terminal that size (a window resized
meanwhile: the job, stopped, gets no SIGWINCH), prints "$ fg", gives the job the terminal again
and continues it (SIGCONT). With --stdin: the command's stdin is FILE,
not the terminal (`generate | cmd -`), its stdout and stderr still the terminal. With
--hangup-when: once REGEX matches the output, the terminal is closed (its window, say): the
kernel sends SIGHUP to the command, its session's leader, and the JSON tells how it then ended
(echo is null: there is no terminal left to ask). With --signal: once REGEX matches the output,
the command gets that signal (`kill -USR1 PID`).
"""

import argparse
import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

parser = argparse.ArgumentParser()
parser.add_argument("--out", required=True)
parser.add_argument("--size", required=True)
parser.add_argument("--resize")
parser.add_argument("--when")
parser.add_argument("--count", type=int, default=1)
parser.add_argument("--then")
parser.add_argument("--touch")
parser.add_argument("--resize-back")
parser.add_argument("--back-after", type=float, default=1)
parser.add_argument("--key")
parser.add_argument("--key-when")
parser.add_argument("--key-gap", type=float, default=0)
parser.add_argument("--key-lag", type=float, default=0)
parser.add_argument("--flush", action="store_true")
parser.add_argument("--background", action="store_true")
parser.add_argument("--bg-fg", type=float)
parser.add_argument("--stop-fg")
parser.add_argument("--stdin")
parser.add_argument("--hangup-when")
parser.add_argument("--signal")
parser.add_argument("--signal-when")
parser.add_argument("--timeout", type=float, default=60)
parser.add_argument("cmd", nargs=argparse.REMAINDER)
args = parser.parse_args()
cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd


def size(text):
    cols, rows = text.split("x")
    return int(cols), int(rows)


master, slave = os.openpty()


def set_size(cols, rows):
    # On the master, as a terminal does: the kernel sends SIGWINCH to the foreground group.
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


set_size(*size(args.size))
# NOFLSH: the line discipline would otherwise discard the output not yet read here when a typed
# ^C or ^Z makes it send a signal (as a terminal does with what it has not drawn yet). A driver
# slowed by a loaded machine has unread output then: the replay would miss bytes taskq wrote.
# With --flush the terminal keeps its default, and --key-lag stops reading for that many seconds
# before the key is typed: a slow terminal, for what the command does about it.
if not args.flush:
    attributes = termios.tcgetattr(slave)
    attributes[3] |= termios.NOFLSH
    termios.tcsetattr(slave, termios.TCSANOW, attributes)


def session():
    os.setsid()
    fcntl.ioctl(1, termios.TIOCSCTTY, 0)  # stdout: stdin may be a file (--stdin)


# A background job: the session's leader (the shell) forks the command into a group of its own, and waits.
BACKGROUND = """import os, sys
child = os.fork()
if child == 0:
    os.setpgid(0, 0)
    os.execv(sys.argv[1], sys.argv[1:])
_, status = os.waitpid(child, 0)
sys.exit(os.waitstatus_to_exitcode(status) & 255)
"""
# A foreground job stopped, put in the background, then in the foreground again (see --bg-fg);
# or, stopped, brought back to the foreground at once with the terminal resized meanwhile (--stop-fg).
BG_FG = """import fcntl, os, signal, struct, sys, termios, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # a shell's: it sets the terminal's foreground group from any group
child = os.fork()
if child == 0:
    os.setpgid(0, 0)
    os.tcsetpgrp(0, os.getpid())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    os.execv(sys.argv[3], sys.argv[3:])
try:
    os.setpgid(child, child)
except PermissionError:  # EACCES: the child has exec'd already, its own setpgid done before
    pass
os.tcsetpgrp(0, child)
_, status = os.waitpid(child, os.WUNTRACED)
if os.WIFSTOPPED(status) and sys.argv[1] == "stop-fg":
    os.tcsetpgrp(0, os.getpgrp())
    cols, rows = sys.argv[2].split("x")
    os.write(1, f"\\r\\n$ stty cols {cols} rows {rows}\\r\\n".encode())
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", int(rows), int(cols), 0, 0))
    os.write(1, b"$ fg\\r\\n")
    os.tcsetpgrp(0, child)
    os.killpg(child, signal.SIGCONT)
    _, status = os.waitpid(child, 0)
elif os.WIFSTOPPED(status):
    os.tcsetpgrp(0, os.getpgrp())
    os.write(1, b"\\r\\n$ bg\\r\\n")
    os.killpg(child, signal.SIGCONT)
    time.sleep(float(sys.argv[2]))
    os.write(1, b"$ fg\\r\\n")
    os.tcsetpgrp(0, child)
    _, status = os.waitpid(child, 0)
sys.exit(os.waitstatus_to_exitcode(status) & 255)
"""
if args.background:
    cmd = [sys.executable, "-c", BACKGROUND, *cmd]
elif args.bg_fg is not None:
    cmd = [sys.executable, "-c", BG_FG, "bg-fg", str(args.bg_fg), *cmd]
elif args.stop_fg is not None:
    cmd = [sys.executable, "-c", BG_FG, "stop-fg", args.stop_fg, *cmd]
stdin = open(args.stdin, "rb") if args.stdin else slave
child = subprocess.Popen(cmd, stdin=stdin, stdout=slave, stderr=slave, preexec_fn=session)
os.close(slave)
captured = bytearray()
resized_at = None
resized_back = False
deadline = time.monotonic() + args.timeout


def read(wait):
    """Reads what is there within `wait` seconds; False once the pty is closed (all its writers gone)."""
    ready, _, _ = select.select([master], [], [], wait)
    if not ready:
        return True
    try:
        data = os.read(master, 65536)
    except OSError:  # EIO: the last writer closed it
        return False
    captured.extend(data)
    return len(data) > 0


def due():
    text = captured.decode("utf-8", "replace")
    matches = list(re.finditer(args.when, text))
    return len(matches) >= args.count and re.search(args.then or "", text[matches[args.count - 1].end() :]) is not None


open_ = True
hung_up = False
key_sent = False
signal_sent = False
keys_due = []  # (when, character) still to type, with --key-gap
while open_ and time.monotonic() < deadline:
    open_ = read(0.05)
    if args.key and not key_sent and re.search(args.key_when, captured.decode("utf-8", "replace")):
        key_sent = True
        time.sleep(args.key_lag)
        if args.key_gap > 0:
            keys_due = [(time.monotonic() + i * args.key_gap, c) for i, c in enumerate(args.key)]
        else:
            os.write(master, args.key.encode())
    while keys_due and keys_due[0][0] <= time.monotonic():
        os.write(master, keys_due.pop(0)[1].encode())
    if args.resize and resized_at is None and due():
        # What came so far is on the screen before the resize, and the frame being drawn ends first:
        # the tty layer hands one write of taskq's over in pieces, and a resize between two of them
        # lands mid-frame, where no program can know what the terminal rewrapped (a replay then
        # kept half a frame: CI saw it once). Frames come every 100 ms, so a quiet 40 ms is between two.
        quiet_from = time.monotonic()
        while time.monotonic() - quiet_from < 0.04:
            before = len(captured)
            if not read(0.01):
                break
            if len(captured) > before:
                quiet_from = time.monotonic()
        resized_at = len(captured)
        resized_at_time = time.monotonic()
        set_size(*size(args.resize))
        if args.touch:
            open(args.touch, "w").close()
    if args.resize_back and resized_at is not None and not resized_back and time.monotonic() - resized_at_time >= args.back_after:
        resized_back = True
        set_size(*size(args.resize_back))
    if args.signal and not signal_sent and re.search(args.signal_when, captured.decode("utf-8", "replace")):
        signal_sent = True
        os.kill(child.pid, getattr(signal, "SIG" + args.signal))
    if args.hangup_when and re.search(args.hangup_when, captured.decode("utf-8", "replace")):
        os.close(master)
        hung_up = True
        break
timed_out = open_ and not hung_up
if hung_up:
    try:
        child.wait(max(0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
if timed_out:
    os.killpg(child.pid, signal.SIGKILL)
code = child.wait()
echo = None if hung_up else (termios.tcgetattr(master)[3] & termios.ECHO) != 0
with open(args.out, "wb") as out:
    out.write(captured)
json.dump({"code": code, "resizedAt": resized_at, "timedOut": timed_out, "echo": echo}, sys.stdout)
sys.exit(0)
