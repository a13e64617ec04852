import { runTimeoutSlots } from '../http/timeout-slots';
import { fastifyHarness } from './fastify-harness';

runTimeoutSlots(fastifyHarness);
