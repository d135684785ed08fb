import { statSync } from "node:fs";
import { Argument, Command, CommanderError, Option } from "commander";
import { escapeControlsInLines } from "../escape-controls.js";
import { didYouMean } from "../loaders/suggest.js";
import { shellWord } from "./shell-word.js";
import { shownWords } from "./shown-words.js";
import { hidePasswords } from "../store/postgres/redact.js";

/** commander reports usage errors with exit code 1; taskq's contract says 2. */
function toUsageExit(error: CommanderError): never {
  const exitCode = error.exitCode === 0 ? 0 : 2;
  throw Object.assign(new CommanderError(exitCode, error.code, error.message), { exitCode });
}

/** Commands as other programs name them, and what taskq calls them. */
const COMMANDS_NAMED_OTHERWISE = new Map([
  ["version", "taskq --version"],
  ["check", "validate"],
  ["lint", "validate"],
  ["verify", "validate"],
]);

/**
 * commander compares an unknown `--flag=value` whole with the known flags, so `--ouput=json`
 * got no "Did you mean --output?" where `--ouput json` did: the flag is looked up without
 * its value.
 */
class TaskqCommand extends Command {
  override createCommand(name?: string): Command {
    return new TaskqCommand(name);
  }

  /**
   * commander's own, which suggests by spelling alone: `taskq check` got "Did you mean schema?".
   * A name other programs give what a command of taskq does is pointed to that command.
   */
  unknownCommand(): void {
    const name = this.args[0] ?? "";
    const meant = COMMANDS_NAMED_OTHERWISE.get(name.toLowerCase());
    if (meant !== undefined) this.error(`taskq: unknown command '${name}'\n(Did you mean ${meant}?)`, { code: "commander.unknownCommand" });
    // `taskq ci.yaml`, as make and just are started: a workflow file where the command goes.
    if (this.parent === null && looksLikeWorkflow(name)) {
      // The run suggested with the flags given (`taskq ci.yaml --dry-run`: pasted without them, it would run).
      // A store's URL among them with its password hidden, as every message shows it.
      const given = shownWords((this as unknown as { rawArgs: string[] }).rawArgs.slice(2)).map(shellWord).join(" ");
      this.error(`taskq: unknown command '${name}': a workflow file goes after a command\n(Did you mean taskq run ${given}? Or taskq validate ${shellWord(name)}?)`, { code: "commander.unknownCommand" });
    }
    (Command.prototype as unknown as { unknownCommand(this: Command): void }).unknownCommand.call(this);
  }

  /**
   * commander's own said "Expected 1 argument but got 2", naming neither: `taskq run
   * workflows/*.yaml`, a glob that matched several files, is told that it takes one file and
   * how to check each; a word after a flag that takes no value (`--dry-run yes`) is named.
   */
  _excessArguments(received: string[], expected = this.registeredArguments.length): void {
    const extra = received.slice(expected);
    const takesFile = this.registeredArguments[0]?.name() === "file";
    if (!takesFile || extra.length === 0) {
      (Command.prototype as unknown as { _excessArguments(this: Command, received: string[]): void })._excessArguments.call(this, received);
      return;
    }
    // Each word by its place in the command line, not by its value: a flag's value that is also a file's
    // name (`--log-dir ci.yaml`) is neither that file nor a word given besides.
    const args = ((this.parent ?? this) as unknown as { rawArgs: string[] }).rawArgs.slice(2);
    const roles = wordRoles(this, args);
    const places = roles.flatMap((role, index) => (role === "operand" ? [index] : []));
    if (places.length !== received.length || places.some((place, index) => args[place] !== received[index])) {
      (Command.prototype as unknown as { _excessArguments(this: Command, received: string[]): void })._excessArguments.call(this, received);
      return;
    }
    // A word after a flag that takes no value (`run --dry-run yes ci.yaml`) may come before the file, and is then the first received.
    const flagBefore = (index: number): string | undefined => {
      const before = args[places[index]! - 1];
      return before !== undefined && roles[places[index]! - 1] === "flag" && takesNoValue(this, before) ? before : undefined;
    };
    // A workflow file after such a flag (`run --dry-run a.yaml b.yaml`, a glob of two) is one of several files, not the flag's value.
    const strayAt = received.findIndex((word, index) => flagBefore(index) !== undefined && !looksLikeWorkflow(word));
    if (strayAt !== -1 && received.length === expected + 1) {
      const file = received.find((_, index) => index !== strayAt)!;
      this.error(`taskq: too many arguments for '${this.name()}': it takes one workflow file (${file}), and got '${received[strayAt]!}' besides; ${flagBefore(strayAt)!} takes no value: give it alone`, { code: "commander.excessArguments" });
    }
    if (extra.every(looksLikeWorkflow)) {
      // A glob's hundred files are not all repeated: the first three stand for them.
      const shown = received.length > 4 ? received.slice(0, 3) : received;
      const more = received.length - shown.length;
      const named = more === 0 ? shown.join(", ") : `${shown.join(", ")} and ${more} more`;
      const loop = `for f in ${shown.map(shellWord).join(" ")}${more === 0 ? "" : " ..."}; do taskq ${commandForEach(args, places)}; done`;
      this.error(`taskq: too many arguments for '${this.name()}': it takes one workflow file, and got ${received.length} (${named}); for each in turn: ${loop}`, { code: "commander.excessArguments" });
    }
    const words = extra.map((word) => `'${word}'`).join(", ");
    const before = flagBefore(expected);
    const flag = before !== undefined ? `; ${before} takes no value: give it alone` : "";
    // `submit ci.yaml test`, as `run ci.yaml test` selects: a durable run is every task of its file.
    const selecting = this.name() === "submit" && flag === "" ? "; a durable run runs every task of its file: selecting tasks is for taskq run without a store" : "";
    this.error(`taskq: too many arguments for '${this.name()}': it takes one workflow file (${received[0]!}), and got ${words} besides${flag}${selecting}`, { code: "commander.excessArguments" });
  }

