import { endsHereDocument, hereDocument, type HereDocument } from "./here-documents.js";
import { casePatternEnds, unclosedQuotes } from "./shell-traps.js";
import { shortened } from "../shorten.js";

/**
 * What YAML's folding makes of a `run` written over several lines as a plain value or a `>`
 * block: each line break between two lines of text becomes a space (a blank line between keeps
 * a line break, and so, in a `>` block, does a line indented more than the block's first). So
 * `run: echo one` then `echo two` on the next line runs `echo one echo two`, and `make \` then
 * `all` runs `make \ all`. Pure: build-workflow.ts says it at its place in the file.
 */

/** A value's text as written, where YAML folds its lines (see SourceLocator.foldedSourceOf). */
export interface FoldedSource {
  /** Where the text starts in the file: a plain value's first character, a `>` block's `>`. */
  offset: number;
  source: string;
  /** A `>` block, which joins lines on purpose; else a plain value. */
  block: boolean;
  /** For a `>` block, the column (0-based) of the key whose value it is where it is written (through an alias, its anchor's): a `>2` block's lines are indented 2 more. */
  keyColumn?: number;
}

/** A line of text in a value: where its text starts in the file, and that text, trailing spaces left out. */
interface Line {
  start: number;
  text: string;
  /** In a `>` block, indented more than the block's first line: its line breaks are kept. */
  kept: boolean;
}

/**
 * The line of a plain value or `>` block that ends in a backslash, before a line break YAML
 * turns into a space: the shell gets `\ ` (an escaped space), not a line continuation. The
 * backslash's offset and what to say there; undefined when there is none.
 */
export function backslashBeforeFold(value: FoldedSource): { offset: number; message: string } | undefined {
  for (const [before, after] of spaceJoins(value)) {
    const backslashes = /\\+$/.exec(before.text)?.[0].length ?? 0;
    if (backslashes % 2 === 0) continue;
    const kind = value.block ? "a > block's" : "a plain value's";
    return {
      offset: before.start + before.text.length - 1,
      message: `\`run\` has a line that ends in a backslash, but YAML joins ${kind} lines with a space, so the shell gets ${joined(before, after)}: the backslash escapes that space, and does not continue the line; write run: | (a literal block keeps the line break, which the backslash then continues), or drop the backslash`,
    };
  }
  return undefined;
}

/**
 * A plain `run` over several lines, where a line looks like a command of its own (`echo one`
 * then `echo two`), which YAML joins to the one before with a space into one command: where
 * that line starts, and the note. None where every line goes on the command before it: one
 * that starts with an option (`--coverage`) or an operator (`| sh`, `&& make`), or follows one
 * that ends with an operator (`make &&`, `do`), or is inside a quote left open (`echo "a`), or whose
 * first word no shell runs (`.`, `dist/`: see NO_COMMAND); nor for
 * a `>` block, which joins on purpose.
 */
export function joinedCommands(value: FoldedSource): { offset: number; note: string } | undefined {
  if (value.block) return undefined;
  // The value is read once for its quotes, however many lines it has.
  const unclosedQuoteBefore = unclosedQuotes(value.source);
  for (const [before, after] of spaceJoins(value)) {
    if (GOES_ON.test(after.text) || NO_COMMAND.test(after.text) || CARRIES_ON.test(before.text)) continue;
    // Inside a quote the shell has not seen closed (`echo "a` then `b"`), the line is more of that text.
    if (unclosedQuoteBefore(after.start - value.offset) !== undefined) continue;
    // `- npm test`: a list's item to the eye, which a `|` block would run as a command named `-`.
    if (/^-[ \t]/.test(after.text)) {
      return {
        offset: after.start,
        note: `this line starts with "- ", as a YAML list's item does, but it is indented under run's value, so YAML joins it to that value with a space into one command: the shell gets ${joined(before, after)}; for one command per line, write run: | and each command on a line of its own, without the "- "`,
      };
    }
    return {
      offset: after.start,
      note: `run's lines are joined with spaces into one command, as YAML joins a plain value's lines, so this line is more of the command before it: the shell gets ${joined(before, after)}; for one command per line, write run: |, or, to join them on purpose, run: > (no note then)`,
    };
  }
  return undefined;
}

