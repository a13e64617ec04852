import { runEveryRoute } from '../http/every-route';
import { fastifyHarness } from './fastify-harness';

runEveryRoute(fastifyHarness);
