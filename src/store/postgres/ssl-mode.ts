import { TaskqError } from "../../errors.js";

/**
 * The connection string as pg is to read it, for its `sslmode` to mean what libpq (psql, and
 * every tool a CI user sets a `DATABASE_URL` for) makes of it. pg takes `require` (and `prefer`,
 * `verify-ca`) for `verify-full`: a managed database whose certificate Node does not trust (a
 * cloud provider's own CA) is refused ("self-signed certificate in certificate chain") where psql
 * connects, and every command prints pg's ten-line warning about it. With pg's `uselibpqcompat`,
 * `require` encrypts without checking the certificate, `verify-ca` checks it against
 * `sslrootcert`, and `verify-full` checks the host name too, as libpq does, and `allow` connects
 * without TLS. A string that asks for the driver's own reading (`uselibpqcompat` other than
 * `true`), or sets no `sslmode`, is left as it is; so is one that is not a URL (pg reads none
 * such) or has a `#` (where a parameter would go is unclear). An `sslmode` its reader does not
 * know is an error (STORE_BAD_URL), as psql refuses it.
 */
export function withLibpqSslModes(connectionString: string): string {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return connectionString;
  }
  const problem = sslModeProblem(url);
  if (problem !== undefined) throw new TaskqError("STORE_BAD_URL", problem);
  const compat = url.searchParams.get("uselibpqcompat");
  // The driver's own reading asked for (uselibpqcompat other than true, as the driver reads it), or none to adapt.
  if (!url.searchParams.has("sslmode") || (compat !== null && compat !== "true") || connectionString.includes("#")) return connectionString;
  // `allow` is libpq's plaintext first, TLS only where the server refuses that: the driver tries one way, so
  // plaintext (it read `allow` as `verify-full`). Edited, and appended, as text: a URL written out again by URL
  // may encode the user's password or host otherwise.
  const edited = connectionString.replace(/([?&])sslmode=allow(?=&|$)/, "$1sslmode=disable");
  return compat === null ? `${edited}&uselibpqcompat=true` : edited;
}

/** libpq's sslmode values; the driver's own reading (uselibpqcompat=false) knows `no-verify` too, and no `allow`. */
const LIBPQ_SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];
const DRIVER_SSL_MODES = ["disable", "prefer", "require", "verify-ca", "verify-full", "no-verify"];

/**
 * Why the URL's sslmode is none its reader knows, or undefined: psql refuses such a one ("invalid sslmode
 * value"), where the driver took a typo (`disabled`) for TLS, and the error then blamed the server.
 */
export function sslModeProblem(connectionString: string | URL): string | undefined {
  let url: URL;
  try {
    url = typeof connectionString === "string" ? new URL(connectionString) : connectionString;
  } catch {
    return undefined;
  }
  const mode = url.searchParams.get("sslmode");
  if (mode === null) return undefined;
  const compat = url.searchParams.get("uselibpqcompat");
  const modes = compat !== null && compat !== "true" ? DRIVER_SSL_MODES : LIBPQ_SSL_MODES;
  if (modes.includes(mode)) return undefined;
  return `sslmode=${mode} in the connection string is not an SSL mode: use ${modes.slice(0, -1).join(", ")} or ${modes.at(-1)!}`;
}