  /**
   * commander's own said "missing required argument 'file'" alone where the file was given, after a
   * flag that takes a value and had none (`run --log-dir ci.yaml`): the flag took the file as its
   * value. That word is named, and the flag that took it.
   */
  missingArgument(name: string): void {
    const args = ((this.parent ?? this) as unknown as { rawArgs: string[] }).rawArgs.slice(2);
    const roles = wordRoles(this, args);
    const taken = roles.flatMap((role, index) => (role === "value" && looksLikeWorkflow(args[index]!) ? [index] : []));
    if (name === "file" && taken.length > 0) {
      const index = taken.at(-1)!;
      this.error(`taskq: missing required argument 'file': ${args[index - 1]!} took ${args[index]!} as its value; give ${args[index - 1]!} its own value, before the workflow file`, { code: "commander.missingArgument" });
    }
    (Command.prototype as unknown as { missingArgument(this: Command, name: string): void }).missingArgument.call(this, name);
  }

  /**
   * commander's own said a bad choice (`--output xml`) as "option '--output <mode>' argument 'xml'
   * is invalid. Allowed choices are ...", unlike taskq's other flag errors: said as they are
   * (`--output: "xml" is not one of ...`), with the choice meant where one is close (`--output jsno`).
   */
  _callParseArg(target: Option | Argument, value: string, previous: unknown, invalidArgumentMessage: string): unknown {
    const choices = target instanceof Option ? target.argChoices : undefined;
    if (target instanceof Option && choices !== undefined && !choices.includes(value)) {
      const name = target.long ?? target.short ?? target.flags;
      this.error(`taskq: ${name}: ${JSON.stringify(value)} is not one of ${choices.join(", ")}${didYouMean(value, choices)}${imageHint(name, choices, value)}`, { code: "commander.invalidArgument" });
    }
    return (Command.prototype as unknown as { _callParseArg(this: Command, ...args: unknown[]): unknown })._callParseArg.call(this, target, value, previous, invalidArgumentMessage);
  }

