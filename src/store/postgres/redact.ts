/**
 * Returns a connection string safe to print: the password (in the URL's user
 * info or a `password=` parameter) is replaced by `***`.
 */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== "") url.password = "***";
    if (url.searchParams.has("password")) url.searchParams.set("password", "***");
    return url.toString();
  } catch {
    // Not a URL: a libpq key=value string, or a URL that does not parse (a port out of range, say).
    return connectionString.replace(/(password\s*=\s*)('[^']*'|\S+)/gi, "$1***").replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*:)[^/]*@/i, "$1***@");
  }
}
