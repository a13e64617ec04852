import fc from 'fast-check';
import { Entry, Floodgate } from '@floodgate/core';
import { ManualClock, ManualProbe } from '@floodgate/core/testing';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

/** One step of inbound traffic: a call on one of a few resources, an exit of a held call, or time passing. */
type Step =
  { readonly enter: number; readonly acquire: number } | { readonly exit: number } | { readonly advanceMs: number };

const steps = fc.array(
  fc.oneof(
    fc.record({ enter: fc.integer({ min: 0, max: 4 }), acquire: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ exit: fc.nat() }),
    fc.record({ advanceMs: fc.integer({ min: 0, max: 700 }) }),
  ),
  { maxLength: 200 },
);

/** Runs `plan` against an engine with `rules`, calling `check` after every admitted call. */
function drive(plan: readonly Step[], rules: object, check: (fg: Floodgate) => void): void {
  const clock = new ManualClock(5_000);
  const fg = new Floodgate({ clock, probe: new ManualProbe({ cpuUsage: 1, eventLoopDelayMs: 1000 }) });
  fg.loadSystemRules([rules]);
  const held: Entry[] = [];
  for (const step of plan) {
    if ('enter' in step) {
      const result = fg.tryEntry(`GET /r${step.enter}`, { inbound: true, acquireCount: step.acquire });
      if (result instanceof Entry) {
        held.push(result);
        check(fg);
      }
    } else if ('exit' in step) {
      if (held.length > 0) held.splice(step.exit % held.length, 1)[0]!.exit();
    } else {
      void clock.advance(step.advanceMs); // no sleepers: moves synchronously
    }
  }
}

describe('system caps (property)', () => {
  it(
    'never lets more inbound calls be in flight than maxConcurrency, whatever the traffic',
    () => {
      fc.assert(
        fc.property(steps, fc.integer({ min: 0, max: 6 }), (plan, max) => {
          drive(plan, { maxConcurrency: max }, (fg) => expect(fg.inboundStats().concurrency).toBeLessThanOrEqual(max));
        }),
        propertyRuns(100),
      );
    },
    propertyTimeoutMs(100),
  );

  it(
    'never lets more inbound calls pass in the window than maxQps, whatever the traffic',
    () => {
      fc.assert(
        fc.property(steps, fc.integer({ min: 0, max: 8 }), (plan, max) => {
          drive(plan, { maxQps: max }, (fg) => expect(fg.inboundStats().lastSecond.pass).toBeLessThanOrEqual(max));
        }),
        propertyRuns(100),
      );
    },
    propertyTimeoutMs(100),
  );

  it(
    'never lets a loaded process hold more than two inbound calls in flight before one completed (BBR), whatever the traffic',
    () => {
      const withoutExits = steps.map((plan) => plan.filter((step) => !('exit' in step)));
      fc.assert(
        fc.property(withoutExits, (plan) => {
          drive(plan, { maxCpuUsage: 0.5 }, (fg) => expect(fg.inboundStats().concurrency).toBeLessThanOrEqual(2));
        }),
        propertyRuns(100),
      );
    },
    propertyTimeoutMs(100),
  );
});
