/** One problem found while validating rules or options. */
export interface RuleIssue {
  /** Where the problem is, e.g. `flow[2].threshold`. */
  readonly path: string;
  /** What is wrong, naming the allowed range and the value given. */
  readonly message: string;
}

/**
 * A rule set, rule or option failed validation. Lists every problem; whatever was in force
 * before stays in force. Code `ERR_INVALID_RULE`.
 */
export class RuleValidationError extends Error {
  readonly code = 'ERR_INVALID_RULE' as const;
  override readonly name = 'RuleValidationError';
  /** Every problem found, by path. */
  readonly issues: readonly RuleIssue[];

  constructor(issues: readonly RuleIssue[], context = 'Invalid rules') {
    super(`${context}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.issues = issues;
  }
}
