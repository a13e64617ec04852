import { isBlockError, type Entry, type Floodgate } from '@floodgate/core';
import { blockResponse, type BlockResponse } from '@floodgate/core/http';

/**
 * The resources the dashboard guards its own routes with, in the engine it watches: reads
 * (`api/state`, `api/rules`, `api/rules/loaded`, `api/resources`, a page connecting to `events`) and
 * edits (`PUT` or `POST api/rules`, and one rule at a time under `api/rules/loaded/<kind>`). Their rules are declared like any code's, so they show on the page, in
 * `describeRules()` and in metrics, and rules loaded for these resources replace them.
 */
export const DASHBOARD_RESOURCES = Object.freeze({
  /** Every read of the dashboard's data. */
  read: 'floodgate-dashboard:read',
  /** Every rule edit that carries the token. */
  edit: 'floodgate-dashboard:edit',
} as const);

/**
 * The dashboard limited by Floodgate itself, so that its readers cannot starve the app it watches:
 * a QPS flow rule on each of {@link DASHBOARD_RESOURCES}, declared on the engine while the
 * dashboard lives. Each request enters its resource as an inbound call (so system rules shed it
 * too), and a refused one is answered as the HTTP adapters answer (429 with `Retry-After` and a
 * problem body).
 */
export class OwnLimits {
  private readonly withdraw: () => void;

  constructor(
    private readonly fg: Floodgate,
    readsPerSecond: number,
    editsPerSecond: number,
  ) {
    this.withdraw = fg.declareRules({
      flow: [
        { resource: DASHBOARD_RESOURCES.read, threshold: readsPerSecond },
        { resource: DASHBOARD_RESOURCES.edit, threshold: editsPerSecond },
      ],
    });
  }

  /** Enters `resource` for one request: the entry to exit once it is answered, or how to answer its refusal. */
  enter(resource: string): Entry | BlockResponse {
    const result = this.fg.tryEntry(resource, { inbound: true });
    return isBlockError(result) ? blockResponse(result) : result;
  }

  /** Withdraws the dashboard's rules. */
  close(): void {
    this.withdraw();
  }
}
