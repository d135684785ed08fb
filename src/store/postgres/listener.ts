import type pg from "pg";
import { QUERY_READ_TIMEOUT } from "./timeouts.js";

/**
 * One dedicated connection LISTENing on the schema's channel, shared by every
 * subscriber (the workers of one process). It reconnects with backoff when the
 * connection drops, and wakes all subscribers when it drops and after
 * reconnecting, since notifications sent meanwhile were lost.
 */
export class NotificationListener {
  readonly #pool: pg.Pool;
  readonly #channel: string;
  readonly #onError: (error: unknown) => void;
  readonly #subscribers = new Set<(payload: string) => void>();
  #client: pg.PoolClient | undefined;
  #connecting: Promise<void> | undefined;
  #closed = false;
  #failures = 0;

  constructor(pool: pg.Pool, channel: string, onError: (error: unknown) => void) {
    this.#pool = pool;
    this.#channel = channel;
    this.#onError = onError;
  }

  /** Calls `callback` on every notification; returns the unsubscribe function. */
  subscribe(callback: (payload: string) => void): () => void {
    this.#subscribers.add(callback);
    this.#connecting ??= this.#connect();
    return () => this.#subscribers.delete(callback);
  }

  /** True while the LISTEN is in place: notifications arrive (a worker may then poll seldom). */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /**
   * Runs `query` on the listening connection while the LISTEN is in place (undefined when it is not): a short statement a
   * worker sends often (the sweeper's look at the leases), which so keeps no other connection of an idle worker open.
   * One left unanswered past its time limit leaves the connection waiting on it (pg sends nothing more on it until the
   * server answers, which a connection gone silent never does, and notifications stop with it): the connection is
   * taken for lost and made again, as one that dropped is, rather than every later statement waiting behind it.
   */
  query<R extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<pg.QueryResult<R>> | undefined {
    const client = this.#client;
    if (client === undefined) return undefined;
    return client.query<R>(query).catch((error: unknown) => {
      if (error instanceof Error && error.message === QUERY_READ_TIMEOUT) this.#lost(client, error);
      throw error;
    });
  }

  /** Resolves once the LISTEN is in place (or the first attempt failed). */
  async ready(): Promise<void> {
    await this.#connecting;
  }

  /**
   * Closes the listening connection rather than giving it back to the pool: no UNLISTEN
   * is needed then, which a database that stopped answering would keep waiting.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    client?.release(true);
  }

  #broadcast(payload: string): void {
    for (const subscriber of this.#subscribers) subscriber(payload);
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    let client: pg.PoolClient | undefined;
    try {
      client = await this.#pool.connect();
      const current = client;
      current.on("notification", (message) => {
        if (message.channel === this.#channel) this.#broadcast(message.payload ?? "");
      });
      current.on("error", (error) => this.#lost(current, error));
      current.on("end", () => this.#lost(current, new Error("listener connection ended")));
      await current.query(`LISTEN "${this.#channel}"`);
      this.#client = current;
      if (this.#failures > 0) this.#broadcast("");
      this.#failures = 0;
    } catch (error) {
      client?.release(error as Error);
      this.#retry(error);
    }
  }

  #lost(client: pg.PoolClient, error: unknown): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.release(error instanceof Error ? error : new Error(String(error)));
    // Notifications are missed from now until the LISTEN is back: subscribers look for work now, and poll meanwhile.
    this.#broadcast("");
    this.#retry(error);
  }

  #retry(error: unknown): void {
    if (this.#closed) return;
    this.#failures++;
    this.#onError(error);
    const delay = Math.min(100 * 2 ** (this.#failures - 1), 5_000);
    setTimeout(() => {
      this.#connecting = this.#connect();
    }, delay).unref();
  }
}
