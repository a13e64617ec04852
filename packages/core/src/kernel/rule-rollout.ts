/*
 * The rollout fields every rule takes, whatever its kind (`mode`, `enforcePercent`): their types
 * and defaults. Each kind's rule types extend these; the engine reads, validates and enforces
 * them for every kind alike (`engine/rollout.ts`), so no kind reads them itself.
 */

/** How a rule acts on what it would refuse: `'enforce'` refuses it, `'shadow'` only reports it (`wouldBlock`). */
export type RuleMode = 'enforce' | 'shadow';

/** The rollout fields every rule takes, whatever its kind, as users write them. */
export interface RolloutOptions {
  /**
   * `'shadow'`: the rule is checked and counted as if enforced, never refuses, and reports each
   * call it would have refused as a `wouldBlock` event. Cannot be combined with `enforcePercent`.
   * @defaultValue 'enforce'
   */
  readonly mode?: RuleMode;
  /**
   * The share of what the rule would refuse that it refuses, in percent (0–100); the rest pass
   * and are reported as `wouldBlock`. Decided per call, or per value for hotspot rules (the same
   * value is always refused or always let through, at a given percentage). Not with `cluster`.
   * @defaultValue 100
   */
  readonly enforcePercent?: number;
}

/**
 * The rollout fields of a rule in force. Each is present only where it differs from its default
 * (`mode: 'shadow'`; `enforcePercent` below 100), so an enforced rule reads, prints and
 * round-trips through files and stores exactly as it did before rollout existed.
 */
export interface RuleRollout {
  /** Present (`'shadow'`) on a rule that only watches. */
  readonly mode?: 'shadow';
  /** Present on an enforced rule that refuses only this share (0–100, below 100) of what it would refuse. */
  readonly enforcePercent?: number;
}

/** Defaults of the rollout fields. */
export const ROLLOUT_DEFAULTS = Object.freeze({
  /** Every rule enforces unless told otherwise. */
  mode: 'enforce',
  /** An enforced rule refuses everything it would refuse. */
  enforcePercent: 100,
} as const);
