import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { actionsExpressionNote, bashismIn, bashismNote, pipefailNote, pipefailSet, unclosedQuoteNote } from "../../src/loaders/shell-traps.js";
import { BIN } from "../helpers/cli.js";
import { bestOfAlternating } from "../helpers/timing.js";

/** Whether this machine's /bin/sh refuses `command` (dash: bash's constructs). */
function shRefuses(command: string): boolean {
  return spawnSync("/bin/sh", ["-c", command], { stdio: "ignore" }).status !== 0;
}

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

  it("leaves alone one that is an argument: after a then, do, else or { that is a word's, or an operator escaped by a backslash", () => {
    // sh prints each of these (`then set -o pipefail`), or runs a command named `${x}then` (127): it never runs the set.
    for (const run of ["echo then set -o pipefail", "echo do set -euo pipefail", "${x}else set -o pipefail", "echo a{ set -o pipefail", "echo a\\; set -o pipefail", "echo a \\\nset -o pipefail"]) {
      expect(pipefailSet(run), run).toBeUndefined();
    }
    expect(pipefailSet("a && { set -o pipefail; b | c; }")).toEqual({ text: "set -o pipefail", line: 1 });
    expect(pipefailSet("for a in b; do set -euo pipefail; done")).toEqual({ text: "set -euo pipefail", line: 1 });
    expect(pipefailSet("if a\nthen set -o pipefail\nfi")).toEqual({ text: "set -o pipefail", line: 2 });
  });
});

describe("pipefailSet in a command substitution, whose shell alone refuses it", () => {
  it("finds one in $(...) or backquotes, in double quotes too, with a pipeline after it there", () => {
    expect(pipefailSet("v=$(set -o pipefail; curl -s x | jq .)")).toEqual({ text: "set -o pipefail", line: 1, substitution: true });
    expect(pipefailSet('echo a\necho "$(cd app && set -euo pipefail\n  git log | head -1)"')).toEqual({ text: "set -euo pipefail", line: 2, substitution: true });
    expect(pipefailSet("v=`cd x; set -o pipefail; ls | wc -l`")).toEqual({ text: "set -o pipefail", line: 1, substitution: true });
    // Outside one, as before.
    expect(pipefailSet("v=$(a | b); set -o pipefail")).toEqual({ text: "set -o pipefail", line: 1 });
  });

  it("leaves alone one with no pipeline after it there (a test of whether sh takes it), and one quoted or in a comment", () => {
    for (const run of [
      "v=$(set -o pipefail && echo yes)",
      "v=$(cd x; set -o pipefail; make)",
      '[ "$(set -o pipefail 2>&1; echo ok)" = ok ] && set -o pipefail; a | b',
      "v=$(set -o pipefail; make) | tee log",
      "echo '$(set -o pipefail; a | b)'",
      'v=$(echo "set -o pipefail; a | b")',
      "v=$(make # set -o pipefail; a | b\n)",
      "v=$((set))",
    ]) {
      expect(pipefailSet(run), run).toBeUndefined();
    }
  });

  it("reads a substitution of many sets with no pipeline in about ten times what a tenth of them takes", () => {
    // Each set's substitution was read to its end again, and what follows it there for a pipe: 10,000 of them took 14 s.
    for (const runOf of [(count: number) => `v=$(${"set -o pipefail; ".repeat(count)}`, (count: number) => `v=$(${"set -o pipefail; echo a || b; ".repeat(count)}) | x`]) {
      const short = runOf(300);
      const long = runOf(3000);
      expect(pipefailSet(long)).toBeUndefined();
      // Side by side, best of five rounds alternating: about 10x now.
      const [longMs, shortMs] = bestOfAlternating(1, () => pipefailSet(long), () => pipefailSet(short));
      expect(longMs, long.slice(0, 40)).toBeLessThan(40 * shortMs);
    }
  });

  it("says that the command substitution exits 2 there, not the task", () => {
    expect(pipefailNote({ text: "set -o pipefail", line: 1, substitution: true }, false, "/bin/sh (dash)")).toBe(
      "run has set -o pipefail, which /bin/sh (dash) here refuses (\"Illegal option -o pipefail\"): a run is run by /bin/sh -c, not bash, so the command substitution it is in exits 2 there and runs nothing after it (its pipelines never run); drop pipefail, or run the commands with bash (bash -c '...', or a script file that begins with #!/bin/bash)",
    );
    expect(pipefailNote({ text: "set -o pipefail", line: 2 }, true, "/bin/sh (dash)")).toMatch(/^run has set -o pipefail \(its line 2\), .*so the task exits 2 at that line and runs nothing after it;/);
  });
});

