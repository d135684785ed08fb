import { TaskqError } from "../errors.js";
import type { MetricsPort } from "../store/postgres/metrics-server.js";

/**
 * Takes `--metrics-port` before the store opens: a port already taken, or an address not this
 * machine's, is the user's error to fix, said before anything is made (a schema) and not as a crash.
 */
export async function takeMetricsPort(port: number, host: string): Promise<MetricsPort> {
  const { openMetricsPort } = await import("../store/postgres/metrics-server.js");
  try {
    return await openMetricsPort(port, host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new TaskqError("METRICS_PORT", `--metrics-port ${port} is already in use${host === "127.0.0.1" ? "" : ` on ${host}`}`, { cause: error });
    if (code === "EADDRNOTAVAIL") throw new TaskqError("METRICS_HOST", `--metrics-host ${host}: not an address of this machine`, { cause: error });
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") throw new TaskqError("METRICS_HOST", `--metrics-host ${host}: the name cannot be resolved (${code})`, { cause: error });
    throw new TaskqError("METRICS_PORT", `--metrics-port ${port} cannot be served: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
