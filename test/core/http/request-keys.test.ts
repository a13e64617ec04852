import { MANY_VALUES } from '@floodgate/core/http';
import type { KeySource } from '@floodgate/core/metrics';
import { readRequestKeys, type HttpRequestReader } from '../../../packages/core/src/http/request-keys';

/** How the HTTP layer reads key values from a request: as the application reads them, never narrower. */

interface Req {
  readonly ip?: string;
  readonly query?: unknown;
  readonly user?: unknown;
}

const reader: HttpRequestReader<Req> = { ip: (r) => r.ip, query: (r) => r.query, user: (r) => r.user };

function read(source: KeySource, req: Req, headers: Record<string, string[]> = {}, params?: Record<string, string>) {
  const keys = readRequestKeys([source], req, { headersDistinct: headers }, reader, params);
  return Object.values(keys)[0];
}

describe('reading key values from a request', () => {
  it('reads the client address as ipKey keys it', () => {
    expect(read({ from: 'ip', ipv6Subnet: 56 }, { ip: '::ffff:203.0.113.9' })).toBe('203.0.113.9');
    expect(read({ from: 'ip', ipv6Subnet: 56 }, { ip: '2001:db8:0:1ff::1' })).toBe('2001:db8:0:100::/56');
    expect(read({ from: 'ip', ipv6Subnet: false }, { ip: '2001:db8::1' })).toBe('2001:db8::1');
    expect(read({ from: 'ip', ipv6Subnet: 56 }, {})).toBe('');
  });

  it('reads the host in lower case without its port', () => {
    expect(read({ from: 'host' }, {}, { host: ['Shop.Example.COM:8080'] })).toBe('shop.example.com');
    expect(read({ from: 'host' }, {}, { host: ['[2001:DB8::1]:443'] })).toBe('[2001:db8::1]');
  });

  it('reads every value of a repeated header, once each', () => {
    expect(read({ from: 'header', name: 'x-api-key' }, {}, { 'x-api-key': ['a', 'b', 'a'] })).toEqual(['a', 'b']);
    expect(read({ from: 'header', name: 'x-api-key' }, {}, { 'x-api-key': ['a', 'a'] })).toBe('a');
  });

  it('counts a request without the value as the value ""', () => {
    for (const source of [
      { from: 'header', name: 'x' },
      { from: 'cookie', name: 'sid' },
      { from: 'query', name: 'q' },
      { from: 'param', name: 'id' },
      { from: 'user', name: 'id' },
      { from: 'host' },
    ] as const)
      expect(read(source, {})).toBe('');
  });

  it('counts more than 32 distinct values as one marker', () => {
    const many = Array.from({ length: 33 }, (_, i) => `k${i}`);
    expect(read({ from: 'header', name: 'x' }, {}, { x: many })).toBe(MANY_VALUES);
    expect(read({ from: 'header', name: 'x' }, {}, { x: many.slice(0, 32) })).toHaveLength(32);
  });

  it('decodes cookies as the cookie package does, and reads each of a repeated name', () => {
    const cookie = ['a=1; sid="%61b"; other=2', 'sid=zz; sidx=no'];
    expect(read({ from: 'cookie', name: 'sid' }, {}, { cookie })).toEqual(['ab', 'zz']);
    expect(read({ from: 'cookie', name: 'sid' }, {}, { cookie: ['sid=%E0%A4%A'] })).toBe('%E0%A4%A');
  });

  it('reads a query parameter as the app parsed it: each value of an array, the values of a nested object', () => {
    expect(read({ from: 'query', name: 'id' }, { query: { id: ['a', 'b'] } })).toEqual(['a', 'b']);
    expect(read({ from: 'query', name: 'id' }, { query: { id: { x: 'a', y: ['b', 7] } } })).toEqual(['a', 'b', '7']);
    // Own properties only: nothing inherited is read.
    expect(read({ from: 'query', name: 'toString' }, { query: {} })).toBe('');
  });

  it('reads a route parameter and a property of the user by a dotted path', () => {
    expect(read({ from: 'param', name: 'id' }, {}, {}, { id: '42' })).toBe('42');
    expect(read({ from: 'user', name: 'org.id' }, { user: { org: { id: 7 } } })).toBe('7');
    expect(read({ from: 'user', name: 'org.id' }, { user: { org: null } })).toBe('');
    expect(read({ from: 'user', name: 'constructor' }, { user: {} })).toBe('');
  });
});
