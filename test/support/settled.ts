/**
 * Lets the work already under way in this process run (promise continuations, ticks, immediates)
 * until `condition` holds, one event-loop turn at a time; fails naming `what` when it still does
 * not after `turns` turns. Turns, not time: for what follows an event the test has awaited with no
 * I/O in between (a handler settling once its response closed), so the count of turns does not
 * depend on the machine's speed. Never for what waits on a socket, a file or another process:
 * wait for that event instead.
 */
export async function settled(condition: () => boolean, what: string, turns = 100): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!condition()) throw new Error(`${what} did not happen within ${turns} event-loop turns`);
}
