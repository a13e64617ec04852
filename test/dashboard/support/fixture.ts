import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { dashboard, type Dashboard, type DashboardOptions } from '@floodgate/dashboard';
import { mountOn, type Mounted } from './mounts';

/** A fresh engine on a ManualClock per test, with dashboards and servers that close after it. */
export interface DashboardFixture {
  /** This test's engine. */
  readonly fg: Floodgate;
  /** Its clock (starting at 50,000 ms). */
  readonly clock: ManualClock;
  /** A dashboard of the engine (with the fixture's token unless `options` say otherwise). */
  make(options?: DashboardOptions): Dashboard;
  /** A dashboard of the engine, mounted the way `name` of `MOUNTS` does, listening. */
  mount(name?: string, options?: DashboardOptions): Promise<Mounted>;
  /** Closes `thing` after the test (in the reverse order of being given). */
  afterwards(thing: { close(): unknown }): void;
}

/** Registers the hooks of a {@link DashboardFixture}: call it at the top of a test file. */
export function useDashboards(token: string): DashboardFixture {
  let fg: Floodgate;
  let clock: ManualClock;
  const open: { close(): unknown }[] = [];
  beforeEach(() => {
    clock = new ManualClock(50_000);
    fg = new Floodgate({ clock });
  });
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });
  const make = (options: DashboardOptions = { token }): Dashboard => {
    const dash = dashboard(fg, options);
    open.push(dash);
    return dash;
  };
  return {
    get fg() {
      return fg;
    },
    get clock() {
      return clock;
    },
    make,
    async mount(name = 'express', options) {
      const mounted = await mountOn(name, make(options));
      open.push(mounted);
      return mounted;
    },
    afterwards: (thing) => void open.push(thing),
  };
}
