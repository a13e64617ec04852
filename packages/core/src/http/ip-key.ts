/** Options of the adapters' `ipKey(req, options)`. */
export interface IpKeyOptions {
  /**
   * The prefix length IPv6 clients are grouped by: one key per /56 by default (a home or small
   * site usually gets a /56 or a /48, and can rotate addresses inside it at will), as
   * express-rate-limit does; `false` keys each IPv6 address on its own.
   * @defaultValue 56
   */
  readonly ipv6Subnet?: number | false;
}

/** Defaults of `ipKey()`. */
export const IP_KEY_DEFAULTS = Object.freeze({
  /** IPv6 clients are keyed by their /56 (express-rate-limit's default). */
  ipv6Subnet: 56,
} as const);

/**
 * The key a client address is limited under: an IPv4 address in dotted-decimal form (also when
 * it arrives inside an IPv6 address: IPv4-mapped `::ffff:1.2.3.4` or `::ffff:102:304`,
 * IPv4-compatible `::1.2.3.4`, IPv4-translated `::ffff:0:1.2.3.4`, NAT64 `64:ff9b::1.2.3.4`; or
 * with leading zeros); an IPv6 address masked to its `/ipv6Subnet` and written in its canonical
 * form with the prefix length (`2001:db8:0:100::/56`), so rotating addresses within a subnet, or
 * spelling one address another way, gets no fresh budget. A zone (`%eth0`) is dropped. `''` for a missing address;
 * anything that is not an IP address is returned as it is.
 * @throws RangeError when `ipv6Subnet` is not an integer within [1, 128] or `false`.
 *
 * @example
 * ipAddressKey('::ffff:203.0.113.9');          // '203.0.113.9'
 * ipAddressKey('64:ff9b::cb00:7109');          // '203.0.113.9'
 * ipAddressKey('2001:db8:0:1ff:a::1');         // '2001:db8:0:100::/56'
 * ipAddressKey('2001:db8::1', { ipv6Subnet: false }); // '2001:db8::1'
 */
export function ipAddressKey(address: string | undefined | null, options?: IpKeyOptions): string {
  const subnet = subnetOf(options);
  if (address === undefined || address === null || address === '') return '';
  if (!address.includes(':')) return ipv4Key(address) ?? address;
  const groups = ipv6Groups(address);
  if (groups === undefined) return address;
  const v4 = embeddedIpv4(groups);
  if (v4 !== undefined) return v4;
  if (subnet === false) return formatIpv6(groups);
  for (let i = 0; i < 8; i++) {
    const keep = Math.min(16, Math.max(0, subnet - i * 16));
    groups[i] = keep === 0 ? 0 : groups[i]! & ((0xffff << (16 - keep)) & 0xffff);
  }
  return `${formatIpv6(groups)}/${subnet}`;
}

/**
 * The IPv4 client an IPv6 address stands for, in the forms that carry one in their last 32 bits:
 * IPv4-mapped `::ffff:0:0/96` and IPv4-compatible `::/96` (RFC 4291), IPv4-translated
 * `::ffff:0:0:0/96` (RFC 2765, SIIT) and the NAT64 well-known prefix `64:ff9b::/96` (RFC 6052).
 * Every IPv4 client behind a translator is its own client, never one /56 with all the others. An
 * IPv4-compatible address whose IPv4 part is in 0.0.0.0/8 (`::`, `::1`) is not one: it stays IPv6.
 */
function embeddedIpv4(groups: readonly number[]): string | undefined {
  const [a, b, c, d, e, f, g, h] = groups as [number, number, number, number, number, number, number, number];
  let carries = false;
  if (a === 0x64 && b === 0xff9b) carries = c === 0 && d === 0 && e === 0 && f === 0;
  else if (a === 0 && b === 0 && c === 0 && d === 0)
    carries =
      (e === 0 && f === 0xffff) || // mapped
      (e === 0xffff && f === 0) || // translated
      (e === 0 && f === 0 && g >= 0x0100); // compatible, outside 0.0.0.0/8
  return carries ? `${g >> 8}.${g & 0xff}.${h >> 8}.${h & 0xff}` : undefined;
}

function subnetOf(options: IpKeyOptions | undefined): number | false {
  const subnet = options?.ipv6Subnet;
  if (subnet === undefined) return IP_KEY_DEFAULTS.ipv6Subnet;
  if (subnet === false || (Number.isInteger(subnet) && subnet >= 1 && subnet <= 128)) return subnet;
  throw new RangeError(`ipKey ipv6Subnet must be an integer within [1, 128] or false, got ${String(subnet)}`);
}

/** Dotted-decimal IPv4 in canonical form, or `undefined` when `text` is not one. */
function ipv4Key(text: string): string | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const byte = Number(part);
    if (byte > 255) return undefined;
    bytes.push(byte);
  }
  return bytes.join('.');
}

/** The eight 16-bit groups of an IPv6 address (with an optional zone and embedded IPv4), or `undefined`. */
function ipv6Groups(text: string): number[] | undefined {
  let address = text;
  const zone = address.indexOf('%');
  if (zone >= 0) address = address.slice(0, zone);
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const read = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const parts = half.split(':');
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (i === parts.length - 1 && part.includes('.')) {
        const v4 = ipv4Key(part);
        if (v4 === undefined) return undefined;
        const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(part)) return undefined;
        out.push(parseInt(part, 16));
      }
    }
    return out;
  };
  const head = read(halves[0]!);
  const tail = halves.length === 2 ? read(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** RFC 5952 canonical text: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
