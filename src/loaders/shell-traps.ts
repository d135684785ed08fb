/**
 * What the shell makes of a `run` or an env value other than what its line in the workflow file
 * seems to say, each as the text of a note (undefined: nothing to say). Pure: build-workflow.ts
 * says them at their place in the file.
 */

import { expandedBodyAt, hereDocument, hereDocumentBody, hereDocumentOperator, outsideHereDocuments, type ExpandedBody, type HereDocument } from "./here-documents.js";
import { lowerBound } from "./lower-bound.js";
import { shortened } from "../shorten.js";

/**
 * `run: echo "issue #42 fixed"`: YAML ends a plain value at ` #`, so the shell would get `echo
 * "issue` and fail on the quote it never sees closed, the file's line looking right all along. A
 * value whose quotes are closed is left alone: its comment may be meant. Whether a comment did
 * end the value is the caller's to ask (the file's positions), only for a value this returns a
 * note for. One of several lines (a | block, whose heredoc may hold a `don't`) gets none: a
 * plain value's lines are joined by spaces.
 */
export function cutByCommentNote(run: string): string | undefined {
  if (run.includes("\n")) return undefined;
  const open = unclosedQuote(run);
  if (open === undefined || open === "unsure") return undefined;
  return `run is cut where " #" begins, which YAML reads as a comment: the shell gets ${run}, with a ${open} never closed (a syntax error); quote the whole value, or write it in a | block`;
}

/**
 * `run: |` then `#!/bin/bash`: a script's first line, but `/bin/sh -c` reads it as a comment and
 * runs the rest itself, so bash's `set -o pipefail`, `[[` or arrays fail under dash with messages
 * that do not say why. None for a `#!` that names sh (it is what runs).
 */
export function shebangNote(run: string): string | undefined {
  if (!run.startsWith("#!")) return undefined;
  const line = run.slice(0, run.includes("\n") ? run.indexOf("\n") : undefined).trimEnd();
  const words = line.slice(2).trim().split(/[ \t]+/);
  // A script's #! names its interpreter by absolute path; `#! note` is a comment meant as one.
  if (!words[0]?.startsWith("/")) return undefined;
  let program = baseName(words[0]);
  // `#!/usr/bin/env bash`, `#!/usr/bin/env -S python3 -u`: the program is env's first operand.
  if (program === "env") program = baseName(words.slice(1).find((word) => !word.startsWith("-") && !word.includes("=")) ?? "");
  if (program === "" || program === "sh") return undefined;
  return `run begins with ${line}, a comment to /bin/sh, which runs the command (not ${program}); to run it with ${program}, put it in a script file that begins so, and run that file`;
}

/** A test of whether the shell takes pipefail, which a `set` after it is guarded by: a subshell that tries it, `set -o | grep pipefail`, bash's or zsh's version. */
const PIPEFAIL_GUARD = /\([ \t]*set[ \t][^)\n]*pipefail|\bset[ \t]+-o[ \t]*\|[^\n]*pipefail|\b(?:BASH|ZSH)_VERSION\b/;

/**
 * `set -euo pipefail`, as a GitHub Actions step's bash runs it, in a `run`, which /bin/sh runs: an
 * sh without pipefail (dash before 0.5.13, Debian's and Ubuntu's /bin/sh) refuses the `set`, a
 * special builtin, and exits 2 there ("Illegal option -o pipefail", `|| true` or not), after the
 * file validated. The first `set` that turns pipefail on where sh runs it as a command of the
 * run's own: first on its line, or after `;`, `&&`, `||` or a `$(`, and any `{`, `then`, `do` or `else` after those (words of their own, not `echo then set -o pipefail`), outside
 * quotes and comments (not `bash -c 'set -o pipefail; ...'`, nor `(set -o pipefail)`, a subshell
 * that tries it, nor one after such a test, run only where sh takes it, nor in a here-document's body,
 * whose lines may be another shell's, but for one in a `$(...)` there where its delimiter is unquoted, which sh runs (`hereDocument`:
 * text meant, most likely), in a run whose here-documents are read here: see outsideHereDocuments): its text (`set -euo pipefail`), its line, from 1, and whether it is
 * in a command substitution (`$(...)` or backquoted, in double quotes too), whose shell alone exits 2 there:
 * one there is taken only with a pipeline after it there (`$(set -o pipefail; curl -s x | jq .)`);
 * without one (`$(set -o pipefail && echo yes)`), it is a test of whether sh takes it.
 */
