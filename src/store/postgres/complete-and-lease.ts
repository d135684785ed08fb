import type pg from "pg";
import { toLeasedTasks, type LeasedRow } from "./lease.js";
import { queryOnOwnClient } from "./transaction.js";
import type { SchemaNames } from "./names.js";
import type { CompletionResult, LeasedTask, Outcome } from "./types.js";

/** A successful attempt to record, by its lease token. */
export interface EndedAttempt {
  token: string;
  outcome: Extract<Outcome, { kind: "success" }>;
}

export interface CompleteAndLeaseResult {
  /** One per ended attempt, in order; false when its token no longer owned the task. */
  completed: (CompletionResult | false)[];
  leased: LeasedTask[];
  /** When fewer tasks than asked were leased: milliseconds until the nearest queued task is runnable; null if none is queued. */
  nextDelayMs: number | null;
}

type Row =
  | (LeasedRow & { kind: "leased" })
  | { kind: "ended"; lease_token: string; run_id: string; unblocked: string[] }
  | { kind: "idle"; delay_ms: number | null };

/**
 * Records successful attempts and leases up to `limit` tasks in one round trip
 * and one commit (migration 7's `complete_and_lease_v7`): of every run, or of run
 * `runId` only. A worker calls it with the attempts that ended since its last
 * call, whose slots the new leases fill.
 */
export async function completeAndLease(
  pool: pg.Pool,
  names: SchemaNames,
  ended: EndedAttempt[],
  workerId: string,
  limit: number,
  leaseMs: number,
  runId?: string,
): Promise<CompleteAndLeaseResult> {
  const done = ended.map(({ token, outcome }) => ({ token, exit_code: outcome.exitCode ?? 0, tail: outcome.tail ?? [] }));
  const values = [JSON.stringify(done), workerId, Math.max(limit, 0), leaseMs];
  // On a client of its own: a connection that fails as it is made sent nothing, which its error says, so that the
  // worker does not give back leases this round trip never made (see releaseStrays).
  // Named: prepared once per connection. The functions are migration 7's (with retry_on; see leased-retry-on.ts).
  const result = await queryOnOwnClient<Row>(
    pool,
    runId === undefined
      ? { name: names.statement("complete_and_lease"), text: `SELECT * FROM ${names.quoted}.complete_and_lease_v7($1, $2, $3, $4)`, values }
      : {
          name: names.statement("complete_and_lease_run"),
          text: `SELECT * FROM ${names.quoted}.complete_and_lease_v7($1, $2, $3, $4, $5::text)`,
          values: [...values, runId],
        },
  );
  const byToken = new Map<string, CompletionResult>();
  const leased: LeasedRow[] = [];
  let nextDelayMs: number | null = null;
  for (const row of result.rows) {
    if (row.kind === "ended") {
      byToken.set(row.lease_token, { runId: row.run_id, state: "succeeded", cascaded: [], unblocked: row.unblocked });
    } else if (row.kind === "leased") {
      leased.push(row);
    } else if (row.delay_ms !== null) {
      nextDelayMs = Math.max(Math.ceil(row.delay_ms), 0);
    }
  }
  return {
    completed: ended.map(({ token }) => byToken.get(token) ?? false),
    leased: toLeasedTasks(leased),
    nextDelayMs,
  };
}
