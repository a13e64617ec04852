import fc from 'fast-check';
import { ipAddressKey } from '@floodgate/core/http';
import { propertyRuns, propertyTimeoutMs } from '../../support/property-runs';

describe('ipAddressKey', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::FFFF:203.0.113.9', '203.0.113.9'],
    ['0:0:0:0:0:ffff:cb00:7109', '203.0.113.9'],
    ['::ffff:cb00:7109', '203.0.113.9'],
    ['203.000.113.009', '203.0.113.9'],
    ['::203.0.113.9', '203.0.113.9'],
    ['::cb00:7109', '203.0.113.9'],
    ['::ffff:0:203.0.113.9', '203.0.113.9'],
    ['0:0:0:0:ffff:0:cb00:7109', '203.0.113.9'],
    ['64:ff9b::203.0.113.9', '203.0.113.9'],
    ['64:FF9B:0:0:0:0:cb00:7109', '203.0.113.9'],
  ])('reads the IPv4 client %j as %j', (address, key) => {
    expect(ipAddressKey(address)).toBe(key);
  });

  it('keys IPv4 clients behind a translator each as their own address, not as one /56', () => {
    const keys = ['64:ff9b::198.51.100.1', '64:ff9b::198.51.100.2', '::ffff:0:198.51.100.3', '::198.51.100.4'].map(
      (address) => ipAddressKey(address),
    );
    expect(keys).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4']);
  });

  it('keeps ::, ::1 and the rest of ::/104 as IPv6 (no IPv4 client is in 0.0.0.0/8)', () => {
    expect(ipAddressKey('::1')).toBe('::/56');
    expect(ipAddressKey('::')).toBe('::/56');
    expect(ipAddressKey('::0.255.0.1', { ipv6Subnet: false })).toBe('::ff:1');
  });

  it('keys neighbours of the prefixes as IPv6', () => {
    expect(ipAddressKey('64:ff9b:1::203.0.113.9', { ipv6Subnet: false })).toBe('64:ff9b:1::cb00:7109');
    expect(ipAddressKey('::1:0:203.0.113.9', { ipv6Subnet: false })).toBe('::1:0:cb00:7109');
    expect(ipAddressKey('::fffe:203.0.113.9', { ipv6Subnet: false })).toBe('::fffe:cb00:7109');
  });

  it(
    'gives every spelling of one IPv4 address its key, and different IPv4 addresses different keys',
    () => {
      fc.assert(
        fc.property(ipv4Spelling, ipv4Spelling, subnetOption, ([a, spellA], [b, spellB], subnet) => {
          const [keyA, keyB] = [ipAddressKey(spellA, subnet), ipAddressKey(spellB, subnet)];
          expect(keyA).toBe(a.join('.'));
          expect(keyB).toBe(b.join('.'));
          expect(keyA === keyB).toBe(a.join('.') === b.join('.'));
        }),
        propertyRuns(500),
      );
    },
    propertyTimeoutMs(500),
  );

  it('groups IPv6 clients by their /56', () => {
    expect(ipAddressKey('2001:db8:0:1ff:a::1')).toBe('2001:db8:0:100::/56');
    expect(ipAddressKey('2001:db8:0:1aa::42')).toBe('2001:db8:0:100::/56');
    expect(ipAddressKey('2001:db8:0:200::1')).toBe('2001:db8:0:200::/56');
  });

  it('writes one IPv6 address one way, whatever its spelling', () => {
    const spellings = [
      '2001:DB8::1',
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      '2001:db8:0::1',
      '[2001:db8::1]',
      'fe80::1%eth0'.replace('fe80', '2001:db8'),
    ];
    expect(new Set(spellings.map((s) => ipAddressKey(s, { ipv6Subnet: false })))).toEqual(new Set(['2001:db8::1']));
  });

  it('masks to the subnet asked for', () => {
    expect(ipAddressKey('2001:db8:abcd:1234::1', { ipv6Subnet: 48 })).toBe('2001:db8:abcd::/48');
    expect(ipAddressKey('2001:db8:abcd:1234::1', { ipv6Subnet: 64 })).toBe('2001:db8:abcd:1234::/64');
    expect(ipAddressKey('2001:db8::1', { ipv6Subnet: 128 })).toBe('2001:db8::1/128');
    expect(ipAddressKey('2001:db8::1', { ipv6Subnet: 1 })).toBe('::/1');
  });

  it('keys a missing address as the empty string, and anything else as it is', () => {
    expect(ipAddressKey(undefined)).toBe('');
    expect(ipAddressKey('')).toBe('');
    expect(ipAddressKey('not-an-ip')).toBe('not-an-ip');
    expect(ipAddressKey('1.2.3.256')).toBe('1.2.3.256');
    expect(ipAddressKey('1:2:3:4:5:6:7:8:9')).toBe('1:2:3:4:5:6:7:8:9');
    expect(ipAddressKey('1::2::3')).toBe('1::2::3');
  });

  it('ignores hotspot route params given in the place of options', () => {
    expect(ipAddressKey('::ffff:10.0.0.1', { id: '7' } as never)).toBe('10.0.0.1');
  });

  it.each([0, 129, 56.5, '56', true])('refuses ipv6Subnet %j, naming it', (subnet) => {
    expect(() => ipAddressKey('2001:db8::1', { ipv6Subnet: subnet as never })).toThrow(
      `ipKey ipv6Subnet must be an integer within [1, 128] or false, got ${String(subnet)}`,
    );
  });
});

