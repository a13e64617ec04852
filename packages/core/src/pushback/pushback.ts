import type { RolloutOptions, RuleRollout } from '../kernel/rule-rollout';
import type { Entry } from '../kernel/entry';
import { BlockError, type Refusal } from '../kernel/errors';
import { MAX_DURATION_MS, type RuleReader } from '../kernel/rule-reader';
import type { Checker, CheckResult, CompileContext, RuleKind } from '../kernel/rule-kind';

/**
 * A pushback rule as written by users (JSON-serialisable): when a call of the resource reports
 * that its dependency refused it and asked for a pause (`entry.tracePushback(ms)`, which the
 * outbound HTTP guard calls for a 429 or 503 answer with `Retry-After`), every later call of the
 * resource is refused locally until the pause is over, instead of being sent.
 *
 * @example
 * fg.loadRules({ pushback: [{ resource: 'api.example.com', maxPauseMs: 30_000 }] });
 */
export interface PushbackRuleOptions extends RolloutOptions {
  /** The guarded resource. */
  readonly resource: string;
  /**
   * The longest pause one answer can impose, in ms (> 0, at most 2^31 − 1): a dependency asking
   * for more (a `Retry-After` of an hour, by mistake or malice) pauses the resource this long.
   * @defaultValue 60000
   */
  readonly maxPauseMs?: number;
}

/** A pushback rule in force: validated, with every default resolved. */
export interface PushbackRule extends RuleRollout {
  /** The guarded resource. */
  readonly resource: string;
  /** The longest pause one answer can impose, in ms. */
  readonly maxPauseMs: number;
}

/** Defaults of a pushback rule's optional fields. */
export const PUSHBACK_RULE_DEFAULTS = Object.freeze({
  /** At most a minute of pause per answer (Envoy and gRPC clients cap a server's pushback likewise). */
  maxPauseMs: 60_000,
} as const);

/** The pushback kind's name: its block errors' `kind`, its rule ids' prefix (`pushback#0`). */
export const PUSHBACK_KIND_NAME = 'pushback' as const;

/**
 * The resource's dependency asked for a pause (a 429 or 503 answer with `Retry-After`) that is
 * not over: the call was refused locally, not sent. Code `ERR_UPSTREAM_PAUSED`; 503 over HTTP.
 * `retryAfterMs` is the time left of the pause.
 */
export class UpstreamPausedError extends BlockError<PushbackRule> {
  /** Always `'ERR_UPSTREAM_PAUSED'`. */
  get code(): 'ERR_UPSTREAM_PAUSED' {
    return 'ERR_UPSTREAM_PAUSED';
  }
  /** Always the kind's name (`PUSHBACK_KIND_NAME`), the same word as the kind's `name`. */
  get kind() {
    return PUSHBACK_KIND_NAME;
  }
  /** Always `'capacity'`: the dependency asked not to be called now (503 over HTTP). */
  get refusal(): Refusal {
    return 'capacity';
  }
  /** `'A dependency asked for a pause: calls to it resume when the pause is over.'` */
  get detail(): string {
    return 'A dependency asked for a pause: calls to it resume when the pause is over.';
  }
  /** Always `'UpstreamPausedError'`. */
  get name(): string {
    return 'UpstreamPausedError';
  }
  /** E.g. `Calls to "api.example.com" are paused for 1500 ms more, as its dependency asked`. */
  get message(): string {
    return `Calls to "${this.resource}" are paused for ${Math.ceil(this.retryAfterMs ?? 0)} ms more, as its dependency asked`;
  }
}

/** When the pause of one rule ends: kept across reloads of an unchanged rule. */
class Pause {
  until = Number.NEGATIVE_INFINITY;
}

/**
 * Checks one pushback rule: refuses every call while a pause is on, with the time left as
 * `retryAfterMs`; learns pauses from completed calls (the longest pause asked for wins, each
 * capped at `maxPauseMs` from the moment it was reported). Takes nothing from calls that pass.
 */
export class PushbackChecker implements Checker {
  constructor(
    readonly rule: PushbackRule,
    private readonly pause: Pause,
  ) {}

  check(entry: Entry, now: number): CheckResult {
    const until = this.pause.until;
    if (now >= until) return undefined;
    return new UpstreamPausedError({
      resource: entry.resource,
      rule: this.rule,
      retryAfterMs: until - now,
      origin: entry.origin,
    });
  }

  onExit(entry: Entry, now: number): void {
    const asked = entry.pushbackMs;
    if (asked === undefined || asked <= 0) return;
    const until = now + Math.min(asked, this.rule.maxPauseMs);
    if (until > this.pause.until) this.pause.until = until;
  }
}

const FIELDS = ['resource', 'maxPauseMs'] as const;

/** Validates one pushback rule: `maxPauseMs` > 0 and at most 2^31 − 1; no unknown field. */
export function normalizePushbackRule(input: unknown, path: string, reader: RuleReader): PushbackRule | undefined {
  const obj = reader.object(input, path);
  if (obj === undefined) return undefined;
  reader.knownKeys(obj, FIELDS, path);
  return {
    resource: reader.resource(obj, 'resource', path),
    maxPauseMs: reader.number(
      obj,
      'maxPauseMs',
      path,
      { above: 0, max: MAX_DURATION_MS },
      PUSHBACK_RULE_DEFAULTS.maxPauseMs,
    ),
  };
}

/** One pause per rule; a reload of an unchanged rule keeps a pause that is on. */
function compilePushbackRules(rules: readonly PushbackRule[], ctx: CompileContext) {
  return {
    checkers: rules.map(
      (rule) =>
        new PushbackChecker(
          rule,
          ctx.reuse(rule, () => new Pause()),
        ),
    ),
  };
}

/** Upstream pushback: a dependency's `Retry-After` pauses the resource, locally, until then. */
export const pushbackKind: RuleKind<'pushback', PushbackRule, PushbackRuleOptions> = {
  key: 'pushback',
  name: PUSHBACK_KIND_NAME,
  scope: 'resource',
  codes: { ERR_UPSTREAM_PAUSED: 'The dependency asked for a pause (Retry-After) that is not over.' },
  normalize: normalizePushbackRule,
  resourceOf: (rule) => rule.resource,
  compile: compilePushbackRules,
};
