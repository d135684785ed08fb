import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { basename } from "node:path";
import type { BashismKind } from "./shell-traps.js";

/** What this machine's /bin/sh is asked about: `set -o pipefail` and bash's constructs (see bashismIn). */
export type ShellConstruct = BashismKind | "pipefail";

/** A command that each construct's shell runs with status 0. */
const PROBES: Record<ShellConstruct, string> = {
  pipefail: "set -o pipefail",
  "[[": "[[ 1 ]]",
  source: "source /dev/null",
  function: "function f { :; }",
  array: 'a=(1); : "${a[0]}"',
  "<<<": ": <<< x",
};

/** The constructs this machine's /bin/sh refuses; undefined until asked. */
let refused: ReadonlySet<string> | undefined;

/**
 * Whether this machine's /bin/sh, which runs every task's `run`, refuses `construct`: `set -o pipefail` (dash
 * before 0.5.13; bash, zsh, busybox's ash and newer dash take it), bash's `[[`, `source`, `function`, arrays or here-strings
 * (dash: all; bash, and busybox's ash for some, take them). Its name for a note, `/bin/sh (dash)`, or undefined.
 * Asked once for all of them, each tried in a subshell of one `/bin/sh -c`, and only for a workflow with such a
 * construct (see pipefailSet, bashismIn): a shell that cannot be run is not said to refuse any.
 */
export function shellRefusing(construct: ShellConstruct): string | undefined {
  if (refused === undefined) {
    // Required here, not imported: the loader runs no process otherwise (`validate` loads no child_process).
    const { spawnSync } = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");
    const script = Object.entries(PROBES)
      .map(([name, probe]) => `( eval '${probe}' ) >/dev/null 2>&1 || echo '${name}'`)
      .join("; ");
    const { status, stdout } = spawnSync("/bin/sh", ["-c", script], { stdio: ["ignore", "pipe", "ignore"], encoding: "utf8", timeout: 5000 });
    refused = new Set(status === 0 ? stdout.split("\n").filter((line) => line !== "") : []);
  }
  return refused.has(construct) ? shellName() : undefined;
}

/** /bin/sh's name for a note; undefined until asked. */
let named: string | undefined;

/**
 * `/bin/sh (dash)` where /bin/sh is a link to dash; `/bin/sh` where it is no link. Read once, as the shell is asked once:
 * read for each note, 10,000 tasks' notes each resolved the link again, a third of what validating the file took.
 */
function shellName(): string {
  if (named !== undefined) return named;
  try {
    const name = basename(realpathSync("/bin/sh"));
    named = name === "sh" ? "/bin/sh" : `/bin/sh (${name})`;
  } catch {
    named = "/bin/sh";
  }
  return named;
}
