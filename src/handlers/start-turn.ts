/** Attempts waiting for their turn to start, oldest first (see startTurn): their task's id, and what resolves them. */
const waitingTurns: Array<{ id: string; go: () => void }> = [];
let turnSet = false;

/** How many attempts were waiting for their turn ahead of one, and the ids of the first few (NAMED_AHEAD), for its words. */
export interface TurnsAhead {
  count: number;
  ids: string[];
}

/** Tasks ahead named by id in an attempt's words; the rest counted. */
const NAMED_AHEAD = 3;

/**
 * Resolves in a turn of the event loop of its own: one attempt starts per turn, and none in
 * the call that told of the last one's end. A shell's exit is told while libuv goes through
 * its queue of signals, 32 at a time, which holds each child's SIGCHLD and taskq's own SIGINT
 * alike. Spawned there (a fork: ms on a loaded machine), each start held up the rest, the
 * exits of the tasks it started meanwhile kept the queue full, and at -j 16 a Ctrl-C waited
 * 6-10 s behind them while hundreds of tasks started. All started in one later turn instead,
 * sixteen forks in a row held the signal 100-400 ms on a 2-core machine.
 * Resolves with the attempts that were waiting for their turn ahead of this one (of task `id`) when it was called.
 */
export function startTurn(id = ""): Promise<TurnsAhead> {
  return new Promise((resolve) => {
    const ahead = { count: waitingTurns.length, ids: waitingTurns.slice(0, NAMED_AHEAD).map((turn) => turn.id) };
    waitingTurns.push({ id, go: () => resolve(ahead) });
    if (!turnSet) {
      turnSet = true;
      setImmediate(giveTurn);
    }
  });
}

function giveTurn(): void {
  waitingTurns.shift()?.go();
  // Set in this turn's check phase, it runs in the next turn, after libuv's poll for I/O and signals.
  turnSet = waitingTurns.length > 0;
  if (turnSet) setImmediate(giveTurn);
}
