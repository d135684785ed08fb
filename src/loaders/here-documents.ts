import { actionsExpressionEnds, casePatternEnds, escapedAt, readWord, RunReader, skipQuoted } from "./shell-traps.js";

/*
 * How sh reads a run's here-documents (`cat <<EOF` ... `EOF`), for the notes on a run (shell-traps.ts): where each body is, which
 * lines are text to those notes and which are commands, what sh expands in a body whose delimiter is unquoted, and whose
 * failed redirection ends the shell (a special builtin's, `: <<EOF`). The fast reader's check of a folded run (folded-run.ts)
 * finds its bodies' ends with it too.
 */

/** What may be a here-document's operator (`<<EOF`, `<<-EOF`), not a here-string's `<<<`: see outsideHereDocuments. */
const HERE_DOCUMENT = /(?<!<)<<(?!<)/g;

/**
 * `run` with its here-documents' bodies (the lines after `cat <<EOF`'s, up to the `EOF` line, that one too) blanked, their characters
 * but line ends made spaces, so that what reads it reads sh's commands only, at the same indexes and lines; `run` itself where it has
 * none. A body whose delimiter is unquoted (`<<EOF`) keeps what sh expands there (see expansionsIn): its `$(...)` and backquoted
 * commands, which sh parses and runs, and its `${...}`, whose bad substitution (`${{ x }}`) fails the command the body is for.
 * An operator is a `<<` or `<<-` where sh reads one: not a here-string's `<<<`, nor one escaped, in quotes, a `${...}`, a comment
 * or arithmetic (`$((1<<3))`). The rest of its line is read as sh reads it (see hereDocumentLine), more operators on it too, and the
 * bodies follow that line's end, in order. Undefined where this reading is unsure: an operator in a backquoted command or where the
 * quoting is unsure, or see hereDocumentLine, hereDocumentBody and expansionsIn.
 */
export function outsideHereDocuments(run: string): string | undefined {
  return readHereDocuments(run)?.outside;
}

/**
 * A body of a here-document whose delimiter is unquoted, read (see expansionsIn): where it is, the special builtin its command is
 * (`: <<EOF`), if it is one, outside a subshell or in one, and where a `$(...)` or backquoted command in it that is never closed starts (a syntax error from its command on).
 */
export interface ExpandedBody {
  from: number;
  to: number;
  special?: string;
  /** The special builtin its command is, in a subshell (`( echo; : <<EOF`, or a `(` on a line above): its failed redirection ends that subshell only. */
  subshellSpecial?: string;
  /** With `special`: whether it is in a subshell is not read here (see subshellCounter), so its failed redirection ends the task, or that subshell. */
  subshellUnsure?: true;
  unclosed?: number;
}

/** The body of one of `run`'s here-documents whose delimiter is unquoted that `run[index]` is in (see outsideHereDocuments), if any. */
export function expandedBodyAt(run: string, index: number): ExpandedBody | undefined {
  return readHereDocuments(run)?.expanded.find((body) => index >= body.from && index < body.to);
}

/** outsideHereDocuments' reading of `run`, and where its bodies whose delimiter is unquoted are. */
function readHereDocuments(run: string): { outside: string; expanded: ExpandedBody[] } | undefined {
  if (!run.includes("<<")) return { outside: run, expanded: [] };
  // The notes of one run each ask (see noteRunTraps): read once.
  if (run === lastRead?.run) return lastRead.read;
  const read = bodiesBlanked(run);
  lastRead = { run, read };
  return read;
}

/** The last run readHereDocuments read, and what it gave. */
let lastRead: { run: string; read: { outside: string; expanded: ExpandedBody[] } | undefined } | undefined;

