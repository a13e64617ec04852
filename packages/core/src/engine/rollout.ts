import type { Entry } from '../kernel/entry';
import type { BlockError } from '../kernel/errors';
import { join, type RuleReader } from '../kernel/rule-reader';
import { ROLLOUT_DEFAULTS, type RuleMode, type RuleRollout } from '../kernel/rule-rollout';
export { ROLLOUT_DEFAULTS, type RolloutOptions, type RuleMode, type RuleRollout } from '../kernel/rule-rollout';
import { isHandoverWait, type Checker, type CheckResult, type EventSink, type RuleKind } from '../kernel/rule-kind';

/*
 * Rolling a rule out: any rule of any kind can watch before it refuses (`mode: 'shadow'`), or
 * refuse only a share of what it would refuse (`enforcePercent`), as Envoy's local rate limit
 * separates `filter_enabled` from `filter_enforced`. The two fields are read here, once, for
 * every kind (the kinds never see them), and enforced here, by wrapping the checkers of the rules
 * that have them: a kind knows nothing of rollout, and an enforced rule costs nothing more.
 */

const ROLLOUT_KEYS: readonly string[] = ['mode', 'enforcePercent'];
const MODES: readonly RuleMode[] = ['enforce', 'shadow'];

/**
 * Reads the rollout fields of one rule as written (at `path`) and hands the kind the rest.
 * `normalize` is the kind's own normalisation; the result is the kind's rule with the rollout
 * fields that differ from their defaults added.
 */
export function normalizeWithRollout<R extends object>(
  input: unknown,
  path: string,
  reader: RuleReader,
  normalize: (input: unknown, path: string, reader: RuleReader) => R | undefined,
): (R & RuleRollout) | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || !ROLLOUT_KEYS.some((k) => k in input))
    return normalize(input, path, reader);
  const { mode: _mode, enforcePercent: _percent, ...rest } = input as Record<string, unknown>;
  const obj = input as Record<string, unknown>;
  const mode = reader.oneOf(obj, 'mode', path, MODES, ROLLOUT_DEFAULTS.mode);
  const enforcePercent = reader.number(
    obj,
    'enforcePercent',
    path,
    { min: 0, max: 100 },
    ROLLOUT_DEFAULTS.enforcePercent,
  );
  if (mode === 'shadow' && obj.enforcePercent !== undefined)
    reader.fail(
      join(path, 'enforcePercent'),
      "cannot be combined with mode: 'shadow' (a shadow rule enforces nothing); use one or the other",
    );
  const rolledOut = mode === 'shadow' || enforcePercent < 100;
  if (rolledOut && rest.cluster !== undefined)
    reader.fail(
      join(path, mode === 'shadow' ? 'mode' : 'enforcePercent'),
      'cannot be combined with cluster: a shared limit is enforced alike by every instance',
    );
  const rule = normalize(rest, path, reader);
  if (rule === undefined || !rolledOut) return rule;
  return mode === 'shadow' ? { ...rule, mode } : { ...rule, enforcePercent };
}

/** Whether a rule in force has rollout fields (it only watches, or enforces a share). */
export function isRolledOut(rule: object): boolean {
  const r = rule as RuleRollout;
  return r.mode !== undefined || r.enforcePercent !== undefined;
}

/**
 * A rule's identity as state: the rule without its rollout fields, as JSON. A rule moved between
 * shadow and enforced, or to another percentage, keeps its state (tokens, windows, breaker) across
 * the reload, and its id in metrics.
 */
export function stateIdentity(rule: object): string {
  if (!isRolledOut(rule)) return JSON.stringify(rule);
  const { mode: _mode, enforcePercent: _percent, ...rest } = rule as Record<string, unknown>;
  return JSON.stringify(rest);
}