/**
 * A `>` block's line indented more than the block's first, right after a line at the block's
 * indentation (`docker run` then `  --rm`): YAML folds only the lines at the block's indentation and
 * keeps the line break before a line indented more, so the shell runs it as a command of its own
 * (`--rm: not found`), where the `>` says the lines were meant to be joined. Where it starts, and
 * the note; none where the line before ends with an operator or a backslash, after which the shell
 * reads on (`for f in *; do` then the loop's body indented, `make \` then `  all`), or inside a
 * quote left open, nor after a blank line, which keeps a line break anyway; nor where the shell
 * reads the line break as it was meant (see KEPT_AS_MEANT): a case's patterns and their commands
 * indented below it, a `do` or `then` on a line of its own, a heredoc's lines, the line after a comment.
 */
export function keptLineInFold(value: FoldedSource): { offset: number; note: string } | undefined {
  if (!value.block) return undefined;
  let previous: Line | undefined;
  /** Whether `previous` is the block's first line of text. */
  let first = false;
  let blank = false;
  let unclosedQuoteBefore: ((offset: number) => unknown) | undefined;
  let patternEnds: Set<number> | undefined;
  const given = /^>[-+]?(\d)/.exec(value.source)?.[1];
  /** The here-documents opened on the lines so far whose lines are still being read (text, indented as it needs), the first first. */
  const heredocs: HereDocument[] = [];
  /** Whether `previous` is a here-document's line or its delimiter: the line break after it is the shell's to read as written. */
  let inHeredoc = false;
  for (const line of blockLines(value)) {
    if (line.text === "") {
      blank = true;
      continue;
    }
    if (heredocs.length > 0) {
      if (endsHereDocument(line.text, heredocs[0]!)) heredocs.shift();
      first = false;
      previous = line;
      inHeredoc = true;
      blank = false;
      continue;
    }
    // A first line kept for a tab, where no indentation is given, was told nothing before, and is not here.
    const kept = previous === undefined || blank || inHeredoc ? undefined : keptBreakBefore(previous, line, first && given !== undefined);
    // A comment after the command (`do # each file`) is no more of it: what the shell reads on after is the command's end.
    const code = previous === undefined ? "" : withoutShellComment(previous.text);
    if (kept !== undefined && !CARRIES_ON.test(code) && (/\\+$/.exec(code)?.[0].length ?? 0) % 2 === 0) {
      const before = previous!.text.trimStart();
      const text = line.text.trimStart();
      const start = line.start + line.text.length - text.length;
      // The value is read for its quotes and its case patterns once, and only where a line may need it.
      unclosedQuoteBefore ??= unclosedQuotes(value.source);
      const asMeant =
        KEPT_AS_MEANT.test(text) ||
        // After a whole-line comment (joined, the line would be more of it) or a heredoc's `<<` (its lines are the heredoc's, kept so), not a
        // `$((1 << 2))`'s shift; a `case x in` (a pattern follows: see CASE_WORD) and a case pattern's `)` (casePatternEnds) are told apart too.
        /^#/.test(before) ||
        heredocsOpened(before).length > 0 ||
        (/\sin$/.test(code) && CASE_WORD.test(code)) ||
        (code.endsWith(")") && (patternEnds ??= new Set(casePatternEnds(value.source).map(({ end }) => end))).has(previous!.start + code.length - 1 - value.offset));
      if (!asMeant && unclosedQuoteBefore(start - value.offset) === undefined) {
        const gets = `it gets ${keptBreak({ ...previous!, text: before }, text)}`;
        const note =
          kept === "first"
            ? `run is a >${given!} block, whose lines are indented ${given!} spaces more than its key (at column ${value.keyColumn! + Number(given) + 1}), but its first line is indented more than that, and YAML keeps the line break after a line indented more than the block's, so the shell runs this line as a command of its own, not as more of the one before: ${gets}; start the block's lines at column ${value.keyColumn! + Number(given) + 1}, or write run: > without the ${given!}, so that its first line sets the block's indentation`
            : kept === "nested"
              ? `run is a > block, whose lines YAML joins with spaces, but it keeps the line breaks around a line indented more than the block's first, so this line, indented more than the one before it, is a command of its own to the shell, not more of the one before: ${gets}; write the command on one line, or write run: | with a backslash at the end of the line before (a > block joins only the lines at its first line's indentation)`
              : `run is a > block, whose lines YAML joins with spaces, but it keeps the line break before a line indented more than the block's first, such as this one, so the shell runs it as a command of its own, not as more of the one before: ${gets}; indent this line as the block's first line to join it to the command before, or write run: | with a backslash at the end of the line before`;
        return { offset: start, note };
      }
    }
    first = previous === undefined;
    previous = line;
    inHeredoc = false;
    blank = false;
    heredocs.push(...heredocsOpened(line.text));
  }
  return undefined;
}

