import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A metrics port taken before what it serves exists (see openMetricsPort). */
export interface MetricsPort {
  readonly server: Server;
  /** From now on, `GET /metrics` answers with `registry`'s metrics. */
  serve(registry: Registry): void;
}

/**
 * Listens on `port` (0 picks a free one; read it from `server.address()`) for `GET /metrics`
 * (and `HEAD`), answering 503 until `serve` gives it a registry: the CLI takes its port before it
 * opens the store, so that a port in use is said before anything (a schema) is made. Resolves once listening.
 */
export async function openMetricsPort(port: number, host = "127.0.0.1"): Promise<MetricsPort> {
  let registry: Registry | undefined;
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
    if (registry === undefined) {
      response.writeHead(503, { "retry-after": "1" }).end("the worker is starting\n");
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { "content-type": registry!.contentType }).end(text),
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
  return { server, serve: (given) => (registry = given) };
}

/**
 * Serves `GET /metrics` (and `HEAD`) from `registry` on `port` (0 picks a free one; read
 * it from `server.address()`). Resolves once listening.
 */
export async function serveMetrics(registry: Registry, port: number, host = "127.0.0.1"): Promise<Server> {
  const opened = await openMetricsPort(port, host);
  opened.serve(registry);
  return opened.server;
}

/** The port a server returned by `serveMetrics` listens on. */
export function metricsPort(server: Server): number {
  return (server.address() as AddressInfo).port;
}
