import { runScenarios } from '../http/scenarios';
import { fastifyHarness } from './fastify-harness';

runScenarios(fastifyHarness);