  /** commander's own (untyped; a test holds it to its message). */
  unknownOption(flag: string): void {
    const equals = flag.startsWith("--") ? flag.indexOf("=") : -1;
    const name = equals === -1 ? flag : flag.slice(0, equals);
    // `--dry-run=yes`: commander calls a flag that takes no value, given one, unknown, and then suggests that very flag.
    if (equals !== -1 && takesNoValue(this, name)) this.error(`taskq: option '${name}' takes no value: give it as ${name}, not ${flag}`, { code: "commander.unknownOption" });
    // `worker --run-id`: a flag of other commands, not of this one, is said to be theirs, not only unknown
    // (`-j2` too: a short flag with its value joined, which commander passes whole).
    const short = /^-[^-]/.test(name) ? name.slice(0, 2) : name;
    const other = otherCommandsFlag(this, short);
    if (other !== undefined) {
      const owners = other.owners.map((owner) => `'${owner}'`);
      const listed = owners.length === 1 ? owners[0]! : `${owners.slice(0, -1).join(", ")} and ${owners.at(-1)!}`;
      // `taskq -j 2 run ci.yaml`: a command's flag before the command's name, where only taskq's own are read.
      if (this.parent === null) {
        const given = (this as unknown as { rawArgs: string[] }).rawArgs.find((arg) => other.owners.includes(arg)) ?? other.owners[0]!;
        this.error(`taskq: unknown option '${short}': an option of ${listed}, which goes after the command's name (taskq ${given} ${other.flag} ...)`, { code: "commander.unknownOption" });
      }
      this.error(`taskq: unknown option '${short}': '${this.name()}' takes no ${other.flag}, an option of ${listed} (see taskq help ${this.name()})`, { code: "commander.unknownOption" });
    }
    // `taskq -v`, as many programs print their version: commander suggests no short flag.
    if (name === "-v") this.error("taskq: unknown option '-v'\n(Did you mean -V, --version? Or --verbose?)", { code: "commander.unknownOption" });
    (Command.prototype as unknown as { unknownOption(this: Command, flag: string): void }).unknownOption.call(this, name);
  }
}

/** Image formats Graphviz's `dot` writes, which `graph --format` may be given for the picture meant. */
const IMAGE_FORMATS = new Set(["svg", "png", "pdf", "jpg", "jpeg", "gif", "ps", "eps"]);

/**
 * `graph --format svg`: taskq writes the graph's source, not a picture; Graphviz draws it from
 * `--format dot` (the command given, with --format dot, piped to `dot -Tsvg`).
 */
function imageHint(name: string, choices: readonly string[], value: string): string {
  const format = value.toLowerCase();
  if (name !== "--format" || !choices.includes("dot") || !IMAGE_FORMATS.has(format)) return "";
  const args = shownWords(process.argv.slice(2));
  const formatAt = args.findIndex((arg) => arg === "--format" || arg.startsWith("--format="));
  const command = [...args.slice(0, formatAt), "--format", "dot", ...args.slice(formatAt + (args[formatAt]!.includes("=") ? 1 : 2))].map(shellWord).join(" ");
  return `; taskq writes the graph's source, not a picture: for ${format.toUpperCase()}, have Graphviz draw it (taskq ${command} | dot -T${format} -o graph.${format})`;
}

/** Whether `name` is a workflow file: one that is there, or a name ending in .yaml or .yml. */
function looksLikeWorkflow(name: string): boolean {
  if (/\.ya?ml$/i.test(name)) return true;
  try {
    return statSync(name).isFile();
  } catch {
    return false;
  }
}

/**
 * The command line given (`args`, after node and the script), its workflow files (the words at
 * `places`) taken out and `"$f"` where the first of them was, each word as the shell reads it: a
 * loop over the files keeps every flag given (`--dry-run` above all: without it, each file would
 * run), and every flag's value, whatever file it names; a store's URL with its password hidden, as every message shows it.
 */
function commandForEach(args: readonly string[], places: readonly number[]): string {
  const words: string[] = [];
  shownWords(args).forEach((arg, index) => {
    if (!places.includes(index)) words.push(shellWord(arg));
    else if (index === places[0]) words.push('"$f"');
  });
  return words.join(" ");
}

/** What a word of the command line is to commander: a command's name, a flag, a flag's value, or an operand (a file, or a word given besides). */
type WordRole = "name" | "flag" | "value" | "operand";

/**
 * What each word of `args` (the command line after node and the script) is, read as commander reads
 * it for `command`: a flag of it, or of a command it belongs to (`--verbose`), that takes a value
 * takes the next word, whatever it is (`--log-dir --dry-run`: a folder's name); `--log-dir=x` and
 * `-j4` are one word; every word after `--` is an operand. By place, not by value: the words an
 * operand is matched with elsewhere.
 */
