import type { Entry } from '../kernel/entry';
import type { Checker, CompileContext, CompiledRules, RuleKind } from '../kernel/rule-kind';
import type { StatisticNode } from '../kernel/statistic-node';
import type { SystemProbe, SystemSignals } from '../kernel/system-probe';
import { normalizeSystemRule, SystemBlockError, type SystemLimit, type SystemRule, type SystemRuleOptions } from './system-rule';

/**
 * The least response time the BBR check assumes when no inbound call completed in the last
 * second: Sentinel's `csp.sentinel.statistic.max.rt` (5000 ms), the value its empty buckets hold.
 */
export const STATISTIC_MAX_RT_MS = 5000;

/** One limit in force: the least threshold any rule sets for it, and that rule. */
interface Threshold {
  readonly limit: SystemLimit;
  readonly value: number;
  readonly rule: SystemRule;
}

/** A limit read from the probe, with the signal it compares. */
interface SignalThreshold extends Threshold {
  readonly signal: keyof SystemSignals;
}

/** The probe's signal behind each memory cap and load limit. */
const MEMORY: readonly (readonly [SystemLimit, keyof SystemSignals])[] = [
  ['maxHeapUsedBytes', 'heapUsedBytes'],
  ['maxRssBytes', 'rssBytes'],
];
const LOAD: readonly (readonly [SystemLimit, keyof SystemSignals])[] = [
  ['maxEventLoopDelayMs', 'eventLoopDelayMs'],
  ['maxEventLoopUtilization', 'eventLoopUtilization'],
  ['maxCpuUsage', 'cpuUsage'],
];

/**
 * Whether the BBR check fails: more inbound calls are in flight than the process has shown it
 * can complete, `concurrency > 1 && concurrency > maxSuccessQps × minRt / 1000` (Little's law
 * on the best throughput of the last minute and the least response time of the last second).
 * Sentinel's `SystemRuleManager.checkBbr`; sentinel-golang's `system.checkBbr` is the same.
 * Without a completion in the last second, the least response time is taken as
 * {@link STATISTIC_MAX_RT_MS}, as Sentinel's empty buckets hold it.
 */
export function bbrFails(inbound: StatisticNode, now: number): boolean {
  const concurrency = inbound.concurrency;
  if (concurrency <= 1) return false;
  const minRt = inbound.minRtMs(now);
  return concurrency > (inbound.maxSuccessQps(now) * (Number.isFinite(minRt) ? minRt : STATISTIC_MAX_RT_MS)) / 1000;
}

/**
 * Checks every inbound call against the system rules in force, merged as Sentinel's
 * `SystemRuleManager.loadSystemConf` merges them: each limit at the least threshold any rule
 * gives it. In Sentinel's `checkSystem` order: the caps refuse as soon as they are passed
 * (inbound QPS + this call over `maxQps`, inbound calls in flight with this one over
 * `maxConcurrency` (calls, whatever their `acquireCount`), inbound average response time over `maxAvgRtMs`, heap or RSS over theirs);
 * a load limit (event-loop delay, event-loop utilisation, CPU) refuses only while its signal is
 * over it and the BBR check ({@link bbrFails}) fails, so a loaded process still admits the calls
 * it is completing fast enough (Sentinel checks load with BBR; sentinel-golang also CPU).
 * Calls that pass take nothing, so there is nothing to give back.
 */
export class SystemChecker implements Checker {
  private readonly maxQps: Threshold | undefined;
  private readonly maxConcurrency: Threshold | undefined;
  private readonly maxAvgRtMs: Threshold | undefined;
  private readonly memory: readonly SignalThreshold[];
  private readonly load: readonly SignalThreshold[];
  /** Whether any limit reads the probe (then the probe samples while the rules are in force). */
  readonly readsSignals: boolean;

