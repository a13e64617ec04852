import type { Server } from 'node:http';
import fc from 'fast-check';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import type { Handler, Harness, RouteGuardSpec, Started } from './app-spec';
import { sendRaw } from './raw-client';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';

/**
 * A property, run against each framework: whatever spelling of a limited path a client sends
 * (letter case, percent-escapes, duplicate and trailing slashes, query and fragment, an
 * absolute-form target, HEAD for GET), the handler runs no more often in a window than the
 * limit allows, for limits by route pattern, by the framework's own route, by a rule loaded for
 * the route every route guarding names (`everyRoute`, no rule in code), and by an API group's
 * one budget across both routes.
 */

interface Target {
  readonly name: 'login' | 'export';
  readonly methods: readonly string[];
  readonly path: string;
  readonly threshold: number;
}

const TARGETS: readonly Target[] = [
  { name: 'login', methods: ['POST'], path: '/login', threshold: 3 },
  { name: 'export', methods: ['GET', 'HEAD'], path: '/export', threshold: 2 },
];

/** One character of a path, spelled as a client may: as is, in the other case, or percent-escaped (once or twice). */
const spelledChar = (c: string): fc.Arbitrary<string> => {
  const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
  return fc.oneof(
    { arbitrary: fc.constant(c), weight: 6 },
    { arbitrary: fc.constantFrom(c.toUpperCase(), `%${hex}`, `%${hex.toUpperCase()}`, `%25${hex}`), weight: 1 },
  );
};

/** Mostly `plain`, sometimes one of `others`: most requests stay close to a routable spelling. */
const mostly = (plain: string, ...others: string[]): fc.Arbitrary<string> =>
  fc.oneof({ arbitrary: fc.constant(plain), weight: 3 }, { arbitrary: fc.constantFrom(...others), weight: 1 });

/** A spelling of `path`: each character spelled, slashes doubled, and a tail or a head added. */
const spelledPath = (path: string): fc.Arbitrary<string> =>
  fc
    .record({
      chars: fc.tuple(...[...path.slice(1)].map(spelledChar)),
      leading: mostly('/', '//', '///', '/./'),
      trailing: mostly('', '/', '//', '?x=1', '#top', '/?a', ';x', '%2F', '/.'),
      absolute: mostly('', 'http://test', 'HTTP://example.com:80'),
    })
    .map(({ chars, leading, trailing, absolute }) => `${absolute}${leading}${chars.join('')}${trailing}`);

const request = fc.oneof(
  ...TARGETS.map((target) =>
    fc.record({
      target: fc.constant(target),
      method: fc.constantFrom(...target.methods),
      url: spelledPath(target.path),
    }),
  ),
);

/** The group's budget, across both targets. */
const GROUP_THRESHOLD = 3;

/** Runs the property against one framework, limiting by route pattern, by route, by every route guarding and by a group. */
export function runRouteVariants(harness: Harness): void {
  describe.each(['pattern', 'guard', 'every route', 'group'] as const)(
    `${harness.name}: every spelling of a limited path (limit by %s)`,
    (limit) => {
      const clock = new ManualClock(10_000);
      const handled = new Map<string, number>();
      let started: Started;
      let server: Server;

      beforeAll(async () => {
        const fg = new Floodgate({ clock });
        const rules = (target: Target): RouteGuardSpec => ({ rateLimit: { threshold: target.threshold } });
        const handler =
          (target: Target): Handler =>
          () => {
            handled.set(target.name, (handled.get(target.name) ?? 0) + 1);
            return { body: { ok: true } };
          };
        const options =
          limit === 'pattern'
            ? { routes: Object.fromEntries(TARGETS.map((t) => [`${t.methods[0]} ${t.path}`, rules(t)])) }
            : limit === 'every route'
              ? { everyRoute: true }
              : limit === 'group'
                ? {
                    groups: [
                      {
                        name: 'both',
                        patterns: TARGETS.map((t) => `${t.methods[0]} ${t.path}`),
                        rateLimit: { threshold: GROUP_THRESHOLD },
                      },
                    ],
                  }
                : undefined;
        // Every route guarding: the rules are loaded (as from a file), for the names the framework's routes get.
        if (limit === 'every route')
          fg.loadRules({
            flow: TARGETS.map((t) => ({ resource: `${t.methods[0]} ${t.path}`, threshold: t.threshold })),
          });
        started = await harness.start({
          floodgate: fg,
          ...(options === undefined ? {} : { options }),
          routes: TARGETS.map((target) => ({
            method: target.methods[0] as 'GET' | 'POST',
            path: target.path,
            ...(limit === 'guard' ? { guard: rules(target) } : {}),
            handler: handler(target),
          })),
        });
        server = started.server;
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      });

      afterAll(() => started.close());

      it(
        'never runs a handler more often in a window than its limit',
        async () => {
          let reached = 0;
          await fc.assert(
            fc.asyncProperty(fc.array(request, { minLength: 4, maxLength: 16 }), async (requests) => {
              await clock.advance(2000);
              handled.clear();
              for (const { method, url } of requests) await sendRaw(server, method, url);
              const total = TARGETS.reduce((sum, target) => sum + (handled.get(target.name) ?? 0), 0);
              if (limit === 'group') {
                reached += total;
                if (total > GROUP_THRESHOLD)
                  throw new Error(
                    `the group ran ${total} times within one window (limit ${GROUP_THRESHOLD}): ${JSON.stringify(requests.map((r) => `${r.method} ${r.url}`))}`,
                  );
                return;
              }
              for (const target of TARGETS) {
                const runs = handled.get(target.name) ?? 0;
                reached += runs;
                if (runs > target.threshold)
                  throw new Error(
                    `${target.name} ran ${runs} times within one window (limit ${target.threshold}): ${JSON.stringify(requests.map((r) => `${r.method} ${r.url}`))}`,
                  );
              }
            }),
            propertyRuns(40),
          );
          // The property is not vacuous: spellings the framework routes did reach the handlers.
          expect(reached).toBeGreaterThan(0);
        },
        propertyTimeoutMs(40),
      );
    },
  );
}