/** readHereDocuments' reading of a run that holds `<<`. */
function bodiesBlanked(run: string): { outside: string; expanded: ExpandedBody[] } | undefined {
  const reader = new RunReader(run);
  const bodies: { from: number; to: number; kept: { from: number; to: number }[] }[] = [];
  /** With where the operator of a special builtin's is, to tell whether it is in a subshell (see subshellCounter). */
  const expanded: (ExpandedBody & { operator?: number })[] = [];
  HERE_DOCUMENT.lastIndex = 0;
  read: for (let match = HERE_DOCUMENT.exec(run); match !== null; match = HERE_DOCUMENT.exec(run)) {
    const index = match.index;
    // `\<<x`: a `<` of a word, then a redirection from the file x.
    if (escapedAt(run, index)) continue;
    const read = reader.at(index);
    if (read.context === "unsure" || read.context === "`") return undefined;
    if (read.inComment || read.inArithmetic || read.context === "'" || read.context === '"' || read.context === "${") continue;
    const line = hereDocumentLine(run, index);
    if (line === undefined) return undefined;
    let from = line.end + 1;
    for (const delimiter of line.delimiters) {
      const body = hereDocumentBody(run, from, delimiter);
      if (body === undefined) return undefined;
      const kept = delimiter.expanded ? expansionsIn(run, from, body.textEnd) : { kept: [] };
      if (kept === undefined) {
        // A body whose expansions are not read here (see expansionsIn) is blanked, and the rest of the run with it, where sh may read
        // the body on past its delimiter's line: the lines before it are read still (a `set -o pipefail` at the first).
        bodies.push({ from, to: run.length, kept: [] });
        break read;
      }
      bodies.push({ from, to: body.end, kept: kept.kept.map((range) => ({ from: from + range.from, to: from + range.to })) });
      const special = specialBuiltin(run, delimiter.operator);
      if (delimiter.expanded) {
        expanded.push({
          from,
          to: body.textEnd,
          ...(special === undefined ? {} : { special, operator: delimiter.operator }),
          ...(kept.unclosed === undefined ? {} : { unclosed: from + kept.unclosed }),
        });
      }
      reader.passOver(from, body.end);
      from = body.end;
    }
    // One in a body is its text.
    HERE_DOCUMENT.lastIndex = from;
  }
  let blanked = "";
  let from = 0;
  for (const body of bodies) {
    blanked += run.slice(from, body.from);
    let at = body.from;
    for (const kept of body.kept) {
      blanked += run.slice(at, kept.from).replace(/[^\n]/g, " ") + run.slice(kept.from, kept.to);
      at = kept.to;
    }
    blanked += run.slice(at, body.to).replace(/[^\n]/g, " ");
    from = body.to;
  }
  const outside = blanked + run.slice(from);
  // A special builtin's in a subshell still open there (`( echo; : <<EOF`, or a `(` on a line above) ends that subshell only, as another command's fails it only.
  const subshells = expanded.some((body) => body.special !== undefined) ? subshellCounter(outside) : undefined;
  const told = expanded.map(({ operator, ...body }) => {
    if (operator === undefined || body.special === undefined) return body;
    const open = subshells!(operator);
    if (open === 0) return body;
    // Unsure whether it is in one: it ends the task, or that subshell (dropped, its note said the task goes on, where sh may end it).
    if (open === undefined) return { ...body, subshellUnsure: true as const };
    const { special, ...rest } = body;
    return { ...rest, subshellSpecial: special };
  });
  return { outside, expanded: told };
}

/** Words after which sh still reads a command's first word (`if case`, `then (`): see subshellCounter. */
const COMMAND_LEAD_WORDS = new Set(["{", "!", "then", "do", "else", "if", "elif", "while", "until"]);

/**
 * How many subshells (`(` ... `)`) are open just before each index asked of `text` (a run, its here-documents' bodies blanked), asked in
 * increasing order: each character is read once. Quotes, `$(...)`, `${...}`, backquoted commands and comments are passed over, and a
 * function's `()` opens none. A case's patterns' `(` and `)` (see casePatternEnds) open and close none: a `case` counts only where sh
 * reads a command's first word, and an `esac` there ends it (`echo in case of trouble` is no case; on any word `case`, this gave up, and
 * a special builtin's here-document after it was said to fail its command alone, where sh ends the task). Undefined from where this
 * reading is unsure on: a quote or substitution never closed, or a `)` that ends no pattern found, where a case's pattern may be, and a subshell is open.
 */
