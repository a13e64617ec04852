import {
  AdaptiveThrottlingError,
  AuthorityBlockError,
  BlockError,
  CircuitOpenError,
  ErrorCodes,
  FlowBlockError,
  HotParamBlockError,
  RetryBudgetExhaustedError,
  RuleValidationError,
  SystemBlockError,
  TimeoutError,
  UpstreamPausedError,
  isBlockError,
} from '@floodgate/core';
import { normalizeRuleSet } from '@floodgate/core/rules';
import { RULE_KIND_NAMES, type FlowRule } from '@floodgate/core/metrics';
import { anchors, read } from '../../docs/markdown';

const rule = { resource: 'r', metric: 'qps', threshold: 1 } as FlowRule;
const blocks = [
  new FlowBlockError({ resource: 'r', rule }),
  new HotParamBlockError({ resource: 'r', rule: {} as never, value: 42 }),
  new CircuitOpenError({ resource: 'r', rule: { strategy: 'errorRatio' } as never }),
  new SystemBlockError({ resource: 'r', rule: { maxQps: 1, retryAfterMs: 1000 }, limit: 'maxQps', value: 1 }),
  new AuthorityBlockError({ resource: 'r', rule: {} as never, origin: 'evil' }),
  new UpstreamPausedError({ resource: 'r', rule: { resource: 'r', maxPauseMs: 1000 }, retryAfterMs: 500 }),
  new AdaptiveThrottlingError({ resource: 'r', rule: { resource: 'r', k: 2, windowMs: 1000 } }),
  new RetryBudgetExhaustedError({ resource: 'r', rule: {} as never }),
];

describe('errors', () => {
  it('gives every error a unique code listed in ErrorCodes', () => {
    const codes = [...blocks.map((e) => e.code), new RuleValidationError([]).code, new TimeoutError('r', 1).code];
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes.sort()).toEqual(Object.keys(ErrorCodes).sort());
  });

  it("gives each block error the kind of its code as kind: the kind's own name, an own getter on its class", () => {
    const kinds = blocks.map((e) => [e.kind, RULE_KIND_NAMES.find((k) => k.codes.includes(e.code))?.name]);
    expect(kinds.map(([kind]) => kind)).toEqual(kinds.map(([, name]) => name));
    expect(blocks.map((e) => e.kind)).toEqual([
      'flow',
      'hotParam',
      'circuitBreaker',
      'system',
      'authority',
      'pushback',
      'adaptiveThrottling',
      'retryBudget',
    ]);
    for (const e of blocks) {
      expect(e).toBeInstanceOf(BlockError);
      expect(Object.keys(e)).not.toContain('kind');
      expect(typeof Object.getOwnPropertyDescriptor(Object.getPrototypeOf(e), 'kind')?.get).toBe('function');
    }
  });

  it('documents every code under a heading of its own in docs/errors.md (docs/errors.md#err_flow_blocked)', () => {
    const ids = anchors(read('docs/errors.md'));
    expect(Object.keys(ErrorCodes).filter((code) => !ids.has(code.toLowerCase()))).toEqual([]);
  });

  it('makes block errors Errors with a name, a message and a short stack', () => {
    for (const error of blocks) {
      expect(error).toBeInstanceOf(Error);
      expect(error).toBeInstanceOf(BlockError);
      expect(error.stack).toBe(`${error.name}: ${error.message}`);
      expect(error.message).toContain('"r"');
      expect(error.name).toBe(error.constructor.name);
    }
    expect(blocks[1]!.message).toContain('value 42');
    expect(blocks[4]!.message).toContain('"evil"');
  });

  it('recognises block errors by brand, also from another copy of the package', () => {
    const foreign = Object.create({ [Symbol.for('floodgate.blockError')]: true });
    expect(isBlockError(foreign)).toBe(true);
    expect(isBlockError(new Error('x'))).toBe(false);
    expect(isBlockError(null)).toBe(false);
    for (const error of blocks) expect(isBlockError(error)).toBe(true);
  });

  it('serialises a block error with its data', () => {
    expect(JSON.parse(JSON.stringify(blocks[0]))).toEqual({
      name: 'FlowBlockError',
      code: 'ERR_FLOW_BLOCKED',
      kind: 'flow',
      message: 'Blocked by a qps flow rule on "r"',
      resource: 'r',
      origin: '',
      rule,
    });
  });

  it.each([
    [1500.5, 1500.5],
    [0, 0],
    [-0, 0],
    [-5, 0],
    [1e303, 1e303],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
    [Number.NEGATIVE_INFINITY, undefined],
    [undefined, undefined],
  ])('carries a retryAfterMs of %s as %s: a finite number >= 0, or not known (#24)', (given, kept) => {
    const error = new FlowBlockError({ resource: 'r', rule, retryAfterMs: given });
    expect(Object.is(error.retryAfterMs, kept)).toBe(true);
  });
});

describe('RuleValidationError', () => {
  it('names at most 20 problems in its message and counts the rest, while issues keeps them all (#12)', () => {
    const rules = Array.from({ length: 10_000 }, () => ({ resource: 'r', threshold: -1 }));
    let error: RuleValidationError | undefined;
    try {
      normalizeRuleSet({ flow: rules });
    } catch (e) {
      error = e as RuleValidationError;
    }
    expect(error!.issues).toHaveLength(10_000);
    expect(error!.message.length).toBeLessThan(2000);
    expect(error!.message).toMatch(
      /flow\[19\]\.threshold: must be a finite number >= 0, got -1; and 9980 more problems$/,
    );
  });

  it('keeps its message short when a value is huge, saying how much was cut (#12)', () => {
    let error: RuleValidationError | undefined;
    try {
      normalizeRuleSet({ flow: [{ resource: 'r', threshold: 1, behavior: 'x'.repeat(10_000_000) }] });
    } catch (e) {
      error = e as RuleValidationError;
    }
    expect(error!.message.length).toBeLessThan(300);
    expect(error!.message).toContain('(10000000 characters, 9999940 cut)');
  });

  it('keeps its message short when a field name is huge (#12)', () => {
    const key = 'k'.repeat(1_000_000);
    let error: RuleValidationError | undefined;
    try {
      normalizeRuleSet({ flow: [{ resource: 'r', threshold: 1, [key]: 1 }] });
    } catch (e) {
      error = e as RuleValidationError;
    }
    expect(error!.issues[0]!.path).toBe(`flow[0].${key}`);
    expect(error!.message.length).toBeLessThan(1000);
  });

  it('reports an array nested too deep to print as an array (#12)', () => {
    let deep: unknown[] = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => normalizeRuleSet({ flow: [deep] })).toThrow('flow[0]: must be an object, got an array');
  });
});
