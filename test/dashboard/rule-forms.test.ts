import { Floodgate, RuleValidationError, type RuleIssue } from '@floodgate/core';
import { normalizeRuleSet } from '@floodgate/core/rules';
import { ruleForms, type RuleField } from '../../packages/dashboard/src/rule-forms';

/** A valid rule of each kind, written here (not by the module), to try the forms' fields on. */
const VALID: Readonly<Record<string, Record<string, unknown>>> = {
  authority: { resource: 'r', origins: ['a'] },
  system: { maxQps: 1 },
  hotParams: { resource: 'r', key: { from: 'header', name: 'x' }, threshold: 1 },
  flow: { resource: 'r', threshold: 1 },
  circuitBreakers: { resource: 'r', strategy: 'errorCount', threshold: 1, retryTimeoutMs: 1000 },
  apiGroups: { name: 'g', patterns: ['GET /'] },
  pushback: { resource: 'r' },
  adaptiveThrottling: { resource: 'r' },
  retryBudgets: { resource: 'r' },
};
const KINDS = Object.keys(new Floodgate().getRules());
const FORMS = ruleForms(KINDS);

/** The problems of one rule of `kind` (none: `[]`). */
function issuesOf(kind: string, rule: object): readonly RuleIssue[] {
  try {
    normalizeRuleSet({ [kind]: [rule] });
    return [];
  } catch (error) {
    return (error as RuleValidationError).issues;
  }
}

function withValue(rule: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(rule)) as Record<string, unknown>;
  const parts = path.split('.');
  let at = copy;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
  at[parts[parts.length - 1]!] = value;
  return copy;
}

/** A valid rule of `kind` where `field` is shown: its `when` conditions met (the first value each lists). */
function ruleFor(kind: string, field: RuleField): Record<string, unknown> {
  let rule = VALID[kind]!;
  for (const [name, values] of Object.entries(field.when ?? {})) {
    const value = values[0]!;
    if (value !== '') rule = withValue(rule, name, value);
    else delete (rule = { ...rule })[name.split('.')[0]!];
  }
  return rule;
}

const fields = (): [string, RuleField][] =>
  Object.entries(FORMS).flatMap(([kind, form]) => form.fields.map((field): [string, RuleField] => [kind, field]));