export function pipefailSet(written: string): { text: string; line: number; substitution?: true; hereDocument?: true; unclosed?: true } | undefined {
  if (!written.includes("pipefail")) return undefined;
  // Its here-documents' bodies are text (or another shell's) to this reading: blanked, at the same indexes and lines, but for what sh expands there (see outsideHereDocuments).
  const run = outsideHereDocuments(written);
  if (run === undefined) return undefined;
  // The operator or `$(` before the set, or before the `{`, `then`, `do` or `else` before it, each then a word of its own: none escaped by a backslash (`echo a\; set`, a line joined by a `\` at its end), nor one in a word (`echo then set`, `${x}then set`: arguments).
  const command = /(?:^|(?<!\\)(?:\n|;|&&|\|\||\$\((?!\()))[ \t]*(?:(?:\{|then|do|else)[ \t]+)*(set[ \t][^\n;&|#)]*)/g;
  const reader = new RunReader(run);
  // Each substitution's end, found once for all the candidates in it; the run's pipes (`|`, not `||`), in order.
  const ends = new Map<number, number>();
  let pipes: number[] | undefined;
  for (const match of run.matchAll(command)) {
    const words = match[1]!.trim().split(/[ \t]+/);
    const on = words.some((word, index) => /^-[A-Za-z]*o$/.test(word) && words[index + 1] === "pipefail");
    if (!on) continue;
    const index = match.index + match[0].indexOf(match[1]!);
    // In a comment (`# set -o pipefail`, `make # then set -o pipefail`), or inside quotes: not sh's command.
    const read = reader.at(index);
    if (read.inLineComment || read.context === "unsure" || read.context === "'" || read.context === '"' || read.context === "${") continue;
    // In a `$(...)` or backquoted command: with a pipeline after it there (`|`, not `||`), or a test.
    let substitution = false;
    if (read.context !== undefined) {
      const start = read.context === "$(" ? read.opened - 1 : read.opened;
      const end = ends.get(start) ?? skipQuoted(run, start, 0, false);
      ends.set(start, end);
      pipes ??= [...run.matchAll(/(?<![|\\])\|(?!\|)/g)].map((pipe) => pipe.index);
      if (end === -1 || !hasBetween(pipes, index, end)) continue;
      substitution = true;
    }
    const before = run.slice(0, index);
    // After a test of whether the shell takes it (`(set -o pipefail) 2>/dev/null && set -o pipefail`, `[ -n "$BASH_VERSION" ] &&`): run only where it is taken.
    if (PIPEFAIL_GUARD.test(before)) return undefined;
    const body = expandedBodyAt(written, index);
    return {
      text: words.join(" "),
      line: before.split("\n").length,
      ...(substitution ? { substitution: true as const } : {}),
      ...(body === undefined ? {} : { hereDocument: true as const }),
      ...(pastUnclosed(body, index) ? { unclosed: true as const } : {}),
    };
  }
  return undefined;
}

/** Whether `sorted` holds a number from `from` up to (not including) `to`. */
function hasBetween(sorted: number[], from: number, to: number): boolean {
  const low = lowerBound(sorted, from);
  return low < sorted.length && sorted[low]! < to;
}

/** The note for pipefailSet's `set` in a run (`multiline`: of several lines), where `shell`, this machine's /bin/sh (`/bin/sh (dash)`), refuses it. */
export function pipefailNote(set: { text: string; line: number; substitution?: true; hereDocument?: true; unclosed?: true }, multiline: boolean, shell: string): string {
  const where = multiline ? ` (its line ${set.line})` : "";
  if (set.unclosed === true) return `run has ${set.text}${where}, which ${shell} here refuses ("Illegal option -o pipefail"), but ${UNCLOSED_BODY_FAILS}; ${AS_TEXT}`;
  const exits = set.substitution === true ? "the command substitution it is in exits 2 there and runs nothing after it (its pipelines never run)" : "the task exits 2 at that line and runs nothing after it";
  // In a `$(...)` of a here-document's body (see pipefailSet), the text to write, most likely.
  const instead = set.hereDocument === true ? AS_TEXT : "drop pipefail, or run the commands with bash (bash -c '...', or a script file that begins with #!/bin/bash)";
  return `run has ${set.text}${where}, which ${shell} here refuses ("Illegal option -o pipefail"): a run is run by /bin/sh -c, not bash, so ${exits}; ${instead}`;
}

/** The bash-only constructs bashismIn finds: each one /bin/sh may refuse (see host-shell.ts shellRefusing). */
export type BashismKind = "[[" | "source" | "function" | "array" | "<<<";

/**
 * A case's pattern (`x)`, `*.txt|*.md)`), after its `in` or the `;;` that ends the branch before it: a command follows its `)`.
 * A backslash makes the character after it a word's (`*\)*)`), so an escaped `)` ends no pattern: `echo case x in y\) source z`
 * is one command, whose arguments sh runs none of. An `esac` there ends the case (`;; esac) [[` is no pattern's `)`): `(esac)` is a pattern.
 * CASE_HEAD_START finds what a pattern follows, up to the pattern (after its `(`, if any); casePatternEnds reads each pattern from there
 * to the `)` that ends it, or to what ends it otherwise (none then), each character once for all of them: as one regular expression,
 * each `case x in` read all that followed it on its line again, and a line of 10,000 with no `)` took 7 s.
 */
const CASE_HEAD_START = /(?:(?<![^\s;&|(])case[ \t]+[^\s;&|()]+[ \t]+in|(?<!\\);;)\s+(?!esac(?:[\s;&|)]|$))\(?/g;

/** Each case pattern's `)` in `run` (see CASE_HEAD_START), and where what ends with it starts (its `case` or `;;`), in order of that start. */
export function casePatternEnds(run: string): { start: number; end: number }[] {
  const found: { start: number; end: number }[] = [];
  if (!run.includes("case") && !run.includes(";;")) return found;
  // stop[i]: where a pattern's characters read from i end (`[^()\n;&\\]` and `\x`, x not a line's end): at a `)` it is one.
  let stop: Int32Array | undefined;
  CASE_HEAD_START.lastIndex = 0;
  for (let head = CASE_HEAD_START.exec(run); head !== null; head = CASE_HEAD_START.exec(run)) {
    const from = head.index + head[0].length;
    // Heads may overlap (`case case in x)`): each is tried from the next character on.
    CASE_HEAD_START.lastIndex = head.index + 1;
    const first = run[from];
    // The first character: not a blank nor a `(`, `)`, `;`, `&`; a backslash then not a line's end.
    if (first === undefined || /[()\s;&]/.test(first) || (first === "\\" && (from + 1 >= run.length || run[from + 1] === "\n"))) continue;
    stop ??= patternStops(run);
    const end = stop[from]!;
    if (run[end] === ")") found.push({ start: head.index, end });
  }
  return found;
}

/** For each index, where a case pattern's characters read from there end (see casePatternEnds): run.length at the run's end. */
function patternStops(run: string): Int32Array {
  const stop = new Int32Array(run.length + 2).fill(run.length);
  for (let index = run.length - 1; index >= 0; index--) {
    const char = run[index]!;
    if (char === "(" || char === ")" || char === "\n" || char === ";" || char === "&") stop[index] = index;
    else if (char === "\\") stop[index] = index + 1 < run.length && run[index + 1] !== "\n" ? stop[index + 2]! : index;
    else stop[index] = stop[index + 1]!;
  }
  return stop;
}

/** What may come between where sh reads a command's first word and that word: blanks, then any `{`, `!` or keyword that a command follows, each itself a word there. */
const COMMAND_LEAD = String.raw`[ \t]*(?:(?:\{|!|then|do|else|if|elif|while|until)[ \t]+)*`;

/**
 * Where sh reads a command's first word: a line's start, after `;`, `&&`, `||`, `|`, `(`, a backquote or a case's pattern (none escaped by a backslash,
 * which makes it a word's character, or joins the line to the one before), then any `{`, `!` or keyword that a command
 * follows, each itself a word there: `echo do source it`, `echo hi! function x` have no command after `do` or `!`. After a case's pattern
 * (see casePatternEnds), COMMAND_LEAD is matched from its `)` on.
 */
const COMMAND_START = String.raw`(?:(?<![\s\S])|(?<!\\)(?:\n|;|&&|\|\||\||\(|\`))${COMMAND_LEAD}`;
/**
 * A variable's value as an assignment before the array's gives it, read here only when it is made of these: plain characters,
 * `\x`, `$name`, `${name}`, `'...'` and `"..."` of these on its line (`export A="x y" arr=(a)`); another (`A=$(date)`) is not read past.
 * A `$name` is read whole (its name's last characters are not plain ones too): a value of many names read in each of the ways they
 * split took minutes where nothing matched after it.
 */
const ASSIGNED_VALUE = /(?:[^\s;&|()<>'"`\\$]|\\[^\n]|\$(?:[A-Za-z_]\w*(?!\w)|[0-9@*#?$!-]|\{[A-Za-z_]\w*\})|'[^'\n]*'|"(?:[^"`\\$\n]|\\[^\n]|\$(?:[A-Za-z_]\w*(?!\w)|[0-9@*#?$!-]|\{[A-Za-z_]\w*\}))*")*/.source;
const BASHISM_BODIES: { kind: BashismKind; body: string; flags: string; commandOnly: boolean }[] = [
  { kind: "[[", body: `(\\[\\[[ \t][^\n]*?(?:\\]\\]|$))`, flags: "gm", commandOnly: true },
  { kind: "source", body: `(source[ \t]+[^\\s;&|)\`]+)`, flags: "g", commandOnly: true },
  { kind: "function", body: `(function[ \t]+[A-Za-z_][\\w.:-]*)`, flags: "g", commandOnly: true },
  { kind: "array", body: `([A-Za-z_]\\w*\\+?=\\([^\n)]*\\)?)`, flags: "g", commandOnly: true },
  // Given to a declaring command (`export arr=(a b)`, `local -a arr=(a)`, `export A="x y" arr=(a)`): sh reads the `(` as it would after any word, a syntax error.
  {
    kind: "array",
    body: `((?:export|readonly|local|declare|typeset)(?:[ \t]+(?:-[A-Za-z]+|[A-Za-z_]\\w*(?:=${ASSIGNED_VALUE})?))*[ \t]+[A-Za-z_]\\w*\\+?=\\([^\n)]*\\)?)`,
    flags: "g",
    commandOnly: true,
  },
];
/**
 * Each bashism where sh reads a command (`pattern`), and the same read from just after a case pattern's `)` (`afterCase`, sticky); or one read
 * anywhere, outside quotes (`inDoubleQuotes`: in double quotes too).
 */
const BASHISMS: { kind: BashismKind; pattern: RegExp; afterCase?: RegExp; commandOnly: boolean; inDoubleQuotes?: true }[] = [
  ...BASHISM_BODIES.map(({ kind, body, flags, commandOnly }) => ({
    kind,
    pattern: new RegExp(`${COMMAND_START}${body}`, flags),
    afterCase: new RegExp(`${COMMAND_LEAD}${body}`, flags.replace("g", "y")),
    commandOnly,
  })),
  // An expansion: read in double quotes too, where sh refuses it as well.
  { kind: "array", pattern: /(?<!\\)(\$\{#?[A-Za-z_]\w*\[[^\n}]*\}?)/g, commandOnly: false, inDoubleQuotes: true },
  // A here-string, `cmd <<< word`: a redirection, wherever a word of a command may be (not a `<` escaped, which is a word's); its word
  // is read where it is told (see hereString).
  { kind: "<<<", pattern: /(?<![<\\])(<<<)/g, commandOnly: false },
];

/**
 * The matches of a BASHISMS entry in `run`, in order, none overlapping the one before, as `pattern.matchAll` would give them were
 * a case's pattern (from its `case` or `;;` to its `)`, see casePatternEnds) one of the places a command starts in it.
 */
function* bashismMatches(run: string, pattern: RegExp, afterCase: RegExp | undefined, cases: { start: number; end: number }[]): Generator<{ index: number; text: string; captured: string }> {
  let from = 0;
  let next: RegExpExecArray | null | undefined;
  let caseAt = 0;
  for (;;) {
    if (next === undefined || (next !== null && next.index < from)) {
      pattern.lastIndex = from;
      next = pattern.exec(run);
    }
    // The first case pattern from `from` on, before the next match (at the same place, the match is the regular expression's first alternative), with the bashism after it.
    let found: { index: number; text: string; captured: string } | undefined;
    while (caseAt < cases.length && cases[caseAt]!.start < from) caseAt++;
    for (; afterCase !== undefined && caseAt < cases.length && (next === null || cases[caseAt]!.start < next.index); caseAt++) {
      const { start, end } = cases[caseAt]!;
      afterCase.lastIndex = end + 1;
      const after = afterCase.exec(run);
      if (after !== null) {
        found = { index: start, text: run.slice(start, end + 1 + after[0].length), captured: after[1]! };
        caseAt++;
        break;
      }
    }
    if (found === undefined) {
      if (next === null) return;
      found = { index: next.index, text: next[0], captured: next[1]! };
    }
    from = found.index + found.text.length;
    yield found;
  }
}

/**
 * bash's `[[ ... ]]`, `source file`, `function name {`, arrays (`arr=(a b)`, `${arr[@]}`), here-strings (`cmd <<< word`) in a
 * `run`, which /bin/sh runs: dash has none of them (`[[: not found`, `source: not found`, a syntax error, `Bad
 * substitution`, `redirection unexpected`), found only once the task runs. The first one where sh reads it (a command's first word,
 * in a `$(...)` or backquoted command too, which sh runs as it expands the word, in double quotes or not;
 * an array's expansion anywhere but in single quotes; a here-string's `<<<` anywhere a word may be), outside comments and quotes,
 * outside here-documents' bodies (whose lines may be another shell's; a here-string is none) but for what sh expands in one (its
 * `$(...)` and `${...}` where the delimiter is unquoted), in a run whose here-documents are read here (see outsideHereDocuments), `<<` elsewhere being none: its kind, its text (`[[ -f x ]]`, a here-string's word whole) and its line, from 1, and for an array's
 * expansion in a command substitution (`$(echo ${a[0]})`), that only the substitution's shell exits 2 there, and for one in a here-document's
 * body (`cat <<EOF` then `${a[0]}`, or `$(source x)` there), that it is there (`hereDocument`: text meant, most likely), and for an array's
 * expansion there, the special builtin whose here-document it is (`special`: `: <<EOF`, which it ends the shell of). None for an
 * array's assignment or a `function` in a backquoted command (not in a `$(...)` there), which dash's reading drops unsaid.
 * Pure and quick: it only reads the run; whether this machine's sh refuses it is the caller's to ask.
 */
export function bashismIn(
  written: string,
): { kind: BashismKind; text: string; line: number; substitution?: true; hereDocument?: true; special?: string; subshellSpecial?: string; subshellUnsure?: true; unclosed?: true; body?: "later" | "group" } | undefined {
  if (!written.includes("[[") && !written.includes("source") && !written.includes("function") && !written.includes("=(") && !written.includes("<<<") && !ARRAY_EXPANSION.test(written)) return undefined;
  // Its here-documents' bodies are text (or another shell's) to this reading: blanked, at the same indexes and lines, but for what sh expands there (see outsideHereDocuments).
  const run = outsideHereDocuments(written);
  if (run === undefined) return undefined;
  let first: { kind: BashismKind; text: string; index: number; substitution: boolean } | undefined;
  const cases = casePatternEnds(run);
  for (const { kind, pattern, afterCase, commandOnly, inDoubleQuotes } of BASHISMS) {
    // Each pattern's candidates come in order: what is before each is read once, from where the one before it was (a run of many skipped ones stays quick).
    const reader = new RunReader(run);
    for (const match of bashismMatches(run, pattern, afterCase, cases)) {
      const index = match.index + match.text.lastIndexOf(match.captured);
      if (first !== undefined && index >= first.index) break;
      // Arithmetic, `$((a=(1+2)*3))`, `((i++))`: no command there (a `$(`, a command substitution, has one).
      if (match.text.startsWith("(") && run[match.index - 1] === "(") continue;
      const read = reader.at(index);
      // `$(( (n=(n+1)) % 3 ))`: an assignment in arithmetic, which sh takes.
      if (kind === "array" && commandOnly && read.inArithmetic) continue;
      // `$((1<<<2))`: no redirection in arithmetic, where sh refuses it otherwise ("expecting primary").
      if (kind === "<<<" && read.inArithmetic) continue;
      if (read.inLineComment) continue;
      // `$${a[0]}`: the shell's pid, then text.
      if (kind === "array" && !commandOnly && afterPid(run, index)) continue;
      // Where sh reads it: the innermost of the quotes, `$(...)` and backquoted commands open there (`"$(source x)"` runs it).
      const context = read.context;
      if (context === "unsure" || (inDoubleQuotes === true ? context === "'" : context === "'" || context === '"' || context === "${")) continue;
      // A backquote that starts a command opens one (`` x=`[[ -f a ]]` ``), not one that closes it.
      if (match.text.startsWith("`") && context !== "`") continue;
      // In a backquoted command, sh (dash) ends that command at a syntax error without a word, its status 0, and goes on: an array's
      // assignment there (`` x=`a=(1)` ``) fails unsaid, and `function f` runs a command named function (127), neither as said here.
      if (read.substitution === "`" && (kind === "function" || (kind === "array" && commandOnly))) continue;
      first = { kind, text: kind === "<<<" ? hereString(context === "`" ? run.slice(0, closingBackquote(run, read.opened)) : run, index) : match.captured.trim(), index, substitution: read.substitution !== undefined };
      break;
    }
  }
  if (first === undefined) return undefined;
  // An array's expansion in a command substitution (`$(echo ${a[0]})`) ends that substitution's shell, not the task's.
  const substitution = first.kind === "array" && first.text.startsWith("$") && first.substitution;
  // One in a here-document's body (`cat <<EOF` then `${a[0]}`, or in a `$(...)` there) is text meant, most likely; an array's expansion
  // there (not in a `$(...)`) fails the command whose body it is, which sh does not run, and no more, but for a special builtin's (`: <<EOF`).
  const hereDocument = expandedBodyAt(written, first.index);
  // `function f {` with its body on the lines after, or `function f` then `{` on the next line: no syntax error on that line (see FUNCTION_BODY).
  const rest = first.kind === "function" ? run.slice(first.index + first.text.length).split("\n")[0]! : "";
  const body = first.kind !== "function" || FUNCTION_ON_ITS_LINE.test(rest) ? undefined : /^[ \t]*(?:#.*)?$/.test(rest) ? "group" : "later";
  return {
    kind: first.kind,
    text: first.text,
    line: run.slice(0, first.index).split("\n").length,
    ...(substitution ? { substitution: true as const } : {}),
    ...(hereDocument === undefined ? {} : { hereDocument: true as const }),
    ...(hereDocument?.special === undefined ? {} : { special: hereDocument.special }),
    ...(hereDocument?.subshellSpecial === undefined ? {} : { subshellSpecial: hereDocument.subshellSpecial }),
    ...(hereDocument?.subshellUnsure === undefined ? {} : { subshellUnsure: true as const }),
    ...(pastUnclosed(hereDocument, first.index) ? { unclosed: true as const } : {}),
    ...(body === undefined ? {} : { body }),
  };
}

type Context = "'" | '"' | "$(" | "${" | "`" | "unsure" | undefined;

/** A word as a `case` or one of its patterns has it, read here only when it is one of these: plain characters, `\x`, `$name` (read whole, as in ASSIGNED_VALUE), `${name}`, `'...'` and `"..."` of these. */
const CASE_WORD = /(?:[^\s;&|()<>'"`\\$]|\\[^\n]|\$(?:[A-Za-z_]\w*(?!\w)|[0-9@*#?$!-]|\{[A-Za-z_]\w*\})|'[^']*'|"(?:[^"`\\$]|\\[^\n]|\$(?:[A-Za-z_]\w*(?!\w)|[0-9@*#?$!-]|\{[A-Za-z_]\w*\}))*")+/.source;
/** A `case`'s word and its `in`, read from the `case`. */
const CASE_HEAD = new RegExp(String.raw`case[ \t]+${CASE_WORD}\s+in(?=\s)`, "y");
/** What comes where a `case`'s pattern may: blanks, lines, comments. */
const CASE_GAP = /(?:\s|#[^\n]*)*/y;
/** The `esac` that ends a case, where its pattern would come. */
const CASE_END = /esac(?=[\s;&|)]|$)/y;
/** A case's patterns up to their `)`: `x)`, `(a | *.md)`. */
const CASE_PATTERNS = new RegExp(String.raw`\(?[ \t]*${CASE_WORD}(?:[ \t]*\|[ \t]*${CASE_WORD})*[ \t]*\)`, "y");

/**
 * What sh reads the end of a run's first `end` characters inside, as it reads it, for ends asked in increasing order, each read
 * on from where the one before it ended (so a run is read once, however many are asked).
 * context: the innermost of the quotes, `$(...)`, `${...}` and backquoted commands open there (inside the last three quoting starts
 * afresh; a `$((` is read as a `$(`), undefined for none; "unsure" where a `${...}` holds a quote (whose reading differs between
 * shells), at a `case`'s word or patterns in a `$(...)` (a `case` there is followed, its patterns' `)` ending no `$(...)`, where
 * it is a command's first word after the `$(`, `;`, `&`, `|`, `(`, a line's start or a pattern's `)`, its word and patterns plain
 * enough to read here; from another `case` there on), and from a backquote never closed on. A backquoted command is what is
 * before the next backquote not escaped, as sh finds it before reading it: what it leaves open ends there. A comment, from an
 * unquoted # that starts a word (after a blank, `;`, `&`, `|`, `(`, `)`, `<`, `>` or an opening backquote), to the line's end
 * or the backquoted command's.
 * inLineComment: whether the end's line has a # before it at the line's start or after a blank, `;`, `&`, `|`, `(` or `)` (quoted or not).
 * opened: where the innermost of those opens (a `$(`'s `(`, a quote or backquote), -1 for none.
 * inArithmetic: whether the end is inside the last arithmetic expansion, `$(( ...`, its parentheses not closed (counted as written).
 * inComment: whether the end is in a comment as sh reads it (outside quotes, see context).
 * What passOver is told (a here-document's body, see outsideHereDocuments) is passed over by both readings, as if not there.
 */
export class RunReader {
  /** What is open, innermost last: `open`, a `$(`'s `(`; a `case` in a `$(...)`, reading a pattern or a branch (`depth`: its parentheses open; `body`: where it starts). */
  private readonly stack: ({ kind: "'" | '"' | "$(" | "${" | "`"; depth: number; open: number } | { kind: "case"; part: "pattern" | "body"; depth: number; body: number })[] = [];
  /** Where the backquoted commands open end (their closing backquotes), innermost last. */
  private readonly closings: number[] = [];
  /** The next character to read for the context, and whether "unsure" was read. */
  private index = 0;
  private unsure = false;
  /** The end of a case's word or patterns read ahead of an end asked inside them (unsure there). */
  private unsureUntil = 0;
  /** The next character to read for the line's comment and arithmetic; the line's start, whether a # was read on it; the last `$((` and the parentheses open since it. */
  private scanned = 0;
  private lineStart = 0;
  private hashed = false;
  private arithmetic = -1;
  private parens = 0;
  /** The last comment read for the context: from its # to just past its end. */
  private comment = { from: -1, to: -1 };
  /** What is passed over, in order; the first of them not yet passed by each reading. */
  private readonly passed: { from: number; to: number }[] = [];
  private passedByLines = 0;
  private passedByContext = 0;

  constructor(private readonly run: string) {}

  at(end: number): { context: Context; opened: number; inLineComment: boolean; inComment: boolean; inArithmetic: boolean; substitution: "$(" | "`" | undefined } {
    this.readLines(end);
    const context = this.readContext(end);
    const opened = this.stack.findLast((open) => open.kind !== "case")?.open ?? -1;
    // The innermost command substitution open there, a `$(...)` (not `$((`) or a backquoted command, in quotes or not.
    const substitution = this.stack.findLast((open) => open.kind === "`" || (open.kind === "$(" && this.run[open.open + 1] !== "("))?.kind as "$(" | "`" | undefined;
    const inComment = end >= this.comment.from && end < this.comment.to;
    return { context, opened, inLineComment: this.hashed, inComment, inArithmetic: this.arithmetic !== -1 && this.parens > 0, substitution };
  }

  /** That `from` up to `to`, after what was asked so far, is to be passed over: a here-document's body, whose text is no command. */
  passOver(from: number, to: number): void {
    this.passed.push({ from, to });
  }

  /** Where reading on from `index` goes (`index`, or the end of what is passed over there); `next`: which of passed is the first not passed yet. */
  private passing(index: number, next: "passedByLines" | "passedByContext"): number {
    while (this[next] < this.passed.length && this.passed[this[next]]!.to <= index) this[next]++;
    const passed = this.passed[this[next]];
    return passed !== undefined && index >= passed.from ? passed.to : index;
  }

  private readLines(end: number): void {
    const run = this.run;
    for (; this.scanned < end; this.scanned++) {
      if (this.passed.length > 0) {
        const past = this.passing(this.scanned, "passedByLines");
        if (past !== this.scanned) {
          // Passed over from a line's start to a line's start.
          this.scanned = past - 1;
          this.lineStart = past;
          this.hashed = false;
          continue;
        }
      }
      const at = this.scanned;
      const char = run[at]!;
      if (char === "\n") {
        this.lineStart = at + 1;
        this.hashed = false;
      } else if (char === "#" && (at === this.lineStart || /[ \t;&|()]/.test(run[at - 1]!))) this.hashed = true;
      if (char === "(" && at >= 2 && run[at - 1] === "(" && run[at - 2] === "$") {
        // A `$((` read whole: the parentheses are counted from its `$`.
        this.arithmetic = at - 2;
        this.parens = 2;
      } else if (this.arithmetic !== -1 && (char === "(" || char === ")")) this.parens += char === "(" ? 1 : -1;
    }
  }

  private readContext(end: number): Context {
    // Inside a case's word or patterns, read ahead once.
    if (end < this.unsureUntil) return "unsure";
    const run = this.run;
    const stack = this.stack;
    while (!this.unsure && this.index < end) {
      if (this.passed.length > 0) {
        const past = this.passing(this.index, "passedByContext");
        if (past !== this.index) {
          this.index = past;
          continue;
        }
      }
      const index = this.index;
      if (index === this.closings.at(-1)) {
        // A backquoted command's end: what is open inside it ends with it (a quote left open there is sh's syntax error).
        this.closings.pop();
        while (stack.pop()?.kind !== "`");
        this.index++;
        continue;
      }
      const char = run[index]!;
      const top = stack.at(-1);
      if (top?.kind === "case" && top.part === "pattern") {
        // Where a pattern or the `esac` comes: read whole, the end asked not in it.
        CASE_GAP.lastIndex = index;
        const start = index + CASE_GAP.exec(run)![0].length;
        if (start >= end) {
          this.index = start;
          break;
        }
        CASE_END.lastIndex = start;
        CASE_PATTERNS.lastIndex = start;
        const ended = run[start] === "(" ? null : CASE_END.exec(run);
        const patterns = ended === null ? CASE_PATTERNS.exec(run) : null;
        if (ended === null && patterns === null) {
          this.unsure = true;
          break;
        }
        const after = start + (ended ?? patterns)![0].length;
        this.index = start;
        if (after > end) {
          this.unsureUntil = after;
          return "unsure";
        }
        this.index = after;
        if (ended !== null) stack.pop();
        else Object.assign(top, { part: "body", body: after });
        continue;
      }
      this.index++;
      if (top?.kind === "'") {
        if (char === "'") stack.pop();
        continue;
      }
      if (char === "\\") {
        this.index++;
        continue;
      }
      if (char === "`") {
        // sh finds the next backquote not escaped first, and reads what is between as a command, quoting afresh: never closed, unsure.
        const close = closingBackquote(run, index);
        if (close === -1) this.unsure = true;
        else {
          stack.push({ kind: "`", depth: 0, open: index });
          this.closings.push(close);
        }
        continue;
      }
      const next = run[index + 1];
      if (char === "$" && next === "$") {
        // `$$`, the shell's pid: its second `$` opens nothing (`"$$(x"` is the pid, then text).
        this.index++;
        continue;
      }
      /** In a `$(...)` or a case's branch there: where a command may begin. */
      const commands = top?.kind === "$(" || top?.kind === "case";
      if (char === "$" && (next === "(" || next === "{")) {
        // A `$` that ends what is asked opens nothing there: read again with what follows it.
        if (index + 1 >= end) {
          this.index = index;
          break;
        }
        stack.push({ kind: `$${next}`, depth: 0, open: index + 1 });
        this.index++;
      } else if (top?.kind === '"') {
        if (char === '"') stack.pop();
      } else if (top?.kind === "${" && char === "}") {
        stack.pop();
      } else if (char === '"' || char === "'") {
        if (top?.kind === "${") this.unsure = true;
        else stack.push({ kind: char, depth: 0, open: index });
      } else if (commands && char === ")") {
        if (top.depth > 0) top.depth--;
        else if (top.kind === "case") this.unsure = true;
        else stack.pop();
      } else if (commands && char === "(") {
        top.depth++;
      } else if (top?.kind === "case" && char === ";" && next === ";") {
        // `;;`: a pattern comes next, or the `esac`.
        if (index + 1 >= end) {
          this.index = index;
          break;
        }
        top.part = "pattern";
        this.index++;
      } else if (commands && (run.startsWith("case", index) || (top.kind === "case" && run.startsWith("esac", index))) && /[\s;&|(]/.test(run[index - 1]!) && (char === "c" ? /\s/ : /[\s;&|)]|^$/).test(run[index + 4] ?? "")) {
        // A `case` or `esac` whose end is not asked yet is a word: read again with what follows it.
        if (index + 4 >= end) {
          this.index = index;
          break;
        }
        if (!this.commandStarts(index)) {
          // `echo case x in y)`, `if a; then case`: not followed here.
          this.unsure = true;
        } else if (char === "e") {
          stack.pop();
          this.index = index + 4;
        } else {
          CASE_HEAD.lastIndex = index;
          const head = CASE_HEAD.exec(run);
          if (head === null) this.unsure = true;
          else if (index + head[0].length > end) {
            this.index = index;
            this.unsureUntil = index + head[0].length;
            return "unsure";
          } else {
            stack.push({ kind: "case", part: "pattern", depth: 0, body: -1 });
            this.index = index + head[0].length;
          }
        }
      } else if (char === "#" && (index === 0 || /[\s;&|()<>]/.test(run[index - 1]!) || (top?.kind === "`" && top.open === index - 1))) {
        // A comment, to the line's end or the backquoted command's.
        const lineEnd = run.indexOf("\n", index);
        this.index = Math.min(lineEnd === -1 ? run.length : lineEnd + 1, this.closings.at(-1) ?? Infinity);
        this.comment = { from: index, to: this.index };
      }
    }
    if (this.unsure) return "unsure";
    const innermost = stack.findLast((open) => open.kind !== "case");
    return innermost?.kind;
  }

  /**
   * The innermost quote the run's first `end` characters leave open, read as they would be alone (see openQuote), and where
   * it opens; "unsure" too where a backquoted command or a case's pattern is open there, whose end they do not hold.
   */
  openQuote(end = this.run.length): { quote: "'" | '"'; index: number } | "unsure" | undefined {
    if (this.at(end).context === "unsure" || this.closings.length > 0) return "unsure";
    const top = this.stack.at(-1);
    if (top?.kind === "case" && top.part === "pattern") return "unsure";
    for (let at = this.stack.length - 1; at >= 0; at--) {
      const open = this.stack[at]!;
      if (open.kind === "'" || open.kind === '"') return { quote: open.kind, index: open.open };
    }
    return undefined;
  }

  /** Whether a command begins at `index`, in the `$(...)` (not `$((`) or case branch innermost there: after its `(`, a pattern's `)`, `;`, `&`, `|`, `(` or a line's end, and blanks. */
  private commandStarts(index: number): boolean {
    const run = this.run;
    const top = this.stack.at(-1)!;
    let before = index - 1;
    while (run[before] === " " || run[before] === "\t") before--;
    if (top.kind === "case") {
      if (before === top.body - 1) return true;
    } else if (run[top.open + 1] === "(") return false;
    else if (before === top.open) return true;
    return /[;&|(\n]/.test(run[before]!) && run[before - 1] !== "\\";
  }
}

/** Whether the `$` at `run[index]` is the second of a `$$`, the shell's pid (`$${a[0]}` is the pid, then text): an odd number of `$` before it, the first not escaped. */
function afterPid(run: string, index: number): boolean {
  let dollars = 0;
  while (run[index - 1 - dollars] === "$") dollars++;
  if (dollars > 0 && escapedAt(run, index - dollars)) dollars--;
  return dollars % 2 === 1;
}

/** Whether `run[index]` is escaped: an odd number of backslashes before it. */
export function escapedAt(run: string, index: number): boolean {
  let backslashes = 0;
  while (run[index - 1 - backslashes] === "\\") backslashes++;
  return backslashes % 2 === 1;
}

/**
 * Where the GitHub Actions expression, `${{ ... }}`, that starts at each index asked of `text` ends (just past the first `}}` after its
 * `${{` on its line), -1 where none does; asked in increasing order, each `}}` and line's end is found once: as a lazy regular expression,
 * each `${{` read the rest of its line again, and a line of 20,000 `${{ x }` took over a second.
 */
export function actionsExpressionEnds(text: string): (at: number) => number {
  let close = -2;
  let lineEnd = -2;
  return (at) => {
    if (close !== -1 && close < at + 3) close = text.indexOf("}}", at + 3);
    if (lineEnd !== -1 && lineEnd < at) lineEnd = text.indexOf("\n", at);
    return close !== -1 && (lineEnd === -1 || close < lineEnd) ? close + 2 : -1;
  };
}

/** Each GitHub Actions expression, `${{ ... }}`, in `text`, in order (see actionsExpressionEnds): where it starts and ends, and what is inside. */
function* actionsExpressions(text: string): Generator<{ index: number; end: number; inside: string }, undefined> {
  const ends = actionsExpressionEnds(text);
  for (let index = text.indexOf("${{"); index !== -1; ) {
    const end = ends(index);
    if (end !== -1) yield { index, end, inside: text.slice(index + 3, end - 2) };
    index = text.indexOf("${{", end === -1 ? index + 1 : end);
  }
}

/**
 * A here-string's `<<<` and its word, as sh reads the word (a `$(...)` in it whole), in `run` (up to the backquote that ends the
 * backquoted command it is in): `<<<` alone where the word is not read here (never closed, or of several lines).
 */
function hereString(run: string, index: number): string {
  let start = index + 3;
  while (run[start] === " " || run[start] === "\t") start++;
  const word = readWord(run, start, 0);
  if (word === undefined || word.text.includes("\n")) return "<<<";
  return run.slice(index, word.end).trim();
}

/** An array's expansion, `${arr[0]}`, `${#arr[@]}`: a run without one is not read for it (`${HOME}` is common). */
const ARRAY_EXPANSION = /\$\{#?[A-Za-z_]\w*\[/;

/**
 * What follows `function name` on its line where sh refuses that line (a syntax error, exit 2): `()`, or a `{` and the `}` that ends the body.
 * Otherwise sh runs `function` as a command (127) and then the body's lines (FUNCTION_BODY).
 */
const FUNCTION_ON_ITS_LINE = /^[ \t]*(?:\(|\{.*[\s;&]\}(?:[\s;&|)]|$))/;
/** What sh makes of a `function name` whose body is on the lines after it (`function f {`), or in a `{ }` group on the next line (`function f` then `{`). */
const FUNCTION_BODY = {
  later: {
    fails: `bash's way to define a function, which SHELL here does not have: a run is run by /bin/sh -c, not bash, so sh runs function as a command it does not find (127), then the body's lines at once, and exits 2 at the } that ends them (a syntax error), running nothing after it`,
    instead: "write name() { ...; }",
  },
  group: {
    fails: `bash's way to define a function, which SHELL here does not have: a run is run by /bin/sh -c, not bash, so sh runs function as a command it does not find (127), then the { } group after it at once; no function is defined, and a call of it fails with 127`,
    instead: "write name() { ...; }",
  },
};

/**
 * What each of bashismIn's constructs does under a sh without it (dash), and what to write instead in sh, if anything; `fails`: what an
 * array's expansion ends (the task, the command substitution it is in, or the command whose here-document's body it is in).
 */
const BASHISM_FAILURES: Record<BashismKind, (text: string, fails: string) => { fails: string; instead?: string }> = {
  "[[": () => ({
    fails: `bash's test syntax, which SHELL here does not have ("[[: not found"): a run is run by /bin/sh -c, not bash, so that test fails with 127 every time (an if or && takes it as false, silently)`,
    instead: "write [ ... ] (with = for ==, and no && inside)",
  }),
  source: (text) => ({
    fails: `bash's name for the . command, which SHELL here does not have ("source: not found"): a run is run by /bin/sh -c, not bash, so the file is never read (exit 127)`,
    instead: `write ${text.replace(/^source/, ".")}`,
  }),
  function: () => ({
    fails: `bash's way to define a function, which SHELL here refuses (a syntax error): a run is run by /bin/sh -c, not bash, so the task exits 2 at that line and runs nothing from it on`,
    instead: "write name() { ...; }",
  }),
  array: (text, fails) => ({
    fails: text.startsWith("$")
      ? `an array, which SHELL here does not have ("Bad substitution"): a run is run by /bin/sh -c, not bash, so ${fails}`
      : `an array, which SHELL here does not have (a syntax error: "(" unexpected): a run is run by /bin/sh -c, not bash, so the task exits 2 at that line and runs nothing from it on`,
  }),
  // In a `$(...)` or backquoted command too, sh refuses the whole line before it runs any of it.
  "<<<": (text) => ({
    fails: `bash's here-string, which SHELL here refuses (a syntax error: "redirection unexpected"): a run is run by /bin/sh -c, not bash, so the task exits 2 at that line and runs nothing from it on`,
    instead: `write printf '%s\\n' ${text.replace(/^<<<[ \t]*/, "") || "..."} | command, or a here-document (for read, whose variables a pipe would lose)`,
  }),
};

/** The note for bashismIn's construct in a run (`multiline`: of several lines), where `shell`, this machine's /bin/sh (`/bin/sh (dash)`), refuses it. */
export function bashismNote(
  found: { kind: BashismKind; text: string; line: number; substitution?: true; hereDocument?: true; special?: string; subshellSpecial?: string; subshellUnsure?: true; unclosed?: true; body?: "later" | "group" },
  multiline: boolean,
  shell: string,
): string {
  const where = multiline ? ` (its line ${found.line})` : "";
  const text = shortened(found.text);
  const fails =
    found.substitution === true
      ? "the command substitution it is in exits 2 there and runs nothing after it"
      : found.hereDocument === true
        ? hereDocumentFails(found.special, found.subshellSpecial, found.subshellUnsure)
        : "the task exits 2 there and runs nothing after it";
  const { fails: failure, instead } = found.body === undefined ? BASHISM_FAILURES[found.kind](found.text, fails) : FUNCTION_BODY[found.body];
  // Past a `$(...)` of the body that is never closed: what the construct is, then the syntax error sh stops at before it runs any of it.
  if (found.unclosed === true) return `run has ${text}${where}, ${failure.slice(0, failure.indexOf(": a run is run by")).replace("SHELL", shell)}, but ${UNCLOSED_BODY_FAILS}; ${AS_TEXT}`;
  // In a here-document's body, what sh expands was meant as the text it writes, most likely (`cat > gen.sh <<EOF`): run by bash, it would be expanded unsaid.
  if (found.hereDocument === true) return `run has ${text}${where}, ${failure.replace("SHELL", shell)}; ${AS_TEXT}`;
  const bash = `${instead === undefined ? "" : `${instead}; or `}run the commands with bash (bash -c '...', or a script file that begins with #!/bin/bash)`;
  return `run has ${text}${where}, ${failure.replace("SHELL", shell)}; ${bash}`;
}

/** What to write for what sh expands in a here-document's body, to write it as text. */
const AS_TEXT = "to write it as text, quote the here-document's delimiter (<<'EOF') or escape it (\\${, \\$(, a \\ before a backquote)";

/**
 * `run: echo ${{ github.sha }}`, copied from a GitHub Actions step: the runner replaces `${{ ... }}`
 * before bash sees it, but taskq replaces nothing, and to sh it is a bad substitution (dash:
 * "Bad substitution", exit 2), which ends the task's shell there (or the command substitution it is in, or fails the command
 * whose here-document it is in), found only once the task runs. The first one outside single quotes and comments, and outside
 * here-documents' bodies but where sh expands it (a body whose delimiter is unquoted: see outsideHereDocuments), with what to write
 * instead: the variable the runner sets for a `github.x` (`$GITHUB_SHA`), the variable itself for
 * an `env.X`, and otherwise a variable the step's `env:` gives taskq.
 */
export function actionsExpressionNote(written: string): string | undefined {
  if (!written.includes("${{")) return undefined;
  // Its here-documents' bodies are text to this reading: blanked, at the same indexes and lines, but for what sh expands there (see outsideHereDocuments).
  const run = outsideHereDocuments(written);
  if (run === undefined) return undefined;
  const reader = new RunReader(run);
  for (const match of actionsExpressions(run)) {
    const read = reader.at(match.index);
    if (read.inLineComment || read.context === "'" || read.context === "unsure") continue;
    // `\${{ x }}`: the backslash keeps the `$`, and sh prints the characters as written; `$${{ x }}`, the shell's pid, then text.
    if (escapedAt(run, match.index) || afterPid(run, match.index)) continue;
    const before = run.slice(0, match.index);
    const expression = run.slice(match.index, match.end);
    const where = run.includes("\n") ? ` (its line ${before.split("\n").length})` : "";
    const body = expandedBodyAt(written, match.index);
    const instead = actionsInstead(match.inside.trim());
    const fails = badSubstitutionFails(body, match.index, read.substitution !== undefined);
    return `run has ${expression}${where}, GitHub Actions' expression syntax, which taskq does not replace: /bin/sh refuses it as a bad substitution, and ${fails}; ${body === undefined ? instead : `${instead}; or, ${AS_TEXT}`}`;
  }
  return undefined;
}

/**
 * What a bad substitution in a here-document's body does: sh runs no command whose redirection fails, and goes on; but a special
 * builtin's (`: <<EOF`) ends the shell, or the subshell it is in (`( echo; : <<EOF`); where whether it is in one is not read
 * (`subshellUnsure`), the task or that subshell, never "the task goes on".
 */
function hereDocumentFails(special: string | undefined, subshellSpecial?: string, subshellUnsure?: true): string {
  if (special !== undefined && subshellUnsure === true) {
    return `the task, or the subshell it is in, exits 2 there and runs nothing after it (the here-document is ${special}'s, a special builtin, whose failed redirection ends the shell it runs in)`;
  }
  if (special !== undefined) return `the task exits 2 there and runs nothing after it (the here-document is ${special}'s, a special builtin, whose failed redirection ends the shell)`;
  if (subshellSpecial !== undefined) {
    return `the subshell it is in exits 2 there and runs nothing after it (the here-document is ${subshellSpecial}'s, a special builtin, whose failed redirection ends the subshell); the task goes on (under set -e, it ends there)`;
  }
  return "the command whose here-document it is in fails (exit 2) without running; the task goes on (under set -e, it ends there)";
}

/** What sh does with a run whose here-document's body holds a `$(...)` never closed: see pastUnclosed. */
const UNCLOSED_BODY_FAILS = "sh refuses the run from the command whose here-document it is in on (a syntax error: the command substitution it is in is never closed), running none of it";

/** Whether `index` is past the start of a `$(...)` or backquoted command never closed in the here-document's `body`: sh refuses the run from that body's command on before it expands any of it. */
function pastUnclosed(body: ExpandedBody | undefined, index: number): boolean {
  return body?.unclosed !== undefined && index > body.unclosed;
}

/**
 * What fails where sh refuses an expansion at `index` as a bad substitution: the command substitution it is in (whose output is then
 * empty), the command whose here-document's `body` it is in (see hereDocumentFails), or the task. In a `$(...)` of a body that is never
 * closed, sh never gets that far: it refuses the run from that command on.
 */
function badSubstitutionFails(body: ExpandedBody | undefined, index: number, substitution: boolean): string {
  if (pastUnclosed(body, index)) return `before that, ${UNCLOSED_BODY_FAILS}`;
  if (substitution) return "the command substitution it is in exits 2 there (its output empty)";
  if (body !== undefined) return hereDocumentFails(body.special, body.subshellSpecial, body.subshellUnsure);
  return "the task fails there";
}

/**
 * `env: { TOKEN: "${{ secrets.TOKEN }}" }`, copied from a GitHub Actions workflow: taskq replaces
 * no `${{ ... }}`, so the task gets those characters, and a deploy given them as its token fails
 * far from here, or worse, does not. Said with where the value should come from instead: the
 * step that runs taskq, whose `env:` the runner does replace, and which every task inherits.
 */
export function actionsExpressionEnvNote(name: string, value: string): string | undefined {
  const first = actionsExpressions(value).next().value;
  if (first === undefined) return undefined;
  const written = value.slice(first.index, first.end);
  return `the value of ${name} holds ${written}, GitHub Actions' expression syntax, which taskq does not replace: the task gets those characters as written; set ${name} in the env: of the step that runs taskq instead (every task inherits taskq's environment), and leave it out here`;
}

/** What to write in a run instead of `${{ expression }}`. */
/**
 * The `github` context's fields for which the runner sets a GITHUB_ variable of the same name (its default
 * variables): any other (`github.token`, `github.event`, `github.action_status`) has none to write instead.
 */
const GITHUB_VARIABLE_FIELDS = new Set(
  (
    "action action_path action_repository actor actor_id api_url base_ref env event_name event_path graphql_url head_ref job output path ref ref_name " +
    "ref_protected ref_type repository repository_id repository_owner repository_owner_id retention_days run_attempt run_id run_number server_url sha " +
    "step_summary triggering_actor workflow workflow_ref workflow_sha workspace"
  ).split(" "),
);

function actionsInstead(expression: string): string {
  const github = /^github\.([a-z_]+)$/.exec(expression);
  if (github !== null && GITHUB_VARIABLE_FIELDS.has(github[1]!)) return `the runner sets $GITHUB_${github[1]!.toUpperCase()} for ${expression}, in taskq's environment and so in every task's: write that`;
  const env = /^env\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(expression);
  if (env !== null) return `${expression} is the variable ${env[1]}, in taskq's environment and so in every task's: write $${env[1]}`;
  return "give the value to taskq's environment in the step that runs it (env: { NAME: ${{ ... }} }), and write $NAME here";
}

/**
 * `PATH: "./bin:$PATH"`: env values are passed as written, so the task's PATH would hold the
 * characters `$PATH` instead of taskq's PATH, and every command outside ./bin fail with 127 (not
 * found), nothing saying why. A value that names its own variable can only mean to extend it: say
 * so, and what to write instead. Other `$` go unsaid: a password may hold one. The value is not
 * quoted, as env values never are in what taskq prints (CI logs).
 */
export function selfReferenceNote(name: string, value: string): string | undefined {
  if (!value.includes("$")) return undefined;
  const written = [...value.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].find((match) => match[1] === name)?.[0];
  if (written === undefined) return undefined;
  const own = written.startsWith("${") ? `\${${name}}` : `$${name}`;
  return `the value of ${name} holds ${own}, which is not expanded: the task gets those characters as written, not taskq's own ${name} with more added; set it at the start of the run instead, where the shell expands it (export ${name}="...")`;
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The quote (`'` or `"`) that `command` leaves open, as sh reads it; undefined when none is; "unsure" where this reading is (see openQuote). */
export function unclosedQuote(command: string): "'" | '"' | "unsure" | undefined {
  const open = openQuote(command);
  return open === "unsure" ? open : open?.quote;
}

/**
 * unclosedQuote of `command`'s first `end` characters, for ends asked in increasing order: the command is read once,
 * however many are asked (unclosedQuote of each reads it from its start).
 */
export function unclosedQuotes(command: string): (end: number) => "'" | '"' | "unsure" | undefined {
  const reader = new RunReader(command);
  let quoted = 0;
  return (end) => {
    // As openQuote: none where no quote is.
    while (quoted < end && command[quoted] !== '"' && command[quoted] !== "'") quoted++;
    if (quoted >= end) return undefined;
    const open = reader.openQuote(end);
    return open === "unsure" ? open : open?.quote;
  };
}

/**
 * `run: echo "unterminated`: a quote the shell never sees closed, which makes it refuse the whole
 * command (dash: "Syntax error: Unterminated quoted string") once the task starts, though the
 * file validated. On a later line of the run, the shell has run the commands complete before that line when it
 * refuses the rest. A note, not an error: this reads the shell's quoting, not all of its grammar.
 * None for a quote in a here-document's body (its lines are text, quotes and all), but in a `$(...)` there
 * where its delimiter is unquoted, which sh parses (`$(echo "it's)`; not in a backquoted command there, which sh parses too), in a run whose here-documents are read here (see outsideHereDocuments), nor for a run with a `case` outside them (whose patterns end in a `)` that a
 * `$(` here would take as its own).
 */
export function unclosedQuoteNote(written: string): string | undefined {
  // Its here-documents' bodies blanked, at the same indexes and lines, but for what sh expands there (see outsideHereDocuments).
  const run = outsideHereDocuments(written);
  if (run === undefined || /\bcase\b/.test(run)) return undefined;
  const open = openQuote(run);
  if (open === undefined || open === "unsure") return undefined;
  const rest = written.slice(open.index).split("\n")[0]!;
  const shown = shortened(rest, 30);
  const line = run.slice(0, open.index).split("\n").length;
  const where = run.includes("\n") ? ` (its line ${line})` : "";
  const asText = open.quote === '"' ? `\\" (or inside '...')` : `\\' (or inside "...")`;
  // sh reads and runs a command at a time: on a later line, those complete before it have run when it fails (`echo
  // first` then `echo "done` prints first, then exits 2); an `if`, a loop or a line ended by `&&` or `\` that goes on
  // to the quote's line is not complete before it.
  // In a `$(...)` of a here-document's body, sh reads the body with the command whose here-document it is (on an earlier line): it refuses the run from that command on.
  const body = expandedBodyAt(written, open.index);
  const refused =
    body !== undefined
      ? "sh refuses the run from the command whose here-document it is in on (a syntax error: unterminated quoted string), running none of it"
      : line === 1
        ? "the shell refuses the whole command (a syntax error: unterminated quoted string) and runs none of it"
        : "the shell runs the commands complete before its line, then refuses the rest (a syntax error: unterminated quoted string)";
  // In a `$(...)` of a here-document's body, which sh parses: the text to write, most likely.
  const instead = body === undefined ? `write a ${open.quote} meant as text as ${asText}` : AS_TEXT;
  return `run leaves a ${open.quote} open, at ${shown}${where}: ${refused}; close it, or ${instead}`;
}

/**
 * The innermost quote that `command` leaves open, and where, as sh reads it (see RunReader): '...' (no escapes),
 * "..." (a backslash escapes the next character, as it does outside quotes), a comment from an
 * unquoted # that starts a word to the line's end, and quotes inside `$(...)`, `${...}` and backquoted commands read
 * afresh (one left open in a backquoted command ends with it: sh finds its closing backquote before reading what is
 * inside). `$'...'` is not POSIX: dash reads it as $ then '...', as this does. "unsure" when a `${...}` holds a quote
 * (whose reading differs between shells), a backquote is never closed, or a `case` in a `$(...)` is not read.
 */
function openQuote(command: string): { quote: "'" | '"'; index: number } | "unsure" | undefined {
  if (!command.includes('"') && !command.includes("'")) return undefined;
  return new RunReader(command).openQuote();
}

/** The index of the backquote that closes the one at `open` (a backslash escapes the next character), or -1. */
function closingBackquote(command: string, open: number): number {
  for (let index = open + 1; index < command.length; index++) {
    if (command[index] === "\\") index++;
    else if (command[index] === "`") return index;
  }
  return -1;
}

/** Words sh reads as its own grammar where a command's name would be: the next word is still one. */
const RESERVED_BEFORE_COMMAND = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "{"]);
/** Reserved words after which the next word is no command's name (`for x in ...`), or whose grammar this does not follow. */
const RESERVED_OTHER = new Set(["for", "select", "case", "esac", "in", "function", "fi", "done", "}", "[["]);
/** Reserved words that end a compound command: `then`, `do`, `else` or `elif` may follow one on its line (`if (cd x) then`). */
const COMPOUND_END = new Set(["fi", "done", "}"]);
/** Reserved words that may follow a compound command's end (`)`, `}`, `fi`, `done`) with no `;` between, after which a command's name comes (or another end). */
const AFTER_COMPOUND = new Set(["then", "do", "else", "elif"]);
/** A redirection's operator (`>`, `2>&1`'s `>&`, `<<-`, `>|`), read where it starts. */
const REDIRECTION = /[<>]+[&|-]?/y;
/** How deep `$(`, `${` and quotes inside each other are followed before the reading is given up. */
const MAX_SHELL_NESTING = 32;

/**
 * `run: make\u00a0&&\u00a0make test`, `run: npm\u00a0test` (pasted from a web page or a chat):
 * a no-break space (U+00A0) in the name of a command, which sh reads as part of that name,
 * finding no such command (exit 127). The index of the first such one: in the first word of the
 * run, of a line, or after `&&`, `||`, `;`, `|`, `&` or `(`, after a reserved word that a command
 * follows (`then`, `do`, `else`, `if`, `while`, `!`, `{`, ...; `then` after a `)`, `}`, `fi` or
 * `done` too: `if (cd x) then make`), after a variable's assignment or a redirection too (`2>&1
 * make`: a single digit glued to `<` or `>` is the redirection's, as dash reads it), the command
 * that env, exec, command, time or nohup runs (see WRAPPERS), outside quotes; and so inside a
 * `$(...)` of any word, unquoted or in "...", and in a `case`'s bodies (not its word or patterns).
 * Read once from left to right: quotes, `${...}`,
 * backquotes, comments and here-documents are passed over (but for a syntax error in a `$(...)` or
 * backquoted command of a word, or of a here-document's body whose delimiter is unquoted). Undefined where there is none, or
 * where this reading is unsure (a quote, here-document or `case` never closed, a here-document or
 * a `case` in a `$(...)`, whose pattern's `)` would end it, a reserved word glued to the next one;
 * a syntax error, exit 2, not 127: a `then`, `do`, `else` or `elif` after a `)`, `}`, `fi` or
 * `done` with no `if` or loop open for it (`(cd x) then make`), a `(` after a word (`echo (a)`,
 * `cat <(a)`) or a redirection with no word (`echo >;`), in a `$(...)` too; a function's name). `time` is no
 * reserved word to dash: a program (GNU time), which runs the next word by its name, as env does
 * (`time ! make` runs a program named `!`).
 */
export function commandNameNoBreakSpace(run: string): number | undefined {
  const at = noBreakInCommandName(run, 0);
  return at === REFUSED ? undefined : at;
}

/** What noBreakInCommandName returns for a run sh refuses whole as a syntax error (exit 2), a `$(...)` in it too (`x=$(echo (a)); make`). */
const REFUSED = -1;

/**
 * A command that runs the command its operands name (`env npm test`, `nohup make`): the next word
 * is a command's name, after the options taken here (`env -u NAME`, `command -p`) and, for env,
 * assignments. Any other option (`command -v`, which runs nothing), and sudo (which exits 1, not
 * 127, on a command not found), are not followed: the reading gives up on that command; nor is an
 * exec or command that env, nohup, time or exec runs (a program by that name, not sh's own).
 */
const WRAPPERS = new Map<string, { flags: Set<string>; withArgument: Set<string>; assignments: boolean }>([
  ["env", { flags: new Set(["-i", "-", "--ignore-environment", "--"]), withArgument: new Set(["-u"]), assignments: true }],
  ["command", { flags: new Set(["-p", "--"]), withArgument: new Set(), assignments: false }],
  ["exec", { flags: new Set(), withArgument: new Set(), assignments: false }],
  ["nohup", { flags: new Set(["--"]), withArgument: new Set(), assignments: false }],
  ["time", { flags: new Set(["-p", "--"]), withArgument: new Set(), assignments: false }],
]);

/** env after an assignment: more assignments, then the command's name; a word starting with `-` is that name. */
const ENV_AFTER_ASSIGNMENT = { flags: new Set<string>(), withArgument: new Set<string>(), assignments: true };

/** commandNameNoBreakSpace, in a `$(...)` read `depth` deep. */
function noBreakInCommandName(run: string, depth: number): number | undefined {
  // A `$(...)` is read even with no no-break space in it: a syntax error there refuses the whole run.
  if (depth > MAX_SHELL_NESTING || (depth === 0 && !run.includes("\u00a0"))) return undefined;
  let found: number | undefined;
  /** The command that runs the next word (see WRAPPERS), while its options are read; whether the word after one of them is its argument. */
  let wrapper: { flags: Set<string>; withArgument: Set<string>; assignments: boolean } | undefined;
  let argument = false;
  /** A wrapper other than `command` came first in this command: what it runs is a program found by its name, where sh's own `exec` and `command` are none. */
  let byName = false;
  /** The `case` commands open, innermost last: each reading its word, its `in`, a pattern (up to its `)`: `first`, where `esac` may end it) or a body's commands. */
  const cases: { part: "word" | "in" | "pattern" | "body"; first: boolean }[] = [];
  let command = true;
  /** Just after a compound command's end (`)`, `}`, `fi`, `done`), where `then`, `do`, `else` and `elif` are still reserved words. */
  let afterCompound = false;
  /** The `(` open that started a subshell (at a command's place): only the `)` closing one ends a compound command. */
  let subshells = 0;
  /** An assignment or a redirection came first in this command (`x=1 then`, `>f then`): a reserved word there is a command's name, not sh's grammar. */
  let prefixed = false;
  /** The `if`s and `elif`s read whose `then` is still to come, the loops whose `do` is, and the `then` parts not yet ended by `elif` or `fi`; unsure after a function's `()`. */
  const open: OpenCompounds = { conditions: 0, loops: 0, thenParts: 0, unsure: false };
  /** Here-documents whose bodies start at the next line: their delimiters, whether leading tabs are stripped, and whether the body is expanded (an unquoted delimiter). */
  const heredocs: (HereDocument & { expanded: boolean })[] = [];
  let index = 0;
  while (index < run.length) {
    const char = run[index]!;
    if (char === " " || char === "\t") {
      index++;
      continue;
    }
    if (char === "\\" && run[index + 1] === "\n") {
      index += 2;
      continue;
    }
    const compoundEnded = afterCompound;
    afterCompound = false;
    const inCase = cases.at(-1);
    if (inCase !== undefined && inCase.part !== "body" && /[;&|()<>\n]/.test(char) && !(inCase.part === "pattern" && /[|()\n]/.test(char))) {
      // Only a pattern's `|`, `(` and `)` are its grammar; anything else before the body is unsure.
      return undefined;
    }
    if (inCase?.part === "pattern" && (char === "|" || char === "(" || char === ")")) {
      // `(a|b)`: the patterns end at the `)`, where the body's first command comes. After a `(`, `esac` is a pattern (`(esac)`), not the end.
      index++;
      if (char === "(") inCase.first = false;
      if (char === ")") {
        inCase.part = "body";
        command = true;
        prefixed = false;
      }
      continue;
    }
    if (char === "\n") {
      index++;
      command = true;
      prefixed = false;
      wrapper = undefined;
      byName = false;
      for (const { expanded, ...delimiter } of heredocs.splice(0)) {
        // The body's lines, up to the one that is the delimiter.
        const body = hereDocumentBody(run, index, delimiter);
        if (body === undefined) return undefined;
        // Its `$(...)` and backquotes, sh parses with the command: a syntax error there refuses the whole run.
        if (expanded) {
          const refused = refusedInBody(run.slice(index, body.textEnd), depth);
          if (refused !== false) return refused;
        }
        index = body.end;
      }
    } else if (char === "#") {
      const end = run.indexOf("\n", index);
      index = end === -1 ? run.length : end;
    } else if (char === ";" || char === "|" || char === "&" || char === "(") {
      // `;;` ends a body of the innermost case: a pattern or `esac` follows.
      if (char === ";" && run[index + 1] === ";" && inCase?.part === "body") {
        inCase.part = "pattern";
        inCase.first = true;
      }
      // A `(` after a word opens no subshell: `f() {` names a function; `echo (a)`, `x=1 (a)` and `cat <(a)` are syntax errors (exit 2), not 127.
      if (char === "(" && command && !prefixed) subshells++;
      else if (char === "(" && !/^\([ \t]*\)/.test(run.slice(index))) return REFUSED;
      // A function's body is not followed as a command (`f() { if`: that `if` is not counted): what is open is unsure from here.
      else if (char === "(") open.unsure = true;
      index += run[index + 1] === char && char !== "(" ? 2 : 1;
      command = true;
      prefixed = false;
      wrapper = undefined;
      byName = false;
    } else if (char === ")") {
      index++;
      command = false;
      wrapper = undefined;
      byName = false;
      afterCompound = subshells > 0;
      if (subshells > 0) subshells--;
    } else if (char === "<" || char === ">") {
      // A redirection: its target is the word after it, and the command's name may still follow.
      const heredoc = hereDocumentOperator(run, index);
      if (command) prefixed = true;
      REDIRECTION.lastIndex = index;
      index += REDIRECTION.exec(run)![0].length;
      while (run[index] === " " || run[index] === "\t") index++;
      const target = readWord(run, index, depth);
      // No word to redirect to (`echo >; make`, `cat <(make)`, which dash does not know): a syntax error (exit 2), not 127.
      if (target === undefined) return undefined;
      if (target.text === "" || target.refused) return REFUSED;
      // A here-document's delimiter is not expanded (`<<$(x)` runs nothing).
      if (heredoc === undefined) found ??= target.substituted;
      else heredocs.push({ ...hereDocument(target.text, heredoc), expanded: !/["'\\]/.test(target.text) });
      index = target.end;
    } else {
      const word = readWord(run, index, depth);
      if (word === undefined) return undefined;
      if (word.refused) return REFUSED;
      index = word.end;
      // `x=$(npm\u00a0test)`, `echo "$(npm\u00a0test)"`: a command's name in a command substitution, in any word.
      if (word.substituted !== undefined && (word.noBreak === undefined || !command || word.substituted < word.noBreak)) found ??= word.substituted;
      const raw = run.slice(word.start, word.end);
      // `2>&1 make`: the digit is the redirection's (dash takes one digit: `12>f` runs a command named 12).
      if (/^[0-9]$/.test(raw) && (run[index] === "<" || run[index] === ">")) continue;
      if (inCase !== undefined && inCase.part !== "body") {
        // `case $x in`, then its patterns (the first may be `esac`, which ends it).
        if (inCase.part === "word") inCase.part = "in";
        else if (inCase.part === "in") {
          if (raw !== "in") return undefined;
          inCase.part = "pattern";
        } else if (raw === "esac" && inCase.first) {
          cases.pop();
          command = false;
        } else inCase.first = false;
        continue;
      }
      if (inCase?.part === "body" && command && !prefixed && raw === "esac") {
        // `a) make ;; b) test esac`: the last body needs no `;;`.
        cases.pop();
        command = false;
        continue;
      }
      if (!command && compoundEnded) {
        // `if (cd x) then make`, `while { read l; } do`: a reserved word after the end, which a command follows (or another end).
        // One with no `if` or loop open for it (`(cd x) then make`, `{ a; } else b`) is a syntax error (exit 2), not 127.
        if (AFTER_COMPOUND.has(raw) && !expected(open, raw)) return undefined;
        countReserved(open, raw);
        command = AFTER_COMPOUND.has(raw);
        prefixed = false;
        afterCompound = COMPOUND_END.has(raw);
        continue;
      }
      if (!command) continue;
      if (wrapper !== undefined) {
        if (argument) {
          argument = false;
          continue;
        }
        const assignment = /^[A-Za-z_][A-Za-z0-9_]*=/.test(raw);
        if (raw.startsWith("-") || (assignment && !wrapper.assignments)) {
          // An option not followed (`command -v`), or a word it would run as a command's name (`exec X=1`): unsure from here to the command's end.
          if (wrapper.flags.has(raw)) {
            if (raw === "--") wrapper = undefined;
          } else if (wrapper.withArgument.has(raw)) argument = true;
          else {
            command = false;
            wrapper = undefined;
          }
          continue;
        }
        // `env X=1 npm test`: env's assignment; the command's name follows, and no option of env's (`env X=1 -i` runs `-i`).
        if (assignment) {
          wrapper = ENV_AFTER_ASSIGNMENT;
          continue;
        }
        wrapper = undefined;
      } else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(raw)) {
        prefixed = true;
        continue;
      }
      const reserved = !prefixed;
      if (reserved && raw === "case") {
        cases.push({ part: "word", first: true });
        command = false;
        continue;
      }
      if (reserved) countReserved(open, raw);
      if (reserved && RESERVED_BEFORE_COMMAND.has(raw)) continue;
      if (word.noBreak === undefined && WRAPPERS.has(raw)) {
        // `env exec make`, `nohup command make`: a program named exec or command, not found (127 for that name): unsure from here.
        if (byName && (raw === "exec" || raw === "command")) {
          command = false;
          wrapper = undefined;
          continue;
        }
        // `env npm test`: the command env runs is a command's name too, where a reserved word is none (env then runs `then`).
        wrapper = WRAPPERS.get(raw);
        byName ||= raw !== "command";
        prefixed = true;
        continue;
      }
      command = false;
      afterCompound = reserved && COMPOUND_END.has(raw);
      if (reserved && RESERVED_OTHER.has(raw)) continue;
      if (found === undefined && word.noBreak !== undefined) {
        // `then\u00a0make` is a syntax error (exit 2), but not after an assignment or a redirection; `f\u00a0() {` names a function.
        const name = run.slice(word.start, word.noBreak);
        if ((reserved && (RESERVED_BEFORE_COMMAND.has(name) || RESERVED_OTHER.has(name))) || /^[ \t]*\(/.test(run.slice(word.end))) return undefined;
        found = word.noBreak;
      }
    }
  }
  // A here-document or a case never ended: unsure what is text, or a syntax error.
  return heredocs.length > 0 || cases.length > 0 ? undefined : found;
}

/**
 * A here-document's body, its delimiter unquoted (`<<EOF`): its quotes are text, but sh parses a
 * `$(...)` or backquoted command in it as it reads it, so a syntax error there (`$(echo (a))`)
 * refuses the whole run (exit 2). REFUSED so; undefined where one is never closed (unsure); else false.
 */
function refusedInBody(body: string, depth: number): typeof REFUSED | undefined | false {
  let refused = false;
  const substitution = (from: number, to: number) => {
    if (noBreakInCommandName(body.slice(from, to), depth + 1) === REFUSED) refused = true;
  };
  for (let at = 0; at < body.length; ) {
    const char = body[at]!;
    if (char === "\\") at += 2;
    else if (char === "$" || char === "`") {
      at = skipQuoted(body, at, 0, true, substitution);
      if (at === -1) return undefined;
    } else at++;
  }
  return refused ? REFUSED : false;
}

/** What commandNameNoBreakSpace counts of the compound commands open: see `open` there. */
interface OpenCompounds {
  conditions: number;
  loops: number;
  thenParts: number;
  unsure: boolean;
}

/** Whether `then`, `do`, `else` or `elif` may come here, after a compound command's end: an `if` or loop open for it (or unsure). */
function expected(open: OpenCompounds, word: string): boolean {
  if (open.unsure) return true;
  if (word === "then") return open.conditions > 0;
  if (word === "do") return open.loops > 0;
  return open.thenParts > 0;
}

/** Counts a reserved word read as one: what it opens (`if`, `while`, `then`), or ends (`fi`, `do`). */
function countReserved(open: OpenCompounds, word: string): void {
  if (word === "if") open.conditions++;
  else if (word === "while" || word === "until" || word === "for") open.loops++;
  else if (word === "do") open.loops = Math.max(0, open.loops - 1);
  else if (word === "then") {
    open.conditions = Math.max(0, open.conditions - 1);
    open.thenParts++;
  } else if (word === "elif" || word === "fi") {
    open.thenParts = Math.max(0, open.thenParts - 1);
    if (word === "elif") open.conditions++;
  }
}

/**
 * The word of sh's grammar that starts at `start`, up to a blank, a newline or an operator
 * outside quotes, with where its first no-break space outside quotes is; undefined where a quote,
 * `$(`, `${` or backquote in it is never closed.
 */
export function readWord(run: string, start: number, depth: number): { start: number; end: number; text: string; noBreak?: number; substituted?: number; refused?: true } | undefined {
  let noBreak: number | undefined;
  /** The first no-break space in a command's name in a `$(...)` of the word, outside single quotes. */
  let substituted: number | undefined;
  const substitution = (from: number, to: number, backquoted = false) => {
    const inside = noBreakInCommandName(run.slice(from, to), depth + 1);
    if (inside === REFUSED) refused = true;
    else if (inside !== undefined && !backquoted) substituted ??= from + inside;
  };
  /** A `$(...)` of the word sh refuses as a syntax error, and the whole run with it. */
  let refused = false;
  let index = start;
  while (index < run.length) {
    const char = run[index]!;
    if (/[ \t\n;&|()<>]/.test(char)) break;
    if (char === "\u00a0") {
      noBreak ??= index;
      index++;
    } else if (char === "\\") {
      index += 2;
    } else {
      const skipped = skipQuoted(run, index, 0, false, substitution);
      if (skipped === -1) return undefined;
      index = skipped;
    }
  }
  index = Math.min(index, run.length);
  return { start, end: index, text: run.slice(start, index), ...(noBreak === undefined ? {} : { noBreak }), ...(substituted === undefined ? {} : { substituted }), ...(refused ? { refused: true as const } : {}) };
}

/**
 * The index just past what starts at `index`: a quoted string, `$(...)`, `${...}` or a backquoted
 * command, passed over whole (nested ones too); one character otherwise. -1 where one is never
 * closed, or nested deeper than MAX_SHELL_NESTING.
 */
export function skipQuoted(run: string, index: number, depth: number, inDouble: boolean, substitution?: (from: number, to: number, backquoted?: boolean) => void): number {
  if (depth > MAX_SHELL_NESTING) return -1;
  const char = run[index]!;
  if (char === "'" && !inDouble) {
    const close = run.indexOf("'", index + 1);
    return close === -1 ? -1 : close + 1;
  }
  if (char === "`") {
    for (let at = index + 1; at < run.length; at++) {
      if (run[at] === "\\") at++;
      else if (run[at] === "`") {
        // A backquoted command with no `\` (whose escapes would change it): told to `substitution` as a `$(...)` is, for a syntax error in it only.
        if (substitution !== undefined && !run.slice(index + 1, at).includes("\\")) substitution(index + 1, at, true);
        return at + 1;
      }
    }
    return -1;
  }
  // `$$`, the shell's pid: passed over whole, its second `$` opening nothing (`$$(x`).
  if (char === "$" && run[index + 1] === "$") return index + 2;
  const opener = char === '"' ? '"' : char === "$" && (run[index + 1] === "(" || run[index + 1] === "{") ? run[index + 1]! : undefined;
  if (opener === undefined) return index + 1;
  const close = opener === '"' ? '"' : opener === "(" ? ")" : "}";
  // A command substitution (not `$((`, arithmetic), told to `substitution` with what is inside; `$(...)` in it are read there.
  if (opener === "(" && substitution !== undefined && run[index + 2] !== "(") {
    const end = skipQuoted(run, index, depth, inDouble);
    if (end !== -1) substitution(index + 2, end - 1);
    return end;
  }
  // Inside "...", only \, $( ${ and ` mean anything; inside $( ) quoting starts afresh; inside ${ } as around it.
  const quoted = opener === '"' || (opener === "{" && inDouble);
  let parens = 0;
  for (let at = index + (opener === '"' ? 1 : 2); at < run.length; ) {
    const inner = run[at]!;
    if (inner === "\\") {
      at += 2;
    } else if (inner === close && parens === 0) {
      return at + 1;
    } else if (opener === "(" && (inner === "(" || inner === ")")) {
      parens += inner === "(" ? 1 : -1;
      at++;
    } else if (opener === "(" && inner === "<" && run[at + 1] === "<" && run[index + 2] !== "(") {
      // A here-document in a `$(...)` (not `$((`, arithmetic): its lines are text, where a `)` would end the substitution as this reads it (`x=$(cat <<EOF` then `1) step`).
      return -1;
    } else if (opener === "(" && run.startsWith("case", at) && /[\s;&|(]/.test(run[at - 1]!) && /\s/.test(run[at + 4] ?? "")) {
      // A `case` in a `$(...)`: its patterns' `)` would end the substitution as this reads it (`$(case a in a) make;; esac)`): unsure.
      return -1;
    } else if (opener === "(" && inner === "#" && /[\s;&|(]/.test(run[at - 1]!)) {
      const end = run.indexOf("\n", at);
      if (end === -1) return -1;
      at = end;
    } else if (inner === "`" || inner === "$" || (!quoted && inner === "'") || (opener !== '"' && inner === '"')) {
      // Inside "...", a `$(` is told to `substitution` too (`"$(npm test)"`); inside one, read where it is told.
      const skipped = skipQuoted(run, at, depth + 1, quoted, opener === '"' ? substitution : undefined);
      if (skipped === -1) return -1;
      at = skipped;
    } else {
      at++;
    }
  }
  return -1;
}
