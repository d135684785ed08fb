import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { basename } from "node:path";

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

/** `/bin/sh (dash)` where /bin/sh is a link to dash; `/bin/sh` where it is no link. */
function shellName(): string {
  try {
    const name = basename(realpathSync("/bin/sh"));
    return name === "sh" ? "/bin/sh" : `/bin/sh (${name})`;
  } catch {
    return "/bin/sh";
  }
}
