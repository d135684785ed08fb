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
  /** Drops every connection and each new one at once: the database refuses connections, until `accept`. */
  refuse: () => void;
  /** Drops each new connection at once, as it is made, while the open ones go on: until `accept`. */
  refuseNew: () => void;
  /**
   * Keeps each new connection open and answers nothing on it (the server's start-up never comes), while the open ones go
   * on: a connection being made, until `refuse` drops it. New ones are forwarded again after `accept`.
   */
  holdNew: () => void;
  /** Forwards the connections `holdNew` holds (their start-up goes through late: a slow connection made), and new ones again. */
  letHeldThrough: () => void;
  /** How many connections `holdNew` holds now. */
  heldConnections: () => number;
  /** Forwards new connections again after `refuse` or `refuseNew`. */
  accept: () => void;
  /** How many connections `refuse` or `refuseNew` dropped as they were made. */
  refusedConnections: () => number;
  /**
   * Lets the next request whose bytes contain `marker` through, and its whole reply (up to ReadyForQuery), then
   * closes that connection: the client has its answer, and finds the connection gone once it is idle.
   */
  closeAfterReply: (marker: string) => void;
  /**
   * Lets the next request whose bytes contain `marker` reach the server, keeps back the whole
   * reply (up to PostgreSQL's ReadyForQuery: the statement has committed), then cuts that
   * connection: the client's request committed, and its reply was lost. Resolves once cut.
   */
  cutAfterReply: (marker: string) => Promise<void>;
  /**
   * Cuts every connection that has sent, or from now on sends, a request whose bytes contain `marker`
   * (`LISTEN "`: the notification listener's), while the others go on: until `uncut`.
   */
  cutSending: (marker: string) => void;
  uncut: () => void;
  /**
   * Holds back the next request whose bytes contain `marker`, and all that connection sends after it, until
   * `release` is called: a request slow on its way (a slow network, a reconnect). `held` resolves once one is held.
   */
  holdNext: (marker: string) => { held: Promise<void>; release: () => void };
  /** Counts, from now on, the requests whose bytes contain `marker` (a statement's words): read the count by calling what it returns. */
  countRequests: (marker: string) => () => number;
  /**
   * Resolves once no request has been waiting for its reply, and none has been sent or answered, for `ms`: the
   * client is between round trips (a worker idle between its polls). Rejects after `timeoutMs`.
   */
  quiet: (ms: number, timeoutMs?: number) => Promise<void>;
  /** How many client connections are open through the proxy. */
  connections: () => number;
  close: () => Promise<void>;
}

/** Ends a PostgreSQL reply: ReadyForQuery, 'Z' with length 5, then the transaction status byte. */
function endsWithReadyForQuery(bytes: Buffer): boolean {
  const at = bytes.length - 6;
  return at >= 0 && bytes[at] === 0x5a && bytes.readInt32BE(at + 1) === 5;
}

