import { describe, expect, it } from "vitest";
import { pipefailSet } from "../../src/loaders/shell-traps.js";

describe("pipefailSet: a `set` that turns pipefail on, as sh runs it", () => {
  it("finds it first on a line, after ; && || { then do else, with other options before it", () => {
    expect(pipefailSet("set -euo pipefail\nmake")).toEqual({ text: "set -euo pipefail", line: 1 });
    expect(pipefailSet("echo a\n  set -o pipefail")).toEqual({ text: "set -o pipefail", line: 2 });
    expect(pipefailSet("cd x && set -e -o pipefail; make")).toEqual({ text: "set -e -o pipefail", line: 1 });
    expect(pipefailSet("set -o errexit -o pipefail")).toEqual({ text: "set -o errexit -o pipefail", line: 1 });
    expect(pipefailSet("if true; then set -eo pipefail; fi")).toEqual({ text: "set -eo pipefail", line: 1 });
    expect(pipefailSet("false || set -o pipefail")).toEqual({ text: "set -o pipefail", line: 1 });
  });

  it("leaves alone another shell's (bash -c '...', a here-document), a comment, a subshell that tries it, and pipefail turned off or named otherwise", () => {
    for (const run of [
      "bash -c 'set -euo pipefail; make'",
      "bash -c '\nset -euo pipefail\nmake'",
      "bash <<'EOF'\nset -o pipefail\nEOF",
      "# set -o pipefail\nmake",
      "make # then set -o pipefail",
      "(set -o pipefail) 2>/dev/null && echo yes",
      "command set -o pipefail 2>/dev/null || true",
      "set +o pipefail",
      "echo set -o pipefail",
      "echo 'a; set -o pipefail'",
      "grep pipefail notes.txt",
    ]) {
      expect(pipefailSet(run), run).toBeUndefined();
    }
  });
});
