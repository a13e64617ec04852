import { runSlowClients } from '../http/slow-clients';
import { fastifyHarness } from './fastify-harness';

runSlowClients(fastifyHarness);