describe("actionsExpressionNote: GitHub Actions' ${{ ... }} in a run", () => {
  it("names the first outside single quotes and comments, with what to write instead", () => {
    expect(actionsExpressionNote("echo ${{ github.ref_name }}")).toMatch(/^run has \$\{\{ github\.ref_name \}\}, .*the runner sets \$GITHUB_REF_NAME for github\.ref_name/);
    // A field of the github context with no variable of its name: the step's env: advice, not a $GITHUB_ that is not there.
    for (const field of ["action_status", "token", "event", "event.pull_request"]) {
      const note = actionsExpressionNote(`echo \${{ github.${field} }}`);
      expect(note).not.toMatch(/GITHUB_/);
      expect(note).toMatch(/give the value to taskq's environment in the step that runs it/);
    }
    expect(actionsExpressionNote("# ${{ x }}\necho \"${{ env.STAGE }}\"")).toMatch(/^run has \$\{\{ env\.STAGE \}\} \(its line 2\), .*env\.STAGE is the variable STAGE, .*: write \$STAGE$/);
    expect(actionsExpressionNote("echo ${{ matrix.node }}")).toMatch(/give the value to taskq's environment in the step that runs it/);
    expect(actionsExpressionNote("echo ${{ github.event.number }}")).toMatch(/give the value to taskq's environment/);
    expect(actionsExpressionNote("echo \\\\${{ x }}")).toMatch(/^run has \$\{\{ x \}\}/);
    // In a backquoted command, whose quoting is read afresh: sh expands it there too.
    expect(actionsExpressionNote('v=`echo "${{ github.sha }}"`')).toMatch(/^run has \$\{\{ github\.sha \}\}, .*\$GITHUB_SHA/);
  });

  it("leaves alone one in single quotes, in a comment, in a run with a here-document, and ${ } of the shell's own", () => {
    for (const run of ["echo '${{ x }}'", "make # ${{ x }}", "cat <<'EOF'\n${{ x }}\nEOF", "cat <<EOF\n\\${{ x }}\nEOF", "echo ${HOME} ${x:-{}}", "echo \\${{ x }}", 'echo "\\${{ x }}"', "v=`echo '${{ x }}'`", "echo `date` '${{ x }}'"]) {
      expect(actionsExpressionNote(run), run).toBeUndefined();
    }
  });
});

// Each of these skipped a run with a `<<` anywhere, its lines outside a here-document's body unread: sh fails at the last line, unsaid.
describe("pipefailSet, actionsExpressionNote and unclosedQuoteNote in a run with a here-document: its lines outside the bodies read, none of a body", () => {
  /** sh's exit status, stdout and stderr for `run`, with nothing on its standard input. */
  const shRun = (run: string) => spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", input: "" });
  /** Whether this machine's /bin/sh says `words` of a one-line run that fails as dash does (`1: Bad substitution`): its line is then checked too. */
  const shSays = (run: string, words: string) => shRun(run).stderr.includes(`1: ${words}`);
  /**
   * Runs with the construct's text in here-documents' bodies (a quoted delimiter's, not expanded; a `<<-` one's; two on one line;
   * one in a `$(...)`, its body holding a `)`), and the construct itself at the last line.
   */
  const runsWith = (last: string, body: string) => [
    `cat <<'EOF'\n${body}\nEOF\n${last}`,
    `cat <<-EOF >/dev/null\n\t${body}\n\tEOF\n${last}`,
    `cat <<A <<'B' >/dev/null\n${body}\nA\n${body}\nB\n${last}`,
    `x=$(cat <<'EOF'\n${body}\n)\nEOF\n)\n${last}`,
  ];

  it("pipefailSet: finds a set after a here-document, where sh refuses it, and none in a body, nor a guard there (text, guarding nothing)", () => {
    for (const run of [...runsWith("set -euo pipefail", "set -o pipefail"), "cat <<EOF >/dev/null\n(set -o pipefail) 2>/dev/null && echo yes\nEOF\nset -euo pipefail"]) {
      const lines = run.split("\n").length;
      expect(pipefailSet(run), run).toEqual({ text: "set -euo pipefail", line: lines });
      if (shSays("set -o pipefail", "set: Illegal option -o pipefail")) expect(shRun(run), run).toMatchObject({ status: 2, stderr: expect.stringContaining(`${lines}: set: Illegal option -o pipefail`) as unknown });
    }
    for (const run of ["bash <<'EOF'\nset -o pipefail\nEOF", "cat <<EOF >/dev/null\nset -euo pipefail\nEOF\necho ok", "cat <<-EOF >/dev/null\n\tset -o pipefail\n\tEOF"]) {
      expect(pipefailSet(run), run).toBeUndefined();
    }
    expect(shRun("cat <<EOF >/dev/null\nset -euo pipefail\nEOF\necho ok")).toMatchObject({ status: 0, stdout: "ok\n" });
  });

  it("actionsExpressionNote: finds ${{ }} after a here-document, where sh fails (a bad substitution), and none in a body", () => {
    // Escaped, as text in an unquoted delimiter's body too (where sh expands a `${{ x }}`: see below).
    for (const run of runsWith("echo ${{ github.sha }}", "\\${{ x }}")) {
      const lines = run.split("\n").length;
      expect(actionsExpressionNote(run), run).toMatch(new RegExp(`^run has \\$\\{\\{ github\\.sha \\}\\} \\(its line ${lines}\\), .*\\$GITHUB_SHA`));
      if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(run), run).toMatchObject({ status: 2, stderr: expect.stringContaining(`${lines}: Bad substitution`) as unknown });
    }
    for (const run of ["cat <<'EOF'\n${{ x }}\nEOF", "cat <<'EOF'\n${{ github.sha }}\nEOF\necho ok"]) {
      expect(actionsExpressionNote(run), run).toBeUndefined();
    }
    expect(shRun("cat <<'EOF'\n${{ github.sha }}\nEOF\necho ok")).toMatchObject({ status: 0, stdout: "${{ github.sha }}\nok\n" });
  });

  it("unclosedQuoteNote: finds a quote left open after a here-document, which sh refuses, and none in a body, nor a case there", () => {
    for (const run of [...runsWith('echo "done', "it's"), "cat <<'EOF'\ncase x in x) it's\nEOF\necho \"done"]) {
      const lines = run.split("\n").length;
      expect(unclosedQuoteNote(run), run).toBe(
        `run leaves a " open, at "done (its line ${lines}): the shell runs the commands complete before its line, then refuses the rest (a syntax error: unterminated quoted string); close it, or write a " meant as text as \\" (or inside '...')`,
      );
      if (shSays('echo "a', "Syntax error: Unterminated quoted string")) {
        expect(shRun(run), run).toMatchObject({ status: 2, stderr: expect.stringContaining(`${lines}: Syntax error: Unterminated quoted string`) as unknown });
      }
    }
    for (const run of ["cat <<EOF\nit's\nEOF", "cat <<'EOF'\ndon't \"x\nEOF\necho ok", "cat <<EOF; echo \"a\nb\"\nit's\nEOF\necho ok"]) {
      expect(unclosedQuoteNote(run), run).toBeUndefined();
      expect(shRun(run).status, run).toBe(0);
    }
  });

  // sh expands an unquoted delimiter's body (`<<EOF`) as it reads it: each of these failed under dash, and no note said so.
  it("actionsExpressionNote and bashismIn: find a bad substitution in a body whose delimiter is unquoted, which fails the command it is for", () => {
    const run = "echo before\ncat <<EOF >notes.txt\nsha: ${{ github.sha }}\nEOF\necho after";
    expect(actionsExpressionNote(run)).toBe(
      "run has ${{ github.sha }} (its line 3), GitHub Actions' expression syntax, which taskq does not replace: /bin/sh refuses it as a bad substitution, and the command whose here-document it is in fails (exit 2) without running; the task goes on (under set -e, it ends there); the runner sets $GITHUB_SHA for github.sha, in taskq's environment and so in every task's: write that; or, to write it as text, quote the here-document's delimiter (<<'EOF') or escape it (\\${, \\$(, a \\ before a backquote)",
    );
    expect(actionsExpressionNote("cat <<-EOF\n\tv=$(echo ${{ env.V }})\n\tEOF")).toMatch(/^run has \$\{\{ env\.V \}\} \(its line 2\), .*and the command substitution it is in exits 2 there \(its output empty\); .*write \$V; or, to write it as text, /);
    expect(bashismIn("cat <<EOF\n${list[0]}\nEOF")).toEqual({ kind: "array", text: "${list[0]}", line: 2, hereDocument: true });
    expect(bashismNote({ kind: "array", text: "${list[0]}", line: 2, hereDocument: true }, true, "/bin/sh (dash)")).toMatch(
      /^run has \$\{list\[0\]\} \(its line 2\), an array, .*so the command whose here-document it is in fails \(exit 2\) without running; the task goes on \(under set -e, it ends there\); to write it as text, quote the here-document's delimiter \(<<'EOF'\)/,
    );
    // A quoted delimiter's body, or a `$` escaped, is text.
    for (const text of ["cat <<'EOF'\n${{ github.sha }} ${list[0]}\nEOF", 'cat <<"EOF"\n${{ github.sha }} ${list[0]}\nEOF', "cat <<E\\OF\n${{ github.sha }} ${list[0]}\nEOF", "cat <<EOF\n\\${{ github.sha }} \\${list[0]}\nEOF"]) {
      expect(actionsExpressionNote(text), text).toBeUndefined();
      expect(bashismIn(text), text).toBeUndefined();
      expect(shRun(text).status, text).toBe(0);
    }
    if (shSays("echo ${{ x }}", "Bad substitution")) {
      const ran = shRun(run.replace(">notes.txt", ""));
      expect(ran).toMatchObject({ status: 0, stdout: "before\nafter\n" });
      expect(ran.stderr).toContain("Bad substitution");
      expect(shRun(`set -e; ${run.replace(">notes.txt", "")}`)).toMatchObject({ status: 2, stdout: "before\n" });
      expect(shRun("cat <<-EOF\n\tv=$(echo ${{ env.V }})\n\tEOF")).toMatchObject({ status: 0, stdout: "v=\n" });
    }
  });

  it("unclosedQuoteNote: finds a quote left open in a $(...) of a body whose delimiter is unquoted, which sh parses, and none elsewhere in a body", () => {
    const run = "echo start\ncat <<EOF\nmsg: $(git log -1 --format=\"%s)\nEOF\necho after";
    expect(unclosedQuoteNote(run)).toBe(
      `run leaves a " open, at "%s) (its line 3): sh refuses the run from the command whose here-document it is in on (a syntax error: unterminated quoted string), running none of it; close it, or to write it as text, quote the here-document's delimiter (<<'EOF') or escape it (\\\${, \\$(, a \\ before a backquote)`,
    );
    expect(unclosedQuoteNote("cat <<EOF\nv=$(echo it's)\nEOF")).toMatch(/^run leaves a ' open, at 's\) \(its line 2\): /);
    if (shSays('echo "a', "Syntax error: Unterminated quoted string")) {
      expect(shRun(run)).toMatchObject({ status: 2, stdout: "start\n", stderr: expect.stringContaining("Syntax error: Unterminated quoted string") as unknown });
    }
    // Its text's quotes, a quoted delimiter's body, a `$(...)` escaped, closed, or with its quotes closed.
    for (const text of [
      "cat <<EOF\nit's \"$(echo a)\" ${x:-\"it's\"} `echo b`\nEOF\necho ok",
      "cat <<'EOF'\nv=$(echo \"it's)\nEOF\necho ok",
      "cat <<EOF\nv=\\$(echo \"it's)\nEOF\necho ok",
      "cat <<EOF\nv=$(printf '%s' \"it's\") don't\nEOF\necho ok",
      "cat <<EOF\n$(case x in x) echo y;; esac) it's\nEOF\necho ok",
      // Closed past the delimiter's line, after which sh reads the body on, to the next.
      "cat <<EOF\n$(printf '%s'\nEOF\n \"it's\") \\$(not \"run)\nEOF\necho ok",
    ]) {
      expect(unclosedQuoteNote(text), text).toBeUndefined();
      expect(shRun(text).status, text).toBe(0);
    }
  });

  it("unclosedQuoteNote: says what sh runs of a run with a quote left open: none of it, at its first line; the commands complete before its line, at a later one", () => {
    const whole = (at: string, where = "") =>
      `run leaves a " open, at ${at}${where}: the shell refuses the whole command (a syntax error: unterminated quoted string) and runs none of it; close it, or write a " meant as text as \\" (or inside '...')`;
    const before = (at: string, line: number) =>
      `run leaves a " open, at ${at} (its line ${line}): the shell runs the commands complete before its line, then refuses the rest (a syntax error: unterminated quoted string); close it, or write a " meant as text as \\" (or inside '...')`;
    // Before, a quote on a later line was told as refusing the whole command, where sh had run echo first.
    const cases: Array<[string, string, string]> = [
      ['echo a; echo "b', whole('"b'), ""],
      ['echo "a\necho b', whole('"a', " (its line 1)"), ""],
      ['echo first\necho "done', before('"done', 2), "first\n"],
      ['echo first\necho second\necho "done\necho after', before('"done', 3), "first\nsecond\n"],
      // Not complete before the quote's line: an if, a line ended by &&.
      ['if true; then\n  echo in\n  echo "done\nfi', before('"done', 3), ""],
      ['echo first &&\n  echo "done', before('"done', 2), ""],
    ];
    for (const [run, note, stdout] of cases) {
      expect(unclosedQuoteNote(run), run).toBe(note);
      if (shSays('echo "a', "Syntax error: Unterminated quoted string")) expect(shRun(run), run).toMatchObject({ status: 2, stdout });
    }
  });

  // `cat > gen.sh <<EOF` writing a script with its delimiter unquoted by mistake: "run the commands with bash" made bash expand `${arr[0]}` unsaid into the file.
  it("says to quote the delimiter or escape what sh expands in a body whose delimiter is unquoted, not to run the commands with bash", () => {
    const asText = "to write it as text, quote the here-document's delimiter (<<'EOF') or escape it (\\${, \\$(, a \\ before a backquote)";
    const array = bashismIn("cat > gen.sh <<EOF\necho ${arr[0]}\nEOF");
    expect(array).toEqual({ kind: "array", text: "${arr[0]}", line: 2, hereDocument: true });
    expect(bashismNote(array!, true, "/bin/sh (dash)")).toMatch(new RegExp(`; ${escaped(asText)}$`));
    const source = bashismIn("cat <<EOF\nv=$(source env.sh)\nEOF");
    expect(source).toEqual({ kind: "source", text: "source env.sh", line: 2, hereDocument: true });
    expect(bashismNote(source!, true, "/bin/sh (dash)")).toBe(
      `run has source env.sh (its line 2), bash's name for the . command, which /bin/sh (dash) here does not have ("source: not found"): a run is run by /bin/sh -c, not bash, so the file is never read (exit 127); ${asText}`,
    );
    const set = pipefailSet("cat <<EOF\nv=$(set -o pipefail; a | b)\nEOF");
    expect(set).toEqual({ text: "set -o pipefail", line: 2, substitution: true, hereDocument: true });
    expect(pipefailNote(set!, true, "/bin/sh (dash)")).toMatch(new RegExp(`\\(its pipelines never run\\); ${escaped(asText)}$`));
    expect(actionsExpressionNote("cat <<EOF\nsha: ${{ github.sha }}\nEOF")).toMatch(new RegExp(`write that; or, ${escaped(asText)}$`));
    expect(unclosedQuoteNote("cat <<EOF\nv=$(echo \"it's)\nEOF")).toMatch(new RegExp(`; close it, or ${escaped(asText)}$`));
    // Outside a body, as before.
    expect(bashismNote(bashismIn("echo ${arr[0]}")!, false, "/bin/sh (dash)")).toMatch(/; run the commands with bash \(bash -c '\.\.\.', or a script file that begins with #!\/bin\/bash\)$/);
    expect(bashismNote(bashismIn("v=$(source env.sh)")!, false, "/bin/sh (dash)")).toMatch(/; write \. env\.sh; or run the commands with bash/);
    // What it says to write, sh writes as text.
    for (const text of ["cat <<'EOF'\necho ${arr[0]} $(source env.sh) ${{ github.sha }}\nEOF", "cat <<EOF\necho \\${arr[0]} \\$(source env.sh) \\${{ github.sha }} \\`x\\`\nEOF"]) {
      expect(shRun(text), text).toMatchObject({ status: 0, stdout: text.includes("'EOF'") ? "echo ${arr[0]} $(source env.sh) ${{ github.sha }}\n" : "echo ${arr[0]} $(source env.sh) ${{ github.sha }} `x`\n" });
    }
  });

  // `: <<EOF` is a block comment's idiom: its bad substitution ends the shell, where cat's fails cat and the task goes on.
  it("says a bad substitution in the body of a special builtin's here-document ends the task", () => {
    for (const builtin of [":", "eval", "export", "set", "x=1 :", "echo a; :"]) {
      const run = `${builtin} <<EOF\n\${{ github.sha }} \${a[0]}\nEOF\necho after`;
      const name = builtin.split(" ").at(-1)!;
      expect(actionsExpressionNote(run), run).toContain(`, and the task exits 2 there and runs nothing after it (the here-document is ${name}'s, a special builtin, whose failed redirection ends the shell); `);
      expect(bashismIn(run), run).toMatchObject({ kind: "array", hereDocument: true, special: name });
      expect(bashismNote(bashismIn(run)!, true, "/bin/sh (dash)"), run).toContain(`so the task exits 2 there and runs nothing after it (the here-document is ${name}'s, a special builtin`);
      if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(run), run).toMatchObject({ status: 2, stdout: builtin.startsWith("echo") ? "a\n" : "" });
    }
    for (const other of ["cat", "command :", "cat >x.txt", ">x.txt cat"]) {
      const run = `${other} <<EOF\n\${{ github.sha }}\nEOF\necho after`;
      expect(actionsExpressionNote(run), run).toContain(", and the command whose here-document it is in fails (exit 2) without running; the task goes on");
      if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(run.replace(/>x\.txt ?/, "")), run).toMatchObject({ status: 0, stdout: expect.stringContaining("after") as unknown });
    }
  });

  // A body whose expansions this cannot read (a backquote closed only past its delimiter's line) gave up the whole run: its pipefail went unsaid.
  it("blanks a body whose expansions it cannot read, and the rest of the run, and reads the lines before it still", () => {
    const run = 'set -euo pipefail\ncat > NOTES.md <<EOF\nUse three backquotes (```) to fence code.\nEOF\necho "built at `date`"';
    expect(pipefailSet(run)).toEqual({ text: "set -euo pipefail", line: 1 });
    expect(bashismIn("[[ -f x ]] && echo y\ncat <<EOF\n```\nEOF\n`date`")).toEqual({ kind: "[[", text: "[[ -f x ]]", line: 1 });
    // sh reads the backquote on past the EOF line: what is after the body is not read as commands (none after it is noted).
    expect(bashismIn("cat <<EOF\n```\nEOF\n[[ -f x ]] `date`")).toBeUndefined();
    if (shSays("set -o pipefail", "set: Illegal option -o pipefail")) expect(shRun(run.replace("> NOTES.md ", ""))).toMatchObject({ status: 2, stdout: "" });
  });

  // A quote left open in a body's `$(...)` was said to let sh run the commands before its line: sh reads the body with its command, on an earlier line, and runs none of it.
  it("unclosedQuoteNote: says a quote left open in a $(...) of a body refuses the run from the command whose here-document it is", () => {
    const run = 'echo start\necho a; cat <<EOF\nmsg: $(git log -1 --format="%s)\nEOF';
    expect(unclosedQuoteNote(run)).toMatch(/^run leaves a " open, at "%s\) \(its line 3\): sh refuses the run from the command whose here-document it is in on \(a syntax error: unterminated quoted string\), running none of it; /);
    if (shSays('echo "a', "Syntax error: Unterminated quoted string")) expect(shRun(run)).toMatchObject({ status: 2, stdout: "start\n" });
  });

  // `( : <<EOF` and `echo x | : <<EOF` were said to end the task: the subshell, or the pipeline, exits 2, and the task goes on.
  it("says a bad substitution in the body of a special builtin's here-document in a subshell or pipeline fails that alone", () => {
    for (const start of ["( :", "echo x | :"]) {
      const run = `${start} <<EOF\n\${{ github.sha }} \${a[0]}\nEOF\n${start.includes("(") ? ")" : ""}\necho after`;
      expect(actionsExpressionNote(run), run).toContain(", and the command whose here-document it is in fails (exit 2) without running; the task goes on");
      expect(bashismIn(run), run).toEqual({ kind: "array", text: "${a[0]}", line: 2, hereDocument: true });
      if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(run), run).toMatchObject({ status: 0, stdout: "after\n" });
    }
    // In a subshell opened before it on its line, or on a line above: that subshell ends there, and the task goes on; closed before it, the task ends.
    for (const start of ["( echo in; :", "(\n  :"]) {
      const run = `${start} <<EOF\n\${{ github.sha }} \${a[0]}\nEOF\necho sub-after\n)\necho after`;
      const ends = "the subshell it is in exits 2 there and runs nothing after it (the here-document is :'s, a special builtin, whose failed redirection ends the subshell); the task goes on";
      expect(actionsExpressionNote(run), run).toContain(`, and ${ends}`);
      expect(bashismIn(run), run).toMatchObject({ kind: "array", hereDocument: true, subshellSpecial: ":" });
      expect(bashismNote(bashismIn(run)!, true, "/bin/sh (dash)"), run).toContain(`so ${ends}`);
      if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(run), run).toMatchObject({ status: 0, stdout: `${start.includes("in") ? "in\n" : ""}after\n` });
    }
    for (const closed of ["(echo in) ; :", "(\n  echo in\n)\n:", 'echo "(" ; :']) {
      const run = `${closed} <<EOF\n\${a[0]}\nEOF\necho after`;
      expect(bashismIn(run), run).toMatchObject({ special: ":" });
      if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(run), run).toMatchObject({ status: 2, stdout: expect.not.stringContaining("after") as unknown });
    }
    // After `||`, it is the shell's own command still.
    const run = "false || : <<EOF\n${a[0]}\nEOF\necho after";
    expect(bashismIn(run)).toMatchObject({ special: ":" });
    if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(run)).toMatchObject({ status: 2, stdout: "" });
  });

  // Any word `case` above (`echo in case of trouble`, or a case closed there) made the subshells unread, and the note said the task goes on: sh ends it.
  it("says a special builtin's here-document after a word case, or a case closed, ends the task; in a case in a subshell, that subshell", () => {
    const ends = "the task exits 2 there and runs nothing after it (the here-document is :'s, a special builtin, whose failed redirection ends the shell)";
    for (const above of ["echo in case of trouble", "case x in x) echo x ;; esac", "case x in\n  (x) echo x ;;\n  y) (echo y) ;;\nesac", "echo case x in y)"]) {
      const run = `${above}\n: <<EOF\n\${a[0]}\nEOF\necho after`;
      expect(bashismIn(run), run).toMatchObject({ kind: "array", hereDocument: true, special: ":" });
      expect(bashismNote(bashismIn(run)!, true, "/bin/sh (dash)"), run).toContain(`so ${ends}`);
      expect(actionsExpressionNote(run.replace("${a[0]}", "${{ github.sha }}")), run).toContain(`, and ${ends}`);
      if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(run), run).toMatchObject({ status: 2, stdout: expect.not.stringContaining("after") as unknown });
      // Through the CLI, as a workflow's run.
      const workflow = `tasks:\n  a:\n    run: |\n${run.replace(/^/gm, "      ")}\n`;
      const validated = spawnSync(process.execPath, [BIN, "validate", "-"], { input: workflow, encoding: "utf8" });
      expect(validated.stdout, run).toContain(`so ${ends}`);
      expect(validated.stdout, run).not.toContain("goes on");
    }
    // A case in a subshell, the here-document after it there: the subshell ends, and the task goes on.
    const inSubshell = "(\n  case x in (x) echo x ;; esac\n  : <<EOF\n${a[0]}\nEOF\n  echo sub-after\n)\necho after";
    expect(bashismIn(inSubshell)).toMatchObject({ hereDocument: true, subshellSpecial: ":" });
    if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(inSubshell)).toMatchObject({ status: 0, stdout: "x\nafter\n" });
    // The same after a line continuation (`true && \` with the case on the next line): sh reads the case as the command it continues.
    const continued = "(\n  true && \\\n  case x in x) echo x ;; esac\n  : <<EOF\n${a[0]}\nEOF\n  echo sub-after\n)\necho after";
    expect(bashismIn(continued)).toMatchObject({ hereDocument: true, subshellSpecial: ":" });
    if (shSays("echo ${{ x }}", "Bad substitution")) expect(shRun(continued)).toMatchObject({ status: 0, stdout: "x\nafter\n" });
    const continuedWorkflow = `tasks:\n  a:\n    run: |\n${continued.replace(/^/gm, "      ")}\n`;
    const continuedValidated = spawnSync(process.execPath, [BIN, "validate", "-"], { input: continuedWorkflow, encoding: "utf8" });
    expect(continuedValidated.stdout).toContain("the subshell it is in exits 2 there");
    expect(continuedValidated.stdout).toContain("the task goes on");
    // Where a `)` in a case may end a pattern or a subshell, unread: the task, or the subshell, never "the task goes on".
    const unsure = "(\n  case x in\n  x) echo x;;y) echo y ;; esac\n  : <<EOF\n${a[0]}\nEOF\n)\necho after";
    const found = bashismIn(unsure);
    expect(found).toMatchObject({ hereDocument: true, special: ":", subshellUnsure: true });
    expect(bashismNote(found!, true, "/bin/sh (dash)")).toContain("so the task, or the subshell it is in, exits 2 there and runs nothing after it (the here-document is :'s, a special builtin, whose failed redirection ends the shell it runs in);");
  });

  // An array's expansion, or a pipefail, past a body's `$(...)` never closed was said to end its command substitution: sh refuses the run before.
  it("bashismNote and pipefailNote: say one past a $(...) of a body that is never closed is past a syntax error, which refuses the run from its command on", () => {
    const refused = ", but sh refuses the run from the command whose here-document it is in on (a syntax error: the command substitution it is in is never closed), running none of it; to write it as text, ";
    const array = "echo before\ncat <<EOF\n$(echo ${a[0]}\nEOF\necho after";
    expect(bashismIn(array)).toEqual({ kind: "array", text: "${a[0]}", line: 3, substitution: true, hereDocument: true, unclosed: true });
    expect(bashismNote(bashismIn(array)!, true, "/bin/sh (dash)")).toBe(`run has \${a[0]} (its line 3), an array, which /bin/sh (dash) here does not have ("Bad substitution")${refused}quote the here-document's delimiter (<<'EOF') or escape it (\\\${, \\$(, a \\ before a backquote)`);
    const set = "echo before\ncat <<EOF\n$(echo $(set -o pipefail; a | b)\nEOF\necho after";
    expect(pipefailSet(set)).toEqual({ text: "set -o pipefail", line: 3, substitution: true, hereDocument: true, unclosed: true });
    expect(pipefailNote(pipefailSet(set)!, true, "/bin/sh (dash)")).toContain(`(its line 3), which /bin/sh (dash) here refuses ("Illegal option -o pipefail")${refused}`);
    for (const run of [array, set]) expect(shRun(run), run).toMatchObject({ status: 2, stdout: "before\n" });
  });

  it("says a ${{ }} in a $(...) of a body that is never closed is past a syntax error, which refuses the run from its command on", () => {
    const run = "echo before\ncat <<EOF\n$(echo ${{ x }}\nEOF\necho after";
    expect(actionsExpressionNote(run)).toContain(
      ", and before that, sh refuses the run from the command whose here-document it is in on (a syntax error: the command substitution it is in is never closed), running none of it; ",
    );
    expect(shRun(run)).toMatchObject({ status: 2, stdout: "before\n" });
  });

  it("reads $$, the shell's pid, before ${{ and an array's ${: the pid, then text", () => {
    for (const run of ["echo $${{ x }}", "echo $${a[0]}", 'echo "$${a[0]}"', "cat <<EOF\n$${{ x }} $${a[0]}\nEOF"]) {
      expect(actionsExpressionNote(run), run).toBeUndefined();
      expect(bashismIn(run), run).toBeUndefined();
      expect(shRun(run).status, run).toBe(0);
    }
    for (const run of ["echo $$${{ x }}", "echo \\$${{ x }}"]) expect(actionsExpressionNote(run), run).toMatch(/^run has \$\{\{ x \}\}/);
    for (const run of ["echo $$${a[0]}", "echo \\$${a[0]}"]) expect(bashismIn(run), run).toMatchObject({ kind: "array", text: "${a[0]}" });
  });

  it("finds each ${{ }} once per line: a line of many ${{ with no }} is read in about ten times what a tenth of it takes", () => {
    for (const runOf of [(count: number) => `cat <<EOF\n${"${{ x }".repeat(count)}\nEOF`, (count: number) => `echo ${"${{ x }".repeat(count)}`]) {
      const short = runOf(2000);
      const long = runOf(20000);
      expect(actionsExpressionNote(long)).toBeUndefined();
      const [longMs, shortMs] = bestOfAlternating(3, () => actionsExpressionNote(long), () => actionsExpressionNote(short));
      expect(longMs).toBeLessThan(40 * shortMs);
    }
    expect(actionsExpressionNote("echo ${{ a }} ${{ b }}")).toMatch(/^run has \$\{\{ a \}\}, /);
    expect(actionsExpressionNote("echo ${{ a }\n}} ${{}}")).toMatch(/^run has \$\{\{\}\} \(its line 2\), /);
  });

  // `printf '%s\n' "$$(" 'ok'` got a note that a " was left open: the second $ of the pid was read as opening a $(...), the closing " in it.
  it("unclosedQuoteNote: reads $$, the shell's pid, whole: its second $ opens no command substitution, in quotes, a here-document's body or not", () => {
    for (const run of ['echo "pid: $$(self)"', "printf '%s\\n' \"$$(\" 'ok'", 'lock="/tmp/lock.$$"; echo "$lock ($$(held))"', 'cat <<EOF\npid $$(x "y\nEOF\necho ok']) {
      expect(unclosedQuoteNote(run), run).toBeUndefined();
      expect(shRun(run).status, run).toBe(0);
    }
    // A `$(...)` after it is one.
    expect(unclosedQuoteNote('echo $$$(echo "it)')).toMatch(/^run leaves a " open, at "it\)/);
  });

  it("reads a run of many here-documents in about ten times what a tenth of them takes (every run with a << is read so now)", () => {
    const runOf = (count: number) => `${"cat <<EOF\nit's \\${{ x }} $(date)\nEOF\nset -o pipefail; echo \"a\" \n".repeat(count)}echo "done`;
    const short = runOf(300);
    const long = runOf(3000);
    const notes = (run: string) => [pipefailSet(run), actionsExpressionNote(run), unclosedQuoteNote(run)];
    expect(notes(long).map((note) => note !== undefined)).toEqual([true, false, true]);
    const [longMs, shortMs] = bestOfAlternating(1, () => notes(long), () => notes(short));
    expect(longMs).toBeLessThan(40 * shortMs);
  });
});

