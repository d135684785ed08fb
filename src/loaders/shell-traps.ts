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

/** The quote (`'` or `"`) that `command` leaves open, as sh reads it (backslashes escape outside single quotes); undefined when none is. */
export function unclosedQuote(command: string): string | undefined {
  if (!command.includes('"') && !command.includes("'")) return undefined;
  let open: string | undefined;
  for (let index = 0; index < command.length; index++) {
    const char = command[index];
    if (open === "'") {
      if (char === "'") open = undefined;
    } else if (char === "\\") {
      index++;
    } else if (open === '"') {
      if (char === '"') open = undefined;
    } else if (char === '"' || char === "'") {
      open = char;
    } else if (char === "#" && (index === 0 || /\s/.test(command[index - 1]!))) {
      // The shell's own comment, to the line's end.
      index = command.indexOf("\n", index);
      if (index === -1) break;
    }
  }
  return open;
}