function wordRoles(command: Command, args: readonly string[]): WordRole[] {
  const options: Option[] = [];
  for (let current: Command | null = command; current !== null; current = current.parent) options.push(...current.options);
  // The names before the command's own operands: `run`, or none for taskq itself.
  let names = 0;
  for (let current = command; current.parent !== null; current = current.parent) names++;
  const roles: WordRole[] = [];
  let literal = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    const option = !literal && /^-./.test(arg) ? options.find((candidate) => candidate.long === arg || candidate.short === arg) : undefined;
    if (!literal && arg === "--") {
      roles.push("flag");
      literal = true;
    } else if (option !== undefined) {
      roles.push("flag");
      if (option.required || (option.optional && index + 1 < args.length && !/^-./.test(args[index + 1]!))) {
        roles.push("value");
        index++;
      }
    } else if (!literal && /^-./.test(arg) && !/^-(\d+|\d*\.\d+)(e[+-]?\d+)?$/.test(arg)) {
      // `-j4`, `--log-dir=x`, or an unknown flag (a usage error commander has said before); a negative number is an operand.
      roles.push("flag");
    } else if (names > 0) {
      roles.push("name");
      names--;
    } else roles.push("operand");
  }
  return roles;
}

/**
 * The flag `name` names among the other commands of `command`'s program (`--run-id`, a short `-j`, or
 * one written in another form, `--runid` or `--run_id`), and those commands; undefined when none has
 * it, or when `command` itself has a flag of that form (commander suggests it). Of the program
 * itself, the flag named among its commands.
 */
function otherCommandsFlag(command: Command, name: string): { flag: string; owners: string[] } | undefined {
  const form = (flag: string): string => flag.replace(/[-_]/g, "").toLowerCase();
  const matches = (flag: string | undefined): boolean => flag !== undefined && (flag === name || (name.startsWith("--") && flag.startsWith("--") && form(flag) === form(name)));
  if (command.options.some((option) => matches(option.long))) return undefined;
  let flag: string | undefined;
  const owners: string[] = [];
  for (const other of command.parent === null ? command.commands : command.parent.commands) {
    if (other === command) continue;
    const option = other.options.find((candidate) => matches(candidate.long) || candidate.short === name);
    if (option === undefined) continue;
    flag ??= option.short === name ? name : option.long;
    owners.push(other.name());
  }
  return flag === undefined ? undefined : { flag, owners };
}

/**
 * Whether `name` (`--dry-run`) is a flag of `command`, or of a command it belongs to (`--verbose`), that takes no value.
 * `--help` is one too, though commander keeps it apart from the other options.
 */
function takesNoValue(command: Command, name: string): boolean {
  for (let current: Command | null = command; current !== null; current = current.parent) {
    const help = (current as unknown as { _getHelpOption(): Option | null })._getHelpOption();
    const option = [...current.options, ...(help === null ? [] : [help])].find((candidate) => candidate.long === name);
    if (option !== undefined) return !option.required && !option.optional;
  }
  return false;
}

/**
 * The operands of `command` that come just after one of its flags that takes no value, and that flag: `run ci.yaml
 * --dry-run yes` meant `yes` for --dry-run, which the error for a task the file has not (`yes`) says.
 */
function wordsAfterFlags(command: Command): Map<string, string> {
  const args = ((command.parent ?? command) as unknown as { rawArgs: string[] }).rawArgs.slice(2);
  const roles = wordRoles(command, args);
  const after = new Map<string, string>();
  roles.forEach((role, index) => {
    const before = args[index - 1];
    if (role === "operand" && before !== undefined && roles[index - 1] === "flag" && takesNoValue(command, before)) after.set(args[index]!, before);
  });
  return after;
}

/** Whether the command line has a `--` with an operand after it: every word there is the command's own (`run ci.yaml -- x.yaml`). */
function afterDoubleDash(command: Command): boolean {
  const args = ((command.parent ?? command) as unknown as { rawArgs: string[] }).rawArgs.slice(2);
  const roles = wordRoles(command, args);
  const at = roles.findIndex((role, index) => role === "flag" && args[index] === "--");
  return at !== -1 && roles.slice(at + 1).includes("operand");
}

/** A flag and its default, shown as written (`default: 30s`, `default: .taskq/logs`), not as a JSON string (`"30s"`). */
function writtenDefault(flags: string, description: string, value: string): Option {
  return new Option(flags, description).default(value, value);
}

/**
 * The commander program. Each action normalises its flags, lazily imports the
 * one module it needs and calls one function; no logic lives here.
 */
