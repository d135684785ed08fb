/**
 * Returns a connection string safe to print: the password (in the URL's user
 * info or a `password=` parameter) is replaced by `***`, also in a string that is
 * not a well-formed URL, such as one whose `postgres://` was left out
 * (`app:s3cret@db/ci`, which URL reads as the scheme `app:`).
 */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== "") url.password = "***";
    if (url.searchParams.has("password")) url.searchParams.set("password", "***");
    return hideUserInfoPassword(url.toString());
  } catch {
    // Not a URL: a libpq key=value string, or a URL that does not parse (a port out of range, say).
    return hideUserInfoPassword(connectionString.replace(/(password\s*=\s*)('[^']*'|\S+)/gi, "$1***"));
  }
}

/**
 * `user:password@host` as written, wherever URL did not read it so: the text from the first
 * `:` of the user info (after `//`, else from the start) to its `@`, the last one before a
 * query or fragment, is hidden. It may hide more than the password (`postgres:***@db`, for
 * `postgres:app:s3cret@db`), never less. A `:` after the `@` (`host:5432`) is no password.
 */
function hideUserInfoPassword(text: string): string {
  const end = text.search(/[?#]/);
  const at = text.lastIndexOf("@", end === -1 ? text.length : end - 1);
  if (at === -1) return text;
  const slashes = text.indexOf("//");
  const start = slashes !== -1 && slashes < at ? slashes + 2 : 0;
  const colon = text.indexOf(":", start);
  if (colon === -1 || colon > at || text.slice(colon + 1, at) === "***") return text;
  return `${text.slice(0, colon + 1)}***${text.slice(at)}`;
}

/**
 * `text` (a message) with the password of each PostgreSQL URL in it hidden, `postgres://u:***@db/ci`, and of each
 * `password=` (a URL's query, a libpq key=value string): for a message that repeats a word of the command line as it
 * was typed, a store's URL given where a file, a task, a run id or another flag's value goes (`taskq run
 * postgres://u:s3cret@db/ci`, its `--store` left out), which no message is to show whole.
 */
export function hidePasswords(text: string): string {
  if (!/postgres|password/i.test(text)) return text;
  return text
    // Not the form taskq's own words show (`postgres://USER:PASSWORD@HOST/DB`): a placeholder, no password.
    .replace(/(postgres(?:ql)?:\/\/[^\s:/@'"]*:)([^\s@'"]*)@/gi, (match, before: string, password: string) => (/\/\/USER:$/.test(before) && password === "PASSWORD" ? match : `${before}***@`))
    // One hidden already, as taskq's words show a store's URL before the reason (`...?password=***: connect failed`),
    // stays as it is: the value read runs on to the `:`, which hiding it again took with it. Only that form: any other
    // text after `***` (`***.`, `***)`) may be a password's own and is hidden.
    .replace(/(\bpassword\s*=\s*)('[^']*'|[^\s&'"]+)(?=(\s|$)?)/gi, (match, before: string, value: string, after: string | undefined) =>
      value === "***" || (value === "***:" && after !== undefined) ? match : `${before}***`,
    );
}
