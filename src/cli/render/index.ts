import { inBackground } from "./foreground.js";
import type { Renderer } from "./types.js";
import { underGitHubActions } from "./workflow-commands.js";

export type OutputMode = "auto" | "tty" | "plain" | "json";

/**
 * Picks the renderer: a live board on a terminal, plain lines when not a
 * terminal or under CI, NDJSON on request. Loads only the one it needs.
 */
export async function createRenderer(mode: OutputMode, options: { color: boolean }): Promise<Renderer> {
  const isTTY = process.stderr.isTTY === true && process.stdout.isTTY === true;
  const ci = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";
  // A terminal with no size (a pty nobody sized: `docker run -t`, `script`) reports 0 columns;
  // the spinner divides by the width, so a board there would redraw forever. Plain lines instead.
  const sizeless = process.stderr.isTTY === true && !(process.stderr.columns > 0);
  // TERM=dumb: a terminal (an editor's shell buffer) that cannot move the cursor.
  const dumb = process.env.TERM === "dumb";
  // Started in the background (`taskq run x &`), a board would be drawn over the shell's prompt and
  // what the user types: plain lines instead, as any background job prints.
  let resolved = mode === "auto" ? (isTTY && !ci && !sizeless && !dumb && !inBackground() ? "tty" : "plain") : mode;
  if (resolved === "tty" && sizeless) {
    process.stderr.write("note: the terminal reports no width (0 columns); printing plain lines instead of the live board\n");
    resolved = "plain";
  } else if (resolved === "tty" && process.stderr.isTTY !== true) {
    // The board is drawn on stderr: into a file or a pipe its frames pile up, ten a second, never erased.
    process.stderr.write("note: --output tty: stderr is not a terminal, and the live board is drawn there; printing plain lines instead\n");
    resolved = "plain";
  }
  if (resolved === "json") {
    const { JsonRenderer } = await import("./json.js");
    // Under GitHub Actions, its runner masks secrets in these records' lines too: a task's line goes whole, and
    // its `::add-mask::` goes to stderr as well, where the runner reads it as a command (see maskCommands).
    return new JsonRenderer(process.stdout, underGitHubActions(), process.stderr);
  }
  const { coloursRefused, createColors } = await import("./colors.js");
  // A dumb terminal (an editor's shell buffer) may not read colour codes either: colours there only when forced.
  // Each where it writes: the board on stderr, its summary on stdout, both terminals; plain lines on stdout
  // alone (`taskq run x 2>log` at a terminal still gets them in colour).
  const colors = await createColors({ color: options.color, isTTY: (resolved === "tty" ? isTTY : process.stdout.isTTY === true) && !dumb });
  if (resolved === "tty") {
    const [{ default: ora }, { TtyRenderer }] = await Promise.all([import("ora"), import("./tty.js")]);
    // ora's own timer off (the longest a timer waits, 24.8 days): it redrew the whole board every
    // 80 ms on top of the board's own 100 ms timer, which draws it and turns the spinner (see TtyRenderer).
    const spinner = ora({ stream: process.stderr, isEnabled: true, discardStdin: false, hideCursor: true, interval: 2 ** 31 - 1 });
    return new TtyRenderer(spinner, process.stderr, colors);
  }
  const { PlainRenderer } = await import("./plain.js");
  // Under GitHub Actions, its runner reads a task's workflow commands (`::error ...::`) from these lines.
  return new PlainRenderer(process.stdout, colors, process.stdout.isTTY === true, !coloursRefused(options.color), underGitHubActions());
}
