import type { FlowRule } from '../flow/flow-rule';
import { BlockError, type BlockErrorOptions } from './block-error';

/** A flow rule (QPS or concurrency limit) refused the call. Code `ERR_FLOW_BLOCKED`. */
export class FlowBlockError extends BlockError<FlowRule> {
  override readonly code = 'ERR_FLOW_BLOCKED' as const;
  override readonly name = 'FlowBlockError';

  constructor(options: BlockErrorOptions<FlowRule>) {
    super(`Blocked by a ${options.rule.metric} flow rule on "${options.resource}"`, options);
  }
}