describe('the rule forms', () => {
  it('has a form for every kind of the engine, and leaves out kinds it has none for', () => {
    expect(Object.keys(FORMS)).toEqual(KINDS);
    expect(Object.keys(ruleForms(['flow', 'aFutureKind']))).toEqual(['flow']);
    expect(ruleForms(['toString', '__proto__'])).toEqual({});
  });

  it('names only fields the engine takes, each at the path its problems come from', () => {
    for (const [kind, field] of fields()) {
      const issues = issuesOf(kind, withValue(ruleFor(kind, field), field.name, { not: 'a valid value' }));
      const unknown = issues.filter(
        (i) => i.message.startsWith('unknown field') && i.path === `${kind}[0].${field.name}`,
      );
      expect([kind, unknown]).toEqual([kind, []]);
      expect([kind, field.name, issues.some((issue) => issue.path.startsWith(`${kind}[0].${field.name}`))]).toEqual([
        kind,
        field.name,
        true,
      ]);
    }
  });

  it('offers in each select only values the engine takes for its field', () => {
    for (const [kind, field] of fields()) {
      for (const option of field.options ?? []) {
        const issues = issuesOf(kind, withValue(ruleFor(kind, field), field.name, option));
        const refused = issues.filter(
          (i) => i.path === `${kind}[0].${field.name}` && i.message.startsWith('must be one of'),
        );
        expect([kind, field.name, option, refused]).toEqual([kind, field.name, option, []]);
      }
    }
  });

  it('shows the defaults the engine resolves, as placeholders', () => {
    const field = (kind: string, name: string) => FORMS[kind]!.fields.find((f) => f.name === name);
    expect(field('flow', 'behavior')).toMatchObject({ default: 'reject', placeholder: 'reject' });
    expect(field('flow', 'maxQueueingTimeMs')).toMatchObject({ default: 500, placeholder: '500' });
    expect(field('flow', 'coldFactor')).toMatchObject({ default: 3 });
    expect(field('flow', 'maxLimit')).toMatchObject({ default: 1000 });
    expect(field('hotParams', 'durationMs')).toMatchObject({ default: 1000 });
    expect(field('hotParams', 'key.ipv6Subnet')).toMatchObject({ default: 56, placeholder: '56' });
    expect(field('hotParams', 'specificItems')).toMatchObject({ default: {}, placeholder: '{}' });
    expect(field('hotParams', 'capacity')!.placeholder).toContain('4000');
    expect(field('circuitBreakers', 'minRequestAmount')).toMatchObject({ default: 5 });
    expect(field('system', 'retryAfterMs')).toMatchObject({ default: 1000 });
    expect(field('authority', 'strategy')).toMatchObject({ default: 'allow' });
    expect(field('retryBudgets', 'retryRatio')).toMatchObject({ default: 0.2 });
    expect(field('pushback', 'maxPauseMs')).toMatchObject({ default: 60_000 });
    expect(field('adaptiveThrottling', 'windowMs')).toMatchObject({ default: 120_000 });
    // A field without a default shows none; a required one says so.
    expect(field('flow', 'threshold')).toEqual(expect.objectContaining({ required: true }));
    expect(field('flow', 'threshold')).not.toHaveProperty('default');
  });

  it('offers the rollout fields on every kind whose rules take them, and on no other', () => {
    for (const kind of KINDS) {
      const names = FORMS[kind]!.fields.map((f) => f.name);
      const takes = issuesOf(kind, { ...VALID[kind], mode: 'shadow' }).length === 0;
      expect([kind, names.includes('mode'), names.includes('enforcePercent')]).toEqual([kind, takes, takes]);
    }
    expect(FORMS.apiGroups!.fields.map((f) => f.name)).not.toContain('mode');
    const field = (name: string) => FORMS.flow!.fields.find((f) => f.name === name)!;
    expect(field('mode')).toMatchObject({ type: 'select', options: ['enforce', 'shadow'], placeholder: 'enforce' });
    // Hidden in shadow, where the engine refuses it.
    expect(field('enforcePercent').when).toEqual({ mode: ['', 'enforce'] });
    expect(issuesOf('flow', { ...VALID.flow, mode: 'shadow', enforcePercent: 50 })).not.toEqual([]);
    expect(issuesOf('flow', { ...VALID.flow, mode: 'enforce', enforcePercent: 50 })).toEqual([]);
  });

  it('gives each default as the engine resolves a rule that leaves the field out', () => {
    for (const [kind, field] of fields()) {
      if (field.default === undefined) continue;
      // The default, written out, is a value the engine takes for the field.
      const issues = issuesOf(kind, withValue(ruleFor(kind, field), field.name, field.default));
      expect([kind, field.name, issues.filter((i) => i.path.startsWith(`${kind}[0].${field.name}`))]).toEqual([
        kind,
        field.name,
        [],
      ]);
    }
  });

  it('shows each field only under conditions on fields of its own form, with values those fields take', () => {
    for (const [kind, form] of Object.entries(FORMS)) {
      const names = new Map(form.fields.map((f) => [f.name, f]));
      for (const field of form.fields) {
        for (const [name, values] of Object.entries(field.when ?? {})) {
          const other = names.get(name);
          expect([kind, field.name, name, other !== undefined]).toEqual([kind, field.name, name, true]);
          const allowed = [...(other!.options ?? []), ''];
          expect([kind, field.name, values.filter((v) => !allowed.includes(v))]).toEqual([kind, field.name, []]);
        }
      }
    }
  });
});
