import type { CoreCaseResult } from '../../../bench/core/core-suite';
import type { HttpFrameworkResult } from '../../../bench/http/http-suite';
import { evaluateTargets, type TargetCheck } from '../../../bench/report/evaluate-targets';

function coreCase(id: string, medianNs: number): CoreCaseResult {
  return { id, owner: 'floodgate', label: id, async: true, samples: [medianNs], medianNs };
}

function verdictOf(checks: readonly TargetCheck[], target: string): string | undefined {
  return checks.find((c) => c.target === target)?.verdict;
}

describe("issue #30's targets", () => {
  it('hold run() to each peer of the same run, pending when a peer did not run', () => {
    const checks = evaluateTargets({
      core: [coreCase('fg.async.qps', 130), coreCase('cockatiel.pass', 127), coreCase('rlf.pass', 146)],
    });
    expect(verdictOf(checks, 'await run() with one QPS rule faster than cockatiel.pass (#30)')).toBe('missed');
    expect(verdictOf(checks, 'await run() with one QPS rule faster than rlf.pass (#30)')).toBe('met');
    const alone = evaluateTargets({ core: [coreCase('fg.async.qps', 130)] });
    expect(verdictOf(alone, 'await run() with one QPS rule faster than rlf.pass (#30)')).toBe('pending');
  });

  it('hold passing and blocked HTTP CPU over the no-op middleware to +2 µs, per framework', () => {
    const variant = (name: string, over: number[]) => ({
      variant: name,
      rounds: [],
      rpsRatios: [],
      cpuRatios: [],
      cpuOverNoopUs: over,
    });
    const http = [
      {
        framework: 'fastify',
        variants: [variant('floodgate', [1.5, 2.5, 1.9]), variant('floodgate-blocked', [2.1, 2.4])],
      },
    ] as unknown as HttpFrameworkResult[];
    const checks = evaluateTargets({ http });
    expect(
      verdictOf(checks, 'fastify: passing, server CPU per response <= +2 µs over the no-op middleware (#30)'),
    ).toBe('met');
    expect(
      verdictOf(checks, 'fastify: all blocked, server CPU per response <= +2 µs over the no-op middleware (#30)'),
    ).toBe('missed');
  });
});
