import { isPermanent } from "../../errors.js";
import { killOf, sigkillWords, withSigkillWords } from "../../handlers/errors.js";
import { formatMs } from "../../engine/errors.js";
import type { Outcome } from "./types.js";
import type { AbortCode } from "./worker-types.js";

/** Fields a failing handler may attach as `error.result`. */
interface AttemptResultFields {
  exitCode?: number | null;
  signal?: string | null;
  timedOut?: boolean;
  tail?: string[];
}

function resultOf(error: unknown): AttemptResultFields {
  const result = typeof error === "object" && error !== null ? (error as { result?: unknown }).result : undefined;
  return typeof result === "object" && result !== null ? (result) : {};
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
}

/** The code of the attempt's abort reason, if it was aborted by the worker. */
export function abortCode(signal: AbortSignal): AbortCode | undefined {
  if (!signal.aborted) return undefined;
  const code = (signal.reason as { code?: unknown } | undefined)?.code;
  return code === "TIMEOUT" || code === "CANCELLED" || code === "LEASE_LOST" || code === "SHUTDOWN" ? code : undefined;
}

/**
 * Maps a handler's rejection to the outcome to record. A cancel request wins
 * over the error it provoked; a timeout is a retryable failure marked timedOut.
 */
export function failureOutcome(error: unknown, signal: AbortSignal, timeoutMs: number | null): Outcome {
  const fields = resultOf(error);
  const code = abortCode(signal);
  if (code === "CANCELLED") {
    const killed = sigkillWords(killOf(error));
    // In the words of the cancel's abort: "cancelled by request", or "aborted by shutdown" where a stopped run asked it.
    return { kind: "cancelled", reason: messageOf(signal.reason), tail: fields.tail ?? [], ...(killed === undefined ? {} : { killed }) };
  }
  if (code === "LEASE_LOST") {
    // Stopped by this worker, not failed by itself: worth another attempt, whatever its retryOn (the signal is the worker's).
    // Killed at once (no kill grace beside a worker that may take it over), as its log says it.
    return { kind: "failure", error: withSigkillWords(messageOf(signal.reason), killOf(error)), exitCode: null, signal: fields.signal ?? null, permanent: false, timedOut: false, tail: fields.tail ?? [] };
  }
  // The handler's own word first: a shell that ended by itself (exit 3) while its leftovers were
  // stopped, the timeout firing meanwhile, failed as it did, as a local run and its log say, not timed out.
  const timedOut = typeof fields.timedOut === "boolean" ? fields.timedOut : code === "TIMEOUT";
  return {
    kind: "failure",
    // Worded as a local run words it: "timed out after 1s", the shell handler's own words where it
    // timed out (they say when stopping it took a SIGKILL after the kill grace).
    error: timedOut && code === "TIMEOUT" && fields.timedOut !== true ? `timed out after ${formatMs(timeoutMs ?? 0)}` : messageOf(error),
    exitCode: fields.exitCode ?? null,
    signal: fields.signal ?? null,
    permanent: isPermanent(error),
    timedOut,
    tail: fields.tail ?? [],
  };
}
