import * as grpc from '@grpc/grpc-js';
import { Floodgate, isBlockError, type BlockError } from '@floodgate/core';
import type { RuleSetOptions } from '@floodgate/core/rules';
import { ManualClock } from '@floodgate/core/testing';
import { blockErrorOf, blockStatus, grpcCodeOf, pushbackOf, PUSHBACK_METADATA_KEY } from '@floodgate/grpc';

/** The block error of the second call to `r` under `rules`, with `secret` as its origin and hotspot value. */
function blockOf(rules: RuleSetOptions): BlockError {
  const fg = new Floodgate({ clock: new ManualClock(1000) });
  fg.loadRules(rules);
  const options = { inbound: true, origin: 'secret-origin', args: ['secret-value'] };
  const first = fg.tryEntry('r', options);
  const second = fg.tryEntry('r', options);
  const error = isBlockError(first) ? first : second;
  if (!isBlockError(error)) throw new Error('expected a block');
  return error;
}

const KINDS: [string, RuleSetOptions, grpc.status, string][] = [
  ['a flow rule', { flow: [{ resource: 'r', threshold: 1 }] }, grpc.status.RESOURCE_EXHAUSTED, 'ERR_FLOW_BLOCKED'],
  [
    'a hotspot rule',
    { hotParams: [{ resource: 'r', paramIndex: 0, threshold: 1 }] },
    grpc.status.RESOURCE_EXHAUSTED,
    'ERR_HOT_PARAM_BLOCKED',
  ],
  [
    'an adaptive concurrency limit',
    { flow: [{ resource: 'r', metric: 'concurrency', behavior: 'adaptive', threshold: 1, minLimit: 1, maxLimit: 2 }] },
    grpc.status.UNAVAILABLE,
    'ERR_FLOW_BLOCKED',
  ],
  ['a system rule', { system: [{ maxConcurrency: 1 }] }, grpc.status.UNAVAILABLE, 'ERR_SYSTEM_BLOCKED'],
  [
    'an authority rule',
    { authority: [{ resource: 'r', strategy: 'deny', origins: ['secret-origin'] }] },
    grpc.status.PERMISSION_DENIED,
    'ERR_AUTHORITY_BLOCKED',
  ],
];

describe('blockStatus', () => {
  it.each(KINDS)(
    'answers %s with its code, naming the rule by its error code and nothing of the caller',
    (_, rules, code, errorCode) => {
      const error = blockOf(rules);
      const status = blockStatus(error);
      expect(status.code).toBe(code);
      expect(grpcCodeOf(error)).toBe(code);
      expect(status.details).toBe(`${error.detail} (${errorCode})`);
      expect(status.details).not.toMatch(/secret|\d/);
      expect(status.cause).toBe(error);
    },
  );

  it('carries the wait in whole ms, rounded up, as grpc-retry-pushback-ms, and no pushback where the wait is not known', () => {
    const flow = blockOf({ flow: [{ resource: 'r', threshold: 1 }] });
    expect(blockStatus(flow).metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['1000']);
    const odd = Object.create(flow, { retryAfterMs: { value: 0.2 } }) as BlockError;
    expect(blockStatus(odd).metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['1']);
    const concurrency = blockOf({ flow: [{ resource: 'r', metric: 'concurrency', threshold: 1 }] });
    expect(concurrency.retryAfterMs).toBeUndefined();
    expect(blockStatus(concurrency).metadata.get(PUSHBACK_METADATA_KEY)).toEqual([]);
  });
});

describe('pushbackOf', () => {
  it.each([
    ['250', 250],
    ['0', 0],
    ['-1', undefined],
    ['1.5', undefined],
    ['soon', undefined],
    ['', undefined],
    ['9'.repeat(16), undefined],
  ])('reads %j as %p', (value, expected) => {
    const metadata = new grpc.Metadata();
    metadata.set(PUSHBACK_METADATA_KEY, value);
    expect(pushbackOf(metadata)).toBe(expected);
  });

  it('reads no pushback from a status without one', () => {
    expect(pushbackOf(new grpc.Metadata())).toBeUndefined();
    expect(pushbackOf(undefined)).toBeUndefined();
  });
});

describe('blockErrorOf', () => {
  it('finds the block error a client answered locally, and nothing in other errors', () => {
    const error = blockOf({ flow: [{ resource: 'r', threshold: 1 }] });
    expect(blockErrorOf(Object.assign(new Error('8 RESOURCE_EXHAUSTED'), blockStatus(error)))).toBe(error);
    expect(blockErrorOf(Object.assign(new Error('x'), { cause: new Error('y') }))).toBeUndefined();
    expect(blockErrorOf(null)).toBeUndefined();
    expect(blockErrorOf('8 RESOURCE_EXHAUSTED')).toBeUndefined();
  });
});
