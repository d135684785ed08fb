/**
 * The connection string as pg is to read it, for its `sslmode` to mean what libpq (psql, and
 * every tool a CI user sets a `DATABASE_URL` for) makes of it. pg takes `require` (and `prefer`,
 * `verify-ca`) for `verify-full`: a managed database whose certificate Node does not trust (a
 * cloud provider's own CA) is refused ("self-signed certificate in certificate chain") where psql
 * connects, and every command prints pg's ten-line warning about it. With pg's `uselibpqcompat`,
 * `require` encrypts without checking the certificate, `verify-ca` checks it against
 * `sslrootcert`, and `verify-full` checks the host name too, as libpq does. A string that sets
 * `uselibpqcompat` itself, or sets no `sslmode`, is left as it is; so is one that is not a URL
 * (pg reads none such) or has a `#` (where a parameter would go is unclear).
 */
export function withLibpqSslModes(connectionString: string): string {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return connectionString;
  }
  if (!url.searchParams.has("sslmode") || url.searchParams.has("uselibpqcompat") || connectionString.includes("#")) return connectionString;
  // Appended as text: a URL written out again by URL may encode the user's password or host otherwise.
  return `${connectionString}&uselibpqcompat=true`;
}
