import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RuleValidationError, type RuleIssue } from '@floodgate/core';
import type { RuleSetOptions } from '@floodgate/core/rules';
import { fromSentinelRules, toSentinelRules, type SentinelDialect, type SentinelRules } from '@floodgate/core/sentinel';

/** The problems `run` throws as a `RuleValidationError` (fails the test when it throws none or another error). */
export function issuesOf(run: () => unknown): RuleIssue[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return [...(error as RuleValidationError).issues];
  }
  throw new Error('expected a RuleValidationError');
}

/** What one Sentinel rule of `type` reads as: the one Floodgate rule of `kind`. */
export function readOne(
  type: keyof SentinelRules,
  rule: unknown,
  kind: keyof RuleSetOptions,
  dialect: SentinelDialect = 'java',
): unknown {
  const rules = fromSentinelRules({ [type]: [rule] } as SentinelRules, { dialect });
  expect(rules[kind]).toHaveLength(1);
  return rules[kind]![0];
}

/** The problems reading one Sentinel rule of `type` finds. */
export function readIssues(type: keyof SentinelRules, rule: unknown, dialect: SentinelDialect = 'java'): RuleIssue[] {
  return issuesOf(() => fromSentinelRules({ [type]: [rule] } as SentinelRules, { dialect }));
}

/** The problems writing `rules` in `dialect` finds. */
export function writeIssues(rules: RuleSetOptions, dialect: SentinelDialect = 'java'): RuleIssue[] {
  return issuesOf(() => toSentinelRules(rules, { dialect }));
}

/** Each fixture set, as Sentinel's file data source, its dashboard and sentinel-golang store their rules. */
export const FIXTURES = {
  'java-file': {
    dialect: 'java',
    files: {
      flow: 'FlowRule.json',
      degrade: 'DegradeRule.json',
      'param-flow': 'ParamFlowRule.json',
      system: 'SystemRule.json',
      authority: 'AuthorityRule.json',
    },
  },
  'java-dashboard': {
    dialect: 'java',
    files: {
      flow: 'flow-rules.json',
      degrade: 'degrade-rules.json',
      'param-flow': 'param-flow-rules.json',
      system: 'system-rules.json',
      authority: 'authority-rules.json',
    },
  },
  'java-gateway': {
    dialect: 'java',
    files: { 'gw-flow': 'GatewayFlowRule.json', 'gw-api-group': 'ApiDefinition.json' },
  },
  'java-gateway-dashboard': {
    dialect: 'java',
    files: { 'gw-flow': 'gw-flow-rules.json', 'gw-api-group': 'gw-api-group-rules.json' },
  },
  go: {
    dialect: 'go',
    files: {
      flow: 'flow.json',
      isolation: 'isolation.json',
      degrade: 'circuitbreaker.json',
      'param-flow': 'hotspot.json',
      system: 'system.json',
    },
  },
} as const satisfies Record<string, { dialect: SentinelDialect; files: Partial<Record<keyof SentinelRules, string>> }>;

/** The directory of a fixture set. */
export function fixtureDir(set: keyof typeof FIXTURES): string {
  return join(__dirname, 'fixtures', set);
}

/** A fixture set's documents, parsed, by Sentinel type. */
export function fixture(set: keyof typeof FIXTURES): SentinelRules {
  const documents: Record<string, unknown> = {};
  for (const [type, file] of Object.entries(FIXTURES[set].files)) {
    documents[type] = JSON.parse(readFileSync(join(fixtureDir(set), file), 'utf8'));
  }
  return documents as SentinelRules;
}