export function buildProgram(version: string): Command {
  const program = new TaskqCommand("taskq")
    .description("Run a DAG of shell tasks described in a YAML file.")
    .version(version, "-V, --version")
    .option("--verbose", "on an error, print its stack trace too")
    .showSuggestionAfterError()
    // commander's own usage errors ("error: unknown option '--x'", "error: missing required argument 'file'") in
    // taskq's form, as every other error it prints: "taskq: ...". Set before the commands are added, which copy it.
    // An argument is quoted as given: its escape sequences (a title, a screen clear) written out, as taskq's own errors quote it.
    // A store's URL typed where a command or a flag's value goes (`taskq postgres://...`) is repeated: its password hidden.
    .configureOutput({ outputError: (text, write) => write(hidePasswords(escapeControlsInLines(text.replace(/^error: /, "taskq: ")))) })
    .configureHelp({ showGlobalOptions: true })
    .exitOverride(toUsageExit);

  program
    .command("run")
    .description("run a workflow file")
    .argument("<file>", "workflow YAML file (- for standard input)")
    .argument("[tasks...]", "run only these tasks and what they depend on (default: every task)")
    .option("-j, --concurrency <n>", "tasks running at once (default: the file's, else the CPU count or the container's CPU limit)")
    .addOption(writtenDefault("--shutdown-timeout <duration>", "after Ctrl-C, how long running tasks may finish", "10s"))
    .addOption(writtenDefault("--kill-grace <duration>", "between SIGTERM and SIGKILL of a task's process group", "5s"))
    .addOption(new Option("--output <mode>", "how to show progress").choices(["auto", "tty", "plain", "json"]).default("auto"))
    .addOption(writtenDefault("--log-dir <dir>", "root folder of the per-task logs", ".taskq/logs"))
    .option("--no-color", "no colours (NO_COLOR and FORCE_COLOR are honoured too)")
    .option("--fail-fast", "stop at the first task that fails (its retries used up): start nothing more, cancel what waits, stop what runs (default: the file's failFast)")
    .option("--no-fail-fast", "whatever the file's failFast says, a failure stops only its own dependents (with --store: leaves out the note that the file's failFast does not stop a durable run)")
    .option("--dry-run", "print the plan in start order; run nothing")
    .option("--store <url>", "run durably through PostgreSQL (default: TASKQ_STORE when set)")
    .option("--store-schema <name>", "PostgreSQL schema of the store (default: TASKQ_STORE_SCHEMA, else taskq)")
    .option("--run-id <id>", "with --store: the run's id (submitting the same id again is idempotent)")
    .option("--lease <duration>", "with --store: lease length, renewed by heartbeat every third of it (default: 30s)")
    // What a CI script branches on, where `run --help` is where it looks first (the README has each case).
    .addHelpText(
      "after",
      "\nExit codes:\n  0              every task succeeded\n  1              a task failed or was cancelled, or the run could not start (its log folder, its store, a limit)\n  2              bad usage, an invalid workflow file, or with --store a run id given again with another file (nothing ran)\n  130, 143, 129  interrupted by SIGINT, SIGTERM, SIGHUP",
    )
    .action(async (file: string, tasks: string[], flags: Record<string, unknown>, command: Command) => {
      // `taskq run workflows/*.yaml`, a glob of several files, is not a file and its tasks: said as for the other commands,
      // unless a word is a task of the file (`x.yaml:`), which runCommand tells once the file is read, or comes after `--`.
      const severalFiles =
        tasks.length > 0 && tasks.every((task) => /\.ya?ml$/i.test(task)) && !afterDoubleDash(command) ? () => (command as TaskqCommand)._excessArguments([file, ...tasks], 1) : undefined;
      const { runCommand } = await import("./commands/run.js");
      // Which stop times were given (not defaults): a nested run says so when it shortens them (see outer-grace.ts).
      const given = { shutdownTimeout: command.getOptionValueSource("shutdownTimeout") === "cli", killGrace: command.getOptionValueSource("killGrace") === "cli" };
      process.exitCode = await runCommand(file, { ...flags, stopTimesGiven: given }, tasks, tasks.length > 0 ? wordsAfterFlags(command) : undefined, severalFiles);
    });

  program
    .command("validate")
    .description("check workflow files, each in turn; run nothing (exit 2 if any has problems)")
    .argument("<files...>", "workflow YAML files (- for standard input)")
    .addOption(new Option("--output <mode>", "text or JSON: each file's verdict and notes as records").choices(["plain", "json"]).default("plain"))
    .action(async (files: string[], flags: { output?: string }) => {
      const { validateCommand } = await import("./commands/inspect.js");
      process.exitCode = await validateCommand(files, flags.output === "json");
    });

  program
    .command("list")
    .description("list a workflow's tasks in topological order")
    .argument("<file>", "workflow YAML file (- for standard input)")
    .action(async (file: string) => {
      const { listCommand } = await import("./commands/inspect.js");
      process.exitCode = await listCommand(file);
    });

  program
    .command("graph")
    .description("print the task graph (Mermaid, or Graphviz dot)")
    .argument("<file>", "workflow YAML file (- for standard input)")
    .addOption(new Option("--format <format>", "graph language").choices(["mermaid", "dot"]).default("mermaid"))
    .action(async (file: string, flags: { format: "mermaid" | "dot" }) => {
      const { graphCommand } = await import("./commands/inspect.js");
      process.exitCode = await graphCommand(file, flags.format);
    });

  program
    .command("schema")
    .description("print the JSON Schema of workflow files (for editors)")
    .action(async () => {
      const { schemaCommand } = await import("./commands/inspect.js");
      process.exitCode = await schemaCommand();
    });

  addDurableCommands(program);
  for (const command of program.commands) addJsonShorthand(command);
  addHelpCommand(program);
  return program;
}

