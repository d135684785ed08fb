import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { basename } from "node:path";
import type { BashismKind } from "./shell-traps.js";

/** This machine's /bin/sh where it refuses `set -o pipefail` (its name: `/bin/sh (dash)`), null where it takes it; undefined until asked. */
let refusing: string | null | undefined;

/**
 * Whether this machine's /bin/sh, which runs every task's `run`, refuses `set -o pipefail`, as
 * dash before 0.5.13 does (bash, zsh, busybox's ash and newer dash take it): its name for a note,
 * `/bin/sh (dash)`, or undefined. Asked once, by running it, and only for a workflow with such a
 * `set` (see pipefailSet): a shell that cannot be run is not said to refuse it.
 */
export function shellRefusingPipefail(): string | undefined {
  if (refusing === undefined) {
    // Required here, not imported: the loader runs no process otherwise (`validate` loads no child_process).
    const { spawnSync } = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");
    const { status } = spawnSync("/bin/sh", ["-c", "set -o pipefail"], { stdio: "ignore", timeout: 5000 });
    refusing = status !== null && status !== 0 ? shellName() : null;
  }
  return refusing ?? undefined;
}

/** The bash-only constructs this machine's /bin/sh refuses (see bashismIn); undefined until asked. */
let refusedBashisms: ReadonlySet<string> | undefined;

/**
 * Which of bash's `[[`, `source`, `function` and arrays this machine's /bin/sh refuses (dash: all; bash, and
 * busybox's ash for some, take them), each tried in a subshell of one `/bin/sh -c`: its name for a note when it
 * refuses `kind`, else undefined. Asked once, and only for a workflow with such a construct (see bashismIn): a
 * shell that cannot be run is not said to refuse any.
 */
export function shellRefusingBashism(kind: BashismKind): string | undefined {
  if (refusedBashisms === undefined) {
    const { spawnSync } = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");
    const script = Object.entries(BASHISM_PROBES)
      .map(([name, probe]) => `( eval '${probe}' ) >/dev/null 2>&1 || echo '${name}'`)
      .join("; ");
    const { status, stdout } = spawnSync("/bin/sh", ["-c", script], { stdio: ["ignore", "pipe", "ignore"], encoding: "utf8", timeout: 5000 });
    refusedBashisms = new Set(status === 0 ? stdout.split("\n").filter((line) => line !== "") : []);
  }
  return refusedBashisms.has(kind) ? shellName() : undefined;
}

/** A command that each construct's shell runs with status 0. */
const BASHISM_PROBES: Record<BashismKind, string> = {
  "[[": "[[ 1 ]]",
  source: "source /dev/null",
  function: "function f { :; }",
  array: 'a=(1); : "${a[0]}"',
};

/** `/bin/sh (dash)` where /bin/sh is a link to dash; `/bin/sh` where it is no link. */
function shellName(): string {
  try {
    const name = basename(realpathSync("/bin/sh"));
    return name === "sh" ? "/bin/sh" : `/bin/sh (${name})`;
  } catch {
    return "/bin/sh";
  }
}
