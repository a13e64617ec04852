import * as core from '@floodgate/core';
import type { RuleSetOptions } from '@floodgate/core/rules';
import { INSTRUCTION_CASES, ON_COPIES, instructionCases } from '../../../bench/instructions/instruction-cases';
import type { CoreModule } from '../../../bench/core/core-copy';

describe('the instruction count cases', () => {
  it('are each the call their label names', async () => {
    await expect(instructionCases(core).verify()).resolves.toBeUndefined();
  });

  it('are the ones the runner lists, and each runs', async () => {
    const { cases } = instructionCases(core);
    expect(Object.keys(cases)).toEqual(Object.keys(INSTRUCTION_CASES));
    for (const [id, c] of Object.entries(cases)) {
      // A copy of the built core, which only the counting processes load.
      if (ON_COPIES.has(id)) continue;
      for (let i = 0; i < 3; i++) await c.call();
    }
  });

  it('name the case whose call is not what its label says', async () => {
    // An engine that never loads the rule refusing r.blocked: its "blocked" count would be a pass's.
    class WithoutBlockedRule extends core.Floodgate {
      override loadRules(rules: RuleSetOptions): ReturnType<core.Floodgate['loadRules']> {
        return super.loadRules({ ...rules, flow: rules.flow?.filter((rule) => rule.resource !== 'r.blocked') });
      }
    }
    const lenient: CoreModule = { ...core, Floodgate: WithoutBlockedRule };
    await expect(instructionCases(lenient).verify()).rejects.toThrow(
      'fg.block.tryEntry: r.blocked should be refused with ERR_FLOW_BLOCKED',
    );
  });
});
