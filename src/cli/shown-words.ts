import { redactConnectionString } from "../store/postgres/redact.js";

/**
 * `word` of the command line as a message shows it back: a store's URL (a word that is a
 * PostgreSQL URL, given in the wrong place too: `run ci.yaml postgres://...`) with its password
 * hidden, as every message shows a store's URL (`postgres://u:***@db/ci`); any other word as typed.
 */
export function shownWord(word: string): string {
  return /^postgres(ql)?:\/\//i.test(word) ? withoutPassword(word) : word;
}

/**
 * The words `args` of a command line as a message shows them back (a loop over several files, the
 * run meant): the value of --store (`--store URL`, `--store=URL`), whatever its form, and any word
 * that is a PostgreSQL URL, with its password hidden.
 */
export function shownWords(args: readonly string[]): string[] {
  return args.map((arg, index) => {
    if (arg.startsWith("--store=")) return `--store=${withoutPassword(arg.slice("--store=".length))}`;
    return args[index - 1] === "--store" ? withoutPassword(arg) : shownWord(arg);
  });
}

/** `url` with its password hidden; as typed where it has none (not rewritten as URL writes it). */
function withoutPassword(url: string): string {
  const hidden = redactConnectionString(url);
  return hidden.split("***").length > url.split("***").length ? hidden : url;
}