/** The `wouldBlock` event: a rule in shadow, or beyond its `enforcePercent`, let through a call it would have refused. */
export interface WouldBlockEvent {
  /** The resource of the call. */
  readonly resource: string;
  /** The caller's origin (`''` when the entry named none). */
  readonly origin: string;
  /** The kind of the rule, as block errors name it (`'flow'`, `'hotParam'`, `'circuitBreaker'`, ...). */
  readonly kind: string;
  /** The rule, named as `blocksByRule()` names it: `<kind>#<n>` (`'flow#0'`). */
  readonly ruleId: string;
  /** The code of the refusal the call did not get (`'ERR_FLOW_BLOCKED'`). */
  readonly code: string;
  /** Always `false`: the refusal was not enforced. */
  readonly enforced: false;
  /** The refusal the call did not get, with its rule (as in force) and `retryAfterMs`. */
  readonly error: BlockError;
  /** For a throttling rule, the queueing wait the call did not wait, in ms. */
  readonly waitMs?: number;
}

/** What wrapping a resource's checkers needs from the engine. */
export interface RolloutServices {
  readonly random: () => number;
  readonly events: EventSink;
  /** Names the rule of a refusal as `blocksByRule()` does (`ruleIdOf`). */
  ruleIdOf(error: BlockError): string;
}

/**
 * Wraps the checkers of the rules that have rollout fields (the rest are returned as they are,
 * and cost nothing more). Kinds compile one checker per rule, in rule order, except system
 * protection (one checker for every rule): there, the rule is found from the refusal.
 */
export function withRollout(
  kind: RuleKind,
  resource: string,
  rules: readonly object[],
  checkers: readonly Checker[],
  services: RolloutServices,
): readonly Checker[] {
  if (!rules.some(isRolledOut)) return checkers;
  const policies = new Map<unknown, RolloutPolicy>();
  for (const rule of rules) policies.set(rule, new RolloutPolicy(kind.key, resource, rule, services.random));
  const perRule = checkers.length === rules.length;
  return checkers.map((checker, i) => {
    const own = perRule ? policies.get(rules[i]!)! : undefined;
    if (own !== undefined && !own.rolledOut) return checker;
    return new RolloutChecker(checker, own, (rule) => policies.get(rule), services);
  });
}

/** How one rule enforces: always, never (shadow), or a share, per call or per value. */
class RolloutPolicy {
  /** Whether the rule has rollout fields. */
  readonly rolledOut: boolean;
  /** Whether it never enforces (`mode: 'shadow'`). */
  readonly shadow: boolean;
  /** The share it enforces, in percent. */
  private readonly percent: number;
  /** Salts the hash of a value: the rule's identity, so every instance refuses the same values. */
  private readonly salt: number;

  constructor(
    kindKey: string,
    resource: string,
    rule: object,
    private readonly random: () => number,
  ) {
    const r = rule as RuleRollout;
    this.rolledOut = isRolledOut(rule);
    this.shadow = r.mode === 'shadow';
    this.percent = this.shadow ? 0 : (r.enforcePercent ?? ROLLOUT_DEFAULTS.enforcePercent);
    this.salt = fnv1a(`${kindKey}\u0000${resource}\u0000${stateIdentity(rule)}`, FNV_OFFSET);
  }

  /**
   * Whether `error` is enforced. A refusal about a value (a hotspot rule's `enforcementKey`) is
   * decided by a hash of the value and the rule, in 10 000 steps: one value is always refused or
   * always let through, and raising the percentage only adds values. Any other is decided per
   * call, by the engine's `random`.
   */
  enforces(error: BlockError): boolean {
    const percent = this.percent;
    if (percent >= 100) return true;
    if (percent <= 0) return false;
    const key = error.enforcementKey;
    if (key === undefined) return this.random() * 100 < percent;
    return (fnv1a(keyText(key), this.salt) % 10_000) / 100 < percent;
  }
}

/** A checker whose rule is rolled out: what it would refuse and does not enforce passes, reported. */
class RolloutChecker implements Checker {
  readonly mayWait?: boolean;
  readonly onExit?: (entry: Entry, now: number, rtMs: number) => void;

