import type pg from "pg";
import { isTransientError } from "./transient.js";

const ignoreClientError = (): void => {
  // The failing query rejects with the same error; this listener only keeps a
  // checked-out client's 'error' event from crashing the process.
};

/**
 * Runs `work` inside BEGIN/COMMIT on one pooled client. A client whose
 * connection broke is destroyed rather than returned to the pool. Deadlocks
 * and serialization failures are retried a few times; other errors propagate.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runOnce(pool, work);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if ((code === "40P01" || code === "40001") && attempt < 5) continue;
      throw error;
    }
  }
}

async function runOnce<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  client.on("error", ignoreClientError);
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    // A deadlock leaves the connection usable; anything else transient may not.
    if (isTransientError(error) && !String((error as { code?: unknown }).code).startsWith("40")) broken = error as Error;
    await client.query("ROLLBACK").catch((rollbackError: unknown) => {
      broken = rollbackError as Error;
    });
    throw error;
  } finally {
    client.off("error", ignoreClientError);
    client.release(broken);
  }
}
