import { homedir } from "node:os";
import type * as z from "zod/mini";
import type { DataPath, SourceLocator } from "./locator.js";
import { ProblemList } from "./problem-list.js";
import { runAtMistake } from "./date-time.js";
import { defaultsSchema, ENV_NAME_PATTERN, isRunAt, PRIORITIES, TASK_TYPES, taskSchema, workflowFileSchema } from "./schema.js";
import { durationMistake, OVER_DURATION_LIMIT, overDurationLimit, parseDuration } from "./duration.js";
import { INTEGER_RANGES, isDurationField } from "./limits.js";
import { closestMatch } from "./suggest.js";
import { shortened } from "../shorten.js";
import { formatMs } from "../engine/errors.js";

type Issue = z.core.$ZodIssue;

const taskKeys = Object.keys(taskSchema.shape);
const defaultsKeys = Object.keys(defaultsSchema.shape);
const topKeys = Object.keys(workflowFileSchema.shape);
/** The top-level keys that hold a mapping, which an anchored block (`defualts: &d`) may be meant as. */
const MAPPING_TOP_KEYS = new Set(["tasks", "defaults", "env"]);

/**
 * Whether the key written at `offset` is `key` (a word), plain or quoted (`"defaults":`): where the
 * locator finds a top-level key, or, for one the file does not have, the first key, which is then another.
 */
function keyWrittenAt(locator: SourceLocator, offset: number, key: string): boolean {
  return new RegExp(`^(?:${key}|"${key}"|'${key}')[ \t]*:`).test(locator.textAt(offset, key.length + 40));
}

/**
 * Turns zod issues (paths relative to `base`) into problems with a position and
 * a message naming the field, what was expected, and what was found.
 */
export function reportIssues(issues: readonly Issue[], base: DataPath, locator: SourceLocator, problems: ProblemList): void {
  const meant = keysMeant(issues, base);
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    // `rn: make`: told once, as the unknown key with the one meant, not also as `run` missing. Nor is a field missing
    // from a mapping a problem already explains (`a: { <<: *nope }`: nothing merged in, and that said; `<<: 5` beside
    // `timeout: 1s`: what it was meant to merge may have held `run`).
    if (isMissing(issue) && (meant.has(JSON.stringify(path)) || problems.isMissingExplained(locator.offsetOf(path.slice(0, -1))))) continue;
    if (issue.code === "invalid_union") {
      const branch = matchingBranch(issue.errors);
      if (branch) {
        reportIssues(branch, path, locator, problems);
        continue;
      }
    }
    if (issue.code === "unrecognized_keys") {
      const input = "input" in issue && typeof issue.input === "object" && issue.input !== null ? issue.input : {};
      for (const key of issue.keys) {
        const offset = locator.offsetOf([...path, key], "key");
        // `base: &base` at the top level: a block kept for its anchor, to merge into tasks (<<: *base).
        // `defualts: &d` is `defaults` misspelt, anchor or not, where the file has no `defaults`; `task: &t` beside `tasks` is kept for its anchor.
        const meant = path.length === 0 ? keyMeant(path, key) : undefined;
        const misspelt = meant !== undefined && MAPPING_TOP_KEYS.has(meant) && !keyWrittenAt(locator, locator.offsetOf([meant], "key"), meant);
        const anchored = path.length === 0 && !misspelt && keptForAnchor(key, locator);
        problems.atOffset(offset, `${unknownKeyMessage(path, key, Object.hasOwn(input, key) ? input[key] : undefined, anchored, problems.json)}${noBreakSpaceInKey(key, offset, problems, locator)}${invisibleInKey(key, offset, problems, locator, true)}`, taskOf(path));
      }
      continue;
    }
    if (issue.code === "invalid_key") {
      const detail = issue.issues[0]?.message ?? "is not allowed";
      const offset = locator.offsetOf(path, "key");
      problems.atOffset(offset, `${ownerOf(path)}${describePath(path.slice(0, -1))} name ${quote(String(path.at(-1)))} is not valid; ${detail}${invisibleInKey(String(path.at(-1)), offset, problems, locator)}`, taskOf(path));
      continue;
    }
    if (isNullEnvValue(issue, path)) {
      problems.followOn(locator.offsetOf(path), `${ownerOf(path)}${describePath(path)} ${nullEnvMessage(String(path.at(-1)), commentHint(issue, path, locator))}`, taskOf(path));
      continue;
    }
    problems.followOn(locator.offsetOf(path), `${ownerOf(path)}${describePath(path)} ${explain(issue, locator.plainSourceOf(path))}${commentHint(issue, path, locator)}${nullIdHint(issue, path)}${tildeCwdHint(issue, path, locator)}${valueHint(issue, path, locator)}${envListHint(issue, path)}${runListHint(issue, path)}${nestedIdsHint(issue, path)}`, taskOf(path));
  }
}

/** The top-level fields whose values refusalOf checks. */
const CHECKED_TOP_KEYS = new Set(["name", "concurrency", "failFast", "env", "defaults", "tasks"]);

/**
 * How the field at `path` would refuse `value` (written `written`, where it is a plain scalar), in
 * the words validate uses, without the owner (`task "a": `): `` `runAt` must be a real date and
 * time, ..., got 2 ``; undefined where it takes it, or `path` is no field of the format. The field
 * alone is checked, with what a task needs besides (`run`); a list's item alone in its list.
 */
export function refusalOf(path: DataPath, value: unknown, written?: string): string | undefined {
  if (typeof path[0] !== "string" || !CHECKED_TOP_KEYS.has(path[0]) || (path[0] === "tasks" && typeof path[1] !== "string")) return undefined;
  const item = path.findIndex((step) => typeof step === "number");
  const checked = item === -1 ? path : [...path.slice(0, item), 0];
  if (item !== -1 && item !== path.length - 1) return undefined;
  const data: Record<string, unknown> = { tasks: { [path[0] === "tasks" ? (path[1] as string) : "a"]: { run: "x" } } };
  let holder: Record<string, unknown> = data;
  for (const [index, step] of checked.slice(0, -1).entries()) {
    const next = holder[step as string];
    holder = (holder[step as string] = typeof checked[index + 1] === "number" ? [] : typeof next === "object" && next !== null ? next : Object.create(null)) as Record<string, unknown>;
  }
  holder[checked.at(-1) as string] = value;
  const same = (issuePath: DataPath) => checked.every((step, index) => issuePath[index] === step);
  const issues = workflowFileSchema.safeParse(data, { reportInput: true }).error?.issues.filter((issue) => same(issue.path)) ?? [];
  if (issues.length === 0) return undefined;
  const source = JSON.stringify(checked);
  const locator: SourceLocator = {
    offsetOf: () => 0,
    endsAtComment: () => false,
    commentInsteadOf: () => undefined,
    plainSourceOf: (at) => (JSON.stringify(at) === source ? written : undefined),
    foldedSourceOf: () => undefined,
    textAt: () => "",
  };
  const scratch = new ProblemList("");
  reportIssues(issues, [], locator, scratch);
  const message = scratch.problems[0]?.message;
  return message?.replace(/^task "(?:[^"\\]|\\.)*": /, "").replace(/`([A-Za-z]+)\[0\]`/, (whole, list: string) => (item === -1 ? whole : `\`${list}[${String(path[item])}]\``));
}

