import { runRouteVariants } from '../http/route-variants';
import { koaHarness } from './koa-harness';

runRouteVariants(koaHarness);
