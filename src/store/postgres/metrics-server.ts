import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/**
 * Serves `GET /metrics` (and `HEAD`) from `registry` on `port` (0 picks a free one; read
 * it from `server.address()`). Resolves once listening.
 */
export async function serveMetrics(registry: Registry, port: number, host = "127.0.0.1"): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.url?.split("?")[0] !== "/metrics") {
      response.writeHead(404).end("not found\n");
      return;
    }
    // HEAD is what uptime checks send: the same headers, no body (Node drops it).
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end("only GET and HEAD\n");
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { "content-type": registry.contentType }).end(text),
      (error: unknown) => response.writeHead(500).end(`${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

/** The port a server returned by `serveMetrics` listens on. */
export function metricsPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}