  constructor(
    rules: readonly SystemRule[],
    private readonly inbound: StatisticNode,
    private readonly probe: SystemProbe,
  ) {
    this.maxQps = tightest(rules, 'maxQps');
    this.maxConcurrency = tightest(rules, 'maxConcurrency');
    this.maxAvgRtMs = tightest(rules, 'maxAvgRtMs');
    const signalLimits = (pairs: typeof MEMORY): SignalThreshold[] =>
      pairs.flatMap(([limit, signal]) => {
        const threshold = tightest(rules, limit);
        return threshold === undefined ? [] : [{ ...threshold, signal }];
      });
    this.memory = signalLimits(MEMORY);
    this.load = signalLimits(LOAD);
    this.readsSignals = this.memory.length + this.load.length > 0;
  }

  check(entry: Entry, now: number): SystemBlockError | undefined {
    const node = this.inbound;
    const count = entry.acquireCount;
    let cap = this.maxQps;
    if (cap !== undefined) {
      const qps = node.passQps(now);
      if (qps + count > cap.value) return refuse(entry, cap, qps, node.msUntilPassesDrop(now));
    }
    cap = this.maxConcurrency;
    if (cap !== undefined && node.concurrency >= cap.value) return refuse(entry, cap, node.concurrency, undefined);
    cap = this.maxAvgRtMs;
    if (cap !== undefined) {
      const rt = node.avgRtMs(now);
      if (rt > cap.value) return refuse(entry, cap, rt, undefined);
    }
    if (!this.readsSignals) return undefined;
    const signals = this.probe.read();
    for (const limit of this.memory) if (signals[limit.signal] > limit.value) return refuse(entry, limit, signals[limit.signal], undefined);
    let bbr: boolean | undefined;
    for (const limit of this.load) {
      if (signals[limit.signal] > limit.value && (bbr ??= bbrFails(node, now))) return refuse(entry, limit, signals[limit.signal], undefined);
    }
    return undefined;
  }
}

/** The least threshold of `limit` over `rules`, with the rule that sets it; `undefined` when no rule sets it. */
function tightest(rules: readonly SystemRule[], limit: SystemLimit): Threshold | undefined {
  let best: Threshold | undefined;
  for (const rule of rules) {
    const value = rule[limit];
    if (value !== undefined && (best === undefined || value < best.value)) best = { limit, value, rule };
  }
  return best;
}

function refuse(entry: Entry, threshold: Threshold, value: number, retryAfterMs: number | undefined): SystemBlockError {
  return new SystemBlockError({
    resource: entry.resource,
    rule: threshold.rule,
    limit: threshold.limit,
    value,
    retryAfterMs: retryAfterMs ?? threshold.rule.retryAfterMs,
    origin: entry.origin,
  });
}

/** Whether a rule sets a limit read from the probe (memory or load). */
function readsSignals(rule: SystemRule): boolean {
  return [...MEMORY, ...LOAD].some(([limit]) => rule[limit] !== undefined);
}

/** A system rule's claim on the probe: the probe samples while the rule is in force. */
class ProbeDemand {
  private readonly stop: () => void;

  constructor(probe: SystemProbe) {
    this.stop = probe.start();
  }

  /** The rule left: withdraws its claim (the probe stops sampling when none is left). */
  retire(): void {
    this.stop();
  }
}

/**
 * Compiles every system rule into one checker. Each rule that reads signals keeps a claim on the
 * probe while it is in force (an unchanged rule keeps its claim across reloads), so the default
 * probe's timer runs only while such a rule is loaded.
 */
function compileSystemRules(rules: readonly SystemRule[], ctx: CompileContext): CompiledRules {
  const checker = new SystemChecker(rules, ctx.inbound, ctx.probe);
  for (const rule of rules) if (readsSignals(rule)) ctx.reuse(rule, () => new ProbeDemand(ctx.probe));
  return { checkers: [checker] };
}

/**
 * System protection (Sentinel's SystemSlot): limits on the whole process, checked on every
 * inbound call whatever its resource, after authority and before hotspot rules.
 */
export const systemKind: RuleKind<'system', SystemRule, SystemRuleOptions> = {
  key: 'system',
  scope: 'inbound',
  codes: { ERR_SYSTEM_BLOCKED: 'System protection refused an inbound call: the process is over a system rule limit.' },
  normalize: normalizeSystemRule,
  resourceOf: () => '',
  compile: compileSystemRules,
};
