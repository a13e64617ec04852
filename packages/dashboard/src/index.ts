export {
  dashboard,
  Dashboard,
  DASHBOARD_DEFAULTS,
  type DashboardOptions,
  type DashboardListenOptions,
  type DashboardServer,
} from './dashboard';
export type { RuleStore } from './rule-editor';
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
export type { Snapshot, Tick, SecondPoint, BreakerView, BlockView, Transition, RejectionView } from './live-feed';
