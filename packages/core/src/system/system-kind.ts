import type { Entry } from '../kernel/entry';
import { factorsByIndex, PRIORITY_FACTORS_DEFAULTS, priorityIndex } from '../kernel/priority';
import type { Checker, CompileContext, CompiledRules, EngineResources, RuleKind } from '../kernel/rule-kind';
import { WindowSums, type StatisticNode } from '../kernel/statistic-node';
import type { SystemProbe } from './system-probe';
import {
  SYSTEM_KIND_NAME,
  SYSTEM_LIMITS,
  SystemBlockError,
  normalizeSystemRule,
  type SystemLimit,
  type SystemRule,
  type SystemRuleOptions,
} from './system-rule';

/**
 * The least response time the BBR check assumes when no inbound call completed in the last
 * second: Sentinel's `csp.sentinel.statistic.max.rt` (5000 ms), the value its empty buckets hold.
 */
export const STATISTIC_MAX_RT_MS = 5000;

/** One limit in force: the least threshold any rule sets for it, and that rule. */
interface Threshold {
  readonly value: number;
  readonly rule: SystemRule;
}

/** Each limit's threshold for calls of one priority. */
type Levels = Readonly<Record<SystemLimit, number>>;

/** The sums of a checker no limit of which reads the window: never read into, all zero. */
const NO_SUMS = new WindowSums();

/** The limits read from the probe: memory caps and load limits. */
const SIGNAL_LIMITS: readonly SystemLimit[] = [
  'maxHeapUsedBytes',
  'maxRssBytes',
  'maxEventLoopDelayMs',
  'maxEventLoopUtilization',
  'maxCpuUsage',
];

/**
 * Whether the BBR check fails: more inbound calls are in flight than the process has shown it
 * can complete, `concurrency > 1 && concurrency > maxSuccessQps × minRt / 1000` (Little's law
 * on the best throughput of the last minute and the least response time of the last second).
 * Sentinel's `SystemRuleManager.checkBbr`; sentinel-golang's `system.checkBbr` is the same,
 * except that both read the best completion rate of the last second only (their
 * `maxSuccessQps` is over the second-level window): after a quiet second they admit one call in
 * flight at a time; the minute's best second lets a burst after a lull through.
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
 * (inbound QPS + this call over `maxQps`; inbound calls in flight with this one over
 * `maxConcurrency`, counting calls whatever their `acquireCount`; the inbound average response
 * time over `maxAvgRtMs`; heap or RSS over theirs); a load limit (event-loop delay, event-loop utilisation, CPU) refuses only while its signal is
 * over it and the BBR check ({@link bbrFails}) fails, so a loaded process still admits the calls
 * it is completing fast enough (Sentinel checks load with BBR; sentinel-golang also CPU).
 * Calls that pass take nothing, so there is nothing to give back.
 *
 * Each limit is scaled by the call's priority (the rule's `priorityFactors`): a sheddable call
 * is refused from 80 % of a limit, a critical one from 110 % by default, so as load nears a limit
 * sheddable traffic is refused first and critical traffic last (Google SRE's criticality).
 */
export class SystemChecker implements Checker {
  /**
   * Each limit's least threshold by priority index (critical, default, sheddable): the rule's
   * threshold scaled by its priority factors, `Infinity` when no rule sets it. Plain numbers on
   * the hot path.
   */
  private readonly levels: readonly [Levels, Levels, Levels];
  /** Each limit some rule sets, with the rule that sets its least threshold (for the refusal). */
  private readonly thresholds: Partial<Record<SystemLimit, Threshold>>;
  /** The inbound second-level window, summed once per check (passes and response times together). */
  private readonly sums = new WindowSums();
  /** Whether a limit reads the window (`maxQps`, `maxAvgRtMs`). */
  private readonly readsWindow: boolean;
  /** Whether any limit reads the probe (then the probe samples while the rules are in force). */
  readonly readsSignals: boolean;

  constructor(
    rules: readonly SystemRule[],
    private readonly inbound: StatisticNode,
    private readonly probe: SystemProbe,
  ) {
    const thresholds: Partial<Record<SystemLimit, Threshold>> = {};
    for (const rule of rules) {
      // The limits alone: a rule also has `retryAfterMs`, and may have rollout fields.
      for (const [limit] of SYSTEM_LIMITS) {
        const value = rule[limit];
        if (value === undefined) continue;
        if (!(value >= (thresholds[limit]?.value ?? Number.POSITIVE_INFINITY))) thresholds[limit] = { value, rule };
      }
    }
    this.thresholds = thresholds;
    const levelsAt = (index: 0 | 1 | 2): Levels => {
      const least = (limit: SystemLimit): number => {
        const threshold = thresholds[limit];
        if (threshold === undefined) return Number.POSITIVE_INFINITY;
        return threshold.value * factorsByIndex(threshold.rule.priorityFactors ?? PRIORITY_FACTORS_DEFAULTS)[index];
      };
      return {
        maxQps: least('maxQps'),
        maxConcurrency: least('maxConcurrency'),
        maxAvgRtMs: least('maxAvgRtMs'),
        maxHeapUsedBytes: least('maxHeapUsedBytes'),
        maxRssBytes: least('maxRssBytes'),
        maxEventLoopDelayMs: least('maxEventLoopDelayMs'),
        maxEventLoopUtilization: least('maxEventLoopUtilization'),
        maxCpuUsage: least('maxCpuUsage'),
      };
    };
    this.levels = [levelsAt(0), levelsAt(1), levelsAt(2)];
    this.readsWindow = thresholds.maxQps !== undefined || thresholds.maxAvgRtMs !== undefined;
    this.readsSignals = SIGNAL_LIMITS.some((limit) => thresholds[limit] !== undefined);
  }