/**
 * `dependsOn:` with an item `- - b` (or `[[b, c]]`): a list inside the list, which YAML reads from a
 * dash too many or brackets twice. The ids it holds, listed as they are meant.
 */
function nestedIdsHint(issue: Issue, path: DataPath): string {
  const isItem = path[0] === "tasks" && path.length === 4 && path[2] === "dependsOn" && typeof path[3] === "number";
  if (!isItem || !("input" in issue) || !Array.isArray(issue.input) || issue.input.length === 0) return "";
  const ids: unknown[] = issue.input;
  if (!ids.every((id) => typeof id === "string" || typeof id === "number")) return "";
  const shown = ids.slice(0, 5).map((id) => (typeof id === "string" && /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(id) ? id : JSON.stringify(id)));
  return `; a list inside the list (\`- - ${shown[0]!}\` has a dash too many): list the ids themselves (dependsOn: [${shown.join(", ")}${ids.length > shown.length ? ", ..." : ""}])`;
}

/**
 * `dependsOn: [null]` (or `~`, or an empty `-` item) is YAML's null, not the id "null" that
 * `null:` as a key is read as (keys are read as written): say how to name such a task.
 */
function nullIdHint(issue: Issue, path: DataPath): string {
  const isItem = path[0] === "tasks" && path[2] === "dependsOn" && typeof path[3] === "number";
  return isItem && "input" in issue && issue.input === null ? '; to name a task called null, quote it: "null"' : "";
}

/**
 * `cwd: ~`, meant as the home folder, is YAML's null: "got nothing (null)" left the user
 * looking at the ~ they wrote. taskq would not expand it as a shell does anyway: write the path.
 */
function tildeCwdHint(issue: Issue, path: DataPath, locator: SourceLocator): string {
  const isCwd = path.at(-1) === "cwd" && path.length === (path[0] === "tasks" ? 3 : path[0] === "defaults" ? 2 : 0);
  if (!isCwd || !("input" in issue) || issue.input !== null || locator.plainSourceOf(path) !== "~") return "";
  return `: ~ alone is YAML's null, not the home folder, and taskq does not expand ~ or $HOME in a cwd as a shell does; write the folder's path out (cwd: ${quote(homedir())})`;
}

/**
 * `run: # TODO`: a comment where the value would be leaves it empty, which YAML reads as null;
 * "got nothing (null)" alone left the user looking at the text on that line. Say it is a comment.
 */
function commentHint(issue: Issue, path: DataPath, locator: SourceLocator): string {
  if (!("input" in issue) || issue.input !== null) return "";
  const comment = locator.commentInsteadOf(path);
  if (comment === undefined) return "";
  return `: the rest of its line, ${quote(comment)}, is a YAML comment (a # after a space starts one), not its value`;
}

/**
 * Whether `path` is a duration field's: a task's or `defaults`' `timeout` or `delay`, a `backoff`'s `base` or `max`; not
 * a variable of an `env` named so (`env: { timeout: ... }`), whose value is no duration.
 */
function isDurationPath(path: DataPath): boolean {
  return isDurationField(path.at(-1)) && !isEnvVariablePath(path);
}

/** Whether `path` is an env variable's: of the file's `env`, `defaults.env`, or a task's `env` (`tasks.a.env.timeout` is no duration). */
export function isEnvVariablePath(path: DataPath): boolean {
  return (path.length === 2 && path[0] === "env") || (path.length === 3 && path[0] === "defaults" && path[1] === "env") || (path.length === 4 && path[0] === "tasks" && path[2] === "env");
}

/** What is wrong with a value written almost right, where it can be told: a duration's units out of order (`30s1m`), a space for a runAt's T, exit codes in one string, an integer in quotes. */
function valueHint(issue: Issue, path: DataPath, locator: SourceLocator): string {
  if (!("input" in issue)) return "";
  const field = path.at(-1);
  // `31d`, `3000000` (seconds): written right, but past the range, which "got 31d" left the user to work out.
  if (isDurationPath(path) && (typeof issue.input === "string" || Number.isFinite(issue.input)) && overDurationLimit(issue.input as string | number)) {
    return `; ${OVER_DURATION_LIMIT}`;
  }
  // `backoff: 10`, a number of seconds, as a duration field takes it: the mapping to write, as for `backoff: 10s`.
  if (field === "backoff" && path.length <= 3 && typeof issue.input === "number") return backoffSecondsMistake(issue.input);
  // `retryOn: 75`: one exit code, where the field takes a list of them (or `any`).
  if (field === "retryOn" && !isEnvVariablePath(path) && isExitCode(issue.input)) return ` (list it: retryOn: [${String(issue.input)}])`;
  if (typeof issue.input !== "string") return "";
  // `env: A\uff1a 1`, `env\uff1a` then `A: 1` below a key: a key and its value read as text, a full-width colon between them. Only
  // where that key is one of the mapping the field takes: `timeout: \u65f6\u95f4\uff1a 5m` was told to write \u65f6\u95f4:, still wrong.
  const fullWidth = fullWidthColonKey(issue.input, true);
  if (fullWidth !== undefined && typeof field === "string" && keyOfFieldMapping(field, fullWidth)) return `; ${fullWidthColonWords(fullWidth)}`;
  // Digits YAML reads as text without quotes around them: tagged so (`retries: !!str 3`, `! 3`), the tag named as written; or in a `|` or `>` block, its header.
  const written = (): ReturnType<typeof blockIndicatorAt> | string => (locator.plainSourceOf(path) === undefined ? blockIndicatorAt(path, locator) : tagBefore(path, locator));
  const hint =
    field === "runAt"
      ? runAtMistake(issue.input, isRunAt)
      : field === "retryOn"
        ? exitCodesMistake(issue.input)
        : isDurationPath(path)
          ? (blockDurationMistake(issue.input, path, locator) ?? durationMistake(issue.input))
          : field === "retries"
            ? quotedNumberMistake(issue.input, ...INTEGER_RANGES.retries, written)
            : field === "concurrency"
              ? quotedNumberMistake(issue.input, ...INTEGER_RANGES.concurrency, written)
              : typeof field === "number" && path.at(-2) === "retryOn"
                ? (anyInList(issue.input) ?? quotedNumberMistake(issue.input, ...INTEGER_RANGES.retryOn, written))
                : field === "failFast" && path.length === 1
                  ? booleanMistake(issue.input)
                  : field === "priority" || field === "type"
                    ? wordMeant(issue.input, field === "priority" ? PRIORITIES : TASK_TYPES)
                    : field === "backoff" && path.length <= 3
                      ? backoffMistake(issue.input)
                      : undefined;
  return hint === undefined ? "" : ` (${hint})`;
}

/**
 * `backoff: exponential` or `backoff: 5s`, as other tools write a retry's wait: what to write here, where the message said only
 * that it takes a mapping. The wait is always exponential, with full jitter (anywhere from 0 to the wait), as the README says.
 */
function backoffMistake(text: string): string | undefined {
  const written = text.trim();
  const ms = parseDuration(written);
  if (ms !== undefined) return waitsHint(written, ms);
  if (/^(?:exp|exponential|linear|fixed|constant|jitter|full[-_ ]?jitter)$/i.test(written)) {
    return "taskq's backoff is always exponential, with full jitter: give the wait before the first retry and the longest wait, as backoff: { base: 1s, max: 30s }";
  }
  return undefined;
}

