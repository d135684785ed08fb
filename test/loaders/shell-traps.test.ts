import { describe, expect, it } from "vitest";
import { actionsExpressionNote, pipefailSet } from "../../src/loaders/shell-traps.js";

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
      "(set -o pipefail) 2>/dev/null && set -o pipefail; make",
      "if (set -o pipefail) 2>/dev/null; then\n  set -o pipefail\nfi",
      '[ -n "$BASH_VERSION" ] && set -o pipefail',
      "set -o | grep -q pipefail && set -o pipefail",
    ]) {
      expect(pipefailSet(run), run).toBeUndefined();
    }
  });
});

describe("actionsExpressionNote: GitHub Actions' ${{ ... }} in a run", () => {
  it("names the first outside single quotes and comments, with what to write instead", () => {
    expect(actionsExpressionNote("echo ${{ github.ref_name }}")).toMatch(/^run has \$\{\{ github\.ref_name \}\}, .*the runner sets \$GITHUB_REF_NAME for github\.ref_name/);
    expect(actionsExpressionNote("# ${{ x }}\necho \"${{ env.STAGE }}\"")).toMatch(/^run has \$\{\{ env\.STAGE \}\} \(its line 2\), .*env\.STAGE is the variable STAGE, .*: write \$STAGE$/);
    expect(actionsExpressionNote("echo ${{ matrix.node }}")).toMatch(/give the value to taskq's environment in the step that runs it/);
    expect(actionsExpressionNote("echo ${{ github.event.number }}")).toMatch(/give the value to taskq's environment/);
    expect(actionsExpressionNote("echo \\\\${{ x }}")).toMatch(/^run has \$\{\{ x \}\}/);
  });

  it("leaves alone one in single quotes, in a comment, in a run with a here-document, and ${ } of the shell's own", () => {
    for (const run of ["echo '${{ x }}'", "make # ${{ x }}", "cat <<EOF\n${{ x }}\nEOF", "echo ${HOME} ${x:-{}}", "echo \\${{ x }}", 'echo "\\${{ x }}"']) {
      expect(actionsExpressionNote(run), run).toBeUndefined();
    }
  });
});