  check(entry: Entry, now: number): SystemBlockError | undefined {
    const node = this.inbound;
    const L = this.levels[priorityIndex(entry.priority)];
    // A limit no rule sets is Infinity: no sum is over it, and an empty one is not read.
    const sums = this.readsWindow ? this.sums.read(node, now) : NO_SUMS;
    const qps = sums.pass;
    if (qps + entry.acquireCount > L.maxQps) return this.refuse(entry, 'maxQps', qps, node.msUntilPassesDrop(now));
    if (node.concurrency >= L.maxConcurrency) return this.refuse(entry, 'maxConcurrency', node.concurrency, undefined);
    const rt = sums.avgRtMs;
    if (rt > L.maxAvgRtMs) return this.refuse(entry, 'maxAvgRtMs', rt, undefined);
    if (!this.readsSignals) return undefined;
    const signals = this.probe.read();
    if (signals.heapUsedBytes > L.maxHeapUsedBytes)
      return this.refuse(entry, 'maxHeapUsedBytes', signals.heapUsedBytes, undefined);
    if (signals.rssBytes > L.maxRssBytes) return this.refuse(entry, 'maxRssBytes', signals.rssBytes, undefined);
    const delay = signals.eventLoopDelayMs > L.maxEventLoopDelayMs;
    const utilization = signals.eventLoopUtilization > L.maxEventLoopUtilization;
    if (!(delay || utilization || signals.cpuUsage > L.maxCpuUsage) || !bbrFails(node, now)) return undefined;
    if (delay) return this.refuse(entry, 'maxEventLoopDelayMs', signals.eventLoopDelayMs, undefined);
    if (utilization) return this.refuse(entry, 'maxEventLoopUtilization', signals.eventLoopUtilization, undefined);
    return this.refuse(entry, 'maxCpuUsage', signals.cpuUsage, undefined);
  }

  private refuse(entry: Entry, limit: SystemLimit, value: number, retryAfterMs: number | undefined): SystemBlockError {
    const { rule } = this.thresholds[limit]!;
    return new SystemBlockError({
      resource: entry.resource,
      rule,
      limit,
      value,
      retryAfterMs: retryAfterMs ?? rule.retryAfterMs,
      origin: entry.origin,
    });
  }
}

/** Whether a rule sets a limit read from the probe (memory or load). */
function readsSignals(rule: SystemRule): boolean {
  return SIGNAL_LIMITS.some((limit) => rule[limit] !== undefined);
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

/** What system rules read of the engine: where the process's load comes from, and every inbound call's statistics. */
export interface SystemServices {
  /** The engine's probe (its `probe` option). */
  readonly probe: SystemProbe;
  /** The statistics of every inbound call, all resources together. */
  readonly inbound: StatisticNode;
}

/** System rules' services: the engine's `probe` option and its inbound statistics. */
function systemServices(engine: EngineResources): SystemServices {
  return { probe: engine.options.probe as SystemProbe, inbound: engine.inbound };
}

/**
 * Compiles every system rule into one checker. Each rule that reads signals keeps a claim on the
 * probe while it is in force (an unchanged rule keeps its claim across reloads), so the default
 * probe's timer runs only while such a rule is loaded.
 */
function compileSystemRules(rules: readonly SystemRule[], ctx: CompileContext<SystemServices>): CompiledRules {
  const { probe, inbound } = ctx.services;
  const checker = new SystemChecker(rules, inbound, probe);
  for (const rule of rules) if (readsSignals(rule)) ctx.reuse(rule, () => new ProbeDemand(probe));
  return { checkers: [checker] };
}

/**
 * System protection (Sentinel's SystemSlot): limits on the whole process, checked on every
 * inbound call whatever its resource, after authority and before hotspot rules.
 */
export const systemKind: RuleKind<'system', SystemRule, SystemRuleOptions, SystemServices> = {
  key: 'system',
  name: SYSTEM_KIND_NAME,
  scope: 'inbound',
  codes: { ERR_SYSTEM_BLOCKED: 'System protection refused an inbound call: the process is over a system rule limit.' },
  normalize: normalizeSystemRule,
  resourceOf: () => '',
  services: systemServices,
  compile: compileSystemRules,
};