describe("bashismIn: bash's [[, source, function, arrays and here-strings, where sh reads them", () => {
  it("finds the first one, with its kind, text and line", () => {
    expect(bashismIn("echo a\nif [[ -f x ]]; then make; fi")).toEqual({ kind: "[[", text: "[[ -f x ]]", line: 2 });
    expect(bashismIn("cd app && [[ -n $CI ]] && make")).toEqual({ kind: "[[", text: "[[ -n $CI ]]", line: 1 });
    expect(bashismIn("while [[ $i -lt 3 ]]; do i=$((i+1)); done")).toEqual({ kind: "[[", text: "[[ $i -lt 3 ]]", line: 1 });
    expect(bashismIn("source ./env.sh && make")).toEqual({ kind: "source", text: "source ./env.sh", line: 1 });
    expect(bashismIn("make; source venv/bin/activate")).toEqual({ kind: "source", text: "source venv/bin/activate", line: 1 });
    expect(bashismIn("function build {\n  make\n}\nbuild")).toEqual({ kind: "function", text: "function build", line: 1, body: "later" });
    expect(bashismIn("echo a\nfiles=(a.txt b.txt)\nls")).toEqual({ kind: "array", text: "files=(a.txt b.txt)", line: 2 });
    expect(bashismIn('for f in "${files[@]}"; do echo $f; done')).toEqual({ kind: "array", text: "${files[@]}", line: 1 });
    expect(bashismIn("echo ${#files[@]}")).toEqual({ kind: "array", text: "${#files[@]}", line: 1 });
    // The first in the run, whichever kind.
    expect(bashismIn("source a.sh\n[[ -f x ]]")?.kind).toBe("source");
    expect(bashismIn("[[ -f x ]]\nsource a.sh")?.kind).toBe("[[");
    // After a keyword, `!` or `{` that starts the command.
    expect(bashismIn("if ! [[ -f x ]]; then make; fi")?.text).toBe("[[ -f x ]]");
    expect(bashismIn("{ source ./env.sh; make; }")?.text).toBe("source ./env.sh");
    expect(bashismIn("for f in a b; do source $f; done")?.text).toBe("source $f");
    expect(bashismIn("echo $(( (n=(2+3)) )); files=(a b)")?.text).toBe("files=(a b)");
  });

  it("finds one in a command substitution, $(...) or backquoted, which sh runs as it expands the word, in double quotes too", () => {
    expect(bashismIn('x=$( [[ -f a ]] && echo y ); echo "$x"')).toEqual({ kind: "[[", text: "[[ -f a ]]", line: 1 });
    expect(bashismIn('echo "$(source ./env.sh)"')).toEqual({ kind: "source", text: "source ./env.sh", line: 1 });
    expect(bashismIn("y=`[[ -f a ]] && echo y`")?.text).toBe("[[ -f a ]]");
    expect(bashismIn('echo "`[[ -f a ]]`"')?.text).toBe("[[ -f a ]]");
    // The backquote that ends the command is not the file's name's: the note says to write `. ./env.sh`, not `. ./env.sh\``.
    expect(bashismIn("v=`source ./env.sh`; echo $v")).toEqual({ kind: "source", text: "source ./env.sh", line: 1 });
    expect(bashismIn("x=$(cd a && [[ -f b ]])")?.text).toBe("[[ -f b ]]");
    expect(bashismIn("x=$(files=(a b); echo)")).toEqual({ kind: "array", text: "files=(a b)", line: 1 });
    expect(bashismIn("echo a\nout=$(\n  source env.sh\n)")).toEqual({ kind: "source", text: "source env.sh", line: 3 });
  });

  it("finds an array given to export, readonly, local, declare or typeset, which sh refuses as any word's `(`", () => {
    expect(bashismIn("export arr=(a b)")).toEqual({ kind: "array", text: "export arr=(a b)", line: 1 });
    expect(bashismIn("cd x && export list=(a b)")?.text).toBe("export list=(a b)");
    expect(bashismIn("echo a\nlocal -a arr=(a)")).toEqual({ kind: "array", text: "local -a arr=(a)", line: 2 });
    expect(bashismIn("readonly A=1 arr+=(x)")?.text).toBe("readonly A=1 arr+=(x)");
    expect(bashismIn("declare -a arr=(a b)")?.text).toBe("declare -a arr=(a b)");
    expect(bashismIn("x=$(typeset arr=(a)); echo")?.text).toBe("typeset arr=(a)");
    // After other assignments, quoted, expanded or escaped, and names.
    expect(bashismIn('export A="x y" arr=(1 2)')).toEqual({ kind: "array", text: 'export A="x y" arr=(1 2)', line: 1 });
    expect(bashismIn("echo a\nreadonly B='it is' C=$HOME D=${x}y list=(a)")).toEqual({ kind: "array", text: "readonly B='it is' C=$HOME D=${x}y list=(a)", line: 2 });
    expect(bashismIn("local -r A=a\\ b arr+=(x)")?.text).toBe("local -r A=a\\ b arr+=(x)");
    expect(bashismIn('export PATH A=x"y z" arr=(1)')?.text).toBe('export PATH A=x"y z" arr=(1)');
    for (const run of ['export A="x arr=(1 2)"', "export A='y\" arr=(1)'", 'export A="x \\" arr=(1)"', 'export A="$(echo a) arr=(1)"']) {
      expect(bashismIn(run), run).toBeUndefined();
    }
    for (const run of ['export "arr=(a b)"', "export arr='(a b)'", 'export arr="(a b)"', "export arr=\\(a\\)", "export arr=$(echo a)", "export n=$((1+2))", "bash -c 'export arr=(a b)'", "# export arr=(a b)"]) {
      expect(bashismIn(run), run).toBeUndefined();
    }
  });

  it("finds one first in a case's branch, after its pattern's ), and leaves alone an argument or quoted text there", () => {
    expect(bashismIn("case x in x) [[ -f a ]] && echo y ;; esac")).toEqual({ kind: "[[", text: "[[ -f a ]]", line: 1 });
    expect(bashismIn('case "$1" in\n  y) echo ;;\n  x) source ./env.sh ;;\nesac')).toEqual({ kind: "source", text: "source ./env.sh", line: 3 });
    expect(bashismIn("case x in\n  (x) arr=(a b) ;;\nesac")?.text).toBe("arr=(a b)");
    expect(bashismIn("case $x in *.txt|x) ! [[ -f a ]] ;; esac")?.text).toBe("[[ -f a ]]");
    expect(bashismIn("case x in a|x) function f { :; } ;; esac")?.kind).toBe("function");
    expect(bashismIn("case $l in *\\)*) [[ -f a ]] ;; esac")?.text).toBe("[[ -f a ]]");
    expect(bashismIn("case $l in \\#*) source ./a ;; esac")?.text).toBe("source ./a");
    for (const run of [
      "case x in x) echo [[ -f a ]] ;; esac",
      'case x in x) echo ";; y) [[ -f a ]]" ;; esac',
      "case x in x) echo 'in y) source x' ;; esac",
      'echo "case x in x) [[ y"',
      "case x in x) echo source ;; esac",
      "case x in x) make # [[ y ]]\n;; esac",
      "echo $(echo in) [[ -f a ]]",
      "for f in a b; do echo $f; done",
      "echo case x in y\\) source z",
      "echo case a in x\\) [[ -f a ]]",
    ]) {
      expect(bashismIn(run), run).toBeUndefined();
    }
  });

  it("finds one in a case's branch in a command substitution, whose patterns' ) end no $(...), as it does outside one", () => {
    expect(bashismIn('v=$(case "$1" in a) [[ -f b ]] && echo y ;; esac)')).toEqual({ kind: "[[", text: "[[ -f b ]]", line: 1 });
    expect(bashismIn('v=$(case $x in\n  a) echo a ;;\n  b|c) source ./env.sh ;;\nesac)')).toEqual({ kind: "source", text: "source ./env.sh", line: 3 });
    expect(bashismIn("v=$(case x in (x) arr=(a b) ;; esac); echo")?.text).toBe("arr=(a b)");
    expect(bashismIn('echo "$(case x in *) [[ -f a ]] ;; esac)"')?.text).toBe("[[ -f a ]]");
    expect(bashismIn("v=$(case x in\n  *) # a comment (\n    [[ -f a ]] ;;\nesac)")).toEqual({ kind: "[[", text: "[[ -f a ]]", line: 3 });
    expect(bashismIn("v=$(case x in x) (case y in y) [[ -f a ]] ;; esac) ;; esac)")?.text).toBe("[[ -f a ]]");
    // After the case and its $(...) end.
    expect(bashismIn("v=$(case x in x) echo ;; esac); source ./env.sh")?.text).toBe("source ./env.sh");
    expect(bashismIn("v=$(case x in x) echo; esac) && [[ -f a ]]")?.text).toBe("[[ -f a ]]");
    for (const run of [
      "v=$(case x in x) echo [[ -f a ]] ;; esac)",
      'v=$(case x in x) echo ";; y) [[ -f a ]]" ;; esac)',
      // `esac` ends the case: what follows the $(...) is an argument.
      "echo $(case x in x) echo ;; esac) [[ -f a ]]",
      "echo $(case x in esac) [[ -f a ]]",
      // A `case` that is an argument, whose `)` ends the $(...): unsure, as one after a keyword is.
      "v=$(echo case x in y) [[ -f a ]]",
      "v=$(if true; then case x in x) [[ -f a ]] ;; esac; fi)",
      "echo $((case))",
    ]) {
      expect(bashismIn(run), run).toBeUndefined();
    }
  });

  it("leaves alone in a command substitution what sh does not run as a command: quoted, escaped, an argument, a comment, arithmetic", () => {
    for (const run of [
      'echo "$(echo "[[ x ]]")"',
      "echo '$( [[ x ]] )'",
      'echo "\\$( [[ x ]] )"',
      "sh -c 'x=$( [[ -f a ]] )'",
      "echo `date` [[ x ]]",
      'echo "`date`" source x',
      "echo $(date) [[ x ]]",
      'x=$(echo "a; [[ x ]]")',
      'x=`echo "a; [[ x ]]"`',
      'x=$(echo "(" ; echo [[ x ]])',
      'echo "${x:-$(echo [[)}"',
      "x=$(echo a # [[ x ]]\n)",
      "x=$(echo \\( [[ x ]])",
      "echo $((1+(2)))",
    ]) {
      expect(bashismIn(run), run).toBeUndefined();
    }
  });

  it("leaves alone another shell's (bash -c '...', a here-document), comments, quotes, and the same words elsewhere", () => {
    for (const run of [
      "bash -c '[[ -f x ]] && source y.sh'",
      'bash -c "source env.sh; make"',
      "bash <<'EOF'\n[[ -f x ]]\narr=(a b)\nEOF",
      "# [[ -f x ]] and source x\nmake",
      "make # then source env.sh",
      "echo '${arr[@]} [[ x ]] function f'",
      "echo \\${arr[0]}",
      "[ -f x ] && . ./env.sh",
      "f() { make; }; f",
      "echo source code; git log --source",
      "x=$(date)",
      "i=$((i+1)); echo ${HOME} ${x:-[default]}",
      "echo $((a=(1+2)*3))",
      "grep function src.js",
      "echo [[x]]",
      // The words after an argument `do`, `!` or `then`, an escaped `;`, a joined line: no command starts there.
      "echo now do source the env file",
      "echo tests ok! function coverage next",
      "echo then function x",
      "echo a\\; source b",
      "echo one \\\n  [[ two ]]",
      "echo $(( (n=(2+3)) * 2 ))",
    ]) {
      expect(bashismIn(run), run).toBeUndefined();
    }
  });

  it("reads a run of many lines with its words in quotes in about ten times what a tenth of them takes", () => {
    // Each `[[` in quotes after a `;` is a candidate left alone; each was read from the run's start: 3,000 such lines took 1.1 s to validate, 100x 300 of them.
    const lines = (count: number, line: string): string => Array.from({ length: count }, () => line).join("\n");
    for (const line of ['echo "a; [[ b ]]"', "echo 'a; source b'", 'echo $((1)); echo "a; x=(1)"']) {
      const short = lines(400, line);
      const long = lines(4000, line);
      expect(bashismIn(long), line).toBeUndefined();
      // Side by side, best of five rounds alternating: 10-15x now.
      const [longMs, shortMs] = bestOfAlternating(3, () => bashismIn(long), () => bashismIn(short));
      expect(longMs, line).toBeLessThan(40 * shortMs);
    }
  });

  it("reads a line of many `case x in` with no pattern's ) in about ten times what a tenth of them takes, and still finds a bashism after a case's pattern", () => {
    // Each `case x in` read the rest of its line again for its pattern's `)`: 10,000 of them took 7 s.
    for (const runOf of [(count: number) => `${"case x in ".repeat(count)}[[ -f a ]]`, (count: number) => `${"case x in a|".repeat(count)}x [[ -f a ]]`]) {
      const short = runOf(300);
      const long = runOf(3000);
      expect(bashismIn(long)).toBeUndefined();
      // Side by side, best of five rounds alternating: about 10x now, about 100x before.
      const [longMs, shortMs] = bestOfAlternating(3, () => bashismIn(long), () => bashismIn(short));
      expect(longMs, long.slice(0, 40)).toBeLessThan(40 * shortMs);
    }
    expect(bashismIn(`${"case x in ".repeat(1000)}y) [[ -f a ]] ;; esac`)?.text).toBe("[[ -f a ]]");
    expect(bashismIn(`case x in a) echo ;;${" ;;".repeat(1000)} b) source ./c ;; esac`)?.text).toBe("source ./c");
  });

  it("reads a value or a case's word of many $names glued together in about the time of the same with ${names}", () => {
    // Each $name was also read as a shorter name and plain characters, every way tried where nothing matched after it: 9 such names took minutes.
    const names = ["$PYTHON_USER_BASE", "$CARGO_HOME_DIR", "$GOPATH_ROOT", "$NODE_MODULES", "$HOME_LOCAL"];
    const braced = names.map((name) => `\${${name.slice(1)}}`);
    for (const [runOf, find] of [
      [(value: string) => `export PATH=${value} && [[ -x "$(command -v cargo)" ]]`, bashismIn],
      [(value: string) => `x=$(case ${value} x); [[ y ]]`, bashismIn],
      [(value: string) => `echo "$(case ${value} x) y)"; set -o pipefail`, pipefailSet],
    ] as const) {
      const glued = runOf(names.join(""));
      const plain = runOf(braced.join(""));
      expect(find(glued), glued).toEqual(find(plain));
      // Side by side, best of five rounds alternating: about the same now, thousands of times longer before.
      const [gluedMs, plainMs] = bestOfAlternating(20, () => find(glued), () => find(plain));
      expect(gluedMs, glued).toBeLessThan(20 * plainMs);
    }
  });

  it("says what an array's expansion in a command substitution ends, and says nothing of an assignment or function that a backquoted command drops", () => {
    // sh runs `x=$(echo ${a[0]}); echo after` to its end: only the substitution exits 2 ("Bad substitution").
    for (const run of ["x=$(echo ${a[0]}); echo after", "x=`echo ${a[0]}`; echo after", 'x="$(echo "${a[0]}")"; echo after']) {
      expect(bashismIn(run), run).toEqual({ kind: "array", text: "${a[0]}", line: 1, substitution: true });
    }
    expect(bashismNote({ kind: "array", text: "${a[0]}", line: 1, substitution: true }, false, "/bin/sh (dash)")).toBe(
      'run has ${a[0]}, an array, which /bin/sh (dash) here does not have ("Bad substitution"): a run is run by /bin/sh -c, not bash, so the command substitution it is in exits 2 there and runs nothing after it; run the commands with bash (bash -c \'...\', or a script file that begins with #!/bin/bash)',
    );
    // Where it ends the task: in quotes or arithmetic, not a substitution.
    expect(bashismIn('echo "${a[0]}"; echo after')).toEqual({ kind: "array", text: "${a[0]}", line: 1 });
    expect(bashismIn("echo $(( ${a[0]} + 1 )); echo after")).toEqual({ kind: "array", text: "${a[0]}", line: 1 });
    // sh ends a backquoted command at its syntax error with no word and status 0 (`a=(1)`), or runs a command named function (127): no exit 2.
    for (const run of ["x=`arr=(1 2)`; echo after", "x=`echo a; export b=(1)`; echo after", "x=`function f { :; }`; echo after"]) {
      expect(bashismIn(run), run).toBeUndefined();
    }
    // In a `$(...)`, even one in a backquoted command, the syntax error refuses the command's whole line.
    expect(bashismIn("x=$(arr=(1 2)); echo after")).toEqual({ kind: "array", text: "arr=(1 2)", line: 1 });
    expect(bashismIn("x=`echo $(arr=(1))`; echo after")).toEqual({ kind: "array", text: "arr=(1)", line: 1 });
  });

  it("says what sh makes of a function whose body is on the lines after its name: the body run at once, not a syntax error at that line", () => {
    // dash runs `function f {` as a command (127), then `echo body`, and exits 2 at the `}`; `function f` then `{` runs to its end, exit 0.
    expect(bashismIn("echo one\nfunction f {\n  echo body\n}\necho after")).toEqual({ kind: "function", text: "function f", line: 2, body: "later" });
    expect(bashismIn("function f\n{\n  echo body\n}")).toEqual({ kind: "function", text: "function f", line: 1, body: "group" });
    // The whole definition on its line, or `function f()`: a syntax error there.
    expect(bashismIn("function f { echo a; }; f")).toEqual({ kind: "function", text: "function f", line: 1 });
    expect(bashismIn("function f() {\n  echo\n}")).toEqual({ kind: "function", text: "function f", line: 1 });
    expect(bashismNote({ kind: "function", text: "function f", line: 2, body: "later" }, true, "/bin/sh (dash)")).toBe(
      "run has function f (its line 2), bash's way to define a function, which /bin/sh (dash) here does not have: a run is run by /bin/sh -c, not bash, so sh runs function as a command it does not find (127), then the body's lines at once, and exits 2 at the } that ends them (a syntax error), running nothing after it; write name() { ...; }; or run the commands with bash (bash -c '...', or a script file that begins with #!/bin/bash)",
    );
    expect(bashismNote({ kind: "function", text: "function f", line: 1, body: "group" }, true, "/bin/sh (dash)")).toMatch(/so sh runs function as a command it does not find \(127\), then the \{ \} group after it at once; no function is defined, and a call of it fails with 127;/);
  });

  it("says what the shell makes of it and what to write instead, with its line in a run of several lines", () => {
    expect(bashismNote({ kind: "[[", text: "[[ -f x ]]", line: 2 }, true, "/bin/sh (dash)")).toBe(
      "run has [[ -f x ]] (its line 2), bash's test syntax, which /bin/sh (dash) here does not have (\"[[: not found\"): a run is run by /bin/sh -c, not bash, so that test fails with 127 every time (an if or && takes it as false, silently); write [ ... ] (with = for ==, and no && inside); or run the commands with bash (bash -c '...', or a script file that begins with #!/bin/bash)",
    );
    expect(bashismNote({ kind: "source", text: "source ./env.sh", line: 1 }, false, "/bin/sh (dash)")).toMatch(/^run has source \.\/env\.sh, .*\("source: not found"\).*; write \. \.\/env\.sh; or run the commands with bash/);
    expect(bashismNote({ kind: "array", text: "${a[@]}", line: 1 }, false, "/bin/sh")).toMatch(/^run has \$\{a\[@\]\}, an array, which \/bin\/sh here does not have \("Bad substitution"\).*; run the commands with bash/);
    expect(bashismNote({ kind: "function", text: "function build", line: 3 }, true, "/bin/sh (dash)")).toMatch(/^run has function build \(its line 3\), .*a syntax error.*exits 2 at that line/);
  });

  // dash: `tee /dev/stderr <<< z` is "Syntax error: redirection unexpected", exit 2, and no note said so.
  it("finds bash's here-string (<<<) wherever a word may be, with its word, and leaves it alone in quotes, a comment, another shell's, or a here-document's body", () => {
    expect(bashismIn("tee /dev/stderr <<< z")).toEqual({ kind: "<<<", text: "<<< z", line: 1 });
    expect(bashismIn("echo a\nread a b <<< 'x y'; echo $a")).toEqual({ kind: "<<<", text: "<<< 'x y'", line: 2 });
    expect(bashismIn('grep -q x <<<"$out" && echo y')?.text).toBe('<<<"$out"');
    expect(bashismIn("wc -l <<< $(date) | cat")?.text).toBe("<<< $(date)");
    // In a command substitution, in double quotes or not, or backquoted: sh refuses the whole line there too.
    expect(bashismIn('v=$(cat <<< "$x"); echo "$v"')).toEqual({ kind: "<<<", text: '<<< "$x"', line: 1 });
    expect(bashismIn('echo "$(cat <<< z)"')?.text).toBe("<<< z");
    expect(bashismIn("v=`cat <<< z`")?.text).toBe("<<< z");
    expect(bashismIn("case x in x) cat <<< z ;; esac")?.text).toBe("<<< z");
    // The first construct of a run, whichever kind; a here-string is no here-document that would leave the run unread.
    expect(bashismIn("cat <<< z; [[ -f x ]]")?.kind).toBe("<<<");
    expect(bashismIn("[[ -f x ]] && cat <<< z")?.kind).toBe("[[");
    expect(bashismIn("cat <<-EOF\n\tx\n\tEOF\ncat <<< z")).toEqual({ kind: "<<<", text: "<<< z", line: 4 });
    for (const run of [
      "echo '<<< z'",
      'echo "a <<< b"',
      "echo c # then <<< x",
      "echo \\<<< x",
      "bash -c 'cat <<< z'",
      "cat <<EOF\n<<< z\nEOF",
      "cat <<-EOF\n\t<<< z\n\tEOF",
    ]) {
      expect(bashismIn(run), run).toBeUndefined();
    }
    // What this machine's sh makes of it, where it refuses a here-string (dash): a syntax error, exit 2, nothing of that line run.
    if (spawnSync("/bin/sh", ["-c", ": <<< x"], { stdio: "ignore" }).status !== 0) {
      const ran = spawnSync("/bin/sh", ["-c", "echo before\ntee /dev/stderr <<< z; echo after"], { encoding: "utf8" });
      expect(ran).toMatchObject({ status: 2, stdout: "before\n" });
      expect(ran.stderr).toContain("redirection unexpected");
    }
    expect(bashismNote({ kind: "<<<", text: "<<< z", line: 1 }, false, "/bin/sh (dash)")).toBe(
      "run has <<< z, bash's here-string, which /bin/sh (dash) here refuses (a syntax error: \"redirection unexpected\"): a run is run by /bin/sh -c, not bash, so the task exits 2 at that line and runs nothing from it on; write printf '%s\\n' z | command, or a here-document (for read, whose variables a pipe would lose); or run the commands with bash (bash -c '...', or a script file that begins with #!/bin/bash)",
    );
    expect(bashismNote({ kind: "<<<", text: "<<< 'x y'", line: 2 }, true, "/bin/sh (dash)")).toMatch(/^run has <<< 'x y' \(its line 2\), bash's here-string, .*; write printf '%s\\n' 'x y' \| command,/);
  });

  // dash refuses each of these ("redirection unexpected", exit 2), and no note said so: a `<<` that is no here-document left the run unread.
  it("reads a run whose << is no here-document's operator: in arithmetic, quotes or a comment", () => {
    for (const [run, line] of [
      ["x=$((1<<3)); cat <<< x", 1],
      ['echo "<<"; cat <<< x', 1],
      ["echo '<<EOF' ${y:-<<}; cat <<< x", 1],
      ["cat <<< x # <<EOF", 1],
      ["# build with <<EOF\ncat <<< x", 2],
    ] as const) {
      expect(bashismIn(run), run).toEqual({ kind: "<<<", text: "<<< x", line });
      if (shRefuses(": <<< x")) {
        const ran = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", input: "" });
        expect(ran.status, run).toBe(2);
        expect(ran.stderr, run).toContain(`${line}: Syntax error: redirection unexpected`);
      }
    }
  });

  it("reads the lines of a run outside its here-documents' bodies, and none of a body", () => {
    for (const run of [
      "cat <<EOF\n[[ -f x ]]\nEOF\nsource ./env.sh",
      "cat <<-EOF >/dev/null\n\tsource ./a.sh\n\tEOF\nsource ./env.sh",
      "cat <<A <<'B' >/dev/null\nsource ./a.sh\nA\nsource ./b.sh\nB\nsource ./env.sh",
      'cat <<"EOF" > "/dev/null"\nsource ./a.sh\nEOF\nsource ./env.sh',
      // A here-document in a `$(...)`, its body's `)` text; one after a quoted string of two lines, whose body starts after the string's end.
      "x=$(cat <<EOF\n)\nEOF\n)\nsource ./env.sh",
      'cat <<EOF; echo "a\nsource ./a.sh"\nsource ./b.sh\nEOF\nsource ./env.sh',
    ]) {
      const lines = run.split("\n").length;
      expect(bashismIn(run), run).toEqual({ kind: "source", text: "source ./env.sh", line: lines });
      // sh runs to the last line, and fails there (a body's source is text).
      if (shRefuses("source /dev/null")) {
        const ran = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", input: "" });
        expect(ran.status, run).toBe(127);
        expect(ran.stderr, run).toBe(`/bin/sh: ${lines}: source: not found\n`);
      }
    }
    for (const run of [
      "cat <<EOF\n[[ -f x ]]\nsource ./a.sh\nEOF",
      'echo "#" <<EOF\n[[ -f x ]]\nEOF',
      "x=$((1<<2)) cat <<EOF\nsource ./a.sh\nEOF",
      // Where this does not follow it: a body never ended, a here-document in a backquoted command, a line joined to the next.
      "cat <<EOF\nsource ./a.sh",
      "x=`cat <<EOF`\nsource ./a.sh",
      "cat <<EOF \\\n  >/dev/null\nsource ./a.sh\nEOF",
    ]) {
      expect(bashismIn(run), run).toBeUndefined();
    }
  });
  it("ends a here-document's body where sh does, at its delimiter with its quotes removed as sh removes them", () => {
    // sh removes nothing in single quotes, a backslash in double quotes only before $ ` " \\ or a newline, and one outside
    // quotes escapes the next character: each body ends at its second delimiter line, not at the first (as every quote and
    // backslash dropped read it), and the construct between the two is its text.
    for (const run of [
      "cat <<'E\"F'\nEF\nsource ./a.sh\nE\"F\necho ok",
      "cat <<'a\\b'\nab\nsource ./a.sh\na\\b\necho ok",
      "cat <<E\\\\F\nEF\nsource ./a.sh\nE\\F\necho ok",
      'cat <<"a\\b"\nab\n[[ -f x ]]\na\\b\necho ok',
    ]) {
      expect(bashismIn(run), run).toBeUndefined();
      expect(spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", input: "" }), run).toMatchObject({ status: 0, stdout: expect.stringContaining("ok\n") as unknown });
    }
    // After the body's end, read as ever.
    expect(bashismIn("cat <<'a\\b'\nab\na\\b\nsource ./env.sh")).toEqual({ kind: "source", text: "source ./env.sh", line: 4 });
  });

  it("gives a here-string's word whole, a $(...) in it nested or quoted, and writes none where it does not read it whole", () => {
    for (const run of ["cat <<< $(echo $(date)) | wc -c", 'cat <<< "$(echo ")")"x | wc -c', "v=`cat <<< $(echo $(date))`"]) {
      const word = run.includes('"') ? '"$(echo ")")"x' : "$(echo $(date))";
      const found = bashismIn(run);
      expect(found, run).toEqual({ kind: "<<<", text: `<<< ${word}`, line: 1 });
      expect(bashismNote(found!, false, "/bin/sh (dash)"), run).toContain(`; write printf '%s\\n' ${word} | command, or a here-document`);
    }
    // A word of two lines, or one never closed: the note names no word.
    for (const run of ['cat <<< "a\nb"', "cat <<< $(echo (a)"]) {
      const found = bashismIn(run);
      expect(found, run).toEqual({ kind: "<<<", text: "<<<", line: 1 });
      expect(bashismNote(found!, true, "/bin/sh (dash)"), run).toMatch(/^run has <<< \(its line 1\), bash's here-string, .*; write printf '%s\\n' \.\.\. \| command, or a here-document/);
    }
    if (shRefuses(": <<< x")) {
      for (const run of ["cat <<< $(echo $(date)) | wc -c", 'cat <<< "$(echo ")")"x | wc -c', 'cat <<< "a\nb"']) {
        const ran = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", input: "" });
        expect(ran.status, run).toBe(2);
        expect(ran.stderr, run).toContain("1: Syntax error: redirection unexpected");
      }
    }
  });
  it("leaves alone a <<< in arithmetic, which sh refuses as arithmetic, not as a here-string", () => {
    for (const run of ["echo $((1<<<2))", "echo $(( (1) <<< 2 )) after"]) {
      expect(bashismIn(run), run).toBeUndefined();
      const ran = spawnSync("/bin/sh", ["-c", run], { encoding: "utf8", input: "" });
      expect(ran.status, run).not.toBe(0);
      expect(ran.stderr, run).not.toContain("redirection");
    }
    if (shRefuses(": <<< x")) expect(spawnSync("/bin/sh", ["-c", "echo $((1<<<2))"], { encoding: "utf8" }).stderr).toContain("arithmetic expression: expecting primary");
    // One after the arithmetic is still noted.
    expect(bashismIn("echo $((1<<2)); cat <<< x")).toEqual({ kind: "<<<", text: "<<< x", line: 1 });
  });
});

/** `text` as a regular expression that matches it. */
function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
