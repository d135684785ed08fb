/** Attempts waiting for their turn to start, oldest first (see startTurn). */
const waitingTurns: Array<() => void> = [];
let turnSet = false;

/**
 * Resolves in a turn of the event loop of its own: one attempt starts per turn, and none in
 * the call that told of the last one's end. A shell's exit is told while libuv goes through
 * its queue of signals, 32 at a time, which holds each child's SIGCHLD and taskq's own SIGINT
 * alike. Spawned there (a fork: ms on a loaded machine), each start held up the rest, the
 * exits of the tasks it started meanwhile kept the queue full, and at -j 16 a Ctrl-C waited
 * 6-10 s behind them while hundreds of tasks started. All started in one later turn instead,
 * sixteen forks in a row held the signal 100-400 ms on a 2-core machine.
 * Resolves with how many attempts were waiting for their turn ahead of this one when it was called.
 */
export function startTurn(): Promise<number> {
  return new Promise((resolve) => {
    const ahead = waitingTurns.length;
    waitingTurns.push(() => resolve(ahead));
    if (!turnSet) {
      turnSet = true;
      setImmediate(giveTurn);
    }
  });
}

function giveTurn(): void {
  waitingTurns.shift()?.();
  // Set in this turn's check phase, it runs in the next turn, after libuv's poll for I/O and signals.
  turnSet = waitingTurns.length > 0;
  if (turnSet) setImmediate(giveTurn);
}
