/**
 * What the shell makes of a `run` or an env value other than what its line in the workflow file
 * seems to say, each as the text of a note (undefined: nothing to say). Pure: build-workflow.ts
 * says them at their place in the file.
 */

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
  if (open === undefined) return undefined;
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

/** The quote (`'` or `"`) that `command` leaves open, as sh reads it; undefined when none is. */
export function unclosedQuote(command: string): string | undefined {
  return openQuote(command)?.quote;
}

/**
 * `run: echo "unterminated`: a quote the shell never sees closed, which makes it refuse the whole
 * command (dash: "Syntax error: Unterminated quoted string") once the task starts, though the
 * file validated. A note, not an error: this reads the shell's quoting, not all of its grammar.
 * None for a run with a here-document (`<<`: its lines are text, quotes and all) or a `case`
 * (whose patterns end in a `)` that a `$(` here would take as its own).
 */
export function unclosedQuoteNote(run: string): string | undefined {
  if (run.includes("<<") || /\bcase\b/.test(run)) return undefined;
  const open = openQuote(run);
  if (open === undefined) return undefined;
  const rest = run.slice(open.index).split("\n")[0]!;
  const shown = rest.length > 30 ? `${rest.slice(0, 27)}...` : rest;
  const line = run.slice(0, open.index).split("\n").length;
  const where = run.includes("\n") ? ` (its line ${line})` : "";
  const asText = open.quote === '"' ? `\\" (or inside '...')` : `\\' (or inside "...")`;
  return `run leaves a ${open.quote} open, at ${shown}${where}: the shell refuses the whole command (a syntax error: unterminated quoted string) and runs none of it; close it, or write a ${open.quote} meant as text as ${asText}`;
}

/** What opens a context of sh's quoting: a quote, or a `$(` or `${` inside which quoting starts afresh. */
type Opener = { kind: "'" | '"' | "$(" | "${"; index: number; depth: number };

/**
 * The innermost quote that `command` leaves open, and where, as sh reads it: '...' (no escapes),
 * "..." (a backslash escapes the next character, as it does outside quotes), a comment from an
 * unquoted # that starts a word to the line's end, and quotes inside `$(...)` and `${...}` read
 * afresh; a backquoted command is passed over to its closing backquote, as sh finds that before
 * reading what is inside. `$'...'` is not POSIX: dash reads it as $ then '...', as this does.
 * Undefined when none is, when a `${...}` holds a quote (whose reading differs between shells),
 * or a backquote is never closed.
 */
function openQuote(command: string): { quote: string; index: number } | undefined {
  if (!command.includes('"') && !command.includes("'")) return undefined;
  const stack: Opener[] = [];
  for (let index = 0; index < command.length; index++) {
    const char = command[index]!;
    const top = stack.at(-1);
    if (top?.kind === "'") {
      if (char === "'") stack.pop();
      continue;
    }
    if (char === "\\") {
      index++;
      continue;
    }
    const substitution = char === "$" && (command[index + 1] === "(" || command[index + 1] === "{") ? (`$${command[index + 1]!}` as "$(" | "${") : undefined;
    if (char === "`") {
      index = closingBackquote(command, index);
      if (index === -1) return undefined;
      continue;
    }
    if (top?.kind === '"') {
      if (char === '"') stack.pop();
      else if (substitution !== undefined) stack.push({ kind: substitution, index: index++, depth: 0 });
      continue;
    }
    if (top?.kind === "${" && char === "}") {
      stack.pop();
    } else if (top?.kind === "$(" && char === ")" && top.depth === 0) {
      stack.pop();
    } else if (char === '"' || char === "'") {
      if (top?.kind === "${") return undefined;
      stack.push({ kind: char, index, depth: 0 });
    } else if (substitution !== undefined) {
      stack.push({ kind: substitution, index: index++, depth: 0 });
    } else if (top?.kind === "$(" && (char === "(" || char === ")")) {
      top.depth += char === "(" ? 1 : -1;
    } else if (char === "#" && (index === 0 || /[\s;&|()<>]/.test(command[index - 1]!))) {
      // The shell's own comment, to the line's end.
      index = command.indexOf("\n", index);
      if (index === -1) break;
    }
  }
  const open = stack.findLast((opener) => opener.kind === "'" || opener.kind === '"');
  return open === undefined ? undefined : { quote: open.kind, index: open.index };
}

/** The index of the backquote that closes the one at `open` (a backslash escapes the next character), or -1. */
function closingBackquote(command: string, open: number): number {
  for (let index = open + 1; index < command.length; index++) {
    if (command[index] === "\\") index++;
    else if (command[index] === "`") return index;
  }
  return -1;
}
