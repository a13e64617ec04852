import type { RuleReader } from './rule-reader';

/**
 * How much a call matters when the service is short of capacity, after Google SRE's criticality
 * (`CRITICAL`, `SHEDDABLE`, ...): `'critical'` calls are refused last, `'sheddable'` ones first,
 * `'default'` (every call that names none) in between. Three words rather than an integer range:
 * they read in logs and rules, and Google and Netflix found a handful of classes enough.
 */
export type Priority = 'critical' | 'default' | 'sheddable';

/** Every priority, most important first. */
export const PRIORITIES: readonly Priority[] = Object.freeze(['critical', 'default', 'sheddable']);

const PRIORITY_SET: ReadonlySet<unknown> = new Set<unknown>(PRIORITIES);

/** Whether `value` is a {@link Priority}. */
export function isPriority(value: unknown): value is Priority {
  return PRIORITY_SET.has(value);
}

/** A priority's index in {@link PRIORITIES} (0 critical, 1 default, 2 sheddable): for arrays by priority. */
export function priorityIndex(priority: Priority): 0 | 1 | 2 {
  return priority === 'default' ? 1 : priority === 'critical' ? 0 : 2;
}

/**
 * By how much a load limit is scaled for a call of each priority (system rules, `adaptive`
 * flow rules), as written: a sheddable call is refused from `sheddable × limit`, a default call
 * from the limit itself, a critical one from `critical × limit`.
 */
export interface PriorityFactorsOptions {
  /** Within (0, 1]. @defaultValue 0.8 */
  readonly sheddable?: number;
  /** Within [1, 10]. @defaultValue 1.1 */
  readonly critical?: number;
}

/** A rule's `priorityFactors` in force: both factors resolved. */
export interface PriorityFactors {
  /** Sheddable calls are refused from this share of a limit. */
  readonly sheddable: number;
  /** Critical calls are refused from this multiple of a limit. */
  readonly critical: number;
}

/** Defaults of {@link PriorityFactorsOptions}. */
export const PRIORITY_FACTORS_DEFAULTS: PriorityFactors = Object.freeze({
  /** Sheddable calls refused at 80 % of a limit: the first 20 % of headroom is kept for the rest. */
  sheddable: 0.8,
  /** Critical calls let 10 % past a limit: refused last, never unbounded. */
  critical: 1.1,
});

/**
 * Reads a rule's `priorityFactors` field (absent: the defaults). Problems go to `reader`, each
 * naming its path.
 */
export function readPriorityFactors(obj: Record<string, unknown>, path: string, reader: RuleReader): PriorityFactors {
  const input = obj.priorityFactors;
  if (input === undefined) return PRIORITY_FACTORS_DEFAULTS;
  const at = `${path}.priorityFactors`;
  const factors = reader.object(input, at);
  if (factors === undefined) return PRIORITY_FACTORS_DEFAULTS;
  reader.knownKeys(factors, ['sheddable', 'critical'], at);
  const D = PRIORITY_FACTORS_DEFAULTS;
  return {
    sheddable: reader.number(factors, 'sheddable', at, { above: 0, max: 1 }, D.sheddable),
    critical: reader.number(factors, 'critical', at, { min: 1, max: 10 }, D.critical),
  };
}

/** The three factors by priority index (critical, default, sheddable), for the hot path. */
export function factorsByIndex(factors: PriorityFactors): readonly [number, number, number] {
  return [factors.critical, 1, factors.sheddable];
}
