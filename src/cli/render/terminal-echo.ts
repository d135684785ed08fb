import { spawnSync } from "node:child_process";
import { ENDING_SIGNALS } from "../ending-signals.js";
import { inBackground } from "./foreground.js";

/** stty answers in a few ms; one stopped or stuck (a terminal gone) must not hold the run. */
const STTY_TIMEOUT_MS = 2000;


/**
 * The terminal's echo of what the user types, off while the live board is up. A key pressed
 * during a run (Enter, most often: "is it still going?") is echoed where the cursor is, below
 * the board; an Enter moves the cursor down a row, and the next redraw, which clears the rows
 * above the cursor, then misses the board's top row and leaves it behind, once per Enter.
 * Echo off is all the board needs: Ctrl-C and Ctrl-Z still signal (unlike raw mode), and what
 * is typed stays in the terminal's buffer for the shell after taskq ends (type-ahead), which
 * shows it as it reads it.
 *
 * `noflsh` too: a typed Ctrl-C or Ctrl-Z otherwise makes the terminal discard the output it
 * has not drawn yet, and what it drops may be task lines or a redraw's clearing of the board's
 * rows (a board line then stays behind); the stop that follows a Ctrl-C is reported on the
 * board, so the output needs no flushing to feel prompt.
 *
 * Node has no call for one termios flag (setRawMode switches signals off too), so `stty` does
 * it, on the terminal the board is drawn on, stderr (stdin may be a pipe: `generate | taskq run
 * -`, where echo stayed on): the terminal's settings are saved first (`stty -g`) and given back
 * when the board goes away for Ctrl-Z. At exit Node itself restores the settings its terminal had when
 * it started, however it ends (an error, SIGTERM), but for a signal whose default action ends
 * it: Ctrl-\ (SIGQUIT), or another such signal (`kill -USR2`, SIGALRM: ENDING_SIGNALS), is given them back here, then ends taskq as it would have; an
 * interactive shell does after a SIGKILL. Nothing is done where stderr is not a terminal, or in
 * a background job, where stty would be stopped (SIGTTOU) instead of changing anything.
 */
export class TerminalEcho {
  /** The settings before echo went off (`stty -g`); undefined while echo is as it was. */
  #saved: string | undefined;

  /** Turns echo off (and output flushing at Ctrl-C), if stderr is a terminal in the foreground. */
  off(): void {
    if (this.#saved !== undefined || process.stderr.isTTY !== true || inBackground()) return;
    // stty works on its stdin: stderr's descriptor there (a terminal's settings can be read and set through one open for writing).
    const result = spawnSync("sh", ["-c", 'saved=$(stty -g) && stty -echo noflsh && printf "%s" "$saved"'], {
      stdio: [2, "pipe", "ignore"],
      encoding: "utf8",
      timeout: STTY_TIMEOUT_MS,
      killSignal: "SIGKILL",
    });
    const saved = result.status === 0 ? result.stdout.trim() : "";
    // A settings string is letters, digits and colons: anything else is not stty's answer.
    if (!/^[\w:]+$/.test(saved)) return;
    this.#saved = saved;
    for (const signal of ENDING_SIGNALS) process.on(signal, this.#quit);
  }

  /** Gives the terminal its settings from before off(), if echo is off. */
  restore(): void {
    const saved = this.#saved;
    if (saved === undefined) return;
    this.#saved = undefined;
    for (const signal of ENDING_SIGNALS) process.off(signal, this.#quit);
    if (process.stderr.isTTY !== true || inBackground()) return;
    spawnSync("stty", [saved], { stdio: [2, "ignore", "ignore"], timeout: STTY_TIMEOUT_MS, killSignal: "SIGKILL" });
  }

  /**
   * Ctrl-\ (or another of ENDING_SIGNALS) while echo is off: the settings back, then the signal
   * again, which ends taskq by its default action (the guard stops the tasks), or by the listener
   * the cursor's restore keeps on it (ora's, through signal-exit), which ends it the same way once
   * it is the only one.
   */
  readonly #quit = (signal: NodeJS.Signals): void => {
    this.restore();
    process.kill(process.pid, signal);
  };
}
