import { errors, type Locator, type Page } from 'playwright-core';

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

/**
 * Waits, with Playwright's own waiting, until `expression` (JavaScript evaluated in the page: the
 * tests compile without the DOM's types) is true; fails saying the page never showed `what`. For
 * what no locator reaches (an input's value).
 */
export async function holds(page: Page, expression: string, what: string): Promise<void> {
  try {
    await page.waitForFunction(expression, undefined, { timeout: PAGE_WAIT_MS });
  } catch (error) {
    if (!(error instanceof errors.TimeoutError)) throw error;
    throw new Error(`the page never showed ${what} (waited ${PAGE_WAIT_MS / 1000} s)`, { cause: error });
  }
}