/** `backoff: 10`: the hint `backoff: 10s` gets, the seconds written as a duration; none for a number no duration takes (`-1`). */
function backoffSecondsMistake(seconds: number): string {
  const ms = parseDuration(seconds);
  if (ms === undefined) return "";
  return ` (${waitsHint(formatMs(ms), ms)})`;
}

/** The backoff to write for waits of up to `wait` each; for none (`backoff: 0`), retries one after another. */
function waitsHint(wait: string, ms: number): string {
  if (ms === 0) return "for retries with no wait between them, write backoff: { base: 0s, max: 0s }";
  return `for waits of up to ${wait} each, write backoff: { base: ${wait}, max: ${wait} }`;
}

/**
 * `failFast: "true"` (quoted, or tagged `!!str`), or `yes`, `on`, as YAML 1.1 and other tools read a boolean: the true or
 * false meant, which YAML 1.2 reads only unquoted.
 */
function booleanMistake(text: string): string | undefined {
  const word = text.trim().toLowerCase();
  const meant = ["true", "yes", "y", "on"].includes(word) ? "true" : ["false", "no", "n", "off"].includes(word) ? "false" : undefined;
  if (meant === undefined) return undefined;
  return word === meant ? `written as text: write ${meant}, without quotes or a tag` : `${text.trim()} is text here, not a boolean: write ${meant}`;
}

/** `priority: High` or `hgih`: the word meant, in other letters or one slip away. */
function wordMeant(text: string, words: readonly string[]): string | undefined {
  const match = closestMatch(text, words);
  return match === undefined ? undefined : `did you mean ${match}?`;
}

