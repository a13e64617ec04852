/** Nanoseconds as a short human figure (`84 ns`, `1.23 µs`, `12.3 µs`, `4.56 ms`). */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return 'n/a';
  if (ns < 1000) return `${ns.toFixed(ns < 10 ? 1 : 0)} ns`;
  const us = ns / 1000;
  if (us >= 1000) return formatMs(us / 1000);
  return `${us.toFixed(us < 10 ? 2 : 1)} µs`;
}

/** A ratio to two decimals (`0.97`), or `n/a`. */
export function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a';
}

/** A count with thousands separators (`41,230`). */
export function formatCount(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

/** Bytes as MB with one decimal. */
export function formatMb(bytes: number): string {
  return Number.isFinite(bytes) ? `${(bytes / 1048576).toFixed(1)} MB` : 'n/a';
}

/** Milliseconds with two decimals. */
export function formatMs(ms: number): string {
  return Number.isFinite(ms) ? `${ms.toFixed(ms < 10 ? 2 : 1)} ms` : 'n/a';
}

/** A word capitalised (`express` → `Express`). */
export function title(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A count and its noun (`1 round`, `2 rounds`). */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A difference with its sign and one decimal (`+1.6`, `−8.9`, `0.0`), or `n/a`. */
export function formatSigned(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  const fixed = Math.abs(n).toFixed(1);
  return fixed === '0.0' ? '0.0' : `${n > 0 ? '+' : '−'}${fixed}`;
}

/**
 * How far values taken once per round or process spread, as their lowest and highest
 * (`0.86 – 0.92`), or one figure when they agree: a report gives each figure's median and its
 * spread, not every round's value.
 */
export function formatRange(values: readonly number[], format: (n: number) => string): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return 'n/a';
  const low = format(Math.min(...finite));
  const high = format(Math.max(...finite));
  return low === high ? low : `${low} – ${high}`;
}
