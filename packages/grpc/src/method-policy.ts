import type { Floodgate } from '@floodgate/core';
import type { RuleSetOptions } from '@floodgate/core/rules';
import type { ResourceInfo } from '@floodgate/core/http';
import { CallParams } from './call-params';
import { hasRules, ruleSetFor, type MethodRuleSet } from './grpc-options';

/**
 * What an interceptor knows of one method's resource, kept up to date with the rules in force:
 * whether they may queue a call (it is then entered with `enter()` and a cancel signal, else with
 * the cheaper `tryEntry()`) and which hotspot values they read.
 */
export class MethodPolicy {
  /** Whether the rules in force may queue a call (throttling, cluster rules). */
  queues = false;
  /** The hotspot values the rules in force read. */
  params = CallParams.NONE;
  private info: ResourceInfo | undefined = undefined;

  constructor(
    /** The method's resource. */
    readonly resource: string,
    private readonly engine: Floodgate,
    private readonly inbound: boolean,
  ) {}

  /** Reads the rules in force again if they changed (one cheap engine call when they did not). */
  refresh(): this {
    const info = this.engine.resourceInfo(this.resource);
    if (info !== this.info) {
      this.info = info;
      this.queues = this.inbound ? info.inboundMayWait : info.mayWait;
      this.params = info.paramKeys.length === 0 ? CallParams.NONE : new CallParams(info.paramKeys);
    }
    return this;
  }
}

/**
 * The policies of an interceptor's methods, by method path: the `methods` rules are declared on
 * their resources when the interceptor is made, the `eachMethod` rules (and the interceptor's
 * own, `outboundRules`: a client's pushback, retry budget, adaptive throttling) on a method's
 * resource the first time it is called. Methods are those the server serves or the client's service defines,
 * so the map is as bounded as the services are.
 */
export class MethodPolicies {
  private readonly policies = new Map<string, MethodPolicy>();

  constructor(
    private readonly engine: Floodgate,
    private readonly inbound: boolean,
    /** The resource of a method path. */
    private readonly resourceOf: (path: string) => string,
    methods: ReadonlyMap<string, MethodRuleSet>,
    private readonly eachMethod: MethodRuleSet | undefined,
    /** Rules the interceptor's options give every method's resource. */
    private readonly outboundRules?: (resource: string) => RuleSetOptions,
  ) {
    for (const [path, rules] of methods) if (hasRules(rules)) engine.declareRules(ruleSetFor(resourceOf(path), rules));
  }

  /** The policy of a method, made (and its `eachMethod` rules declared) on its first call. */
  of(path: string): MethodPolicy {
    let policy = this.policies.get(path);
    if (policy === undefined) {
      policy = new MethodPolicy(this.resourceOf(path), this.engine, this.inbound);
      if (this.eachMethod !== undefined && hasRules(this.eachMethod))
        this.engine.declareRules(ruleSetFor(policy.resource, this.eachMethod));
      const own = this.outboundRules?.(policy.resource);
      if (own !== undefined && Object.keys(own).length > 0) this.engine.declareRules(own);
      this.policies.set(path, policy);
    }
    return policy.refresh();
  }
}
