import { runRouteVariants } from '../http/route-variants';
import { fastifyHarness } from './fastify-harness';

runRouteVariants(fastifyHarness);
