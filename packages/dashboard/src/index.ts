export {
  dashboard,
  Dashboard,
  DASHBOARD_DEFAULTS,
  type DashboardOptions,
  type DashboardListenOptions,
  type DashboardServer,
} from './dashboard';
export type { RuleStore } from './rule-editor';
export { DASHBOARD_RESOURCES } from './own-limits';
export type {
  HandleOptions,
  DashboardHandler,
  ExpressMiddleware,
  KoaMiddleware,
  KoaContextLike,
  FastifyPluginLike,
  FastifyInstanceLike,
  FastifyRequestLike,
  FastifyReplyLike,
} from './mounts';
export type {
  Snapshot,
  Tick,
  RulesPage,
  PageInfo,
  ResourceView,
  SecondPoint,
  BreakerView,
  BlockView,
  Transition,
  RejectionView,
} from './live-feed';
