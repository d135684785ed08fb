import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { BIN, ROOT } from "./cli.js";

const DRIVER = path.join(ROOT, "test/helpers/pty-run.py");

export interface Size {
  cols: number;
  rows: number;
}

export interface PtyOptions {
  /** The folder it runs in, where the captured bytes are kept too. */
  cwd: string;
  size: Size;
  /**
   * Resized to `to` once `when` has matched `count` times in the output and the board is drawn below; `touch` is made then.
   * With `back`, resized again to `back.to` `back.after` seconds later.
   */
  resize?: { to: Size; when: string; count: number; touch: string; back?: { to: Size; after: number } };
  /**
   * Typed on the terminal once `when` matches the output ("\x03": Ctrl-C); with `gap`, a character
   * every `gap` seconds; with `lag`, after that many seconds of not reading the output (a slow terminal).
   */
  key?: { text: string; when: string; gap?: number; lag?: number };
  /** The terminal discards the output not yet read when a typed ^C or ^Z signals, as by default (the driver otherwise sets NOFLSH). */
  flush?: boolean;
  /** Run as a shell's background job (`taskq ... &`). */
  background?: boolean;
  /** Run as a shell's foreground job which, once stopped (Ctrl-Z as `key`), is continued with `bg`, then after this many seconds brought back with `fg` ("$ bg" and "$ fg" printed). */
  bgFg?: number;
  /** Run as a shell's foreground job which, once stopped (Ctrl-Z as `key`), gets the terminal at this size ("$ stty cols C rows R" printed), then is brought back with `fg` ("$ fg"). */
  stopFg?: Size;
  /** The command's stdin: this file instead of the terminal (as `generate | taskq run -` has a pipe). */
  stdin?: string;
  /** The terminal is closed (its window, say) once this matches the output: taskq, its session's leader, gets SIGHUP. */
  hangupWhen?: string;
  /** Sent to the command once `when` matches the output (`name` as kill names it: "USR1"). */
  signal?: { name: string; when: string };
}

/**
 * Runs `taskq ARGS` on a real pty (test/helpers/pty-run.py), with colours off unless asked and
 * neither CI nor NO_COLOR from this process: its bytes as the terminal got them, its exit code,
 * the byte offset at which the pty was resized, and whether the terminal echoes typing once it ended
 * (null when it was hung up: `hangupWhen`).
 */
export async function taskqOnPty(args: string[], options: PtyOptions, env: NodeJS.ProcessEnv = {}): Promise<{ bytes: Buffer; code: number; resizedAt: number | null; echo: boolean | null }> {
  const out = path.join(options.cwd, "pty.bin");
  const { resize, key } = options;
  const driverArgs = [
    "--out", out,
    "--size", `${options.size.cols}x${options.size.rows}`,
    ...(resize === undefined ? [] : ["--resize", `${resize.to.cols}x${resize.to.rows}`, "--when", resize.when, "--count", `${resize.count}`, "--then", String.raw`\d+/\d+ done`, "--touch", resize.touch, ...(resize.back === undefined ? [] : ["--resize-back", `${resize.back.to.cols}x${resize.back.to.rows}`, "--back-after", String(resize.back.after)])]),
    ...(key === undefined ? [] : ["--key", key.text, "--key-when", key.when, ...(key.gap === undefined ? [] : ["--key-gap", String(key.gap)]), ...(key.lag === undefined ? [] : ["--key-lag", String(key.lag)])]),
    ...(options.flush === true ? ["--flush"] : []),
    ...(options.background === true ? ["--background"] : []),
    ...(options.bgFg === undefined ? [] : ["--bg-fg", String(options.bgFg)]),
    ...(options.stopFg === undefined ? [] : ["--stop-fg", `${options.stopFg.cols}x${options.stopFg.rows}`]),
    ...(options.stdin === undefined ? [] : ["--stdin", options.stdin]),
    ...(options.hangupWhen === undefined ? [] : ["--hangup-when", options.hangupWhen]),
    ...(options.signal === undefined ? [] : ["--signal", options.signal.name, "--signal-when", options.signal.when]),
  ];
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TERM: "xterm-256color", ...env };
  for (const name of ["CI", "NO_COLOR", "FORCE_COLOR"]) if (!(name in env)) delete childEnv[name];
  const { stdout } = await promisify(execFile)("python3", [DRIVER, ...driverArgs, "--", process.execPath, BIN, ...args], { cwd: options.cwd, env: childEnv });
  const result = JSON.parse(stdout) as { code: number; resizedAt: number | null; timedOut: boolean; echo: boolean | null };
  expect(result.timedOut).toBe(false);
  if (resize !== undefined) expect(result.resizedAt).not.toBeNull();
  return { bytes: await readFile(out), code: result.code, resizedAt: result.resizedAt, echo: result.echo };
}