const subnetOption = fc.option(
  fc.record({ ipv6Subnet: fc.oneof(fc.integer({ min: 1, max: 128 }), fc.constant(false as const)) }),
  {
    nil: undefined,
  },
);

/** The six leading groups of each IPv6 form that carries an IPv4 address in its last 32 bits. */
const FORMS = {
  mapped: [0, 0, 0, 0, 0, 0xffff],
  translated: [0, 0, 0, 0, 0xffff, 0],
  compatible: [0, 0, 0, 0, 0, 0],
  nat64: [0x64, 0xff9b, 0, 0, 0, 0],
} as const;

/** An IPv4 address (few distinct ones, so that equal pairs are drawn too) and one spelling of it. */
const ipv4Spelling: fc.Arbitrary<[number[], string]> = fc
  .tuple(
    fc.array(fc.constantFrom(0, 1, 9, 10, 99, 100, 127, 192, 203, 255), { minLength: 4, maxLength: 4 }),
    fc.constantFrom('dotted', ...(Object.keys(FORMS) as (keyof typeof FORMS)[])),
    fc.boolean(), // the last 32 bits as dotted decimal or as two hex groups
    fc.array(fc.nat({ max: 3 }), { minLength: 8, maxLength: 8 }), // leading zeros per group or octet
    fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), // upper case per group
    fc.nat(), // which run of zero groups to write as ::, if any
    fc.constantFrom('', 'brackets', 'zone'),
  )
  .filter(([bytes, form]) => form !== 'compatible' || bytes[0] !== 0)
  .map(([bytes, form, dotted, zeros, upper, compress, wrap]) => {
    const octets = bytes.map((byte, i) =>
      byte.toString().padStart(Math.min(3, byte.toString().length + zeros[i]!), '0'),
    );
    if (form === 'dotted') return [bytes, octets.join('.')];
    const groups = [...FORMS[form], (bytes[0]! << 8) | bytes[1]!, (bytes[2]! << 8) | bytes[3]!];
    let parts = groups.map((g, i) => {
      const hex = g.toString(16).padStart(Math.min(4, g.toString(16).length + zeros[i]!), '0');
      return upper[i] ? hex.toUpperCase() : hex;
    });
    if (dotted) parts = [...parts.slice(0, 6), octets.join('.')];
    // Runs of zero groups among the hex ones, any of which may be written as '::'.
    const runs: [number, number][] = [];
    for (let i = 0; i < 6; i++)
      for (let j = i + 1; j <= (dotted ? 6 : 8); j++) if (groups.slice(i, j).every((g) => g === 0)) runs.push([i, j]);
    let text: string;
    if (runs.length === 0 || compress % (runs.length + 1) === runs.length) text = parts.join(':');
    else {
      const [i, j] = runs[compress % (runs.length + 1)]!;
      text = `${parts.slice(0, i).join(':')}::${parts.slice(j).join(':')}`;
    }
    return [bytes, wrap === 'brackets' ? `[${text}]` : wrap === 'zone' ? `${text}%eth0` : text];
  });
