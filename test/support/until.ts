/**
 * Lets pending I/O and promise continuations run until `condition` holds: real time, polled
 * every few ms, bounded by `timeoutMs` (then it fails naming `what`). For tests that wait on a
 * real server, a file system event or a browser; never a fixed sleep.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what = 'condition',
  timeoutMs = 2000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
