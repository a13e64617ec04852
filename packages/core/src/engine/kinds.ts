import { authorityKind } from '../authority/authority';
import { circuitBreakerKind } from '../circuit-breaker/circuit-breaker-kind';
import { flowKind } from '../flow/flow-kind';
import { hotParamKind } from '../hot-param/hot-param-kind';
import { KERNEL_ERROR_CODES } from '../kernel/errors';
import type { RuleKind } from '../kernel/rule-kind';
import { systemKind } from '../system/system-kind';

/**
 * Every rule kind, in the order their checks run (authority → system → hotspot → flow →
 * circuit breaker, as Sentinel's slot chain). Adding a kind is a folder of its own and one line
 * here: rule sets, loading, validation, compilation and `ErrorCodes` follow from this list.
 */
export const RULE_KINDS = [authorityKind, systemKind, hotParamKind, flowKind, circuitBreakerKind] as const;

type Kind = (typeof RULE_KINDS)[number];
type RuleOf<T> = T extends RuleKind<string, infer R, unknown> ? R : never;
type OptionsOf<T> = T extends RuleKind<string, object, infer O> ? O : never;

/** A kind of rule: a key of {@link RuleSet} (`'flow'`, `'circuitBreakers'`, ...). */
export type RuleKindKey = Kind['key'];

/** Rules as users write them, by kind. Each kind given replaces that kind on load. */
export type RuleSetOptions = { readonly [T in Kind as T['key']]?: readonly OptionsOf<T>[] };

/** Rules in force, by kind: validated, defaults resolved. */
export type RuleSet = { readonly [T in Kind as T['key']]: readonly RuleOf<T>[] };

/** A rule of any kind, in force. */
export type AnyRule = RuleSet[RuleKindKey][number];

/** The kinds by key. */
export const KINDS_BY_KEY: ReadonlyMap<string, RuleKind> = new Map(
  RULE_KINDS.map((kind) => [kind.key, kind as unknown as RuleKind]),
);

/**
 * Every error code Floodgate throws, with what it means: the kernel's and each rule kind's.
 * Codes are stable: a retired code is never reused.
 */
export const ErrorCodes: Readonly<Record<string, string>> = Object.freeze(
  Object.assign({}, KERNEL_ERROR_CODES, ...RULE_KINDS.map((kind) => kind.codes)) as Record<string, string>,
);

/** One of Floodgate's stable error codes (a key of {@link ErrorCodes}). */
export type ErrorCode = string;
