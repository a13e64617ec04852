import { errors, type Locator } from 'playwright-core';

/**
 * The bound on a wait for the page, in real time: a browser cannot be waited on otherwise.
 * Generous, so a slow machine never reaches it: only what never happens does, and the failure
 * names it ({@link shows}). Page actions (click, fill) get the same bound ({@link ruleForm}).
 */
export const PAGE_WAIT_MS = 60_000;

/** The jest timeout of a test that drives the page: room for several page waits on a slow machine. */
export const PAGE_TEST_TIMEOUT_MS = 5 * PAGE_WAIT_MS;

/**
 * Waits, with Playwright's own waiting, until `locator` is in `state` (`'visible'` by default, as
 * `waitFor`); fails saying the page never showed `what`. A wait, not an assertion: assert what the
 * page shows once it has shown it.
 */
export async function shows(
  locator: Locator,
  what: string,
  state: 'attached' | 'detached' | 'visible' | 'hidden' = 'visible',
): Promise<void> {
  try {
    await locator.waitFor({ state, timeout: PAGE_WAIT_MS });
  } catch (error) {
    if (!(error instanceof errors.TimeoutError)) throw error;
    throw new Error(`the page never showed ${what} (${state}; waited ${PAGE_WAIT_MS / 1000} s)`, { cause: error });
  }
}

/** How often {@link holds} reads the page again. */
const POLL_MS = 25;

/**
 * Waits until `check` (a read of the page through Playwright, such as an input's value: what no
 * locator reaches) answers true, reading again every few milliseconds; fails saying the page never
 * showed `what`. Not `page.waitForFunction`: it evaluates its predicate with `eval` in the page, which
 * the dashboard's Content Security Policy refuses on every poll after the first (that one runs
 * inside DevTools' own evaluation), so a page a little slow to answer failed the wait with an EvalError.
 */
export async function holds(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + PAGE_WAIT_MS;
  while (!(await check())) {
    if (performance.now() > deadline) {
      throw new Error(`the page never showed ${what} (waited ${PAGE_WAIT_MS / 1000} s)`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
