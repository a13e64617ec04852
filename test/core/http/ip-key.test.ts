import { ipAddressKey } from '@floodgate/core/http';

describe('ipAddressKey', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::FFFF:203.0.113.9', '203.0.113.9'],
    ['0:0:0:0:0:ffff:cb00:7109', '203.0.113.9'],
    ['::ffff:cb00:7109', '203.0.113.9'],
    ['203.000.113.009', '203.0.113.9'],
  ])('reads the IPv4 client %j as %j', (address, key) => {
    expect(ipAddressKey(address)).toBe(key);
  });

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
