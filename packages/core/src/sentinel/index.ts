/**
 * `@floodgate/core/sentinel`: Sentinel's and sentinel-golang's rule JSON, read into Floodgate's
 * rule sets and written from them, exactly as their data sources and Sentinel's dashboard store
 * it (see `docs/sentinel-rules.md`). `fileRuleSource` and `@floodgate/redis`'s sources take the
 * same format with `format: 'sentinel'`.
 * @packageDocumentation
 */

export {
  fromSentinelRules,
  toSentinelRules,
  type SentinelRules,
  type SentinelRule,
  type SentinelRuleType,
  type SentinelDialect,
  type SentinelFormatOptions,
  type ToSentinelOptions,
} from './sentinel-rules';
export { sentinelFormat, type SentinelFormat, type SentinelRuleFormat, type SentinelRuleText } from './sentinel-format';
export type { SentinelRuleFiles } from '../sources/file-rule-source';