export async function startFreezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  let frozen = false;
  let refused = false;
  let refusedCount = 0;
  let holdingNew = false;
  /** The connections holdNew holds. */
  const heldNew = new Set<net.Socket>();
  /** An armed close: the marker to watch requests for (closeAfterReply). */
  let closeMarker: Buffer | undefined;
  /** An armed cut: the marker to watch requests for, and what to call once cut. */
  let cut: { marker: Buffer; done: () => void } | undefined;
  /** An armed hold: the marker to watch requests for, and what to call once one is held. */
  let hold: { marker: Buffer; held: () => void; onRelease: (go: () => void) => void } | undefined;
  const counters: Array<{ marker: Buffer; count: number }> = [];
  const sockets = new Set<net.Socket>();
  /** Requests cut by cutSending: its marker, and each connection's requests so far, to find those that sent it. */
  let cutMarker: Buffer | undefined;
  const sent = new Map<net.Socket, Buffer[]>();
  /** The connections with a request sent and its reply not yet ended (ReadyForQuery), and when any request or reply last went through. */
  const waiting = new Set<net.Socket>();
  const clients = new Set<net.Socket>();
  let lastTraffic = performance.now();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    if (refused) {
      refusedCount++;
      client.on("error", () => undefined);
      client.destroy();
      return;
    }
    track(client);
    if (holdingNew) {
      heldNew.add(client);
      client.on("close", () => heldNew.delete(client));
      return;
    }
    forward(client);
  });
  /** Forwards `client`'s connection to the server: what it sent while held (read by nothing, so kept) goes first. */
  function forward(client: net.Socket): void {
    clients.add(client);
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    /** Set once this connection carried the marked request: the reply so far, kept back. */
    let withheld: Buffer | undefined;
    let onCut: (() => void) | undefined;
    /** Set while this connection's requests are held back (holdNext): what it sent meanwhile. */
    let holding: Buffer[] | undefined;
    /** Set once this connection carried the request closeAfterReply watches for: it is closed once that reply has ended. */
    let closing = false;
    client.on("close", () => {
      sent.delete(client);
      waiting.delete(client);
      clients.delete(client);
    });
    /** The last bytes of the replies so far, for a ReadyForQuery split over two chunks. */
    let replyTail = Buffer.alloc(0);
    upstream.on("data", (chunk) => {
      replyTail = Buffer.concat([replyTail, chunk]).subarray(-6);
      if (endsWithReadyForQuery(replyTail)) waiting.delete(client);
      lastTraffic = performance.now();
    });
    client.on("data", (chunk) => {
      waiting.add(client);
      lastTraffic = performance.now();
      for (const counter of counters) if (chunk.includes(counter.marker)) counter.count++;
      const chunks = sent.get(client) ?? [];
      chunks.push(chunk);
      sent.set(client, chunks);
      if (cutMarker !== undefined && chunk.includes(cutMarker)) {
        client.destroy();
        upstream.destroy();
        return;
      }
      if (closeMarker !== undefined && chunk.includes(closeMarker)) {
        closeMarker = undefined;
        closing = true;
      }
      if (cut !== undefined && chunk.includes(cut.marker)) {
        onCut = cut.done;
        cut = undefined;
        withheld = Buffer.alloc(0);
      }
      if (hold !== undefined && chunk.includes(hold.marker)) {
        const armed = hold;
        hold = undefined;
        holding = [];
        armed.onRelease(() => {
          const kept = holding ?? [];
          holding = undefined;
          for (const part of kept) if (!frozen) upstream.write(part);
        });
        armed.held();
      }
      if (holding !== undefined) {
        holding.push(chunk);
        return;
      }
      if (!frozen) upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (withheld === undefined) {
        if (!frozen) client.write(chunk);
        // The reply written whole first: end(), not destroy(), which may drop what is still to be written (the client's
        // close then closes the upstream side).
        if (closing && endsWithReadyForQuery(replyTail)) client.end();
        return;
      }
      withheld = Buffer.concat([withheld, chunk]);
      if (!endsWithReadyForQuery(withheld)) return;
      client.destroy();
      upstream.destroy();
      onCut?.();
    });
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      from.on("close", () => {
        if (!frozen) to.destroy();
      });
    }
  }
  const port = await listen(server);
  return {
    port,
    url: (connectionString) => withPort(connectionString, port),
    freeze: () => {
      frozen = true;
    },
    refuse: () => {
      refused = true;
      for (const socket of sockets) socket.destroy();
    },
    refuseNew: () => {
      refused = true;
    },
    holdNew: () => {
      holdingNew = true;
    },
    heldConnections: () => heldNew.size,
    letHeldThrough: () => {
      holdingNew = false;
      for (const client of heldNew) forward(client);
      heldNew.clear();
    },
    accept: () => {
      refused = false;
      holdingNew = false;
    },
    refusedConnections: () => refusedCount,
    closeAfterReply: (marker) => {
      closeMarker = Buffer.from(marker);
    },
    cutSending: (marker) => {
      cutMarker = Buffer.from(marker);
      for (const [client, chunks] of sent) if (chunks.some((chunk) => chunk.includes(cutMarker!))) client.destroy();
    },
    uncut: () => {
      cutMarker = undefined;
    },
    cutAfterReply: (marker) => new Promise<void>((resolve) => (cut = { marker: Buffer.from(marker), done: resolve })),
    holdNext: (marker) => {
      let go: (() => void) | undefined;
      let released = false;
      let held: () => void = () => undefined;
      const heldPromise = new Promise<void>((resolve) => (held = resolve));
      hold = {
        marker: Buffer.from(marker),
        held: () => held(),
        onRelease: (forward) => {
          if (released) forward();
          else go = forward;
        },
      };
      return {
        held: heldPromise,
        release: () => {
          released = true;
          go?.();
        },
      };
    },
    countRequests: (marker) => {
      const counter = { marker: Buffer.from(marker), count: 0 };
      counters.push(counter);
      return () => counter.count;
    },
    quiet: async (ms, timeoutMs = 30_000) => {
      const until = performance.now() + timeoutMs;
      while (waiting.size > 0 || performance.now() - lastTraffic < ms) {
        if (performance.now() > until) throw new Error(`the proxy's connections were not quiet for ${ms} ms within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    connections: () => clients.size,
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

/**
 * A TCP proxy to a real server (PostgreSQL) that tells each client its session's backend pid is `pid()`, as a pooler
 * (PgBouncer) makes up the pid of its BackendKeyData: it may be that of another session of the database.
 */
export async function startPidRewritingProxy(target: URL, pid: () => number): Promise<{ url: (connectionString: string) => string; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    let told = false;
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(from);
      from.on("error", () => undefined);
      from.on("close", () => to.destroy());
    }
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk) => {
      // BackendKeyData: 'K', its length (12), the pid, the secret key.
      const at = told ? -1 : chunk.indexOf(Buffer.from([0x4b, 0, 0, 0, 12]));
      if (at >= 0) {
        told = true;
        chunk.writeInt32BE(pid(), at + 5);
      }
      client.write(chunk);
    });
  });
  const port = await listen(server);
  return { url: (connectionString) => withPort(connectionString, port), close: () => closeAll(server, sockets) };
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

/**
 * A PostgreSQL server that asks for a password: by SCRAM (PostgreSQL's default since 14: it
 * answers the client's first SCRAM message, to which the driver, with no password, says
 * nothing) or by MD5 (it refuses any password sent, as a wrong one, with the server's 28P01).
 */
export async function startPasswordServer(method: "scram" | "md5"): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const message = (type: string, body: Buffer): Buffer => {
    const head = Buffer.alloc(5);
    head.write(type);
    head.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  };
  const int32 = (value: number): Buffer => {
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(value);
    return bytes;
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
    let step = 0;
    socket.on("data", (chunk) => {
      // An SSLRequest (8 bytes, code 80877103) is declined; the startup message follows.
      if (step === 0 && chunk.length === 8 && chunk.readInt32BE(4) === 80877103) return void socket.write("N");
      if (step++ === 0) {
        // AuthenticationSASL with SCRAM-SHA-256, or AuthenticationMD5Password with its salt.
        socket.write(method === "scram" ? message("R", Buffer.concat([int32(10), Buffer.from("SCRAM-SHA-256\0\0")])) : message("R", Buffer.concat([int32(5), Buffer.from("salt")])));
        return;
      }
      if (method === "scram") {
        // AuthenticationSASLContinue: the server-first message.
        socket.write(message("R", Buffer.concat([int32(11), Buffer.from("r=clientnonceservernonce,s=c2FsdA==,i=4096")])));
        return;
      }
      const fields = ["SFATAL", "VFATAL", "C28P01", 'Mpassword authentication failed for user "ci"'].map((field) => `${field}\0`).join("");
      socket.end(message("E", Buffer.from(`${fields}\0`)));
    });
  });
  const port = await listen(server);
  return { port, close: () => closeAll(server, sockets) };
}
