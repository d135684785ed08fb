import { redactConnectionString } from "../store/postgres/redact.js";

/**
 * The words `args` of a command line as a message shows them back (a loop over several files, the
 * run meant): the value of --store (`--store URL`, `--store=URL`) with its password hidden, in
 * whatever form it is given (`u:s3cret@db/ci`, `host=db password=s3cret`). A PostgreSQL URL
 * elsewhere on the line is hidden where taskq reports the error (see hidePasswords).
 */
export function shownWords(args: readonly string[]): string[] {
  return args.map((arg, index) => {
    if (arg.startsWith("--store=")) return `--store=${withoutPassword(arg.slice("--store=".length))}`;
    return args[index - 1] === "--store" ? withoutPassword(arg) : arg;
  });
}

/** `url` with its password hidden; as typed where it has none (not rewritten as URL writes it). */
function withoutPassword(url: string): string {
  const hidden = redactConnectionString(url);
  return hidden.split("***").length > url.split("***").length ? hidden : url;
}