  constructor(
    /** The kind's checker. */
    readonly inner: Checker,
    /** Its rule's policy, when the checker has one rule; else found from each refusal. */
    private readonly own: RolloutPolicy | undefined,
    private readonly policyOf: (rule: unknown) => RolloutPolicy | undefined,
    private readonly services: RolloutServices,
  ) {
    // A shadow rule never makes a call wait: `enter()` takes the synchronous path for it.
    if (inner.mayWait !== undefined) this.mayWait = own?.shadow === true ? false : inner.mayWait;
    // Every call that passed is told to a breaker, shadow or not: an open shadow breaker records.
    if (inner.onExit !== undefined) this.onExit = inner.onExit.bind(inner);
  }

  check(entry: Entry, now: number, canWait: boolean): CheckResult {
    const own = this.own;
    const mark = entry.attachments?.length ?? 0;
    // A shadow rule asks as a call that cannot wait: a throttle's wait is then its refusal.
    const result = this.inner.check(entry, now, canWait && own?.shadow !== true);
    if (result === undefined) return undefined;
    if (typeof result === 'number') return this.wait(entry, now, mark, result);
    if (isHandoverWait(result)) return this.wait(entry, now, mark, undefined);
    const policy = own ?? this.policyOf(result.rule);
    if (policy === undefined || policy.enforces(result)) return result;
    release(entry, mark, now);
    this.report(entry, result, undefined);
    return undefined;
  }

  /**
   * A wait, under a share: the refusal the call would get if it could not wait decides it. If
   * not enforced, the slot reserved is given back and the call passes at once; if enforced, the
   * wait is reserved again, as it was (the rule's state is back where it was).
   */
  private wait(entry: Entry, now: number, mark: number, waitMs: number | undefined): CheckResult {
    release(entry, mark, now);
    const refusal = this.inner.check(entry, now, false);
    if (refusal === undefined || typeof refusal === 'number' || isHandoverWait(refusal)) return refusal;
    const policy = this.own ?? this.policyOf(refusal.rule);
    if (policy === undefined || policy.enforces(refusal)) return this.inner.check(entry, now, true);
    this.report(entry, refusal, waitMs);
    return undefined;
  }

  private report(entry: Entry, error: BlockError, waitMs: number | undefined): void {
    entry.noteWouldBlock(error);
    const events = this.services.events;
    if (!events.has('wouldBlock')) return;
    const event: WouldBlockEvent = {
      resource: entry.resource,
      origin: entry.origin,
      kind: error.kind,
      ruleId: this.services.ruleIdOf(error),
      code: error.code,
      enforced: false,
      error,
      ...(waitMs !== undefined ? { waitMs } : {}),
    };
    events.emit('wouldBlock', event);
  }
}

/** Gives back what a check took beyond the first `mark` attachments of `entry` (a refusal not enforced takes nothing). */
function release(entry: Entry, mark: number, now: number): void {
  const attachments = entry.attachments;
  if (attachments === undefined || attachments.length <= mark) return;
  const taken = attachments.splice(mark);
  for (let i = taken.length - 1; i >= 0; i--) taken[i]!.released(entry, now);
}

/** A checker as its kind compiled it, under any rollout wrapper (for engine reads such as breaker states). */
export function unwrapRollout(checker: Checker): Checker {
  return checker instanceof RolloutChecker ? checker.inner : checker;
}

const FNV_OFFSET = 0x811c9dc5;

/** 32-bit FNV-1a of `text`, from `seed`. */
function fnv1a(text: string, seed: number): number {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A value as text for hashing, its type kept (`1` and `'1'` differ). */
function keyText(key: unknown): string {
  if (typeof key === 'string') return `s:${key}`;
  if (typeof key === 'object' && key !== null) {
    try {
      return `o:${JSON.stringify(key)}`;
    } catch {
      return 'o:';
    }
  }
  return `${typeof key}:${String(key)}`;
}
