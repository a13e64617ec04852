import 'reflect-metadata';
import { request as httpRequest, type Server } from 'node:http';
import { Controller, Get } from '@nestjs/common';
import fc from 'fast-check';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { ABSENT_VALUE, FloodgateModule, HotParam, ipKey } from '@floodgate/nestjs';
import { countable } from '../../packages/nestjs/src/hot-param-values';
import { PLATFORMS, portOf, startNest, type NestHarness, type Platform } from './nest-harness';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';

describe('countable', () => {
  it('keeps strings, numbers and booleans as they are', () => {
    expect([countable('a'), countable(7), countable(true)]).toEqual(['a', 7, true]);
  });

  it('counts absent and empty values as the value ""', () => {
    expect([countable(undefined), countable(null), countable(''), countable([]), countable({})]).toEqual([
      ABSENT_VALUE,
      ABSENT_VALUE,
      '',
      ABSENT_VALUE,
      ABSENT_VALUE,
    ]);
  });

  it('gives the distinct values of a repeated query key', () => {
    expect(countable(['a', 'b', 'a'])).toEqual(['a', 'b']);
    expect(countable(['a', 'a'])).toBe('a');
  });

  it('finds the values inside a nested query object, so ?id[x]=alice counts alice', () => {
    expect(countable({ x: 'alice' })).toBe('alice');
    expect(countable({ x: ['alice', { y: 'bob' }] })).toEqual(['alice', 'bob']);
  });
});

describe('ipKey', () => {
  it('keeps IPv4 addresses, without leading zeros', () => {
    expect(ipKey('192.0.2.1')).toBe('192.0.2.1');
    expect(ipKey('192.000.002.001')).toBe('192.0.2.1');
  });

  it('counts IPv4-mapped IPv6 addresses as IPv4', () => {
    expect(ipKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(ipKey('::FFFF:c000:0201')).toBe('192.0.2.1');
  });

  it('counts IPv6 addresses by /64 network, whatever their spelling', () => {
    expect(ipKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(ipKey('2001:0DB8:0001:0002:ffff:0:0:9')).toBe('2001:db8:1:2::/64');
    expect(ipKey('fe80::1%eth0')).toBe('fe80::/64');
    expect(ipKey('::1')).toBe('::/64');
  });

  it('counts IPv4 clients behind a translator as their IPv4 address', () => {
    expect(ipKey('64:ff9b::192.0.2.1')).toBe('192.0.2.1');
    expect(ipKey('::ffff:0:192.0.2.2')).toBe('192.0.2.2');
    expect(ipKey('::192.0.2.3')).toBe('192.0.2.3');
  });

  it('counts a request without an address as ""', () => {
    expect(ipKey(undefined)).toBe(ABSENT_VALUE);
  });
});

const THRESHOLD = 2;

@Controller('tenants')
class TenantsController {
  @Get('by-header')
  @HotParam({ header: 'X-Tenant', threshold: THRESHOLD })
  byHeader() {
    return 'ok';
  }

  @Get('by-query')
  @HotParam({ query: 'tenant', threshold: THRESHOLD })
  byQuery() {
    return 'ok';
  }
}

/** One request of a generated run: where it goes, the values it carries and how it spells them. */
interface Attempt {
  readonly route: 'by-header' | 'by-query';
  readonly values: readonly string[];
  readonly headerName: string;
}

/** Sends one request, the values as repeated header lines or repeated query keys; resolves with the status. */
function send(server: Server, attempt: Attempt): Promise<number> {
  const path =
    attempt.route === 'by-query'
      ? `/tenants/by-query?${attempt.values.map((v) => `tenant=${encodeURIComponent(v)}`).join('&')}`
      : '/tenants/by-header';
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: portOf(server), path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    if (attempt.route === 'by-header')
      req.setHeader(attempt.headerName, attempt.values.length === 1 ? attempt.values[0]! : [...attempt.values]);
    req.end();
  });
}

describe.each(PLATFORMS)('per-value limits over HTTP on %s', (platform: Platform) => {
  let clock: ManualClock;
  let harness: NestHarness;

  beforeAll(async () => {
    clock = new ManualClock(10_000);
    harness = await startNest(platform, {
      imports: [FloodgateModule.forRoot({ floodgate: new Floodgate({ clock }) })],
      controllers: [TenantsController],
    });
    await harness.app.listen(0, '127.0.0.1');
  });

  afterAll(() => harness.close());

  it(
    'admits a request only while each of its values has had fewer than the threshold admitted, however names and values are spelt',
    async () => {
      const attempt = fc.record({
        route: fc.constantFrom('by-header' as const, 'by-query' as const),
        // 'A' and 'a' are distinct values (the app reads them apart); repeats within a request count once.
        values: fc.array(fc.constantFrom('a', 'b', 'c', 'A'), { minLength: 1, maxLength: 3 }),
        headerName: fc.constantFrom('x-tenant', 'X-Tenant', 'X-TENANT', 'x-TeNaNt'),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(attempt, { minLength: 1, maxLength: 14 }), async (attempts) => {
          await clock.advance(60_000); // every bucket full again: a fresh start for each run
          const admitted: Record<string, Map<string, number>> = { 'by-header': new Map(), 'by-query': new Map() };
          for (const a of attempts) {
            const status = await send(harness.server, a);
            const counts = admitted[a.route]!;
            const values = [...new Set(a.values)];
            // The model: each route has a bucket of THRESHOLD per value; a request passes only if
            // every value it carries has a token left, and a refused request takes none.
            const expected = values.every((v) => (counts.get(v) ?? 0) < THRESHOLD) ? 200 : 429;
            expect(status).toBe(expected);
            if (status === 200) for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
          }
          for (const counts of Object.values(admitted))
            for (const n of counts.values()) expect(n).toBeLessThanOrEqual(THRESHOLD);
        }),
        propertyRuns(40),
      );
    },
    propertyTimeoutMs(40),
  );
});
