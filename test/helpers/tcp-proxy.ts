import net from "node:net";

/**
 * A TCP proxy to a real server (PostgreSQL) that can be frozen: then it forwards nothing
 * more, either way, and keeps every connection open, new ones too. To a client, the
 * server has stopped answering: a stalled machine, a network that drops every packet.
 */
export interface FreezableProxy {
  port: number;
  /** `connectionString` with the proxy's host and port. */
  url: (connectionString: string) => string;
  freeze: () => void;
  close: () => Promise<void>;
}

export async function startFreezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  let frozen = false;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  };
  const forward = (from: net.Socket, to: net.Socket): void => {
    from.on("data", (chunk) => {
      if (!frozen) to.write(chunk);
    });
    from.on("close", () => {
      if (!frozen) to.destroy();
    });
  };
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
  });
  const port = await listen(server);
  return {
    port,
    url: (connectionString) => withPort(connectionString, port),
    freeze: () => {
      frozen = true;
    },
    close: () => closeAll(server, sockets),
  };
}

/** A server that accepts connections and never answers (a wrong port, say Redis's, or a hung server). */
export async function startSilentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await listen(server);
  return { port, close: () => closeAll(server, sockets) };
}

function withPort(connectionString: string, port: number): string {
  const url = new URL(connectionString);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return url.toString();
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

async function closeAll(server: net.Server, sockets: Set<net.Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
