import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";

/**
 * A PostgreSQL server with TLS, as a managed database is: a proxy that answers a client's
 * SSLRequest with 'S', ends TLS with a certificate of its own (self-signed, made by openssl,
 * which no client trusts), and forwards the decrypted protocol to a real server without TLS.
 * A client that does not ask for TLS is forwarded as it is.
 */
export interface TlsProxy {
  /** `connectionString` with the proxy's host and port. */
  url: (connectionString: string) => string;
  /** How many connections were made over TLS. */
  tlsSessions: () => number;
  close: () => Promise<void>;
}

/** PostgreSQL's SSLRequest: length 8, then the code 80877103. */
function isSslRequest(bytes: Buffer): boolean {
  return bytes.length === 8 && bytes.readInt32BE(0) === 8 && bytes.readInt32BE(4) === 80877103;
}

function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(path.join(tmpdir(), "taskq-tls-"));
  try {
    const [key, cert] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost"], { stdio: "ignore" });
    return { key: readFileSync(key), cert: readFileSync(cert) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startTlsProxy(target: { host: string; port: number }): Promise<TlsProxy> {
  const credentials = selfSignedCertificate();
  const sockets = new Set<net.Socket>();
  let sessions = 0;
  const track = (socket: net.Socket): net.Socket => {
    sockets.add(socket);
    socket.on("error", () => socket.destroy()).on("close", () => sockets.delete(socket));
    return socket;
  };
  const join = (client: net.Socket, first?: Buffer): void => {
    const upstream = track(net.connect(target.port, target.host));
    if (first !== undefined) upstream.write(first);
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  };
  const server = net.createServer((socket) => {
    track(socket);
    socket.once("data", (first) => {
      if (!isSslRequest(first)) return join(socket, first);
      socket.write("S");
      const secure = track(new tls.TLSSocket(socket, { isServer: true, ...credentials }));
      secure.once("secure", () => sessions++);
      join(secure);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: (connectionString) => {
      const url = new URL(connectionString);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    tlsSessions: () => sessions,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