/** The tag written before the value at `path` (`!!str`, `!`), as written; `!!str` where it cannot be read there. */
function tagBefore(path: DataPath, locator: SourceLocator): string {
  const offset = locator.offsetOf(path);
  const before = locator.textAt(Math.max(0, offset - 200), Math.min(200, offset));
  return /(?:^|[\s[{,:])(!<[^>\s]*>|![^\s,[\]{}]*)\s+(?:&[^\s,[\]{}]+\s+)?$/.exec(before)?.[1] ?? "!!str";
}

/** `timeout: |` with `5s` below it: the block keeps its line break, which no duration takes (not "without spaces", where none was written); the duration meant. */
function blockDurationMistake(text: string, path: DataPath, locator: SourceLocator): string | undefined {
  const value = text.trim();
  if (!text.endsWith("\n") || parseDuration(value) === undefined || locator.plainSourceOf(path) !== undefined) return undefined;
  const block = blockIndicatorAt(path, locator);
  return block === undefined ? undefined : `a ${block.indicator} block keeps its line break, which no duration takes: write it in place of the ${block.header}, ${value}`;
}

/**
 * Where the value at `path` is a block scalar (`retries: |` with `3` on the line below it): its indicator, `|` or `>`, and its
 * header as written, the indicator with its chomping and indentation (`|-`, `|2`) and a tag before it (`!!str |`), all of which
 * the value replaces; else undefined (a quoted value).
 */
function blockIndicatorAt(path: DataPath, locator: SourceLocator): { indicator: string; header: string } | undefined {
  const offset = locator.offsetOf(path);
  const header = /^[|>][-+0-9]*/.exec(locator.textAt(offset, 4))?.[0];
  if (header === undefined) return undefined;
  const before = locator.textAt(Math.max(0, offset - 200), Math.min(200, offset));
  const tag = /(?:^|[\s[{,:])((?:!<[^>\s]*>|![^\s,[\]{}]*)[ \t]+(?:&[^\s,[\]{}]+[ \t]+)?)$/.exec(before)?.[1] ?? "";
  return { indicator: header[0]!, header: `${tag}${header}` };
}

/**
 * `retries: "3"`: an integer field given digits in quotes (or tagged text, `!!str 3` or `! 3`, or in a
 * `|` or `>` block: `written` gives the tag or the block's indicator and header, undefined for quotes), which YAML reads as text. Not for
 * one out of the field's range (`retries: "300"`): written without them it is still refused,
 * and the range the message gives is all there is to mend. The number is shown as written
 * best: `"007"` is 7 (as `007` unquoted is read), so the hint says 7, not 007.
 */
function quotedNumberMistake(text: string, min: number, max: number, written: () => ReturnType<typeof blockIndicatorAt> | string): string | undefined {
  if (!/^\s*\d+\s*$/.test(text)) return undefined;
  const number = Number(text);
  if (number < min || number > max) return undefined;
  const tag = written();
  if (typeof tag === "object") return `a number in a ${tag.indicator} block is text: write it in place of the ${tag.header}, ${String(number)}`;
  return tag === undefined ? `a number in quotes is text: write it without them, ${String(number)}` : `a number tagged ${tag} is text: write it without the tag, ${String(number)}`;
}

/** Whether `value` is a number `retryOn` takes as one of its exit codes. */
function isExitCode(value: unknown): value is number {
  const [min, max] = INTEGER_RANGES.retryOn;
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
}

/** `retryOn: [any]` or `[1, any]`: `any` is the whole value, every failure retried, not an item of the list. */
function anyInList(text: string): string | undefined {
  if (text.trim().toLowerCase() !== "any") return undefined;
  return "any is written alone, not in a list: retryOn: any retries every failure";
}

/** `retryOn: 1, 75` (or `1 75`, or `"75"`): exit codes written as one string, the list meant. */
function exitCodesMistake(text: string): string | undefined {
  if (!/^\s*\d+(?:\s*[,\s]\s*\d+)*\s*$/.test(text)) return undefined;
  const codes = text.trim().split(/[\s,]+/);
  // `"300"` or `"1, 300"`: no list would take a code out of range, so none is written out.
  if (!codes.every((code) => isExitCode(Number(code)))) return undefined;
  return `list ${codes.length === 1 ? "it" : "them"}: retryOn: [${codes.join(", ")}]`;
}

/** `NAME=value`, as a shell, a .env file or docker compose's list form writes a variable. */
const ASSIGNMENT = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/s;

/**
 * `env: [A=1, B=2]`, `env: A=1`: variables written as assignments, not as the mapping env is;
 * the mapping meant, its values quoted where YAML would read them otherwise. Empty when not that.
 */
function envListHint(issue: Issue, path: DataPath): string {
  const isEnv = path.at(-1) === "env" && path.length === (path[0] === "tasks" ? 3 : path[0] === "defaults" ? 2 : 1);
  if (!isEnv || !("input" in issue)) return "";
  const items: unknown[] = Array.isArray(issue.input) ? issue.input : [issue.input];
  const assignments = items.map((item) => (typeof item === "string" ? ASSIGNMENT.exec(item) : null));
  if (items.length === 0 || assignments.some((assignment) => assignment === null)) return "";
  // The first few show how: a list of hundreds made a line as long.
  const entries = assignments.slice(0, 5).map((assignment) => {
    const [, name, value] = assignment as unknown as [string, string, string];
    return `${name}: ${readsAsWritten(value) ? value : JSON.stringify(value)}`;
  });
  return `; write each variable as NAME: value (env: { ${entries.join(", ")}${assignments.length > entries.length ? ", ..." : ""} })`;
}

/**
 * `run: [npm ci, npm test]`, or a `- item` a line, as GitLab CI's `script` is written: one
 * command string is what runs; the commands joined with &&, which stops at the first that
 * fails as a CI runner does (the first few, on one line), or a `|` block under `set -e`.
 */
function runListHint(issue: Issue, path: DataPath): string {
  if (path.at(-1) !== "run" || path.length !== 3 || !("input" in issue) || !Array.isArray(issue.input)) return "";
  const commands: unknown[] = issue.input;
  if (commands.length === 0 || commands.some((command) => typeof command !== "string" || command.includes("\n"))) return "";
  const words = commands as string[];
  if (words.length === 1) return `; write the command as a string, not a list (run: ${plainValue(words[0]!.trim())})`;
  const shown = words.slice(0, 3).map((command) => command.trim());
  const joined = `${shown.join(" && ")}${words.length > shown.length ? " && ..." : ""}`;
  const several = `for several commands, join them with && (run: ${plainValue(joined)}), which stops at the first that fails, or write them one a line in a | block whose first line is set -e`;
  // `[make, all]`, as a Dockerfile's exec form gives a command and its arguments: that one command, as the shell reads it.
  const argv = words.length > 1 && words.every((word) => /^\S+$/.test(word)) ? `for one command and its arguments, write them as the shell reads them (run: ${plainValue(words.join(" "))}); ` : "";
  return `; ${argv}${several}`;
}

/** `text` as a YAML value: plain where YAML reads it back as written, else in double quotes. */
function plainValue(text: string): string {
  return /^[^\s"'[{#&*!|>%@`-][^#]*$/.test(text) && !text.includes(": ") && !/[\]}],?/.test(text) ? text : quote(text);
}

/** A plain YAML value an env value takes as written: a decimal integer JavaScript writes so, or a word that is no null, boolean or number. */
function readsAsWritten(value: string): boolean {
  return /^(?:0|[1-9][0-9]{0,14})$/.test(value) || (/^(?:[A-Za-z_/]|\.\.?\/)[A-Za-z0-9_./-]*$/.test(value) && !/^(?:null|true|false)$/i.test(value));
}

/** `env: { FOO: null }` (or `~`, or nothing after the colon): read as a wish to unset FOO, which env cannot do. */
function isNullEnvValue(issue: Issue, path: DataPath): boolean {
  const field = path[0] === "tasks" ? path.slice(2) : path[0] === "defaults" ? path.slice(1) : path;
  return field.length === 2 && field[0] === "env" && "input" in issue && issue.input === null;
}

/** What a null env value is told (after `comment`, a commentHint): env only sets variables; how to get an empty one, or none. */
function nullEnvMessage(name: string, comment = ""): string {
  const key = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : JSON.stringify(name);
  return `has no value (null)${comment === "" ? ":" : `${comment};`} env sets variables and cannot unset one (from \`defaults.env\`, the file's \`env\` or taskq's own environment); write ${key}: "" for an empty value, or unset it in the command (\`unset ${key}; ...\`)`;
}

/** In a union, the one branch whose value had the right type, so its precise issues are shown. */
function matchingBranch(branches: Issue[][]): Issue[] | undefined {
  const candidates = branches.filter((branch) => !branch.some(isWrongType));
  return candidates.length === 1 ? candidates[0] : undefined;
}

/**
 * The value itself has a type the branch does not take: a union inside it (a task id: text,
 * integer or boolean) counts as one when every choice of it does. Else `dependsOn: [a, ~]`
 * matched both the one-id branch and the list branch, and was told "got a list". A word the
 * branch is alone (`timeout: none`) counts too: `0s` is a duration gone wrong, not a `none`.
 */
function isWrongType(issue: Issue): boolean {
  if (issue.path.length !== 0) return false;
  if (issue.code === "invalid_value" && issue.values.length === 1) return true;
  return issue.code === "invalid_type" || (issue.code === "invalid_union" && issue.errors.every((branch) => branch.some(isWrongType)));
}

/**
 * The issue's message, with the value found; a number as `written` in the file (a plain scalar's
 * text), not as JavaScript writes it: `retries: 5e6` got 5e6, not 5000000.
 */
function explain(issue: Issue, written?: string): string {
  // A cross-field check reports the whole object as input: "got a mapping" would not help.
  if (!("input" in issue) || (issue.code === "custom" && typeof issue.input === "object")) return issue.message;
  if (issue.input === undefined && issue.code === "invalid_type") return `is missing; it ${issue.message}`;
  const number = typeof issue.input === "number" && written !== undefined && !/[\s"]/.test(written) && !written.startsWith("!") ? written : undefined;
  // A field that takes no number (`name: 1e3`, `priority: 0x10`): "must be a string, got 1e3" would read as the text it
  // holds, so say what YAML read it as, as "got 1000" did.
  const takesNoNumber = (issue.code === "invalid_type" && issue.expected !== "int" && issue.expected !== "number") || issue.code === "invalid_value";
  const read = number !== undefined && takesNoNumber && number !== describeValue(issue.input) ? `, which YAML reads as the number ${describeValue(issue.input)}` : "";
  // Where a mapping is meant (`env: !!timestamp ...`), the time without its tag would be no mapping either: not told to drop the tag.
  const mapping = issue.code === "invalid_type" && (issue.expected === "record" || issue.expected === "object" || issue.expected === "map");
  return `${issue.message}, got ${number ?? describeValue(issue.input, mapping)}${read}`;
}

/** A field left out: its value undefined. */
function isMissing(issue: Issue): boolean {
  return issue.code === "invalid_type" && "input" in issue && issue.input === undefined;
}

/** The paths (as JSON) of the fields an unknown key among `issues` was meant to be, by unknownKeyMessage's "did you mean". */
function keysMeant(issues: readonly Issue[], base: DataPath): Set<string> {
  const meant = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== "unrecognized_keys") continue;
    const path = [...base, ...issue.path];
    for (const key of issue.keys) {
      const field = keyMeant(path, key);
      if (field !== undefined) meant.add(JSON.stringify([...path, field]));
    }
  }
  return meant;
}

/** The fields an object at `path` takes. */
function allowedKeys(path: DataPath): readonly string[] {
  return path.at(-1) === "backoff" ? ["base", "max"] : path.length === 0 ? topKeys : path[0] === "defaults" ? defaultsKeys : taskKeys;
}

/** The field an unknown key at `path` was meant to be, where one can be told: another tool's name for it (`command`, misspelt too), or it misspelt (`rn`). */
export function keyMeant(path: DataPath, key: string): string | undefined {
  if (key === "<<") return undefined;
  const allowed = allowedKeys(path);
  // Taskfile's desc is a description, told so (TASK_NAME_NOTE), not a dependsOn misspelt.
  if (key.toLowerCase() === "desc" && path.length === 2 && path[0] === "tasks") return undefined;
  const synonym = SYNONYMS[key.toLowerCase()] ?? synonymMisspelt(key, allowed);
  return synonym !== undefined && allowed.includes(synonym) ? synonym : closestMatch(key, allowed);
}

/** What to say of a `//` or `/*` (JavaScript's, JSONC's comment) written where YAML reads it as text: a key's, an id's, a line yaml cannot read. */
export function slashCommentWords(written: string, json: boolean): string {
  if (json) return `${written} starts no comment in JSON, which has none: remove it`;
  return `${written} starts no comment in YAML: a comment starts with # (at a line's start, or after a space); write # in its place${written === "/*" ? ", and drop the */" : ""}`;
}

/**
 * Whether a top-level key is told to go under `tasks:` (build: { run: make }, as a GitLab CI job is written): a task's fields
 * below a key that could be its id, which is neither a field misspelt nor a block kept for its anchor (`base: &base`).
 */
export function topKeyAsTask(key: string, value: unknown, locator: SourceLocator): boolean {
  return keyMeant([], key) === undefined && couldBeTask(key, value) && !keptForAnchor(key, locator);
}

/** A top-level key whose value starts with an anchor (`base: &base`): a block kept to merge into tasks (<<: *base). */
function keptForAnchor(key: string, locator: SourceLocator): boolean {
  const offset = locator.offsetOf([key], "key");
  return /^[^\n]*?:[ \t]*&[^\s,[\]{}]+/.test(locator.textAt(offset, Math.max(0, locator.offsetOf([key]) - offset)));
}

/** A top-level key that could be a task's id, a task's fields below it: one meant to go under `tasks:`. */
function couldBeTask(key: string, value: unknown): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(key) && looksLikeTask(value);
}

function unknownKeyMessage(path: DataPath, key: string, value: unknown, anchored = false, json = false): string {
  const owner = ownerOf([...path, key]);
  if (path.length === 1 && path[0] === "defaults" && (key === "run" || key === "dependsOn")) {
    // GitHub Actions' `defaults: run: { shell, working-directory }`: no command to set on each task.
    if (key === "run" && isGithubDefaultsRun(value)) return `\`defaults\` cannot set \`run\`; ${GITHUB_DEFAULTS_RUN_NOTE}`;
    return `\`defaults\` cannot set \`${key}\`; set it on each task`;
  }
  const where = path.length === 0 ? "at the top level" : path.length === 2 && path[0] === "tasks" ? "" : `in \`${describeRaw(path.slice(path[0] === "tasks" ? 2 : 0))}\``;
  // `{ retries\uff1a 2 }`: a key and its value read as one key, told as the full-width colon between them.
  const fullWidth = fullWidthColonKey(key);
  if (fullWidth !== undefined) return `${owner}unknown key ${quote(key)}${where ? " " + where : ""}; ${fullWidthColonWords(fullWidth)}`;
  const meant = keyMeant(path, key);
  const hint = anchored
    ? `; a top-level key kept for its anchor is named with x- (x-${key}), which taskq ignores`
    : key === "<<"
      ? "; quoted, it is a key like any other: write it unquoted (<<: *base) to merge a mapping into this one"
      : meant !== undefined && !(key.includes("\u00a0") && key.trim() === meant) && key.replace(INVISIBLE, "") !== meant // `\u00a0retries`, `ret\u200bries`: the character is told (see noBreakSpaceInKey, invisibleInKey)
        ? `; did you mean "${meant}"?${synonymNote(key, meant)}`
        : "";
  const habit = githubActionsNote(path, key, value);
  // Only a key that could be a task id: one that cannot (a BOM of files joined with cat before it) has another problem.
  const task = hint === "" && path.length === 0 && couldBeTask(key, value) ? `; to make it a task, indent it under \`tasks:\` (tasks: { ${key}: { run: ... } })` : "";
  const stages = hint === "" && path.length === 0 && key === "stages" ? "; taskq has no stages: a task waits for those it lists in `dependsOn`" : "";
  // `// retries: 2`, a JSONC comment before a key: read as the key's text; a did-you-mean of the key after it would not say why.
  const slashes = /^\/[/*]/.test(key) ? `; ${slashCommentWords(key.slice(0, 2), json)}` : undefined;
  // `\ufeff  b`: a byte order mark inside the file, where a second file was joined to it (cat a.yaml b.yaml), which no editor shows.
  const mark = key.startsWith("\ufeff")
    ? "; it starts with a byte order mark (U+FEFF), which most editors do not show, left where another file was joined to this one (cat a.yaml b.yaml): delete it"
    : "";
  return `${owner}unknown key ${quote(key)}${where ? " " + where : ""}${slashes ?? `${hint}${task}${stages}`}${mark}${habit}`;
}

/**
 * Another tool's name for a field, misspelt (`comand`, `enviroment`), where the field's own
 * name is too far from it in spelling for a "did you mean" (`comand` is 5 edits from `run`, 1
 * from `command`): the field, unless the key is as near a field of its own.
 */
function synonymMisspelt(key: string, allowed: readonly string[]): string | undefined {
  if (closestMatch(key, allowed) !== undefined) return undefined;
  const near = closestMatch(key.toLowerCase(), Object.keys(SYNONYMS));
  return near === undefined ? undefined : SYNONYMS[near];
}

/**
 * What taskq does instead of a GitHub Actions key it has no field for, at the top level (`on`,
 * `jobs` holding jobs with steps or runs-on) or in a task (`steps`, `if`, `runs-on`, `uses`).
 */
function githubActionsNote(path: DataPath, key: string, value: unknown): string {
  if (path.length === 0 && key === "jobs") return isGithubJobs(value) ? GITHUB_JOBS_NOTE : "";
  const notes = path.length === 0 ? GITHUB_TOP_NOTES : path.length === 2 && path[0] === "tasks" ? GITHUB_TASK_NOTES : path.length === 1 && path[0] === "defaults" ? GITHUB_DEFAULTS_NOTES : {};
  return Object.hasOwn(notes, key) ? `; ${notes[key]!}` : "";
}

/** GitHub Actions' `defaults.run`: a mapping with its `shell` or `working-directory`. */
function isGithubDefaultsRun(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) && ("shell" in value || "working-directory" in value);
}

/** What GitHub Actions' `defaults.run` is told. */
const GITHUB_DEFAULTS_RUN_NOTE =
  "GitHub Actions' defaults.run has no place here: every task's run is run by /bin/sh -c (for bash, write run: bash -c '...' in the task), and the folder every task runs in is defaults.cwd";

/** A top-level `jobs` written as GitHub Actions writes it: some job with `steps` or `runs-on`. */
function isGithubJobs(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).some((job) => typeof job === "object" && job !== null && ("steps" in job || "runs-on" in job));
}

/** After the "did you mean" that `jobs` gets. */
const GITHUB_JOBS_NOTE =
  " A GitHub Actions job is a task here, under `tasks:`: its steps' commands go in the task's one `run` (joined with &&, or one a line in a | block whose first line is set -e), needs is dependsOn, and runs-on has no place: tasks run where taskq does";

/** What a fail-fast written in a task or in `defaults` is told (GitHub Actions' `strategy: { fail-fast: ... }` is a job's): it is the run's, at the top level. */
const FAIL_FAST_NOTE =
  "fail-fast is the whole run's: set it at the top level (failFast: true) or give run --fail-fast, not per task; without it, a task that fails cancels its dependents only";

/** What GitHub Actions' `strategy` is told, at the top level, in a task or in `defaults`. */
const STRATEGY_NOTE =
  "taskq has no matrix: write each combination as a task of its own; GitHub Actions' strategy.fail-fast is the top-level failFast here (failFast: true), which is false unless set";

/** The keys of a fail-fast as other tools write it (and taskq's own), each told FAIL_FAST_NOTE in a task and in `defaults`. */
const FAIL_FAST_NOTES: Record<string, string> = Object.fromEntries(["failFast", "fail-fast", "fail_fast", "failfast"].map((key) => [key, FAIL_FAST_NOTE]));

/** What a top-level `description` or `desc` is told: the workflow's `name` names it, and an x- key or a comment keeps more. */
const WORKFLOW_DESCRIPTION_NOTE =
  "a workflow is named by its `name` (name: ci); to keep a description beside it, write it in a YAML comment, or under a key that starts with x- (x-description: ...), which taskq ignores";

/** What taskq does instead of a GitHub Actions top-level key (or another runner's: a workflow's description). */
const GITHUB_TOP_NOTES: Record<string, string> = {
  on: "taskq has no triggers: a workflow runs when `taskq run` is given it, so call that from what starts it (a CI job, a git hook, cron)",
  // Azure Pipelines', Taskfile's and others' text beside the workflow's name; a task's is told TASK_NAME_NOTE.
  description: WORKFLOW_DESCRIPTION_NOTE,
  // Taskfile's word for it, as a task's `desc` is told TASK_NAME_NOTE.
  desc: WORKFLOW_DESCRIPTION_NOTE,
  // A job's matrix and its fail-fast, written at the top level.
  strategy: STRATEGY_NOTE,
};

/** What taskq does instead of GitHub Actions' continue-on-error (GitLab CI's allow_failure), written in a task. */
const ALLOWED_FAILURE_NOTE =
  "taskq has no such option: a task that fails fails the run (exit 1) and cancels its dependents; to let a command fail without that, end the task's run with || true (the task then succeeds whatever the command's exit code)";

/**
 * Other tools' keys for a task allowed to fail, each told ALLOWED_FAILURE_NOTE, in a task and in `defaults`: GitHub
 * Actions' (continue-on-error), GitLab CI's (allow_failure), Azure Pipelines' and Taskfile's, Ansible's (ignore_errors)
 * and Task's (ignore_error).
 */
const ALLOWED_FAILURE_NOTES: Record<string, string> = Object.fromEntries(
  ["continue-on-error", "allow_failure", "continueOnError", "continue_on_error", "ignore_error", "ignore_errors", "ignoreErrors"].map((key) => [key, ALLOWED_FAILURE_NOTE]),
);

/** What `concurrency` in a task or in `defaults` is told: it is the run's, at the top level. */
const CONCURRENCY_NOTE =
  "concurrency is the whole run's, how many tasks run at once: set it at the top level (concurrency: 4) or give run -j, not per task; a task has no limit of its own, and dependsOn orders tasks that must not run together";

/** What a task's `name` or `description` is told: its id names it, and an x- key or a comment keeps more. */
const TASK_NAME_NOTE =
  "a task is named by its id, its key under tasks:, which its log file and the run's lines name it by; to keep a longer name or a description beside it, write it in a YAML comment, or under a key that starts with x- (x-description: ...), which taskq ignores";

/** What taskq does instead of a GitHub Actions key in a job (or step), written in a task. */
const GITHUB_TASK_NOTES: Record<string, string> = {
  steps:
    "a task runs one command, its `run`: write the steps' commands there, joined with && (run: npm ci && npm test), or one a line in a | block whose first line is set -e; or make each step a task that dependsOn the one before",
  if: "taskq has no conditions on a task: test in its run, and exit 0 to skip the rest (run: '[ \"$BRANCH\" = main ] || exit 0; ./deploy.sh')",
  "runs-on": "there is no runner to choose: tasks run on the machine taskq runs on (with run --store, on the worker that leases them); remove it",
  uses: "taskq runs shell commands, not actions: write in `run` the command that does what the action did",
  ...ALLOWED_FAILURE_NOTES,
  // A GitHub Actions step's or job's display name, or a task's description as other runners take it (Taskfile's desc).
  name: TASK_NAME_NOTE,
  description: TASK_NAME_NOTE,
  desc: TASK_NAME_NOTE,
  shell: "every task's run is run by /bin/sh -c, and a task has no shell to choose: for bash, write run: bash -c '...', or run a script file that begins with #!/bin/bash",
  // GitHub Actions' job-level concurrency group, or taskq's own top-level key written in a task.
  concurrency: CONCURRENCY_NOTE,
  // A job's matrix and its fail-fast, or taskq's own top-level failFast written in a task.
  strategy: STRATEGY_NOTE,
  ...FAIL_FAST_NOTES,
};

/** What taskq does instead of a GitHub Actions (or GitLab CI) key of a task's, written in `defaults`, where those tools set it for every job. */
const GITHUB_DEFAULTS_NOTES: Record<string, string> = {
  ...ALLOWED_FAILURE_NOTES,
  concurrency: CONCURRENCY_NOTE,
  strategy: STRATEGY_NOTE,
  ...FAIL_FAST_NOTES,
  shell: GITHUB_TASK_NOTES.shell!,
};

/** A top-level value written as a task is (a GitLab CI job, `build: { script: ..., stage: ... }`): a mapping with a task's field, or another tool's name for one. */
function looksLikeTask(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.keys(value).some((field) => taskKeys.includes(field) || SYNONYMS[field.toLowerCase()] === "run");
}

/** What a field other tools call `key` takes, where it differs from what theirs does (attempts in all, minutes). */
function synonymNote(key: string, synonym: string): string {
  if (synonym === "retries" && /attempt/i.test(key)) return " It counts the attempts after the first: 3 attempts in all is `retries: 2`, and 1 (no retry) is `retries: 0`, the default";
  if (synonym === "timeout" && /minutes/i.test(key)) return ` It takes a duration: \`${key}: 10\` is \`timeout: 10m\``;
  if (synonym === "backoff") return ` It takes a mapping: \`base\`, the wait before the first retry, doubled at each retry after it up to \`max\`; each wait is anywhere from 0 to that (full jitter), so \`${key}: 5s\` is nearest \`backoff: { base: 5s, max: 5s }\``;
  // `fail-fast:` as GitHub Actions' strategy writes it (true there unless set): taskq's is false unless set.
  if (synonym === "failFast" && /[-_]/.test(key)) return " GitHub Actions' strategy.fail-fast is written so here, at the top level: `failFast: true` stops the run at the first task that fails for good; without it (the default), a failure cancels its dependents only";
  if (synonym === "timeout" && /seconds/i.test(key)) return ` It takes a duration, or a number of seconds: \`${key}: 30\` is \`timeout: 30\` (30s)`;
  return "";
}

/** What other tools call a field (lowercased), for a "did you mean" that spelling alone would not find (`cmd` is nearer to `cwd`). */
const SYNONYMS: Record<string, string> = {
  cmd: "run",
  // Taskfile's (go-task): a list of commands; told "did you mean cwd?", the nearer field in spelling.
  cmds: "run",
  command: "run",
  commands: "run",
  script: "run",
  exec: "run",
  needs: "dependsOn",
  depends: "dependsOn",
  depends_on: "dependsOn",
  deps: "dependsOn",
  dependencies: "dependsOn",
  after: "dependsOn",
  requires: "dependsOn",
  retry: "retries",
  // The wait between attempts, as other tools name it: taskq's is its backoff.
  retrydelay: "backoff",
  retry_delay: "backoff",
  "retry-delay": "backoff",
  attempts: "retries",
  maxattempts: "retries",
  max_attempts: "retries",
  "max-attempts": "retries",
  maxretries: "retries",
  max_retries: "retries",
  "timeout-minutes": "timeout",
  timeout_minutes: "timeout",
  timeout_seconds: "timeout",
  "timeout-seconds": "timeout",
  timeoutseconds: "timeout",
  not_before: "runAt",
  notbefore: "runAt",
  environment: "env",
  variables: "env",
  vars: "env",
  workdir: "cwd",
  working_directory: "cwd",
  "working-directory": "cwd",
  // docker compose's, and Azure Pipelines' workingDirectory.
  working_dir: "cwd",
  "working-dir": "cwd",
  workingdirectory: "cwd",
  dir: "cwd",
  parallelism: "concurrency",
  "max-parallel": "concurrency",
  max_parallel: "concurrency",
  jobs: "tasks",
  steps: "tasks",
};

/** `task "id": ` for paths inside a task, else "". */
function ownerOf(path: DataPath): string {
  return path[0] === "tasks" && path.length >= 2 ? `task ${quote(String(path[1]))}: ` : "";
}

/** The id of the task a problem at `path` is of (its whole id, which ownerOf may shorten); undefined for any other. */
function taskOf(path: DataPath): string | undefined {
  return path[0] === "tasks" && path.length >= 2 ? String(path[1]) : undefined;
}

/** The field label: `retries`, `backoff.max`, `dependsOn[1]`, `defaults.timeout`. */
function describePath(path: DataPath): string {
  const field = path[0] === "tasks" ? path.slice(2) : path;
  return field.length === 0 ? (path[0] === "tasks" ? "the task" : "the file") : `\`${describeRaw(field)}\``;
}

function describeRaw(path: DataPath): string {
  return path.map((segment, index) => (typeof segment === "number" ? `[${segment}]` : `${index === 0 ? "" : "."}${String(segment)}`)).join("");
}

/**
 * A short, safe description of a value found in the file. Where a mapping is expected (`mapping`), a `!!timestamp` is told
 * without the advice to drop the tag: a time without it is no mapping either.
 */
export function describeValue(value: unknown, mapping = false): string {
  if (value === undefined) return "nothing";
  if (value === null) return "nothing (null)";
  if (typeof value === "string") return value === "" ? "an empty string" : quote(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (ArrayBuffer.isView(value)) return "binary data";
  // `!!timestamp 2026-12-01T02:00:00Z`: YAML 1.1's tag makes a Date, which is no mapping.
  if (value instanceof Date) return mapping ? "a YAML timestamp (!!timestamp)" : "a YAML timestamp (!!timestamp): write the time without the tag";
  if (Array.isArray(value)) return value.length === 0 ? "an empty list" : "a list";
  if (value instanceof Map || typeof value === "object") return "a mapping";
  return typeof value;
}

/** What a no-break space (U+00A0) where a space was meant is told, at `lineCol` (where its escape is, in a "-quoted scalar, with that escape). */
export function noBreakSpaceWords(lineCol: string, escape?: string): string {
  return escape === undefined
    ? `there is a no-break space (U+00A0) at ${lineCol}, which YAML reads as text, not as a space; replace it with a space`
    : `there is a no-break space (U+00A0), written ${escape}, at ${lineCol}, which YAML reads as text, not as a space; replace it with a space`;
}

/**
 * A key followed by a full-width colon at the start of `text` (`retries\uff1a 2`, `01-fetch\uff1a`, `\u53d6\u5f97\uff1a`), which YAML
 * reads as text, not as the key's colon: the key. A name as a key is written followed by it anyhow; any other key (`01-fetch`, CJK
 * text) only where a space, or the line's end, follows it, as after a key's colon: CJK text with one in it (`\u8bf4\u660e\uff1a...`), meant
 * as text, has none. After a list's `- ` too (`- retries\uff1a 2`).
 */
const FULL_WIDTH_COLON_KEY = /^\s*(?:- +)?(?:([A-Za-z_][A-Za-z0-9_]*)\s*\uff1a|([^\s"'[{#:\uff1a-][^\s:\uff1a]*)\uff1a(?=\s|$))/;

/**
 * The key a full-width colon follows at the start of `text` (see FULL_WIDTH_COLON_KEY), if one does. With `valued`, only
 * where a value follows it too (`A\uff1a 1`, read as one value): a value that ends in one (`5m\uff1a`, an id `build\uff1a`) is no key.
 */
export function fullWidthColonKey(text: string, valued = false): string | undefined {
  const found = FULL_WIDTH_COLON_KEY.exec(text);
  if (found === null || (valued && text.slice(found[0].length).trim() === "")) return undefined;
  return found[1] ?? found[2];
}

/**
 * What to say of `key` followed by a full-width colon (`retries\uff1a 2`), which YAML reads as text. `outOf`: the field it is written
 * in as one of its items (`dependsOn`), where a key is no item: written with the ASCII colon, it is to move out of there.
 */
export function fullWidthColonWords(key: string, outOf?: string): string {
  const colon = `the colon after ${key} is a full-width one, \uff1a (U+FF1A, as a Chinese or Japanese input method types it), which YAML reads as text, not as a key's colon`;
  return outOf === undefined ? `${colon}; write ${key}: with the ASCII colon` : `${colon}; ${key} is a task's field, not an item of ${outOf}: move it out of ${outOf}, written ${key}: with the ASCII colon`;
}

/** Whether `key` is one of the mapping that `field`'s value is (an env's variable name, a backoff's or defaults' field): see valueHint. */
function keyOfFieldMapping(field: string, key: string): boolean {
  if (field === "env") return ENV_NAME_PATTERN.test(key);
  if (field === "backoff") return key === "base" || key === "max";
  if (field === "defaults") return defaultsKeys.includes(key);
  return false;
}

/**
 * For a key that starts or ends with a no-break space (`\u00a0 retries` from a line indented
 * with one, pasted from a web page; `retries\u00a0:`), which YAML reads as part of the key: where
 * it is, and to replace it. Empty for a key with none there (`b\u00a0c`, a name: its quoted
 * form shows it). In a quoted key (`"build\u00a0"`), where it is written, or its escape is
 * (`"\\u00a0retries"`, `"\\_retries"`: the escape's backslash).
 */
export function noBreakSpaceInKey(key: string, keyOffset: number, problems: ProblemList, locator: SourceLocator): string {
  const found = /^\s*\u00a0|\u00a0\s*$/.exec(key);
  if (found === null) return "";
  // A plain key's text is as written; a quoted one's is read from its quotes, where an escape is several characters.
  const source = locator.textAt(keyOffset, key.length * 10 + 2);
  let at = found.index + found[0].indexOf("\u00a0");
  let escape: string | undefined;
  if (source.startsWith('"') || source.startsWith("'")) {
    const written = quotedNoBreakSpaces(source);
    const index = found.index === 0 ? written[0] : written.at(-1);
    if (index === undefined) return "";
    at = index;
    if (source[at] === "\\") escape = NBSP_ESCAPE.exec(source.slice(at))![0];
  }
  return `; ${noBreakSpaceWords(problems.lineCol(keyOffset + at), escape)}`;
}

/** Characters no editor shows, which make a key or an id differ from the one it looks like; each with its name. */
const INVISIBLE_NAMES: Record<string, string> = {
  "\u00ad": "soft hyphen",
  "\u200b": "zero-width space",
  "\u200c": "zero-width non-joiner",
  "\u200d": "zero-width joiner",
  "\u200e": "left-to-right mark",
  "\u200f": "right-to-left mark",
  "\u2060": "word joiner",
  "\u2061": "function application",
  "\u2062": "invisible times",
  "\u2063": "invisible separator",
  "\u2064": "invisible plus",
  "\ufeff": "zero-width no-break space, or byte order mark",
  // The bidirectional embeddings, overrides and isolates, which reorder the text around them unseen, and the fillers and joiners that show as nothing.
  "\u202a": "left-to-right embedding",
  "\u202b": "right-to-left embedding",
  "\u202c": "pop directional formatting",
  "\u202d": "left-to-right override",
  "\u202e": "right-to-left override",
  "\u2066": "left-to-right isolate",
  "\u2067": "right-to-left isolate",
  "\u2068": "first strong isolate",
  "\u2069": "pop directional isolate",
  "\u180e": "Mongolian vowel separator",
  "\u3164": "Hangul filler",
  "\u034f": "combining grapheme joiner",
};
// U+034F, a combining mark, apart from the class: in it, it reads as joined to the character before.
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff]|\u034f/g;

/**
 * For a key or an id (`written`, at `offset`) that holds a character no editor shows (`ret\u200bries`, pasted from a chat or
 * a web page): which one, and where, as the key looks just like the one meant and its quote() (`"ret\u200bries"`) alone leaves
 * the reader to find the character. The first one's line and column; how many more. "" where there is none, or where it is
 * written as an escape in quotes (`"a\u200bb"`), which the file shows. A byte order mark that starts a key is told by
 * unknownKeyMessage, as where files were joined (`markTold`); one that starts a task id, an id in dependsOn or an env name, here.
 */
export function invisibleInKey(written: string, offset: number, problems: ProblemList, locator: SourceLocator, markTold = false): string {
  if (!INVISIBLE_ONE.test(written)) return "";
  // A plain key's text is as written; a quoted one's is read from its source up to its closing quote, an escape there several characters.
  const source = locator.textAt(offset, written.length * 10 + 2);
  const literal = source.startsWith('"') || source.startsWith("'") ? quotedInvisibles(source) : [...written.matchAll(INVISIBLE)].map((match) => match.index);
  // A byte order mark that starts an unknown key is told by unknownKeyMessage, as where files were joined.
  if (markTold && written.startsWith("\ufeff") && literal[0] === (source.startsWith('"') || source.startsWith("'") ? 1 : 0) && source[literal[0]] === "\ufeff") literal.shift();
  const at = literal[0];
  if (at === undefined) return "";
  const first = source[at]!;
  const code = `U+${first.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
  const more = literal.length - 1;
  const others = more === 0 ? "" : ` (and ${more} more such character${more === 1 ? "" : "s"})`;
  const without = source.startsWith('"') ? withoutWrittenInvisibles(written, source) : written.replace(INVISIBLE, "");
  return `; it holds an invisible character, ${code} (${INVISIBLE_NAMES[first]}), at ${problems.lineCol(offset + at)}${others}, which editors do not show: delete it${without === "" ? "" : `, leaving ${quote(without)}`}`;
}

/** One character of INVISIBLE, tested without its global flag's state. */
const INVISIBLE_ONE = new RegExp(INVISIBLE.source);

/**
 * Where each invisible character (see INVISIBLE) written as itself in a quoted scalar's source is, up to its closing quote: not one
 * written as an escape (`"a\u200bb"`), which the file shows. Read past the closing quote, the characters of another line's value were
 * told as the key's, at their place there.
 */
function quotedInvisibles(source: string): number[] {
  return quotedPlaces(source, (char) => INVISIBLE_ONE.test(char), () => false);
}

/**
 * Where a quoted scalar's source (from its opening quote) holds a character `isOne` takes, or a "-quoted escape
 * `isEscape` takes (given the source from its backslash), up to its closing quote.
 */
function quotedPlaces(source: string, isOne: (char: string) => boolean, isEscape: (from: string) => boolean): number[] {
  const quote = source[0]!;
  const found: number[] = [];
  for (let index = 1; index < source.length; index++) {
    const char = source[index]!;
    if (char === quote) {
      // '' is a ' inside a '-quoted scalar.
      if (quote === "'" && source[index + 1] === "'") index++;
      else break;
    } else if (quote === '"' && char === "\\") {
      if (isEscape(source.slice(index, index + 10))) found.push(index);
      index++;
    } else if (isOne(char)) found.push(index);
  }
  return found;
}

/** The hex digits of a "-quoted scalar's escape of a character by its code. */
const ESCAPE_DIGITS = new Map([["x", 2], ["u", 4], ["U", 8]]);

/**
 * `written`, a "-quoted scalar's value, without the invisible characters its `source` holds as themselves: one written as an
 * escape (`"a\u200bb"`) is meant, as the file shows it, and kept, where "delete it" is said of the others. Each of `written`'s
 * in turn is one of the source's, as itself or as an escape (\x, \u or \U: only those write one), in the same order.
 */
function withoutWrittenInvisibles(written: string, source: string): string {
  const asItself: boolean[] = [];
  for (let index = 1; index < source.length && source[index] !== '"'; index++) {
    const char = source[index]!;
    if (char === "\\") {
      const digits = ESCAPE_DIGITS.get(source[index + 1] ?? "");
      const hex = digits === undefined ? "" : source.slice(index + 2, index + 2 + digits);
      if (digits !== undefined && /^[0-9a-fA-F]+$/.test(hex) && hex.length === digits) {
        const code = Number.parseInt(hex, 16);
        if (code <= 0x10ffff && INVISIBLE_ONE.test(String.fromCodePoint(code))) asItself.push(false);
      }
      index++;
    } else if (INVISIBLE_ONE.test(char)) asItself.push(true);
  }
  let nth = 0;
  return written.replace(INVISIBLE, (char) => (asItself[nth++] === false ? char : ""));
}

/** A "-quoted scalar's escape of a no-break space. */
const NBSP_ESCAPE = /^\\(?:_|x[aA]0|u00[aA]0|U000000[aA]0)/;

/** Where each no-break space of a quoted scalar's source is written (U+00A0 itself, or a " escape of it), up to its closing quote. */
function quotedNoBreakSpaces(source: string): number[] {
  return quotedPlaces(source, (char) => char === "\u00a0", (from) => NBSP_ESCAPE.test(from));
}

/** Whether YAML's core schema reads a plain scalar written `text` as null (`~`, `null`, `Null`, `NULL`). */
export function readsAsNull(text: string): boolean {
  return /^(?:~|null|Null|NULL)$/.test(text);
}

/**
 * JSON-quotes text, shortened past 60 characters so hostile input cannot flood the terminal.
 * DEL, the C1 controls (U+0080 to U+009F: a terminal may obey U+009B as ESC [), the line
 * separators and the bidirectional overrides and isolates (see escapeControls), which JSON
 * leaves as they are, are escaped as `\u009b` too; so are the characters that show as nothing
 * or as a space (a byte order mark, a no-break or zero-width space, a soft hyphen, the
 * direction marks, a Mongolian vowel separator, a Hangul filler, a combining grapheme joiner),
 * which made `"\ufeff  b"` read as `"  b"`.
 */
export function quote(text: string): string {
  return JSON.stringify(shortened(text)).replace(/[\u007f-\u00a0\u00ad\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff]|\u034f/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