/**
 * `--json`, as the design names NDJSON output and many tools spell it: `--output json`, on each
 * command whose --output has it. Given with another --output (`--json --output plain`), a usage error.
 */
function addJsonShorthand(command: Command): void {
  const output = command.options.find((option) => option.long === "--output");
  if (output?.argChoices?.includes("json") !== true) return;
  command.addOption(new Option("--json", "the same as --output json"));
  command.hook("preAction", (_, action) => {
    if (action.getOptionValue("json") !== true) return;
    const given = action.getOptionValue("output") as string;
    if (action.getOptionValueSource("output") === "cli" && given !== "json") {
      action.error(`taskq: --json is --output json, and --output ${given} was given too: give one`, { code: "commander.conflictingOption" });
    }
    action.setOptionValueWithSource("output", "json", "cli");
  });
}

/**
 * `taskq help [command]`, in place of commander's own, which answered a name it does not
 * know (`taskq help nope`) with the whole help on stderr and exit 2, never saying why.
 */
function addHelpCommand(program: Command): void {
  program.helpCommand(false);
  program
    .command("help")
    .description("display help for command")
    .argument("[command]", "the command to describe")
    .action(async (name: string | undefined) => {
      if (name === undefined) program.help();
      const command = program.commands.find((candidate) => candidate.name() === name);
      if (command !== undefined) command.help();
      // Said as `taskq nope` says it (with its "Did you mean"), by commander's own check of that name alone.
      await program.parseAsync([name], { from: "user" });
    });
}

