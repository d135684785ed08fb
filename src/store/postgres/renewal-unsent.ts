import { TaskqError } from "../../errors.js";
import type { StoreErrorCode } from "./store-error.js";

/**
 * A lease renewal that got its connection only once its time was up (RenewOptions.timeoutMs: the lease had run out on
 * the worker's clock), and was not sent: it waited behind other renewals for one of the renewals' few connections.
 * Sent, it would have taken that connection for an answer of no use (and a lock wait on its row, where another session
 * holds it), while the renewals still waiting behind it need it for leases that have not run out. Its code, LEASE_RAN_OUT,
 * is one of the store's (StoreErrorCode), and never reaches a user: the attempt drops the error (see Attempt's renewal).
 */
export class RenewalUnsentError extends TaskqError {
  /** How long (ms) the renewal waited for its connection. */
  readonly waitedMs: number;

  constructor(waitedMs: number) {
    super("LEASE_RAN_OUT" satisfies StoreErrorCode, `heartbeat not sent: the lease ran out while the renewal waited ${Math.round(waitedMs)}ms for a connection`);
    this.waitedMs = waitedMs;
  }
}