function subshellCounter(text: string): (end: number) => number | undefined {
  let at = 0;
  let open: number | undefined = 0;
  /** Whether sh reads a command's first word at `at`. */
  let command = true;
  /** The subshells open at each case open (its `case` where sh reads a command), and the pattern read now (from its `case` or `;;` to its `)`), if any. */
  const cases: number[] = [];
  let pattern: { start: number; end: number } | undefined;
  let patterns: Map<number, number> | undefined;
  const patternAt = (start: number): { start: number; end: number } | undefined => {
    patterns ??= new Map(casePatternEnds(text).map(({ start, end }) => [start, end]));
    const end = patterns.get(start);
    return end === undefined ? undefined : { start, end };
  };
  return (end) => {
    while (open !== undefined && at < end) {
      const char = text[at]!;
      if (char === "\\") {
        // A line continuation is removed before sh reads the words: a command's first word may follow it (`true && \` with
        // `case` on the next line), so it leaves that as it was. Any other escaped character is a word's.
        if (text[at + 1] !== "\n") command = false;
        at += 2;
      } else if (char === "#" && (at === 0 || /[\s;&|()]/.test(text[at - 1]!))) {
        const lineEnd = text.indexOf("\n", at);
        at = lineEnd === -1 ? text.length : lineEnd;
      } else if (char === "'" || char === '"' || char === "`" || (char === "$" && /[({$]/.test(text[at + 1] ?? ""))) {
        const past = skipQuoted(text, at, 0, false);
        if (past === -1) open = undefined;
        at = past;
        command = false;
      } else if (pattern !== undefined && at <= pattern.end && (char === "(" || char === ")")) {
        // A pattern's `(` (`case x in (a)`) or its `)`: a command follows the `)`.
        if (at === pattern.end) {
          pattern = undefined;
          command = true;
        }
        at++;
      } else if (char === "(") {
        const empty = /^\([ \t]*\)/.exec(text.slice(at, at + 40));
        if (empty === null) open++;
        at += empty === null ? 1 : empty[0].length;
        command = true;
      } else if (char === ")") {
        // One that ends no pattern read here, where a pattern may be (no subshell opened in the case's branch): unsure, where it would close a subshell.
        if (open > 0) open = cases.length > 0 && cases.at(-1) === open ? undefined : open - 1;
        at++;
        command = true;
      } else if (char === ";" && text[at + 1] === ";" && cases.length > 0) {
        pattern = patternAt(at);
        at += 2;
        command = true;
      } else if (char === "\n" || char === ";" || char === "&" || char === "|") {
        at++;
        command = true;
      } else if (char === " " || char === "\t") at++;
      else {
        const word = /[^\s;&|()<>'"`$\\]*/y;
        word.lastIndex = at;
        const read = word.exec(text)![0] || char;
        const whole = /^[\s;&|()<>]?$/.test(text[at + read.length] ?? "");
        if (command && whole && read === "case") {
          cases.push(open);
          pattern = patternAt(at);
        } else if (command && whole && read === "esac") cases.pop();
        command = command && whole && COMMAND_LEAD_WORDS.has(read);
        at += read.length;
      }
    }
    return open;
  };
}

/**
 * sh's special builtins, whose failed redirection (a bad substitution in a here-document's body) ends the shell, where another command
 * fails and the shell goes on: `: <<EOF` is a block comment's idiom.
 */
const SPECIAL_BUILTINS = new Set([":", ".", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return", "set", "shift", "times", "trap", "unset"]);

/**
 * The special builtin whose redirection starts at `operator` in `run`, as written before it on its line: its first word after the last
 * `;`, `&`, `|` or `(` there, past any `{`, `!`, reserved word, assignment or redirection (and its word), where that is one; undefined
 * where it is none, or is after a `(` or a `|` (not `||`): a subshell's, or a pipeline's, whose failed redirection ends that subshell
 * or pipeline's command alone (`( : <<EOF`, `echo x | : <<EOF`), and the task goes on.
 */
function specialBuiltin(run: string, operator: number): string | undefined {
  const line = run.slice(run.lastIndexOf("\n", operator - 1) + 1, operator);
  const cut = Math.max(...[";", "&", "|", "("].map((char) => line.lastIndexOf(char)));
  if (line[cut] === "(" || (line[cut] === "|" && line[cut - 1] !== "|")) return undefined;
  const words = line.slice(cut + 1).trim().split(/[ \t]+/);
  for (let at = 0; at < words.length; at++) {
    const word = words[at]!;
    if (/^[0-9]*[<>]+&?$/.test(word)) at++;
    else if (!/^(?:\{|!|then|do|else|if|elif|while|until|[0-9]*[<>].*|[A-Za-z_]\w*=.*)$/.test(word) && word !== "") return SPECIAL_BUILTINS.has(word) ? word : undefined;
  }
  return undefined;
}

/**
 * What sh expands in the body of a here-document whose delimiter is unquoted (`<<EOF`), where its quotes are text: each `$(...)`,
 * backquoted command and `${...}` (a `${{ ... }}` whole; not one with a quote in it), where it starts and ends in `body` (a `\` keeps the character after it
 * as text). One not closed in the body is kept to its end where it is not closed in the rest of the run either: sh reads it on
 * past the delimiter's line (`$(echo "it's)` leaves its quote open to the run's end, a syntax error). Undefined where this reading
 * is unsure: one closed only past the delimiter's line (after which sh reads the body on, to a later delimiter's line), or with a
 * here-document or a `case` in it or after it (whose lines, or patterns' `)`, skipQuoted does not follow). `unclosed`: where the one not closed starts.
 */
function expansionsIn(run: string, from: number, to: number): { kept: { from: number; to: number }[]; unclosed?: number } | undefined {
  const body = run.slice(from, to);
  const kept: { from: number; to: number }[] = [];
  const expressionEnds = actionsExpressionEnds(body);
  let unclosed: number | undefined;
  for (let at = 0; at < body.length; ) {
    const char = body[at]!;
    // A `\` keeps the next character as text; `$$` is the shell's pid.
    if (char === "\\" || (char === "$" && body[at + 1] === "$")) at += 2;
    else if (char === "`" || (char === "$" && (body[at + 1] === "(" || body[at + 1] === "{"))) {
      const expression = body.startsWith("${{", at) ? expressionEnds(at) : -1;
      let end = expression === -1 ? skipQuoted(body, at, 0, true) : expression;
      if (end === -1) {
        if (/<<|\bcase\b/.test(run.slice(from + at)) || skipQuoted(run, from + at, 0, true) !== -1) return undefined;
        end = body.length;
        unclosed = at;
      }
      // A `${...}` with a quote in it (`${x:-"it's"}`), whose reading differs between shells, is left as text: read, it left the rest of the run unread.
      if (expression !== -1 || char !== "$" || body[at + 1] !== "{" || !/['"`]/.test(body.slice(at, end))) kept.push({ from: at, to: end });
      at = end;
    } else at++;
  }
  return { kept, ...(unclosed === undefined ? {} : { unclosed }) };
}

/** A here-document as its body is read: its delimiter as sh compares a line with it, and whether leading tabs are stripped from its lines (`<<-`). */
export interface HereDocument {
  word: string;
  tabs: boolean;
}

/** Whether a here-document's operator starts at `run[at]`: `<<-` (true: leading tabs stripped), `<<` (false), or neither (undefined), a here-string's `<<<` none. */
export function hereDocumentOperator(run: string, at: number): boolean | undefined {
  if (!run.startsWith("<<", at) || run[at + 2] === "<") return undefined;
  return run[at + 2] === "-";
}

/** The here-document its operator (`<<-` where `tabs`) and its delimiter as written (`'EOF'`, `E\\F`) open: the delimiter as sh reads it (see quotesRemoved). */
export function hereDocument(written: string, tabs: boolean): HereDocument {
  return { word: quotesRemoved(written), tabs };
}

/** Whether `line` (without its line end) ends the here-document `opened`: it is the delimiter, its leading tabs stripped for `<<-`. */
export function endsHereDocument(line: string, opened: HereDocument): boolean {
  return (opened.tabs ? line.replace(/^\t+/, "") : line) === opened.word;
}

/**
 * A here-document's delimiter as written (`'E"F'`, `"a\b"`, `E\\F`) as sh reads it, its quotes removed: nothing is removed in
 * single quotes, a backslash in double quotes only before $, `, ", \ or a newline, and outside quotes a backslash
 * escapes the next character. Every quote and backslash dropped, `'a\b'` ended its body at `ab`, where sh waits for `a\b`.
 */
export function quotesRemoved(word: string): string {
  let text = "";
  for (let at = 0; at < word.length; at++) {
    const char = word[at]!;
    if (char === "'") {
      const close = word.indexOf("'", at + 1);
      const end = close === -1 ? word.length : close;
      text += word.slice(at + 1, end);
      at = end;
    } else if (char === '"') {
      for (at++; at < word.length && word[at] !== '"'; at++) {
        if (word[at] === "\\" && at + 1 < word.length && "$`\"\\\n".includes(word[at + 1]!)) at++;
        text += word[at];
      }
    } else if (char === "\\") {
      if (at + 1 < word.length) text += word[++at];
    } else text += char;
  }
  return text;
}

/**
 * The here-documents whose operators start at `index` and come after it on its line, each delimiter as sh compares it with a body's
 * line (its quotes removed: sh expands none of it) and whether leading tabs are stripped (`<<-`), and where that line ends, the
 * newline its bodies follow: the rest of the line read as words (a quoted one, or a `$(...)`, of several lines carries the line on),
 * operators, blanks and a comment. Undefined where unsure: a delimiter never closed, empty or of several lines, a word never closed,
 * a `(` or `)` (which may end a `$(...)` the operator is in), a line joined to the next by a backslash, or no line's end after it.
 */
function hereDocumentLine(run: string, index: number): { delimiters: (HereDocument & { expanded: boolean; operator: number })[]; end: number } | undefined {
  const delimiters: (HereDocument & { expanded: boolean; operator: number })[] = [];
  let at = index;
  for (;;) {
    const char = run[at];
    if (char === undefined || char === "(" || char === ")" || (char === "\\" && run[at + 1] === "\n")) return undefined;
    if (char === "\n") return { delimiters, end: at };
    if (char === " " || char === "\t") at++;
    else if (char === "#") at = run.indexOf("\n", at) === -1 ? run.length : run.indexOf("\n", at);
    else if (run.startsWith("<<", at)) {
      const tabs = hereDocumentOperator(run, at);
      // A here-string's `<<<`: its word is read as any other.
      if (tabs === undefined) {
        at += 3;
        continue;
      }
      const operator = at;
      at += tabs ? 3 : 2;
      while (run[at] === " " || run[at] === "\t") at++;
      const word = readWord(run, at, 0);
      if (word === undefined || word.text === "" || word.text.includes("\n")) return undefined;
      delimiters.push({ ...hereDocument(word.text, tabs), expanded: !/["'\\]/.test(word.text), operator });
      at = word.end;
    } else if (char === ";" || char === "&" || char === "|" || char === "<" || char === ">") at++;
    else {
      const word = readWord(run, at, 0);
      if (word === undefined) return undefined;
      at = word.end;
    }
  }
}

/**
 * Where the here-document's body that starts at `from` ends: its text at the start of its line that is `delimiter`'s word (its
 * leading tabs stripped for `<<-`), the body with that line just past it; undefined where none is.
 */
export function hereDocumentBody(run: string, from: number, delimiter: HereDocument): { textEnd: number; end: number } | undefined {
  for (let index = from; index < run.length; ) {
    const end = run.indexOf("\n", index);
    const line = run.slice(index, end === -1 ? run.length : end);
    const textEnd = index;
    index = end === -1 ? run.length : end + 1;
    if (endsHereDocument(line, delimiter)) return { textEnd, end: index };
  }
  return undefined;
}