/** The durable mode's commands: all talk to PostgreSQL through --store or TASKQ_STORE. */
function addDurableCommands(program: Command): void {
  const withStore = (command: Command): Command =>
    command
      .option("--store <url>", "PostgreSQL connection string (default: TASKQ_STORE)")
      .option("--store-schema <name>", "PostgreSQL schema of the store (default: TASKQ_STORE_SCHEMA, else taskq)");

  withStore(program.command("submit"))
    .description("validate a workflow and enqueue it as a durable run; prints the run id")
    .argument("<file>", "workflow YAML file (- for standard input)")
    .option("--run-id <id>", "the run's id (submitting the same id again is idempotent)")
    // A durable run does not stop at a failure: --no-fail-fast says the user knows, and leaves out the note on a file's `failFast: true`.
    // Taken to be refused with the reason `run --store --fail-fast` gives, not as an unknown option: a durable run does not stop at a failure.
    // Before --no-fail-fast: after it, commander would make failFast true where neither is given.
    .addOption(new Option("--fail-fast").hideHelp())
    .option("--no-fail-fast", "run a file with failFast: true without the note that a durable run does not stop at a failure")
    .addOption(new Option("--output <mode>", "the run id alone (notes on stderr), or JSON records of the run and its notes").choices(["plain", "json"]).default("plain"))
    .action(async (file: string, flags: Record<string, unknown>) => {
      const { submitCommand } = await import("./commands/durable.js");
      process.exitCode = await submitCommand(file, flags);
    });

  withStore(program.command("worker"))
    .description("lease and run durable tasks until stopped")
    .option("-j, --concurrency <n>", "tasks running at once (default: the CPU count or the container's CPU limit)")
    .addOption(writtenDefault("--shutdown-timeout <duration>", "on SIGINT, SIGTERM or SIGHUP, how long running tasks may finish", "10s"))
    .addOption(writtenDefault("--kill-grace <duration>", "between SIGTERM and SIGKILL of a task's process group", "5s"))
    .addOption(writtenDefault("--lease <duration>", "lease length, renewed by heartbeat every third of it", "30s"))
    .option("--metrics-port <port>", "serve Prometheus metrics on http://127.0.0.1:<port>/metrics")
    .option("--metrics-host <address>", "the address the metrics listen on instead (0.0.0.0: every IPv4 interface; ::, every interface)")
    .addOption(writtenDefault("--log-dir <dir>", "root folder of the per-task logs", ".taskq/logs"))
    .addOption(new Option("--output <mode>", "event lines").choices(["plain", "json"]).default("plain"))
    .option("--no-color", "no colours (NO_COLOR and FORCE_COLOR are honoured too)")
    .action(async (flags: Record<string, unknown>) => {
      const { workerCommand } = await import("./commands/durable.js");
      process.exitCode = await workerCommand(flags);
    });

  withStore(program.command("status"))
    .description("a durable run's summary")
    .argument("<run>", "run id")
    .option("--watch", "print counts every second until the run ends")
    .option("--no-color", "no colours")
    .addOption(new Option("--output <mode>", "text or JSON").choices(["plain", "json"]).default("plain"))
    .action(async (run: string, flags: Record<string, unknown>) => {
      const { statusCommand } = await import("./commands/durable.js");
      process.exitCode = await statusCommand(run, flags);
    });

  withStore(program.command("cancel"))
    .description("cancel a durable run, or tasks of it (running tasks are killed by their worker)")
    .argument("<run>", "run id")
    .argument("[tasks...]", "task ids (all of them checked first: one not in the run cancels nothing)")
    .action(async (run: string, tasks: string[], flags: Record<string, unknown>) => {
      const { cancelCommand, cancelTasksCommand } = await import("./commands/durable.js");
      process.exitCode = tasks.length > 1 ? await cancelTasksCommand(run, tasks, flags) : await cancelCommand(run, tasks[0], flags);
    });

  withStore(program.command("dead-letters"))
    .description("failed durable tasks, of one run or of all")
    .argument("[run]", "run id")
    .addOption(new Option("--output <mode>", "text or JSON").choices(["plain", "json"]).default("plain"))
    .action(async (run: string | undefined, flags: Record<string, unknown>) => {
      const { deadLettersCommand } = await import("./commands/durable.js");
      process.exitCode = await deadLettersCommand(run, flags);
    });

  withStore(program.command("prune"))
    .description("delete the durable runs that ended long enough ago, with their tasks (never a running run); with --logs, this machine's log folders")
    .requiredOption("--older-than <age>", "ended more than this long ago: 7d, 12h, 30m... (with --logs, it applies too: run folders last written this long ago)")
    .option("--logs", "prune the run folders under --log-dir instead (no store needed; never a folder in use)")
    .option("--log-dir <dir>", "with --logs: root folder of the per-task logs (default: .taskq/logs)")
    .option("--dry-run", "list them, delete nothing")
    .addOption(new Option("--output <mode>", "text or JSON").choices(["plain", "json"]).default("plain"))
    .action(async (flags: Record<string, unknown>) => {
      const { pruneCommand } = await import("./commands/durable.js");
      process.exitCode = await pruneCommand(flags);
    });

  withStore(program.command("redrive"))
    .description("queue dead letters again with fresh attempts; re-block the dependents they cancelled")
    .argument("<run>", "run id")
    .argument("<tasks...>", "task ids (all of them checked first: one not in the run, or not failed, redrives nothing)")
    .action(async (run: string, tasks: string[], flags: Record<string, unknown>) => {
      const { redriveCommand, redriveTasksCommand } = await import("./commands/durable.js");
      process.exitCode = tasks.length > 1 ? await redriveTasksCommand(run, tasks, flags) : await redriveCommand(run, tasks[0]!, flags);
    });
}
