import { Command, CommanderError, Option } from "commander";

/** commander reports usage errors with exit code 1; taskq's contract says 2. */
function toUsageExit(error: CommanderError): never {
  const exitCode = error.exitCode === 0 ? 0 : 2;
  throw Object.assign(new CommanderError(exitCode, error.code, error.message), { exitCode });
}

/**
 * The commander program. Each action normalises its flags, lazily imports the
 * one module it needs and calls one function; no logic lives here.
 */
export function buildProgram(version: string): Command {
  const program = new Command("taskq")
    .description("Run a DAG of shell tasks described in a YAML file.")
    .version(version, "-V, --version")
    .option("--verbose", "print stack traces of unexpected errors")
    .showSuggestionAfterError()
    .exitOverride(toUsageExit);

  program
    .command("run")
    .description("run a workflow file")
    .argument("<file>", "workflow YAML file")
    .option("-j, --concurrency <n>", "tasks running at once (default: the file's, else the CPU count)")
    .option("--shutdown-timeout <duration>", "after Ctrl-C, how long running tasks may finish", "10s")
    .option("--kill-grace <duration>", "between SIGTERM and SIGKILL of a task's process group", "5s")
    .addOption(new Option("--output <mode>", "how to show progress").choices(["auto", "tty", "plain", "json"]).default("auto"))
    .option("--log-dir <dir>", "root folder of the per-task logs", ".taskq/logs")
    .option("--no-color", "no colours (NO_COLOR is honoured too)")
    .option("--dry-run", "print the plan in start order; run nothing")
    .action(async (file: string, flags: Record<string, unknown>) => {
      const { runCommand } = await import("./commands/run.js");
      process.exitCode = await runCommand(file, flags);
    });

  program
    .command("validate")
    .description("check a workflow file; run nothing")
    .argument("<file>", "workflow YAML file")
    .action(async (file: string) => {
      const { validateCommand } = await import("./commands/inspect.js");
      process.exitCode = await validateCommand(file);
    });

  program
    .command("list")
    .description("list a workflow's tasks in topological order")
    .argument("<file>", "workflow YAML file")
    .action(async (file: string) => {
      const { listCommand } = await import("./commands/inspect.js");
      process.exitCode = await listCommand(file);
    });

  program
    .command("graph")
    .description("print the task graph (Mermaid, or Graphviz dot)")
    .argument("<file>", "workflow YAML file")
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

  return program;
}