/** A here-document's operator (its `-` captured) and delimiter as written (captured: `<<EOF`, `<<-'END'`, `<<\\EOF`), not a here-string's `<<<`. */
const HEREDOC_SOURCE = String.raw`(?<!<)<<(-?)[ \t]*((?:'[^'\n]*'|"[^"\n]*"|\\.|[^\s"'\\<>;&|()])+)`;
const HEREDOC = new RegExp(HEREDOC_SOURCE, "g");

/**
 * The here-documents a line opens, in order: each `<<`'s delimiter, and whether its leading tabs are stripped (`<<-`); none for a shift in `$((...))`,
 * a `<<` in quotes, or a whole-line comment (`# cat <<EOF`), which opens none: its lines after were taken for a heredoc's, and told nothing.
 * Each delimiter with its quotes removed as sh removes them (`<<\\EOF` ends at `EOF`: taken as `\\EOF`, the body never ended).
 */
function heredocsOpened(text: string): HereDocument[] {
  if (/^\s*#/.test(text)) return [];
  return [...withoutArithmetic(withoutShellComment(text)).replace(QUOTED_TEXT, (quoted) => (quoted.startsWith("<<") ? quoted : '""')).matchAll(HEREDOC)].map(([, dash, word]) => hereDocument(word!, dash === "-"));
}

/** A quoted string (`echo "a<<b"`, whose `<<` is text), read from the left; a heredoc's delimiter (`<<'EOF'`, `<<E"O"F`) with its `<<`, kept. */
const QUOTED_TEXT = new RegExp(String.raw`${HEREDOC_SOURCE}|'[^']*'|"(?:[^"\\]|\\.)*"`, "g");

/**
 * A line without its arithmetic expansions (`$((1 << 2))`, whose `<<` is a shift, not a here-document), to the `))` that
 * closes each, however deep the parentheses inside it nest (`$(( ((1)) << 2 ))`); one left open is kept.
 */
function withoutArithmetic(text: string): string {
  let kept = "";
  let from = 0;
  for (let start = text.indexOf("$((", from); start !== -1; start = text.indexOf("$((", from)) {
    let depth = 0;
    let end = start + 1;
    for (; end < text.length; end++) {
      if (text[end] === "(") depth++;
      else if (text[end] === ")" && --depth === 0) break;
    }
    if (end >= text.length) break;
    kept += text.slice(from, start);
    from = end + 1;
  }
  return kept + text.slice(from);
}

/** A line's text without a comment after its command (` # note`), and the spaces before it; a whole-line comment is left as it is. */
function withoutShellComment(text: string): string {
  return /^\s*#/.test(text) ? text : text.replace(/[ \t]#.*$/, "").trimEnd();
}

/**
 * Whether YAML keeps the line break between two lines of a `>` block, where they were likely meant to be one command:
 * "kept" before a line indented more than the block's first after one that is not (`docker run` then `  --rm`);
 * "nested" before one indented more than the line before it, both so (`  --rm` then `    --name x`, below a
 * `do` on a line of its own); "first" after a first line indented more than a `>2` block's indentation says,
 * which keeps every break after it, whatever the next line's indentation. Undefined where YAML joins them, or the
 * line is indented no more than the one before it, as a loop's body is written.
 */
function keptBreakBefore(previous: Line, line: Line, first: boolean): "kept" | "nested" | "first" | undefined {
  if (!previous.kept) return line.kept ? "kept" : undefined;
  if (first) return "first";
  const depth = (text: string) => text.length - text.trimStart().length;
  return line.kept && depth(line.text) > depth(previous.text) ? "nested" : undefined;
}

/**
 * A line the shell reads as more of a compound command on a line of its own (`while read line` then `  do ...`,
 * `if x` then `  then ...`, a `fi`, `done`, `esac`, `}`, `)` or a case branch's `;;`): the line break before it is no harm.
 */
const KEPT_AS_MEANT = /^(?:(?:then|do|done|else|elif|fi|esac)(?![^\s;&|)])|[})]|;;)/;
/** A `case` where a command starts, before the `in` that ends its line. */
const CASE_WORD = /(?:^|[\s;&|(])case\s/;

/** The two lines of a kept line break as the shell gets them, at most 60 characters of each. */
function keptBreak(before: Line, text: string): string {
  return `${shortened(before.text, 60, true)} and then, on a line of its own, ${shortened(text)}`;
}

/**
 * A line that goes on the command before it: an option, a pipe or list operator, a redirection, a closing `)`. Not a `- `
 * and a word (`npm ci` then `  - npm test`), a YAML list's item written one step too far in, which the shell gets as `npm ci - npm test`;
 * but a `- ` and an option is (`tar -xzf` then `- -C /opt`): `-` is a file there, stdin or stdout, and no list's item starts with an option.
 */
const GOES_ON = /^(?:-(?![ \t]+[^\s<>|&;-])|[|&;)<>]|\d+[<>])/;
/**
 * A line whose first word no shell runs as a command, so it can only be more of the one before: `.` or `..`
 * alone (`docker build -t app` then `.`), or a folder's path, ending in `/` (`rsync -a build/` then `dist/`).
 */
