import { runEveryRoute } from '../http/every-route';
import { koaHarness } from './koa-harness';

runEveryRoute(koaHarness);
