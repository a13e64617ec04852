import type { FlowRule } from '../flow/flow-rule';
import { BlockError } from './block-error';

/** A flow rule (QPS or concurrency limit) refused the call. Code `ERR_FLOW_BLOCKED`. */
export class FlowBlockError extends BlockError<FlowRule> {
  get code(): 'ERR_FLOW_BLOCKED' {
    return 'ERR_FLOW_BLOCKED';
  }

  get name(): string {
    return 'FlowBlockError';
  }

  get message(): string {
    return `Blocked by a ${this.rule.metric} flow rule on "${this.resource}"`;
  }
}