const NO_COMMAND = /^(?:\.{1,2}|\S*\/)(?:\s|$)/;
/** A line after which the next one is more of the same command, or a command of its own after an operator. */
const CARRIES_ON = /(?:[|&;({]|(?:^|\s)(?:do|then|else))$/;

/** The two lines as the shell gets them, at most 60 characters of each. */
function joined(before: Line, after: Line): string {
  return `${shortened(before.text, 60, true)} ${shortened(after.text)}`;
}

/** Each pair of lines whose line break YAML turns into a space. */
function spaceJoins(value: FoldedSource): Array<[Line, Line]> {
  const lines = value.block ? blockLines(value) : plainLines(value);
  const joins: Array<[Line, Line]> = [];
  let previous: Line | undefined;
  let blank = false;
  for (const line of lines) {
    if (line.text === "") {
      blank = true;
      continue;
    }
    if (previous !== undefined && !blank && !previous.kept && !line.kept) joins.push([previous, line]);
    previous = line;
    blank = false;
  }
  return joins;
}

/** A plain value's lines, each without its indentation. */
function plainLines({ offset, source }: FoldedSource): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (const raw of source.split("\n")) {
    const indent = /^[ \t]*/.exec(raw)![0].length;
    lines.push({ start: offset + start + indent, text: raw.slice(indent).trimEnd(), kept: false });
    start += raw.length + 1;
  }
  return lines;
}

/**
 * A `>` block's lines after its header, without the block's indentation: its first line's, or
 * where the header gives it (`>2`, `>-1`), that many spaces more than its key's column (the key of
 * its anchor's pair for a block reached through an alias; none where that is unknown: a block that
 * is a list's item).
 */
function blockLines({ offset, source, keyColumn }: FoldedSource): Line[] {
  const rows = source.split("\n");
  const given = /^>[-+]?(\d)/.exec(rows[0]!)?.[1];
  if (given !== undefined && keyColumn === undefined) return [];
  const lines: Line[] = [];
  let start = rows[0]!.length + 1;
  let indent = given === undefined ? -1 : keyColumn! + Number(given);
  for (const raw of rows.slice(1)) {
    const spaces = /^ */.exec(raw)![0].length;
    const text = raw.trimEnd();
    if (text !== "" && indent === -1) indent = spaces;
    const kept = text !== "" && (spaces > indent || raw[spaces] === "\t");
    lines.push({ start: offset + start + Math.min(spaces, Math.max(indent, 0)), text: text === "" ? "" : raw.slice(Math.min(spaces, indent)).trimEnd(), kept });
    start += raw.length + 1;
  }
  return lines;
}
